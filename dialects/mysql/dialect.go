package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

const (
	// maxParams is the MySQL/MariaDB prepared-statement parameter limit.
	maxParams = 65535
	// maxList is the most seqs or ids expanded into one IN (...) list;
	// larger batches are split.
	maxList = 10000
)

// Dialect is the MySQL / MariaDB implementation of dialects.Dialect. It is
// safe for concurrent use.
type Dialect struct {
	table  string
	schema string
	insert *sqlkit.InsertBuilder
	insp   *sqlkit.Inspector // the Inspector methods' statements
	stmts  sqlkit.StmtCache  // the claim's fixed statements, prepared once

	claimProbe, claimLock, claimSelect, claimSelectIDs, claimSelectWindow, claimUpdate, claimRead string
	claimWindowScan                                                                               string
	markPublished, del, fail, release                                                             string
	requeueIDs, requeueAggregate, requeueAll                                                      string
	cleanup, tryLockEnsure, tryLock, tryLockRead, stats                                           string
}

var _ dialects.Dialect = (*Dialect)(nil)

// New returns a MySQL / MariaDB dialect for the table named by WithTable
// (default dialects.DefaultTable).
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
			panic("jitoutbox/mysql: missing embedded " + name) // build-time invariant
		}
		return sqlkit.Render(string(b), c.table)
	}
	d.schema = load("schema.sql")
	d.insert = sqlkit.NewInsertBuilder(load("insert.sql"), load("insert_row.sql"), sqlkit.QuestionMark)
	d.claimLock = load("claim_lock.sql")
	d.claimProbe = load("claim_probe.sql")
	d.claimSelect = load("claim_select.sql")
	d.claimSelectIDs = load("claim_select_ids.sql")
	d.claimSelectWindow = load("claim_select_window.sql")
	d.claimUpdate = load("claim_update.sql")
	d.claimRead = load("claim_read.sql")
	d.claimWindowScan = load("claim_window_scan.sql")
	d.markPublished = load("mark_published.sql")
	d.del = load("delete.sql")
	d.fail = load("fail.sql")
	d.release = load("release.sql")
	d.requeueIDs = load("requeue_ids.sql")
	d.requeueAggregate = load("requeue_aggregate.sql")
	d.requeueAll = load("requeue_all.sql")
	d.cleanup = load("cleanup.sql")
	d.tryLockEnsure = load("trylock_ensure.sql")
	d.tryLock = load("trylock.sql")
	d.tryLockRead = load("trylock_read.sql")
	d.stats = load("stats.sql")
	insp, err := d.newInspector()
	if err != nil {
		return nil, err
	}
	d.insp = insp
	return d, nil
}

// Name returns "mysql".
func (d *Dialect) Name() string { return "mysql" }

// Table returns the outbox table name.
func (d *Dialect) Table() string { return d.table }

// Schema returns the DDL that Migrate applies, statements separated by ";\n".
func (d *Dialect) Schema() string { return d.schema }

// MaxInsertRows is the most events one INSERT carries.
func (d *Dialect) MaxInsertRows() int { return maxParams / d.insert.Columns() }

// Migrate applies Schema statement by statement; it is idempotent.
func (d *Dialect) Migrate(ctx context.Context, db *sql.DB) error {
	for _, stmt := range sqlkit.SplitStatements(d.schema) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jitoutbox/mysql: migrate: %w", err)
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
		args := make([]any, 0, n*d.insert.Columns())
		for i := range events[:n] {
			e := &events[i]
			h, err := sqlkit.EncodeHeaders(e.Headers)
			if err != nil {
				return err
			}
			created := sqlkit.UTC(e.CreatedAt)
			args = append(args, e.ID, e.AggregateType, e.AggregateID, e.EventType, sqlkit.Payload(e.Payload),
				e.ContentType, h, sqlkit.NullString(e.IdempotencyKey), e.Critical, created, created)
		}
		if _, err := q.ExecContext(ctx, d.insert.SQL(n), args...); err != nil {
			return fmt.Errorf("jitoutbox/mysql: insert %d events: %w", n, err)
		}
		events = events[n:]
	}
	return nil
}

// scanWindow is the first attempt of a scan claim, in batches: the hold-back
// rule is applied to the first scanWindow*Limit pending rows
// (claim_window_scan.sql).
const scanWindow = 2

