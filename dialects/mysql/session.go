package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
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
	open, lock, gc, take, own, release, unlock, check, view *sqlkit.Query
	wait, waitRelease, close, closeRelay, unlockTable, kick *sqlkit.Query
	waitID                                                  string
}

const (
	// gcAge is how old a relay row must be before a session that finds its
	// member lock free forgets it.
	gcAge = time.Minute
	// waitSeconds bounds one GET_LOCK wait of WaitChange (it waits again),
	// which limits how long a server-side wait outlives a vanished client;
	// each round is one statement of an idle relay.
	waitSeconds = 120
	// aloneWaitSeconds bounds a lone relay's wait on its own member lock,
	// which cannot outlive the relay (its session connection goes with it).
	aloneWaitSeconds = 24 * 60 * 60
	// closeTimeout bounds the statements of Close.
	closeTimeout = 5 * time.Second
	// unlockPasses bounds the runs of session_unlock_table.sql in Close:
	// each frees one hold of each lock, and no lock of a session is held
	// more than once unless a statement failed halfway.
	unlockPasses = 8
)

// session is a relay's ownership session: its member lock and one
// GET_LOCK lock per owned partition, held by a Locker's connection.
// Lock names are "jitoutbox.<namespace>.m<relay id>" and
// "jitoutbox.<namespace>.p<partition>" (see Dialect.lockPrefix), well under
// the 64 characters MySQL allows.
type session struct {
	d *Dialect
	l *dialects.Locker
	// ownLocker is set when l is the session's own (OpenSession): Close
	// closes it.
	ownLocker bool
	release   func()    // frees the table's place on l (Locker.Reserve)
	watch     *sql.Conn // WaitChange's connection, opened on first use
	// watchID is the server thread id of watch.
	watchID int64
	token   string
	id      int64            // the session's relays row id (its member lock)
	prefix  string           // lock name prefix of the table
	mu      sync.Mutex       // guards ids: WaitChange runs beside the other methods
	ids     map[string]int64 // relay token -> relays.id, from the last View
	lost    bool
	closed  bool
}

var _ dialects.Session = (*session)(nil)

// OpenSession opens a Locker of its own, a dedicated connection, and the
// session on it (OpenSessionOn); Close closes both. Ownership lasts as long
// as that connection: run relays directly against the server or behind a
// proxy that keeps one server connection per client connection (GET_LOCK
// locks belong to the server connection).
func (d *Dialect) OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (dialects.Session, error) {
	return sqlkit.OwnLocker(ctx, db, "mysql", func(l *dialects.Locker) (dialects.Session, error) {
		return d.openOn(ctx, l, relay, true)
	})
}

// OpenSessionOn registers the relay session in <table>_relays and takes its
// member lock in the same transaction on l's connection, which holds the
// locks of the sessions of other tables too (see dialects.Dialect). The
// table's lock names have a prefix of their own (a hash of the database
// and table name).
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
		s.prefix, err = d.lockPrefix(ctx, conn)
		return err
	})
	if err != nil {
		return nil, d.openErr(ctx, l, err)
	}
	if s.release, err = l.Reserve("mysql " + s.prefix); err != nil {
		return nil, fmt.Errorf("mysql: open session of %s: %w", d.table, err)
	}
	err = l.Do(ctx, func(conn *sql.Conn) error {
		if err := s.open(ctx, conn, relay); err != nil {
			return err
		}
		// Forget relays that are gone; a failure only leaves rows behind.
		_, _ = sqlkit.Exec(ctx, conn, d.sess.gc, sql.Named("member_prefix", s.prefix+"m"), sql.Named("before", sqlkit.UTC(time.Now().Add(-gcAge))))
		s.kick(ctx, conn)
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
	return fmt.Errorf("mysql: open session: %w", err)
}

// watchMarker is the comment that marks the table's WaitChange statements
// in the processlist.
func (s *session) watchMarker() string { return "jitoutbox-watch " + s.prefix }

// Nudge implements dialects.Session: it kills the other relays' waits
// (kick), on the locker's connection.
func (s *session) Nudge(ctx context.Context) error {
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		s.kick(ctx, conn)
		return nil
	})
	if err != nil {
		return fmt.Errorf("mysql: nudge: %w", err)
	}
	return nil
}

