package image_test

import (
	"context"
	"testing"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// benchOp sets name up once for a 1080p RGB uint8 image and measures Run.
func benchOp(b *testing.B, name string, args schema.Args) {
	h := openHostB(b)
	const H, W = 1080, 1920
	pix := make([]uint8, H*W*3)
	for i := range pix {
		pix[i] = uint8(i * 7)
	}
	x, err := tensor.FromSlice(pix, H, W, 3)
	if err != nil {
		b.Fatal(err)
	}
	in, err := tensor.NewBatch(x)
	if err != nil {
		b.Fatal(err)
	}
	inst, err := h.NewOperator(context.Background(), name, args)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inst.Close() })
	descs, err := inst.Setup([]*tensor.Batch{in})
	if err != nil {
		b.Fatal(err)
	}
	out, err := descs[0].Alloc()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(pix)))
	b.ReportAllocs()
	for b.Loop() {
		if err := inst.Run(context.Background(), []*tensor.Batch{out}, []*tensor.Batch{in}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrayscale(b *testing.B) { benchOp(b, "image.Grayscale", nil) }
func BenchmarkToFloat(b *testing.B)   { benchOp(b, "image.ToFloat", nil) }
func BenchmarkResizeHalf(b *testing.B) {
	benchOp(b, "image.Resize", schema.Args{"width": 960, "height": 540})
}
func BenchmarkCrop(b *testing.B) {
	benchOp(b, "image.Crop", schema.Args{"x": 100, "y": 100, "width": 1280, "height": 720})
}
func BenchmarkAdjust(b *testing.B) {
	benchOp(b, "image.Adjust", schema.Args{"contrast": 1.2, "brightness": 10})
}
func BenchmarkGamma(b *testing.B)  { benchOp(b, "image.Gamma", schema.Args{"gamma": 2.2}) }
func BenchmarkInvert(b *testing.B) { benchOp(b, "image.Invert", nil) }
