package kafkapub_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
)

func TestDefaultRouter(t *testing.T) {
	r, err := kafkapub.DefaultRouter("outbox")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ agg, want string }{
		{"order", "outbox.order"},
		{"Order", "outbox.Order"},
		{"billing.invoice", "outbox.billing.invoice"},
		{"", "outbox._"},
		{"a b/c", "outbox.a_b_c"},
		{"ordre-créé", "outbox.ordre-cr__"},
	}
	for _, c := range cases {
		got, err := r(relay.Message{AggregateType: c.agg, EventType: "ignored"})
		if err != nil || got != c.want {
			t.Errorf("route(%q) = %q, %v; want %q", c.agg, got, err, c.want)
		}
	}
	_, err = r(relay.Message{AggregateType: strings.Repeat("x", kafkapub.MaxTopicLen)})
	if !relay.IsPermanent(err) || !errors.Is(err, kafkapub.ErrInvalidTopic) {
		t.Errorf("too long topic: err = %v, want permanent ErrInvalidTopic", err)
	}
	for _, bad := range []string{"", ".", "..", "a b", "a/b", strings.Repeat("p", 201)} {
		if _, err := kafkapub.DefaultRouter(bad); !errors.Is(err, kafkapub.ErrInvalidTopic) {
			t.Errorf("DefaultRouter(%q) err = %v, want ErrInvalidTopic", bad, err)
		}
	}
}

func TestValidateTopic(t *testing.T) {
	for _, ok := range []string{"a", "outbox.event.order", "A-b_c.9", "...", strings.Repeat("a", kafkapub.MaxTopicLen)} {
		if err := kafkapub.ValidateTopic(ok); err != nil {
			t.Errorf("ValidateTopic(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a b", "a*", "ü", "a\x00", strings.Repeat("a", kafkapub.MaxTopicLen+1)} {
		if err := kafkapub.ValidateTopic(bad); !errors.Is(err, kafkapub.ErrInvalidTopic) {
			t.Errorf("ValidateTopic(%q) = %v, want ErrInvalidTopic", bad, err)
		}
	}
}

func TestOptionsFailFast(t *testing.T) {
	r, _ := kafkapub.DefaultRouter("x")
	bad := [][]kafkapub.Option{
		{kafkapub.WithRouter(nil)},
		{kafkapub.WithTopicPrefix("a b")},
		{kafkapub.WithTopicPrefix("")},
		{kafkapub.WithAckTimeout(0)},
		{kafkapub.WithClientOptions(nil)},
		{kafkapub.WithRouter(r), kafkapub.WithTopicPrefix("y")},
	}
	seeds := []string{"127.0.0.1:1"}
	cl := newClient(t, seeds)
	for i, opts := range bad {
		if _, err := kafkapub.New(cl, opts...); !errors.Is(err, kafkapub.ErrInvalidOption) {
			t.Errorf("New case %d: err = %v, want ErrInvalidOption", i, err)
		}
		if _, err := kafkapub.Open(seeds, opts...); !errors.Is(err, kafkapub.ErrInvalidOption) {
			t.Errorf("Open case %d: err = %v, want ErrInvalidOption", i, err)
		}
	}
	if _, err := kafkapub.New(nil); !errors.Is(err, kafkapub.ErrInvalidOption) {
		t.Errorf("New(nil): err = %v", err)
	}
	if _, err := kafkapub.Open(nil); !errors.Is(err, kafkapub.ErrInvalidOption) {
		t.Errorf("Open(nil): err = %v", err)
	}
	if _, err := kafkapub.New(cl, kafkapub.WithClientOptions(kgo.ClientID("x"))); !errors.Is(err, kafkapub.ErrInvalidOption) {
		t.Errorf("New with WithClientOptions: err = %v", err)
	}
	// Clients that break the delivery promises.
	unsafe := [][]kgo.Opt{
		{kgo.DisableIdempotentWrite()},
		{kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck())},
		{kgo.TransactionalID("tx")},
	}
	for i, kopts := range unsafe {
		if _, err := kafkapub.New(newClient(t, seeds, kopts...)); !errors.Is(err, kafkapub.ErrInvalidOption) {
			t.Errorf("New unsafe client %d: err = %v, want ErrInvalidOption", i, err)
		}
		if _, err := kafkapub.Open(seeds, kafkapub.WithClientOptions(kopts...)); !errors.Is(err, kafkapub.ErrInvalidOption) {
			t.Errorf("Open unsafe client %d: err = %v, want ErrInvalidOption", i, err)
		}
	}
	// Open forces acks=all even when the options ask for less.
	pub, err := kafkapub.Open(seeds, kafkapub.WithClientOptions(kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck())))
	if err == nil {
		pub.Close()
		t.Error("Open accepted a non-idempotent client")
	}
	pub, err = kafkapub.Open(seeds, kafkapub.Debezium(), kafkapub.WithClientOptions(kgo.ClientID("ok")))
	if err != nil {
		t.Fatal(err)
	}
	pub.Close()
}
