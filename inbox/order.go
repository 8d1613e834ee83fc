package inbox

import (
	"context"
	"database/sql"
	"fmt"
)

// checkOrder compares ev's seq with the last applied for its aggregate,
// whose row it locks until tx ends, and advances it when ev is newer. For
// an older ev it asks Config.OnOutOfOrder; with Reject the error is an
// *OutOfOrderError. With Apply the last seq stays where it is.
func (in *Inbox) checkOrder(ctx context.Context, tx *sql.Tx, ev event) (Decision, error) {
	m := ev.msg
	now := in.st.time(in.cfg.Now())
	if _, err := tx.ExecContext(ctx, in.st.orderEnsure, m.AggregateType, m.AggregateID, now); err != nil {
		return Reject, fmt.Errorf("inbox: event %s: order check: %w", ev.id, err)
	}
	var last int64
	if err := tx.QueryRowContext(ctx, in.st.orderRead, m.AggregateType, m.AggregateID).Scan(&last); err != nil {
		return Reject, fmt.Errorf("inbox: event %s: order check: %w", ev.id, err)
	}
	if m.Seq >= last {
		if _, err := tx.ExecContext(ctx, in.st.orderAdvance, m.Seq, now, m.AggregateType, m.AggregateID); err != nil {
			return Reject, fmt.Errorf("inbox: event %s: order check: %w", ev.id, err)
		}
		return Apply, nil
	}
	switch d := in.cfg.OnOutOfOrder(ctx, m, last); d {
	case Apply, Skip:
		return d, nil
	default:
		return Reject, &OutOfOrderError{EventID: ev.id, AggregateType: m.AggregateType, AggregateID: m.AggregateID,
			Seq: m.Seq, LastSeq: last}
	}
}
