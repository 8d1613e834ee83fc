package sqlkit

import (
	"database/sql"
	"slices"

	"github.com/jitoutbox/jitoutbox/dialects"
)

// ScanView reads the rows of a dialect's session_view.sql, which every
// dialect shapes alike: (kind, n, token, epoch, live), kind 'r' for a live
// relay session (n its relays row id) and 'p' for a partition (n its number,
// token its recorded owner, live whether that owner is live). It returns the
// view, relays sorted and owners "" where not live, and the relays' row ids
// by token (lock dialects watch a relay by its id). It closes rows.
func ScanView(rows *sql.Rows) (dialects.View, map[string]int64, error) {
	defer rows.Close()
	var v dialects.View
	ids := make(map[string]int64)
	type part struct {
		p     int
		owner string
		epoch int64
	}
	var parts []part
	for rows.Next() {
		var kind, token string
		var n, epoch int64
		var live bool
		if err := rows.Scan(&kind, &n, &token, &epoch, &live); err != nil {
			return v, nil, err
		}
		switch kind {
		case "r":
			ids[token] = n
			v.Relays = append(v.Relays, token)
		default:
			if !live {
				token = ""
			}
			parts = append(parts, part{int(n), token, epoch})
		}
	}
	if err := rows.Err(); err != nil {
		return v, nil, err
	}
	slices.Sort(v.Relays)
	v.Owners = make([]string, len(parts))
	v.Epochs = make([]int64, len(parts))
	for _, p := range parts {
		if p.p >= 0 && p.p < len(parts) {
			v.Owners[p.p], v.Epochs[p.p] = p.owner, p.epoch
		}
	}
	return v, ids, nil
}
