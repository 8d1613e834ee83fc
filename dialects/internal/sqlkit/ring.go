package sqlkit

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
