package tensor_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

func TestNewBatch(t *testing.T) {
	a := must(tensor.New(tensor.Uint8, 2, 3, 3))
	b := must(tensor.New(tensor.Uint8, 4, 1, 3))
	tests := []struct {
		samples []*tensor.Tensor
		uniform bool
		str     string
	}{
		{nil, true, "batch(0 samples)"},
		{[]*tensor.Tensor{a}, true, "batch(1 samples, uint8 cpu: [2 3 3])"},
		{[]*tensor.Tensor{a, a}, true, "batch(2 samples, uint8 cpu: [2 3 3] [2 3 3])"},
		{[]*tensor.Tensor{a, b}, false, "batch(2 samples, uint8 cpu: [2 3 3] [4 1 3])"},
		{[]*tensor.Tensor{a, b, a, b, a}, false,
			"batch(5 samples, uint8 cpu: [2 3 3] [4 1 3] [2 3 3] [4 1 3] ...)"},
	}
	for _, tt := range tests {
		batch := must(tensor.NewBatch(tt.samples...))
		if batch.Len() != len(tt.samples) || batch.IsUniform() != tt.uniform || batch.String() != tt.str {
			t.Errorf("NewBatch(%v): Len %d, IsUniform %v, String %q; want %q",
				tt.samples, batch.Len(), batch.IsUniform(), batch.String(), tt.str)
		}
		if !slices.Equal(batch.Samples(), tt.samples) {
			t.Errorf("NewBatch(%v).Samples() = %v", tt.samples, batch.Samples())
		}
	}

	samples := []*tensor.Tensor{a, b}
	batch := must(tensor.NewBatch(samples...))
	samples[0] = b
	if batch.Sample(0) != a {
		t.Error("NewBatch kept the caller's slice")
	}
	if batch.DType() != tensor.Uint8 || batch.NDim() != 3 || batch.Device() != cpu || batch.Layout() != "" {
		t.Errorf("batch %v: DType %v, NDim %d, Device %v, Layout %q",
			batch, batch.DType(), batch.NDim(), batch.Device(), batch.Layout())
	}
	shapes := batch.Shapes()
	if !slices.EqualFunc(shapes, [][]int64{{2, 3, 3}, {4, 1, 3}}, slices.Equal) {
		t.Errorf("Shapes() = %v", shapes)
	}
	shapes[0][0] = 100
	if a.Shape()[0] != 2 {
		t.Error("modifying Shapes() changed a sample")
	}

	empty := must(tensor.NewBatch())
	if empty.DType() != (tensor.DType{}) || empty.NDim() != 0 || empty.Device() != (tensor.Device{}) ||
		len(empty.Shapes()) != 0 {
		t.Errorf("empty batch: DType %v, NDim %d, Device %v", empty.DType(), empty.NDim(), empty.Device())
	}
}

func TestNewBatchErrors(t *testing.T) {
	u8 := must(tensor.New(tensor.Uint8, 2, 2, 3))
	f32 := must(tensor.New(tensor.Float32, 2, 2, 3))
	flat := must(tensor.New(tensor.Uint8, 12))
	hwc := must(u8.WithLayout("HWC"))
	buf := make([]byte, 12)
	gpu := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 12, cuda0, tensor.Uint8, []int64{2, 2, 3}, nil, 0))
	tests := []struct {
		samples []*tensor.Tensor
		want    string
	}{
		{[]*tensor.Tensor{nil}, "batch sample 0 is nil"},
		{[]*tensor.Tensor{u8, u8, nil}, "batch sample 2 is nil"},
		{[]*tensor.Tensor{u8, f32}, "batch sample 1 has dtype float32, sample 0 has uint8"},
		{[]*tensor.Tensor{u8, u8, flat}, "batch sample 2 has ndim 1, sample 0 has 3"},
		{[]*tensor.Tensor{u8, gpu}, "batch sample 1 has device cuda:0, sample 0 has cpu"},
		{[]*tensor.Tensor{hwc, hwc, hwc, u8}, `batch sample 3 has layout "", sample 0 has "HWC"`},
	}
	for _, tt := range tests {
		_, err := tensor.NewBatch(tt.samples...)
		wantErr(t, err, tt.want)
	}
}

func TestAlloc(t *testing.T) {
	batch := must(tensor.Alloc(tensor.Float32, "HWC", [][]int64{{2, 3, 1}, {4, 5, 1}}))
	if batch.Len() != 2 || batch.Layout() != "HWC" || batch.DType() != tensor.Float32 || batch.IsUniform() {
		t.Errorf("Alloc = %v", batch)
	}
	for i, s := range batch.Samples() {
		if !s.IsContiguous() || uintptr(s.Data())%64 != 0 {
			t.Errorf("sample %d: %v at %p is not a new tensor", i, s, s.Data())
		}
	}
	if s0, s1 := must(batch.Sample(0).Bytes()), must(batch.Sample(1).Bytes()); &s0[0] == &s1[0] {
		t.Error("Alloc's samples share memory")
	}
	empty := must(tensor.Alloc(tensor.Uint8, "", nil))
	if empty.Len() != 0 {
		t.Errorf("Alloc of no shapes = %v", empty)
	}

	_, err := tensor.Alloc(tensor.Uint8, "", [][]int64{{1, 2}, {1, 2}, {3}})
	wantErr(t, err, "batch sample 2 has shape [3], sample 0 has [1 2]: ndim differs")
	_, err = tensor.Alloc(tensor.Uint8, "HW", [][]int64{{1, 2, 3}})
	wantErr(t, err, `batch sample 0: layout "HW" names 2 dimensions, tensor has 3`)
	_, err = tensor.Alloc(tensor.Uint8, "", [][]int64{{1}, {-1}})
	wantErr(t, err, "batch sample 1: shape [-1] has negative dimension 0")
	_, err = tensor.Alloc(tensor.Uint8, "", [][]int64{{1 << 41}})
	wantErr(t, err, "batch sample 0: uint8 [2199023255552] needs 2199023255552 bytes, too large")
}

func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b, err := tensor.Random(rng, tensor.Float32, "HW", [][]int64{{3, 5}, {1, 7}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 2 || b.Layout() != "HW" || !slices.Equal(b.Sample(1).Shape(), []int64{1, 7}) {
		t.Fatalf("batch %v", b)
	}
	vs, _ := tensor.Values[float32](b.Sample(0))
	distinct := map[float32]bool{}
	for _, v := range vs {
		if v < 0 || v >= 1 {
			t.Errorf("float32 %v outside [0, 1)", v)
		}
		distinct[v] = true
	}
	if len(distinct) < 10 {
		t.Errorf("15 random floats with %d distinct values", len(distinct))
	}
	bools, err := tensor.Random(rng, tensor.Boolean, "", [][]int64{{64}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := bools.Sample(0).Bytes()
	ones := 0
	for _, v := range data {
		if v > 1 {
			t.Fatalf("bool byte %d", v)
		}
		ones += int(v)
	}
	if ones == 0 || ones == 64 {
		t.Errorf("64 random bools, %d true", ones)
	}
	u8, _ := tensor.Random(rng, tensor.Uint8, "", [][]int64{{13}})
	if data, _ := u8.Sample(0).Bytes(); slices.Equal(data, make([]byte, 13)) {
		t.Errorf("random bytes all zero")
	}
	_, err = tensor.Random(rng, tensor.Uint8, "HWC", [][]int64{{2, 2}})
	if err == nil {
		t.Errorf("a layout of 3 dimensions for 2-dimensional shapes")
	}
}
