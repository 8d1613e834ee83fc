package relay

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// Broker outages (outage.go). Run against every target:
//
//	go test -race -run 'Outage|Unavailable' ./relay/

// switchPublisher is a broker that is down (every message gets an
// unavailable error) until up is called. It counts the messages it was
// offered while down, by event id.
type switchPublisher struct {
	mu      sync.Mutex
	down    bool
	offered map[string]int
	rec     *recorder
}

func newSwitchPublisher() *switchPublisher {
	return &switchPublisher{down: true, offered: map[string]int{}, rec: newRecorder(nil)}
}

func (p *switchPublisher) Publish(ctx context.Context, batch []Message, errs []error) {
	p.mu.Lock()
	down := p.down
	if down {
		for _, m := range batch {
			p.offered[m.ID]++
		}
	}
	p.mu.Unlock()
	if !down {
		p.rec.Publish(ctx, batch, errs)
		return
	}
	for i := range errs {
		errs[i] = Unavailable(errors.New("nats: not connected"))
	}
}

func (p *switchPublisher) up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *switchPublisher) offers(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.offered[id]
}

// TestOutageOfOneEventAggregatesSpendsNoAttempts: one-event aggregates
// trickle in, one commit at a time, while the broker is unavailable, so
// that the first waves hold one message each. No attempt is spent (the
// attempts column stays 0), the outage is logged once when it starts and
// once when it ends, the hooks see it, and once the broker is back every
// event is published. (Before unavailability was classified, a lone
// message's failure counted an attempt.)
func TestOutageOfOneEventAggregatesSpendsNoAttempts(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		pub := newSwitchPublisher()
		hooks := &hookRecorder{}
		var logs syncBuffer
		cfg := testConfig("r1")
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		cfg.Hooks = hooks
		cfg.MaxAttempts = 2 // a counted attempt would soon dead-letter
		sig, _ := startWoken(t, e, pub, cfg)

		const n = 6
		var ids []string
		for i := range n {
			ev := e.events("one"+string(rune('a'+i)), 0, 1)
			e.insert(t, ev)
			sig.Notify(nil)
			ids = append(ids, ev[0].ID)
			waitFor(t, 10*time.Second, "the event offered while the broker is down", func() bool { return pub.offers(ev[0].ID) > 0 })
		}
		// Every event is probed again during the outage.
		waitFor(t, 10*time.Second, "every event probed twice", func() bool {
			for _, id := range ids {
				if pub.offers(id) < 2 {
					return false
				}
			}
			return true
		})
		if a := e.maxAttempts(t); a != 0 {
			t.Errorf("attempts spent during the outage: max attempts %d", a)
		}
		if st := e.stats(t); st.Dead != 0 || st.Pending != n {
			t.Errorf("during the outage: dead %d pending %d, want 0 and %d", st.Dead, st.Pending, n)
		}

		pub.up()
		waitFor(t, 10*time.Second, "every event published after the broker is back", func() bool { return e.stats(t).Pending == 0 })
		if got := pub.rec.published(); got != n {
			t.Errorf("published %d, want %d", got, n)
		}
		pub.rec.check(t)
		for _, m := range pub.rec.snapshot() {
			if m.Attempt != 1 {
				t.Errorf("event %s published as attempt %d, want 1", m.ID, m.Attempt)
			}
		}
		waitFor(t, 5*time.Second, "the end of the outage logged", func() bool {
			return strings.Contains(logs.String(), "broker recovered")
		})
		s := logs.String()
		if c := strings.Count(s, "broker outage;"); c != 1 {
			t.Errorf("outage start logged %d times, want once:\n%s", c, s)
		}
		if c := strings.Count(s, "broker recovered"); c != 1 {
			t.Errorf("outage end logged %d times, want once:\n%s", c, s)
		}
		if !strings.Contains(s, "level=WARN msg=\"jitoutbox relay: broker outage;") || !strings.Contains(s, "nats: not connected") {
			t.Errorf("outage start not a warning with its error:\n%s", s)
		}
		if !strings.Contains(s, "level=INFO msg=\"jitoutbox relay: broker recovered\"") || !strings.Contains(s, " outage=") || !strings.Contains(s, " probes=") {
			t.Errorf("outage end without its duration and probes:\n%s", s)
		}
		hooks.mu.Lock()
		outages := 0
		for _, end := range hooks.ends {
			if end.Outage {
				outages++
				if end.Retried != 0 || end.Dead != 0 || end.Published != 0 {
					t.Errorf("outage batch %+v: want nothing retried, dead or published", end)
				}
			}
		}
		hooks.mu.Unlock()
		if outages == 0 {
			t.Error("no BatchEnd reported the outage")
		}
	})
}

