package imgproc_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkResize runs imgproc.Resize on a 1920×1080 RGB image, the main
// job's input, in each variant: down to 960×540 (the main job's resize)
// and up to 2400×1350, uint8 and float32, with each interpolation, and
// antialiased cubic down.
func BenchmarkResize(b *testing.B) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{cbuild.Imgproc(b)}, NoDefaultPaths: true, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		img, err := tensor.Random(rng, dt, "HWC", [][]int64{{1080, 1920, 3}})
		if err != nil {
			b.Fatal(err)
		}
		var cases []struct {
			name string
			args schema.Args
		}
		for _, interp := range []string{"linear", "nearest", "cubic", "area", "cubic-antialias"} {
			for _, size := range []struct {
				name string
				w, h int
			}{{"down", 960, 540}, {"up", 2400, 1350}} {
				if interp == "cubic-antialias" && size.name == "up" {
					continue
				}
				a := schema.Args{"width": size.w, "height": size.h}
				if interp != "linear" { // the default: the benchmark runs on Resize from before interp too
					a["interp"] = strings.TrimSuffix(interp, "-antialias")
				}
				if strings.HasSuffix(interp, "-antialias") {
					a["antialias"] = true
				}
				cases = append(cases, struct {
					name string
					args schema.Args
				}{interp + "/" + size.name, a})
			}
		}
		for _, c := range cases {
			for _, v := range []string{"avx512", "avx2", "scalar"} {
				b.Run(fmt.Sprintf("%s/%s/%s", dt, c.name, v), func(b *testing.B) {
					in, err := h.NewOperator(ctx, "imgproc.Resize", c.args, op.WithVariant(v))
					if err != nil {
						b.Skip(err)
					}
					defer in.Close()
					descs, err := in.Setup([]*tensor.Batch{img})
					if err != nil {
						b.Fatal(err)
					}
					out, err := descs[0].Alloc()
					if err != nil {
						b.Fatal(err)
					}
					outs, ins := []*tensor.Batch{out}, []*tensor.Batch{img}
					b.ResetTimer()
					for range b.N {
						if err := in.Run(ctx, outs, ins); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// values returns the elements of x, which may be strided, as float64 in
// C order.
func values(t testing.TB, x *tensor.Tensor) []float64 {
	t.Helper()
	c, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	switch c.DType() {
	case tensor.Uint8:
		b, _ := c.Bytes()
		for _, v := range b {
			out = append(out, float64(v))
		}
	case tensor.Float32:
		f, err := tensor.Values[float32](c)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range f {
			out = append(out, float64(v))
		}
	case tensor.Float64:
		f, err := tensor.Values[float64](c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f...)
	default:
		t.Fatalf("values of %v", c.DType())
	}
	return out
}

// cvValues returns the elements of an array OpenCV returned as float64.
func cvValues(t testing.TB, a cvtest.Array) []float64 {
	t.Helper()
	return values(t, a.Tensor(t, ""))
}

// image255 makes one random HWC image: uint8 uniform in [0, 255], float32
// uniform in [0, 255).
func image255(t testing.TB, rng *rand.Rand, dt tensor.DType, h, w, c int64) *tensor.Batch {
	t.Helper()
	b, err := tensor.Random(rng, dt, "HWC", [][]int64{{h, w, c}})
	if err != nil {
		t.Fatal(err)
	}
	if dt == tensor.Float32 {
		f, _ := tensor.Values[float32](b.Sample(0))
		for i := range f {
			f[i] *= 255
		}
	}
	return b
}

// diffStats compares got with want: the largest absolute difference and
// how many elements differ at all.
func diffStats(t testing.TB, got, want []float64) (maxAbs float64, differ int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d elements, OpenCV %d", len(got), len(want))
	}
	for i := range got {
		d := math.Abs(got[i] - want[i])
		if d > 0 {
			differ++
		}
		maxAbs = max(maxAbs, d)
	}
	return maxAbs, differ
}

// execOne runs name with args on one batch and returns its first sample.
func execOne(t testing.TB, h *dynop.Host, name string, args schema.Args, in *tensor.Batch) *tensor.Tensor {
	t.Helper()
	outs, err := exec(h, name, args, in)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return outs[0].Sample(0)
}

// radiusOf is GaussianBlur's default radius, ceil(3 sigma).
func radiusOf(sigma float64) int { return int(math.Ceil(3 * sigma)) }

// TestUnsharpMaskDefinition computes imgproc.UnsharpMask from its
// definition, in Go, from imgproc.GaussianBlur's output with the same
// sigma, and wants the same bytes: uint8 and float32, 1, 3 and 4
// channels, with and without a threshold; amount 0 and a threshold above
// every difference give the input back.
func TestUnsharpMaskDefinition(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, c := range []int64{1, 3, 4} {
			in := image255(t, rng, dt, 23, 37, c)
			p := values(t, in.Sample(0))
			for _, a := range []struct{ sigma, amount, threshold float64 }{
				{1.5, 1, 0}, {0.8, 2.5, 0}, {2, 0.7, 12.5}, {1, 0, 0}, {1, 3, 1000},
			} {
				args := schema.Args{"sigma": a.sigma, "amount": a.amount, "threshold": a.threshold}
				b := values(t, execOne(t, h, imgproc.GaussianBlur, schema.Args{"sigma": a.sigma}, in))
				got := values(t, execOne(t, h, imgproc.UnsharpMask, args, in))
				amount, threshold := float32(a.amount), float32(a.threshold)
				for i := range p {
					var want float64
					if dt == tensor.Uint8 {
						df := float32(p[i] - b[i])
						want = p[i]
						if float32(math.Abs(float64(df))) > threshold {
							v := float32(p[i]) + float32(amount*df)
							v = min(max(v, 0), 255)
							want = float64(int(float32(v + 0.5)))
						}
					} else {
						df := float32(float32(p[i]) - float32(b[i]))
						want = p[i]
						if float32(math.Abs(float64(df))) > threshold {
							want = float64(float32(p[i]) + float32(amount*df))
						}
					}
					if got[i] != want {
						t.Fatalf("%s %d channels %+v: element %d is %v, want %v (in %v, blur %v)", dt, c, a, i, got[i], want, p[i], b[i])
					}
				}
				if a.amount == 0 || a.threshold >= 1000 {
					for i := range p {
						if got[i] != p[i] {
							t.Fatalf("%s %+v: element %d changed from %v to %v", dt, a, i, p[i], got[i])
						}
					}
				}
			}
		}
	}
}

// TestUnsharpMaskMatchesOpenCV compares imgproc.UnsharpMask with OpenCV:
// blurred = cv2.GaussianBlur(img, (2r+1, 2r+1), sigma, borderType =
// BORDER_REPLICATE) with r = ceil(3 sigma), sharp = cv2.addWeighted(img,
// 1+amount, blurred, -amount, 0), and where |img - blurred| is at most
// threshold, img (the mask in NumPy), on random 41x57 images of 1, 3 and 4
// channels, sigma 1.5, 0.8 and 2 with amounts 1, 2.5 and 0.7, the last
// with threshold 6. The blurs differ by at most 1 on uint8 (checked), so
// the tolerance is floor(amount + 1) levels with at most 20% of the
// elements differing, and elements within 1 of the threshold, where the
// two blurs may choose differently, are left out; on float32 (values in
// [0, 255)) the blurs differ by at most 1e-4 and the results by at most
// 1e-4 (1 + amount). It skips without python3-opencv.
func TestUnsharpMaskMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(13, 14))
	cases := []struct{ sigma, amount, threshold float64 }{{1.5, 1, 0}, {0.8, 2.5, 0}, {2, 0.7, 6}}
	code := "img = inputs[0]\noutputs = []\n"
	for _, a := range cases {
		code += fmt.Sprintf(`blurred = cv2.GaussianBlur(img, (%[1]d, %[1]d), %[2]g, borderType=cv2.BORDER_REPLICATE).reshape(img.shape)
sharp = cv2.addWeighted(img, 1 + %[3]g, blurred, -%[3]g, 0).reshape(img.shape)
diff = np.abs(img.astype(np.float64) - blurred.astype(np.float64))
outputs += [np.where(diff > %[4]g, sharp, img), blurred]
`, 2*radiusOf(a.sigma)+1, a.sigma, a.amount, a.threshold)
	}
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, c := range []int64{1, 3, 4} {
			in := image255(t, rng, dt, 41, 57, c)
			p := values(t, in.Sample(0))
			cv := cvtest.Run(t, code, cvtest.FromTensor(t, in.Sample(0)))
			for k, a := range cases {
				want, blurred := cvValues(t, cv[2*k]), cvValues(t, cv[2*k+1])
				got := values(t, execOne(t, h, imgproc.UnsharpMask, schema.Args{"sigma": a.sigma, "amount": a.amount, "threshold": a.threshold}, in))
				ours := values(t, execOne(t, h, imgproc.GaussianBlur, schema.Args{"sigma": a.sigma}, in))
				blurMax, _ := diffStats(t, ours, blurred)
				tol, blurTol, share := 1e-4*(1+a.amount), 1e-4, 1.0
				if dt == tensor.Uint8 {
					tol, blurTol, share = math.Floor(a.amount+1), 1, 0.2
				}
				if blurMax > blurTol {
					t.Fatalf("%s %d channels sigma %g: the blurs differ by %g", dt, c, a.sigma, blurMax)
				}
				var maxAbs float64
				differ, left := 0, 0
				for i := range got {
					if a.threshold > 0 && math.Abs(math.Abs(p[i]-blurred[i])-a.threshold) <= blurTol {
						left++
						continue
					}
					d := math.Abs(got[i] - want[i])
					if d > 0 {
						differ++
					}
					maxAbs = max(maxAbs, d)
				}
				t.Logf("%s %d channels %+v: max |diff| %g, %d of %d elements differ (%d near the threshold left out); the blurs differ by %g",
					dt, c, a, maxAbs, differ, len(got)-left, left, blurMax)
				if maxAbs > tol || float64(differ) > share*float64(len(got)-left) {
					t.Errorf("%s %d channels %+v: differs from OpenCV by %g in %d of %d elements; tolerance %g in %g%%", dt, c, a, maxAbs, differ, len(got)-left, tol, 100*share)
				}
			}
		}
	}
}

