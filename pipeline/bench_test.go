package pipeline

import (
	"context"
	"fmt"
	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/schema"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
// workers: images/s, and the time the chain's nodes took (adjust, gamma
// and invert, or their fused node) per image, from the run's node
// times. vs/1 and vs/2 run the fused and the unfused pipeline in turn
// in one loop, so that both see the same machine, and report the
// speedup of fusing.
func BenchmarkDemoPipeline(b *testing.B) {
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
	compile := func(b *testing.B, noFuse bool, workers int) *Pipeline {
		p, err := Compile(context.Background(), h, spec, Options{NoFuse: noFuse, Workers: workers, OutDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close() })
		return p
	}
	// run runs p once and returns its images and the seconds its chain
	// nodes took.
	run := func(b *testing.B, p *Pipeline) (images int, chain float64) {
		sum, err := p.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range sum.Nodes {
			if !slices.ContainsFunc(strings.Split(n.Node, "+"), func(s string) bool { return !demoChainNodes[s] }) {
				chain += n.Seconds
			}
		}
		return sum.Images, chain
	}
	for _, c := range []struct {
		name    string
		noFuse  bool
		workers int
	}{{"fused/1", false, 1}, {"unfused/1", true, 1}, {"fused/2", false, 2}, {"unfused/2", true, 2}} {
		b.Run(c.name, func(b *testing.B) {
			p := compile(b, c.noFuse, c.workers)
			images, chain := 0, 0.0
			for b.Loop() {
				n, s := run(b, p)
				images, chain = images+n, chain+s
			}
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
			b.ReportMetric(chain*1e6/float64(images), "chain-us/image")
		})
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("vs/%d", workers), func(b *testing.B) {
			fused, unfused := compile(b, false, workers), compile(b, true, workers)
			var f, u time.Duration
			var fchain, uchain float64
			images := 0
			for b.Loop() {
				start := time.Now()
				n, s := run(b, fused)
				mid := time.Now()
				_, t := run(b, unfused)
				f, u = f+mid.Sub(start), u+time.Since(mid)
				images, fchain, uchain = images+n, fchain+s, uchain+t
			}
			b.ReportMetric(float64(images)/f.Seconds(), "fused-images/s")
			b.ReportMetric(float64(images)/u.Seconds(), "unfused-images/s")
			b.ReportMetric(u.Seconds()/f.Seconds(), "speedup")
			b.ReportMetric(fchain*1e6/float64(images), "fused-chain-us/image")
			b.ReportMetric(uchain*1e6/float64(images), "unfused-chain-us/image")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// demoChainNodes are the names of the demo's pointwise nodes.
var demoChainNodes = map[string]bool{"contrast": true, "gamma": true, "invert": true}

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

// demoEdges returns the demo pipeline's images as its pointwise chain
// receives them: the six bundled images decoded, blurred, turned gray
// and through Sobel (gray uint8 HWC, 320x240x1), in the demo's batches
// of 4 and 2. h must have the imgproc plugin.
func demoEdges(b *testing.B, h *dynop.Host) []*tensor.Batch {
	b.Helper()
	files, err := filepath.Glob("../examples/pipelines/images/*.png")
	if err != nil || len(files) == 0 {
		b.Fatalf("the demo's images: %v (%d files)", err, len(files))
	}
	g := dgraph.New("edges")
	src, _ := g.AddInput("in")
	p := src.Out(0)
	for _, s := range []struct {
		name, kind string
		args       schema.Args
	}{{"decode", "image.Decode", schema.Args{"channels": 3}}, {"smooth", "imgproc.GaussianBlur", schema.Args{"sigma": 1.2}},
		{"gray", "image.Grayscale", nil}, {"edges", "imgproc.Sobel", nil}} {
		n, err := g.AddNode(s.name, s.kind, s.args, p)
		if err != nil {
			b.Fatal(err)
		}
		p = n.Out(0)
	}
	g.AddOutput("edges", p)
	if err := dgraph.Build(context.Background(), g, dgraph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: dgraph.OperatorPopulate()}); err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	var batches []*tensor.Batch
	for start := 0; start < len(files); start += 4 {
		var samples []*tensor.Tensor
		for _, f := range files[start:min(start+4, len(files))] {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			t, err := tensor.FromSlice(data, int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			samples = append(samples, t)
		}
		in, err := tensor.NewBatch(samples...)
		if err != nil {
			b.Fatal(err)
		}
		outs, err := g.Execute(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, outs[0])
	}
	return batches
}

// demoChain builds the demo pipeline's pointwise chain (image.Adjust
// contrast 1.6 brightness 10, image.Gamma 0.8, image.Invert), fused
// into one walk or not.
func demoChain(b *testing.B, h *dynop.Host, fuse bool) *dgraph.Graph {
	b.Helper()
	g := dgraph.New("chain")
	src, _ := g.AddInput("in")
	p := src.Out(0)
	for _, s := range []struct {
		name, kind string
		args       schema.Args
	}{{"contrast", "image.Adjust", schema.Args{"contrast": 1.6, "brightness": 10}}, {"gamma", "image.Gamma", schema.Args{"gamma": 0.8}},
		{"invert", "image.Invert", nil}} {
		n, err := g.AddNode(s.name, s.kind, s.args, p)
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
	b.Cleanup(func() { g.Close() })
	return g
}

// BenchmarkDemoChain runs the demo pipeline's pointwise chain (adjust →
// gamma → invert) on the demo's own images as the chain receives them
// (after Sobel: six gray 320x240 uint8 images in batches of 4 and 2),
// fused and as three nodes. Each execution's output is then handed back
// (Graph.Recycle), as the pipeline does once the next node has read it.
// fused and unfused report each alone (with their allocations); vs runs
// both in the same loop and reports their times per image and the
// speedup of the fused walk over the separate nodes.
func BenchmarkDemoChain(b *testing.B) {
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
		Paths: []string{cbuild.Imgproc(b)}, NoDefaultPaths: true, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	batches := demoEdges(b, h)
	images, bytes := 0, int64(0)
	for _, in := range batches {
		images += in.Len()
		for _, t := range in.Samples() {
			bytes += t.NBytes()
		}
	}
	run := func(b *testing.B, g *dgraph.Graph) {
		for _, in := range batches {
			outs, err := g.Execute(context.Background(), in)
			if err != nil {
				b.Fatal(err)
			}
			g.Recycle(outs)
		}
	}
	for _, fuse := range []bool{true, false} {
		b.Run(map[bool]string{true: "fused", false: "unfused"}[fuse], func(b *testing.B) {
			g := demoChain(b, h, fuse)
			b.SetBytes(bytes)
			b.ReportAllocs()
			for b.Loop() {
				run(b, g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*images), "ns/image")
		})
	}
	b.Run("vs", func(b *testing.B) {
		fused, unfused := demoChain(b, h, true), demoChain(b, h, false)
		var f, u time.Duration
		for b.Loop() {
			start := time.Now()
			run(b, fused)
			mid := time.Now()
			run(b, unfused)
			f, u = f+mid.Sub(start), u+time.Since(mid)
		}
		n := float64(b.N * images)
		b.ReportMetric(float64(f.Nanoseconds())/n, "fused-ns/image")
		b.ReportMetric(float64(u.Nanoseconds())/n, "unfused-ns/image")
		b.ReportMetric(u.Seconds()/f.Seconds(), "speedup")
		b.ReportMetric(0, "ns/op")
	})
}

// TestFusionOnDemoAndMainJob checks what the benchmarks of fusion
// measure: the fusion pass turns the demo's adjust, gamma and invert
// into one node, and finds no pointwise chain in the main job (decode,
// resize, blur, encode), whose compiled graph is the same with and
// without it, so fusion neither helps nor costs there.
func TestFusionOnDemoAndMainJob(t *testing.T) {
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
		Paths: []string{cbuild.Imgproc(t)}, NoDefaultPaths: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimage.WriteJPEGs(filepath.Join(dir, "in"), 1, 64, 48); err != nil {
		t.Fatal(err)
	}
	mainJob := filepath.Join(dir, "mainjob.yaml")
	if err := os.WriteFile(mainJob, []byte(testimage.MainJob), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := func(file string, noFuse bool) []string {
		t.Helper()
		spec, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(context.Background(), h, spec, Options{NoFuse: noFuse, Workers: 1, OutDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var names []string
		for _, n := range p.Graph().Nodes() {
			names = append(names, n.Name())
		}
		return names
	}
	demo := nodes("../examples/pipelines/demo.yaml", false)
	if !slices.Contains(demo, "contrast+gamma+invert") || slices.Contains(demo, "gamma") {
		t.Errorf("demo, fused: nodes %v, want contrast+gamma+invert in one node", demo)
	}
	fused, plain := nodes(mainJob, false), nodes(mainJob, true)
	t.Logf("demo: %v; main job: %v", demo, fused)
	if !slices.Equal(fused, plain) {
		t.Errorf("main job: nodes %v fused, %v not: the pass changed the graph", fused, plain)
	}
	for _, want := range []string{"decode", "half", "blur"} {
		if !slices.Contains(fused, want) {
			t.Errorf("main job: nodes %v lack %s", fused, want)
		}
	}
}
