// Command natsserver is nats-server built from the nats-server/v2 module
// this repository depends on, so that tests can run that version (which
// offers jetstream { sync_interval: always }) as a child process they can
// SIGKILL. It takes nats-server's command line (e.g. -c server.conf).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	fs := flag.NewFlagSet("natsserver", flag.ExitOnError)
	opts, err := server.ConfigureOptions(fs, os.Args[1:], server.PrintServerAndExit, fs.Usage, server.PrintTLSHelpAndDie)
	if err != nil {
		fmt.Fprintf(os.Stderr, "natsserver: %v\n", err)
		os.Exit(1)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "natsserver: %v\n", err)
		os.Exit(1)
	}
	s.ConfigureLogger()
	if err := server.Run(s); err != nil {
		fmt.Fprintf(os.Stderr, "natsserver: %v\n", err)
		os.Exit(1)
	}
	s.WaitForShutdown()
}
