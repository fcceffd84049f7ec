package imgproc_test

import (
	"bytes"
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
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// hwc returns data as one HWC tensor of shape h×w×c.
func hwc[T uint8 | float32](t *testing.T, data []T, h, w, c int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(data, h, w, c)
	if err != nil {
		t.Fatal(err)
	}
	if x, err = x.WithLayout("HWC"); err != nil {
		t.Fatal(err)
	}
	return x
}

// apply runs operator name with args on the one image x.
func apply(t *testing.T, h *dynop.Host, name string, args schema.Args, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	in, err := tensor.NewBatch(x)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec(h, name, args, in)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return outs[0].Sample(0)
}

// allColours is a 4096×4096 RGB image holding each of the 2^24 colours
// once: pixel i is (i>>16, i>>8, i) & 255.
func allColours(t *testing.T) *tensor.Tensor {
	t.Helper()
	data := make([]uint8, 3<<24)
	for i := range 1 << 24 {
		data[3*i], data[3*i+1], data[3*i+2] = uint8(i>>16), uint8(i>>8), uint8(i)
	}
	return hwc(t, data, 4096, 4096, 3)
}

// diffU8 counts the bytes in which got and want differ and the largest
// difference.
func diffU8(got, want []byte) (n, most int) {
	for i := range got {
		d := int(got[i]) - int(want[i])
		if d != 0 {
			n++
			most = max(most, d, -d)
		}
	}
	return n, most
}

// f32s reads little-endian float32s.
func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// diffF32 is the largest absolute difference between got and want.
func diffF32(got, want []byte) float64 {
	g, w := f32s(got), f32s(want)
	var most float64
	for i := range g {
		most = max(most, math.Abs(float64(g[i])-float64(w[i])))
	}
	return most
}

// cvFMA says whether cv2.cvtColor's HSV-to-RGB vector loop rounds 1 - s·f
// once: Debian's OpenCV 4.6 runs its AVX2 (or AVX-512) build there, whose
// compiler fuses that multiply and subtraction. imgproc.ColorConvert
// rounds it once on every CPU; on a CPU without those features OpenCV's
// SSE build rounds twice, and the two may differ by 1 (and by 1 ulp on
// float32).
func cvFMA() bool {
	a := dispatch.Host().Available()
	return a.Has(dispatch.AVX2) && a.Has(dispatch.FMA)
}

// TestColorConvertMatchesOpenCV: on uint8, imgproc.ColorConvert is
// OpenCV's cv2.cvtColor bit for bit, over every one of the 2^24 colours:
// to BGR (COLOR_RGB2BGR), to gray from RGB and BGR (COLOR_RGB2GRAY,
// COLOR_BGR2GRAY: 15-bit BT.601), to YCbCr from RGB and BGR
// (COLOR_RGB2YCrCb, COLOR_BGR2YCrCb, with Cb and Cr swapped back), to HSV
// from RGB and BGR (COLOR_RGB2HSV, COLOR_BGR2HSV: H in [0, 180)); from
// YCbCr (every Y, Cb, Cr) to RGB and BGR (COLOR_YCrCb2RGB, _2BGR); from HSV
// (every H, S, V, H up to 255) to RGB and BGR (COLOR_HSV2RGB, _2BGR), where
// OpenCV's vector loop truncates, and rounds 1 - s·f once only in its AVX2
// build: bit-identical on a CPU with AVX2 and FMA, else within 1 (see
// cvFMA); and from gray (COLOR_GRAY2RGB). 4-channel images (COLOR_RGBA2BGRA,
// COLOR_RGBA2GRAY, COLOR_RGB2YCrCb and COLOR_RGB2HSV of the first three
// channels) keep their alpha. It needs python3 with cv2 (python3-opencv)
// and skips without.
func TestColorConvertMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	all := allColours(t)
	in := cvtest.FromTensor(t, all)
	cases := []struct {
		from, to, code string
		tol            int // 0: bit-identical
	}{
		{"rgb", "bgr", "o = cv2.cvtColor(x, cv2.COLOR_RGB2BGR)", 0},
		{"bgr", "rgb", "o = cv2.cvtColor(x, cv2.COLOR_BGR2RGB)", 0},
		{"rgb", "gray", "o = cv2.cvtColor(x, cv2.COLOR_RGB2GRAY)[:, :, None]", 0},
		{"bgr", "gray", "o = cv2.cvtColor(x, cv2.COLOR_BGR2GRAY)[:, :, None]", 0},
		{"rgb", "ycbcr", "o = cv2.cvtColor(x, cv2.COLOR_RGB2YCrCb)[:, :, [0, 2, 1]]", 0},
		{"bgr", "ycbcr", "o = cv2.cvtColor(x, cv2.COLOR_BGR2YCrCb)[:, :, [0, 2, 1]]", 0},
		{"ycbcr", "rgb", "o = cv2.cvtColor(np.ascontiguousarray(x[:, :, [0, 2, 1]]), cv2.COLOR_YCrCb2RGB)", 0},
		{"ycbcr", "bgr", "o = cv2.cvtColor(np.ascontiguousarray(x[:, :, [0, 2, 1]]), cv2.COLOR_YCrCb2BGR)", 0},
		{"rgb", "hsv", "o = cv2.cvtColor(x, cv2.COLOR_RGB2HSV)", 0},
		{"bgr", "hsv", "o = cv2.cvtColor(x, cv2.COLOR_BGR2HSV)", 0},
		{"hsv", "rgb", "o = cv2.cvtColor(x, cv2.COLOR_HSV2RGB)", 1},
		{"hsv", "bgr", "o = cv2.cvtColor(x, cv2.COLOR_HSV2BGR)", 1},
	}
	// One Python process converts the 2^24 colours every way.
	code := "x = inputs[0]\noutputs = []\n"
	for _, c := range cases {
		code += c.code + "\noutputs.append(o)\n"
	}
	wants := cvtest.Run(t, code, in)
	for k, c := range cases {
		t.Run(c.from+" to "+c.to, func(t *testing.T) {
			tol := c.tol
			if tol == 1 && cvFMA() {
				tol = 0
			}
			want := wants[k]
			got := apply(t, h, imgproc.ColorConvert, schema.Args{"from": c.from, "to": c.to}, all)
			if !slices.Equal(got.Shape(), want.Shape) {
				t.Fatalf("shape %v, OpenCV's %v", got.Shape(), want.Shape)
			}
			n, most := diffU8(got.Span(), want.Data)
			if most > tol {
				t.Errorf("%d of %d values differ from OpenCV's, by up to %d (tolerance %d)", n, len(want.Data), most, tol)
			} else if n > 0 {
				t.Logf("%d of %d values differ from OpenCV's by 1 (this CPU has no AVX2 with FMA)", n, len(want.Data))
			}
		})
	}
	t.Run("gray to rgb", func(t *testing.T) {
		g := hwc(t, slices.Clone(all.Span()[:4096*256]), 1024, 1024, 1)
		want := cvtest.Run(t, "outputs = [cv2.cvtColor(inputs[0], cv2.COLOR_GRAY2RGB)]", cvtest.FromTensor(t, g))[0].Data
		if got := apply(t, h, imgproc.ColorConvert, schema.Args{"from": "gray", "to": "rgb"}, g).Span(); !bytes.Equal(got, want) {
			t.Error("differs from OpenCV's")
		}
	})
	t.Run("alpha", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		data := make([]uint8, 37*64*4)
		for i := range data {
			data[i] = uint8(rng.IntN(256))
		}
		x := hwc(t, data, 37, 64, 4)
		outs := cvtest.Run(t, `x = inputs[0]
outputs = [cv2.cvtColor(x, cv2.COLOR_RGBA2BGRA), cv2.cvtColor(x, cv2.COLOR_RGBA2GRAY)[:, :, None],
           np.dstack([cv2.cvtColor(x[:, :, :3], cv2.COLOR_RGB2YCrCb)[:, :, [0, 2, 1]], x[:, :, 3]]),
           np.dstack([cv2.cvtColor(x[:, :, :3], cv2.COLOR_RGB2HSV), x[:, :, 3]])]`, cvtest.FromTensor(t, x))
		for i, to := range []string{"bgr", "gray", "ycbcr", "hsv"} {
			got := apply(t, h, imgproc.ColorConvert, schema.Args{"to": to}, x)
			if !slices.Equal(got.Shape(), outs[i].Shape) || !bytes.Equal(got.Span(), outs[i].Data) {
				t.Errorf("rgba to %s: %v, differs from OpenCV's %v", to, got.Shape(), outs[i].Shape)
			}
		}
	})
}

