package notify_test

import (
	"context"
	"fmt"

	"github.com/jitoutbox/jitoutbox/notify"
)

// A Local signal is both sides of an in-process wake: txoutbox notifies it
// after a time-critical commit (passing the event ids), a relay listens to
// it. Wakes coalesce: a burst wakes a busy listener once.
func ExampleLocal() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := notify.NewLocal()
	wakes, _ := sig.Listen(ctx)

	sig.NotifyEvents([]string{"0190a6c2-0000-7000-8000-000000000001"})
	sig.NotifyEvents([]string{"0190a6c2-0000-7000-8000-000000000002"})

	<-wakes
	fmt.Println("woken; ids to claim:", len(sig.TakeIDs(500)))
	select {
	case <-wakes:
		fmt.Println("woken twice")
	default:
		fmt.Println("the burst woke the listener once")
	}
	// Output:
	// woken; ids to claim: 2
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
