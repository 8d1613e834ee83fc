package codec_test

import (
	"bytes"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
)

// BenchmarkEncodePayload measures EncodePayload alone on a 1 KiB JSON
// payload: encryption only, and compression then encryption; with the
// decode of the same payload beside it.
//
//	go test ./codec/ -run '^$' -bench . -count 6
func BenchmarkEncodePayload(b *testing.B) {
	p := append(append([]byte(`{"note":"`), bytes.Repeat([]byte("abcdefgh"), 126)...), `"}`...)[:1024]
	for _, c := range []struct {
		name string
		cfg  codec.Config
	}{
		{"aes-1KiB", codec.Config{Keys: keys(b, "k1")}},
		{"zstd-aes-1KiB", codec.Config{Keys: keys(b, "k1"), CompressAbove: 512}},
	} {
		cd := newCodec(b, c.cfg)
		id := newID()
		b.Run("encode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, _, err := cd.EncodePayload(id, "application/json", p); err != nil {
					b.Fatal(err)
				}
			}
		})
		stored, enc, err := cd.EncodePayload(id, "application/json", p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("decode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, err := cd.Decode(id, enc, "application/json", stored); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
