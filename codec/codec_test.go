package codec_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// The codec is txoutbox's encoder and the inbox's decoder.
var (
	_ txoutbox.PayloadEncoder = (*codec.Codec)(nil)
	_ inbox.Decoder           = (*codec.Codec)(nil)
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, codec.KeySize) }

func keys(t testing.TB, current string, ids ...string) *codec.Keys {
	t.Helper()
	m := map[string][]byte{}
	for i, id := range append([]string{current}, ids...) {
		m[id] = key(byte(i + 1))
		if id == "old" {
			m[id] = key(0xAA) // the same bytes in every set that holds it
		}
		if id == "new" {
			m[id] = key(0xBB)
		}
	}
	k, err := codec.NewKeys(current, m)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCodec(t testing.TB, cfg codec.Config) *codec.Codec {
	t.Helper()
	c, err := codec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// encode encodes payload for a new event and returns its id, the stored
// bytes and the encoding.
func encode(t testing.TB, c *codec.Codec, ct string, payload []byte) (string, []byte, string) {
	t.Helper()
	id := newID()
	stored, enc, err := c.EncodePayload(id, ct, payload)
	if err != nil {
		t.Fatal(err)
	}
	return id, stored, enc
}

func TestHeaderNamesAgree(t *testing.T) {
	if codec.HeaderEncoding != txoutbox.HeaderEncoding || codec.HeaderContentType != txoutbox.HeaderEncodedContentType {
		t.Fatalf("codec headers %q %q, txoutbox's %q %q", codec.HeaderEncoding, codec.HeaderContentType,
			txoutbox.HeaderEncoding, txoutbox.HeaderEncodedContentType)
	}
}

// TestRoundTrip: every combination of steps decodes to the payload, and
// the stored bytes are not the payload when encrypted.
func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte(`{"item":"widget","qty":1},`), 200) // 5,200 bytes, compressible
	small := []byte(`{"total":42}`)
	for _, c := range []struct {
		name    string
		cfg     codec.Config
		payload []byte
		want    string // the encoding
	}{
		{"nothing", codec.Config{}, big, ""},
		{"zstd", codec.Config{CompressAbove: 1024}, big, "zstd"},
		{"zstd below threshold", codec.Config{CompressAbove: 1024}, small, ""},
		{"zstd not smaller", codec.Config{CompressAbove: 1}, []byte("ab"), ""},
		{"aes", codec.Config{Keys: keys(t, "k1")}, big, "aes-256-gcm:k1"},
		{"aes empty payload", codec.Config{Keys: keys(t, "k1")}, nil, "aes-256-gcm:k1"},
		{"zstd and aes", codec.Config{Keys: keys(t, "k1"), CompressAbove: 1024}, big, "zstd,aes-256-gcm:k1"},
		{"aes small", codec.Config{Keys: keys(t, "k1"), CompressAbove: 1024}, small, "aes-256-gcm:k1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cd := newCodec(t, c.cfg)
			orig := bytes.Clone(c.payload)
			id, stored, enc := encode(t, cd, "application/json", c.payload)
			if enc != c.want {
				t.Fatalf("encoding %q, want %q", enc, c.want)
			}
			if !bytes.Equal(c.payload, orig) {
				t.Fatal("EncodePayload changed its input")
			}
			if strings.Contains(enc, "aes") && (bytes.Contains(stored, []byte("widget")) || len(stored) < 28) {
				t.Fatalf("encrypted payload holds plaintext or is too short (%d bytes)", len(stored))
			}
			if enc == "zstd" && len(stored) >= len(c.payload) {
				t.Fatalf("compressed %d bytes to %d", len(c.payload), len(stored))
			}
			got, err := cd.Decode(id, enc, "application/json", stored)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.payload) {
				t.Fatalf("decoded %d bytes, want the %d given", len(got), len(c.payload))
			}
		})
	}
}

// TestRotation: new events use the current key; events encrypted with the
// previous key still decode after the rotation, and by a consumer holding
// both.
func TestRotation(t *testing.T) {
	before := newCodec(t, codec.Config{Keys: keys(t, "old")})
	idOld, storedOld, encOld := encode(t, before, "text/plain", []byte("before"))
	after := newCodec(t, codec.Config{Keys: keys(t, "new", "old")})
	idNew, storedNew, encNew := encode(t, after, "text/plain", []byte("after"))
	if encOld != "aes-256-gcm:old" || encNew != "aes-256-gcm:new" {
		t.Fatalf("encodings %q, %q", encOld, encNew)
	}
	for _, c := range []struct {
		id, enc string
		stored  []byte
		want    string
	}{{idOld, encOld, storedOld, "before"}, {idNew, encNew, storedNew, "after"}} {
		got, err := after.Decode(c.id, c.enc, "text/plain", c.stored)
		if err != nil || string(got) != c.want {
			t.Fatalf("after rotation: %q, %v; want %q", got, err, c.want)
		}
	}
	// The writer before the rotation does not know the new key.
	_, err := before.Decode(idNew, encNew, "text/plain", storedNew)
	var de *codec.DecodeError
	if !errors.Is(err, codec.ErrUnknownKey) || !errors.As(err, &de) || de.KeyID != "new" || de.EventID != idNew || !de.Permanent() {
		t.Fatalf("unknown key: %v, want a permanent *DecodeError matching ErrUnknownKey for key new", err)
	}
	if !strings.Contains(err.Error(), `"new"`) || !strings.Contains(err.Error(), idNew) {
		t.Fatalf("error %q does not name the key and the event", err)
	}
}

