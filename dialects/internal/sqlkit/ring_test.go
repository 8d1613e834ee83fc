package sqlkit

import (
	"slices"
	"testing"
)

func TestRingNext(t *testing.T) {
	relays := []string{"a", "b", "c"}
	for self, want := range map[string]string{"a": "b", "b": "c", "c": "a", "bb": "c", "0": "a"} {
		if got, ok := RingNext(relays, self); !ok || got != want {
			t.Errorf("RingNext(%v, %q) = %q, %v; want %q", relays, self, got, ok, want)
		}
	}
	if _, ok := RingNext([]string{"a"}, "a"); ok {
		t.Error("a relay alone watches nobody")
	}
}

func TestWatch(t *testing.T) {
	ids := map[string]int64{"a": 7, "b": 3, "c": 5}
	target, live, ok := Watch([]string{"a", "b", "c"}, "a", ids)
	if !ok || target != 3 || !slices.Equal(live, []int64{3, 5, 7}) {
		t.Errorf("Watch of a among a, b, c = %d, %v, %v; want 3 (b), [3 5 7]", target, live, ok)
	}
	target, live, ok = Watch([]string{"c"}, "c", ids)
	if !ok || target != 5 || !slices.Equal(live, []int64{5}) {
		t.Errorf("Watch of c alone = %d, %v, %v; want its own 5, [5]", target, live, ok)
	}
	if _, _, ok := Watch([]string{"a", "d"}, "a", ids); ok {
		t.Error("Watch with a relay missing from ids: ok")
	}
}
