package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

// TestStatusCleanupHealth: status -retention shows the published rows kept
// past the relays' Retention (how many, and how far past the oldest is);
// none within it; no cleanup section with -retention 0.
func TestStatusCleanupHealth(t *testing.T) { consoleTargets(t, testStatusCleanupHealth) }

func testStatusCleanupHealth(t *testing.T, tgt testdb.Target) {
	db, d, g, gj := migratedTable(t, tgt)
	add(t, db, d, "a", "b", "c", "d")
	now := time.Now()
	sess := ownAll(t, db, d, "ctl-relay")
	recs := readAll(t, db, d, now)
	if len(recs) != 4 {
		t.Fatalf("read %d rows, want 4", len(recs))
	}
	// Two rows published 3 h and 2 h ago, one a minute ago, one pending.
	for i, ago := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Minute} {
		m := dialects.Mark{Token: sess.Token(), Seqs: []int64{recs[i].Seq}, At: now.Add(-ago)}
		if n, err := d.Mark(t.Context(), db, m); err != nil || n != 1 {
			t.Fatalf("Mark: %d, %v", n, err)
		}
	}

	status := func(retention string) statusJSON {
		t.Helper()
		var st statusJSON
		ctl(t, &st, append(gj, "status", "-retention", retention)...)
		return st
	}
	st := status("1h")
	c := st.Cleanup
	if c == nil || c.RetentionSeconds != 3600 || c.PastRetention != 2 || c.PastRetentionMore ||
		c.OldestPublished == nil || c.OldestPublished.Sub(now.Add(-3*time.Hour)).Abs() > time.Second ||
		c.LagSeconds < 2*3600-60 || c.LagSeconds > 2*3600+60 {
		t.Fatalf("status -retention 1h: cleanup %+v, want 2 rows past retention, the oldest 2h past it", c)
	}
	if c := status("150m").Cleanup; c == nil || c.PastRetention != 1 {
		t.Fatalf("status -retention 150m: cleanup %+v, want 1 row past retention", c)
	}
	if c := status("24h").Cleanup; c == nil || c.PastRetention != 0 || c.LagSeconds != 0 || c.OldestPublished == nil {
		t.Fatalf("status -retention 24h: cleanup %+v, want none past retention", c)
	}
	if c := status("0").Cleanup; c != nil {
		t.Fatalf("status -retention 0: cleanup %+v, want none", c)
	}
	if c := status("168h").Cleanup; c == nil || c.PastRetention != 0 || c.RetentionSeconds != (168*time.Hour).Seconds() {
		t.Fatalf("status (default retention): cleanup %+v", c)
	}

	var out bytes.Buffer
	if err := run(t.Context(), append(g, "status", "-retention", "1h"), &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "past retention  2 rows, the oldest 2h0m") || !strings.Contains(out.String(), "past retention (1h0m0s)") {
		t.Fatalf("human status lacks the rows past retention:\n%s", out.String())
	}
}

// TestConsoleCleanupHealth: with -retention the overview shows the
// published rows kept past it, marked bad more than an hour past (as the
// JitoutboxCleanupLate alert); without it, no such card.
func TestConsoleCleanupHealth(t *testing.T) {
	consoleTargets(t, func(t *testing.T, tgt testdb.Target) {
		f := newFixture(t, tgt)
		add(t, f.db, f.d, "z")
		now := time.Now()
		recs := readAll(t, f.db, f.d, now)
		if len(recs) != 1 || recs[0].AggregateID != "z" {
			t.Fatalf("read %+v, want order/z's event", recs)
		}
		m := dialects.Mark{Token: f.sess.Token(), Seqs: []int64{recs[0].Seq}, At: now.Add(-3 * time.Hour)}
		if n, err := f.d.Mark(t.Context(), f.db, m); err != nil || n != 1 {
			t.Fatalf("Mark: %d, %v", n, err)
		}
		for _, c := range []struct {
			retention time.Duration
			wants     []string
			not       []string
		}{
			{time.Hour, []string{`class="card bad" id="past-retention"`, `<div class="value">1</div>`, "the oldest 2h0m"}, nil},
			{24 * time.Hour, []string{`class="card" id="past-retention"`, "retention 24h0m0s"}, nil},
			{0, nil, []string{`id="past-retention"`}},
		} {
			srv := httptest.NewServer(f.console(t, consoleOptions{retention: c.retention}).handler())
			code, body, _ := get(t, srv.URL, "/")
			srv.Close()
			if code != http.StatusOK {
				t.Fatalf("-retention %v: GET / = %d: %s", c.retention, code, body)
			}
			for _, w := range c.wants {
				if !strings.Contains(body, w) {
					t.Errorf("-retention %v: the overview lacks %q", c.retention, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(body, w) {
					t.Errorf("-retention %v: the overview shows %q", c.retention, w)
				}
			}
		}
	})
}
