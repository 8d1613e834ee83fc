package main

import (
	"bytes"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickstart runs the demo small: it fails unless every event of every
// committed order reaches the JetStream subscriber and nothing is left
// pending.
//
// Its first screen carries no alarm: the embedded server fsyncs every write
// and the publisher declares it, so the relay's durability check (which
// still warns about a single server that does not, see relay/natspub's
// tests) finds nothing, and nothing is logged at WARN or above.
func TestQuickstart(t *testing.T) {
	var logs syncBuffer
	if err := run(40, 200, &logs); err != nil {
		t.Fatal(err)
	}
	if s := logs.String(); s != "" {
		t.Fatalf("the quickstart logged:\n%s", s)
	}
}

// syncBuffer is a bytes.Buffer safe for the relay's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