// kick interrupts the other relays' WaitChange (KILL QUERY), so that they
// see this session and watch the right relay. Best effort: a user that may
// not kill the others' queries leaves them to notice at their next
// rebalance.
func (s *session) kick(ctx context.Context, conn *sql.Conn) {
	rows, err := sqlkit.QueryRows(ctx, conn, s.d.sess.kick, sql.Named("pattern", "%"+s.watchMarker()+" %"))
	if err != nil {
		return
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		// A server-given thread id, formatted here: KILL takes no placeholder.
		_, _ = conn.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10))
	}
}

// open registers the session and takes its member lock before COMMIT, so
// that the relay row is never visible without its lock held.
func (s *session) open(ctx context.Context, conn *sql.Conn, relay string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	res, err := sqlkit.Exec(ctx, tx, s.d.sess.open, sql.Named("token", s.token), sql.Named("name", relay), sql.Named("now", sqlkit.UTC(time.Now())))
	if err != nil {
		return err
	}
	if s.id, err = res.LastInsertId(); err != nil {
		return err
	}
	var got sql.NullInt64
	if err := sqlkit.QueryRow(ctx, tx, s.d.sess.lock, sql.Named("name", s.member(s.id))).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("member lock %q is held by another connection", s.member(s.id))
	}
	return tx.Commit()
}

// member returns the member lock name of relay id.
func (s *session) member(id int64) string { return s.prefix + "m" + strconv.FormatInt(id, 10) }

// newToken returns "<relay>/<random hex>": unique per session.
func newToken(relay string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return relay + "/" + hex.EncodeToString(b[:])
}

// discard closes conn for good instead of returning it to the pool, so
// that every GET_LOCK lock it holds dies with it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

func (s *session) Token() string { return s.token }

// fail marks the session lost when err came from its connection.
func (s *session) fail(op string, err error) error {
	s.lost = true
	return fmt.Errorf("mysql: session %s: %w: %w", op, dialects.ErrSessionLost, err)
}

