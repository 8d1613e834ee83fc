package txoutbox_test

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func TestNewRejectsBadArguments(t *testing.T) {
	db, _, err := sqlmock.New()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &fakeDialect{}
	cases := map[string]func() (*txoutbox.Outbox, error){
		"nil db":         func() (*txoutbox.Outbox, error) { return txoutbox.New(nil, d) },
		"nil dialect":    func() (*txoutbox.Outbox, error) { return txoutbox.New(db, nil) },
		"nil option":     func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, nil) },
		"max payload 0":  func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, txoutbox.WithMaxPayload(0)) },
		"max payload -1": func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, txoutbox.WithMaxPayload(-1)) },
		"nil notifier":   func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, txoutbox.WithNotifier(nil)) },
		"nil clock":      func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, txoutbox.WithClock(nil)) },
		"nil logger":     func() (*txoutbox.Outbox, error) { return txoutbox.New(db, d, txoutbox.WithLogger(nil)) },
		"nil sqlx db": func() (*txoutbox.Outbox, error) {
			ob, err := txoutbox.NewX(nil, d)
			if ob != nil {
				return ob.Outbox, err
			}
			return nil, err
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			ob, err := f()
			if err == nil || ob != nil {
				t.Fatalf("got (%v, %v), want an error", ob, err)
			}
			if !errors.Is(err, txoutbox.ErrInvalidOption) {
				t.Fatalf("error %v does not match ErrInvalidOption", err)
			}
		})
	}
	ob, err := txoutbox.New(db, d, txoutbox.WithMaxPayload(1), txoutbox.WithClock(time.Now),
		txoutbox.WithLogger(slog.Default()), txoutbox.WithNotifier(&countingNotifier{}))
	if err != nil || ob == nil {
		t.Fatalf("valid options: %v", err)
	}
	if ob.Dialect() != d {
		t.Fatal("Dialect() does not return the dialect given")
	}
}

// badEvent is one invalid event: a mutation of a valid one with a 2-byte
// payload, for an Outbox with WithMaxPayload(16).
type badEvent struct {
	name     string
	mutate   func(*txoutbox.Event)
	field    string
	tooLarge bool
}

func badEvents() []badEvent {
	long := strings.Repeat("a", 256)
	return []badEvent{
		{"missing aggregate type", func(e *txoutbox.Event) { e.AggregateType = "" }, "AggregateType", false},
		{"missing aggregate id", func(e *txoutbox.Event) { e.AggregateID = "" }, "AggregateID", false},
		{"missing event type", func(e *txoutbox.Event) { e.EventType = "" }, "EventType", false},
		{"aggregate type too long", func(e *txoutbox.Event) { e.AggregateType = long }, "AggregateType", false},
		{"aggregate id too long", func(e *txoutbox.Event) { e.AggregateID = long }, "AggregateID", false},
		{"event type too long", func(e *txoutbox.Event) { e.EventType = long }, "EventType", false},
		{"invalid utf8 name", func(e *txoutbox.Event) { e.EventType = "order.\xff" }, "EventType", false},
		{"control char in name", func(e *txoutbox.Event) { e.AggregateID = "4\n2" }, "AggregateID", false},
		{"NUL in name", func(e *txoutbox.Event) { e.AggregateType = "ord\x00er" }, "AggregateType", false},
		{"C1 control in name", func(e *txoutbox.Event) { e.EventType = "a\u0085b" }, "EventType", false},
		{"payload too large", func(e *txoutbox.Event) { e.Payload = make([]byte, 17) }, "Payload", true},
		{"empty header name", func(e *txoutbox.Event) { e.Headers = map[string]string{"": "v"} }, "Headers", false},
		{"header name with space", func(e *txoutbox.Event) { e.Headers = map[string]string{"X Trace": "v"} }, `Headers["X Trace"]`, false},
		{"header name with colon", func(e *txoutbox.Event) { e.Headers = map[string]string{"X:Trace": "v"} }, `Headers["X:Trace"]`, false},
		{"header name with control", func(e *txoutbox.Event) { e.Headers = map[string]string{"X\tT": "v"} }, `Headers["X\tT"]`, false},
		{"header name non-ascii", func(e *txoutbox.Event) { e.Headers = map[string]string{"X-Trâce": "v"} }, `Headers["X-Trâce"]`, false},
		{"header name invalid utf8", func(e *txoutbox.Event) { e.Headers = map[string]string{"X-\xff": "v"} }, `Headers["X-\xff"]`, false},
		{"header value CR", func(e *txoutbox.Event) { e.Headers = map[string]string{"X-A": "a\rb"} }, `Headers["X-A"]`, false},
		{"header value LF", func(e *txoutbox.Event) { e.Headers = map[string]string{"X-A": "a\nb"} }, `Headers["X-A"]`, false},
		{"header value invalid utf8", func(e *txoutbox.Event) { e.Headers = map[string]string{"X-A": "\xc3\x28"} }, `Headers["X-A"]`, false},
		{"reserved Jitoutbox- header", func(e *txoutbox.Event) { e.Headers = map[string]string{"Jitoutbox-Id": "v"} }, `Headers["Jitoutbox-Id"]`, false},
		{"reserved Nats- header", func(e *txoutbox.Event) { e.Headers = map[string]string{"Nats-Msg-Id": "v"} }, `Headers["Nats-Msg-Id"]`, false},
		{"reserved prefix any case", func(e *txoutbox.Event) { e.Headers = map[string]string{"nats-expected-stream": "v"} }, `Headers["nats-expected-stream"]`, false},
		{"idempotency key too long", func(e *txoutbox.Event) { e.IdempotencyKey = long }, "IdempotencyKey", false},
		{"content type with control", func(e *txoutbox.Event) { e.ContentType = "text/plain\n" }, "ContentType", false},
	}
}

