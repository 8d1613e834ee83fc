package kafkapub_test

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/relay/kafkapub"
	"github.com/jitoutbox/jitoutbox/relay/natspub"
)

// TestHeaderNamesMatchNATS: a consumer reads the same header names from
// Kafka and from NATS.
func TestHeaderNamesMatchNATS(t *testing.T) {
	pairs := [][2]string{
		{kafkapub.HeaderEventID, natspub.HeaderEventID},
		{kafkapub.HeaderEventType, natspub.HeaderEventType},
		{kafkapub.HeaderAggregateType, natspub.HeaderAggregateType},
		{kafkapub.HeaderAggregateID, natspub.HeaderAggregateID},
		{kafkapub.HeaderSeq, natspub.HeaderSeq},
		{kafkapub.HeaderIdempotencyKey, natspub.HeaderIdempotencyKey},
		{kafkapub.HeaderCreatedAt, natspub.HeaderCreatedAt},
		{kafkapub.HeaderContentType, natspub.HeaderContentType},
		{kafkapub.HeaderDeadError, natspub.HeaderDeadError},
		{kafkapub.HeaderDeadAttempts, natspub.HeaderDeadAttempts},
		{kafkapub.HeaderDeadAt, natspub.HeaderDeadAt},
		{kafkapub.DebeziumHeaderID, natspub.DebeziumHeaderID},
		{kafkapub.DebeziumHeaderEventType, natspub.DebeziumHeaderEventType},
		{kafkapub.DebeziumTopicPrefix, natspub.DebeziumSubjectPrefix},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("kafkapub %q, natspub %q", p[0], p[1])
		}
	}
}
