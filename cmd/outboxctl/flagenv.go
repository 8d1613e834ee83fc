package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// secretFlags are the flags that carry a secret; each has a -<name>-file
// twin that reads it from a file (a mounted Kubernetes Secret).
var secretFlags = []string{"dsn", "token"}

// isGlobal reports whether name is one of the flags every command accepts.
func isGlobal(name string) bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(globals).register(fs)
	return fs.Lookup(name) != nil
}

// envName returns the environment variable that sets flag name of command
// cmd, or "" when none does. The global flags have JITOUTBOX_ and the
// flag's name in capitals, '_' for '-' (JITOUTBOX_DSN_FILE); serve's flags
// have JITOUTBOX_CONSOLE_ and theirs (JITOUTBOX_CONSOLE_TOKEN, the name the
// token had before every flag got one); other commands' flags have none:
// they say what one run does, not how outboxctl is set up.
func envName(cmd, name string) string {
	upper := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	switch {
	case isGlobal(name):
		return "JITOUTBOX_" + upper
	case cmd == "serve":
		return "JITOUTBOX_CONSOLE_" + upper
	}
	return ""
}

// twin returns the other flag of a secret's pair (-dsn and -dsn-file), or
// "".
func twin(name string) string {
	for _, s := range secretFlags {
		switch name {
		case s:
			return s + "-file"
		case s + "-file":
			return s
		}
	}
	return ""
}

// annotateEnv appends each flag's variable to its usage, for -h.
func annotateEnv(fs *flag.FlagSet, cmd string) {
	fs.VisitAll(func(f *flag.Flag) {
		if n := envName(cmd, f.Name); n != "" {
			f.Usage += " [$" + n + "]"
		}
	})
}

// applyEnv sets every flag of command cmd not given on the command line
// (set) from its environment variable, when that is not empty. A secret
// whose value or file was given on the command line takes nothing from the
// environment: the command line wins as a whole.
func applyEnv(fs *flag.FlagSet, cmd string, set map[string]bool, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(cmd, f.Name)
		if err != nil || name == "" || set[f.Name] || set[twin(f.Name)] {
			return
		}
		v := getenv(name)
		if v == "" {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			reason := serr.Error()
			if twin(f.Name) != "" {
				reason = "invalid value" // never quote a secret
			}
			err = fmt.Errorf("%w: $%s sets -%s: %s", errUsage, name, f.Name, reason)
		}
	})
	return err
}

// readDSNFile sets g.dsn from -dsn-file: the file's content with its
// trailing "\n" or "\r\n" (as `echo` and editors leave it) removed. Giving
// both -dsn and -dsn-file at the same level (both flags, or both
// variables) is an error; a file that cannot be read, or is empty, is too.
// No error quotes the content.
func (g *globals) readDSNFile() error {
	if g.dsnFile == "" {
		return nil
	}
	if g.dsn != "" {
		return fmt.Errorf("%w: give -dsn or -dsn-file (or $JITOUTBOX_DSN or $JITOUTBOX_DSN_FILE), not both", errUsage)
	}
	b, err := os.ReadFile(g.dsnFile)
	if err != nil {
		return fmt.Errorf("%w: -dsn-file: %w", errUsage, err) // the error names the path, never the content
	}
	if g.dsn = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"); g.dsn == "" {
		return fmt.Errorf("%w: -dsn-file %s is empty", errUsage, g.dsnFile)
	}
	return nil
}