// ints runs a query on conn that returns partitions in its first column,
// and those whose second column (when there is one) is 1.
func ints(ctx context.Context, conn *sql.Conn, query *sqlkit.Query, args ...sql.NamedArg) ([]int, error) {
	rows, err := sqlkit.QueryRows(ctx, conn, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []int
	for rows.Next() {
		var p int
		var ok sql.NullInt64
		dest := []any{&p, &ok}
		if err := rows.Scan(dest[:len(cols)]...); err != nil {
			return nil, err
		}
		if len(cols) == 1 || ok.Int64 == 1 {
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

func (s *session) Take(ctx context.Context, parts []int, now time.Time) ([]int, error) {
	if s.lost {
		return nil, s.fail("take", errors.New("session already lost"))
	}
	if len(parts) == 0 {
		return nil, nil
	}
	var taken []int
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		var err error
		taken, err = ints(ctx, conn, s.d.sess.take, sql.Named("part_prefix", s.prefix+"p"), sql.Named("parts", parts))
		if err != nil || len(taken) == 0 {
			return err
		}
		_, err = sqlkit.Exec(ctx, conn, s.d.sess.own, sql.Named("token", s.token), sql.Named("now", sqlkit.UTC(now)),
			sql.Named("parts", taken))
		return err
	})
	if err != nil {
		// Some locks may be held with no owner recorded: end the session
		// (its Close frees them).
		return nil, s.fail("take", err)
	}
	if len(taken) == 0 {
		return nil, nil
	}
	return taken, nil
}

func (s *session) Release(ctx context.Context, parts []int) error {
	if len(parts) == 0 || s.lost {
		return nil
	}
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		if _, err := sqlkit.Exec(ctx, conn, s.d.sess.release, sql.Named("token", s.token), sql.Named("parts", parts)); err != nil {
			return err
		}
		_, err := ints(ctx, conn, s.d.sess.unlock, sql.Named("part_prefix", s.prefix+"p"), sql.Named("parts", parts))
		return err
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
	var owned []int
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		var err error
		owned, err = ints(ctx, conn, s.d.sess.check, sql.Named("token", s.token), sql.Named("part_prefix", s.prefix+"p"))
		return err
	})
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
		rows, err := sqlkit.QueryRows(ctx, conn, s.d.sess.view, sql.Named("member_prefix", s.prefix+"m"))
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
// interrupts it (ErrRelaysChanged).
func (s *session) WaitChange(ctx context.Context, v dialects.View) error {
	s.mu.Lock()
	target, live, ok := sqlkit.Watch(v.Relays, s.token, s.ids)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("mysql: wait: a relay of the view is not in the last view read")
	}
	timeout := waitSeconds
	if len(live) == 1 {
		timeout = aloneWaitSeconds
	}
	ids := make([]string, len(live))
	for i, id := range live {
		ids[i] = strconv.FormatInt(id, 10)
	}
	if s.watch == nil {
		c, err := s.l.DB().Conn(ctx)
		if err == nil {
			if err = c.QueryRowContext(ctx, s.d.sess.waitID).Scan(&s.watchID); err != nil {
				discard(c)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("mysql: wait: %w", err)
		}
		s.watch = c
	}
	name := s.member(target)
	for {
		var got sql.NullInt64
		wait, args, err := s.d.sess.wait.Bind(sql.Named("member_prefix", s.prefix+"m"), sql.Named("live", strings.Join(ids, ",")),
			sql.Named("name", name), sql.Named("timeout", timeout))
		if err != nil {
			return fmt.Errorf("mysql: wait: %w", err)
		}
		wait = strings.Replace(wait, "{{watch}}", s.watchMarker(), 1)
		if err := s.watch.QueryRowContext(ctx, wait, args...).Scan(&got); err != nil {
			// Cancelled or broken: the lock may have been granted before the
			// cancel; never return such a connection to the pool.
			s.dropWatch()
			if ctx.Err() != nil {
				s.killWatch()
				return ctx.Err()
			}
			if strings.Contains(err.Error(), "1317") || strings.Contains(err.Error(), "interrupted") {
				return fmt.Errorf("mysql: wait: %w", dialects.ErrRelaysChanged)
			}
			return fmt.Errorf("mysql: wait: %w", err)
		}
		switch {
		case got.Int64 == 1:
			var ok sql.NullInt64
			if err := sqlkit.QueryRow(context.WithoutCancel(ctx), s.watch, s.d.sess.waitRelease, sql.Named("name", name)).Scan(&ok); err != nil {
				s.dropWatch()
			}
			return nil
		case !got.Valid:
			// NULL: interrupted by a joining relay's KILL QUERY.
			s.dropWatch()
			return fmt.Errorf("mysql: wait: %w", dialects.ErrRelaysChanged)
		case got.Int64 == -1:
			// The live relays are no longer v's: one joined since v was read.
			return fmt.Errorf("mysql: wait: %w", dialects.ErrRelaysChanged)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// killWatch ends the server side of a wait whose context ended (the driver
// closed the client side only), so that it does not go on holding a
// connection slot: best effort.
func (s *session) killWatch() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A server-given thread id, formatted here: KILL takes no placeholder.
	_, _ = s.l.DB().ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(s.watchID, 10))
}

// dropWatch discards WaitChange's connection.
func (s *session) dropWatch() {
	if s.watch != nil {
		discard(s.watch)
		s.watch = nil
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
	s.dropWatch()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := s.l.Do(ctx, func(conn *sql.Conn) error {
		owned, cerr := ints(ctx, conn, s.d.sess.close, sql.Named("token", s.token))
		if cerr == nil && len(owned) > 0 {
			_, cerr = sqlkit.Exec(ctx, conn, s.d.sess.release, sql.Named("token", s.token), sql.Named("parts", owned))
		}
		if cerr == nil {
			_, cerr = sqlkit.Exec(ctx, conn, s.d.sess.closeRelay, sql.Named("token", s.token))
		}
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
		return fmt.Errorf("mysql: close session: %w", err)
	}
	return nil
}

// unlock frees every hold of the table's locks conn has
// (session_unlock_table.sql, until it frees none).
func (s *session) unlock(ctx context.Context, conn *sql.Conn) error {
	for range unlockPasses {
		var n int64
		if err := sqlkit.QueryRow(ctx, conn, s.d.sess.unlockTable, sql.Named("part_prefix", s.prefix+"p"),
			sql.Named("member", s.member(s.id))).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}
