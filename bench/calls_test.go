package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynop/dynop/bench/internal/peer"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/tensor"
)

// goNop is the reference of the call benchmarks: a direct call of an
// empty Go function, kept out of line as a real kernel is.
//
//go:noinline
func goNop() {}

// vecmathNop acquires vecmath's interface from the host of kind k (the Go
// or the native build) and returns its Nop.
func vecmathNop(b *testing.B, k hostKind) func() {
	m, ref, err := acquire(b, k)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ref.Release() })
	return m.(vecmath.Math).Nop
}

func acquire(b *testing.B, k hostKind) (any, plugin.Ref, error) {
	id := vecmath.PluginID
	if k == goHost {
		id = goBenchID
	}
	return host(b, k).Acquire(ctx, id, vecmath.Interface.UID, vecmath.Interface.Version)
}

// wasmNop acquires the WebAssembly build of vecmath's interface and
// returns a call of its Nop (slot 3 of the table, no parameters).
func wasmNop(b *testing.B, k hostKind) func() {
	impl, ref, err := acquire(b, k)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ref.Release() })
	t := impl.(*wasm.Table)
	return func() {
		if _, err := t.Call(ctx, 3, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// wazeroNop instantiates a module exporting an empty function with
// wazero alone and returns a call of it: with a deadline per call
// (close-on-context-done and a context with a timeout, as dynop's
// default), or uninterruptible.
func wazeroNop(b *testing.B, deadline bool) func() {
	path := fixture(b, "nopraw.wasm", func(t testing.TB) string {
		return cbuild.WasmRaw(t, "nopraw.wasm", []string{"bench/testdata/nopraw.c"})
	})
	code, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(deadline))
	b.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	fn := mod.ExportedFunction("nop")
	stack := make([]uint64, 1)
	if !deadline {
		return func() {
			if err := fn.CallWithStack(ctx, stack); err != nil {
				b.Fatal(err)
			}
		}
	}
	return func() {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := fn.CallWithStack(c, stack)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// The peers are built and started once per process; a peer that does not
// build skips its rows with the reason.
var (
	stdOnce  sync.Once
	stdCall  func()
	stdErr   error
	rpcOnce  sync.Once
	rpcCall  func() error
	rpcStop  func()
	rpcErr   error
	peersDir string
)

func stdPluginNop(b *testing.B) func() {
	stdOnce.Do(func() { stdCall, stdErr = peer.StdPlugin(ctx, peerDir()) })
	if stdErr != nil {
		b.Skipf("peer did not build: %v", stdErr)
	}
	return stdCall
}

func goPluginNop(b *testing.B) func() {
	rpcOnce.Do(func() { rpcCall, rpcStop, rpcErr = peer.GoPlugin(ctx, peerDir()) })
	if rpcErr != nil {
		b.Skipf("peer did not build: %v", rpcErr)
	}
	return func() {
		if err := rpcCall(); err != nil {
			b.Fatal(err)
		}
	}
}

func peerDir() string {
	if peersDir == "" {
		peersDir = filepath.Join(fixtureDir, "peers")
		os.MkdirAll(peersDir, 0o755)
	}
	return peersDir
}

func stopPeers() {
	if rpcStop != nil {
		rpcStop()
	}
}

// loop is one row: b.N calls of f.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	f() // warm
	for b.Loop() {
		f()
	}
}

// BenchmarkCall is the cost of calling an empty function every way a Go
// program can call into a plugin, against a direct Go call (the
// reference), all in one process: each row alternates with the reference
// in its loop (see versus). The dynop rows call Nop of vecmath's
// interface, acquired from the Go, native and WebAssembly builds of the
// plugin. Targets (DESIGN.md): through a Go plugin at most 20 ns more
// than the direct call and no allocation; in-process calls at least
// 1000× faster than go-plugin's RPC.
func BenchmarkCall(b *testing.B) {
	rows := []struct {
		name string
		f    func(b *testing.B) func()
	}{
		{"go-direct", func(*testing.B) func() { return goNop }},
		{"dynop-go", func(b *testing.B) func() { return vecmathNop(b, goHost) }},
		{"stdplugin", stdPluginNop},
		{"cgo-raw", func(*testing.B) func() { return rawcall.Nop }},
		{"dynop-native", func(b *testing.B) func() { return vecmathNop(b, nativeHost) }},
		{"wazero-raw", func(b *testing.B) func() { return wazeroNop(b, false) }},
		{"dynop-wasm-uninterruptible", func(b *testing.B) func() { return wasmNop(b, wasmUninterrupted) }},
		{"wazero-raw-deadline", func(b *testing.B) func() { return wazeroNop(b, true) }},
		{"dynop-wasm", func(b *testing.B) func() { return wasmNop(b, wasmHost) }},
		{"go-plugin-rpc", goPluginNop},
	}
	for i, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			if i == 0 {
				loop(b, goNop)
				return
			}
			versus(b, 0, goNop, r.f(b))
		})
	}
}

