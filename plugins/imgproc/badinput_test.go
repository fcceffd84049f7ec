package imgproc_test

import (
	"context"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func openImgproc(t *testing.T) *dynop.Host {
	t.Helper()
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{cbuild.Imgproc(t)}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h
}

// exec runs operator name with args on inputs and returns the outputs or
// the first error (from New, Setup or Run).
func exec(h *dynop.Host, name string, args schema.Args, inputs ...*tensor.Batch) ([]*tensor.Batch, error) {
	ctx := context.Background()
	in, err := h.NewOperator(ctx, name, args)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return in.Exec(ctx, inputs...)
}

func TestSmallAndOddImages(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, s := range [][2]int64{{1, 1}, {1, 2}, {2, 1}, {1, 1000}, {1000, 1}, {3, 31}, {3, 33}, {3, 65}} {
		for _, c := range []int64{1, 3, 4} {
			in := imageBatch(t, rng, tensor.Uint8, s[0], s[1], c)
			for _, call := range []struct {
				op   string
				args schema.Args
			}{
				{imgproc.GaussianBlur, schema.Args{"sigma": 1.5}},
				{imgproc.Sobel, nil},
				{imgproc.Resize, schema.Args{"width": 5, "height": 3}},
			} {
				outs, err := exec(h, call.op, call.args, in)
				if err != nil {
					t.Errorf("%s on %dx%dx%d: %v", call.op, s[0], s[1], c, err)
					continue
				}
				if got := outs[0].Sample(0).Shape(); call.op != imgproc.Resize && (got[0] != s[0] || got[1] != s[1] || got[2] != c) {
					t.Errorf("%s on %dx%dx%d gave %v", call.op, s[0], s[1], c, got)
				}
			}
		}
	}
}

// TestKnownAnswers checks the scalar reference (and so every variant,
// which must agree with it) against what the operators mean.
func TestKnownAnswers(t *testing.T) {
	h := openImgproc(t)
	constant := func(dt tensor.DType, hgt, w, c int64, v float64) *tensor.Batch {
		b, _ := tensor.Alloc(dt, "HWC", [][]int64{{hgt, w, c}})
		data, _ := b.Sample(0).Bytes()
		if dt == tensor.Uint8 {
			for i := range data {
				data[i] = uint8(v)
			}
		} else {
			f, _ := tensor.Values[float32](b.Sample(0))
			for i := range f {
				f[i] = float32(v)
			}
		}
		return b
	}
	// A constant image stays constant under blur and resize (replicated
	// edges bring in nothing else) and has no edges.
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		in := constant(dt, 37, 53, 3, 200)
		for _, call := range []struct {
			op   string
			args schema.Args
			want float64
		}{
			{imgproc.GaussianBlur, schema.Args{"sigma": 3.3}, 200},
			{imgproc.Resize, schema.Args{"width": 101, "height": 9}, 200},
			{imgproc.Sobel, nil, 0},
		} {
			outs, err := exec(h, call.op, call.args, in)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := outs[0].Sample(0).Contiguous()
			if dt == tensor.Uint8 {
				data, _ := c.Bytes()
				for i, v := range data {
					if float64(v) != call.want {
						t.Fatalf("%s %s: element %d is %d, want %g", call.op, dt, i, v, call.want)
					}
				}
			} else {
				data, _ := tensor.Values[float32](c)
				for i, v := range data {
					if math.Abs(float64(v)-call.want) > 1e-3 {
						t.Fatalf("%s %s: element %d is %g, want %g", call.op, dt, i, v, call.want)
					}
				}
			}
		}
	}
	// Resizing to the same size is the identity; saxpy is a·x + y.
	rng := rand.New(rand.NewPCG(5, 6))
	in := imageBatch(t, rng, tensor.Uint8, 19, 23, 4)
	outs, err := exec(h, imgproc.Resize, schema.Args{"width": 23, "height": 19}, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Agree(outs, []*tensor.Batch{in}); err != nil {
		t.Errorf("resize to the same size: %v", err)
	}
	x, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{{1001}})
	y, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{{1001}})
	outs, err = exec(h, imgproc.Saxpy, schema.Args{"a": 3.0}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := tensor.Values[float32](x.Sample(0))
	ys, _ := tensor.Values[float32](y.Sample(0))
	got, _ := tensor.Values[float32](outs[0].Sample(0))
	for i := range got {
		if want := 3*xs[i] + ys[i]; got[i] != want && float32(3*xs[i])+ys[i] != got[i] {
			t.Fatalf("saxpy[%d] = %g, want %g", i, got[i], want)
		}
	}
	// A vertical step edge: Sobel is zero away from it and 4·step next to
	// it (|gx| = 1+2+1 times the step).
	step := constant(tensor.Uint8, 5, 8, 1, 10)
	data, _ := step.Sample(0).Bytes()
	for r := range 5 {
		for c := 4; c < 8; c++ {
			data[r*8+c] = 50
		}
	}
	outs, err = exec(h, imgproc.Sobel, nil, step)
	if err != nil {
		t.Fatal(err)
	}
	edges, _ := outs[0].Sample(0).Bytes()
	for r := range 5 {
		for c := range 8 {
			want := uint8(0)
			if c == 3 || c == 4 {
				want = 160
			}
			if edges[r*8+c] != want {
				t.Errorf("sobel at (%d, %d) = %d, want %d", r, c, edges[r*8+c], want)
			}
		}
	}
}

