package relay

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// hungryInterval is how often a relay that owns less than its share looks
// for partitions to take, for at most hungryFor rebalance intervals. It
// looks first after hungryFirst, then twice as long each time up to
// hungryInterval: a relay that just joined finds every partition owned,
// and the others, interrupted by its session opening, release its share
// within milliseconds; looking again only after hungryInterval would leave
// it idle that long.
const (
	hungryInterval = 250 * time.Millisecond
	hungryFirst    = 25 * time.Millisecond
	hungryFor      = 2
)

// busyCheck is how often the owner proves its session while the relay is
// publishing (one statement a second under load, none while idle).
const busyCheck = time.Second

// giftNudges bounds the nudges of nudgeShort while partitions wait for a
// relay short of its share; the looks come after giftFirst, then twice as
// long each time.
const (
	giftNudges = 5
	giftFirst  = 25 * time.Millisecond
)

// askFirst and askMax space a fleet table's requests for its share
// (askShare): the first again after askFirst, doubling up to askMax.
const (
	askFirst = 25 * time.Millisecond
	askMax   = 5 * time.Second
)

// followLooks bounds the looks of a fleet table told that a relay left
// (follow): the first after followFirst, then twice as long each time up
// to followMax, about seven seconds in all.
const (
	followLooks = 8
	followFirst = 50 * time.Millisecond
	followMax   = 2 * time.Second
)

// ownUpdate tells the publish loop which partitions to publish. done is
// closed once it applies, which is after the batch in flight: a relay
// releases a partition only when nothing of it is in flight.
type ownUpdate struct {
	active []int
	token  string
	done   chan struct{}
}

// owner is the ownership goroutine of one run: it holds the relay's
// session, takes and releases partitions, renews leases, and tells the
// publish loop what it owns. It runs on its own goroutine and its own
// connection, so a slow batch never delays a renewal.
type owner struct {
	r        *Relay
	parts    int
	updates  chan ownUpdate
	loopDone <-chan struct{} // closed when the publish loop returned
	// validUntil (unix nanoseconds, 0: no limit) is when the lease of a
	// lease dialect ends: the publish loop starts no Publish that could
	// outlast it. Set here on every renewal, without waiting for the loop.
	validUntil *atomic.Int64
	// lastBatch (unix nanoseconds) is when the publish loop last started a
	// batch: while it is busy, the owner proves its session every
	// busyCheck, so that a relay whose lock connection died stops
	// publishing within about a second, not a rebalance interval.
	lastBatch *atomic.Int64
	sent      []int // the owned set last handed to the publish loop

	sess      dialects.Session
	owned     []int         // partitions the session holds, sorted
	leases    bool          // the dialect's ownership is a lease (Check returns a time)
	hungry    int           // rebalances left in hungry mode
	hungryGap time.Duration // the next look of hungry mode is after this
	gifting   bool          // partitions this relay released or left free wait for another relay (nudgeShort)
	gifts     int           // nudges left while they wait
	giftGap   time.Duration // the next look while they wait is after this
	warned    bool          // the no-cross-process-wake warning was logged
	asks      int           // fleet: times this table asked for its share since it became short (askShare)
	askAt     time.Time     // fleet: when it may ask again
	seen      []string      // fleet anchor: the relays of the last view (tellFleet)
	relaysN   int           // the live relays in the last view
	// A fleet table told that a relay left looks again, taking every free
	// partition, until its own view shows fewer relays than before: follows
	// is the looks left, followN the relay count before the departure,
	// followGap the wait before the next look.
	follows   int
	followN   int
	followGap time.Duration
	retry     time.Duration
	// retryAt: with no session, when the next attempt to open one is due.
	// A wake before it (a fleet's joins and leaves, a watch) does not try
	// again: a table whose schema is gone would otherwise log a failure
	// per wake until the fleet's discovery stops it.
	retryAt time.Time
	// openFails counts the failed opens since the last one logged, and
	// openLogged is when that was: a streak logs its first failure, then
	// one line per dbLogEvery.
	openFails  int
	openLogged time.Time
	watchSig   chan struct{}  // a watched relay left
	changeSig  chan struct{}  // a relay joined
	watchFor   []string       // the relay set the watcher was started for
	watchEnd   chan struct{}  // closed when the current watcher returned
	stopW      func()         // stops the current watcher
	wg         sync.WaitGroup // watchers
}

