package native

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/sign"
)

// The plugins the open benchmarks enumerate: copies of one plugin, each
// with its own ID (patched into the binary) and a manifest. Two sets: the
// C test fixture (the least a plugin can be: 15 KiB, no dependencies) and
// the C++ example plugin (it links libstdc++, as real plugins link their
// runtimes).
const benchPlugins = 1000

type benchKind struct {
	name, src, placeholder string
	flags                  []string
}

var benchKinds = []benchKind{
	{"c", "loader/native/testdata/fixture.c", "bench.plugin.p00000",
		[]string{"-Wno-unused-function", "-Wno-unused-const-variable", `-DFIXTURE_ID="bench.plugin.p00000"`}},
	{"cpp", "plugins/stats/cpp/stats.cpp", "bench.plugin.s00000", []string{`-DSTATS_PLUGIN_ID="bench.plugin.s00000"`}},
}

var (
	benchMu   sync.Mutex
	benchDirs = map[string]string{}
)

// benchSet returns a directory of benchPlugins plugin files of kind k
// with manifests, built once per test binary.
func benchSet(b *testing.B, k benchKind) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	if dir := benchDirs[k.name]; dir != "" {
		return dir
	}
	dir, err := os.MkdirTemp("", "dynop-bench-plugins")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs[k.name] = dir
	lib := cbuild.Plugin(b, "libbench.so", k.src, k.flags...)
	orig, err := os.ReadFile(lib)
	if err != nil {
		b.Fatal(err)
	}
	m, err := dynop.ScanFile(context.Background(), lib, dynop.Options{})
	if err != nil {
		b.Fatal(err)
	}
	prefix := k.placeholder[:len(k.placeholder)-5]
	for i := range benchPlugins {
		id := fmt.Sprintf("%s%05d", prefix, i)
		path := filepath.Join(dir, fmt.Sprintf("libp%05d.so", i))
		data := bytes.ReplaceAll(orig, []byte(k.placeholder), []byte(id))
		if err := os.WriteFile(path, data, 0o755); err != nil {
			b.Fatal(err)
		}
		m.Info.ID, m.File = id, filepath.Base(path)
		m.SHA256, m.Size, _ = sign.HashReader(bytes.NewReader(data))
		if _, err := discover.WriteManifest(path, m); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// loadEach is NVIGI's way: load every library to ask for its info
// (dlopen, get_info, dlclose), then open a host over them.
func loadEach(b *testing.B, dir string) *dynop.Host {
	paths, err := filepath.Glob(filepath.Join(dir, "*.so"))
	if err != nil || len(paths) != benchPlugins {
		b.Fatalf("%d plugins, %v", len(paths), err)
	}
	ps := make([]plugin.Plugin, len(paths))
	for i, path := range paths {
		lib, err := openLibrary(path, false, true)
		if err != nil {
			b.Fatal(err)
		}
		info, flags, err := lib.readInfo()
		if cerr := lib.close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		ps[i] = &Plugin{path: path, info: info, flags: flags}
	}
	return openBench(b, dynop.Options{Plugins: ps})
}

func openBench(b *testing.B, opts dynop.Options) *dynop.Host {
	opts.NoRegistered, opts.NoDefaultPaths, opts.Logger = true, true, slog.New(slog.DiscardHandler)
	h, err := dynop.Open(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(h.Plugins()); n != benchPlugins {
		b.Fatalf("the host knows %d plugins, want %d", n, benchPlugins)
	}
	return h
}

// BenchmarkOpen1000 opens a host over 1,000 plugin files: from the
// registry cache, from their manifests (no cache), and by loading each
// one to ask for its info as NVIGI does. The target (DESIGN.md): the
// cached open at least 20× faster than loading each, and under 20 ms.
func BenchmarkOpen1000(b *testing.B) {
	for _, k := range benchKinds {
		dir := benchSet(b, k)
		cache := b.TempDir()
		openBench(b, dynop.Options{Paths: []string{dir}, CacheDir: cache}).Close(context.Background())
		b.Run(k.name+"/cache", func(b *testing.B) {
			for b.Loop() {
				openBench(b, dynop.Options{Paths: []string{dir}, CacheDir: cache}).Close(context.Background())
			}
		})
		b.Run(k.name+"/manifests", func(b *testing.B) {
			for b.Loop() {
				openBench(b, dynop.Options{Paths: []string{dir}, NoCache: true}).Close(context.Background())
			}
		})
		b.Run(k.name+"/load-each", func(b *testing.B) {
			for b.Loop() {
				loadEach(b, dir).Close(context.Background())
			}
		})
	}
}

// BenchmarkOpenCachedVsLoadEach times the cached open and NVIGI's way in
// the same iterations and reports both and their ratio.
func BenchmarkOpenCachedVsLoadEach(b *testing.B) {
	for _, k := range benchKinds {
		dir := benchSet(b, k)
		cache := b.TempDir()
		openBench(b, dynop.Options{Paths: []string{dir}, CacheDir: cache}).Close(context.Background())
		b.Run(k.name, func(b *testing.B) {
			var cached, loaded time.Duration
			for b.Loop() {
				t0 := time.Now()
				openBench(b, dynop.Options{Paths: []string{dir}, CacheDir: cache}).Close(context.Background())
				t1 := time.Now()
				loadEach(b, dir).Close(context.Background())
				cached, loaded = cached+t1.Sub(t0), loaded+time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(cached.Seconds()*1e3/n, "cached-ms")
			b.ReportMetric(loaded.Seconds()*1e3/n, "load-each-ms")
			b.ReportMetric(float64(loaded)/float64(cached), "speedup")
		})
	}
}

// BenchmarkColdScan is the cost of reading a plugin with neither manifest
// nor cache entry: the host hashes it and runs a scanner child process
// (this test binary) that loads it. 16 plugins per iteration, scanned in
// parallel as Open does; ns/plugin is the cost per plugin.
func BenchmarkColdScan(b *testing.B) {
	src := benchSet(b, benchKinds[0])
	const n = 16
	dir := b.TempDir()
	for i := range n {
		data, err := os.ReadFile(filepath.Join(src, fmt.Sprintf("libp%05d.so", i)))
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("libp%05d.so", i)), data, 0o755)
	}
	start := time.Now()
	for b.Loop() {
		h, err := dynop.Open(context.Background(), dynop.Options{Paths: []string{dir}, NoCache: true, NoRegistered: true,
			NoDefaultPaths: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range h.Plugins() {
			if st.State != dynop.StateAvailable {
				b.Fatalf("%s: %v %v", st.Path, st.State, st.Err)
			}
		}
		h.Close(context.Background())
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/plugin")
}

// TestMain removes the generated plugins.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range benchDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
