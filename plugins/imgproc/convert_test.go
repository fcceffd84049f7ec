package imgproc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// castDTypes are the dtypes imgproc.Cast converts between.
var castDTypes = []tensor.DType{tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Float16, tensor.Float32}

// rawTensor returns a compact tensor of dt and shape holding data (C
// order, native byte order).
func rawTensor(t *testing.T, dt tensor.DType, data []byte, shape ...int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != len(x.Span()) {
		t.Fatalf("%d bytes for %v %v", len(data), dt, shape)
	}
	copy(x.Span(), data)
	return x
}

func batchOf(t *testing.T, xs ...*tensor.Tensor) *tensor.Batch {
	t.Helper()
	b, err := tensor.NewBatch(xs...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func f32Bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func u16Bytes(v ...uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint16(b[2*i:], x)
	}
	return b
}

func i32Bytes(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// elements reads the elements of a compact tensor's bytes as float64
// (float16 as its bits, which the tests compare).
func elements(dt tensor.DType, b []byte) []float64 {
	n := len(b) / dt.Size()
	out := make([]float64, n)
	for i := range n {
		switch dt {
		case tensor.Uint8:
			out[i] = float64(b[i])
		case tensor.Int16:
			out[i] = float64(int16(binary.NativeEndian.Uint16(b[2*i:])))
		case tensor.Uint16, tensor.Float16:
			out[i] = float64(binary.NativeEndian.Uint16(b[2*i:]))
		case tensor.Int32:
			out[i] = float64(int32(binary.NativeEndian.Uint32(b[4*i:])))
		case tensor.Float32:
			out[i] = float64(math.Float32frombits(binary.NativeEndian.Uint32(b[4*i:])))
		}
	}
	return out
}

// castRange is the range of an integer dtype.
func castRange(dt tensor.DType) (lo, hi float64) {
	switch dt {
	case tensor.Uint8:
		return 0, 255
	case tensor.Int16:
		return -32768, 32767
	case tensor.Uint16:
		return 0, 65535
	}
	return math.MinInt32, math.MaxInt32
}

// castFloatToInt is Cast's definition of float to integer: NaN to 0,
// else rounded to nearest even and saturated.
func castFloatToInt(x float64, dt tensor.DType) float64 {
	if math.IsNaN(x) {
		return 0
	}
	lo, hi := castRange(dt)
	return max(lo, min(hi, math.RoundToEven(x)))
}

func mustExec(t *testing.T, h *dynop.Host, name string, args schema.Args, in *tensor.Batch) *tensor.Tensor {
	t.Helper()
	outs, err := exec(h, name, args, in)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	c, err := outs[0].Sample(0).Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// specialsF32 are float32 values at the edges of the conversions: ties,
// the integer types' limits and beyond, infinities and NaN, float16's
// limits, subnormals and signed zeros.
var specialsF32 = []float32{
	0, float32(math.Copysign(0, -1)), 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 254.5, 255.5, 256, -1, -3,
	32766.5, 32767.5, -32768.5, -32769, 65534.5, 65535.5, 70000, -70000, 8388607.5, 16777217,
	2147483520, 2147483648, -2147483648, -2147483904, 3e9, -3e9, 1e30,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	65504, 65519.996, 65520, -65520, 1 + 1.0/2048, 1 + 3.0/2048, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-14, 0x1.ffcp-15,
	0x1p-149,
}

// TestCastKnownValues checks imgproc.Cast's definition on values at the
// edges: float32 to each integer type rounded to nearest even, saturated,
// NaN to 0; float32 to float16 rounded to nearest even with overflow to
// infinity; integers saturated; float16 widened exactly.
func TestCastKnownValues(t *testing.T) {
	h := openImgproc(t)
	in := batchOf(t, rawTensor(t, tensor.Float32, f32Bytes(specialsF32...), int64(len(specialsF32))))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32} {
		got := elements(dt, mustExec(t, h, imgproc.Cast, schema.Args{"dtype": dt.String()}, in).Span())
		for i, x := range specialsF32 {
			if want := castFloatToInt(float64(x), dt); got[i] != want {
				t.Errorf("float32 %g to %s: %g, want %g", x, dt, got[i], want)
			}
		}
	}
	// float32 to float16, as bits.
	wantF16 := map[float32]uint16{
		0: 0, 0.5: 0x3800, 1.5: 0x3E00, 255.5: 0x5BFC, 70000: 0x7C00, -70000: 0xFC00, 65504: 0x7BFF, 65519.996: 0x7BFF,
		65520: 0x7C00, -65520: 0xFC00, 1 + 1.0/2048: 0x3C00, 1 + 3.0/2048: 0x3C02, 0x1p-24: 0x0001, 0x1p-25: 0,
		0x1.8p-25: 0x0001, 0x1p-14: 0x0400, 0x1.ffcp-15: 0x0400, 0x1p-149: 0, 3e9: 0x7C00,
		float32(math.Inf(1)): 0x7C00, float32(math.Inf(-1)): 0xFC00,
	}
	got := elements(tensor.Float16, mustExec(t, h, imgproc.Cast, schema.Args{"dtype": "float16"}, in).Span())
	for i, x := range specialsF32 {
		switch w, ok := wantF16[x]; {
		case math.IsNaN(float64(x)):
			if got[i] != 0x7E00 {
				t.Errorf("float32 NaN to float16: %#04x, want 0x7e00", uint16(got[i]))
			}
		case math.Signbit(float64(x)) && x == 0:
			if got[i] != 0x8000 {
				t.Errorf("float32 -0 to float16: %#04x, want 0x8000", uint16(got[i]))
			}
		case ok && got[i] != float64(w):
			t.Errorf("float32 %g to float16: %#04x, want %#04x", x, uint16(got[i]), w)
		}
	}
	// Integers saturate; int32 to float32 rounds to nearest even.
	ints := []int32{0, -1, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536, 70000, math.MaxInt32, math.MinInt32, 16777217, 16777219}
	in = batchOf(t, rawTensor(t, tensor.Int32, i32Bytes(ints...), int64(len(ints))))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Float32} {
		got := elements(dt, mustExec(t, h, imgproc.Cast, schema.Args{"dtype": dt.String()}, in).Span())
		for i, x := range ints {
			want := float64(float32(x))
			if dt != tensor.Float32 {
				lo, hi := castRange(dt)
				want = max(lo, min(hi, float64(x)))
			}
			if got[i] != want {
				t.Errorf("int32 %d to %s: %g, want %g", x, dt, got[i], want)
			}
		}
	}
	// float16 to float32 (exact; NaN quieted) and to uint8.
	halves := []uint16{0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x3800, 0x3E00, 0x4100, 0x5BF8, 0x5C00, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0xBC00}
	wantF32 := []uint32{0, 0x80000000, 0x33800000, 0x387FC000, 0x38800000, 0x3F800000, 0x3F000000, 0x3FC00000, 0x40200000, 0x437F0000, 0x43800000, 0x477FE000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC02000, 0xFFC02000, 0xBF800000}
	wantU8 := []float64{0, 0, 0, 0, 0, 1, 0, 2, 2, 255, 255, 255, 255, 0, 0, 0, 0, 0}
	in = batchOf(t, rawTensor(t, tensor.Float16, u16Bytes(halves...), int64(len(halves))))
	f32 := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": "float32"}, in).Span()
	u8 := elements(tensor.Uint8, mustExec(t, h, imgproc.Cast, schema.Args{"dtype": "uint8"}, in).Span())
	for i, x := range halves {
		if g := binary.NativeEndian.Uint32(f32[4*i:]); g != wantF32[i] {
			t.Errorf("float16 %#04x to float32: %#08x, want %#08x", x, g, wantF32[i])
		}
		if u8[i] != wantU8[i] {
			t.Errorf("float16 %#04x to uint8: %g, want %g", x, u8[i], wantU8[i])
		}
	}
	// The same dtype copies the bits, signalling NaNs included.
	if got := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": "float16"}, in).Span(); !bytes.Equal(got, u16Bytes(halves...)) {
		t.Errorf("float16 to float16 changed the bits: %x", got)
	}
}