// claimByWindow is the scan claim's first attempt, in tx after the claim
// lock: it reads the keys of the first scanWindow*req.Limit pending rows,
// picks in one pass the rows the hold-back rule lets through, leases them
// and reads them back. done is false when it found nothing to claim in a
// full window (claimable rows may lie beyond it): the caller then runs the
// full claim. With nothing pending past the window, an empty claim is done.
func (d *Dialect) claimByWindow(ctx context.Context, db *sql.DB, tx *sql.Tx, req dialects.ClaimRequest, now, until time.Time) (recs []dialects.Record, done bool, err error) {
	window := scanWindow * req.Limit
	sel, err := d.stmts.Stmt(ctx, db, d.claimWindowScan)
	if err != nil {
		return nil, false, fmt.Errorf("jitoutbox/mysql: claim: prepare: %w", err)
	}
	rows, err := tx.StmtContext(ctx, sel).QueryContext(ctx, now, now, window)
	if err != nil {
		return nil, false, fmt.Errorf("jitoutbox/mysql: claim: window: %w", err)
	}
	seqs, seen, err := pickClaimable(rows, req.Limit)
	if err != nil {
		return nil, false, fmt.Errorf("jitoutbox/mysql: claim: window: %w", err)
	}
	if len(seqs) == 0 {
		return nil, seen < window, nil
	}
	if _, err := d.lease(ctx, tx, req.Owner, seqs, now, until); err != nil {
		return nil, false, err
	}
	if recs, err = d.readLeased(ctx, tx, req.Owner, seqs, until); err != nil {
		return nil, false, err
	}
	return recs, true, nil
}

// lease leases to owner, until `until`, those of the rows seqs that are
// still claimable at now (claim_update.sql) and returns how many it leased.
func (d *Dialect) lease(ctx context.Context, tx *sql.Tx, owner string, seqs []int64, now, until time.Time) (int64, error) {
	args := make([]any, 0, len(seqs)+3)
	args = append(args, owner, until)
	for _, s := range seqs {
		args = append(args, s)
	}
	args = append(args, now)
	res, err := tx.ExecContext(ctx, expand(d.claimUpdate, "{{seqs}}", len(seqs)), args...)
	if err != nil {
		return 0, fmt.Errorf("jitoutbox/mysql: claim: lease: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("jitoutbox/mysql: claim: lease: %w", err)
	}
	return n, nil
}

// readLeased reads back those of the rows seqs that carry the lease this
// claim just wrote (claim_read.sql), in Seq order.
func (d *Dialect) readLeased(ctx context.Context, tx *sql.Tx, owner string, seqs []int64, until time.Time) ([]dialects.Record, error) {
	args := make([]any, 0, len(seqs)+2)
	for _, s := range seqs {
		args = append(args, s)
	}
	args = append(args, owner, until)
	rows, err := tx.QueryContext(ctx, expand(d.claimRead, "{{seqs}}", len(seqs)), args...)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: read: %w", err)
	}
	recs, err := sqlkit.ScanRecords(rows, false, len(seqs))
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: %w", err)
	}
	return recs, nil
}

// pickClaimable reads (seq, aggregate_type, aggregate_id, busy) rows in seq
// order and returns the seqs of up to limit claimable ones, and how many
// rows it read (all of them when it found fewer than limit): a row is
// claimable unless it is busy (leased or not yet due) or an earlier row of
// its aggregate was. It closes rows.
func pickClaimable(rows *sql.Rows, limit int) (seqs []int64, seen int, err error) {
	defer rows.Close()
	// Aggregates held back, keyed by type NUL id. Type and id are scanned
	// as RawBytes and looked up through a reused buffer: no allocation per
	// row, only per held-back aggregate.
	held := make(map[string]struct{})
	var (
		seq     int64
		typ, id sql.RawBytes
		busy    bool
		key     []byte
		dest    = []any{&seq, &typ, &id, &busy}
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, 0, err
		}
		seen++
		key = append(append(append(key[:0], typ...), 0), id...)
		if _, ok := held[string(key)]; ok {
			continue
		}
		if busy {
			held[string(key)] = struct{}{}
			continue
		}
		seqs = append(seqs, seq)
		if len(seqs) == limit {
			break
		}
	}
	return seqs, seen, rows.Err()
}

// expand replaces token in query with n placeholders.
func expand(query, token string, n int) string {
	return strings.Replace(query, token, sqlkit.Placeholders(n), -1)
}

