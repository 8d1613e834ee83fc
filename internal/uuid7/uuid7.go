// Package uuid7 generates RFC 9562 version 7 UUIDs: 48 bits of Unix
// milliseconds, then a 12-bit counter that keeps ids from one generator
// strictly increasing within a millisecond, then 62 random bits.
package uuid7

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

// UUID is a 16-byte UUID.
type UUID [16]byte

// String returns the canonical 36-character form.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Time returns the millisecond timestamp embedded in u.
func (u UUID) Time() time.Time {
	ms := int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5])
	return time.UnixMilli(ms)
}

// Generator yields monotonically increasing v7 UUIDs. The zero value is ready
// to use and safe for concurrent use.
type Generator struct {
	mu      sync.Mutex
	lastMS  int64
	counter uint16 // 12 bits used
}

// New returns the next UUID for time now.
func (g *Generator) New(now time.Time) UUID {
	ms := now.UnixMilli()
	g.mu.Lock()
	if ms <= g.lastMS {
		// Same (or a backwards) millisecond: keep order by bumping the counter,
		// borrowing the next millisecond when it overflows.
		ms = g.lastMS
		g.counter++
		if g.counter > 0x0fff {
			ms++
			g.counter = 0
		}
	} else {
		var c [2]byte
		_, _ = rand.Read(c[:])
		g.counter = binary.BigEndian.Uint16(c[:]) & 0x01ff // leave head-room for increments
	}
	g.lastMS = ms
	counter := g.counter
	g.mu.Unlock()

	var u UUID
	u[0] = byte(ms >> 40)
	u[1] = byte(ms >> 32)
	u[2] = byte(ms >> 24)
	u[3] = byte(ms >> 16)
	u[4] = byte(ms >> 8)
	u[5] = byte(ms)
	u[6] = 0x70 | byte(counter>>8)&0x0f
	u[7] = byte(counter)
	_, _ = rand.Read(u[8:])
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}
