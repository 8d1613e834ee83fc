package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// migrate

func migrateFlags(*flag.FlagSet) runner {
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if err := e.d.Migrate(ctx, e.db); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"migrated": true, "dialect": e.d.Name(), "table": e.d.Table()})
		}
		_, err := fmt.Fprintf(e.stdout, "migrated %s table %s\n", e.d.Name(), e.d.Table())
		return err
	})
}

// status

type blockerJSON struct {
	AggregateType string     `json:"aggregate_type"`
	AggregateID   string     `json:"aggregate_id"`
	Reason        string     `json:"reason"`
	Pending       int64      `json:"pending"`
	Dead          int64      `json:"dead"`
	Head          *eventJSON `json:"head,omitempty"`
}

type statusJSON struct {
	Dialect                 string        `json:"dialect"`
	Table                   string        `json:"table"`
	Pending                 int64         `json:"pending"`
	Dead                    int64         `json:"dead"`
	Published               int64         `json:"published"`
	OldestPending           *time.Time    `json:"oldest_pending"`
	OldestPendingAgeSeconds float64       `json:"oldest_pending_age_seconds"`
	Blockers                []blockerJSON `json:"blockers"`
}

func statusFlags(fs *flag.FlagSet) runner {
	limit := fs.Int("blockers", 20, "most blocked aggregates to show (0: none)")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		now := time.Now()
		s, err := e.d.Stats(ctx, e.db)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		out := statusJSON{Dialect: e.d.Name(), Table: e.d.Table(), Pending: s.Pending, Dead: s.Dead,
			Published: s.Published, OldestPending: timePtr(s.OldestPending), Blockers: []blockerJSON{}}
		if !s.OldestPending.IsZero() {
			out.OldestPendingAgeSeconds = max(now.Sub(s.OldestPending), 0).Seconds()
		}
		if *limit > 0 && e.in != nil {
			bl, err := e.in.Blockers(ctx, e.db, now, *limit)
			if err != nil {
				return fmt.Errorf("status: %w", err)
			}
			for _, b := range bl {
				bj := blockerJSON{AggregateType: b.AggregateType, AggregateID: b.AggregateID, Reason: string(b.Reason),
					Pending: b.Pending, Dead: b.Dead}
				if b.Head != nil {
					h := toJSON(b.Head, false)
					bj.Head = &h
				}
				out.Blockers = append(out.Blockers, bj)
			}
		}
		if e.g.json {
			return writeJSON(e.stdout, out)
		}
		w := table(e.stdout)
		fmt.Fprintf(w, "table\t%s (%s)\n", out.Table, out.Dialect)
		fmt.Fprintf(w, "pending\t%d\n", out.Pending)
		if s.OldestPending.IsZero() {
			fmt.Fprintf(w, "oldest pending\t-\n")
		} else {
			fmt.Fprintf(w, "oldest pending\t%s (age %s)\n", shortTime(s.OldestPending), age(now.Sub(s.OldestPending)))
		}
		fmt.Fprintf(w, "dead\t%d\n", out.Dead)
		fmt.Fprintf(w, "published\t%d\n", out.Published)
		if err := w.Flush(); err != nil {
			return err
		}
		if len(out.Blockers) == 0 {
			_, err := fmt.Fprintln(e.stdout, "blocked aggregates: none")
			return err
		}
		fmt.Fprintln(e.stdout, "blocked aggregates:")
		w = table(e.stdout)
		fmt.Fprintln(w, "AGGREGATE\tREASON\tPENDING\tDEAD\tHEAD\tATTEMPTS\tNEXT ATTEMPT\tLAST ERROR")
		for _, b := range out.Blockers {
			head, attempts, next, lastErr := "-", "-", "-", ""
			if b.Head != nil {
				head, attempts, lastErr = b.Head.ID, fmt.Sprint(b.Head.Attempts), clip(b.Head.LastError, 60)
				if b.Head.NextAttemptAt != nil {
					next = shortTime(*b.Head.NextAttemptAt)
				}
			}
			fmt.Fprintf(w, "%s/%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", b.AggregateType, b.AggregateID, b.Reason,
				b.Pending, b.Dead, head, attempts, next, lastErr)
		}
		return w.Flush()
	})
}

// list

