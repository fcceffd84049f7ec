package imgproc_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
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
// and up to 2400×1350, uint8 and float32.
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
		for _, c := range []struct {
			name string
			args schema.Args
		}{
			{"down", schema.Args{"width": 960, "height": 540}},
			{"up", schema.Args{"width": 2400, "height": 1350}},
		} {
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
			}
		}
	}
	return cases
}

// TestFilterVariantsAgreeWithScalar: every variant this CPU can run,
// forced through DYNOP_CPU_FEATURES, computes the scalar reference's
// bytes exactly, uint8 and float32, for filterCases.
func TestFilterVariantsAgreeWithScalar(t *testing.T) {
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

// TestUnsharpMaskStrided: a cropped (strided) input gives the pixels of
// its compact copy.
func TestUnsharpMaskStrided(t *testing.T) {
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
		args := schema.Args{"sigma": 1.3, "amount": 2.0, "threshold": 4.0}
		a, b := values(t, execOne(t, h, imgproc.UnsharpMask, args, crop)), values(t, execOne(t, h, imgproc.UnsharpMask, args, cb))
		if d, n := diffStats(t, a, b); n != 0 {
			t.Errorf("%s: the strided input's result differs from the compact one's in %d elements (by up to %g)", dt, n, d)
		}
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
