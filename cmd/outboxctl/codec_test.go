package main

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// TestEncryptedPayloadHidden: show (JSON and human) and the console's
// event page say "encrypted (key <id>)" with the size for a payload
// encrypted with package codec, and print neither its plaintext nor its
// ciphertext; a compressed-only payload still shows as base64.
func TestEncryptedPayloadHidden(t *testing.T) {
	tgt := testdb.Targets()[0] // SQLite
	db, dsn := tgt.Open(t)
	tbl := uniqueTable()
	d, err := newDialect(tgt.Dialect, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	keys, err := codec.NewKeys("2026-11", map[string][]byte{"2026-11": bytes.Repeat([]byte{9}, codec.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	add := func(cfg codec.Config, payload string) string {
		c, err := codec.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(c))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := ob.Begin(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := tx.Add(txoutbox.Event{AggregateType: "card", AggregateID: "1", EventType: "charged", Payload: []byte(payload)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return id
	}
	secret := `{"pan":"4111111111111111"}`
	enc := add(codec.Config{Keys: keys}, secret)
	zipped := add(codec.Config{CompressAbove: 16}, strings.Repeat(`{"n":1}`, 40))
	row, err := d.Get(t.Context(), db, enc)
	if err != nil {
		t.Fatal(err)
	}
	cipherB64 := base64.StdEncoding.EncodeToString(row.Payload)
	const want = "encrypted (key 2026-11), 54 bytes" // 26 bytes, a 12-byte nonce, a 16-byte tag
	g := []string{"-dsn", dsn, "-table", tbl}

	var ev eventJSON
	ctl(t, &ev, append(g, "--json", "show", enc)...)
	if ev.PayloadEncoding != "encrypted" || ev.Payload == nil || *ev.Payload != want || ev.PayloadBytes != len(row.Payload) {
		t.Fatalf("show --json: encoding %q, payload %v, %d bytes; want %q", ev.PayloadEncoding, ev.Payload, ev.PayloadBytes, want)
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), append(g, "show", enc), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, want) || strings.Contains(s, "4111") || strings.Contains(s, cipherB64) {
		t.Fatalf("show:\n%s", s)
	}
	ctl(t, &ev, append(g, "--json", "show", zipped)...)
	if ev.PayloadEncoding != "base64" {
		t.Fatalf("compressed only: encoding %q", ev.PayloadEncoding)
	}

	f := &fixture{db: db, d: d, dsn: dsn}
	srv := httptest.NewServer(f.console(t, consoleOptions{}).handler())
	defer srv.Close()
	code, body, _ := get(t, srv.URL, "/events/"+enc)
	if code != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, "not shown: encoded") ||
		strings.Contains(body, "4111") || strings.Contains(body, cipherB64) || strings.Contains(body, `id="payload-hex"`) {
		t.Fatalf("event page (%d):\n%s", code, body)
	}
}
