package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

// minTokenLen is the shortest -metrics-token accepted (as outboxctl's
// console token).
const minTokenLen = 16

// envNames are the variables of the flags that kept the name they had
// before every flag got one; the others are JITOUTBOX_ and the flag's name
// in capitals, '-' as '_'.
var envNames = map[string]string{"nats": envNATSURL, "amqp": envAMQPURL, "kafka": envKafkaBrokers}

// secretFlags are the flags that carry a secret; each has a -<name>-file
// twin that reads it from a file.
var secretFlags = []string{"dsn", "nats", "amqp", "metrics-token"}

// envName returns the environment variable that sets flag name.
func envName(name string) string {
	if base, ok := strings.CutSuffix(name, "-file"); ok && envNames[base] != "" {
		return envNames[base] + "_FILE"
	}
	if n, ok := envNames[name]; ok {
		return n
	}
	return "JITOUTBOX_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// twin returns the other flag of a secret's pair (-dsn and -dsn-file),
// or "".
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

// applyEnv sets every flag not given on the command line (set) from its
// environment variable, when that is not empty. A secret whose value or
// file was given on the command line takes nothing from the environment:
// the command line wins as a whole.
func applyEnv(fs *flag.FlagSet, set map[string]bool, env func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || set[f.Name] || set[twin(f.Name)] {
			return
		}
		name := envName(f.Name)
		v := env(name)
		if v == "" {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			reason := serr.Error()
			if twin(f.Name) != "" {
				reason = "invalid value" // never quote a secret
			}
			err = flagErrorf("$"+name, "sets -%s: %s", f.Name, reason)
		}
	})
	return err
}

// secretFiles holds the -<name>-file flags.
type secretFiles map[string]*string

// secretFileFlags registers a -<name>-file flag for each of secretFlags.
func secretFileFlags(fs *flag.FlagSet) secretFiles {
	files := make(secretFiles, len(secretFlags))
	for _, name := range secretFlags {
		files[name] = fs.String(name+"-file", "",
			"read -"+name+" from this file, its trailing newline trimmed (a mounted Kubernetes Secret); not with -"+name)
	}
	return files
}

// read sets each secret given by file from its file: the content with its
// trailing "\n" or "\r\n" (as `echo` and editors leave it) removed. Giving
// both a secret and its file at the same level (both flags, or both
// variables) is an error; a file that cannot be read, or is empty, is too.
func (files secretFiles) read(fs *flag.FlagSet) error {
	for _, name := range secretFlags {
		path := *files[name]
		if path == "" {
			continue
		}
		if fs.Lookup(name).Value.String() != "" {
			return flagErrorf("-"+name+"-file", "give -%s or -%s-file (or $%s or $%s), not both", name, name, envName(name), envName(name+"-file"))
		}
		v, err := readSecretFile(path)
		if err != nil {
			return &flagError{Flag: "-" + name + "-file", Err: err}
		}
		if err := fs.Set(name, v); err != nil {
			return flagErrorf("-"+name+"-file", "invalid value in %s", path)
		}
	}
	return nil
}

// readSecretFile returns the content of the file at path with its trailing
// "\n" or "\r\n" (as `echo` and editors leave it) removed. A file that
// cannot be read, or is empty, is an error that names the path, never the
// content.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}

// parseMetrics checks -metrics-addr and -metrics-token.
func (c *config) parseMetrics() error {
	if c.metricsToken != "" && len(c.metricsToken) < minTokenLen {
		return flagErrorf("-metrics-token", "the token must have at least %d characters", minTokenLen)
	}
	if c.metricsAddr == "" {
		if c.metricsToken != "" {
			return flagErrorf("-metrics-token", "needs -metrics-addr")
		}
		return nil
	}
	if _, port, err := net.SplitHostPort(c.metricsAddr); err != nil || port == "" {
		return flagErrorf("-metrics-addr", "%q: use host:port or :port", c.metricsAddr)
	}
	return nil
}
