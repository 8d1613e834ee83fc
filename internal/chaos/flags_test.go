package chaos

import (
	"flag"
	"fmt"
	"time"
)

// Size knobs. The defaults are the bounded CI run; -chaos.long raises every
// knob left at its default to the long run's size.
var (
	flagEvents     = flag.Int("chaos.events", 8000, "events to register per database (about 10% are in transactions rolled back on purpose)")
	flagDuration   = flag.Duration("chaos.duration", 40*time.Second, "spread the commits over at least this long (0: as fast as possible)")
	flagKills      = flag.Int("chaos.kills", 5, "relay SIGKILLs per database")
	flagChurns     = flag.Int("chaos.churns", 3, "relays that leave cleanly (SIGTERM) and are replaced, per database")
	flagCuts       = flag.Int("chaos.cuts", 4, "cuts of every relay database connection per database")
	flagRestarts   = flag.Int("chaos.broker-restarts", 1, "broker outages per database (a NATS server stopped and started; for other brokers see their doc)")
	flagRelays     = flag.Int("chaos.relays", 3, "relay processes")
	flagProducers  = flag.Int("chaos.producers", 4, "producer goroutines")
	flagAggregates = flag.Int("chaos.aggregates", 500, "aggregates")
	flagDrain      = flag.Duration("chaos.drain", 3*time.Minute, "deadline for the outbox to drain and the consumer to catch up after the producers stop")
	flagSeed       = flag.Int64("chaos.seed", 0, "random seed (0: from the clock; the seed is printed)")
	flagLong       = flag.Bool("chaos.long", false, "long run: 225,000 events (over 200,000 committed), 24 kills, 12 churns, 12 cuts, 3 broker restarts per database")
)

// size is one run's dimensions.
type size struct {
	events, kills, churns, cuts, restarts int
	relays, producers, aggregates         int
	duration, drain                       time.Duration
	seed                                  int64
}

// sizeFromFlags returns the run's size; flags set explicitly win over
// -chaos.long.
func sizeFromFlags() size {
	s := size{
		events: *flagEvents, kills: *flagKills, churns: *flagChurns, cuts: *flagCuts, restarts: *flagRestarts,
		relays: *flagRelays, producers: *flagProducers, aggregates: *flagAggregates,
		duration: *flagDuration, drain: *flagDrain, seed: *flagSeed,
	}
	if !*flagLong {
		return s
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["chaos.events"] {
		s.events = 225_000 // about 10% are rolled back: over 200,000 committed
	}
	if !set["chaos.kills"] {
		s.kills = 24
	}
	if !set["chaos.churns"] {
		s.churns = 12
	}
	if !set["chaos.cuts"] {
		s.cuts = 12
	}
	if !set["chaos.broker-restarts"] {
		s.restarts = 3
	}
	if !set["chaos.duration"] {
		s.duration = 6 * time.Minute
	}
	if !set["chaos.drain"] {
		s.drain = 5 * time.Minute
	}
	return s
}

func (s size) validate() error {
	if s.events <= 0 || s.relays <= 0 || s.producers <= 0 || s.aggregates < s.producers ||
		s.kills < 0 || s.churns < 0 || s.cuts < 0 || s.restarts < 0 || s.duration < 0 || s.drain <= 0 {
		return fmt.Errorf("chaos: bad size %+v: events, relays, producers and drain must be positive, aggregates >= producers, counts not negative", s)
	}
	return nil
}
