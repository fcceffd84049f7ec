package graph_test

import (
	"context"
	"testing"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// scratchImpl copies its input through a scratch of its size, taken from
// the host (op.ScratchImpl), and remembers the scratchpad it got.
type scratchImpl struct {
	bytes int64
	seen  *kernel.Scratchpad
}

func (s *scratchImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	s.bytes = 0
	for _, t := range in[0].Samples() {
		s.bytes = max(s.bytes, int64(len(t.Span())))
	}
	return []op.OutputDesc{{DType: in[0].DType(), Shapes: in[0].Shapes()}}, nil
}

func (s *scratchImpl) Scratch() (req [kernel.NumMemKinds]int64) {
	req[kernel.HostMemory] = s.bytes
	return req
}

func (s *scratchImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	return s.RunScratch(ctx, kernel.NewScratchpad(), out, in)
}

func (s *scratchImpl) RunScratch(_ context.Context, sp *kernel.Scratchpad, out, in []*tensor.Batch) error {
	s.seen = sp
	for i, t := range in[0].Samples() {
		sp.Reset()
		buf, err := sp.Alloc(kernel.HostMemory, len(t.Span()), 64)
		if err != nil {
			return err
		}
		copy(buf, t.Span())
		copy(out[0].Sample(i).Span(), buf)
	}
	return nil
}

// TestSerialSharesScratch: the operator nodes of a graph that Serial runs
// one at a time take their scratch from one scratchpad, the worker's
// arena; under Parallel, which may run them at once, each keeps its own.
func TestSerialSharesScratch(t *testing.T) {
	r := op.NewRegistry(op.Options{})
	if err := r.Register(op.Operator{
		Schema: schema.Op{Name: "test.Through", Doc: "Copies through scratch.", Inputs: []schema.Input{{Name: "x"}},
			Outputs: []schema.Output{{Name: "y"}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return &scratchImpl{}, nil }},
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		exec   graph.Executor
		shared bool
	}{{graph.Serial{}, true}, {graph.Parallel{}, false}} {
		g, nodes := chain(t, "a=test.Through", "b=test.Through")
		if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: r}); err != nil {
			t.Fatal(err)
		}
		g.Executor = c.exec
		outs, err := g.Execute(context.Background(), scalar(t, 42))
		if err != nil {
			t.Fatal(err)
		}
		if got := value(t, outs[0]); got != 42 {
			t.Errorf("%T: %d through two nodes, want 42", c.exec, got)
		}
		a := nodes[0].Definition().(*graph.OperatorDef).Instance.Impl().(*scratchImpl).seen
		b := nodes[1].Definition().(*graph.OperatorDef).Instance.Impl().(*scratchImpl).seen
		if a == nil || b == nil || (a == b) != c.shared {
			t.Errorf("%T: nodes ran with scratchpads %p and %p; shared: %v, want %v", c.exec, a, b, a == b, c.shared)
		}
		g.Close()
	}
}