// randomCastData returns n random elements of dt, mixing edge values in.
func randomCastData(rng *rand.Rand, dt tensor.DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range n {
		switch dt {
		case tensor.Uint8:
			b[i] = byte(rng.IntN(256))
		case tensor.Int16, tensor.Uint16, tensor.Float16:
			binary.NativeEndian.PutUint16(b[2*i:], uint16(rng.Uint32()))
		case tensor.Int32:
			v := int32(rng.Uint32())
			if rng.IntN(2) == 0 {
				v = int32(rng.IntN(140000) - 70000)
			}
			binary.NativeEndian.PutUint32(b[4*i:], uint32(v))
		case tensor.Float32:
			var v float32
			switch rng.IntN(5) {
			case 0:
				v = specialsF32[rng.IntN(len(specialsF32))]
			case 1:
				v = float32(rng.IntN(600)-300) + 0.5 // ties
			case 2:
				v = (rng.Float32() - 0.5) * 600
			case 3:
				v = (rng.Float32() - 0.5) * 160000
			default:
				v = math.Float32frombits(rng.Uint32()) // any bits: NaNs, huge, subnormal
			}
			binary.NativeEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	}
	return b
}

// cvDepth names OpenCV's depth for a dtype.
var cvDepth = map[tensor.DType]string{tensor.Uint8: "cv2.CV_8U", tensor.Int16: "cv2.CV_16S", tensor.Uint16: "cv2.CV_16U", tensor.Int32: "cv2.CV_32S", tensor.Float32: "cv2.CV_32F"}

// TestCastMatchesOpenCV converts 20000 random values of each dtype (edge
// values mixed in: ties, limits, infinities, NaNs, any float bits) to
// every other dtype and compares with OpenCV: integer and float32 targets
// with cv2.add(x, 0, dtype=depth), which applies saturate_cast (cvRound,
// round half to even, then saturation); float16 targets with
// cv2.convertFp16 of OpenCV's float32, and with numpy's astype(float16);
// float16 sources are widened by cv2.convertFp16 first. The tolerance is
// zero: every value bit-identical (NaNs compared as NaN), except where the
// definitions differ on purpose, float-to-integer conversions of NaN and of
// values beyond int32's range (infinities included), where OpenCV's int32
// step gives INT_MIN before saturating and Cast gives 0 for NaN and the
// saturated value otherwise; those are checked against Cast's definition
// and counted. It skips without python3-opencv.
func TestCastMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(24, 2))
	const n = 20000
	for _, st := range castDTypes {
		x := rawTensor(t, st, randomCastData(rng, st, n), n)
		var targets []tensor.DType
		var code strings.Builder
		if st == tensor.Float16 {
			code.WriteString("xf = cv2.convertFp16(inputs[0].view(np.int16).reshape(1, -1))\n")
		} else {
			code.WriteString("xf = inputs[0].reshape(1, -1)\n")
		}
		code.WriteString("outputs = []\n")
		for _, dt := range castDTypes {
			if dt == st || dt == tensor.Float16 {
				continue
			}
			targets = append(targets, dt)
			if dt == tensor.Float32 && st == tensor.Float16 {
				code.WriteString("outputs.append(xf)\n")
				continue
			}
			fmt.Fprintf(&code, "outputs.append(cv2.add(xf, 0, dtype=%s))\n", cvDepth[dt])
		}
		if st != tensor.Float16 {
			targets = append(targets, tensor.Float16, tensor.Float16)
			if st == tensor.Float32 {
				code.WriteString("f = xf\n")
			} else {
				code.WriteString("f = cv2.add(xf, 0, dtype=cv2.CV_32F)\n")
			}
			code.WriteString("outputs.append(cv2.convertFp16(f).view(np.float16))\noutputs.append(f.astype(np.float16))\n")
		}
		want := cvtest.Run(t, code.String(), cvtest.FromTensor(t, x))
		src := elements(st, x.Span())
		if st == tensor.Float16 {
			for i := range src {
				src[i] = float64(halfToFloat(uint16(src[i])))
			}
		}
		in := batchOf(t, x)
		for k, dt := range targets {
			ref := "OpenCV"
			if k == len(targets)-1 && dt == tensor.Float16 {
				ref = "numpy"
			}
			got := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": dt.String()}, in).Span()
			g, w := elements(dt, got), elements(dt, want[k].Data)
			differ, special, maxDiff := 0, 0, 0.0
			for i := range g {
				isNaN := func(v float64) bool {
					if dt == tensor.Float16 {
						return uint16(v)&0x7C00 == 0x7C00 && uint16(v)&0x3FF != 0
					}
					return math.IsNaN(v)
				}
				if isNaN(g[i]) && isNaN(w[i]) {
					continue
				}
				intTarget := dt != tensor.Float16 && dt != tensor.Float32
				if intTarget && (st == tensor.Float32 || st == tensor.Float16) && (math.IsNaN(src[i]) || math.Abs(src[i]) >= 1<<31) {
					special++
					if want := castFloatToInt(src[i], dt); g[i] != want {
						t.Errorf("%s %g to %s: %g, want %g by Cast's definition", st, src[i], dt, g[i], want)
					}
					continue
				}
				if g[i] != w[i] || (dt == tensor.Float32 && math.Signbit(g[i]) != math.Signbit(w[i])) {
					differ++
					if d := math.Abs(g[i] - w[i]); !(d <= maxDiff) {
						maxDiff = d
					}
					if differ <= 3 {
						t.Errorf("%s %g to %s: %g, %s gives %g", st, src[i], dt, g[i], ref, w[i])
					}
				}
			}
			t.Logf("%s to %s: %d of %d values differ from %s (max difference %g); %d NaN or beyond int32 checked against Cast's definition instead", st, dt, differ, n, ref, maxDiff, special)
		}
	}
}

