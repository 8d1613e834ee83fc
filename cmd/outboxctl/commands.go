package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// migrate

func migrateFlags(fs *flag.FlagSet) runner {
	plan := fs.Bool("plan", false, "list the migrations that would run, without running them")
	verbose := fs.Bool("v", false, "with -plan: print each migration's SQL")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if *verbose && !*plan {
			return fmt.Errorf("%w: -v goes with -plan", errUsage)
		}
		if *plan {
			return migratePlan(ctx, e, *verbose)
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
		rows, err := e.d.ListSummaries(ctx, e.db, dialects.ListFilter{State: st, AggregateType: *aggType, AggregateID: *aggID,
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
			// A bad row that is not dead yet (a bad partition: no relay
			// reads it) shows its problem where a last error would be.
			lastErr := r.LastError
			if lastErr == "" {
				lastErr = badText(&r)
			}
			fmt.Fprintf(w, "%d\t%s\t%s/%s\t%s\t%s\t%d\t%s\n", r.Seq, safe(r.ID), safe(r.AggregateType), safe(r.AggregateID),
				safe(r.EventType), shortTime(r.CreatedAt), r.Attempts, safe(clip(lastErr, 60)))
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
		r, err := e.d.Get(ctx, e.db, args[0])
		if err != nil {
			return fmt.Errorf("show: %w", err)
		}
		ev := toJSON(&r, true)
		if e.g.json {
			return writeJSON(e.stdout, ev)
		}
		w := table(e.stdout)
		field := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", safe(k), safe(v)) }
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
		if !r.DeliverAt.IsZero() {
			field("scheduled for", shortTime(r.DeliverAt))
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
		if b := ev.Bad; b != nil {
			field("bad row", "column "+b.Column+": "+b.Error)
			field("bad column text", b.Raw)
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

// selectorFlags registers the selectors requeue and skip share and
// returns the filter they build.
func selectorFlags(fs *flag.FlagSet, verb string) func(args []string) dialects.RequeueFilter {
	var ids idList
	fs.Var(&ids, "id", "dead event id to "+verb+" (repeatable)")
	aggType := fs.String("aggregate-type", "", verb+" the dead events of this aggregate type (with -aggregate-id)")
	aggID := fs.String("aggregate-id", "", verb+" the dead events of this aggregate id (with -aggregate-type)")
	all := fs.Bool("all", false, verb+" every dead event")
	return func(args []string) dialects.RequeueFilter {
		// "requeue ID ID" works too.
		return dialects.RequeueFilter{IDs: append(slices.Clone(ids), args...), AggregateType: *aggType, AggregateID: *aggID, All: *all}
	}
}

// requeueFlags: requeued events go back to pending with their attempts
// reset and their blocks removed; each is published before the later events
// of its aggregate that waited behind it.
func requeueFlags(fs *flag.FlagSet) runner {
	filter := selectorFlags(fs, "requeue")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		f := filter(args)
		if id, ok := checkIDs(f.IDs); !ok {
			return fmt.Errorf("%w: requeue: %q is not an event id (a UUID)", errUsage, id)
		}
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
		_, err = fmt.Fprintf(e.stdout, "requeued %d dead events: each is published first, then its aggregate's later events\n", n)
		return err
	})
}

// skip

// skipFlags: skipped events stay dead (list -state dead still shows them);
// their blocks are removed, so the later events of their aggregates flow.
func skipFlags(fs *flag.FlagSet) runner {
	filter := selectorFlags(fs, "skip")
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		f := filter(args)
		if id, ok := checkIDs(f.IDs); !ok {
			return fmt.Errorf("%w: skip: %q is not an event id (a UUID)", errUsage, id)
		}
		n, err := e.d.Skip(ctx, e.db, f)
		if errors.Is(err, dialects.ErrInvalidRequeueFilter) {
			return fmt.Errorf("%w: skip needs exactly one of -id, -aggregate-type with -aggregate-id, or -all: %w", errUsage, err)
		}
		if err != nil {
			return fmt.Errorf("skip: %w", err)
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"skipped": n})
		}
		_, err = fmt.Fprintf(e.stdout, "skipped %d dead events: they stay dead, their aggregates' later events flow\n", n)
		return err
	})
}

// cancel

// cancelFlags: Dialect.Cancel, which deletes only scheduled rows not yet
// due by the database's clock, so that a cancel never races a relay
// publishing the row.
func cancelFlags(fs *flag.FlagSet) runner {
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%w: cancel needs one or more event ids", errUsage)
		}
		if id, ok := checkIDs(args); !ok {
			return fmt.Errorf("%w: cancel: %q is not an event id (a UUID)", errUsage, id)
		}
		got, err := e.d.Cancel(ctx, e.db, args)
		if err != nil {
			return fmt.Errorf("cancel: %w", err)
		}
		if got == nil {
			got = []string{}
		}
		done := make(map[string]bool, len(got))
		for _, id := range got {
			done[id] = true
		}
		left := []string{}
		for _, id := range args {
			if !done[strings.ToLower(id)] && !done[id] {
				left = append(left, id)
			}
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"cancelled": got, "not_cancelled": left})
		}
		if _, err := fmt.Fprintf(e.stdout, "cancelled %s\n", plural(len(got), "scheduled event")); err != nil {
			return err
		}
		for _, id := range left {
			if _, err := fmt.Fprintf(e.stdout, "not cancelled: %s (unknown, already due, published, dead or never scheduled)\n", id); err != nil {
				return err
			}
		}
		return nil
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
