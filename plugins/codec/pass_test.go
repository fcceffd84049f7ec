package codec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/codec"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
)

// TestNativeCodecPasses: the plugin declares its two populate passes;
// with them a graph's image.Decode and image.Encode nodes run codec.Decode
// (orientation off, the node's channels) and codec.Encode (the node's
// format and quality), and compute what the Go operators compute within
// the JPEG tolerance; skipping the passes keeps the Go operators.
func TestNativeCodecPasses(t *testing.T) {
	ctx := context.Background()
	h := openCodec(t)
	want := map[string]schema.Pass{
		codec.NativeDecodePass: {Name: codec.NativeDecodePass, Kind: schema.Populate, Match: "image.Decode",
			Doc: "replaces the Go image.Decode with the native codec.Decode (libjpeg-turbo, libpng, libwebp)"},
		codec.NativeEncodePass: {Name: codec.NativeEncodePass, Kind: schema.Populate, Match: "image.Encode",
			Doc: "replaces the Go image.Encode with the native codec.Encode (libjpeg-turbo, libpng, libwebp)"},
	}
	for _, e := range h.Passes().List() {
		if e.Plugin == codec.PluginID {
			if e.Desc != want[e.Desc.Name] {
				t.Errorf("pass %+v, want %+v", e.Desc, want[e.Desc.Name])
			}
			delete(want, e.Desc.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("passes missing: %v", want)
	}
	decodeArgs := schema.Args{"channels": 4}
	build := func(skip ...string) *graph.Graph {
		t.Helper()
		g := graph.New("codecs")
		in, _ := g.AddInput("files")
		dec, err := g.AddNode("decode", "image.Decode", decodeArgs, in.Out(0))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := g.AddNode("encode", "image.Encode", schema.Args{"format": "jpeg", "quality": 80}, dec.Out(0))
		if err != nil {
			t.Fatal(err)
		}
		g.AddOutput("decoded", dec.Out(0))
		g.AddOutput("encoded", enc.Out(0))
		if err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Skip: skip}); err != nil {
			g.Close()
			t.Fatal(err)
		}
		return g
	}
	check := func(g *graph.Graph, node, name, plugin string, args schema.Args) {
		t.Helper()
		d, ok := g.Node(node).Definition().(*graph.OperatorDef)
		if !ok {
			t.Fatalf("node %s: definition %T, want an operator", node, g.Node(node).Definition())
		}
		if d.Instance.Name() != name || d.Instance.Plugin() != plugin {
			t.Errorf("node %s runs %s of %q, want %s of %q", node, d.Instance.Name(), d.Instance.Plugin(), name, plugin)
		}
		v := d.Instance.Args()
		for k, want := range args {
			var got any
			switch want.(type) {
			case int64:
				got = v.Int(k)
			case bool:
				got = v.Bool(k)
			case string:
				got = v.String(k)
			}
			if got != want {
				t.Errorf("node %s: argument %s is %v, want %v", node, k, got, want)
			}
		}
	}
	g := build()
	defer g.Close()
	check(g, "decode", codec.Decode, codec.PluginID, schema.Args{"channels": int64(4), "orientation": true, "min_width": int64(0)})
	check(g, "encode", codec.Encode, codec.PluginID, schema.Args{"format": "jpeg", "quality": int64(80), "subsampling": "420"})
	g2 := build(codec.NativeCodecsPasses...)
	defer g2.Close()
	check(g2, "decode", "image.Decode", imageplugin.ID, nil)
	check(g2, "encode", "image.Encode", imageplugin.ID, nil)
	// orientation: false passes through, as channels does.
	decodeArgs = schema.Args{"channels": 1, "orientation": false}
	g3 := build()
	defer g3.Close()
	check(g3, "decode", codec.Decode, codec.PluginID, schema.Args{"channels": int64(1), "orientation": false})
}

