package sqlkit

import (
	"context"
	"database/sql"
	"sync"
)

// StmtCache keeps a dialect's hot statements prepared, so each call is one
// round trip (lib/pq otherwise takes two, go-sql-driver/mysql prepares and
// closes per call). Statements are kept per *sql.DB, since one dialect may
// serve several databases and must never close another's statements. The
// zero value is ready; safe for concurrent use.
type StmtCache struct {
	mu      sync.RWMutex
	dbs     map[*sql.DB]map[string]*sql.Stmt
	closing sync.WaitGroup // closeLater's goroutines
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
		c.closeLater(s) // never handed out
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
		c.closeLater(s)
		delete(c.dbs[db], query)
	}
}

// closeLater closes s on a goroutine of its own. Closing a statement waits
// until every connection it was prepared on is between statements, and a
// pool connection taken since by a session's WaitChange runs one statement
// until a relay joins or leaves: a caller waiting for it (a fleet's poll,
// a relay's mark) would stop with it. The goroutine ends once that
// statement does, at the latest when its session closes. Its error is
// irrelevant: the statement is no longer handed out.
func (c *StmtCache) closeLater(s *sql.Stmt) {
	c.closing.Go(func() { _ = s.Close() })
}
