package retries

import (
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSchedule pins the rule that lost a retry before: a failure
// scheduled after an earlier pending retry must still get its own cycle.
func TestSchedule(t *testing.T) {
	base := time.Unix(1_000, 0)
	var s Schedule
	if _, ok := s.Next(base); ok {
		t.Fatal("empty schedule has a next time")
	}
	s.Add(base.Add(time.Second))
	s.Add(base.Add(3 * time.Second)) // later than the pending one: kept
	s.Add(base.Add(time.Second))     // duplicate
	if d, _ := s.Next(base); d != time.Second {
		t.Fatalf("next = %v, want 1s", d)
	}
	s.Due(base.Add(time.Second))
	if d, ok := s.Next(base.Add(time.Second)); !ok || d != 2*time.Second {
		t.Fatalf("after the first retry, next = %v %v, want 2s", d, ok)
	}
	s.Due(base.Add(5 * time.Second))
	if _, ok := s.Next(base); ok {
		t.Fatal("all retries are due, nothing should be left")
	}
	for i := 0; i < 3*MaxTimes; i++ {
		s.Add(base.Add(time.Duration(i) * time.Millisecond))
	}
	if len(s.times) != MaxTimes || !s.times[len(s.times)-1].Equal(base.Add(time.Duration(3*MaxTimes-1)*time.Millisecond)) {
		t.Fatalf("bounded schedule must keep %d times and the latest one", MaxTimes)
	}
	if d, _ := s.Next(base.Add(time.Hour)); d != 0 {
		t.Fatalf("an overdue time must fire at once, got %v", d)
	}
}

// AddAll adds each time, out of order and with duplicates, sorted once.
func TestScheduleAddAll(t *testing.T) {
	base := time.Unix(1_000, 0)
	var s Schedule
	s.AddAll([]time.Time{base.Add(3 * time.Second), base.Add(time.Second), base.Add(3 * time.Second)})
	want := []time.Time{base.Add(time.Second), base.Add(3 * time.Second)}
	if !slices.EqualFunc(s.times, want, time.Time.Equal) {
		t.Errorf("times %v, want %v", s.times, want)
	}
}

// A Box never blocks its writers, wakes its reader (coalesced), and hands
// each posted time over once.
func TestBox(t *testing.T) {
	b := NewBox()
	base := time.Unix(1_000, 0)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); b.Add(base.Add(time.Duration(i) * time.Second)) }()
	}
	wg.Wait() // ten Adds with nobody reading: none blocked
	select {
	case <-b.Wake():
	default:
		t.Fatal("no wake after Add")
	}
	select {
	case <-b.Wake():
		t.Fatal("wakes not coalesced")
	default:
	}
	got := b.Take()
	slices.SortFunc(got, time.Time.Compare)
	if len(got) != 10 || !got[0].Equal(base) || !got[9].Equal(base.Add(9*time.Second)) {
		t.Errorf("took %v, want the ten posted times", got)
	}
	if again := b.Take(); len(again) != 0 {
		t.Errorf("took %v again, want none", again)
	}
}
