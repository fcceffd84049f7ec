package imgproc_test

import (
	"context"
	"github.com/dynop/dynop/loader/wasm"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkWasmVsNative runs each imgproc operator on a 1920×1080 RGB
// uint8 image through its WebAssembly build (the same C, built with
// -msimd128), its native scalar variant and the native variant dispatch
// chooses for this CPU, alternating in one loop. ratio is wasm's time
// over native scalar's (issue 27's target: ≤ 2), x-best over the
// native best variant's. The wasm build runs on the build's default
// engine (wasm.Engines()[0]: Wasmtime in a cgo build) twice: with a
// deadline per call, the default, and uninterruptible
// (wasm.Config.CallTimeout < 0).
func BenchmarkWasmVsNative(b *testing.B) {
	ctx := context.Background()
	open := func(lib string, timeout time.Duration) *dynop.Host {
		h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, Paths: []string{lib}, CacheDir: b.TempDir(),
			Loaders: []dynop.LoaderConfig{wasm.Config{CallTimeout: timeout}}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close(ctx) })
		return h
	}
	native := open(cbuild.Imgproc(b), 0)
	b.Logf("WebAssembly engine: %s", wasm.Engines()[0])
	wasmLib := cbuild.ImgprocWasm(b)
	modes := []struct {
		name string
		h    *dynop.Host
	}{
		{"uninterruptible", open(wasmLib, -1)}, // wasm.Config.CallTimeout < 0
		{"deadline", open(wasmLib, 0)},         // the default: 30 s, and the caller's context
	}
	img, err := tensor.Random(rand.New(rand.NewPCG(1, 2)), tensor.Uint8, "HWC", [][]int64{{1080, 1920, 3}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args schema.Args
	}{
		{"imgproc.GaussianBlur", schema.Args{"sigma": 2.0}},
		{"imgproc.Sobel", nil},
		{"imgproc.Resize", schema.Args{"width": 960, "height": 540}},
		{"imgproc.Grayscale", nil},
	} {
		for _, mode := range modes {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				prepare := func(h *dynop.Host, opts ...op.Option) (*op.Instance, *tensor.Batch) {
					in, err := h.NewOperator(ctx, c.name, c.args, opts...)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { in.Close() })
					descs, err := in.Setup([]*tensor.Batch{img})
					if err != nil {
						b.Fatal(err)
					}
					out, err := descs[0].Alloc()
					if err != nil {
						b.Fatal(err)
					}
					return in, out
				}
				n, nout := prepare(native, op.WithVariant("scalar"))
				best, bout := prepare(native)
				w, wout := prepare(mode.h)
				var nt, bt, wt time.Duration
				b.ResetTimer()
				for range b.N {
					t0 := time.Now()
					if err := n.Run(ctx, []*tensor.Batch{nout}, []*tensor.Batch{img}); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := best.Run(ctx, []*tensor.Batch{bout}, []*tensor.Batch{img}); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					if err := w.Run(ctx, []*tensor.Batch{wout}, []*tensor.Batch{img}); err != nil {
						b.Fatal(err)
					}
					wt += time.Since(t2)
					bt += t2.Sub(t1)
					nt += t1.Sub(t0)
				}
				b.ReportMetric(float64(nt.Nanoseconds())/float64(b.N)/1e6, "native-ms")
				b.ReportMetric(float64(bt.Nanoseconds())/float64(b.N)/1e6, "best-ms")
				b.ReportMetric(float64(wt.Nanoseconds())/float64(b.N)/1e6, "wasm-ms")
				b.ReportMetric(float64(wt)/float64(nt), "ratio")
				b.ReportMetric(float64(wt)/float64(bt), "x-best")
			})
		}
	}
}
