package image_test

import (
	"bytes"
	"context"
	"errors"
	stdimage "image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// openHost returns a host that knows only the image plugin. Closing it, at
// the end of the test, must succeed: every instance must have been closed.
func openHost(t *testing.T) *dynop.Host {
	t.Helper()
	return openHostB(t)
}

// openHostB is openHost for tests and benchmarks.
func openHostB(t testing.TB) *dynop.Host {
	t.Helper()
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{image.New()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("host Close: %v", err)
		}
	})
	return h
}

// newOp instantiates operator name, closed when the test ends (before the
// host closes) unless the test closed it already.
func newOp(t *testing.T, h *dynop.Host, name string, args schema.Args) *op.Instance {
	t.Helper()
	inst, err := h.NewOperator(context.Background(), name, args)
	if err != nil {
		t.Fatalf("NewOperator %s %v: %v", name, args, err)
	}
	t.Cleanup(func() {
		if err := inst.Close(); err != nil && !errors.Is(err, dynop.ErrClosed) {
			t.Errorf("%s Close: %v", name, err)
		}
	})
	return inst
}

// run instantiates operator name with args and executes it on inputs.
func run(t *testing.T, h *dynop.Host, name string, args schema.Args, inputs ...*tensor.Batch) []*tensor.Batch {
	t.Helper()
	outs, err := newOp(t, h, name, args).Exec(context.Background(), inputs...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return outs
}

// runErr is run for an operator expected to fail at Exec.
func runErr(t *testing.T, h *dynop.Host, name string, args schema.Args, inputs ...*tensor.Batch) error {
	t.Helper()
	_, err := newOp(t, h, name, args).Exec(context.Background(), inputs...)
	return err
}

var wantErr = testutil.WantErr

// must returns v, and panics if err is not nil: for calls a test expects
// to succeed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sample returns a tensor of data with the given shape and layout.
func sample[T tensor.Number](t *testing.T, layout string, data []T, shape ...int64) *tensor.Tensor {
	t.Helper()
	x := must(tensor.FromSlice(data, shape...))
	return must(x.WithLayout(layout))
}

// batch returns the batch of samples.
func batch(t *testing.T, samples ...*tensor.Tensor) *tensor.Batch {
	t.Helper()
	return must(tensor.NewBatch(samples...))
}

// values returns x's elements in row-major order.
func values[T tensor.Number](t *testing.T, x *tensor.Tensor) []T {
	t.Helper()
	return must(tensor.Values[T](must(x.Contiguous())))
}

// wantShape fails t unless x has the shape and layout.
func wantShape(t *testing.T, x *tensor.Tensor, layout string, shape ...int64) {
	t.Helper()
	if got := x.Shape(); !equal(got, shape) || x.Layout() != layout {
		t.Fatalf("got %v %q, want shape %v layout %q", got, x.Layout(), shape, layout)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wantValues fails t unless x's elements are want.
func wantValues[T tensor.Number](t *testing.T, x *tensor.Tensor, want []T) {
	t.Helper()
	if got := values[T](t, x); !equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// testImage returns a w x h NRGBA image whose colours vary with x and y;
// with alpha, alpha varies too, otherwise it is opaque.
func testImage(w, h int, alpha bool) *stdimage.NRGBA {
	m := stdimage.NewNRGBA(stdimage.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha {
				a = uint8(40 + 50*x + 30*y)
			}
			m.SetNRGBA(x, y, color.NRGBA{uint8(17 * x), uint8(31 * y), uint8(7*x + 11*y + 3), a})
		}
	}
	return m
}

// smoothImage returns a w x h opaque image of gentle gradients, which JPEG
// compresses well.
func smoothImage(w, h int) *stdimage.NRGBA {
	m := stdimage.NewNRGBA(stdimage.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetNRGBA(x, y, color.NRGBA{uint8(40 + 4*x), uint8(60 + 3*y), uint8(200 - 2*x - y), 255})
		}
	}
	return m
}

// hwc returns the pixels of img as HWC with c channels: 4 straight RGBA,
// 3 RGB, 1 luma after BT.601 in integers, as the package doc gives it.
func hwc(img stdimage.Image, c int) []uint8 {
	b := img.Bounds()
	var out []uint8
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			switch c {
			case 4:
				out = append(out, p.R, p.G, p.B, p.A)
			case 3:
				out = append(out, p.R, p.G, p.B)
			case 1:
				out = append(out, uint8((9798*uint32(p.R)+19235*uint32(p.G)+3735*uint32(p.B)+16384)>>15))
			}
		}
	}
	return out
}

// pngBytes returns img encoded as PNG.
func pngBytes(t *testing.T, img stdimage.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writePNG writes img as a PNG file name in dir and returns its path.
func writePNG(t *testing.T, dir, name string, img stdimage.Image) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pngBytes(t, img), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// encoded returns a batch of 1-D uint8 samples of each of data.
func encoded(t *testing.T, data ...[]byte) *tensor.Batch {
	t.Helper()
	samples := make([]*tensor.Tensor, len(data))
	for i, d := range data {
		samples[i] = must(tensor.FromSlice(d))
	}
	return batch(t, samples...)
}
