package codec

import (
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// MaxKeyIDLen is the longest key id accepted, in bytes.
const MaxKeyIDLen = 64

// KeyProvider supplies encryption keys by id. A key id names one key for
// ever: a Codec keeps the cipher it built for an id and never asks again.
// Implementations must be safe for concurrent use.
type KeyProvider interface {
	// CurrentKeyID returns the id of the key new payloads are encrypted
	// with. It is called for every encoded event, so it must be cheap.
	CurrentKeyID() string
	// Key returns the KeySize-byte key named id. For an id it does not
	// know it returns an error matching ErrUnknownKey; any other error
	// (a key service that cannot be reached) is taken as passing.
	Key(id string) ([]byte, error)
}

// Keys is a KeyProvider holding its keys in memory. It is immutable.
type Keys struct {
	current string
	keys    map[string][]byte
}

var _ KeyProvider = (*Keys)(nil)

// NewKeys returns the keys given, current naming the one new payloads are
// encrypted with. Every key must be KeySize bytes and every id valid (1 to
// MaxKeyIDLen bytes of letters, digits, '.', '_' and '-'); current must be
// one of the ids. It copies the keys. Errors match ErrInvalidKey.
func NewKeys(current string, keys map[string][]byte) (*Keys, error) {
	k := &Keys{current: current, keys: make(map[string][]byte, len(keys))}
	for id, key := range keys {
		if err := checkKeyID(id); err != nil {
			return nil, err
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("%w: key %q has %d bytes, AES-256 needs %d", ErrInvalidKey, id, len(key), KeySize)
		}
		k.keys[id] = append([]byte(nil), key...)
	}
	if _, ok := k.keys[current]; !ok {
		return nil, fmt.Errorf("%w: no key has the current id %q", ErrInvalidKey, current)
	}
	return k, nil
}

// CurrentKeyID returns the current key's id.
func (k *Keys) CurrentKeyID() string { return k.current }

// Key returns a copy of the key named id, or an error matching
// ErrUnknownKey.
func (k *Keys) Key(id string) ([]byte, error) {
	key, ok := k.keys[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, id)
	}
	return slices.Clone(key), nil
}

// IDs returns the key ids, current first, then the others sorted.
func (k *Keys) IDs() []string {
	ids := []string{k.current}
	for _, id := range slices.Sorted(maps.Keys(k.keys)) {
		if id != k.current {
			ids = append(ids, id)
		}
	}
	return ids
}

// ParseKeys reads keys in the text form "<id>:<base64 key>", entries
// separated by newlines or commas, newest first: the first entry is the
// current key. Blank entries and lines starting with '#' are ignored;
// base64 may be standard or URL-safe, padded or not. Errors match
// ErrInvalidKey and never contain key material.
func ParseKeys(text string) (*Keys, error) {
	var current string
	keys := map[string][]byte{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		for entry := range strings.SplitSeq(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			id, b64, ok := strings.Cut(entry, ":")
			id = strings.TrimSpace(id)
			if !ok {
				return nil, fmt.Errorf("%w: an entry has no ':' between key id and key (want <id>:<base64 key>)", ErrInvalidKey)
			}
			if err := checkKeyID(id); err != nil {
				return nil, err
			}
			if _, dup := keys[id]; dup {
				return nil, fmt.Errorf("%w: key id %q given twice", ErrInvalidKey, id)
			}
			key, err := decodeBase64(strings.TrimSpace(b64))
			if err != nil {
				return nil, fmt.Errorf("%w: key %q is not base64", ErrInvalidKey, id)
			}
			keys[id] = key
			if current == "" {
				current = id
			}
		}
	}
	if current == "" {
		return nil, fmt.Errorf("%w: no key given (want <id>:<base64 key>, newest first)", ErrInvalidKey)
	}
	out, err := NewKeys(current, keys)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// KeysFromEnv reads ParseKeys's text form from the environment variable
// name. An unset or empty variable is an error matching ErrInvalidKey.
func KeysFromEnv(name string) (*Keys, error) {
	v, ok := os.LookupEnv(name)
	if !ok || strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("%w: environment variable %s is not set", ErrInvalidKey, name)
	}
	k, err := ParseKeys(v)
	if err != nil {
		return nil, fmt.Errorf("codec: environment variable %s: %w", name, err)
	}
	return k, nil
}

// KeysFromFile reads ParseKeys's text form from the file at path (a
// mounted secret, say). The file is read once; to rotate, build a new
// Codec with the file's new content.
func KeysFromFile(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("codec: read keys: %w", err)
	}
	k, err := ParseKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("codec: key file %s: %w", path, err)
	}
	return k, nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// checkKeyID validates a key id: it travels in a header and in the
// Jitoutbox-Encoding grammar, so it stays a short token.
func checkKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDLen {
		return fmt.Errorf("%w: key id %q must have 1 to %d bytes", ErrInvalidKey, id, MaxKeyIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: key id %q: only letters, digits, '.', '_' and '-' are allowed", ErrInvalidKey, id)
		}
	}
	return nil
}
