package kafkapub

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestRecordSeqHeader: the outbox seq travels as decimal text in
// Jitoutbox-Seq, and a message with seq 0 carries no such header.
func TestRecordSeqHeader(t *testing.T) {
	m := relay.Message{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Seq: 9007199254740993,
		AggregateType: "order", AggregateID: "o-42", EventType: "order.placed"}
	r := newRecord("t", &m, &options{debezium: true})
	if got := Header(r, HeaderSeq); got != "9007199254740993" {
		t.Errorf("%s = %q, want 9007199254740993", HeaderSeq, got)
	}
	m.Seq = 0
	r = newRecord("t", &m, &options{})
	for _, h := range r.Headers {
		if h.Key == HeaderSeq {
			t.Errorf("header %s = %q on a message with seq 0", HeaderSeq, h.Value)
		}
	}
}
