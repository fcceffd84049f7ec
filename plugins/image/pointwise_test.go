package image_test

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// pointwiseCase is a pointwise operator with arguments and references for
// its results, computed here independently of the plugin.
type pointwiseCase struct {
	name  string
	args  schema.Args
	ref8  func(x uint8) uint8
	ref32 func(x float32) float32
}

// roundClamp rounds v half up and clamps it to 0..255: what rounding half
// away from zero and clamping give, as negative values clamp to 0 anyway.
func roundClamp(v float64) uint8 {
	return uint8(min(max(math.Floor(v+0.5), 0), 255))
}

func adjustCase(contrast, brightness float64) pointwiseCase {
	c, o := float32(contrast), float32(0.5+brightness/255)
	return pointwiseCase{
		name: "image.Adjust",
		args: schema.Args{"contrast": contrast, "brightness": brightness},
		ref8: func(x uint8) uint8 {
			return roundClamp(float64(contrast*(float64(x)-128)) + 128 + brightness)
		},
		ref32: func(x float32) float32 { return float32(c*(x-0.5)) + o },
	}
}

func gammaCase(gamma float64, ref32 func(x float32) float32) pointwiseCase {
	return pointwiseCase{
		name: "image.Gamma",
		args: schema.Args{"gamma": gamma},
		ref8: func(x uint8) uint8 {
			return roundClamp(255 * math.Pow(float64(x)/255, 1/gamma))
		},
		ref32: func(x float32) float32 {
			if x < 0 || isNaN(x) {
				return x
			}
			return ref32(x)
		},
	}
}

func pointwiseCases() []pointwiseCase {
	return []pointwiseCase{
		adjustCase(1, 0),
		adjustCase(1.5, 0),
		adjustCase(1.7, -20),
		adjustCase(0.3, 40.5),
		adjustCase(0, -255),
		adjustCase(100, 255),
		gammaCase(1, func(x float32) float32 { return x }),
		gammaCase(2, func(x float32) float32 { return float32(math.Sqrt(float64(x))) }),
		gammaCase(0.5, func(x float32) float32 { return float32(float64(x) * float64(x)) }),
		gammaCase(2.2, func(x float32) float32 { return float32(math.Pow(float64(x), 1/2.2)) }),
		gammaCase(0.01, func(x float32) float32 { return float32(math.Pow(float64(x), 100)) }),
		gammaCase(100, func(x float32) float32 { return float32(math.Pow(float64(x), 0.01)) }),
		{
			name:  "image.Invert",
			ref8:  func(x uint8) uint8 { return 255 - x },
			ref32: func(x float32) float32 { return 1 - x },
		},
	}
}

// floats are float32 test values on and off the 0..1 scale.
func floats() []float32 {
	v := []float32{
		-1, -0.25, float32(math.Copysign(0, -1)), 1, 1.5, 255,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.SmallestNonzeroFloat32, math.MaxFloat32,
	}
	for i := range 256 {
		v = append(v, float32(i)/255, float32(i)/256+0.001)
	}
	return v
}

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float32) bool { return a == b || isNaN(a) && isNaN(b) }

func isNaN(x float32) bool { return math.IsNaN(float64(x)) }

func TestPointwiseUint8(t *testing.T) {
	h := openHost(t)
	all := make([]uint8, 256)
	for i := range all {
		all[i] = uint8(i)
	}
	for _, c := range pointwiseCases() {
		in := batch(t, sample(t, "HWC", all, 16, 16, 1), sample(t, "HWC", all[100:118], 2, 3, 3))
		out := run(t, h, c.name, c.args, in)[0]
		if out.DType() != tensor.Uint8 || out.Len() != 2 {
			t.Fatalf("%s %v: %v batch of %d samples", c.name, c.args, out.DType(), out.Len())
		}
		wantShape(t, out.Sample(0), "HWC", 16, 16, 1)
		wantShape(t, out.Sample(1), "HWC", 2, 3, 3)
		for i, y := range values[uint8](t, out.Sample(0)) {
			if want := c.ref8(uint8(i)); y != want {
				t.Errorf("%s %v: %d gives %d, want %d", c.name, c.args, i, y, want)
			}
		}
		for i, y := range values[uint8](t, out.Sample(1)) {
			if want := c.ref8(all[100+i]); y != want {
				t.Errorf("%s %v: sample 1: %d gives %d, want %d", c.name, c.args, all[100+i], y, want)
			}
		}
	}
}