func (o *owner) loop(ctx context.Context) {
	defer o.wg.Wait()
	defer o.closeSession()
	t := time.NewTimer(0)
	defer t.Stop()
	grabAll := false
	// A fleet table hears of relays joining and leaving from its fleet
	// (the anchor table's watch), and the anchor is asked to nudge.
	var left, joined, nudge chan struct{}
	if f := o.r.fleet; f != nil {
		left, joined, nudge = f.left, f.joined, f.nudge
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			grabAll = o.follows > 0
		case <-o.watchSig:
			grabAll = true // a relay left: take its partitions now
		case <-left:
			grabAll = true
			o.follow()
		case <-o.changeSig:
		case <-joined:
		case <-nudge:
			if o.sess != nil {
				sctx, cancel := o.sessCtx(ctx)
				_ = o.sess.Nudge(sctx) // best effort
				cancel()
			}
			continue
		}
		next := o.step(ctx, grabAll)
		grabAll = false
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// backOff doubles the delay before the next attempt to open a session
// (bounded by the rebalance interval) and returns it; until it has passed,
// step opens none whatever wakes it.
func (o *owner) backOff() time.Duration {
	o.retry = nextTroubleDelay(o.retry, o.r.cfg.RebalanceInterval)
	o.retryAt = time.Now().Add(o.retry)
	return o.retry
}

// step opens the session if needed and rebalances once; it returns when
// to run again.
func (o *owner) step(ctx context.Context, grabAll bool) time.Duration {
	cfg := &o.r.cfg
	if o.sess == nil {
		if wait := time.Until(o.retryAt); wait > 0 {
			return wait
		}
		var s dialects.Session
		var err error
		if f := o.r.fleet; f != nil {
			sctx, cancel := o.sessCtx(ctx)
			s, err = f.db.openSession(sctx, o.r.d, cfg.Owner, cfg.LeaseDuration)
			cancel()
		} else {
			s, err = o.r.d.OpenSession(ctx, o.r.db, cfg.Owner, cfg.LeaseDuration)
		}
		if err != nil {
			o.openFails++
			if ctx.Err() == nil && time.Since(o.openLogged) >= dbLogEvery {
				cfg.Logger.ErrorContext(ctx, "jitoutbox relay: cannot open an ownership session; retrying",
					"owner", cfg.Owner, "err", err, "failures_since_last_log", o.openFails)
				o.openFails, o.openLogged = 0, time.Now()
			}
			return o.backOff()
		}
		o.retryAt, o.openFails, o.openLogged = time.Time{}, 0, time.Time{}
		o.sess, o.owned, o.retry, o.hungry = s, nil, 0, hungryFor*int(cfg.RebalanceInterval/hungryInterval)
		o.hungryGap = hungryFirst
	}
	if err := o.rebalance(ctx, grabAll); err != nil {
		if ctx.Err() != nil {
			return time.Hour
		}
		cfg.Logger.ErrorContext(ctx, "jitoutbox relay: ownership lost; publishing stopped until a new session owns partitions",
			"owner", cfg.Owner, "err", err)
		o.closeSession()
		return o.backOff()
	}
	next := jitter(cfg.RebalanceInterval)
	if o.r.fleet != nil && !o.leases {
		// The anchor's watch tells the fleet's tables of every change.
		next = jitter(fleetRebalanceEvery)
	}
	if o.leases {
		// Renew so that one missed renewal still leaves a Publish's worth
		// of lease: the relay stops starting Publishes PublishTimeout
		// before the lease ends, and a relay that takes the partitions
		// after it must find nothing in flight.
		next = min(next, (cfg.LeaseDuration-cfg.PublishTimeout)/2)
	}
	if o.gifts > 0 {
		next = min(next, o.giftGap)
		o.giftGap *= 2
	}
	if o.asks > 0 { // short of its share: look, and ask, again
		next = min(next, max(time.Until(o.askAt), 0))
	}
	if o.follows > 0 {
		next = min(next, o.followGap)
		o.followGap = min(2*o.followGap, followMax)
	}
	if o.hungry > 0 {
		next = min(next, o.hungryGap)
		o.hungryGap = min(2*o.hungryGap, hungryInterval)
	}
	if time.Since(time.Unix(0, o.lastBatch.Load())) < 2*busyCheck {
		next = min(next, busyCheck)
	}
	return next
}

// rebalance renews (lease dialects), reads the ownership view, and takes or
// releases partitions so that the relay owns its share: of n live relays
// sorted by token, the i-th owns P/n partitions, one more when i < P%n.
// With grabAll it takes every free partition (a relay just left; the
// surplus is given back once others ask for it).
func (o *owner) rebalance(ctx context.Context, grabAll bool) error {
	cfg := &o.r.cfg
	sctx, cancel := o.sessCtx(ctx)
	defer cancel()
	now := cfg.Clock()
	if o.leases || len(o.owned) == 0 {
		owned, until, err := o.sess.Check(sctx, now)
		if err != nil {
			return err
		}
		o.leases = !until.IsZero()
		o.owned = owned
		if o.leases {
			o.validUntil.Store(until.UnixNano())
		}
	}
	v, err := o.sess.View(sctx, now)
	if err != nil {
		return err
	}
	token := o.sess.Token()
	if !o.leases {
		o.owned = o.owned[:0]
		for p, t := range v.Owners {
			if t == token {
				o.owned = append(o.owned, p)
			}
		}
	}
	if f := o.r.fleet; f == nil || f.anchor.Load() {
		o.tellFleet(v.Relays)
		o.watch(ctx, v)
	} else {
		o.stopWatch()
	}
	n := len(v.Relays)
	switch {
	case o.follows == 0:
	case n < o.followN:
		o.follows = 0 // the departure shows here: this look takes what it freed
	default:
		o.follows--
	}
	o.relaysN = n
	idx := slices.Index(v.Relays, token)
	if idx < 0 { // not yet visible (lease dialects renew it with Check)
		idx, n = n, n+1
	}
	if n > 1 && len(cfg.Sources) == 0 && o.r.fleet == nil && !o.warned {
		o.warned = true
		cfg.Logger.WarnContext(ctx, "jitoutbox relay: other relays share this table but this relay has no cross-process wake (Config.Sources): time-critical events committed elsewhere for its partitions wait for its poll; wake it with notify/pgnotify or notify/natsnotify",
			"owner", cfg.Owner, "relays", n, "poll_interval", cfg.PollInterval)
	}
	target := o.parts / n
	if idx < o.parts%n {
		target++
	}
	var free, taken []int
	load := make(map[string]int)
	for p, t := range v.Owners {
		if t == "" {
			free = append(free, p)
		} else {
			load[t]++
		}
	}
	want := target - len(o.owned)
	if grabAll {
		want = len(free)
	}
	if want > 0 && len(free) > 0 {
		// Start at a point that differs per relay, so that relays looking
		// at once try different partitions first.
		off := dialects.PartitionOf("", token, len(free))
		try := append(slices.Clone(free[off:]), free[:off]...)
		try = try[:min(want, len(try))]
		var err error
		taken, err = o.sess.Take(sctx, try, now)
		if err != nil {
			return err
		}
		o.owned = append(o.owned, taken...)
		slices.Sort(o.owned)
	}
	if o.r.fleet != nil {
		o.askShare(len(o.owned) < target)
	}
	switch {
	case len(o.owned) < target && o.hungry > 0:
		o.hungry--
	case len(o.owned) >= target:
		o.hungry = 0
	}
	if len(o.owned) < target && o.hungry == 0 && !grabAll {
		o.hungry = hungryFor * int(cfg.RebalanceInterval/hungryInterval)
		o.hungryGap = hungryFirst
	}
	// Give surplus back only to relays that want it.
	deficit := 0
	for i, t := range v.Relays {
		if t == token {
			continue
		}
		tt := o.parts / n
		if i < o.parts%n {
			tt++
		}
		deficit += max(tt-load[t], 0)
	}
	var release []int
	if surplus := len(o.owned) - target; surplus > 0 && deficit > 0 {
		k := min(surplus, deficit)
		release = slices.Clone(o.owned[len(o.owned)-k:])
		o.owned = o.owned[:len(o.owned)-k]
	}
	if len(taken) > 0 || len(release) > 0 {
		cfg.Logger.DebugContext(ctx, "jitoutbox relay: ownership changed", "owner", cfg.Owner, "token", token,
			"taken", taken, "released", release, "owned", o.owned, "relays", v.Relays)
	}
	if err := o.publish(ctx); err != nil {
		return err
	}
	if len(release) > 0 {
		if err := o.sess.Release(sctx, release); err != nil {
			return err
		}
	}
	o.nudgeShort(sctx, len(release) > 0, len(free) > len(taken) && deficit > 0)
	return nil
}

// follow starts the looks of a fleet table told that a relay left. The
// anchor table's watch saw the relay leave, but this table's session of
// that relay may close later: a relay stops its own anchor last, and the
// two relays' anchors differ when their Tables lists do, or when a table
// found by pattern sorts before an anchor chosen earlier. Until this
// table's view shows fewer relays than before, it looks again and takes
// every free partition (followLooks looks at most), instead of waiting
// for its next unprompted rebalance (fleetRebalanceEvery).
func (o *owner) follow() {
	if o.follows == 0 {
		o.followN = o.relaysN
	}
	o.follows, o.followGap = followLooks, followFirst
}

// askShare (a fleet table) asks the other relays for this table's share
// while it is short of it: they hold it but, watching only the anchor
// table, did not see this table's session open. The fleet nudges them
// through the anchor. A nudge reaches only a wait in progress, and the
// other relay's anchor may be between two waits, so a table still short
// asks again after askFirst, then twice as long each time up to askMax
// (step looks again then). A table short with free partitions left asks
// too: it lost the take of some to a relay releasing them (MySQL clears
// the owner before it frees the lock), and must look again.
func (o *owner) askShare(short bool) {
	if !short {
		o.asks, o.askAt = 0, time.Time{}
		return
	}
	now := time.Now()
	if now.Before(o.askAt) {
		return
	}
	signal(o.r.fleet.db.nudge)
	o.askAt = now.Add(min(askFirst<<min(o.asks, 16), askMax))
	o.asks++
}

// nudgeShort tells the other relays to look at ownership when this relay
// released partitions another is short of, or left free partitions that
// another is short of (it saw a relay leave before that relay's watcher
// did): the relays short of their share are not watching this one (a ring
// watches one relay each), and would otherwise wait for their next
// rebalance. A nudge reaches only a wait in progress, so while partitions
// stay free that another relay is short of, it nudges again at its next
// looks, giftNudges times at most until that clears.
func (o *owner) nudgeShort(ctx context.Context, released, leftFree bool) {
	switch {
	case !released && !leftFree:
		o.gifts, o.gifting = 0, false
		return
	case released || !o.gifting:
		o.gifting, o.gifts, o.giftGap = true, giftNudges, giftFirst
	case o.gifts == 0:
		return
	default:
		o.gifts--
	}
	if f := o.r.fleet; f != nil && !f.anchor.Load() {
		signal(f.db.nudge) // the others watch the anchor table only
		return
	}
	_ = o.sess.Nudge(ctx) // best effort
}

// publish hands a changed owned set to the publish loop and waits until it
// applies (after its batch in flight: a released partition has nothing in
// flight).
func (o *owner) publish(ctx context.Context) error {
	if o.sent != nil && slices.Equal(o.sent, o.owned) {
		return nil
	}
	o.sent = slices.Clone(o.owned)
	u := ownUpdate{active: slices.Clone(o.owned), done: make(chan struct{})}
	if o.sess != nil {
		u.token = o.sess.Token()
	}
	select {
	case o.updates <- u:
	case <-ctx.Done():
		return ctx.Err()
	case <-o.loopDone:
		return errors.New("relay stopped")
	}
	select {
	case <-u.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-o.loopDone:
		return errors.New("relay stopped")
	}
}

// watch (re)starts the goroutine that waits for a watched relay to leave,
// when the set of live relays changed.
func (o *owner) watch(ctx context.Context, v dialects.View) {
	if slices.Equal(v.Relays, o.watchFor) && o.stopW != nil {
		select {
		case <-o.watchEnd: // it returned (a change it saw): watch again
		default:
			return
		}
	}
	o.stopWatch()
	o.watchFor = slices.Clone(v.Relays)
	wctx, cancel := context.WithCancel(ctx)
	o.stopW = cancel
	sess := o.sess
	end := make(chan struct{})
	o.watchEnd = end
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		tell := o.waitChange(wctx, sess, v)
		// Ended before it tells: the rebalance a signal starts must find
		// this watcher ended (watchEnd closed) to start the next one, else
		// the change seen here would leave the relay unwatched until its
		// next unprompted rebalance.
		close(end)
		for _, c := range tell {
			signal(c)
		}
	}()
}

