package sqlkit

import "testing"

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
