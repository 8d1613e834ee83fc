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
// Statements are kept per *sql.DB: one dialect value may serve several
// databases at once, and a call with one never closes the statements of
// another (an earlier version kept only the last DB's, and closed them
// under a concurrent user of the first). The cache holds a few statements
// per database it has seen, for as long as the dialect lives; a *sql.Stmt
// of a closed DB holds no connection. The zero value is ready to use and
// it is safe for concurrent use; preparing on one database does not hold
// up lookups on another.
type StmtCache struct {
	mu  sync.RWMutex
	dbs map[*sql.DB]map[string]*sql.Stmt
}

// Stmt returns the statement for query prepared on db, preparing it on first
// use.
func (c *StmtCache) Stmt(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.RLock()
	s, ok := c.dbs[db][query]
	c.mu.RUnlock()
	if ok {
		return s, nil
	}
	s, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.dbs[db][query]; ok { // prepared by a concurrent call first
		s.Close() // never handed out; its error is irrelevant
		return have, nil
	}
	if c.dbs == nil {
		c.dbs = map[*sql.DB]map[string]*sql.Stmt{}
	}
	if c.dbs[db] == nil {
		c.dbs[db] = map[string]*sql.Stmt{}
	}
	c.dbs[db][query] = s
	return s, nil
}

// Forget closes and drops query's statement on db, so the next Stmt prepares
// it again: for a statement whose execution failed in a way that may have
// left its server-side plan unusable (a table dropped and created again).
// The statements of other databases stay.
func (c *StmtCache) Forget(db *sql.DB, query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.dbs[db][query]; ok {
		s.Close()
		delete(c.dbs[db], query)
	}
}
