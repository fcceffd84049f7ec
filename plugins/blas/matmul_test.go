package blas_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/blas"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// exec runs blas.MatMul with args on inputs and returns its output and
// the variant that ran, or the first error (from New, Setup or Run).
func exec(h *dynop.Host, args schema.Args, inputs ...*tensor.Batch) (*tensor.Tensor, string, error) {
	ctx := context.Background()
	in, err := h.NewOperator(ctx, blas.MatMul, args)
	if err != nil {
		return nil, "", err
	}
	defer in.Close()
	outs, err := in.Exec(ctx, inputs...)
	if err != nil {
		return nil, "", err
	}
	return outs[0].Sample(0), in.Variant(), nil
}

// mmCase is one blas.MatMul call: op(a) is m×k, op(b) k×n.
type mmCase struct {
	m, k, n        int
	transA, transB bool
	bias, relu     bool
	alpha          float32
}

func (c mmCase) String() string {
	return fmt.Sprintf("%dx%d·%dx%d transA=%v transB=%v bias=%v relu=%v alpha=%g", c.m, c.k, c.k, c.n, c.transA, c.transB, c.bias, c.relu, c.alpha)
}

func (c mmCase) args() schema.Args {
	act := "none"
	if c.relu {
		act = "relu"
	}
	return schema.Args{"transpose_a": c.transA, "transpose_b": c.transB, "alpha": float64(c.alpha), "activation": act}
}

