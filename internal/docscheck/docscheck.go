// Package docscheck finds drift between the Markdown docs and the code:
// a Go name in backticks (`pkg.Name`, `pkg.Type.Method`, `pkg.Type.Field`)
// that this module's packages do not declare, a SQL file (`name.sql`) that
// is not under dialects/ or inbox/, an `outboxctl` command that
// cmd/outboxctl does not have, and a Markdown link whose path (or heading
// anchor, for a link to a Markdown file) does not exist. Its test
// runs the check over the repository's docs with go test ./..., so a doc
// that names something renamed or deleted fails the day it happens.
//
// A name counts as this module's only when its qualifier is the name of one
// of the module's packages (txoutbox, relay, dialects, jitotel, ...): a
// standard library or third-party name (`sql.Tx`, `jetstream.WithMsgID`)
// has another qualifier and is not checked. Where a module package shares
// its name with an outside one, allowExternal lists the outside names the
// docs use. The source is read with go/parser, one directory at a time:
// nothing is type-checked or built.
package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// allowExternal lists names of outside packages that share their
// qualifier with a package of this module, so that the check cannot tell
// them apart. Each entry says whose name it is.
var allowExternal = map[string]string{}

// Problem is one doc reference that names nothing.
type Problem struct {
	File string // the doc, relative to the module root
	Line int
	What string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.What) }

// DocFiles returns the Markdown files the check reads, relative to root:
// README.md, DEVELOPERS.md, docs/*.md, bench/README.md and every README.md
// under examples/. Missing ones are left out.
func DocFiles(root string) ([]string, error) {
	var out []string
	for _, f := range []string{"README.md", "DEVELOPERS.md", "bench/README.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			out = append(out, f)
		}
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(mustRel(root, d)))
	}
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() && d.Name() == "README.md" {
			out = append(out, filepath.ToSlash(mustRel(root, p)))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func mustRel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}

// Index is what the module declares: for each package name (a name shared
// by several packages holds all of theirs), its top-level names, and
// "Type.Member" for the methods and fields of its types (interface methods
// and members reached through embedding included).
type Index struct {
	names map[string]map[string]bool
}

// Has reports whether pkg is one of the module's package names.
func (ix *Index) Has(pkg string) bool { return ix.names[pkg] != nil }

// Declares reports whether a package named pkg declares sel ("Name" or
// "Type.Member").
func (ix *Index) Declares(pkg, sel string) bool { return ix.names[pkg][sel] }

// LoadIndex parses every Go file under root (test files included: the
// docs name examples such as Example_sqlc; testdata, vendor and hidden
// directories left out) and indexes its declarations by package name, a
// _test package under its package's name.
func LoadIndex(root string) (*Index, error) {
	ix := &Index{names: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("docscheck: %w", err)
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if pkg == "main" {
			return nil
		}
		ix.add(pkg, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// add records f's declarations under pkg, then resolves embedding once
// more: members of embedded types of the same package name become members
// of the embedding type.
func (ix *Index) add(pkg string, f *ast.File) {
	set := ix.names[pkg]
	if set == nil {
		set = map[string]bool{}
		ix.names[pkg] = set
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				set[d.Name.Name] = true
				continue
			}
			if t := recvType(d.Recv.List[0].Type); t != "" {
				set[t+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					set[s.Name.Name] = true
					addMembers(set, s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						set[n.Name] = true
					}
				}
			}
		}
	}
	embedded := map[string][]string{}
	for _, decl := range f.Decls {
		if d, ok := decl.(*ast.GenDecl); ok {
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					embedded[ts.Name.Name] = embeds(ts.Type)
				}
			}
		}
	}
	for t, inner := range embedded {
		for _, e := range inner {
			for k := range set {
				if m, ok := strings.CutPrefix(k, e+"."); ok {
					set[t+"."+m] = true
				}
			}
		}
	}
}

// recvType is the type name of a method receiver (*T, T, T[P]).
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return ""
}

// addMembers records the fields of a struct and the methods of an
// interface as "Type.Member".
func addMembers(set map[string]bool, typ string, e ast.Expr) {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			set[typ+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded: the field is named after its type
			if n := embeddedName(f.Type); n != "" {
				set[typ+"."+n] = true
			}
			if _, foreign := unstar(f.Type).(*ast.SelectorExpr); foreign {
				set[typ+".*"] = true
			}
		}
	}
}

// embeds returns the same-package types a struct or interface embeds.
func embeds(e ast.Expr) []string {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if id, ok := unstar(f.Type).(*ast.Ident); ok {
				out = append(out, id.Name)
			}
		}
	}
	return out
}

func unstar(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}