func TestTallImage(t *testing.T) {
	h := openImgproc(t)
	in := imageBatch(t, rand.New(rand.NewPCG(1, 1)), tensor.Uint8, 1<<20, 2, 1)
	for _, call := range []struct {
		op   string
		args schema.Args
	}{{imgproc.GaussianBlur, schema.Args{"sigma": 2.0}}, {imgproc.Sobel, nil}, {imgproc.Resize, schema.Args{"width": 1, "height": 1 << 19}}} {
		if _, err := exec(h, call.op, call.args, in); err != nil {
			t.Errorf("%s on 1Mi×2: %v", call.op, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(2, 2))
	rgb := imageBatch(t, rng, tensor.Uint8, 8, 8, 3)
	two := imageBatch(t, rng, tensor.Uint8, 8, 8, 2)
	five := imageBatch(t, rng, tensor.Float32, 8, 8, 5)
	i16, _ := tensor.Random(rng, tensor.Int16, "HWC", [][]int64{{8, 8, 3}})
	hw, _ := tensor.Random(rng, tensor.Uint8, "HW", [][]int64{{8, 8}})
	x, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{{10}})
	y, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{{11}})
	for _, c := range []struct {
		name   string
		op     string
		args   schema.Args
		inputs []*tensor.Batch
		target error
		want   string
	}{
		{"sigma 0", imgproc.GaussianBlur, schema.Args{"sigma": 0.0}, []*tensor.Batch{rgb}, schema.ErrArgument, `argument "sigma": 0 is not above the minimum 0, which the range (0, 256] excludes`}, // the schema says so, before C
		{"sigma negative", imgproc.GaussianBlur, schema.Args{"sigma": -1.0}, []*tensor.Batch{rgb}, schema.ErrArgument, `"sigma"`},
		{"sigma NaN", imgproc.GaussianBlur, schema.Args{"sigma": math.NaN()}, []*tensor.Batch{rgb}, schema.ErrArgument, `argument "sigma": is NaN`},
		{"sigma huge", imgproc.GaussianBlur, schema.Args{"sigma": 1e9}, []*tensor.Batch{rgb}, schema.ErrArgument, `"sigma"`},
		{"sigma missing", imgproc.GaussianBlur, nil, []*tensor.Batch{rgb}, schema.ErrArgument, `"sigma"`},
		{"blur 2 channels", imgproc.GaussianBlur, schema.Args{"sigma": 1.0}, []*tensor.Batch{two}, nil, "channel count 2 (want 1, 3 or 4)"},
		{"sobel 5 channels", imgproc.Sobel, nil, []*tensor.Batch{five}, nil, "channel count 5 (want 1, 3 or 4)"},
		{"gray 1 channel", imgproc.Grayscale, nil, []*tensor.Batch{two}, nil, "channel count 2 (want 3 or 4)"},
		{"blur int16", imgproc.GaussianBlur, schema.Args{"sigma": 1.0}, []*tensor.Batch{i16}, op.ErrInput, "int16"},
		{"sobel HW", imgproc.Sobel, nil, []*tensor.Batch{hw}, op.ErrInput, "HW"},
		{"resize to no size", imgproc.Resize, nil, []*tensor.Batch{rgb}, nil, "give the output size: width and/or height, resize_shorter, resize_longer or scale"},
		{"resize two ways", imgproc.Resize, schema.Args{"width": 4, "resize_shorter": 3}, []*tensor.Batch{rgb}, nil, "give one of width and/or height, resize_shorter, resize_longer and scale, not several"},
		{"resize fixed and capped", imgproc.Resize, schema.Args{"width": 4, "height": 3, "max_size": 2}, []*tensor.Batch{rgb}, nil, "max_size with both width and height"},
		{"resize negative scale", imgproc.Resize, schema.Args{"scale": -0.5}, []*tensor.Batch{rgb}, schema.ErrArgument, `"scale"`},
		{"resize negative", imgproc.Resize, schema.Args{"width": 4, "height": -5}, []*tensor.Batch{rgb}, schema.ErrArgument, `"height"`},
		{"resize beyond max", imgproc.Resize, schema.Args{"width": 1 << 21, "height": 5}, []*tensor.Batch{rgb}, schema.ErrArgument, `"width"`},
		{"resize absurd", imgproc.Resize, schema.Args{"width": 1 << 20, "height": 1 << 20}, []*tensor.Batch{rgb}, schema.ErrOp, "larger than the limit"},
		{"saxpy shapes", imgproc.Saxpy, nil, []*tensor.Batch{x, y}, nil, "x and y differ in shape"},
		{"saxpy uint8", imgproc.Saxpy, nil, []*tensor.Batch{two, two}, op.ErrInput, "uint8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			_, err := exec(h, c.op, c.args, c.inputs...)
			testutil.WantErr(t, err, c.target, c.want)
			var after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			if grew := (after.Maxrss - before.Maxrss) * 1024; grew > 256<<20 {
				t.Errorf("refusing it grew the process by %d MiB", grew>>20)
			}
		})
	}
}
