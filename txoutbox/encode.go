package txoutbox

import (
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Headers Add sets on an event whose payload a PayloadEncoder encoded.
const (
	// HeaderEncoding holds the encoding the PayloadEncoder returned: the
	// steps applied, for package codec "zstd", "aes-256-gcm:<key id>" or
	// both.
	HeaderEncoding = "Jitoutbox-Encoding"
	// HeaderEncodedContentType holds the event's content type before
	// encoding (the row's is ContentTypeBinary).
	HeaderEncodedContentType = "Jitoutbox-Content-Type"
)

// PayloadEncoder transforms payloads before they are written: the contract
// between txoutbox and package codec (whose *Codec is one; see there for
// the decoding side).
//
// Add calls EncodePayload once per event, after validating it and
// assigning its id, with the id, the content type (as given or detected)
// and the payload, under the transaction's registration lock. It returns
// the bytes to store and a non-empty encoding naming what it did, or
// encoding "" to store the payload as given (stored is then ignored).
// With an encoding, Add stores the returned bytes with content type
// ContentTypeBinary (an encoded JSON payload is no longer JSON: it goes to
// the table's binary column), and adds the headers HeaderEncoding (the
// encoding) and HeaderEncodedContentType (the original content type),
// which travel with the message to the consumer. It must not keep or
// change payload, must be safe for concurrent use, and should bind what it
// encrypts to eventID, so that a payload copied into another row does not
// decode. An error makes Add fail; nothing is buffered.
type PayloadEncoder interface {
	EncodePayload(eventID, contentType string, payload []byte) (stored []byte, encoding string, err error)
}

// WithPayloadEncoder makes Add encode every payload with enc (see
// PayloadEncoder), for encryption or compression with package codec:
//
//	c, err := codec.New(codec.Config{Keys: keys, CompressAbove: 1024})
//	ob, err := txoutbox.New(db, dialect, txoutbox.WithPayloadEncoder(c))
//
// WithMaxPayload bounds the payload before encoding. enc must not be nil.
func WithPayloadEncoder(enc PayloadEncoder) Option {
	return func(c *config) error {
		if enc == nil {
			return fmt.Errorf("%w: WithPayloadEncoder(nil)", ErrInvalidOption)
		}
		c.encoder = enc
		return nil
	}
}

// encodePayload runs the encoder on ev (whose ID is set and whose Payload
// and Headers are the buffer's own copies).
func (o *Outbox) encodePayload(ev *dialects.Event) error {
	stored, encoding, err := o.cfg.encoder.EncodePayload(ev.ID, ev.ContentType, ev.Payload)
	if err != nil {
		return fmt.Errorf("txoutbox: add: encode payload: %w", err)
	}
	if encoding == "" {
		return nil
	}
	if ev.Headers == nil {
		ev.Headers = make(map[string]string, 2)
	}
	ev.Headers[HeaderEncoding] = encoding
	ev.Headers[HeaderEncodedContentType] = ev.ContentType
	if verr := checkHeaderSize(ev.Headers); verr != nil {
		return verr // the encoding's headers count too: the bound is the broker's
	}
	ev.Payload, ev.ContentType = stored, ContentTypeBinary
	return nil
}