// operands returns random compact a, b (stored transposed where the case
// says) and bias (nil without).
func (c mmCase) operands(t testing.TB, rng *rand.Rand) (a, b, bias *tensor.Tensor) {
	ar, ac := stored(c.transA, c.m, c.k)
	br, bc := stored(c.transB, c.k, c.n)
	a, b = matrix(t, randoms(rng, ar*ac), ar, ac), matrix(t, randoms(rng, br*bc), br, bc)
	if c.bias {
		var err error
		if bias, err = tensor.FromSlice(randoms(rng, c.n), int64(c.n)); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, bias
}

// inputs returns the operator's input batches.
func inputs(t testing.TB, a, b, bias *tensor.Tensor) []*tensor.Batch {
	in := []*tensor.Batch{batch(t, a), batch(t, b)}
	if bias != nil {
		in = append(in, batch(t, bias))
	}
	return in
}

// matmulRef is blas.MatMul's reference: act(alpha·op(a)·op(b) + bias) as a
// triple loop in float64 over the float32 values (any strides), and per
// element the bound on a float32 computation's error,
// (k+5)·2⁻²⁴·(Σ|alpha·a·b| + |bias|): Sgemm's bound and one rounding more,
// of the bias's addition (relu moves no two values further apart).
func matmulRef(t testing.TB, c mmCase, a, b, bias *tensor.Tensor) (want, bound []float64) {
	af, bf := floats(t, a), floats(t, b)
	ld := func(x *tensor.Tensor) int { return int(x.Shape()[1]) }
	want, bound = gemmRef(c.transA, c.transB, c.m, c.n, c.k, c.alpha, af, ld(a), bf, ld(b), 0, nil, 0)
	var bs []float32
	if bias != nil {
		bs = floats(t, bias)
	}
	for i := range want {
		if bs != nil {
			j := i % c.n
			want[i] += float64(bs[j])
			bound[i] = bound[i]*float64(c.k+5)/float64(c.k+4) + float64(c.k+5)*u*math.Abs(float64(bs[j]))
		}
		if c.relu && want[i] < 0 {
			want[i] = 0
		}
	}
	return want, bound
}

// checkClose fails t unless got is within bound of want, element by
// element, and has m×n elements.
func checkClose(t testing.TB, what string, m, n int, got []float32, want, bound []float64) {
	t.Helper()
	if len(got) != m*n {
		t.Fatalf("%s: %d elements, want %dx%d", what, len(got), m, n)
	}
	for i, g := range got {
		if d := math.Abs(float64(g) - want[i]); !(d <= bound[i]) {
			t.Fatalf("%s: out[%d][%d] = %v, want %v within %.3g", what, i/n, i%n, g, want[i], bound[i])
		}
	}
}

// mmCases are odd and even sizes from 1×1 to 257×129 times 129×65, with
// every combination of transposes, bias and relu on the odd ones.
func mmCases() []mmCase {
	var cs []mmCase
	for _, s := range [][3]int{{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {257, 129, 65}, {3, 200, 1}, {2, 1, 17}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			cs = append(cs, mmCase{s[0], s[1], s[2], tr[0], tr[1], false, false, 1})
		}
		cs = append(cs, mmCase{s[0], s[1], s[2], false, false, true, false, 1},
			mmCase{s[0], s[1], s[2], false, true, true, true, -0.5},
			mmCase{s[0], s[1], s[2], true, false, false, true, 2})
	}
	return cs
}

// TestMatMulMatchesReference: blas.MatMul computes the float64 triple
// loop's act(alpha·op(a)·op(b) + bias) within (k+5)·2⁻²⁴·(Σ|alpha·a·b| +
// |bias|) per element, with the output's shape m×n.
func TestMatMulMatchesReference(t *testing.T) {
	h := openHost(t, "")
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range mmCases() {
		a, b, bias := c.operands(t, rng)
		out, _, err := exec(h, c.args(), inputs(t, a, b, bias)...)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if s := out.Shape(); len(s) != 2 || s[0] != int64(c.m) || s[1] != int64(c.n) || out.DType() != tensor.Float32 {
			t.Fatalf("%v: output %v %v, want float32 %dx%d", c, out.DType(), s, c.m, c.n)
		}
		want, bound := matmulRef(t, c, a, b, bias)
		checkClose(t, c.String(), c.m, c.n, floats(t, out), want, bound)
	}
}

// TestMatMulEmpty: an empty sum (k = 0) is 0, plus the bias, through the
// activation; empty outputs (m or n 0) are empty.
func TestMatMulEmpty(t *testing.T) {
	h := openHost(t, "")
	a, _ := tensor.New(tensor.Float32, 2, 0)
	b, _ := tensor.New(tensor.Float32, 0, 3)
	bias, _ := tensor.FromSlice([]float32{1, -2, 3}, 3)
	out, _, err := exec(h, schema.Args{"activation": "relu"}, inputs(t, a, b, bias)...)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := floats(t, out), []float32{1, 0, 3, 1, 0, 3}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("k = 0: %v, want relu(bias) per row %v", got, want)
	}
	a0, _ := tensor.New(tensor.Float32, 0, 4)
	b4, _ := tensor.New(tensor.Float32, 4, 3)
	if out, _, err = exec(h, nil, inputs(t, a0, b4, nil)...); err != nil {
		t.Fatal(err)
	}
	if s := out.Shape(); s[0] != 0 || s[1] != 3 {
		t.Errorf("m = 0: output %v, want [0 3]", s)
	}
}

// strided returns a rows×cols matrix of x's values, row-major, in a
// buffer twice its size with every other element skipped (strides 2·cols
// and 2): neither row- nor column-major, which BLAS cannot read in place.
func strided(t testing.TB, x []float32, rows, cols int) *tensor.Tensor {
	t.Helper()
	buf := make([]float32, 2*len(x))
	for i, v := range x {
		buf[2*i] = v
	}
	v, err := tensor.FromPointer(unsafe.Pointer(unsafe.SliceData(buf)), 4*len(buf), tensor.Device{Type: tensor.CPU}, tensor.Float32,
		[]int64{int64(rows), int64(cols)}, []int64{2 * int64(cols), 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = buf[0] }) // keeps buf reachable while the test uses v
	return v
}

