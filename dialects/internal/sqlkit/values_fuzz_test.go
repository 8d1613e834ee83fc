package sqlkit

import (
	"encoding/json"
	"maps"
	"testing"
	"unicode/utf8"
)

// FuzzHeadersRoundTrip checks that headers survive the JSON column codec
// unchanged, whatever bytes they hold (invalid UTF-8 is the one lossy case
// JSON cannot carry; txoutbox refuses it before it gets here).
func FuzzHeadersRoundTrip(f *testing.F) {
	f.Add("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "k", "")
	f.Add("a", "ü\u2028\"\\", "b", "{}")
	f.Add("", "", "x", "null")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		for _, s := range []string{k1, v1, k2, v2} {
			if !utf8.ValidString(s) {
				t.Skip()
			}
		}
		in := map[string]string{k1: v1, k2: v2}
		enc, err := EncodeHeaders(in)
		if err != nil {
			t.Fatal(err)
		}
		s := enc.(string)
		if !json.Valid([]byte(s)) {
			t.Fatalf("not JSON: %q", s)
		}
		out, err := DecodeHeaders(&s)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(in, out) {
			t.Fatalf("round trip changed headers: %q -> %q", in, out)
		}
	})
}

// FuzzTruncateError checks that stored error texts are valid UTF-8 and
// bounded, and that short valid texts are kept as they are.
func FuzzTruncateError(f *testing.F) {
	f.Add("broker said no")
	f.Add("\xff\xfe partial \xe2\x82")
	f.Fuzz(func(t *testing.T, s string) {
		out := TruncateError(s)
		if !utf8.ValidString(out) || len(out) > MaxErrorBytes {
			t.Fatalf("TruncateError(%q) = %q", s, out)
		}
		if utf8.ValidString(s) && len(s) <= MaxErrorBytes && out != s {
			t.Fatalf("TruncateError changed a short valid text: %q -> %q", s, out)
		}
	})
}

// FuzzNullTimeScan feeds arbitrary driver values to the timestamp scanner: it
// must never panic, and what it accepts must be UTC.
func FuzzNullTimeScan(f *testing.F) {
	f.Add("2026-11-22 06:40:25.123456", int64(1_763_793_625_123_456))
	f.Add("2026-11-22T06:40:25Z", int64(-1))
	f.Add("garbage", int64(0))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		for _, src := range []any{s, []byte(s), n, nil} {
			var nt NullTime
			if err := nt.Scan(src); err == nil && nt.Valid && nt.Time.Location().String() != "UTC" {
				t.Fatalf("Scan(%v) gave a non-UTC time %v", src, nt.Time)
			}
		}
	})
}
