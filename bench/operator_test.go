package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/tensor"
)

// graySizes are the inputs of BenchmarkGray: square RGBA uint8 images
// from 256 bytes to 16 MiB. 4 MiB (1024×1024) is the DESIGN target's.
var graySizes = []struct {
	name string
	side int
}{{"in=256B", 8}, {"in=4KiB", 32}, {"in=64KiB", 128}, {"in=1MiB", 512}, {"in=4MiB", 1024}, {"in=16MiB", 2048}}

// versus times ref and row alternately, in rounds of b.N/8 calls of each,
// so that drift in the machine's speed touches both alike. It reports
// row's time per call as ns/op, ref's as ref-ns/op, row/ref as ratio,
// row's allocations per call, and the MB/s of row's bytes per call.
func versus(b *testing.B, bytes int64, ref, row func()) {
	ref()
	row() // warm caches and pools
	allocs := testing.AllocsPerRun(3, row)
	const rounds = 8
	chunk := max(1, b.N/rounds)
	var tRef, tRow time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		k := min(chunk, b.N-done)
		t0 := time.Now()
		for range k {
			ref()
		}
		t1 := time.Now()
		for range k {
			row()
		}
		tRef, tRow = tRef+t1.Sub(t0), tRow+time.Since(t1)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(tRow.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(tRef.Nanoseconds())/n, "ref-ns/op")
	b.ReportMetric(float64(tRow)/float64(tRef), "ratio")
	b.ReportMetric(allocs, "allocs/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*n/tRow.Seconds()/1e6, "MB/s")
	}
}

// BenchmarkGray converts RGBA images to grayscale with the C kernel of
// the imgproc plugin called directly through cgo (the reference: the
// exported dynop_imgproc_gray_u8, the operator's scalar variant), and as
// the operator imgproc.Grayscale through dynop: the native plugin's scalar
// variant (the same code: the difference is dynop's), the variant the
// host chooses for this CPU, the WebAssembly build (same C, scalar, with
// and without per-call deadlines), and the Go plugin's image.Grayscale
// (the same arithmetic in Go). Each row alternates with the reference in
// its loop and reports the ratio of their times. Over sizes from 256 B to 16 MiB it shows
// where the cost of a call stops mattering. Target (DESIGN.md): at 4 MiB
// the native operator within 1.02× of the direct call; the WebAssembly
// build within 2× of the native one.
func BenchmarkGray(b *testing.B) {
	for _, size := range graySizes {
		h, w, c := size.side, size.side, 4
		src := make([]uint8, h*w*c)
		for i := range src {
			src[i] = uint8(i * 7)
		}
		dst := make([]uint8, h*w)
		img, err := tensor.FromSlice(src, int64(h), int64(w), int64(c))
		if err != nil {
			b.Fatal(err)
		}
		img, _ = img.WithLayout("HWC")
		in := batchOf(b, img)
		rows := []struct {
			name string
			f    func(b *testing.B) func()
		}{
			{"c-direct", func(b *testing.B) func() {
				kernel, err := rawcall.Symbol(imgprocNative(b), "dynop_imgproc_gray_u8")
				if err != nil {
					b.Fatal(err)
				}
				return func() { rawcall.GrayU8(kernel, src, h, w, c, dst) }
			}},
			{"dynop-native-scalar", func(b *testing.B) func() {
				return prepareRun(b, host(b, nativeHost), "imgproc.Grayscale", nil, "scalar", in)
			}},
			{"dynop-native", func(b *testing.B) func() {
				return prepareRun(b, host(b, nativeHost), "imgproc.Grayscale", nil, "", in)
			}},
			{"dynop-wasm-uninterruptible", func(b *testing.B) func() {
				return prepareRun(b, host(b, wasmUninterrupted), "imgproc.Grayscale", nil, "", in)
			}},
			{"dynop-wasm", func(b *testing.B) func() {
				return prepareRun(b, host(b, wasmHost), "imgproc.Grayscale", nil, "", in)
			}},
			{"dynop-go", func(b *testing.B) func() {
				return prepareRun(b, host(b, goHost), "image.Grayscale", nil, "", in)
			}},
		}
		bytes := int64(len(src) + len(dst))
		var direct func()
		for i, r := range rows {
			b.Run(fmt.Sprintf("%s/%s", size.name, r.name), func(b *testing.B) {
				if i == 0 {
					direct = r.f(b)
					b.SetBytes(bytes)
					loop(b, direct)
					return
				}
				versus(b, bytes, direct, r.f(b))
			})
		}
	}
}
