package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Console settings.
const (
	// consoleTokenEnv is the environment variable of -token, read when
	// neither -token nor -token-file is given (envName("serve", "token")).
	consoleTokenEnv = "JITOUTBOX_CONSOLE_TOKEN"
	// minTokenLen is the shortest token accepted: a token guards every
	// action on the outbox from the network.
	minTokenLen = 16
	// shutdownGrace bounds how long a stopping console waits for requests
	// in flight.
	shutdownGrace = 5 * time.Second
	// maxConsoleLimit is the most rows -limit lets a list page show.
	maxConsoleLimit = 1000
)

// errNeedToken is returned when the console would listen beyond loopback
// without a token.
var errNeedToken = errors.New("a non-loopback -addr needs a token")

// consoleOptions configures the web console.
type consoleOptions struct {
	// addr is the listen address (default 127.0.0.1:8080).
	addr string
	// token, when set, is required on every request; it is required when
	// addr is not a loopback address.
	token string
	// readOnly hides and refuses the actions.
	readOnly bool
	// refresh is the pages' refresh period (default 5s; 0 disables it).
	refresh time.Duration
	// limit is the most rows a list shows (default 50).
	limit int
	// retention is the relays' Retention: the overview shows the
	// published rows kept past it (default relay.DefaultRetention; 0: not
	// shown).
	retention time.Duration
	// cookieSecure makes the session cookie Secure on every answer; it
	// is anyway when the console serves TLS or a proxy says https.
	cookieSecure bool
}

// serveFlags registers the serve command: outboxctl serve [-addr A]
// [-token-file F | -token T] [-read-only] [-refresh D] [-limit N]
// [-retention D] [-cookie-secure].
func serveFlags(fs *flag.FlagSet) runner {
	o := consoleOptions{}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address; a non-loopback address needs a token (-token-file or "+consoleTokenEnv+")")
	fs.StringVar(&o.token, "token", "", "access token required on every request; it shows in ps: prefer -token-file or "+consoleTokenEnv)
	tokenFile := fs.String("token-file", "", "read the access token from this file (surrounding white space ignored)")
	fs.BoolVar(&o.cookieSecure, "cookie-secure", false, "always mark the session cookie Secure (it is when serving TLS or when a proxy says https)")
	fs.BoolVar(&o.readOnly, "read-only", false, "hide and refuse requeue and skip")
	fs.DurationVar(&o.refresh, "refresh", 5*time.Second, "page refresh period (0: never)")
	fs.IntVar(&o.limit, "limit", 50, fmt.Sprintf("most rows in a list (1 to %d)", maxConsoleLimit))
	retention := retentionFlag(fs)
	return runFunc(func(ctx context.Context, e *env, args []string) error {
		if err := noArgs(args); err != nil {
			return err
		}
		o.retention = *retention
		if err := o.readToken(e, *tokenFile); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		c, err := newConsole(e, o)
		if err != nil {
			return err
		}
		if err := c.discover(ctx); err != nil {
			return err
		}
		return c.serve(ctx)
	})
}

// readToken sets o.token from -token-file when it is given, and warns
// about a token given on the command line (every user of the machine sees
// it in ps) or in a file that others may read. -token and -token-file come
// from the command line or, without either there, from
// JITOUTBOX_CONSOLE_TOKEN and JITOUTBOX_CONSOLE_TOKEN_FILE; both at the
// same level is an error.
func (o *consoleOptions) readToken(e *env, file string) error {
	switch {
	case o.token != "" && file != "":
		return fmt.Errorf("%w: give -token or -token-file (or $%s or $%s_FILE), not both", errUsage, consoleTokenEnv, consoleTokenEnv)
	case o.token != "":
		if e.cmdline["token"] {
			e.logger().Warn("console: -token shows in the process list; prefer -token-file or " + consoleTokenEnv)
		}
		return nil
	case file != "":
		fi, err := os.Stat(file)
		if err != nil {
			return fmt.Errorf("%w: -token-file: %w", errUsage, err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("%w: -token-file: %w", errUsage, err)
		}
		if o.token = strings.TrimSpace(string(b)); o.token == "" {
			return fmt.Errorf("%w: -token-file %s is empty", errUsage, file)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			e.logger().Warn("console: the token file can be read by other users: chmod 600 it", "file", file)
		}
	}
	return nil
}

// validate checks the options before anything listens.
func (o *consoleOptions) validate() error {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return fmt.Errorf("%w: -addr %q: %w", errUsage, o.addr, err)
	}
	if o.token != "" && len(o.token) < minTokenLen {
		return fmt.Errorf("%w: the console token must have at least %d characters", errUsage, minTokenLen)
	}
	if o.token == "" && !isLoopback(host) {
		return fmt.Errorf("%w: %w: pass -token-file or set %s (or listen on 127.0.0.1)", errUsage, errNeedToken, consoleTokenEnv)
	}
	if o.limit <= 0 || o.limit > maxConsoleLimit {
		return fmt.Errorf("%w: -limit must be between 1 and %d (got %d)", errUsage, maxConsoleLimit, o.limit)
	}
	if o.refresh < 0 {
		return fmt.Errorf("%w: -refresh must not be negative", errUsage)
	}
	return checkRetention(o.retention)
}

// isLoopback reports whether host names only the local machine: a loopback
// IP or "localhost". An empty host (every interface) is not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// serve listens on the console's address until ctx ends, then shuts the
// server down, waiting up to shutdownGrace for requests in flight.
func (c *console) serve(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", c.opts.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return c.serveOn(ctx, ln)
}

// serveOn serves on ln (which it closes) until ctx ends.
func (c *console) serveOn(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           c.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(c.log.Handler(), slog.LevelWarn),
	}
	auth := "no token (loopback only)"
	if c.opts.token != "" {
		auth = "token required"
	}
	mode := "read-write"
	if c.opts.readOnly {
		mode = "read-only"
	}
	table := []any{"table", c.d.Table()}
	if c.tables != nil {
		table = []any{"tables", c.tables.pattern}
	}
	c.log.Info("outboxctl console listening", "url", "http://"+ln.Addr().String()+"/", "dialect", c.d.Name(),
		slog.Group("", table...), "auth", auth, "mode", mode)

	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("serve: shut down: %w", err)
	}
	c.log.Info("outboxctl console stopped")
	return nil
}
