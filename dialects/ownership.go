package dialects

import "time"

// Ownership is a snapshot of partition ownership for operators, read by
// Inspector.Ownership without opening a session. The live relays and the
// partitions are read by one statement.
type Ownership struct {
	// Relays are the live relay sessions, oldest first (ties by token).
	Relays []RelaySession
	// Partitions has one entry per partition of the table, in partition
	// order: Partitions[p].Partition == p.
	Partitions []PartitionOwner
}

// RelaySession is one live relay session (one Run of a relay).
type RelaySession struct {
	// Token is the session's fencing token (Session.Token).
	Token string
	// Name is the relay's name given to OpenSession (relay.Config.Owner).
	Name string
	// StartedAt is when the session was opened.
	StartedAt time.Time
}

// PartitionOwner is one partition's ownership.
type PartitionOwner struct {
	// Partition is the partition number.
	Partition int
	// Owner is the token recorded as the partition's owner: the session
	// that took it last, or "" when it was never taken or was released.
	// It may name a session that is gone: see Live.
	Owner string
	// Epoch counts the times the partition was taken.
	Epoch int64
	// Live reports that Owner is a live session, which publishes the
	// partition now: on PostgreSQL and MariaDB/MySQL the owner's lock is
	// held, on SQLite its lease has not expired. A partition that is not
	// Live is free: the next relay to look takes it.
	Live bool
	// TakenAt is when Owner took the partition; zero if never taken.
	TakenAt time.Time
}

// Free returns the partitions no live session owns, in order.
func (o Ownership) Free() []int {
	var out []int
	for _, p := range o.Partitions {
		if !p.Live {
			out = append(out, p.Partition)
		}
	}
	return out
}

// Owned returns the partitions the live session token owns, in order.
func (o Ownership) Owned(token string) []int {
	var out []int
	for _, p := range o.Partitions {
		if p.Live && p.Owner == token {
			out = append(out, p.Partition)
		}
	}
	return out
}
