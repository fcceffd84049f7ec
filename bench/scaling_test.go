package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkMainJobKernels is the bound on the main job's scaling that
// the machine sets: the main job's four operators (decode, resize, blur,
// encode, with the native codec plugin where it builds, decoding shrunk on
// load as its pass has the main job do) called directly,
// image after image, by one goroutine over 16 photos and by two over 8
// each at once, alternating in one loop, with no pipeline around them
// (no files, no batches, no workers). Its speedup is what two cores give
// this work; the main job's two workers are measured against it.
func BenchmarkMainJobKernels(b *testing.B) {
	dir := b.TempDir()
	if err := testimage.WriteJPEGs(dir, 16, 1920, 1080); err != nil {
		b.Fatal(err)
	}
	var files []*tensor.Batch
	for i := range 16 {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("photo%02d.jpg", i)))
		if err != nil {
			b.Fatal(err)
		}
		t, _ := tensor.FromSlice(data, int64(len(data)))
		in, _ := tensor.NewBatch(t)
		files = append(files, in)
	}
	ctx := context.Background()
	paths := []string{imgprocNative(b)}
	decode, encode := "image.Decode", "image.Encode"
	decodeArgs := schema.Args{"channels": 3}
	if codec, err := codecNative(b); err == nil {
		paths = append(paths, codec)
		decode, encode = "codec.Decode", "codec.Encode"
		// As the codec's pass has the main job decode: shrunk on load.
		decodeArgs = schema.Args{"channels": 3, "orientation": false, "min_width": 960, "min_height": 540}
	}
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
		Paths: paths, NoDefaultPaths: true, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	type chain []*op.Instance
	newChain := func() chain {
		var c chain
		for _, s := range []struct {
			name string
			args schema.Args
		}{{decode, decodeArgs}, {"imgproc.Resize", schema.Args{"width": 960, "height": 540}},
			{"imgproc.GaussianBlur", schema.Args{"sigma": 2.0}}, {encode, schema.Args{"format": "jpeg", "quality": 90}}} {
			in, err := h.NewOperator(ctx, s.name, s.args)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { in.Close() })
			c = append(c, in)
		}
		return c
	}
	run := func(c chain, imgs []*tensor.Batch) {
		for _, x := range imgs {
			cur := []*tensor.Batch{x}
			for _, in := range c {
				out, err := in.Exec(ctx, cur...)
				if err != nil {
					b.Fatal(err)
				}
				cur = out
			}
		}
	}
	chains := []chain{newChain(), newChain()}
	var one, two time.Duration
	round := func() {
		start := time.Now()
		run(chains[0], files)
		one += time.Since(start)
		start = time.Now()
		var wg sync.WaitGroup
		for k, c := range chains {
			wg.Go(func() { run(c, files[k*8:(k+1)*8]) })
		}
		wg.Wait()
		two += time.Since(start)
	}
	round()
	one, two = 0, 0
	for b.Loop() {
		round()
	}
	b.ReportMetric(one.Seconds()/two.Seconds(), "speedup")
	b.ReportMetric(float64(b.N*16)/one.Seconds(), "1goroutine-images/s")
	b.ReportMetric(float64(b.N*16)/two.Seconds(), "2goroutines-images/s")
}
