package relay

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var bigFlag = flag.Bool("relay.big", false, "run the many-relays test with 100,000 events")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
