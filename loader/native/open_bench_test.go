package native

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/sign"
)

// The plugins the open benchmarks enumerate: copies of one plugin, each
// with its own ID (patched into the binary) and a manifest. Two kinds:
// the C test fixture (the least a plugin can be: 15 KiB, no dependencies)
// and the C++ example plugin (16 KiB, built with g++; as built here it
// needs only libm and libc, since it uses nothing from libstdc++). sizes
// are the set sizes BenchmarkOpenVsLoadEach opens; the largest is built
// once per test binary and the smaller sets are hard links to its first
// files.
type benchKind struct {
	name, src, placeholder string
	flags                  []string
	sizes                  []int
}

var benchKinds = []benchKind{
	{"c", "loader/native/testdata/fixture.c", "bench.plugin.p00000",
		[]string{"-Wno-unused-function", "-Wno-unused-const-variable", `-DFIXTURE_ID="bench.plugin.p00000"`},
		[]int{10, 100, 1000, 5000}},
	{"cpp", "plugins/stats/cpp/stats.cpp", "bench.plugin.s00000", []string{`-DSTATS_PLUGIN_ID="bench.plugin.s00000"`},
		[]int{1000}},
}

var (
	benchMu sync.Mutex
	// benchDirs maps "kind" (the largest set) and "kind/n" (a smaller
	// one) to the directory generated for it; TestMain removes them.
	benchDirs = map[string]string{}
)

// benchPath is the name of plugin file i in a set.
func benchPath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("libp%05d.so", i)) }

// benchSet returns a directory of n plugin files of kind k, each its own
// plugin ID, with manifests. The largest set of the kind is built once
// per test binary; a smaller set is a directory of hard links to its
// first n files (and their manifests), made once per size. Within one set
// the files are distinct inodes, so loading each of them loads n
// libraries (glibc's dlopen treats a second path to an inode it has
// loaded as the library already loaded, and loads nothing).
func benchSet(b *testing.B, k benchKind, n int) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	full := slices.Max(k.sizes)
	if n > full {
		b.Fatalf("benchSet: %d %s plugins, at most %d", n, k.name, full)
	}
	top := benchDirs[k.name]
	if top == "" {
		top = buildBenchSet(b, k, full)
	}
	if n == full {
		return top
	}
	key := fmt.Sprintf("%s/%d", k.name, n)
	if dir := benchDirs[key]; dir != "" {
		return dir
	}
	dir, err := os.MkdirTemp("", "dynop-bench-plugins")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs[key] = dir
	inodes := make(map[uint64]bool, n)
	for i := range n {
		src, dst := benchPath(top, i), benchPath(dir, i)
		for _, p := range [][2]string{{src, dst}, {discover.ManifestPath(src), discover.ManifestPath(dst)}} {
			if err := os.Link(p[0], p[1]); err != nil {
				b.Fatal(err)
			}
		}
		fi, err := os.Stat(dst)
		if err != nil {
			b.Fatal(err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			b.Fatalf("benchSet: no inode for %s", dst)
		}
		inodes[st.Ino] = true
	}
	if len(inodes) != n {
		b.Fatalf("benchSet: %d files in %s are %d inodes", n, dir, len(inodes))
	}
	return dir
}