// TestBoundToEvent: a ciphertext decodes only for its event id, its
// encoding and its content type; an altered or truncated one never does.
func TestBoundToEvent(t *testing.T) {
	c := newCodec(t, codec.Config{Keys: keys(t, "k1", "k2"), CompressAbove: 10})
	payload := bytes.Repeat([]byte("secret "), 20)
	id, stored, enc := encode(t, c, "text/plain", payload)
	if enc != "zstd,aes-256-gcm:k1" {
		t.Fatalf("encoding %q", enc)
	}
	flipped := bytes.Clone(stored)
	flipped[len(flipped)/2] ^= 1
	for _, bad := range []struct {
		name, id, enc, ct string
		stored            []byte
	}{
		{"another event", newID(), enc, "text/plain", stored},
		{"another content type", id, enc, "application/json", stored},
		{"no content type header", id, enc, "", stored},
		{"steps changed", id, "aes-256-gcm:k1", "text/plain", stored},
		{"another key under its id", id, "zstd,aes-256-gcm:k2", "text/plain", stored},
		{"a bit flipped", id, enc, "text/plain", flipped},
		{"truncated", id, enc, "text/plain", stored[:len(stored)-1]},
		{"shorter than nonce and tag", id, enc, "text/plain", stored[:20]},
		{"empty", id, enc, "text/plain", nil},
	} {
		t.Run(bad.name, func(t *testing.T) {
			got, err := c.Decode(bad.id, bad.enc, bad.ct, bad.stored)
			if !errors.Is(err, codec.ErrCorrupt) || got != nil {
				t.Fatalf("Decode = %q, %v; want ErrCorrupt", got, err)
			}
		})
	}
	// The id's other text forms are the same event.
	if got, err := c.Decode(strings.ToUpper(id), enc, "text/plain", stored); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("upper-case id: %v", err)
	}
}

func TestCorruptZstd(t *testing.T) {
	c := newCodec(t, codec.Config{})
	if _, err := c.Decode(newID(), "zstd", "", []byte("not zstd at all")); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("Decode = %v, want ErrCorrupt", err)
	}
}

// TestDecompressionBomb: a small payload that expands past MaxDecodedSize
// is refused, not decompressed.
func TestDecompressionBomb(t *testing.T) {
	bomb := newCodec(t, codec.Config{CompressAbove: 1})
	zeros := make([]byte, 8<<20)
	id, stored, enc := encode(t, bomb, "", zeros)
	if enc != "zstd" || len(stored) > 64<<10 {
		t.Fatalf("8 MiB of zeros: encoding %q, %d bytes", enc, len(stored))
	}
	c := newCodec(t, codec.Config{MaxDecodedSize: 1 << 20})
	if got, err := c.Decode(id, enc, "", stored); !errors.Is(err, codec.ErrTooLarge) || got != nil {
		t.Fatalf("Decode = %d bytes, %v; want ErrTooLarge", len(got), err)
	}
	if got, err := bomb.Decode(id, enc, "", stored); err != nil || len(got) != len(zeros) {
		t.Fatalf("under the default bound: %d bytes, %v", len(got), err)
	}
}

func TestUnsupportedAndNoKeys(t *testing.T) {
	withKeys := newCodec(t, codec.Config{Keys: keys(t, "k1")})
	_, stored, enc := encode(t, withKeys, "", []byte("x"))
	plain := newCodec(t, codec.Config{})
	if _, err := plain.Decode(newID(), enc, "", stored); !errors.Is(err, codec.ErrNoKeys) {
		t.Fatalf("no keys: %v", err)
	}
	for _, enc := range []string{"gzip", "aes-256-gcm", "aes-256-gcm:", "aes-256-gcm:k 1", "aes-256-gcm:k1,zstd", "zstd,", "zstd,zstd", ",aes-256-gcm:k1", "AES-256-GCM:k1"} {
		if _, err := withKeys.Decode(newID(), enc, "", stored); !errors.Is(err, codec.ErrUnsupported) {
			t.Errorf("encoding %q: %v, want ErrUnsupported", enc, err)
		}
	}
}

