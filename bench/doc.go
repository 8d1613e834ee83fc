// Package bench holds jitoutbox's benchmarks: capture cost, drains, latency,
// capacity, failover, outages and idle cost, each reporting its figures with
// b.ReportMetric. They run against the real
// servers named by JITOUTBOX_POSTGRES_DSN, JITOUTBOX_MYSQL_DSN and
// JITOUTBOX_NATS_URL (SQLite and an embedded NATS server otherwise); see
// README.md in this folder for the commands and the current figures.
package bench
