// Package shop holds what the orders service and its consumer share: how to
// open the database for a dialect, the JetStream stream, the subjects and the
// event payloads.
package shop