// TestColorConvertFloatMatchesOpenCV compares imgproc.ColorConvert on
// float32 images with cv2.cvtColor on the same values, within a
// tolerance in absolute terms: OpenCV's vector loops fuse multiply-adds
// where imgproc.ColorConvert rounds each product (its variants agree bit
// for bit), so gray and YCbCr differ in the last bits. RGB values are
// uniform in [0, 1] (and a row of greys); HSV has H uniform in [0, 360)
// degrees and S, V in [0, 1]. Swaps and gray to RGB are exact; gray and
// YCbCr both ways within 5e-7 (a few ulps); HSV both ways, whose fused
// multiply-adds imgproc.ColorConvert rounds once as OpenCV's AVX2 build
// does, exact on a CPU with AVX2 and FMA (see cvFMA), else within 4e-5
// (H in degrees) and 1e-6. It needs python3 with cv2 and skips without.
func TestColorConvertFloatMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const H, W = 48, 64
	rgb := make([]float32, H*W*3)
	for i := range rgb {
		rgb[i] = rng.Float32()
	}
	for i := range W { // greys: no hue, no saturation
		v := float32(i) / W
		rgb[3*i], rgb[3*i+1], rgb[3*i+2] = v, v, v
	}
	hsv := make([]float32, H*W*3)
	for i := 0; i < len(hsv); i += 3 {
		hsv[i], hsv[i+1], hsv[i+2] = rng.Float32()*360, rng.Float32(), rng.Float32()
	}
	x, y := hwc(t, rgb, H, W, 3), hwc(t, hsv, H, W, 3)
	gray := hwc(t, slices.Clone(rgb[:H*W]), H, W, 1)
	cases := []struct {
		from, to string
		in       *tensor.Tensor
		expr     string  // of x (RGB), y (HSV) and g (gray)
		tol      float64 // negative: -tolerance, 0 with cvFMA
	}{
		{"rgb", "bgr", x, "cv2.cvtColor(x, cv2.COLOR_RGB2BGR)", 0},
		{"gray", "rgb", gray, "cv2.cvtColor(g, cv2.COLOR_GRAY2RGB)", 0},
		{"rgb", "gray", x, "cv2.cvtColor(x, cv2.COLOR_RGB2GRAY)[:, :, None]", 5e-7},
		{"bgr", "gray", x, "cv2.cvtColor(x, cv2.COLOR_BGR2GRAY)[:, :, None]", 5e-7},
		{"rgb", "ycbcr", x, "cv2.cvtColor(x, cv2.COLOR_RGB2YCrCb)[:, :, [0, 2, 1]]", 5e-7},
		{"ycbcr", "rgb", x, "cv2.cvtColor(np.ascontiguousarray(x[:, :, [0, 2, 1]]), cv2.COLOR_YCrCb2RGB)", 5e-7},
		{"bgr", "ycbcr", x, "cv2.cvtColor(x, cv2.COLOR_BGR2YCrCb)[:, :, [0, 2, 1]]", 5e-7},
		{"rgb", "hsv", x, "cv2.cvtColor(x, cv2.COLOR_RGB2HSV)", -4e-5},
		{"bgr", "hsv", x, "cv2.cvtColor(x, cv2.COLOR_BGR2HSV)", -4e-5},
		{"hsv", "rgb", y, "cv2.cvtColor(y, cv2.COLOR_HSV2RGB)", -1e-6},
		{"hsv", "bgr", y, "cv2.cvtColor(y, cv2.COLOR_HSV2BGR)", -1e-6},
	}
	var exprs []string
	for _, c := range cases {
		exprs = append(exprs, c.expr)
	}
	want := cvtest.Run(t, "x, y, g = inputs\noutputs = ["+strings.Join(exprs, ", ")+"]",
		cvtest.FromTensor(t, x), cvtest.FromTensor(t, y), cvtest.FromTensor(t, gray))
	for i, c := range cases {
		t.Run(c.from+" to "+c.to, func(t *testing.T) {
			got := apply(t, h, imgproc.ColorConvert, schema.Args{"from": c.from, "to": c.to}, c.in)
			if !slices.Equal(got.Shape(), want[i].Shape) {
				t.Fatalf("shape %v, OpenCV's %v", got.Shape(), want[i].Shape)
			}
			tol := c.tol
			if tol < 0 && cvFMA() {
				tol = 0
			}
			tol = math.Abs(tol)
			if d := diffF32(got.Span(), want[i].Data); d > tol {
				t.Errorf("differs from OpenCV's by up to %g (tolerance %g)", d, tol)
			} else {
				t.Logf("largest difference from OpenCV's: %g", d)
			}
		})
	}
}

