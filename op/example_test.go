package op_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// exScale is the schema of the examples' operator: y = x * factor + offset.
// Schemas are data; a plugin's Info carries them, so they can be checked
// before any of its code runs.
var exScale = schema.Op{
	Name: "example.Scale",
	Doc:  "Multiplies every element by factor and adds offset.",
	Inputs: []schema.Input{
		{Name: "x", DTypes: []tensor.DType{tensor.Float32}},
	},
	Outputs: []schema.Output{{Name: "y"}},
	Args: []schema.Arg{
		{Name: "factor", Type: schema.Float, Required: true, Min: schema.Bounds(-100), Max: schema.Bounds(100)},
		{Name: "offset", Type: schema.Float, Default: 0.0},
		{Name: "mode", Type: schema.String, Default: "fast", Allowed: []any{"fast", "exact"}},
	},
	Devices: []schema.Device{schema.CPU},
}

// exScaleImpl is one instance of example.Scale.
type exScaleImpl struct{ factor, offset float32 }

// newExScale is example.Scale's CPU factory: it reads the validated
// arguments with the typed getters.
func newExScale(args *schema.Values) (op.Impl, error) {
	return &exScaleImpl{factor: float32(args.Float("factor")), offset: float32(args.Float("offset"))}, nil
}

// Setup says each output sample has the dtype, layout and shape of its
// input sample.
func (s *exScaleImpl) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	x := inputs[0]
	return []op.OutputDesc{{DType: tensor.Float32, Layout: x.Layout(), Shapes: x.Shapes()}}, nil
}

// Run fills the outputs Setup described.
func (s *exScaleImpl) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, in := range inputs[0].Samples() {
		x, err := tensor.Values[float32](in)
		if err != nil {
			return err
		}
		y, err := tensor.Values[float32](outputs[0].Sample(i))
		if err != nil {
			return err
		}
		for j, v := range x {
			y[j] = v*s.factor + s.offset
		}
	}
	return nil
}

// exSamples returns a float32 batch of one 1-D sample per slice: the
// samples' shapes may differ.
func exSamples(vals ...[]float32) *tensor.Batch {
	var ts []*tensor.Tensor
	for _, v := range vals {
		t, err := tensor.FromSlice(v)
		if err != nil {
			panic(err)
		}
		ts = append(ts, t)
	}
	b, err := tensor.NewBatch(ts...)
	if err != nil {
		panic(err)
	}
	return b
}

// exPrint prints each float32 sample of b on a line.
func exPrint(b *tensor.Batch) {
	for _, t := range b.Samples() {
		v, err := tensor.Values[float32](t)
		if err != nil {
			panic(err)
		}
		fmt.Println(v)
	}
}

// An operator is a schema plus a factory per device. Registering it,
// instantiating it with arguments, then Setup and Run on a batch of
// samples of different shapes:
func Example() {
	reg := op.NewRegistry(op.Options{})
	err := reg.Register(op.Operator{
		Schema:   exScale,
		Backends: map[schema.Device]op.Factory{schema.CPU: newExScale},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	in, err := reg.New(ctx, "example.Scale", schema.Args{"factor": 2, "offset": 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()

	x := exSamples([]float32{1, 2, 3}, []float32{10, 20})
	descs, err := in.Setup([]*tensor.Batch{x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(descs[0].DType, descs[0].Shapes)
	y, err := descs[0].Alloc()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := in.Run(ctx, []*tensor.Batch{y}, []*tensor.Batch{x}); err != nil {
		fmt.Println(err)
		return
	}
	exPrint(y)
	// Output:
	// float32 [[3] [2]]
	// [2.5 4.5 6.5]
	// [20.5 40.5]
}

// Exec does Setup, allocation and Run in one call.
func ExampleInstance_Exec() {
	reg := op.NewRegistry(op.Options{})
	if err := reg.Register(op.Operator{Schema: exScale, Backends: map[schema.Device]op.Factory{schema.CPU: newExScale}}); err != nil {
		fmt.Println(err)
		return
	}
	in, err := reg.New(context.Background(), "example.Scale", schema.Args{"factor": -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	outs, err := in.Exec(context.Background(), exSamples([]float32{1, -2, 3}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(in.Name(), in.Device(), in.Args().Float("factor"), in.Args().Has("offset"))
	exPrint(outs[0])
	// Output:
	// example.Scale cpu -1 false
	// [-1 2 -3]
}

// Looking up an operator by a misspelt name suggests the nearest one.
func ExampleRegistry_Lookup() {
	reg := op.NewRegistry(op.Options{})
	if err := reg.Register(op.Operator{Schema: exScale, Backends: map[schema.Device]op.Factory{schema.CPU: newExScale}}); err != nil {
		fmt.Println(err)
		return
	}
	_, err := reg.Lookup("example.Scal")
	fmt.Println(errors.Is(err, dynop.ErrNotFound))
	fmt.Println(err)

	e, _ := reg.Lookup("example.Scale")
	fmt.Println(e.Schema.Doc)
	// Output:
	// true
	// op: operator not found: "example.Scal"; did you mean "example.Scale"?
	// Multiplies every element by factor and adds offset.
}

// An operator may come in CPU-specific variants, best first, the
// portable reference last; the registry runs the best one its CPU
// allows. Options.CPU fixes the CPU here, so that the example gives the
// same answer on every machine.
func ExampleRegistry_Variants() {
	cpu := dispatch.CPU{Has: dispatch.Of(dispatch.AVX2, dispatch.FMA).Closure()}
	reg := op.NewRegistry(op.Options{CPU: &cpu})
	err := reg.Register(op.Operator{
		Schema: exScale,
		Variants: map[schema.Device][]op.Variant{schema.CPU: {
			{Name: "avx512", Needs: dispatch.Of(dispatch.AVX512F), Factory: newExScale},
			{Name: "avx2", Needs: dispatch.Of(dispatch.AVX2, dispatch.FMA), Factory: newExScale},
			{Name: "scalar", Factory: newExScale},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	choice, err := reg.Variants(ctx, "example.Scale")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range choice.Variants {
		fmt.Printf("%s: %s\n", s.Name, s.Why())
	}

	// Tests and benchmarks can ask for a variant by name.
	in, err := reg.New(ctx, "example.Scale", schema.Args{"factor": 1}, op.WithVariant("scalar"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	fmt.Println("runs", in.Variant())
	// Output:
	// avx512: needs avx512f,f16c (this CPU lacks them)
	// avx2: chosen: the best runnable variant
	// scalar: runnable; a better variant runs
	// runs scalar
}
