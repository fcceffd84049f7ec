package discover_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/discover"
)

// An executable installed as PREFIX/bin/NAME also searches
// PREFIX/lib/dynop/plugins, after its own plugins directory (make
// install's layout); one elsewhere does not.
func TestSearchPathPrefix(t *testing.T) {
	got := discover.ExeDirsForTest("/opt/dynop/bin/dynop")
	want := []discover.Entry{
		{Path: "/opt/dynop/bin/plugins", Source: discover.SourceExeDir},
		{Path: "/opt/dynop/lib/dynop/plugins", Source: discover.SourcePrefixDir},
	}
	if !slices.Equal(got, want) {
		t.Errorf("exeDirs(/opt/dynop/bin/dynop) = %v, want %v", got, want)
	}
	if got := discover.ExeDirsForTest("/work/repo/dynop"); len(got) != 1 || got[0].Source != discover.SourceExeDir {
		t.Errorf("exeDirs(/work/repo/dynop) = %v, want its plugins directory only", got)
	}
	if s := discover.SourcePrefixDir.String(); s != "prefix-dir" {
		t.Errorf("SourcePrefixDir = %q", s)
	}
}

// TestSearchPathOrder: Options.Paths, then $DYNOP_PLUGIN_PATH, then the
// executable's plugins directory, then the per-user directory; relative
// entries made absolute, empty ones dropped, repeats kept first.
func TestSearchPathOrder(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv(discover.EnvPath, "/env/a::/env/b:/opt/first")
	got := discover.SearchPath([]string{"/opt/first", "rel", ""}, true)
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	want := []discover.Entry{
		{Path: "/opt/first", Source: discover.SourceOptions},
		{Path: filepath.Join(wd, "rel"), Source: discover.SourceOptions},
		{Path: "/env/a", Source: discover.SourceEnv},
		{Path: "/env/b", Source: discover.SourceEnv},
		{Path: filepath.Join(filepath.Dir(exe), "plugins"), Source: discover.SourceExeDir},
		{Path: filepath.Join(data, "dynop", "plugins"), Source: discover.SourceUserDir},
	}
	if len(got) != len(want) {
		t.Fatalf("SearchPath = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %v, want %v", i, got[i], want[i])
		}
	}
	if only := discover.SearchPath([]string{"/x"}, false); len(only) != 1 || only[0].Path != "/x" {
		t.Errorf("without defaults: %v, want /x only", only)
	}
	t.Setenv("XDG_DATA_HOME", "relative/is/ignored")
	home, _ := os.UserHomeDir()
	if got := discover.UserDirForTest(); got != filepath.Join(home, ".local", "share", "dynop", "plugins") {
		t.Errorf("userDir with a relative XDG_DATA_HOME = %s, want it under ~/.local/share", got)
	}
}

// TestScanDirectories: a directory contributes its plugin files sorted by
// name, not its subdirectories, hidden files, manifests or signatures;
// the first entry on the path that has an ID comes first.
func TestScanDirectories(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	writePlugin(t, dir, "b.so", "id=test.plugin.b")
	writePlugin(t, dir, "a.so", "id=test.plugin.a")
	writePlugin(t, dir, "c.wasm", "id=test.plugin.c")
	writePlugin(t, dir, ".hidden.so", "id=test.plugin.hidden")
	writePlugin(t, dir, "notes.txt", "id=test.plugin.txt")
	writePlugin(t, dir, "sub/d.so", "id=test.plugin.d")
	writePlugin(t, other, "z.so", "id=test.plugin.z")
	explicit := writePlugin(t, t.TempDir(), "named-anything", "id=test.plugin.explicit")
	res := enumerate(t, options(t, explicit, other, dir))
	var ids []string
	for _, f := range res.Files {
		if f.Err != nil {
			t.Fatalf("%s: %v", f.Path, f.Err)
		}
		ids = append(ids, f.Info.ID)
	}
	want := "test.plugin.explicit test.plugin.z test.plugin.a test.plugin.b test.plugin.c"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("found %s, want %s", got, want)
	}
	for _, name := range []string{"a.so", "a.so.dynop.json", "x.dylib", "x.wasm"} {
		if want := !strings.HasSuffix(name, ".json"); discover.IsPluginName(name) != want {
			t.Errorf("IsPluginName(%q) = %v, want %v", name, !want, want)
		}
	}
}