// A few results worked out by hand.
func TestPointwiseExamples(t *testing.T) {
	h := openHost(t)
	in8 := batch(t, sample(t, "", []uint8{0, 64, 127, 128, 129, 255}, 6))
	in32 := batch(t, sample(t, "", []float32{0, 0.25, 0.5, 0.75, 1}, 5))
	for _, c := range []struct {
		name   string
		args   schema.Args
		want8  []uint8
		want32 []float32
	}{
		// 1.5*(x-128) + 128: 127 gives 126.5 and 129 gives 129.5, rounded
		// away from zero.
		{"image.Adjust", schema.Args{"contrast": 1.5}, []uint8{0, 32, 127, 128, 130, 255}, []float32{-0.25, 0.125, 0.5, 0.875, 1.25}},
		{"image.Adjust", schema.Args{"brightness": -64}, []uint8{0, 0, 63, 64, 65, 191}, nil},
		{"image.Adjust", schema.Args{"contrast": 0, "brightness": 127.5}, []uint8{255, 255, 255, 255, 255, 255}, []float32{1, 1, 1, 1, 1}},
		// 255*sqrt(64/255) is 127.75.
		{"image.Gamma", schema.Args{"gamma": 2}, []uint8{0, 128, 180, 181, 181, 255}, []float32{0, 0.5, float32(math.Sqrt(0.5)), float32(math.Sqrt(0.75)), 1}},
		{"image.Gamma", schema.Args{"gamma": 0.5}, []uint8{0, 16, 63, 64, 65, 255}, []float32{0, 0.0625, 0.25, 0.5625, 1}},
		{"image.Invert", nil, []uint8{255, 191, 128, 127, 126, 0}, []float32{1, 0.75, 0.5, 0.25, 0}},
	} {
		wantValues(t, run(t, h, c.name, c.args, in8)[0].Sample(0), c.want8)
		if c.want32 != nil {
			wantValues(t, run(t, h, c.name, c.args, in32)[0].Sample(0), c.want32)
		}
	}
}

func TestPointwiseFloat32(t *testing.T) {
	h := openHost(t)
	x := floats()
	for _, c := range pointwiseCases() {
		in := batch(t, sample(t, "", x, int64(len(x))))
		out := run(t, h, c.name, c.args, in)[0].Sample(0)
		if out.DType() != tensor.Float32 {
			t.Fatalf("%s %v: dtype %v", c.name, c.args, out.DType())
		}
		wantShape(t, out, "", int64(len(x)))
		for i, y := range values[float32](t, out) {
			if want := c.ref32(x[i]); !sameFloat(y, want) {
				t.Errorf("%s %v: %v gives %v, want %v", c.name, c.args, x[i], y, want)
			}
		}
	}
}

// The element functions, applied to blocks of any length at any offset
// and from several goroutines at once, give what Run gives, bit for bit.
func TestPointwiseBlocks(t *testing.T) {
	h := openHost(t)
	rng := rand.New(rand.NewPCG(1, 2))
	x32 := floats()
	x8 := make([]uint8, 1000)
	for i := range x8 {
		x8[i] = uint8(rng.Uint32())
	}
	for _, c := range pointwiseCases() {
		inst := newOp(t, h, c.name, c.args)
		pw, ok := inst.Impl().(op.Pointwise)
		if !ok {
			t.Fatalf("%s: %T does not implement op.Pointwise", c.name, inst.Impl())
		}
		f := pw.Pointwise()
		if f.Uint8 == nil || f.Float32 == nil {
			t.Fatalf("%s: element functions %+v, want both", c.name, f)
		}

		run8 := values[uint8](t, must(inst.Exec(context.Background(), batch(t, sample(t, "", x8, int64(len(x8))))))[0].Sample(0))
		got8 := append([]uint8(nil), x8...)
		inBlocks(rng, got8, f.Uint8)
		if !equal(got8, run8) {
			t.Errorf("%s %v: uint8 blocks differ from Run", c.name, c.args)
		}

		run32 := values[float32](t, must(inst.Exec(context.Background(), batch(t, sample(t, "", x32, int64(len(x32))))))[0].Sample(0))
		got32 := append([]float32(nil), x32...)
		inBlocks(rng, got32, f.Float32)
		for i := range got32 {
			if math.Float32bits(got32[i]) != math.Float32bits(run32[i]) {
				t.Errorf("%s %v: float32 %v: block gives %v, Run %v", c.name, c.args, x32[i], got32[i], run32[i])
			}
		}
	}
}

