package latency

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBuckets(t *testing.T) {
	prev := -1
	for us := uint64(0); us < 1<<20; us += 1 + us/64 {
		i := bucketOf(us)
		if i < prev {
			t.Fatalf("bucketOf not monotonic at %d", us)
		}
		if up := upperOf(i); up < us {
			t.Fatalf("upperOf(%d)=%d < value %d", i, up, us)
		}
		if i > 0 && upperOf(i-1) >= us {
			t.Fatalf("value %d also fits bucket %d", us, i-1)
		}
		prev = i
	}
}

func TestSummary(t *testing.T) {
	var h Histogram
	if s := h.Summary(); s.Count != 0 || s.P99 != 0 {
		t.Fatalf("empty summary = %+v", s)
	}
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	s := h.Summary()
	if s.Count != 1000 || s.Max != time.Second {
		t.Fatalf("summary = %+v", s)
	}
	within := func(name string, got, want time.Duration) {
		t.Helper()
		if got < want || float64(got) > float64(want)*1.13 {
			t.Errorf("%s = %v, want about %v", name, got, want)
		}
	}
	within("p50", s.P50, 500*time.Millisecond)
	within("p90", s.P90, 900*time.Millisecond)
	within("p99", s.P99, 990*time.Millisecond)
	h.Record(-time.Second)
	if s := h.Summary(); s.Count != 1001 {
		t.Fatalf("negative not counted: %+v", s)
	}
}
