package inbox

import "fmt"

// Decoder restores payloads that the producer encoded (package codec's
// *Codec, whose doc gives the format). DecodePayload returns the decoded
// payload and the headers to keep; a message that was not encoded comes
// back as given.
type Decoder interface {
	DecodePayload(eventID string, headers map[string]string, payload []byte) ([]byte, map[string]string, error)
}

// Decode returns m with its payload decoded by d: decrypted and
// decompressed when the producer encoded it (txoutbox.WithPayloadEncoder;
// the Jitoutbox-Encoding header), unchanged otherwise. Call it on what the
// adapters return, before Handle, so that the side effect sees the
// payload as the producer gave it and Handle records its hash:
//
//	msg, err := natssub.JetStream(jm).Decode(c)
//	if err != nil {
//		// an unknown key id (codec.ErrUnknownKey) or a corrupt payload
//		// (codec.ErrCorrupt): redelivery cannot help until the key is
//		// given; dead-letter or terminate
//	}
//	res, err := in.Handle(ctx, db, msg, apply)
//
// The returned headers no longer hold Jitoutbox-Encoding, so decoding again
// is harmless; Jitoutbox-Content-Type names the payload's content type. On
// error m is returned unchanged with the decoder's error wrapped. d must
// not be nil.
func (m Message) Decode(d Decoder) (Message, error) {
	p, h, err := d.DecodePayload(m.EventID, m.Headers, m.Payload)
	if err != nil {
		return m, fmt.Errorf("inbox: decode: %w", err)
	}
	m.Payload, m.Headers = p, h
	return m, nil
}
