package dynop_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// A text format for plugin files, loaded by a test loader: the magic
// line, then "id=<plugin id>" and optionally "os=<GOOS>" (a requirement).
// The scanner child process is this test binary, which registers the
// loader from init and serves in TestMain.
const testMagic = "#dynop-test-plugin\n"

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}

func init() {
	dynop.RegisterLoader(dynop.Loader{
		Name:  "test",
		Magic: testMagic,
		Inspect: func(ctx context.Context, path string, _ *dynop.Options) (schema.Plugin, json.RawMessage, error) {
			f, err := os.Open(path)
			if err != nil {
				return schema.Plugin{}, nil, err
			}
			defer f.Close()
			s := simple{desc: counterDef.Desc}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				k, v, _ := strings.Cut(sc.Text(), "=")
				switch k {
				case "id":
					s.id = v
				case "os":
					s.os = v
				}
			}
			if s.id == "" {
				return schema.Plugin{}, nil, errors.New("test loader: no id= line")
			}
			return s.Info(), nil, nil
		},
		Plugin: func(f *discover.File, _ *dynop.Options) (plugin.Plugin, error) {
			return &filePlugin{simple{id: f.Info.ID, desc: counterDef.Desc, os: strings.Join(f.Info.Requirements.OS, "")}, f.Path}, nil
		},
	})
}

// simple is a plugin that provides desc with a counter.
type simple struct {
	id   string
	desc iface.Desc
	os   string // the OS it requires, if any
}

func (s simple) Info() schema.Plugin {
	info := schema.Plugin{ID: s.id, Version: iface.V(1, 0, 0), APIVersion: schema.APIVersion, Interfaces: []iface.Desc{s.desc}}
	if s.os != "" {
		info.Requirements.OS = []string{s.os}
	}
	return info
}

