// Command apisurface counts the exported identifiers of dynop's public
// API, the number issue 22 ("a smaller public surface") tracks: every
// name a user of the module can reach is something to document, keep
// compatible and test, so the aim is well under 600 declarations.
//
// What it printed (TOTAL / DECLARATIONS):
//
//	7bf6a7e  1130 / 781  when issue 22 was filed (it counted 782)
//	cbf6353  1136 / 787  before the work on issue 22
//	88d24f4  1163 / 814  one ABI runtime landed; schema aliases added
//	         987 / 674  aliases, re-exports and sibling-only names gone
//
// The rest is mostly vocabulary a user writes: 40 CPU feature constants,
// tensor dtypes and codes, schema argument types, sentinel errors, the
// methods of Tensor and Batch.
//
// Usage:
//
//	go run ./internal/tools/apisurface [-v] [dir]
//
// dir is the module root (default "."); its go.mod names the module.
// The public API is every package under it except:
//
//   - packages with an element "internal" in their path, which nothing
//     outside the module can import;
//   - the top-level directories examples, cmd, plugins and docs, which
//     hold programs, plugins and documentation, not library code;
//   - directories called testdata or vendor, hidden directories and
//     those whose name starts with "_" (the go tool ignores them too),
//     and nested modules, such as bench, which have a go.mod of their
//     own;
//   - main packages.
//
// Files ending in _test.go are skipped. Build constraints do not
// exclude a file unless no build configuration at all could include it
// (as with "//go:build ignore"): the files of every GOOS and GOARCH
// count, with any set of other tags, so the guest package's _wasip1.go
// files count on a Linux host. A name declared in several such files
// counts once per package.
//
// Counted, per package:
//
//   - exported top-level functions ("func Open");
//   - exported methods of exported types ("method (*Host).Close",
//     "method Desc.String"); methods of unexported types do not
//     count: other packages reach them only through values the package
//     hands out, usually as an interface, whose methods count there;
//   - exported types, aliases included ("type Options");
//   - exported constants and variables, each name ("const CPU",
//     "var ErrClosed");
//   - exported fields of exported struct types, embedded ones by their
//     type's name ("field Options.Paths");
//   - exported methods of exported interface types ("imethod
//     Provider.Provide"); embedded interfaces and type-set terms add
//     nothing of their own.
//
// The output is one line per package, "COUNT  importpath", most
// identifiers first, then "TOTAL N", then "DECLARATIONS M": the count
// without struct fields and interface methods, the way issue 22 counted
// (782 at commit 7bf6a7e). With -v each package's identifiers follow
// it, one per line, indented.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list every identifier under its package")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: apisurface [-v] [dir]\n\nCounts the exported identifiers of the public packages of the module rooted at dir (default \".\").\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	root := "."
	switch flag.NArg() {
	case 0:
	case 1:
		root = flag.Arg(0)
	default:
		flag.Usage()
		os.Exit(2)
	}
	s, err := Count(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apisurface:", err)
		os.Exit(1)
	}
	if err := s.Write(os.Stdout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "apisurface:", err)
		os.Exit(1)
	}
}

// Surface is the public API of a module: its packages, most
// identifiers first (ties by import path).
type Surface struct {
	// Module is the module path go.mod declares.
	Module string
	// Packages are the public packages that declare at least one file;
	// a package with no exported identifier is listed with none.
	Packages []Package
}

// Package is one public package and its exported identifiers.
type Package struct {
	// ImportPath is the package's import path.
	ImportPath string
	// Idents are the package's exported identifiers as -v prints them,
	// such as "func Open" or "field Options.Paths", sorted, each once.
	Idents []string
}

// Total returns the number of identifiers of every package.
func (s *Surface) Total() int {
	n := 0
	for _, p := range s.Packages {
		n += len(p.Idents)
	}
	return n
}

// Declarations returns the number of identifiers that are not struct
// fields or interface methods: the functions, methods, types, constants
// and variables that a package declares. Issue 22 counted the surface
// this way (782 at commit 7bf6a7e, where this count gives 781).
func (s *Surface) Declarations() int {
	n := 0
	for _, p := range s.Packages {
		for _, id := range p.Idents {
			if !strings.HasPrefix(id, "field ") && !strings.HasPrefix(id, "imethod ") {
				n++
			}
		}
	}
	return n
}

// Write prints s as the command does: "COUNT  importpath" per package,
// then "TOTAL N" and "DECLARATIONS M" (see [Surface.Declarations]);
// verbose lists each package's identifiers under it.
func (s *Surface) Write(w io.Writer, verbose bool) error {
	bw := bufio.NewWriter(w)
	for _, p := range s.Packages {
		fmt.Fprintf(bw, "%d  %s\n", len(p.Idents), p.ImportPath)
		if verbose {
			for _, id := range p.Idents {
				fmt.Fprintf(bw, "\t%s\n", id)
			}
		}
	}
	fmt.Fprintf(bw, "TOTAL %d\n", s.Total())
	fmt.Fprintf(bw, "DECLARATIONS %d (without struct fields and interface methods)\n", s.Declarations())
	return bw.Flush()
}

