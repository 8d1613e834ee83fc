package sqlkit

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// activityLists is the most table lists an Activity keeps a rendered
// statement and a record of failed tables for; past it each cache starts
// again empty (a fleet asks about one list, which changes when it
// re-discovers its tables).
const activityLists = 16

// activityChunk is the most tables one statement probes. On PostgreSQL a
// statement locks every table and index it reads, about 5 locks a table
// once prepared and 12 while planned, in the server's shared lock table
// (max_locks_per_transaction × max_connections: 6,400 slots by default),
// which also holds every relay's advisory locks: one statement over 500
// tables would take most of it.
const activityChunk = 100

// Activity runs Dialect.Activity for a dialect: the probe of one
// statement file (File: one table's name as a literal, its schema
// version, when its next pending row is due) rendered for each table and
// joined with UNION ALL into one statement. Set the fields before the
// first Run; safe for concurrent use then.
type Activity struct {
	// Prefix starts errors: the dialect's package name ("postgres").
	Prefix string
	// Stmts renders File for each table (Statements.TextFor).
	Stmts *Statements
	// File is the probe's file ("activity.sql").
	File string
	// Style is the dialect's parameter style.
	Style Style
	// Required is the schema version this code needs (the migrator's
	// Required).
	Required int
	// Valid checks a table name as the dialect's WithTable does.
	Valid func(table string) error
	// Missing reports whether a probe's error says that its table (or a
	// column, or its <table>_migrations) does not exist.
	Missing func(err error) bool
	// Now, when set, is bound as @now (SQLite, whose clock is the
	// process's); otherwise the probe reads the database's clock itself.
	Now func() any

	mu       sync.Mutex
	queries  map[string]*Query          // statements of several tables, by table list
	alone    map[string]map[string]bool // per table list: the tables read alone since they failed
	prepared map[*sql.DB][]string       // per database: the statements of several tables kept prepared in stmts, oldest first
	stmts    StmtCache
}

// probeResult is one table's answer.
type probeResult struct {
	next time.Time
	err  error
}

// Run reads the activity of tables (see dialects.Dialect.Activity). Its
// own error is the context's: every other failure is a table's Err.
func (a *Activity) Run(ctx context.Context, q dialects.Querier, tables []string) ([]dialects.TableActivity, error) {
	if len(tables) > activityChunk {
		out := make([]dialects.TableActivity, 0, len(tables))
		for len(tables) > 0 {
			n := min(len(tables), activityChunk)
			part, err := a.Run(ctx, q, tables[:n])
			if err != nil {
				return nil, err
			}
			out, tables = append(out, part...), tables[n:]
		}
		return out, nil
	}
	out := make([]dialects.TableActivity, len(tables))
	seen := make(map[string]bool, len(tables))
	var probe []string // distinct valid names, in order
	for i, t := range tables {
		out[i].Table = t
		if err := a.Valid(t); err != nil {
			out[i].Err = err
		} else if !seen[t] {
			seen[t] = true
			probe = append(probe, t)
		}
	}
	if len(probe) == 0 {
		return out, nil
	}
	key := strings.Join(probe, ",")
	a.mu.Lock()
	failed := a.alone[key]
	a.mu.Unlock()
	var together, alone []string
	for _, t := range probe {
		if failed[t] {
			alone = append(alone, t)
		} else {
			together = append(together, t)
		}
	}
	found, err := a.probe(ctx, q, together)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: activity: %w", a.Prefix, err)
		}
		alone, found = probe, map[string]probeResult{}
	}
	failing := map[string]bool{}
	for _, t := range alone {
		res, err := a.probe(ctx, q, []string{t})
		switch {
		case err == nil:
			found[t] = res[t]
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%s: activity: %w", a.Prefix, err)
		default:
			found[t] = probeResult{err: a.tableError(t, err)}
			failing[t] = true
		}
	}
	a.mu.Lock()
	if len(a.alone) >= activityLists || a.alone == nil {
		a.alone = map[string]map[string]bool{}
	}
	if len(failing) > 0 {
		a.alone[key] = failing
	} else {
		delete(a.alone, key)
	}
	a.mu.Unlock()
	for i := range out {
		if out[i].Err != nil {
			continue
		}
		res, ok := found[out[i].Table]
		if !ok {
			res.err = fmt.Errorf("%s: activity: the statement returned nothing for table %s", a.Prefix, out[i].Table)
		}
		out[i].NextDue, out[i].Err = res.next, res.err
	}
	return out, nil
}

