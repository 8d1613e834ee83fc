package postgres_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/internal/migrate"
)

// TestVersionedFunctions: a relay of this version refuses a table that
// lacks the versioned functions (ErrSchemaVersion), Migrate installs them,
// the previous releases' functions (read_v2 included) stay for their relays
// (and answer them on the migrated table), and neither Migrate nor Schema() makes what no
// supported release calls (001's claim functions and three-argument mark,
// 002's four-argument read).
func TestVersionedFunctions(t *testing.T) {
	ctx := t.Context()
	d, err := postgres.New()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"outbox_mark/4", "outbox_mark_v2/4", "outbox_mark_v3/4", "outbox_read/5", "outbox_read_v2/5", "outbox_read_v3/5", "outbox_read_v4/5", "outbox_read_v5/5"}
	// list returns the functions of the test's schema as "name/arguments".
	list := func(t *testing.T, db dialects.Querier) []string {
		t.Helper()
		return column[string](t, db, `SELECT p.proname || '/' || p.pronargs FROM pg_proc p
			WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1`)
	}

	t.Run("Migrate", func(t *testing.T) {
		db := openPostgres(t, "postgres")
		if err := postgres.MigrateTo(ctx, d, db, 7); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Partitions(ctx, db); !errors.Is(err, dialects.ErrSchemaVersion) {
			t.Fatalf("Partitions at version 7: %v, want ErrSchemaVersion", err)
		}
		if got := list(t, db); slices.Contains(got, "outbox_read_v2/5") || !slices.Contains(got, "outbox_read/5") {
			t.Fatalf("functions at version 7: %v", got)
		}
		// The previous release's writers write at version 7 (this version's
		// need 009's deliver_at).
		now := time.Now().UTC().Truncate(time.Microsecond)
		evs := []dialects.Event{
			{ID: "00000000-0000-7000-8000-000000000001", AggregateType: "order", AggregateID: "a", EventType: "e",
				Payload: []byte("p"), ContentType: "text/plain", CreatedAt: now, Partition: dialects.PartitionOf("order", "a", dialects.DefaultPartitions)},
			{ID: "00000000-0000-7000-8000-000000000002", AggregateType: "order", AggregateID: "a", EventType: "e",
				Payload: []byte("q"), ContentType: "text/plain", CreatedAt: now, Partition: dialects.PartitionOf("order", "a", dialects.DefaultPartitions)},
		}
		for _, e := range evs {
			if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload,
				content_type, created_at, next_attempt_at, part) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`,
				e.ID, e.AggregateType, e.AggregateID, e.EventType, e.Payload, e.ContentType, e.CreatedAt, e.Partition); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Partitions(ctx, db); err != nil {
			t.Fatalf("Partitions after Migrate: %v", err)
		}
		if got := list(t, db); !slices.Equal(got, want) {
			t.Fatalf("functions after Migrate = %v, want %v", got, want)
		}
		// The reads of the releases before (005's function, read_v2) and
		// this version's read return the same rows.
		parts := make([]string, dialects.DefaultPartitions)
		all := make([]int, dialects.DefaultPartitions)
		for i := range parts {
			parts[i], all[i] = strconv.Itoa(i), i
		}
		var old int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_read($1, 0, 0, $2, 10)`,
			"{"+strings.Join(parts, ",")+"}", now).Scan(&old); err != nil || old != len(evs) {
			t.Fatalf("the previous release's read: %d rows, %v; want %d", old, err, len(evs))
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_read_v2($1, 0, 0, $2, 10)`,
			"{"+strings.Join(parts, ",")+"}", now).Scan(&old); err != nil || old != len(evs) {
			t.Fatalf("read_v2: %d rows, %v; want %d", old, err, len(evs))
		}
		res, err := d.Read(ctx, db, dialects.ReadRequest{Partitions: all, Limit: 10, Now: now})
		if err != nil || len(res.Records) != len(evs) || res.Records[0].ID != evs[0].ID {
			t.Fatalf("Read after Migrate: %+v, %v", res.Records, err)
		}
	})

	t.Run("Schema", func(t *testing.T) {
		db := openPostgres(t, "postgres")
		for _, stmt := range migrate.SplitStatements(d.Schema()) {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("Schema() statement: %v\n%s", err, stmt)
			}
		}
		if got := list(t, db); !slices.Equal(got, want) {
			t.Fatalf("functions made by Schema() = %v, want %v", got, want)
		}
	})
}
