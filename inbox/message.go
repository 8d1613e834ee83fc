package inbox

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Message is one received event, whatever the broker. The adapters in
// inbox/natssub, inbox/rabbitsub and inbox/kafkasub build it from a NATS,
// RabbitMQ or Kafka message published by jitoutbox's relay (or shaped
// like Debezium's outbox event router); other code may fill it by hand.
type Message struct {
	// EventID is the event id (the outbox's UUIDv7 text). Handle requires a
	// UUID and records its canonical form (lower case, with dashes), so
	// the forms uuid.Parse accepts count as one id.
	EventID string
	// AggregateType, AggregateID and EventType describe the event; the
	// order check keys on the aggregate.
	AggregateType string
	AggregateID   string
	EventType     string
	// Seq is the outbox row's seq (the Jitoutbox-Seq header): 0 when the
	// message has none (no order check for it). A negative Seq marks a seq
	// header that was present but not a positive decimal (the adapters set
	// -1); Handle refuses it with ErrBadMessage.
	Seq int64
	// Payload is the message body. Its SHA-256 is recorded with the id, so
	// that an id reused with another payload is refused.
	Payload []byte
	// Headers are the message's headers (first value of each), for the
	// side effect's use (trace context, content type). Handle does not read
	// them.
	Headers map[string]string
}

// event is a Message that passed check: a canonical id and its payload
// hash.
type event struct {
	msg  Message
	id   string
	hash []byte
}

// headerEncoding is txoutbox.HeaderEncoding (TestDecode checks):
// Decode removes it.
const headerEncoding = "Jitoutbox-Encoding"

// check validates m for d's table and returns it ready to record.
func check(m Message, st *statements) (event, error) {
	if m.EventID == "" {
		return event{}, &MessageError{Err: ErrNoEventID, Detail: "no Jitoutbox-Event-Id header, CloudEvents id or Debezium id"}
	}
	u, err := uuid.Parse(m.EventID)
	if err != nil {
		return event{}, &MessageError{EventID: m.EventID, Err: ErrBadEventID, Detail: err.Error()}
	}
	if u == uuid.Nil {
		return event{}, &MessageError{EventID: m.EventID, Err: ErrBadEventID, Detail: "the nil UUID"}
	}
	if m.Seq < 0 {
		return event{}, &MessageError{EventID: m.EventID, Err: ErrBadMessage, Detail: "the seq header is not a positive decimal"}
	}
	for _, f := range [...]struct{ name, v string }{
		{"aggregate type", m.AggregateType}, {"aggregate id", m.AggregateID}, {"event type", m.EventType},
	} {
		if !utf8.ValidString(f.v) {
			return event{}, &MessageError{EventID: m.EventID, Err: ErrBadMessage, Detail: f.name + " is not valid UTF-8"}
		}
		if st.maxText > 0 && utf8.RuneCountInString(f.v) > st.maxText {
			return event{}, &MessageError{EventID: m.EventID, Err: ErrBadMessage,
				Detail: fmt.Sprintf("%s is longer than %d characters", f.name, st.maxText)}
		}
	}
	for k := range m.Headers {
		if strings.EqualFold(k, headerEncoding) {
			return event{}, &MessageError{EventID: m.EventID, Err: ErrEncoded, Detail: k + ": " + m.Headers[k]}
		}
	}
	sum := sha256.Sum256(m.Payload)
	id := u.String()
	m.EventID = id
	return event{msg: m, id: id, hash: sum[:]}, nil
}
