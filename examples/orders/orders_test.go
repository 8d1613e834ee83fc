package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/api"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/broker"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/projector"
	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// syncBuffer is the consumer's output, read while it is written.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestOrdersService drives the HTTP API against PostgreSQL and MariaDB/MySQL
// (skipped when the variable is unset), with the relay in process and the
// consumer running against the same database, and checks that the consumer
// applied each event exactly once, even when JetStream delivers a copy.
func TestOrdersService(t *testing.T) {
	for _, tc := range []struct {
		name, dialect string
		open          func(testdb.TB) (*sql.DB, string)
	}{
		{"postgres", shop.Postgres, func(t testdb.TB) (*sql.DB, string) { return testdb.Postgres(t, "pgx") }},
		{"mysql", shop.MySQL, testdb.MySQL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dsn := tc.open(t) // skips when the variable is unset
			testOrders(t, tc.dialect, dsn)
		})
	}
}

func testOrders(t *testing.T, dialect, dsn string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	db, d, err := shop.Open(ctx, dialect, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	streamName := strings.ToUpper(testnats.RandomName("ORDERS_"))
	prefix := testnats.RandomName("shop_")
	bconn, err := broker.Open(ctx, broker.Config{Broker: broker.NATS, NATSURL: testnats.URL(t),
		Stream: streamName, Prefix: prefix, DeadLetter: testnats.RandomName("dead_")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bconn.Close)
	js := bconn.JetStream
	stream, err := js.Stream(ctx, streamName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), streamName) })

	mp, metrics, err := api.NewPrometheus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	svc, err := api.New(api.Config{DB: db, Dialect: d,
		Publisher: bconn.Publisher, DeadLetter: bconn.DeadLetter, BrokerHealthy: bconn.Healthy,
		MeterProvider: mp, TracerProvider: tp, Metrics: metrics, Logger: logger, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	proj, err := projector.New(db, dialect, out, tp, logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := proj.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	runCtx, stopAll := context.WithCancel(ctx)
	defer func() { stopAll(); wg.Wait() }()
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := svc.Run(runCtx); err != nil {
			t.Errorf("service Run: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := proj.Run(runCtx, js, streamName, "test-projector", prefix); err != nil {
			t.Errorf("projector Run: %v", err)
		}
	}()

	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()
	client := srv.Client()
	call := func(method, path, body string, hdr map[string]string, wantCode int) map[string]any {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantCode {
			t.Fatalf("%s %s: status %d (%s), want %d", method, path, resp.StatusCode, raw, wantCode)
		}
		var v map[string]any
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return v
	}

	call("GET", "/healthz", "", nil, http.StatusOK)
	// Three orders; the first carries a W3C trace context.
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	traced := map[string]string{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}
	var ids []string
	for i, hdr := range []map[string]string{traced, nil, nil} {
		o := call("POST", "/orders", fmt.Sprintf(`{"customer":"c%d","total_cents":%d}`, i, 1000+i), hdr, http.StatusCreated)
		if o["status"] != api.StatusCreated {
			t.Fatalf("created order: %v", o)
		}
		ids = append(ids, o["id"].(string))
	}
	// Pay the first two (time-critical); paying again is refused.
	for _, id := range ids[:2] {
		o := call("POST", "/orders/"+id+"/pay", `{"payment_ref":"pay-`+id[:8]+`"}`, nil, http.StatusOK)
		if o["status"] != api.StatusPaid {
			t.Fatalf("paid order: %v", o)
		}
	}
	call("POST", "/orders/"+ids[0]+"/pay", `{"payment_ref":"again"}`, nil, http.StatusConflict)
	call("POST", "/orders/no-such-order/pay", `{"payment_ref":"x"}`, nil, http.StatusNotFound)
	call("POST", "/orders", `{"customer":"","total_cents":1}`, nil, http.StatusBadRequest)
	call("POST", "/orders", `not json`, nil, http.StatusBadRequest)
	if o := call("GET", "/orders/"+ids[1], "", nil, http.StatusOK); o["status"] != api.StatusPaid || o["payment_ref"] == nil {
		t.Fatalf("GET order: %v", o)
	}
	const events = 5 // 3 created + 2 paid

	// Wait until the consumer has processed them all.
	waitFor(t, ctx, "consumer to process 5 events", func() bool { return countRows(t, db, "projector_processed") == events })

	// A redelivered copy (stored again under another Nats-Msg-Id, as after
	// a relay crash outside the duplicate window) must be skipped.
	first, err := stream.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	dup := nats.NewMsg(first.Subject)
	for k, v := range first.Header {
		dup.Header[k] = v
	}
	dup.Header.Set(jetstream.MsgIDHeader, "copy-of-"+first.Header.Get(jetstream.MsgIDHeader))
	dup.Data = first.Data
	if _, err := js.PublishMsg(ctx, dup); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the copy to be seen as a duplicate", func() bool { return strings.Contains(out.String(), "duplicate") })

	if n := countRows(t, db, "projector_processed"); n != events {
		t.Errorf("processed %d events, want %d", n, events)
	}
	if n := strings.Count(out.String(), "applied "); n != events {
		t.Errorf("consumer applied %d events, want %d; output:\n%s", n, events, out)
	}
	for i, id := range ids {
		var status string
		var applied int
		q := "SELECT status, events FROM projector_orders WHERE order_id = " + shop.Placeholder(dialect, 1)
		if err := db.QueryRowContext(ctx, q, id).Scan(&status, &applied); err != nil {
			t.Fatalf("projection of %s: %v", id, err)
		}
		wantStatus, wantEvents := api.StatusPaid, 2
		if i == 2 {
			wantStatus, wantEvents = api.StatusCreated, 1
		}
		if status != wantStatus || applied != wantEvents {
			t.Errorf("order %d: projection status %s with %d events, want %s with %d", i, status, applied, wantStatus, wantEvents)
		}
	}
	// The consumer joined the trace of the request that created order 0.
	if !strings.Contains(out.String(), "order="+ids[0]+" event=") ||
		!strings.Contains(out.String(), "trace="+traceID) {
		t.Errorf("consumer output lacks order %s in trace %s:\n%s", ids[0], traceID, out)
	}

	// Prometheus: the relay's counters, split by time-critical.
	waitFor(t, ctx, "metrics to show 5 published events", func() bool {
		body := getBody(t, ctx, client, srv.URL+"/metrics")
		return metricValue(body, "jitoutbox_relay_published", `critical="true"`) == "2" &&
			metricValue(body, "jitoutbox_relay_published", `critical="false"`) == "3"
	})
	body := getBody(t, ctx, client, srv.URL+"/metrics")
	for _, name := range []string{"jitoutbox_outbox_backlog", "jitoutbox_outbox_oldest_pending_age", "jitoutbox_relay_commit_to_ack"} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if t.Failed() {
		t.Logf("consumer output:\n%s\nmetrics:\n%s", out, body)
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func getBody(t *testing.T, ctx context.Context, c *http.Client, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// metricValue returns the value of the first sample of a metric whose name
// starts with name and whose labels contain label.
func metricValue(body, name, label string) string {
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, name) && strings.Contains(line, label) {
			f := strings.Fields(line)
			return f[len(f)-1]
		}
	}
	return ""
}