// Claim leases up to req.Limit claimable rows to req.Owner. In one READ
// COMMITTED transaction it locks the claim row, selects the candidates from
// the latest committed data, leases those still claimable and reads them
// back (MySQL refuses to UPDATE a table it selects from in a subquery).
func (d *Dialect) Claim(ctx context.Context, db *sql.DB, req dialects.ClaimRequest) ([]dialects.Record, error) {
	if req.Limit <= 0 {
		return nil, nil
	}
	if len(req.IDs) > maxList {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: %d ids, at most %d", len(req.IDs), maxList)
	}
	now, until := sqlkit.UTC(req.Now), sqlkit.UTC(req.LeaseUntil)
	if len(req.IDs) == 0 {
		var one int
		probe, err := d.stmts.Stmt(ctx, db, d.claimProbe)
		if err != nil {
			return nil, fmt.Errorf("jitoutbox/mysql: claim: prepare: %w", err)
		}
		switch err := probe.QueryRowContext(ctx, now, now).Scan(&one); {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("jitoutbox/mysql: claim: probe: %w", err)
		}
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	lock, err := d.stmts.Stmt(ctx, db, d.claimLock)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: prepare: %w", err)
	}
	var name string
	if err := tx.StmtContext(ctx, lock).QueryRowContext(ctx).Scan(&name); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("jitoutbox/mysql: claim: no 'claim' row in %s_locks (run Migrate)", d.table)
		}
		return nil, fmt.Errorf("jitoutbox/mysql: claim: lock: %w", err)
	}

	if len(req.IDs) == 0 && req.Window == 0 {
		recs, done, err := d.claimByWindow(ctx, db, tx, req, now, until)
		if err != nil {
			return nil, err
		}
		if done {
			if err := tx.Commit(); err != nil {
				return nil, fmt.Errorf("jitoutbox/mysql: claim: commit: %w", err)
			}
			return recs, nil
		}
	}

	query, args := d.claimSelect, []any{now, now, now, now, req.Limit}
	if len(req.IDs) == 0 && req.Window > 0 {
		query, args = d.claimSelectWindow, []any{now, now, req.Window, now, now, req.Limit}
	}
	if len(req.IDs) > 0 {
		query = expand(d.claimSelectIDs, "{{ids}}", len(req.IDs))
		args = make([]any, 0, 2*len(req.IDs)+5)
		for _, id := range req.IDs {
			args = append(args, id)
		}
		args = append(args, now, now, now, now)
		for _, id := range req.IDs {
			args = append(args, id)
		}
		args = append(args, req.Limit)
	}
	var rows *sql.Rows
	if len(req.IDs) == 0 {
		sel, perr := d.stmts.Stmt(ctx, db, query)
		if perr != nil {
			return nil, fmt.Errorf("jitoutbox/mysql: claim: prepare: %w", perr)
		}
		rows, err = tx.StmtContext(ctx, sel).QueryContext(ctx, args...)
	} else {
		rows, err = tx.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: select: %w", err)
	}
	recs, err := sqlkit.ScanRecords(rows, false, req.Limit)
	if err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: select: %w", err)
	}
	if len(recs) == 0 {
		return nil, tx.Commit()
	}

	seqs := make([]int64, len(recs))
	for i := range recs {
		seqs[i] = recs[i].Seq
	}
	n, err := d.lease(ctx, tx, req.Owner, seqs, now, until)
	if err != nil {
		return nil, err
	}
	// Claims are serialised by the lock row, so every candidate is normally
	// leased and the rows read above are the claim (a statement fewer, and
	// no second read of the payloads). A row can only slip away when a relay
	// whose lease had expired marked or failed it meanwhile: then read back
	// what this relay now holds.
	if n != int64(len(recs)) {
		if recs, err = d.readLeased(ctx, tx, req.Owner, seqs, until); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("jitoutbox/mysql: claim: commit: %w", err)
	}
	return recs, nil
}

