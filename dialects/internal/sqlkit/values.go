package sqlkit

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// MaxErrorBytes is the longest last_error text stored.
const MaxErrorBytes = 2000

// UTC returns t in UTC truncated to microseconds (the precision every
// dialect stores).
func UTC(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// EncodeHeaders returns the JSON text of h, or nil (SQL NULL) when empty.
func EncodeHeaders(h map[string]string) (any, error) {
	if len(h) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("sqlkit: encode headers: %w", err)
	}
	return string(b), nil
}

// DecodeHeaders decodes headers stored by EncodeHeaders; NULL, "" and "{}"
// give a nil map.
func DecodeHeaders(s *string) (map[string]string, error) {
	if s == nil || *s == "" || *s == "{}" || *s == "null" {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(*s), &h); err != nil {
		return nil, fmt.Errorf("sqlkit: decode headers: %w", err)
	}
	if len(h) == 0 {
		return nil, nil
	}
	return h, nil
}

// NullString maps "" to SQL NULL.
func NullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Payload returns p, never nil (so drivers bind an empty value, not NULL).
func Payload(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

// TruncateError makes s valid UTF-8 and cuts it to at most MaxErrorBytes
// bytes on a rune boundary.
func TruncateError(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxErrorBytes {
		return s
	}
	cut := MaxErrorBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// NullTime scans a possibly NULL timestamp from any of the forms drivers
// return: time.Time, int64 unix microseconds (SQLite), or text such as
// "2006-01-02 15:04:05.999999" (MySQL without parseTime=true), read as UTC.
type NullTime struct {
	Time  time.Time
	Valid bool
}

var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999-07:00",
}

// Scan implements sql.Scanner.
func (n *NullTime) Scan(src any) error {
	n.Valid = false
	n.Time = time.Time{}
	switch v := src.(type) {
	case nil:
		return nil
	case time.Time:
		n.Time, n.Valid = v.UTC(), true
		return nil
	case int64:
		n.Time, n.Valid = time.UnixMicro(v).UTC(), true
		return nil
	case []byte:
		return n.parse(string(v))
	case string:
		return n.parse(v)
	}
	return fmt.Errorf("sqlkit: cannot scan %T into a time", src)
}

func (n *NullTime) parse(s string) error {
	if s == "" || strings.HasPrefix(s, "0000-00-00") {
		return nil
	}
	if us, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.Time, n.Valid = time.UnixMicro(us).UTC(), true
		return nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			n.Time, n.Valid = t.UTC(), true
			return nil
		}
	}
	return fmt.Errorf("sqlkit: cannot parse time %q", s)
}

// Value implements driver.Valuer (for completeness; dialects bind times
// themselves).
func (n NullTime) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	return n.Time, nil
}

// ErrInvalidFilter is wrapped by Requeue when a RequeueFilter does not use
// exactly one selector.
var ErrInvalidFilter = dialects.ErrInvalidRequeueFilter

// Selector is the one way a RequeueFilter selects rows.
type Selector int

// Requeue selectors.
const (
	SelectIDs Selector = iota + 1
	SelectAggregate
	SelectAll
)

// RequeueSelector validates f and returns its selector.
func RequeueSelector(f dialects.RequeueFilter) (Selector, error) {
	var sel []Selector
	if len(f.IDs) > 0 {
		sel = append(sel, SelectIDs)
	}
	if f.AggregateType != "" || f.AggregateID != "" {
		if f.AggregateType == "" || f.AggregateID == "" {
			return 0, fmt.Errorf("%w: an aggregate needs both AggregateType and AggregateID", ErrInvalidFilter)
		}
		sel = append(sel, SelectAggregate)
	}
	if f.All {
		sel = append(sel, SelectAll)
	}
	if len(sel) != 1 {
		return 0, fmt.Errorf("%w: use exactly one of IDs, an aggregate or All (got %d)", ErrInvalidFilter, len(sel))
	}
	return sel[0], nil
}

// SortBySeq sorts records by Seq.
func SortBySeq(rs []dialects.Record) {
	slices.SortFunc(rs, func(a, b dialects.Record) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
}

// JSONInts returns a JSON array of seqs ("[1,2,3]").
func JSONInts(seqs []int64) string {
	b := make([]byte, 0, 2+len(seqs)*8)
	b = append(b, '[')
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	return string(append(b, ']'))
}

// JSONStrings returns a JSON array of strings.
func JSONStrings(ss []string) (string, error) {
	if ss == nil {
		ss = []string{}
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return "", fmt.Errorf("sqlkit: encode ids: %w", err)
	}
	return string(b), nil
}