// twistMatrix is the test's own ColorTwist matrix (3×4, row-major), in
// NumPy from DALI's definition, for cv2.transform.
const twistMatrix = `
def twist(b, c, s, hue, half):
    rgb2yiq = np.array([[.299, .587, .114], [.596, -.274, -.321], [.211, -.523, .311]])
    yiq2rgb = np.array([[1, .956, .621], [1, -.272, -.647], [1, -1.107, 1.705]])
    r = np.deg2rad(hue)
    hs = np.array([[1, 0, 0], [0, np.cos(r), np.sin(r)], [0, -np.sin(r), np.cos(r)]]) @ np.diag([1, s, s])
    m = b * c * (yiq2rgb @ hs @ rgb2yiq)
    return np.hstack([m, np.full((3, 1), (half - half * c) * b)])
`

// TestColorTwistMatchesOpenCV: imgproc.ColorTwist is cv2.transform with
// the 3×4 matrix of DALI's definition (computed here in NumPy, float64:
// b·c·Yiq2Rgb·Hue(h)·Sat(s)·Rgb2Yiq and offset (half - half·c)·b), on a
// random 64×96 RGB image for several settings. uint8: within 1 of
// cv2.transform of the uint8 image, whose 10-bit fixed-point coefficients
// round differently, and at most 1 (and on at most 0.1% of values) from the
// float64 product rounded to nearest; float32 (values in [0, 1]) within
// 1e-6 of cv2.transform of the float32 image. It needs python3 with cv2
// and skips without.
func TestColorTwistMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const H, W = 64, 96
	u8 := make([]uint8, H*W*3)
	f := make([]float32, H*W*3)
	for i := range u8 {
		u8[i] = uint8(rng.IntN(256))
		f[i] = rng.Float32()
	}
	x8, xf := hwc(t, u8, H, W, 3), hwc(t, f, H, W, 3)
	settings := []schema.Args{
		{},
		{"brightness": 1.3},
		{"contrast": 0.6},
		{"contrast": 1.7, "brightness": 0.8},
		{"saturation": 0.0},
		{"saturation": 2.5},
		{"hue": 90.0},
		{"hue": -33.0, "saturation": 1.4},
		{"hue": 200.0, "saturation": 0.7, "contrast": 1.2, "brightness": 1.1},
	}
	num := func(a schema.Args, k string, def float64) float64 {
		if v, ok := a[k]; ok {
			return v.(float64)
		}
		return def
	}
	code := twistMatrix + "x, xf = inputs\noutputs = []\n"
	for _, a := range settings {
		bcsh := fmt.Sprintf("%g, %g, %g, %g", num(a, "brightness", 1), num(a, "contrast", 1), num(a, "saturation", 1), num(a, "hue", 0))
		code += fmt.Sprintf(`m8 = twist(%s, 128.0)
mf = twist(%s, 0.5)
exact = np.clip(np.rint(x.astype(np.float64) @ m8[:, :3].T + m8[:, 3]), 0, 255).astype(np.uint8)
outputs += [cv2.transform(x, m8), exact, cv2.transform(xf, mf)]
`, bcsh, bcsh)
	}
	outs := cvtest.Run(t, code, cvtest.FromTensor(t, x8), cvtest.FromTensor(t, xf))
	for i, a := range settings {
		t.Run(fmt.Sprint(a), func(t *testing.T) {
			cv8, exact, cvf := outs[3*i], outs[3*i+1], outs[3*i+2]
			got8 := apply(t, h, imgproc.ColorTwist, a, x8).Span()
			if n, most := diffU8(got8, cv8.Data); most > 1 {
				t.Errorf("uint8: %d values differ from cv2.transform's by up to %d", n, most)
			} else {
				t.Logf("uint8: %d of %d values differ from cv2.transform's by 1", n, len(got8))
			}
			if n, most := diffU8(got8, exact.Data); most > 1 || n > len(got8)/1000 {
				t.Errorf("uint8: %d values differ from the exact product rounded, by up to %d", n, most)
			} else {
				t.Logf("uint8: %d of %d values differ from the exact product rounded by 1", n, len(got8))
			}
			gotf := apply(t, h, imgproc.ColorTwist, a, xf).Span()
			if d := diffF32(gotf, cvf.Data); d > 1e-6 {
				t.Errorf("float32: differs from cv2.transform's by up to %g", d)
			} else {
				t.Logf("float32: largest difference from cv2.transform's: %g", d)
			}
		})
	}
}