// TestGaussianBlurMatchesOpenCV compares imgproc.GaussianBlur with
// cv2.GaussianBlur(img, (2r+1, 2r+1), sigma, borderType =
// BORDER_REPLICATE), r = ceil(3 sigma) (GaussianBlur's default radius), on
// random 45x61 images of 1, 3 and 4 channels and sigma 0.5, 1, 2.5 and 6,
// and both with the exact Gaussian (cv2.sepFilter2D in float64 with the
// normalized double kernel). uint8: OpenCV's 8-bit path rounds its kernel
// to 8 fraction bits and strays up to about 1.5 levels from the exact
// blur, GaussianBlur (14-bit weights) at most 0.6 (checked); so the two
// are at most 2 levels apart, in at most 30% of the elements. float32
// (values in [0, 255)): at most 1e-4 apart. It skips without
// python3-opencv.
func TestGaussianBlurMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(15, 16))
	sigmas := []float64{0.5, 1, 2.5, 6}
	code := "img = inputs[0]\noutputs = []\n"
	for _, s := range sigmas {
		code += fmt.Sprintf(`outputs.append(cv2.GaussianBlur(img, (%[1]d, %[1]d), %[2]g, borderType=cv2.BORDER_REPLICATE))
i = np.arange(-%[3]d, %[3]d + 1); g = np.exp(-i * i / (2 * %[2]g ** 2)); g /= g.sum()
outputs.append(cv2.sepFilter2D(img.astype(np.float64), -1, g, g, borderType=cv2.BORDER_REPLICATE))
`, 2*radiusOf(s)+1, s, radiusOf(s))
	}
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		tol, share := 1e-4, 1.0
		if dt == tensor.Uint8 {
			tol, share = 2, 0.3
		}
		for _, c := range []int64{1, 3, 4} {
			in := image255(t, rng, dt, 45, 61, c)
			cv := cvtest.Run(t, code, cvtest.FromTensor(t, in.Sample(0)))
			for k, s := range sigmas {
				got := values(t, execOne(t, h, imgproc.GaussianBlur, schema.Args{"sigma": s}, in))
				want, exact := cvValues(t, cv[2*k]), cvValues(t, cv[2*k+1])
				maxAbs, differ := diffStats(t, got, want)
				ours, _ := diffStats(t, got, exact)
				theirs, _ := diffStats(t, want, exact)
				t.Logf("%s %d channels sigma %g: max |diff| %g, %d of %d elements differ; from the exact blur: GaussianBlur %.3g, OpenCV %.3g",
					dt, c, s, maxAbs, differ, len(got), ours, theirs)
				if maxAbs > tol || float64(differ) > share*float64(len(got)) {
					t.Errorf("%s %d channels sigma %g: differs from OpenCV by %g in %d of %d elements; tolerance %g in %g%%", dt, c, s, maxAbs, differ, len(got), tol, 100*share)
				}
				if dt == tensor.Uint8 && ours > 0.6 {
					t.Errorf("%s %d channels sigma %g: %g from the exact blur", dt, c, s, ours)
				}
			}
		}
	}
}

