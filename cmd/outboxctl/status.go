package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/relay"
)

type blockerJSON struct {
	AggregateType string     `json:"aggregate_type"`
	AggregateID   string     `json:"aggregate_id"`
	Reason        string     `json:"reason"`
	Pending       int64      `json:"pending"`
	Dead          int64      `json:"dead"`
	Head          *eventJSON `json:"head,omitempty"`
}

// relayJSON is one live relay session.
type relayJSON struct {
	Token      string    `json:"token"`
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"started_at"`
	Partitions []int     `json:"partitions"`
}

// partitionJSON is one partition's owner.
type partitionJSON struct {
	Partition int        `json:"partition"`
	Owner     string     `json:"owner,omitempty"`
	Live      bool       `json:"live"`
	Epoch     int64      `json:"epoch"`
	TakenAt   *time.Time `json:"taken_at,omitempty"`
}

// ownershipJSON is the partitions part of status.
type ownershipJSON struct {
	Count  int             `json:"count"`
	Relays []relayJSON     `json:"relays"`
	Free   []int           `json:"free"`
	Owners []partitionJSON `json:"owners"`
}

type statusJSON struct {
	Dialect                 string         `json:"dialect"`
	Table                   string         `json:"table"`
	Pending                 int64          `json:"pending"`
	Dead                    int64          `json:"dead"`
	Published               int64          `json:"published"`
	BadPartition            int64          `json:"bad_partition"`
	OldestPending           *time.Time     `json:"oldest_pending"`
	OldestPendingAgeSeconds float64        `json:"oldest_pending_age_seconds"`
	Scheduled               int64          `json:"scheduled"`
	NextDue                 *time.Time     `json:"next_due"`
	Blockers                []blockerJSON  `json:"blockers"`
	Partitions              *ownershipJSON `json:"partitions,omitempty"`
	Cleanup                 *cleanupJSON   `json:"cleanup,omitempty"`
}

// cleanupJSON is cleanup's health: the published rows kept past the
// relays' Retention (given by -retention).
type cleanupJSON struct {
	RetentionSeconds float64    `json:"retention_seconds"`
	OldestPublished  *time.Time `json:"oldest_published"`
	// LagSeconds is how long the oldest published row has been past
	// retention; 0 while cleanup keeps up.
	LagSeconds float64 `json:"lag_seconds"`
	// PastRetention counts the published rows older than retention, up to
	// dialects.PastRetentionCap; PastRetentionMore says there are more.
	PastRetention     int64 `json:"past_retention"`
	PastRetentionMore bool  `json:"past_retention_more"`
}

// retentionFlag registers -retention: the relays' Retention, against which
// status and the console count the published rows cleanup should have
// deleted.
func retentionFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("retention", relay.DefaultRetention,
		"the relays' Retention: show the published rows kept past it (0: do not check)")
}

// checkRetention refuses a negative -retention.
func checkRetention(r time.Duration) error {
	if r < 0 {
		return fmt.Errorf("%w: -retention must not be negative (0: do not check)", errUsage)
	}
	return nil
}

// cleanupHealth returns cleanup's health at now from s (read just before)
// for the given retention: it counts the rows past retention (a query
// bounded by dialects.PastRetentionCap) only when the oldest published row
// is past it. Nil when retention is 0.
func cleanupHealth(ctx context.Context, db *sql.DB, d dialects.Dialect, s dialects.Stats, now time.Time,
	retention time.Duration) (*cleanupJSON, error) {
	if retention <= 0 {
		return nil, nil
	}
	c := &cleanupJSON{RetentionSeconds: retention.Seconds(), OldestPublished: timePtr(s.OldestPublished)}
	if s.OldestPublished.IsZero() {
		return c, nil
	}
	lag := now.Sub(s.OldestPublished) - retention
	if lag <= 0 {
		return c, nil
	}
	n, err := d.PastRetention(ctx, db, now, retention)
	if err != nil {
		return nil, err
	}
	c.LagSeconds = lag.Seconds()
	c.PastRetention, c.PastRetentionMore = min(n, dialects.PastRetentionCap), n > dialects.PastRetentionCap
	return c, nil
}

// String words c for humans: "none (retention 1h0m0s)", "12 rows, the
// oldest 2h0m0s past retention (1h0m0s)", "more than 10000 rows, ...".
func (c *cleanupJSON) String() string {
	if c.PastRetention == 0 {
		return "none (" + c.Detail() + ")"
	}
	n := plural(int(c.PastRetention), "row")
	if c.PastRetentionMore {
		n = "more than " + n
	}
	return n + ", " + c.Detail()
}

// Detail words the retention and, when rows are past it, how far past the
// oldest is.
func (c *cleanupJSON) Detail() string {
	retention := age(time.Duration(c.RetentionSeconds * float64(time.Second)))
	if c.PastRetention == 0 {
		return "retention " + retention
	}
	return fmt.Sprintf("the oldest %s past retention (%s)", age(time.Duration(c.LagSeconds*float64(time.Second))), retention)
}

// Late reports whether the oldest published row is more than an hour past
// retention: the JitoutboxCleanupLate alert's threshold.
func (c *cleanupJSON) Late() bool { return c.LagSeconds > time.Hour.Seconds() }

func statusFlags(fs *flag.FlagSet) runner {
	limit := fs.Int("blockers", 20, "most blocked aggregates to show (0: none)")
	retention := retentionFlag(fs)
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := checkRetention(*retention); err != nil {
			return err
		}
		if e.g.allTables {
			return statusAllTables(ctx, e)
		}
		now := time.Now()
		s, err := e.d.Stats(ctx, e.db)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		out := statusJSON{Dialect: e.d.Name(), Table: e.d.Table(), Pending: s.Pending, Dead: s.Dead,
			Published: s.Published, BadPartition: s.BadPartition, OldestPending: timePtr(s.OldestPending), Blockers: []blockerJSON{},
			Scheduled: s.Scheduled, NextDue: timePtr(s.NextDue)}
		if !s.OldestPending.IsZero() {
			out.OldestPendingAgeSeconds = max(now.Sub(s.OldestPending), 0).Seconds()
		}
		if out.Cleanup, err = cleanupHealth(ctx, e.db, e.d, s, now, *retention); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		if *limit > 0 {
			if out.Blockers, err = blockers(ctx, e, now, *limit); err != nil {
				return err
			}
		}
		o, err := e.d.Ownership(ctx, e.db, now)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		out.Partitions = ownershipToJSON(o)
		if e.g.json {
			return writeJSON(e.stdout, out)
		}
		return writeStatus(e.stdout, now, out)
	})
}

func blockers(ctx context.Context, e *env, now time.Time, limit int) ([]blockerJSON, error) {
	bl, err := e.d.BlockerSummaries(ctx, e.db, now, limit)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	out := []blockerJSON{}
	for _, b := range bl {
		bj := blockerJSON{AggregateType: b.AggregateType, AggregateID: b.AggregateID, Reason: string(b.Reason),
			Pending: b.Pending, Dead: b.Dead}
		if b.Head != nil {
			h := toJSON(b.Head, false)
			bj.Head = &h
		}
		out = append(out, bj)
	}
	return out, nil
}

func ownershipToJSON(o dialects.Ownership) *ownershipJSON {
	out := &ownershipJSON{Count: len(o.Partitions), Relays: []relayJSON{}, Free: o.Free(), Owners: []partitionJSON{}}
	if out.Free == nil {
		out.Free = []int{}
	}
	for _, r := range o.Relays {
		parts := o.Owned(r.Token)
		if parts == nil {
			parts = []int{}
		}
		out.Relays = append(out.Relays, relayJSON{Token: r.Token, Name: r.Name, StartedAt: r.StartedAt, Partitions: parts})
	}
	for _, p := range o.Partitions {
		out.Owners = append(out.Owners, partitionJSON{Partition: p.Partition, Owner: p.Owner, Live: p.Live,
			Epoch: p.Epoch, TakenAt: timePtr(p.TakenAt)})
	}
	return out
}

// partitionCount is the table's partition count, "P" when unknown.
func (s statusJSON) partitionCount() string {
	if s.Partitions == nil {
		return "P"
	}
	return strconv.Itoa(s.Partitions.Count)
}

// writeStatus prints status for humans.
func writeStatus(stdout io.Writer, now time.Time, out statusJSON) error {
	w := table(stdout)
	fmt.Fprintf(w, "table\t%s (%s)\n", out.Table, out.Dialect)
	fmt.Fprintf(w, "pending\t%d\n", out.Pending)
	if out.OldestPending == nil {
		fmt.Fprintf(w, "oldest pending\t-\n")
	} else {
		fmt.Fprintf(w, "oldest pending\t%s (age %s)\n", shortTime(*out.OldestPending), age(now.Sub(*out.OldestPending)))
	}
	if out.NextDue == nil {
		fmt.Fprintf(w, "scheduled\t%d\n", out.Scheduled)
	} else {
		fmt.Fprintf(w, "scheduled\t%d (next due %s, in %s)\n", out.Scheduled, shortTime(*out.NextDue), age(out.NextDue.Sub(now)))
	}
	fmt.Fprintf(w, "dead\t%d\n", out.Dead)
	fmt.Fprintf(w, "published\t%d\n", out.Published)
	if out.BadPartition > 0 {
		fmt.Fprintf(w, "bad partition\t%s with a partition outside [0, %s): no relay reads them (list -state pending shows them)\n",
			plural(int(out.BadPartition), "pending or dead row"), out.partitionCount())
	}
	if out.Cleanup != nil {
		fmt.Fprintf(w, "past retention\t%s\n", out.Cleanup)
	}
	if p := out.Partitions; p != nil {
		fmt.Fprintf(w, "partitions\t%d: %d owned by %s, %d free\n", p.Count, p.Count-len(p.Free), plural(len(p.Relays), "live relay"), len(p.Free))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := writeBlockers(stdout, out.Blockers); err != nil {
		return err
	}
	if out.Partitions == nil {
		return nil
	}
	return writeRelays(stdout, out.Partitions, out.Pending)
}

func writeBlockers(stdout io.Writer, bl []blockerJSON) error {
	if len(bl) == 0 {
		_, err := fmt.Fprintln(stdout, "blocked aggregates: none")
		return err
	}
	fmt.Fprintln(stdout, "blocked aggregates (dead: until requeue or skip; backing-off: until the next attempt):")
	w := table(stdout)
	fmt.Fprintln(w, "AGGREGATE\tREASON\tPENDING\tDEAD\tHEAD\tATTEMPTS\tNEXT ATTEMPT\tLAST ERROR")
	for _, b := range bl {
		head, attempts, next, lastErr := "-", "-", "-", ""
		if b.Head != nil {
			head, attempts, lastErr = safe(b.Head.ID), strconv.Itoa(b.Head.Attempts), safe(clip(b.Head.LastError, 60))
			if b.Head.NextAttemptAt != nil {
				next = shortTime(*b.Head.NextAttemptAt)
			}
		}
		fmt.Fprintf(w, "%s/%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", safe(b.AggregateType), safe(b.AggregateID), b.Reason,
			b.Pending, b.Dead, head, attempts, next, lastErr)
	}
	return w.Flush()
}

func writeRelays(stdout io.Writer, p *ownershipJSON, pending int64) error {
	if len(p.Relays) == 0 {
		msg := "live relays: none"
		if pending > 0 {
			msg += " (pending events wait until a relay runs)"
		}
		_, err := fmt.Fprintln(stdout, msg)
		return err
	}
	fmt.Fprintln(stdout, "live relays:")
	w := table(stdout)
	fmt.Fprintln(w, "NAME\tTOKEN\tSTARTED\tOWNS\tPARTITIONS")
	for _, r := range p.Relays {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", safe(r.Name), safe(r.Token), shortTime(r.StartedAt), len(r.Partitions), ranges(r.Partitions))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "free partitions: %s\n", ranges(p.Free))
	return err
}

// ranges formats sorted partitions compactly ("0-3,7"; "none" for none).
func ranges(ps []int) string {
	if len(ps) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ps[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ps[j]))
		}
		i = j + 1
	}
	return b.String()
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
