package relay

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Marks are written off the publish path: once the broker acknowledged a
// batch, its published seqs are remembered (run.recent, so neither lane
// publishes them again while they are still pending in the table) and
// queued here, and the lane goes on publishing while the run's mark
// goroutine writes them. Batches queued while a mark is written are marked
// together, with one statement. So a time-critical event handed over never
// waits for the previous batch's mark, and a backlog's next batch (read
// ahead) is published while the previous one is marked.
//
// What must not overtake a mark waits for it: an ownership change waits
// for every queued mark (run.apply: each mark is fenced by the session
// token its batch was published under, and a partition is released only
// once its published rows are marked), and so does the end of a run. Reads
// do not wait: a read ahead reads past the batch in flight, and a read
// from the start asks for as many more rows as wait for their marks, and
// keep leaves those out.

// markJob is one batch whose published rows wait for their mark.
type markJob struct {
	ticket  uint64 // the job's place in the queue
	token   string
	out     *batchOutcome
	size    int             // rows in the batch
	hctx    context.Context // the hooks' context of the batch
	start   time.Time
	failErr error // the batch's failure write, reported with BatchEnd
}

// markQueue holds the batches waiting for their mark. Jobs are written in
// the order they were pushed: every job up to ticket written is written.
type markQueue struct {
	mu      sync.Mutex
	changed *sync.Cond // broadcast when jobs are taken or written
	jobs    []*markJob
	rows    int // published rows in jobs
	unmark  int // published rows pushed and not yet written (jobs and those being written)
	pushed  uint64
	written uint64
	err     error // the first mark error since the last takeErr
	wake    chan struct{}
	hurry   chan struct{} // someone waits for a mark: no lingering
}

func newMarkQueue() *markQueue {
	q := &markQueue{wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1)}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// push queues a job, wakes the mark goroutine and returns the job's
// ticket. While more than limit rows wait to be taken, it waits: a lane
// runs at most that far ahead of its marks.
func (q *markQueue) push(j *markJob, limit int) uint64 {
	q.mu.Lock()
	for q.rows > 0 && q.rows+len(j.out.published) > limit {
		signal(q.hurry)
		q.changed.Wait()
	}
	q.pushed++
	j.ticket = q.pushed
	q.jobs = append(q.jobs, j)
	q.rows += len(j.out.published)
	q.unmark += len(j.out.published)
	q.mu.Unlock()
	signal(q.wake)
	return j.ticket
}

// take removes and returns the queued jobs, in ticket order.
func (q *markQueue) take() []*markJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	jobs := q.jobs
	q.jobs, q.rows = nil, 0
	q.changed.Broadcast()
	return jobs
}

// done records that the jobs take returned are written.
func (q *markQueue) done(jobs []*markJob, err error) {
	if len(jobs) == 0 {
		return
	}
	q.mu.Lock()
	q.written = jobs[len(jobs)-1].ticket
	for _, j := range jobs {
		q.unmark -= len(j.out.published)
	}
	if err != nil && q.err == nil {
		q.err = err
	}
	q.changed.Broadcast()
	q.mu.Unlock()
}

// unmarked returns how many published rows wait for their mark.
func (q *markQueue) unmarked() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.unmark
}

// takeErr returns, and forgets, the first mark error since the last call.
func (q *markQueue) takeErr() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.err
	q.err = nil
	return err
}

// idle returns once every job pushed so far is written.
func (q *markQueue) idle() {
	q.mu.Lock()
	last := q.pushed
	q.mu.Unlock()
	q.waitWritten(last)
}

// waitWritten returns once the job of ticket (and every job before it) is
// written.
func (q *markQueue) waitWritten(ticket uint64) {
	q.mu.Lock()
	for q.written < ticket {
		signal(q.hurry)
		q.changed.Wait()
	}
	q.mu.Unlock()
}

// markLinger is the least time between two marks while nobody waits for
// one: under a stream of small hand-over batches, their marks are written
// together, a statement (and, on most databases, a commit) per markLinger
// at most instead of one per time-critical event. A mark after a quiet
// spell is written at once. Only rows already published wait, so the
// linger adds nothing to a publish; it delays by at most markLinger the
// hand-over of the next event of the same aggregate (a row still pending
// at its flush sends that event through a read).
const markLinger = 5 * time.Millisecond

// markLoop writes queued marks until stop is closed (both lanes ended),
// then writes what is left and returns.
func (rn *run) markLoop(stop <-chan struct{}) {
	var last time.Time
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	for {
		select {
		case <-stop:
			rn.writeMarks()
			return
		case <-rn.marks.wake:
		}
		if d := markLinger - time.Since(last); d > 0 {
			linger.Reset(d)
			select {
			case <-stop:
			case <-rn.marks.hurry:
			case <-linger.C:
			}
			if !linger.Stop() {
				select {
				case <-linger.C:
				default:
				}
			}
		}
		rn.writeMarks()
		last = time.Now()
	}
}

// writeMarks marks the published rows of every queued job, one statement
// per fencing token (in practice one: apply waits for the queue before the
// token changes), then ends each job with its BatchEnd hook.
func (rn *run) writeMarks() {
	taken := rn.marks.take()
	jobs := slices.Clone(taken)
	var firstErr error
	for len(jobs) > 0 {
		token := jobs[0].token
		var group []*markJob
		var seqs, unblock []int64
		rest := jobs[:0]
		for _, j := range jobs {
			if j.token != token {
				rest = append(rest, j)
				continue
			}
			group = append(group, j)
			seqs = append(seqs, j.out.published...)
			unblock = append(unblock, j.out.unblock...)
		}
		jobs = rest
		err := rn.writeMark(group[0].hctx, token, seqs, unblock)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, j := range group {
			rn.batchEnd(j.hctx, j.start, j.size, j.out, errors.Join(j.failErr, err))
		}
		if err != nil || len(unblock) > 0 {
			// A failed mark left its rows pending again; a mark that
			// unblocked aggregates made their later rows readable: either
			// way the read lane reads.
			signal(rn.wakes.urgent)
		}
	}
	rn.marks.done(taken, firstErr)
}