// TestBadSearchPathEntries: a missing or unreadable entry given by the
// caller is a problem (logged, not fatal); a missing default directory is
// not worth a word.
func TestBadSearchPathEntries(t *testing.T) {
	dir := t.TempDir()
	good := writePlugin(t, dir, "good.so", "id=test.plugin.good")
	file := writeFile(t, filepath.Join(dir, "file"), "x")
	missing := filepath.Join(dir, "missing")
	notDir := filepath.Join(file, "sub") // ENOTDIR: unreadable as root too
	var log logBuffer
	opts := options(t, missing, notDir, good)
	opts.Logger = log.Logger()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "no-such-data"))
	t.Setenv(discover.EnvPath, "")
	opts.NoDefaultPaths = false
	res := enumerate(t, opts)
	if f := res.Files; len(f) != 1 || f[0].Err != nil || f[0].Info.ID != "test.plugin.good" {
		t.Fatalf("files %v, want the good plugin only", f)
	}
	if len(res.Problems) != 2 {
		t.Fatalf("problems %v, want 2 (missing, not a directory)", res.Problems)
	}
	wantErr(t, res.Problems[0], fs.ErrNotExist, missing, "options")
	wantErr(t, res.Problems[1], nil, notDir, "not a directory")
	if s := log.String(); !strings.Contains(s, "level=WARN") || !strings.Contains(s, missing) {
		t.Errorf("log %q does not warn about %s", s, missing)
	}
	if strings.Contains(log.String(), "no-such-data") {
		t.Errorf("log %q mentions the missing default directory", log.String())
	}

	if os.Geteuid() == 0 {
		t.Log("running as root: a mode-000 directory is readable, skipping that case")
		return
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	res = enumerate(t, options(t, locked))
	if len(res.Problems) != 1 {
		t.Fatalf("problems %v, want the locked directory", res.Problems)
	}
	wantErr(t, res.Problems[0], fs.ErrPermission, locked)
}

// TestSymlinks: the rule for links in a plugin directory. A link to a
// file in the same directory is followed (and the file is listed once);
// a link that leaves the directory is not followed and is listed as
// broken, saying why; a link given as a search path entry is followed.
func TestSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := writePlugin(t, dir, "libreal.so", "id=test.plugin.real")
	if err := os.Symlink("libreal.so", filepath.Join(dir, "liblink.so")); err != nil {
		t.Fatal(err)
	}
	evil := writePlugin(t, outside, "evil.so", "id=test.plugin.evil")
	escape := filepath.Join(dir, "libescape.so")
	if err := os.Symlink(evil, escape); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "libdangling.so")
	if err := os.Symlink(filepath.Join(dir, "gone.so"), dangling); err != nil {
		t.Fatal(err)
	}
	res := enumerate(t, options(t, dir))
	byPath := map[string]*discover.File{}
	for _, f := range res.Files {
		byPath[f.Path] = f
	}
	if len(res.Files) != 3 {
		t.Fatalf("files %v, want dangling, escape and one of link/real", res.Files)
	}
	if f := byPath[filepath.Join(dir, "libdangling.so")]; f == nil || f.Err == nil {
		t.Errorf("dangling link: %v, want an error", f)
	}
	f := byPath[escape]
	if f == nil {
		t.Fatal("the escaping link is not listed")
	}
	wantErr(t, f.Err, discover.ErrLink, evil, "outside its plugin directory")
	// The file and the link to it are one plugin, listed under the name
	// that sorts first.
	if f := byPath[filepath.Join(dir, "liblink.so")]; f == nil || f.Err != nil || f.Info.ID != "test.plugin.real" || byPath[target] != nil {
		t.Errorf("the link in the directory: %v; the file: %v", f, byPath[target])
	}
	link := enumerate(t, options(t, escape))
	if f := only(t, link); f.Err != nil || f.Info.ID != "test.plugin.evil" {
		t.Errorf("a link given as an entry: %v, want it followed", f)
	}
}

