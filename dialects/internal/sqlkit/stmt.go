package sqlkit

import (
	"context"
	"database/sql"
	"sync"
)

// StmtCache keeps prepared statements for the hot statements of a dialect
// (the claim), so that each call costs one round trip: lib/pq sends an
// unprepared parameterised query as Parse+Describe, waits, then Bind+Execute
// (two round trips), and go-sql-driver/mysql without interpolateParams
// prepares, executes and closes a statement per call. database/sql
// re-prepares a cached *sql.Stmt on each pooled connection the first time it
// runs there.
//
// It holds statements for one *sql.DB at a time, the last one it was used
// with (a dialect is normally used with one database); a call with another
// DB closes the cached statements and starts over, so nothing accumulates.
// The zero value is ready to use and it is safe for concurrent use.
type StmtCache struct {
	mu    sync.Mutex
	db    *sql.DB
	stmts map[string]*sql.Stmt
}

// Stmt returns the statement for query prepared on db, preparing it on first
// use.
func (c *StmtCache) Stmt(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db != db {
		for _, s := range c.stmts {
			s.Close() // error is irrelevant: the statement is dropped either way
		}
		c.db, c.stmts = db, map[string]*sql.Stmt{}
	}
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	s, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// Forget closes and drops query's statement, so the next Stmt prepares it
// again: for a statement whose execution failed in a way that may have left
// its server-side plan unusable (a table dropped and created again).
func (c *StmtCache) Forget(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		s.Close()
		delete(c.stmts, query)
	}
}