// TestSobelMatchesOpenCV compares imgproc.Sobel with gx = cv2.Sobel(img,
// CV_32F, 1, 0, ksize=3, borderType=BORDER_REPLICATE), gy the same with
// dx 0, dy 1, and the magnitude computed in NumPy with Sobel's rounding:
// uint8 min(255, floor(sqrt(gx*gx + gy*gy) + 0.5)) in float32, which must
// be bit-identical; float32 sqrt(gx*gx + gy*gy) (values in [0, 255)),
// within 2.5e-4 (two float32 steps of gradient terms up to 1020: Sobel
// sums its separable terms in another order). Random 39x53 images of 1, 3 and 4 channels; it
// skips without python3-opencv.
func TestSobelMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, c := range []int64{1, 3, 4} {
			in := image255(t, rng, dt, 39, 53, c)
			code := `img = inputs[0]
gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
m = np.sqrt(gx * gx + gy * gy)
if img.dtype == np.uint8:
    m = np.minimum(np.floor(m + np.float32(0.5)), 255).astype(np.uint8)
outputs = [m]`
			want := cvValues(t, cvtest.Run(t, code, cvtest.FromTensor(t, in.Sample(0)))[0])
			got := values(t, execOne(t, h, imgproc.Sobel, nil, in))
			maxAbs, differ := diffStats(t, got, want)
			t.Logf("%s %d channels: max |diff| %g, %d of %d elements differ", dt, c, maxAbs, differ, len(got))
			if dt == tensor.Uint8 && differ > 0 {
				t.Errorf("%s %d channels: %d of %d elements differ from OpenCV's, by up to %g", dt, c, differ, len(got), maxAbs)
			}
			if dt == tensor.Float32 && maxAbs > 2.5e-4 {
				t.Errorf("%s %d channels: differs from OpenCV by %g, tolerance 2.5e-4", dt, c, maxAbs)
			}
		}
	}
}

