// Package marker writes the marks of published rows off the publish path.
//
// Once the broker acknowledged a batch, a lane pushes the batch's published
// seqs as a Job and goes on publishing while the Marker's goroutine (Run)
// writes them. Jobs queued while a mark is written are written together,
// one Writer call per fencing token. So a time-critical event handed over
// never waits for the previous batch's mark, and a backlog's next batch is
// published while the previous one is marked.
//
// The queue's state (the jobs, their tickets, the rows waiting for their
// mark, the first error) is guarded by the Marker's own lock; the lanes
// wait on it only for back-pressure (Push), an ownership change (Idle) or a
// test (WaitWritten). The write itself runs on the Run goroutine, outside
// the lock, and the Writer and each Job's Ended are called there.
package marker

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Linger is the least time between two writes while nobody waits for a
// mark: under a stream of small batches, their marks are written together,
// a statement (and, on most databases, a commit) per Linger at most instead
// of one per batch. A mark after a quiet spell is written at once. Only
// rows already published wait, so the linger adds nothing to a publish; it
// delays by at most Linger the hand-over of the next event of the same
// aggregate (a row still pending at its flush sends that event through a
// read).
const Linger = 5 * time.Millisecond

// Writer writes marks: the relay's side of the dialect's Mark call.
type Writer interface {
	// WriteMarks marks seqs published (one statement), fenced by token,
	// and lifts the retry blocks of unblock. ctx is the first job's.
	WriteMarks(ctx context.Context, token string, seqs, unblock []int64) error
}

// Job is one batch whose published rows wait for their mark.
type Job struct {
	// Token is the fencing token of the session the batch was published
	// under.
	Token string
	// Seqs are the batch's published rows; Unblock those of them that
	// had failed before (their retry blocks go with the mark).
	Seqs, Unblock []int64
	// Ctx is passed to the Writer (the batch's hook context).
	Ctx context.Context
	// Ended, if not nil, is called on the Run goroutine once the job's
	// mark is written, with the write's error.
	Ended func(err error)

	ticket uint64
}

// Marker is the mark queue and its writer goroutine. Jobs are written in
// the order they were pushed: every job up to a written ticket is written.
type Marker struct {
	w      Writer
	linger time.Duration

	mu      sync.Mutex
	changed *sync.Cond // broadcast when jobs are taken or written
	jobs    []*Job
	rows    int // rows in jobs (not yet taken)
	unmark  int // rows pushed and not yet written (jobs and those being written)
	pushed  uint64
	written uint64
	err     error         // the first write error since the last TakeErr
	wake    chan struct{} // a job was pushed
	hurry   chan struct{} // someone waits for a mark: no lingering
}

// New returns a Marker that writes through w, at most one write per
// linger while nobody waits (Linger in the relay; tests choose theirs).
func New(w Writer, linger time.Duration) *Marker {
	m := &Marker{w: w, linger: linger, wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1)}
	m.changed = sync.NewCond(&m.mu)
	return m
}

// Push queues j, wakes the writer and returns j's ticket. While more than
// limit rows wait to be taken, it waits: a lane runs at most that far ahead
// of its marks.
func (m *Marker) Push(j *Job, limit int) uint64 {
	m.mu.Lock()
	for m.rows > 0 && m.rows+len(j.Seqs) > limit {
		signal(m.hurry)
		m.changed.Wait()
	}
	m.pushed++
	j.ticket = m.pushed
	m.jobs = append(m.jobs, j)
	m.rows += len(j.Seqs)
	m.unmark += len(j.Seqs)
	m.mu.Unlock()
	signal(m.wake)
	return j.ticket
}

// take removes and returns the queued jobs, in ticket order.
func (m *Marker) take() []*Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	jobs := m.jobs
	m.jobs, m.rows = nil, 0
	m.changed.Broadcast()
	return jobs
}

// done records that the jobs take returned are written.
func (m *Marker) done(jobs []*Job, err error) {
	if len(jobs) == 0 {
		return
	}
	m.mu.Lock()
	m.written = jobs[len(jobs)-1].ticket
	for _, j := range jobs {
		m.unmark -= len(j.Seqs)
	}
	if err != nil && m.err == nil {
		m.err = err
	}
	m.changed.Broadcast()
	m.mu.Unlock()
}

// Unmarked returns how many pushed rows wait for their mark.
func (m *Marker) Unmarked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unmark
}

// TakeErr returns, and forgets, the first write error since the last call.
func (m *Marker) TakeErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.err
	m.err = nil
	return err
}

// Idle returns once every job pushed so far is written.
func (m *Marker) Idle() {
	m.mu.Lock()
	last := m.pushed
	m.mu.Unlock()
	m.WaitWritten(last)
}

// WaitWritten returns once the job of ticket (and every job before it) is
// written. The writer does not linger while someone waits.
func (m *Marker) WaitWritten(ticket uint64) {
	m.mu.Lock()
	for m.written < ticket {
		signal(m.hurry)
		m.changed.Wait()
	}
	m.mu.Unlock()
}

// Run writes queued jobs until stop is closed (no more pushes), then
// writes what is left and returns.
func (m *Marker) Run(stop <-chan struct{}) {
	var last time.Time
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	for {
		select {
		case <-stop:
			m.write()
			return
		case <-m.wake:
		}
		if d := m.linger - time.Since(last); d > 0 {
			linger.Reset(d)
			select {
			case <-stop:
			case <-m.hurry:
			case <-linger.C:
			}
			if !linger.Stop() {
				select {
				case <-linger.C:
				default:
				}
			}
		}
		m.write()
		last = time.Now()
	}
}

// write writes every queued job, one Writer call per fencing token (in
// practice one: the relay waits for the queue before the token changes),
// then ends each job of the group with the call's error.
func (m *Marker) write() {
	taken := m.take()
	jobs := slices.Clone(taken)
	var firstErr error
	for len(jobs) > 0 {
		token := jobs[0].Token
		var group []*Job
		var seqs, unblock []int64
		rest := jobs[:0]
		for _, j := range jobs {
			if j.Token != token {
				rest = append(rest, j)
				continue
			}
			group = append(group, j)
			seqs = append(seqs, j.Seqs...)
			unblock = append(unblock, j.Unblock...)
		}
		jobs = rest
		err := m.w.WriteMarks(group[0].Ctx, token, seqs, unblock)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, j := range group {
			if j.Ended != nil {
				j.Ended(err)
			}
		}
	}
	m.done(taken, firstErr)
}

// signal sends a coalescing wake on c (buffer of one).
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
