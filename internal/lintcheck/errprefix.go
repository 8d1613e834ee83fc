// Package lintcheck holds source checks that go vet does not make, run by
// its test with go test ./... so that CI fails the day one is broken.
//
// ErrPrefixes checks the error-prefix scheme: an error created in a package
// starts with that package's name, as the standard library's do
// ("postgres: mark: ...", "relay: invalid config"), and an error wrapped
// from another package keeps that package's prefix inside the wrapper's
// ("relay: mark published: postgres: ..."). It reads the string literal
// given to errors.New and fmt.Errorf in every non-test Go file of the
// module and reports a leading "word: " that names a package other than
// the file's own.
//
// A word names a package when it is the module's name (jitoutbox),
// contains a slash (jitoutbox/postgres), is the name of one of the
// module's packages (relay, sqlite, natspub, ...) or is the name under
// which the file imports a package (nats, sql, jetstream). Any other word
// is the context a wrapper adds inside its own package's errors ("connect:
// %w", "exchange: %w") and passes: a check that demanded the package name
// in front of every such wrapper would make errors that are wrapped again
// by the same package say its name twice. The source is read with
// go/parser, one file at a time: nothing is type-checked or built.
package lintcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ModuleName is the module's short name: an error prefix of it alone
// ("jitoutbox: ...") names no package and is always reported.
const ModuleName = "jitoutbox"

// allowPrefix lists the files, relative to the module root, that may use
// a prefix naming another package, with the prefix and the reason. Package
// main is not checked at all (see ErrPrefixes) and needs no entry here.
var allowPrefix = map[string]map[string]string{}

// Finding is one error string whose prefix names another package.
type Finding struct {
	File   string // relative to the module root, slash-separated
	Line   int
	Prefix string // the word before the first ": "
	Pkg    string // the file's package name
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: error string starts with %q in package %s; start it with %q (the package's name) or drop the prefix",
		f.File, f.Line, f.Prefix+":", f.Pkg, f.Pkg+":")
}

// prefixRE matches a leading "word: " of an error string.
var prefixRE = regexp.MustCompile(`^([A-Za-z0-9_./-]+): `)

// ErrPrefixes checks every non-test Go file under root, the module's root
// directory. It skips hidden directories, testdata, and directories with a
// go.mod of their own (other modules). Files of package main are skipped:
// the binaries print messages to their operators, and a prefix there is the
// context of the step that failed ("publisher: %w"), not a package's name.
func ErrPrefixes(root string) ([]Finding, error) {
	type file struct {
		rel string
		src []byte
	}
	var files []file
	pkgs := map[string]bool{ModuleName: true}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		pkgs[f.Name.Name] = true
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, file{filepath.ToSlash(rel), src})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, f := range files {
		found, err := CheckFile(f.rel, f.src, pkgs)
		if err != nil {
			return nil, err
		}
		for _, x := range found {
			if _, ok := allowPrefix[x.File][x.Prefix]; !ok {
				out = append(out, x)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// CheckFile checks one file's source: name is how findings name it, pkgs
// the package names of the module (a prefix equal to one of them, other
// than the file's own, is reported). A file of package main gives none.
func CheckFile(name string, src []byte, pkgs map[string]bool) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	own := f.Name.Name
	if own == "main" {
		return nil, nil
	}
	named := map[string]bool{} // package names in this file: the module's and the imported
	for p := range pkgs {
		named[p] = true
	}
	errorsName, fmtName := "", ""
	for _, imp := range f.Imports {
		ipath, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, err
		}
		local := importName(ipath)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		named[local] = true
		switch ipath {
		case "errors":
			errorsName = local
		case "fmt":
			fmtName = local
		}
	}
	var out []Finding
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if !(x.Name == errorsName && sel.Sel.Name == "New") && !(x.Name == fmtName && sel.Sel.Name == "Errorf") {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		m := prefixRE.FindStringSubmatch(s)
		if m == nil || m[1] == own {
			return true
		}
		if p := m[1]; strings.Contains(p, "/") || named[p] {
			out = append(out, Finding{File: name, Line: fset.Position(lit.Pos()).Line, Prefix: p, Pkg: own})
		}
		return true
	})
	return out, nil
}

// importName guesses the name a package is imported under from its path:
// the last element, without a major-version element (/v2), a ".go" or
// "-go" suffix or a "go-" prefix (github.com/nats-io/nats.go is package
// nats, github.com/rabbitmq/amqp091-go package amqp091).
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	base = strings.TrimSuffix(base, ".go")
	base = strings.TrimSuffix(base, "-go")
	base = strings.TrimPrefix(base, "go-")
	return base
}
