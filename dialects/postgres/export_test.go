package postgres

import (
	"context"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// MemberNamespace exposes the relay sessions' advisory lock namespace of
// d's table to the package's external tests (KillSession finds a session's
// backend by its member lock).
func MemberNamespace(ctx context.Context, d *Dialect, q dialects.Querier) (int32, error) {
	_, member, err := d.lockNamespaces(ctx, q)
	return member, err
}