// tableError is a table's Err for the error of its own probe.
func (a *Activity) tableError(table string, err error) error {
	if a.Missing(err) {
		return fmt.Errorf("%w: table %s: %w", dialects.ErrSchemaVersion, table, err)
	}
	return fmt.Errorf("%s: activity of table %s: %w", a.Prefix, table, err)
}

// probe runs the statement of tables (none: nothing to run) and returns
// each table's answer.
func (a *Activity) probe(ctx context.Context, q dialects.Querier, tables []string) (map[string]probeResult, error) {
	found := make(map[string]probeResult, len(tables))
	if len(tables) == 0 {
		return found, nil
	}
	query, err := a.query(tables)
	if err != nil {
		return nil, err
	}
	var args []sql.NamedArg
	if a.Now != nil {
		args = append(args, sql.Named("now", a.Now()))
	}
	rows, err := a.run(ctx, q, query, len(tables) > 1, args)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name    string
			version sql.NullInt64
			next    NullTime
		)
		if err := rows.Scan(&name, &version, &next); err != nil {
			return nil, err
		}
		if err := CheckVersion(name, version, a.Required); err != nil {
			found[name] = probeResult{err: err}
		} else {
			found[name] = probeResult{next: next.Time}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return found, nil
}

// run runs query on q. A statement of several tables run on a *sql.DB is
// prepared and kept, activityLists per database (the last table lists':
// a fleet asks about its tables in chunks of activityChunk), so that
// PostgreSQL plans it once per connection instead of at every call (its
// planning grows with the tables and outweighs its execution); a failed
// one is dropped.
func (a *Activity) run(ctx context.Context, q dialects.Querier, query *Query, keep bool, args []sql.NamedArg) (*sql.Rows, error) {
	db, ok := q.(*sql.DB)
	if !ok || !keep {
		return QueryRows(ctx, q, query, args...)
	}
	text, vals, err := query.Bind(args...)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.prepared == nil {
		a.prepared = map[*sql.DB][]string{}
	}
	var evicted string
	if kept := a.prepared[db]; !slices.Contains(kept, text) {
		kept = append(kept, text)
		if len(kept) > activityLists {
			evicted, kept = kept[0], kept[1:]
		}
		a.prepared[db] = kept
	}
	a.mu.Unlock()
	if evicted != "" {
		a.stmts.Forget(db, evicted)
	}
	stmt, err := a.stmts.Stmt(ctx, db, text)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryContext(ctx, vals...)
	a.mu.Lock()
	stale := !slices.Contains(a.prepared[db], text) // evicted by concurrent calls meanwhile
	a.mu.Unlock()
	if stale || err != nil && ctx.Err() == nil { // failed: a table dropped, say
		a.stmts.Forget(db, text)
	}
	return rows, err
}

// query returns the statement of tables: File rendered for each, joined
// with UNION ALL; cached for a list of several.
func (a *Activity) query(tables []string) (*Query, error) {
	key := strings.Join(tables, ",")
	if len(tables) > 1 {
		a.mu.Lock()
		q, ok := a.queries[key]
		a.mu.Unlock()
		if ok {
			return q, nil
		}
	}
	probes := make([]string, len(tables))
	for i, t := range tables {
		text, err := a.Stmts.TextFor(a.File, t)
		if err != nil {
			return nil, err
		}
		probes[i] = text
	}
	q, err := ParseQuery(a.File, strings.Join(probes, "\nUNION ALL\n"), a.Style)
	if err != nil {
		return nil, err
	}
	if len(tables) > 1 {
		a.mu.Lock()
		if len(a.queries) >= activityLists || a.queries == nil {
			a.queries = map[string]*Query{}
		}
		a.queries[key] = q
		a.mu.Unlock()
	}
	return q, nil
}
