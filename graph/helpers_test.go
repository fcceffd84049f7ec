package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// scalar is a batch of one int64 sample, the values test nodes pass.
func scalar(t testing.TB, v int64) *tensor.Batch {
	t.Helper()
	s, err := tensor.FromSlice([]int64{v}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tensor.NewBatch(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func value(t testing.TB, b *tensor.Batch) int64 {
	t.Helper()
	v, err := tensor.Values[int64](b.Sample(0))
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// mixer returns a node function that outputs id*1000003 plus a mix of
// its inputs, and records the order in which nodes run.
func mixer(t testing.TB, id int64, log *runLog) graph.NodeDef {
	return graph.Func(fmt.Sprintf("mix%d", id), func(ctx context.Context, in []*tensor.Batch) ([]*tensor.Batch, error) {
		v := id * 1000003
		for k, b := range in {
			v = v*31 + int64(k+1)*value(t, b)
		}
		log.add(id)
		return []*tensor.Batch{scalar(t, v)}, nil
	})
}

type runLog struct {
	mu    sync.Mutex
	order []int64
}

func (l *runLog) add(id int64) {
	l.mu.Lock()
	l.order = append(l.order, id)
	l.mu.Unlock()
}

// randomDAG builds a graph of n mixer nodes over two inputs; each node
// takes up to 3 inputs from earlier nodes or graph inputs, some nodes
// also run after an earlier node, and every sink is an output.
func randomDAG(t testing.TB, rng *rand.Rand, n int, log *runLog) (*graph.Graph, map[string][]string) {
	g := graph.New("random")
	var ports []graph.Port
	for _, name := range []string{"x", "y"} {
		in, err := g.AddInput(name)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, in.Out(0))
	}
	deps := map[string][]string{}
	used := map[*graph.Node]bool{}
	var nodes []*graph.Node
	for i := range n {
		var ins []graph.Port
		for range rng.IntN(4) {
			p := ports[rng.IntN(len(ports))]
			ins = append(ins, p)
			used[p.Node] = true
		}
		name := fmt.Sprintf("n%d", i)
		node, err := g.AddNode(name, "mix", nil, ins...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ins {
			deps[name] = append(deps[name], p.Node.Name())
		}
		if len(nodes) > 0 && rng.IntN(4) == 0 {
			before := nodes[rng.IntN(len(nodes))]
			if err := g.AddOrder(before, node); err != nil {
				t.Fatal(err)
			}
			deps[name] = append(deps[name], before.Name())
			used[before] = true
		}
		nodes = append(nodes, node)
		ports = append(ports, node.Out(0))
	}
	for _, node := range nodes {
		if !used[node] {
			if err := g.AddOutput("out-"+node.Name(), node.Out(0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Attach the definitions as a populate pass would.
	passes := graph.NewPasses()
	var id int64
	_, err := passes.Register(schema.Pass{Name: "mix", Kind: schema.Populate, Match: "mix"},
		graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
			id++
			return b.SetDefinition(n, mixer(t, id, log))
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes}); err != nil {
		t.Fatal(err)
	}
	return g, deps
}

// testRegistry is an operator registry with a few fake operators:
// test.Scale multiplies int64 values (pointwise: no), test.Add adds
// two inputs, test.AddK / test.MulK / test.Neg are pointwise on
// uint8 and float32 (test.Neg on float32 only), and test.Copy copies
// (pointwise: no) and remembers where its inputs and outputs were.
func testRegistry(t testing.TB) *op.Registry {
	t.Helper()
	r := op.NewRegistry(op.Options{})
	cpu := []schema.Device{schema.CPU}
	any1 := []schema.Input{{Name: "x"}}
	out := []schema.Output{{Name: "y"}}
	pw := func(name string, u8 func(k float64) func([]uint8), f32 func(k float64) func([]float32)) op.Operator {
		return op.Operator{
			Schema: schema.Op{Name: name, Doc: "pointwise test op", Inputs: []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Uint8, tensor.Float32}}},
				Outputs: out, Args: []schema.Arg{{Name: "k", Type: schema.Float, Default: 1.0}}, Devices: cpu},
			Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) {
				k := v.Float("k")
				f := op.PointwiseFuncs{Float32: f32(k)}
				if u8 != nil {
					f.Uint8 = u8(k)
				}
				return &pointwiseImpl{f: f}, nil
			}},
		}
	}
	ops := []op.Operator{
		{Schema: schema.Op{Name: "test.Scale", Doc: "multiplies", Inputs: any1, Outputs: out,
			Args: []schema.Arg{{Name: "by", Type: schema.Int, Default: int64(2)}}, Devices: cpu},
			Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) { return &scaleImpl{by: v.Int("by")}, nil }}},
		{Schema: schema.Op{Name: "test.Fail", Doc: "fails", Inputs: any1, Outputs: out, Devices: cpu},
			Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) { return failImpl{}, nil }}},
		pw("test.AddK",
			func(k float64) func([]uint8) {
				return func(v []uint8) {
					for i := range v {
						v[i] += uint8(k)
					}
				}
			},
			func(k float64) func([]float32) {
				return func(v []float32) {
					for i := range v {
						v[i] += float32(k)
					}
				}
			}),
		pw("test.MulK",
			func(k float64) func([]uint8) {
				return func(v []uint8) {
					for i := range v {
						v[i] *= uint8(k)
					}
				}
			},
			func(k float64) func([]float32) {
				return func(v []float32) {
					for i := range v {
						v[i] *= float32(k)
					}
				}
			}),
		{Schema: schema.Op{Name: "test.Copy", Doc: "copies", Inputs: any1, Outputs: out, Devices: cpu},
			Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return &copyImpl{}, nil }}},
		pw("test.Neg", nil, func(float64) func([]float32) {
			return func(v []float32) {
				for i := range v {
					v[i] = -v[i]
				}
			}
		}),
	}
	// test.AddKOpaque computes test.AddK but hides its uint8 element
	// function: a fused chain must fall back to running it unfused.
	opaque := ops[2]
	opaque.Schema.Name = "test.AddKOpaque"
	inner := opaque.Backends[schema.CPU]
	opaque.Backends = map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) {
		impl, err := inner(v)
		impl.(*pointwiseImpl).hide8 = true
		return impl, err
	}}
	ops = append(ops, opaque)
	for _, o := range ops {
		if err := r.Register(o); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

type scaleImpl struct{ by int64 }

func (s *scaleImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (s *scaleImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	for k := range in[0].Len() {
		src, err := tensor.Values[int64](in[0].Sample(k))
		if err != nil {
			return err
		}
		dst, _ := tensor.Values[int64](out[0].Sample(k))
		for i := range src {
			dst[i] = src[i] * s.by
		}
	}
	return nil
}

// copyImpl copies its input and records the data pointers of the
// samples of its last Run's input and output.
type copyImpl struct{ ins, outs []unsafe.Pointer }

func (c *copyImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (c *copyImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	c.ins, c.outs = nil, nil
	for k := range in[0].Len() {
		c.ins = append(c.ins, in[0].Sample(k).Data())
		c.outs = append(c.outs, out[0].Sample(k).Data())
		if err := out[0].Sample(k).CopyFrom(in[0].Sample(k)); err != nil {
			return err
		}
	}
	return nil
}

type failImpl struct{}

func (failImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Shapes: in[0].Shapes()}}, nil
}

func (failImpl) Run(context.Context, []*tensor.Batch, []*tensor.Batch) error {
	return fmt.Errorf("the kernel ran out of patience")
}

// pointwiseImpl runs its element function over a copy of the input, as
// a pointwise operator must.
type pointwiseImpl struct {
	f     op.PointwiseFuncs
	hide8 bool
	runs  int
}

func (p *pointwiseImpl) Pointwise() op.PointwiseFuncs {
	f := p.f
	if p.hide8 {
		f.Uint8 = nil
	}
	return f
}

func (p *pointwiseImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	if (in[0].DType() == tensor.Uint8 && p.f.Uint8 == nil) || (in[0].DType() == tensor.Float32 && p.f.Float32 == nil) {
		return nil, fmt.Errorf("dtype %s not supported", in[0].DType())
	}
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (p *pointwiseImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	p.runs++
	for k := range in[0].Len() {
		if err := out[0].Sample(k).CopyFrom(in[0].Sample(k)); err != nil {
			return err
		}
		switch in[0].DType() {
		case tensor.Uint8:
			v, _ := tensor.Values[uint8](out[0].Sample(k))
			p.f.Uint8(v)
		case tensor.Float32:
			v, _ := tensor.Values[float32](out[0].Sample(k))
			p.f.Float32(v)
		}
	}
	return nil
}

// names returns the names of nodes.
func names(nodes []*graph.Node) []string {
	var s []string
	for _, n := range nodes {
		s = append(s, n.Name())
	}
	return s
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
