package codec_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/jitoutbox/jitoutbox/codec"
)

// Example encrypts a payload as txoutbox does with WithPayloadEncoder, and
// decodes it as a consumer does; after a rotation the old event still
// decodes, and a consumer without the new key gets a clear error.
func Example() {
	// In production: codec.KeysFromEnv("JITOUTBOX_KEYS") or
	// codec.KeysFromFile("/run/secrets/jitoutbox-keys"), newest key first.
	before, err := codec.NewKeys("2026-10", map[string][]byte{"2026-10": bytes.Repeat([]byte{1}, codec.KeySize)})
	if err != nil {
		log.Fatal(err)
	}
	writer, err := codec.New(codec.Config{Keys: before, CompressAbove: 1024})
	if err != nil {
		log.Fatal(err)
	}
	id := "0190f5d2-0000-7000-8000-000000000001" // txoutbox's event id
	stored, encoding, err := writer.EncodePayload(id, "application/json", []byte(`{"card":"4111 1111 1111 1111"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Jitoutbox-Encoding:", encoding)
	fmt.Println("ciphertext holds the card:", bytes.Contains(stored, []byte("4111")))

	// The consumer reads the headers of the message.
	headers := map[string]string{codec.HeaderEncoding: encoding, codec.HeaderContentType: "application/json"}
	payload, _, err := writer.DecodePayload(id, headers, stored)
	fmt.Printf("%s %v\n", payload, err)

	// Rotation: the new key first, the old one kept for older events.
	after, err := codec.NewKeys("2026-11", map[string][]byte{
		"2026-11": bytes.Repeat([]byte{2}, codec.KeySize), "2026-10": bytes.Repeat([]byte{1}, codec.KeySize)})
	if err != nil {
		log.Fatal(err)
	}
	rotated, err := codec.New(codec.Config{Keys: after})
	if err != nil {
		log.Fatal(err)
	}
	payload, err = rotated.Decode(id, encoding, "application/json", stored)
	fmt.Printf("after rotation: %s %v\n", payload, err)
	newer, encoding, err := rotated.EncodePayload("0190f5d2-0000-7000-8000-000000000002", "application/json", []byte(`{}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("new events:", encoding)
	_, err = writer.Decode("0190f5d2-0000-7000-8000-000000000002", encoding, "application/json", newer)
	fmt.Println(errors.Is(err, codec.ErrUnknownKey), err)
	// Output:
	// Jitoutbox-Encoding: aes-256-gcm:2026-10
	// ciphertext holds the card: false
	// {"card":"4111 1111 1111 1111"} <nil>
	// after rotation: {"card":"4111 1111 1111 1111"} <nil>
	// new events: aes-256-gcm:2026-11
	// true codec: event 0190f5d2-0000-7000-8000-000000000002: decode "aes-256-gcm:2026-11" (key "2026-11"): codec: unknown key id: "2026-11"
}