// TestColorVariantsAgree: every variant of ColorConvert (every pair it
// converts) and ColorTwist computes the scalar reference's bytes, floats
// included, on random images of odd sizes (not multiples of any vector
// width) with 1, 3 or 4 channels as each conversion takes and on images of
// a few values (ties between channels, out-of-range floats and hues),
// compact and cropped (rows farther apart than their width, which the row
// kernels still run).
func TestColorVariantsAgree(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	lib := cbuild.Imgproc(t)
	rng := rand.New(rand.NewPCG(21, 22))
	pairs := [][2]string{{"rgb", "rgb"}, {"rgb", "bgr"}, {"bgr", "rgb"}, {"rgb", "gray"}, {"bgr", "gray"}, {"gray", "rgb"}, {"gray", "bgr"},
		{"rgb", "ycbcr"}, {"bgr", "ycbcr"}, {"ycbcr", "rgb"}, {"ycbcr", "bgr"}, {"rgb", "hsv"}, {"bgr", "hsv"}, {"hsv", "rgb"}, {"hsv", "bgr"}}
	twists := []schema.Args{{"hue": 30.0, "saturation": 1.5, "contrast": 1.2, "brightness": 0.9}, {"contrast": -1.0, "saturation": 0.0}}
	var cases []opCase
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, s := range [][2]int64{{1, 1}, {1, 17}, {17, 1}, {7, 13}, {33, 65}, {5, 200}, {3, 1000}} {
			for _, c := range []int64{1, 3, 4} {
				in := []*tensor.Batch{imageBatch(t, rng, dt, s[0], s[1], c)}
				name := fmt.Sprintf("%s %dx%dx%d", dt, s[0], s[1], c)
				for _, p := range pairs {
					if (p[0] == "gray") == (c == 1) {
						args := schema.Args{"from": p[0], "to": p[1]}
						cases = append(cases, opCase{fmt.Sprintf("%v %s", args, name), imgproc.ColorConvert, args, in})
					}
				}
				if c > 1 {
					for _, a := range twists {
						cases = append(cases, opCase{fmt.Sprintf("twist %v %s", a, name), imgproc.ColorTwist, a, in})
					}
				}
			}
		}
	}
	// Few distinct values: ties between channels (greys, two equal
	// maxima), zeros, and for float32 negative values, values above 1 and
	// hues outside [0, 360).
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, c := range []int64{1, 3, 4} {
			var x *tensor.Tensor
			if dt == tensor.Uint8 {
				vals := []uint8{0, 1, 127, 128, 254, 255}
				data := make([]uint8, 7*67*c)
				for i := range data {
					data[i] = vals[rng.IntN(len(vals))]
				}
				x = hwc(t, data, 7, 67, c)
			} else {
				vals := []float32{0, 0.25, 0.5, 1, -0.5, 2, 60, 359.99, 360, 725.5, -30}
				data := make([]float32, 7*67*c)
				for i := range data {
					data[i] = vals[rng.IntN(len(vals))]
				}
				x = hwc(t, data, 7, 67, c)
			}
			in, err := tensor.NewBatch(x)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				if (p[0] == "gray") == (c == 1) {
					args := schema.Args{"from": p[0], "to": p[1]}
					cases = append(cases, opCase{fmt.Sprintf("%v %s ties x%d", args, dt, c), imgproc.ColorConvert, args, []*tensor.Batch{in}})
				}
			}
		}
	}
	// Cropped: rows that are not contiguous.
	n := len(cases)
	for _, c := range cases[:n] {
		if s := c.inputs[0].Sample(0).Shape(); s[1] > 2 {
			cropped := cropEach(t, c.inputs[0], func(s []int64) (start, size []int64) {
				return []int64{0, 1, 0}, []int64{s[0], s[1] / 2, s[2]}
			})
			cases = append(cases, opCase{c.name + " cropped", c.op, c.args, []*tensor.Batch{cropped}})
		}
	}
	want, ran := runCases(t, lib, "-sse2", cases)
	if ran[0] != "scalar" {
		t.Fatalf("with -sse2 ran %q, want scalar", ran[0])
	}
	// Without avx2 the scalar variant runs: the reference's own bytes.
	for _, off := range []string{"", "-avx512f"} {
		got, ran := runCases(t, lib, off, cases)
		for i, c := range cases {
			for j := range want[i][0].Len() {
				if !bytes.Equal(got[i][0].Sample(j).Span(), want[i][0].Sample(j).Span()) {
					t.Errorf("DYNOP_CPU_FEATURES=%q: %s: variant %s differs from scalar", off, c.name, ran[i])
				}
			}
		}
		t.Logf("DYNOP_CPU_FEATURES=%q ran %s on %d cases", off, ran[0], len(cases))
	}
}