func TestAddValidation(t *testing.T) {
	cases := badEvents()
	ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithMaxPayload(16))
	mock.ExpectBegin()
	mock.ExpectRollback()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := validEvent()
			ev.Payload = []byte(`{}`)
			c.mutate(&ev)
			id, err := tx.Add(ev)
			if err == nil || id != "" {
				t.Fatalf("Add = (%q, %v), want a validation error", id, err)
			}
			var verr *txoutbox.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %T %v is not a *ValidationError", err, err)
			}
			if verr.Field != c.field || verr.Reason == "" {
				t.Fatalf("Field=%q Reason=%q, want Field %q", verr.Field, verr.Reason, c.field)
			}
			if !errors.Is(err, txoutbox.ErrInvalidEvent) {
				t.Fatal("does not match ErrInvalidEvent")
			}
			if got := errors.Is(err, txoutbox.ErrPayloadTooLarge); got != c.tooLarge {
				t.Fatalf("errors.Is(err, ErrPayloadTooLarge) = %v, want %v", got, c.tooLarge)
			}
		})
	}
	if n := len(tx.Events()); n != 0 {
		t.Fatalf("%d events buffered after invalid Adds, want 0", n)
	}
	// Limits are inclusive and the transaction is still usable.
	ev := validEvent()
	ev.AggregateID = strings.Repeat("x", 255)
	ev.Payload = make([]byte, 16)
	ev.IdempotencyKey = strings.Repeat("k", 255)
	ev.Headers = map[string]string{"X-Ok": "unicode välue", "Nats": "no dash, not reserved"}
	if _, err := tx.Add(ev); err != nil {
		t.Fatalf("valid event at the limits refused: %v", err)
	}
	if n := len(tx.Events()); n != 1 {
		t.Fatalf("%d events buffered, want 1", n)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}