// TestMainJobUsesNativeCodecs: internal/testimage's main job (decode,
// resize, blur, encode JPEG), compiled on a host with the codec plugin,
// decodes and encodes with it, and its outputs are JPEGs of 960x540.
func TestMainJobUsesNativeCodecs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimage.WriteJPEGs(filepath.Join(dir, "in"), 3, 1280, 720); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mainjob.yaml")
	if err := os.WriteFile(file, []byte(testimage.MainJob), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{imageplugin.New()},
		Paths: []string{cbuild.Codec(t), cbuild.Imgproc(t)}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	spec, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	p, err := pipeline.Compile(ctx, h, spec, pipeline.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	runs := map[string]bool{}
	for _, n := range p.Graph().Nodes() {
		if d, ok := n.Definition().(*graph.OperatorDef); ok {
			runs[d.Instance.Name()] = true
			if n.Kind() == "image.Decode" || n.Kind() == "image.Encode" {
				if d.Instance.Plugin() != codec.PluginID {
					t.Errorf("node %s (%s) runs %s of %s", n.Name(), n.Kind(), d.Instance.Name(), d.Instance.Plugin())
				}
			}
		}
	}
	if !runs[codec.Decode] || !runs[codec.Encode] {
		t.Fatalf("the main job runs %v, without codec.Decode and codec.Encode", runs)
	}
	// Its decoded images only go to a resize to 960x540: shrink-on-load.
	if d, ok := p.Graph().Node("decode").Definition().(*graph.OperatorDef); !ok || d.Instance.Args().Int("min_width") != 960 || d.Instance.Args().Int("min_height") != 540 {
		t.Errorf("the main job's decode does not shrink on load to 960x540")
	}
	if _, err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	outs, _ := filepath.Glob(filepath.Join(dir, "out", "*.jpg"))
	if len(outs) != 3 {
		t.Fatalf("outputs %v, want 3 JPEGs", outs)
	}
	hh := openCodec(t)
	for _, o := range outs {
		data, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		x := mustDecode(t, hh, codec.Decode, data, nil)
		if s := x.Shape(); s[0] != 540 || s[1] != 960 {
			t.Errorf("%s is %v, want 540x960", o, s)
		}
	}
}

// TestShrinkOnLoadPass: the decode pass decodes shrunk on load only where
// the decoded images go to nothing but a resize to a fixed size: not
// where a second node reads them, nor where the graph hands them to its
// caller (dynop_graph_builder 1.1's outputs), nor before other nodes.
func TestShrinkOnLoadPass(t *testing.T) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{imageplugin.New()},
		Paths: []string{cbuild.Codec(t), cbuild.Imgproc(t)}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	for _, c := range []struct {
		name   string
		build  func(g *graph.Graph, dec *graph.Node) error
		shrink bool // to at least 64x48
	}{
		{"to imgproc.Resize", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.Resize", schema.Args{"width": 64, "height": 48}, dec.Out(0))
			if err == nil {
				err = g.AddOutput("y", r.Out(0))
			}
			return err
		}, true},
		{"to image.Resize", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "image.Resize", schema.Args{"width": 64, "height": 48}, dec.Out(0))
			if err == nil {
				err = g.AddOutput("y", r.Out(0))
			}
			return err
		}, true},
		{"to a width, the aspect kept", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.Resize", schema.Args{"width": 64}, dec.Out(0))
			if err == nil {
				err = g.AddOutput("y", r.Out(0))
			}
			return err
		}, false},
		{"to a shorter side", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.Resize", schema.Args{"resize_shorter": 48}, dec.Out(0))
			if err == nil {
				err = g.AddOutput("y", r.Out(0))
			}
			return err
		}, false},
		{"also an output", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.Resize", schema.Args{"width": 64, "height": 48}, dec.Out(0))
			if err == nil {
				err = errors.Join(g.AddOutput("y", r.Out(0)), g.AddOutput("full", dec.Out(0)))
			}
			return err
		}, false},
		{"two readers", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.Resize", schema.Args{"width": 64, "height": 48}, dec.Out(0))
			if err != nil {
				return err
			}
			s, err := g.AddNode("s", "imgproc.Sobel", nil, dec.Out(0))
			if err == nil {
				err = errors.Join(g.AddOutput("y", r.Out(0)), g.AddOutput("z", s.Out(0)))
			}
			return err
		}, false},
		{"to a blur", func(g *graph.Graph, dec *graph.Node) error {
			r, err := g.AddNode("r", "imgproc.GaussianBlur", schema.Args{"sigma": 1.0}, dec.Out(0))
			if err == nil {
				err = g.AddOutput("y", r.Out(0))
			}
			return err
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New("g")
			defer g.Close()
			in, _ := g.AddInput("x")
			dec, err := g.AddNode("dec", "image.Decode", nil, in.Out(0))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.build(g, dec); err != nil {
				t.Fatal(err)
			}
			if err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate()}); err != nil {
				t.Fatal(err)
			}
			d := dec.Definition().(*graph.OperatorDef).Instance
			want := [2]int64{}
			switch {
			case c.shrink:
				want = [2]int64{64, 48}
			case c.name == "to a width, the aspect kept":
				want = [2]int64{64, 0}
			case c.name == "to a shorter side":
				want = [2]int64{48, 48}
			}
			if got := [2]int64{d.Args().Int("min_width"), d.Args().Int("min_height")}; d.Name() != codec.Decode || got != want {
				t.Errorf("%s with min %v; want codec.Decode with min %v", d.Name(), got, want)
			}
		})
	}
}
