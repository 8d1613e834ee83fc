package sqlkit

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// readColumnNames names ScanRead's scan targets, in order (RecordColumns,
// then payload_json when the dialect returns it, then the horizon).
var readColumnNames = []string{"seq", "id", "aggregate_type", "aggregate_id", "event_type", "payload",
	"content_type", "headers", "idempotency_key", "critical", "created_at", "attempts", "part", "deliver_at"}

// inspectColumnNames names rowScan's scan targets, in order: the columns
// of each dialect's sql/_inspect_columns.sql (TestInspectColumnsFragment).
var inspectColumnNames = []string{"seq", "id", "aggregate_type", "aggregate_id", "event_type", "payload",
	"content_type", "headers", "idempotency_key", "critical", "created_at", "attempts", "payload_json", "state",
	"next_attempt_at", "part", "last_error", "published_at", "deliver_at", "partitions"}

// scanTolerant scans the current row of rows into dest, whose columns
// are named by names (len(names) >= len(dest)). When a column cannot be
// converted (rows.Scan fails) the row is scanned again: every column
// that converts is scanned into its target, the others are left as they
// were, and the first one that does not is returned as a RowError. That
// costs one scan per column, only for such a row; rows.Scan may be
// called again on the same row (database/sql keeps its values until
// Next). A nil RowError and a nil error: the row scanned as it is.
func scanTolerant(rows *sql.Rows, dest []any, names []string) (*dialects.RowError, error) {
	err := rows.Scan(dest...)
	if err == nil {
		return nil, nil
	}
	raw := make([]any, len(dest))
	probe := make([]any, len(dest))
	for i := range raw {
		probe[i] = &raw[i]
	}
	if err := rows.Scan(probe...); err != nil {
		return nil, err // not a value of the row: the rows themselves fail
	}
	var bad *dialects.RowError
	for i := range dest {
		probe[i] = dest[i]
		if err := rows.Scan(probe...); err != nil {
			if bad == nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner // drop database/sql's "Scan error on column index..."
				}
				bad = &dialects.RowError{Column: names[i], Raw: rawText(raw[i]), Err: err}
			}
			probe[i] = new(any)
		}
	}
	if bad == nil {
		// Every column converts alone, not together: report the first
		// error as it was.
		return nil, err
	}
	// The good columns were scanned into their targets by the probes that
	// held them; the last probe holds them all.
	if err := rows.Scan(probe...); err != nil {
		return nil, err
	}
	return bad, nil
}

// rawText returns a driver value as text for RowError.Raw: bytes and
// strings as they are, cut to dialects.MaxRawBytes; NULL as "".
func rawText(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return ""
	case []byte:
		s = string(v[:min(len(v), dialects.MaxRawBytes)])
	case string:
		s = v
	case int64:
		return strconv.FormatInt(v, 10)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	default:
		s = fmt.Sprint(v)
	}
	return s[:min(len(s), dialects.MaxRawBytes)]
}

// headersError returns the RowError of a headers column that does not
// decode.
func headersError(raw string, err error) *dialects.RowError {
	return &dialects.RowError{Column: "headers", Raw: rawText(raw), Err: errors.Unwrap(err)}
}
