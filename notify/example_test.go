package notify_test

import (
	"context"
	"fmt"

	"github.com/jitoutbox/jitoutbox/notify"
)

// A Local signal is both sides of an in-process wake: the committing side
// notifies it with the partitions of its time-critical rows, a listener
// waits on its Wakes. Wakes coalesce: a burst wakes a busy listener once,
// for the union of the partitions.
func ExampleLocal() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := notify.NewLocal()
	wakes := notify.NewWakes()
	_ = sig.Listen(ctx, wakes)

	sig.Notify([]int{7})
	sig.Notify([]int{3})

	<-wakes.C()
	parts, any := wakes.Take()
	fmt.Println("woken for", parts, "any:", any)
	select {
	case <-wakes.C():
		fmt.Println("woken twice")
	default:
		fmt.Println("the burst woke the listener once")
	}
	// Output:
	// woken for [3 7] any: false
	// the burst woke the listener once
}

// Multi wakes a relay in this process and relays in others (here two local
// signals stand in for a notify.Local and a pgnotify.Notifier).
func ExampleMulti() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	local, remote := notify.NewLocal(), notify.NewLocal()
	a, b := notify.NewWakes(), notify.NewWakes()
	_ = local.Listen(ctx, a)
	_ = remote.Listen(ctx, b)
	notify.Multi(local, remote).Notify(nil) // nil: any partition
	<-a.C()
	<-b.C()
	fmt.Println("both woken")
	// Output: both woken
}

// A payload names the partitions of a wake on the wire (a NOTIFY payload,
// a NATS message); an empty or unreadable one means any partition.
func ExampleParsePayload() {
	payload := notify.AppendPayload(nil, []int{3, 17})
	fmt.Printf("%s %v %v\n", payload, notify.ParsePayload(payload), notify.ParsePayload([]byte("")) == nil)
	// Output: 3,17 [3 17] true
}