// halfToFloat widens float16 bits to float32 (test reference).
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e, m := uint32(h>>10)&0x1F, uint32(h&0x3FF)
	switch {
	case e == 0x1F:
		if m != 0 {
			return math.Float32frombits(sign | 0x7FC00000 | m<<13)
		}
		return math.Float32frombits(sign | 0x7F800000)
	case e == 0:
		v := float32(m) * 0x1p-24
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (e+112)<<23 | m<<13)
}

// TestCastLayouts: any rank, strided and permuted inputs and empty ones
// convert as their compact copies do.
func TestCastLayouts(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, st := range castDTypes {
		base := rawTensor(t, st, randomCastData(rng, st, 4*5*6*7), 4, 5, 6, 7)
		crop, _ := base.Crop([]int64{1, 0, 2, 1}, []int64{3, 5, 3, 5})
		perm, _ := base.Permute(3, 1, 0, 2)
		scalar, _ := base.Crop([]int64{1, 2, 3, 4}, []int64{1, 1, 1, 1})
		scalar, _ = scalar.Reshape()
		empty, _ := base.Crop([]int64{0, 0, 0, 0}, []int64{4, 0, 6, 7})
		row, _ := base.Reshape(4 * 5 * 6 * 7)
		for _, x := range []*tensor.Tensor{crop, perm, scalar, empty, row} {
			compact, err := x.Contiguous()
			if err != nil {
				t.Fatal(err)
			}
			for _, dt := range castDTypes {
				got := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": dt.String()}, batchOf(t, x))
				want := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": dt.String()}, batchOf(t, compact))
				if !slices.Equal(got.Shape(), x.Shape()) || got.DType() != dt || !bytes.Equal(got.Span(), want.Span()) {
					t.Errorf("%s %v (strides %v) to %s: %v %v differs from the compact copy's", st, x.Shape(), x.Strides(), dt, got.DType(), got.Shape())
				}
			}
		}
	}
}

// normRef is Normalize's definition in float32, each operation rounded
// (the explicit conversions keep Go from fusing them).
func normRef(x float32, mean, std []float64, scale, shift float64, c int) float32 {
	m := float32(mean[min(c, len(mean)-1)])
	inv := float32(scale / std[min(c, len(std)-1)])
	d := float32(x - m)
	p := float32(d * inv)
	return float32(p + float32(shift))
}

// imageValues returns an HWC image's elements as float32.
func imageValues(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	c, _ := x.Contiguous()
	if c.DType() == tensor.Uint8 {
		out := make([]float32, len(c.Span()))
		for i, v := range c.Span() {
			out[i] = float32(v)
		}
		return out
	}
	v, err := tensor.Values[float32](c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNormalizeKnownValues checks imgproc.Normalize against its
// definition on small images: per-channel and single mean and std, scale
// and shift, uint8 and float32, compact and strided.
func TestNormalizeKnownValues(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		ch          int64
		mean, std   []float64
		scale, shft float64
	}{
		{3, []float64{123.675, 116.28, 103.53}, []float64{58.395, 57.12, 57.375}, 1, 0},
		{3, []float64{0.5}, []float64{0.25}, 2, -1},
		{1, []float64{128}, []float64{64}, 1, 0.5},
		{4, []float64{1, 2, 3, 4}, []float64{0.1}, 64, 128},
		{5, []float64{10, 20, 30, 40, 50}, []float64{1, 2, 3, 4, 5}, 1, 0},
	} {
		for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
			in := imageBatch(t, rng, dt, 13, 37, c.ch)
			if dt == tensor.Float32 {
				in = randomImages(t, rng, [][]int64{{13, 37, c.ch}}, func() float32 { return rng.Float32()*300 - 20 })
			}
			args := schema.Args{"mean": c.mean, "std": c.std, "scale": c.scale, "shift": c.shft}
			for _, x := range []*tensor.Batch{in, cropEach(t, in, func(s []int64) ([]int64, []int64) {
				return []int64{1, 3, 0}, []int64{s[0] - 2, s[1] - 5, s[2]}
			})} {
				out := mustExec(t, h, imgproc.Normalize, args, x)
				if !slices.Equal(out.Shape(), x.Sample(0).Shape()) || out.DType() != tensor.Float32 {
					t.Fatalf("%v: %v %v", args, out.DType(), out.Shape())
				}
				got, _ := tensor.Values[float32](out)
				src := imageValues(t, x.Sample(0))
				for i, v := range src {
					if want := normRef(v, c.mean, c.std, c.scale, c.shft, i%int(c.ch)); math.Float32bits(got[i]) != math.Float32bits(want) {
						t.Fatalf("%s %v: element %d (%g): %g, want %g", dt, args, i, v, got[i], want)
					}
				}
				args16 := schema.Args{"mean": c.mean, "std": c.std, "scale": c.scale, "shift": c.shft, "dtype": "float16"}
				out16 := mustExec(t, h, imgproc.Normalize, args16, x)
				f32 := mustExec(t, h, imgproc.Cast, schema.Args{"dtype": "float16"}, batchOf(t, out))
				if out16.DType() != tensor.Float16 || !bytes.Equal(out16.Span(), f32.Span()) {
					t.Errorf("%s %v: float16 output is not the float32 output rounded to float16", dt, args)
				}
			}
		}
	}
}

