package notify

import (
	"context"
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
	a, err := l.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := l.Listen(ctx)
	for i := 0; i < 100; i++ {
		l.Notify() // never blocks although nobody reads
	}
	if got := pending(a); got != 1 {
		t.Fatalf("listener a got %d wakes for a burst, want 1", got)
	}
	if got := pending(b); got != 1 {
		t.Fatalf("listener b got %d wakes for a burst, want 1", got)
	}
	l.Notify()
	if got := pending(a); got != 1 {
		t.Fatalf("after draining, want 1 new wake, got %d", got)
	}
}

func TestLocalLazyIsSeparate(t *testing.T) {
	l := NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urgent, _ := l.Listen(ctx)
	lazy, _ := l.ListenLazy(ctx)
	l.NotifyLazy()
	if pending(urgent) != 0 || pending(lazy) != 1 {
		t.Fatal("NotifyLazy must wake lazy listeners only")
	}
	l.Notify()
	if pending(urgent) != 1 || pending(lazy) != 0 {
		t.Fatal("Notify must wake urgent listeners only")
	}
}

func TestLocalUnsubscribesOnCancel(t *testing.T) {
	l := NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := l.Listen(ctx)
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
	l.Notify()
	if pending(c) != 0 {
		t.Fatal("a cancelled listener must not be woken")
	}
	if _, err := l.Listen(ctx); err == nil {
		t.Fatal("Listen on a done context must fail")
	}
}

func TestMulti(t *testing.T) {
	a, b := NewLocal(), NewLocal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca, _ := a.Listen(ctx)
	cb, _ := b.Listen(ctx)
	m := Multi(a, nil, b)
	m.Notify()
	if pending(ca) != 1 || pending(cb) != 1 {
		t.Fatal("Multi must notify every notifier")
	}
	la, _ := a.ListenLazy(ctx)
	m.(LazyNotifier).NotifyLazy()
	if pending(la) != 1 {
		t.Fatal("Multi.NotifyLazy must forward lazy wakes")
	}
}
