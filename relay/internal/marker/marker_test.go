package marker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// write is one WriteMarks call the fake saw.
type write struct {
	token         string
	seqs, unblock []int64
}

// fakeWriter records its calls; while gate is closed each call waits at
// it (entered receives first), and err, if set, is returned by every call.
type fakeWriter struct {
	mu      sync.Mutex
	writes  []write
	gate    chan struct{}
	entered chan struct{}
	err     error
}

func newFake() *fakeWriter { return &fakeWriter{entered: make(chan struct{}, 16)} }

func (f *fakeWriter) WriteMarks(_ context.Context, token string, seqs, unblock []int64) error {
	f.mu.Lock()
	f.writes = append(f.writes, write{token, slices.Clone(seqs), slices.Clone(unblock)})
	gate, err := f.gate, f.err
	f.mu.Unlock()
	f.entered <- struct{}{}
	if gate != nil {
		<-gate
	}
	return err
}

func (f *fakeWriter) close() {
	f.mu.Lock()
	f.gate = make(chan struct{})
	f.mu.Unlock()
}

func (f *fakeWriter) open() {
	f.mu.Lock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
	f.mu.Unlock()
}

func (f *fakeWriter) calls() []write {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.writes)
}

func (f *fakeWriter) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-f.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no write started")
	}
}

// start runs m until the test ends (then it writes what is left).
func start(t *testing.T, m *Marker) {
	t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); m.Run(stop) }()
	t.Cleanup(func() { close(stop); <-done })
}

func job(token string, seqs ...int64) *Job {
	return &Job{Token: token, Seqs: seqs, Ctx: context.Background()}
}

