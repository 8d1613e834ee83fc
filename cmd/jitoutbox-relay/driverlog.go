package main

import (
	"fmt"
	"log/slog"
	"strings"
)

// driverLogger adapts a database driver's Print-style logger (the MySQL
// driver's Logger interface) to slog at warning level.
type driverLogger struct {
	log    *slog.Logger
	driver string
}

// Print logs v as one warning line.
func (l driverLogger) Print(v ...any) {
	l.log.Warn("jitoutbox-relay: database driver", "driver", l.driver,
		"msg_text", strings.TrimSpace(fmt.Sprint(v...)))
}