// TestNormalizeMatchesOpenCV normalizes random uint8 and float32 images
// with 1, 3 and 4 channels and compares with OpenCV's per-channel
// arithmetic in float32: cv2.subtract of the mean, cv2.multiply by
// float32(scale/std), cv2.add of the shift (each a Scalar per channel),
// on the image converted to float32; float16 output against numpy's
// astype(float16) of OpenCV's float32. The tolerance is zero: every value
// bit-identical. It skips without python3-opencv.
func TestNormalizeMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []int64{1, 3, 4} {
		for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
			in := imageBatch(t, rng, dt, 29, 41, c)
			if dt == tensor.Float32 {
				in = randomImages(t, rng, [][]int64{{29, 41, c}}, func() float32 { return rng.Float32()*400 - 50 })
			}
			mean := []float64{123.675, 116.28, 103.53, 99.5}[:c]
			std := []float64{58.395, 57.12, 57.375, 33.3}[:c]
			scale, shift := 1.5, 0.25
			scalars := func(f func(i int) float64) string {
				s := []string{"0", "0", "0", "0"}
				for i := range c {
					s[i] = fmt.Sprintf("%.17g", f(int(i)))
				}
				return "(" + strings.Join(s, ", ") + ")"
			}
			code := fmt.Sprintf(`x = inputs[0].astype(np.float32)
if x.shape[2] == 1:
    x = x[:, :, 0]
d = cv2.subtract(x, %s)
p = cv2.multiply(d, %s)
r = cv2.add(p, %s).reshape(inputs[0].shape)
outputs = [r, r.astype(np.float16)]
`, scalars(func(i int) float64 { return float64(float32(mean[i])) }),
				scalars(func(i int) float64 { return float64(float32(scale / std[i])) }),
				scalars(func(int) float64 { return float64(float32(shift)) }))
			want := cvtest.Run(t, code, cvtest.FromTensor(t, in.Sample(0)))
			for k, odt := range []tensor.DType{tensor.Float32, tensor.Float16} {
				args := schema.Args{"mean": mean, "std": std, "scale": scale, "shift": shift, "dtype": odt.String()}
				got := mustExec(t, h, imgproc.Normalize, args, in)
				differ := 0
				g, w := got.Span(), want[k].Data
				for i := 0; i < len(g); i += odt.Size() {
					if !bytes.Equal(g[i:i+odt.Size()], w[i:i+odt.Size()]) {
						differ++
					}
				}
				t.Logf("%d channels %s to %s: %d of %d values differ from OpenCV's", c, dt, odt, differ, len(g)/odt.Size())
				if differ != 0 {
					t.Errorf("%d channels %s to %s: %d values differ from OpenCV's", c, dt, odt, differ)
				}
			}
		}
	}
}

// cmnRef is CropMirrorNormalize's definition: the window of src (HWC,
// h x w x c) at x0, y0, mirrored if asked, normalized, as CHW or HWC;
// pixels outside the image take fill (one value, or one per channel).
func cmnRef(src []float32, h, w, c int, x0, y0, cw, ch int, mirror, chw bool, mean, std []float64, scale, shift float64, fill []float64) []float32 {
	out := make([]float32, cw*ch*c)
	for y := range ch {
		for x := range cw {
			sx := x0 + x
			if mirror {
				sx = x0 + cw - 1 - x
			}
			for k := range c {
				var v float32
				if sy := y0 + y; sy < 0 || sy >= h || sx < 0 || sx >= w {
					v = float32(fill[min(k, len(fill)-1)])
				} else {
					v = normRef(src[(sy*w+sx)*c+k], mean, std, scale, shift, k)
				}
				if chw {
					out[(k*ch+y)*cw+x] = v
				} else {
					out[(y*cw+x)*c+k] = v
				}
			}
		}
	}
	return out
}