// opRow is a row of BenchmarkOperatorEmpty: f makes the call; ref names
// the row it alternates with ("": it is a reference).
type opRow struct {
	name, ref string
	f         func(b *testing.B) func()
}

// nopOperator returns a run of bench.Nop from the host of kind k on a
// 16-byte tensor, set up, with its output allocated.
func nopOperator(b *testing.B, k hostKind) func() {
	x, _ := tensor.New(tensor.Uint8, 16)
	return prepareRun(b, host(b, k), "bench.Nop", nil, "", batchOf(b, x))
}

// BenchmarkOperatorEmpty is the cost of one call of an operator that
// does nothing, on a one-sample batch of 16 bytes, through each of
// dynop's loaders, against calling the Go operator's Run directly (the
// reference) and raw cgo calls in the same process. Targets (DESIGN.md):
// through a native plugin at most 1.5× a raw cgo call of an empty
// function; through a Go plugin at most 20 ns more than the direct Run,
// no allocation.
//
// cgo-raw-2ptr passes two Go pointers, as an operator's call passes its
// tensors' data, which cgo checks unless GODEBUG=cgocheck=0: the floor
// for any C function that reads Go memory. Each row but the references
// alternates with its reference in its loop: the Go plugin with the
// direct Run, the native plugin with the raw cgo call, the WebAssembly
// builds with the native one.
func BenchmarkOperatorEmpty(b *testing.B) {
	x, _ := tensor.New(tensor.Uint8, 16)
	y, _ := tensor.New(tensor.Uint8, 16)
	inputs, outputs := []*tensor.Batch{batchOf(b, x)}, []*tensor.Batch{batchOf(b, y)}
	var impl op.Impl = nopImpl{}
	rows := []opRow{
		{"go-direct", "", func(*testing.B) func() { return func() { impl.Run(ctx, outputs, inputs) } }},
		{"dynop-go", "go-direct", func(b *testing.B) func() { return nopOperator(b, goHost) }},
		{"cgo-raw", "", func(*testing.B) func() { return rawcall.Nop }},
		{"cgo-raw-2ptr", "cgo-raw", func(*testing.B) func() { return func() { rawcall.Nop2(x.Base(), y.Base()) } }},
		{"dynop-native", "cgo-raw", func(b *testing.B) func() { return nopOperator(b, nativeHost) }},
		{"dynop-wasm-uninterruptible", "dynop-native", func(b *testing.B) func() { return nopOperator(b, wasmUninterrupted) }},
		{"dynop-wasm", "dynop-native", func(b *testing.B) func() { return nopOperator(b, wasmHost) }},
	}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			if r.ref == "" {
				loop(b, r.f(b))
				return
			}
			ref := rows[slices.IndexFunc(rows, func(o opRow) bool { return o.name == r.ref })].f(b)
			versus(b, 0, ref, r.f(b))
		})
	}
}