// TestManifest: a plugin with a manifest is read from it, running no
// scanner; the manifest round-trips.
func TestManifest(t *testing.T) {
	dir := t.TempDir()
	path := writePlugin(t, dir, "p.so", "id=test.plugin.m", "version=2.1.0")
	m := writeManifest(t, path)
	if m.Info.ID != "test.plugin.m" || m.Info.Version.String() != "2.1.0" || m.Format != "text" || compact(m.Loader) != `{"from":"text"}` {
		t.Fatalf("manifest %+v", m)
	}
	opts := options(t, dir)
	opts.Scanner = failingScanner(t)
	f := only(t, enumerate(t, opts))
	if f.Err != nil || f.Manifest != discover.ManifestPath(path) || f.Info.ID != "test.plugin.m" || compact(f.Loader) != `{"from":"text"}` {
		t.Fatalf("file %+v, err %v", f, f.Err)
	}
	back, err := discover.ParseManifestForTest(encode(t, m))
	if err != nil || back.Info.Diff(m.Info) != "" || back.SHA256 != m.SHA256 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// TestBadManifests: each way a manifest can be wrong, with the message.
func TestBadManifests(t *testing.T) {
	dir := t.TempDir()
	path := writePlugin(t, dir, "p.so", "id=test.plugin.m")
	good := encode(t, writeManifest(t, path))
	var generic map[string]any
	if err := json.Unmarshal(good, &generic); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct {
		name, content string
		target        error
		want          []string
	}{
		{"not JSON", "schema: yaml", discover.ErrManifest, []string{"not JSON"}},
		{"truncated", string(good[:len(good)/2]), discover.ErrManifest, []string{"truncated"}},
		{"missing fields", edit(func(m map[string]any) { delete(m, "sha256"); delete(m, "info") }), discover.ErrManifest, []string{"missing required field(s) sha256, info"}},
		{"missing id", edit(func(m map[string]any) { delete(m["info"].(map[string]any), "id") }), discover.ErrManifest, []string{"info.id"}},
		{"newer schema", edit(func(m map[string]any) { m["schema"] = "dynop.manifest/v2" }), discover.ErrManifest, []string{`schema "dynop.manifest/v2"`, `reads "dynop.manifest/v1"`}},
		{"bundled absolute", edit(func(m map[string]any) {
			m["bundled"] = []any{map[string]any{"path": "/usr/lib/libx.so.1", "size": 1, "sha256": strings.Repeat("ab", 32)}}
		}), discover.ErrManifest, []string{"bundled[0]", `"/usr/lib/libx.so.1" is absolute`}},
		{"bundled twice", edit(func(m map[string]any) {
			b := map[string]any{"path": "lib/libx.so.1", "size": 1, "sha256": strings.Repeat("ab", 32)}
			m["bundled"] = []any{b, b}
		}), discover.ErrManifest, []string{"bundled[1]", "listed twice"}},
		{"bundled without digest", edit(func(m map[string]any) {
			m["bundled"] = []any{map[string]any{"path": "libx.so.1", "size": 1}}
		}), discover.ErrManifest, []string{"bundled[0] (libx.so.1)", "sha256 is zero"}},
		{"bundled without path", edit(func(m map[string]any) {
			m["bundled"] = []any{map[string]any{"size": 1, "sha256": strings.Repeat("ab", 32)}}
		}), discover.ErrManifest, []string{"bundled[0]: empty path"}},
		{"wrong format", edit(func(m map[string]any) { m["format"] = "native" }), discover.ErrManifest, []string{"for a native plugin", "the file is text"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, discover.ManifestPath(path), c.content)
			opts := options(t, path)
			opts.Scanner = failingScanner(t)
			f := only(t, enumerate(t, opts))
			wantErr(t, f.Err, c.target, append(c.want, discover.ManifestPath(path))...)
		})
	}
	t.Run("unknown fields", func(t *testing.T) {
		writeFile(t, discover.ManifestPath(path), edit(func(m map[string]any) {
			m["written_by"] = "dynop 9"
			m["info"].(map[string]any)["future"] = []int{1}
		}))
		f := only(t, enumerate(t, options(t, path)))
		if f.Err != nil || f.Info.ID != "test.plugin.m" {
			t.Errorf("a manifest with unknown fields: %v", f.Err)
		}
	})
}

