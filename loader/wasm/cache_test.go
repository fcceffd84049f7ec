package wasm_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// The package's tests keep the compilation cache's key in the run's
// shared directory, never in the real configuration directory; the
// tests of the key file itself point $XDG_CONFIG_HOME elsewhere (isolate).
func init() {
	wasm.SetKeyFilePath(func() (string, error) {
		if shared == "" {
			return "", errors.New("no test directory")
		}
		return filepath.Join(shared, "config", "dynop", "wasm-cache.key"), nil
	})
}

// poison returns the cachepoison plugin built with POISON_VALUE v: the
// builds have the same info, and poison.Value computes v.
func poison(t testing.TB, v int) string {
	name := fmt.Sprintf("cachepoison%d.wasm", v)
	return fixture(t, name, func(t testing.TB) string {
		return cbuild.Wasm(t, name, []string{"loader/wasm/testdata/cachepoison.c"}, fmt.Sprintf("-DPOISON_VALUE=%d", v))
	})
}

// isolate gives the test a configuration directory of its own (the
// key's), returned, and the default key location under it, as a new
// process would see it. Tests that call it cannot be parallel.
func isolate(t *testing.T) string {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	prev := wasm.SetKeyFilePath(nil)
	t.Cleanup(func() { wasm.SetKeyFilePath(prev) })
	return cfg
}

// logBuf is a log that the test reads.
type logBuf struct{ testutil.LogBuffer }

// wantLog fails the test unless the log has a line with every string in
// want.
func (l *logBuf) wantLog(t *testing.T, want ...string) {
	t.Helper()
	for line := range strings.Lines(l.String()) {
		found := true
		for _, w := range want {
			found = found && strings.Contains(line, w)
		}
		if found {
			return
		}
	}
	t.Errorf("no line of the log says all of %q; the log:\n%s", want, l.String())
}

// noLog fails the test if the log says s.
func (l *logBuf) noLog(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(l.String(), s) {
		t.Errorf("the log says %q:\n%s", s, l.String())
	}
}

