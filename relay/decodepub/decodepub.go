// Package decodepub is a relay.Publisher that decodes payloads before
// passing them to another publisher: for deployments whose consumers cannot
// hold keys, so that the relay decrypts (and decompresses) what txoutbox
// encoded with package codec.
//
// The default, and the recommended place, is the consumer (see package
// codec): the relay and the broker then never see a payload in clear. With
// this package the relay needs the keys, and the broker carries plaintext.
//
// A message whose payload cannot be decoded (a key id the codec does not
// know, a corrupt ciphertext, an unknown encoding) is never passed on: its
// result is a relay.Permanent error, so the relay dead-letters the row with
// the codec's error text and publishes nothing of it. The dead-letter
// publisher (relay Config.DeadLetter) receives the message as stored,
// still encoded. A failure of the key provider itself (not an unknown key)
// is retried like any publish error.
package decodepub

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/jitoutbox/jitoutbox/codec"
	"github.com/jitoutbox/jitoutbox/relay"
)

// Publisher decodes each message's payload with a codec and passes the
// messages to the next publisher. It is safe for concurrent use if the next
// publisher is.
type Publisher struct {
	next relay.Publisher
	c    *codec.Codec
}

var _ relay.Publisher = (*Publisher)(nil)

// New returns a Publisher that decodes with c and publishes through next.
func New(next relay.Publisher, c *codec.Codec) (*Publisher, error) {
	if next == nil {
		return nil, fmt.Errorf("decodepub: nil next publisher")
	}
	if c == nil {
		return nil, fmt.Errorf("decodepub: nil codec")
	}
	return &Publisher{next: next, c: c}, nil
}

// Publish decodes the messages of batch that carry the Jitoutbox-Encoding
// header: the decoded message has the decoded payload, the original
// content type (Jitoutbox-Content-Type) and neither header. It passes the
// ones that decode, encoded or not, to the next publisher in one call, and
// records a relay.Permanent error for the others. batch is not changed.
func (p *Publisher) Publish(ctx context.Context, batch []relay.Message, errs []error) {
	encoded := false
	for i := range batch {
		if _, ok := batch[i].Headers[codec.HeaderEncoding]; ok {
			encoded = true
			break
		}
	}
	if !encoded {
		p.next.Publish(ctx, batch, errs)
		return
	}
	out := make([]relay.Message, 0, len(batch))
	idx := make([]int, 0, len(batch)) // idx[j] is the position in batch of out[j]
	for i := range batch {
		m, err := p.decode(&batch[i])
		if err != nil {
			errs[i] = err
			continue
		}
		out = append(out, m)
		idx = append(idx, i)
	}
	if len(out) == 0 {
		return
	}
	sub := make([]error, len(out))
	p.next.Publish(ctx, out, sub)
	for j, i := range idx {
		errs[i] = sub[j]
	}
}

// decode returns m decoded (a copy when it was encoded, m itself when not).
func (p *Publisher) decode(m *relay.Message) (relay.Message, error) {
	enc, ok := m.Headers[codec.HeaderEncoding]
	if !ok {
		return *m, nil
	}
	ct := m.Headers[codec.HeaderContentType]
	payload, err := p.c.Decode(m.ID, enc, ct, m.Payload)
	if err != nil {
		if de, ok := errors.AsType[*codec.DecodeError](err); ok && !de.Permanent() {
			return relay.Message{}, fmt.Errorf("decodepub: %w", err)
		}
		return relay.Message{}, relay.Permanent(fmt.Errorf("decodepub: not published: %w", err))
	}
	out := *m
	out.Payload, out.ContentType = payload, ct
	out.Headers = maps.Clone(m.Headers)
	delete(out.Headers, codec.HeaderEncoding)
	delete(out.Headers, codec.HeaderContentType)
	if len(out.Headers) == 0 {
		out.Headers = nil
	}
	return out, nil
}