func listFlags(fs *flag.FlagSet) runner {
	state := fs.String("state", "", "pending, published or dead (required)")
	aggType := fs.String("aggregate-type", "", "only this aggregate type (with -aggregate-id)")
	aggID := fs.String("aggregate-id", "", "only this aggregate id (with -aggregate-type)")
	limit := fs.Int("limit", 50, "most events to list")
	after := fs.Int64("after", 0, "list events with seq greater than this (paging)")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		st, ok := dialects.ParseState(*state)
		if !ok {
			return fmt.Errorf("%w: list needs -state pending|published|dead (got %q)", errUsage, *state)
		}
		in, err := e.inspector()
		if err != nil {
			return err
		}
		rows, err := in.List(ctx, e.db, dialects.ListFilter{State: st, AggregateType: *aggType, AggregateID: *aggID,
			AfterSeq: *after, Limit: *limit})
		if errors.Is(err, dialects.ErrInvalidListFilter) {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		if e.g.json {
			out := make([]eventJSON, len(rows))
			for i := range rows {
				out[i] = toJSON(&rows[i], false)
			}
			return writeJSON(e.stdout, map[string]any{"state": st.String(), "events": out})
		}
		w := table(e.stdout)
		fmt.Fprintln(w, "SEQ\tID\tAGGREGATE\tTYPE\tCREATED\tATTEMPTS\tLAST ERROR")
		for _, r := range rows {
			fmt.Fprintf(w, "%d\t%s\t%s/%s\t%s\t%s\t%d\t%s\n", r.Seq, r.ID, r.AggregateType, r.AggregateID, r.EventType,
				shortTime(r.CreatedAt), r.Attempts, clip(r.LastError, 60))
		}
		return w.Flush()
	})
}

// show

func showFlags(*flag.FlagSet) runner {
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%w: show takes one event id", errUsage)
		}
		in, err := e.inspector()
		if err != nil {
			return err
		}
		r, err := in.Get(ctx, e.db, args[0])
		if err != nil {
			return fmt.Errorf("show: %w", err)
		}
		ev := toJSON(&r, true)
		if e.g.json {
			return writeJSON(e.stdout, ev)
		}
		w := table(e.stdout)
		field := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
		field("id", ev.ID)
		field("seq", fmt.Sprint(ev.Seq))
		field("state", ev.State)
		field("aggregate", ev.AggregateType+"/"+ev.AggregateID)
		field("event type", ev.EventType)
		field("content type", ev.ContentType)
		field("critical", fmt.Sprint(ev.Critical))
		field("created", shortTime(ev.CreatedAt))
		field("attempts", fmt.Sprint(ev.Attempts))
		if ev.State == "pending" {
			field("next attempt", shortTime(r.NextAttemptAt))
		}
		field("partition", strconv.Itoa(r.Partition))
		if ev.State == "published" {
			field("published", shortTime(r.PublishedAt))
		}
		if ev.IdempotencyKey != "" {
			field("idempotency key", ev.IdempotencyKey)
		}
		for k, v := range ev.Headers {
			field("header "+k, v)
		}
		if ev.LastError != "" {
			field("last error", ev.LastError)
		}
		field("payload ("+ev.PayloadEncoding+")", *ev.Payload)
		return w.Flush()
	})
}

// requeue

// idList collects repeated -id flags.
type idList []string

func (l *idList) String() string     { return fmt.Sprint(*l) }
func (l *idList) Set(s string) error { *l = append(*l, s); return nil }

func requeueFlags(fs *flag.FlagSet) runner {
	var ids idList
	fs.Var(&ids, "id", "dead event id to requeue (repeatable)")
	aggType := fs.String("aggregate-type", "", "requeue the dead events of this aggregate type (with -aggregate-id)")
	aggID := fs.String("aggregate-id", "", "requeue the dead events of this aggregate id (with -aggregate-type)")
	all := fs.Bool("all", false, "requeue every dead event")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		ids = append(ids, args...) // "requeue ID ID" works too
		f := dialects.RequeueFilter{IDs: ids, AggregateType: *aggType, AggregateID: *aggID, All: *all}
		n, err := e.d.Requeue(ctx, e.db, f, time.Now())
		if errors.Is(err, dialects.ErrInvalidRequeueFilter) {
			return fmt.Errorf("%w: requeue needs exactly one of -id, -aggregate-type with -aggregate-id, or -all: %w", errUsage, err)
		}
		if err != nil {
			return fmt.Errorf("requeue: %w", err)
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"requeued": n})
		}
		_, err = fmt.Fprintf(e.stdout, "requeued %d dead events\n", n)
		return err
	})
}

// purge

func purgeFlags(fs *flag.FlagSet) runner {
	olderThan := fs.Duration("older-than", 0, "delete published rows published longer ago than this (e.g. 168h; required)")
	batch := fs.Int("batch", 1000, "rows deleted per statement")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if *olderThan <= 0 || *batch <= 0 {
			return fmt.Errorf("%w: purge needs -older-than > 0 (e.g. 168h) and -batch > 0", errUsage)
		}
		before := time.Now().Add(-*olderThan)
		var total int64
		for {
			n, err := e.d.Cleanup(ctx, e.db, before, *batch)
			total += n
			if err != nil {
				return fmt.Errorf("purge (deleted %d so far): %w", total, err)
			}
			if n < int64(*batch) {
				break
			}
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"deleted": total, "published_before": before.UTC()})
		}
		_, err := fmt.Fprintf(e.stdout, "deleted %d published rows published before %s\n", total, shortTime(before))
		return err
	})
}
