package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The -config file (YAML, decoded strictly: an unknown key is an error
// that names its line):
//
//	settings:                # optional: flags by name, as if given on the command line
//	  broker: nats
//	  batch: 500
//	sources:                 # optional: many databases and tables, served as one fleet
//	  - name: main           # required, unique
//	    dialect: postgres    # postgres | mysql | sqlite
//	    dsn_file: /run/secrets/main-dsn   # or dsn:
//	    tables: [public.outbox]
//	    patterns: ["tenant_*.outbox"]
//	    subject_prefix: tenants.main      # NATS (topic_prefix: Kafka, exchange: RabbitMQ)
//
// A flag on the command line wins over the file's settings, the settings
// over the environment. With sources, the flags of the one-table case
// (-dsn, -dsn-file, -dialect, -table) are refused on the command line and
// in the settings, and their variables are ignored.

// fileConfig is the YAML document of -config.
type fileConfig struct {
	Settings yaml.Node    `yaml:"settings"`
	Sources  []sourceSpec `yaml:"sources"`
}

// sourceSpec is one source of -config: a database and its outbox tables.
type sourceSpec struct {
	Name          string   `yaml:"name"`
	Dialect       string   `yaml:"dialect"`
	DSN           string   `yaml:"dsn"`
	DSNFile       string   `yaml:"dsn_file"`
	Tables        []string `yaml:"tables"`
	Patterns      []string `yaml:"patterns"`
	SubjectPrefix string   `yaml:"subject_prefix"`
	TopicPrefix   string   `yaml:"topic_prefix"`
	Exchange      string   `yaml:"exchange"`

	// dsn is DSN, or the content of DSNFile; wake is the source's wake
	// (pg, nats or none). Both are set by parsing.
	dsn, wake string
}

// sourceKeys lists a source's keys, for the error on an unknown one.
const sourceKeys = "name, dialect, dsn, dsn_file, tables, patterns, subject_prefix, topic_prefix, exchange"

// singleTableFlags describe the one-table case; -config's sources replace
// them.
var singleTableFlags = []string{"dsn", "dsn-file", "dialect", "table"}

// configError reports a bad -config file: where (File and Line, 0 when
// unknown), which source (Source is its index, -1 for an error that is not
// a source's; Name its name when it has one) and which Field ("dialect",
// "tables[1]", "settings.batch"), and what is wrong (Reason, or Err). It
// matches errUsage. Its text never holds a DSN.
type configError struct {
	File   string
	Line   int
	Source int
	Name   string
	Field  string
	Reason string
	Err    error
}

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString("-config " + e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Source >= 0 {
		fmt.Fprintf(&b, "sources[%d]", e.Source)
		if e.Name != "" {
			fmt.Fprintf(&b, " (%s)", e.Name)
		}
		if e.Field != "" {
			b.WriteString(".")
		}
	}
	if e.Field != "" {
		b.WriteString(e.Field)
	}
	if e.Source >= 0 || e.Field != "" {
		b.WriteString(": ")
	}
	if e.Reason == "" && e.Err != nil {
		return b.String() + e.Err.Error()
	}
	return b.String() + e.Reason
}

// Unwrap returns the cause, if any.
func (e *configError) Unwrap() error { return e.Err }

// Is reports errUsage.
func (e *configError) Is(target error) bool { return target == errUsage }

// configFile is a decoded -config file and its node tree, for the lines of
// errors.
type configFile struct {
	path string
	root *yaml.Node
	spec fileConfig
}

// readConfigFile reads and strictly decodes the -config file at path.
func readConfigFile(path string) (*configFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &configError{File: path, Source: -1, Err: err}
	}
	cf := &configFile{path: path, root: &yaml.Node{}}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	switch err := dec.Decode(&cf.spec); {
	case errors.Is(err, io.EOF):
		return nil, &configError{File: path, Source: -1, Reason: "the file is empty"}
	case err != nil:
		return nil, yamlError(path, err)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return nil, &configError{File: path, Source: -1, Reason: "more than one YAML document; keep one"}
	}
	if err := yaml.Unmarshal(b, cf.root); err != nil {
		return nil, yamlError(path, err)
	}
	if s := cf.spec.Settings; s.Kind != 0 && s.Kind != yaml.MappingNode && s.Tag != "!!null" {
		return nil, &configError{File: path, Line: s.Line, Source: -1, Field: "settings", Reason: "must be a mapping of flag names to values"}
	}
	return cf, nil
}

var (
	// yamlUnknown is yaml.v3's text for an unknown key.
	yamlUnknown = regexp.MustCompile(`^line (\d+): field (\S+) not found in type main\.(\w+)$`)
	// yamlLine is the line number yaml.v3 puts first.
	yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)
	// yamlType is yaml.v3's text for a value of the wrong kind; it quotes
	// the value, which may be a secret.
	yamlType = regexp.MustCompile("cannot unmarshal !!(\\w+) (?:`[^`]*` )?into (\\S+)")
)

// yamlKinds name YAML's tags and the Go types of fileConfig for errors.
var yamlKinds = map[string]string{
	"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean", "map": "a mapping",
	"seq": "a list", "null": "nothing", "string": "a string", "[]string": "a list of strings",
	"[]main.sourceSpec": "a list of sources", "main.sourceSpec": "a source (a mapping of its keys)",
	"main.fileConfig": "a mapping of settings and sources",
}

