// Package deploy holds no code: its test validates the Kubernetes manifests
// in kubernetes/ (a Kustomize base) against the Kubernetes API types and
// the Prometheus Operator's. It is a module of its own so that those
// dependencies stay out of the library's module graph.
package deploy