// inBatches runs query once per chunk of at most maxList seqs, with args
// before, the chunk's seqs, then args after, and sums the affected rows.
func inBatches(ctx context.Context, db *sql.DB, op, query string, seqs []int64, before, after []any) (int64, error) {
	var total int64
	for len(seqs) > 0 {
		n := min(len(seqs), maxList)
		args := make([]any, 0, len(before)+n+len(after))
		args = append(args, before...)
		for _, s := range seqs[:n] {
			args = append(args, s)
		}
		args = append(args, after...)
		res, err := db.ExecContext(ctx, expand(query, "{{seqs}}", n), args...)
		if err != nil {
			return total, fmt.Errorf("jitoutbox/mysql: %s: %w", op, err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("jitoutbox/mysql: %s: rows affected: %w", op, err)
		}
		total += k
		seqs = seqs[n:]
	}
	return total, nil
}

// affected returns a function that turns an Exec result into a row count,
// wrapping errors with op.
func affected(op string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) {
		if err != nil {
			return 0, fmt.Errorf("jitoutbox/mysql: %s: %w", op, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("jitoutbox/mysql: %s: rows affected: %w", op, err)
		}
		return n, nil
	}
}

// MarkPublished marks seqs leased by owner as published at `at` (one
// statement per batch of up to 10000 seqs).
func (d *Dialect) MarkPublished(ctx context.Context, db *sql.DB, owner string, seqs []int64, at time.Time) (int64, error) {
	return inBatches(ctx, db, "mark published", d.markPublished, seqs, []any{sqlkit.UTC(at)}, []any{owner})
}

// Delete deletes seqs leased by owner.
func (d *Dialect) Delete(ctx context.Context, db *sql.DB, owner string, seqs []int64) (int64, error) {
	return inBatches(ctx, db, "delete", d.del, seqs, nil, []any{owner})
}

// Fail records failed attempts in one transaction and releases the leases.
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, owner string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jitoutbox/mysql: fail: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for _, f := range failures {
		state := dialects.StatePending
		if f.Dead {
			state = dialects.StateDead
		}
		if _, err := tx.ExecContext(ctx, d.fail, sqlkit.TruncateError(f.Error), sqlkit.UTC(f.NextAttemptAt),
			int(state), f.Seq, owner); err != nil {
			return fmt.Errorf("jitoutbox/mysql: fail seq %d: %w", f.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jitoutbox/mysql: fail: commit: %w", err)
	}
	return nil
}

// Release gives back leases held by owner; the rows become claimable at
// notBefore (zero: at once).
func (d *Dialect) Release(ctx context.Context, db *sql.DB, owner string, seqs []int64, notBefore time.Time) error {
	var nb any
	if !notBefore.IsZero() {
		nb = sqlkit.UTC(notBefore)
	}
	_, err := inBatches(ctx, db, "release", d.release, seqs, []any{nb}, []any{owner})
	return err
}

// Requeue moves dead rows selected by f back to pending.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	n := sqlkit.UTC(now)
	switch sel {
	case sqlkit.SelectIDs:
		var total int64
		for ids := f.IDs; len(ids) > 0; {
			k := min(len(ids), maxList)
			args := make([]any, 0, k+1)
			args = append(args, n)
			for _, id := range ids[:k] {
				args = append(args, id)
			}
			c, err := affected("requeue")(db.ExecContext(ctx, expand(d.requeueIDs, "{{ids}}", k), args...))
			total += c
			if err != nil {
				return total, err
			}
			ids = ids[k:]
		}
		return total, nil
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
	return affected("cleanup")(db.ExecContext(ctx, d.cleanup, sqlkit.UTC(before), limit))
}

// TryLock takes or renews the named lease for owner, in one transaction.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return false, fmt.Errorf("jitoutbox/mysql: trylock %q: begin: %w", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, d.tryLockEnsure, name); err != nil {
		return false, fmt.Errorf("jitoutbox/mysql: trylock %q: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, d.tryLock, owner, sqlkit.UTC(until), name, owner, sqlkit.UTC(now)); err != nil {
		return false, fmt.Errorf("jitoutbox/mysql: trylock %q: %w", name, err)
	}
	var got sql.NullString
	if err := tx.QueryRowContext(ctx, d.tryLockRead, name).Scan(&got); err != nil {
		return false, fmt.Errorf("jitoutbox/mysql: trylock %q: read: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("jitoutbox/mysql: trylock %q: commit: %w", name, err)
	}
	return got.Valid && got.String == owner, nil
}

// Stats reads counts and the oldest pending time in one query.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	var s dialects.Stats
	var oldest sqlkit.NullTime
	if err := db.QueryRowContext(ctx, d.stats).Scan(&s.Pending, &s.Dead, &s.Published, &oldest); err != nil {
		return s, fmt.Errorf("jitoutbox/mysql: stats: %w", err)
	}
	s.OldestPending = oldest.Time
	return s, nil
}
