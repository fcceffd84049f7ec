package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree writes files, keyed by slash-separated paths, under a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fixture is a small module with one of each thing Count must count
// or leave out.
var fixture = map[string]string{
	"go.mod":  "module example.com/fix // a comment\n\ngo 1.26\n",
	"root.go": "package fix\n\nfunc Root() {}\nfunc helper() {}\n",
	"a/a.go": `package a

import "io"

const (
	Big = 1 << iota
	Small
	hidden
)

var ErrA, errB = io.EOF, io.EOF

type Options struct {
	Paths    []string
	Max, Min int
	secret   bool
	io.Reader
	*Inner
	inner
}

type Inner struct{ X int }

type inner struct{ Y int }

func (o *Options) Close() error  { return nil }
func (o Options) String() string { return "" }
func (o *Options) reset()        {}
func (i inner) Exported()        {}
func (i *inner) Pointer()        {}

type Provider interface {
	io.Closer
	Provide() error
	hidden()
}

type Box[T any] struct{ V T }

func (b *Box[T]) Get() T { return b.V }

type Pair[K comparable, V any] struct{}

func (p Pair[K, V]) Len() int { return 0 }

type Alias = Inner

type Number interface{ ~int | ~float64 }

func Open() {}
func init()  {}
`,
	"a/a_linux.go":            "package a\n\nfunc Platform() string { return \"linux\" }\n",
	"a/a_windows.go":          "package a\n\nfunc Platform() string { return \"windows\" }\n",
	"a/x_wasip1.go":           "package a\n\nfunc Guest() {}\n",
	"a/race.go":               "//go:build race\n\npackage a\n\nfunc Race() {}\n",
	"a/gen.go":                "//go:build ignore\n\npackage main\n\nfunc Main() {}\n",
	"a/never.go":              "//go:build linux && windows\n\npackage a\n\nfunc Never() {}\n",
	"a/odd_linux.go":          "//go:build !linux\n\npackage a\n\nfunc Impossible() {}\n",
	"a/old.go":                "// +build plan9\n// +build !plan9\n\npackage a\n\nfunc PlusBuild() {}\n",
	"a/a_test.go":             "package a\n\nfunc TestHelper() {}\n",
	"a/ext_test.go":           "package a_test\n\nfunc External() {}\n",
	"a/_skip.go":              "package a\n\nfunc Underscore() {}\n",
	"a/testdata/t.go":         "package t\n\nfunc T() {}\n",
	"a/internal/deep/deep.go": "package deep\n\nfunc Deep() {}\n",
	"b/b.go":                  "package b\n\nfunc B() {}\n\ntype T int\n\nfunc (T) M() {}\n",
	"b/cmd/c.go":              "package cmd\n\nfunc C() {}\n",
	"c/doc.go":                "// Package c has nothing exported.\npackage c\n",
	"internal/x/x.go":         "package x\n\nfunc X() {}\n",
	"cmd/tool/main.go":        "package main\n\nfunc main() {}\n",
	"examples/e/e.go":         "package e\n\nfunc E() {}\n",
	"plugins/p/p.go":          "package p\n\nfunc P() {}\n",
	"docs/d/d.go":             "package d\n\nfunc D() {}\n",
	"tool/main.go":            "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
	"testdata/t.go":           "package t\n\nfunc T() {}\n",
	".hidden/h.go":            "package h\n\nfunc H() {}\n",
	"nested/go.mod":           "module example.com/nested\n",
	"nested/n.go":             "package nested\n\nfunc N() {}\n",
	"empty/README":            "no Go here\n",
}

func TestCount(t *testing.T) {
	s, err := Count(writeTree(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	if s.Module != "example.com/fix" {
		t.Errorf("module %q, want example.com/fix", s.Module)
	}
	want := []Package{
		{"example.com/fix/a", []string{
			"const Big", "const Small",
			"field Box.V", "field Inner.X",
			"field Options.Inner", "field Options.Max", "field Options.Min", "field Options.Paths", "field Options.Reader",
			"func Guest", "func Open", "func Platform", "func Race",
			"imethod Provider.Provide",
			"method (*Box).Get", "method (*Options).Close", "method Options.String", "method Pair.Len",
			"type Alias", "type Box", "type Inner", "type Number", "type Options", "type Pair", "type Provider",
			"var ErrA",
		}},
		{"example.com/fix/b", []string{"func B", "method T.M", "type T"}},
		{"example.com/fix", []string{"func Root"}},
		{"example.com/fix/b/cmd", []string{"func C"}},
		{"example.com/fix/c", []string{}},
	}
	if !slices.EqualFunc(s.Packages, want, func(a, b Package) bool {
		return a.ImportPath == b.ImportPath && slices.Equal(a.Idents, b.Idents)
	}) {
		t.Errorf("got packages\n%v\nwant\n%v", s.Packages, want)
	}
	if got := s.Total(); got != 31 {
		t.Errorf("total %d, want 31", got)
	}
	// The want list above holds seven fields and one interface method.
	if got := s.Declarations(); got != 23 {
		t.Errorf("declarations %d, want 23", got)
	}

	var out bytes.Buffer
	if err := s.Write(&out, false); err != nil {
		t.Fatal(err)
	}
	const wantOut = "26  example.com/fix/a\n3  example.com/fix/b\n1  example.com/fix\n1  example.com/fix/b/cmd\n0  example.com/fix/c\nTOTAL 31\nDECLARATIONS 23 (without struct fields and interface methods)\n"
	if out.String() != wantOut {
		t.Errorf("output\n%s\nwant\n%s", out.String(), wantOut)
	}
	out.Reset()
	if err := s.Write(&out, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "3  example.com/fix/b\n\tfunc B\n\tmethod T.M\n\ttype T\n1  example.com/fix\n\tfunc Root\n") {
		t.Errorf("verbose output lacks b's identifiers:\n%s", out.String())
	}
}

func TestCountErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no go.mod":      {"a.go": "package a\n"},
		"no module line": {"go.mod": "go 1.26\n"},
		"two packages":   {"go.mod": "module m\n", "x/a.go": "package a\n", "x/b.go": "package b\n"},
		"syntax error":   {"go.mod": "module m\n", "x/a.go": "package a\n\nfunc {\n"},
		"bad constraint": {"go.mod": "module m\n", "x/a.go": "//go:build linux &&\n\npackage a\n"},
	} {
		if s, err := Count(writeTree(t, files)); err == nil {
			t.Errorf("%s: no error, got %v", name, s.Packages)
		}
	}
}

func TestNameMatches(t *testing.T) {
	for _, tc := range []struct {
		name, goos, goarch string
		want               bool
	}{
		{"linux.go", "windows", "amd64", true}, // no underscore: no constraint
		{"x_linux.go", "linux", "arm64", true},
		{"x_linux.go", "android", "arm64", true},
		{"x_linux.go", "darwin", "arm64", false},
		{"x_linux_amd64.go", "linux", "arm64", false},
		{"x_linux_amd64.go", "linux", "amd64", true},
		{"x_arm64.go", "darwin", "arm64", true},
		{"x_arm64.go", "darwin", "amd64", false},
		{"x_wasip1.go", "wasip1", "wasm", true},
		{"x_other.go", "plan9", "386", true},
	} {
		if got := nameMatches(tc.name, tc.goos, tc.goarch); got != tc.want {
			t.Errorf("nameMatches(%q, %s, %s) = %v, want %v", tc.name, tc.goos, tc.goarch, got, tc.want)
		}
	}
}