// TestUnavailableMessagesInAMixedWave: in a wave where the broker takes
// some messages, the ones it could not take (unavailable: their stream has
// no leader) stay pending without an attempt, while a message that failed
// for another reason counts its attempt. No outage is logged, and the
// unavailable events go once the broker takes them.
func TestUnavailableMessagesInAMixedWave(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		ok, unavail, bad := e.events("ok", 0, 1), e.events("unavail", 0, 1), e.events("bad", 0, 1)
		e.insert(t, append(append(ok, unavail...), bad...))
		var mu sync.Mutex
		leaderBack := false
		rec := newRecorder(func(m Message) error {
			mu.Lock()
			defer mu.Unlock()
			switch m.ID {
			case unavail[0].ID:
				if !leaderBack {
					return Unavailable(errors.New("nats: no response from stream"))
				}
			case bad[0].ID:
				return errors.New("broker: rejected for now")
			}
			return nil
		})
		var logs syncBuffer
		cfg := testConfig("r1")
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		cfg.Backoff = func(int) time.Duration { return time.Hour } // one attempt of "bad" in this test
		r := newRelay(t, e, rec, cfg)
		start(t, r)
		waitFor(t, 10*time.Second, "the healthy event published", func() bool { return rec.published() == 1 })
		waitFor(t, 10*time.Second, "the failed event's attempt recorded", func() bool { return e.maxAttempts(t) == 1 })
		var attempts int
		if err := e.db.QueryRow("SELECT attempts FROM "+e.d.Table()+" WHERE id = "+placeholder(e), unavail[0].ID).Scan(&attempts); err != nil {
			t.Fatal(err)
		}
		if attempts != 0 {
			t.Errorf("the unavailable event spent %d attempts, want 0", attempts)
		}
		mu.Lock()
		leaderBack = true
		mu.Unlock()
		waitFor(t, 10*time.Second, "the unavailable event published once the broker takes it", func() bool { return rec.published() == 2 })
		if s := logs.String(); strings.Contains(s, "broker outage;") {
			t.Errorf("a mixed wave logged an outage:\n%s", s)
		}
		rec.check(t)
	})
}

// placeholder returns the dialect's first bind parameter.
func placeholder(e env) string {
	if e.d.Name() == "postgres" {
		return "$1"
	}
	return "?"
}

// TestDeadLetterPublisherUnavailable: an event rejected for good while the
// dead-letter publisher is unavailable stays pending (not dead, no copy
// lost); once the dead-letter publisher is back it is dead-lettered with
// its copy.
func TestDeadLetterPublisherUnavailable(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e env) {
		ev := e.events("poison", 0, 1)
		e.insert(t, ev)
		rec := newRecorder(func(Message) error { return Permanent(errors.New("broker: rejected by schema")) })
		dl := newSwitchPublisher()
		var logs syncBuffer
		cfg := testConfig("r1")
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		cfg.DeadLetter = dl
		start(t, newRelay(t, e, rec, cfg))
		waitFor(t, 10*time.Second, "the dead letter offered twice", func() bool { return dl.offers(ev[0].ID) >= 2 })
		if st := e.stats(t); st.Dead != 0 || st.Pending != 1 {
			t.Errorf("while the dead-letter publisher is unavailable: dead %d pending %d, want 0 and 1", st.Dead, st.Pending)
		}
		dl.up()
		waitFor(t, 10*time.Second, "the event dead", func() bool { return e.stats(t).Dead == 1 })
		if got := dl.rec.snapshot(); len(got) != 1 || got[0].ID != ev[0].ID || got[0].Dead == nil {
			t.Errorf("dead letters %+v", got)
		}
		s := logs.String()
		if c := strings.Count(s, "dead-letter publisher unavailable"); c != 1 {
			t.Errorf("dead-letter unavailability logged %d times, want once:\n%s", c, s)
		}
		if strings.Contains(s, "dead-letter publish failed") {
			t.Errorf("an unavailable dead-letter publisher lost a copy:\n%s", s)
		}
	})
}

// TestOutageProbeInterval: the back-off between probes of an unavailable
// broker doubles from 100ms and stops at 1s (or PollInterval, if smaller),
// not at PollInterval.
func TestOutageProbeInterval(t *testing.T) {
	rn := &run{r: &Relay{cfg: Config{PollInterval: 30 * time.Second}}}
	var got []time.Duration
	for range 6 {
		rn.backOff()
		got = append(got, rn.trouble)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("probe back-offs %v, want %v", got, want)
		}
	}
	rn = &run{r: &Relay{cfg: Config{PollInterval: 300 * time.Millisecond}}}
	for range 5 {
		rn.backOff()
	}
	if rn.trouble != 300*time.Millisecond {
		t.Errorf("back-off %v with PollInterval 300ms, want 300ms", rn.trouble)
	}
}

// TestUnavailable: the sentinel, the wrapper and the interface.
func TestUnavailable(t *testing.T) {
	base := errors.New("dial tcp: connection refused")
	if Unavailable(nil) != nil || IsUnavailable(nil) || IsUnavailable(base) {
		t.Fatal("nil or a plain error reads as unavailable")
	}
	w := Unavailable(base)
	if !IsUnavailable(w) || !errors.Is(w, ErrUnavailable) || !errors.Is(w, base) || w.Error() != base.Error() {
		t.Fatalf("Unavailable(%v) = %v", base, w)
	}
	if IsPermanent(w) {
		t.Fatal("an unavailable error reads as permanent")
	}
	if !IsUnavailable(errors.Join(errors.New("x"), w)) {
		t.Fatal("a wrapped unavailable error is not unavailable")
	}
	if !IsUnavailable(unavailableBehaviour(true)) || IsUnavailable(unavailableBehaviour(false)) {
		t.Fatal("the Unavailable() bool interface is not honoured")
	}
}

type unavailableBehaviour bool

func (u unavailableBehaviour) Error() string     { return "broker restarting" }
func (u unavailableBehaviour) Unavailable() bool { return bool(u) }
