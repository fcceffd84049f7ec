package graph_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

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

// sameShapeBatch returns n random uint8 HWC samples, each h×w×3.
func sameShapeBatch(t *testing.T, rng *rand.Rand, n, h, w int) *tensor.Batch {
	t.Helper()
	var samples []*tensor.Tensor
	for range n {
		v := make([]uint8, h*w*3)
		for i := range v {
			v[i] = uint8(rng.IntN(256))
		}
		s, err := tensor.FromSlice(v, int64(h), int64(w), 3)
		if err == nil {
			s, err = s.WithLayout("HWC")
		}
		if err != nil {
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

// dataOf returns the data pointers of b's samples.
func dataOf(b *tensor.Batch) []unsafe.Pointer {
	var p []unsafe.Pointer
	for _, s := range b.Samples() {
		p = append(p, s.Data())
	}
	return p
}

// TestFusedChainReusesMemory runs in -> pre -> a+b+c -> post -> out
// (pre and post are test.Copy): once warm, the fused walk writes into
// the memory of its last output, which post has read, and pre's output,
// which only the walk read, goes back to pre; the results stay those of
// the unfused graph.
func TestFusedChainReusesMemory(t *testing.T) {
	reg := testRegistry(t)
	build := func(fuse bool) *graph.Graph {
		g := graph.New("reuse")
		in, _ := g.AddInput("in")
		p := in.Out(0)
		for i, k := range []string{"test.Copy", "test.AddK", "test.MulK", "test.AddK", "test.Copy"} {
			n, err := g.AddNode([]string{"pre", "a", "b", "c", "post"}[i], k, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			p = n.Out(0)
		}
		g.AddOutput("out", p)
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
	fused, plain := build(true), build(false)
	if got := names(fused.Nodes()); !slices.Equal(got, []string{"in", "pre", "a+b+c", "post"}) {
		t.Fatalf("fused graph nodes %v", got)
	}
	impl := func(name string) *copyImpl {
		return fused.Node(name).Definition().(*graph.OperatorDef).Instance.Impl().(*copyImpl)
	}
	pre, post := impl("pre"), impl("post")
	rng := rand.New(rand.NewPCG(5, 6))
	var preOuts, walkOuts []unsafe.Pointer
	for run := range 4 {
		in := sameShapeBatch(t, rng, 3, 17, 13)
		want, err := plain.Execute(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fused.Execute(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytesOf(t, got[0]), bytesOf(t, want[0])) {
			t.Fatalf("run %d: fused output differs from unfused", run)
		}
		if run > 0 {
			if !slices.Equal(pre.outs, preOuts) {
				t.Errorf("run %d: pre wrote to %v, not into its last output %v: the walk kept its input", run, pre.outs, preOuts)
			}
			if !slices.Equal(post.ins, walkOuts) {
				t.Errorf("run %d: the walk wrote to %v, not into its last output %v", run, post.ins, walkOuts)
			}
		}
		preOuts, walkOuts = pre.outs, post.ins
	}
}

// TestFusedChainRecycle hands a fused graph's outputs back with
// Graph.Recycle: the next walk writes into them, whatever the batch's
// length and whether its samples have the same shape or only as many
// elements; outputs of an older execution are not taken back.
func TestFusedChainRecycle(t *testing.T) {
	reg := testRegistry(t)
	fused, plain := fuseGraph(t, reg, true, false), fuseGraph(t, reg, false, false)
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(in *tensor.Batch) *tensor.Batch {
		t.Helper()
		want, err := plain.Execute(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fused.Execute(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytesOf(t, got[0]), bytesOf(t, want[0])) {
			t.Fatalf("fused output differs from unfused")
		}
		return got[0]
	}
	subset := func(a, b []unsafe.Pointer) bool {
		return !slices.ContainsFunc(a, func(p unsafe.Pointer) bool { return !slices.Contains(b, p) })
	}
	first := check(sameShapeBatch(t, rng, 4, 20, 10))
	fused.Recycle([]*tensor.Batch{first})
	second := check(sameShapeBatch(t, rng, 2, 20, 10)) // fewer samples
	if !subset(dataOf(second), dataOf(first)) {
		t.Errorf("a batch of 2 after one of 4 was handed back: %v, not in %v", dataOf(second), dataOf(first))
	}
	fused.Recycle([]*tensor.Batch{second})
	third := check(sameShapeBatch(t, rng, 2, 10, 20)) // other shape, as many elements
	if !subset(dataOf(third), dataOf(first)) {
		t.Errorf("10x20 samples after 20x10 ones: %v, not in %v", dataOf(third), dataOf(first))
	}
	if s := third.Sample(0).Shape(); !slices.Equal(s, []int64{10, 20, 3}) || third.Layout() != "HWC" {
		t.Errorf("third output: shape %v, layout %q", s, third.Layout())
	}

	// third is not handed back, so the next walk allocates; a late
	// Recycle of third, after that walk, is ignored.
	fourth := check(sameShapeBatch(t, rng, 2, 10, 20))
	if slices.ContainsFunc(dataOf(fourth), func(p unsafe.Pointer) bool { return slices.Contains(dataOf(third), p) }) {
		t.Errorf("the walk reused the output of an execution not handed back")
	}
	kept := bytesOf(t, third)
	fused.Recycle([]*tensor.Batch{third})
	fifth := check(sameShapeBatch(t, rng, 2, 10, 20))
	if slices.ContainsFunc(dataOf(fifth), func(p unsafe.Pointer) bool { return slices.Contains(dataOf(third), p) }) ||
		!bytes.Equal(bytesOf(t, third), kept) {
		t.Errorf("the walk reused an output handed back after a later execution")
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