// filterCases are the variant proof's cases for this file's operators:
// UnsharpMask, and Resize's interpolations other than the default linear
// (which TestEveryVariantAgreesWithScalar covers), on random images of
// odd sizes, both dtypes and 1, 3 and 4 channels.
func filterCases(t *testing.T) []opCase {
	rng := rand.New(rand.NewPCG(19, 20))
	var cases []opCase
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, s := range oddShapes {
			h, w := s[0], s[1]
			for _, c := range []int64{1, 3, 4} {
				in := []*tensor.Batch{image255(t, rng, dt, h, w, c)}
				add := func(name, opName string, args schema.Args) {
					cases = append(cases, opCase{fmt.Sprintf("%s %s %dx%dx%d %s", opName, dt, h, w, c, name), opName, args, in})
				}
				add("sigma=1", imgproc.UnsharpMask, schema.Args{"sigma": 1.0})
				add("sigma=2.5 amount=1.7 threshold=9", imgproc.UnsharpMask, schema.Args{"sigma": 2.5, "amount": 1.7, "threshold": 9.0})
				for _, r := range resizeVariantArgs(h, w) {
					add(fmt.Sprint(r), imgproc.Resize, r)
				}
			}
		}
	}
	return cases
}

// resizeVariantArgs are Resize's cases of the variant proof for an h x w
// image: each interpolation but the default linear, and linear with
// antialias, up, down and both ways.
func resizeVariantArgs(h, w int64) []schema.Args {
	var out []schema.Args
	for _, interp := range []schema.Args{{"interp": "nearest"}, {"interp": "cubic"}, {"interp": "area"},
		{"interp": "cubic", "antialias": true}, {"interp": "linear", "antialias": true}} {
		for _, size := range [][2]int64{{h + 3, 2*w + 1}, {max(h/2, 1), max(w/3, 1)}, {2*h + 1, max(w*2/5, 1)}} {
			a := schema.Args{"height": size[0], "width": size[1]}
			for k, v := range interp {
				a[k] = v
			}
			out = append(out, a)
		}
	}
	return out
}

