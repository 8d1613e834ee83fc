package inbox_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/inbox"
)

// TestDecode: Message.Decode restores an encoded payload and drops the
// encoding header; a message that was not encoded comes back as it was; a
// corrupt one fails with the codec's error and is returned unchanged.
func TestDecode(t *testing.T) {
	k, err := codec.NewKeys("k1", map[string][]byte{"k1": bytes.Repeat([]byte{3}, codec.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec.New(codec.Config{Keys: k})
	if err != nil {
		t.Fatal(err)
	}
	id := "0190f5d2-0000-7000-8000-000000000001"
	stored, enc, err := c.EncodePayload(id, "application/json", []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	m := inbox.Message{EventID: id, Payload: stored,
		Headers: map[string]string{codec.HeaderEncoding: enc, codec.HeaderContentType: "application/json"}}
	got, err := m.Decode(c)
	if err != nil || string(got.Payload) != `{"a":1}` || got.Headers[codec.HeaderEncoding] != "" {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	if again, err := got.Decode(c); err != nil || string(again.Payload) != `{"a":1}` {
		t.Fatalf("decoding again: %v", err)
	}
	if codec.HeaderEncoding != "Jitoutbox-Encoding" {
		t.Fatalf("the codec's header %q is not the one Handle refuses", codec.HeaderEncoding)
	}
	plain := inbox.Message{EventID: id, Payload: []byte("x")}
	if got, err := plain.Decode(c); err != nil || string(got.Payload) != "x" {
		t.Fatalf("not encoded: %+v, %v", got, err)
	}
	m.Payload = append(bytes.Clone(stored[:len(stored)-1]), stored[len(stored)-1]^1)
	bad, err := m.Decode(c)
	if !errors.Is(err, codec.ErrCorrupt) || !bytes.Equal(bad.Payload, m.Payload) {
		t.Fatalf("corrupt: %v", err)
	}
}
