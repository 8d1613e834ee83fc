package txoutbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// A schedule out of bounds is refused at Add with the field named; the
// transaction stays usable. Within bounds (a past NotBefore included) the
// event is buffered with its schedule.
func TestAddSchedule(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		delay     time.Duration
		notBefore time.Time
		field     string // "" when accepted
	}{
		{"none", 0, time.Time{}, ""},
		{"delay", time.Minute, time.Time{}, ""},
		{"delay at the bound", txoutbox.MaxDelay, time.Time{}, ""},
		{"delay over the bound", txoutbox.MaxDelay + 1, time.Time{}, "Delay"},
		{"negative delay", -time.Second, time.Time{}, "Delay"},
		{"not before in the past", 0, now.Add(-time.Hour), ""},
		{"not before at the bound", 0, now.Add(txoutbox.MaxDelay), ""},
		{"not before over the bound", 0, now.Add(txoutbox.MaxDelay + time.Second), "NotBefore"},
		{"both", time.Minute, now.Add(time.Hour), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ob, mock, _ := newMock(t, &fakeDialect{}, txoutbox.WithClock(func() time.Time { return now }))
			mock.ExpectBegin()
			mock.ExpectRollback()
			tx, err := ob.Begin(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // test clean-up
			ev := validEvent()
			ev.Delay, ev.NotBefore, ev.Unordered = c.delay, c.notBefore, true
			_, err = tx.Add(ev)
			if c.field != "" {
				var verr *txoutbox.ValidationError
				if !errors.As(err, &verr) || verr.Field != c.field || !errors.Is(err, txoutbox.ErrInvalidEvent) {
					t.Fatalf("Add: %v; want a ValidationError on %s", err, c.field)
				}
				if _, err := tx.Add(validEvent()); err != nil {
					t.Fatalf("the transaction is not usable after a refused schedule: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := tx.Events()[0]
			scheduled := c.delay > 0 || !c.notBefore.IsZero()
			if got.Delay != c.delay || !got.NotBefore.Equal(c.notBefore) || got.Unordered != scheduled {
				t.Fatalf("buffered %+v; want delay %v, not before %v, unordered %v", got, c.delay, c.notBefore, scheduled)
			}
		})
	}
}

// Cancel refuses what is not an event id before asking the database.
func TestCancelRefusesBadIDs(t *testing.T) {
	ob, _, _ := newMock(t, &fakeDialect{})
	for _, id := range []string{"", "42", "0192f8e4-4c8b-7d2a-9f3e-5a6b7c8d9e0", "0192f8e4-4c8b-7d2a-9f3e-5a6b7c8d9e0fx"} {
		if _, err := ob.Cancel(context.Background(), id); !errors.Is(err, txoutbox.ErrInvalidEventID) {
			t.Errorf("Cancel(%q): %v; want ErrInvalidEventID", id, err)
		}
	}
	if got, err := ob.Cancel(context.Background()); err != nil || got != nil {
		t.Errorf("Cancel of nothing: %v, %v", got, err)
	}
}
