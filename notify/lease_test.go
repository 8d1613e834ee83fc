package notify

import (
	"context"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func recs(seqs ...int64) []dialects.Record {
	out := make([]dialects.Record, len(seqs))
	for i, s := range seqs {
		out[i].Seq = s
	}
	return out
}

// TestLocalLeaseHandOver: LeaseFor says no until a relay serves leases; one
// relay at a time; handed-over rows come out oldest first with the earliest
// expiry; unregister returns what was not taken, after which rows are dropped
// and LeaseFor says no again.
func TestLocalLeaseHandOver(t *testing.T) {
	var l Local
	if _, _, ok := l.LeaseFor(); ok {
		t.Fatal("LeaseFor ok with no relay registered")
	}
	if _, ok := l.ServeLeases("", time.Second); ok {
		t.Error("ServeLeases accepted an empty owner")
	}
	unregister, ok := l.ServeLeases("relay-1", 30*time.Second)
	if !ok {
		t.Fatal("ServeLeases refused the first relay")
	}
	if _, ok := l.ServeLeases("relay-2", time.Second); ok {
		t.Error("a second relay was registered")
	}
	owner, lease, ok := l.LeaseFor()
	if !ok || owner != "relay-1" || lease != 30*time.Second {
		t.Fatalf("LeaseFor = %q %v %v", owner, lease, ok)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake, err := l.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	l.NotifyLeased(recs(1, 2), t0.Add(2*time.Second))
	l.NotifyLeased(recs(3), t0.Add(time.Second))
	l.NotifyLeased(recs(4), t0.Add(3*time.Second))
	if n := pending(wake); n != 1 {
		t.Errorf("%d wakes pending after three hand-overs, want 1 (coalesced)", n)
	}
	got, until := l.TakeLeased(3)
	if len(got) != 3 || got[0].Seq != 1 || got[2].Seq != 3 {
		t.Fatalf("TakeLeased(3) = %v", got)
	}
	if !until.Equal(t0.Add(time.Second)) {
		t.Errorf("until = %v, want the earliest expiry %v", until, t0.Add(time.Second))
	}
	l.NotifyLeased(recs(5), t0.Add(time.Second))
	rest := unregister()
	if len(rest) != 2 || rest[0].Seq != 4 || rest[1].Seq != 5 {
		t.Errorf("unregister returned %v, want seqs 4 and 5", rest)
	}
	if _, _, ok := l.LeaseFor(); ok {
		t.Error("LeaseFor ok after unregister")
	}
	l.NotifyLeased(recs(6), t0) // no relay: dropped (the lease expires)
	if got, _ := l.TakeLeased(10); len(got) != 0 {
		t.Errorf("rows kept with no relay: %v", got)
	}
	if _, ok := l.ServeLeases("relay-2", time.Second); !ok {
		t.Error("a relay could not register after the first unregistered")
	}
}

// TestLocalLeaseQueueBound: a full queue makes LeaseFor say no (commits then
// take the claim path); it never blocks NotifyLeased.
func TestLocalLeaseQueueBound(t *testing.T) {
	var l Local
	unregister, _ := l.ServeLeases("r", time.Second)
	defer unregister()
	until := time.Now().Add(time.Second)
	for i := range maxPendingLeased {
		if _, _, ok := l.LeaseFor(); !ok {
			t.Fatalf("LeaseFor refused at %d queued rows", i)
		}
		l.NotifyLeased(recs(int64(i)), until)
	}
	if _, _, ok := l.LeaseFor(); ok {
		t.Error("LeaseFor ok with a full queue")
	}
	l.TakeLeased(1)
	if _, _, ok := l.LeaseFor(); !ok {
		t.Error("LeaseFor still refuses after a row was taken")
	}
}

// TestMultiLeaser: Multi forwards the lease questions to its first Leaser
// and hands leased rows only to it.
func TestMultiLeaser(t *testing.T) {
	var l Local
	unregister, _ := l.ServeLeases("r", time.Second)
	defer unregister()
	other := &countNotifier{}
	m := Multi(other, &l).(Leaser)
	if owner, _, ok := m.LeaseFor(); !ok || owner != "r" {
		t.Fatalf("Multi.LeaseFor = %q %v", owner, ok)
	}
	m.NotifyLeased(recs(7), time.Now().Add(time.Second))
	if got, _ := l.TakeLeased(5); len(got) != 1 || got[0].Seq != 7 {
		t.Errorf("Local got %v", got)
	}
	if other.n != 0 {
		t.Errorf("the other notifier was woken %d times for leased rows", other.n)
	}
	if _, _, ok := Multi(other).(Leaser).LeaseFor(); ok {
		t.Error("Multi without a Leaser said ok")
	}
}

type countNotifier struct{ n int }

func (c *countNotifier) Notify() { c.n++ }
