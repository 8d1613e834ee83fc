package e2e

import (
	"os"
	"testing"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
)

// relayBin is the relay binary, built once by TestMain before any test runs
// and never changed afterwards.
var relayBin string

func TestMain(m *testing.M) {
	os.Exit(relayproc.RunTests(m, "e2e", &relayBin))
}
