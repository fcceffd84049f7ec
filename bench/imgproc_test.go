package bench

import (
	"image"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/disintegration/imaging"

	"github.com/dynop/dynop"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// photo returns a w×h RGBA image of smooth gradients with noise, the same
// for every call, as image.NRGBA (imaging's native form).
func photo(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(7, 11))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			noise := rng.IntN(32)
			img.Pix[i+0] = uint8((x*255/w + noise) & 0xFF)
			img.Pix[i+1] = uint8((y*255/h + noise) & 0xFF)
			img.Pix[i+2] = uint8(((x+y)*255/(w+h) + noise) & 0xFF)
			img.Pix[i+3] = 255
		}
	}
	return img
}

// prepareRun makes an instance of operator name in h (variant forces a
// variant; "" lets the host choose), sets it up for inputs and allocates
// its outputs, and returns one steady-state call.
func prepareRun(b *testing.B, h *dynop.Host, name string, args schema.Args, variant string, inputs ...*tensor.Batch) func() {
	b.Helper()
	var opts []op.Option
	if variant != "" {
		opts = append(opts, op.WithVariant(variant))
	}
	in, err := h.NewOperator(ctx, name, args, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close() })
	outs, err := in.Exec(ctx, inputs...)
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		if err := in.Run(ctx, outs, inputs); err != nil {
			b.Fatal(err)
		}
	}
}

// batchOf is a batch of one sample, t.
func batchOf(b *testing.B, t *tensor.Tensor) *tensor.Batch {
	b.Helper()
	batch, err := tensor.NewBatch(t)
	if err != nil {
		b.Fatal(err)
	}
	return batch
}

func imageBatch(b *testing.B, img image.Image) *tensor.Batch {
	b.Helper()
	t, err := tensor.FromImage(img)
	if err != nil {
		b.Fatal(err)
	}
	return batchOf(b, t)
}

// compare times ref (the peer) and ours alternately in one loop, so both
// see the same machine, and reports each one's time per call and the
// speedup ref/ours.
func compare(b *testing.B, ref, ours func()) {
	ref()
	ours() // warm caches and pools
	var tRef, tOurs time.Duration
	for b.Loop() {
		t0 := time.Now()
		ref()
		t1 := time.Now()
		ours()
		tRef += t1.Sub(t0)
		tOurs += time.Since(t1)
	}
	b.ReportMetric(float64(tRef.Nanoseconds())/float64(b.N), "peer-ns/op")
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "dynop-ns/op")
	b.ReportMetric(float64(tRef)/float64(tOurs), "speedup")
}

// variants are the ways each dynop operator runs in the benchmarks: the
// variant the host chooses for this CPU, and the scalar reference.
var variants = []struct{ name, force string }{{"chosen", ""}, {"scalar", "scalar"}}

// imageCases are the image kernels against imaging on a 1920×1080 RGBA
// image (the form imaging works in).
var imageCases = []struct {
	name string
	op   string
	args schema.Args
	peer func(img image.Image)
}{
	{"Blur/sigma=2", "imgproc.GaussianBlur", schema.Args{"sigma": 2.0}, func(img image.Image) { imaging.Blur(img, 2) }},
	{"Blur/sigma=5", "imgproc.GaussianBlur", schema.Args{"sigma": 5.0}, func(img image.Image) { imaging.Blur(img, 5) }},
	{"Grayscale", "imgproc.Grayscale", nil, func(img image.Image) { imaging.Grayscale(img) }},
	{"Resize/half", "imgproc.Resize", schema.Args{"width": 960, "height": 540}, func(img image.Image) { imaging.Resize(img, 960, 540, imaging.Linear) }},
	{"Resize/double", "imgproc.Resize", schema.Args{"width": 3840, "height": 2160}, func(img image.Image) { imaging.Resize(img, 3840, 2160, imaging.Linear) }},
	// imaging has no Sobel operator: one of its 3×3 convolutions is half
	// of the work Sobel does (two convolutions and a magnitude).
	{"Sobel", "imgproc.Sobel", nil, func(img image.Image) {
		imaging.Convolve3x3(img, [9]float64{-1, 0, 1, -2, 0, 2, -1, 0, 1}, nil)
	}},
}

// BenchmarkImageVsImaging runs each image kernel through dynop (the
// variant chosen for this CPU, and the scalar reference) against
// github.com/disintegration/imaging on the same image. Target: speedup ≥ 10.
// imaging spreads its work over GOMAXPROCS goroutines and a dynop operator
// call runs on one: compare at -cpu 1 for one core each.
func BenchmarkImageVsImaging(b *testing.B) {
	img := photo(1920, 1080)
	in := imageBatch(b, img)
	for _, c := range imageCases {
		for _, v := range variants {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				run := prepareRun(b, host(b, nativeHost), c.op, c.args, v.force, in)
				compare(b, func() { c.peer(img) }, run)
			})
		}
	}
}

// BenchmarkSaxpyVsCopy runs the memory-bound kernel imgproc.Saxpy (out =
// a·x + y on float32) on 64 MiB arrays against a copy of 64 MiB in the
// same loop: the bandwidth a kernel can hope for. It reports both in GB/s
// of bytes read and written (saxpy moves three arrays, the copy two) and
// saxpy's as a percentage of the copy's. Target: ≥ 85%.
func BenchmarkSaxpyVsCopy(b *testing.B) {
	const n = 16 << 20 // float32 elements: 64 MiB per array
	rng := rand.New(rand.NewPCG(3, 5))
	x, err := tensor.Random(rng, tensor.Float32, "", [][]int64{{n}})
	if err != nil {
		b.Fatal(err)
	}
	y, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{{n}})
	src, _ := x.Sample(0).Bytes()
	dst := make([]byte, len(src))
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			run := prepareRun(b, host(b, nativeHost), "imgproc.Saxpy", schema.Args{"a": 0.5}, v.force, x, y)
			copy(dst, src)
			var tCopy, tSaxpy time.Duration
			for b.Loop() {
				t0 := time.Now()
				copy(dst, src)
				t1 := time.Now()
				run()
				tCopy += t1.Sub(t0)
				tSaxpy += time.Since(t1)
			}
			copyBW := float64(2*len(src)*b.N) / tCopy.Seconds() / 1e9
			saxpyBW := float64(3*len(src)*b.N) / tSaxpy.Seconds() / 1e9
			b.ReportMetric(copyBW, "copy-GB/s")
			b.ReportMetric(saxpyBW, "saxpy-GB/s")
			b.ReportMetric(100*saxpyBW/copyBW, "%-of-copy")
		})
	}
}