// kindName returns the name of a YAML tag or Go type in yamlKinds.
func kindName(k string) string {
	if n, ok := yamlKinds[k]; ok {
		return n
	}
	return "another kind of value"
}

// yamlError turns a decoding error into a *configError naming the line of
// the first problem; it never quotes a value of the file.
func yamlError(path string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = yamlType.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlType.FindStringSubmatch(m)
		return "found " + kindName(sub[1]) + " where " + kindName(sub[2]) + " belongs"
	})
	if m := yamlUnknown.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		reason := "unknown key; the file has settings and sources"
		if m[3] == "sourceSpec" {
			reason = "unknown key; a source has " + sourceKeys
		}
		return &configError{File: path, Line: line, Source: -1, Field: m[2], Reason: reason}
	}
	e := &configError{File: path, Source: -1, Reason: msg}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Reason = msg[len(m[0]):]
	}
	return e
}

// sourceError returns the *configError of field of source i.
func (cf *configFile) sourceError(i int, field, format string, args ...any) *configError {
	return &configError{File: cf.path, Line: cf.line(i, field), Source: i, Name: cf.spec.Sources[i].Name,
		Field: field, Reason: fmt.Sprintf(format, args...)}
}

// line returns the line of field ("tables[1]", "" for the source itself)
// of source i, 0 when it is not in the file.
func (cf *configFile) line(i int, field string) int {
	doc := cf.root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	sources := mappingValue(doc, "sources")
	if sources == nil || sources.Kind != yaml.SequenceNode || i >= len(sources.Content) {
		return 0
	}
	src := sources.Content[i]
	name, idx, hasIdx := strings.Cut(field, "[")
	v := mappingValue(src, name)
	if name == "" || v == nil {
		return src.Line
	}
	if hasIdx {
		j, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if v.Kind == yaml.SequenceNode && j < len(v.Content) {
			return v.Content[j].Line
		}
	}
	return v.Line
}

// mappingValue returns the value of key in mapping node m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// loadConfig reads the -config file (its path from the command line, or
// $JITOUTBOX_CONFIG) and sets each flag of its settings that the command
// line did not set (set, updated), as if given there; it keeps the file's
// sources. Without a file it does nothing.
func (c *config) loadConfig(fs *flag.FlagSet, set map[string]bool, env func(string) string) error {
	if !set["config"] {
		c.configPath = env(envName("config"))
	}
	if c.configPath == "" {
		return nil
	}
	cf, err := readConfigFile(c.configPath)
	if err != nil {
		return err
	}
	c.file, c.sources = cf, cf.spec.Sources
	if len(c.sources) > 0 {
		for _, name := range singleTableFlags {
			if set[name] {
				return flagErrorf("-"+name, "describes the one-table case; with the sources of -config %s, give each source its dialect, dsn or dsn_file and tables", c.configPath)
			}
		}
	}
	return cf.applySettings(fs, set, len(c.sources) > 0)
}

// applySettings sets the flags of the settings mapping that the command
// line did not set (a secret given there as value or file wins as a
// whole), and marks them in set. With sources, the one-table flags are
// refused.
func (cf *configFile) applySettings(fs *flag.FlagSet, set map[string]bool, sources bool) error {
	m := &cf.spec.Settings
	fromFile := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		fail := func(format string, args ...any) error {
			return &configError{File: cf.path, Line: k.Line, Source: -1, Field: "settings." + name, Reason: fmt.Sprintf(format, args...)}
		}
		switch {
		case fs.Lookup(name) == nil:
			return fail("no flag -%s (run with -h for the flags)", name)
		case name == "config":
			return fail("a -config file cannot name another")
		case sources && slices.Contains(singleTableFlags, name):
			return fail("describes the one-table case; give each source its dialect, dsn or dsn_file and tables")
		case v.Kind != yaml.ScalarNode || v.Tag == "!!null":
			return fail("must be a single value (a string, number, duration or boolean)")
		}
		if set[name] || set[twin(name)] && !fromFile[twin(name)] {
			continue // the command line wins
		}
		if err := fs.Set(name, v.Value); err != nil {
			if twin(name) != "" {
				return fail("invalid value") // never quote a secret
			}
			return fail("invalid value %q: %v", v.Value, err)
		}
		fromFile[name], set[name] = true, true
	}
	return nil
}

// envSkips returns the flags applyEnv must leave alone: those set on the
// command line or in the file and, with sources, the one-table flags,
// whose variables (JITOUTBOX_DSN ...) may be left in a shared environment.
func (c *config) envSkips(set map[string]bool) map[string]bool {
	if len(c.sources) == 0 {
		return set
	}
	skip := make(map[string]bool, len(set)+len(singleTableFlags))
	for k, v := range set {
		skip[k] = v
	}
	for _, name := range singleTableFlags {
		skip[name] = true
	}
	return skip
}

// resolvePath returns p relative to the directory of the -config file
// when it is not absolute.
func (cf *configFile) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(cf.path), p)
}
