package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jitoutbox/jitoutbox/notify"
)

// loggedSource passes a Source's wakes on, logging each at debug level
// ("wake received") and the first one at info level ("wake source ready":
// for LISTEN/NOTIFY it arrives once LISTEN is in place).
type loggedSource struct {
	name string
	src  notify.Source
	log  *slog.Logger
	wg   *sync.WaitGroup
}

var _ notify.Source = (*loggedSource)(nil)

// Listen listens on the wrapped source; its goroutine ends with ctx.
func (s *loggedSource) Listen(ctx context.Context) (<-chan struct{}, error) {
	in, err := s.src.Listen(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		first := true
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-in:
				if !ok {
					return
				}
				if first {
					first = false
					s.log.InfoContext(ctx, "wake source ready", "source", s.name)
				}
				s.log.DebugContext(ctx, "wake received", "source", s.name)
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, nil
}
