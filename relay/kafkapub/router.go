package kafkapub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/relay"
)

// DefaultTopicPrefix is the topic prefix of the default router.
const DefaultTopicPrefix = "outbox"

// DebeziumTopicPrefix is the topic prefix of the default router with the
// Debezium option: Debezium's default route.topic.replacement is
// "outbox.event.${routedByValue}", routed by the aggregate type.
const DebeziumTopicPrefix = "outbox.event"

// MaxTopicLen is the longest topic name Kafka accepts, in bytes.
const MaxTopicLen = 249

// maxPrefixLen leaves room for the aggregate type after a router prefix.
const maxPrefixLen = 200

// ErrInvalidTopic reports a name that is not a valid Kafka topic. Publishers
// wrap it with relay.Permanent.
var ErrInvalidTopic = errors.New("kafkapub: invalid topic")

// Router maps a message to the topic it is produced to. An error it returns
// is recorded for that message as is: wrap it with relay.Permanent when
// retrying cannot help. A topic that [ValidateTopic] rejects is recorded as a
// permanent error.
//
// The record's key is always the aggregate id, so the events of one
// aggregate land in one partition of their topic, in order. A router that
// sends the events of one aggregate to several topics gives up that order.
type Router func(relay.Message) (string, error)

// DefaultRouter returns the router "<prefix>.<aggregate_type>": one topic per
// aggregate type, for example "outbox.order".
//
// The prefix must be a valid topic name ([ValidateTopic]) of at most 200
// bytes. In the aggregate type, each character Kafka forbids in topic names
// (anything but ASCII letters, digits, '.', '_' and '-') becomes '_', and an
// empty aggregate type becomes "_"; case is kept. The mapping is deterministic, so one
// aggregate type always has one topic. It fails (permanently) only when the
// topic is longer than [MaxTopicLen].
func DefaultRouter(prefix string) (Router, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("kafkapub: topic prefix: %w", err)
	}
	return func(m relay.Message) (string, error) {
		var b strings.Builder
		b.Grow(len(prefix) + 1 + len(m.AggregateType))
		b.WriteString(prefix)
		b.WriteByte('.')
		if m.AggregateType == "" {
			b.WriteByte('_')
		}
		for _, r := range m.AggregateType { // one '_' per rune, invalid UTF-8 included
			if r >= 0x80 || !topicByte(byte(r)) {
				r = '_'
			}
			b.WriteByte(byte(r))
		}
		s := b.String()
		if len(s) > MaxTopicLen {
			return "", relay.Permanent(fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidTopic, len(s), MaxTopicLen))
		}
		return s, nil
	}, nil
}

func validatePrefix(prefix string) error {
	if err := ValidateTopic(prefix); err != nil {
		return err
	}
	if len(prefix) > maxPrefixLen {
		return fmt.Errorf("%w: prefix of %d bytes is longer than %d", ErrInvalidTopic, len(prefix), maxPrefixLen)
	}
	return nil
}

// topicByte reports whether c may appear in a topic name.
func topicByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ValidateTopic reports whether s is a valid Kafka topic name: not empty,
// not "." or "..", at most [MaxTopicLen] bytes, and only ASCII letters,
// digits, '.', '_' and '-'. Its errors wrap [ErrInvalidTopic].
func ValidateTopic(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	case s == "." || s == "..":
		return fmt.Errorf("%w: %q", ErrInvalidTopic, s)
	case len(s) > MaxTopicLen:
		return fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidTopic, len(s), MaxTopicLen)
	}
	for i := 0; i < len(s); i++ {
		if !topicByte(s[i]) {
			return fmt.Errorf("%w: %q has a character other than ASCII letters, digits, '.', '_' and '-'", ErrInvalidTopic, s)
		}
	}
	return nil
}

// topicCache routes the messages of one Publish call. With the default
// router it remembers the topic of each aggregate type, the only field that
// router reads. A custom router is called for every message.
type topicCache struct {
	opts *options
	seen map[string]string
}

// route returns m's topic as route does, from the cache when it can.
func (c *topicCache) route(m *relay.Message) (string, error) {
	if !c.opts.defaultRouter {
		return route(c.opts.router, m)
	}
	if topic, ok := c.seen[m.AggregateType]; ok {
		return topic, nil
	}
	topic, err := route(c.opts.router, m)
	if err != nil {
		return "", err
	}
	if c.seen == nil {
		c.seen = make(map[string]string)
	}
	c.seen[m.AggregateType] = topic
	return topic, nil
}

// route returns m's validated topic, or the error to record for m.
func route(r Router, m *relay.Message) (string, error) {
	topic, err := r(*m)
	if err != nil {
		return "", fmt.Errorf("kafkapub: route event %s: %w", m.ID, err)
	}
	if err := ValidateTopic(topic); err != nil {
		return "", relay.Permanent(fmt.Errorf("kafkapub: route event %s: %w", m.ID, err))
	}
	return topic, nil
}
