package op_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// prefixImpl computes prefix sums of float32 vectors through a float64
// scratch vector it takes from the host (op.ScratchImpl), and remembers
// the scratchpad it was given. take is how many elements it takes more
// than it asks for; device asks for device memory too.
type prefixImpl struct {
	n      int64 // the longest sample of the last Setup
	take   int
	device bool
	seen   *kernel.Scratchpad
}

func (p *prefixImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	p.n = 0
	for _, t := range in[0].Samples() {
		p.n = max(p.n, t.NumElements())
	}
	return []op.OutputDesc{{DType: tensor.Float32, Shapes: in[0].Shapes()}}, nil
}

func (p *prefixImpl) Scratch() (req [kernel.NumMemKinds]int64) {
	req[kernel.HostMemory] = p.n * 8
	if p.device {
		req[kernel.DeviceMemory] = 1
	}
	return req
}

func (p *prefixImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	return p.RunScratch(ctx, kernel.NewScratchpad(), out, in)
}

func (p *prefixImpl) RunScratch(ctx context.Context, sp *kernel.Scratchpad, out, in []*tensor.Batch) error {
	p.seen = sp
	for i, t := range in[0].Samples() {
		sp.Reset()
		src, _ := tensor.Values[float32](t)
		dst, _ := tensor.Values[float32](out[0].Sample(i))
		acc, err := kernel.Allocate[float64](sp, kernel.HostMemory, len(src)+p.take)
		if err != nil {
			return err
		}
		sum := 0.0
		for j, v := range src {
			sum += float64(v)
			acc[j] = sum
		}
		for j := range src {
			dst[j] = float32(acc[j])
		}
	}
	return nil
}

func prefixRegistry(t *testing.T, impl func() *prefixImpl) *op.Registry {
	t.Helper()
	r := op.NewRegistry(op.Options{})
	err := r.Register(op.Operator{
		Schema: schema.Op{Name: "test.Prefix", Doc: "Prefix sums.", Inputs: []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
			Outputs: []schema.Output{{Name: "y"}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return impl(), nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func prefixInput(t *testing.T) []*tensor.Batch {
	t.Helper()
	a, _ := tensor.FromSlice([]float32{1, 2, 3, 4}, 4)
	b, _ := tensor.FromSlice([]float32{10, 20}, 2)
	x, err := tensor.NewBatch(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return []*tensor.Batch{x}
}

// TestScratchImpl: an instance runs a ScratchImpl with a scratchpad
// reserved for what Scratch reports after Setup: one it shares with other
// instances, or its own; a warm run allocates nothing.
func TestScratchImpl(t *testing.T) {
	ctx := context.Background()
	r := prefixRegistry(t, func() *prefixImpl { return &prefixImpl{} })
	a, err := r.New(ctx, "test.Prefix", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := r.New(ctx, "test.Prefix", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	inputs := prefixInput(t)
	shared := kernel.NewScratchpad()
	a.ShareScratchpad(shared)
	b.ShareScratchpad(shared)
	for _, in := range []*op.Instance{a, b} {
		outs, err := in.Exec(ctx, inputs...)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range [][]float32{{1, 3, 6, 10}, {10, 30}} {
			if got, _ := tensor.Values[float32](outs[0].Sample(i)); !slices.Equal(got, want) {
				t.Errorf("sample %d: %v, want %v", i, got, want)
			}
		}
		if seen := in.Impl().(*prefixImpl).seen; seen != shared {
			t.Errorf("the run got scratchpad %p, not the shared %p", seen, shared)
		}
	}
	if c := shared.Capacity(kernel.HostMemory); c < 4*8 {
		t.Errorf("the shared scratchpad holds %d bytes, less than the 32 asked for", c)
	}

	a.ShareScratchpad(nil)
	outs, err := a.Exec(ctx, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	own := a.Impl().(*prefixImpl).seen
	if own == nil || own == shared {
		t.Errorf("without a shared scratchpad the run got %p (shared %p), want one of the instance's own", own, shared)
	}
	if n := testing.AllocsPerRun(50, func() {
		if err := a.Run(ctx, outs, inputs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a warm run allocates %v times, want 0", n)
	}
}

// TestScratchImplErrors: taking more than Scratch reported, and asking
// for memory this machine lacks, fail the run naming the operator.
func TestScratchImplErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		impl   prefixImpl
		target error
		want   string
	}{
		{prefixImpl{take: 1}, kernel.ErrScratch, "host: asked 40 bytes, 32 left"},
		{prefixImpl{device: true}, errdefs.ErrUnsupported, "scratch: kernel: no device memory for 1 bytes of scratch"},
	} {
		r := prefixRegistry(t, func() *prefixImpl { p := c.impl; return &p })
		in, err := r.New(ctx, "test.Prefix", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.Exec(ctx, prefixInput(t)...)
		wantErr(t, err, c.target, `operator "test.Prefix"`, c.want)
		in.Close()
	}
}
