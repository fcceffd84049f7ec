package image_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	stdimage "image"
	"image/color"
	"image/color/palette"
	"image/jpeg"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

var operatorNames = []string{
	"image.Adjust", "image.Crop", "image.Decode", "image.Encode", "image.Flip", "image.Gamma",
	"image.Grayscale", "image.Invert", "image.Read", "image.Resize", "image.ToFloat", "image.Write",
}

func TestInfo(t *testing.T) {
	info := image.New().Info()
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	if info.ID != image.ID || info.Version.String() != "1.2.0" {
		t.Errorf("ID %q version %v, want %q 1.2.0", info.ID, info.Version, image.ID)
	}
	var names []string
	for _, s := range info.Operators {
		names = append(names, s.Name)
		if s.Doc == "" {
			t.Errorf("%s has no Doc", s.Name)
		}
		if !slices.Equal(s.Devices, []schema.Device{schema.CPU}) {
			t.Errorf("%s devices %v, want cpu", s.Name, s.Devices)
		}
		for _, a := range s.Args {
			if a.Doc == "" {
				t.Errorf("%s argument %q has no Doc", s.Name, a.Name)
			}
		}
		for _, in := range s.Inputs {
			if in.Doc == "" {
				t.Errorf("%s input %q has no Doc", s.Name, in.Name)
			}
		}
		for _, out := range s.Outputs {
			if out.Doc == "" {
				t.Errorf("%s output %q has no Doc", s.Name, out.Name)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, operatorNames) {
		t.Errorf("operators %v, want %v", names, operatorNames)
	}
	// Schemas survive JSON, as pipeline files and the CLI carry them.
	var back schema.Plugin
	if err := json.Unmarshal(must(json.Marshal(info)), &back); err != nil {
		t.Fatal(err)
	}
	if d := info.Diff(back); d != "" {
		t.Errorf("Info differs after a JSON round trip: %s", d)
	}
	for i := range back.Operators {
		for j, a := range back.Operators[i].Args {
			if !reflect.DeepEqual(a.Default, info.Operators[i].Args[j].Default) {
				t.Errorf("%s argument %q: default %#v after JSON, %#v before", back.Operators[i].Name, a.Name, a.Default, info.Operators[i].Args[j].Default)
			}
		}
	}
	// Info is the same every time, and what the caller does to it stays
	// with the caller.
	info.Operators[0].Args = nil
	if d := image.New().Info().Diff(image.New().Info()); d != "" {
		t.Errorf("Info differs between calls: %s", d)
	}
	if len(image.New().Info().Operators[0].Args) == 0 {
		t.Error("modifying one Info's schemas changed the next Info")
	}
}

func TestRegistered(t *testing.T) {
	if !slices.ContainsFunc(plugin.Registered(), func(p plugin.Plugin) bool { return p.Info().ID == image.ID }) {
		t.Fatalf("%s is not registered by the package's init", image.ID)
	}
	h := openHost(t)
	var names []string
	for _, e := range h.Operators().List() {
		if e.Plugin != image.ID {
			t.Errorf("operator %s provided by %q, want %q", e.Schema.Name, e.Plugin, image.ID)
		}
		names = append(names, e.Schema.Name)
	}
	if !slices.Equal(names, operatorNames) {
		t.Errorf("host lists %v, want %v", names, operatorNames)
	}
}

// Every operator can be instantiated: Start registers what Info
// declares, schemas equal.
func TestRegisterAll(t *testing.T) {
	h := openHost(t)
	args := map[string]schema.Args{
		"image.Read":   {"paths": []string{}},
		"image.Write":  {"dir": t.TempDir(), "names": []string{}},
		"image.Crop":   {"width": 1, "height": 1},
		"image.Resize": {"width": 1, "height": 1},
	}
	for _, name := range operatorNames {
		inst := newOp(t, h, name, args[name])
		if inst.Plugin() != image.ID || inst.Device() != schema.CPU {
			t.Errorf("%s: plugin %q device %s", name, inst.Plugin(), inst.Device())
		}
	}
}

func TestLazyStart(t *testing.T) {
	h := openHost(t)
	state := func() dynop.State {
		t.Helper()
		return must(h.Plugin(image.ID)).State
	}
	if s := state(); s != dynop.StateAvailable {
		t.Fatalf("before NewOperator: %v, want available", s)
	}
	a := newOp(t, h, "image.Grayscale", nil)
	if s := state(); s != dynop.StateStarted {
		t.Fatalf("after NewOperator: %v, want started", s)
	}
	b := newOp(t, h, "image.ToFloat", nil)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != dynop.StateStarted {
		t.Fatalf("with one instance open: %v, want started", s)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != dynop.StateAvailable {
		t.Fatalf("after closing the last instance: %v, want available", s)
	}
	// And it starts again.
	outs := run(t, h, "image.ToFloat", schema.Args{"scale": 2}, batch(t, sample(t, "", []uint8{3}, 1)))
	wantValues(t, outs[0].Sample(0), []float32{6})
	if st := must(h.Plugin(image.ID)); st.Starts != 2 || st.Stops != 1 {
		t.Errorf("starts %d stops %d, want 2 and 1", st.Starts, st.Stops)
	}
}

func TestGrayscaleUint8(t *testing.T) {
	h := openHost(t)
	// red, green, blue, white, black, and a mixture
	rgb := []uint8{255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 10, 20, 30}
	// BT.601 in 15-bit fixed point, as OpenCV's cvtColor:
	// (9798*255+16384)>>15 = 76, (19235*255+16384)>>15 = 150,
	// (3735*255+16384)>>15 = 29, 255, 0, and
	// (97980+384700+112050+16384)>>15 = 18: each the exact luma rounded
	// (76.2, 149.7, 29.1, 18.2), where 8-bit coefficients gave 77 and 149.
	want := []uint8{76, 150, 29, 255, 0, 18}
	outs := run(t, h, "image.Grayscale", nil, batch(t, sample(t, "HWC", rgb, 2, 3, 3)))
	wantShape(t, outs[0].Sample(0), "HWC", 2, 3, 1)
	wantValues(t, outs[0].Sample(0), want)

	// RGBA: alpha is ignored, whatever it is.
	var rgba []uint8
	for i := 0; i < len(rgb); i += 3 {
		rgba = append(rgba, rgb[i], rgb[i+1], rgb[i+2], uint8(i*13))
	}
	outs = run(t, h, "image.Grayscale", nil, batch(t, sample(t, "HWC", rgba, 3, 2, 4)))
	wantShape(t, outs[0].Sample(0), "HWC", 3, 2, 1)
	wantValues(t, outs[0].Sample(0), want)
}

func TestGrayscaleFloat32(t *testing.T) {
	h := openHost(t)
	rgb := []float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0.5, 0.25, 1}
	r, g, b := float32(0.299), float32(0.587), float32(0.114)
	// Products with 1, 0, 0.5 and 0.25 are exact; the sums round to
	// float32 left to right.
	want := []float32{r, g, b, 0, (r/2 + g/4) + b}
	outs := run(t, h, "image.Grayscale", nil, batch(t, sample(t, "HWC", rgb, 1, 5, 3)))
	got := values[float32](t, outs[0].Sample(0))
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// White is 1 up to float32 rounding.
	outs = run(t, h, "image.Grayscale", nil, batch(t, sample(t, "HWC", []float32{1, 1, 1, 0.7}, 1, 1, 4)))
	if y := values[float32](t, outs[0].Sample(0))[0]; y != (r+g)+b || math.Abs(float64(y)-1) > 1e-6 {
		t.Errorf("white: %v, want %v", y, (r+g)+b)
	}
}

func TestGrayscaleBadChannels(t *testing.T) {
	h := openHost(t)
	ok := sample(t, "HWC", make([]uint8, 3), 1, 1, 3)
	for _, c := range []int64{2, 5} {
		bad := sample(t, "HWC", make([]uint8, c), 1, 1, c)
		err := runErr(t, h, "image.Grayscale", nil, batch(t, ok, bad))
		wantErr(t, err, op.ErrInput, "sample 1", string(rune('0'+c))+" channels")
	}
	// Other dtypes are refused by the schema.
	err := runErr(t, h, "image.Grayscale", nil, batch(t, sample(t, "HWC", make([]int32, 3), 1, 1, 3)))
	wantErr(t, err, op.ErrInput, "int32")
}

func TestCrop(t *testing.T) {
	h := openHost(t)
	const H, W, C = 4, 5, 3
	src := make([]uint16, H*W*C)
	for i := range src {
		y, x, c := i/(W*C), i/C%W, i%C
		src[i] = uint16(100*y + 10*x + c)
	}
	outs := run(t, h, "image.Crop", schema.Args{"x": 1, "y": 2, "width": 3, "height": 2}, batch(t, sample(t, "HWC", src, H, W, C)))
	wantShape(t, outs[0].Sample(0), "HWC", 2, 3, 3)
	wantValues(t, outs[0].Sample(0), []uint16{
		210, 211, 212, 220, 221, 222, 230, 231, 232,
		310, 311, 312, 320, 321, 322, 330, 331, 332,
	})
	// The whole image, from a strided view (CHW permuted to HWC).
	chw := make([]float32, C*H*W)
	for i := range chw {
		c, y, x := i/(H*W), i/W%H, i%W
		chw[i] = float32(100*y + 10*x + c)
	}
	view := must(sample(t, "CHW", chw, C, H, W).Permute(1, 2, 0))
	outs = run(t, h, "image.Crop", schema.Args{"width": W, "height": H}, batch(t, view))
	wantShape(t, outs[0].Sample(0), "HWC", H, W, C)
	for i, v := range values[float32](t, outs[0].Sample(0)) {
		if want := float32(src[i]); v != want {
			t.Fatalf("element %d: %v, want %v", i, v, want)
		}
	}
}

func TestCropOutside(t *testing.T) {
	h := openHost(t)
	fits := sample(t, "HWC", make([]uint8, 4*6*1), 4, 6, 1)
	small := sample(t, "HWC", make([]uint8, 3*3*1), 3, 3, 1)
	err := runErr(t, h, "image.Crop", schema.Args{"x": 3, "y": 1, "width": 3, "height": 2}, batch(t, fits, small))
	wantErr(t, err, op.ErrInput, "sample 1", "x=3 y=1 width=3 height=2", "3x3")
	// Sizes that would overflow x+width.
	err = runErr(t, h, "image.Crop", schema.Args{"x": math.MaxInt64, "width": math.MaxInt64, "height": 1}, batch(t, fits))
	wantErr(t, err, op.ErrInput, "sample 0", "6x4")
	// A negative corner or an empty box is refused before anything runs.
	_, err = h.NewOperator(context.Background(), "image.Crop", schema.Args{"x": -1, "width": 1, "height": 1})
	wantErr(t, err, schema.ErrArgument, `"x"`, "minimum")
	_, err = h.NewOperator(context.Background(), "image.Crop", schema.Args{"width": 0, "height": 1})
	wantErr(t, err, schema.ErrArgument, `"width"`, "minimum")
}

func TestResizeIdentity(t *testing.T) {
	h := openHost(t)
	img := hwc(testImage(5, 3, true), 4)
	outs := run(t, h, "image.Resize", schema.Args{"width": 5, "height": 3}, batch(t, sample(t, "HWC", img, 3, 5, 4)))
	wantShape(t, outs[0].Sample(0), "HWC", 3, 5, 4)
	wantValues(t, outs[0].Sample(0), img)

	f := []float32{0.1, float32(math.Inf(1)), -3, float32(math.NaN()), 7, 8}
	outs = run(t, h, "image.Resize", schema.Args{"width": 3, "height": 2}, batch(t, sample(t, "HWC", f, 2, 3, 1)))
	for i, v := range values[float32](t, outs[0].Sample(0)) {
		if v != f[i] && !(math.IsNaN(float64(v)) && math.IsNaN(float64(f[i]))) {
			t.Errorf("element %d: %v, want %v", i, v, f[i])
		}
	}
}

func TestResizeUpscale(t *testing.T) {
	h := openHost(t)
	// Output column x samples (x+0.5)*2/4 - 0.5: -0.25 (clamped to 0),
	// 0.25, 0.75, 1.25 (clamped to 1); rows likewise. So row 0 of
	// [[0 40] [80 120]] is 0, 10, 30, 40; the rows are those of the
	// columns at fractions 0, 0.25, 0.75 and 1 of the way down.
	want := []float32{
		0, 10, 30, 40,
		20, 30, 50, 60,
		60, 70, 90, 100,
		80, 90, 110, 120,
	}
	out := run(t, h, "image.Resize", schema.Args{"width": 4, "height": 4},
		batch(t, sample(t, "HWC", []float32{0, 40, 80, 120}, 2, 2, 1)))[0].Sample(0)
	wantShape(t, out, "HWC", 4, 4, 1)
	wantValues(t, out, want)

	want8 := make([]uint8, len(want))
	for i, v := range want {
		want8[i] = uint8(v)
	}
	out = run(t, h, "image.Resize", schema.Args{"width": 4, "height": 4},
		batch(t, sample(t, "HWC", []uint8{0, 40, 80, 120}, 2, 2, 1)))[0].Sample(0)
	wantValues(t, out, want8)

	// Two channels resize independently; uint8 rounds half up: between 0
	// and 1 at 0.25 and 0.75 is 0.25 -> 0 and 0.75 -> 1.
	out = run(t, h, "image.Resize", schema.Args{"width": 4, "height": 1},
		batch(t, sample(t, "HWC", []uint8{0, 200, 1, 100}, 1, 2, 2)))[0].Sample(0)
	wantShape(t, out, "HWC", 1, 4, 2)
	wantValues(t, out, []uint8{0, 200, 0, 175, 1, 125, 1, 100})
}

func TestResizeDownscaleConstant(t *testing.T) {
	h := openHost(t)
	const H, W = 7, 5
	u := slices.Repeat([]uint8{123, 7, 250}, H*W)
	f := slices.Repeat([]float32{0.3}, H*W)
	outs := run(t, h, "image.Resize", schema.Args{"width": 2, "height": 3},
		batch(t, sample(t, "HWC", u, H, W, 3)))
	wantShape(t, outs[0].Sample(0), "HWC", 3, 2, 3)
	wantValues(t, outs[0].Sample(0), slices.Repeat([]uint8{123, 7, 250}, 6))
	outs = run(t, h, "image.Resize", schema.Args{"width": 3, "height": 4},
		batch(t, sample(t, "HWC", f, H, W, 1)))
	wantValues(t, outs[0].Sample(0), slices.Repeat([]float32{0.3}, 12))
}

func TestResizeBadArgs(t *testing.T) {
	h := openHost(t)
	ctx := context.Background()
	_, err := h.NewOperator(ctx, "image.Resize", schema.Args{"width": 0, "height": 4})
	wantErr(t, err, schema.ErrArgument, `"width"`, "minimum")
	_, err = h.NewOperator(ctx, "image.Resize", schema.Args{"width": 4})
	wantErr(t, err, schema.ErrArgument, `"height"`, "required")
	_, err = h.NewOperator(ctx, "image.Resize", schema.Args{"width": 70000, "height": 1})
	wantErr(t, err, schema.ErrArgument, `"width"`, "maximum")
	_, err = h.NewOperator(ctx, "image.Resize", schema.Args{"width": 65536, "height": 65536})
	wantErr(t, err, schema.ErrArgument, "65536", "pixels")
	// An empty image cannot be resampled.
	err = runErr(t, h, "image.Resize", schema.Args{"width": 2, "height": 2},
		batch(t, sample(t, "HWC", []uint8{1}, 1, 1, 1), sample(t, "HWC", []uint8{}, 0, 3, 1)))
	wantErr(t, err, op.ErrInput, "sample 1", "empty")
	// Within the pixel limit, but too many elements.
	err = runErr(t, h, "image.Resize", schema.Args{"width": 16384, "height": 16384},
		batch(t, sample(t, "HWC", make([]uint8, 5), 1, 1, 5)))
	wantErr(t, err, op.ErrInput, "sample 0", "5 channels")
}

func TestToFloat(t *testing.T) {
	h := openHost(t)
	in := batch(t, sample(t, "HWC", []uint8{0, 51, 255, 1, 2, 3}, 2, 3, 1))
	out := run(t, h, "image.ToFloat", nil, in)[0].Sample(0)
	wantShape(t, out, "HWC", 2, 3, 1)
	if out.DType() != tensor.Float32 {
		t.Fatalf("dtype %v", out.DType())
	}
	wantValues(t, out, []float32{0, 0.2, 1, 1.0 / 255, 2.0 / 255, 3.0 / 255})

	out = run(t, h, "image.ToFloat", schema.Args{"scale": 0.5}, in)[0].Sample(0)
	wantValues(t, out, []float32{0, 25.5, 127.5, 0.5, 1, 1.5})

	// Any shape, and strided views: the transpose of [[1 2 3] [4 5 6]].
	x := must(sample(t, "", []uint8{1, 2, 3, 4, 5, 6}, 2, 3).Permute(1, 0))
	out = run(t, h, "image.ToFloat", schema.Args{"scale": -1}, batch(t, x))[0].Sample(0)
	wantShape(t, out, "", 3, 2)
	wantValues(t, out, []float32{-1, -4, -2, -5, -3, -6})
}

func TestReadDecode(t *testing.T) {
	h := openHost(t)
	dir := t.TempDir()
	a, b := testImage(7, 5, false), testImage(3, 4, true)
	paths := []string{writePNG(t, dir, "a.png", a), writePNG(t, dir, "b.png", b)}

	data := run(t, h, "image.Read", schema.Args{"paths": paths})[0]
	for i, p := range paths {
		want := must(os.ReadFile(p))
		wantShape(t, data.Sample(i), "", int64(len(want)))
		wantValues(t, data.Sample(i), want)
	}
	for _, c := range []int{1, 3, 4} {
		imgs := run(t, h, "image.Decode", schema.Args{"channels": c}, data)[0]
		wantShape(t, imgs.Sample(0), "HWC", 5, 7, int64(c))
		wantShape(t, imgs.Sample(1), "HWC", 4, 3, int64(c))
		wantValues(t, imgs.Sample(0), hwc(a, c))
		wantValues(t, imgs.Sample(1), hwc(b, c))
	}
}

func TestReadErrors(t *testing.T) {
	h := openHost(t)
	dir := t.TempDir()
	ok := writePNG(t, dir, "ok.png", testImage(2, 2, false))
	missing := filepath.Join(dir, "missing.png")
	err := runErr(t, h, "image.Read", schema.Args{"paths": []string{ok, missing}})
	wantErr(t, err, fs.ErrNotExist, "file 1", missing)
	err = runErr(t, h, "image.Read", schema.Args{"paths": []string{dir}})
	wantErr(t, err, schema.ErrArgument, "file 0", dir, "not a regular file")

	// The file changes between Setup and Run.
	ctx := context.Background()
	for _, size := range []int{1, 1000} {
		inst := newOp(t, h, "image.Read", schema.Args{"paths": []string{ok}})
		descs := must(inst.Setup(nil))
		outs := []*tensor.Batch{must(descs[0].Alloc())}
		if err := os.WriteFile(ok, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		wantErr(t, inst.Run(ctx, outs, nil), image.ErrChanged, "file 0", ok, "bytes in Setup")
	}
}

// Decode handles what the PNG decoder returns for every colour type.
func TestDecodePNGKinds(t *testing.T) {
	h := openHost(t)
	const W, H = 6, 4
	r := stdimage.Rect(0, 0, W, H)
	gray, gray16 := stdimage.NewGray(r), stdimage.NewGray16(r)
	pal := stdimage.NewPaletted(r, palette.WebSafe)
	rgba, nrgba64 := stdimage.NewRGBA(r), stdimage.NewNRGBA64(r)
	for y := range H {
		for x := range W {
			gray.SetGray(x, y, color.Gray{uint8(40*x + y)})
			gray16.SetGray16(x, y, color.Gray16{uint16(9000*x + 77*y)})
			pal.SetColorIndex(x, y, uint8((37*x+11*y)%len(palette.WebSafe)))
			rgba.SetRGBA(x, y, color.RGBA{uint8(40 * x), uint8(60 * y), 9, 255})
			nrgba64.SetNRGBA64(x, y, color.NRGBA64{uint16(9000 * x), uint16(300 * y), 65535, 65535})
		}
	}
	for _, img := range []stdimage.Image{gray, gray16, pal, rgba, nrgba64} {
		data := encoded(t, pngBytes(t, img))
		for _, c := range []int{1, 3, 4} {
			out := run(t, h, "image.Decode", schema.Args{"channels": c}, data)[0].Sample(0)
			if got, want := values[uint8](t, out), hwc(img, c); !slices.Equal(got, want) {
				t.Errorf("%T, %d channels: got %v, want %v", img, c, got, want)
			}
		}
	}
}

func TestEncodeDecodePNG(t *testing.T) {
	h := openHost(t)
	src := testImage(6, 5, true)
	for _, c := range []int{1, 3, 4} {
		pix := hwc(src, c)
		// A strided view too: the image inside a border.
		framed := make([]uint8, 7*8*c)
		big := sample(t, "HWC", framed, 7, 8, int64(c))
		inner := must(big.Crop([]int64{1, 1, 0}, []int64{5, 6, int64(c)}))
		if err := inner.CopyFrom(sample(t, "HWC", pix, 5, 6, int64(c))); err != nil {
			t.Fatal(err)
		}
		in := batch(t, sample(t, "HWC", pix, 5, 6, int64(c)), inner)
		enc := run(t, h, "image.Encode", nil, in)[0]
		for i := range 2 {
			if b := values[uint8](t, enc.Sample(i)); !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Fatalf("%d channels, sample %d: not a PNG: % x", c, i, b[:min(len(b), 8)])
			}
		}
		dec := run(t, h, "image.Decode", schema.Args{"channels": c}, enc)[0]
		for i := range 2 {
			wantShape(t, dec.Sample(i), "HWC", 5, 6, int64(c))
			wantValues(t, dec.Sample(i), pix)
		}
	}
}

func TestEncodeDecodeJPEG(t *testing.T) {
	h := openHost(t)
	src := smoothImage(32, 24)
	for _, c := range []int{1, 3, 4} {
		pix := hwc(src, c)
		enc := run(t, h, "image.Encode", schema.Args{"format": "jpeg", "quality": 95},
			batch(t, sample(t, "HWC", pix, 24, 32, int64(c))))[0]
		data := values[uint8](t, enc.Sample(0))
		if !bytes.HasPrefix(data, []byte{0xff, 0xd8}) {
			t.Fatalf("%d channels: not a JPEG: % x", c, data[:min(len(data), 4)])
		}
		cfg := must(jpeg.DecodeConfig(bytes.NewReader(data)))
		if cfg.Width != 32 || cfg.Height != 24 {
			t.Fatalf("%d channels: JPEG is %dx%d", c, cfg.Width, cfg.Height)
		}
		out := c
		if c == 4 {
			out = 3 // JPEG has no alpha
		}
		dec := values[uint8](t, run(t, h, "image.Decode", schema.Args{"channels": out}, enc)[0].Sample(0))
		want := hwc(src, out)
		var sum float64
		for i := range want {
			sum += math.Abs(float64(dec[i]) - float64(want[i]))
		}
		if mae := sum / float64(len(want)); mae > 2 {
			t.Errorf("%d channels: mean absolute error %.2f, want at most 2", c, mae)
		}
	}
	// Quality makes a difference.
	pix := batch(t, sample(t, "HWC", hwc(testImage(32, 32, false), 3), 32, 32, 3))
	lo := run(t, h, "image.Encode", schema.Args{"format": "jpeg", "quality": 5}, pix)[0].Sample(0)
	hi := run(t, h, "image.Encode", schema.Args{"format": "jpeg", "quality": 100}, pix)[0].Sample(0)
	if lo.Shape()[0] >= hi.Shape()[0] {
		t.Errorf("quality 5 gives %d bytes, quality 100 %d", lo.Shape()[0], hi.Shape()[0])
	}
}

func TestEncodeErrors(t *testing.T) {
	h := openHost(t)
	for _, c := range []int64{2, 5} {
		err := runErr(t, h, "image.Encode", nil, batch(t, sample(t, "HWC", make([]uint8, 4*c), 2, 2, c)))
		wantErr(t, err, op.ErrInput, "sample 0", string(rune('0'+c))+" channels")
	}
	err := runErr(t, h, "image.Encode", nil, batch(t, sample(t, "HWC", []uint8{}, 0, 4, 3)))
	wantErr(t, err, image.ErrEncode, "sample 0", "4x0", "png")
	_, err = h.NewOperator(context.Background(), "image.Encode", schema.Args{"format": "gif"})
	wantErr(t, err, schema.ErrArgument, `"format"`, "gif")
	_, err = h.NewOperator(context.Background(), "image.Encode", schema.Args{"quality": 101})
	wantErr(t, err, schema.ErrArgument, `"quality"`, "maximum")
}

func TestDecodeCorrupt(t *testing.T) {
	h := openHost(t)
	good := pngBytes(t, testImage(4, 4, false))
	err := runErr(t, h, "image.Decode", nil, encoded(t, good, []byte("GIF89a, or rather not")))
	wantErr(t, err, image.ErrDecode, "sample 1", "not PNG or JPEG", "47 49 46")
	err = runErr(t, h, "image.Decode", nil, encoded(t, good, []byte{}))
	wantErr(t, err, image.ErrDecode, "sample 1", "0 bytes")

	// A broken header fails in Setup ...
	broken := slices.Clone(good)
	copy(broken[12:16], "XXXX") // the IHDR chunk's type
	err = runErr(t, h, "image.Decode", nil, encoded(t, good, broken))
	wantErr(t, err, image.ErrDecode, "setup: sample 1: cannot decode image (png): png: invalid format")
	err = runErr(t, h, "image.Decode", nil, encoded(t, []byte{0xff, 0xd8, 0xff, 0x00}))
	wantErr(t, err, image.ErrDecode, "setup: cannot decode image (jpeg): ") // one sample: no index

	// ... broken pixel data in Run, with the decoder's message.
	truncated := good[:len(good)-20]
	err = runErr(t, h, "image.Decode", nil, encoded(t, good, truncated))
	wantErr(t, err, image.ErrDecode, "sample 1", "png", "unexpected EOF")

	// A header announcing an absurd image allocates nothing.
	huge := pngBytes(t, stdimage.NewGray(stdimage.Rect(0, 0, 1, 1)))
	ihdr := huge[12:29]                              // chunk type, 13 bytes of data, then the CRC
	copy(ihdr[4:12], []byte{0, 1, 0, 0, 0, 1, 0, 0}) // 65536 x 65536
	binary.BigEndian.PutUint32(huge[29:33], crc32.ChecksumIEEE(ihdr))
	_, err = newOp(t, h, "image.Decode", nil).Setup([]*tensor.Batch{encoded(t, huge, good)})
	wantErr(t, err, op.ErrInput, "sample 0: invalid operator input: a 65536x65536 image has 4294967296 pixels")
}

func TestWrite(t *testing.T) {
	h := openHost(t)
	dir := filepath.Join(t.TempDir(), "new", "dir")
	pix := batch(t,
		sample(t, "HWC", hwc(testImage(3, 2, true), 4), 2, 3, 4),
		sample(t, "HWC", hwc(testImage(5, 1, false), 3), 1, 5, 3))
	enc := run(t, h, "image.Encode", nil, pix)[0]
	outs := run(t, h, "image.Write", schema.Args{"dir": dir, "names": []string{"a.png", "b.png"}}, enc)
	if len(outs) != 0 {
		t.Errorf("Write has %d outputs", len(outs))
	}
	for i, name := range []string{"a.png", "b.png"} {
		got := must(os.ReadFile(filepath.Join(dir, name)))
		if want := values[uint8](t, enc.Sample(i)); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes differ from the %d encoded", name, len(got), len(want))
		}
	}
	// Overwriting works, and leaves no temporary files behind.
	run(t, h, "image.Write", schema.Args{"dir": dir, "names": []string{"b.png", "a.png"}}, enc)
	got := must(os.ReadFile(filepath.Join(dir, "a.png")))
	if !bytes.Equal(got, values[uint8](t, enc.Sample(1))) {
		t.Error("a.png was not overwritten")
	}
	entries := must(os.ReadDir(dir))
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries, want 2: %v", len(entries), entries)
	}
	// And the files read back.
	back := run(t, h, "image.Read", schema.Args{"paths": []string{filepath.Join(dir, "b.png")}})[0]
	wantValues(t, run(t, h, "image.Decode", schema.Args{"channels": 4}, back)[0].Sample(0), hwc(testImage(3, 2, true), 4))
}

