package relay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// dueCheckEvery bounds how often the read lane asks the database for the
// next due time of scheduled events (Dialect.NextDue): at most once per
// interval however many commits and cycles ask, so that traffic does not
// turn into one extra statement per cycle.
const dueCheckEvery = 50 * time.Millisecond

// nextDueLimit is how many due times one look-up returns: a stream of
// scheduled rows falling due one after the other costs one look-up per
// nextDueLimit rows.
const nextDueLimit = 16

// dueMargin is added to a due time before the timer waits for it. Due
// times are kept to the microsecond on every database and the run's clock
// is never ahead of the database's (dbClock.sync), so it only covers the
// rounding of a time to microseconds.
const dueMargin = 50 * time.Microsecond

// clockSyncEvery is how often a run measures its clock's offset to the
// database's. Clocks drift by parts per million: a minute keeps the error
// far below a millisecond.
const clockSyncEvery = time.Minute

// dbClock is the relay's clock moved onto the database's: reads, due
// times and retry times are compared with times the database wrote
// (scheduled events are due by the database's clock, never a relay's),
// so a relay whose clock is off neither publishes a scheduled event early
// nor holds rows back. It is Config.Clock plus an offset measured with
// Dialect.Now.
type dbClock struct {
	clock  func() time.Time
	offset atomic.Int64 // database minus relay, ns
}

// now returns the database's time as the relay's clock and the last
// measured offset give it.
func (c *dbClock) now() time.Time {
	return c.clock().Add(time.Duration(c.offset.Load()))
}

// syncSamples is the most round trips sync makes, and syncGoodRTT the
// round trip short enough to stop at: the offset's error is at most the
// round trip, and the first statement of a run may open a connection.
const (
	syncSamples = 3
	syncGoodRTT = 500 * time.Microsecond
)

// sync measures the offset. The database read its clock somewhere within
// the round trip; taking its end as that moment makes the offset a lower
// bound, so that the relay's idea of the database's time is never ahead
// of it (a scheduled event is never early) and behind by at most the
// shortest round trip of the samples.
func (c *dbClock) sync(ctx context.Context, d dialects.Dialect, q dialects.Querier) error {
	best := time.Duration(-1)
	var offset time.Duration
	for range syncSamples {
		before := c.clock()
		at, err := d.Now(ctx, q)
		if err != nil {
			if best >= 0 {
				break
			}
			return err
		}
		after := c.clock()
		if rtt := after.Sub(before); best < 0 || rtt < best {
			best, offset = rtt, at.Sub(after)
		}
		if best <= syncGoodRTT {
			break
		}
	}
	c.offset.Store(int64(offset))
	return nil
}

// dueCheck is the read lane's lookup of the next due time of scheduled
// events: owned by the loop's goroutine.
type dueCheck struct {
	dirty bool      // something may have changed since the last lookup
	last  time.Time // when the last lookup ran (relay clock)
	timer *time.Timer
}

// run looks up the next due times when one is wanted and the last look-up
// is old enough; otherwise it arms the timer for when it will be. It
// returns the times a cycle must run: due times after the time the read
// lane's last read from the start covered (a row that fell due since was
// not read), each plus dueMargin.
func (dc *dueCheck) run(ctx context.Context, rn *run) []time.Time {
	if !dc.dirty || len(rn.active) == 0 {
		return nil
	}
	if wait := dueCheckEvery - time.Since(dc.last); wait > 0 {
		dc.timer.Reset(wait)
		return nil
	}
	dc.dirty, dc.last = false, time.Now()
	after := rn.reader.Covered()
	if after.IsZero() {
		after = rn.clock.now()
	}
	due, err := rn.r.d.NextDue(ctx, rn.r.db, rn.active, after, nextDueLimit)
	if err != nil {
		// The poll looks again; a persisting database error shows in reads.
		if ctx.Err() == nil {
			rn.r.cfg.Logger.DebugContext(ctx, "jitoutbox relay: next due time", "owner", rn.r.cfg.Owner, "err", err)
			dc.dirty = true
		}
		return nil
	}
	for i := range due {
		due[i] = due[i].Add(dueMargin)
	}
	return due
}