// inBlocks applies f to v in blocks of random lengths, empty ones too,
// each in its own goroutine.
func inBlocks[T any](rng *rand.Rand, v []T, f func([]T)) {
	var wg sync.WaitGroup
	for len(v) > 0 {
		n := min(rng.IntN(40), len(v))
		block := v[:n]
		wg.Go(func() { f(block) })
		v = v[n:]
	}
	wg.Wait()
}

// Strided views, a permutation and a crop, are read element by element.
func TestPointwiseStrided(t *testing.T) {
	h := openHost(t)
	const C, H, W = 3, 4, 5
	chw := make([]uint8, C*H*W)
	for i := range chw {
		chw[i] = uint8(i * 37)
	}
	permuted := must(sample(t, "CHW", chw, C, H, W).Permute(1, 2, 0))
	compact := must(permuted.Contiguous())
	cropped := must(compact.Crop([]int64{1, 2, 0}, []int64{2, 3, C}))
	for _, view := range []*tensor.Tensor{permuted, cropped} {
		if view.IsContiguous() {
			t.Fatal("the view is contiguous; the test needs a strided one")
		}
		want := values[uint8](t, view)
		for _, c := range pointwiseCases() {
			out := run(t, h, c.name, c.args, batch(t, view))[0].Sample(0)
			s := view.Shape()
			wantShape(t, out, "HWC", s...)
			for i, y := range values[uint8](t, out) {
				if w := c.ref8(want[i]); y != w {
					t.Fatalf("%s %v: element %d: %d, want %d", c.name, c.args, i, y, w)
				}
			}
		}
	}
}

func TestPointwiseBadArgs(t *testing.T) {
	h := openHost(t)
	for _, c := range []struct {
		name string
		args schema.Args
		want []string
	}{
		{"image.Adjust", schema.Args{"contrast": -0.5}, []string{`"contrast"`, "minimum"}},
		{"image.Adjust", schema.Args{"contrast": 101}, []string{`"contrast"`, "maximum"}},
		{"image.Adjust", schema.Args{"contrast": math.NaN()}, []string{`"contrast"`, "NaN"}},
		{"image.Adjust", schema.Args{"brightness": -256}, []string{`"brightness"`, "minimum"}},
		{"image.Adjust", schema.Args{"brightness": 255.5}, []string{`"brightness"`, "maximum"}},
		{"image.Adjust", schema.Args{"brightness": "bright"}, []string{`"brightness"`}},
		{"image.Gamma", schema.Args{"gamma": 0}, []string{`"gamma"`, "minimum"}},
		{"image.Gamma", schema.Args{"gamma": 0.005}, []string{`"gamma"`, "minimum"}},
		{"image.Gamma", schema.Args{"gamma": -2}, []string{`"gamma"`, "minimum"}},
		{"image.Gamma", schema.Args{"gamma": 101}, []string{`"gamma"`, "maximum"}},
		{"image.Invert", schema.Args{"gamma": 2}, []string{`"gamma"`, "takes no arguments"}},
	} {
		_, err := h.NewOperator(context.Background(), c.name, c.args)
		wantErr(t, err, schema.ErrArgument, c.want...)
	}
	// Other dtypes are refused by the schema.
	for _, name := range []string{"image.Adjust", "image.Gamma", "image.Invert"} {
		err := runErr(t, h, name, nil, batch(t, sample(t, "", []int32{1}, 1)))
		wantErr(t, err, op.ErrInput, "int32")
	}
}
