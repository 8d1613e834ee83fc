package rabbitpub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/rabbitpub"
)

// TestPublishConfirmedWithProperties: a batch is confirmed and every
// message arrives with its properties and headers.
func TestPublishConfirmedWithProperties(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "order.#")
	p := newPub(t, b.url, rabbitpub.WithExchange(x))
	batch := testMessages(6)
	batch[1].Headers[rabbitpub.HeaderEventID] = "user value loses"
	batch[2].ContentType = ""
	noErrors(t, publish(ctx, p, batch))

	got := b.consume(q, len(batch))
	byID := make(map[string]amqp.Delivery, len(got))
	for _, d := range got {
		byID[rabbitpub.EventID(&d)] = d
	}
	for _, m := range batch {
		d, ok := byID[m.ID]
		if !ok {
			t.Errorf("event %s not delivered", m.ID)
			continue
		}
		wantCT := m.ContentType
		if wantCT == "" {
			wantCT = "application/octet-stream"
		}
		switch {
		case d.Exchange != x || d.RoutingKey != "order.order.paid":
			t.Errorf("%s: exchange %q key %q", m.ID, d.Exchange, d.RoutingKey)
		case d.DeliveryMode != amqp.Persistent:
			t.Errorf("%s: delivery mode %d, want persistent", m.ID, d.DeliveryMode)
		case d.MessageId != m.ID || d.Type != m.EventType || d.ContentType != wantCT:
			t.Errorf("%s: message id %q type %q content type %q", m.ID, d.MessageId, d.Type, d.ContentType)
		case !d.Timestamp.Equal(m.CreatedAt.Truncate(time.Second)):
			t.Errorf("%s: timestamp %v, want %v", m.ID, d.Timestamp, m.CreatedAt)
		case string(d.Body) != string(m.Payload):
			t.Errorf("%s: body %q", m.ID, d.Body)
		}
		want := map[string]string{
			rabbitpub.HeaderEventID:       m.ID,
			rabbitpub.HeaderEventType:     m.EventType,
			rabbitpub.HeaderAggregateType: m.AggregateType,
			rabbitpub.HeaderAggregateID:   m.AggregateID,
			rabbitpub.HeaderCreatedAt:     m.CreatedAt.UTC().Format(time.RFC3339Nano),
			"X-Trace":                     m.Headers["X-Trace"],
		}
		if m.IdempotencyKey != "" {
			want[rabbitpub.HeaderIdempotencyKey] = m.IdempotencyKey
		} else if _, ok := d.Headers[rabbitpub.HeaderIdempotencyKey]; ok {
			t.Errorf("%s: unexpected idempotency key header", m.ID)
		}
		for k, v := range want {
			if got, _ := d.Headers[k].(string); got != v {
				t.Errorf("%s: header %s = %q, want %q", m.ID, k, got, v)
			}
		}
		for _, k := range []string{rabbitpub.HeaderDeadError, rabbitpub.HeaderDeadAttempts, rabbitpub.HeaderDeadAt} {
			if _, ok := d.Headers[k]; ok {
				t.Errorf("%s: unexpected header %s on a live message", m.ID, k)
			}
		}
	}
}

// TestPerMessageErrors: a router error, an invalid route, an invalid
// message and an unroutable message fail alone; the rest are delivered.
func TestPerMessageErrors(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "order.#")
	routerErr := errors.New("no route for you")
	def, err := rabbitpub.DefaultRouter(x)
	if err != nil {
		t.Fatal(err)
	}
	p := newPub(t, b.url, rabbitpub.WithRouter(func(m relay.Message) (rabbitpub.Route, error) {
		switch m.AggregateID {
		case "o-1":
			return rabbitpub.Route{}, routerErr
		case "o-2":
			return rabbitpub.Route{Exchange: x, Key: strings.Repeat("k", rabbitpub.MaxNameLen+1)}, nil
		case "o-4":
			return rabbitpub.Route{Exchange: x, Key: "nobody.listens"}, nil
		}
		return def(m)
	}))
	batch := testMessages(7)
	batch[3].Headers = map[string]string{strings.Repeat("h", 300): "v"}
	errs := publish(ctx, p, batch)
	if !errors.Is(errs[1], routerErr) || relay.IsPermanent(errs[1]) {
		t.Errorf("router error: %v, want the router's error as is", errs[1])
	}
	if !errors.Is(errs[2], rabbitpub.ErrInvalidRoute) || !relay.IsPermanent(errs[2]) {
		t.Errorf("long key: %v, want permanent ErrInvalidRoute", errs[2])
	}
	if !errors.Is(errs[3], rabbitpub.ErrInvalidMessage) || !relay.IsPermanent(errs[3]) {
		t.Errorf("long header name: %v, want permanent ErrInvalidMessage", errs[3])
	}
	if !errors.Is(errs[4], rabbitpub.ErrUnroutable) || !relay.IsPermanent(errs[4]) {
		t.Errorf("unroutable: %v, want permanent ErrUnroutable", errs[4])
	} else if s := errs[4].Error(); !strings.Contains(s, x) || !strings.Contains(s, "nobody.listens") {
		t.Errorf("unroutable error %q does not name the exchange and routing key", s)
	}
	for _, i := range []int{0, 5, 6} {
		if errs[i] != nil {
			t.Errorf("errs[%d] = %v, want nil", i, errs[i])
		}
	}
	got := b.consume(q, 3)
	for _, d := range got {
		if id := rabbitpub.EventID(&d); id != batch[0].ID && id != batch[5].ID && id != batch[6].ID {
			t.Errorf("unexpected delivery %s", id)
		}
	}
}

