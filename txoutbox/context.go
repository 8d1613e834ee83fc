package txoutbox

import "context"

type ctxKey struct{}

// NewContext returns a copy of ctx carrying tx, for the package-level Add.
func NewContext(ctx context.Context, tx *Tx) context.Context {
	return context.WithValue(ctx, ctxKey{}, tx)
}

// FromContext returns the transaction carried by ctx, if any.
func FromContext(ctx context.Context) (*Tx, bool) {
	tx, ok := ctx.Value(ctxKey{}).(*Tx)
	return tx, ok && tx != nil
}

// Add adds ev to the transaction carried by ctx (see NewContext and
// Tx.Context) and returns its id. It returns ErrNoTransaction when ctx
// carries none; otherwise it behaves as Tx.Add, except that header injectors
// (WithHeaderInjector) see ctx rather than the Begin context, so a span
// started below Begin is the one recorded.
func Add(ctx context.Context, ev Event) (string, error) {
	tx, ok := FromContext(ctx)
	if !ok {
		return "", ErrNoTransaction
	}
	return tx.add(ctx, ev)
}