// TestColorConvertSemantics checks values worked out by hand: alpha kept
// or dropped, gray replicated, pure colours in HSV and YCbCr, and the
// round trip through YCbCr and HSV on float32.
func TestColorConvertSemantics(t *testing.T) {
	h := openImgproc(t)
	px := hwc(t, []uint8{255, 0, 0, 7, 0, 255, 0, 8, 0, 0, 255, 9, 10, 20, 30, 40}, 1, 4, 4)
	for _, c := range []struct {
		to   string
		want []uint8
	}{
		{"bgr", []uint8{0, 0, 255, 7, 0, 255, 0, 8, 255, 0, 0, 9, 30, 20, 10, 40}},
		{"gray", []uint8{76, 150, 29, 18}},
		// Y, Cb, Cr of red, green, blue; alpha copied.
		{"ycbcr", []uint8{76, 85, 255, 7, 150, 43, 21, 8, 29, 255, 107, 9, 18, 135, 122, 40}},
		{"hsv", []uint8{0, 255, 255, 7, 60, 255, 255, 8, 120, 255, 255, 9, 105, 170, 30, 40}},
	} {
		got := apply(t, h, imgproc.ColorConvert, schema.Args{"to": c.to}, px)
		if !bytes.Equal(got.Span(), c.want) {
			t.Errorf("rgba to %s: %v, want %v", c.to, got.Span(), c.want)
		}
	}
	g := apply(t, h, imgproc.ColorConvert, schema.Args{"from": "gray", "to": "bgr"}, hwc(t, []uint8{3, 250}, 1, 2, 1))
	if want := []uint8{3, 3, 3, 250, 250, 250}; !bytes.Equal(g.Span(), want) {
		t.Errorf("gray to bgr: %v, want %v", g.Span(), want)
	}
	// float32: round trips within float rounding.
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float32, 16*16*3)
	for i := range data {
		data[i] = rng.Float32()
	}
	x := hwc(t, data, 16, 16, 3)
	for _, via := range []string{"ycbcr", "hsv"} {
		there := apply(t, h, imgproc.ColorConvert, schema.Args{"to": via}, x)
		back := apply(t, h, imgproc.ColorConvert, schema.Args{"from": via, "to": "rgb"}, there)
		if d := diffF32(back.Span(), x.Span()); d > 2e-3 {
			t.Errorf("rgb to %s and back: off by %g", via, d)
		}
	}
}

