package notify_test

import (
	"context"
	"fmt"

	"github.com/jitoutbox/jitoutbox/notify"
)

// A Local signal is both sides of an in-process wake: the committing side
// notifies it, a listener waits on it. Wakes carry no data and coalesce: a
// burst wakes a busy listener once.
func ExampleLocal() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := notify.NewLocal()
	wakes, _ := sig.Listen(ctx)

	sig.Notify()
	sig.Notify()

	<-wakes
	fmt.Println("woken")
	select {
	case <-wakes:
		fmt.Println("woken twice")
	default:
		fmt.Println("the burst woke the listener once")
	}
	// Output:
	// woken
	// the burst woke the listener once
}

// Multi wakes a relay in this process and relays in others (here two local
// signals stand in for a notify.Local and a pgnotify.Notifier).
func ExampleMulti() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	local, remote := notify.NewLocal(), notify.NewLocal()
	a, _ := local.Listen(ctx)
	b, _ := remote.Listen(ctx)
	notify.Multi(local, remote).Notify()
	<-a
	<-b
	fmt.Println("both woken")
	// Output: both woken
}