// skipTop are the top-level directories that hold no library code.
var skipTop = map[string]bool{"examples": true, "cmd": true, "plugins": true, "docs": true}

// Count returns the public API of the module rooted at root, as the
// package comment defines it.
func Count(root string) (*Surface, error) {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	s := &Surface{Module: module}
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." {
			name := d.Name()
			if name == "testdata" || name == "internal" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				(!strings.Contains(rel, "/") && skipTop[name]) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		importPath := module
		if rel != "." {
			importPath = path.Join(module, rel)
		}
		idents, ok, err := countDir(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", importPath, err)
		}
		if ok {
			s.Packages = append(s.Packages, Package{ImportPath: importPath, Idents: idents})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(s.Packages, func(a, b Package) int {
		if d := len(b.Idents) - len(a.Idents); d != 0 {
			return d
		}
		return strings.Compare(a.ImportPath, b.ImportPath)
	})
	return s, nil
}

// modulePath reads the module path from a go.mod file.
func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			if p, err := strconv.Unquote(f[1]); err == nil {
				return p, nil
			}
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// countDir returns the exported identifiers of the package in dir, and
// false if dir holds no Go files that count or only a main package.
func countDir(dir string) (idents []string, ok bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	pkgs := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, false, err
		}
		expr, err := buildConstraint(f)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		if !anyConfig(name, expr) {
			continue
		}
		files = append(files, f)
		pkgs[f.Name.Name] = true
	}
	if len(files) == 0 || pkgs["main"] && len(pkgs) == 1 {
		return nil, false, nil
	}
	if len(pkgs) > 1 {
		names := make([]string, 0, len(pkgs))
		for p := range pkgs {
			names = append(names, p)
		}
		slices.Sort(names)
		return nil, false, fmt.Errorf("files of several packages: %s", strings.Join(names, ", "))
	}
	set := map[string]bool{}
	for _, f := range files {
		for _, id := range exported(f) {
			set[id] = true
		}
	}
	idents = make([]string, 0, len(set))
	for id := range set {
		idents = append(idents, id)
	}
	slices.Sort(idents)
	return idents, true, nil
}

// exported returns the exported identifiers one file declares.
func exported(f *ast.File) []string {
	var ids []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || len(d.Recv.List) == 0 {
				ids = append(ids, "func "+d.Name.Name)
				continue
			}
			typ, ptr := receiver(d.Recv.List[0].Type)
			if !token.IsExported(typ) {
				continue
			}
			if ptr {
				ids = append(ids, fmt.Sprintf("method (*%s).%s", typ, d.Name.Name))
			} else {
				ids = append(ids, fmt.Sprintf("method %s.%s", typ, d.Name.Name))
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					if !sp.Name.IsExported() {
						continue
					}
					ids = append(ids, "type "+sp.Name.Name)
					if sp.Assign.IsValid() {
						continue // an alias: its fields and methods are another type's
					}
					switch t := sp.Type.(type) {
					case *ast.StructType:
						for _, field := range t.Fields.List {
							for _, name := range fieldNames(field) {
								if token.IsExported(name) {
									ids = append(ids, fmt.Sprintf("field %s.%s", sp.Name.Name, name))
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range t.Methods.List {
							if _, ok := m.Type.(*ast.FuncType); !ok {
								continue // an embedded interface or a type-set term
							}
							for _, name := range m.Names {
								if name.IsExported() {
									ids = append(ids, fmt.Sprintf("imethod %s.%s", sp.Name.Name, name.Name))
								}
							}
						}
					}
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, name := range sp.Names {
						if name.IsExported() {
							ids = append(ids, kind+" "+name.Name)
						}
					}
				}
			}
		}
	}
	return ids
}

// receiver returns the name of a method's receiver type, without type
// parameters, and whether the receiver is a pointer.
func receiver(expr ast.Expr) (name string, ptr bool) {
	for {
		switch t := expr.(type) {
		case *ast.StarExpr:
			expr, ptr = t.X, true
		case *ast.ParenExpr:
			expr = t.X
		case *ast.IndexExpr:
			expr = t.X
		case *ast.IndexListExpr:
			expr = t.X
		case *ast.Ident:
			return t.Name, ptr
		default:
			return "", ptr
		}
	}
}

// fieldNames returns the names of a struct field declaration: its
// names, or for an embedded field the name of its type.
func fieldNames(field *ast.Field) []string {
	if len(field.Names) > 0 {
		names := make([]string, len(field.Names))
		for i, n := range field.Names {
			names[i] = n.Name
		}
		return names
	}
	expr := field.Type
	for {
		switch t := expr.(type) {
		case *ast.StarExpr:
			expr = t.X
		case *ast.ParenExpr:
			expr = t.X
		case *ast.IndexExpr:
			expr = t.X
		case *ast.IndexListExpr:
			expr = t.X
		case *ast.SelectorExpr:
			return []string{t.Sel.Name}
		case *ast.Ident:
			return []string{t.Name}
		default:
			return nil
		}
	}
}

