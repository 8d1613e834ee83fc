package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Header names txoutbox sets on an encoded event (txoutbox.HeaderEncoding
// and txoutbox.HeaderEncodedContentType; the tests check that they agree).
const (
	// HeaderEncoding names the steps applied to the payload, in order,
	// separated by commas: StepZstd, StepAES + ":" + key id.
	HeaderEncoding = "Jitoutbox-Encoding"
	// HeaderContentType is the payload's content type before encoding.
	HeaderContentType = "Jitoutbox-Content-Type"
)

// Steps of the Jitoutbox-Encoding header.
const (
	// StepZstd is zstd compression (RFC 8878).
	StepZstd = "zstd"
	// StepAES is AES-256-GCM encryption; the step is written with its key
	// id: "aes-256-gcm:<key id>".
	StepAES = "aes-256-gcm"
)

// DefaultMaxDecodedSize is Config.MaxDecodedSize's default (16 MiB).
const DefaultMaxDecodedSize = 16 << 20

const (
	nonceSize = 12
	tagSize   = 16
	// aadVersion starts the additional data, so that a later format
	// cannot be mistaken for this one.
	aadVersion = "jitoutbox-codec-1"
)

// Config configures a Codec. The zero value is a codec that encodes
// nothing and decodes only compressed payloads.
type Config struct {
	// Keys supplies the encryption keys. With Keys, every payload is
	// encrypted with the current key (Keys.CurrentKeyID), and payloads
	// encrypted with any key Keys knows are decrypted.
	//
	// Default: nil, no encryption (an encrypted payload then fails to
	// decode with ErrNoKeys).
	Keys KeyProvider

	// CompressAbove turns on zstd compression for payloads larger than
	// this many bytes; a payload is stored compressed only when that makes
	// it smaller. Small payloads rarely shrink, and compressing costs
	// more than it saves below a few hundred bytes.
	//
	// Default: 0, no compression. Must not be negative.
	CompressAbove int

	// MaxDecodedSize bounds a decompressed payload, in bytes, so that a
	// small payload cannot expand into one that exhausts memory. Set it at
	// least to the producer's largest payload (txoutbox.WithMaxPayload).
	//
	// Default: DefaultMaxDecodedSize (16 MiB).
	MaxDecodedSize int
}

// Codec encodes payloads for txoutbox (EncodePayload) and decodes them at
// the consumer or a decoding relay (Decode, DecodePayload). It is safe for
// concurrent use.
type Codec struct {
	keys          KeyProvider
	compressAbove int
	maxDecoded    int
	zenc          *zstd.Encoder
	zdec          *zstd.Decoder
	// aeads caches the cipher of each key id (key id -> cipher.AEAD): a
	// key id names one key for ever.
	aeads sync.Map
}

// New returns a Codec for cfg. With Keys, it checks that the current key
// exists and is a valid AES-256 key: errors match ErrInvalidKey. Other
// invalid settings match ErrInvalidConfig.
func New(cfg Config) (*Codec, error) {
	if cfg.CompressAbove < 0 {
		return nil, fmt.Errorf("%w: CompressAbove %d is negative", ErrInvalidConfig, cfg.CompressAbove)
	}
	if cfg.MaxDecodedSize < 0 {
		return nil, fmt.Errorf("%w: MaxDecodedSize %d is negative", ErrInvalidConfig, cfg.MaxDecodedSize)
	}
	if cfg.MaxDecodedSize == 0 {
		cfg.MaxDecodedSize = DefaultMaxDecodedSize
	}
	c := &Codec{keys: cfg.Keys, compressAbove: cfg.CompressAbove, maxDecoded: cfg.MaxDecodedSize}
	if c.keys != nil {
		id := c.keys.CurrentKeyID()
		if err := checkKeyID(id); err != nil {
			return nil, fmt.Errorf("%w (the current key id)", err)
		}
		if _, err := c.aead(id); err != nil {
			if errors.Is(err, ErrUnknownKey) {
				return nil, fmt.Errorf("%w: the current key %q is missing: %w", ErrInvalidKey, id, err)
			}
			return nil, fmt.Errorf("codec: current key %q: %w", id, err)
		}
	}
	var err error
	// With no writer and no reader, the zstd encoder and decoder start no
	// goroutines: EncodeAll and DecodeAll run on the caller's.
	c.zenc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, fmt.Errorf("codec: zstd encoder: %w", err)
	}
	c.zdec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(c.maxDecoded)))
	if err != nil {
		return nil, fmt.Errorf("codec: zstd decoder: %w", err)
	}
	return c, nil
}

// aead returns the cipher of key id, building it on first use.
func (c *Codec) aead(id string) (cipher.AEAD, error) {
	if a, ok := c.aeads.Load(id); ok {
		return a.(cipher.AEAD), nil
	}
	if c.keys == nil {
		return nil, ErrNoKeys
	}
	key, err := c.keys.Key(id)
	if err != nil {
		return nil, err
	}
	if len(key) != KeySize {
		// A provider's bug: never use a key of another length (AES-128
		// or AES-192 would be accepted by crypto/aes).
		return nil, fmt.Errorf("%w: key %q has %d bytes, AES-256 needs %d", ErrInvalidKey, id, len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("codec: key %q: %w", id, err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("codec: key %q: %w", id, err)
	}
	got, _ := c.aeads.LoadOrStore(id, a)
	return got.(cipher.AEAD), nil
}

// EncodePayload encodes the payload of event eventID whose content type is
// contentType: compressed when longer than Config.CompressAbove and smaller
// for it, then encrypted with the current key when the codec has keys. It
// returns the bytes to store and the Jitoutbox-Encoding value, or the
// payload itself and "" when no step applies. It never changes payload.
// This is the txoutbox.PayloadEncoder contract.
func (c *Codec) EncodePayload(eventID, contentType string, payload []byte) ([]byte, string, error) {
	out, encoding := payload, ""
	if c.compressAbove > 0 && len(payload) > c.compressAbove {
		z := c.zenc.EncodeAll(payload, make([]byte, 0, len(payload)/2))
		if len(z) < len(payload) {
			out, encoding = z, StepZstd
		}
	}
	if c.keys == nil {
		return out, encoding, nil
	}
	id := c.keys.CurrentKeyID()
	a, err := c.aead(id)
	if err != nil {
		return nil, "", fmt.Errorf("codec: encrypt event %s: key %q: %w", eventID, id, err)
	}
	step := StepAES + ":" + id
	if encoding != "" {
		encoding += "," + step
	} else {
		encoding = step
	}
	sealed := make([]byte, nonceSize, nonceSize+len(out)+tagSize)
	_, _ = rand.Read(sealed) // crypto/rand.Read never fails (it crashes the program instead)
	sealed = a.Seal(sealed, sealed[:nonceSize], out, additionalData(canonicalID(eventID), encoding, contentType))
	return sealed, encoding, nil
}

// additionalData is what GCM authenticates besides the ciphertext: the
// event id, the steps with the key id, and the original content type.
func additionalData(eventID, encoding, contentType string) []byte {
	b := make([]byte, 0, len(aadVersion)+len(eventID)+len(encoding)+len(contentType)+3)
	b = append(b, aadVersion...)
	b = append(b, 0)
	b = append(b, eventID...)
	b = append(b, 0)
	b = append(b, encoding...)
	b = append(b, 0)
	return append(b, contentType...)
}
