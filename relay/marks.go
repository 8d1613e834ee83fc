package relay

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// The hand-over lane does not wait for its marks: a batch's published rows
// go to the mark queue, and the lane publishes the next handed-over batch
// while a goroutine of the run writes the mark, so that a time-critical
// event never waits for the previous batch's bookkeeping. Batches that
// queue up while a mark is written are marked together, with one
// statement.
//
// Until its mark is written, a batch's aggregates stay in flight for the
// hand-over lane (run.fastAggs): the read lane leaves their rows alone, so
// a published row that is still pending in the table is never read and
// published again. Ownership changes (run.apply) and the end of a run wait
// for the queue to empty, so that every mark is fenced by the session
// token the batch was published under, before its partitions move.

// markJob is one hand-over batch whose published rows wait for their mark.
type markJob struct {
	token   string
	out     *batchOutcome
	recs    []dialects.Record // the batch: its aggregates are released after the mark
	hctx    context.Context   // the hooks' context of the batch
	start   time.Time
	failErr error // the batch's failure write, reported with BatchEnd
}

// markQueue holds the hand-over batches waiting for their mark.
type markQueue struct {
	mu   sync.Mutex
	idle *sync.Cond // broadcast when the queue empties
	jobs []*markJob
	busy bool // the mark goroutine is writing jobs it took
	wake chan struct{}
}

func newMarkQueue() *markQueue {
	q := &markQueue{wake: make(chan struct{}, 1)}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// push queues a job and wakes the mark goroutine.
func (q *markQueue) push(j *markJob) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	signal(q.wake)
}

// take removes and returns the queued jobs, marking the queue busy until
// done is called.
func (q *markQueue) take() []*markJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	jobs := q.jobs
	q.jobs = nil
	q.busy = len(jobs) > 0
	return jobs
}

// done ends the writing of the jobs take returned.
func (q *markQueue) done() {
	q.mu.Lock()
	q.busy = false
	if len(q.jobs) == 0 {
		q.idle.Broadcast()
	}
	q.mu.Unlock()
}

// wait returns when no job is queued or being written. Callers make sure
// no job is pushed meanwhile (they hold run.fastBatch).
func (q *markQueue) wait() {
	q.mu.Lock()
	for len(q.jobs) > 0 || q.busy {
		q.idle.Wait()
	}
	q.mu.Unlock()
}

// markLoop writes queued marks until the hand-over lane has ended
// (fastDone), then writes what is left and returns.
func (rn *run) markLoop(fastDone <-chan struct{}) {
	for {
		select {
		case <-fastDone:
			rn.writeMarks()
			return
		case <-rn.marks.wake:
			rn.writeMarks()
		}
	}
}

// writeMarks marks the published rows of every queued job with one
// statement per fencing token (in practice one: apply waits for the queue
// before the token changes), then ends each job: its seqs are remembered,
// its aggregates released, its BatchEnd hook called. When the mark fails,
// the rows stay pending and the read lane is woken to publish them again.
func (rn *run) writeMarks() {
	jobs := rn.marks.take()
	defer rn.marks.done()
	for len(jobs) > 0 {
		token := jobs[0].token
		var group []*markJob
		var seqs, unblock []int64
		var parts []int
		rest := jobs[:0]
		for _, j := range jobs {
			if j.token != token {
				rest = append(rest, j)
				continue
			}
			group = append(group, j)
			seqs = append(seqs, j.out.published...)
			parts = append(parts, j.out.parts...)
			unblock = append(unblock, j.out.unblock...)
		}
		jobs = rest
		err := rn.writeMark(group[0].hctx, token, seqs, parts, unblock)
		for _, j := range group {
			rn.releaseFast(j.recs)
			rn.batchEnd(j.hctx, j.start, len(j.recs), j.out, errors.Join(j.failErr, err))
		}
		if err != nil {
			signal(rn.wakes.urgent) // the rows are pending again: the read lane publishes them
		}
	}
}
