package sqlkit

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// Inspector implements dialects.Inspector for one dialect from its
// inspect_*.sql files (see NewInspector).
type Inspector struct {
	op                           string
	list, listAgg, get, blockers *Query
	ownership, pastRetention     *Query
	timeArg                      func(time.Time) any
	validID                      func(string) bool
	ownershipArgs                func(ctx context.Context, db *sql.DB, now time.Time) ([]sql.NamedArg, error)
	sizes                        summarySQL
}

// InspectorConfig describes how a dialect binds inspection arguments.
type InspectorConfig struct {
	// Op prefixes errors: the calling dialect's package name ("postgres").
	Op string
	// Statements holds inspect_list.sql, inspect_list_aggregate.sql,
	// inspect_get.sql, inspect_blockers.sql, inspect_ownership.sql,
	// inspect_past_retention.sql and the payload-less listings (see
	// summarySQL), rendered for the dialect's table.
	Statements *Statements
	// Time converts a time to the bound form (UTC time or unix micros).
	Time func(time.Time) any
	// ValidID reports whether an id can be looked up at all (nil: always);
	// Get reports ErrEventNotFound for ids it rejects.
	ValidID func(string) bool
	// OwnershipArgs returns the arguments of inspect_ownership.sql, by
	// name.
	OwnershipArgs func(ctx context.Context, db *sql.DB, now time.Time) ([]sql.NamedArg, error)
}

// NewInspector loads the inspection statements of c.Statements.
func NewInspector(c InspectorConfig) (*Inspector, error) {
	if c.OwnershipArgs == nil {
		return nil, fmt.Errorf("%s: inspector: OwnershipArgs is nil", c.Op)
	}
	in := &Inspector{op: c.Op, timeArg: c.Time, validID: c.ValidID, ownershipArgs: c.OwnershipArgs}
	for _, f := range []struct {
		dst  **Query
		name string
	}{
		{&in.list, "inspect_list.sql"}, {&in.listAgg, "inspect_list_aggregate.sql"},
		{&in.get, "inspect_get.sql"}, {&in.blockers, "inspect_blockers.sql"},
		{&in.ownership, "inspect_ownership.sql"}, {&in.pastRetention, "inspect_past_retention.sql"},
		{&in.sizes.list, "inspect_list_sizes.sql"}, {&in.sizes.listAgg, "inspect_list_aggregate_sizes.sql"},
		{&in.sizes.blockers, "inspect_blockers_sizes.sql"},
	} {
		q, err := c.Statements.Query(f.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Op, err)
		}
		*f.dst = q
	}
	return in, nil
}

// List implements dialects.Inspector.
func (in *Inspector) List(ctx context.Context, db *sql.DB, f dialects.ListFilter) ([]dialects.Row, error) {
	return in.listRows(ctx, db, f, in.list, in.listAgg, false)
}

// listRows runs a list statement (list, or listAgg for an aggregate):
// sizes, the *_sizes.sql statements, whose rows carry the payload's size
// instead of the payload.
func (in *Inspector) listRows(ctx context.Context, db *sql.DB, f dialects.ListFilter, list, listAgg *Query, sizes bool) ([]dialects.Row, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	args := []sql.NamedArg{sql.Named("state", int(f.State)), sql.Named("after", f.AfterSeq), sql.Named("limit", f.Limit)}
	if f.AggregateType != "" {
		list, args = listAgg, append(args, sql.Named("aggregate_type", f.AggregateType), sql.Named("aggregate_id", f.AggregateID))
	}
	rows, err := QueryRows(ctx, db, list, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: list: %w", in.op, err)
	}
	defer rows.Close()
	var out []dialects.Row
	for rows.Next() {
		var s rowScan
		r, err := s.scanRow(rows, nil, sizes)
		if err != nil {
			return nil, fmt.Errorf("%s: list: scan: %w", in.op, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: list: %w", in.op, err)
	}
	return out, nil
}

// Get implements dialects.Inspector.
func (in *Inspector) Get(ctx context.Context, db *sql.DB, id string) (dialects.Row, error) {
	if in.validID != nil && !in.validID(id) {
		return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, dialects.ErrEventNotFound)
	}
	// Rows, not QueryRow: a row that does not scan is scanned again
	// column by column (scanTolerant), which sql.Row does not allow.
	rows, err := QueryRows(ctx, db, in.get, sql.Named("id", id))
	if err != nil {
		return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, err)
		}
		return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, dialects.ErrEventNotFound)
	}
	var s rowScan
	r, err := s.scan(rows, nil, nil)
	if err != nil {
		return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, err)
	}
	if err := rows.Close(); err != nil {
		return dialects.Row{}, fmt.Errorf("%s: get %q: %w", in.op, id, err)
	}
	return r, nil
}