// TestColorTwistSemantics: the default twist is the identity up to DALI's
// rounded YIQ constants (within 1 on uint8); brightness 0 is black;
// saturation 0 gives grey pixels (R = G = B within 1); a hue of 360
// degrees is a hue of 0.
func TestColorTwistSemantics(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(3, 3))
	data := make([]uint8, 20*30*3)
	for i := range data {
		data[i] = uint8(rng.IntN(256))
	}
	x := hwc(t, data, 20, 30, 3)
	if n, most := diffU8(apply(t, h, imgproc.ColorTwist, nil, x).Span(), data); most > 1 {
		t.Errorf("default twist: %d values off by up to %d", n, most)
	}
	if got := apply(t, h, imgproc.ColorTwist, schema.Args{"brightness": 0.0}, x).Span(); slices.ContainsFunc(got, func(v uint8) bool { return v != 0 }) {
		t.Error("brightness 0 is not black")
	}
	grey := apply(t, h, imgproc.ColorTwist, schema.Args{"saturation": 0.0}, x).Span()
	for i := 0; i < len(grey); i += 3 {
		if _, most := diffU8(grey[i:i+2], grey[i+1:i+3]); most > 1 {
			t.Fatalf("saturation 0: pixel %d is %v", i/3, grey[i:i+3])
		}
	}
	a := apply(t, h, imgproc.ColorTwist, schema.Args{"hue": 360.0, "saturation": 1.3}, x).Span()
	b := apply(t, h, imgproc.ColorTwist, schema.Args{"hue": 0.0, "saturation": 1.3}, x).Span()
	if n, most := diffU8(a, b); most > 1 {
		t.Errorf("hue 360 and hue 0: %d values differ by up to %d", n, most)
	}
}