// TestScanner: a plugin without a manifest is read by a child process; one
// that crashes, hangs, or whose scanner answers garbage, nothing or half
// an answer is broken with the reason, and the others are unaffected.
func TestScanner(t *testing.T) {
	dir := t.TempDir()
	writePlugin(t, dir, "a-good.so", "id=test.plugin.good")
	writePlugin(t, dir, "b-crash.so", "id=test.plugin.crash", "crash")
	writePlugin(t, dir, "d-chatty.so", "print=hello on stdout", "id=test.plugin.chatty")
	writePlugin(t, dir, "e-refused.so", "refuse=bad header")
	writeFile(t, filepath.Join(dir, "f-junk.so"), "junk")
	res := enumerate(t, options(t, dir))
	if len(res.Files) != 5 {
		t.Fatalf("files %v", res.Files)
	}
	good, crash, chatty, refused, junk := res.Files[0], res.Files[1], res.Files[2], res.Files[3], res.Files[4]
	if good.Err != nil || good.Info.ID != "test.plugin.good" || good.Manifest != "" {
		t.Errorf("good: %+v", good)
	}
	if chatty.Err != nil || chatty.Info.ID != "test.plugin.chatty" {
		t.Errorf("a plugin that prints on stdout: %v; its output must not disturb the answer", chatty.Err)
	}
	wantErr(t, crash.Err, discover.ErrScan, "crashed", "SIGSEGV", crash.Path)
	hang := writePlugin(t, t.TempDir(), "c-hang.so", "id=test.plugin.hang", "hang")
	opts := options(t, hang)
	opts.ScanTimeout = time.Second
	wantErr(t, only(t, enumerate(t, opts)).Err, discover.ErrScan, "timed out after 1s", hang)
	wantErr(t, refused.Err, discover.ErrFormat, "bad header", refused.Path)
	wantErr(t, junk.Err, discover.ErrFormat, `starts with "junk"`, junk.Path)
	if _, err := os.Stat(discover.ManifestPath(good.Path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("enumeration wrote a manifest (%v); only dynop manifest does", err)
	}

	for _, c := range []struct{ name, body, want string }{
		{"garbage", `echo "hello, I am not a scanner" >&3`, `printed garbage "hello, I am not a scanner\n"`},
		{"half an answer", `printf '{"schema": "dynop.manifest/v1", "info": {' >&3`, "truncated"},
		{"nothing", "exit 0", "exited without answering (exit status 0): does its main call dynop.ServeScanner() first?"},
		{"failure", "echo oops >&2; exit 3", "exited without answering (exit status 3): does its main call dynop.ServeScanner() first?; it printed: oops"},
		{"served, then nothing", `printf '\n' >&3; exit 0`, "without answering (does the plugin exit?)"},
		{"served, then failure", `printf '\n' >&3; echo oops >&2; exit 3`, "the scanner failed reading the plugin's info: exit status 3; it printed: oops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := options(t, filepath.Join(dir, "a-good.so"))
			opts.Scanner = script(t, c.body)
			wantErr(t, only(t, enumerate(t, opts)).Err, discover.ErrScan, c.want)
		})
	}
}

// TestCache: the second enumeration reads the cache and runs nothing; a
// changed file, manifest or signature makes its entry stale.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	path := writePlugin(t, dir, "p.so", "id=test.plugin.c", "version=1.0.0")
	opts := options(t, dir)
	first := only(t, enumerate(t, opts))
	if first.Err != nil || first.Cached {
		t.Fatalf("first: %+v", first)
	}
	if _, err := os.Stat(filepath.Join(opts.CacheDir, discover.CacheFile)); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	cached := opts
	cached.Scanner = failingScanner(t)
	second := only(t, enumerate(t, cached))
	if second.Err != nil || !second.Cached || second.Info.Diff(first.Info) != "" || second.SHA256 != first.SHA256 {
		t.Fatalf("second: %+v (err %v), want the first from the cache", second, second.Err)
	}
	// A broken plugin is cached too: it is not scanned again.
	crash := writePlugin(t, dir, "q.so", "id=test.plugin.q", "crash")
	enumerate(t, opts)
	res := enumerate(t, cached)
	if f := res.Files[1]; f.Path != crash || !f.Cached {
		t.Errorf("the crashing plugin was not cached: %+v", f)
	} else {
		wantErr(t, f.Err, discover.ErrScan, "crashed")
	}
	os.Remove(crash)

	// Rewritten with the same size and mtime: the ctime still tells.
	fi, _ := os.Stat(path)
	writePlugin(t, dir, "p.so", "id=test.plugin.c", "version=2.0.0")
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	third := only(t, enumerate(t, opts))
	if third.Cached || third.Info.Version.String() != "2.0.0" {
		t.Errorf("after a change: cached %v, version %s; want a fresh scan", third.Cached, third.Info.Version)
	}
	// A manifest appearing makes the entry stale.
	m := writeManifest(t, path)
	m.Info.Description = "from the manifest"
	discover.WriteManifest(path, m)
	if f := only(t, enumerate(t, cached)); f.Err != nil || f.Info.Description != "from the manifest" {
		t.Errorf("after a manifest appeared: %+v, %v", f.Info, f.Err)
	}
}