func TestWriteErrors(t *testing.T) {
	h := openHost(t)
	dir := t.TempDir()
	for _, name := range []string{"a/b.png", "..", ".", "", `a\b`} {
		_, err := h.NewOperator(context.Background(), "image.Write", schema.Args{"dir": dir, "names": []string{"ok.png", name}})
		wantErr(t, err, schema.ErrArgument, `"names"`, "element 1", "want a plain file name")
	}
	_, err := h.NewOperator(context.Background(), "image.Write", schema.Args{"dir": dir, "names": []string{"x", "x"}})
	wantErr(t, err, schema.ErrArgument, `"names"`, `both "x"`)
	_, err = h.NewOperator(context.Background(), "image.Write", schema.Args{"dir": "", "names": []string{"x"}})
	wantErr(t, err, schema.ErrArgument, `"dir"`, "empty")
	_, err = h.NewOperator(context.Background(), "image.Write", schema.Args{"names": []string{"x"}})
	wantErr(t, err, schema.ErrArgument, `"dir"`, "required")

	data := encoded(t, []byte("one"), []byte("two"))
	err = runErr(t, h, "image.Write", schema.Args{"dir": dir, "names": []string{"only.bin"}}, data)
	wantErr(t, err, op.ErrInput, "2 samples", "1 names")
	if _, err := os.Stat(filepath.Join(dir, "only.bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("only.bin was written: %v", err)
	}
	// A directory where the file should go.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = runErr(t, h, "image.Write", schema.Args{"dir": dir, "names": []string{"a", "sub"}}, data)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("sample 1")) {
		t.Errorf("writing over a directory: %v, want an error naming sample 1", err)
	}
	entries := must(os.ReadDir(dir))
	if len(entries) != 2 { // a and sub: no temporary file left behind
		t.Errorf("dir holds %v, want a and sub", entries)
	}
}

