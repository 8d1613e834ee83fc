package testnats

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
)

// globalAccount is the account of clients on a server without accounts.
const globalAccount = server.DEFAULT_GLOBAL_ACCOUNT

// pollEvery is how often the cluster's waits look at the servers.
const pollEvery = 20 * time.Millisecond

// Cluster is n embedded nats-server instances clustered on 127.0.0.1 with
// JetStream (file storage in t.TempDir()), owned by one test. Servers can be
// killed and restarted on the same ports and store directories.
//
// Every route between two servers runs through a tcpproxy of its own
// (one per ordered pair), so that Kill can cut a server off the cluster
// before shutting it down: its peers see it vanish as after a crash (no
// leader hand-over, a new election after the raft election timeout, 4-9 s
// in nats-server), not a clean shutdown that hands its leaderships over.
type Cluster struct {
	t    testing.TB
	name string

	mu      sync.Mutex
	nodes   []*clusterNode
	routeTo [][]*tcpproxy.Proxy // routeTo[i][j]: the routes server i dials to server j
}

// clusterNode is one server's fixed options and current instance.
type clusterNode struct {
	opts *server.Options
	url  string
	srv  *server.Server // nil while killed
}

// JSCluster starts n (at least 1) servers with JetStream in one cluster
// (cluster name "jitoutbox-<random>", server names "n0".."n<n-1>"; a single
// server runs standalone, as nats-server wants a route to cluster) and
// waits until they are ready (WaitReady). They are shut down when the test
// ends.
func JSCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("testnats: JSCluster needs at least one server, got %d", n)
	}
	c := &Cluster{t: t, name: RandomName("jitoutbox-"), nodes: make([]*clusterNode, n), routeTo: make([][]*tcpproxy.Proxy, n)}
	clusterPorts := make([]int, n)
	for i := range clusterPorts {
		clusterPorts[i] = freePort(t)
	}
	// Proxies first: their cleanups then run after the servers' shutdown.
	for i := range n {
		c.routeTo[i] = make([]*tcpproxy.Proxy, n)
		for j := range n {
			if i != j {
				c.routeTo[i][j] = tcpproxy.New(t, fmt.Sprintf("127.0.0.1:%d", clusterPorts[j]))
			}
		}
	}
	for i := range n {
		// Gossip must not make a server dial another one around the
		// proxies: each advertises an address that refuses every
		// connection, so only the configured routes (through routeTo)
		// connect.
		nowhere := tcpproxy.New(t, fmt.Sprintf("127.0.0.1:%d", clusterPorts[i]))
		nowhere.Refuse()
		var routes []*url.URL
		for j := range n {
			if i != j {
				routes = append(routes, &url.URL{Scheme: "nats-route", Host: c.routeTo[i][j].Addr()})
			}
		}
		o := &server.Options{
			ServerName:         fmt.Sprintf("n%d", i),
			Host:               "127.0.0.1",
			Port:               server.RANDOM_PORT,
			JetStream:          true,
			StoreDir:           t.TempDir(),
			JetStreamMaxMemory: 256 << 20,
			JetStreamMaxStore:  4 << 30,
			NoLog:              true,
			NoSigs:             true,
			Cluster: server.ClusterOpts{
				Name:      c.name,
				Host:      "127.0.0.1",
				Port:      clusterPorts[i],
				Advertise: nowhere.Addr(),
			},
			Routes: routes,
		}
		if n == 1 {
			// nats-server refuses a JetStream cluster with no route: one
			// server runs standalone.
			o.Cluster = server.ClusterOpts{}
			o.Routes = nil
		}
		c.nodes[i] = &clusterNode{opts: o}
	}
	t.Cleanup(c.shutdownAll)
	for i := range n {
		if err := c.start(i); err != nil {
			t.Fatalf("testnats: %v", err)
		}
		node := c.nodes[i]
		addr, ok := node.srv.Addr().(*net.TCPAddr)
		if !ok {
			t.Fatalf("testnats: unexpected listener address %v", node.srv.Addr())
		}
		node.opts.Port = addr.Port // Restart reuses the port.
		node.url = fmt.Sprintf("nats://127.0.0.1:%d", addr.Port)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("testnats: cluster of %d: %v", n, err)
	}
	return c
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testnats: find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start starts server i with its options.
func (c *Cluster) start(i int) error {
	node := c.nodes[i]
	o := *node.opts
	s, err := server.NewServer(&o)
	if err != nil {
		return fmt.Errorf("server %d: new server: %w", i, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return fmt.Errorf("server %d: not ready for connections", i)
	}
	c.mu.Lock()
	node.srv = s
	c.mu.Unlock()
	return nil
}

// N returns the number of servers (running or killed).
func (c *Cluster) N() int { return len(c.nodes) }

// Name returns the cluster's name.
func (c *Cluster) Name() string { return c.name }

// URLs returns every server's client URL ("nats://127.0.0.1:PORT"), in
// server order. A server keeps its URL across Kill and Restart.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.url
	}
	return out
}

// URL returns the client URLs joined by commas, as nats.Connect takes them.
func (c *Cluster) URL() string { return strings.Join(c.URLs(), ",") }

// Server returns server i's current instance, nil while it is killed.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].srv
}

// Running reports whether server i is running.
func (c *Cluster) Running(i int) bool { return c.Server(i) != nil }

// running returns the running servers by index.
func (c *Cluster) running() map[int]*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]*server.Server, len(c.nodes))
	for i, n := range c.nodes {
		if n.srv != nil {
			out[i] = n.srv
		}
	}
	return out
}