// TestCropMirrorNormalizeWindow checks the window (DALI's anchor: the
// float32 product (size - crop) * pos rounded half away from zero), the
// mirror, both layouts and windows larger than the image padded with
// fill values against the definition, on a compact image,
// on three channels of a four-channel one (pixels 4 apart) and on a
// planar one seen as HWC (channels H*W apart).
func TestCropMirrorNormalizeWindow(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(15, 16))
	const H, W, C = 21, 30, 3
	in := imageBatch(t, rng, tensor.Uint8, H, W, C)
	src := imageValues(t, in.Sample(0))
	rgba := rawTensor(t, tensor.Uint8, make([]byte, H*W*4), H, W, 4)
	planar := rawTensor(t, tensor.Uint8, make([]byte, C*H*W), C, H, W)
	for i, v := range src {
		p, k := i/C, i%C
		rgba.Span()[p*4+k] = byte(v)
		planar.Span()[k*H*W+p] = byte(v)
	}
	sub, _ := rgba.Crop([]int64{0, 0, 0}, []int64{H, W, C})
	hwc, _ := planar.Permute(1, 2, 0)
	inputs := []*tensor.Batch{in, batchOf(t, sub), batchOf(t, hwc)}
	mean, std := []float64{100, 110, 120}, []float64{50, 60, 70}
	for _, c := range []struct {
		cw, ch     int
		px, py     float64
		x0, y0     int
		mirror     bool
		layout     string
		layoutDesc string
	}{
		{0, 0, 0.5, 0.5, 0, 0, false, "", "CHW"}, // the whole image, CHW by default
		{10, 7, 0.5, 0.5, 10, 7, false, "CHW", "CHW"},
		{9, 6, 0.5, 0.5, 11, 8, false, "HWC", "HWC"}, // 21*0.5 = 10.5 -> 11, 15*0.5 = 7.5 -> 8
		{9, 6, 0, 1, 0, 15, true, "CHW", "CHW"},
		{9, 6, 1, 0, 21, 0, true, "HWC", "HWC"},
		{17, 20, 0.25, 0.5, 3, 1, true, "CHW", "CHW"}, // 13*0.25 = 3.25 -> 3, 1*0.5 = 0.5 -> 1
		{30, 21, 0.7, 0.3, 0, 0, true, "HWC", "HWC"},
		{1, 1, 0.5, 0.5, 15, 10, false, "CHW", "CHW"}, // 14.5 -> 15, 10
		// out_of_bounds_policy "pad": the anchor is negative, roundf of
		// -2.5 is -3
		{35, 25, 0.5, 0.5, -3, -2, false, "CHW", "CHW"},
		{40, 10, 0, 0.5, 0, 6, true, "HWC", "HWC"}, // 11*0.5 = 5.5 -> 6
		{33, 23, 1, 0, -3, 0, true, "CHW", "CHW"},
		{31, 30, 0.5, 1, -1, -9, false, "HWC", "HWC"}, // -0.5 -> -1
	} {
		args := schema.Args{"crop_w": c.cw, "crop_h": c.ch, "crop_pos_x": c.px, "crop_pos_y": c.py, "mirror": c.mirror, "mean": mean, "std": std}
		fill := []float64{0}
		if c.cw > W || c.ch > H {
			fill = []float64{1, -2, 3.5}
			args["out_of_bounds_policy"] = "pad"
			args["fill_values"] = fill
		}
		if c.layout != "" {
			args["output_layout"] = c.layout
		}
		cw, ch := c.cw, c.ch
		if cw == 0 {
			cw, ch = W, H
		}
		want := cmnRef(src, H, W, C, c.x0, c.y0, cw, ch, c.mirror, c.layoutDesc == "CHW", mean, std, 1, 0, fill)
		wantShape := []int64{C, int64(ch), int64(cw)}
		if c.layoutDesc == "HWC" {
			wantShape = []int64{int64(ch), int64(cw), C}
		}
		for _, in := range inputs {
			out := mustExec(t, h, imgproc.CropMirrorNormalize, args, in)
			if !slices.Equal(out.Shape(), wantShape) || out.DType() != tensor.Float32 {
				t.Errorf("%v: %v %v, want float32 %v", args, out.DType(), out.Shape(), wantShape)
				continue
			}
			got, _ := tensor.Values[float32](out)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("%v on strides %v: element %d is %g, want %g (window at %d, %d)", args, in.Sample(0).Strides(), i, got[i], want[i], c.x0, c.y0)
					break
				}
			}
		}
	}
}

// TestCropMirrorNormalizeMatchesOpenCV crops random uint8 and float32
// RGB images (mirrored with cv2.flip or not) and compares with
// cv2.dnn.blobFromImage(crop, scalefactor=scale/std, mean=mean,
// swapRB=False, crop=False), which gives NCHW float32 with one scale for
// all channels (so std is equal there); per-channel std against OpenCV's
// cv2.subtract and cv2.multiply in float32; HWC output against the blob
// transposed; float16 output against numpy's astype(float16) of OpenCV's
// float32. The tolerance is zero: every value bit-identical. It skips
// without python3-opencv.
func TestCropMirrorNormalizeMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		in := imageBatch(t, rng, dt, 48, 64, 3)
		if dt == tensor.Float32 {
			in = randomImages(t, rng, [][]int64{{48, 64, 3}}, func() float32 { return rng.Float32() * 255 })
		}
		const cw, ch, x0, y0 = 40, 30, 12, 9 // crop_pos 0.5: (64-40)/2, (48-30)/2
		for _, mirror := range []bool{false, true} {
			flip := "c"
			if mirror {
				flip = "cv2.flip(c, 1)"
			}
			// blobFromImage subtracts the mean from a float32 image in
			// place: it gets a copy.
			code := fmt.Sprintf(`c = np.ascontiguousarray(inputs[0][%d:%d, %d:%d, :])
c = %s
blob = cv2.dnn.blobFromImage(c.copy(), scalefactor=1.0/57.375, mean=(123.675, 116.28, 103.53), swapRB=False, crop=False)[0]
m = cv2.subtract(c.astype(np.float32), (float(np.float32(123.675)), float(np.float32(116.28)), float(np.float32(103.53)), 0.0))
per = cv2.multiply(m, (float(np.float32(1/58.395)), float(np.float32(1/57.12)), float(np.float32(1/57.375)), 0.0)).transpose(2, 0, 1)
outputs = [blob, blob.astype(np.float16), np.ascontiguousarray(blob.transpose(1, 2, 0)), per]
`, y0, y0+ch, x0, x0+cw, flip)
			want := cvtest.Run(t, code, cvtest.FromTensor(t, in.Sample(0)))
			base := schema.Args{"crop_w": cw, "crop_h": ch, "mirror": mirror, "mean": []float64{123.675, 116.28, 103.53}}
			for k, c := range []struct {
				name string
				args schema.Args
			}{
				{"equal std, CHW float32 (blobFromImage)", schema.Args{"std": []float64{57.375}}},
				{"equal std, CHW float16 (blobFromImage, astype)", schema.Args{"std": []float64{57.375}, "dtype": "float16"}},
				{"equal std, HWC float32 (blobFromImage transposed)", schema.Args{"std": []float64{57.375}, "output_layout": "HWC"}},
				{"per-channel std, CHW float32 (subtract, multiply)", schema.Args{"std": []float64{58.395, 57.12, 57.375}}},
			} {
				args := schema.Args{}
				for k, v := range base {
					args[k] = v
				}
				for k, v := range c.args {
					args[k] = v
				}
				got := mustExec(t, h, imgproc.CropMirrorNormalize, args, in)
				if !slices.Equal(got.Shape(), want[k].Shape) {
					t.Fatalf("%s: shape %v, OpenCV's %v", c.name, got.Shape(), want[k].Shape)
				}
				size := got.DType().Size()
				g, w := got.Span(), want[k].Data
				differ, maxULP := 0, 0
				for i := 0; i < len(g); i += size {
					if !bytes.Equal(g[i:i+size], w[i:i+size]) {
						differ++
						if size == 4 {
							d := int(int32(binary.NativeEndian.Uint32(g[i:])) - int32(binary.NativeEndian.Uint32(w[i:])))
							maxULP = max(maxULP, d, -d)
						}
					}
				}
				t.Logf("%s %s mirror=%v: %d of %d values differ from OpenCV's (max %d float32 ulps)", dt, c.name, mirror, differ, len(g)/size, maxULP)
				if differ != 0 {
					t.Errorf("%s %s mirror=%v: %d values differ from OpenCV's", dt, c.name, mirror, differ)
				}
			}
		}
	}
}