// TestFilterVariantsAgreeWithScalar: every variant this CPU can run,
// forced through DYNOP_CPU_FEATURES, computes the scalar reference's
// bytes exactly, uint8 and float32, for filterCases.
func TestFilterVariantsAgreeWithScalar(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	lib := cbuild.Imgproc(t)
	cases := filterCases(t)
	want, ran := runCases(t, lib, "-sse2", cases)
	for i, v := range ran {
		if v != "scalar" {
			t.Fatalf("%s: with -sse2 ran %q, want scalar", cases[i].name, v)
		}
	}
	tested := map[string]bool{}
	for _, off := range []string{"", "-avx512f"} {
		got, ran := runCases(t, lib, off, cases)
		for i, c := range cases {
			tested[ran[i]] = true
			for j := range want[i][0].Len() {
				if !bytes.Equal(got[i][0].Sample(j).Span(), want[i][0].Sample(j).Span()) {
					t.Errorf("DYNOP_CPU_FEATURES=%q: %s: variant %s differs from scalar", off, c.name, ran[i])
				}
			}
		}
	}
	t.Logf("variants tested against scalar: %v (%d cases each)", tested, len(cases))
}

// TestStridedInputs: UnsharpMask and each kind of Resize give a cropped
// (strided) input the pixels of its compact copy.
func TestStridedInputs(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		in := image255(t, rng, dt, 30, 41, 4)
		crop := cropEach(t, in, func(s []int64) (start, size []int64) {
			return []int64{2, 3, 0}, []int64{s[0] - 5, s[1] - 9, 3}
		})
		compact, err := crop.Sample(0).Contiguous()
		if err != nil {
			t.Fatal(err)
		}
		cb, _ := tensor.NewBatch(compact)
		calls := []struct {
			op   string
			args schema.Args
		}{{imgproc.UnsharpMask, schema.Args{"sigma": 1.3, "amount": 2.0, "threshold": 4.0}}}
		for _, r := range resizeVariantArgs(25, 32) {
			calls = append(calls, struct {
				op   string
				args schema.Args
			}{imgproc.Resize, r})
		}
		for _, c := range calls {
			a, b := values(t, execOne(t, h, c.op, c.args, crop)), values(t, execOne(t, h, c.op, c.args, cb))
			if d, n := diffStats(t, a, b); n != 0 {
				t.Errorf("%s %v %s: the strided input's result differs from the compact one's in %d elements (by up to %g)", c.op, c.args, dt, n, d)
			}
		}
	}
}

// TestResizeBadInterp: what Resize's interp and antialias refuse, and
// why; and an antialiased shrink whose scratch would pass 1 GiB.
func TestResizeBadInterp(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(29, 30))
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 8, 3)
	wide := imageBatch(t, rng, tensor.Uint8, 1, 1<<23, 1)
	for _, c := range []struct {
		name   string
		args   schema.Args
		in     *tensor.Batch
		target error
		want   string
	}{
		{"unknown interp", schema.Args{"width": 4, "interp": "lanczos"}, rgb, schema.ErrArgument, `argument "interp": lanczos is not one of [nearest linear cubic area]`},
		{"interp not a string", schema.Args{"width": 4, "interp": 3}, rgb, schema.ErrArgument, `"interp"`},
		{"nearest antialiased", schema.Args{"width": 4, "interp": "nearest", "antialias": true}, rgb, nil, "imgproc.Resize: antialias applies to linear and cubic, not nearest (nearest picks pixels)"},
		{"area antialiased", schema.Args{"width": 4, "interp": "area", "antialias": true}, rgb, nil, "imgproc.Resize: antialias applies to linear and cubic, not area (area averages what it shrinks already)"},
		{"scratch", schema.Args{"width": 1, "height": 1, "interp": "cubic", "antialias": true}, wide, nil, "imgproc.Resize: resizing a 8388608x1 image to 1x1 with cubic and antialias needs 1152 MiB of scratch, more than 1024"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := exec(h, imgproc.Resize, c.args, c.in)
			testutil.WantErr(t, err, c.target, c.want)
		})
	}
}

