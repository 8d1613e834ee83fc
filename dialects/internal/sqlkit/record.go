package sqlkit

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// RecordColumns is the number of record columns every dialect's read
// returns first, in ScanRead's order, as each dialect's
// sql/_record_columns.sql lists them (TestRecordColumnsFragment checks
// it); PostgreSQL's fragment appends payload_json (as text), and every
// read ends with the read's horizon (ScanRead).
//
//	seq, id, aggregate_type, aggregate_id, event_type, payload, content_type,
//	headers, idempotency_key, critical, created_at, attempts, part, deliver_at
const RecordColumns = 14

// ScanRead reads a dialect's read.sql results: the record columns, then,
// when withJSON, the JSON payload text (NULL when the payload is in the
// payload column), then the read's horizon (dialects.ReadResult.Horizon,
// the same on every row; a critical read's count of candidates, see
// RunCritical). hint is the number of rows expected (the read's
// limit), to size the result. Records are sorted by Seq. A row with a
// column that cannot be decoded is returned with Record.Bad set (see
// dialects.RowError), never as an error of the read.
func ScanRead(rows *sql.Rows, withJSON bool, hint int) (dialects.ReadResult, error) {
	defer rows.Close()
	out := make([]dialects.Record, 0, max(hint, 0))
	// One set of scan targets for all rows: Scan copies each value out of
	// the driver's buffer into them, and each row's values are moved into
	// out before the next Scan.
	var (
		r       dialects.Record
		payload []byte
		pj      sql.NullString
		headers sql.NullString
		idem    sql.NullString
		created NullTime
		deliver NullTime
	)
	dest := []any{&r.Seq, &r.ID, &r.AggregateType, &r.AggregateID, &r.EventType, &payload,
		&r.ContentType, &headers, &idem, &r.Critical, &created, &r.Attempts, &r.Partition, &deliver, &pj}
	if !withJSON {
		dest = dest[:RecordColumns]
	}
	var horizon sql.NullInt64
	dest = append(dest, &horizon)
	names := append(readColumnNames[:RecordColumns:RecordColumns], "payload_json")
	if !withJSON {
		names = names[:RecordColumns]
	}
	names = append(names, "horizon")
	for rows.Next() {
		r, payload, pj = dialects.Record{}, nil, sql.NullString{}
		headers, idem, created, deliver = sql.NullString{}, sql.NullString{}, NullTime{}, NullTime{}
		// A column that cannot be decoded marks the row bad (Record.Bad)
		// instead of failing the read: the relay dead-letters it and
		// goes on with the others.
		bad, err := scanTolerant(rows, dest, names)
		if err != nil {
			return dialects.ReadResult{}, fmt.Errorf("sqlkit: scan row: %w", err)
		}
		if pj.Valid {
			payload = []byte(pj.String)
		}
		r.Payload = Payload(payload)
		if headers.Valid {
			h, err := DecodeHeaders(&headers.String)
			if err != nil && bad == nil {
				bad = headersError(headers.String, err)
			}
			r.Headers = h
		}
		r.IdempotencyKey = idem.String
		r.CreatedAt = created.Time
		r.DeliverAt = deliver.Time
		r.Bad = bad
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return dialects.ReadResult{}, fmt.Errorf("sqlkit: read rows: %w", err)
	}
	SortBySeq(out)
	return dialects.ReadResult{Records: out, Horizon: horizon.Int64}, nil
}

