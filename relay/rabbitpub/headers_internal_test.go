package rabbitpub

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestPublishingSeqHeader: the outbox seq travels as decimal text in
// Jitoutbox-Seq (a string, like every jitoutbox header), and a message
// with seq 0 carries no such header.
func TestPublishingSeqHeader(t *testing.T) {
	m := relay.Message{ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Seq: 9007199254740993,
		AggregateType: "order", AggregateID: "o-42", EventType: "order.placed"}
	p, err := newPublishing(&m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := p.Headers[HeaderSeq].(string); !ok || got != "9007199254740993" {
		t.Errorf("%s = %#v, want \"9007199254740993\"", HeaderSeq, p.Headers[HeaderSeq])
	}
	m.Seq = 0
	if p, err = newPublishing(&m, nil); err != nil {
		t.Fatal(err)
	}
	if v, ok := p.Headers[HeaderSeq]; ok {
		t.Errorf("header %s = %#v on a message with seq 0", HeaderSeq, v)
	}
}