// TestConvertBadInputs: every input and argument the three operators
// refuse gives an error that names the operator and what is wrong.
func TestConvertBadInputs(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(19, 20))
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 10, 3)
	gray := imageBatch(t, rng, tensor.Uint8, 8, 10, 1)
	i16, _ := tensor.Random(rng, tensor.Int16, "HWC", [][]int64{{4, 4, 3}})
	f64, _ := tensor.Random(rng, tensor.Float64, "", [][]int64{{4, 4}})
	flat, _ := tensor.Random(rng, tensor.Uint8, "", [][]int64{{4, 12}})
	wide := imageBatch(t, rng, tensor.Uint8, 2, 2, 65)
	for _, c := range []struct {
		op   string
		args schema.Args
		in   *tensor.Batch
		want []string
	}{
		{imgproc.Cast, nil, rgb, []string{"dtype", "required"}},
		{imgproc.Cast, schema.Args{"dtype": "float64"}, rgb, []string{"dtype", "float64"}},
		{imgproc.Cast, schema.Args{"dtype": "int8"}, rgb, []string{"dtype", "int8"}},
		{imgproc.Cast, schema.Args{"dtype": "float32"}, f64, []string{"imgproc.Cast", "float64"}},
		{imgproc.Normalize, schema.Args{"std": []float64{1}}, rgb, []string{"mean", "required"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}}, rgb, []string{"std", "required"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{0}}, rgb, []string{"std", "minimum"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{-2}}, rgb, []string{"std", "minimum"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1e-300}}, rgb, []string{"imgproc.Normalize", "finite float32"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1, 2}, "std": []float64{1, 2, 3}}, rgb, []string{"imgproc.Normalize", "mean has 2 values and std 3"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{}, "std": []float64{1}}, rgb, []string{"imgproc.Normalize", "mean must have 1 to 64 values"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1, 2, 3}, "std": []float64{1}}, gray, []string{"imgproc.Normalize", "mean and std have 3 values, the image 1 channels"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1e39}, "std": []float64{1}}, rgb, []string{"imgproc.Normalize", "mean[0]", "finite float32"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1}, "scale": math.Inf(1)}, rgb, []string{"imgproc.Normalize", "finite"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1}, "dtype": "uint8"}, rgb, []string{"dtype", "uint8"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1}}, i16, []string{"imgproc.Normalize", "int16"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1}}, flat, []string{"imgproc.Normalize", "2 dimension"}},
		{imgproc.Normalize, schema.Args{"mean": []float64{1}, "std": []float64{1}}, wide, []string{"imgproc.Normalize", "channel count 65"}},
		{imgproc.CropMirrorNormalize, schema.Args{"crop_w": 11, "crop_h": 8}, rgb, []string{"imgproc.CropMirrorNormalize", "11x8", "larger than the 10x8 image"}},
		{imgproc.CropMirrorNormalize, schema.Args{"crop_w": 5, "crop_h": 9}, rgb, []string{"imgproc.CropMirrorNormalize", "5x9", "10x8"}},
		{imgproc.CropMirrorNormalize, schema.Args{"crop_w": -1}, rgb, []string{"crop_w", "minimum"}},
		{imgproc.CropMirrorNormalize, schema.Args{"crop_pos_x": 1.5}, rgb, []string{"crop_pos_x", "maximum"}},
		{imgproc.CropMirrorNormalize, schema.Args{"output_layout": "CWH"}, rgb, []string{"output_layout", "CWH"}},
		{imgproc.CropMirrorNormalize, schema.Args{"std": []float64{0}}, rgb, []string{"std", "minimum"}},
		{imgproc.CropMirrorNormalize, schema.Args{"mean": []float64{1, 2, 3, 4}}, rgb, []string{"imgproc.CropMirrorNormalize", "4 values, the image 3 channels"}},
		{imgproc.CropMirrorNormalize, nil, i16, []string{"imgproc.CropMirrorNormalize", "int16"}},
		{imgproc.CropMirrorNormalize, schema.Args{"out_of_bounds_policy": "trim_to_shape"}, rgb, []string{"out_of_bounds_policy", "trim_to_shape"}},
		{imgproc.CropMirrorNormalize, schema.Args{"out_of_bounds_policy": "pad", "fill_values": []float64{1, 2}}, rgb, []string{"imgproc.CropMirrorNormalize", "fill_values has 2 values, the image 3 channels"}},
		{imgproc.CropMirrorNormalize, schema.Args{"mean": []float64{1, 2, 3}, "fill_values": []float64{1, 2}}, rgb, []string{"imgproc.CropMirrorNormalize", "fill_values has 2 values and mean/std 3"}},
	} {
		_, err := exec(h, c.op, c.args, c.in)
		if err == nil {
			t.Errorf("%s %v on %v: no error", c.op, c.args, c.in.Sample(0))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: error %q does not say %q", c.op, c.args, err, w)
				break
			}
		}
	}
}