// TestUnsharpMaskBadInput: what UnsharpMask refuses, and why.
func TestUnsharpMaskBadInput(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(23, 24))
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 8, 3)
	two := imageBatch(t, rng, tensor.Uint8, 8, 8, 2)
	i16, _ := tensor.Random(rng, tensor.Int16, "HWC", [][]int64{{8, 8, 3}})
	hw, _ := tensor.Random(rng, tensor.Uint8, "HW", [][]int64{{8, 8}})
	for _, c := range []struct {
		name   string
		args   schema.Args
		in     *tensor.Batch
		target error
		want   string
	}{
		{"no sigma", schema.Args{"amount": 1.0}, rgb, schema.ErrArgument, `"sigma"`},
		{"sigma 0", schema.Args{"sigma": 0.0}, rgb, schema.ErrArgument, `argument "sigma": 0 is not above the minimum 0`},
		{"sigma huge", schema.Args{"sigma": 300.0}, rgb, schema.ErrArgument, `"sigma"`},
		{"amount negative", schema.Args{"sigma": 1.0, "amount": -0.5}, rgb, schema.ErrArgument, `argument "amount": -0.5 is below the minimum 0`},
		{"amount infinite", schema.Args{"sigma": 1.0, "amount": math.Inf(1)}, rgb, nil, "imgproc.UnsharpMask: amount must be a finite number at least 0, got inf"},
		{"amount NaN", schema.Args{"sigma": 1.0, "amount": math.NaN()}, rgb, schema.ErrArgument, `argument "amount": is NaN`},
		{"threshold negative", schema.Args{"sigma": 1.0, "threshold": -1.0}, rgb, schema.ErrArgument, `argument "threshold": -1 is below the minimum 0`},
		{"2 channels", schema.Args{"sigma": 1.0}, two, nil, "imgproc.UnsharpMask: unsupported channel count 2 (want 1, 3 or 4)"},
		{"int16", schema.Args{"sigma": 1.0}, i16, op.ErrInput, "int16"},
		{"HW", schema.Args{"sigma": 1.0}, hw, op.ErrInput, "HW"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := exec(h, imgproc.UnsharpMask, c.args, c.in)
			testutil.WantErr(t, err, c.target, c.want)
		})
	}
}

// resizeCV is the interpolation flag of cv2.resize for each interp.
var resizeCV = map[string]string{"nearest": "INTER_NEAREST_EXACT", "linear": "INTER_LINEAR", "cubic": "INTER_CUBIC", "area": "INTER_AREA"}

// TestResizeMatchesOpenCV compares imgproc.Resize with cv2.resize, each
// interp with its flag (nearest INTER_NEAREST_EXACT, linear INTER_LINEAR,
// cubic INTER_CUBIC, area INTER_AREA), on random 38x54 images of 1, 3 and
// 4 channels, uint8 and float32 (values in [0, 255)), resized up (to
// 80x101, and 76x108: twice the size), down (to 19x27: half the size, as
// the main job's 1920x1080 to 960x540; 17x23 and 12x9) and both ways (to
// 61x20). Tolerances, enforced, as the largest difference and, on uint8,
// the share of elements that differ:
//
//	nearest  bit-identical
//	linear   uint8 1 level in 20%; float32 1e-3
//	cubic    uint8 1 level in 10%; float32 1e-3
//	area     uint8 1 level in 12%; float32 1e-4
//
// OpenCV computes the source coordinate of linear and cubic in float32
// (Resize in float64), which moves float32 results by up to about 7e-4,
// and its SIMD uint8 paths round intermediate sums.
//
// It skips without python3-opencv.
func TestResizeMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(25, 26))
	sizes := [][2]int64{{80, 101}, {76, 108}, {19, 27}, {17, 23}, {12, 9}, {61, 20}}
	interps := []string{"nearest", "linear", "cubic", "area"}
	tols := map[string]struct{ u8, share, f32 float64 }{
		"nearest": {0, 0, 0}, "linear": {1, 0.2, 1e-3}, "cubic": {1, 0.1, 1e-3}, "area": {1, 0.12, 1e-4},
	}
	code := "img = inputs[0]\noutputs = []\n"
	for _, in := range interps {
		for _, s := range sizes {
			code += fmt.Sprintf("outputs.append(cv2.resize(img, (%d, %d), interpolation=cv2.%s))\n", s[1], s[0], resizeCV[in])
		}
	}
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, c := range []int64{1, 3, 4} {
			img := image255(t, rng, dt, 38, 54, c)
			cv := cvtest.Run(t, code, cvtest.FromTensor(t, img.Sample(0)))
			for i, interp := range interps {
				for j, s := range sizes {
					got := values(t, execOne(t, h, imgproc.Resize, schema.Args{"height": s[0], "width": s[1], "interp": interp}, img))
					maxAbs, differ := diffStats(t, got, cvValues(t, cv[i*len(sizes)+j]))
					tol, share := tols[interp].f32, 1.0
					if dt == tensor.Uint8 {
						tol, share = tols[interp].u8, tols[interp].share
					}
					t.Logf("%s %s %d channels to %dx%d: max |diff| %g, %d of %d elements differ", interp, dt, c, s[0], s[1], maxAbs, differ, len(got))
					if maxAbs > tol || float64(differ) > share*float64(len(got)) {
						t.Errorf("%s %s %d channels to %dx%d: differs from OpenCV by %g in %d of %d elements; tolerance %g in %g%%",
							interp, dt, c, s[0], s[1], maxAbs, differ, len(got), tol, 100*share)
					}
				}
			}
		}
	}
}

