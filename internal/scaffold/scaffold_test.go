package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every template renders completely: no delimiter or missing value left,
// the plugin's names in place, the files the README lists present.
func TestGenerateEveryLanguage(t *testing.T) {
	for _, lang := range Languages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			p, err := Generate(Options{Name: "glow", Vendor: "acme", Lang: lang, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != "acme.plugin.glow" || p.Op != "glow.Brighten" || len(p.Commands) != 3 {
				t.Errorf("project %+v", p)
			}
			if (p.Interface == "") != (lang == "go-wasm") {
				t.Errorf("interface %q for %s", p.Interface, lang)
			}
			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Commands {
				if !strings.Contains(string(readme), c.Line) {
					t.Errorf("README lacks the command %q", c.Line)
				}
			}
			// Files the README's table names exist.
			for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(string(readme), -1) {
				if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
					t.Errorf("README lists %s: %v", m[1], err)
				}
			}
			for _, f := range p.Files {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(f, ".png") || f == "go.sum" {
					continue
				}
				for _, bad := range []string{"[[", "<no value>"} {
					if bad == "[[" && strings.HasSuffix(f, ".rs") {
						continue // Rust attributes may nest brackets
					}
					if strings.Contains(string(b), bad) && f != "include/dynop/dynop.h" {
						t.Errorf("%s has %q", f, bad)
					}
				}
				if strings.Contains(f, "NAME") || strings.HasSuffix(f, ".tmpl") {
					t.Errorf("file name %s was not rendered", f)
				}
			}
		})
	}
}

// Each project gets an interface UID of its own, a version 4 UUID.
func TestUIDsAreFresh(t *testing.T) {
	a, err := newData(Options{Name: "a", Vendor: "v", Lang: "c"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newData(Options{Name: "a", Vendor: "v", Lang: "c"})
	if a.UID == b.UID {
		t.Errorf("two projects share UID %s", a.UID)
	}
	if !regexp.MustCompile(`^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$`).MatchString(a.UID) {
		t.Errorf("UID %s is not a version 4 UUID", a.UID)
	}
	if !strings.HasPrefix(a.UIDArgs, "0x"+a.UID[:8]+", 0x"+a.UID[9:13]) {
		t.Errorf("DYNOP_UID arguments %s do not match %s", a.UIDArgs, a.UID)
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"blur": true, "blur2": true, "my_blur": true, strings.Repeat("a", 32): true,
		"": false, "type": false, "fn": false, "std": false, "test": false, "main": false, "dynop": false, "Blur": false, "2blur": false, "my-blur": false, "my.blur": false, "_x": false, strings.Repeat("a", 33): false,
	} {
		err := CheckName("plugin name", name)
		if (err == nil) != ok {
			t.Errorf("%q: got %v, want ok=%v", name, err, ok)
		}
		if err != nil && (!errors.Is(err, ErrName) || !strings.Contains(err.Error(), NameRule)) {
			t.Errorf("%q: error %v does not wrap ErrName and state the rule", name, err)
		}
	}
}

// The Go templates need dynop's source; a directory that is not it is
// refused, naming it.
func TestDynopSource(t *testing.T) {
	src, err := dynopSource("")
	if err != nil {
		t.Fatalf("the tree this test was built from: %v", err)
	}
	if _, err := os.Stat(filepath.Join(src, "cli", "cli.go")); err != nil {
		t.Errorf("%s is not dynop's source: %v", src, err)
	}
	other := t.TempDir()
	_, err = Generate(Options{Name: "g", Lang: "go", Dir: filepath.Join(other, "p"), DynopSource: other})
	if !errors.Is(err, ErrNoModule) || !strings.Contains(err.Error(), other) {
		t.Errorf("got %v, want ErrNoModule naming %s", err, other)
	}
}

func TestIndirectRequires(t *testing.T) {
	mod := "module m\n\ngo 1.26\n\nrequire (\n\tb.org/x v1.0.0\n\ta.org/y v0.2.0 // indirect\n)\n\nrequire c.org/z v3.0.0\n"
	got := indirectRequires([]byte(mod))
	want := "require (\n\ta.org/y v0.2.0 // indirect\n\tb.org/x v1.0.0 // indirect\n\tc.org/z v3.0.0 // indirect\n)\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got\n%s\nwant it to end with\n%s", got, want)
	}
	if indirectRequires([]byte("module m\n")) != "" {
		t.Error("a go.mod without requirements gave a block")
	}
}