// TestDecodePayload: the header form finds the headers in any case,
// drops Jitoutbox-Encoding so that decoding again is harmless, and leaves
// messages that were not encoded alone.
func TestDecodePayload(t *testing.T) {
	c := newCodec(t, codec.Config{Keys: keys(t, "k1")})
	id, stored, enc := encode(t, c, "application/json", []byte(`{"a":1}`))
	h := map[string]string{"jitoutbox-encoding": enc, "jitoutbox-content-type": "application/json", "traceparent": "x"}
	got, h2, err := c.DecodePayload(id, h, stored)
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("DecodePayload = %q, %v", got, err)
	}
	if _, ok := h2["jitoutbox-encoding"]; ok || h2["jitoutbox-content-type"] != "application/json" || h2["traceparent"] != "x" {
		t.Fatalf("headers after decode: %v", h2)
	}
	if _, ok := h["jitoutbox-encoding"]; !ok {
		t.Fatal("DecodePayload changed the caller's headers")
	}
	again, _, err := c.DecodePayload(id, h2, got)
	if err != nil || string(again) != `{"a":1}` {
		t.Fatalf("decoding again: %q, %v", again, err)
	}
}

// failingKeys is a key service that cannot be reached for one id.
type failingKeys struct{ codec.KeyProvider }

func (f failingKeys) Key(id string) ([]byte, error) {
	if id == "k2" {
		return nil, errors.New("key service unreachable")
	}
	return f.KeyProvider.Key(id)
}

func TestProviderErrorIsNotPermanent(t *testing.T) {
	enc := newCodec(t, codec.Config{Keys: keys(t, "k2")})
	id, stored, e := encode(t, enc, "", []byte("x"))
	c := newCodec(t, codec.Config{Keys: failingKeys{keys(t, "k1")}})
	_, err := c.Decode(id, e, "", stored)
	var de *codec.DecodeError
	if !errors.As(err, &de) || de.Permanent() || errors.Is(err, codec.ErrUnknownKey) {
		t.Fatalf("provider failure: %v, want a *DecodeError that is not permanent", err)
	}
}

// badProvider answers with a current key it does not have, or a key of
// the wrong length.
type badProvider struct {
	current string
	key     []byte
}

func (b badProvider) CurrentKeyID() string { return b.current }
func (b badProvider) Key(id string) ([]byte, error) {
	if b.key == nil {
		return nil, codec.ErrUnknownKey
	}
	return b.key, nil
}

// TestConstruction: bad keys and settings are refused when built, and the
// errors never hold key material.
func TestConstruction(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  codec.Config
		want error
	}{
		{"missing current key", codec.Config{Keys: badProvider{current: "k1"}}, codec.ErrInvalidKey},
		{"provider key of 16 bytes", codec.Config{Keys: badProvider{current: "k1", key: make([]byte, 16)}}, codec.ErrInvalidKey},
		{"bad current id", codec.Config{Keys: badProvider{current: "k 1", key: key(1)}}, codec.ErrInvalidKey},
		{"negative threshold", codec.Config{CompressAbove: -1}, codec.ErrInvalidConfig},
		{"negative bound", codec.Config{MaxDecodedSize: -1}, codec.ErrInvalidConfig},
	} {
		if _, err := codec.New(c.cfg); !errors.Is(err, c.want) {
			t.Errorf("%s: New = %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := codec.NewKeys("k1", map[string][]byte{"k1": make([]byte, 31)}); !errors.Is(err, codec.ErrInvalidKey) {
		t.Errorf("31-byte key: %v", err)
	}
	if _, err := codec.NewKeys("k9", map[string][]byte{"k1": key(1)}); !errors.Is(err, codec.ErrInvalidKey) {
		t.Errorf("current id without key: %v", err)
	}
	b64 := base64.StdEncoding.EncodeToString(key(7))
	for _, text := range []string{
		"",
		"# only a comment",
		"k1" + b64,
		"k1:" + base64.StdEncoding.EncodeToString(key(7)[:16]),
		"k1:" + b64 + "!",
		"k1:" + b64 + ",k1:" + b64,
		"k/1:" + b64,
	} {
		_, err := codec.ParseKeys(text)
		if !errors.Is(err, codec.ErrInvalidKey) {
			t.Errorf("ParseKeys(%q) = %v, want ErrInvalidKey", text, err)
		}
		if err != nil && strings.Contains(err.Error(), b64[:10]) {
			t.Errorf("error %q holds key material", err)
		}
	}
}
