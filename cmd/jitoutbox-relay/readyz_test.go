package main

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/jitoutbox/jitoutbox/internal/tcpproxy"
	"github.com/jitoutbox/jitoutbox/internal/testnats"
)

// TestReadyzRabbitMQ: with -broker rabbitmq, /readyz is 200 while the
// RabbitMQ server of $JITOUTBOX_AMQP_URL (behind a proxy) accepts
// connections, 503 naming the broker while the proxy refuses them, and 200
// again once it is back, all without an event published (the publisher
// connects only to publish).
func TestReadyzRabbitMQ(t *testing.T) {
	url := os.Getenv(envAMQPURL)
	if url == "" {
		t.Skip(envAMQPURL + " is not set")
	}
	proxy, proxied := tcpproxy.NewURL(t, url)
	r := startRun(t, "-dialect", "sqlite", "-dsn", sqliteOutbox(t), "-broker", "rabbitmq", "-amqp", proxied,
		"-exchange", testnats.RandomName("jitoutbox-readyz-"), "-poll", "100ms", "-metrics-addr", "127.0.0.1:0")
	base := "http://" + serverAddr(t, r.log)
	waitStatus(t, base+"/readyz", http.StatusOK, r.log)
	proxy.Refuse()
	proxy.Cut()
	if body := waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, r.log); !strings.Contains(body, "broker:") {
		t.Fatalf("/readyz with RabbitMQ unreachable does not name the broker: %q", body)
	}
	proxy.Resume()
	waitStatus(t, base+"/readyz", http.StatusOK, r.log)
	r.stop(t)
	if strings.Contains(r.log.String(), "guest:") {
		t.Fatal("the log holds the AMQP URL's password")
	}
}

// TestReadyzKafka: with -broker kafka, /readyz is 200 while the in-process
// Kafka cluster answers pings and 503 naming the broker once it is closed.
func TestReadyzKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	r := startRun(t, "-dialect", "sqlite", "-dsn", sqliteOutbox(t), "-broker", "kafka",
		"-kafka", strings.Join(c.ListenAddrs(), ","), "-poll", "100ms", "-metrics-addr", "127.0.0.1:0")
	base := "http://" + serverAddr(t, r.log)
	waitStatus(t, base+"/readyz", http.StatusOK, r.log)
	c.Close()
	if body := waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, r.log); !strings.Contains(body, "broker:") {
		t.Fatalf("/readyz with Kafka down does not name the broker: %q", body)
	}
	r.stop(t)
}
