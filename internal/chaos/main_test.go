package chaos

import (
	"os"
	"testing"

	"github.com/jitoutbox/jitoutbox/internal/e2e/relayproc"
)

// relayBin is the relay binary, built once by TestMain before any test runs
// and never changed afterwards. Under -race the relays are built with -race
// too, so a data race in a relay process fails the run.
var relayBin string

func TestMain(m *testing.M) {
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	os.Exit(relayproc.RunTests(m, "chaos", &relayBin, flags...))
}