// aaWeights is the antialiasing filter's definition, in float64: output
// index d of in -> out pixels (in > out) takes pixels [xmin, xmax) with
// weights K((i + 0.5 - c)/s), c = (d + 0.5) s, s = in/out, K the triangle
// (support 1) or Keys a = -0.75 (support 2) widened by s, the window
// floor(c ± support·s + 0.5) cut to the image and the weights normalized.
func aaWeights(cubic bool, in, out, d int) (xmin int, w []float64) {
	s := float64(in) / float64(out)
	support := s
	if cubic {
		support = 2 * s
	}
	c := (float64(d) + 0.5) * s
	xmin, xmax := max(0, int(math.Floor(c-support+0.5))), min(in, int(math.Floor(c+support+0.5)))
	k := func(t float64) float64 {
		t = math.Abs(t)
		const a = -0.75
		switch {
		case !cubic && t < 1:
			return 1 - t
		case cubic && t < 1:
			return ((a+2)*t-(a+3))*t*t + 1
		case cubic && t < 2:
			return ((a*t-5*a)*t+8*a)*t - 4*a
		}
		return 0
	}
	var sum float64
	for i := xmin; i < xmax; i++ {
		w = append(w, k((float64(i)+0.5-c)/s))
		sum += w[len(w)-1]
	}
	for i := range w {
		w[i] /= sum
	}
	return xmin, w
}

// TestResizeAntialias checks antialias=true on exact small cases, and
// that it removes the aliasing of a shrunk checkerboard. A row of 0, 70,
// 140, 210 shrunk to 2 pixels: bilinear takes the pairs' means, 35 and
// 175; antialiased, the triangle widened by 2 weighs pixels 0, 1, 2 by
// 3/7, 3/7, 1/7 and 1, 2, 3 by 1/7, 3/7, 3/7: 50 and 160. A 9x11 float32
// image shrunk to 4x3 (linear and cubic) matches aaWeights applied along
// rows, then columns, within 1e-4. A sample that does not shrink is
// resized as without antialias, bit for bit. A 1-pixel checkerboard of 0
// and 255, 60x60, shrunk to 20x20 (by 3): bilinear samples single pixels,
// 0 or 255 (all aliasing), antialiased linear and cubic give grey within
// 127.5 ± 8.
func TestResizeAntialias(t *testing.T) {
	h := openImgproc(t)
	row, _ := tensor.FromSlice([]uint8{0, 70, 140, 210}, 1, 4, 1)
	row, _ = row.WithLayout("HWC")
	rb, _ := tensor.NewBatch(row)
	for _, c := range []struct {
		aa   bool
		want []float64
	}{{false, []float64{35, 175}}, {true, []float64{50, 160}}} {
		got := values(t, execOne(t, h, imgproc.Resize, schema.Args{"width": 2, "height": 1, "antialias": c.aa}, rb))
		if !slices.Equal(got, c.want) {
			t.Errorf("0 70 140 210 to 2 pixels, antialias %v: %v, want %v", c.aa, got, c.want)
		}
	}

	rng := rand.New(rand.NewPCG(27, 28))
	const ih, iw, oh, ow = 9, 11, 4, 3
	img := image255(t, rng, tensor.Float32, ih, iw, 1)
	p := values(t, img.Sample(0))
	for _, interp := range []string{"linear", "cubic"} {
		cubic := interp == "cubic"
		got := values(t, execOne(t, h, imgproc.Resize, schema.Args{"width": ow, "height": oh, "interp": interp, "antialias": true}, img))
		for y := range oh {
			y0, wy := aaWeights(cubic, ih, oh, y)
			for x := range ow {
				x0, wx := aaWeights(cubic, iw, ow, x)
				var want float64
				for j, a := range wy {
					var r float64
					for i, b := range wx {
						r += b * p[(y0+j)*iw+x0+i]
					}
					want += a * r
				}
				if d := math.Abs(got[y*ow+x] - want); d > 1e-4 {
					t.Errorf("%s antialiased 9x11 to 4x3: (%d, %d) is %g, want %g", interp, y, x, got[y*ow+x], want)
				}
			}
		}
	}

	// Growing: antialias changes nothing.
	for _, interp := range []string{"linear", "cubic"} {
		for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
			in := image255(t, rng, dt, 13, 17, 3)
			a := execOne(t, h, imgproc.Resize, schema.Args{"width": 40, "height": 13, "interp": interp}, in)
			b := execOne(t, h, imgproc.Resize, schema.Args{"width": 40, "height": 13, "interp": interp, "antialias": true}, in)
			if !bytes.Equal(a.Span(), b.Span()) {
				t.Errorf("%s %s grown with antialias differs from without", interp, dt)
			}
		}
	}

	board, _ := tensor.Alloc(tensor.Uint8, "HWC", [][]int64{{60, 60, 1}})
	data, _ := board.Sample(0).Bytes()
	for i := range data {
		if (i/60+i%60)%2 == 1 {
			data[i] = 255
		}
	}
	for _, c := range []struct {
		interp string
		aa     bool
	}{{"linear", false}, {"linear", true}, {"cubic", true}} {
		got := values(t, execOne(t, h, imgproc.Resize, schema.Args{"width": 20, "height": 20, "interp": c.interp, "antialias": c.aa}, board))
		lo, hi := slices.Min(got), slices.Max(got)
		t.Logf("checkerboard shrunk by 3, %s antialias %v: %g to %g", c.interp, c.aa, lo, hi)
		if c.aa && (lo < 127.5-8 || hi > 127.5+8) {
			t.Errorf("%s antialiased: the checkerboard shrinks to %g..%g, want grey within 127.5 ± 8", c.interp, lo, hi)
		}
		if !c.aa && (lo != 0 || hi != 255) {
			t.Errorf("bilinear: the checkerboard shrinks to %g..%g, want its aliasing, 0..255", lo, hi)
		}
	}
}

