package dynop_test

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// A text format for plugin files, loaded by a test loader: the magic
// line, then "id=<plugin id>".
const testMagic = "#dynop-test-plugin\n"

func init() {
	dynop.RegisterLoader("test", testMagic, func(ctx context.Context, path string) (plugin.Plugin, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Scan() // the magic
		sc.Scan()
		id, ok := strings.CutPrefix(sc.Text(), "id=")
		if !ok {
			return nil, errors.New("test loader: no id= line")
		}
		return &filePlugin{simple{id: id, desc: counterDef.Desc}, path}, nil
	})
}

// simple is a plugin that provides desc with a counter.
type simple struct {
	id   string
	desc iface.Desc
}

func (s simple) Info() plugin.Info {
	return plugin.Info{ID: s.id, Version: iface.V(1, 0, 0), Interfaces: []iface.Desc{s.desc}}
}

func (s simple) Register(ctx context.Context, h plugin.Host) error {
	return h.AddInterface(s.desc, &counter{name: s.id})
}

// filePlugin is a simple plugin loaded from a file.
type filePlugin struct {
	simple
	path string
}

func (p *filePlugin) Path() string { return p.path }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, path string
		target     error
		want       []string
	}{
		{"missing", filepath.Join(dir, "nothere.so"), fs.ErrNotExist, []string{"nothere.so"}},
		{"directory", dir, dynop.ErrFormat, []string{"is a directory"}},
		{"empty", writeFile(t, dir, "empty.so", ""), dynop.ErrFormat, []string{"empty.so", "it is empty"}},
		{"unknown format", writeFile(t, dir, "text.so", "hello, world"), dynop.ErrFormat, []string{`it starts with "hello, world"`, "no plugin format"}},
		{"ELF without its loader", writeFile(t, dir, "lib.so", "\x7fELF\x02\x01\x01"), dynop.ErrFormat,
			[]string{"an ELF file", `import _ "github.com/dynop/dynop/loader/native"`}},
		{"wasm without its loader", writeFile(t, dir, "p.wasm", "\x00asm\x01\x00\x00\x00"), dynop.ErrFormat,
			[]string{"a WebAssembly module", "loader/wasm"}},
		{"loader's own error", writeFile(t, dir, "noid.txt", testMagic+"name=x\n"), nil, []string{"no id= line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := dynop.LoadFile(context.Background(), c.path)
			if p != nil {
				t.Error("LoadFile returned a plugin")
			}
			wantErr(t, err, c.target, c.want...)
		})
	}
}

// TestOpenPaths: files that load become plugins with their path; files
// that do not, or whose ID is taken, are listed by Broken in order, and the
// host serves the rest.
func TestOpenPaths(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", testMagic+"id=test.plugin.file\n")
	again := writeFile(t, dir, "again.txt", testMagic+"id=test.plugin.file\n")
	shadow := writeFile(t, dir, "shadow.txt", testMagic+"id=test.plugin.go\n")
	junk := writeFile(t, dir, "junk.txt", "junk")
	h, err := dynop.Open(context.Background(), dynop.Options{
		Paths:        []string{good, again, junk, shadow},
		Plugins:      []plugin.Plugin{simple{"test.plugin.go", counterDef.Desc}},
		NoRegistered: true,
		Logger:       testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	broken := h.Broken()
	if len(broken) != 3 {
		t.Fatalf("Broken() = %v, want 3 entries", broken)
	}
	for i, c := range []struct {
		path   string
		target error
		want   string
	}{
		{again, dynop.ErrDuplicate, good + " has it already"},
		{junk, dynop.ErrFormat, "no plugin format"},
		{shadow, dynop.ErrDuplicate, "a Go plugin compiled into the program has it already"},
	} {
		if broken[i].Path != c.path {
			t.Errorf("Broken()[%d].Path = %s, want %s", i, broken[i].Path, c.path)
		}
		wantErr(t, broken[i].Err, c.target, c.want)
	}
	st, err := h.Plugin("test.plugin.file")
	if err != nil || st.Path != good {
		t.Fatalf("Plugin(test.plugin.file) = %+v, %v; want it from %s", st, err, good)
	}
	if st, _ := h.Plugin("test.plugin.go"); st.Path != "" {
		t.Errorf("a compiled-in plugin has Path %q, want none", st.Path)
	}
	c, ref, err := dynop.Acquire(context.Background(), h, "test.plugin.file", counterDef)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "test.plugin.file" {
		t.Errorf("got the counter of %s", c.Name())
	}
	release(t, ref)
}

// TestConflictingUIDs: two plugins that give one UID different names are
// both unusable, with a reason naming both; a plugin that gives it the
// same name as one of them is unaffected only if it shares no conflict.
func TestConflictingUIDs(t *testing.T) {
	other := iface.Desc{UID: counterDef.UID, Name: "test.NotACounter", Version: iface.V(1, 0, 0)}
	h := open(t,
		simple{"test.plugin.a", counterDef.Desc},
		simple{"test.plugin.b", other},
		newFake(nil, "test.plugin.unrelated"),
	)
	defer h.Close(context.Background())
	for _, id := range []string{"test.plugin.a", "test.plugin.b"} {
		st, _ := h.Plugin(id)
		if st.State != dynop.StateUnusable {
			t.Errorf("%s: %v, want unusable", id, st.State)
		}
		wantErr(t, st.Err, dynop.ErrDuplicate, `"test.Counter" by test.plugin.a`, `"test.NotACounter" by test.plugin.b`, "a UID must name one interface")
	}
}

func TestRegisterLoaderRejectsMisuse(t *testing.T) {
	for _, c := range []struct {
		name, magic string
		load        dynop.LoadFunc
	}{
		{"test", "other magic", func(context.Context, string) (plugin.Plugin, error) { return nil, nil }},
		{"", "m", func(context.Context, string) (plugin.Plugin, error) { return nil, nil }},
		{"x", "", func(context.Context, string) (plugin.Plugin, error) { return nil, nil }},
		{"y", "m", nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterLoader(%q, %q, ...) did not panic", c.name, c.magic)
				}
			}()
			dynop.RegisterLoader(c.name, c.magic, c.load)
		}()
	}
}
