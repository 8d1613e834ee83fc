package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestErrorClassification: what franz-go and the brokers report maps to
// unavailable (the cluster cannot take records now: no attempt spent),
// permanent (dead at once) or plainly retryable.
func TestErrorClassification(t *testing.T) {
	type class int
	const (
		retryable class = iota
		unavailable
		permanent
	)
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name       string
		err        error
		autoCreate bool
		want       class
	}{
		{"ack timeout", fmt.Errorf("%w after 1s", ErrAckTimeout), false, unavailable},
		{"relay's deadline", context.DeadlineExceeded, false, unavailable},
		{"record timeout", kgo.ErrRecordTimeout, false, unavailable},
		{"retries exhausted", kgo.ErrRecordRetries, false, unavailable},
		{"client closed", kgo.ErrClientClosed, false, unavailable},
		{"broker not available", kerr.BrokerNotAvailable, false, unavailable},
		{"leader not available", kerr.LeaderNotAvailable, false, unavailable},
		{"not leader", kerr.NotLeaderForPartition, false, unavailable},
		{"request timed out", kerr.RequestTimedOut, false, unavailable},
		{"network exception", kerr.NetworkException, false, unavailable},
		{"not enough replicas", kerr.NotEnoughReplicas, false, unavailable},
		{"storage error", kerr.KafkaStorageError, false, unavailable},
		{"unknown topic id", kerr.UnknownTopicID, false, unavailable},
		{"dial refused", dial, false, unavailable},
		{"connection reset", syscall.ECONNRESET, false, unavailable},
		{"connection closed", io.EOF, false, unavailable},
		{"too large", kerr.MessageTooLarge, false, permanent},
		{"invalid record", kerr.InvalidRecord, false, permanent},
		{"not authorized", kerr.TopicAuthorizationFailed, false, permanent},
		{"invalid topic", ErrInvalidTopic, false, permanent},
		{"missing topic", kerr.UnknownTopicOrPartition, false, permanent},
		{"missing topic, auto-created", kerr.UnknownTopicOrPartition, true, retryable},
		{"cancelled", context.Canceled, false, retryable},
		{"plain", errors.New("something else"), false, retryable},
	}
	m := &relay.Message{ID: "e1"}
	for _, c := range cases {
		p := &Publisher{autoCreate: c.autoCreate}
		err := p.produceError(m, "outbox.order", c.err)
		got := retryable
		if relay.IsUnavailable(err) {
			got = unavailable
		}
		if relay.IsPermanent(err) {
			if got == unavailable {
				t.Errorf("%s: %v is both unavailable and permanent", c.name, err)
			}
			got = permanent
		}
		if got != c.want {
			t.Errorf("%s: %v classified %d, want %d (0 retryable, 1 unavailable, 2 permanent)", c.name, err, got, c.want)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v does not wrap its cause", c.name, err)
		}
	}
}

// TestOpenMetadataMinAge: a client Open builds reloads its metadata soon
// after a broker outage (OutageMetadataMinAge), unless the caller says
// otherwise.
// TestOpenRetryBackoff: Open caps the client's retry back-off at
// OutageRetryBackoffMax, so that after a long outage the client retries as
// soon as the relay probes.
func TestOpenRetryBackoff(t *testing.T) {
	p, err := Open([]string{"127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := p.cl.OptValue(kgo.RetryBackoffFn).(func(int) time.Duration)
	p.Close()
	if fn == nil {
		t.Fatal("no RetryBackoffFn")
	}
	for fails := 1; fails <= 30; fails++ {
		if d := fn(fails); d <= 0 || d > OutageRetryBackoffMax*6/5 {
			t.Errorf("back-off after %d failures: %v, want (0, %v]", fails, d, OutageRetryBackoffMax*6/5)
		}
	}
	if d := fn(1); d > 300*time.Millisecond {
		t.Errorf("first back-off %v, want about 250ms", d)
	}
}

func TestOpenMetadataMinAge(t *testing.T) {
	for _, c := range []struct {
		opts []kgo.Opt
		want time.Duration
	}{
		{nil, OutageMetadataMinAge},
		{[]kgo.Opt{kgo.MetadataMinAge(2 * time.Second)}, 2 * time.Second},
	} {
		p, err := Open([]string{"127.0.0.1:1"}, WithClientOptions(c.opts...))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := p.cl.OptValue(kgo.MetadataMinAge).(time.Duration)
		p.Close()
		if got != c.want {
			t.Errorf("MetadataMinAge %v, want %v", got, c.want)
		}
	}
}