// TestConvertOutputTypes: the schemas say the outputs' dtypes (the dtype
// argument) and dimensions before anything runs.
func TestConvertOutputTypes(t *testing.T) {
	h := openImgproc(t)
	for _, c := range []struct {
		op   string
		args schema.Args
		in   schema.StaticType
		want string
	}{
		{imgproc.Cast, schema.Args{"dtype": "float16"}, schema.StaticType{DTypes: []tensor.DType{tensor.Uint8}, Layout: "HWC"}, "float16 HWC"},
		{imgproc.Cast, schema.Args{"dtype": "int32"}, schema.StaticType{DTypes: []tensor.DType{tensor.Float32}, NDim: 2}, "int32 2-D"},
		{imgproc.Normalize, schema.Args{"mean": []float64{0}, "std": []float64{1}}, schema.StaticType{DTypes: []tensor.DType{tensor.Uint8}, Layout: "HWC"}, "float32 HWC"},
		{imgproc.Normalize, schema.Args{"mean": []float64{0}, "std": []float64{1}, "dtype": "float16"}, schema.StaticType{DTypes: []tensor.DType{tensor.Uint8}, Layout: "HWC"}, "float16 HWC"},
		{imgproc.CropMirrorNormalize, nil, schema.StaticType{DTypes: []tensor.DType{tensor.Uint8}, Layout: "HWC"}, "float32 3-D"},
	} {
		e, err := h.Operators().Lookup(c.op)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := e.Schema.Check(c.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		outs, errs := e.Schema.Infer(vals, []schema.StaticType{c.in})
		if errs != nil || len(outs) != 1 || outs[0].String() != c.want {
			t.Errorf("%s %v of %v: %v, %v; want %s", c.op, c.args, c.in, outs, errs, c.want)
		}
	}
}

// convertCases are the variant proof's calls of Cast, Normalize and
// CropMirrorNormalize: every dtype pair on odd lengths (and strided), and
// images of odd sizes with 1, 3, 4 and 5 channels, both input dtypes,
// both output dtypes, mirrored and not, both layouts, compact and
// strided.
func convertCases(t *testing.T) []opCase {
	rng := rand.New(rand.NewPCG(21, 22))
	var cases []opCase
	for _, st := range castDTypes {
		for _, n := range []int64{1, 7, 31, 33, 515, 1031, 4099} {
			x := rawTensor(t, st, randomCastData(rng, st, int(n)), n)
			in := []*tensor.Batch{batchOf(t, x)}
			if n == 1031 {
				m, _ := x.Reshape(1031, 1)
				m, _ = m.Crop([]int64{3, 0}, []int64{1000, 1})
				in = []*tensor.Batch{batchOf(t, m)}
			}
			for _, dt := range castDTypes {
				cases = append(cases, opCase{fmt.Sprintf("cast %s[%d] to %s", st, n, dt), imgproc.Cast, schema.Args{"dtype": dt.String()}, in})
			}
		}
		x := rawTensor(t, st, randomCastData(rng, st, 9*70*3), 9, 70, 3)
		crop, _ := x.Crop([]int64{1, 3, 0}, []int64{7, 61, 2})
		for _, dt := range castDTypes {
			cases = append(cases, opCase{fmt.Sprintf("cast %s cropped to %s", st, dt), imgproc.Cast, schema.Args{"dtype": dt.String()}, []*tensor.Batch{batchOf(t, crop)}})
		}
	}
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, s := range [][2]int64{{1, 1}, {3, 17}, {7, 13}, {33, 65}, {5, 200}, {2, 700}} {
			for _, c := range []int64{1, 3, 4, 5} {
				in := imageBatch(t, rng, dt, s[0], s[1], c)
				if dt == tensor.Float32 {
					in = randomImages(t, rng, [][]int64{{s[0], s[1], c}}, func() float32 { return rng.Float32()*512 - 128 })
				}
				strided := cropEach(t, in, func(sh []int64) ([]int64, []int64) {
					return []int64{0, sh[1] / 3, 0}, []int64{sh[0], sh[1] - sh[1]/3, sh[2]}
				})
				mean := []float64{100, 90, 80, 70, 60}[:c]
				std := []float64{0.017}
				if c > 1 {
					std = []float64{58, 57, 56, 55, 54}[:c]
				}
				for _, odt := range []string{"float32", "float16"} {
					name := fmt.Sprintf("%s %dx%dx%d to %s", dt, s[0], s[1], c, odt)
					args := schema.Args{"mean": mean, "std": std, "scale": 1.25, "shift": 3, "dtype": odt}
					cases = append(cases, opCase{"normalize " + name, imgproc.Normalize, args, []*tensor.Batch{in}},
						opCase{"normalize strided " + name, imgproc.Normalize, args, []*tensor.Batch{strided}})
					for _, layout := range []string{"CHW", "HWC"} {
						for _, mirror := range []bool{false, true} {
							a := schema.Args{"mean": mean, "std": std, "dtype": odt, "output_layout": layout, "mirror": mirror,
								"crop_w": max(1, s[1]*2/3), "crop_h": max(1, s[0]-1), "crop_pos_x": 0.3}
							n := fmt.Sprintf("cmn %s %s mirror=%v", name, layout, mirror)
							cases = append(cases, opCase{n, imgproc.CropMirrorNormalize, a, []*tensor.Batch{in}},
								opCase{n + " strided", imgproc.CropMirrorNormalize, a, []*tensor.Batch{strided}})
							pad := schema.Args{"mean": mean, "std": std, "dtype": odt, "output_layout": layout, "mirror": mirror,
								"crop_w": s[1] + 37, "crop_h": s[0] + 2, "crop_pos_x": 0.3, "out_of_bounds_policy": "pad", "fill_values": []float64{-7.25}}
							cases = append(cases, opCase{n + " padded", imgproc.CropMirrorNormalize, pad, []*tensor.Batch{strided}})
						}
					}
				}
			}
		}
	}
	return cases
}

