package sqlite

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// ErrInvalidLease is returned (wrapped) by OpenSession given a lease that
// is not positive: SQLite has no session locks, so ownership is a lease
// and a session without one could never own anything.
var ErrInvalidLease = errors.New("sqlite: session lease must be positive")

// sessionSQL holds the session statements (sql/session_*.sql).
type sessionSQL struct {
	open, gc, take, renew, check, release, view, close, closeRelay, watch *sqlkit.Query
	file                                                                  string
}

// gcAge is how long after its lease ran out a relay row is forgotten by the
// next session that opens; until then View no longer lists it anyway.
const gcAge = time.Minute

// session is a relay's ownership session: a row in <table>_relays and a
// lease on each owned partition (SQLite has no session-scoped locks).
type session struct {
	d  *Dialect
	db *sql.DB
	// l is the session's Locker: it holds no lock, but a session ends
	// when it is lost or closed. ownLocker is set when l is the
	// session's own (OpenSession): Close closes it.
	l         *dialects.Locker
	ownLocker bool
	token     string
	relay     string
	lease     time.Duration
	owns      map[int]bool // what Take took and Release did not give up
	lost      bool
	// file is the database file ("" in memory), whose stamp WaitChange
	// watches.
	file string
	mu   sync.Mutex // guards what follows: WaitChange runs beside the other methods
	// viewAt is the now of the last View and viewRead when it was read:
	// WaitChange judges liveness on the View's clock, advanced by the time
	// since, so that it agrees with the View it is given.
	viewAt, viewRead time.Time
	// seen is the file's stamp when the live relays were last known (read
	// by WaitChange, or unchanged by anyone but this session).
	seen fileStamp
	// writing counts this session's writes in progress (beginWrite to
	// wrote): WaitChange does not look meanwhile, or it would take the
	// session's own write for another connection's.
	writing int
}

var _ dialects.Session = (*session)(nil)

// OpenSession registers a relay session in <table>_relays with a lease of
// `lease` from now (OpenSessionOn, on a Locker of its own that Close
// closes). Every partition it takes is leased for as long, and Check
// renews them all; a session that does not Check within the lease loses
// its partitions to the next session that takes them.
func (d *Dialect) OpenSession(ctx context.Context, db *sql.DB, relay string, lease time.Duration) (dialects.Session, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("%w: got %v", ErrInvalidLease, lease)
	}
	return sqlkit.OwnLocker(ctx, db, "sqlite", func(l *dialects.Locker) (dialects.Session, error) {
		return d.openOn(ctx, l, relay, lease, true)
	})
}

// OpenSessionOn opens a session as OpenSession does, on l's DB: SQLite
// keeps no lock on a connection, so the session never uses l's connection
// (l takes none for it), and any Locker of the database serves. The
// session ends (ErrSessionLost) once l is lost or closed; its Close leaves
// l open.
func (d *Dialect) OpenSessionOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration) (dialects.Session, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("%w: got %v", ErrInvalidLease, lease)
	}
	return d.openOn(ctx, l, relay, lease, false)
}

// openOn registers the session of l's database. A session that owns l
// closes it with itself.
func (d *Dialect) openOn(ctx context.Context, l *dialects.Locker, relay string, lease time.Duration, ownLocker bool) (dialects.Session, error) {
	db := l.DB()
	s := &session{d: d, db: db, l: l, ownLocker: ownLocker, token: newToken(relay), relay: relay, lease: lease, owns: make(map[int]bool)}
	now := sqlkit.UTC(time.Now())
	if _, err := d.open(ctx, db, s.token, relay, now, now.Add(lease)); err != nil {
		if _, perr := d.Partitions(ctx, db); perr != nil {
			return nil, perr
		}
		return nil, fmt.Errorf("sqlite: open session: %w", err)
	}
	// Forget relays that are gone; a failure only leaves rows behind.
	_, _ = sqlkit.Exec(ctx, db, d.sess.gc, sql.Named("before", micros(now.Add(-gcAge))), sql.Named("now", micros(now)))
	// Without it WaitChange reads the relays every watchPoll.
	_ = db.QueryRowContext(ctx, d.sess.file).Scan(&s.file)
	s.seen = s.stamp() // what was written until now, its first View sees
	return s, nil
}

// open registers relay's session token at now with a lease until until
// (session_open.sql).
func (d *Dialect) open(ctx context.Context, db *sql.DB, token, relay string, now, until time.Time) (sql.Result, error) {
	return sqlkit.Exec(ctx, db, d.sess.open, sql.Named("token", token), sql.Named("name", relay),
		sql.Named("now", micros(now)), sql.Named("until", micros(until)))
}

// newToken returns "<relay>/<random hex>": unique per session.
func newToken(relay string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return relay + "/" + hex.EncodeToString(b[:])
}

func (s *session) Token() string { return s.token }

// lostErr reports the session as lost.
func (s *session) lostErr(op string, err error) error {
	s.lost = true
	return fmt.Errorf("sqlite: session %s: %w: %w", op, dialects.ErrSessionLost, err)
}