// TestMatMulStrided: inputs of any strides compute what compact ones do:
// a transposed view (column-major, read in place), a crop of a wider
// matrix (a leading dimension above the width, read in place), matrices
// and a bias whose elements are not adjacent (copied first).
func TestMatMulStrided(t *testing.T) {
	h := openHost(t, "")
	rng := rand.New(rand.NewPCG(9, 10))
	const m, k, n = 13, 21, 11
	c := mmCase{m, k, n, false, false, true, true, 1.25}
	wide := matrix(t, randoms(rng, k*(n+5)), k, n+5)
	at := matrix(t, randoms(rng, k*m), k, m)
	aT, err := at.Permute(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	bCrop, err := wide.Crop([]int64{0, 2}, []int64{k, n})
	if err != nil {
		t.Fatal(err)
	}
	bias := stridedVector(t, randoms(rng, n))
	for _, tc := range []struct {
		name    string
		a, b, v *tensor.Tensor
	}{
		{"a transposed view", aT, matrix(t, randoms(rng, k*n), k, n), bias},
		{"b a crop", matrix(t, randoms(rng, m*k), m, k), bCrop, bias},
		{"a and b strided", strided(t, randoms(rng, m*k), m, k), strided(t, randoms(rng, k*n), k, n), bias},
	} {
		out, _, err := exec(h, c.args(), inputs(t, tc.a, tc.b, tc.v)...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want, bound := matmulRef(t, c, tc.a, tc.b, tc.v)
		checkClose(t, tc.name, m, n, floats(t, out), want, bound)
	}
}

// stridedVector returns a vector of x's values two elements apart.
func stridedVector(t testing.TB, x []float32) *tensor.Tensor {
	t.Helper()
	buf := make([]float32, 2*len(x))
	for i, v := range x {
		buf[2*i] = v
	}
	v, err := tensor.FromPointer(unsafe.Pointer(unsafe.SliceData(buf)), 4*len(buf), tensor.Device{Type: tensor.CPU}, tensor.Float32,
		[]int64{int64(len(x))}, []int64{2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = buf[0] })
	return v
}

// TestMatMulBadInputs: each input the operator cannot take fails with a
// message that says what is wrong: the host refuses ranks, dtypes and
// activations that the schema rules out before the plugin sees them, and
// the plugin what depends on the sizes and alpha's range.
func TestMatMulBadInputs(t *testing.T) {
	h := openHost(t, "")
	rng := rand.New(rand.NewPCG(11, 12))
	f32 := func(shape ...int64) *tensor.Tensor {
		n := int64(1)
		for _, s := range shape {
			n *= s
		}
		x, err := tensor.FromSlice(randoms(rng, int(n)), shape...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	u8, _ := tensor.New(tensor.Uint8, 3, 4)
	for _, tc := range []struct {
		name   string
		args   schema.Args
		inputs []*tensor.Tensor
		want   []string
	}{
		{"a of rank 3", nil, []*tensor.Tensor{f32(2, 3, 4), f32(4, 5)}, []string{`input 0 "a"`, "samples have 3 dimension(s), want 2"}},
		{"b of rank 1", nil, []*tensor.Tensor{f32(3, 4), f32(4)}, []string{`input 1 "b"`, "samples have 1 dimension(s), want 2"}},
		{"a of uint8", nil, []*tensor.Tensor{u8, f32(4, 5)}, []string{`input 0 "a"`, "dtype uint8 is not allowed (want [float32])"}},
		{"inner dimensions differ", nil, []*tensor.Tensor{f32(3, 4), f32(5, 6)},
			[]string{"blas.MatMul: inner dimensions differ: a is 3x4 and b is 5x6 (a's columns must be b's rows)"}},
		{"inner dimensions differ transposed", schema.Args{"transpose_a": true, "transpose_b": true}, []*tensor.Tensor{f32(3, 4), f32(5, 6)},
			[]string{"blas.MatMul: inner dimensions differ: transposed a is 4x3 and transposed b is 6x5 (a's columns must be b's rows)"}},
		{"bias of the wrong length", nil, []*tensor.Tensor{f32(3, 4), f32(4, 5), f32(4)},
			[]string{"blas.MatMul: bias has 4 elements, want 5 (one per column of the output)"}},
		{"bias of rank 2", nil, []*tensor.Tensor{f32(3, 4), f32(4, 5), f32(1, 5)}, []string{`input 2 "bias"`, "samples have 2 dimension(s), want 1"}},
		{"unknown activation", schema.Args{"activation": "tanh"}, []*tensor.Tensor{f32(3, 4), f32(4, 5)}, []string{`argument "activation": tanh is not one of [none relu]`}},
		{"alpha beyond float32", schema.Args{"alpha": 1e39}, []*tensor.Tensor{f32(3, 4), f32(4, 5)},
			[]string{"blas.MatMul: alpha 1e+39 is not a finite float32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []*tensor.Batch
			for _, x := range tc.inputs {
				in = append(in, batch(t, x))
			}
			_, _, err := exec(h, tc.args, in...)
			testutil.WantErr(t, err, nil, tc.want...)
		})
	}
}

// TestEveryVariantAgreesWithScalar is the proof of the epilogue's
// variants: every variant this CPU can run, forced by turning CPU
// features off (dynop.Options.CPUFeatures, as DYNOP_CPU_FEATURES would),
// computes the scalar reference's bits, on outputs whose widths are not
// multiples of the vector widths, with biases and products that hold
// NaNs, infinities, negative values and zeros of both signs.
func TestEveryVariantAgreesWithScalar(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	rng := rand.New(rand.NewPCG(13, 14))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, -1e-30, -3}
	type vcase struct {
		name    string
		args    schema.Args
		a, b, v *tensor.Tensor
	}
	var cases []vcase
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 33, 65} {
		const m, k = 5, 6
		av := randoms(rng, m*k)
		av[3] = float32(math.NaN()) // row 0 of the product is NaN
		bias := randoms(rng, n)
		for j := range bias {
			if j%3 == 0 {
				bias[j] = special[j%len(special)]
			}
		}
		bv, _ := tensor.FromSlice(bias, int64(n))
		for _, act := range []string{"none", "relu"} {
			a, b := matrix(t, av, m, k), matrix(t, randoms(rng, k*n), k, n)
			cases = append(cases,
				vcase{fmt.Sprintf("n=%d %s bias", n, act), schema.Args{"activation": act}, a, b, bv},
				vcase{fmt.Sprintf("n=%d %s", n, act), schema.Args{"activation": act, "alpha": -1.0}, a, b, nil})
		}
	}
	run := func(off string) ([][]float32, []string) {
		h := openHost(t, off)
		outs, ran := make([][]float32, len(cases)), make([]string, len(cases))
		for i, c := range cases {
			out, variant, err := exec(h, c.args, inputs(t, c.a, c.b, c.v)...)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			outs[i], ran[i] = floats(t, out), variant
		}
		return outs, ran
	}
	want, ran := run("-sse2") // no SIMD feature left: the reference
	for i, v := range ran {
		if v != "scalar" {
			t.Fatalf("%s: with -sse2 ran %q, want scalar", cases[i].name, v)
		}
	}
	tested := map[string]bool{}
	for _, off := range []string{"", "-avx512f", "-avx2"} {
		cpu, err := dispatch.Host().TurnOff(off)
		if err != nil {
			t.Fatal(err)
		}
		best := "scalar"
		switch {
		case cpu.Available().Contains(dispatch.Of(dispatch.AVX512F).Closure()):
			best = "avx512"
		case cpu.Available().Contains(dispatch.Of(dispatch.AVX2).Closure()):
			best = "avx2"
		}
		got, ran := run(off)
		for i, c := range cases {
			if ran[i] != best {
				t.Errorf("CPUFeatures %q: %s ran %q, want %q on this CPU", off, c.name, ran[i], best)
			}
			for j := range got[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("CPUFeatures %q: %s: variant %s gives out[%d] = %v (%#x), scalar %v (%#x)", off, c.name, ran[i], j,
						got[i][j], math.Float32bits(got[i][j]), want[i][j], math.Float32bits(want[i][j]))
				}
			}
		}
		tested[best] = true
	}
	t.Logf("variants tested against scalar on this CPU: %v (%d cases each)", tested, len(cases))
	if !tested["avx2"] && dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Error("the AVX2 variant was never tested on a CPU that has AVX2")
	}
	if !tested["avx512"] && dispatch.Host().Available().Has(dispatch.AVX512F) {
		t.Error("the AVX-512 variant was never tested on a CPU that has AVX-512")
	}
}
