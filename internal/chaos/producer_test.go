package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// payload is the body of every event: its tenant ("" in a run of one
// table), its aggregate and its number within the aggregate of that tenant
// (1, 2, ... in registration order).
type payload struct {
	Tenant string `json:"tenant,omitempty"`
	Agg    string `json:"agg"`
	Seq    int64  `json:"seq"`
	Tx     string `json:"tx"`
}

// aggKey names an aggregate across tenants: tenants have the same
// aggregate ids, each with its own order.
func aggKey(tenant, agg string) string {
	if tenant == "" {
		return agg
	}
	return tenant + "/" + agg
}

// evRef is what the ledger knows about one event.
type evRef struct {
	tenant string
	agg    string
	seq    int64
	tx     string
	at     time.Time // when Commit returned (zero for an uncertain commit)
	// critical: the event's transaction was time-critical.
	critical bool
}

// ledger records what the producers did. It is safe for concurrent use.
type ledger struct {
	mu         sync.Mutex
	committed  map[string]evRef    // event id -> event, commit succeeded
	rolledBack map[string]evRef    // event id -> event, rolled back on purpose
	uncertain  map[string][]string // tx id -> event ids, Commit returned an error
	uncertainE map[string]evRef    // event id -> event of an uncertain tx
	txCommit   int
	txRollback int
	critical   int
	failed     errCount // unexpected producer errors
	// Errors of a database the run restarts: the transaction is retried.
	retried errCount

	reserved atomic.Int64 // events handed out to producers
}

func newLedger() *ledger {
	return &ledger{committed: map[string]evRef{}, rolledBack: map[string]evRef{},
		uncertain: map[string][]string{}, uncertainE: map[string]evRef{}}
}

// errCount counts errors and keeps the first few.
type errCount struct {
	n     int
	first []error
}

func (c *errCount) add(err error) {
	c.n++
	if len(c.first) < 5 {
		c.first = append(c.first, err)
	}
}

// fail records an unexpected producer error.
func (l *ledger) fail(err error) { l.note(err, false) }

// note records a producer error: one after which the transaction is
// retried (the database is being restarted) with retried, else an
// unexpected one.
func (l *ledger) note(err error, retried bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if retried {
		l.retried.add(err)
	} else {
		l.failed.add(err)
	}
}

// producer commits transactions on the aggregates it owns (aggregate i
// of every tenant belongs to producer i % producers), so the per-aggregate
// numbering is the registration order. Each transaction writes to one
// tenant, drawn among those that exist at its start.
type producer struct {
	id       int
	tenants  *tenantSet
	db       *sql.DB
	bind     func(n int) string // placeholder n (1-based)
	aggs     []string
	next     map[string]int64 // aggKey -> last number handed out
	rng      *rand.Rand
	ledger   *ledger
	total    int64
	duration time.Duration
	start    time.Time
	// retry: errors before Commit are expected (the run restarts the
	// database) and the transaction is tried again.
	retry bool
}

func newProducer(id int, tenants *tenantSet, db *sql.DB, bind func(int) string, s size, seed int64, l *ledger, start time.Time, retry bool) *producer {
	p := &producer{id: id, tenants: tenants, db: db, bind: bind, next: map[string]int64{}, ledger: l, retry: retry,
		rng: rand.New(rand.NewPCG(uint64(seed), uint64(id))), total: int64(s.events), duration: s.duration, start: start}
	for a := id; a < s.aggregates; a += s.producers {
		p.aggs = append(p.aggs, fmt.Sprintf("a%04d", a))
	}
	return p
}

// run commits until the ledger has handed out every event or ctx ends.
func (p *producer) run(ctx context.Context) {
	for ctx.Err() == nil {
		n := 1 + p.rng.IntN(4)
		end := p.ledger.reserved.Add(int64(n))
		if end-int64(n) >= p.total {
			return
		}
		if !p.pace(ctx, end) {
			return
		}
		for p.one(ctx, n) && ctx.Err() == nil {
			pause(ctx, 50*time.Millisecond) // the database is down: try again
		}
	}
}

// failed handles an error before Commit: with retry, it is recorded and
// one reports true (try again); otherwise it is a producer failure.
func (p *producer) failed(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	p.ledger.note(err, p.retry)
	return p.retry
}