// TestResizeNearestAndArea checks the definitions on small cases: nearest
// picks OpenCV's INTER_NEAREST_EXACT pixels (8 to 3 pixels: 1, 3, 6,
// where an exact floor((d + 0.5) in/out) would take 4 for the middle one;
// 8 to 4: 0, 2, 4, 6); area shrinking averages boxes weighted by overlap
// (6 to 4 pixels: each output covers 1.5 inputs), and area growing uses
// OpenCV's coordinates (2 to 5: sx = floor(d·2/5), f the fraction of
// (d+1) - (sx+1)·5/2 if positive).
func TestResizeNearestAndArea(t *testing.T) {
	h := openImgproc(t)
	line := func(vals ...float32) *tensor.Batch {
		x, _ := tensor.FromSlice(vals, 1, int64(len(vals)), 1)
		x, _ = x.WithLayout("HWC")
		b, _ := tensor.NewBatch(x)
		return b
	}
	for _, c := range []struct {
		interp string
		in     []float32
		want   []float64
	}{
		{"nearest", []float32{0, 1, 2, 3, 4, 5, 6, 7}, []float64{1, 3, 6}},
		{"nearest", []float32{0, 1, 2, 3, 4, 5, 6, 7}, []float64{0, 2, 4, 6}},
		{"nearest", []float32{10, 20}, []float64{10, 10, 10, 20, 20}},
		{"area", []float32{0, 30, 60, 90, 120, 150}, []float64{10, 50, 100, 140}},
		// d=0: sx 0, 1 - 2.5 < 0: f 0; d=1: sx 0, 2 - 2.5 < 0; d=2: sx 0,
		// 3 - 2.5 = 0.5; d=3: sx 1 (last), f 0; d=4: sx 1.
		{"area", []float32{10, 20}, []float64{10, 10, 15, 20, 20}},
	} {
		got := values(t, execOne(t, h, imgproc.Resize, schema.Args{"width": len(c.want), "height": 1, "interp": c.interp}, line(c.in...)))
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-5 {
				t.Errorf("%s %v to %d pixels: %v, want %v", c.interp, c.in, len(c.want), got, c.want)
				break
			}
		}
	}
}
