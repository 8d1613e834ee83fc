package codec

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
)

// Encoding is a parsed Jitoutbox-Encoding value.
type Encoding struct {
	// Compressed reports a zstd step.
	Compressed bool
	// KeyID is the key of the AES-256-GCM step, "" when not encrypted.
	KeyID string
}

// Encrypted reports whether the payload is encrypted.
func (e Encoding) Encrypted() bool { return e.KeyID != "" }

// ParseEncoding parses a Jitoutbox-Encoding value: "zstd",
// "aes-256-gcm:<key id>" or "zstd,aes-256-gcm:<key id>" (in that order).
// Anything else is an error matching ErrUnsupported.
func ParseEncoding(s string) (Encoding, error) {
	var e Encoding
	rest := s
	if z, after, ok := strings.Cut(rest, ","); ok || rest == StepZstd {
		if z != StepZstd {
			return Encoding{}, fmt.Errorf("%w: %q", ErrUnsupported, s)
		}
		e.Compressed, rest = true, after
		if !ok {
			return e, nil
		}
	}
	id, ok := strings.CutPrefix(rest, StepAES+":")
	if !ok {
		return Encoding{}, fmt.Errorf("%w: %q", ErrUnsupported, s)
	}
	if err := checkKeyID(id); err != nil {
		return Encoding{}, fmt.Errorf("%w: %q: bad key id", ErrUnsupported, s)
	}
	e.KeyID = id
	return e, nil
}

// Decode restores the payload of event eventID stored with the given
// Jitoutbox-Encoding and Jitoutbox-Content-Type values: it decrypts with
// the key the encoding names, then decompresses. An empty encoding returns
// payload itself. Failures are a *DecodeError (ErrUnknownKey, ErrCorrupt,
// ErrUnsupported, ErrTooLarge, ErrNoKeys, or the KeyProvider's error). It
// never changes payload.
func (c *Codec) Decode(eventID, encoding, contentType string, payload []byte) ([]byte, error) {
	if encoding == "" {
		return payload, nil
	}
	fail := func(keyID string, err error) ([]byte, error) {
		return nil, &DecodeError{EventID: eventID, Encoding: encoding, KeyID: keyID, Err: err}
	}
	e, err := ParseEncoding(encoding)
	if err != nil {
		return fail("", err)
	}
	out := payload
	if e.Encrypted() {
		a, err := c.aead(e.KeyID)
		if err != nil {
			return fail(e.KeyID, err)
		}
		if len(payload) < nonceSize+tagSize {
			return fail(e.KeyID, fmt.Errorf("%w: %d bytes is shorter than a nonce and a tag", ErrCorrupt, len(payload)))
		}
		if len(payload)-nonceSize-tagSize > c.maxDecoded {
			return fail(e.KeyID, fmt.Errorf("%w: %d bytes of ciphertext", ErrTooLarge, len(payload)-nonceSize-tagSize))
		}
		out, err = a.Open(nil, payload[:nonceSize], payload[nonceSize:], additionalData(canonicalID(eventID), encoding, contentType))
		if err != nil {
			// GCM says only "message authentication failed": the key,
			// the nonce, the ciphertext or the data bound to it differ.
			return fail(e.KeyID, fmt.Errorf("%w: authentication failed (altered or truncated ciphertext, another event's, or another key under this id)", ErrCorrupt))
		}
	}
	if e.Compressed {
		z, err := c.zdec.DecodeAll(out, nil)
		switch {
		case errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || len(z) > c.maxDecoded:
			return fail(e.KeyID, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.maxDecoded))
		case err != nil:
			return fail(e.KeyID, fmt.Errorf("%w: zstd: %w", ErrCorrupt, err))
		}
		out = z
	}
	return out, nil
}

// DecodePayload decodes the payload of a received message from its
// headers (as the inbox adapters give them: the first value of each): when
// the Jitoutbox-Encoding header is present, it returns the decoded
// payload, and a copy of headers without Jitoutbox-Encoding, so that
// decoding again is harmless; Jitoutbox-Content-Type stays and names the
// decoded payload's content type. Without the header it returns payload and
// headers as given. Header names are matched exactly, then ignoring case.
// Errors are Decode's. This is the inbox.Decoder contract.
func (c *Codec) DecodePayload(eventID string, headers map[string]string, payload []byte) ([]byte, map[string]string, error) {
	encName, encoding := header(headers, HeaderEncoding)
	if encName == "" {
		return payload, headers, nil
	}
	_, ct := header(headers, HeaderContentType)
	out, err := c.Decode(eventID, encoding, ct, payload)
	if err != nil {
		return nil, nil, err
	}
	h := maps.Clone(headers)
	delete(h, encName)
	return out, h, nil
}

// header returns the name under which headers holds name (exactly, else
// ignoring case) and its value; "" when absent.
func header(headers map[string]string, name string) (string, string) {
	if v, ok := headers[name]; ok {
		return name, v
	}
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return k, v
		}
	}
	return "", ""
}

// canonicalID returns a UUID's canonical text form (lower case, dashes),
// so that the forms a consumer may receive authenticate alike; other ids
// as given.
func canonicalID(id string) string {
	if u, err := uuid.Parse(id); err == nil {
		return u.String()
	}
	return id
}