// load loads the plugin at path, compiling it once.
func load(t *testing.T, path string, opts dynop.Options) *wasm.Plugin {
	t.Helper()
	p, err := wasm.Load(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	return p
}

// value starts the plugin p in a host and returns what its poison.Value
// computes: 1 or 2, telling which module's code runs.
func value(t *testing.T, p plugin.Plugin, opts dynop.Options) float32 {
	t.Helper()
	opts.Plugins = []plugin.Plugin{p}
	h := openHost(t, opts)
	got, err := exec(t, h, "poison.Value", nil)
	if err != nil {
		t.Fatalf("poison.Value: %v", err)
	}
	return got[0]
}

// digest is the SHA-256 of the file at path.
func digest(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// entryOf returns the path of the store entry of the module at path in
// the cache of a host whose CacheDir is cacheDir.
func entryOf(t *testing.T, cacheDir, path string) string {
	t.Helper()
	sum := digest(t, path)
	m, _ := filepath.Glob(filepath.Join(cacheDir, "wasm", wasm.CacheStoreDir, hex.EncodeToString(sum[:])+"-*"))
	if len(m) != 1 {
		all, _ := os.ReadDir(filepath.Join(cacheDir, "wasm", wasm.CacheStoreDir))
		t.Fatalf("want one store entry for %s, found %v (the store holds %v)", path, m, all)
	}
	return m[0]
}

// entry is a store entry taken apart (the format of encodeEntry).
type entry struct {
	module, tag, wkey string
	payload, mac      []byte
}

func parseEntry(t *testing.T, data []byte) entry {
	t.Helper()
	lines := strings.SplitN(string(data), "\n", 5)
	if len(lines) != 5 || lines[0] != "dynop-wasm-cache 1" {
		t.Fatalf("not an entry: %.100q", data)
	}
	var e entry
	var n int
	if _, err := fmt.Sscanf(lines[1]+" "+lines[2]+" "+lines[3], "module %s wazero %s %s payload %d", &e.module, &e.tag, &e.wkey, &n); err != nil {
		t.Fatalf("entry header %q: %v", lines[:4], err)
	}
	rest := []byte(lines[4])
	if len(rest) != n+sha256.Size {
		t.Fatalf("entry: %d bytes after the header, want %d", len(rest), n+sha256.Size)
	}
	e.payload, e.mac = rest[:n], rest[n:]
	return e
}

// encode writes e back, with its MAC as it is.
func (e entry) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "dynop-wasm-cache 1\nmodule %s\nwazero %s %s\npayload %d\n", e.module, e.tag, e.wkey, len(e.payload))
	b.Write(e.payload)
	b.Write(e.mac)
	return b.Bytes()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCachePoisoning is the attack: with modules A and B both cached,
// B's compiled code is put where A's is looked for, in every way an
// attacker who can write the cache directory might. A fresh process
// loading A refuses the entry, saying so and naming it, runs A's own
// code, and stores a valid entry in its place.
func TestCachePoisoning(t *testing.T) {
	cfgDir := isolate(t)
	a, b := poison(t, 1), poison(t, 2)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	if got := value(t, load(t, a, opts), opts); got != 1 {
		t.Fatalf("A computes %v, want 1", got)
	}
	if got := value(t, load(t, b, opts), opts); got != 2 {
		t.Fatalf("B computes %v, want 2", got)
	}
	entryA, entryB := entryOf(t, opts.CacheDir, a), entryOf(t, opts.CacheDir, b)
	origA, origB := readFile(t, entryA), readFile(t, entryB)
	ea, eb := parseEntry(t, origA), parseEntry(t, origB)
	if bytes.Equal(ea.payload, eb.payload) {
		t.Fatal("A and B compiled to the same code: the test cannot tell them apart")
	}
	secret := readFile(t, filepath.Join(cfgDir, "dynop", "wasm-cache.key"))
	otherKey := bytes.Repeat([]byte{7}, 32)
	sumA := digest(t, a)
	const badMAC = "its MAC does not verify: it was changed, or written with another key"

	cases := []struct {
		name   string
		poison func(t *testing.T)
		reason string
	}{
		{"B's entry copied over A's", func(t *testing.T) { writeFile(t, entryA, origB) },
			"it is for module sha256 " + eb.module + ", not this module (sha256 " + ea.module + ")"},
		{"B's entry renamed over A's", func(t *testing.T) {
			tmp := entryB + ".copy"
			writeFile(t, tmp, origB)
			if err := os.Rename(tmp, entryA); err != nil {
				t.Fatal(err)
			}
		}, "it is for module sha256 " + eb.module},
		{"B's entry with A's header", func(t *testing.T) {
			e := eb
			e.module, e.wkey = ea.module, ea.wkey
			writeFile(t, entryA, e.encode())
		}, badMAC},
		{"B's payload under A's MAC", func(t *testing.T) {
			e := ea
			e.payload = eb.payload
			writeFile(t, entryA, e.encode())
		}, badMAC},
		{"B's payload MACed with another key", func(t *testing.T) {
			writeFile(t, entryA, wasm.EncodeCacheEntry(otherKey, sumA, ea.tag, ea.wkey, eb.payload))
		}, badMAC},
		{"one byte of A's payload changed", func(t *testing.T) {
			e := ea
			e.payload = bytes.Clone(ea.payload)
			e.payload[len(e.payload)/2] ^= 0x40
			writeFile(t, entryA, e.encode())
		}, badMAC},
		{"A's MAC changed", func(t *testing.T) {
			e := ea
			e.mac = bytes.Clone(ea.mac)
			e.mac[0] ^= 1
			writeFile(t, entryA, e.encode())
		}, badMAC},
		{"truncated", func(t *testing.T) { writeFile(t, entryA, origA[:len(origA)/2]) },
			fmt.Sprintf("truncated or padded: the header says %d payload bytes and a 32-byte MAC follow", len(ea.payload))},
		{"truncated in the header", func(t *testing.T) { writeFile(t, entryA, origA[:30]) },
			"truncated or malformed header (30 bytes; line 2 is missing or too long)"},
		{"padded", func(t *testing.T) { writeFile(t, entryA, append(bytes.Clone(origA), 0)) },
			"truncated or padded"},
		{"empty", func(t *testing.T) { writeFile(t, entryA, nil) }, "not a dynop compilation cache entry"},
		{"wazero's raw file", func(t *testing.T) { writeFile(t, entryA, eb.payload) }, "not a dynop compilation cache entry"},
		{"another format", func(t *testing.T) {
			writeFile(t, entryA, bytes.Replace(origA, []byte("dynop-wasm-cache 1"), []byte("dynop-wasm-cache 2"), 1))
		}, `want \"dynop-wasm-cache 1\"`},
		{"another wazero", func(t *testing.T) {
			e := ea
			e.tag = "wazero-v0.0.1-amd64-linux"
			writeFile(t, entryA, e.encode())
		}, "it is for wazero-v0.0.1-amd64-linux, not " + ea.tag},
		{"a path for wazero's file name, MACed with the key", func(t *testing.T) {
			// The key is the user's; the name is refused even so.
			writeFile(t, entryA, wasm.EncodeCacheEntry(secret, sumA, ea.tag, "../../../"+ea.wkey[9:], eb.payload))
		}, "is not 64 lower-case hex digits"},
		{"a malformed length", func(t *testing.T) {
			writeFile(t, entryA, bytes.Replace(origA, fmt.Appendf(nil, "payload %d\n", len(ea.payload)), []byte("payload -1\n"), 1))
		}, `malformed header line 4 \"payload -1\"`},
		{"a symbolic link to B's entry", func(t *testing.T) {
			os.Remove(entryA)
			if err := os.Symlink(entryB, entryA); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a symbolic link)"},
		{"a directory", func(t *testing.T) {
			os.Remove(entryA)
			if err := os.MkdirAll(filepath.Join(entryA, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a directory)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.poison(t)
			wasm.ForgetCacheKeys() // a new process
			lb.Reset()
			before := wasm.ReadCacheStats()
			p := load(t, a, opts)
			if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Compiles: 1, Refused: 1, Stored: 1}) {
				t.Errorf("loading A after the swap: %+v, want the entry refused, A compiled and stored", d)
			}
			lb.wantLog(t, "level=WARN", "refused an entry; compiling the module again", "file="+entryA, c.reason)
			// A's own code runs; the entry that replaced the bad one
			// verifies.
			before = wasm.ReadCacheStats()
			if got := value(t, p, opts); got != 1 {
				t.Errorf("A computes %v after the swap, want 1 (2 is B's code)", got)
			}
			if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Hits: 1}) {
				t.Errorf("starting A after the swap: %+v, want one cache hit", d)
			}
			if e := parseEntry(t, readFile(t, entryA)); e.module != ea.module || e.wkey != ea.wkey {
				t.Errorf("A's entry after the swap is for module %s, wazero key %s; want %s, %s", e.module, e.wkey, ea.module, ea.wkey)
			}
			if got := value(t, load(t, b, opts), opts); got != 2 {
				t.Errorf("B computes %v, want 2", got)
			}
		})
	}
}

