// Package modgraph holds a test that keeps the module graph of a service
// using jitoutbox lean: a service that imports txoutbox, relay,
// relay/natspub and dialects/postgres must not build, or record in its
// go.sum, the modules that only jitoutbox's own tests, benchmarks and
// tools need (the browser test's chromedp, kfake, gonum's plots,
// Kubernetes), nor the modules of packages it did not import (other
// brokers' clients, OpenTelemetry).
//
// The test writes such a service in a temporary directory, points it at
// this repository with a replace directive and runs go mod tidy. It is
// skipped with -short.
package modgraph
