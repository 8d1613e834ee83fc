package inbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// env is one test's database, inbox and side-effect table.
type env struct {
	t       *testing.T
	db      *sql.DB
	dialect inbox.Dialect
	in      *inbox.Inbox
	clock   *clock
}

// clock is a settable Config.Now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// eachDB runs f as a subtest on every database of testdb.Targets (skipped
// when its variable is unset), with an Inbox configured by cfg (Dialect,
// Now filled in) and migrated.
func eachDB(t *testing.T, cfg inbox.Config, f func(t *testing.T, e *env)) {
	t.Helper()
	for _, target := range testdb.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			db, _ := target.Open(t)
			c := cfg
			c.Dialect = inbox.Dialect(target.Dialect)
			clk := &clock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
			if c.Now == nil {
				c.Now = clk.Now
			}
			in, err := inbox.New(c)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := in.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			e := &env{t: t, db: db, dialect: c.Dialect, in: in, clock: clk}
			e.exec(`CREATE TABLE effects (event_id VARCHAR(64) NOT NULL, note VARCHAR(64) NOT NULL)`)
			f(t, e)
		})
	}
}

// q rewrites ? placeholders as $n for PostgreSQL.
func (e *env) q(query string) string {
	if e.dialect != inbox.Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (e *env) exec(query string, args ...any) {
	e.t.Helper()
	if _, err := e.db.ExecContext(context.Background(), e.q(query), args...); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(context.Background(), e.q(query), args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// effects counts the side effects applied for id.
func (e *env) effects(id string) int {
	e.t.Helper()
	return e.count(`SELECT COUNT(*) FROM effects WHERE event_id = ?`, id)
}

// processed counts the rows of the processed table.
func (e *env) processed() int {
	e.t.Helper()
	return e.count(`SELECT COUNT(*) FROM inbox_processed`)
}

// effect returns an ApplyFunc that writes one side effect for m's id.
func (e *env) effect(id string) inbox.ApplyFunc {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, e.q(`INSERT INTO effects (event_id, note) VALUES (?, ?)`), id, "applied")
		return err
	}
}

// handle calls Handle with the effect of msg's id.
func (e *env) handle(msg inbox.Message) (inbox.Result, error) {
	return e.in.Handle(context.Background(), e.db, msg, e.effect(msg.EventID))
}

// newMsg returns a message with a fresh UUIDv7 id.
func newMsg(aggID string, seq int64, payload string) inbox.Message {
	return inbox.Message{EventID: uuid.Must(uuid.NewV7()).String(), AggregateType: "order", AggregateID: aggID,
		EventType: "order.placed", Seq: seq, Payload: []byte(payload)}
}
