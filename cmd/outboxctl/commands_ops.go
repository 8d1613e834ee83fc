package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

// The commands the alert runbooks name (deploy/prometheus/alerts.yml):
// "outboxctl dead" and "outboxctl blocked".

// deadFlags is list with -state dead preset: the dead letters, with list's
// filters and paging.
func deadFlags(fs *flag.FlagSet) runner {
	r := listFlags(fs)
	if err := fs.Set("state", "dead"); err != nil {
		panic("outboxctl: dead: " + err.Error()) // list has a -state flag: a build-time invariant
	}
	return r
}

// maxBlocked is the most aggregates blocked lists.
const maxBlocked = 1000

// blockedFlags lists the blocked aggregates, as status does, without the
// rest of status.
func blockedFlags(fs *flag.FlagSet) runner {
	limit := fs.Int("limit", 50, fmt.Sprintf("most blocked aggregates to list (1 to %d)", maxBlocked))
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		if *limit <= 0 || *limit > maxBlocked {
			return fmt.Errorf("%w: -limit must be between 1 and %d (got %d)", errUsage, maxBlocked, *limit)
		}
		bl, err := blockers(ctx, e, time.Now(), *limit)
		if err != nil {
			return err
		}
		if e.g.json {
			return writeJSON(e.stdout, map[string]any{"blockers": bl})
		}
		return writeBlockers(e.stdout, bl)
	})
}
