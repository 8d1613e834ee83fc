package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/internal/sqlkit"
)

// watchPoll is how often WaitChange looks for a write by another
// connection (two stats of files): SQLite cannot interrupt a wait from
// another process, so a relay (alone or not) looks. watchRead is the
// least time between two reads of the relays that the looks cause, so
// that under a steady write load the watch costs one statement a second.
const (
	watchPoll = 250 * time.Millisecond
	watchRead = time.Second
)

// fileStamp is the size and modification time of the database file and
// of its WAL: any commit changes one of them.
type fileStamp struct {
	size, mod, walSize, walMod int64
}

// stamp returns the database file's stamp; the zero stamp when the
// database is in memory or the file cannot be read (every look then reads
// the relays).
func (s *session) stamp() fileStamp {
	if s.file == "" {
		return fileStamp{}
	}
	var st fileStamp
	if fi, err := os.Stat(s.file); err == nil {
		st.size, st.mod = fi.Size(), fi.ModTime().UnixNano()
	}
	if fi, err := os.Stat(s.file + "-wal"); err == nil {
		st.walSize, st.walMod = fi.Size(), fi.ModTime().UnixNano()
	}
	return st
}

// beginWrite marks a write of this session in progress and returns the
// file's stamp before it, for wrote.
func (s *session) beginWrite() fileStamp {
	s.mu.Lock()
	s.writing++
	s.mu.Unlock()
	return s.stamp()
}

// wrote records this session's own write, begun when the file's stamp was
// pre: when nobody else had written since the relays were last known, the
// stamp after it is known too, so that WaitChange does not read the relays
// for the session's own renewals. A write by another connection at the same
// moment is then seen only by the next rebalance.
func (s *session) wrote(pre fileStamp) {
	var post fileStamp
	if s.file != "" {
		post = s.stamp()
	}
	s.mu.Lock()
	s.writing--
	if s.file != "" && pre == s.seen {
		s.seen = post
	}
	s.mu.Unlock()
}

// Nudge implements dialects.Session: nothing to do. A released partition's
// lease is gone at once, and a relay short of its share takes it at its
// next look.
func (s *session) Nudge(context.Context) error { return nil }

// WaitChange stats the database file and its WAL every watchPoll and reads
// the live relays only after another connection wrote (at most every
// watchRead; an in-memory database reads every watchRead), so an idle relay
// sends no statement to watch. It returns dialects.ErrRelaysChanged once the
// relays are no longer v's.
func (s *session) WaitChange(ctx context.Context, v dialects.View) error {
	s.mu.Lock()
	at, read := s.viewAt, s.viewRead
	s.mu.Unlock()
	if read.IsZero() {
		at, read = time.Now(), time.Now()
	}
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	var last time.Time // the last read of the relays
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if time.Since(last) < watchRead {
			continue
		}
		cur := s.stamp()
		s.mu.Lock()
		if s.writing > 0 {
			// The session's own write, stamped mid-way or not yet
			// recorded by wrote: look again at the next tick.
			s.mu.Unlock()
			continue
		}
		changed := s.file == "" || cur != s.seen
		s.seen = cur
		s.mu.Unlock()
		if !changed {
			continue
		}
		last = time.Now()
		live, err := queryCol[string](ctx, s.db, s.d.sess.watch, sql.Named("now", micros(sqlkit.UTC(at.Add(time.Since(read))))))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("sqlite: wait: %w", err)
		}
		if !slices.Equal(live, v.Relays) {
			return fmt.Errorf("sqlite: wait: %w", dialects.ErrRelaysChanged)
		}
	}
}
