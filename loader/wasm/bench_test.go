package wasm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkCallVsRawEngine compares one run of wgood.Scale through dynop
// (op.Instance.Run: checks, tensors laid out, input copied in, output
// zeroed and copied out) with the same export called through the engine
// alone on data already in the module's memory (wasm.RawScale),
// alternating in one loop, for each engine of the build and both of
// dynop's modes, the raw call configured alike: with a deadline per call
// (the default) and uninterruptible (Config.CallTimeout < 0). ratio is
// dynop's time over the raw call's: the target is ≤ 1.5. Under Wasmtime
// a second loop alternates dynop's call with the export called through
// wasmtime-go's Func.Call, the engine's own Go API (x-goapi: dynop's time
// over that call's).
func BenchmarkCallVsRawEngine(b *testing.B) {
	for _, engine := range wasm.Engines() {
		for _, mode := range []struct {
			name    string
			timeout time.Duration
		}{{"deadline", 0}, {"uninterruptible", -1}} {
			for _, n := range []int{16, 16 << 10, 256 << 10} {
				benchCallVsRaw(b, engine, mode.name, mode.timeout, n)
			}
		}
	}
}

func benchCallVsRaw(b *testing.B, engine, mode string, timeout time.Duration, n int) {
	b.Run(fmt.Sprintf("%s/%s/floats=%d", engine, mode, n), func(b *testing.B) {
		ctx := context.Background()
		opts := dynop.Options{Logger: nopLogger(), CacheDir: cacheDir(b), Loaders: []dynop.LoaderConfig{wasm.Config{CallTimeout: timeout, Engine: engine}}}
		p, err := wasm.Load(ctx, wgood(b), opts)
		if err != nil {
			b.Fatal(err)
		}
		opts.NoDefaultPaths, opts.NoRegistered, opts.Plugins = true, true, []plugin.Plugin{p}
		h, err := dynop.Open(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		inst, err := h.NewOperator(ctx, "wgood.Scale", schema.Args{"factor": 2.0})
		if err != nil {
			b.Fatal(err)
		}
		defer inst.Close()
		raw, err := wasm.NewRawScale(ctx, p, n)
		if err != nil {
			b.Fatal(err)
		}
		x, _ := tensor.New(tensor.Float32, int64(n))
		in, _ := tensor.NewBatch(x)
		descs, err := inst.Setup([]*tensor.Batch{in})
		if err != nil {
			b.Fatal(err)
		}
		out, _ := descs[0].Alloc()
		goAPI, _ := raw.CallGoAPI(ctx) // Wasmtime's: a second loop
		outs, ins := []*tensor.Batch{out}, []*tensor.Batch{in}
		run := func() {
			if err := inst.Run(ctx, outs, ins); err != nil {
				b.Fatal(err)
			}
		}
		// versus alternates dynop's call with other in b.N rounds and
		// returns the time of each.
		versus := func(other func() error) (dynopTime, otherTime time.Duration) {
			for range b.N {
				t0 := time.Now()
				run()
				t1 := time.Now()
				if err := other(); err != nil {
					b.Fatal(err)
				}
				otherTime += time.Since(t1)
				dynopTime += t1.Sub(t0)
			}
			return dynopTime, otherTime
		}
		b.SetBytes(int64(8 * n))
		b.ResetTimer()
		dynopTime, rawTime := versus(func() error { return raw.Call(ctx) })
		b.ReportMetric(float64(dynopTime.Nanoseconds())/float64(b.N), "dynop-ns/op")
		b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-ns/op")
		b.ReportMetric(float64(dynopTime)/float64(rawTime), "ratio")
		if goAPI {
			// A loop of its own: Func.Call's garbage would slow the
			// other two.
			dynopTime, goAPITime := versus(func() error { _, err := raw.CallGoAPI(ctx); return err })
			b.ReportMetric(float64(dynopTime.Nanoseconds())/float64(b.N), "dynop-vs-goapi-ns/op")
			b.ReportMetric(float64(goAPITime.Nanoseconds())/float64(b.N), "goapi-ns/op")
			b.ReportMetric(float64(dynopTime)/float64(goAPITime), "x-goapi")
		}
	})
}
