package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// maxVariables is SQLITE_MAX_VARIABLE_NUMBER of modern SQLite builds
// (including modernc.org/sqlite).
const maxVariables = 32766

// Dialect is the SQLite implementation of dialects.Dialect. It is safe for
// concurrent use.
type Dialect struct {
	table  string
	schema string
	insert *sqlkit.InsertBuilder
	insp   *sqlkit.Inspector // the Inspector methods' statements

	leased *sqlkit.InsertBuilder // insert_leased.sql, insert_row.sql rows, insert_leased_tail.sql

	claim, claimIDs, claimWindow, markPublished, del, fail, release string
	requeueIDs, requeueAggregate, requeueAll                        string
	cleanup, tryLock, stats                                         string
}

var (
	_ dialects.Dialect         = (*Dialect)(nil)
	_ dialects.LeasingInserter = (*Dialect)(nil)
)

// New returns a SQLite dialect for the table named by WithTable (default
// dialects.DefaultTable).
func New(opts ...Option) (*Dialect, error) {
	c := config{table: dialects.DefaultTable}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	d := &Dialect{table: c.table}
	load := func(name string) string {
		b, err := sqlFiles.ReadFile("sql/" + name)
		if err != nil {
			panic("jitoutbox/sqlite: missing embedded " + name) // build-time invariant
		}
		return sqlkit.Render(string(b), c.table)
	}
	d.schema = load("schema.sql")
	d.insert = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"),
		sqlkit.QuestionMark)
	d.leased = sqlkit.NewInsertBuilder(load("insert_leased.sql"), load("insert_row.sql"),
		sqlkit.QuestionMark).WithTail(load("insert_leased_tail.sql"))
	d.claim = load("claim.sql")
	d.claimIDs = load("claim_ids.sql")
	d.claimWindow = load("claim_window.sql")
	d.markPublished = load("mark_published.sql")
	d.del = load("delete.sql")
	d.fail = load("fail.sql")
	d.release = load("release.sql")
	d.requeueIDs = load("requeue_ids.sql")
	d.requeueAggregate = load("requeue_aggregate.sql")
	d.requeueAll = load("requeue_all.sql")
	d.cleanup = load("cleanup.sql")
	d.tryLock = load("trylock.sql")
	d.stats = load("stats.sql")
	insp, err := d.newInspector()
	if err != nil {
		return nil, err
	}
	d.insp = insp
	return d, nil
}

// micros converts a time to the stored form: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// Name returns "sqlite".
func (d *Dialect) Name() string { return "sqlite" }

// Table returns the outbox table name.
func (d *Dialect) Table() string { return d.table }

// Schema returns the DDL that Migrate applies, statements separated by ";\n".
func (d *Dialect) Schema() string { return d.schema }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxVariables / d.insert.Columns() }

// Migrate applies Schema; it is idempotent.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	for _, stmt := range sqlkit.SplitStatements(d.schema) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jitoutbox/sqlite: migrate: %w", err)
		}
	}
	return nil
}

// Insert writes events with as few multi-row INSERTs as the parameter limit
// allows, in slice order.
func (d *Dialect) Insert(ctx context.Context, q dialects.Execer, events []dialects.Event) error {
	max := d.MaxInsertRows()
	for len(events) > 0 {
		n := min(len(events), max)
		args, err := d.insertArgs(events[:n], 0)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("jitoutbox/sqlite: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return nil
}

// insertArgs returns the bind arguments of events' rows, with room for
// extra more.
func (d *Dialect) insertArgs(events []dialects.Event, extra int) ([]any, error) {
	args := make([]any, 0, len(events)*d.insert.Columns()+extra)
	for i := range events {
		e := &events[i]
		h, err := sqlkit.EncodeHeaders(e.Headers)
		if err != nil {
			return nil, err
		}
		created := micros(sqlkit.UTC(e.CreatedAt))
		crit := 0
		if e.Critical {
			crit = 1
		}
		args = append(args, e.ID, e.AggregateType, e.AggregateID, e.EventType, sqlkit.Payload(e.Payload),
			e.ContentType, h, sqlkit.NullString(e.IdempotencyKey), crit, created, created)
	}
	return args, nil
}

// InsertLeased writes events with one INSERT and leases to owner, until
// leaseUntil, each event whose aggregate has no pending row
// (insert_leased.sql). It returns the leased events as records in Seq
// order. Events that do not fit in one statement are written by Insert,
// unleased.
func (d *Dialect) InsertLeased(ctx context.Context, q dialects.Querier, events []dialects.Event, owner string, leaseUntil time.Time) ([]dialects.Record, error) {
	n := len(events)
	if n == 0 {
		return nil, nil
	}
	if n*d.insert.Columns()+2 > maxVariables {
		return nil, d.Insert(ctx, q, events)
	}
	args, err := d.insertArgs(events, 2)
	if err != nil {
		return nil, err
	}
	args = append(args, owner, micros(sqlkit.UTC(leaseUntil)))
	rows, err := q.QueryContext(ctx, d.leased.SQL(n), args...)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/sqlite: insert %d events: %w", n, err)
	}
	recs, err := sqlkit.LeasedRecords(rows, events)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/sqlite: insert %d events: %w", n, err)
	}
	return recs, nil
}

