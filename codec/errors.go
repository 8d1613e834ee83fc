package codec

import (
	"errors"
	"fmt"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrInvalidConfig is returned by New for a Config it cannot use.
	ErrInvalidConfig = errors.New("codec: invalid config")
	// ErrInvalidKey reports a key or key id refused at construction: a
	// key that is not KeySize bytes, an id outside the allowed
	// characters, a current id with no key.
	ErrInvalidKey = errors.New("codec: invalid key")
	// ErrUnknownKey: the payload names a key id the KeyProvider does not
	// have. The payload cannot be decoded until the key is given to the
	// decoder.
	ErrUnknownKey = errors.New("codec: unknown key id")
	// ErrCorrupt: the payload does not decode: a ciphertext that fails
	// authentication (altered, truncated, copied from another event, or
	// under a key id that names another key) or compressed data that is
	// not valid zstd.
	ErrCorrupt = errors.New("codec: corrupt payload")
	// ErrUnsupported: the Jitoutbox-Encoding value names a step this
	// codec does not know, or is malformed.
	ErrUnsupported = errors.New("codec: unsupported encoding")
	// ErrTooLarge: the decompressed payload would exceed
	// Config.MaxDecodedSize.
	ErrTooLarge = errors.New("codec: decoded payload too large")
	// ErrNoKeys: the payload is encrypted and the codec has no
	// KeyProvider.
	ErrNoKeys = errors.New("codec: encrypted payload and no keys")
)

// DecodeError is returned for a payload that cannot be decoded. Err matches
// one of ErrUnknownKey, ErrCorrupt, ErrUnsupported, ErrTooLarge, ErrNoKeys,
// or is the KeyProvider's own error.
type DecodeError struct {
	// EventID is the event whose payload failed.
	EventID string
	// Encoding is the Jitoutbox-Encoding value.
	Encoding string
	// KeyID is the key id it names ("" when not encrypted).
	KeyID string
	// Err is the cause.
	Err error
}

func (e *DecodeError) Error() string {
	if e.KeyID != "" {
		return fmt.Sprintf("codec: event %s: decode %q (key %q): %v", e.EventID, e.Encoding, e.KeyID, e.Err)
	}
	return fmt.Sprintf("codec: event %s: decode %q: %v", e.EventID, e.Encoding, e.Err)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Permanent reports whether decoding again cannot succeed without a change
// of configuration or data: true for every cause but an error of the
// KeyProvider other than ErrUnknownKey (relay.IsPermanent reads it).
func (e *DecodeError) Permanent() bool {
	for _, s := range [...]error{ErrUnknownKey, ErrCorrupt, ErrUnsupported, ErrTooLarge, ErrNoKeys} {
		if errors.Is(e.Err, s) {
			return true
		}
	}
	return false
}
