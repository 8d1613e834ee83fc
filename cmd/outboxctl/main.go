// Command outboxctl inspects and operates a jitoutbox outbox table on
// PostgreSQL, MySQL/MariaDB or SQLite.
//
//	outboxctl [-dialect D] [-dsn DSN] [-table T | -all-tables [-tables-pattern P]] [--json] <command> [flags]
//
// Commands: migrate (-plan lists what it would apply), status, list, dead,
// blocked, show, requeue, skip, purge, serve (a web console on
// 127.0.0.1:8080 by default). Run "outboxctl help" for their flags. Row
// data and errors print with their control characters escaped.
//
// With -all-tables, status and serve read every outbox table that
// -tables-pattern finds (a schema or database per tenant): a line per
// table, and the console's tables page.
//
// Every global flag, and every flag of serve, can also be set by the
// environment variable "outboxctl -h" and "outboxctl serve -h" name
// (JITOUTBOX_DSN, JITOUTBOX_TABLE, JITOUTBOX_CONSOLE_ADDR, ...); a flag on
// the command line wins. The DSN and the console token can be read from a
// file (-dsn-file, -token-file, or their _FILE variables); without a DSN,
// the one of JITOUTBOX_{POSTGRES,MYSQL,SQLITE}_DSN is used. No DSN or token
// is ever printed.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		printError(os.Stderr, err)
		os.Exit(1)
	}
}

// printError prints a command's error for humans, made safe: a database's
// error can quote row data.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "outboxctl:", safe(err.Error()))
}
