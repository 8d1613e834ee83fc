package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// inBatches runs query once per chunk of at most maxList values of its
// list parameter list, with args for its other parameters, and sums the
// affected rows.
func inBatches[T int64 | string](ctx context.Context, q dialects.Execer, op string, query *sqlkit.Query, list string, vals []T, args ...sql.NamedArg) (int64, error) {
	var total int64
	for len(vals) > 0 {
		n := min(len(vals), maxList)
		k, err := affected(op)(sqlkit.Exec(ctx, q, query, append(args, sql.Named(list, vals[:n]))...))
		total += k
		if err != nil {
			return total, err
		}
		vals = vals[n:]
	}
	return total, nil
}

// affected returns a function that turns an Exec result into a row count,
// wrapping errors with op.
func affected(op string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) {
		if err != nil {
			return 0, fmt.Errorf("mysql: %s: %w", op, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("mysql: %s: rows affected: %w", op, err)
		}
		return n, nil
	}
}

// Mark marks (or deletes) m.Seqs in partitions m.Token owns: one statement
// per 10000 seqs, joined to the partitions table for the fence. With
// m.Unblock it removes their retry blocks in the same transaction. A mark
// of one statement and no unblock runs prepared (markPrepared).
func (d *Dialect) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	if len(m.Seqs) == 0 {
		return 0, nil
	}
	// InnoDB's next-key locks can deadlock the marks of relays owning
	// interleaved seqs; the victim is rolled back whole, so it is run again
	// (a mark is idempotent) after a growing, jittered pause that lets the
	// winner commit first.
	for attempt := 1; ; attempt++ {
		n, err := d.mark1(ctx, db, m)
		if err == nil || attempt == maxDeadlockRetries || !isDeadlock(err) || ctx.Err() != nil {
			return n, err
		}
		pause := time.NewTimer(time.Duration(attempt) * (time.Millisecond + time.Duration(rand.Int64N(int64(time.Millisecond)))))
		select {
		case <-ctx.Done():
			pause.Stop()
			return n, err
		case <-pause.C:
		}
	}
}

// maxDeadlockRetries bounds the runs of a statement InnoDB chose as a
// deadlock victim.
const maxDeadlockRetries = 10

// isDeadlock reports a deadlock victim (MySQL error 1213, SQLSTATE 40001)
// or a lock wait timeout (1205).
func isDeadlock(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Error 1213") || strings.Contains(s, "Error 1205")
}