// TestCacheLegacyWazeroDir is the attack on the old layout: B's compiled
// code written into the wazero directory that earlier versions of dynop
// let wazero read, under the name of A's. Nothing reads that directory
// now: A's code runs, and the directory is removed.
func TestCacheLegacyWazeroDir(t *testing.T) {
	isolate(t)
	a, b := poison(t, 1), poison(t, 2)
	lb := &logBuf{}
	// The old layout was wazero's, so is the code planted in it.
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger(), Loaders: []dynop.LoaderConfig{wasm.Config{Engine: "wazero"}}}
	load(t, a, opts)
	load(t, b, opts)
	ea := parseEntry(t, readFile(t, entryOf(t, opts.CacheDir, a)))
	eb := parseEntry(t, readFile(t, entryOf(t, opts.CacheDir, b)))
	legacy := filepath.Join(opts.CacheDir, "wasm", ea.tag)
	if err := os.MkdirAll(legacy, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(legacy, ea.wkey), eb.payload)
	wasm.ForgetCacheKeys()
	before := wasm.ReadCacheStats()
	if got := value(t, load(t, a, opts), opts); got != 1 {
		t.Errorf("A computes %v, want 1 (2 is B's code)", got)
	}
	if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Hits: 2}) {
		t.Errorf("loading and starting A: %+v, want two hits of its own entry", d)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old wazero directory %s is still there (%v)", legacy, err)
	}
	lb.wantLog(t, "removed an earlier version's unauthenticated cache", "dir="+legacy)
}

