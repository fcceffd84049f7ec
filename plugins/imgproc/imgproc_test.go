package imgproc_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/cbuild"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// run instantiates operator name on h, runs it on one batch and returns
// the output batch, closing the instance.
func run(t *testing.T, h *dynop.Host, name string, in *tensor.Batch) *tensor.Batch {
	t.Helper()
	inst, err := h.NewOperator(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	outs, err := inst.Exec(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return outs[0]
}

func randomImages[T uint8 | float32](t *testing.T, rng *rand.Rand, shapes [][]int64, gen func() T) *tensor.Batch {
	t.Helper()
	var samples []*tensor.Tensor
	for _, s := range shapes {
		data := make([]T, s[0]*s[1]*s[2])
		for i := range data {
			data[i] = gen()
		}
		x, err := tensor.FromSlice(data, s...)
		if err != nil {
			t.Fatal(err)
		}
		if x, err = x.WithLayout("HWC"); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, x)
	}
	b, err := tensor.NewBatch(samples...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cropEach returns a batch of views of b's samples (strided, unless a
// view keeps whole rows), each cropped where window says for its shape.
func cropEach(t *testing.T, b *tensor.Batch, window func(shape []int64) (start, size []int64)) *tensor.Batch {
	t.Helper()
	var out []*tensor.Tensor
	for _, s := range b.Samples() {
		c, err := s.Crop(window(s.Shape()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	nb, err := tensor.NewBatch(out...)
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// TestNativeAndGoGrayscaleAgree runs the C operator imgproc.Grayscale and
// the Go operator image.Grayscale on the same batches, compact and
// cropped (strided), uint8 and float32, and wants identical bytes.
func TestNativeAndGoGrayscaleAgree(t *testing.T) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{image.New()}, Paths: []string{cbuild.Imgproc(t)}, NoDefaultPaths: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	if e, err := h.Operators().Lookup(imgproc.Grayscale); err != nil || e.Plugin != imgproc.PluginID {
		t.Fatalf("Lookup(%s) = %+v, %v", imgproc.Grayscale, e, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int64{{1, 1, 3}, {7, 13, 3}, {64, 33, 4}, {1, 1000, 4}}
	u8 := randomImages(t, rng, shapes, func() uint8 { return uint8(rng.IntN(256)) })
	f32 := randomImages(t, rng, shapes, func() float32 { return rng.Float32() * 255 })
	cropped := func(b *tensor.Batch) *tensor.Batch {
		return cropEach(t, b, func(s []int64) (start, size []int64) {
			return []int64{0, 0, 0}, []int64{s[0], (s[1] + 1) / 2, 3}
		})
	}
	for _, c := range []struct {
		name  string
		batch *tensor.Batch
	}{{"uint8", u8}, {"float32", f32}, {"uint8 cropped", cropped(u8)}, {"float32 cropped", cropped(f32)}} {
		t.Run(c.name, func(t *testing.T) {
			native := run(t, h, imgproc.Grayscale, c.batch)
			goOut := run(t, h, "image.Grayscale", c.batch)
			if !slices.EqualFunc(native.Shapes(), goOut.Shapes(), slices.Equal) || native.DType() != goOut.DType() {
				t.Fatalf("native %v %v, Go %v %v", native.DType(), native.Shapes(), goOut.DType(), goOut.Shapes())
			}
			for i := range native.Len() {
				a, _ := native.Sample(i).Bytes()
				b, _ := goOut.Sample(i).Bytes()
				if !slices.Equal(a, b) {
					t.Errorf("sample %d (%v): native and Go grayscale differ", i, native.Sample(i).Shape())
				}
			}
		})
	}
	// Both plugins stopped with their last instance.
	for _, id := range []string{imgproc.PluginID, "dynop.plugin.image"} {
		if st, _ := h.Plugin(id); st.State != dynop.StateAvailable {
			t.Errorf("%s is %v after its instances closed", id, st.State)
		}
	}
	_, err = h.NewOperator(ctx, imgproc.Grayscale, schema.Args{"sigma": 1})
	if err == nil {
		t.Error("an unknown argument was accepted")
	}
}

// TestNativeGrayscalePass: with the Go image plugin and the native plugin
// on the host, a graph's image.Grayscale node gets the native operator
// from the plugin's populate pass, which starts the plugin, and computes
// what the Go operator computes, bit for bit; closing the graph stops the
// plugin. Skipping the pass keeps the Go operator.
func TestNativeGrayscalePass(t *testing.T) {
	ctx := context.Background()
	lib := cbuild.Imgproc(t)
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{image.New()}, Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	var desc schema.Pass
	for _, e := range h.Passes().List() {
		if e.Desc.Name == imgproc.NativeGrayscalePass && e.Plugin == imgproc.PluginID {
			desc = e.Desc
		}
	}
	if want := (schema.Pass{Name: imgproc.NativeGrayscalePass, Kind: schema.Populate, Match: "image.Grayscale",
		Doc: "replaces the Go image.Grayscale with the native one"}); desc != want {
		t.Fatalf("pass %+v, want %+v", desc, want)
	}
	wantState := func(want dynop.State) {
		t.Helper()
		if st, _ := h.Plugin(imgproc.PluginID); st.State != want {
			t.Errorf("%s is %v, want %v", imgproc.PluginID, st.State, want)
		}
	}
	wantState(dynop.StateAvailable)

	build := func(skip ...string) *graph.Graph {
		t.Helper()
		g := graph.New("gray")
		in, _ := g.AddInput("images")
		n, err := g.AddNode("gray", "image.Grayscale", nil, in.Out(0))
		if err != nil {
			t.Fatal(err)
		}
		g.AddOutput("gray", n.Out(0))
		if err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Skip: skip}); err != nil {
			g.Close()
			t.Fatal(err)
		}
		return g
	}
	origin := func(g *graph.Graph) (name, plugin string) {
		d, ok := g.Node("gray").Definition().(*graph.OperatorDef)
		if !ok {
			t.Fatalf("definition %T, want an operator", g.Node("gray").Definition())
		}
		return d.Instance.Name(), d.Instance.Plugin()
	}

	g := build()
	defer g.Close()
	if name, p := origin(g); name != imgproc.Grayscale || p != imgproc.PluginID {
		t.Errorf("node gray runs %s of plugin %q, want %s of %q", name, p, imgproc.Grayscale, imgproc.PluginID)
	}
	wantState(dynop.StateStarted)

	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][]int64{{1, 1, 3}, {9, 17, 3}, {32, 5, 4}}
	for _, c := range []struct {
		name  string
		batch *tensor.Batch
	}{
		{"uint8", randomImages(t, rng, shapes, func() uint8 { return uint8(rng.IntN(256)) })},
		{"float32", randomImages(t, rng, shapes, func() float32 { return rng.Float32() * 255 })},
	} {
		t.Run(c.name, func(t *testing.T) {
			outs, err := g.Execute(ctx, c.batch)
			if err != nil {
				t.Fatal(err)
			}
			goOut := run(t, h, "image.Grayscale", c.batch)
			got := outs[0]
			if !slices.EqualFunc(got.Shapes(), goOut.Shapes(), slices.Equal) || got.DType() != goOut.DType() {
				t.Fatalf("graph %v %v, Go %v %v", got.DType(), got.Shapes(), goOut.DType(), goOut.Shapes())
			}
			for i := range got.Len() {
				a, _ := got.Sample(i).Bytes()
				b, _ := goOut.Sample(i).Bytes()
				if !slices.Equal(a, b) {
					t.Errorf("sample %d (%v): the graph's native grayscale and the Go operator differ", i, got.Sample(i).Shape())
				}
			}
		})
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	wantState(dynop.StateAvailable)

	// Without the pass the node keeps the Go operator, and the native
	// plugin is not started for it.
	g = build(imgproc.NativeGrayscalePass)
	defer g.Close()
	if name, p := origin(g); name != "image.Grayscale" || p != "dynop.plugin.image" {
		t.Errorf("without the pass, node gray runs %s of plugin %q", name, p)
	}
	wantState(dynop.StateAvailable)
}
