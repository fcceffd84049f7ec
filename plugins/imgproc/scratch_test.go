package imgproc_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestScratchFromHost: GaussianBlur, Sobel and Resize take their scratch
// from the host (DYNOP_OPERATOR_SCRATCH) instead of malloc: a shared
// scratchpad grows to what they ask, a warm run allocates nothing, and
// what setup asks for, for compact and strided inputs, is enough for run,
// which the bounds-checking mode (guards around the scratch) confirms
// with the same results (issue 23, memory reused).
func TestScratchFromHost(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := [][]int64{{37, 53, 3}, {8, 200, 3}}
	u8 := randomImages(t, rng, shapes, func() uint8 { return uint8(rng.IntN(256)) })
	f32 := randomImages(t, rng, shapes, func() float32 { return rng.Float32() * 255 })
	crop := func(b *tensor.Batch) *tensor.Batch {
		return cropEach(t, b, func(s []int64) (start, size []int64) {
			return []int64{1, 2, 0}, []int64{s[0] - 1, s[1] / 2, 3}
		})
	}
	ops := []struct {
		name string
		args schema.Args
	}{
		{"imgproc.GaussianBlur", schema.Args{"sigma": 2.0}},
		{"imgproc.Sobel", nil},
		{"imgproc.Resize", schema.Args{"width": 31, "height": 17}},
	}
	h := openImgproc(t)
	run := func(t *testing.T, name string, args schema.Args, in *tensor.Batch, sp *kernel.Scratchpad) []*tensor.Batch {
		inst, err := h.NewOperator(ctx, name, args)
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		if _, ok := inst.Impl().(op.ScratchImpl); !ok {
			t.Fatalf("%s: %T takes no scratch from the host", name, inst.Impl())
		}
		inst.ShareScratchpad(sp)
		outs, err := inst.Exec(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if sp != nil {
			if c := sp.Capacity(kernel.HostMemory); c == 0 {
				t.Errorf("%s: the shared scratchpad is empty after a run", name)
			}
			inputs := []*tensor.Batch{in}
			if n := testing.AllocsPerRun(5, func() {
				if err := inst.Run(ctx, outs, inputs); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%s: a warm run allocates %v times, want 0", name, n)
			}
		}
		return outs
	}
	for _, o := range ops {
		for _, c := range []struct {
			name  string
			batch *tensor.Batch
		}{{"uint8", u8}, {"float32", f32}, {"uint8 cropped", crop(u8)}, {"float32 cropped", crop(f32)}} {
			t.Run(o.name+" "+c.name, func(t *testing.T) {
				t.Setenv(native.CheckBoundsEnv, "0") // TestMain turns it on
				want := run(t, o.name, o.args, c.batch, kernel.NewScratchpad())
				t.Setenv(native.CheckBoundsEnv, "1")
				got := run(t, o.name, o.args, c.batch, nil)
				for j := range want[0].Len() {
					if !bytes.Equal(got[0].Sample(j).Span(), want[0].Sample(j).Span()) {
						t.Errorf("sample %d differs in the bounds-checking mode", j)
					}
				}
			})
		}
	}
}

// TestOutputTypes: the plugin's schemas say what its outputs are
// (dynop_op_output 1.1), so a pipeline is checked through its operators
// before anything runs: a blur of float32 images gives float32 images,
// which an encoder of uint8 refuses.
func TestOutputTypes(t *testing.T) {
	h := openImgproc(t)
	for _, name := range []string{"imgproc.GaussianBlur", "imgproc.Sobel", "imgproc.Resize", "imgproc.Grayscale"} {
		e, err := h.Operators().Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		in := schema.StaticType{DTypes: []tensor.DType{tensor.Float32}, Layout: "HWC"}
		outs, errs := e.Schema.Infer(nil, []schema.StaticType{in})
		want := "float32 HWC"
		if name == "imgproc.Grayscale" {
			want = "float32 HWC with 1 channel"
		}
		if errs != nil || len(outs) != 1 || outs[0].String() != want {
			t.Errorf("%s of float32 HWC: %v, %v; want %s", name, outs, errs, want)
		}
		if _, errs := e.Schema.Infer(nil, []schema.StaticType{{DTypes: []tensor.DType{tensor.Int16}}}); len(errs) != 1 {
			t.Errorf("%s of int16: %v; want one error", name, errs)
		}
	}
}

// TestResizeModes: imgproc.Resize's output size follows DALI's modes:
// width and/or height (a missing one keeps the aspect ratio), the
// shorter or the longer side, a scale, and max_size capping both sides,
// each derived side rounded half away from zero; and a size derived is
// resized to exactly as the same size given.
func TestResizeModes(t *testing.T) {
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(3, 4))
	land := randomImages(t, rng, [][]int64{{30, 40, 3}}, func() uint8 { return uint8(rng.IntN(256)) })
	port := randomImages(t, rng, [][]int64{{40, 30, 3}}, func() uint8 { return uint8(rng.IntN(256)) })
	for _, c := range []struct {
		args schema.Args
		in   *tensor.Batch
		h, w int64
	}{
		{schema.Args{"width": 20}, land, 15, 20},
		{schema.Args{"height": 15}, land, 15, 20},
		{schema.Args{"width": 40, "height": 10}, land, 10, 40},
		{schema.Args{"resize_shorter": 15}, land, 15, 20},
		{schema.Args{"resize_shorter": 15}, port, 20, 15},
		{schema.Args{"resize_longer": 20}, land, 15, 20},
		{schema.Args{"resize_longer": 20}, port, 20, 15},
		{schema.Args{"scale": 0.5}, land, 15, 20},
		{schema.Args{"scale": 0.1}, land, 3, 4},
		{schema.Args{"width": 7}, land, 5, 7},                             // 30*7/40 = 5.25
		{schema.Args{"resize_shorter": 60, "max_size": 70}, land, 53, 70}, // 60x80, then 52.5x70
		{schema.Args{"width": 80, "max_size": 50}, port, 50, 37},          // 106.7x80 → 107x80, then 50x37.4
	} {
		outs, err := exec(h, imgproc.Resize, c.args, c.in)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if s := outs[0].Sample(0).Shape(); s[0] != c.h || s[1] != c.w || s[2] != 3 {
			t.Errorf("%v of %v: %v, want %dx%dx3", c.args, c.in.Sample(0).Shape(), s, c.h, c.w)
			continue
		}
		fixed, err := exec(h, imgproc.Resize, schema.Args{"width": c.w, "height": c.h}, c.in)
		if err != nil || !bytes.Equal(fixed[0].Sample(0).Span(), outs[0].Sample(0).Span()) {
			t.Errorf("%v: not the pixels of width %d height %d (%v)", c.args, c.w, c.h, err)
		}
	}
}

// TestGrayscaleMatchesOpenCV: imgproc.Grayscale on uint8 is OpenCV's
// cv2.cvtColor(COLOR_RGB2GRAY) bit for bit (both BT.601 in 15-bit fixed
// point: 9798, 19235, 3735, rounded), on random RGB and RGBA images. It
// needs python3
// with cv2 (python3-opencv) and skips without.
func TestGrayscaleMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []int64{3, 4} {
		in := randomImages(t, rng, [][]int64{{37, 53, c}}, func() uint8 { return uint8(rng.IntN(256)) })
		code := "COLOR_RGB2GRAY"
		if c == 4 {
			code = "COLOR_RGBA2GRAY"
		}
		want := cvtest.Run(t, "outputs = [cv2.cvtColor(inputs[0], cv2."+code+")]", cvtest.FromTensor(t, in.Sample(0)))[0].Data
		outs, err := exec(h, imgproc.Grayscale, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := outs[0].Sample(0).Span(); !bytes.Equal(got, want) {
			diff := 0
			for i := range got {
				if got[i] != want[i] {
					diff++
				}
			}
			t.Errorf("%d channels: %d of %d pixels differ from OpenCV's", c, diff, len(got))
		}
	}
}
