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
// the loop also calls the export through wasmtime-go's Func.Call, the
// engine's own Go API (x-goapi: dynop's time over that call's).
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
		goAPI, _ := raw.CallGoAPI(ctx) // Wasmtime's: a third row
		var dynopTime, rawTime, goAPITime time.Duration
		b.SetBytes(int64(8 * n))
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if err := inst.Run(ctx, []*tensor.Batch{out}, []*tensor.Batch{in}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := raw.Call(ctx); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			rawTime += t2.Sub(t1)
			if goAPI {
				if _, err := raw.CallGoAPI(ctx); err != nil {
					b.Fatal(err)
				}
				goAPITime += time.Since(t2)
			}
			dynopTime += t1.Sub(t0)
		}
		b.ReportMetric(float64(dynopTime.Nanoseconds())/float64(b.N), "dynop-ns/op")
		b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-ns/op")
		b.ReportMetric(float64(dynopTime)/float64(rawTime), "ratio")
		if goAPI {
			b.ReportMetric(float64(goAPITime.Nanoseconds())/float64(b.N), "goapi-ns/op")
			b.ReportMetric(float64(dynopTime)/float64(goAPITime), "x-goapi")
		}
	})
}
