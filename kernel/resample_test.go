package kernel_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/dynop/dynop/kernel"
)

// Two per-sample kernels that resample a 1-D signal In to len(Out) points,
// like DALI's resampling kernels with a bilinear and a nearest-neighbour
// filter. Both take their index (and weight) tables from scratch.

type Args struct{ In, Out []float32 }

// Resampler is what both kernels implement; Setup and Run may name it as
// the kernel type, so one call serves every slot.
type Resampler interface {
	kernel.Setupper[Args]
	kernel.Runner[Args]
}

// shape1D holds the requirements' shape slices, so Setup allocates nothing.
type shape1D struct {
	dims   [1]int64
	sample [1][]int64
	out    [1][][]int64
}

func (s *shape1D) requirements(n, scratch int) kernel.Requirements {
	s.dims[0] = int64(n)
	s.sample[0] = s.dims[:]
	s.out[0] = s.sample[:]
	return kernel.Requirements{
		OutputShapes: s.out[:],
		Scratch:      [kernel.NumMemKinds]int64{kernel.HostMemory: int64(scratch)},
	}
}

var errNoInput = errors.New("resample: empty input")

type Linear struct{ shape shape1D }

func NewLinear() (*Linear, error) { return new(Linear), nil }

func (k *Linear) Setup(_ *kernel.Context, a Args) (kernel.Requirements, error) {
	if len(a.In) == 0 {
		return kernel.Requirements{}, errNoInput
	}
	return k.shape.requirements(len(a.Out), 8*len(a.Out)), nil // int32 index + float32 weight per point
}

func (k *Linear) Run(ctx *kernel.Context, a Args) error {
	idx, err := kernel.Allocate[int32](ctx.Scratchpad, kernel.HostMemory, len(a.Out))
	if err != nil {
		return err
	}
	w, err := kernel.Allocate[float32](ctx.Scratchpad, kernel.HostMemory, len(a.Out))
	if err != nil {
		return err
	}
	scale, last := float32(len(a.In))/float32(len(a.Out)), len(a.In)-1
	for j := range a.Out {
		x := min(max((float32(j)+0.5)*scale-0.5, 0), float32(last))
		idx[j] = int32(x)
		w[j] = x - float32(idx[j])
	}
	for j := range a.Out {
		i0 := int(idx[j])
		a.Out[j] = a.In[i0] + w[j]*(a.In[min(i0+1, last)]-a.In[i0])
	}
	return nil
}

type Nearest struct{ shape shape1D }

func NewNearest() (*Nearest, error) { return new(Nearest), nil }

func (k *Nearest) Setup(_ *kernel.Context, a Args) (kernel.Requirements, error) {
	if len(a.In) == 0 {
		return kernel.Requirements{}, errNoInput
	}
	return k.shape.requirements(len(a.Out), 4*len(a.Out)), nil
}

func (k *Nearest) Run(ctx *kernel.Context, a Args) error {
	idx, err := kernel.Allocate[int32](ctx.Scratchpad, kernel.HostMemory, len(a.Out))
	if err != nil {
		return err
	}
	scale := float32(len(a.In)) / float32(len(a.Out))
	for j := range a.Out {
		idx[j] = int32(min((float32(j)+0.5)*scale, float32(len(a.In)-1)))
	}
	for j, i := range idx {
		a.Out[j] = a.In[i]
	}
	return nil
}

// useFilter puts the kernel for filter in slot i, replacing a kernel of
// the other type: DALI's per-sample pattern.
func useFilter(m *kernel.Manager, i int, filter string) error {
	var err error
	if filter == "linear" {
		_, err = kernel.CreateOrGet(m, i, NewLinear)
	} else {
		_, err = kernel.CreateOrGet(m, i, NewNearest)
	}
	if errors.Is(err, kernel.ErrType) {
		if err := m.Clear(i); err != nil {
			return err
		}
		return useFilter(m, i, filter)
	}
	return err
}

