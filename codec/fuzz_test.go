package codec_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
)

// FuzzDecode feeds Decode arbitrary encodings, content types and payloads:
// it must not panic, must fail with a *DecodeError or succeed, and an
// encoded payload must decode to itself.
func FuzzDecode(f *testing.F) {
	c := newCodec(f, codec.Config{Keys: keys(f, "k1", "old"), CompressAbove: 8, MaxDecodedSize: 1 << 20})
	id := "0190f5d2-0000-7000-8000-000000000001"
	for _, p := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc"), 100)} {
		stored, enc, err := c.EncodePayload(id, "application/json", p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc, "application/json", stored)
	}
	f.Add("zstd", "", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0x58, 0, 0, 0})
	f.Add("aes-256-gcm:nope", "", make([]byte, 40))
	f.Add("zstd,aes-256-gcm:old", "text/plain", make([]byte, 28))
	f.Fuzz(func(t *testing.T, enc, ct string, payload []byte) {
		got, err := c.Decode(id, enc, ct, payload)
		if err != nil {
			var de *codec.DecodeError
			if !errors.As(err, &de) || got != nil {
				t.Fatalf("Decode = %d bytes, %v; want nil and a *DecodeError", len(got), err)
			}
		}
		stored, e, err := c.EncodePayload(id, ct, payload)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(id, e, ct, stored)
		if err != nil || !bytes.Equal(back, payload) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
