package graph_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// pipeline builds in -> add(3) -> mul(2) -> add(1) -> out, plus a
// branch from mul to a second output when branch is set.
func fuseGraph(t *testing.T, reg *op.Registry, fuse, branch bool, kinds ...string) *graph.Graph {
	t.Helper()
	if kinds == nil {
		kinds = []string{"test.AddK", "test.MulK", "test.AddK"}
	}
	g := graph.New("fuse")
	in, _ := g.AddInput("in")
	p := in.Out(0)
	for i, k := range kinds {
		n, err := g.AddNode(string(rune('a'+i)), k, schema.Args{"k": float64(3 - i)}, p)
		if err != nil {
			t.Fatal(err)
		}
		p = n.Out(0)
	}
	g.AddOutput("out", p)
	if branch {
		g.AddOutput("mid", g.Node("b").Out(0))
	}
	passes := graph.NewPasses()
	mustRegister(t, passes, graph.FuseDesc, graph.FusePass())
	opts := graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}
	if !fuse {
		opts.Skip = []string{graph.FuseDesc.Name}
	}
	if err := graph.Build(context.Background(), g, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func randomBatch[T uint8 | float32](t *testing.T, rng *rand.Rand, n int) *tensor.Batch {
	var samples []*tensor.Tensor
	for range n {
		h, w := 1+rng.IntN(300), 1+rng.IntN(97)
		v := make([]T, h*w*3)
		for i := range v {
			v[i] = T(rng.IntN(256))
		}
		s, err := tensor.FromSlice(v, int64(h), int64(w), 3)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.WithLayout("HWC"); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s)
	}
	b, err := tensor.NewBatch(samples...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bytesOf(t *testing.T, b *tensor.Batch) []byte {
	var all []byte
	for _, s := range b.Samples() {
		c, err := s.Contiguous()
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, v...)
	}
	return all
}

func TestFusePassMatchesUnfused(t *testing.T) {
	reg := testRegistry(t)
	fused, plain := fuseGraph(t, reg, true, false), fuseGraph(t, reg, false, false)
	if got := names(fused.Nodes()); !slices.Equal(got, []string{"in", "a+b+c"}) {
		t.Fatalf("fused graph nodes %v", got)
	}
	sub := fused.Node("a+b+c").Definition().(*graph.Graph)
	if got := names(sub.Nodes()); !slices.Equal(got, []string{"in", "a", "b", "c"}) {
		t.Fatalf("fused subgraph nodes %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, in := range []*tensor.Batch{randomBatch[uint8](t, rng, 3), randomBatch[float32](t, rng, 2)} {
		// A strided view of the input goes through the copying path.
		view, err := in.Sample(0).Slice(1, 0, in.Sample(0).Shape()[1]/2+1)
		if err != nil {
			t.Fatal(err)
		}
		strided, _ := tensor.NewBatch(append([]*tensor.Tensor{view}, in.Samples()[1:]...)...)
		for _, b := range []*tensor.Batch{in, strided} {
			want, err := plain.Execute(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fused.Execute(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytesOf(t, got[0]), bytesOf(t, want[0])) {
				t.Fatalf("%s: fused output differs from unfused", b.DType())
			}
			if got[0].DType() != b.DType() || got[0].Layout() != "HWC" {
				t.Errorf("fused output %s", got[0])
			}
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if runs := sub.Node(name).Definition().(*graph.OperatorDef).Instance.Impl().(*pointwiseImpl).runs; runs != 0 {
			t.Errorf("fused node %s ran on its own %d times", name, runs)
		}
	}
}

func TestFusePassStopsAtSharedOutputsAndFallsBack(t *testing.T) {
	reg := testRegistry(t)
	// b's output is also a graph output, so a chain may end at b but not
	// pass it: a+b fuses, c stays alone.
	g := fuseGraph(t, reg, true, true)
	if got := names(g.Nodes()); !slices.Equal(got, []string{"in", "a+b", "c"}) {
		t.Fatalf("nodes %v", got)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	in := randomBatch[uint8](t, rng, 2)
	outs, err := g.Execute(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := fuseGraph(t, reg, false, true)
	wouts, err := want.Execute(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for k := range outs {
		if !bytes.Equal(bytesOf(t, outs[k]), bytesOf(t, wouts[k])) {
			t.Errorf("output %d differs", k)
		}
	}

	// An operator without an element function for the input's dtype
	// makes the group run its nodes one by one, with the same result.
	g = fuseGraph(t, reg, true, false, "test.AddK", "test.AddKOpaque")
	outs, err = g.Execute(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	a := g.Node("a+b").Definition().(*graph.Graph).Node("a").Definition().(*graph.OperatorDef).Instance.Impl().(*pointwiseImpl)
	v8, _ := tensor.Values[uint8](outs[0].Sample(0))
	src8, _ := tensor.Values[uint8](in.Sample(0))
	if a.runs != 1 || v8[0] != src8[0]+3+2 {
		t.Errorf("fallback: a ran %d times, %d from %d", a.runs, v8[0], src8[0])
	}

	// test.Neg has float32 only: a uint8 input fails in its Setup, named.
	g = fuseGraph(t, reg, true, false, "test.MulK", "test.Neg")
	if got := names(g.Nodes()); !slices.Equal(got, []string{"in", "a+b"}) {
		t.Fatalf("nodes %v", got)
	}
	f := randomBatch[float32](t, rng, 2)
	outs, err = g.Execute(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tensor.Values[float32](outs[0].Sample(0))
	src, _ := tensor.Values[float32](f.Sample(0))
	if v[0] != -3*src[0] {
		t.Errorf("mul+neg: %v from %v", v[0], src[0])
	}
	_, err = g.Execute(context.Background(), randomBatch[uint8](t, rng, 1))
	var ne *graph.NodeError
	if !errorsAs(err, &ne) || ne.Node != "a+b/b" || ne.Operator != "test.Neg" {
		t.Errorf("uint8 into test.Neg: %v", err)
	}
}

func TestWriteDOT(t *testing.T) {
	reg := testRegistry(t)
	g := fuseGraph(t, reg, true, false)
	var buf bytes.Buffer
	if err := g.WriteDOT(&buf); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	for _, want := range []string{
		`digraph "fuse" {`,
		`subgraph "cluster_n1" {`,
		`label="a+b+c (fused)"`,
		`[label="a\ntest.AddK"]`,
		`n0 -> n2 [label=""]`,  // the graph input into a, inside the cluster
		`n2 -> n3 [label="y"]`, // a -> b
		`n4 -> out0 [label="y"]`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %s:\n%s", want, dot)
		}
	}
	if strings.Count(dot, "{") != strings.Count(dot, "}") {
		t.Errorf("unbalanced braces:\n%s", dot)
	}
}
