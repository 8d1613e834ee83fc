package txoutbox

import (
	"context"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// injectHeaders runs the header injectors on ev's (already copied) headers
// and validates what they leave there.
func (o *Outbox) injectHeaders(ctx context.Context, ev *dialects.Event) *ValidationError {
	if len(o.cfg.injectors) == 0 {
		return nil
	}
	if ev.Headers == nil {
		ev.Headers = make(map[string]string)
	}
	for _, inject := range o.cfg.injectors {
		inject(ctx, ev.Headers)
	}
	for k, v := range ev.Headers {
		if err := checkHeader(k, v); err != nil {
			err.Reason += " (set by a header injector)"
			return err
		}
	}
	if err := checkHeaderSize(ev.Headers); err != nil {
		err.Reason += " (with the headers set by header injectors)"
		return err
	}
	if len(ev.Headers) == 0 {
		ev.Headers = nil
	}
	return nil
}
