package dialecttest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// corruption is one way a row's column can hold what no writer of the
// schema writes, set with a raw UPDATE.
type corruption struct {
	name   string
	column string // the column RowError names
	set    string // SQL assignment
	raw    string // RowError.Raw
	err    string // in RowError.Err's text
}

// corruptions returns the corruptions the dialect's column types allow.
func (e *env) corruptions() []corruption {
	cs := []corruption{
		// Valid JSON of the wrong shape: every headers column takes it
		// (PostgreSQL's is json, which refuses invalid JSON).
		{"headers-number", "headers", "headers = '5'", "5", "cannot unmarshal number"},
		{"headers-values", "headers", `headers = '{"k": 1}'`, `{"k": 1}`, "cannot unmarshal number"},
	}
	switch e.d.Name() {
	case "postgres":
		cs = append(cs, corruption{"created-infinity", "created_at", "created_at = 'infinity'", "infinity", "cannot parse time"})
	case "mysql":
		cs = append(cs,
			// TEXT takes any text: a non-strict server truncated over-long
			// headers into invalid JSON before migration 006.
			corruption{"headers-invalid", "headers", `headers = '{"k": "v'`, `{"k": "v`, "unexpected end of JSON input"},
			corruption{"critical-5", "critical", "critical = 5", "5", "bool"})
	case "sqlite":
		// SQLite keeps any value in any column.
		cs = append(cs,
			corruption{"headers-invalid", "headers", `headers = '{"k": "v'`, `{"k": "v`, "unexpected end of JSON input"},
			corruption{"created-text", "created_at", "created_at = 'garbage'", "garbage", "cannot parse time"},
			corruption{"attempts-text", "attempts", "attempts = 'x'", "x", "converting"},
			corruption{"critical-5", "critical", "critical = 5", "5", "bool"})
	}
	return cs
}

// testBadRows corrupts one row per way its column types allow (raw SQL
// UPDATEs) among good rows, and checks that nothing fails: Read returns
// every row, the corrupt ones with Record.Bad naming the column, its raw
// text and the problem (errors.Is ErrBadRow) and the other fields filled
// in; the Inspector lists and gets them the same way; a dead failure of
// each (what the relay records) works and Blockers shows them; Stats
// still reads.
func testBadRows(t *testing.T, tgt Target) {
	e := setup(t, tgt)
	cs := e.corruptions()
	var evs []dialects.Event
	for i := range cs {
		good, bad := e.event("agg", "good-"+cs[i].name), e.event("agg", "bad-"+cs[i].name)
		bad.Headers = map[string]string{"k": "v"}
		evs = append(evs, good, bad)
	}
	e.insert(evs...)
	for i, c := range cs {
		q := fmt.Sprintf("UPDATE %s SET %s WHERE id = %s", e.d.Table(), c.set, e.ph(1))
		if _, err := e.db.ExecContext(e.ctx, q, evs[2*i+1].ID); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	check := func(what string, rec dialects.Record, ev dialects.Event, c *corruption) {
		t.Helper()
		if rec.ID != ev.ID || rec.AggregateID != ev.AggregateID || rec.Partition != ev.Partition ||
			rec.EventType != ev.EventType || string(rec.Payload) != string(ev.Payload) || rec.Seq == 0 {
			t.Fatalf("%s: record %+v, want the fields of %s", what, rec, ev.AggregateID)
		}
		if c == nil {
			if rec.Bad != nil {
				t.Fatalf("%s: good row %s is bad: %v", what, ev.AggregateID, rec.Bad)
			}
			return
		}
		b := rec.Bad
		if b == nil || !errors.Is(b, dialects.ErrBadRow) || b.Column != c.column || b.Raw != c.raw ||
			!strings.Contains(b.Error(), "bad row: column "+c.column+": ") || !strings.Contains(b.Err.Error(), c.err) {
			t.Fatalf("%s: %s: Bad = %#v (%v), want column %s, raw %q, an error with %q", what, c.name, b, b, c.column, c.raw, c.err)
		}
		if c.column == "headers" && rec.Headers != nil {
			t.Fatalf("%s: %s: headers %v, want none", what, c.name, rec.Headers)
		}
	}
	got := e.readAll(0)
	if len(got) != len(evs) {
		t.Fatalf("Read returned %d rows, want %d (good and bad)", len(got), len(evs))
	}
	for i := range cs {
		check("Read", got[2*i], evs[2*i], nil)
		check("Read", got[2*i+1], evs[2*i+1], &cs[i])
	}
	rows, err := e.d.List(e.ctx, e.db, dialects.ListFilter{State: dialects.StatePending, Limit: 100})
	if err != nil || len(rows) != len(evs) {
		t.Fatalf("List pending: %d rows, %v; want %d", len(rows), err, len(evs))
	}
	for i := range cs {
		check("List", rows[2*i+1].Record, evs[2*i+1], &cs[i])
		g, err := e.d.Get(e.ctx, e.db, evs[2*i+1].ID)
		if err != nil {
			t.Fatalf("Get %s: %v", cs[i].name, err)
		}
		check("Get", g.Record, evs[2*i+1], &cs[i])
		if g.State != dialects.StatePending {
			t.Fatalf("Get %s: state %v", cs[i].name, g.State)
		}
	}
	// What the relay does with them: a dead failure each, blocking.
	s := e.own("r")
	var fs []dialects.Failure
	for i := range cs {
		fs = append(fs, e.failure(got[2*i+1], got[2*i+1].Bad.Error(), 0, true, true))
	}
	e.fail(s.Token(), fs...)
	dead, err := e.d.List(e.ctx, e.db, dialects.ListFilter{State: dialects.StateDead, Limit: 100})
	if err != nil || len(dead) != len(cs) {
		t.Fatalf("List dead: %d rows, %v; want %d", len(dead), err, len(cs))
	}
	bl, err := e.d.Blockers(e.ctx, e.db, e.at(0), 100)
	if err != nil || len(bl) != len(cs) {
		t.Fatalf("Blockers: %d, %v; want %d", len(bl), err, len(cs))
	}
	for i := range cs {
		c := &cs[i]
		if c.column == "attempts" {
			c = nil // the failure counted an attempt: attempts + 1 made it a number
		}
		check("List dead", dead[i].Record, evs[2*i+1], c)
		if dead[i].LastError != cs[i].name && !strings.HasPrefix(dead[i].LastError, "bad row: column "+cs[i].column) {
			t.Fatalf("dead %s: last error %q", cs[i].name, dead[i].LastError)
		}
		if bl[i].Head == nil || bl[i].Reason != dialects.BlockDead {
			t.Fatalf("Blockers[%d] = %+v", i, bl[i])
		}
		check("Blockers", bl[i].Head.Record, evs[2*i+1], c)
	}
	if st := e.stats(); st.Pending != int64(len(cs)) || st.Dead != int64(len(cs)) || st.BadPartition != 0 {
		t.Fatalf("Stats %+v: want %d pending, %d dead, no bad partition", st, len(cs), len(cs))
	}
	if n := e.mark(s.Token(), seqs(e.read(e.all(), 0, 100, time.Hour)), 0); n != int64(len(cs)) {
		t.Fatalf("Mark of the good rows: %d, want %d", n, len(cs))
	}
}
