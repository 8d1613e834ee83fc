package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/dialects"
)

// eventJSON is an event as printed by list and show.
type eventJSON struct {
	Seq             int64             `json:"seq"`
	ID              string            `json:"id"`
	State           string            `json:"state"`
	AggregateType   string            `json:"aggregate_type"`
	AggregateID     string            `json:"aggregate_id"`
	EventType       string            `json:"event_type"`
	ContentType     string            `json:"content_type"`
	Payload         *string           `json:"payload,omitempty"`
	PayloadEncoding string            `json:"payload_encoding,omitempty"`
	PayloadBytes    int               `json:"payload_bytes"`
	Headers         map[string]string `json:"headers,omitempty"`
	IdempotencyKey  string            `json:"idempotency_key,omitempty"`
	Critical        bool              `json:"critical"`
	CreatedAt       time.Time         `json:"created_at"`
	Attempts        int               `json:"attempts"`
	NextAttemptAt   *time.Time        `json:"next_attempt_at,omitempty"`
	DeliverAt       *time.Time        `json:"deliver_at,omitempty"`
	Partition       int               `json:"partition"`
	LastError       string            `json:"last_error,omitempty"`
	PublishedAt     *time.Time        `json:"published_at,omitempty"`
	// Bad is set for a row with a column that could not be decoded
	// (dialects.RowError); its field above is then empty.
	Bad *badJSON `json:"bad,omitempty"`
}

// badJSON is an undecodable column of a row: its name, its stored text (as
// the database returned it, cut to dialects.MaxRawBytes; JSON escapes its
// control characters) and the problem.
type badJSON struct {
	Column string `json:"column"`
	Raw    string `json:"raw"`
	Error  string `json:"error"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// toJSON converts a row; withPayload adds the payload (text when JSON,
// base64 otherwise).
func toJSON(r *dialects.Row, withPayload bool) eventJSON {
	e := eventJSON{
		Seq: r.Seq, ID: r.ID, State: r.State.String(), AggregateType: r.AggregateType, AggregateID: r.AggregateID,
		EventType: r.EventType, ContentType: r.ContentType, PayloadBytes: r.PayloadSize, Headers: r.Headers,
		IdempotencyKey: r.IdempotencyKey, Critical: r.Critical, CreatedAt: r.CreatedAt, Attempts: r.Attempts,
		Partition: r.Partition, LastError: r.LastError,
		PublishedAt: timePtr(r.PublishedAt), DeliverAt: timePtr(r.DeliverAt),
	}
	if r.State == dialects.StatePending {
		e.NextAttemptAt = timePtr(r.NextAttemptAt)
	}
	if b := r.Bad; b != nil {
		e.Bad = &badJSON{Column: b.Column, Raw: b.Raw, Error: b.Err.Error()}
	}
	if withPayload {
		p, enc := payloadText(r)
		e.Payload, e.PayloadEncoding = &p, enc
	}
	return e
}

// payloadText returns the payload as text for JSON events, else base64;
// an encrypted payload (package codec: a Jitoutbox-Encoding header naming a
// key) is never rendered: its text says "encrypted (key <id>), <n> bytes"
// and its encoding is "encrypted". A Jitoutbox-Encoding header this
// outboxctl cannot parse hides the payload the same way ("hidden").
func payloadText(r *dialects.Row) (string, string) {
	if enc, ok := r.Headers[codec.HeaderEncoding]; ok {
		e, err := codec.ParseEncoding(enc)
		switch {
		case err != nil:
			return fmt.Sprintf("encoded as %q, %d bytes, not shown", enc, len(r.Payload)), "hidden"
		case e.Encrypted():
			return fmt.Sprintf("encrypted (key %s), %d bytes", e.KeyID, len(r.Payload)), "encrypted"
		}
	}
	if r.IsJSON() && utf8.Valid(r.Payload) && json.Valid(r.Payload) {
		return string(r.Payload), "text"
	}
	return base64.StdEncoding.EncodeToString(r.Payload), "base64"
}

// writeJSON prints one indented JSON document, its unsafe runes escaped
// (safeJSON).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	if _, err := w.Write(safeJSON(buf.Bytes())); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// table returns a tabwriter for compact human output.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// shortTime formats a time for tables ("-" for zero).
func shortTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// clip shortens s for a table cell.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// badText words a bad row's problem for a table cell ("" for a good row).
func badText(r *dialects.Row) string {
	if r.Bad == nil {
		return ""
	}
	return r.Bad.Error()
}

// age formats a duration rounded for humans.
func age(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