// Blockers implements dialects.Inspector.
func (in *Inspector) Blockers(ctx context.Context, db *sql.DB, now time.Time, limit int) ([]dialects.Blocker, error) {
	return in.blockerRows(ctx, db, now, limit, in.blockers, false)
}

// blockerRows runs a blockers statement (sizes: inspect_blockers_sizes.sql,
// whose heads carry the payload's size instead of the payload).
func (in *Inspector) blockerRows(ctx context.Context, db *sql.DB, now time.Time, limit int, q *Query, sizes bool) ([]dialects.Blocker, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := QueryRows(ctx, db, q, sql.Named("now", in.timeArg(UTC(now))), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("%s: blockers: %w", in.op, err)
	}
	defer rows.Close()
	var out []dialects.Blocker
	for rows.Next() {
		var b dialects.Blocker
		var s rowScan
		r, err := s.scanRow(rows, []any{&b.AggregateType, &b.AggregateID, &b.Pending, &b.Dead}, sizes)
		if err != nil {
			return nil, fmt.Errorf("%s: blockers: scan: %w", in.op, err)
		}
		b.Head = &r
		b.Reason = dialects.BlockBackingOff
		if r.State == dialects.StateDead {
			b.Reason = dialects.BlockDead
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: blockers: %w", in.op, err)
	}
	return out, nil
}

// Ownership implements dialects.Inspector. inspect_ownership.sql returns
// rows (kind, number, token, name, time, epoch, live): kind 'r' for a live
// relay session (id, token, name, started_at), 'p' for a partition (part,
// owner, ”, taken_at, epoch, whether the owner is live).
func (in *Inspector) Ownership(ctx context.Context, db *sql.DB, now time.Time) (dialects.Ownership, error) {
	var o dialects.Ownership
	args, err := in.ownershipArgs(ctx, db, UTC(now))
	if err != nil {
		return o, fmt.Errorf("%s: ownership: %w", in.op, err)
	}
	rows, err := QueryRows(ctx, db, in.ownership, args...)
	if err != nil {
		return o, fmt.Errorf("%s: ownership: %w", in.op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, token, name string
		var n, epoch int64
		var live bool
		var at NullTime
		if err := rows.Scan(&kind, &n, &token, &name, &at, &epoch, &live); err != nil {
			return o, fmt.Errorf("%s: ownership: scan: %w", in.op, err)
		}
		if kind == "r" {
			o.Relays = append(o.Relays, dialects.RelaySession{Token: token, Name: name, StartedAt: at.Time})
			continue
		}
		o.Partitions = append(o.Partitions, dialects.PartitionOwner{
			Partition: int(n), Owner: token, Epoch: epoch, Live: live, TakenAt: at.Time,
		})
	}
	if err := rows.Err(); err != nil {
		return o, fmt.Errorf("%s: ownership: %w", in.op, err)
	}
	slices.SortFunc(o.Relays, func(a, b dialects.RelaySession) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
	slices.SortFunc(o.Partitions, func(a, b dialects.PartitionOwner) int { return a.Partition - b.Partition })
	return o, nil
}

// PastRetention implements dialects.Inspector. inspect_past_retention.sql
// takes the cut-off time (now - retention) and the cap of the count
// (dialects.PastRetentionCap + 1) and returns the capped count.
func (in *Inspector) PastRetention(ctx context.Context, db *sql.DB, now time.Time, retention time.Duration) (int64, error) {
	if retention <= 0 {
		return 0, nil
	}
	var n int64
	err := QueryRow(ctx, db, in.pastRetention, sql.Named("before", in.timeArg(UTC(now.Add(-retention)))),
		sql.Named("cap", dialects.PastRetentionCap+1)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("%s: rows past retention: %w", in.op, err)
	}
	return n, nil
}

// rowScan holds one row in inspect scan order; every column is nullable so
// that the LEFT JOIN of inspect_blockers.sql scans too. The last column is
// the table's partition count (from <table>_meta), against which the
// row's partition is checked.
type rowScan struct {
	seq, attempts, state                       sql.NullInt64
	id, aggType, aggID, eventType, contentType sql.NullString
	headers, idem, payloadJSON, lastError      sql.NullString
	part, partitions                           sql.NullInt64
	payload                                    []byte
	critical                                   sql.NullBool
	created, nextAttempt, publishedAt, deliver NullTime
}

// blockerColumnNames names the columns inspect_blockers.sql returns before
// the row's.
var blockerColumnNames = []string{"aggregate_type", "aggregate_id", "pending", "dead"}

// scan scans the current row of rows, after the targets of the columns
// before the row's (lead: inspect_blockers.sql's aggregate and counts) and
// before those after it (tail: the payload size of the *_sizes.sql
// statements), and returns it. A column that cannot be decoded, or a partition outside
// [0, partitions), is returned in Row.Bad, not as an error.
func (s *rowScan) scan(rows *sql.Rows, lead, tail []any) (dialects.Row, error) {
	dest := append(lead, &s.seq, &s.id, &s.aggType, &s.aggID, &s.eventType, &s.payload, &s.contentType,
		&s.headers, &s.idem, &s.critical, &s.created, &s.attempts, &s.payloadJSON, &s.state,
		&s.nextAttempt, &s.part, &s.lastError, &s.publishedAt, &s.deliver, &s.partitions)
	dest = append(dest, tail...)
	names := inspectColumnNames
	if len(lead) > 0 {
		names = append(blockerColumnNames[:len(lead):len(lead)], names...)
	}
	if len(tail) > 0 {
		names = append(names[:len(names):len(names)], "payload_size")
	}
	bad, err := scanTolerant(rows, dest, names)
	if err != nil {
		return dialects.Row{}, err
	}
	var r dialects.Row
	r.Seq = s.seq.Int64
	r.ID = s.id.String
	r.AggregateType = s.aggType.String
	r.AggregateID = s.aggID.String
	r.EventType = s.eventType.String
	r.Payload = Payload(s.payload)
	if s.payloadJSON.Valid {
		r.Payload = []byte(s.payloadJSON.String)
	}
	r.ContentType = s.contentType.String
	if s.headers.Valid {
		h, err := DecodeHeaders(&s.headers.String)
		if err != nil && bad == nil {
			bad = headersError(s.headers.String, err)
		}
		r.Headers = h
	}
	r.IdempotencyKey = s.idem.String
	r.Critical = s.critical.Bool
	r.CreatedAt = s.created.Time
	r.Attempts = int(s.attempts.Int64)
	r.State = dialects.State(s.state.Int64)
	r.NextAttemptAt = s.nextAttempt.Time
	r.Partition = int(s.part.Int64)
	r.LastError = s.lastError.String
	r.PublishedAt = s.publishedAt.Time
	r.DeliverAt = s.deliver.Time
	r.PayloadSize = len(r.Payload)
	if p, n := s.part, s.partitions; bad == nil && p.Valid && n.Valid && (p.Int64 < 0 || p.Int64 >= n.Int64) {
		bad = &dialects.RowError{Column: "part", Raw: strconv.FormatInt(p.Int64, 10),
			Err: fmt.Errorf("partition %d is outside [0, %d): no relay reads it", p.Int64, n.Int64)}
	}
	r.Bad = bad
	return r, nil
}
