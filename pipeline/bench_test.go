package pipeline

import (
	"context"
	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/schema"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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

// writeJPEGs writes n w×h generated photos into dir.
func writeJPEGs(b *testing.B, dir string, n, w, h int) {
	b.Helper()
	if err := testimage.WriteJPEGs(dir, n, w, h); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRunMemory runs the main job (with outputs at quality 90) in a
// child process over 50 and over 1,000 generated 640x480 JPEG photos, on
// two workers, and reports each run's peak RSS and their ratio: memory
// is bounded by the batches in flight, not by the number of inputs
// (issue 23's goal: at most 1.2x).
func BenchmarkRunMemory(b *testing.B) {
	lib := cbuild.Imgproc(b)
	files := map[int]string{}
	for _, n := range []int{50, 1000} {
		dir := b.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
			b.Fatal(err)
		}
		writeJPEGs(b, filepath.Join(dir, "in"), n, 640, 480)
		files[n] = filepath.Join(dir, "mainjob.yaml")
		job := strings.Replace(testimage.MainJob, "width: 960, height: 540", "width: 320, height: 240", 1)
		if err := os.WriteFile(files[n], []byte(job), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	rss := map[int]float64{}
	for b.Loop() {
		for _, n := range []int{50, 1000} {
			cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+files[n], childPluginEnv+"="+lib)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("the run over %d images: %v\n%s", n, err, out)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			rss[n] = max(rss[n], float64(ru.Maxrss)/1024) // KiB on Linux
		}
	}
	b.ReportMetric(rss[50], "rss50-MiB")
	b.ReportMetric(rss[1000], "rss1000-MiB")
	b.ReportMetric(rss[1000]/rss[50], "ratio")
}
