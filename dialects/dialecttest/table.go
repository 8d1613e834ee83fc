package dialecttest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func testWithTable(t *testing.T, tgt Target) {
	for _, name := range []string{"", "a;b", `a"b`, "1abc", "a b", "a-b", "x.y.z", "a.", ".a", strings.Repeat("t", 64), "outbox; DROP TABLE x"} {
		d, err := tgt.WithTable(name)
		if !errors.Is(err, dialects.ErrInvalidTable) {
			t.Errorf("WithTable(%q): %v, %v; want ErrInvalidTable", name, d, err)
		}
	}
	const name = "custom_Events2"
	d, err := tgt.WithTable(name)
	if err != nil {
		t.Fatalf("WithTable(%q): %v", name, err)
	}
	if d.Table() != name || !strings.Contains(d.Schema(), name) {
		t.Fatalf("Table() = %q; schema mentions it: %v", d.Table(), strings.Contains(d.Schema(), name))
	}
	e := setupWith(t, tgt, d)
	if err := d.Migrate(e.ctx, e.db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	e.insert(e.events("a", "a", "b")...)
	r := e.readAll(0)
	wantAggs(t, "read", r, "a", "a", "b")
	s := e.own("x")
	wantN(t, "Mark", e.mark(s.Token(), seqs(r[:2]), 0), nil, 2)
	e.fail(s.Token(), e.failure(r[2], "x", 0, true, true))
	ok, err := d.TryLock(e.ctx, e.db, "cleanup", "x", e.at(0), e.at(time.Minute))
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	n, err := d.Cleanup(e.ctx, e.db, e.at(time.Minute), 10)
	wantN(t, "Cleanup", n, err, 2)
	n, err = d.Requeue(e.ctx, e.db, dialects.RequeueFilter{All: true}, e.at(0))
	wantN(t, "Requeue", n, err, 1)
	// The default table was never created next to the custom one.
	def, err := tgt.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := def.Partitions(e.ctx, e.db); !errors.Is(err, dialects.ErrSchemaVersion) {
		t.Fatalf("Partitions of the default table next to %q: %v, want ErrSchemaVersion", name, err)
	}
	if _, err := def.Stats(e.ctx, e.db); err == nil {
		t.Fatalf("default table %q exists in a database migrated for %q", def.Table(), name)
	}
}
