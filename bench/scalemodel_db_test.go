package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// scaleDB is BenchmarkScaleModel on one database: the time-critical
// latency, then per mark mode the read + mark windows, their fit and the
// drains, then the producers' transactions.
func scaleDB(b *testing.B, dbName string, sizes []int) {
	ctx := context.Background()
	nc, js := benchJetStream(b)
	db, d, dsn := openDBDSN(b, dbName, 16)
	bd := &benchDB{name: dbName, db: db, dialect: d}
	// work runs the timed statements; on PostgreSQL it is one connection,
	// so that its backend's CPU is the database's for the window, and
	// nosync one connection with synchronous_commit off (marks that do not
	// wait for the WAL flush).
	work, sm := db, serverMeter{}
	var nosync *sql.DB
	switch dbName {
	case "postgres":
		var pid int
		work, pid = openBackend(b, dsn)
		if pid > 0 {
			sm.pids = []int{pid}
		}
		ndsn, err := withParam(dsn, "synchronous_commit", "off")
		if err != nil {
			b.Fatal(err)
		}
		nosync, _ = openBackend(b, ndsn)
	case "mysql":
		sm.pids = mysqldPID(b, db) // the whole server: others' work on it counts too
	case "sqlite":
		sm.inProcess = true
	}
	parts, err := d.Partitions(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	all := make([]int, parts)
	for p := range all {
		all[p] = p
	}
	// Latency first, side by side: the stages of a time-critical event
	// alone, then the relay delivering time-critical commits at light load.
	b.Run("latency", func(b *testing.B) { scaleLatency(b, js) })
	b.Run("critical/light", func(b *testing.B) {
		subJS, err := jetstream.New(testnats.Connect(b, testnats.URL(b)))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			latencyCase(b, db, d, js, subJS, latModes[0], false)
		}
	})
	for _, mode := range []string{"update", "delete"} {
		b.Run(mode, func(b *testing.B) {
			sess, err := d.OpenSession(ctx, db, "scalemodel", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if taken, err := sess.Take(ctx, all, time.Now()); err != nil || len(taken) != parts {
				b.Fatalf("scalemodel: took %d of %d partitions: %v", len(taken), parts, err)
			}
			fp := fitPoints{}
			for _, n := range sizes {
				b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
					w := claimMarkWindow{bd: bd, token: sess.Token(), parts: all, n: n, del: mode == "delete"}
					var cpu cpuMeter
					srv := sm.window()
					read, mark := w.run(b, work, work, &cpu, srv)
					reportStage(b, fp, "read", n, read)
					reportStage(b, fp, "mark", n, mark)
					cpuReport(b, &cpu, srv, sm, fp, n)
					if nosync != nil {
						_, mark := w.run(b, work, nosync, nil, nil)
						reportStage(b, fp, "mark-nosync", n, mark)
					}
				})
			}
			b.Run("fit", fp.report)
			if err := sess.Close(); err != nil { // the relays of the drains take the partitions
				b.Fatal(err)
			}
			for _, relays := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("drain/relays=%d", relays), func(b *testing.B) {
					cpu := cpuMeter{servers: true}
					pub := benchPublisher(b, js, nc, "jetstream")
					rate := drain(b, bd, pub, backlog{*scaleDrain, *drainAggregates}, relays, limitsBatch, mode == "delete", &cpu)
					b.ReportMetric(rate, "events/s")
					if others, ok := cpu.others(); ok {
						b.ReportMetric(others, "others-cores")
					}
					cpu.report(b, "", "event")
				})
			}
		})
	}
	b.Run("insert", func(b *testing.B) { scaleInsert(b, bd, work, sm, sizes) })
}

// openBackend opens dsn (PostgreSQL, lib/pq) with one connection and
// returns it and its backend's pid when that backend is a process of this
// machine (0 otherwise).
func openBackend(b *testing.B, dsn string) (*sql.DB, int) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	var pid int
	if err := db.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	if !slices.Contains(findProcesses("postgres"), pid) {
		return db, 0
	}
	return db, pid
}

// claimMarkWindow is the read + mark window of one batch size.
type claimMarkWindow struct {
	bd    *benchDB
	token string
	parts []int
	n     int
	del   bool
}

