package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickstart runs the demo small: it fails unless every event of every
// committed order reaches the JetStream subscriber and nothing is left
// pending.
func TestQuickstart(t *testing.T) {
	if err := run(40, 200); err != nil {
		t.Fatal(err)
	}
}