// mark1 runs one attempt of Mark.
func (d *Dialect) mark1(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	var q dialects.Execer = db
	var tx *sql.Tx
	if len(m.Unblock) > 0 || len(m.Seqs) > maxList {
		var err error
		if tx, err = db.BeginTx(ctx, nil); err != nil {
			return 0, fmt.Errorf("mysql: mark: begin: %w", err)
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		q = tx
	}
	if len(m.Unblock) > 0 {
		if _, err := inBatches(ctx, q, "mark: unblock", d.unblock, "seqs", m.Unblock, sql.Named("token", m.Token)); err != nil {
			return 0, err
		}
	}
	var n int64
	var err error
	if tx == nil {
		n, err = d.markPrepared(ctx, db, m)
	} else {
		op, mq, args := d.markStatement(m)
		n, err = inBatches(ctx, q, op, mq, "seqs", m.Seqs, args...)
	}
	if err != nil {
		return 0, err
	}
	if tx != nil {
		if err := tx.Commit(); err != nil {
			return 0, fmt.Errorf("mysql: mark: commit: %w", err)
		}
	}
	return n, nil
}

// markPrepared runs the mark (or delete) of at most maxList seqs outside a
// transaction through a statement kept prepared on db: one round trip
// instead of the driver's prepare, execute and close. The list is padded
// to a power of two by repeating its last seq (a duplicate in IN changes
// nothing), so that the marks of any size share a few statements.
func (d *Dialect) markPrepared(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	op, q, named := d.markStatement(m)
	text, args, err := q.Bind(append(named, sql.Named("seqs", padList(m.Seqs)))...)
	if err != nil {
		return 0, fmt.Errorf("mysql: %s: %w", op, err)
	}
	stmt, err := d.stmts.Stmt(ctx, db, text)
	if err != nil {
		return 0, fmt.Errorf("mysql: %s: prepare: %w", op, err)
	}
	return affected(op)(stmt.ExecContext(ctx, args...))
}

// markStatement returns m's statement (delete.sql or mark.sql), its name
// in errors, and its arguments but the seqs.
func (d *Dialect) markStatement(m dialects.Mark) (op string, q *sqlkit.Query, args []sql.NamedArg) {
	if m.Delete {
		return "mark: delete", d.del, []sql.NamedArg{sql.Named("token", m.Token)}
	}
	return "mark", d.mark, []sql.NamedArg{sql.Named("at", sqlkit.UTC(m.At)), sql.Named("token", m.Token)}
}

// padList returns seqs (at most maxList) padded to the next power of two,
// or to maxList, with copies of its last element.
func padList(seqs []int64) []int64 {
	n := 1
	for n < len(seqs) {
		n *= 2
	}
	n = min(n, maxList)
	if n == len(seqs) {
		return seqs
	}
	out := make([]int64, n)
	copy(out, seqs)
	for i := len(seqs); i < n; i++ {
		out[i] = seqs[len(seqs)-1]
	}
	return out
}

// Fail records failed attempts on rows of partitions token owns, and their
// blocks where asked, in one transaction: fail.sql per row, then
// fail_block.sql for a row it changed.
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, token string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mysql: fail: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for _, f := range failures {
		state := dialects.StatePending
		if f.Dead {
			state = dialects.StateDead
		}
		next := sqlkit.UTC(f.NextAttemptAt)
		n, err := affected("fail")(sqlkit.Exec(ctx, tx, d.fail, sql.Named("error", sqlkit.TruncateError(f.Error)),
			sql.Named("next_attempt_at", next), sql.Named("state", int(state)), sql.Named("seq", f.Seq),
			sql.Named("part", f.Partition), sql.Named("token", token)))
		if err != nil {
			return fmt.Errorf("mysql: fail seq %d: %w", f.Seq, err)
		}
		if n == 0 || !f.Block {
			continue // not ours (fenced), or no block asked
		}
		_, err = sqlkit.Exec(ctx, tx, d.failBlock, sql.Named("part", f.Partition), sql.Named("aggregate_type", f.AggregateType),
			sql.Named("aggregate_id", f.AggregateID), sql.Named("seq", f.Seq), sql.Named("dead", f.Dead), sql.Named("until", next))
		if err != nil {
			return fmt.Errorf("mysql: fail seq %d: block: %w", f.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("mysql: fail: commit: %w", err)
	}
	return nil
}

// Requeue moves dead rows selected by f back to pending and removes their
// blocks, in one transaction.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("mysql: requeue: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := d.skip(ctx, tx, "requeue: unblock", sel, f); err != nil {
		return 0, err
	}
	n := sql.Named("now", sqlkit.UTC(now))
	var c int64
	switch sel {
	case sqlkit.SelectIDs:
		c, err = inBatches(ctx, tx, "requeue", d.requeueIDs, "ids", f.IDs, n)
	case sqlkit.SelectAggregate:
		c, err = affected("requeue")(sqlkit.Exec(ctx, tx, d.requeueAggregate, n,
			sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID)))
	default:
		c, err = affected("requeue")(sqlkit.Exec(ctx, tx, d.requeueAll, n))
	}
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("mysql: requeue: commit: %w", err)
	}
	return c, nil
}

// Skip removes the blocks of dead rows selected by f.
func (d *Dialect) Skip(ctx context.Context, db *sql.DB, f dialects.RequeueFilter) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	return d.skip(ctx, db, "skip", sel, f)
}

// skip runs the skip statement of sel on q.
func (d *Dialect) skip(ctx context.Context, q dialects.Execer, op string, sel sqlkit.Selector, f dialects.RequeueFilter) (int64, error) {
	switch sel {
	case sqlkit.SelectIDs:
		return inBatches(ctx, q, op, d.skipIDs, "ids", f.IDs)
	case sqlkit.SelectAggregate:
		return affected(op)(sqlkit.Exec(ctx, q, d.skipAggregate,
			sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID)))
	default:
		return affected(op)(sqlkit.Exec(ctx, q, d.skipAll))
	}
}

// Cleanup deletes up to limit rows published before `before`.
func (d *Dialect) Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("cleanup")(sqlkit.Exec(ctx, db, d.cleanup, sql.Named("before", sqlkit.UTC(before)), sql.Named("limit", limit)))
}

// TryLock takes or renews the named lease for owner, in one transaction.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return false, fmt.Errorf("mysql: trylock %q: begin: %w", name, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	lock := sql.Named("name", name)
	if _, err := sqlkit.Exec(ctx, tx, d.tryLockEnsure, lock); err != nil {
		return false, fmt.Errorf("mysql: trylock %q: %w", name, err)
	}
	if _, err := sqlkit.Exec(ctx, tx, d.tryLock, lock, sql.Named("owner", owner), sql.Named("until", sqlkit.UTC(until)),
		sql.Named("now", sqlkit.UTC(now))); err != nil {
		return false, fmt.Errorf("mysql: trylock %q: %w", name, err)
	}
	var got sql.NullString
	if err := sqlkit.QueryRow(ctx, tx, d.tryLockRead, lock).Scan(&got); err != nil {
		return false, fmt.Errorf("mysql: trylock %q: read: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("mysql: trylock %q: commit: %w", name, err)
	}
	return got.Valid && got.String == owner, nil
}

// Stats reads counts, the oldest pending and published times and the
// blocked aggregates in one query (sql/stats.sql) whose cost is bounded by
// the pending and dead rows, not by the published rows kept.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	return sqlkit.ReadStats(ctx, db, d.stats, "mysql")
}
