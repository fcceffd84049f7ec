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

// BenchmarkWasmVsNative runs each imgproc operator on a 512×512 RGB uint8
// image through its WebAssembly build and its native scalar variant —
// the same C — alternating in one loop. ratio is wasm's time over
// native's: the target is ≤ 2. The wasm build runs twice: uninterruptible
// (wasm.Config.CallTimeout < 0), and with deadlines, the default, whose
// interruption checks wazero v1.12 makes costly (wazero issue #2466).
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
	wasmLib := cbuild.ImgprocWasm(b)
	modes := []struct {
		name string
		h    *dynop.Host
	}{
		{"uninterruptible", open(wasmLib, -1)}, // wasm.Config.CallTimeout < 0
		{"deadline", open(wasmLib, 0)},         // the default: 30 s, and the caller's context
	}
	img, err := tensor.Random(rand.New(rand.NewPCG(1, 2)), tensor.Uint8, "HWC", [][]int64{{512, 512, 3}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args schema.Args
	}{
		{"imgproc.GaussianBlur", schema.Args{"sigma": 2.0}},
		{"imgproc.Sobel", nil},
		{"imgproc.Resize", schema.Args{"width": 256, "height": 256}},
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
				w, wout := prepare(mode.h)
				var nt, wt time.Duration
				b.ResetTimer()
				for range b.N {
					t0 := time.Now()
					if err := n.Run(ctx, []*tensor.Batch{nout}, []*tensor.Batch{img}); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := w.Run(ctx, []*tensor.Batch{wout}, []*tensor.Batch{img}); err != nil {
						b.Fatal(err)
					}
					wt += time.Since(t1)
					nt += t1.Sub(t0)
				}
				b.ReportMetric(float64(nt.Nanoseconds())/float64(b.N)/1e6, "native-ms")
				b.ReportMetric(float64(wt.Nanoseconds())/float64(b.N)/1e6, "wasm-ms")
				b.ReportMetric(float64(wt)/float64(nt), "ratio")
			})
		}
	}
}
