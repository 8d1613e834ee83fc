package natspub_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jitoutbox/jitoutbox/internal/natsproc"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
	"github.com/jitoutbox/jitoutbox/relay"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// Environment knobs of TestBrokerDurabilitySIGKILL.
const (
	// envDurabilityMsgs sets the burst size (default 2000; the figures in
	// docs/durability.md use 20000).
	envDurabilityMsgs = "JITOUTBOX_DURABILITY_MSGS"
	// envDurabilityStrace, when "1", attaches strace to the server during the
	// burst and reports how many fsync-family calls it made.
	envDurabilityStrace = "JITOUTBOX_DURABILITY_STRACE"
)

// durabilityCase is one server flavour.
type durabilityCase struct {
	name       string
	module     bool // the nats-server/v2 module build instead of the system binary
	syncAlways bool
}

// TestBrokerDurabilitySIGKILL publishes a burst through natspub.JetStream,
// every message acknowledged, SIGKILLs the nats-server child process right
// after the last acknowledgement, restarts it on the same store directory
// and counts what a consumer finds. A SIGKILL ends the process but keeps the
// OS page cache, so this shows loss from data the server had not yet handed
// to the kernel when it acked; it cannot show loss on an OS crash or power
// cut (see docs/durability.md; the strace knob shows whether the server
// called fsync before acking at all).
func TestBrokerDurabilitySIGKILL(t *testing.T) {
	n := 2000
	if v := os.Getenv(envDurabilityMsgs); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", envDurabilityMsgs, v)
		}
	}
	cases := []durabilityCase{
		{name: "system-default"},
		{name: "module-default", module: true},
		{name: "module-sync-always", module: true, syncAlways: true},
	}
	var moduleBin string
	buildDir := t.TempDir() // outlives the subtests
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := natsproc.FindSystem()
			if c.module {
				if testing.Short() {
					t.Skip("-short: not building nats-server from the module")
				}
				if moduleBin == "" {
					bin, err := natsproc.Build(ctxTimeout(t, 5*time.Minute), buildDir)
					if err != nil {
						t.Fatal(err)
					}
					moduleBin = bin
				}
				bin = moduleBin
			} else if bin == "" {
				t.Skip("no nats-server binary installed (looked on $PATH and in /usr/sbin, /usr/local/bin, /usr/bin)")
			}
			runDurability(t, bin, c, n)
		})
	}
}

func runDurability(t *testing.T, bin string, c durabilityCase, n int) {
	ctx := ctxTimeout(t, 5*time.Minute)
	version, err := natsproc.Version(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	srv := natsproc.Start(t, bin, natsproc.Config{StoreDir: t.TempDir(), SyncAlways: c.syncAlways})

	nc, err := nats.Connect(srv.URL, nats.NoReconnect(), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024), jetstream.WithPublishAsyncTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	prefix := testnats.RandomName("dur_")
	stream := strings.ToUpper(testnats.RandomName("DUR_"))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: stream, Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage, Replicas: 1,
	}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	p := newJetStreamPub(t, js, natspub.WithSubjectPrefix(prefix), natspub.WithExpectStream(stream),
		natspub.WithAckTimeout(30*time.Second))

	var trace *strace
	if os.Getenv(envDurabilityStrace) == "1" {
		trace = startStrace(t, srv.Pid())
	}

	const batchSize = 500
	msgs := durabilityMessages(n)
	acked := make(map[string]bool, n)
	start := time.Now()
	for off := 0; off < n; off += batchSize {
		batch := msgs[off:min(off+batchSize, n)]
		errs := publish(ctx, p, batch)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("publish %s: %v", batch[i].ID, err)
			}
			acked[batch[i].ID] = true
		}
	}
	burst := time.Since(start)
	if err := srv.Kill(); err != nil { // at once after the last acknowledgement
		t.Fatal(err)
	}
	nc.Close()
	fsyncs := "not traced"
	if trace != nil {
		fsyncs = trace.wait(t)
	}

	srv.Restart(t)
	present, extra := consumeIDs(t, ctx, srv.URL, stream, acked)
	missing := len(acked) - present
	t.Logf("DURABILITY %s (%s, sync_interval always=%v): acked=%d present=%d missing=%d unexpected=%d burst=%v (%.0f msg/s) fsync-family calls during burst: %s",
		c.name, version, c.syncAlways, len(acked), present, missing, extra, burst.Round(time.Millisecond),
		float64(n)/burst.Seconds(), fsyncs)

	if len(acked) != n {
		t.Fatalf("acked %d of %d", len(acked), n)
	}
	if extra != 0 {
		t.Errorf("%d messages in the stream were never published", extra)
	}
	if c.syncAlways && missing != 0 {
		// fsync before every acknowledgement: nothing acked may be lost.
		t.Errorf("sync_interval always: %d acknowledged messages missing after SIGKILL", missing)
	}
}

