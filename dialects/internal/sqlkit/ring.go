package sqlkit

import "slices"

// RingNext returns the relay after self in sorted relays, wrapping around:
// the relay whose session self watches (Session.WaitChange), so that every
// relay is watched by one other. It reports false when self is alone.
func RingNext(relays []string, self string) (string, bool) {
	var others []string
	for _, r := range relays {
		if r != self {
			others = append(others, r)
		}
	}
	if len(others) == 0 {
		return "", false
	}
	for _, r := range others {
		if r > self {
			return r, true
		}
	}
	return others[0], true
}

// Watch returns the id of the relay whose member lock self's WaitChange
// waits on, and the ids of every relay of the view, sorted, which the wait
// first checks are still the live ones. The relay is the one after self in
// the ring, or self when alone: its own member lock, held by its session
// connection on another backend, is granted to the wait only once that
// connection died, and a joiner's kick interrupts the wait like any other,
// so a lone relay sees a joiner at once at no idle cost. ok is false when
// the relay is not in ids (the view's).
func Watch(relays []string, self string, ids map[string]int64) (target int64, live []int64, ok bool) {
	next, others := RingNext(relays, self)
	if !others {
		next = self
	}
	target, ok = ids[next]
	if !ok {
		return 0, nil, false
	}
	live = make([]int64, 0, len(relays))
	for _, r := range relays {
		id, found := ids[r]
		if !found {
			return 0, nil, false
		}
		live = append(live, id)
	}
	slices.Sort(live)
	return target, live, true
}
