package shop

import (
	"context"
	"fmt"
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

// EnsureStream creates the stream storing "<prefix>.>" or updates it to
// that configuration. The duplicate window lets JetStream drop a message the
// relay publishes twice (same event id) within two minutes.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name, prefix string) (jetstream.Stream, error) {
	if err := natspub.ValidateSubject(prefix); err != nil {
		return nil, fmt.Errorf("shop: subject prefix: %w", err)
	}
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{prefix + ".>"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("shop: ensure stream %s: %w", name, err)
	}
	return s, nil
}
