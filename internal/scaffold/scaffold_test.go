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
		"": false, "type": false, "fn": false, "std": false, "test": false, "main": false, "Blur": false, "2blur": false, "my-blur": false, "my.blur": false, "_x": false, strings.Repeat("a", 33): false,
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
