package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/jitoutbox/jitoutbox/relay"
)

// Least settings at which acks=all keeps an acknowledged record through the
// loss of a broker while writes go on.
const (
	MinSafeReplicationFactor = 3
	MinSafeInsyncReplicas    = 2
)

// Preflight implements relay.Preflighter. For each topic named with
// WithPreflightTopics it describes the topic with the admin API and logs a
// warning to info.Logger when its replication factor is below
// [MinSafeReplicationFactor], its min.insync.replicas below
// [MinSafeInsyncReplicas], or it does not exist and the client does not
// create topics. With acks=all, an acknowledgement means every in-sync
// replica has the record; with min.insync.replicas 1 the in-sync set can be
// the leader alone, whose loss then loses acknowledged records.
//
// Without WithPreflightTopics no topic is known (the routers name a topic
// per aggregate type) and the check is skipped. It returns the error of the
// admin requests, if any (the relay logs it); problems are warnings only.
func (p *Publisher) Preflight(ctx context.Context, info relay.PreflightInfo) error {
	log := info.Logger
	if log == nil {
		log = slog.Default()
	}
	topics := slices.Compact(slices.Sorted(slices.Values(p.opts.preflightTopics)))
	if len(topics) == 0 {
		log.DebugContext(ctx, "jitoutbox kafkapub: no topic to check at start-up (see kafkapub.WithPreflightTopics)")
		return nil
	}
	// Not closed: closing a kadm.Client closes the publisher's client.
	adm := kadm.NewClient(p.cl)
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("kafkapub: preflight: describe topics: %w", err)
	}
	var found []string
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			if !p.autoCreate {
				log.WarnContext(ctx, "jitoutbox kafkapub: topic not found: publishes to it will fail until it is created", "topic", t)
			}
		case d.Err != nil:
			return fmt.Errorf("kafkapub: preflight: describe topic %q: %w", t, d.Err)
		default:
			found = append(found, t)
			if rf := replicationFactor(d); rf < MinSafeReplicationFactor {
				log.WarnContext(ctx, "jitoutbox kafkapub: topic cannot guarantee at-least-once delivery",
					"topic", t, "problem", fmt.Sprintf("replication factor %d < %d: losing a broker can lose acknowledged records, or stop writes; recreate the topic with replication factor %d", rf, MinSafeReplicationFactor, MinSafeReplicationFactor))
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, found...)
	if err != nil {
		return fmt.Errorf("kafkapub: preflight: describe topic configs: %w", err)
	}
	for _, rc := range cfgs {
		if rc.Err != nil {
			return fmt.Errorf("kafkapub: preflight: describe configs of topic %q: %w", rc.Name, rc.Err)
		}
		isr := minInsync(rc.Configs)
		if isr < MinSafeInsyncReplicas {
			log.WarnContext(ctx, "jitoutbox kafkapub: topic cannot guarantee at-least-once delivery",
				"topic", rc.Name, "problem", fmt.Sprintf("min.insync.replicas %d < %d: with acks=all the leader alone may acknowledge a record, which its loss then loses; set min.insync.replicas=%d on the topic", isr, MinSafeInsyncReplicas, MinSafeInsyncReplicas))
		}
	}
	return nil
}

// replicationFactor is the least replica count of the topic's partitions.
func replicationFactor(d kadm.TopicDetail) int {
	rf := -1
	for _, pd := range d.Partitions {
		if rf < 0 || len(pd.Replicas) < rf {
			rf = len(pd.Replicas)
		}
	}
	return max(rf, 0)
}

// minInsync is the topic's min.insync.replicas: 1, Kafka's default, when
// the broker does not report it.
func minInsync(cfgs []kadm.Config) int {
	for _, c := range cfgs {
		if c.Key == "min.insync.replicas" && c.Value != nil {
			if n, err := strconv.Atoi(*c.Value); err == nil {
				return n
			}
		}
	}
	return 1
}

var _ relay.Preflighter = (*Publisher)(nil)
