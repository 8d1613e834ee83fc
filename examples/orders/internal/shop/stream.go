package shop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// Defaults of the stream and subjects.
const (
	DefaultStream        = "ORDERS"
	DefaultSubjectPrefix = "shop"
)

// Event types published by the service.
const (
	EventCreated = "order.created"
	EventPaid    = "order.paid"
)

// Router publishes each event on "<prefix>.<event type>", e.g.
// "shop.order.paid".
func Router(prefix string) natspub.Router {
	return func(m relay.Message) (string, error) {
		return prefix + "." + m.EventType, nil
	}
}

// EnsureStream creates the stream storing "<prefix>.>" (and the dead-letter
// subject, when not empty) or updates it to that configuration: an example
// may do that; the relay command never changes an existing stream. The
// duplicate window lets JetStream drop a message the relay publishes twice
// (same event id) within two minutes.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name, prefix, deadLetter string) (jetstream.Stream, error) {
	if err := natspub.ValidateSubject(prefix); err != nil {
		return nil, fmt.Errorf("shop: subject prefix: %w", err)
	}
	subjects := []string{prefix + ".>"}
	if deadLetter != "" {
		if err := natspub.ValidateSubject(deadLetter); err != nil {
			return nil, fmt.Errorf("shop: dead-letter subject: %w", err)
		}
		if strings.HasPrefix(deadLetter, prefix+".") {
			return nil, fmt.Errorf("shop: dead-letter subject %q is under %q: consumers of the events would get the dead letters; choose another", deadLetter, prefix+".>")
		}
		subjects = append(subjects, deadLetter)
	}
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   subjects,
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("shop: ensure stream %s: %w", name, err)
	}
	return s, nil
}
