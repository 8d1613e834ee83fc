package bench

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jitoutbox/jitoutbox/inbox"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

var (
	inboxEvents   = flag.Int("inbox.events", 2000, "messages per variant and per iteration of BenchmarkInbox")
	inboxAccounts = flag.Int("inbox.accounts", 100, "business rows (aggregates) BenchmarkInbox's side effect updates")
)

// inboxDB is one database prepared for BenchmarkInbox: an accounts table
// (the business rows) and the inbox's tables.
type inboxDB struct {
	name    string
	db      *sql.DB
	dialect inbox.Dialect
	// update is the side effect: one UPDATE of one account's row.
	update string
	// hand is the hand-written record of an event id: a plain INSERT of
	// the inbox's columns into a copy of its processed table.
	hand string
}

func openInboxDB(b *testing.B, name string) *inboxDB {
	var (
		db      *sql.DB
		dialect inbox.Dialect
		update  string
		ddl     string
	)
	switch name {
	case "postgres", "postgres-pgx":
		driver := "postgres"
		if name == "postgres-pgx" {
			driver = "pgx"
		}
		db, _ = testdb.Postgres(b, driver)
		dialect = inbox.Postgres
		update = "UPDATE accounts SET balance = balance + $1, version = version + 1 WHERE id = $2"
		ddl = "CREATE TABLE accounts (id TEXT PRIMARY KEY, balance BIGINT NOT NULL, version BIGINT NOT NULL)"
	case "mysql":
		db, _ = testdb.MySQL(b)
		dialect = inbox.MySQL
		update = "UPDATE accounts SET balance = balance + ?, version = version + 1 WHERE id = ?"
		ddl = "CREATE TABLE accounts (id VARCHAR(64) PRIMARY KEY, balance BIGINT NOT NULL, version BIGINT NOT NULL)"
	default:
		b.Fatalf("unknown database %q", name)
	}
	db.SetMaxIdleConns(4)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < *inboxAccounts; i++ {
		if _, err := db.ExecContext(ctx, "INSERT INTO accounts (id, balance, version) VALUES ('acct-"+strconv.Itoa(i)+"', 0, 0)"); err != nil {
			b.Fatal(err)
		}
	}
	ph := func(n int) string { return "$" + strconv.Itoa(n) }
	if dialect == inbox.MySQL {
		ph = func(int) string { return "?" }
	}
	hand := "INSERT INTO hand_processed (event_id, aggregate_type, aggregate_id, event_type, seq, payload_hash, processed_at) VALUES ("
	for i := 1; i <= 7; i++ {
		if i > 1 {
			hand += ", "
		}
		hand += ph(i)
	}
	return &inboxDB{name: name, db: db, dialect: dialect, update: update, hand: hand + ")"}
}