func TestAddAssignsAndCopies(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithClock(func() time.Time { return now }))
	mock.ExpectBegin()
	mock.ExpectRollback()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"a":1}`)
	headers := map[string]string{"X-A": "1"}
	ids := make([]string, 0, 3)
	for range 3 {
		id, err := tx.Add(txoutbox.Event{AggregateType: "a", AggregateID: "1", EventType: "e", Payload: payload, Headers: headers})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	payload[0] = 'X'
	headers["X-A"] = "changed"
	headers["X-B"] = "added"

	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	evs := tx.Events()
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	for i, e := range evs {
		if e.ID != ids[i] || !uuidRE.MatchString(e.ID) {
			t.Fatalf("event %d id %q (returned %q) is not the canonical UUIDv7", i, e.ID, ids[i])
		}
		if i > 0 && evs[i-1].ID >= e.ID {
			t.Fatalf("ids not increasing: %s then %s", evs[i-1].ID, e.ID)
		}
		want := now.UTC().Truncate(time.Microsecond)
		if !e.CreatedAt.Equal(want) || e.CreatedAt.Location() != time.UTC {
			t.Fatalf("CreatedAt %v, want %v UTC", e.CreatedAt, want)
		}
		if string(e.Payload) != `{"a":1}` {
			t.Fatalf("payload not copied: %q", e.Payload)
		}
		if len(e.Headers) != 1 || e.Headers["X-A"] != "1" {
			t.Fatalf("headers not copied: %v", e.Headers)
		}
		if e.ContentType != "application/json" {
			t.Fatalf("content type %q", e.ContentType)
		}
	}
	// Events returns a copy.
	evs[0].AggregateID = "mutated"
	if tx.Events()[0].AggregateID != "1" {
		t.Fatal("Events() exposes the buffer")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}

func TestContentTypeDetection(t *testing.T) {
	cases := []struct {
		payload, given, want string
	}{
		{`{"a":1}`, "", "application/json"},
		{" \n\t[1,2]", "", "application/json"},
		{`"text"`, "", "application/json"},
		{`42`, "", "application/json"},
		{`-1.5e3`, "", "application/json"},
		{`true`, "", "application/json"},
		{`null`, "", "application/json"},
		{``, "", "application/octet-stream"},
		{"   ", "", "application/octet-stream"},
		{`{"a":`, "", "application/octet-stream"},
		{`nope`, "", "application/octet-stream"},
		{"\x00\x01\x02", "", "application/octet-stream"},
		{"\xff{}", "", "application/octet-stream"},
		{`hello`, "text/plain", "text/plain"},
		{`{"a":1}`, "application/vnd.x+json", "application/vnd.x+json"},
	}
	ob, mock, _ := newMock(t, &fakeDialect{})
	mock.ExpectBegin()
	mock.ExpectRollback()
	tx, err := ob.Begin(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for i, c := range cases {
		ev := validEvent()
		ev.Payload = []byte(c.payload)
		ev.ContentType = c.given
		if _, err := tx.Add(ev); err != nil {
			t.Fatal(err)
		}
		if got := tx.Events()[i].ContentType; got != c.want {
			t.Errorf("payload %q given %q: content type %q, want %q", c.payload, c.given, got, c.want)
		}
	}
}

func TestContextHelpers(t *testing.T) {
	ctx := context.Background()
	if _, ok := txoutbox.FromContext(ctx); ok {
		t.Fatal("FromContext found a tx in an empty context")
	}
	if id, err := txoutbox.Add(ctx, validEvent()); !errors.Is(err, txoutbox.ErrNoTransaction) || id != "" {
		t.Fatalf("Add without tx = (%q, %v), want ErrNoTransaction", id, err)
	}
	ob, mock, _ := newMock(t, &fakeDialect{})
	mock.ExpectBegin()
	mock.ExpectRollback()
	type key struct{}
	base := context.WithValue(ctx, key{}, "kept")
	tx, err := ob.Begin(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for name, c := range map[string]context.Context{
		"NewContext":   txoutbox.NewContext(ctx, tx),
		"Tx.Context()": tx.Context(),
	} {
		got, ok := txoutbox.FromContext(c)
		if !ok || got != tx {
			t.Fatalf("%s: FromContext = (%p, %v), want %p", name, got, ok, tx)
		}
		id, err := txoutbox.Add(c, validEvent())
		if err != nil || id == "" {
			t.Fatalf("%s: Add = (%q, %v)", name, id, err)
		}
	}
	if tx.Context().Value(key{}) != "kept" {
		t.Fatal("Tx.Context() does not derive from the Begin context")
	}
	if n := len(tx.Events()); n != 2 {
		t.Fatalf("%d events buffered via context, want 2", n)
	}
	if _, ok := txoutbox.FromContext(txoutbox.NewContext(ctx, nil)); ok {
		t.Fatal("FromContext reports a nil tx as present")
	}
}

func TestIdempotencyKey(t *testing.T) {
	uuid8 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	k := txoutbox.IdempotencyKey("payment", "p-1", "captured")
	if !uuid8.MatchString(k) {
		t.Fatalf("key %q is not a canonical UUIDv8", k)
	}
	if k2 := txoutbox.IdempotencyKey("payment", "p-1", "captured"); k2 != k {
		t.Fatalf("not deterministic: %s vs %s", k, k2)
	}
	// Pinned so that keys never change between releases.
	if got, want := txoutbox.IdempotencyKey("a", "b"), "9a7ff9c6-0636-8791-9266-b3318d858a52"; got != want {
		t.Fatalf("IdempotencyKey(\"a\", \"b\") = %s, want %s", got, want)
	}
	distinct := [][]string{
		{}, {""}, {"", ""}, {"ab", "c"}, {"a", "bc"}, {"abc"}, {"a", "b", "c"},
		{"payment", "p-1", "captured"}, {"payment", "p-1", "capture"}, {"payment", "p-1captured"},
		{"\x01a"}, {"", "a"}, {"a", ""},
	}
	seen := map[string][]string{}
	for _, parts := range distinct {
		k := txoutbox.IdempotencyKey(parts...)
		if prev, dup := seen[k]; dup {
			t.Fatalf("parts %q and %q give the same key %s", prev, parts, k)
		}
		seen[k] = parts
	}
}