// TestCacheSignedRequire: under signature policy require, a correctly
// signed A whose cache entry is B's is available, and runs A's code.
func TestCacheSignedRequire(t *testing.T) {
	isolate(t)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	dir := t.TempDir()
	a := filepath.Join(dir, "cachepoison.wasm")
	writeFile(t, a, readFile(t, poison(t, 1)))
	b := poison(t, 2)
	m, err := dynop.ScanFile(context.Background(), a, opts)
	if err != nil {
		t.Fatal(err)
	}
	mpath, err := discover.WriteManifest(a, m)
	if err != nil {
		t.Fatal(err)
	}
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := sign.HashFile(a)
	md, _, _ := sign.HashFile(mpath)
	if err := sign.WriteSignature(sign.SignaturePath(a), sign.Sign(key, d, md)); err != nil {
		t.Fatal(err)
	}
	load(t, b, opts)
	entryA := entryOf(t, opts.CacheDir, a)
	writeFile(t, entryA, readFile(t, entryOf(t, opts.CacheDir, b)))
	wasm.ForgetCacheKeys()
	lb.Reset()

	signed := opts
	signed.TrustedKeys, signed.SignaturePolicy = []ed25519.PublicKey{pub}, sign.PolicyRequire
	h := openHost(t, signed, dir)
	for _, st := range h.Plugins() {
		if st.Path == a && st.State != dynop.StateAvailable {
			t.Fatalf("the signed A is %v: %v", st.State, st.Err)
		}
	}
	got, err := exec(t, h, "poison.Value", schema.Args{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 1 {
		t.Errorf("the signed A computes %v, want 1 (2 is B's code)", got[0])
	}
	lb.wantLog(t, "refused an entry", "file="+entryA, "it is for module sha256")
}

// TestCacheHit: a valid entry is used, by a new process with the same
// key: no compile, the entry file untouched, and nothing left in the
// temporary directory.
func TestCacheHit(t *testing.T) {
	isolate(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	a := poison(t, 1)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	before := wasm.ReadCacheStats()
	load(t, a, opts)
	if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Compiles: 1, Stored: 1}) {
		t.Errorf("the first load: %+v, want A compiled and stored", d)
	}
	entry := entryOf(t, opts.CacheDir, a)
	fi, err := os.Stat(entry)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", entry, fi.Mode())
	}
	wasm.ForgetCacheKeys()
	before = wasm.ReadCacheStats()
	p := load(t, a, opts)
	if got := value(t, p, opts); got != 1 {
		t.Errorf("A computes %v, want 1", got)
	}
	if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Hits: 2}) {
		t.Errorf("loading and starting A with its entry cached: %+v, want two hits and no compile", d)
	}
	if fi2, err := os.Stat(entry); err != nil || !os.SameFile(fi, fi2) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the entry %s was rewritten on a hit", entry)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
	lb.noLog(t, "level=WARN")
}

