package notify

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func pending(c <-chan struct{}) int {
	n := 0
	for {
		select {
		case <-c:
			n++
		default:
			return n
		}
	}
}

func TestLocalCoalesces(t *testing.T) {
	l := NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := NewWakes(), NewWakes()
	if err := l.Listen(ctx, a); err != nil {
		t.Fatal(err)
	}
	_ = l.Listen(ctx, b)
	for i := 0; i < 100; i++ {
		l.Notify([]int{i % 3}) // never blocks although nobody reads
	}
	if got := pending(a.C()); got != 1 {
		t.Fatalf("listener a got %d wakes for a burst, want 1", got)
	}
	if got := pending(b.C()); got != 1 {
		t.Fatalf("listener b got %d wakes for a burst, want 1", got)
	}
	if parts, any := a.Take(); any || !slices.Equal(parts, []int{0, 1, 2}) {
		t.Fatalf("the burst's wakes = %v, any %v; want [0 1 2], not any", parts, any)
	}
	if parts, any := a.Take(); any || parts != nil {
		t.Fatalf("a second Take = %v, any %v; want nothing", parts, any)
	}
	l.Notify(nil)
	if got := pending(a.C()); got != 1 {
		t.Fatalf("after draining, want 1 new wake, got %d", got)
	}
	if _, any := a.Take(); !any {
		t.Fatal("Notify(nil) must wake any partition")
	}
}

func TestWakesMergeAndAny(t *testing.T) {
	w := NewWakes()
	w.Wake([]int{130, 5})
	w.Wake([]int{5, 64})
	if parts, any := w.Take(); any || !slices.Equal(parts, []int{5, 64, 130}) {
		t.Fatalf("Take = %v, any %v; want [5 64 130]", parts, any)
	}
	w.Wake([]int{7})
	w.Wake(nil)
	w.Wake([]int{9})
	if parts, any := w.Take(); !any || parts != nil {
		t.Fatalf("a wake for any partition among named ones: Take = %v, any %v; want any", parts, any)
	}
	if parts, any := w.Take(); any || parts != nil {
		t.Fatalf("Take after any = %v, any %v; want nothing (the named partitions cleared too)", parts, any)
	}
	for _, bad := range [][]int{{-1}, {maxWakePartition}} {
		w.Wake(bad)
		if _, any := w.Take(); !any {
			t.Fatalf("Wake(%v) must wake any partition, not grow the set", bad)
		}
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	for _, parts := range [][]int{{0}, {3, 17}, {4095, 1, 0}} {
		got := ParsePayload(AppendPayload(nil, parts))
		if !slices.Equal(got, parts) {
			t.Errorf("ParsePayload(AppendPayload(%v)) = %v", parts, got)
		}
	}
	if p := AppendPayload(nil, nil); len(p) != 0 {
		t.Errorf("AppendPayload(nil) = %q, want empty (any partition)", p)
	}
	many := make([]int, MaxPayloadPartitions+1)
	for i := range many {
		many[i] = i
	}
	if p := AppendPayload(nil, many); len(p) != 0 {
		t.Errorf("AppendPayload of %d partitions = %d bytes, want empty (any partition)", len(many), len(p))
	}
	if p := AppendPayload(nil, many[:MaxPayloadPartitions]); len(ParsePayload(p)) != MaxPayloadPartitions {
		t.Errorf("AppendPayload of %d partitions does not name them all", MaxPayloadPartitions)
	}
	for _, bad := range []string{"", ",", "1,", ",1", "1,,2", "x", "1;2", "-1", " 1", "99999999999999999999"} {
		if got := ParsePayload([]byte(bad)); got != nil {
			t.Errorf("ParsePayload(%q) = %v, want nil (any partition)", bad, got)
		}
	}
}

func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{"", "3,17", "0", "1,,2", "65535", "65536"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		parts := ParsePayload(payload)
		if parts == nil {
			return
		}
		// What parses names partitions a Wakes can hold or marks as any,
		// and prints back to a payload that parses the same.
		if got := ParsePayload(AppendPayload(nil, parts)); len(parts) <= MaxPayloadPartitions && !slices.Equal(got, parts) {
			t.Fatalf("%q: %v does not round-trip (%v)", payload, parts, got)
		}
		w := NewWakes()
		w.Wake(parts)
		got, any := w.Take()
		for _, p := range parts {
			if p >= maxWakePartition {
				if !any {
					t.Fatalf("%q: partition %d out of range must wake any", payload, p)
				}
				return
			}
		}
		if any || len(got) == 0 {
			t.Fatalf("%q: Take = %v, any %v after Wake(%v)", payload, got, any, parts)
		}
	})
}

func TestLocalLazyIsSeparate(t *testing.T) {
	l := NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urgent := NewWakes()
	_ = l.Listen(ctx, urgent)
	lazy, _ := l.ListenLazy(ctx)
	l.NotifyLazy()
	if pending(urgent.C()) != 0 || pending(lazy) != 1 {
		t.Fatal("NotifyLazy must wake lazy listeners only")
	}
	l.Notify(nil)
	if pending(urgent.C()) != 1 || pending(lazy) != 0 {
		t.Fatal("Notify must wake urgent listeners only")
	}
}

func TestLocalUnsubscribesOnCancel(t *testing.T) {
	l := NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWakes()
	_ = l.Listen(ctx, w)
	cancel()
	// AfterFunc runs asynchronously; wait for the subscription to go.
	for {
		l.mu.Lock()
		n := len(l.subs)
		l.mu.Unlock()
		if n == 0 {
			break
		}
	}
	l.Notify(nil)
	if pending(w.C()) != 0 {
		t.Fatal("a cancelled listener must not be woken")
	}
	if err := l.Listen(ctx, NewWakes()); err == nil {
		t.Fatal("Listen on a done context must fail")
	}
}

func TestMulti(t *testing.T) {
	a, b := NewLocal(), NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wa, wb := NewWakes(), NewWakes()
	_ = a.Listen(ctx, wa)
	_ = b.Listen(ctx, wb)
	m := Multi(a, nil, b)
	m.Notify([]int{4})
	for name, w := range map[string]*Wakes{"a": wa, "b": wb} {
		if parts, _ := w.Take(); pending(w.C()) != 1 || !slices.Equal(parts, []int{4}) {
			t.Fatalf("Multi must notify every notifier with the partitions: %s got %v", name, parts)
		}
	}
	la, _ := a.ListenLazy(ctx)
	m.(LazyNotifier).NotifyLazy()
	if pending(la) != 1 {
		t.Fatal("Multi.NotifyLazy must forward lazy wakes")
	}
}
