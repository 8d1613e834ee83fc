package broker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/relay/internal/priority"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Error classes as the relay defines them: a permanent error wins.
var (
	errUnavailable = errors.New("unavailable")
	errPermanent   = errors.New("permanent")
)

func unavailable(err error) bool {
	return errors.Is(err, errUnavailable) && !errors.Is(err, errPermanent)
}
func permanent(err error) bool { return errors.Is(err, errPermanent) }

// fake is a broker: answer gives each message's outcome; it records the
// calls' sizes.
type fake struct {
	mu     sync.Mutex
	answer func(m int) error
	calls  []int
}

func (f *fake) publish(_ context.Context, msgs []int, errs []error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, len(msgs))
	for i, m := range msgs {
		errs[i] = f.answer(m)
	}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

func newStage(f *fake, logs *logBuf, clock func() time.Time) *Stage[int] {
	return New(Config[int]{Publish: f.publish, Gate: &priority.Gate{}, Clock: clock, PublishTimeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Owner: "r1", Unavailable: unavailable, Permanent: permanent})
}

func wave(n int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = i
	}
	return w
}

// TestIsOutage pins which waves whose every message failed are outages.
func TestIsOutage(t *testing.T) {
	un := errUnavailable
	timeout := context.DeadlineExceeded
	plain := errors.New("rejected")
	perm := errPermanent
	cases := []struct {
		name   string
		errs   []error
		acked  bool // the broker acknowledged something just now
		outage bool
	}{
		{"lone unavailable", []error{un}, true, true},
		{"unavailable wave", []error{un, un}, true, true},
		{"unavailable and plain", []error{un, plain}, false, false},
		{"unavailable and permanent", []error{un, perm}, false, false},
		{"lone plain", []error{plain}, false, false},
		{"plain wave", []error{plain, plain}, false, false},
		{"lone unclassified timeout, no ack lately", []error{timeout}, false, true},
		{"lone unclassified timeout while the broker acks", []error{timeout}, true, false},
		{"unclassified timeouts", []error{timeout, timeout}, true, true},
		{"permanent and unavailable at once", []error{errors.Join(un, perm)}, false, false},
	}
	for _, c := range cases {
		s := newStage(&fake{}, &logBuf{}, time.Now)
		if c.acked {
			s.lastAck = time.Now()
		}
		if got := s.isOutage(c.errs); got != c.outage {
			t.Errorf("%s: isOutage %v, want %v", c.name, got, c.outage)
		}
	}
}

// TestOutageStartsAndEndsOnce: waves that find the broker unavailable are
// one outage, logged once and counted as probes; the first wave the broker
// answers ends it, logged once; a stop is never an outage.
func TestOutageStartsAndEndsOnce(t *testing.T) {
	down := true
	f := &fake{answer: func(int) error {
		if down {
			return errUnavailable
		}
		return nil
	}}
	logs := &logBuf{}
	s := newStage(f, logs, time.Now)
	ctx := context.Background()
	for i := range 3 {
		errs := make([]error, 1)
		if a := s.Wave(ctx, ctx, wave(1), errs, i%2 == 0); !a.Outage || a.Stopping {
			t.Fatalf("wave %d against a down broker: %+v, want an outage", i, a)
		}
	}
	if !s.InOutage() || s.probes != 3 {
		t.Fatalf("in outage %v after %d probes; want true after 3", s.InOutage(), s.probes)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if a := s.Wave(stopped, ctx, wave(2), make([]error, 2), false); a.Outage || !a.Stopping {
		t.Fatalf("a wave when the relay stops: %+v, want stopping and no outage", a)
	}
	down = false
	if a := s.Wave(ctx, ctx, wave(2), make([]error, 2), false); a.Outage {
		t.Fatalf("the broker is back: %+v", a)
	}
	if s.InOutage() {
		t.Fatal("the outage did not end when the broker answered")
	}
	if n := logs.count("broker outage"); n != 1 {
		t.Errorf("outage logged %d times, want once", n)
	}
	if n := logs.count("broker recovered"); n != 1 {
		t.Errorf("recovery logged %d times, want once", n)
	}
}

// TestBulkWaveStopsAtAnUnavailableChunk: while time-critical publishes are
// recent, a bulk wave goes in chunks; a chunk refused whole as unavailable
// ends the wave, whose other messages get its error unsent, and the wave
// is an outage. A critical wave goes whole.
func TestBulkWaveStopsAtAnUnavailableChunk(t *testing.T) {
	f := &fake{answer: func(int) error { return errUnavailable }}
	s := newStage(f, &logBuf{}, time.Now)
	ctx := context.Background()
	s.cfg.Gate.Critical(time.Now())
	errs := make([]error, 100)
	if a := s.Wave(ctx, ctx, wave(100), errs, false); !a.Outage {
		t.Fatalf("a bulk wave against a down broker: %+v, want an outage", a)
	}
	if len(f.calls) != 1 || f.calls[0] != priority.MinChunk {
		t.Fatalf("calls %v; want one chunk of %d", f.calls, priority.MinChunk)
	}
	for i, err := range errs {
		if !errors.Is(err, errUnavailable) {
			t.Fatalf("errs[%d] = %v, want the chunk's error", i, err)
		}
	}
	f.calls = nil
	if s.Wave(ctx, ctx, wave(100), make([]error, 100), true); len(f.calls) != 1 || f.calls[0] != 100 {
		t.Fatalf("a critical wave went in calls %v; want one of 100", f.calls)
	}
}

// TestBulkWaveGoesOnPastAnsweredChunks: chunks the broker answers (some
// messages refused for reasons of their own) do not stop the wave.
func TestBulkWaveGoesOnPastAnsweredChunks(t *testing.T) {
	rejected := errors.New("rejected")
	f := &fake{answer: func(m int) error {
		if m%3 == 0 {
			return rejected
		}
		return nil
	}}
	s := newStage(f, &logBuf{}, time.Now)
	ctx := context.Background()
	s.cfg.Gate.Critical(time.Now())
	errs := make([]error, 50)
	if a := s.Wave(ctx, ctx, wave(50), errs, false); a.Outage {
		t.Fatalf("%+v: an answered wave read as an outage", a)
	}
	sent := 0
	for _, n := range f.calls {
		sent += n
	}
	if sent != 50 || len(f.calls) < 2 {
		t.Fatalf("calls %v; want the whole wave sent in chunks", f.calls)
	}
	for i, err := range errs {
		if (i%3 == 0) != (err != nil) {
			t.Fatalf("errs[%d] = %v", i, err)
		}
	}
}

// TestDeadLetterUnavailableLoggedOnce: the dead-letter destination's
// unavailability is logged when it starts and when it ends, once each.
func TestDeadLetterUnavailableLoggedOnce(t *testing.T) {
	logs := &logBuf{}
	s := newStage(&fake{}, logs, time.Now)
	ctx := context.Background()
	s.DeadLetter(ctx, nil)
	for range 3 {
		s.DeadLetter(ctx, errUnavailable)
	}
	s.DeadLetter(ctx, nil)
	s.DeadLetter(ctx, nil)
	if n := logs.count("dead-letter publisher unavailable"); n != 1 {
		t.Errorf("unavailability logged %d times, want once", n)
	}
	if n := logs.count("dead-letter publisher available again"); n != 1 {
		t.Errorf("return logged %d times, want once", n)
	}
}