// Kill stops server i abruptly, as a crash would: its routes to the other
// servers are cut (new ones refused) first, so it can neither hand its
// leaderships over nor tell its peers it is leaving, then it shuts down
// (closing its clients' connections) and its routes are let through again.
// Messages it had written to its store are kept on disk, as the page cache
// keeps them after a SIGKILL. Killing a killed server does nothing.
func (c *Cluster) Kill(i int) {
	s := c.Server(i)
	if s == nil {
		return
	}
	isolate := c.routesOf(i)
	for _, p := range isolate {
		p.Refuse()
		p.Cut()
	}
	s.Shutdown()
	s.WaitForShutdown()
	c.mu.Lock()
	c.nodes[i].srv = nil
	c.mu.Unlock()
	for _, p := range isolate {
		p.Resume()
	}
}

// Stop shuts server i down cleanly (it hands its leaderships over first).
// Stopping a stopped server does nothing.
func (c *Cluster) Stop(i int) {
	s := c.Server(i)
	if s == nil {
		return
	}
	s.Shutdown()
	s.WaitForShutdown()
	c.mu.Lock()
	c.nodes[i].srv = nil
	c.mu.Unlock()
}

// routesOf returns the proxies of every route to or from server i.
func (c *Cluster) routesOf(i int) []*tcpproxy.Proxy {
	var out []*tcpproxy.Proxy
	for j := range c.nodes {
		if j != i {
			out = append(out, c.routeTo[i][j], c.routeTo[j][i])
		}
	}
	return out
}

// Restart starts server i again on the same client and cluster ports with
// the same store directory, killing it first if it is running. It does not
// wait for the server to catch up with the cluster (see WaitReady). It
// fails the test if the server cannot start, so call it from the test's
// goroutine.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.Kill(i)
	if err := c.start(i); err != nil {
		c.t.Fatalf("testnats: restart: %v", err)
	}
}

// StreamLeader waits until a running server leads stream (of the global
// account) and returns its index. It returns ctx's error, wrapped, if no
// server leads it before ctx ends (the leader was killed and no election
// has finished, or the stream does not exist).
func (c *Cluster) StreamLeader(ctx context.Context, stream string) (int, error) {
	return poll(ctx, func() (int, bool) {
		for i, s := range c.running() {
			if s.JetStreamIsStreamLeader(globalAccount, stream) || len(c.nodes) == 1 && hasStream(s, stream) {
				return i, true
			}
		}
		return -1, false
	}, func() string { return fmt.Sprintf("no running server leads stream %q", stream) })
}

// hasStream reports whether server s stores stream (of the global account).
func hasStream(s *server.Server, stream string) bool {
	_, ok := streamMsgs(s, stream)
	return ok
}

// streamMsgs returns how many messages server s holds for stream (of the
// global account), and false if it holds no replica of it.
func streamMsgs(s *server.Server, stream string) (uint64, bool) {
	info, err := s.Jsz(&server.JSzOptions{Account: globalAccount, Accounts: true, Streams: true})
	if err != nil {
		return 0, false
	}
	for _, acc := range info.AccountDetails {
		for _, sd := range acc.Streams {
			if sd.Name == stream {
				return sd.State.Msgs, true
			}
		}
	}
	return 0, false
}

// StreamMsgs returns how many messages server i's replica of stream holds
// (its own store, which lags the leader while it catches up), or -1 when
// server i is killed or holds no replica of stream.
func (c *Cluster) StreamMsgs(i int, stream string) int {
	s := c.Server(i)
	if s == nil {
		return -1
	}
	n, ok := streamMsgs(s, stream)
	if !ok {
		return -1
	}
	return int(n)
}

// WaitReady waits until the running servers are routed to each other,
// one of them is the JetStream meta leader, and every one of them is
// current with the meta group.
func (c *Cluster) WaitReady(ctx context.Context) error {
	var why string
	_, err := poll(ctx, func() (int, bool) {
		why = c.notReady()
		return 0, why == ""
	}, func() string { return why })
	return err
}

// notReady says why the cluster is not ready, "" when it is.
func (c *Cluster) notReady() string {
	run := c.running()
	if len(run) == 0 {
		return "no server is running"
	}
	if len(c.nodes) == 1 {
		if !run[0].JetStreamEnabled() {
			return "JetStream is not enabled yet"
		}
		return ""
	}
	leaders := 0
	for i, s := range run {
		rz, err := s.Routez(nil)
		if err != nil {
			return fmt.Sprintf("server %d: routez: %v", i, err)
		}
		peers := make(map[string]bool)
		for _, r := range rz.Routes {
			peers[r.RemoteName] = true
		}
		for j := range run {
			if j != i && !peers[fmt.Sprintf("n%d", j)] {
				return fmt.Sprintf("server %d has no route to server %d", i, j)
			}
		}
		if s.JetStreamIsLeader() {
			leaders++
		}
		if !s.JetStreamIsCurrent() {
			return fmt.Sprintf("server %d is not current with the JetStream meta group", i)
		}
	}
	if leaders != 1 {
		return fmt.Sprintf("%d running servers are JetStream meta leader, want 1", leaders)
	}
	return ""
}

// poll calls try until it succeeds or ctx ends; why explains the last
// failure in the error.
func poll(ctx context.Context, try func() (int, bool), why func() string) (int, error) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if v, ok := try(); ok {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("testnats: %s: %w", why(), ctx.Err())
		case <-tick.C:
		}
	}
}

// shutdownAll shuts every running server down (the test's cleanup).
func (c *Cluster) shutdownAll() {
	for i := range c.nodes {
		c.Stop(i)
	}
}