// buildBenchSet builds the n plugins of kind k in a new directory.
func buildBenchSet(b *testing.B, k benchKind, n int) string {
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
	for i := range n {
		id := fmt.Sprintf("%s%05d", prefix, i)
		path := benchPath(dir, i)
		data := bytes.ReplaceAll(orig, []byte(k.placeholder), []byte(id))
		if err := os.WriteFile(path, data, 0o755); err != nil {
			b.Fatal(err)
		}
		m.Info.ID, m.File = id, filepath.Base(path)
		m.SHA256, m.Size, _ = sign.HashReader(bytes.NewReader(data))
		// Not discover.WriteManifest: its atomic write syncs each file.
		text, err := m.Encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(discover.ManifestPath(path), text, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// loadEach is NVIGI's way: load every library in dir to ask for its info
// (dlopen, get_info, dlclose), then open a host over them.
func loadEach(b *testing.B, dir string, n int) *dynop.Host {
	paths, err := filepath.Glob(filepath.Join(dir, "*.so"))
	if err != nil || len(paths) != n {
		b.Fatalf("%d plugins, want %d, %v", len(paths), n, err)
	}
	ps := make([]plugin.Plugin, len(paths))
	for i, path := range paths {
		lib, err := openLibrary(path, loadMode{now: true})
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

// openBench opens a host with opts, without the registered Go plugins or
// the default paths, logging nowhere.
func openBench(b *testing.B, opts dynop.Options) *dynop.Host {
	opts.NoRegistered, opts.NoDefaultPaths, opts.Logger = true, true, slog.New(slog.DiscardHandler)
	h, err := dynop.Open(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// checkBench checks that h knows exactly n plugins, all available and
// each its own ID, and closes it.
func checkBench(b *testing.B, h *dynop.Host, n int) {
	sts := h.Plugins()
	if len(sts) != n {
		b.Fatalf("the host knows %d plugins, want %d", len(sts), n)
	}
	ids := make(map[string]bool, n)
	for _, st := range sts {
		if st.State != dynop.StateAvailable || ids[st.Info.ID] {
			b.Fatalf("%s (%s): %v %v, ID seen before: %v", st.Info.ID, st.Path, st.State, st.Err, ids[st.Info.ID])
		}
		ids[st.Info.ID] = true
	}
	if err := h.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenVsLoadEach times opening a host over n plugin files three
// ways, one after another in each iteration on the same files: from the
// registry cache (warmed before the loop), from the plugins' manifests
// only (NoCache), and NVIGI's way (loadEach: dlopen every library to ask
// for its info, dlclose it, then open a host over what it said). Each
// time is of the open alone (loading included for load-each), not of
// checking or closing the host. It reports the mean of each in ms per
// open (cached-ms, manifests-ms, load-each-ms), their ratio load-each /
// cached (speedup), and 0 for ns/op, which would otherwise be the sum of
// all three and of the checks and closes (Go's output then omits ns/op).
// Sub-benchmarks kind/n=N: the C fixture at 10 to 5,000 plugins, the C++
// plugin at 1,000.
//
// The DESIGN target: opening a host over 1,000 plugins from
// manifests/cache vs loading each plugin to ask it (NVIGI's way): ≥ 20×
// faster, ≤ 20 ms.
func BenchmarkOpenVsLoadEach(b *testing.B) {
	for _, k := range benchKinds {
		b.Run(k.name, func(b *testing.B) {
			for _, n := range k.sizes {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					dir := benchSet(b, k, n)
					cached := dynop.Options{Paths: []string{dir}, CacheDir: b.TempDir()}
					manifests := dynop.Options{Paths: []string{dir}, NoCache: true}
					checkBench(b, openBench(b, cached), n)
					var tc, tm, tl time.Duration
					iters := 0
					for b.Loop() {
						t0 := time.Now()
						h := openBench(b, cached)
						tc += time.Since(t0)
						checkBench(b, h, n)
						t0 = time.Now()
						h = openBench(b, manifests)
						tm += time.Since(t0)
						checkBench(b, h, n)
						t0 = time.Now()
						h = loadEach(b, dir, n)
						tl += time.Since(t0)
						checkBench(b, h, n)
						iters++
					}
					ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(iters) }
					b.ReportMetric(ms(tc), "cached-ms")
					b.ReportMetric(ms(tm), "manifests-ms")
					b.ReportMetric(ms(tl), "load-each-ms")
					b.ReportMetric(float64(tl)/float64(tc), "speedup")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

// BenchmarkColdScan is the cost of reading a plugin with neither manifest
// nor cache entry: the host hashes it and runs a scanner child process
// (this test binary) that loads it. 16 plugins per iteration, scanned in
// parallel as Open does; ns/plugin is the cost per plugin. (It is what
// the cache and the manifests of the DESIGN target save: opening a host
// over 1,000 plugins from manifests/cache vs loading each plugin to ask
// it (NVIGI's way): ≥ 20× faster, ≤ 20 ms.)
func BenchmarkColdScan(b *testing.B) {
	const n = 16
	src := benchSet(b, benchKinds[0], n)
	dir := b.TempDir()
	for i := range n {
		data, err := os.ReadFile(benchPath(src, i))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(benchPath(dir, i), data, 0o755); err != nil {
			b.Fatal(err)
		}
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

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one, and removes the generated plugins.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	code := m.Run()
	for _, dir := range benchDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
