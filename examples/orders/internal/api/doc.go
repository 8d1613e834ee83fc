// Package api is the orders service: an HTTP API that creates and pays
// orders, publishing order.created and order.paid through the transactional
// outbox, with the relay running in the same process.
package api
