package txoutbox

import "context"

type ctxKey struct{}

// NewContext returns a copy of ctx carrying tx, for the package-level Add.
func NewContext(ctx context.Context, tx *Tx) context.Context {
	return context.WithValue(ctx, ctxKey{}, tx)
}

// FromContext returns the transaction carried by ctx, if any.
// A context from Capture.Context carries no *Tx: FromContext reports false,
// while the package-level Add registers with the Capture.
func FromContext(ctx context.Context) (*Tx, bool) {
	tx, ok := ctx.Value(ctxKey{}).(*Tx)
	return tx, ok && tx != nil
}

// Add adds ev to the transaction carried by ctx (see NewContext,
// Tx.Context and Capture.Context: begun, adopted or captured alike) and
// returns its id. It returns ErrNoTransaction when ctx carries none;
// otherwise it behaves as Tx.Add (Capture.Add), except that header injectors
// (WithHeaderInjector) see ctx rather than the Begin context, so a span
// started below Begin is the one recorded.
func Add(ctx context.Context, ev Event) (string, error) {
	a, ok := ctx.Value(ctxKey{}).(adder)
	if !ok || a == nil || a == (*Tx)(nil) || a == (*Capture)(nil) {
		return "", ErrNoTransaction
	}
	return a.add(ctx, ev)
}