// TestCacheConcurrent loads both modules from several goroutines at once
// with one cache: each compile has a private directory, and each module
// runs its own code.
func TestCacheConcurrent(t *testing.T) {
	isolate(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	paths := []string{poison(t, 1), poison(t, 2)}
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			if _, err := wasm.Load(context.Background(), paths[i%2], opts); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wasm.ForgetCacheKeys()
	for i, p := range paths {
		if got := value(t, load(t, p, opts), opts); got != float32(i+1) {
			t.Errorf("%s computes %v, want %d", p, got, i+1)
		}
	}
	lb.noLog(t, "level=WARN")
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

// TestCacheWazeroRefusesEntry: an entry whose MAC verifies but whose
// payload the engine cannot use (only the key's holder can make one) is
// replaced by a compile from scratch.
func TestCacheWazeroRefusesEntry(t *testing.T) {
	cfgDir := isolate(t)
	a := poison(t, 1)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	load(t, a, opts)
	entry := entryOf(t, opts.CacheDir, a)
	e := parseEntry(t, readFile(t, entry))
	secret := readFile(t, filepath.Join(cfgDir, "dynop", "wasm-cache.key"))
	writeFile(t, entry, wasm.EncodeCacheEntry(secret, digest(t, a), e.tag, e.wkey, []byte("not the engine's")))
	wasm.ForgetCacheKeys()
	if got := value(t, load(t, a, opts), opts); got != 1 {
		t.Errorf("A computes %v, want 1", got)
	}
	lb.wantLog(t, "level=WARN", "could not use an entry; compiling the module again", "file="+entry)
	if got := parseEntry(t, readFile(t, entry)); !bytes.Equal(got.payload, e.payload) {
		t.Errorf("the entry was not replaced by A's compiled code")
	}
}

// TestCacheStoreUnwritable: a store that cannot be made leaves the module
// compiling without the cache, and says so.
func TestCacheStoreUnwritable(t *testing.T) {
	isolate(t)
	a := poison(t, 1)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	if err := os.MkdirAll(filepath.Join(opts.CacheDir, "wasm"), 0o700); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(opts.CacheDir, "wasm", wasm.CacheStoreDir)
	writeFile(t, store, []byte("a file where the store's directory goes"))
	if got := value(t, load(t, a, opts), opts); got != 1 {
		t.Errorf("A computes %v, want 1", got)
	}
	lb.wantLog(t, "level=WARN", "compiling without the compilation cache", store)
}

// TestCacheKeyFile: the key is made on first use, 32 bytes, mode 0600 in
// a directory of mode 0700, in the configuration directory, outside the
// cache directory; a new process reads the same key.
func TestCacheKeyFile(t *testing.T) {
	cfgDir := isolate(t)
	a := poison(t, 1)
	lb := &logBuf{}
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
	load(t, a, opts)
	path := filepath.Join(cfgDir, "dynop", "wasm-cache.key")
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("no key file: %v", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Errorf("%s: mode %v, %d bytes; want a regular file, 0600, 32 bytes", path, fi.Mode(), fi.Size())
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", filepath.Dir(path), di.Mode(), err)
	}
	if rel, err := filepath.Rel(opts.CacheDir, path); err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("the key %s is inside the cache directory %s", path, opts.CacheDir)
	}
	if left, _ := os.ReadDir(filepath.Dir(path)); len(left) != 1 {
		t.Errorf("left beside the key: %v", left)
	}
	key := readFile(t, path)
	wasm.ForgetCacheKeys()
	before := wasm.ReadCacheStats()
	load(t, a, opts)
	if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Hits: 1}) {
		t.Errorf("a new process: %+v, want a hit", d)
	}
	if !bytes.Equal(readFile(t, path), key) {
		t.Error("the key changed")
	}
	lb.noLog(t, "level=WARN")
}

