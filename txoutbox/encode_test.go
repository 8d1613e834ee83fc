package txoutbox_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

func testCodec(t testing.TB) *codec.Codec {
	t.Helper()
	keys, err := codec.NewKeys("k1", map[string][]byte{"k1": bytes.Repeat([]byte{7}, codec.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec.New(codec.Config{Keys: keys, CompressAbove: 256})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPayloadEncoderSQLite: with a codec, the rows hold ciphertext with
// content type application/octet-stream, the encoding and the original
// content type in headers beside the user's, and decode to the payloads
// given; the encoding depends on the size.
func TestPayloadEncoderSQLite(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	d := sqliteDialect(t, db)
	c := testCodec(t)
	ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(c))
	if err != nil {
		t.Fatal(err)
	}
	small := []byte(`{"card":"4111"}`)
	large := bytes.Repeat([]byte(`{"line":"4111"},`), 64)
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := []txoutbox.Event{
		{AggregateType: "order", AggregateID: "1", EventType: "paid", Payload: small, Headers: map[string]string{"tenant": "t1"}},
		{AggregateType: "order", AggregateID: "1", EventType: "lines", Payload: large, ContentType: "application/vnd.lines+json"},
		{AggregateType: "order", AggregateID: "2", EventType: "empty"},
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		if ids[i], err = tx.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wantCT := []string{"application/json", "application/vnd.lines+json", "application/octet-stream"}
	wantEnc := []string{"aes-256-gcm:k1", "zstd,aes-256-gcm:k1", "aes-256-gcm:k1"}
	for i, id := range ids {
		row, err := d.Get(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.ContentType != txoutbox.ContentTypeBinary || row.Headers[txoutbox.HeaderEncoding] != wantEnc[i] ||
			row.Headers[txoutbox.HeaderEncodedContentType] != wantCT[i] {
			t.Fatalf("event %d: content type %q, headers %v", i, row.ContentType, row.Headers)
		}
		if bytes.Contains(row.Payload, []byte("4111")) {
			t.Fatalf("event %d: the row holds the plaintext", i)
		}
		got, h, err := c.DecodePayload(id, row.Headers, row.Payload)
		if err != nil || !bytes.Equal(got, evs[i].Payload) {
			t.Fatalf("event %d: decoded %q, %v", i, got, err)
		}
		if i == 0 && h["tenant"] != "t1" {
			t.Fatalf("user header lost: %v", h)
		}
	}
}

// encoderFunc adapts a function to txoutbox.PayloadEncoder.
type encoderFunc func(id, ct string, p []byte) ([]byte, string, error)

func (f encoderFunc) EncodePayload(id, ct string, p []byte) ([]byte, string, error) {
	return f(id, ct, p)
}

// TestPayloadEncoderContract: the encoder sees the assigned id and the
// detected content type; encoding "" stores the payload as given; an
// encoder error fails Add and buffers nothing; nil is refused at New.
func TestPayloadEncoderContract(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	d := sqliteDialect(t, db)
	if _, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(nil)); !errors.Is(err, txoutbox.ErrInvalidOption) {
		t.Fatalf("WithPayloadEncoder(nil): %v", err)
	}
	var seenID, seenCT string
	boom := errors.New("boom")
	ob, err := txoutbox.New(db, d, txoutbox.WithPayloadEncoder(encoderFunc(func(id, ct string, p []byte) ([]byte, string, error) {
		seenID, seenCT = id, ct
		switch string(p) {
		case `"fail"`:
			return nil, "", boom
		case `"keep"`:
			return []byte("ignored"), "", nil
		}
		return []byte("encoded"), "test", nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := ob.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ev := validEvent()
	ev.Payload = []byte(`"fail"`)
	if _, err := tx.Add(ev); !errors.Is(err, boom) || len(tx.Events()) != 0 {
		t.Fatalf("failing encoder: %v, %d buffered", err, len(tx.Events()))
	}
	ev.Payload = []byte(`"keep"`)
	keepID, err := tx.Add(ev)
	if err != nil || seenID != keepID || seenCT != txoutbox.ContentTypeJSON {
		t.Fatalf("Add = %s, %v; encoder saw id %s, content type %q", keepID, err, seenID, seenCT)
	}
	ev.Payload = []byte(`"other"`)
	if _, err := tx.Add(ev); err != nil {
		t.Fatal(err)
	}
	// The encoding's headers count towards MaxHeaderBytes: user headers at
	// the bound leave no room for them.
	full := validEvent()
	full.Payload = []byte(`"other"`)
	full.Headers = headersOf(txoutbox.MaxHeaderBytes)
	if _, err := tx.Add(full); !errors.Is(err, txoutbox.ErrHeadersTooLarge) {
		t.Fatalf("headers at the bound plus the encoding's: %v", err)
	}
	got := tx.Events()
	if len(got) != 2 || string(got[0].Payload) != `"keep"` || got[0].ContentType != txoutbox.ContentTypeJSON || len(got[0].Headers) != 0 {
		t.Fatalf("kept event: %+v", got[0])
	}
	if string(got[1].Payload) != "encoded" || got[1].ContentType != txoutbox.ContentTypeBinary ||
		got[1].Headers[txoutbox.HeaderEncoding] != "test" || got[1].Headers[txoutbox.HeaderEncodedContentType] != txoutbox.ContentTypeJSON {
		t.Fatalf("encoded event: %+v", got[1])
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
