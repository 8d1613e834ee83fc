package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// Handler returns the HTTP API:
//
//	POST /orders             {"customer":"alice","total_cents":1299} -> 201 order
//	GET  /orders/{id}        -> 200 order
//	POST /orders/{id}/pay    {"payment_ref":"pay_123"} -> 200 order, 409 if not payable
//	GET  /healthz            -> 200 when the database and NATS are reachable
//	GET  /metrics            -> Prometheus metrics (when Config.Metrics is set)
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /orders", s.traced(s.createOrder))
	mux.Handle("GET /orders/{id}", s.traced(s.getOrder))
	mux.Handle("POST /orders/{id}/pay", s.traced(s.payOrder))
	mux.HandleFunc("GET /healthz", s.healthz)
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics)
	}
	return mux
}

// traced continues the caller's trace (a W3C traceparent request header) in
// a server span around h. The span's context is what the outbox stores with
// the events, so consumers join this trace.
func (s *Service) traced(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.tracer.Start(ctx, r.Method+" "+r.URL.Path, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		h(w, r.WithContext(ctx))
	})
}

type createRequest struct {
	Customer   string `json:"customer"`
	TotalCents int64  `json:"total_cents"`
}

type payRequest struct {
	PaymentRef string `json:"payment_ref"`
}

// createOrder inserts the order and registers order.created in the same
// transaction. Not time-critical: downstream reactions to a new, unpaid
// order (analytics, a "we got your order" mail) tolerate the relay's lazy
// delay, and ordinary commits cost one statement less.
func (s *Service) createOrder(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Customer == "" || len(req.Customer) > 255 || !utf8.ValidString(req.Customer) {
		httpError(w, http.StatusBadRequest, "customer must be 1 to 255 bytes of UTF-8")
		return
	}
	if req.TotalCents <= 0 {
		httpError(w, http.StatusBadRequest, "total_cents must be positive")
		return
	}
	ctx := r.Context()
	o := &Order{ID: newID(), Customer: req.Customer, TotalCents: req.TotalCents, Status: StatusCreated,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	err := s.inTx(ctx, false, func(tx *txoutbox.Tx) error {
		if err := s.store.insert(ctx, tx, o); err != nil {
			return err
		}
		payload, err := json.Marshal(shop.Created{OrderID: o.ID, Customer: o.Customer, TotalCents: o.TotalCents, CreatedAt: o.CreatedAt})
		if err != nil {
			return err
		}
		// ctx carries the request span: its trace context is stored with
		// the event.
		_, err = txoutbox.Add(txoutbox.NewContext(ctx, tx), txoutbox.Event{
			AggregateType: "order", AggregateID: o.ID, EventType: shop.EventCreated, Payload: payload,
		})
		return err
	})
	if err != nil {
		s.fail(w, r, "create order", err)
		return
	}
	w.Header().Set("Location", "/orders/"+o.ID)
	writeJSON(w, http.StatusCreated, o)
}

// payOrder marks the order paid and registers order.paid, time-critical:
// payment releases the goods (picking, shipping, the receipt), so the relay
// is woken on commit and the event is on the stream milliseconds later.
func (s *Service) payOrder(w http.ResponseWriter, r *http.Request) {
	var req payRequest
	if !decode(w, r, &req) {
		return
	}
	if req.PaymentRef == "" || len(req.PaymentRef) > 255 || !utf8.ValidString(req.PaymentRef) {
		httpError(w, http.StatusBadRequest, "payment_ref must be 1 to 255 bytes of UTF-8")
		return
	}
	ctx := r.Context()
	id := r.PathValue("id")
	var o *Order
	err := s.inTx(ctx, true, func(tx *txoutbox.Tx) error {
		var err error
		if o, err = s.store.get(ctx, tx, id, true); err != nil {
			return err
		}
		if o.Status != StatusCreated {
			return errNotPayable
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		if err := s.store.markPaid(ctx, tx, id, req.PaymentRef, at); err != nil {
			return err
		}
		o.Status, o.PaidAt, o.PaymentRef = StatusPaid, &at, req.PaymentRef
		payload, err := json.Marshal(shop.Paid{OrderID: o.ID, TotalCents: o.TotalCents, PaymentRef: req.PaymentRef, PaidAt: at})
		if err != nil {
			return err
		}
		_, err = txoutbox.Add(txoutbox.NewContext(ctx, tx), txoutbox.Event{
			AggregateType: "order", AggregateID: o.ID, EventType: shop.EventPaid, Payload: payload,
			IdempotencyKey: "pay:" + o.ID,
		})
		return err
	})
	switch {
	case errors.Is(err, errNotFound):
		httpError(w, http.StatusNotFound, "order not found")
	case errors.Is(err, errNotPayable):
		httpError(w, http.StatusConflict, "order is "+o.Status)
	case err != nil:
		s.fail(w, r, "pay order", err)
	default:
		writeJSON(w, http.StatusOK, o)
	}
}

var errNotPayable = errors.New("order is not payable")

func (s *Service) getOrder(w http.ResponseWriter, r *http.Request) {
	o, err := s.store.get(r.Context(), s.cfg.DB, r.PathValue("id"), false)
	switch {
	case errors.Is(err, errNotFound):
		httpError(w, http.StatusNotFound, "order not found")
	case err != nil:
		s.fail(w, r, "get order", err)
	default:
		writeJSON(w, http.StatusOK, o)
	}
}

// healthz reports whether the database and the broker connection are up.
func (s *Service) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	status := map[string]string{"db": "ok", "broker": "ok"}
	code := http.StatusOK
	if err := s.cfg.DB.PingContext(ctx); err != nil {
		status["db"], code = "unreachable", http.StatusServiceUnavailable
	}
	if !s.cfg.BrokerHealthy() {
		status["broker"], code = "disconnected", http.StatusServiceUnavailable
	}
	writeJSON(w, code, status)
}

// inTx runs fn in an outbox transaction and commits it.
func (s *Service) inTx(ctx context.Context, critical bool, fn func(*txoutbox.Tx) error) error {
	var opts []txoutbox.TxOption
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	tx, err := s.outbox.Begin(ctx, nil, opts...)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Service) fail(w http.ResponseWriter, r *http.Request, op string, err error) {
	s.cfg.Logger.ErrorContext(r.Context(), "orders: "+op, "err", err,
		"trace_id", trace.SpanContextFromContext(r.Context()).TraceID().String())
	httpError(w, http.StatusInternalServerError, "internal error")
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		httpError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// newID returns a random UUID (version 4) in canonical text form.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