// Claim leases up to req.Limit claimable rows to req.Owner in one statement.
func (d *Dialect) Claim(ctx context.Context, db *sql.DB, req dialects.ClaimRequest) ([]dialects.Record, error) {
	if req.Limit <= 0 {
		return nil, nil
	}
	args := []any{req.Owner, micros(req.LeaseUntil), micros(req.Now), req.Limit}
	query := d.claim
	if len(req.IDs) > 0 {
		ids, err := sqlkit.JSONStrings(req.IDs)
		if err != nil {
			return nil, err
		}
		args = append(args, ids)
		query = d.claimIDs
	} else if req.Window > 0 {
		args = append(args, req.Window)
		query = d.claimWindow
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/sqlite: claim: %w", err)
	}
	recs, err := sqlkit.ScanRecords(rows, false, req.Limit)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/sqlite: claim: %w", err)
	}
	return recs, nil
}

// affected returns a function that turns an Exec result into a row count,
// wrapping errors with op.
func affected(op string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) {
		return count(op, res, err)
	}
}

func count(op string, res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, fmt.Errorf("jitoutbox/sqlite: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("jitoutbox/sqlite: %s: rows affected: %w", op, err)
	}
	return n, nil
}

// MarkPublished marks seqs leased by owner as published at `at`.
func (d *Dialect) MarkPublished(ctx context.Context, db *sql.DB, owner string, seqs []int64, at time.Time) (int64, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	return affected("mark published")(db.ExecContext(ctx, d.markPublished, micros(sqlkit.UTC(at)), sqlkit.JSONInts(seqs), owner))
}

// Delete deletes seqs leased by owner.
func (d *Dialect) Delete(ctx context.Context, db *sql.DB, owner string, seqs []int64) (int64, error) {
	if len(seqs) == 0 {
		return 0, nil
	}
	return affected("delete")(db.ExecContext(ctx, d.del, sqlkit.JSONInts(seqs), owner))
}

// Fail records failed attempts in one transaction and releases the leases.
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, owner string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jitoutbox/sqlite: fail: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for _, f := range failures {
		state := dialects.StatePending
		if f.Dead {
			state = dialects.StateDead
		}
		if _, err := tx.ExecContext(ctx, d.fail, sqlkit.TruncateError(f.Error), micros(sqlkit.UTC(f.NextAttemptAt)),
			int(state), f.Seq, owner); err != nil {
			return fmt.Errorf("jitoutbox/sqlite: fail seq %d: %w", f.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jitoutbox/sqlite: fail: commit: %w", err)
	}
	return nil
}

// Release gives back leases held by owner; the rows become claimable at
// notBefore (zero: at once).
func (d *Dialect) Release(ctx context.Context, db *sql.DB, owner string, seqs []int64, notBefore time.Time) error {
	if len(seqs) == 0 {
		return nil
	}
	var nb any
	if !notBefore.IsZero() {
		nb = micros(sqlkit.UTC(notBefore))
	}
	_, err := affected("release")(db.ExecContext(ctx, d.release, nb, sqlkit.JSONInts(seqs), owner))
	return err
}

// Requeue moves dead rows selected by f back to pending.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	n := micros(sqlkit.UTC(now))
	switch sel {
	case sqlkit.SelectIDs:
		ids, err := sqlkit.JSONStrings(f.IDs)
		if err != nil {
			return 0, err
		}
		return affected("requeue")(db.ExecContext(ctx, d.requeueIDs, n, ids))
	case sqlkit.SelectAggregate:
		return affected("requeue")(db.ExecContext(ctx, d.requeueAggregate, n, f.AggregateType, f.AggregateID))
	default:
		return affected("requeue")(db.ExecContext(ctx, d.requeueAll, n))
	}
}

// Cleanup deletes up to limit rows published before `before`.
func (d *Dialect) Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("cleanup")(db.ExecContext(ctx, d.cleanup, micros(sqlkit.UTC(before)), limit))
}

// TryLock takes or renews the named lease for owner.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	var got string
	err := db.QueryRowContext(ctx, d.tryLock, name, owner, micros(sqlkit.UTC(now)), micros(sqlkit.UTC(until))).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("jitoutbox/sqlite: trylock %q: %w", name, err)
	}
	return got == owner, nil
}

// Stats reads counts and the oldest pending time in one query.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	var s dialects.Stats
	var oldest sqlkit.NullTime
	if err := db.QueryRowContext(ctx, d.stats).Scan(&s.Pending, &s.Dead, &s.Published, &oldest); err != nil {
		return s, fmt.Errorf("jitoutbox/sqlite: stats: %w", err)
	}
	s.OldestPending = oldest.Time
	return s, nil
}