func (s simple) Start(ctx context.Context, h plugin.Registrar) error {
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

// openFiles opens a host over the Go plugins ps and the plugin files or
// directories paths, with a fresh registry cache.
func openFiles(t *testing.T, paths []string, ps ...plugin.Plugin) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(context.Background(), dynop.Options{
		Paths: paths, Plugins: ps, NoRegistered: true, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// byPath returns the status of the plugin found at path.
func byPath(t *testing.T, h *dynop.Host, path string) dynop.PluginStatus {
	t.Helper()
	for _, st := range h.Plugins() {
		if st.Path == path {
			return st
		}
	}
	t.Fatalf("no plugin from %s in %v", path, h.Plugins())
	return dynop.PluginStatus{}
}

// TestOpenBadFiles: files that are no plugin this host can load are
// listed as broken, with the reason, and never fail Open.
func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, path string
		target     error
		want       []string
	}{
		{"empty", writeFile(t, dir, "empty.so", ""), dynop.ErrFormat, []string{"empty.so", "it is empty"}},
		{"unknown format", writeFile(t, dir, "text.so", "hello, world"), dynop.ErrFormat, []string{`it starts with "hello, world"`, "no plugin format"}},
		{"ELF without its loader", writeFile(t, dir, "lib.so", "\x7fELF\x02\x01\x01"), dynop.ErrFormat,
			[]string{"an ELF file", `import _ "github.com/dynop/dynop/loader/native"`}},
		{"wasm without its loader", writeFile(t, dir, "p.wasm", "\x00asm\x01\x00\x00\x00"), dynop.ErrFormat,
			[]string{"a WebAssembly module", "loader/wasm"}},
		{"loader's own error", writeFile(t, dir, "noid.txt", testMagic+"name=x\n"), nil, []string{"no id= line", "noid.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := openFiles(t, []string{c.path})
			st := byPath(t, h, c.path)
			if st.State != dynop.StateBroken || st.Info.ID != "" {
				t.Errorf("state %v, id %q; want broken with no id", st.State, st.Info.ID)
			}
			wantErr(t, st.Err, c.target, c.want...)
		})
	}
}

// TestOpenPaths: files that load become plugins with their path; a file
// whose ID an earlier plugin has is a duplicate naming it; a file that is
// no plugin is broken; the host serves the rest.
func TestOpenPaths(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", testMagic+"id=test.plugin.file\n")
	again := writeFile(t, dir, "again.txt", testMagic+"id=test.plugin.file\n")
	shadow := writeFile(t, dir, "shadow.txt", testMagic+"id=test.plugin.go\n")
	junk := writeFile(t, dir, "junk.txt", "junk")
	h := openFiles(t, []string{good, again, junk, shadow}, simple{id: "test.plugin.go", desc: counterDef.Desc})
	for _, c := range []struct {
		path, of string
	}{{again, good}, {shadow, "compiled in"}} {
		st := byPath(t, h, c.path)
		if st.State != dynop.StateDuplicate || st.DuplicateOf != c.of {
			t.Errorf("%s: %v of %q, want a duplicate of %s", c.path, st.State, st.DuplicateOf, c.of)
		}
		wantErr(t, st.Err, dynop.ErrDuplicate, c.of+" has it and is used", c.path)
	}
	wantErr(t, byPath(t, h, junk).Err, dynop.ErrFormat, "junk")
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
	if n := len(h.Plugins()); n != 5 {
		t.Errorf("Plugins() has %d entries, want 5 (two plugins, two duplicates, one broken file)", n)
	}
}

// TestFirstUsableDuplicateWins: of two files with one ID, the first on the
// search path wins unless it cannot be used and a later one can.
func TestFirstUsableDuplicateWins(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	foreign := writeFile(t, first, "a.so", testMagic+"id=test.plugin.dup\nos=plan9\n")
	native := writeFile(t, second, "a.so", testMagic+"id=test.plugin.dup\n")
	h := openFiles(t, []string{first, second})
	st, _ := h.Plugin("test.plugin.dup")
	if st.Path != native || st.State != dynop.StateAvailable {
		t.Errorf("the winner is %s (%v), want the usable %s", st.Path, st.State, native)
	}
	if d := byPath(t, h, foreign); d.State != dynop.StateUnsupported || d.DuplicateOf != native {
		t.Errorf("the unusable first: %v of %q; want unsupported, naming %s", d.State, d.DuplicateOf, native)
	}

	// Both usable: the first wins.
	writeFile(t, first, "a.so", testMagic+"id=test.plugin.dup\n")
	h = openFiles(t, []string{second, first})
	if st, _ := h.Plugin("test.plugin.dup"); st.Path != native {
		t.Errorf("the winner is %s, want the first on the path, %s", st.Path, native)
	}
}

// TestUnsupported: a plugin whose requirements the machine does not meet
// is listed as unsupported with what is missing, and never started.
func TestUnsupported(t *testing.T) {
	path := writeFile(t, t.TempDir(), "plan9.txt", testMagic+"id=test.plugin.plan9\nos=plan9\n")
	h := openFiles(t, []string{path})
	st, _ := h.Plugin("test.plugin.plan9")
	if st.State != dynop.StateUnsupported {
		t.Fatalf("state %v, want unsupported", st.State)
	}
	wantErr(t, st.Err, dynop.ErrUnsupported, "plan9", runtime.GOOS)
	_, _, err := dynop.Acquire(context.Background(), h, "test.plugin.plan9", counterDef)
	wantErr(t, err, dynop.ErrUnsupported, "plugin is unsupported", "plan9")
}

// TestUntrusted: with a trust store, an unsigned plugin file with a
// manifest is untrusted and acquiring it says why; one without a manifest
// is not even scanned (that would run its code); policy warn loads both;
// compiled-in plugins need no signature.
func TestUntrusted(t *testing.T) {
	dir := t.TempDir()
	withManifest := writeFile(t, dir, "a.txt", testMagic+"id=test.plugin.unsigned\n")
	m, err := dynop.ScanFile(context.Background(), withManifest, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discover.WriteManifest(withManifest, m); err != nil {
		t.Fatal(err)
	}
	bare := writeFile(t, dir, "b.txt", testMagic+"id=test.plugin.bare\n")
	pub, _, _ := ed25519.GenerateKey(nil)
	for _, c := range []struct {
		policy sign.Policy
		want   dynop.State
	}{{sign.PolicyDefault, dynop.StateUntrusted}, {sign.PolicyRequire, dynop.StateUntrusted}, {sign.PolicyWarn, dynop.StateAvailable}} {
		h, err := dynop.Open(context.Background(), dynop.Options{
			Paths: []string{withManifest, bare}, Plugins: []plugin.Plugin{simple{id: "test.plugin.go", desc: counterDef.Desc}},
			NoRegistered: true, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testLogger(t),
			TrustedKeys: []ed25519.PublicKey{pub}, SignaturePolicy: c.policy,
		})
		if err != nil {
			t.Fatal(err)
		}
		st := byPath(t, h, withManifest)
		b := byPath(t, h, bare)
		if st.State != c.want || b.State != c.want {
			t.Errorf("policy %v: %v and %v, want %v", c.policy, st.State, b.State, c.want)
		}
		if c.want == dynop.StateUntrusted {
			wantErr(t, st.Err, dynop.ErrSignature, "not signed", sign.SignaturePath(withManifest))
			_, _, err := dynop.Acquire(context.Background(), h, "test.plugin.unsigned", counterDef)
			wantErr(t, err, dynop.ErrSignature, "plugin is untrusted")
			wantErr(t, b.Err, sign.ErrUnsigned, bare, "no manifest", "not scanned")
			if b.Info.ID != "" {
				t.Errorf("the unscanned plugin's ID is known: %q", b.Info.ID)
			}
		}
		if st, _ := h.Plugin("test.plugin.go"); st.State != dynop.StateAvailable {
			t.Errorf("a compiled-in plugin is %v under policy %v", st.State, c.policy)
		}
		h.Close(context.Background())
	}
	_, err = dynop.Open(context.Background(), dynop.Options{NoRegistered: true, NoDefaultPaths: true, TrustDir: filepath.Join(t.TempDir(), "nope")})
	wantErr(t, err, fs.ErrNotExist, "trust store", "nope")
}

// TestConflictingUIDs: two plugins that give one UID different names are
// both unusable, with a reason naming both; a plugin that gives it the
// same name as one of them is unaffected only if it shares no conflict.
func TestConflictingUIDs(t *testing.T) {
	other := iface.Desc{UID: counterDef.UID, Name: "test.NotACounter", Version: iface.V(1, 0, 0)}
	h := open(t,
		simple{id: "test.plugin.a", desc: counterDef.Desc},
		simple{id: "test.plugin.b", desc: other},
		newFake(nil, "test.plugin.unrelated"),
	)
	defer h.Close(context.Background())
	for _, id := range []string{"test.plugin.a", "test.plugin.b"} {
		st, _ := h.Plugin(id)
		if st.State != dynop.StateBroken {
			t.Errorf("%s: %v, want broken", id, st.State)
		}
		wantErr(t, st.Err, dynop.ErrDuplicate, `"test.Counter" by test.plugin.a`, `"test.NotACounter" by test.plugin.b`, "a UID must name one interface")
	}
}

func TestRegisterLoaderRejectsMisuse(t *testing.T) {
	inspect := func(context.Context, string, *dynop.Options) (schema.Plugin, json.RawMessage, error) {
		return schema.Plugin{}, nil, nil
	}
	open := func(*discover.File, *dynop.Options) (plugin.Plugin, error) { return nil, nil }
	for _, l := range []dynop.Loader{
		{Name: "test", Magic: "other magic", Inspect: inspect, Plugin: open},
		{Name: "", Magic: "m", Inspect: inspect, Plugin: open},
		{Name: "x", Magic: "", Inspect: inspect, Plugin: open},
		{Name: "y", Magic: "m", Plugin: open},
		{Name: "z", Magic: "m", Inspect: inspect},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterLoader(%+v) did not panic", l)
				}
			}()
			dynop.RegisterLoader(l)
		}()
	}
}
