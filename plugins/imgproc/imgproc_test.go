package imgproc_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/tensor"
)

// run instantiates operator name on h, runs it on one batch and returns
// the output batch, closing the instance.
func run(t *testing.T, h *dynop.Host, name string, in *tensor.Batch) *tensor.Batch {
	t.Helper()
	inst, err := h.NewOperator(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	outs, err := inst.Exec(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return outs[0]
}

func randomImages[T uint8 | float32](t *testing.T, rng *rand.Rand, shapes [][]int64, gen func() T) *tensor.Batch {
	t.Helper()
	var samples []*tensor.Tensor
	for _, s := range shapes {
		data := make([]T, s[0]*s[1]*s[2])
		for i := range data {
			data[i] = gen()
		}
		x, err := tensor.FromSlice(data, s...)
		if err != nil {
			t.Fatal(err)
		}
		if x, err = x.WithLayout("HWC"); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, x)
	}
	b, err := tensor.NewBatch(samples...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNativeAndGoGrayscaleAgree runs the C operator imgproc.Grayscale and
// the Go operator image.Grayscale on the same batches, compact and
// cropped (strided), uint8 and float32, and wants identical bytes.
func TestNativeAndGoGrayscaleAgree(t *testing.T) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{image.New()}, Paths: []string{cbuild.Imgproc(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	if e, err := h.Operators().Lookup(imgproc.Grayscale); err != nil || e.Plugin != imgproc.PluginID {
		t.Fatalf("Lookup(%s) = %+v, %v", imgproc.Grayscale, e, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int64{{1, 1, 3}, {7, 13, 3}, {64, 33, 4}, {1, 1000, 4}}
	u8 := randomImages(t, rng, shapes, func() uint8 { return uint8(rng.IntN(256)) })
	f32 := randomImages(t, rng, shapes, func() float32 { return rng.Float32() * 255 })
	cropped := func(b *tensor.Batch) *tensor.Batch {
		var out []*tensor.Tensor
		for _, s := range b.Samples() {
			c, err := s.Crop([]int64{0, 0, 0}, []int64{s.Shape()[0], (s.Shape()[1] + 1) / 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		nb, err := tensor.NewBatch(out...)
		if err != nil {
			t.Fatal(err)
		}
		return nb
	}
	for _, c := range []struct {
		name  string
		batch *tensor.Batch
	}{{"uint8", u8}, {"float32", f32}, {"uint8 cropped", cropped(u8)}, {"float32 cropped", cropped(f32)}} {
		t.Run(c.name, func(t *testing.T) {
			native := run(t, h, imgproc.Grayscale, c.batch)
			goOut := run(t, h, "image.Grayscale", c.batch)
			if !slices.EqualFunc(native.Shapes(), goOut.Shapes(), slices.Equal) || native.DType() != goOut.DType() {
				t.Fatalf("native %v %v, Go %v %v", native.DType(), native.Shapes(), goOut.DType(), goOut.Shapes())
			}
			for i := range native.Len() {
				a, _ := native.Sample(i).Bytes()
				b, _ := goOut.Sample(i).Bytes()
				if !slices.Equal(a, b) {
					t.Errorf("sample %d (%v): native and Go grayscale differ", i, native.Sample(i).Shape())
				}
			}
		})
	}
	// Both plugins stopped with their last instance.
	for _, id := range []string{imgproc.PluginID, "dynop.plugin.image"} {
		if st, _ := h.Plugin(id); st.State != dynop.StateAvailable {
			t.Errorf("%s is %v after its instances closed", id, st.State)
		}
	}
	_, err = h.NewOperator(ctx, imgproc.Grayscale, op.Args{"sigma": 1})
	if err == nil {
		t.Error("an unknown argument was accepted")
	}
}
