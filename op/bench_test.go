package op_test

import (
	"context"
	"testing"
	"time"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// emptyImpl is an operator that does nothing: what is left is overhead.
type emptyImpl struct{}

func (emptyImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Shapes: in[0].Shapes()}}, nil
}

//go:noinline
func (emptyImpl) Run(context.Context, []*tensor.Batch, []*tensor.Batch) error { return nil }

// BenchmarkGoOperatorEmpty runs an empty Go operator through an
// op.Instance (the checks against Setup, cancellation, panic recovery)
// and calls its Run directly, interleaved in one run (target in
// DESIGN.md: at most 20 ns more, 0 allocs).
func BenchmarkGoOperatorEmpty(b *testing.B) {
	ctx := context.Background()
	r := op.NewRegistry(op.Options{})
	s := schema.Op{Name: "bench.Empty", Inputs: []schema.Input{{Name: "in"}}, Outputs: []schema.Output{{Name: "out"}}}
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return emptyImpl{}, nil }}}); err != nil {
		b.Fatal(err)
	}
	in, err := r.New(ctx, "bench.Empty", nil)
	if err != nil {
		b.Fatal(err)
	}
	x, _ := tensor.New(tensor.Float32, 16)
	inputs := []*tensor.Batch{must(tensor.NewBatch(x))}
	descs, err := in.Setup(inputs)
	if err != nil {
		b.Fatal(err)
	}
	outputs := []*tensor.Batch{must(descs[0].Alloc())}
	var impl op.Impl = emptyImpl{}
	b.ReportAllocs()
	b.ResetTimer()
	const rounds = 10
	var direct, through time.Duration
	for range rounds {
		start := time.Now()
		for range b.N / rounds {
			_ = impl.Run(ctx, outputs, inputs)
		}
		mid := time.Now()
		for range b.N / rounds {
			if err := in.Run(ctx, outputs, inputs); err != nil {
				b.Fatal(err)
			}
		}
		direct, through = direct+mid.Sub(start), through+time.Since(mid)
	}
	b.StopTimer()
	n := float64(b.N / rounds * rounds)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/call")
	b.ReportMetric(float64(through.Nanoseconds())/n, "op-ns/call")
	b.ReportMetric(float64((through-direct).Nanoseconds())/n, "extra-ns/call")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
