package natspub

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestDurabilityProblems(t *testing.T) {
	const minDup = 90 * time.Second
	cases := []struct {
		name       string
		cfg        jetstream.StreamConfig
		syncAlways bool
		want       []string // substrings, one per expected problem
	}{
		{"file R3", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 3, Duplicates: 2 * time.Minute}, false, nil},
		{"file R5", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 5, Duplicates: 2 * time.Minute}, false, nil},
		{"file R1 sync always", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 1, Duplicates: 2 * time.Minute}, true, nil},
		{"file R1", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 1, Duplicates: 2 * time.Minute}, false, []string{"replicas 1 < 2"}},
		{"file R0 means 1", jetstream.StreamConfig{Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}, false, []string{"replicas 1 < 2"}},
		{"file R2", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 2, Duplicates: 2 * time.Minute}, false, nil},
		{"memory R1", jetstream.StreamConfig{Storage: jetstream.MemoryStorage, Replicas: 1, Duplicates: 2 * time.Minute}, false, []string{"recreate the stream with file storage and replicas 3"}},
		{"memory R3", jetstream.StreamConfig{Storage: jetstream.MemoryStorage, Replicas: 3, Duplicates: 2 * time.Minute}, true, []string{"memory storage"}},
		{"short window", jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 3, Duplicates: 30 * time.Second}, false, []string{"duplicate window 30s is shorter than 1m30s (relay lease + outage allowance): an event republished after a relay lost its lease or the broker was down can be stored twice; raise the stream's duplicate_window (nats stream edit --dupe-window 1m30s)"}},
		{"everything wrong", jetstream.StreamConfig{Storage: jetstream.MemoryStorage, Replicas: 1, Duplicates: time.Second}, false, []string{"memory storage", "duplicate window"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := durabilityProblems(c.cfg, c.syncAlways, minDup)
			if len(got) != len(c.want) {
				t.Fatalf("problems = %q, want %d matching %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	if got := durabilityProblems(jetstream.StreamConfig{Storage: jetstream.FileStorage, Replicas: 3}, false, 0); len(got) != 0 {
		t.Errorf("minDup 0 must skip the window check, got %q", got)
	}
}
