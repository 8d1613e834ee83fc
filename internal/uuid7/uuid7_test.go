package uuid7

import (
	"regexp"
	"sync"
	"testing"
	"time"
)

var canonical = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestFormatAndTime(t *testing.T) {
	var g Generator
	now := time.UnixMilli(1_700_000_000_123)
	u := g.New(now)
	if !canonical.MatchString(u.String()) {
		t.Fatalf("not a canonical v7 UUID: %s", u)
	}
	if !u.Time().Equal(now) {
		t.Fatalf("Time() = %v, want %v", u.Time(), now)
	}
}

func TestMonotonic(t *testing.T) {
	var g Generator
	now := time.UnixMilli(1_700_000_000_000)
	prev := g.New(now).String()
	// Many ids in one millisecond, and a clock that steps back, stay ordered.
	for i := 0; i < 10000; i++ {
		ts := now
		if i%100 == 0 {
			ts = now.Add(-time.Second)
		}
		cur := g.New(ts).String()
		if cur <= prev {
			t.Fatalf("id %d not increasing: %s <= %s", i, cur, prev)
		}
		prev = cur
	}
}

func TestConcurrentUnique(t *testing.T) {
	var g Generator
	var mu sync.Mutex
	seen := map[UUID]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				u := g.New(time.Now())
				mu.Lock()
				if seen[u] {
					t.Errorf("duplicate %s", u)
				}
				seen[u] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