// TestConvertVariantsAgreeWithScalar: for Cast, Normalize and
// CropMirrorNormalize every variant this CPU runs, forced through
// DYNOP_CPU_FEATURES, computes the scalar reference's bytes exactly,
// floats and float16 included. Their avx2 variants need F16C as well.
func TestConvertVariantsAgreeWithScalar(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	lib := cbuild.Imgproc(t)
	cases := convertCases(t)
	want, ran := runCases(t, lib, "-sse2", cases)
	for i, v := range ran {
		if v != "scalar" {
			t.Fatalf("%s: with -sse2 ran %q, want scalar", cases[i].name, v)
		}
	}
	tested := map[string]bool{}
	for _, off := range []string{"", "-avx512f", "-f16c", "-avx2"} {
		cpu, err := dispatch.Host().TurnOff(off)
		if err != nil {
			t.Fatal(err)
		}
		best := "scalar"
		switch {
		case cpu.Available().Contains(dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW).Closure()):
			best = "avx512"
		case cpu.Available().Contains(dispatch.Of(dispatch.AVX2, dispatch.F16C).Closure()):
			best = "avx2"
		}
		run := cases
		if best == "scalar" || tested[best] {
			// That variant's bytes are checked already: check the choice
			// on a few cases.
			run = cases[:min(len(cases), 12)]
		}
		got, ran := runCases(t, lib, off, run)
		for i, c := range run {
			if ran[i] != best {
				t.Errorf("DYNOP_CPU_FEATURES=%q: %s ran %q, want %q", off, c.name, ran[i], best)
			}
			for j := range want[i][0].Len() {
				g, _ := got[i][0].Sample(j).Contiguous()
				w, _ := want[i][0].Sample(j).Contiguous()
				if !bytes.Equal(g.Span(), w.Span()) {
					t.Errorf("DYNOP_CPU_FEATURES=%q: %s: variant %s differs from scalar", off, c.name, ran[i])
				}
			}
		}
		tested[best] = true
	}
	t.Logf("variants tested against scalar on this CPU: %v (%d cases each)", tested, len(cases))
	if !tested["avx2"] && dispatch.Host().Available().Contains(dispatch.Of(dispatch.AVX2, dispatch.F16C)) {
		t.Error("the AVX2 variants were never tested on a CPU that has AVX2 and F16C")
	}
}

// BenchmarkConvertVariants runs Cast, Normalize and CropMirrorNormalize
// on a 1920×1080 RGB image in each variant (op.WithVariant), reporting
// milliseconds per image; variants this CPU lacks are skipped.
func BenchmarkConvertVariants(b *testing.B) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, Paths: []string{cbuild.Imgproc(b)}, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	rng := rand.New(rand.NewPCG(1, 2))
	u8, _ := tensor.Random(rng, tensor.Uint8, "HWC", [][]int64{{1080, 1920, 3}})
	f32, _ := tensor.Random(rng, tensor.Float32, "HWC", [][]int64{{1080, 1920, 3}})
	imagenet := schema.Args{"mean": []float64{123.675, 116.28, 103.53}, "std": []float64{58.395, 57.12, 57.375}}
	with := func(extra schema.Args) schema.Args {
		a := schema.Args{}
		for k, v := range imagenet {
			a[k] = v
		}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	for _, c := range []struct {
		name, op string
		args     schema.Args
		in       *tensor.Batch
	}{
		{"Cast/uint8-float32", imgproc.Cast, schema.Args{"dtype": "float32"}, u8},
		{"Cast/float32-float16", imgproc.Cast, schema.Args{"dtype": "float16"}, f32},
		{"Cast/float32-uint8", imgproc.Cast, schema.Args{"dtype": "uint8"}, f32},
		{"Normalize/uint8-float32", imgproc.Normalize, with(nil), u8},
		{"Normalize/uint8-float16", imgproc.Normalize, with(schema.Args{"dtype": "float16"}), u8},
		{"CropMirrorNormalize/uint8-CHW-float32-1024x768-mirror", imgproc.CropMirrorNormalize, with(schema.Args{"crop_w": 1024, "crop_h": 768, "mirror": true}), u8},
		{"CropMirrorNormalize/uint8-CHW-float32-1024x768", imgproc.CropMirrorNormalize, with(schema.Args{"crop_w": 1024, "crop_h": 768}), u8},
		{"CropMirrorNormalize/uint8-HWC-float32-1024x768-mirror", imgproc.CropMirrorNormalize, with(schema.Args{"crop_w": 1024, "crop_h": 768, "mirror": true, "output_layout": "HWC"}), u8},
		{"CropMirrorNormalize/uint8-HWC-float16-1024x768", imgproc.CropMirrorNormalize, with(schema.Args{"crop_w": 1024, "crop_h": 768, "output_layout": "HWC", "dtype": "float16"}), u8},
	} {
		for _, v := range []string{"scalar", "avx2", "avx512"} {
			b.Run(c.name+"/"+v, func(b *testing.B) {
				in, err := h.NewOperator(ctx, c.op, c.args, op.WithVariant(v))
				if err != nil {
					b.Skip(err)
				}
				defer in.Close()
				descs, err := in.Setup([]*tensor.Batch{c.in})
				if err != nil {
					b.Fatal(err)
				}
				out, err := descs[0].Alloc()
				if err != nil {
					b.Fatal(err)
				}
				if err := in.Run(ctx, []*tensor.Batch{out}, []*tensor.Batch{c.in}); err != nil { // warm: the output's pages
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := in.Run(ctx, []*tensor.Batch{out}, []*tensor.Batch{c.in}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/image")
			})
		}
	}
}