// TestCacheKeyFallback: without a usable key file a load still works,
// says why once, and caches for the process only: the store on disk is
// neither read nor written, and a bad key file is left as it is.
func TestCacheKeyFallback(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, cfg string) // cfg: $XDG_CONFIG_HOME
		reason []string
	}{
		{"the configuration directory is a file", func(t *testing.T, cfg string) {
			writeFile(t, filepath.Join(cfg, "dynop"), nil)
		}, []string{"cache key", "/dynop/wasm-cache.key", "not a directory"}},
		{"no configuration directory", func(t *testing.T, cfg string) {
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("HOME", "")
		}, []string{"no configuration directory for the cache key"}},
		{"the key is a directory", func(t *testing.T, cfg string) {
			os.MkdirAll(filepath.Join(cfg, "dynop", "wasm-cache.key"), 0o700)
		}, []string{"/dynop/wasm-cache.key is not a regular file (a directory); remove it, and dynop makes a new one"}},
		{"the key is a symbolic link", func(t *testing.T, cfg string) {
			target := filepath.Join(t.TempDir(), "key")
			writeFile(t, target, bytes.Repeat([]byte{1}, 32))
			os.MkdirAll(filepath.Join(cfg, "dynop"), 0o700)
			os.Symlink(target, filepath.Join(cfg, "dynop", "wasm-cache.key"))
		}, []string{"/dynop/wasm-cache.key is not a regular file (a symbolic link)"}},
		{"the key is short", func(t *testing.T, cfg string) {
			os.MkdirAll(filepath.Join(cfg, "dynop"), 0o700)
			writeFile(t, filepath.Join(cfg, "dynop", "wasm-cache.key"), []byte("short"))
		}, []string{"/dynop/wasm-cache.key has 5 bytes, want 32"}},
		{"the key is long", func(t *testing.T, cfg string) {
			os.MkdirAll(filepath.Join(cfg, "dynop"), 0o700)
			writeFile(t, filepath.Join(cfg, "dynop", "wasm-cache.key"), make([]byte, 64))
		}, []string{"/dynop/wasm-cache.key has more than 32 bytes, want 32"}},
		{"others may read the key", func(t *testing.T, cfg string) {
			os.MkdirAll(filepath.Join(cfg, "dynop"), 0o700)
			p := filepath.Join(cfg, "dynop", "wasm-cache.key")
			writeFile(t, p, make([]byte, 32))
			os.Chmod(p, 0o644)
		}, []string{"/dynop/wasm-cache.key has mode 0644: others may read or change it; want 0600"}},
	}
	a := poison(t, 1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := isolate(t)
			c.setup(t, cfg)
			keyPath := filepath.Join(cfg, "dynop", "wasm-cache.key")
			keyBefore, _ := os.ReadFile(keyPath)
			lb := &logBuf{}
			opts := dynop.Options{CacheDir: t.TempDir(), Logger: lb.Logger()}
			before := wasm.ReadCacheStats()
			p := load(t, a, opts)
			if got := value(t, p, opts); got != 1 {
				t.Errorf("A computes %v, want 1", got)
			}
			if d := wasm.ReadCacheStats().Sub(before); d != (wasm.CacheStats{Compiles: 1, Stored: 1, Hits: 1}) {
				t.Errorf("loading and starting A: %+v, want a compile, then a hit in this process", d)
			}
			lb.wantLog(t, append([]string{"level=WARN", "no usable key file, so compiled modules are cached for this process only"}, c.reason...)...)
			if n := strings.Count(lb.String(), "no usable key file"); n != 1 {
				t.Errorf("the log says %d times that there is no key, want once", n)
			}
			if ents, _ := os.ReadDir(filepath.Join(opts.CacheDir, "wasm", wasm.CacheStoreDir)); len(ents) > 0 {
				t.Errorf("the store on disk holds %v, written with a key of the process's own", ents)
			}
			if keyAfter, _ := os.ReadFile(keyPath); !bytes.Equal(keyBefore, keyAfter) {
				t.Errorf("the key file was changed")
			}
		})
	}
}

// BenchmarkWarmCompile compares compiling tone.wasm (a Go module, 4 MB)
// with a warm cache, alternating in one loop: dynop's authenticated cache
// (Plugin.CompileTime of a Load: the module hashed, the entry read and
// MACed, its payload handed to wazero through a private directory, and
// wazero loading it) against wazero's own unauthenticated directory cache
// (a compile with wazero.NewCompilationCacheWithDir), each in a new
// runtime as a new process would.
func BenchmarkWarmCompile(b *testing.B) {
	path := tone(b)
	code, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opts := dynop.Options{CacheDir: b.TempDir(), Logger: nopLogger()}
	wzDir := b.TempDir()
	raw := func() time.Duration {
		cache, err := wazero.NewCompilationCacheWithDir(wzDir)
		if err != nil {
			b.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		start := time.Now()
		if _, err := rt.CompileModule(ctx, code); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		rt.Close(ctx)
		cache.Close(ctx)
		return d
	}
	dyn := func() time.Duration {
		p, err := wasm.Load(ctx, path, opts)
		if err != nil {
			b.Fatal(err)
		}
		return p.CompileTime()
	}
	raw()
	dyn() // both caches warm
	var dynTime, rawTime time.Duration
	b.ResetTimer()
	for range b.N {
		dynTime += dyn()
		rawTime += raw()
	}
	b.ReportMetric(float64(dynTime.Microseconds())/float64(b.N)/1000, "dynop-ms/op")
	b.ReportMetric(float64(rawTime.Microseconds())/float64(b.N)/1000, "wazero-ms/op")
	b.ReportMetric(float64(dynTime)/float64(rawTime), "ratio")
}