// The dynop crate is found where the flag or the variable says, else
// beside an installed dynop (symbolic links resolved), else in the
// source tree; a wrong directory, or none found, is an error that names
// the places and the ways to choose one.
func TestFindRustCrate(t *testing.T) {
	crate := func(dir, name string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package]\nname = \""+name+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	root := t.TempDir()
	prefix := filepath.Join(root, "usr")
	installed := crate(filepath.Join(prefix, "share", "dynop", "rust"), "dynop")
	exe := filepath.Join(prefix, "bin", "dynop")
	crate(filepath.Dir(exe), "bin") // the directory, and a Cargo.toml that is not the crate's
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "elsewhere", "dynop") // a link to the installed dynop
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "src")
	inTree := crate(filepath.Join(src, "abi", "rust"), "dynop")
	other := crate(filepath.Join(root, "other"), "other")
	flag := crate(filepath.Join(root, "flag"), "dynop")
	env := crate(filepath.Join(root, "env"), "dynop")

	for _, c := range []struct {
		name                string
		flag, env, exe, src string
		want                string
	}{
		{"flag first", flag, env, exe, src, flag},
		{"then the variable", "", env, exe, src, env},
		{"then installed", "", "", exe, src, installed},
		{"through a link", "", "", link, src, installed},
		{"then the source tree", "", "", filepath.Join(root, "bin", "dynop"), src, inTree},
		{"the source tree only", "", "", "", src, inTree},
	} {
		exe := c.exe
		if real, err := filepath.EvalSymlinks(exe); err == nil { // as rustCrate does
			exe = real
		}
		got, err := findRustCrate(c.flag, c.env, exe, c.src)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %s", c.name, got, err, c.want)
		}
	}

	for _, c := range []struct {
		name                string
		flag, env, exe, src string
		want                []string
	}{
		{"flag not the crate", other, env, exe, src, []string{other, "(--dynop-crate)", "no Cargo.toml of the package dynop", "abi/rust"}},
		{"variable not a directory", "", filepath.Join(root, "nope"), exe, src, []string{filepath.Join(root, "nope"), "($DYNOP_RUST_CRATE)"}},
		{"nowhere", "", "", filepath.Join(root, "bin", "dynop"), root, []string{
			filepath.Join(root, "share", "dynop", "rust") + " (beside this dynop, " + filepath.Join(root, "bin", "dynop") + ")",
			filepath.Join(root, "abi", "rust") + " (the tree this dynop was built from)",
			"--dynop-crate DIR", "DYNOP_RUST_CRATE=DIR"}},
		{"no places", "", "", "", "", []string{"this dynop cannot tell where it is", "--dynop-crate DIR"}},
	} {
		_, err := findRustCrate(c.flag, c.env, c.exe, c.src)
		if !errors.Is(err, ErrNoCrate) {
			t.Errorf("%s: got %v, want ErrNoCrate", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}

	// Generate: the Rust project's Cargo.toml depends on the crate it
	// found, and a wrong one writes nothing.
	dir := filepath.Join(t.TempDir(), "p")
	t.Setenv(EnvRustCrate, "")
	if _, err := Generate(Options{Name: "glow", Lang: "rust", Dir: dir, RustCrate: filepath.Join(root, `we"ird\dir`)}); !errors.Is(err, ErrNoCrate) {
		t.Errorf("a wrong crate: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a wrong crate: %s written", dir)
	}
	if _, err := Generate(Options{Name: "glow", Lang: "rust", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rustCrate("")
	if !strings.Contains(string(toml), "\ndynop = { path = "+tomlString(filepath.ToSlash(want))+" }\n") {
		t.Errorf("Cargo.toml does not depend on %s:\n%s", want, toml)
	}
}

func TestTomlString(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/share/dynop/rust": `"/usr/share/dynop/rust"`,
		`C:\dynop "x"`:          `"C:\\dynop \"x\""`,
		"tab\there é":           `"tab\u0009here é"`,
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// The Makefiles run the dynop that wrote the project, else the one on
// PATH; a path a Makefile cannot hold leaves the one on PATH.
func TestMakefilesNameTheirDynop(t *testing.T) {
	for _, lang := range []string{"c", "cpp", "go-wasm"} {
		for dynop, want := range map[string]string{
			"/opt/dynop-1.2/bin/dynop": "DYNOP ?= $(or $(wildcard /opt/dynop-1.2/bin/dynop),$(shell command -v dynop),$(error dynop not found: not at /opt/dynop-1.2/bin/dynop, the dynop that wrote this project, nor on PATH; say which with make DYNOP=/path/to/dynop))\n",
			"/opt/my dynop/dynop":      "DYNOP ?= $(or $(shell command -v dynop),$(error dynop not found: it is not on PATH; say which with make DYNOP=/path/to/dynop))\n",
			"/opt/$HOME/dynop":         "DYNOP ?= $(or $(shell command -v dynop),$(error",
			"":                         "DYNOP ?= $(or $(shell command -v dynop),$(error",
		} {
			dir := filepath.Join(t.TempDir(), "p")
			if _, err := Generate(Options{Name: "glow", Lang: lang, Dir: dir, Dynop: dynop}); err != nil {
				t.Fatal(err)
			}
			mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(mk), "\n"+want) {
				t.Errorf("%s, dynop %q: the Makefile lacks\n%s\n%s", lang, dynop, want, mk)
			}
			if strings.Count(string(mk), "DYNOP ?=") != 1 || !strings.Contains(string(mk), "make DYNOP=/path/to/dynop.\n") {
				t.Errorf("%s: want one DYNOP ?= line, and a comment on make DYNOP=:\n%s", lang, mk)
			}
		}
	}
}