// BenchmarkInbox measures what the inbox adds to a consumer's side effect,
// side by side in one loop on one connection pool: for each message,
//
//   - plain: the side effect alone, a transaction with one UPDATE of a
//     business row, committed (what a consumer without an inbox does);
//   - inbox: the same side effect through inbox.Handle, first delivery
//     (the id's INSERT, the UPDATE, COMMIT);
//   - order: the same with Config.OnOutOfOrder set (the aggregate's seq
//     row locked and updated as well);
//   - dup: the inbox message delivered again: Handle finds the id and
//     returns Duplicate (BEGIN, the INSERT that does nothing, the hash
//     probe, ROLLBACK).
//   - hand: the floor of any inbox that records the id in the side
//     effect's transaction: the UPDATE and a hand-written INSERT of the
//     same columns into a copy of the processed table, no duplicate check.
//
// The order of the five rotates from message to message so none is always
// first after another. Each iteration handles -inbox.events messages of each
// kind. Metrics: <kind>-us/event, inbox/plain and order/plain (target
// <= 1.3), dup/plain, hand/plain, inbox/hand (what the library costs over
// the hand-written floor) and inbox-added-us/event (inbox minus plain).
func BenchmarkInbox(b *testing.B) {
	for _, name := range []string{"postgres", "postgres-pgx", "mysql"} {
		b.Run(name, func(b *testing.B) {
			idb := openInboxDB(b, name)
			ctx := context.Background()
			plainIn, err := inbox.New(inbox.Config{Dialect: idb.dialect})
			if err != nil {
				b.Fatal(err)
			}
			orderIn, err := inbox.New(inbox.Config{Dialect: idb.dialect,
				OnOutOfOrder: func(context.Context, inbox.Message, int64) inbox.Decision { return inbox.Reject }})
			if err != nil {
				b.Fatal(err)
			}
			if err := plainIn.Migrate(ctx, idb.db); err != nil {
				b.Fatal(err)
			}
			like := "CREATE TABLE hand_processed (LIKE inbox_processed INCLUDING ALL)"
			if idb.dialect == inbox.MySQL {
				like = "CREATE TABLE hand_processed LIKE inbox_processed"
			}
			if _, err := idb.db.ExecContext(ctx, like); err != nil {
				b.Fatal(err)
			}
			accounts := *inboxAccounts
			seqs := make([]int64, accounts) // the order check's last seq per account
			var n int
			msg := func() (inbox.Message, string) {
				n++
				acct := n % accounts
				seqs[acct]++
				id := "acct-" + strconv.Itoa(acct)
				return inbox.Message{
					EventID:       uuid.Must(uuid.NewV7()).String(),
					AggregateType: "account",
					AggregateID:   id,
					EventType:     "account.credited",
					Seq:           seqs[acct],
					Payload:       payload,
				}, id
			}
			apply := func(acct string) inbox.ApplyFunc {
				return func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, idb.update, 1, acct)
					return err
				}
			}
			plain := func(acct string) error {
				tx, err := idb.db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback() }()
				if err := apply(acct)(ctx, tx); err != nil {
					return err
				}
				return tx.Commit()
			}
			// handRecord is the floor of any inbox that records ids in the
			// side effect's transaction: the same UPDATE plus a hand-written
			// INSERT of the id, no duplicate check.
			handRecord := func(m inbox.Message, acct string) error {
				tx, err := idb.db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback() }()
				sum := sha256.Sum256(m.Payload)
				if _, err := tx.ExecContext(ctx, idb.hand, m.EventID, m.AggregateType, m.AggregateID, m.EventType,
					m.Seq, sum[:], time.Now().UTC().Truncate(time.Microsecond)); err != nil {
					return err
				}
				if err := apply(acct)(ctx, tx); err != nil {
					return err
				}
				return tx.Commit()
			}
			handle := func(in *inbox.Inbox, m inbox.Message, acct string, want inbox.Result) {
				res, err := in.Handle(ctx, idb.db, m, apply(acct))
				if err != nil {
					b.Fatal(err)
				}
				if res != want {
					b.Fatalf("event %s: %v, want %v", m.EventID, res, want)
				}
			}

			kinds := [...]string{"plain", "inbox", "order", "dup", "hand"}
			var elapsed [len(kinds)]time.Duration
			var prev inbox.Message
			var prevAcct string
			// round runs the kinds once, starting with kind r%5; dup
			// redelivers the message inbox applied in the round before.
			// timed adds their durations to elapsed.
			round := func(r int, timed bool) {
				m, acct := msg()
				mo, accto := msg()
				mh, accth := msg()
				for k := range kinds {
					kind := (k + r) % len(kinds)
					t0 := time.Now()
					switch kind {
					case 0:
						if err := plain(acct); err != nil {
							b.Fatal(err)
						}
					case 1:
						handle(plainIn, m, acct, inbox.Applied)
					case 2:
						handle(orderIn, mo, accto, inbox.Applied)
					case 3:
						handle(plainIn, prev, prevAcct, inbox.Duplicate)
					case 4:
						if err := handRecord(mh, accth); err != nil {
							b.Fatal(err)
						}
					}
					if timed {
						elapsed[kind] += time.Since(t0)
					}
				}
				prev, prevAcct = m, acct
			}
			// The first round's dup needs an applied message; warm the pool
			// and the servers' plans up as well.
			prev, prevAcct = msg()
			handle(plainIn, prev, prevAcct, inbox.Applied)
			for r := 0; r < 200; r++ {
				round(r, false)
			}

			events := *inboxEvents
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for r := 0; r < events; r++ {
					round(r, true)
				}
			}
			b.StopTimer()
			total := float64(b.N * events)
			us := func(kind int) float64 { return float64(elapsed[kind].Microseconds()) / total }
			for kind, name := range kinds {
				b.ReportMetric(us(kind), name+"-us/event")
			}
			b.ReportMetric(float64(elapsed[1])/float64(elapsed[0]), "inbox/plain")
			b.ReportMetric(float64(elapsed[2])/float64(elapsed[0]), "order/plain")
			b.ReportMetric(float64(elapsed[3])/float64(elapsed[0]), "dup/plain")
			b.ReportMetric(float64(elapsed[4])/float64(elapsed[0]), "hand/plain")
			b.ReportMetric(float64(elapsed[1])/float64(elapsed[4]), "inbox/hand")
			b.ReportMetric(us(1)-us(0), "inbox-added-us/event")
		})
	}
}
