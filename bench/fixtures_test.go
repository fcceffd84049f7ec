package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

var ctx = context.Background()

// fixtureDir holds the plugins the benchmarks build, for the whole run;
// TestMain removes it.
var fixtureDir string

// TestMain serves as the scanner child process when a host of the
// benchmarks starts this binary as one (the native host reads its plugin
// files so), and removes fixtureDir at the end.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	dir, err := os.MkdirTemp("", "dynop-bench")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	closeHosts()
	closeEngines()
	stopPeers()
	stopPython()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	fixtureMu sync.Mutex
	fixtures  = map[string]string{}
)

// fixture returns the path of the plugin file name, built by build the
// first time it is asked for in this process (into the caller's temporary
// directory, then moved to fixtureDir, which outlives the caller). If
// build skips the benchmark (no compiler for WebAssembly, say), every
// benchmark that asks for name is skipped with the same reason.
func fixture(b testing.TB, name string, build func(testing.TB) string) string {
	b.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if path, ok := fixtures[name]; ok {
		return path
	}
	built := build(b)
	path := filepath.Join(fixtureDir, name)
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(built, path); err != nil {
		b.Fatal(err)
	}
	fixtures[name] = path
	return path
}

// The plugins of the benchmarks, one build each.
func nopNative(b *testing.B) string {
	return fixture(b, "libbench_nop.so", func(t testing.TB) string { return cbuild.Plugin(t, "libbench_nop.so", "bench/testdata/nop.c") })
}

func nopWasm(b *testing.B) string {
	return fixture(b, "bench_nop.wasm", func(t testing.TB) string { return cbuild.Wasm(t, "bench_nop.wasm", []string{"bench/testdata/nop.c"}) })
}

func vecmathNative(b *testing.B) string { return fixture(b, "libdynop_vecmath.so", cbuild.VecMath) }

func vecmathWasm(b *testing.B) string {
	return fixture(b, "vecmath.wasm", func(t testing.TB) string {
		return cbuild.Wasm(t, "vecmath.wasm", []string{"plugins/vecmath/c/vecmath.c"})
	})
}

func imgprocNative(b *testing.B) string { return fixture(b, "libdynop_imgproc.so", cbuild.Imgproc) }

// codecNative returns the native codec plugin, or "" and why not where
// its libraries (libjpeg-turbo, libpng, libwebp) are missing.
func codecNative(b *testing.B) (string, error) {
	if _, _, err := cbuild.CodecFlags(cbuild.Compiler(b, false)); err != nil {
		return "", err
	}
	return fixture(b, "libdynop_codec.so", cbuild.Codec), nil
}

func imgprocWasm(b *testing.B) string { return fixture(b, "imgproc.wasm", cbuild.ImgprocWasm) }

// A hostKind is one way dynop runs a plugin: a compiled-in Go plugin, a
// native library, or a WebAssembly module with the default per-call
// deadline or uninterruptible (Sandbox.CallTimeout < 0).
type hostKind string

const (
	goHost            hostKind = "go"
	nativeHost        hostKind = "native"
	wasmHost          hostKind = "wasm"
	wasmUninterrupted hostKind = "wasm-uninterruptible"
)

var (
	hostMu sync.Mutex
	hosts  = map[hostKind]*dynop.Host{}
)

// host returns the host of kind k, opened once per process over the
// plugins of the benchmarks in that form: bench.nop, vecmath and imgproc
// (native or WebAssembly builds), or the Go plugins bench.go and image.
// Each plugin ID is in one host only, so no build of one competes with
// another. The hosts close in TestMain.
func host(b *testing.B, k hostKind) *dynop.Host {
	b.Helper()
	hostMu.Lock()
	h := hosts[k]
	hostMu.Unlock()
	if h != nil {
		return h
	}
	opts := dynop.Options{NoRegistered: true, NoDefaultPaths: true, CacheDir: filepath.Join(fixtureDir, "cache", string(k)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	switch k {
	case goHost:
		opts.Plugins = []plugin.Plugin{goBenchPlugin{}, imageplugin.New()}
	case nativeHost:
		opts.Paths = []string{nopNative(b), vecmathNative(b), imgprocNative(b)}
	case wasmHost, wasmUninterrupted:
		opts.Paths = []string{nopWasm(b), vecmathWasm(b), imgprocWasm(b)}
		if k == wasmUninterrupted {
			opts.Loaders = []dynop.LoaderConfig{wasm.Config{CallTimeout: -1}}
		}
	}
	h, err := dynop.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range h.Plugins() {
		if st.Err != nil {
			h.Close(ctx)
			b.Fatalf("%s host: %s: %v", k, st.Path, st.Err)
		}
	}
	hostMu.Lock()
	defer hostMu.Unlock()
	hosts[k] = h
	return h
}

func closeHosts() {
	hostMu.Lock()
	defer hostMu.Unlock()
	for k, h := range hosts {
		h.Close(ctx)
		delete(hosts, k)
	}
}

// goBenchPlugin is the Go form of the benchmarks' plugins: vecmath's
// interface, of which Nop is the call measured, and the empty operator
// bench.Nop.
type goBenchPlugin struct{}

const goBenchID = "dynop.plugin.bench_go"

var nopSchema = schema.Op{
	Name: "bench.Nop", Doc: "Does nothing.",
	Inputs:  []schema.Input{{Name: "in", Doc: "Any tensor."}},
	Outputs: []schema.Output{{Name: "out", Doc: "A tensor like the input, untouched."}},
	Devices: []schema.Device{schema.CPU},
}

func (goBenchPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: goBenchID, Version: iface.V(1, 0, 0), Description: "The Go plugin of the call benchmarks.",
		Interfaces: []iface.Desc{vecmath.Interface.Desc}, Operators: []schema.Op{nopSchema}}
}

func (goBenchPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	if err := vecmath.Interface.Provide(h, goMath{}); err != nil {
		return err
	}
	return h.RegisterOperator(op.Operator{Schema: nopSchema,
		Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return nopImpl{}, nil }}})
}

// goMath is vecmath.Math in Go; only Nop is measured.
type goMath struct{}

func (goMath) Saxpy(a float32, x, y []float32) {
	for i := range x {
		y[i] += a * x[i]
	}
}

func (goMath) Dot(x, y []float32) (s float32) {
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func (goMath) Scale(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}

// Nop is kept out of line, as a real kernel is.
//
//go:noinline
func (goMath) Nop() {}

// nopImpl is bench.Nop in Go.
type nopImpl struct{}

func (nopImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Shapes: in[0].Shapes()}}, nil
}

//go:noinline
func (nopImpl) Run(context.Context, []*tensor.Batch, []*tensor.Batch) error { return nil }