func embeddedName(e ast.Expr) string {
	switch t := unstar(e).(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

var (
	// goRef is a qualified Go name: pkg.Name, pkg.Type.Member.
	goRef = regexp.MustCompile(`(?:^|[^\w.])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	// sqlRef is a SQL file name, with or without a path.
	sqlRef = regexp.MustCompile(`[\w./<>-]*?([\w-]+\.sql)\b`)
	// link is an inline Markdown link or image: [text](target).
	link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan is an inline code span of single backticks.
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// ctlRef is an outboxctl command line: the command is the word after
	// the binary's name.
	ctlRef = regexp.MustCompile(`(?:^|[\s/])outboxctl\s+([a-z][a-z-]*)\b`)
)

// Check reads each doc (relative to root) and returns the references that
// name nothing: Go names in code spans and in fenced Go blocks, SQL files
// named in code spans or links, link paths and their heading anchors; and
// the merge conflict markers a merge left behind.
func Check(root string, docs []string, ix *Index) ([]Problem, error) {
	sqlFiles, err := sqlFileNames(root)
	if err != nil {
		return nil, err
	}
	commands, err := outboxctlCommands(root)
	if err != nil {
		return nil, err
	}
	ctlProblems := func(s string, at func(string, ...any)) {
		for _, m := range ctlRef.FindAllStringSubmatch(s, -1) {
			if commands != nil && !commands[m[1]] {
				at("outboxctl command %s: cmd/outboxctl has no such command", m[1])
			}
		}
	}
	anchors := map[string]map[string]bool{}
	var out []Problem
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			return nil, err
		}
		fence, fenceLang := "", ""
		for i, line := range strings.Split(string(b), "\n") {
			at := func(format string, a ...any) {
				out = append(out, Problem{File: doc, Line: i + 1, What: fmt.Sprintf(format, a...)})
			}
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") {
				at("merge conflict marker %q: resolve the merge", strings.TrimSpace(line))
				continue
			}
			if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				switch {
				case fence == "":
					fence, fenceLang = t[:3], strings.TrimSpace(t[3:])
				case strings.HasPrefix(t, fence) && strings.TrimSpace(t[3:]) == "":
					fence = ""
				}
				continue
			}
			if fence != "" {
				ctlProblems(line, at)
				if fenceLang == "go" {
					for _, p := range goProblems(line, ix) {
						at("%s", p)
					}
				}
				continue
			}
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				for _, p := range goProblems(m[1], ix) {
					at("%s", p)
				}
				ctlProblems(m[1], at)
				for _, s := range sqlRef.FindAllStringSubmatch(m[1], -1) {
					if !sqlFiles[s[1]] {
						at("SQL file %s: no such file under dialects/ or inbox/", s[1])
					}
				}
			}
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				if p := linkProblem(root, doc, m[1], anchors); p != "" {
					at("%s", p)
				}
			}
		}
	}
	return out, nil
}

// goProblems returns what is wrong with the qualified Go names in s.
func goProblems(s string, ix *Index) []string {
	var out []string
	for _, m := range goRef.FindAllStringSubmatch(s, -1) {
		pkg, name, member := m[1], m[2], m[3]
		if !ix.Has(pkg) || allowExternal[pkg+"."+name] != "" {
			continue
		}
		if !ix.Declares(pkg, name) {
			out = append(out, fmt.Sprintf("Go name %s.%s: package %s declares no %s", pkg, name, pkg, name))
			continue
		}
		// A member is checked only when Name is a type with members
		// indexed: `relay.Config.Hooks`, `dialects.Dialect.Stats`.
		// A type that embeds another package's type (foreign) may have
		// any member.
		if member != "" && hasMembers(ix, pkg, name) && !ix.Declares(pkg, name+".*") && !ix.Declares(pkg, name+"."+member) {
			out = append(out, fmt.Sprintf("Go name %s.%s.%s: %s.%s has no member %s", pkg, name, member, pkg, name, member))
		}
	}
	return out
}

func hasMembers(ix *Index, pkg, typ string) bool {
	for k := range ix.names[pkg] {
		if strings.HasPrefix(k, typ+".") {
			return true
		}
	}
	return false
}

// sqlFileNames returns the base names of the .sql files under dialects/
// and inbox/.
func sqlFileNames(root string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, dir := range []string{"dialects", "inbox"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return filepath.SkipDir
				}
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".sql") {
				out[d.Name()] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// linkProblem checks one link target of doc: a path (relative to the doc)
// that must exist and, for a Markdown file (or the doc itself), an anchor
// that must be one of its headings. Web links are not followed.
func linkProblem(root, doc, target string, anchors map[string]map[string]bool) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	file := doc
	if path != "" {
		file = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			return fmt.Sprintf("link %s: no such file or directory %s", target, file)
		}
	}
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	set, ok := anchors[file]
	if !ok {
		set = headingAnchors(filepath.Join(root, file))
		anchors[file] = set
	}
	if !set[anchor] {
		return fmt.Sprintf("link %s: %s has no heading #%s", target, file, anchor)
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation dropped, spaces to hyphens, a
// repeated heading numbered -1, -2, ...
func headingAnchors(path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			set[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			set[slug] = true
		}
		seen[slug]++
	}
	return set
}

// Slug is GitHub's anchor for a heading's text.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// outboxctlCommands returns the commands of cmd/outboxctl: the string cases
// of its lookup function (nil when the module has no cmd/outboxctl).
func outboxctlCommands(root string) (map[string]bool, error) {
	dir := filepath.Join(root, "cmd", "outboxctl")
	if _, err := os.Stat(dir); err != nil {
		return nil, nil
	}
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Name.Name != "lookup" {
					continue
				}
				ast.Inspect(fn, func(n ast.Node) bool {
					if cc, ok := n.(*ast.CaseClause); ok {
						for _, e := range cc.List {
							if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
								out[strings.Trim(lit.Value, "`\"")] = true
							}
						}
					}
					return true
				})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("docscheck: cmd/outboxctl: no commands found in its lookup function")
	}
	return out, nil
}
