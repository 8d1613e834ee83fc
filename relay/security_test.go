package relay

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitoutbox/jitoutbox/dialects"
	"github.com/jitoutbox/jitoutbox/dialects/mysql"
	"github.com/jitoutbox/jitoutbox/dialects/postgres"
	"github.com/jitoutbox/jitoutbox/notify"
	"github.com/jitoutbox/jitoutbox/notify/pgnotify"
	"github.com/jitoutbox/jitoutbox/txoutbox"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretsNeverLeak points the library at unreachable servers with DSNs
// that carry a password and checks that neither the logs nor the errors the
// library produces contain it: relay cycles and Stats, txoutbox Begin, and
// the pgnotify listener and notifier.
func TestSecretsNeverLeak(t *testing.T) {
	const secret = "S3cretPassw0rd"
	cases := []struct {
		driver, dsn string
		dialect     func() (dialects.Dialect, error)
	}{
		{"postgres", "postgres://app:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=1", func() (dialects.Dialect, error) { return postgres.New() }},
		{"pgx", "postgres://app:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=1", func() (dialects.Dialect, error) { return postgres.New() }},
		{"mysql", "app:" + secret + "@tcp(127.0.0.1:1)/db?timeout=1s&parseTime=true", func() (dialects.Dialect, error) { return mysql.New() }},
	}
	for _, c := range cases {
		t.Run(c.driver, func(t *testing.T) {
			logs := &syncBuffer{}
			logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			db, err := sql.Open(c.driver, c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			d, err := c.dialect()
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			check := func(what string, err error) {
				if err == nil {
					t.Errorf("%s: want an error from an unreachable server", what)
					return
				}
				errs = append(errs, what+": "+err.Error())
			}

			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			r, err := New(db, d, PublisherFunc(func(context.Context, []Message, []error) {}), Config{Logger: logger, PollInterval: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Run(ctx); err != nil {
				errs = append(errs, "Run: "+err.Error())
			}
			_, err = r.Stats(context.Background())
			check("Stats", err)

			ob, err := txoutbox.New(db, d, txoutbox.WithLogger(logger))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ob.Begin(context.Background(), nil)
			check("Begin", err)

			if c.driver == "postgres" {
				l, err := pgnotify.NewListener(c.dsn, pgnotify.WithLogger(logger), pgnotify.WithReconnect(10*time.Millisecond, 50*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				lctx, lcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				if err := l.Listen(lctx, notify.NewWakes()); err != nil {
					errs = append(errs, "Listen: "+err.Error())
				}
				<-lctx.Done()
				lcancel()
				n, _ := pgnotify.NewNotifier(db, pgnotify.WithLogger(logger))
				nctx, ncancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				n.Notify(nil)
				_ = n.Run(nctx)
				ncancel()
			}
			out := logs.String() + strings.Join(errs, "\n")
			if !strings.Contains(out, "127.0.0.1:1") && !strings.Contains(out, "connect") {
				t.Fatalf("expected the failures to be logged or returned; got:\n%s", out)
			}
			if strings.Contains(out, secret) {
				t.Fatalf("the password leaked:\n%s", out)
			}
		})
	}
}