// TestUnroutableWithoutMandatory: without the mandatory flag the broker
// drops an unroutable message and it counts as delivered.
func TestUnroutableWithoutMandatory(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	p := newPub(t, b.url, rabbitpub.WithExchange(x), rabbitpub.WithoutMandatory())
	noErrors(t, publish(ctx, p, testMessages(3)))
}

// TestMissingExchange: a message to an exchange that does not exist fails
// permanently; the others of the batch are delivered or fail retryably,
// and a later batch succeeds on a new channel.
func TestMissingExchange(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "#")
	missing := randomName("jitoutbox-test-missing-")
	p := newPub(t, b.url, rabbitpub.WithRouter(func(m relay.Message) (rabbitpub.Route, error) {
		if m.AggregateID == "o-2" {
			return rabbitpub.Route{Exchange: missing, Key: "k"}, nil
		}
		return rabbitpub.Route{Exchange: x, Key: "k"}, nil
	}))
	batch := testMessages(5)
	errs := publish(ctx, p, batch)
	if !errors.Is(errs[2], rabbitpub.ErrExchangeNotFound) || !relay.IsPermanent(errs[2]) {
		t.Fatalf("missing exchange: %v, want permanent ErrExchangeNotFound", errs[2])
	}
	if !strings.Contains(errs[2].Error(), missing) {
		t.Errorf("error %q does not name the exchange", errs[2])
	}
	var retry []relay.Message
	for i, err := range errs {
		switch {
		case i == 2 || err == nil:
		case relay.IsPermanent(err):
			t.Errorf("errs[%d] = %v: permanent for a message to an existing exchange", i, err)
		default:
			retry = append(retry, batch[i])
		}
	}
	noErrors(t, publish(ctx, p, retry))
	if n := len(b.consume(q, 4)); n != 4 {
		t.Errorf("delivered %d, want 4", n)
	}
}

