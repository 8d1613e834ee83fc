package rabbitpub

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/relay"
)

// MaxNameLen is the longest exchange name, routing key, message id, type or
// header name AMQP 0-9-1 carries (a short string), in bytes.
const MaxNameLen = 255

// ErrInvalidRoute reports an exchange name or routing key AMQP cannot
// carry. Publishers wrap it with relay.Permanent.
var ErrInvalidRoute = errors.New("rabbitpub: invalid route")

// Route is where a message is published: an exchange and a routing key.
type Route struct {
	// Exchange is the exchange name; "" is the default exchange, which
	// delivers to the queue named by Key.
	Exchange string
	// Key is the routing key.
	Key string
}

// Router maps a message to its route. An error it returns is recorded for
// that message as is: wrap it with relay.Permanent when retrying cannot
// help. A route that [ValidateName] rejects is recorded as a permanent
// error.
type Router func(relay.Message) (Route, error)

// DefaultRouter returns the router that publishes every message on exchange
// with the routing key "<aggregate_type>.<event_type>".
//
// The aggregate type always takes exactly one word of the key: dots in it
// become '_'. Dots in the event type are kept as word separators, so
// aggregate "order" with event "order.paid" has the key "order.order.paid"
// and a topic binding "order.#" receives every order event. An empty type
// becomes "_". It fails only when the key would be longer than
// [MaxNameLen] bytes (a permanent error wrapping [ErrInvalidRoute]).
func DefaultRouter(exchange string) (Router, error) {
	if err := ValidateName(exchange); err != nil {
		return nil, fmt.Errorf("rabbitpub: exchange: %w", err)
	}
	return func(m relay.Message) (Route, error) {
		key := routingKey(m.AggregateType, m.EventType)
		if len(key) > MaxNameLen {
			return Route{}, relay.Permanent(fmt.Errorf("%w: routing key of %d bytes is longer than %d", ErrInvalidRoute, len(key), MaxNameLen))
		}
		return Route{Exchange: exchange, Key: key}, nil
	}, nil
}

// routingKey returns "<aggregate_type>.<event_type>" with the aggregate
// type's dots replaced by '_'.
func routingKey(aggregateType, eventType string) string {
	if aggregateType == "" {
		aggregateType = "_"
	}
	if eventType == "" {
		eventType = "_"
	}
	return strings.ReplaceAll(aggregateType, ".", "_") + "." + eventType
}

// ValidateName reports whether s can be sent as an AMQP short string (an
// exchange name or routing key): at most [MaxNameLen] bytes of valid UTF-8.
// Its errors wrap [ErrInvalidRoute].
func ValidateName(s string) error {
	switch {
	case len(s) > MaxNameLen:
		return fmt.Errorf("%w: %d bytes is longer than %d", ErrInvalidRoute, len(s), MaxNameLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidRoute)
	}
	return nil
}

// validateRoute checks a route a Router returned.
func validateRoute(r Route) error {
	if err := ValidateName(r.Exchange); err != nil {
		return relay.Permanent(fmt.Errorf("exchange: %w", err))
	}
	if err := ValidateName(r.Key); err != nil {
		return relay.Permanent(fmt.Errorf("routing key: %w", err))
	}
	return nil
}
