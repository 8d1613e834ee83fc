package relay

import (
	"context"
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay/internal/marker"
)

// Marks are written off the publish path (relay/internal/marker): once the
// broker acknowledged a batch, its published seqs are remembered (so that
// neither lane publishes them again while they are still pending in the
// table) and queued for the run's mark goroutine, and the lane goes on
// publishing.
//
// What must not overtake a mark waits for it: an ownership change waits
// for every queued mark (run.apply: each mark is fenced by the session
// token its batch was published under, and a partition is released only
// once its published rows are marked), and so does the end of a run. Reads
// do not wait: a read ahead reads past the batch in flight, and a read
// from the start asks for as many more rows as wait for their marks, and
// the sequencer leaves those out.

var _ marker.Writer = (*run)(nil)

// WriteMarks marks published rows (one statement), fenced by the session
// token: rows of partitions the relay lost are left to their new owner. It
// runs on a context detached from ctx's cancellation, bounded by
// finishTimeout, so that a stopping relay still marks what the broker
// confirmed. The rows were remembered when the broker acknowledged them;
// a failed mark forgets them, so that they are read and published again.
// A failed mark, or one that unblocked aggregates (their later rows are
// readable now), wakes the read lane.
func (rn *run) WriteMarks(ctx context.Context, token string, published, unblock []int64) error {
	if len(published) == 0 {
		return nil
	}
	r := rn.r
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	n, err := r.d.Mark(wctx, r.db, dialects.Mark{Token: token, Seqs: published, Unblock: unblock,
		At: r.cfg.Clock(), Delete: r.cfg.DeleteOnPublish})
	if err != nil {
		rn.seq.MarkFailed(published)
		signal(rn.wakes.urgent)
		return fmt.Errorf("relay: mark published: %w", err)
	}
	r.c.published.Add(uint64(len(published)))
	// Rows of partitions the session lost (the mark left them pending)
	// stay remembered: until the owner sees the loss, the next reads would
	// return them and publish them again and again. A new session of the
	// run forgets them (run.apply), so that they are published if the run
	// owns their partitions again.
	if n != int64(len(published)) {
		r.cfg.Logger.WarnContext(ctx, "jitoutbox relay: partitions lost before marking; those events will be published again by their new owner",
			"owner", r.cfg.Owner, "published", len(published), "marked", n)
		signal(rn.own.changeSig) // the owner checks the session now
	}
	if len(unblock) > 0 {
		signal(rn.wakes.urgent)
	}
	return nil
}
