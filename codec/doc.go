// Package codec transforms event payloads before txoutbox writes them and
// restores them at the consumer: zstd compression above a size threshold,
// then AES-256-GCM encryption with a key named by an id, so that keys can
// rotate (new events use the current key, older ones still decrypt with
// theirs).
//
// # The contract with txoutbox
//
// A *Codec is a txoutbox.PayloadEncoder (txoutbox.WithPayloadEncoder). For
// each event Add calls EncodePayload with the event's id, content type and
// payload, after assigning the id. When the codec returns a non-empty
// encoding, txoutbox stores the encoded bytes, sets the row's content type
// to application/octet-stream, and adds two headers to the row:
//
//	Jitoutbox-Encoding      the steps applied, in order ("zstd", "aes-256-gcm:<key id>", or both: "zstd,aes-256-gcm:<key id>")
//	Jitoutbox-Content-Type  the content type the caller gave (or txoutbox detected)
//
// Headers travel with every message on every publisher (NATS, RabbitMQ,
// Kafka, in each shape, CloudEvents included), so the key id is in the row
// and in the message. They are not encrypted: event type, aggregate and
// user headers are metadata the relay and brokers route on.
//
// # Where decryption happens
//
// The relay publishes the stored bytes unchanged: the payload is encrypted
// end to end, from the writing service to the consuming one. The relay,
// the broker and their operators never need a key, and outboxctl and its
// console show an encrypted row as "encrypted (key <id>)" with its size.
// Consumers decode: inbox.Message.Decode with a *Codec for messages read by
// inbox/natssub, inbox/rabbitsub and inbox/kafkasub, and Codec.DecodePayload
// or Codec.Decode for consumers of their own.
//
// Where the broker's consumers cannot hold keys, the relay can decode
// instead: relay/decodepub wraps the publisher and passes decoded messages
// on; a message whose key is unknown or whose ciphertext is corrupt fails
// with relay.Permanent, so the relay dead-letters its row and nothing is
// published in clear.
//
// # Wire format
//
// An encrypted payload is a 12-byte random nonce followed by the AES-GCM
// ciphertext and its 16-byte tag. The additional authenticated data binds
// it to its event: a version tag, the event id, the Jitoutbox-Encoding value
// and the original content type. A ciphertext copied into another row (or
// given another key id, steps or content type) fails to decrypt. Random
// nonces keep a key safe for about 2^32 payloads (NIST SP 800-38D); rotate
// keys well before that.
//
// Compression runs before encryption and only when it makes the payload
// smaller. The length of a compressed and encrypted payload says something
// about its content; where an attacker controls part of a payload that also
// holds a secret, leave compression off.
//
// # Keys
//
// A KeyProvider gives the current key id and the key of any id. Keys holds
// them in memory; ParseKeys, KeysFromEnv and KeysFromFile read the text
// form
//
//	# newest first: the first key is the current one
//	2026-11:<base64 of 32 bytes>
//	2026-10:<base64 of 32 bytes>
//
// (lines or commas separate entries). To rotate, give every decoder (the
// consumers, and a decoding relay) the new key first, then put it first for
// the writers; keep an old key as long as rows or messages encrypted with it
// may still be read.
package codec
