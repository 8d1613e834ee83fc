package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jitoutbox/jitoutbox/notify"
)

// loggedSource passes a Source's wakes on, logging each at debug level
// ("wake received", with the partitions it names) and the first one at
// info level ("wake source ready": for LISTEN/NOTIFY it arrives once
// LISTEN is in place).
type loggedSource struct {
	name string
	src  notify.Source
	log  *slog.Logger
	wg   *sync.WaitGroup
}

var _ notify.Source = (*loggedSource)(nil)

// Listen listens on the wrapped source; its goroutine ends with ctx.
func (s *loggedSource) Listen(ctx context.Context, w *notify.Wakes) error {
	in := notify.NewWakes()
	if err := s.src.Listen(ctx, in); err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		first := true
		for {
			select {
			case <-ctx.Done():
				return
			case <-in.C():
				parts, any := in.Take()
				if !any && len(parts) == 0 {
					continue // taken with an earlier signal
				}
				if first {
					first = false
					s.log.InfoContext(ctx, "wake source ready", "source", s.name)
				}
				s.log.DebugContext(ctx, "wake received", "source", s.name, "partitions", parts, "any", any)
				w.Wake(parts)
			}
		}
	}()
	return nil
}
