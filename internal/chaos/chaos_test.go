package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// Relay settings for the run. On PostgreSQL and MariaDB ownership is a
// session lock, so a killed relay's partitions move when its connection
// closes; the lease only matters on lease dialects.
const (
	relayLease   = 3 * time.Second
	relayPublish = 2 * time.Second
	relayPoll    = time.Second
	relayBatch   = 100
)

// A broker or database outage lasts between minOutage and maxOutage.
const (
	minOutage = 500 * time.Millisecond
	maxOutage = 3 * time.Second
)

// outageLength draws an outage's length, in whole milliseconds.
func outageLength(rng *rand.Rand) time.Duration {
	return minOutage + time.Duration(rng.IntN(int((maxOutage-minOutage)/time.Millisecond)))*time.Millisecond
}

func TestChaos(t *testing.T) {
	s := sizeFromFlags()
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	if s.seed == 0 {
		s.seed = time.Now().UnixNano()
	}
	t.Run("postgres", func(t *testing.T) { runChaos(t, s, newJetStream, postgresTarget) })
	t.Run("mariadb", func(t *testing.T) { runChaos(t, s, newJetStream, mysqlTarget) })
}

// runChaos runs the harness once: open sets up the database (it skips when
// the database's variable is unset), brokerOf makes the broker the relays
// publish to.
func runChaos(t *testing.T, s size, brokerOf func(*testing.T) broker, open func(*testing.T) target) {
	tg := open(t) // skips when the database's variable is unset
	br := brokerOf(t)
	wakeURL := br.natsURL()
	if wakeURL == "" {
		// Not a NATS broker: an embedded server carries the wakes of
		// databases without LISTEN/NOTIFY; no fault touches it.
		wakeURL = testnats.Server(t).URL
	}
	notifier, err := tg.wake(testnats.Connect(t, wakeURL))
	if err != nil {
		t.Fatal(err)
	}

	if s.dbRestarts > 0 && tg.server == nil {
		t.Fatal("chaos: database restarts need a database server the run owns")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := tg.db.ExecContext(ctx, businessDDL); err != nil {
		t.Fatal(err)
	}
	tg.tenants = openTenants(ctx, t, tg, s, notifier)
	first := tg.tenants.all()[0] // the one table of a run without tenants
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(cancel)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = notifier.Run(ctx)
	}()
	rec := newRecorder()
	stopConsumer, err := br.consume(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopConsumer)

	led := newLedger()
	if s.backlog > 0 {
		commitBacklog(ctx, t, first.ob, tg.bind, led, s.backlog)
	}

	base := append([]string{"-nats", wakeURL}, br.relayArgs()...)
	base = append(base, "-poll", relayPoll.String(), "-lease", relayLease.String(), "-publish-timeout", relayPublish.String(),
		"-batch", strconv.Itoa(relayBatch),
		"-log-level", "info", "-log-format", "json")
	if s.rebalance > 0 {
		base = append(base, "-rebalance", s.rebalance.String())
	}
	base = append(base, tg.tenants.relayArgs(t, tg)...)
	relays := newFleet(t, s.relays, func(slot, gen int) []string {
		return append(append([]string(nil), base...), "-nats-name", fmt.Sprintf("jitchaos-relay-%d-%d", slot, gen),
			"-owner", owner(slot, gen))
	})
	nparts, err := first.d.Partitions(ctx, tg.db) // every tenant's count
	if err != nil {
		t.Fatal(err)
	}
	var kills []killRec
	var restarts []restartRec

	rng := rand.New(rand.NewPCG(uint64(s.seed), 0))
	start := time.Now()
	var pwg sync.WaitGroup
	prodDone := make(chan struct{})
	for i := range s.producers {
		p := newProducer(i, tg.tenants, tg.db, tg.bind, s, s.seed, led, start, tg.server != nil)
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			p.run(ctx)
		}()
	}
	go func() {
		pwg.Wait()
		close(prodDone)
	}()
	t.Cleanup(func() { cancel(); <-prodDone })

	// Fire the faults as the producers reach each one's point.
	sum := summary{name: t.Name(), seed: s.seed, broker: br.name()}
	for _, a := range schedule(s, rng) {
		waitProgress(led, a.at, prodDone, relays)
		relays.check()
		switch a.kind {
		case "kill":
			// The victim is a relay that owns partitions, when one does: a
			// relay that joined after a failover owns nothing until a
			// survivor's next rebalance (cmd/jitoutbox-relay: 30 s).
			slots := []int{ownerSlot(ctx, t, tg, relays, rng, -1)}
			if rng.IntN(4) == 0 { // sometimes every relay at once
				slots = relays.live()
			}
			pause(ctx, time.Duration(rng.IntN(300))*time.Millisecond)
			kills = append(kills, killSlots(ctx, t, tg, relays, slots, ""))
			pause(ctx, time.Duration(rng.IntN(1500))*time.Millisecond)
			relays.restartKilled(slots...)
		case "churn":
			// Partition churn: a relay leaves cleanly (its partitions are
			// released and taken by the others at once) and a new one
			// joins (it takes free partitions and waits for the others to
			// release their surplus).
			live := relays.live()
			slot := live[rng.IntN(len(live))]
			relays.leave(slot)
			pause(ctx, time.Duration(rng.IntN(1500))*time.Millisecond)
			relays.restartKilled(slot)
		case "join", "leave":
			kills = append(kills, membership(ctx, t, tg, relays, rng, a.kind, s))
		case "cut":
			// Right after a database restart the relays may not have
			// reconnected yet: wait (a bounded while) for connections to
			// cut.
			var n int
			for try := 0; ; try++ {
				var err error
				if n, err = tg.cutter.cut(ctx); err != nil {
					t.Fatal(err)
				}
				if n > 0 || try == 50 {
					break
				}
				pause(ctx, 200*time.Millisecond)
			}
			sum.cuts++
			sum.cutConns += n
		case "broker":
			what := br.outage(ctx, t, outageLength(rng), rng)
			sum.brokerRestarts++
			sum.outages = append(sum.outages, what)
		case "tenant":
			// A new tenant: the relays find its table by their pattern
			// within a rebalance interval, the producers write to it at
			// once.
			tg.tenants.createMidRun(ctx, t, tg)
		case "db":
			// Alternately a fast shutdown and a SIGKILL, then a start on
			// the same port and data; the relays must recover by
			// themselves.
			restarts = append(restarts, restartDB(ctx, t, tg, relays, len(restarts)%2 == 1, outageLength(rng)))
		}
	}
	<-prodDone
	sum.produceTime = time.Since(start)
	relays.check()

	// Transactions whose Commit failed: the business row decides.
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	sum.uncertainCommitted, sum.uncertainRolledBack, err = led.resolve(rctx, tg.db, tg.bind)
	rcancel()
	if err != nil {
		t.Fatal(err)
	}

	// Drain: the outbox has no pending row and the consumer has every
	// committed event, or the deadline passes.
	deadline := time.NewTimer(s.drain)
	defer deadline.Stop()
	drainStart := time.Now()
	for {
		relays.check()
		pending, dead, err := tg.tenants.stats(ctx, tg.db)
		if err != nil {
			t.Fatalf("outbox stats: %v", err)
		}
		missing, changed := rec.missing(led.committed)
		sum.pending, sum.dead = pending, dead
		if pending == 0 && missing == 0 {
			break
		}
		timedOut := false
		select {
		case <-changed:
		case <-time.After(250 * time.Millisecond):
		case <-deadline.C:
			timedOut = true
		}
		if timedOut {
			sum.drainTimedOut = true
			break
		}
	}
	sum.drainTime = time.Since(drainStart)

	for _, err := range relays.stop() {
		sum.stopErrors = append(sum.stopErrors, err.Error())
	}
	// The broker must hold exactly what the consumer saw, where it can
	// tell. Counted once every relay has stopped: a stopping relay finishes
	// its Publish in flight, and a late duplicate it sends (a relay that
	// had lost its partitions without knowing yet) must be in both counts.
	sum.streamMsgs, sum.streamCounted, sum.storedErr = waitStoredSeen(ctx, br, rec, 15*time.Second)
	sum.kills = relays.kills
	sum.leaves = relays.leaves
	sum.joins, sum.departures = relays.joins, relays.departures
	// A database restart ends every relay's ownership, as a cut does.
	maxFleet := s.relays
	if s.members > 0 {
		maxFleet += 2 // see membership
	}
	sum.maxDup = br.maxDuplicates(faults{kills: sum.kills, leaves: sum.leaves + sum.departures, cuts: sum.cuts + len(restarts),
		outages: sum.brokerRestarts, relays: maxFleet, batch: relayBatch, maxDown: maxOutage, publishTimeout: relayPublish})
	sum.stopErrors = append(sum.stopErrors, relays.leaveErrs...)
	sum.failOne, sum.failAll, sum.failChurn = failovers(kills, nparts, led, rec)
	sum.restarts = stalls(restarts, led, rec)
	sum.relayExits = relays.unexpected
	sum.exitDetails = relays.exits
	sum.relaysStarted = len(relays.all)
	sum.outageLogs = relays.logCount("broker outage")
	sum.durabilityWarns = relays.logCount("cannot guarantee at-least-once")
	sum.mustBeDurable = br.durable()
	sum.preflightFailed = relays.logCount("publisher preflight failed")
	sum.durabilityChecked = relays.logCount("stream durability checked")
	sum.dbErrorLogs = relays.logCount(`"level":"WARN"`)
	sum.logKinds = relays.warnKinds()
	for _, p := range relays.all {
		log := p.Log.String()
		if strings.Contains(log, tg.secret) {
			sum.secretLeaks++
		}
		sum.dataRaces += strings.Count(log, "WARNING: DATA RACE")
		sum.panics += strings.Count(log, "panic:")
	}
	if s.backlog > 0 {
		if sum.attemptRows, sum.attemptErrs, err = attemptRows(ctx, tg.db, first.d.Table()); err != nil {
			t.Fatalf("count rows with attempts: %v", err)
		}
	}
	sum.want = s
	sum.fill(led, rec)
	if s.tenants > 0 {
		sum.tenants = perTenant(tg.tenants.all(), led, rec)
	}
	sum.elapsed = time.Since(start)
	// Printed (not logged) so that the summary shows with -v and on failure.
	fmt.Println(sum.String())
	for _, f := range sum.failures() {
		t.Error(f)
	}
}

// waitStoredSeen waits (polling, with a deadline) until the consumer has
// seen as many distinct broker positions as the broker holds, and returns
// the broker's message count; ok is false when the broker cannot count;
// errText is the broker's last error when it did not answer by the deadline.
func waitStoredSeen(ctx context.Context, br broker, rec *recorder, limit time.Duration) (n uint64, ok bool, errText string) {
	deadline := time.Now().Add(limit)
	for {
		msgs, ok, err := br.stored(ctx)
		if err == nil {
			if !ok {
				return 0, false, ""
			}
			n = msgs
			rec.mu.Lock()
			seen := uint64(len(rec.positions))
			rec.mu.Unlock()
			if seen >= msgs {
				return msgs, true, ""
			}
		}
		if time.Now().After(deadline) {
			if err != nil {
				return n, true, err.Error()
			}
			return n, true, ""
		}
		pause(ctx, 100*time.Millisecond)
	}
}

// waitProgress waits until the producers have handed out at events (or
// finished), restarting relays that exited on their own meanwhile.
func waitProgress(led *ledger, at int64, prodDone <-chan struct{}, relays *fleet) {
	for led.reserved.Load() < at {
		relays.check()
		select {
		case <-prodDone:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
