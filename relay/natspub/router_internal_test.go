package natspub

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/relay"
)

// TestSubjectCache: with the default router, messages of one (aggregate
// type, event type) pair share one routing and get the router's subject;
// a custom router is asked for every message.
func TestSubjectCache(t *testing.T) {
	msgs := []relay.Message{
		{ID: "1", AggregateType: "order", AggregateID: "o-1", EventType: "placed"},
		{ID: "2", AggregateType: "order", AggregateID: "o-2", EventType: "paid"},
		{ID: "3", AggregateType: "order", AggregateID: "o-3", EventType: "placed"},
		{ID: "4", AggregateType: "bad type", AggregateID: "o-4", EventType: "placed"},
	}
	def, err := buildOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := subjectCache{opts: def}
	for i := range msgs {
		got, err := c.route(&msgs[i])
		want, werr := route(def.router, &msgs[i])
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("message %d: cached %q, %v; router %q, %v", i, got, err, want, werr)
		}
	}
	if len(c.seen) != 3 {
		t.Errorf("cache holds %d pairs, want 3", len(c.seen))
	}

	calls := 0
	custom, err := buildOptions([]Option{WithRouter(func(m relay.Message) (string, error) {
		calls++
		return "x." + m.AggregateID, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	c = subjectCache{opts: custom}
	for i := range msgs {
		if got, err := c.route(&msgs[i]); err != nil || got != "x."+msgs[i].AggregateID {
			t.Errorf("custom router, message %d: %q, %v", i, got, err)
		}
	}
	if calls != len(msgs) {
		t.Errorf("custom router called %d times, want %d", calls, len(msgs))
	}
}

// BenchmarkRouteBatch routes a 500-message batch over 5 (aggregate type,
// event type) pairs with the default router, through the per-call cache
// and without it.
func BenchmarkRouteBatch(b *testing.B) {
	opts, err := buildOptions(nil)
	if err != nil {
		b.Fatal(err)
	}
	types := []string{"placed", "paid", "packed", "shipped", "delivered"}
	batch := make([]relay.Message, 500)
	for i := range batch {
		batch[i] = relay.Message{AggregateType: "order", EventType: "order." + types[i%len(types)]}
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := subjectCache{opts: opts}
			for i := range batch {
				if _, err := c.route(&batch[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range batch {
				if _, err := route(opts.router, &batch[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
