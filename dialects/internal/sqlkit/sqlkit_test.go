package sqlkit

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/jitoutbox/jitoutbox/dialects"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRender(t *testing.T) {
	src := "-- comment\nCREATE TABLE {{table}} (a INT);\nCREATE INDEX {{name}}_i ON {{table}} (a);\n"
	got := Render(src, "app.outbox")
	want := "CREATE TABLE app.outbox (a INT);\nCREATE INDEX outbox_i ON app.outbox (a);"
	if got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}

func TestValidateTable(t *testing.T) {
	if err := ValidateTable("a;b"); !errors.Is(err, dialects.ErrInvalidTable) {
		t.Fatalf("ValidateTable(a;b) = %v", err)
	}
	if err := ValidateTable("app.outbox"); err != nil {
		t.Fatalf("ValidateTable(app.outbox) = %v", err)
	}
}

func TestInsertBuilder(t *testing.T) {
	b, err := NewInsertBuilder("INSERT INTO t (a, b) VALUES", "(@a, @b::json)", Dollar)
	if err != nil {
		t.Fatal(err)
	}
	if b.Columns() != 2 {
		t.Fatalf("Columns = %d", b.Columns())
	}
	want := "INSERT INTO t (a, b) VALUES ($1, $2::json),\n($3, $4::json)"
	if got := b.SQL(2); got != want {
		t.Fatalf("SQL(2) = %q, want %q", got, want)
	}
	if got := b.SQL(2); got != want {
		t.Fatalf("cached SQL(2) = %q", got)
	}
	// A tail's parameters are numbered after the rows'; the plain builder
	// keeps its own cache.
	tb, err := b.WithTail(") SELECT @c::text, @d")
	if err != nil {
		t.Fatal(err)
	}
	wantTail := "INSERT INTO t (a, b) VALUES ($1, $2::json),\n($3, $4::json)\n) SELECT $5::text, $6"
	if got := tb.SQL(2); got != wantTail {
		t.Fatalf("WithTail SQL(2) = %q, want %q", got, wantTail)
	}
	if got := b.SQL(2); got != want {
		t.Fatalf("SQL(2) after WithTail = %q", got)
	}
}

func TestTruncateError(t *testing.T) {
	s := TruncateError(strings.Repeat("€", 1000) + "\xff") // 3000 bytes
	if len(s) > MaxErrorBytes || len(s) < MaxErrorBytes-3 || !utf8.ValidString(s) {
		t.Fatalf("TruncateError: %d bytes, valid %v", len(s), utf8.ValidString(s))
	}
	if got := TruncateError("bad\xffbyte"); got != "bad\uFFFDbyte" {
		t.Fatalf("TruncateError invalid UTF-8 = %q", got)
	}
}

func TestNullTime(t *testing.T) {
	want := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	for _, src := range []any{want, want.UnixMicro(), []byte("2024-05-06 07:08:09.123456"), "2024-05-06T07:08:09.123456Z", "2024-05-06 09:08:09.123456+02"} {
		var n NullTime
		if err := n.Scan(src); err != nil || !n.Valid || !n.Time.Equal(want) || n.Time.Location() != time.UTC {
			t.Errorf("Scan(%v) = %v %v %v", src, n.Time, n.Valid, err)
		}
	}
	var n NullTime
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Fatalf("Scan(nil) = %v %v", n.Valid, err)
	}
	if err := n.Scan("garbage"); err == nil {
		t.Fatal("Scan(garbage) succeeded")
	}
}

func TestRequeueSelector(t *testing.T) {
	for f, want := range map[*dialects.RequeueFilter]Selector{
		{IDs: []string{"x"}}:                   SelectIDs,
		{AggregateType: "a", AggregateID: "1"}: SelectAggregate,
		{All: true}:                            SelectAll,
	} {
		if got, err := RequeueSelector(*f); err != nil || got != want {
			t.Errorf("RequeueSelector(%+v) = %v, %v", *f, got, err)
		}
	}
	for _, f := range []dialects.RequeueFilter{{}, {All: true, IDs: []string{"x"}}, {AggregateType: "a"}} {
		if _, err := RequeueSelector(f); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("RequeueSelector(%+v) = %v", f, err)
		}
	}
}

func TestHeaders(t *testing.T) {
	v, err := EncodeHeaders(nil)
	if err != nil || v != nil {
		t.Fatalf("EncodeHeaders(nil) = %v, %v", v, err)
	}
	v, err = EncodeHeaders(map[string]string{"ü": "✓"})
	if err != nil {
		t.Fatal(err)
	}
	s := v.(string)
	h, err := DecodeHeaders(&s)
	if err != nil || h["ü"] != "✓" || len(h) != 1 {
		t.Fatalf("DecodeHeaders = %v, %v", h, err)
	}
	empty := "{}"
	if h, err := DecodeHeaders(&empty); err != nil || h != nil {
		t.Fatalf("DecodeHeaders({}) = %v, %v", h, err)
	}
}

// Stats' times never fail on a value that does not parse (a bad row):
// they are left zero.
func TestLenientTime(t *testing.T) {
	var l lenientTime
	if err := l.Scan("garbage"); err != nil || l.Valid || !l.Time.IsZero() {
		t.Fatalf("Scan(garbage) = %v, %+v; want nil and zero", err, l)
	}
	if err := l.Scan(int64(1)); err != nil || !l.Valid || !l.Time.Equal(time.UnixMicro(1)) {
		t.Fatalf("Scan(1) = %v, %+v", err, l)
	}
	if err := l.Scan([]byte("infinity")); err != nil || l.Valid {
		t.Fatalf("Scan(infinity) = %v, %+v; want nil and zero", err, l)
	}
}

func TestRawTextCuts(t *testing.T) {
	long := strings.Repeat("x", dialects.MaxRawBytes+10)
	for _, c := range []struct {
		in   any
		want string
	}{{nil, ""}, {[]byte("5"), "5"}, {"{\"k\":", "{\"k\":"}, {int64(-3), "-3"}, {[]byte(long), long[:dialects.MaxRawBytes]}, {long, long[:dialects.MaxRawBytes]}} {
		if got := rawText(c.in); got != c.want {
			t.Errorf("rawText(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