// pace waits until the run's schedule reaches event number end (spreading
// the commits over the run's duration; pacing only, not correctness).
func (p *producer) pace(ctx context.Context, end int64) bool {
	if p.duration <= 0 {
		return true
	}
	// Bursts: each chunk of events is due at once, so the relays are busy
	// (claiming, publishing, marking) when faults hit them.
	chunk := max(p.total/40, 100)
	due := min(end, p.total) / chunk * chunk
	at := p.start.Add(time.Duration(float64(p.duration) * float64(due) / float64(p.total)))
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// one runs one transaction with n events: 10% are rolled back on purpose,
// 20% are time-critical. It reports whether the transaction failed before
// Commit and is to be tried again.
func (p *producer) one(ctx context.Context, n int) (again bool) {
	tn := p.tenants.pick(p.rng)
	agg := p.aggs[p.rng.IntN(len(p.aggs))]
	key := aggKey(tn.name, agg)
	rollback := p.rng.IntN(10) == 0
	var opts []txoutbox.TxOption
	critical := p.rng.IntN(5) == 0
	if critical {
		opts = append(opts, txoutbox.TimeCritical())
	}
	txID := fmt.Sprintf("p%d-%d-%s", p.id, p.next[key], key)
	tx, err := tn.ob.Begin(ctx, nil, opts...)
	if err != nil {
		return p.failed(ctx, fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback()
	txID = fmt.Sprintf("%s-%d", txID, p.rng.Int64())
	q := fmt.Sprintf("INSERT INTO chaos_orders (tx_id, agg, events) VALUES (%s, %s, %s)", p.bind(1), p.bind(2), p.bind(3))
	if _, err := tx.ExecContext(ctx, q, txID, agg, n); err != nil {
		return p.failed(ctx, fmt.Errorf("business row: %w", err))
	}
	ids := make([]string, 0, n)
	refs := make([]evRef, 0, n)
	for i := range n {
		seq := p.next[key] + int64(i) + 1
		body, _ := json.Marshal(payload{Tenant: tn.name, Agg: agg, Seq: seq, Tx: txID})
		id, err := tx.Add(txoutbox.Event{AggregateType: "order", AggregateID: agg, EventType: "order.changed", Payload: body})
		if err != nil {
			p.ledger.fail(fmt.Errorf("add: %w", err)) // no database involved: never expected
			return false
		}
		ids = append(ids, id)
		refs = append(refs, evRef{tenant: tn.name, agg: agg, seq: seq, tx: txID, critical: critical})
	}
	l := p.ledger
	if rollback {
		if err := tx.Rollback(); err != nil {
			// A rollback that fails (the connection died with the
			// database) leaves the transaction rolled back all the same.
			l.note(fmt.Errorf("rollback: %w", err), p.retry)
		}
		l.mu.Lock()
		for i, id := range ids {
			l.rolledBack[id] = refs[i]
		}
		l.txRollback++
		l.mu.Unlock()
		return false // the numbers are reused by the next transaction
	}
	err = tx.Commit()
	p.next[key] += int64(n) // an uncertain commit leaves a gap, never a reuse
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Whatever the error (a failed flush, a lost COMMIT answer), the
		// business row tells at the end whether the events committed.
		l.uncertain[txID] = ids
		for i, id := range ids {
			l.uncertainE[id] = refs[i]
		}
		return false
	}
	now := time.Now()
	for i, id := range ids {
		refs[i].at = now
		l.committed[id] = refs[i]
	}
	l.txCommit++
	if critical {
		l.critical++
	}
	return false
}

// resolve moves the events of uncertain transactions (Commit returned an
// error) to committed or rolled back by looking for their business rows.
func (l *ledger) resolve(ctx context.Context, db *sql.DB, bind func(int) string) (committed, rolledBack int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for txID, ids := range l.uncertain {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM chaos_orders WHERE tx_id = "+bind(1), txID).Scan(&n)
		if err != nil {
			return committed, rolledBack, fmt.Errorf("resolve %s: %w", txID, err)
		}
		for _, id := range ids {
			if n > 0 {
				l.committed[id] = l.uncertainE[id]
			} else {
				l.rolledBack[id] = l.uncertainE[id]
			}
		}
		if n > 0 {
			committed++
		} else {
			rolledBack++
		}
	}
	return committed, rolledBack, nil
}