// Tickets follow the order of Push, and WaitWritten returns once the job
// of its ticket is written, with every job before it.
func TestTicketsInPushOrder(t *testing.T) {
	f := newFake()
	m := New(f, 0)
	start(t, m)
	var tickets []uint64
	var ended []int64
	var mu sync.Mutex
	for i := range int64(5) {
		j := job("s", 10+i)
		j.Ended = func(err error) {
			mu.Lock()
			ended = append(ended, 10+i)
			mu.Unlock()
		}
		tickets = append(tickets, m.Push(j, 100))
	}
	for i, tk := range tickets {
		if tk != uint64(i+1) {
			t.Fatalf("tickets %v, want 1..5 in push order", tickets)
		}
	}
	m.WaitWritten(tickets[4])
	var seqs []int64
	for _, w := range f.calls() {
		seqs = append(seqs, w.seqs...)
	}
	if want := []int64{10, 11, 12, 13, 14}; !slices.Equal(seqs, want) {
		t.Errorf("written %v, want %v (push order, each once)", seqs, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int64{10, 11, 12, 13, 14}; !slices.Equal(ended, want) {
		t.Errorf("jobs ended in order %v, want %v", ended, want)
	}
	if n := m.Unmarked(); n != 0 {
		t.Errorf("Unmarked = %d after every job was written, want 0", n)
	}
}

// Jobs queued while a write is in progress are written together, one
// call per token, the first job's token first; Unblock goes with its
// group.
func TestGroupsByToken(t *testing.T) {
	f := newFake()
	f.close()
	m := New(f, 0)
	start(t, m)
	m.Push(job("a", 1), 100)
	f.waitEntered(t)
	m.Push(job("a", 2), 100)
	j := job("b", 3)
	j.Unblock = []int64{3}
	m.Push(j, 100)
	last := m.Push(job("a", 4), 100)
	if n := m.Unmarked(); n != 4 {
		t.Errorf("Unmarked = %d with four one-row jobs queued or in the write, want 4", n)
	}
	f.open()
	m.WaitWritten(last)
	got := f.calls()
	want := []write{{"a", []int64{1}, nil}, {"a", []int64{2, 4}, nil}, {"b", []int64{3}, []int64{3}}}
	if len(got) != len(want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	for i := range want {
		if got[i].token != want[i].token || !slices.Equal(got[i].seqs, want[i].seqs) || !slices.Equal(got[i].unblock, want[i].unblock) {
			t.Errorf("write %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// After a write, the next one waits for the linger, unless someone waits
// for a mark (WaitWritten, Idle): then it is written at once.
func TestLingerAndHurry(t *testing.T) {
	f := newFake()
	m := New(f, time.Hour)
	start(t, m)
	// After a quiet spell: at once. (Not WaitWritten: its hurry would
	// cut the next linger short.)
	m.Push(job("s", 1), 100)
	f.waitEntered(t)
	m.Push(job("s", 2), 100)
	m.Push(job("s", 3), 100)
	time.Sleep(50 * time.Millisecond) // a write that did not linger has time to happen
	if n := len(f.calls()); n != 1 {
		t.Fatalf("%d writes within the linger, want 1", n)
	}
	idle := make(chan struct{})
	go func() { m.Idle(); close(idle) }()
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("Idle did not cut the linger short")
	}
	got := f.calls()
	if len(got) != 2 || !slices.Equal(got[1].seqs, []int64{2, 3}) {
		t.Errorf("writes %v, want [1] then [2 3] together", got)
	}
}

// Push waits while more than limit rows wait to be taken, and goes on
// once the writer takes them.
func TestPushBackPressure(t *testing.T) {
	f := newFake()
	f.close()
	m := New(f, 0)
	start(t, m)
	m.Push(job("s", 1, 2), 3)
	f.waitEntered(t)          // taken: the write holds it
	m.Push(job("s", 3, 4), 3) // queued: 2 rows wait to be taken
	pushed := make(chan struct{})
	go func() { m.Push(job("s", 5, 6), 3); close(pushed) }()
	select {
	case <-pushed:
		t.Fatal("Push went past the limit while 2 rows waited to be taken")
	case <-time.After(50 * time.Millisecond):
	}
	f.open()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("Push did not go on once the queued rows were taken")
	}
	m.Idle()
	var seqs []int64
	for _, w := range f.calls() {
		seqs = append(seqs, w.seqs...)
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(seqs, want) {
		t.Errorf("written %v, want %v", seqs, want)
	}
	// A job larger than the limit alone is not held back.
	m.Push(job("s", 7, 8, 9, 10), 3)
	m.Idle()
}

// A failed write ends each job of its group with the error, and TakeErr
// returns the first error once.
func TestWriteErrorPropagates(t *testing.T) {
	f := newFake()
	errBoom := errors.New("boom")
	f.err = errBoom
	m := New(f, 0)
	start(t, m)
	errs := make(chan error, 2)
	for i := range int64(2) {
		j := job("s", i)
		j.Ended = func(err error) { errs <- err }
		m.Push(j, 100)
	}
	m.Idle()
	for range 2 {
		if err := <-errs; !errors.Is(err, errBoom) {
			t.Errorf("job ended with %v, want %v", err, errBoom)
		}
	}
	if err := m.TakeErr(); !errors.Is(err, errBoom) {
		t.Errorf("TakeErr = %v, want %v", err, errBoom)
	}
	if err := m.TakeErr(); err != nil {
		t.Errorf("TakeErr again = %v, want nil (taken once)", err)
	}
	if n := m.Unmarked(); n != 0 {
		t.Errorf("Unmarked = %d after the failed write, want 0 (the rows are pending again, not queued)", n)
	}
}

// Run, stopped, writes what is queued before it returns, lingering or not.
func TestStopWritesWhatIsLeft(t *testing.T) {
	f := newFake()
	m := New(f, time.Hour)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); m.Run(stop) }()
	m.Push(job("s", 1), 100)
	f.waitEntered(t)
	m.Push(job("s", 2), 100) // lingers
	close(stop)
	<-done
	got := f.calls()
	if len(got) != 2 || !slices.Equal(got[1].seqs, []int64{2}) {
		t.Errorf("writes %v, want [1] then [2] (written on stop)", got)
	}
	if n := m.Unmarked(); n != 0 {
		t.Errorf("Unmarked = %d after stop, want 0", n)
	}
}