// waitChange waits, until wctx ends, for a change of the live relays from
// v, and returns the channels to signal for it: the owner's and, in a
// fleet, the fleet's.
func (o *owner) waitChange(wctx context.Context, sess dialects.Session, v dialects.View) []chan struct{} {
	f := o.r.fleet
	for wctx.Err() == nil {
		err := sess.WaitChange(wctx, v)
		switch {
		case errors.Is(err, dialects.ErrWaitUnsupported), wctx.Err() != nil:
			return nil
		case errors.Is(err, dialects.ErrRelaysChanged):
			// A relay joined: rebalance and watch again, and so do the
			// fleet's other tables.
			if f != nil {
				return []chan struct{}{o.changeSig, f.db.joined}
			}
			return []chan struct{}{o.changeSig}
		case err != nil:
			t := time.NewTimer(time.Second)
			select {
			case <-wctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
			continue
		}
		// A relay left: take its partitions now; the next rebalance
		// watches the new relay set.
		if f != nil {
			return []chan struct{}{o.watchSig, f.db.left}
		}
		return []chan struct{}{o.watchSig}
	}
	return nil
}

// tellFleet (a fleet's anchor table) tells the fleet's other tables of a
// relay that left or joined since the anchor's last view, which its watch
// did not report: a relay that left or joined while the watch was being
// restarted (after a kick) is seen only here.
func (o *owner) tellFleet(relays []string) {
	f := o.r.fleet
	if f == nil {
		return
	}
	if o.seen != nil {
		for _, t := range o.seen {
			if !slices.Contains(relays, t) {
				signal(f.db.left)
				break
			}
		}
		for _, t := range relays {
			if !slices.Contains(o.seen, t) {
				signal(f.db.joined)
				break
			}
		}
	}
	o.seen = slices.Clone(relays)
}

// fleetSessionTimeout bounds a session call of a fleet table.
const fleetSessionTimeout = 30 * time.Second

// sessCtx returns the context of a session call: detached from the run's
// cancellation, so that a stop never cuts a call short. Drivers close a
// connection whose statement's context ends (go-sql-driver/mysql and pgx
// both do), and the session's locks end with its connection: cut by the
// stop, a call would free the partitions at once, before the batch in
// flight is marked, and another relay would take them, see its rows
// pending and publish them again (the stopping relay's mark is then fenced
// off). The owner sees the stop once the call returns, and ends the
// session only after the publish loop marked what it published
// (closeSession). A fleet table's session also shares its lock connection
// with the database's other tables, whose ownership would end with it; its
// calls are bounded by fleetSessionTimeout, the others' by finishTimeout,
// and the stop waits for them.
func (o *owner) sessCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := finishTimeout
	if o.r.fleet != nil {
		limit = fleetSessionTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), limit)
}

// stopWatch stops the current watcher, if any, and waits for it: one
// watcher at a time, they share the session's watch connection.
func (o *owner) stopWatch() {
	if o.stopW != nil {
		o.stopW()
		o.stopW = nil
		o.wg.Wait()
	}
	o.watchFor = nil
}

// closeSession tells the publish loop to stop publishing, waits for its
// batch in flight, and ends the session (its partitions are free at once).
func (o *owner) closeSession() {
	if o.sess == nil {
		return
	}
	o.stopWatch()
	o.owned = []int{}
	select {
	case <-o.loopDone:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
		_ = o.publish(ctx)
		cancel()
	}
	o.sent = nil
	if err := o.sess.Close(); err != nil {
		o.r.cfg.Logger.Warn("jitoutbox relay: closing the ownership session failed; its partitions are free once its connection or lease ends",
			"owner", o.r.cfg.Owner, "err", err)
	}
	o.sess, o.watchFor, o.seen = nil, nil, nil
}
