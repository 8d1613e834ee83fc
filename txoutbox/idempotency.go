package txoutbox

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/google/uuid"
)

// idempotencyDomain separates these hashes from any other use of SHA-256.
const idempotencyDomain = "jitoutbox/idempotency-key/v1\x00"

// IdempotencyKey derives a deterministic key from parts, for
// Event.IdempotencyKey: for example IdempotencyKey("payment", paymentID,
// "captured").
//
// The key is the SHA-256 of the parts, each prefixed with its length, in
// RFC 9562 UUIDv8 text form (36 characters). Equal parts always give equal
// keys, in every process and release; because each part is length-prefixed,
// different part lists never share an encoding, so ("ab", "c") and
// ("a", "bc") give different keys (only a SHA-256 collision could make them
// equal).
func IdempotencyKey(parts ...string) string {
	h := sha256.New()
	h.Write([]byte(idempotencyDomain))
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var u uuid.UUID
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}
