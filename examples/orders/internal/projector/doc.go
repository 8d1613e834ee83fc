// Package projector is the orders consumer: it reads order events from a
// durable JetStream consumer and keeps a projection of the orders in its own
// tables, processing each event exactly once: package inbox records its id
// in the same transaction as the projection update.
package projector
