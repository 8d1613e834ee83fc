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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// sessionSQL holds the session statements (sql/session_*.sql).
type sessionSQL struct {
	open, gc, kick, take, release, check, view, close, unlock, wait, waitCancel *sqlkit.Query
	waitPID                                                                     string
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

// closeTimeout bounds the statements of Close.
const closeTimeout = 5 * time.Second

// unlockPasses bounds the runs of session_unlock.sql in Close: each frees
// one hold of each lock, and no lock of a session is held more than once
// unless a statement failed halfway.
const unlockPasses = 8

// session is a relay's ownership session: its member lock and one
// advisory lock per owned partition, held by a Locker's connection.
type session struct {
	d *Dialect
	l *dialects.Locker
	// ownLocker is set when l is the session's own (OpenSession): Close
	// closes it.
	ownLocker bool
	release   func()    // frees the table's place on l (Locker.Reserve)
	watch     *sql.Conn // WaitChange's connection, opened on first use
	// watchPID is the backend pid of watch.
	watchPID int32
	token    string
	// partNS and memberNS are the table's advisory lock namespaces.
	partNS, memberNS int32
	mu               sync.Mutex       // guards ids: WaitChange runs beside the other methods
	ids              map[string]int64 // relay token -> relays.id, from the last View
	lost             bool
	closed           bool
}

var _ dialects.Session = (*session)(nil)

// OpenSession opens a Locker of its own, a dedicated connection, and the
// session on it (OpenSessionOn); Close closes both. Ownership lasts as long
// as that connection: run relays directly against PostgreSQL or behind a
// pooler in session mode, never in transaction mode (a session lock would
// outlive its client).
func (d *Dialect) OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (dialects.Session, error) {
	return sqlkit.OwnLocker(ctx, db, "postgres", func(l *dialects.Locker) (dialects.Session, error) {
		return d.openOn(ctx, l, relay, true)
	})
}

// OpenSessionOn registers the relay session in <table>_relays and takes its
// member lock on l's connection, which holds the locks of the sessions of
// other tables too (see dialects.Dialect). The table's locks are in its own
// namespaces (a hash of its OID), so sessions of tables of one name in two
// schemas share a Locker without sharing locks.
func (d *Dialect) OpenSessionOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration) (dialects.Session, error) {
	return d.openOn(ctx, l, relay, false)
}

// openOn opens the session on l: it reserves the table's place on l,
// registers the relay, forgets the relays that are gone and interrupts the
// waits of the others. A session that owns l closes it with itself.
func (d *Dialect) openOn(ctx context.Context, l *dialects.Locker, relay string, ownLocker bool) (dialects.Session, error) {
	s := &session{d: d, l: l, ownLocker: ownLocker, token: newToken(relay)}
	err := l.Do(ctx, func(conn *sql.Conn) error {
		var err error
		s.partNS, s.memberNS, err = d.lockNamespaces(ctx, conn)
		return err
	})
	if err != nil {
		return nil, d.openErr(ctx, l, err)
	}
	if s.release, err = l.Reserve("postgres " + strconv.Itoa(int(s.partNS))); err != nil {
		return nil, fmt.Errorf("postgres: open session of %s: %w", d.table, err)
	}
	err = l.Do(ctx, func(conn *sql.Conn) error {
		var id int64
		var locked any
		if err := sqlkit.QueryRow(ctx, conn, d.sess.open, sql.Named("member_ns", s.memberNS), sql.Named("token", s.token),
			sql.Named("name", relay), sql.Named("now", sqlkit.UTC(time.Now()))).Scan(&id, &locked); err != nil {
			return err
		}
		// Forget relays that are gone; a failure only leaves rows behind.
		_, _ = sqlkit.Exec(ctx, conn, d.sess.gc, sql.Named("member_ns", s.memberNS), sql.Named("before", sqlkit.UTC(time.Now().Add(-gcAge))))
		// Tell the other relays' watches that a relay joined. Best effort: a
		// role that may not cancel the others' queries leaves them to notice
		// at their next rebalance.
		var kicked int
		_ = sqlkit.QueryRow(ctx, conn, d.sess.kick, sql.Named("member_ns", s.memberNS)).Scan(&kicked)
		return nil
	})
	if err != nil {
		// Free what the failed statement may have left on l's connection
		// (a member lock), and the table's place on l.
		s.lost = true
		_ = s.Close()
		return nil, d.openErr(ctx, l, err)
	}
	return s, nil
}

