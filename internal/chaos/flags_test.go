package chaos

import (
	"flag"
	"fmt"
	"time"
)

// Size knobs. Each scenario has a bounded size (the CI run; the defaults
// shown are TestChaos's) and a long one (-chaos.long); a flag set
// explicitly wins over both.
var (
	flagEvents     = flag.Int("chaos.events", bounded().events, "events to register per database (about 10% are in transactions rolled back on purpose)")
	flagDuration   = flag.Duration("chaos.duration", bounded().duration, "spread the commits over at least this long (0: as fast as possible)")
	flagKills      = flag.Int("chaos.kills", bounded().kills, "relay SIGKILLs per database")
	flagChurns     = flag.Int("chaos.churns", bounded().churns, "relays that leave cleanly (SIGTERM) and are replaced, per database")
	flagCuts       = flag.Int("chaos.cuts", bounded().cuts, "cuts of every relay database connection per database")
	flagRestarts   = flag.Int("chaos.broker-restarts", bounded().restarts, "broker outages per database (NATS: a server stopped and started; a cluster: a node killed and restarted; RabbitMQ, Kafka: the TCP proxy in front cut, refused or stalled)")
	flagDBRestarts = flag.Int("chaos.db-restarts", 0, "database restarts per database, alternately a fast shutdown and a SIGKILL (only the scenarios that own their database server; TestChaosDBRestart: 4 bounded, 12 long)")
	flagMembers    = flag.Int("chaos.members", 0, "relays that join, or leave without replacement, each while another relay is SIGKILLed (TestChaosPartitionChurn: 6 bounded, 24 long)")
	flagTenants    = flag.Int("chaos.tenants", 0, "tenants at the start: outbox tables <prefix>_NNN.outbox served by the relays through -config and a pattern (TestChaosTenants: 20 bounded, 50 long; 0: one outbox table)")
	flagRelays     = flag.Int("chaos.relays", bounded().relays, "relay processes")
	flagProducers  = flag.Int("chaos.producers", bounded().producers, "producer goroutines")
	flagAggregates = flag.Int("chaos.aggregates", bounded().aggregates, "aggregates")
	flagDrain      = flag.Duration("chaos.drain", bounded().drain, "deadline for the outbox to drain and the consumer to catch up after the producers stop")
	flagSeed       = flag.Int64("chaos.seed", 0, "random seed (0: from the clock; the seed is printed)")
	flagLong       = flag.Bool("chaos.long", false, "long runs: TestChaos 225,000 events (over 200,000 committed), 24 kills, 12 churns, 12 cuts, 3 broker restarts per database; every other scenario its own long size")
)

// size is one run's dimensions.
type size struct {
	events, kills, churns, cuts, restarts int
	dbRestarts                            int
	// members: relays that join or leave for good, each while another
	// relay is SIGKILLed.
	members int
	// backlog: events of one aggregate committed before the relays start
	// (TestChaosBacklog).
	backlog int
	// tenants: outbox tables at the start, each the table outbox of a
	// tenant's schema or database, served through -config (0: the run's
	// one table); newTenants: tenants created mid-run (TestChaosTenants).
	tenants, newTenants int
	// rebalance is the relays' -rebalance (0: the relay's default).
	rebalance                     time.Duration
	relays, producers, aggregates int
	duration, drain               time.Duration
	seed                          int64
}

// bounded is TestChaos's default run, the size of every flag's default.
func bounded() size {
	return size{events: 8000, kills: 5, churns: 3, cuts: 4, restarts: 1,
		relays: 3, producers: 4, aggregates: 500, duration: 40 * time.Second, drain: 3 * time.Minute}
}

// long is TestChaos's -chaos.long run.
func long() size {
	s := bounded()
	s.events = 225_000 // about 10% are rolled back: over 200,000 committed
	s.kills, s.churns, s.cuts, s.restarts = 24, 12, 12, 3
	s.duration, s.drain = 6*time.Minute, 5*time.Minute
	return s
}

// sizeFromFlags returns TestChaos's size; flags set explicitly win over
// -chaos.long.
func sizeFromFlags() size { return sizeFor(bounded(), long()) }

// sizeFor returns a run's size: b (the bounded run), or l with
// -chaos.long, with every flag set explicitly winning over both.
func sizeFor(b, l size) size {
	s := b
	if *flagLong {
		s = l
	}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "chaos.events":
			s.events = *flagEvents
		case "chaos.duration":
			s.duration = *flagDuration
		case "chaos.kills":
			s.kills = *flagKills
		case "chaos.churns":
			s.churns = *flagChurns
		case "chaos.cuts":
			s.cuts = *flagCuts
		case "chaos.broker-restarts":
			s.restarts = *flagRestarts
		case "chaos.db-restarts":
			s.dbRestarts = *flagDBRestarts
		case "chaos.members":
			s.members = *flagMembers
		case "chaos.tenants":
			s.tenants = *flagTenants
			if s.tenants == 0 {
				s.newTenants = 0
			}
		case "chaos.relays":
			s.relays = *flagRelays
		case "chaos.producers":
			s.producers = *flagProducers
		case "chaos.aggregates":
			s.aggregates = *flagAggregates
		case "chaos.drain":
			s.drain = *flagDrain
		}
	})
	s.seed = *flagSeed
	return s
}

func (s size) validate() error {
	if s.events <= 0 || s.relays <= 0 || s.producers <= 0 || s.aggregates < s.producers ||
		s.kills < 0 || s.churns < 0 || s.cuts < 0 || s.restarts < 0 || s.dbRestarts < 0 || s.members < 0 || s.backlog < 0 ||
		s.tenants < 0 || s.newTenants < 0 || (s.newTenants > 0 && s.tenants == 0) || s.rebalance < 0 || s.duration < 0 || s.drain <= 0 {
		return fmt.Errorf("chaos: bad size %+v: events, relays, producers and drain must be positive, aggregates >= producers, counts not negative, new tenants only with tenants", s)
	}
	return nil
}