// durabilityMessages returns n messages of distinct aggregates with ~100
// byte payloads.
func durabilityMessages(n int) []relay.Message {
	run := testnats.RandomName("")
	pad := strings.Repeat("x", 80)
	out := make([]relay.Message, n)
	for i := range out {
		out[i] = relay.Message{
			ID:            fmt.Sprintf("dur-%s-%06d", run, i),
			AggregateType: "order",
			AggregateID:   strconv.Itoa(i),
			EventType:     "order.paid",
			Payload:       fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, pad),
			ContentType:   "application/json",
			CreatedAt:     time.Now(),
			Attempt:       1,
		}
	}
	return out
}

// consumeIDs reads the whole stream with an ordered consumer and returns how
// many acked ids it found and how many messages carried another id.
func consumeIDs(t *testing.T, ctx context.Context, url, stream string, acked map[string]bool) (present, extra int) {
	t.Helper()
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("connect after restart: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := int(info.State.Msgs)
	if total == 0 {
		return 0, 0
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	seen := make(map[string]bool, total)
	read := 0
	for read < total {
		b, err := cons.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		got := 0
		for m := range b.Messages() {
			got++
			id := m.Headers().Get(natspub.HeaderEventID)
			switch {
			case seen[id]:
				// A redelivery of the ordered consumer; not a new message.
			case acked[id]:
				present++
			default:
				extra++
			}
			seen[id] = true
		}
		if err := b.Error(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		if got == 0 {
			t.Fatalf("read %d of the %d messages the stream reports", read, total)
		}
		read += got
	}
	return present, extra
}

// strace counts the fsync-family system calls of a process until it exits.
type strace struct {
	cmd *exec.Cmd
	out string
}

func startStrace(t *testing.T, pid int) *strace {
	t.Helper()
	bin, err := exec.LookPath("strace")
	if err != nil {
		t.Skipf("%s=1 but strace is not installed", envDurabilityStrace)
	}
	out := filepath.Join(t.TempDir(), "strace.txt")
	cmd := exec.Command(bin, "-f", "-c", "-e", "trace=fsync,fdatasync,sync_file_range,msync", "-o", out, "-p", strconv.Itoa(pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if err := cmd.Start(); err != nil {
		t.Fatalf("strace: %v", err)
	}
	// strace prints nothing when attached; give it a moment to attach to all
	// threads (this only affects the count shown, not correctness).
	time.Sleep(500 * time.Millisecond)
	return &strace{cmd: cmd, out: out}
}

// wait waits for strace to end (its tracee was killed) and summarises.
func (s *strace) wait(t *testing.T) string {
	t.Helper()
	_ = s.cmd.Wait()
	data, err := os.ReadFile(s.out)
	if err != nil {
		return "strace output unreadable: " + err.Error()
	}
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// "% time seconds usecs/call calls errors syscall" rows.
		if len(f) >= 5 && (strings.Contains(f[len(f)-1], "sync")) {
			parts = append(parts, f[len(f)-1]+"="+f[3])
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}
