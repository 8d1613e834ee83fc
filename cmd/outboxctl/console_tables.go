package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// The console with -all-tables: /tables lists every outbox table the
// pattern finds; each table's pages (overview, blocked, dead letters,
// events, partitions, actions) are under tablePrefix + the table's name,
// for the tables found only.

// tablePrefix starts the path of a table's pages with -all-tables:
// /t/<table>/, /t/<table>/dead, ...
const tablePrefix = "/t/"

// tablePath is the base of a table's pages: tablePrefix and its name,
// escaped ("/t/tenant_a.outbox").
func tablePath(table string) string { return tablePrefix + url.PathEscape(table) }

// consoleTables are the tables a console started with -all-tables serves:
// those its last look found, each with its dialect. The tables page looks
// again each time it is shown, so a new tenant's table appears there and a
// dropped one goes.
type consoleTables struct {
	pattern string
	find    func(ctx context.Context) ([]string, error)
	newD    func(table string) (dialects.Dialect, error)

	mu    sync.Mutex
	found map[string]dialects.Dialect // by table name
}

// newConsoleTables returns e's tables (-tables-pattern), not looked for yet.
func newConsoleTables(e *env) *consoleTables {
	return &consoleTables{pattern: e.g.pattern,
		find: func(ctx context.Context) ([]string, error) { return findTables(ctx, e) },
		newD: func(table string) (dialects.Dialect, error) { return newDialect(e.d.Name(), table) }}
}

// refresh looks for the tables again and returns them, sorted; the
// dialects of tables still found are kept.
func (s *consoleTables) refresh(ctx context.Context) ([]string, error) {
	names, err := s.find(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	found := make(map[string]dialects.Dialect, len(names))
	for _, n := range names {
		if d, ok := s.found[n]; ok {
			found[n] = d
			continue
		}
		d, err := s.newD(n)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", n, err)
		}
		found[n] = d
	}
	s.found = found
	return slices.Sorted(maps.Keys(found)), nil
}

// lookup returns the dialect of a table the last look found.
func (s *consoleTables) lookup(table string) (dialects.Dialect, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.found[table]
	return d, ok
}

// dialectOf is lookup for readTables: a table gone since the look is
// that table's error.
func (s *consoleTables) dialectOf(table string) (dialects.Dialect, error) {
	if d, ok := s.lookup(table); ok {
		return d, nil
	}
	return nil, fmt.Errorf("table %s is no longer found", table)
}

// discover looks for the tables once, before the console serves: a
// malformed pattern or a database that cannot be asked stops serve.
func (c *console) discover(ctx context.Context) error {
	if c.tables == nil {
		return nil
	}
	names, err := c.tables.refresh(ctx)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if len(names) == 0 {
		c.log.Warn("console: no outbox table matches the pattern yet", "pattern", c.tables.pattern)
	}
	return nil
}

// tableKey is the request context's key of the table a page shows.
type tableKey struct{}

// inTable serves h for the table named by the path's {table}, when the last
// look found it; any other name gets 404, before any dialect is made for
// it.
func (c *console) inTable(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, ok := c.tables.lookup(r.PathValue("table"))
		if !ok {
			c.fail(w, r, http.StatusNotFound, "no outbox table of this name was found: the tables page lists them")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), tableKey{}, d)))
	}
}

// tableOf returns the dialect of the table r's page shows: the one table,
// or with -all-tables the one inTable found (false on other pages).
func (c *console) tableOf(r *http.Request) (dialects.Dialect, bool) {
	if c.tables == nil {
		return c.d, true
	}
	d, ok := r.Context().Value(tableKey{}).(dialects.Dialect)
	return d, ok
}

// dialect is the dialect of the table a page's handler serves (routed so
// that there is one).
func (c *console) dialect(r *http.Request) dialects.Dialect {
	d, _ := c.tableOf(r)
	return d
}

// tablesData is the tables page.
type tablesData struct {
	Pattern    string
	Tables     []tableRow
	Unreadable int
}

// tableRow is one table on the tables page, with the base of its pages.
type tableRow struct {
	tableStatusJSON
	Base string
}

// tablesPage lists the tables found with their backlog, oldest pending age,
// blocked aggregates, dead letters, relays and health; a table that cannot
// be read shows why, the others as always.
func (c *console) tablesPage(w http.ResponseWriter, r *http.Request) {
	names, err := c.tables.refresh(r.Context())
	if err != nil {
		c.dbFail(w, r, "find tables", err)
		return
	}
	data := tablesData{Pattern: c.tables.pattern, Tables: []tableRow{}}
	for _, t := range readTables(r.Context(), c.db, names, c.tables.dialectOf, time.Now(), c.redact) {
		if !t.OK() {
			data.Unreadable++
		}
		data.Tables = append(data.Tables, tableRow{tableStatusJSON: t, Base: tablePath(t.Table)})
	}
	c.render(w, r, http.StatusOK, "tables", "Outbox tables", data)
}