func TestColorBadInput(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(2, 2))
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 8, 3)
	one := imageBatch(t, rng, tensor.Uint8, 8, 8, 1)
	for _, c := range []struct {
		name string
		op   string
		args schema.Args
		in   *tensor.Batch
		want string
	}{
		{"no to", imgproc.ColorConvert, nil, rgb, `"to"`},
		{"unknown space", imgproc.ColorConvert, schema.Args{"to": "lab"}, rgb, "lab"},
		{"gray to hsv", imgproc.ColorConvert, schema.Args{"from": "gray", "to": "hsv"}, one, "no conversion from gray to hsv; convert through rgb"},
		{"ycbcr to hsv", imgproc.ColorConvert, schema.Args{"from": "ycbcr", "to": "hsv"}, rgb, "no conversion from ycbcr to hsv"},
		{"gray of 3 channels", imgproc.ColorConvert, schema.Args{"from": "gray", "to": "rgb"}, rgb, "from gray takes 1 channel, got 3"},
		{"rgb of 1 channel", imgproc.ColorConvert, schema.Args{"to": "hsv"}, one, "from rgb takes 3 channels (or 4 with alpha), got 1"},
		{"twist of 1 channel", imgproc.ColorTwist, nil, one, "channel count 1 (want 3 or 4)"},
		{"twist huge", imgproc.ColorTwist, schema.Args{"brightness": 1e9}, rgb, `"brightness"`},
		{"twist NaN", imgproc.ColorTwist, schema.Args{"hue": math.NaN()}, rgb, `"hue"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := exec(h, c.op, c.args, c.in)
			testutil.WantErr(t, err, nil, c.want)
		})
	}
}
