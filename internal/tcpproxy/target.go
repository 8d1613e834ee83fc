package tcpproxy

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// defaultPorts are the ports of the schemes whose URLs may omit them.
var defaultPorts = map[string]string{
	"amqp":       "5672",
	"amqps":      "5671",
	"nats":       "4222",
	"tls":        "4222",
	"postgres":   "5432",
	"postgresql": "5432",
	"mysql":      "3306",
	"kafka":      "9092",
	"http":       "80",
	"https":      "443",
}

// parseTarget finds the host:port that raw names and returns it with a
// function that rewrites raw to name another address instead.
func parseTarget(raw string) (target string, rewrite func(addr string) string, err error) {
	switch {
	case strings.Contains(raw, "://"):
		return parseURL(raw)
	case strings.Contains(raw, "tcp("):
		return parseMySQLDSN(raw)
	default:
		if strings.Contains(raw, ",") {
			return "", nil, fmt.Errorf("%q lists several servers: make one proxy per server", raw)
		}
		if _, _, err := net.SplitHostPort(raw); err != nil {
			return "", nil, fmt.Errorf("%q is neither a URL, a tcp(host:port) DSN nor host:port: %w", raw, err)
		}
		return raw, func(addr string) string { return addr }, nil
	}
}

func parseURL(raw string) (string, func(string) string, error) {
	if strings.Count(raw, "://") > 1 {
		return "", nil, fmt.Errorf("the URL lists several servers: make one proxy per server")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Not echoed: a URL may carry a password.
		return "", nil, fmt.Errorf("parse the URL: %w", urlReason(err))
	}
	if strings.Contains(u.Host, ",") {
		return "", nil, fmt.Errorf("the URL lists several servers: make one proxy per server")
	}
	if u.Hostname() == "" {
		return "", nil, fmt.Errorf("the URL names no host (a unix socket cannot be proxied)")
	}
	port := u.Port()
	if port == "" {
		port = defaultPorts[strings.ToLower(u.Scheme)]
		if port == "" {
			return "", nil, fmt.Errorf("the URL has no port and scheme %q has no known default", u.Scheme)
		}
	}
	target := net.JoinHostPort(u.Hostname(), port)
	return target, func(addr string) string {
		v := *u
		v.Host = addr
		return v.String()
	}, nil
}

// parseMySQLDSN handles go-sql-driver's "user:pass@tcp(host:port)/db?opts".
func parseMySQLDSN(raw string) (string, func(string) string, error) {
	i := strings.Index(raw, "tcp(")
	j := strings.Index(raw[i:], ")")
	if j < 0 {
		return "", nil, fmt.Errorf("the DSN's tcp( has no closing parenthesis")
	}
	inner := raw[i+len("tcp(") : i+j]
	if inner == "" {
		inner = "127.0.0.1:3306"
	}
	if _, _, err := net.SplitHostPort(inner); err != nil {
		inner = net.JoinHostPort(inner, "3306")
	}
	return inner, func(addr string) string {
		return raw[:i] + "tcp(" + addr + raw[i+j:]
	}, nil
}

// urlReason drops the URL that url.Parse's error repeats (it may carry a
// password), keeping the reason.
func urlReason(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
