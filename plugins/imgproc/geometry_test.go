package imgproc_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
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

// keepStarted holds an instance of imgproc.Rotate open until the test
// ends, so that the plugin is not stopped and started again between the
// test's many short-lived instances.
func keepStarted(t *testing.T, h *dynop.Host) {
	t.Helper()
	inst, err := h.NewOperator(context.Background(), imgproc.Rotate, schema.Args{"angle": 0.0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
}

// rotate runs imgproc.Rotate with args on one image and returns the
// output sample.
func rotate(t *testing.T, exec func(string, schema.Args, ...*tensor.Batch) ([]*tensor.Batch, error), args schema.Args, img *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	b, err := tensor.NewBatch(img)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec(imgproc.Rotate, args, b)
	if err != nil {
		t.Fatalf("Rotate %v on %v: %v", args, img.Shape(), err)
	}
	return outs[0].Sample(0)
}

// hwcImage returns an HWC tensor of data.
func hwcImage[T uint8 | float32](t *testing.T, data []T, h, w, c int64) *tensor.Tensor {
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

func samplesOf[T uint8 | float32](t *testing.T, x *tensor.Tensor) []T {
	t.Helper()
	c, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensor.Values[T](c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantShape3(t *testing.T, x *tensor.Tensor, h, w, c int64) {
	t.Helper()
	if s := x.Shape(); len(s) != 3 || s[0] != h || s[1] != w || s[2] != c {
		t.Fatalf("shape %v, want [%d %d %d]", s, h, w, c)
	}
}

// TestRotateKnownAnswers checks quarter turns, the canvas sizes, the fill
// and exact pixel positions on small images.
func TestRotateKnownAnswers(t *testing.T) {
	h := openImgproc(t)
	keepStarted(t, h)
	ex := func(name string, args schema.Args, in ...*tensor.Batch) ([]*tensor.Batch, error) {
		return exec(h, name, args, in...)
	}
	// A 2x3 image of one channel: pixel (y, x) is 10y + x.
	px := []uint8{0, 1, 2, 10, 11, 12}
	for _, c := range []struct {
		angle float64
		h, w  int64
		want  []uint8
	}{
		{0, 2, 3, px},
		{90, 3, 2, []uint8{2, 12, 1, 11, 0, 10}},
		{-270, 3, 2, []uint8{2, 12, 1, 11, 0, 10}},
		{180, 2, 3, []uint8{12, 11, 10, 2, 1, 0}},
		{270, 3, 2, []uint8{10, 0, 11, 1, 12, 2}},
		{-90, 3, 2, []uint8{10, 0, 11, 1, 12, 2}},
		{720 + 90, 3, 2, []uint8{2, 12, 1, 11, 0, 10}},
	} {
		got := rotate(t, ex, schema.Args{"angle": c.angle}, hwcImage(t, px, 2, 3, 1))
		wantShape3(t, got, c.h, c.w, 1)
		if v := samplesOf[uint8](t, got); !bytes.Equal(v, c.want) {
			t.Errorf("angle %g: %v, want %v", c.angle, v, c.want)
		}
	}
	// Quarter turns of float32 move the bits, NaN and -0 included.
	nan := float32(math.NaN())
	fpx := []float32{1, nan, float32(math.Copysign(0, -1)), 4}
	got := samplesOf[float32](t, rotate(t, ex, schema.Args{"angle": 180.0}, hwcImage(t, fpx, 1, 4, 1)))
	if got[0] != 4 || math.Float32bits(got[1]) != math.Float32bits(fpx[2]) || !math.IsNaN(float64(got[2])) || got[3] != 1 {
		t.Errorf("float32 180: %v", got)
	}

	// Canvas sizes (H x W): DALI's rounding, parity kept.
	for _, c := range []struct {
		angle      float64
		keep       bool
		h, w       int64
		wantH, wnt int64
	}{
		{30, false, 1080, 1920, 1896, 2204},
		{30, false, 10, 20, 20, 24},
		{60, false, 10, 20, 24, 20},
		{45, false, 1, 1, 3, 3},
		{45, false, 4, 4, 6, 6},
		{-30, false, 10, 20, 20, 24},
		{30, true, 10, 20, 10, 20},
		{90, true, 10, 20, 10, 20},
		{1e-9, false, 7, 9, 7, 9},
		{179.5, false, 7, 9, 9, 11},
	} {
		img, _ := tensor.Alloc(tensor.Uint8, "HWC", [][]int64{{c.h, c.w, 1}})
		got := rotate(t, ex, schema.Args{"angle": c.angle, "keep_size": c.keep}, img.Sample(0))
		wantShape3(t, got, c.wantH, c.wnt, 1)
	}

	// One pixel at 45 degrees: a 3x3 canvas whose centre is the pixel and
	// whose corners (no neighbour inside) are the fill, rounded half to
	// even and clamped for uint8.
	one := hwcImage(t, []uint8{7, 8, 9}, 1, 1, 3)
	g := samplesOf[uint8](t, rotate(t, ex, schema.Args{"angle": 45.0, "fill": []float64{100.5, 101.5, 300}}, one))
	if !bytes.Equal(g[12:15], []uint8{7, 8, 9}) {
		t.Errorf("centre %v, want the pixel", g[12:15])
	}
	for _, corner := range []int{0, 2, 6, 8} {
		if !bytes.Equal(g[3*corner:3*corner+3], []uint8{100, 102, 255}) {
			t.Errorf("corner %d: %v, want the fill (100, 102, 255)", corner, g[3*corner:3*corner+3])
		}
	}
	gf := samplesOf[float32](t, rotate(t, ex, schema.Args{"angle": 45.0, "fill": []float64{-0.25}}, hwcImage(t, []float32{0.5}, 1, 1, 1)))
	if gf[4] != 0.5 || gf[0] != -0.25 || gf[8] != -0.25 {
		t.Errorf("float32 one pixel: %v", gf)
	}

	// A quarter turn that keeps a 2x4 canvas is not lossless, but the
	// coordinates are whole: out(y, x) = in(x-1, 2-y), the fill outside.
	src := []uint8{0, 1, 2, 3, 10, 11, 12, 13}
	g = samplesOf[uint8](t, rotate(t, ex, schema.Args{"angle": 90.0, "keep_size": true, "fill": []float64{99}}, hwcImage(t, src, 2, 4, 1)))
	if want := []uint8{99, 2, 12, 99, 99, 1, 11, 99}; !bytes.Equal(g, want) {
		t.Errorf("90 keep_size: %v, want %v", g, want)
	}

	// A constant image stays constant inside, and float32 1.0 exactly
	// (the weights are multiples of 1/1024).
	for _, a := range []float64{17.5, 45, 123.4, -71.3} {
		cu := make([]uint8, 15*22*3)
		cf := make([]float32, 15*22)
		for i := range cu {
			cu[i] = 200
		}
		for i := range cf {
			cf[i] = 1
		}
		gu := samplesOf[uint8](t, rotate(t, ex, schema.Args{"angle": a, "fill": []float64{200}}, hwcImage(t, cu, 15, 22, 3)))
		for i, v := range gu {
			if v != 200 {
				t.Fatalf("angle %g: constant uint8 image gave %d at %d", a, v, i)
			}
		}
		gf := samplesOf[float32](t, rotate(t, ex, schema.Args{"angle": a, "fill": []float64{1}}, hwcImage(t, cf, 15, 22, 1)))
		for i, v := range gf {
			if v != 1 {
				t.Fatalf("angle %g: constant float32 image gave %v at %d", a, v, i)
			}
		}
	}

	// An empty image gives a canvas of fill.
	empty, _ := tensor.Alloc(tensor.Float32, "HWC", [][]int64{{0, 5, 1}})
	ge := rotate(t, ex, schema.Args{"angle": 45.0, "fill": []float64{3}}, empty.Sample(0))
	for _, v := range samplesOf[float32](t, ge) {
		if v != 3 {
			t.Fatalf("empty image at 45: %v", samplesOf[float32](t, ge))
		}
	}
}

// TestRotateBadArguments: the errors name what is wrong.
func TestRotateBadArguments(t *testing.T) {
	h := openImgproc(t)
	img := imageBatch(t, rand.New(rand.NewPCG(1, 1)), tensor.Uint8, 4, 5, 3)
	for _, c := range []struct {
		args schema.Args
		in   *tensor.Batch
		want []string
	}{
		{schema.Args{}, img, []string{"angle"}},
		{schema.Args{"angle": math.Inf(1)}, img, []string{"angle", "finite"}},
		{schema.Args{"angle": 10.0, "fill": []float64{1, 2}}, img, []string{"fill has 2 values", "3 channels"}},
		{schema.Args{"angle": 10.0, "fill": []float64{1, 2, 3, 4, 5}}, img, []string{"fill", "at most 4", "got 5"}},
		{schema.Args{"angle": 10.0, "fill": []float64{}}, img, []string{"fill", "got 0"}},
		{schema.Args{"angle": 10.0, "fill": []float64{math.NaN()}}, img, []string{"fill", "NaN"}},
		{schema.Args{"angle": 10.0, "fill": []float64{1, math.Inf(-1), 2}}, img, []string{"fill[1]", "finite"}},
		{schema.Args{"angle": 10.0}, imageBatch(t, rand.New(rand.NewPCG(1, 1)), tensor.Uint8, 1, 1<<18+1, 1), []string{"larger than 262144"}},
		{schema.Args{"angle": 10.0}, imageBatch(t, rand.New(rand.NewPCG(1, 1)), tensor.Uint8, 4, 5, 2), []string{"channel count 2"}},
	} {
		_, err := exec(h, imgproc.Rotate, c.args, c.in)
		if err == nil {
			t.Errorf("%v on %v: no error", c.args, c.in.Sample(0).Shape())
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v on %v: error %q does not say %q", c.args, c.in.Sample(0).Shape(), err, w)
			}
		}
	}
}

// rotateCases are the variant proof's cases for Rotate: odd sizes (1x1,
// a row, a column, widths below 4 and the SIMD widths' neighbours), both
// dtypes, 1, 3 and 4 channels, angles that cut through pixels at every
// fraction, keep_size, per-channel fill, and strided views.
func rotateCases(t *testing.T) []opCase {
	rng := rand.New(rand.NewPCG(7, 42))
	var cases []opCase
	shapes := [][2]int64{{1, 1}, {1, 17}, {17, 1}, {2, 3}, {3, 3}, {5, 4}, {7, 13}, {33, 65}, {67, 129}, {16, 47}}
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, s := range shapes {
			for _, c := range []int64{1, 3, 4} {
				in := imageBatch(t, rng, dt, s[0], s[1], c)
				fill := []float64{12.5, 250.25, -3, 77}[:c]
				add := func(args schema.Args, b *tensor.Batch, what string) {
					cases = append(cases, opCase{fmt.Sprintf("rotate %s %dx%dx%d %v%s", dt, s[0], s[1], c, args, what), imgproc.Rotate, args, []*tensor.Batch{b}})
				}
				for _, a := range []float64{17.5, -33, 45, 123.4, 271, 0.1} {
					add(schema.Args{"angle": a, "fill": fill}, in, "")
				}
				add(schema.Args{"angle": 30.0, "keep_size": true}, in, "")
				add(schema.Args{"angle": 90.0, "keep_size": true, "fill": []float64{5}}, in, "")
				add(schema.Args{"angle": 270.0}, in, "")
				if s[1] > 2 {
					crop := cropEach(t, in, func(sh []int64) (start, size []int64) {
						return []int64{0, 1, 0}, []int64{sh[0], sh[1] - 2, sh[2]}
					})
					add(schema.Args{"angle": 200.0, "fill": fill}, crop, " cropped")
				}
			}
		}
	}
	return cases
}

// TestRotateVariantsAgree: every SIMD variant this CPU has computes the
// scalar reference's bytes exactly, uint8 and float32 alike.
func TestRotateVariantsAgree(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	lib := cbuild.Imgproc(t)
	cases := rotateCases(t)
	want, ran := runCases(t, lib, "-sse2", cases)
	for i, v := range ran {
		if v != "scalar" {
			t.Fatalf("%s: with -sse2 ran %q", cases[i].name, v)
		}
	}
	tested := map[string]bool{}
	for _, off := range []string{"", "-avx512f"} {
		got, ran := runCases(t, lib, off, cases)
		for i, c := range cases {
			if !sameBytes(t, got[i], want[i]) {
				t.Errorf("DYNOP_CPU_FEATURES=%q: %s: variant %s differs from scalar", off, c.name, ran[i])
			}
		}
		tested[ran[0]] = true
	}
	t.Logf("variants compared with scalar: %v (%d cases each)", tested, len(cases))
	if dispatch.Host().Available().Has(dispatch.AVX2) && !tested["avx2"] {
		t.Error("the AVX2 variant was never run on a CPU that has AVX2")
	}
}

// TestRotateWasmAgrees: the WebAssembly build computes the native scalar
// variant's bytes.
func TestRotateWasmAgrees(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	wasmLib := cbuild.ImgprocWasm(t)
	var cases []opCase
	for i, c := range rotateCases(t) {
		if i%5 == 0 { // a sample, to keep the sandboxed runs short
			cases = append(cases, c)
		}
	}
	want, _ := runCases(t, cbuild.Imgproc(t), "-sse2", cases)
	got, _ := runCases(t, wasmLib, "", cases)
	for i, c := range cases {
		if !sameBytes(t, got[i], want[i]) {
			t.Errorf("%s: wasm differs from native scalar", c.name)
		}
	}
}

// compareRotations runs Python code that builds outputs from the images
// (inputs[i]) and compares them with imgproc.Rotate's outputs outs; every
// element must be equal.
func compareRotations(t *testing.T, code string, imgs, outs []*tensor.Tensor, names []string) {
	t.Helper()
	var arrays []cvtest.Array
	for _, img := range imgs {
		arrays = append(arrays, cvtest.FromTensor(t, img))
	}
	want := cvtest.Run(t, code, arrays...)
	if len(want) != len(outs) {
		t.Fatalf("%d outputs from OpenCV, want %d", len(want), len(outs))
	}
	for i, o := range outs {
		got := cvtest.FromTensor(t, o)
		if fmt.Sprint(got.Shape) != fmt.Sprint(want[i].Shape) || got.DType != want[i].DType {
			t.Errorf("%s: %s %v, OpenCV %s %v", names[i], got.DType, got.Shape, want[i].DType, want[i].Shape)
			continue
		}
		if !bytes.Equal(got.Data, want[i].Data) {
			n, max := 0, 0.0
			a, b := samplesOf[float32](t, toFloat(t, o)), samplesOf[float32](t, toFloat(t, want[i].Tensor(t, "HWC")))
			for j := range a {
				if d := math.Abs(float64(a[j]) - float64(b[j])); d != 0 || math.IsNaN(d) {
					n++
					max = math.Max(max, d)
				}
			}
			t.Errorf("%s: %d of %d elements differ from OpenCV's, by up to %g", names[i], n, len(a), max)
		}
	}
}

// toFloat returns x's elements as float32.
func toFloat(t *testing.T, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	if x.DType() == tensor.Float32 {
		return x
	}
	v := samplesOf[uint8](t, x)
	f := make([]float32, len(v))
	for i, e := range v {
		f[i] = float32(e)
	}
	s := x.Shape()
	return hwcImage(t, f, s[0], s[1], s[2])
}

// TestRotateMatchesOpenCV compares imgproc.Rotate with OpenCV:
// quarter turns with cv2.rotate (ROTATE_90_COUNTERCLOCKWISE, ROTATE_180,
// ROTATE_90_CLOCKWISE), and other angles, with and without keep_size and
// with a fill per channel, with cv2.warpAffine(INTER_LINEAR,
// BORDER_CONSTANT, borderValue=fill) of cv2.getRotationMatrix2D about
// ((W-1)/2, (H-1)/2) plus the translation to the operator's canvas
// ((W'-W)/2, (H'-H)/2), on random uint8 and float32 images of 1, 3 and 4
// channels. Every element must be equal: uint8 and float32 are
// bit-identical (the plugin's cos and sin may differ from libm's in the
// last bit, which could move a coordinate by 1/32 pixel where it lies on
// a rounding boundary; none of these cases does). It needs python3 with
// cv2 (python3-opencv) and skips without.
func TestRotateMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	keepStarted(t, h)
	ex := func(name string, args schema.Args, in ...*tensor.Batch) ([]*tensor.Batch, error) {
		return exec(h, name, args, in...)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	angles := []float64{17.5, 33, -71.3, 123.4, 200, 300.7, 45, 30, 1, -0.5, 359.75}
	var imgs, outs []*tensor.Tensor
	var names []string
	var code strings.Builder
	code.WriteString("outputs = []\n")
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, shape := range [][3]int64{{37, 53, 1}, {37, 53, 3}, {29, 30, 4}, {40, 17, 3}} {
			img := imageBatch(t, rng, dt, shape[0], shape[1], shape[2]).Sample(0)
			if dt == tensor.Float32 { // values of 0..255 with fractions, as images are
				v := samplesOf[float32](t, img)
				for i := range v {
					v[i] = float32(rng.IntN(256*64)) / 64
				}
				img = hwcImage(t, v, shape[0], shape[1], shape[2])
			}
			name := fmt.Sprintf("%s %v", dt, shape)
			fill := []float64{7, 100.25, 200.5, 3}[:shape[2]]
			if dt == tensor.Uint8 {
				fill = []float64{7, 100, 201, 3}[:shape[2]]
			}
			pyFill := strings.Trim(fmt.Sprint(append(append([]float64{}, fill...), 0, 0, 0, 0)[:4]), "[]")
			pyFill = "(" + strings.ReplaceAll(pyFill, " ", ", ") + ")"
			fmt.Fprintf(&code, "img = inputs[%d]\nH, W = img.shape[:2]\n", len(imgs))
			imgs = append(imgs, img)
			add := func(o *tensor.Tensor, what, py string) {
				outs = append(outs, o)
				names = append(names, name+" "+what)
				fmt.Fprintf(&code, "outputs.append(%s.reshape(%d, %d, -1))\n", py, o.Shape()[0], o.Shape()[1])
			}
			// Quarter turns.
			for _, q := range []struct {
				angle float64
				cv    string
			}{{90, "ROTATE_90_COUNTERCLOCKWISE"}, {180, "ROTATE_180"}, {270, "ROTATE_90_CLOCKWISE"}, {-90, "ROTATE_90_CLOCKWISE"}, {450, "ROTATE_90_COUNTERCLOCKWISE"}} {
				add(rotate(t, ex, schema.Args{"angle": q.angle}, img), fmt.Sprintf("angle %g (cv2.%s)", q.angle, q.cv), "cv2.rotate(img, cv2."+q.cv+")")
			}
			// Bilinear.
			for _, keep := range []bool{false, true} {
				for _, a := range angles {
					o := rotate(t, ex, schema.Args{"angle": a, "keep_size": keep, "fill": fill}, img)
					oh, ow := o.Shape()[0], o.Shape()[1]
					fmt.Fprintf(&code, "M = cv2.getRotationMatrix2D(((W-1)/2, (H-1)/2), %v, 1.0)\nM[0, 2] += (%d-W)/2\nM[1, 2] += (%d-H)/2\n", a, ow, oh)
					add(o, fmt.Sprintf("angle %g keep_size %v", a, keep),
						fmt.Sprintf("cv2.warpAffine(img, M, (%d, %d), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=%s)", ow, oh, pyFill))
				}
			}
		}
	}
	compareRotations(t, code.String(), imgs, outs, names)
	t.Logf("%d rotations compared with OpenCV's", len(outs))
}

// BenchmarkRotate rotates a 1920x1080 RGB image by 30 degrees with each
// variant this CPU has.
func BenchmarkRotate(b *testing.B) {
	lib := cbuild.Imgproc(b)
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		in, err := tensor.Random(rand.New(rand.NewPCG(1, 2)), dt, "HWC", [][]int64{{1080, 1920, 3}})
		if err != nil {
			b.Fatal(err)
		}
		for _, off := range []string{"", "-avx512f", "-sse2"} {
			b.Run(fmt.Sprintf("%s/%s", dt, strings.TrimPrefix(off, "-")), func(b *testing.B) {
				b.Setenv(dispatch.EnvFeatures, off)
				ctx := context.Background()
				h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{lib}, NoDefaultPaths: true, CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close(ctx)
				inst, err := h.NewOperator(ctx, imgproc.Rotate, schema.Args{"angle": 30.0})
				if err != nil {
					b.Fatal(err)
				}
				defer inst.Close()
				b.Logf("variant %s", inst.Variant())
				for b.Loop() {
					if _, err := inst.Exec(ctx, in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
