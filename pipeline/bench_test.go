package pipeline

import (
	"context"
	"fmt"
	"github.com/dynop/dynop/schema"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"

	dgraph "github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkDemoPipeline runs the demo pipeline (examples/pipelines/
// demo.yaml: the Go image plugin and the C imgproc plugin) over its six
// bundled images, with the pointwise chain fused and not, on 1 and 2
// workers: images/s.
func BenchmarkDemoPipeline(b *testing.B) {
	for _, c := range []struct {
		name    string
		noFuse  bool
		workers int
	}{{"fused/1", false, 1}, {"unfused/1", true, 1}, {"fused/2", false, 2}, {"unfused/2", true, 2}} {
		b.Run(c.name, func(b *testing.B) {
			h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
				Paths: []string{cbuild.Imgproc(b)}, NoDefaultPaths: true, CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close(context.Background())
			spec, err := Load("../examples/pipelines/demo.yaml")
			if err != nil {
				b.Fatal(err)
			}
			p, err := Compile(context.Background(), h, spec, Options{NoFuse: c.noFuse, Workers: c.workers, OutDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			images := 0
			for b.Loop() {
				sum, err := p.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				images += sum.Images
			}
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
		})
	}
}

// BenchmarkPointwiseChain runs image.Adjust, image.Gamma and
// image.Invert on a 1920x1080 RGB uint8 image (6 MiB), fused into one
// walk and as three operators: the fusion pass's gain without decoding
// and encoding around it.
func BenchmarkPointwiseChain(b *testing.B) {
	h := runHost(b)
	img := make([]uint8, 1080*1920*3)
	for i := range img {
		img[i] = uint8(i * 7)
	}
	t, err := tensor.FromSlice(img, 1080, 1920, 3)
	if err != nil {
		b.Fatal(err)
	}
	t, _ = t.WithLayout("HWC")
	in, _ := tensor.NewBatch(t)
	for _, fuse := range []bool{true, false} {
		name := map[bool]string{true: "fused", false: "unfused"}[fuse]
		b.Run(name, func(b *testing.B) {
			g := dgraph.New("chain")
			src, _ := g.AddInput("in")
			p := src.Out(0)
			for _, s := range []struct {
				kind string
				args schema.Args
			}{{"image.Adjust", schema.Args{"contrast": 1.3}}, {"image.Gamma", schema.Args{"gamma": 0.8}}, {"image.Invert", nil}} {
				n, err := g.AddNode(s.kind, s.kind, s.args, p)
				if err != nil {
					b.Fatal(err)
				}
				p = n.Out(0)
			}
			g.AddOutput("out", p)
			opts := dgraph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: dgraph.OperatorPopulate()}
			if !fuse {
				opts.Skip = []string{dgraph.FuseDesc.Name}
			}
			if err := dgraph.Build(context.Background(), g, opts); err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			b.SetBytes(int64(len(img)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Execute(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mainJobYAML is the main job of issue 23: decode photos, resize them to
// half, blur them (sigma 2) and encode them as JPEG, quality 90.
const mainJobYAML = `name: mainjob
batch_size: 8
inputs:
  photos: {files: [in/]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos], args: {channels: 3}}
  - {name: half, op: imgproc.Resize, inputs: [decode], args: {width: 960, height: 540}}
  - {name: blur, op: imgproc.GaussianBlur, inputs: [half], args: {sigma: 2.0}}
outputs:
  out: {from: blur, dir: out, format: jpeg, quality: 90}
`

// writeJPEGs writes n w×h photo-like JPEGs (quality 90) into dir.
func writeJPEGs(b *testing.B, dir string, n, w, h int) {
	b.Helper()
	for k := range n {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				i := img.PixOffset(x, y)
				img.Pix[i+0] = uint8((x*x/(w/4) + y + k*17) & 0xff)
				img.Pix[i+1] = uint8((x + 2*y*y/(h/3) + k*5) & 0xff)
				img.Pix[i+2] = uint8(((x ^ y) + k*31) & 0xff)
				img.Pix[i+3] = 255
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("photo%02d.jpg", k)))
		if err != nil {
			b.Fatal(err)
		}
		if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMainJob runs the main job over 50 generated 1920x1080 JPEG
// photos on one worker and on two, alternating in one loop, and reports
// each one's images/s and their ratio (issue 23's goal: two workers
// at least 1.8x one on a 2-core machine).
func BenchmarkMainJob(b *testing.B) {
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		b.Fatal(err)
	}
	writeJPEGs(b, filepath.Join(dir, "in"), 50, 1920, 1080)
	file := filepath.Join(dir, "mainjob.yaml")
	if err := os.WriteFile(file, []byte(mainJobYAML), 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
		Paths: []string{cbuild.Imgproc(b)}, NoDefaultPaths: true, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	spec, err := Load(file)
	if err != nil {
		b.Fatal(err)
	}
	var pipes [2]*Pipeline
	var secs [2]time.Duration
	for i := range pipes {
		if pipes[i], err = Compile(context.Background(), h, spec, Options{Workers: i + 1, OutDir: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
		defer pipes[i].Close()
	}
	for _, p := range pipes { // warm up: the files in the page cache, the pools filled
		if _, err := p.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	images := 0
	for b.Loop() {
		for i, p := range pipes {
			start := time.Now()
			sum, err := p.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			secs[i] += time.Since(start)
			if i == 0 {
				images += sum.Images
			}
		}
	}
	one, two := float64(images)/secs[0].Seconds(), float64(images)/secs[1].Seconds()
	b.ReportMetric(one, "1worker-images/s")
	b.ReportMetric(two, "2workers-images/s")
	b.ReportMetric(two/one, "speedup")
}