// TestDeadLetterHeaders: a message with Dead set carries the dead-letter
// headers, as through the relay's Config.DeadLetter.
func TestDeadLetterHeaders(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	dlx := b.exchange()
	q := b.queue(dlx, "#")
	p := newPub(t, b.url, rabbitpub.WithExchange(dlx))
	m := testMessages(1)[0]
	at := time.Date(2026, 11, 24, 12, 0, 0, 5, time.FixedZone("CET", 3600))
	m.Dead = &relay.DeadInfo{Error: "rabbitpub: boom", Attempts: 10, At: at}
	noErrors(t, publish(ctx, p, []relay.Message{m}))
	d := b.consume(q, 1)[0]
	want := map[string]string{
		rabbitpub.HeaderDeadError:    "rabbitpub: boom",
		rabbitpub.HeaderDeadAttempts: "10",
		rabbitpub.HeaderDeadAt:       "2026-11-24T11:00:00.000000005Z",
		rabbitpub.HeaderEventID:      m.ID,
	}
	for k, v := range want {
		if got, _ := d.Headers[k].(string); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

// TestOptions: bad options and arguments fail with ErrInvalidOption, and no
// error repeats the URL (it may hold a password).
func TestOptions(t *testing.T) {
	const url = "amqp://user:s3cret@127.0.0.1:5672/"
	bad := map[string][]rabbitpub.Option{
		"no destination":      nil,
		"empty exchange":      {rabbitpub.WithExchange("")},
		"long exchange":       {rabbitpub.WithExchange(strings.Repeat("x", 256))},
		"router and exchange": {rabbitpub.WithExchange("x"), rabbitpub.WithRouter(func(relay.Message) (rabbitpub.Route, error) { return rabbitpub.Route{}, nil })},
		"nil router":          {rabbitpub.WithRouter(nil)},
		"confirm timeout":     {rabbitpub.WithExchange("x"), rabbitpub.WithConfirmTimeout(0)},
		"dial timeout":        {rabbitpub.WithExchange("x"), rabbitpub.WithDialTimeout(-time.Second)},
		"heartbeat":           {rabbitpub.WithExchange("x"), rabbitpub.WithHeartbeat(time.Millisecond)},
		"nil logger":          {rabbitpub.WithExchange("x"), rabbitpub.WithLogger(nil)},
	}
	for name, opts := range bad {
		if _, err := rabbitpub.New(url, opts...); !errors.Is(err, rabbitpub.ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
	}
	for _, u := range []string{"http://user:s3cret@host/", "amqp://user:s3cret@host:notaport/", "amqp://user:s3cret@[::1/"} {
		_, err := rabbitpub.New(u, rabbitpub.WithExchange("x"))
		if !errors.Is(err, rabbitpub.ErrInvalidOption) {
			t.Errorf("New(bad URL) err = %v, want ErrInvalidOption", err)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error %q repeats the password", err)
		}
	}
	if _, err := rabbitpub.NewDial(nil, rabbitpub.WithExchange("x")); !errors.Is(err, rabbitpub.ErrInvalidOption) {
		t.Errorf("NewDial(nil) err = %v", err)
	}
	if _, err := rabbitpub.NewDial(nilDial, rabbitpub.WithExchange("x"), rabbitpub.WithHeartbeat(time.Second)); !errors.Is(err, rabbitpub.ErrInvalidOption) {
		t.Errorf("NewDial with WithHeartbeat: err = %v", err)
	}
	p, err := rabbitpub.New(url, rabbitpub.WithExchange("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close before any Publish: %v", err)
	}
	errs := publish(t.Context(), p, testMessages(2))
	for i, err := range errs {
		if !errors.Is(err, rabbitpub.ErrClosed) {
			t.Errorf("after Close: errs[%d] = %v, want ErrClosed", i, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestDefaultRouter checks the default routing keys.
func TestDefaultRouter(t *testing.T) {
	r, err := rabbitpub.DefaultRouter("events")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ agg, ev, want string }{
		{"order", "created", "order.created"},
		{"order", "order.paid", "order.order.paid"},
		{"billing.invoice", "sent", "billing_invoice.sent"},
		{"", "", "_._"},
	} {
		got, err := r(relay.Message{AggregateType: c.agg, EventType: c.ev})
		if err != nil || got != (rabbitpub.Route{Exchange: "events", Key: c.want}) {
			t.Errorf("route(%q, %q) = %+v, %v; want key %q", c.agg, c.ev, got, err, c.want)
		}
	}
	_, err = r(relay.Message{AggregateType: "o", EventType: strings.Repeat("e", 300)})
	if !errors.Is(err, rabbitpub.ErrInvalidRoute) || !relay.IsPermanent(err) {
		t.Errorf("long key: %v", err)
	}
	if _, err := rabbitpub.DefaultRouter("bad\xff"); !errors.Is(err, rabbitpub.ErrInvalidRoute) {
		t.Errorf("DefaultRouter(invalid UTF-8) err = %v", err)
	}
}

// nilDial is a DialFunc for tests that never connect.
func nilDial(context.Context) (*amqp.Connection, error) {
	return nil, errors.New("no dial in this test")
}

// TestReservedUserHeadersNeverRefused: a row written by something other
// than txoutbox with a "CC" or "BCC" header (which RabbitMQ refuses as a
// string, closing the channel on every try) is delivered without it.
func TestReservedUserHeadersNeverRefused(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	b := newBroker(t)
	x := b.exchange()
	q := b.queue(x, "order.#")
	p := newPub(t, b.url, rabbitpub.WithExchange(x))
	batch := testMessages(2)
	batch[0].Headers["CC"] = "order.copy"
	batch[1].Headers["BCC"] = "order.copy"
	noErrors(t, publish(ctx, p, batch))
	for _, d := range b.consume(q, len(batch)) {
		for _, k := range []string{"CC", "BCC"} {
			if v, ok := d.Headers[k]; ok {
				t.Errorf("%s: header %s = %v delivered", rabbitpub.EventID(&d), k, v)
			}
		}
	}
}