// over reports whether the session is lost, as it is once its Locker is.
func (s *session) over() bool {
	if !s.lost && s.l.Lost() {
		s.lost = true
	}
	return s.lost
}

func (s *session) Take(ctx context.Context, parts []int, now time.Time) ([]int, error) {
	if s.over() {
		return nil, s.lostErr("take", errors.New("session already lost"))
	}
	if len(parts) == 0 {
		return nil, nil
	}
	now = sqlkit.UTC(now)
	defer s.wrote(s.beginWrite())
	taken, err := queryCol[int](ctx, s.db, s.d.sess.take, sql.Named("parts", jsonParts(parts)), sql.Named("token", s.token),
		sql.Named("now", micros(now)), sql.Named("until", micros(now.Add(s.lease))))
	if err != nil {
		return nil, fmt.Errorf("sqlite: session take: %w", err)
	}
	for _, p := range taken {
		s.owns[p] = true
	}
	return taken, nil
}

func (s *session) Release(ctx context.Context, parts []int) error {
	if len(parts) == 0 || s.over() {
		return nil
	}
	defer s.wrote(s.beginWrite())
	if _, err := sqlkit.Exec(ctx, s.db, s.d.sess.release, sql.Named("parts", jsonParts(parts)), sql.Named("token", s.token)); err != nil {
		return fmt.Errorf("sqlite: session release: %w", err)
	}
	for _, p := range parts {
		delete(s.owns, p)
	}
	return nil
}

// Check renews the leases of the partitions the session still owns (one
// statement; views count it live through them), or its relay row when it
// owns none. Expired leases nobody took are kept: nobody else wrote in
// them. A partition another session took ends the session
// (dialects.ErrSessionLost).
func (s *session) Check(ctx context.Context, now time.Time) ([]int, time.Time, error) {
	if s.over() {
		return nil, time.Time{}, s.lostErr("check", errors.New("session already lost"))
	}
	now = sqlkit.UTC(now)
	until := now.Add(s.lease)
	defer s.wrote(s.beginWrite())
	if len(s.owns) == 0 {
		res, err := sqlkit.Exec(ctx, s.db, s.d.sess.renew, sql.Named("token", s.token), sql.Named("until", micros(until)))
		n, err := count("session check", res, err)
		if err != nil {
			return nil, time.Time{}, err
		}
		if n == 0 {
			// Forgotten while it owned nothing for longer than gcAge past
			// its lease: it has nothing to lose, register it again.
			if _, err := s.d.open(ctx, s.db, s.token, s.relay, now, until); err != nil {
				return nil, time.Time{}, fmt.Errorf("sqlite: session check: register again: %w", err)
			}
		}
		return nil, until, nil
	}
	owned, err := queryCol[int](ctx, s.db, s.d.sess.check, sql.Named("token", s.token), sql.Named("until", micros(until)))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("sqlite: session check: %w", err)
	}
	if len(owned) < len(s.owns) {
		return owned, time.Time{}, s.lostErr("check",
			fmt.Errorf("%d partitions were taken over after the session's lease ran out", len(s.owns)-len(owned)))
	}
	return owned, until, nil
}

// queryCol runs a statement that returns one value per row and returns
// them sorted.
func queryCol[T cmp.Ordered](ctx context.Context, db *sql.DB, query *sqlkit.Query, args ...sql.NamedArg) ([]T, error) {
	rows, err := sqlkit.QueryRows(ctx, db, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// View reads the relays whose lease runs at now and each partition's owner
// (live while its lease runs).
func (s *session) View(ctx context.Context, now time.Time) (dialects.View, error) {
	var v dialects.View
	if s.over() {
		return v, s.lostErr("view", errors.New("session already lost"))
	}
	rows, err := sqlkit.QueryRows(ctx, s.db, s.d.sess.view, sql.Named("now", micros(sqlkit.UTC(now))))
	if err != nil {
		return v, fmt.Errorf("sqlite: session view: %w", err)
	}
	v, _, err = sqlkit.ScanView(rows)
	if err != nil {
		return v, fmt.Errorf("sqlite: session view: %w", err)
	}
	s.mu.Lock()
	s.viewAt, s.viewRead = now, time.Now()
	s.mu.Unlock()
	return v, nil
}

// Close clears the owner of the session's partitions and deletes its relay
// row, so that other sessions may take them at once instead of after the
// lease. Closing twice is harmless.
func (s *session) Close() error {
	if s.db == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := sqlkit.Exec(ctx, s.db, s.d.sess.close, sql.Named("token", s.token))
	if err == nil {
		_, err = sqlkit.Exec(ctx, s.db, s.d.sess.closeRelay, sql.Named("token", s.token))
	}
	s.db = nil
	s.lost = true
	if s.ownLocker {
		_ = s.l.Close()
	}
	if err != nil {
		return fmt.Errorf("sqlite: close session: %w", err)
	}
	return nil
}
