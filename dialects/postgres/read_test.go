package postgres_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

// TestReadV5MatchesV4: read_v5 probes blocks and holds only for rows of a
// partition that has one in force; it returns what read_v4 returns, from
// the start and ahead, with a block in force, a dead block, an expired
// block and a hold in the table, for reads of partitions that have them
// (with partitions that have none) and of partitions that have none.
func TestReadV5MatchesV4(t *testing.T) {
	ctx := t.Context()
	db := openPostgres(t, "postgres")
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	const parts = dialects.DefaultPartitions
	// Aggregates in distinct partitions: blocked (in force), dead, expired,
	// held, and two free ones.
	aggs := map[string]string{}
	partOf := map[string]int{}
	used := map[int]bool{}
	for _, role := range []string{"blocked", "dead", "expired", "held", "free1", "free2"} {
		for i := 0; ; i++ {
			id := role + "-" + strconv.Itoa(i)
			if p := dialects.PartitionOf("order", id, parts); !used[p] {
				used[p], aggs[role], partOf[role] = true, id, p
				break
			}
		}
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	n := 0
	event := func(role string) dialects.Event {
		n++
		return dialects.Event{ID: "00000000-0000-7000-8000-" + pad12(n),
			AggregateType: "order", AggregateID: aggs[role], EventType: "e", Payload: []byte("p"),
			ContentType: "text/plain", CreatedAt: now, Partition: partOf[role]}
	}
	var evs []dialects.Event
	for range 3 {
		for _, role := range []string{"blocked", "dead", "expired", "free1", "free2"} {
			evs = append(evs, event(role))
		}
	}
	held := event("held")
	held.Delay = time.Hour // holds the aggregate's later rows for an hour
	evs = append(evs, held, event("held"), event("held"))
	if err := d.Insert(ctx, db, evs); err != nil {
		t.Fatal(err)
	}
	all := make([]int, parts)
	for i := range all {
		all[i] = i
	}
	s, err := d.OpenSession(ctx, db, "r", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Take(ctx, all, time.Now()); err != nil {
		t.Fatal(err)
	}
	first := func(role string) dialects.Event {
		for _, e := range evs {
			if e.AggregateID == aggs[role] {
				return e
			}
		}
		t.Fatalf("no event of %s", role)
		return dialects.Event{}
	}
	seqOf := func(id string) int64 {
		var seq int64
		if err := db.QueryRowContext(ctx, "SELECT seq FROM outbox WHERE id = $1", id).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	var fails []dialects.Failure
	for role, f := range map[string]struct {
		next time.Duration
		dead bool
	}{"blocked": {time.Hour, false}, "dead": {0, true}, "expired": {-time.Hour, false}} {
		e := first(role)
		fails = append(fails, dialects.Failure{Seq: seqOf(e.ID), Partition: e.Partition, AggregateType: e.AggregateType,
			AggregateID: e.AggregateID, Error: "x", NextAttemptAt: now.Add(f.next), Dead: f.dead, Block: true})
	}
	if err := d.Fail(ctx, db, s.Token(), fails); err != nil {
		t.Fatal(err)
	}
	var maxSeq int64
	if err := db.QueryRowContext(ctx, "SELECT max(seq) FROM outbox").Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	read := func(fn string, ps []int, after, horizon int64) []int64 {
		t.Helper()
		return column[int64](t, db, "SELECT seq FROM outbox_"+fn+"($1, $2, $3, $4, 100)", partList(ps), after, horizon, now)
	}
	free := []int{partOf["free1"], partOf["free2"]}
	withBlock := []int{partOf["blocked"], partOf["free1"]}
	withHold := []int{partOf["held"], partOf["free2"]}
	withDead := []int{partOf["expired"], partOf["dead"]}
	// evs[0] is the blocked aggregate's first row, evs[3] free1's first:
	// reads ahead past them.
	reads := []struct {
		name           string
		parts          []int
		after, horizon int64
		want           int // rows returned
	}{
		// The blocked, dead and held aggregates return nothing: their first
		// rows are not due, and their blocks and hold hold the others.
		{"all from the start", all, 0, 0, 3 + 6},
		{"all ahead", all, seqOf(evs[0].ID), maxSeq, 3 + 6},
		{"free from the start", free, 0, 0, 6},
		{"free ahead", free, seqOf(evs[3].ID), maxSeq, 5},
		{"block from the start", withBlock, 0, 0, 3},
		{"block ahead", withBlock, seqOf(evs[3].ID), maxSeq, 2},
		{"hold from the start", withHold, 0, 0, 3},
		{"dead block from the start", withDead, 0, 0, 3},
		{"expired block only", []int{partOf["expired"]}, 0, 0, 3},
	}
	for _, r := range reads {
		v4 := read("read_v4", r.parts, r.after, r.horizon)
		v5 := read("read_v5", r.parts, r.after, r.horizon)
		if !slices.Equal(v4, v5) {
			t.Errorf("%s: read_v5 %v, read_v4 %v", r.name, v5, v4)
		}
		if len(v5) != r.want {
			t.Errorf("%s: %d rows %v, want %d", r.name, len(v5), v5, r.want)
		}
	}
}

// column returns the first column of the rows q returns.
func column[T any](t *testing.T, db dialects.Querier, q string, args ...any) []T {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pad12 renders n as the 12 hex digits of a UUID's last group.
func pad12(n int) string {
	s := strconv.FormatInt(int64(n), 16)
	return strings.Repeat("0", 12-len(s)) + s
}

// partList renders partitions as the functions' p_parts.
func partList(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return "{" + strings.Join(s, ",") + "}"
}
