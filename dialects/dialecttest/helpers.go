package dialecttest

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/uuid7"
)

// env is one subtest's database, dialect, clock and id generator.
type env struct {
	t    testing.TB
	ctx  context.Context
	db   *sql.DB
	d    dialects.Dialect
	base time.Time
	ids  *uuid7.Generator
}

func setup(t testing.TB, tgt Target) *env {
	t.Helper()
	d, err := tgt.New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return setupWith(t, tgt, d)
}

func setupWith(t testing.TB, tgt Target, d dialects.Dialect) *env {
	t.Helper()
	db := tgt.Open(t)
	ctx := t.Context()
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return &env{
		t:    t,
		ctx:  ctx,
		db:   db,
		d:    d,
		base: setupBase(),
		ids:  newGen(),
	}
}

// at returns base + d.
func (e *env) at(d time.Duration) time.Time { return e.base.Add(d) }

// event returns a minimal event of aggregate agg created at base.
func (e *env) event(aggType, aggID string) dialects.Event {
	return dialects.Event{
		ID:            e.ids.New(time.Now()).String(),
		AggregateType: aggType,
		AggregateID:   aggID,
		EventType:     aggType + ".happened",
		Payload:       []byte("p"),
		ContentType:   "text/plain",
		CreatedAt:     e.base,
	}
}

// events returns one event per aggregate id, all of type "agg".
func (e *env) events(aggIDs ...string) []dialects.Event {
	out := make([]dialects.Event, len(aggIDs))
	for i, a := range aggIDs {
		out[i] = e.event("agg", a)
	}
	return out
}

// insert writes evs in one committed transaction.
func (e *env) insert(evs ...dialects.Event) {
	e.t.Helper()
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatalf("begin: %v", err)
	}
	if err := e.d.Insert(e.ctx, tx, evs); err != nil {
		_ = tx.Rollback()
		e.t.Fatalf("Insert: %v", err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatalf("commit: %v", err)
	}
}

// claim claims at base+now with a one-hour lease.
func (e *env) claim(owner string, limit int, now time.Duration, ids ...string) []dialects.Record {
	e.t.Helper()
	recs, err := e.d.Claim(e.ctx, e.db, dialects.ClaimRequest{
		Owner: owner, Limit: limit, Now: e.at(now), LeaseUntil: e.at(now + time.Hour), IDs: ids,
	})
	if err != nil {
		e.t.Fatalf("Claim(%s): %v", owner, err)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i-1].Seq >= recs[i].Seq {
			e.t.Fatalf("Claim(%s) not in Seq order: %d then %d", owner, recs[i-1].Seq, recs[i].Seq)
		}
	}
	return recs
}

func (e *env) stats() dialects.Stats {
	e.t.Helper()
	s, err := e.d.Stats(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	return s
}

// ph renders the n-th (1-based) bind parameter for raw test queries.
func (e *env) ph(n int) string {
	if e.d.Name() == "postgres" {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// row reads attempts, state and last_error of one seq with plain SQL.
func (e *env) row(seq int64) (attempts int, state dialects.State, lastError sql.NullString) {
	e.t.Helper()
	q := fmt.Sprintf("SELECT attempts, state, last_error FROM %s WHERE seq = %s", e.d.Table(), e.ph(1))
	if err := e.db.QueryRowContext(e.ctx, q, seq).Scan(&attempts, &state, &lastError); err != nil {
		e.t.Fatalf("read seq %d: %v", seq, err)
	}
	return attempts, state, lastError
}

func ids(recs []dialects.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func seqs(recs []dialects.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

func aggIDs(recs []dialects.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.AggregateID
	}
	return out
}

func eventIDs(evs []dialects.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func wantAggs(t testing.TB, what string, recs []dialects.Record, want ...string) {
	t.Helper()
	if got := aggIDs(recs); !equalStrings(got, want) {
		t.Fatalf("%s: got aggregates %q, want %q", what, got, want)
	}
}

func wantN(t testing.TB, what string, got int64, err error, want int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s: got %d, want %d", what, got, want)
	}
}

func setupBase() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC) }

func newGen() *uuid7.Generator { return &uuid7.Generator{} }
