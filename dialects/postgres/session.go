package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// sessionSQL holds the session statements (sql/session_*.sql).
type sessionSQL struct {
	open, gc, kick, take, release, check, view, close, wait, waitCancel *sqlkit.Query
	waitPID                                                             string
}

// memberKeyMod maps a relay row's id to the second key of its member lock,
// an int4: the SQL takes the lock of (id % memberKeyMod), written in as
// {{member_key_mod}}, and WaitChange binds the same key for the relay it
// watches.
const memberKeyMod = math.MaxInt32

// cancelEvery is how often WaitChange cancels its wait again once its
// context ended, until the wait returns.
const cancelEvery = 100 * time.Millisecond

// gcAge is how old a relay row must be before a session that finds its
// member lock free forgets it.
const gcAge = time.Minute

// session is a relay's ownership session: a dedicated connection holding
// the session's member lock and one advisory lock per owned partition.
type session struct {
	d     *Dialect
	db    *sql.DB
	conn  *sql.Conn // the session connection: its locks are the ownership
	watch *sql.Conn // WaitChange's connection, opened on first use
	// watchPID is the backend pid of watch.
	watchPID int32
	token    string
	// partNS and memberNS are the table's advisory lock namespaces.
	partNS, memberNS int32
	mu               sync.Mutex       // guards ids: WaitChange runs beside the other methods
	ids              map[string]int64 // relay token -> relays.id, from the last View
	lost             bool
}

var _ dialects.Session = (*session)(nil)

// OpenSession opens a dedicated connection, registers the relay session in
// <table>_relays and takes its member lock. Ownership lasts as long as that
// connection: run relays directly against PostgreSQL or behind a pooler in
// session mode, never in transaction mode (a session lock would outlive its
// client).
func (d *Dialect) OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (dialects.Session, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: open session: %w", err)
	}
	s := &session{d: d, db: db, conn: conn, token: newToken(relay)}
	if s.partNS, s.memberNS, err = d.lockNamespaces(ctx, conn); err != nil {
		discard(conn)
		if _, perr := d.Partitions(ctx, db); perr != nil {
			return nil, perr
		}
		return nil, err
	}
	var id int64
	var locked any
	err = sqlkit.QueryRow(ctx, conn, d.sess.open, sql.Named("member_ns", s.memberNS), sql.Named("token", s.token),
		sql.Named("name", relay), sql.Named("now", sqlkit.UTC(time.Now()))).Scan(&id, &locked)
	if err != nil {
		discard(conn)
		if _, perr := d.Partitions(ctx, db); perr != nil {
			return nil, perr
		}
		return nil, fmt.Errorf("postgres: open session: %w", err)
	}
	// Forget relays that are gone; a failure only leaves rows behind.
	_, _ = sqlkit.Exec(ctx, conn, d.sess.gc, sql.Named("member_ns", s.memberNS), sql.Named("before", sqlkit.UTC(time.Now().Add(-gcAge))))
	// Tell the other relays' watches that a relay joined. Best effort: a
	// role that may not cancel the others' queries leaves them to notice
	// at their next rebalance.
	var kicked int
	_ = sqlkit.QueryRow(ctx, conn, d.sess.kick, sql.Named("member_ns", s.memberNS)).Scan(&kicked)
	return s, nil
}

// Nudge implements dialects.Session: it cancels the other relays' waits
// on this table's member locks (session_kick.sql), on the session's
// connection.
func (s *session) Nudge(ctx context.Context) error {
	var kicked int
	if err := sqlkit.QueryRow(ctx, s.conn, s.d.sess.kick, sql.Named("member_ns", s.memberNS)).Scan(&kicked); err != nil {
		return fmt.Errorf("postgres: nudge: %w", err)
	}
	return nil
}

// newToken returns "<relay>/<random hex>": unique per session.
func newToken(relay string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return relay + "/" + hex.EncodeToString(b[:])
}

// discard closes conn for good instead of returning it to the pool, so
// that every session lock it holds dies with it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

func (s *session) Token() string { return s.token }

// fail marks the session lost when err came from its connection.
func (s *session) fail(op string, err error) error {
	s.lost = true
	return fmt.Errorf("postgres: session %s: %w: %w", op, dialects.ErrSessionLost, err)
}

