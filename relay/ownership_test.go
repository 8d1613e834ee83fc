package relay

import (
	"context"
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// waitSession is a session whose WaitChange returns err at once.
type waitSession struct {
	dialects.Session
	err error
}

func (s waitSession) WaitChange(context.Context, dialects.View) error { return s.err }

// TestWatcherEndsBeforeItTells checks that a watcher that saw a change has
// ended by the time its signal arrives: the rebalance the signal starts
// restarts the watch only if it finds the watcher ended, and a watcher
// that signals first and ends after left the relay unwatched (a departure
// then went unseen until the next unprompted rebalance).
func TestWatcherEndsBeforeItTells(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		sig  func(*owner) chan struct{}
	}{
		{"joined", dialects.ErrRelaysChanged, func(o *owner) chan struct{} { return o.changeSig }},
		{"left", nil, func(o *owner) chan struct{} { return o.watchSig }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 2000 {
				o := &owner{r: &Relay{cfg: Config{Logger: quietLogger()}}, sess: waitSession{err: tc.err},
					watchSig: make(chan struct{}, 1), changeSig: make(chan struct{}, 1)}
				o.watch(context.Background(), dialects.View{Relays: []string{"a/1", "b/1"}})
				<-tc.sig(o)
				select {
				case <-o.watchEnd:
				default:
					t.Fatalf("try %d: the watcher signalled before it ended", i)
				}
				o.wg.Wait()
			}
		})
	}
}