// run seeds windowBatches(n)·n events b.N times (untimed) and reads them n
// at a time through readDB and marks them through markDB; it returns the
// times of the reads and of the marks. cpu and srv, when set, meter the
// windows.
func (w claimMarkWindow) run(b *testing.B, readDB, markDB *sql.DB, cpu *cpuMeter, srv *procMeter) (read, mark durations) {
	ctx := context.Background()
	d := w.bd.dialect
	batches := windowBatches(w.n)
	seqs := make([]int64, 0, w.n)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := w.bd.db.ExecContext(ctx, "DELETE FROM "+d.Table()); err != nil {
			b.Fatal(err)
		}
		seed(b, w.bd, batches*w.n, *drainAggregates)
		b.StartTimer()
		if cpu != nil {
			startMeters(cpu, srv)
		}
		for range batches {
			t0 := time.Now()
			res, err := d.Read(ctx, readDB, dialects.ReadRequest{Partitions: w.parts, Limit: w.n, Now: time.Now()})
			t1 := time.Now()
			recs := res.Records
			if err != nil || len(recs) != w.n {
				b.Fatalf("read %d rows of %d: %v", len(recs), w.n, err)
			}
			seqs = seqs[:0]
			for _, r := range recs {
				seqs = append(seqs, r.Seq)
			}
			m, err := d.Mark(ctx, markDB, dialects.Mark{Token: w.token, Seqs: seqs, At: time.Now(), Delete: w.del})
			mark = append(mark, time.Since(t1))
			read = append(read, t1.Sub(t0))
			if err != nil || m != int64(w.n) {
				b.Fatalf("marked %d rows of %d: %v", m, w.n, err)
			}
		}
		if cpu != nil {
			stopMeters(cpu, srv, batches)
		}
	}
	return read, mark
}

// scaleInsert times producers' transactions of n events through txoutbox.
func scaleInsert(b *testing.B, bd *benchDB, work *sql.DB, sm serverMeter, sizes []int) {
	ctx := context.Background()
	ob, err := txoutbox.New(work, bd.dialect)
	if err != nil {
		b.Fatal(err)
	}
	fp := fitPoints{}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			batches := windowBatches(n)
			var cpu cpuMeter
			srv := sm.window()
			var wall durations
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := bd.db.ExecContext(ctx, "DELETE FROM "+bd.dialect.Table()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				startMeters(&cpu, srv)
				for k := range batches {
					t0 := time.Now()
					tx, err := ob.Begin(ctx, nil)
					if err != nil {
						b.Fatal(err)
					}
					for j := range n {
						if _, err := tx.Add(txoutbox.Event{AggregateType: "order",
							AggregateID: "agg-" + strconv.Itoa((k*n+j)%*drainAggregates), EventType: "order.placed",
							Payload: payload, ContentType: "application/json"}); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
					wall = append(wall, time.Since(t0))
				}
				stopMeters(&cpu, srv, batches)
			}
			reportStage(b, fp, "insert", n, wall)
			cpuReport(b, &cpu, srv, sm, fp, n)
		})
	}
	b.Run("fit", fp.report)
}

// withParam adds key=value to a PostgreSQL URL or key=value DSN (lib/pq
// sends parameters it does not know to the server as settings).
func withParam(dsn, key, value string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse the PostgreSQL DSN: invalid URL")
		}
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " " + key + "=" + value, nil
}

// mysqldPID returns the pid of the MariaDB/MySQL server db talks to, from
// its pid file, when it is a process of this machine (nil otherwise).
func mysqldPID(b *testing.B, db *sql.DB) []int {
	var file string
	if err := db.QueryRowContext(context.Background(), "SELECT @@pid_file").Scan(&file); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || !slices.Contains(findProcesses("mariadbd", "mysqld"), pid) {
		return nil
	}
	return []int{pid}
}

// natsServerPID returns the pid of the nats-server process serving url:
// the only one, or the one whose command line names url's port.
func natsServerPID(url string) []int {
	pids := findProcesses("nats-server")
	if len(pids) <= 1 {
		return pids
	}
	port := url[strings.LastIndexByte(url, ':')+1:]
	for _, pid := range pids {
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && slices.Contains(strings.Split(string(cmd), "\x00"), port) {
			return []int{pid}
		}
	}
	return nil
}
