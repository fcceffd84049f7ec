package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewWritesAProject: dynop new writes the C project and says what
// to run next; flags may follow the name.
func TestNewWritesAProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	code, stdout, stderr := runCLI(t, "new", "blur", "--lang", "c", "--dir", dir, "--vendor", "acme", "--no-check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"plugin acme.plugin.blur", "operator blur.Brighten", "interface acme.blur.Brightness", "make test"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"Makefile", "README.md", "blur.h", "src/blur.c", "test/test_blur.c", "include/dynop/dynop.h", "pipeline.yaml", "images/sample.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// The Makefile runs the dynop that wrote it: here, this test.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "DYNOP ?= $(or $(wildcard "+filepath.ToSlash(exe)+"),$(shell command -v dynop),") {
		t.Errorf("the Makefile does not name the dynop that wrote it, %s:\n%s", exe, mk)
	}
}

// TestNewRustCrate: the Rust project's Cargo.toml depends on the crate
// --dynop-crate names, or else on $DYNOP_RUST_CRATE's.
func TestNewRustCrate(t *testing.T) {
	crate, err := filepath.Abs(filepath.Join("..", "abi", "rust"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DYNOP_RUST_CRATE", "")
	for _, args := range [][]string{{"--dynop-crate", crate}, {}} {
		if len(args) == 0 {
			t.Setenv("DYNOP_RUST_CRATE", crate)
		}
		dir := filepath.Join(t.TempDir(), "proj")
		code, _, stderr := runCLI(t, append([]string{"new", "--lang", "rust", "--no-check", "--dir", dir, "glow"}, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		toml, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "dynop = { path = \"" + filepath.ToSlash(crate) + "\" }"; !strings.Contains(string(toml), want) {
			t.Errorf("%q: Cargo.toml lacks %s:\n%s", args, want, toml)
		}
	}
}

// TestNewRefusesBadInput: each mistake is refused with an error that
// says what is wrong and what is expected, and writes nothing.
func TestNewRefusesBadInput(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"non-empty directory", []string{"--lang", "c", "--dir", full, "blur"}, 1,
			[]string{"not empty", full, "notes.txt", "--force"}},
		{"upper case", []string{"--lang", "c", "--dir", empty, "Blur"}, 1,
			[]string{`plugin name "Blur"`, "a lower-case letter, then lower-case letters, digits or '_'"}},
		{"dash", []string{"--lang", "c", "--dir", empty, "my-blur"}, 1, []string{`"my-blur"`, "lower-case letters, digits or '_'"}},
		{"digit first", []string{"--lang", "c", "--dir", empty, "9lives"}, 1, []string{`"9lives"`, "a lower-case letter"}},
		{"too long", []string{"--lang", "c", "--dir", empty, strings.Repeat("a", 33)}, 1, []string{"at most 32 characters"}},
		{"bad vendor", []string{"--lang", "c", "--dir", empty, "--vendor", "Acme Inc", "blur"}, 1, []string{`vendor "Acme Inc"`}},
		{"unknown language", []string{"--lang", "java", "blur"}, 1, []string{`unknown language "java"`, "c, cpp, go, go-wasm, rust"}},
		{"no language", []string{"blur"}, 2, []string{"--lang", "c, cpp, go, go-wasm, rust"}},
		{"no name", []string{"--lang", "c"}, 2, []string{"one plugin NAME, got 0"}},
		{"two names", []string{"--lang", "c", "a", "b"}, 2, []string{"one plugin NAME, got 2"}},
		{"go without dynop's source", []string{"--lang", "go", "--no-check", "--dir", empty, "--dynop", empty, "blur"}, 1,
			[]string{"no go.mod of module github.com/dynop/dynop", "--dynop DIR", "go template"}},
		{"rust with a wrong crate", []string{"--lang", "rust", "--no-check", "--dir", empty, "--dynop-crate", empty, "blur"}, 1,
			[]string{"dynop Rust crate not found", empty + " (--dynop-crate) has no Cargo.toml of the package dynop", "abi/rust"}},
		{"reserved name", []string{"--lang", "rust", "--no-check", "--dir", empty, "dynop"}, 1, []string{`plugin name "dynop"`, "or dynop"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"new"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, c.code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(empty); len(entries) > 0 {
		t.Errorf("refused commands wrote %d files into %s", len(entries), empty)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(b) != "mine" {
		t.Errorf("the non-empty directory's file changed: %q", b)
	}

	// --force writes over it, and leaves the file that is not the template's.
	if code, _, stderr := runCLI(t, "new", "--lang", "c", "--no-check", "--force", "--dir", full, "blur"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(full, "src", "blur.c")); err != nil {
		t.Errorf("--force did not write the project: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(b) != "mine" {
		t.Errorf("--force changed a file that is not the template's: %q", b)
	}
}

// TestNewNamesTheMissingToolchain: without the compilers on PATH, dynop
// new says which command is missing and which package installs it, and
// --no-check writes the project anyway.
func TestNewNamesTheMissingToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for lang, want := range map[string][]string{
		"c":       {"cc (Debian package gcc", "make (Debian package make)", "apt-get install gcc make"},
		"cpp":     {"c++ (Debian package g++", "apt-get install g++ make"},
		"go":      {"go (Debian package golang-go, or https://go.dev/dl)", "apt-get install golang-go gcc"},
		"go-wasm": {"apt-get install golang-go make"},
		"rust":    {"cargo (Debian package cargo, or rustup", "apt-get install cargo rustc"},
	} {
		dir := filepath.Join(t.TempDir(), "p")
		code, _, stderr := runCLI(t, "new", "--lang", lang, "--dir", dir, "blur")
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1: %s", lang, code, stderr)
		}
		for _, w := range append(want, "the "+lang+" template builds with", "--no-check") {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", lang, w, stderr)
			}
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: the refused command created %s", lang, dir)
		}
	}
	dir := filepath.Join(t.TempDir(), "p")
	if code, _, stderr := runCLI(t, "new", "--lang", "rust", "--no-check", "--dir", dir, "blur"); code != 0 {
		t.Fatalf("--no-check: exit %d: %s", code, stderr)
	}
}
