package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// affected returns a function that turns an Exec result into a row count,
// wrapping errors with op.
func affected(op string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) { return count(op, res, err) }
}

func count(op string, res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: %s: rows affected: %w", op, err)
	}
	return n, nil
}

// inTx runs fn in a transaction on db and commits it.
func inTx(ctx context.Context, db *sql.DB, op string, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: begin: %w", op, err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: commit: %w", op, err)
	}
	return nil
}

// Mark marks (or deletes) m.Seqs in partitions m.Token owns. Without
// m.Unblock it is one prepared autocommit statement; with it, the retry
// blocks go in the same transaction.
func (d *Dialect) Mark(ctx context.Context, db *sql.DB, m dialects.Mark) (int64, error) {
	if len(m.Seqs) == 0 {
		return 0, nil
	}
	q, named := d.mark, []sql.NamedArg{sql.Named("token", m.Token), sql.Named("seqs", sqlkit.JSONInts(m.Seqs)),
		sql.Named("at", micros(sqlkit.UTC(m.At)))}
	if m.Delete {
		q, named = d.markDelete, named[:2]
	}
	query, args, err := q.Bind(named...)
	if err != nil {
		return 0, fmt.Errorf("sqlite: mark: %w", err)
	}
	if len(m.Unblock) == 0 {
		stmt, err := d.stmts.Stmt(ctx, db, query)
		if err != nil {
			return 0, fmt.Errorf("sqlite: mark: prepare: %w", err)
		}
		return affected("mark")(stmt.ExecContext(ctx, args...))
	}
	var n int64
	err = inTx(ctx, db, "mark", func(tx *sql.Tx) error {
		if _, err := affected("mark: unblock")(sqlkit.Exec(ctx, tx, d.markUnblock,
			sql.Named("token", m.Token), sql.Named("seqs", sqlkit.JSONInts(m.Unblock)))); err != nil {
			return err
		}
		var err error
		n, err = affected("mark")(tx.ExecContext(ctx, query, args...))
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// failJSON is one failure as fail.sql and fail_block.sql read it. Times
// are unix microseconds.
type failJSON struct {
	Seq  int64  `json:"seq"`
	Err  string `json:"err"`
	Next int64  `json:"next"`
	Dead bool   `json:"dead"`
}

// Fail records failed attempts and blocks in one transaction of two
// statements: fail.sql changes the rows the token's partitions hold, then
// fail_block.sql blocks the aggregates of those of them that asked for it.
func (d *Dialect) Fail(ctx context.Context, db *sql.DB, token string, failures []dialects.Failure) error {
	if len(failures) == 0 {
		return nil
	}
	all := make([]failJSON, len(failures))
	var blocks []failJSON
	for i, f := range failures {
		all[i] = failJSON{Seq: f.Seq, Err: sqlkit.TruncateError(f.Error), Next: micros(sqlkit.UTC(f.NextAttemptAt)), Dead: f.Dead}
		if f.Block {
			blocks = append(blocks, failJSON{Seq: f.Seq, Next: all[i].Next, Dead: f.Dead})
		}
	}
	allJS, err := json.Marshal(all)
	if err != nil {
		return fmt.Errorf("sqlite: fail: %w", err)
	}
	return inTx(ctx, db, "fail", func(tx *sql.Tx) error {
		changed, err := querySeqs(ctx, tx, d.fail, sql.Named("token", token), sql.Named("failures", string(allJS)))
		if err != nil {
			return fmt.Errorf("sqlite: fail: %w", err)
		}
		if len(blocks) == 0 || len(changed) == 0 {
			return nil
		}
		blockJS, err := json.Marshal(blocks)
		if err != nil {
			return fmt.Errorf("sqlite: fail: %w", err)
		}
		if _, err := sqlkit.Exec(ctx, tx, d.failBlock, sql.Named("blocks", string(blockJS)), sql.Named("changed", sqlkit.JSONInts(changed))); err != nil {
			return fmt.Errorf("sqlite: fail: block: %w", err)
		}
		return nil
	})
}

// querySeqs runs a statement that returns one seq per row.
func querySeqs(ctx context.Context, q dialects.Querier, query *sqlkit.Query, args ...sql.NamedArg) ([]int64, error) {
	rows, err := sqlkit.QueryRows(ctx, q, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Requeue moves dead rows selected by f back to pending and removes their
// blocks, in one transaction.
func (d *Dialect) Requeue(ctx context.Context, db *sql.DB, f dialects.RequeueFilter, now time.Time) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	query, args := d.requeueAll, []sql.NamedArg{sql.Named("now", micros(sqlkit.UTC(now)))}
	switch sel {
	case sqlkit.SelectIDs:
		ids, err := sqlkit.JSONStrings(f.IDs)
		if err != nil {
			return 0, err
		}
		query, args = d.requeueIDs, append(args, sql.Named("ids", ids))
	case sqlkit.SelectAggregate:
		query, args = d.requeueAggregate, append(args, sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID))
	}
	var n int64
	err = inTx(ctx, db, "requeue", func(tx *sql.Tx) error {
		seqs, err := querySeqs(ctx, tx, query, args...)
		if err != nil {
			return fmt.Errorf("sqlite: requeue: %w", err)
		}
		n = int64(len(seqs))
		if n == 0 {
			return nil
		}
		_, err = affected("requeue: unblock")(sqlkit.Exec(ctx, tx, d.requeueUnblock, sql.Named("seqs", sqlkit.JSONInts(seqs))))
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Skip removes the blocks of dead rows selected by f.
func (d *Dialect) Skip(ctx context.Context, db *sql.DB, f dialects.RequeueFilter) (int64, error) {
	sel, err := sqlkit.RequeueSelector(f)
	if err != nil {
		return 0, err
	}
	switch sel {
	case sqlkit.SelectIDs:
		ids, err := sqlkit.JSONStrings(f.IDs)
		if err != nil {
			return 0, err
		}
		return affected("skip")(sqlkit.Exec(ctx, db, d.skipIDs, sql.Named("ids", ids)))
	case sqlkit.SelectAggregate:
		return affected("skip")(sqlkit.Exec(ctx, db, d.skipAggregate,
			sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID)))
	default:
		return affected("skip")(sqlkit.Exec(ctx, db, d.skipAll))
	}
}

// Cleanup deletes up to limit rows published before `before`.
func (d *Dialect) Cleanup(ctx context.Context, db *sql.DB, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	return affected("cleanup")(sqlkit.Exec(ctx, db, d.cleanup, sql.Named("before", micros(sqlkit.UTC(before))), sql.Named("limit", limit)))
}

// TryLock takes or renews the named lease for owner.
func (d *Dialect) TryLock(ctx context.Context, db *sql.DB, name, owner string, now, until time.Time) (bool, error) {
	var got string
	err := sqlkit.QueryRow(ctx, db, d.tryLock, sql.Named("name", name), sql.Named("owner", owner),
		sql.Named("now", micros(sqlkit.UTC(now))), sql.Named("until", micros(sqlkit.UTC(until)))).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlite: trylock %q: %w", name, err)
	}
	return got == owner, nil
}

// Stats reads counts, the oldest pending and published times and the
// blocked aggregates in one query (sql/stats.sql) whose cost is bounded by
// the pending and dead rows, not by the published rows kept.
func (d *Dialect) Stats(ctx context.Context, db *sql.DB) (dialects.Stats, error) {
	return sqlkit.ReadStats(ctx, db, d.stats, "sqlite", sql.Named("now", micros(clock())))
}
