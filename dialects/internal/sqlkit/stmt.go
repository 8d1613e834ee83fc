package sqlkit

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// StmtCache keeps a dialect's hot statements prepared, so each call is one
// round trip (lib/pq otherwise takes two, go-sql-driver/mysql prepares and
// closes per call). Statements are kept per *sql.DB, since one dialect may
// serve several databases and must never close another's statements. The
// zero value is ready; safe for concurrent use.
type StmtCache struct {
	mu        sync.RWMutex
	dbs       map[*sql.DB]map[string]*sql.Stmt
	preparing map[stmtKey]bool // StmtOrPrepare's goroutines at work
	closing   sync.WaitGroup   // closeLater's and StmtOrPrepare's goroutines
}

// stmtKey is a statement of one database.
type stmtKey struct {
	db    *sql.DB
	query string
}

// prepareTimeout bounds StmtOrPrepare's wait for a connection of the pool.
const prepareTimeout = time.Minute

// StmtOrPrepare returns the statement for query prepared on db if there is
// one; otherwise nil, and it prepares the statement on a goroutine of its
// own for the next calls. It is Stmt for callers that hold one of db's
// connections (a transaction): preparing on the pool takes another
// connection, and a pool whose connections are all held by such callers
// would never free one.
func (c *StmtCache) StmtOrPrepare(db *sql.DB, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.dbs[db][query]; ok {
		return s
	}
	k := stmtKey{db, query}
	if c.preparing[k] {
		return nil
	}
	if c.preparing == nil {
		c.preparing = map[stmtKey]bool{}
	}
	c.preparing[k] = true
	c.closing.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
		defer cancel()
		s, err := db.PrepareContext(ctx, query)
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.preparing, k)
		if err != nil {
			return // the next call tries again
		}
		if _, ok := c.dbs[db][query]; ok { // prepared by Stmt meanwhile
			c.closeLater(s)
			return
		}
		c.put(db, query, s)
	})
	return nil
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
	c.put(db, query, s)
	return s, nil
}

// put keeps s as query's statement on db. The caller holds c.mu.
func (c *StmtCache) put(db *sql.DB, query string, s *sql.Stmt) {
	if c.dbs == nil {
		c.dbs = map[*sql.DB]map[string]*sql.Stmt{}
	}
	if c.dbs[db] == nil {
		c.dbs[db] = map[string]*sql.Stmt{}
	}
	c.dbs[db][query] = s
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

// Wait returns once the goroutines of StmtOrPrepare, Forget and Stmt's
// duplicates have ended.
func (c *StmtCache) Wait() { c.closing.Wait() }

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