// TestCorruptCache: a cache that is not JSON, truncated, of another
// schema or unreadable is rebuilt with a warning, never fatal.
func TestCorruptCache(t *testing.T) {
	dir := t.TempDir()
	writePlugin(t, dir, "p.so", "id=test.plugin.c")
	good := t.TempDir()
	enumerate(t, discover.Options{Paths: []string{dir}, NoDefaultPaths: true, Formats: []discover.Format{textFormat}, CacheDir: good})
	whole, err := os.ReadFile(filepath.Join(good, discover.CacheFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, content, want string }{
		{"garbage", "\x00\x01 not a cache", "does not start with"},
		{"truncated", string(whole[:len(whole)*2/3]), "truncated"},
		{"flipped bytes", string(whole[:len(whole)/2]) + strings.Repeat("\xff", len(whole)-len(whole)/2), "corrupt"},
		{"another version", "dynop.registry/v1\n{}", "another dynop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log logBuffer
			opts := options(t, dir)
			opts.Logger = log.Logger()
			cache := filepath.Join(opts.CacheDir, discover.CacheFile)
			writeFile(t, cache, c.content)
			if f := only(t, enumerate(t, opts)); f.Err != nil || f.Cached {
				t.Fatalf("%+v", f)
			}
			if s := log.String(); !strings.Contains(s, c.want) || !strings.Contains(s, "rebuilding") {
				t.Errorf("log %q does not say that the cache is %s", s, c.want)
			}
			if c.name != "another version" && !strings.Contains(log.String(), "level=WARN") {
				t.Errorf("log %q does not warn", log.String())
			}
			opts.Scanner = failingScanner(t)
			if f := only(t, enumerate(t, opts)); f.Err != nil || !f.Cached {
				t.Errorf("the cache was not rebuilt: %+v", f)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		var log logBuffer
		opts := options(t, dir)
		opts.Logger = log.Logger()
		os.MkdirAll(filepath.Join(opts.CacheDir, discover.CacheFile), 0o755) // a directory where the file should be
		if f := only(t, enumerate(t, opts)); f.Err != nil {
			t.Fatal(f.Err)
		}
		if s := log.String(); !strings.Contains(s, "unreadable") || !strings.Contains(s, "not saved") {
			t.Errorf("log %q does not warn that the cache cannot be read or saved", s)
		}
	})
}

// TestConcurrentEnumerations: hosts opening at once over one cache all
// succeed, and the cache they leave is whole.
func TestConcurrentEnumerations(t *testing.T) {
	dir := t.TempDir()
	for i := range 8 {
		writePlugin(t, dir, string(rune('a'+i))+".so", "id=test.plugin."+string(rune('a'+i)))
	}
	opts := options(t, dir)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			res, err := discover.Enumerate(ctx, opts)
			if err != nil {
				t.Error(err)
				return
			}
			for _, f := range res.Files {
				if f.Err != nil {
					t.Error(f.Err)
				}
			}
		})
	}
	wg.Wait()
	var log logBuffer
	opts.Logger = log.Logger()
	opts.Scanner = failingScanner(t)
	res := enumerate(t, opts)
	for _, f := range res.Files {
		if f.Err != nil || !f.Cached {
			t.Errorf("%s: cached %v, err %v", f.Path, f.Cached, f.Err)
		}
	}
	if strings.Contains(log.String(), "corrupt") {
		t.Errorf("the cache was corrupted: %s", log.String())
	}
}

// TestCancel: a cancelled context stops enumeration with its error.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	writePlugin(t, dir, "h.so", "id=test.plugin.h", "hang")
	c, cancel := contextWithTimeout(300 * time.Millisecond)
	defer cancel()
	opts := options(t, dir)
	_, err := discover.Enumerate(c, opts)
	if !errors.Is(err, c.Err()) || err == nil {
		t.Fatalf("Enumerate = %v, want the context's error", err)
	}
	if data, err := os.ReadFile(filepath.Join(opts.CacheDir, discover.CacheFile)); err == nil && strings.Contains(string(data), "h.so") {
		t.Errorf("a cancelled scan was cached as a verdict: %s", data)
	}
}

func compact(b []byte) string { return strings.Join(strings.Fields(string(b)), "") }