// cancelAfter is a context whose Err reports cancellation after n calls.
type cancelAfter struct {
	context.Context
	n atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCancelBetweenSamples(t *testing.T) {
	h := openHost(t)
	in := batch(t,
		sample(t, "HWC", []uint8{255, 255, 255}, 1, 1, 3),
		sample(t, "HWC", []uint8{255, 255, 255}, 1, 1, 3))
	inst := newOp(t, h, "image.Grayscale", nil)
	descs := must(inst.Setup([]*tensor.Batch{in}))
	outs := []*tensor.Batch{must(descs[0].Alloc())}
	// The instance checks once, the operator before each sample: the
	// second sample is never computed.
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(2)
	err := inst.Run(ctx, outs, []*tensor.Batch{in})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	wantValues(t, outs[0].Sample(1), []uint8{0})
}

// Outputs passed to Run must be compact: the Instance refuses a strided
// view before the operator sees it.
func TestStridedOutput(t *testing.T) {
	h := openHost(t)
	in := batch(t, sample(t, "HWC", []uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3))
	inst := newOp(t, h, "image.ToFloat", schema.Args{"scale": 1})
	must(inst.Setup([]*tensor.Batch{in}))
	big := sample(t, "HWC", make([]float32, 2*4*3), 2, 4, 3)
	view := must(big.Crop([]int64{0, 1, 0}, []int64{2, 2, 3}))
	if view.IsContiguous() {
		t.Fatal("the view is contiguous; the test needs a strided one")
	}
	err := inst.Run(context.Background(), []*tensor.Batch{batch(t, view)}, []*tensor.Batch{in})
	if !errors.Is(err, op.ErrInput) || !strings.Contains(err.Error(), "not contiguous") {
		t.Fatalf("Run with a strided output: %v", err)
	}
}

// TestDecodeErrorThroughGraph: a decode failure in a graph names each
// thing once, from the outside in: the node, the operator and its plugin,
// the step, the sample (in a batch of more than one), what went wrong;
// and the errors stay testable.
func TestDecodeErrorThroughGraph(t *testing.T) {
	ctx := context.Background()
	h := openHost(t)
	g := graph.New("g")
	in, err := g.AddInput("files")
	if err != nil {
		t.Fatal(err)
	}
	dec, err := g.AddNode("decode", "image.Decode", nil, in.Out(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.AddOutput("pixels", dec.Out(0)); err != nil {
		t.Fatal(err)
	}
	if err := graph.Build(ctx, g, graph.BuildOptions{Operators: h.Operators(), Default: graph.OperatorPopulate()}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	good, garbage := pngBytes(t, testImage(4, 4, false)), []byte("garbage")
	const (
		node  = `graph: node "decode" (operator image.Decode, plugin dynop.plugin.image): `
		wrong = `cannot decode image: not PNG or JPEG: 7 bytes starting 67 61 72 62 61 67 65`
	)
	for _, c := range []struct {
		name   string
		batch  *tensor.Batch
		want   string
		sample string // "" for none
	}{
		{"two samples", encoded(t, good, garbage), node + "setup: sample 1: " + wrong, "sample 1"},
		// A pipeline runs a failed batch again sample by sample, and names
		// the file: "sample 0" would say nothing.
		{"one sample", encoded(t, garbage), node + "setup: " + wrong, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.Execute(ctx, c.batch)
			wantErr(t, err, image.ErrDecode)
			if err == nil {
				return
			}
			if err.Error() != c.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, c.want)
			}
			var oe *op.Error
			if !errors.As(err, &oe) || oe.Operator != "image.Decode" || oe.Plugin != image.ID || oe.Step != "setup" {
				t.Errorf("errors.As op.Error: %+v", oe)
			}
			var se *op.SampleError
			if !errors.As(err, &se) || c.sample != "" && fmt.Sprintf("sample %d", se.Sample) != c.sample {
				t.Errorf("errors.As op.SampleError: %+v", se)
			}
			for _, name := range []string{"image.Decode", image.ID, "setup", "cannot decode image", c.sample} {
				if n := strings.Count(err.Error(), name); name != "" && n != 1 {
					t.Errorf("%q %d times in %q", name, n, err)
				}
			}
		})
	}
	// Outside a graph, the operator's own error names them, once.
	err = runErr(t, h, "image.Decode", nil, encoded(t, good, garbage))
	wantErr(t, err, image.ErrDecode, `op: operator "image.Decode" (plugin "dynop.plugin.image"): setup: sample 1: `+wrong)
}