func (s *session) Take(ctx context.Context, parts []int, now time.Time) ([]int, error) {
	if s.lost {
		return nil, s.fail("take", errors.New("session already lost"))
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := sqlkit.QueryRows(ctx, s.conn, s.d.sess.take, sql.Named("parts", partArray(parts)), sql.Named("part_ns", s.partNS),
		sql.Named("token", s.token), sql.Named("now", sqlkit.UTC(now)))
	if err != nil {
		// The locks may be held with no owner recorded: end the session.
		return nil, s.fail("take", err)
	}
	defer rows.Close()
	var taken []int
	for rows.Next() {
		var p int
		if err := rows.Scan(&p); err != nil {
			return nil, s.fail("take", err)
		}
		taken = append(taken, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("take", err)
	}
	slices.Sort(taken)
	return taken, nil
}

func (s *session) Release(ctx context.Context, parts []int) error {
	if len(parts) == 0 || s.lost {
		return nil
	}
	var n int
	err := sqlkit.QueryRow(ctx, s.conn, s.d.sess.release, sql.Named("parts", partArray(parts)), sql.Named("part_ns", s.partNS),
		sql.Named("token", s.token)).Scan(&n)
	if err != nil {
		return s.fail("release", err)
	}
	return nil
}

func (s *session) Check(ctx context.Context, now time.Time) ([]int, time.Time, error) {
	if s.lost {
		return nil, time.Time{}, s.fail("check", errors.New("session already lost"))
	}
	rows, err := sqlkit.QueryRows(ctx, s.conn, s.d.sess.check, sql.Named("token", s.token))
	if err != nil {
		return nil, time.Time{}, s.fail("check", err)
	}
	defer rows.Close()
	var owned []int
	for rows.Next() {
		var p int
		if err := rows.Scan(&p); err != nil {
			return nil, time.Time{}, s.fail("check", err)
		}
		owned = append(owned, p)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, s.fail("check", err)
	}
	slices.Sort(owned)
	return owned, time.Time{}, nil
}

func (s *session) View(ctx context.Context, now time.Time) (dialects.View, error) {
	var v dialects.View
	if s.lost {
		return v, s.fail("view", errors.New("session already lost"))
	}
	rows, err := sqlkit.QueryRows(ctx, s.conn, s.d.sess.view, sql.Named("member_ns", s.memberNS))
	if err != nil {
		return v, s.fail("view", err)
	}
	v, ids, err := sqlkit.ScanView(rows)
	if err != nil {
		return v, s.fail("view", err)
	}
	s.mu.Lock()
	s.ids = ids
	s.mu.Unlock()
	return v, nil
}

// WaitChange blocks, on a connection of its own, on the member lock of the
// next live relay in v's ring (sqlkit.Watch), or of its own session when
// alone: granted only if the session's connection died. A joiner's kick
// interrupts it (ErrRelaysChanged). It idles without a statement.
func (s *session) WaitChange(ctx context.Context, v dialects.View) error {
	s.mu.Lock()
	target, live, ok := sqlkit.Watch(v.Relays, s.token, s.ids)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("postgres: wait: a relay of the view is not in the last view read")
	}
	if s.watch == nil {
		c, err := s.db.Conn(ctx)
		if err == nil {
			if err = c.QueryRowContext(ctx, s.d.sess.waitPID).Scan(&s.watchPID); err != nil {
				discard(c)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("postgres: wait: %w", err)
		}
		s.watch = c
	}
	stop := s.cancelOnDone(ctx)
	var a, b any
	err := sqlkit.QueryRow(ctx, s.watch, s.d.sess.wait, sql.Named("member_ns", s.memberNS),
		sql.Named("relay", int32(target%memberKeyMod)), sql.Named("live", intArray(live))).Scan(&a, &b)
	stop()
	if errors.Is(err, sql.ErrNoRows) {
		// The live relays are no longer v's: one joined since v was read.
		return fmt.Errorf("postgres: wait: %w", dialects.ErrRelaysChanged)
	}
	if err != nil {
		// Cancelled or broken: the lock may have been granted before the
		// cancel; never return such a connection to the pool.
		discard(s.watch)
		s.watch = nil
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if strings.Contains(err.Error(), "canceling statement due to user request") {
			return fmt.Errorf("postgres: wait: %w", dialects.ErrRelaysChanged)
		}
		return fmt.Errorf("postgres: wait: %w", err)
	}
	return nil
}

// cancelOnDone cancels the watch statement once ctx ends, and again every
// cancelEvery until stop: a cancel that reaches the backend before the
// statement is dropped, and a lone relay's wait would then never end.
func (s *session) cancelOnDone(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		t := time.NewTicker(cancelEvery)
		defer t.Stop()
		for {
			cctx, cancel := context.WithTimeout(context.Background(), cancelEvery)
			var ok bool
			_ = sqlkit.QueryRow(cctx, s.db, s.d.sess.waitCancel, sql.Named("pid", s.watchPID)).Scan(&ok)
			cancel()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// Close clears the session's partitions and relay row, frees its locks and
// closes its connections for good.
func (s *session) Close() error {
	if s.watch != nil {
		discard(s.watch)
		s.watch = nil
	}
	if s.conn == nil {
		return nil
	}
	var err error
	if !s.lost {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var ok any
		err = sqlkit.QueryRow(ctx, s.conn, s.d.sess.close, sql.Named("token", s.token)).Scan(&ok)
		cancel()
	}
	discard(s.conn)
	s.conn = nil
	if err != nil {
		return fmt.Errorf("postgres: close session: %w", err)
	}
	return nil
}