// openErr returns the error of a session that failed to open: the schema's
// when the table is not at this version (ErrSchemaVersion), else err.
func (d *Dialect) openErr(ctx context.Context, l *dialects.Locker, err error) error {
	if _, perr := d.Partitions(ctx, l.DB()); perr != nil {
		return perr
	}
	return fmt.Errorf("postgres: open session: %w", err)
}

// Nudge implements dialects.Session: it cancels the other relays' waits
// on this table's member locks (session_kick.sql), on the locker's
// connection.
func (s *session) Nudge(ctx context.Context) error {
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		var kicked int
		return sqlkit.QueryRow(ctx, conn, s.d.sess.kick, sql.Named("member_ns", s.memberNS)).Scan(&kicked)
	})
	if err != nil {
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
	taken, err := s.parts(ctx, s.d.sess.take, sql.Named("parts", partArray(parts)), sql.Named("part_ns", s.partNS),
		sql.Named("token", s.token), sql.Named("now", sqlkit.UTC(now)))
	if err != nil {
		// The locks may be held with no owner recorded: end the session
		// (its Close frees them).
		return nil, s.fail("take", err)
	}
	return taken, nil
}

// parts runs query on the locker's connection and returns the partitions
// its rows name, sorted.
func (s *session) parts(ctx context.Context, query *sqlkit.Query, args ...sql.NamedArg) ([]int, error) {
	var out []int
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		rows, err := sqlkit.QueryRows(ctx, conn, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p int
			if err := rows.Scan(&p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

func (s *session) Release(ctx context.Context, parts []int) error {
	if len(parts) == 0 || s.lost {
		return nil
	}
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		var n int
		return sqlkit.QueryRow(ctx, conn, s.d.sess.release, sql.Named("parts", partArray(parts)), sql.Named("part_ns", s.partNS),
			sql.Named("token", s.token)).Scan(&n)
	})
	if err != nil {
		return s.fail("release", err)
	}
	return nil
}

func (s *session) Check(ctx context.Context, now time.Time) ([]int, time.Time, error) {
	if s.lost {
		return nil, time.Time{}, s.fail("check", errors.New("session already lost"))
	}
	owned, err := s.parts(ctx, s.d.sess.check, sql.Named("token", s.token))
	if err != nil {
		return nil, time.Time{}, s.fail("check", err)
	}
	return owned, time.Time{}, nil
}

func (s *session) View(ctx context.Context, now time.Time) (dialects.View, error) {
	var v dialects.View
	if s.lost {
		return v, s.fail("view", errors.New("session already lost"))
	}
	var ids map[string]int64
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		rows, err := sqlkit.QueryRows(ctx, conn, s.d.sess.view, sql.Named("member_ns", s.memberNS))
		if err != nil {
			return err
		}
		v, ids, err = sqlkit.ScanView(rows)
		return err
	})
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
		c, err := s.l.DB().Conn(ctx)
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
			_ = sqlkit.QueryRow(cctx, s.l.DB(), s.d.sess.waitCancel, sql.Named("pid", s.watchPID)).Scan(&ok)
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

// Close clears the session's partitions and relay row, frees this table's
// locks on the locker's connection (whatever a failed statement left) and
// closes the watch connection for good; the locker stays open unless it is
// the session's own (OpenSession). A session already lost still frees its
// locks where its locker lives; on a lost locker there is nothing to free
// (the locks ended with its connection) and Close returns nil. Closing
// twice is harmless.
func (s *session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.watch != nil {
		discard(s.watch)
		s.watch = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		_, cerr := sqlkit.Exec(ctx, conn, s.d.sess.close, sql.Named("token", s.token))
		if s.lost {
			cerr = nil // reported when the session was lost; its table may be gone
		}
		return errors.Join(cerr, s.unlock(ctx, conn))
	})
	s.release()
	if s.ownLocker {
		_ = s.l.Close()
	}
	// A lost locker's connection took the session's locks with it.
	if err != nil && !errors.Is(err, dialects.ErrSessionLost) {
		return fmt.Errorf("postgres: close session: %w", err)
	}
	return nil
}

// unlock frees every hold of the table's advisory locks conn has
// (session_unlock.sql, until it frees none).
func (s *session) unlock(ctx context.Context, conn *sql.Conn) error {
	for range unlockPasses {
		var n int
		if err := sqlkit.QueryRow(ctx, conn, s.d.sess.unlock, sql.Named("part_ns", s.partNS), sql.Named("member_ns", s.memberNS)).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}