// buildConstraint returns the file's build constraint, nil if it has
// none: its //go:build line, or failing that its // +build lines.
func buildConstraint(f *ast.File) (constraint.Expr, error) {
	var plus []constraint.Expr
	for _, group := range f.Comments {
		if group.Pos() >= f.Package {
			break
		}
		for _, c := range group.List {
			switch {
			case constraint.IsGoBuild(c.Text):
				return constraint.Parse(c.Text)
			case constraint.IsPlusBuild(c.Text):
				x, err := constraint.Parse(c.Text)
				if err != nil {
					return nil, err
				}
				plus = append(plus, x)
			}
		}
	}
	if len(plus) == 0 {
		return nil, nil
	}
	x := plus[0]
	for _, y := range plus[1:] {
		x = &constraint.AndExpr{X: x, Y: y}
	}
	return x, nil
}

// platforms are the GOOS/GOARCH pairs of `go tool dist list`.
var platforms = strings.Fields(`aix/ppc64 android/386 android/amd64 android/arm android/arm64
	darwin/amd64 darwin/arm64 dragonfly/amd64 freebsd/386 freebsd/amd64 freebsd/arm freebsd/arm64
	illumos/amd64 ios/amd64 ios/arm64 js/wasm linux/386 linux/amd64 linux/arm
	linux/arm64 linux/loong64 linux/mips linux/mips64 linux/mips64le linux/mipsle linux/ppc64
	linux/ppc64le linux/riscv64 linux/s390x netbsd/386 netbsd/amd64 netbsd/arm netbsd/arm64
	openbsd/386 openbsd/amd64 openbsd/arm openbsd/arm64 openbsd/ppc64 openbsd/riscv64 plan9/386
	plan9/amd64 plan9/arm solaris/amd64 wasip1/wasm windows/386 windows/amd64 windows/arm64`)

// knownOS and knownArch are the names go/build treats as GOOS and
// GOARCH in file names and build tags (its syslist).
var (
	knownOS = set(`aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd
		openbsd plan9 solaris wasip1 windows zos`)
	knownArch = set(`386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64
		mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm`)
	unixOS = set(`aix android darwin dragonfly freebsd hurd illumos ios linux netbsd openbsd solaris`)
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// osMatches reports whether name, a GOOS in a file name or tag, matches goos,
// with go/build's implications: android is also linux, illumos also
// solaris, ios also darwin.
func osMatches(name, goos string) bool {
	return name == goos || name == "linux" && goos == "android" ||
		name == "solaris" && goos == "illumos" || name == "darwin" && goos == "ios"
}

// anyConfig reports whether some build configuration includes the
// file called name with constraint expr (nil: none): some platform of
// `go tool dist list` its name's _GOOS/_GOARCH suffix and expr allow,
// with any values of the tags other than GOOS, GOARCH and unix, except
// "ignore", which is never set.
func anyConfig(name string, expr constraint.Expr) bool {
	var free []string
	if expr != nil {
		seen := map[string]bool{}
		var walk func(constraint.Expr)
		walk = func(x constraint.Expr) {
			switch x := x.(type) {
			case *constraint.AndExpr:
				walk(x.X)
				walk(x.Y)
			case *constraint.OrExpr:
				walk(x.X)
				walk(x.Y)
			case *constraint.NotExpr:
				walk(x.X)
			case *constraint.TagExpr:
				t := x.Tag
				if !seen[t] && !knownOS[t] && !knownArch[t] && t != "unix" && t != "ignore" {
					seen[t] = true
					free = append(free, t)
				}
			}
		}
		walk(expr)
		if len(free) > 16 {
			return true // too many to try; no real file has that many
		}
	}
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		if !nameMatches(name, goos, goarch) {
			continue
		}
		if expr == nil {
			return true
		}
		for bits := 0; bits < 1<<len(free); bits++ {
			ok := expr.Eval(func(tag string) bool {
				switch {
				case tag == "ignore":
					return false
				case tag == "unix":
					return unixOS[goos]
				case knownOS[tag]:
					return osMatches(tag, goos)
				case knownArch[tag]:
					return tag == goarch
				}
				i := slices.Index(free, tag)
				return i >= 0 && bits&(1<<i) != 0
			})
			if ok {
				return true
			}
		}
	}
	return false
}

// nameMatches applies go/build's file name rule: name_GOOS_GOARCH.go,
// name_GOOS.go and name_GOARCH.go build only for that GOOS and GOARCH.
func nameMatches(name, goos, goarch string) bool {
	name = strings.TrimSuffix(name, ".go")
	i := strings.Index(name, "_")
	if i < 0 {
		return true
	}
	l := strings.Split(name[i:], "_")
	n := len(l)
	if n >= 2 && knownOS[l[n-2]] && knownArch[l[n-1]] {
		return osMatches(l[n-2], goos) && l[n-1] == goarch
	}
	if knownOS[l[n-1]] {
		return osMatches(l[n-1], goos)
	}
	if knownArch[l[n-1]] {
		return l[n-1] == goarch
	}
	return true
}