// HandoffRecords reads the (seq, id, free) rows of an INSERT for the
// hand-over and builds the records of the free events (HandoffRecordsOf).
// It closes rows.
func HandoffRecords(rows *sql.Rows, events []dialects.Event) ([]dialects.Record, error) {
	defer rows.Close()
	var ins []Inserted
	for rows.Next() {
		var r Inserted
		if err := rows.Scan(&r.Seq, &r.ID, &r.Free); err != nil {
			return nil, err
		}
		ins = append(ins, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return HandoffRecordsOf(ins, events), nil
}

// Inserted is a row an INSERT for the hand-over wrote: its seq, its event
// id, and whether the statement found its aggregate free.
type Inserted struct {
	Seq  int64
	ID   string
	Free bool
}

// HandoffRecordsOf builds, from the rows an INSERT wrote, the records of
// the free events as a read returns them (times in UTC to the
// microsecond, a non-nil payload, nil headers when empty), in Seq order.
// A scheduled event is never free, nor an event after a held scheduled
// event of its aggregate in events (HeldAfter): the statement's own check
// cannot see the hold, written after the rows.
func HandoffRecordsOf(rows []Inserted, events []dialects.Event) []dialects.Record {
	held := HeldAfter(events)
	byID := make(map[string]int, len(events))
	for i := range events {
		if events[i].Scheduled() || (held != nil && held[i]) {
			continue
		}
		byID[events[i].ID] = i
	}
	var recs []dialects.Record
	for _, r := range rows {
		i, ok := byID[r.ID]
		if !r.Free || !ok {
			continue
		}
		e := events[i]
		e.CreatedAt = UTC(e.CreatedAt)
		e.Payload = Payload(e.Payload)
		if len(e.Headers) == 0 {
			e.Headers = nil
		}
		recs = append(recs, dialects.Record{Event: e, Seq: r.Seq})
	}
	slices.SortFunc(recs, func(a, b dialects.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return recs
}

// HeldAfter reports, for each of events (in registration order), whether
// a held scheduled event (dialects.Event.Holds) of its aggregate comes
// before it in events; nil when none does (a hand-over insert without
// scheduled events allocates nothing for it).
func HeldAfter(events []dialects.Event) []bool {
	type agg struct {
		part    int
		typ, id string
	}
	var holding map[agg]bool
	var out []bool
	for i := range events {
		e := &events[i]
		k := agg{e.Partition, e.AggregateType, e.AggregateID}
		if holding[k] {
			if out == nil {
				out = make([]bool, len(events))
			}
			out[i] = true
		}
		if e.Holds() {
			if holding == nil {
				holding = map[agg]bool{}
			}
			holding[k] = true
		}
	}
	return out
}

// HeldIDs returns the ids of the events that hold their aggregate
// (Event.Holds: ordered scheduled events), nil when none does: the insert
// then writes no hold.
func HeldIDs(events []dialects.Event) []string {
	var ids []string
	for i := range events {
		if events[i].Holds() {
			ids = append(ids, events[i].ID)
		}
	}
	return ids
}

// ScheduleArgs returns the values a server-side INSERT binds for an
// event's schedule (insert_row.sql of PostgreSQL and MySQL, which add the
// delay to their own clock): the Delay in microseconds, 0 for one
// scheduled by NotBefore alone, and NotBefore in UTC; both nil for an event
// that is not scheduled.
func ScheduleArgs(e *dialects.Event) (delay, notBefore any) {
	if !e.Scheduled() {
		return nil, nil
	}
	delay = max(e.Delay, 0).Microseconds()
	if !e.NotBefore.IsZero() {
		notBefore = UTC(e.NotBefore)
	}
	return delay, notBefore
}

// DeliverAt returns the due time of a scheduled event inserted at now by
// the database's clock: the later of now + Delay and NotBefore, in UTC to
// the microsecond. ok is false for an event that is not scheduled.
func DeliverAt(e *dialects.Event, now time.Time) (at time.Time, ok bool) {
	if !e.Scheduled() {
		return time.Time{}, false
	}
	at = now.Add(max(e.Delay, 0))
	if e.NotBefore.After(at) {
		at = e.NotBefore
	}
	return UTC(at), true
}

// ReadAheadWindow bounds a read ahead's look, in batches: the MySQL and
// SQLite read_ahead.sql look at the first ReadAheadWindow × limit
// candidates past the batch in flight (bound as @window), so that a look
// that leaves out most candidates stops early instead of walking the
// backlog.
const ReadAheadWindow = 4

// RunRead binds a dialect's read q with args, runs it through its
// statement prepared on db (stmts) and scans the rows (ScanRead).
func RunRead(ctx context.Context, stmts *StmtCache, db *sql.DB, q *Query, withJSON bool, limit int, args ...sql.NamedArg) (dialects.ReadResult, error) {
	query, vals, err := q.Bind(args...)
	if err != nil {
		return dialects.ReadResult{}, err
	}
	stmt, err := stmts.Stmt(ctx, db, query)
	if err != nil {
		return dialects.ReadResult{}, fmt.Errorf("prepare: %w", err)
	}
	rows, err := stmt.QueryContext(ctx, vals...)
	if err != nil {
		return dialects.ReadResult{}, err
	}
	return ScanRead(rows, withJSON, limit)
}

// RunCritical is RunRead for a dialect's read_critical.sql, whose last
// column is the number of candidates the read looked at
// (dialects.CriticalResult.Candidates, the same on every row).
func RunCritical(ctx context.Context, stmts *StmtCache, db *sql.DB, q *Query, withJSON bool, limit int, args ...sql.NamedArg) (dialects.CriticalResult, error) {
	res, err := RunRead(ctx, stmts, db, q, withJSON, limit, args...)
	if err != nil {
		return dialects.CriticalResult{}, err
	}
	return dialects.CriticalResult{Records: res.Records, Candidates: int(res.Horizon)}, nil
}

// CriticalWindow returns the candidates a critical read looks at: the
// request's window, or dialects.CriticalWindow when unset.
func CriticalWindow(req dialects.CriticalRequest) int {
	if req.Window <= 0 {
		return dialects.CriticalWindow
	}
	return req.Window
}