func TestPerSample(t *testing.T) {
	in := []float32{0, 10, 20, 30}
	var m kernel.Manager
	m.Resize(4)
	out := make([][]float32, 4)
	for i := range out {
		out[i] = make([]float32, 2+2*i)
	}
	batch := func(filters ...string) {
		t.Helper()
		for i, f := range filters {
			if err := useFilter(&m, i, f); err != nil {
				t.Fatal(err)
			}
			req, err := kernel.Setup[Resampler](&m, i, nil, Args{in, out[i]})
			if err != nil {
				t.Fatal(err)
			}
			if got := req.OutputShapes[0][0][0]; got != int64(len(out[i])) {
				t.Fatalf("slot %d: output shape %d, want %d", i, got, len(out[i]))
			}
			if err := kernel.Run[Resampler](&m, i, nil, Args{in, out[i]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	batch("linear", "nearest", "linear", "nearest")
	if _, err := kernel.Get[*Nearest](&m, 3); err != nil {
		t.Fatal(err)
	}
	if want := []float32{5, 25}; !slices.Equal(out[0], want) {
		t.Errorf("linear 4→2: %v, want %v", out[0], want)
	}
	if want := []float32{0, 0, 10, 10, 20, 20, 30, 30}; !slices.Equal(out[3], want) {
		t.Errorf("nearest 4→8: %v, want %v", out[3], want)
	}
	// The next batch swaps the filters; the typed Run sees the swap.
	batch("nearest", "linear", "nearest", "linear")
	err := kernel.Run[*Nearest](&m, 1, nil, Args{in, out[1]})
	if !errors.Is(err, kernel.ErrType) {
		t.Fatalf("Run[*Nearest] on a Linear slot: %v", err)
	}
	if _, err := kernel.Setup[Resampler](&m, 0, nil, Args{nil, out[0]}); err != errNoInput {
		t.Fatalf("Setup with no input: %v", err)
	}
	err = kernel.Run[Resampler](&m, 0, nil, Args{in, out[0]})
	if !errors.Is(err, kernel.ErrNotSetUp) {
		t.Fatalf("Run after a failed Setup: %v", err)
	}

	// Steady state: Setup and Run of every slot allocate nothing.
	if n := testing.AllocsPerRun(100, func() {
		for i := range 4 {
			kernel.Setup[Resampler](&m, i, nil, Args{in, out[i]})
			kernel.Run[Resampler](&m, i, nil, Args{in, out[i]})
		}
	}); n != 0 {
		t.Errorf("per-sample Setup+Run: %v allocs, want 0", n)
	}
}

var benchIn, benchOut = make([]float32, 16), make([]float32, 64)

func BenchmarkManagerRun(b *testing.B) {
	var m kernel.Manager
	m.Resize(1)
	kernel.CreateOrGet(&m, 0, NewLinear)
	args := Args{benchIn, benchOut}
	if _, err := kernel.Setup[*Linear](&m, 0, nil, args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := kernel.Run[*Linear](&m, 0, nil, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectRun(b *testing.B) {
	k, _ := NewLinear()
	args := Args{benchIn, benchOut}
	req, err := k.Setup(nil, args)
	if err != nil {
		b.Fatal(err)
	}
	ctx := &kernel.Context{Scratchpad: kernel.NewScratchpad()}
	if err := ctx.Scratchpad.Reserve(req.Scratch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx.Scratchpad.Reset()
		if err := k.Run(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkManagerSetupRun(b *testing.B) {
	var m kernel.Manager
	m.Resize(1)
	kernel.CreateOrGet(&m, 0, NewLinear)
	args := Args{benchIn, benchOut}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernel.Setup[*Linear](&m, 0, nil, args); err != nil {
			b.Fatal(err)
		}
		if err := kernel.Run[*Linear](&m, 0, nil, args); err != nil {
			b.Fatal(err)
		}
	}
}
