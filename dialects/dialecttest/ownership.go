package dialecttest

import (
	"slices"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// ownership reads Inspector.Ownership at base+now and checks its shape:
// one entry per partition, in order.
func (e *env) ownership(now time.Duration) dialects.Ownership {
	e.t.Helper()
	o, err := e.d.Ownership(e.ctx, e.db, e.at(now))
	if err != nil {
		e.t.Fatalf("Ownership: %v", err)
	}
	if len(o.Partitions) != e.parts {
		e.t.Fatalf("Ownership: %d partitions, want %d", len(o.Partitions), e.parts)
	}
	for i, p := range o.Partitions {
		if p.Partition != i {
			e.t.Fatalf("Ownership: Partitions[%d] is partition %d", i, p.Partition)
		}
	}
	return o
}

func relayTokens(o dialects.Ownership) []string {
	out := make([]string, len(o.Relays))
	for i, r := range o.Relays {
		out[i] = r.Token
	}
	return out
}

// testOwnership: Inspector.Ownership names the live relays with their names
// and start times, each partition's owner, epoch and liveness; it agrees
// with a session's View, writes nothing, and sees a dead relay's
// partitions as free.
func testOwnership(t *testing.T, tgt Target) {
	e := setup(t, tgt)

	o := e.ownership(0)
	if len(o.Relays) != 0 {
		t.Fatalf("fresh table: relays %+v, want none", o.Relays)
	}
	for _, p := range o.Partitions {
		if p.Live || p.Owner != "" || p.Epoch != 0 || !p.TakenAt.IsZero() {
			t.Fatalf("fresh table: partition %+v, want free, never taken", p)
		}
	}
	wantParts(t, "fresh table: free", o.Free(), e.all()...)

	a := e.session("relay-a")
	b := e.session("relay-b")
	e.take(a, []int{0, 1}, 0)
	e.take(b, []int{2}, 0)
	o = e.ownership(0)
	if got, want := relayTokens(o), []string{a.Token(), b.Token()}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("relays %q, want %q", got, want)
	}
	names := map[string]string{}
	for i, r := range o.Relays {
		names[r.Token] = r.Name
		if d := time.Since(r.StartedAt); d < -time.Minute || d > time.Minute {
			t.Fatalf("relay %s started at %v, not within a minute of now", r.Token, r.StartedAt)
		}
		if i > 0 && r.StartedAt.Before(o.Relays[i-1].StartedAt) {
			t.Fatalf("relays not oldest first: %+v", o.Relays)
		}
	}
	if names[a.Token()] != "relay-a" || names[b.Token()] != "relay-b" {
		t.Fatalf("relay names %q, want relay-a and relay-b", names)
	}
	for _, p := range o.Partitions {
		want := ""
		switch p.Partition {
		case 0, 1:
			want = a.Token()
		case 2:
			want = b.Token()
		}
		if want == "" {
			if p.Live {
				t.Fatalf("untaken partition %d is live: %+v", p.Partition, p)
			}
			continue
		}
		if !p.Live || p.Owner != want || p.Epoch < 1 || p.TakenAt.IsZero() {
			t.Fatalf("partition %d: %+v, want live owner %q, epoch >= 1, a take time", p.Partition, p, want)
		}
	}
	wantParts(t, "owned by a", o.Owned(a.Token()), 0, 1)
	wantParts(t, "owned by b", o.Owned(b.Token()), 2)
	wantParts(t, "free", o.Free(), except(e.all(), 0, 1, 2)...)

	// It agrees with a session's View and changes nothing: the epochs stay,
	// and the owners still own their partitions.
	v := e.view(a, 0)
	for _, p := range e.ownership(0).Partitions {
		owner := ""
		if p.Live {
			owner = p.Owner
		}
		if owner != v.Owners[p.Partition] || p.Epoch != v.Epochs[p.Partition] {
			t.Fatalf("partition %d: Ownership %+v, View owner %q epoch %d", p.Partition, p, v.Owners[p.Partition], v.Epochs[p.Partition])
		}
	}
	wantParts(t, "a still owns", e.check(a, 0), 0, 1)
	wantParts(t, "b still owns", e.check(b, 0), 2)

	// A dead relay is gone from Relays; its partition is free, its last
	// owner still recorded.
	later := e.kill(b)
	if tgt.Leases {
		wantParts(t, "a renews", e.check(a, later), 0, 1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		o = e.ownership(later)
		if !slices.Contains(relayTokens(o), b.Token()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead relay is still listed 10s after it died: %+v", o.Relays)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := relayTokens(o); !slices.Equal(got, []string{a.Token()}) {
		t.Fatalf("relays after b died: %q, want only a", got)
	}
	if p := o.Partitions[2]; p.Live || p.Owner != b.Token() {
		t.Fatalf("partition of the dead relay: %+v, want not live, last owner %q", p, b.Token())
	}
	wantParts(t, "owned by a after b died", o.Owned(a.Token()), 0, 1)
	wantParts(t, "free after b died", o.Free(), except(e.all(), 0, 1)...)

	// A closed session releases everything.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	o = e.ownership(later)
	if len(o.Relays) != 0 {
		t.Fatalf("relays after every session ended: %+v", o.Relays)
	}
	wantParts(t, "free after every session ended", o.Free(), e.all()...)
}
