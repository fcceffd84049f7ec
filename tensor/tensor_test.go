package tensor_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

var cuda0 = tensor.Device{Type: tensor.CUDA}

func TestNew(t *testing.T) {
	tests := []struct {
		dt      tensor.DType
		shape   []int64
		strides []int64
		nbytes  int64
	}{
		{tensor.Float32, nil, nil, 4},
		{tensor.Uint8, []int64{5}, []int64{1}, 5},
		{tensor.Float32, []int64{2, 3, 4}, []int64{12, 4, 1}, 96},
		{tensor.Int16, []int64{3, 0, 2}, []int64{2, 2, 1}, 0},
		{tensor.Float64, []int64{1, 1, 7}, []int64{7, 7, 1}, 56},
	}
	for _, tt := range tests {
		x, err := tensor.New(tt.dt, tt.shape...)
		if err != nil {
			t.Fatalf("New(%v, %v): %v", tt.dt, tt.shape, err)
		}
		if x.DType() != tt.dt || !slices.Equal(x.Shape(), tt.shape) || !slices.Equal(x.Strides(), tt.strides) {
			t.Errorf("New(%v, %v) = %v with strides %v, want strides %v", tt.dt, tt.shape, x, x.Strides(), tt.strides)
		}
		if x.NBytes() != tt.nbytes || x.NDim() != len(tt.shape) || x.Device().Type != tensor.CPU {
			t.Errorf("New(%v, %v): NBytes %d, NDim %d, device %v", tt.dt, tt.shape, x.NBytes(), x.NDim(), x.Device())
		}
		if !x.IsContiguous() || x.ByteOffset() != 0 {
			t.Errorf("New(%v, %v) is not contiguous from offset 0", tt.dt, tt.shape)
		}
		b := must(x.Bytes())
		if int64(len(b)) != tt.nbytes || slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) {
			t.Errorf("New(%v, %v) bytes %v, want %d zeros", tt.dt, tt.shape, b, tt.nbytes)
		}
	}
}

func TestNewAligned(t *testing.T) {
	for n := int64(1); n <= 300; n += 7 {
		x := must(tensor.New(tensor.Uint8, n))
		if p := uintptr(x.Data()); p%64 != 0 {
			t.Errorf("New(Uint8, %d) data at %#x, not 64-byte aligned", n, p)
		}
		if x.Data() != x.Base() {
			t.Errorf("New(Uint8, %d): Data %p, Base %p", n, x.Data(), x.Base())
		}
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		dt    tensor.DType
		shape []int64
		want  string
	}{
		{tensor.Float32, []int64{2, -3}, "shape [2 -3] has negative dimension 1"},
		{tensor.DType{Code: tensor.Float, Lanes: 1}, []int64{2}, "dtype dtype(code=2,bits=0,lanes=1) has no size"},
		{tensor.Float64, []int64{1 << 40, 8}, "float64 [1099511627776 8] needs 70368744177664 bytes, too large"},
		{tensor.Uint8, []int64{1<<40 + 1}, "too large"},
		{tensor.Uint8, []int64{1 << 62, 1 << 62}, "shape [4611686018427387904 4611686018427387904] has too many elements"},
		{tensor.Uint8, []int64{0, 1 << 62, 1 << 62}, "too many elements"},
		{tensor.Float64, []int64{1 << 62}, "float64 [4611686018427387904] has too many bytes"},
	}
	for _, tt := range tests {
		_, err := tensor.New(tt.dt, tt.shape...)
		wantErr(t, err, tt.want)
	}
}

func TestFromSliceSharesMemory(t *testing.T) {
	s := []float32{0, 1, 2, 3, 4, 5}
	x := must(tensor.FromSlice(s, 2, 3))
	if x.DType() != tensor.Float32 || !slices.Equal(x.Shape(), []int64{2, 3}) {
		t.Fatalf("FromSlice = %v", x)
	}
	v := must(tensor.Values[float32](x))
	v[4] = 40
	if s[4] != 40 {
		t.Errorf("writing Values did not change the slice: %v", s)
	}
	s[0] = -1
	if v[0] != -1 {
		t.Errorf("writing the slice did not change Values: %v", v)
	}
	if x.Data() != unsafe.Pointer(&s[0]) {
		t.Errorf("Data %p, slice at %p", x.Data(), &s[0])
	}

	flat := must(tensor.FromSlice([]int{1, 2, 3}))
	if !slices.Equal(flat.Shape(), []int64{3}) || flat.DType() != tensor.DTypeOf[int]() {
		t.Errorf("FromSlice without shape = %v", flat)
	}
	empty := must(tensor.FromSlice([]uint16{}, 0, 4))
	if empty.NumElements() != 0 || empty.Data() != nil {
		t.Errorf("FromSlice of no elements = %v with data %p", empty, empty.Data())
	}
}

func TestFromSliceErrors(t *testing.T) {
	_, err := tensor.FromSlice([]uint8{1, 2, 3, 4, 5}, 2, 3)
	wantErr(t, err, "shape [2 3] has 6 elements, slice has 5")
	_, err = tensor.FromSlice([]uint8{1, 2}, -1, -2)
	wantErr(t, err, "shape [-1 -2] has negative dimension 0")
	_, err = tensor.FromSlice([]uint8{1, 2}, 1<<62, 1<<62)
	wantErr(t, err, "too many elements")
}

func TestFromPointer(t *testing.T) {
	buf := make([]byte, 64)
	p := unsafe.Pointer(&buf[0])
	tests := []struct {
		name    string
		p       unsafe.Pointer
		size    int
		dev     tensor.Device
		dt      tensor.DType
		shape   []int64
		strides []int64
		offset  uint64
		want    string // error text, "" for none
	}{
		{"compact", p, 64, cpu, tensor.Float32, []int64{4, 4}, nil, 0, ""},
		{"exact end", p, 64, cpu, tensor.Float32, []int64{3, 4}, nil, 16, ""},
		{"strided", p, 64, cpu, tensor.Uint8, []int64{4, 4}, []int64{16, 2}, 0, ""},
		{"strided end", p, 64, cpu, tensor.Uint8, []int64{4, 2}, []int64{16, 1}, 14, ""},
		{"broadcast", p, 4, cpu, tensor.Float32, []int64{100, 1}, []int64{0, 1}, 0, ""},
		{"scalar", p, 8, cpu, tensor.Float64, nil, nil, 0, ""},
		{"empty nil", nil, 0, cpu, tensor.Float64, []int64{0, 5}, nil, 0, ""},
		{"cuda", p, 64, cuda0, tensor.Float32, []int64{16}, nil, 0, ""},
		{"past end", p, 64, cpu, tensor.Float32, []int64{4, 5}, nil, 0,
			"float32 [4 5] with strides [5 1] from byte offset 0 reaches past the 64 bytes of memory"},
		{"offset past end", p, 64, cpu, tensor.Float32, []int64{4, 4}, nil, 1, "from byte offset 1 reaches past"},
		{"stride past end", p, 64, cpu, tensor.Uint8, []int64{4, 4}, []int64{21, 1}, 0, "reaches past the 64 bytes"},
		{"cuda past end", p, 64, cuda0, tensor.Float32, []int64{17}, nil, 0, "reaches past the 64 bytes"},
		{"huge offset", p, 64, cpu, tensor.Uint8, []int64{1}, nil, math.MaxUint64, "reaches past"},
		{"huge stride", p, 64, cpu, tensor.Uint8, []int64{3}, []int64{math.MaxInt64}, 0, "reaches past"},
		{"negative stride", p, 64, cpu, tensor.Uint8, []int64{4}, []int64{-1}, 63,
			"strides [-1] have negative stride -1 in dimension 0"},
		{"strides length", p, 64, cpu, tensor.Uint8, []int64{4}, []int64{1, 1}, 0,
			"strides [1 1] do not match shape [4]"},
		{"negative size", p, -1, cpu, tensor.Uint8, []int64{0}, nil, 0, "memory size -1 is negative"},
		{"nil pointer", nil, 64, cpu, tensor.Uint8, []int64{4}, nil, 0, "uint8 [4] has a nil data pointer"},
		{"no size", p, 64, cpu, tensor.DType{}, []int64{4}, nil, 0, "has no size"},
	}
	for _, tt := range tests {
		x, err := tensor.FromPointer(tt.p, tt.size, tt.dev, tt.dt, tt.shape, tt.strides, tt.offset)
		if tt.want != "" {
			t.Run(tt.name, func(t *testing.T) { wantErr(t, err, tt.want) })
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if x.Base() != tt.p || x.ByteOffset() != tt.offset || x.Device() != tt.dev || !slices.Equal(x.Shape(), tt.shape) {
			t.Errorf("%s: got %v from %p offset %d", tt.name, x, x.Base(), x.ByteOffset())
		}
	}
}

func TestFromPointerCopiesShape(t *testing.T) {
	buf := make([]float32, 6)
	shape, strides := []int64{2, 3}, []int64{3, 1}
	x := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 24, cpu, tensor.Float32, shape, strides, 0))
	shape[0], strides[0] = 100, 100
	if !slices.Equal(x.Shape(), []int64{2, 3}) || !slices.Equal(x.Strides(), []int64{3, 1}) {
		t.Errorf("tensor changed with the caller's slices: %v strides %v", x, x.Strides())
	}
}

func TestNonCPUNeverDereferenced(t *testing.T) {
	buf := make([]float32, 12)
	x := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 48, cuda0, tensor.Float32, []int64{3, 4}, nil, 0))
	p := must(x.Permute(1, 0))
	s := must(p.Slice(0, 1, 3))
	if !slices.Equal(s.Shape(), []int64{2, 3}) || s.ByteOffset() != 4 {
		t.Errorf("view of cuda tensor = %v offset %d", s, s.ByteOffset())
	}
	_, err := x.Bytes()
	wantErr(t, err, "Bytes needs CPU memory, tensor is on cuda:0")
	_, err = tensor.Values[float32](x)
	wantErr(t, err, "Values needs CPU memory")
	_, err = p.Contiguous()
	wantErr(t, err, "Contiguous needs CPU memory")
	_, err = x.Image()
	wantErr(t, err, "Image needs uint8")
	host := must(tensor.New(tensor.Float32, 3, 4))
	wantErr(t, host.CopyFrom(x), "CopyFrom needs CPU memory, tensor is on cuda:0")
	wantErr(t, x.CopyFrom(host), "CopyFrom needs CPU memory")
	if c := must(x.Contiguous()); c != x {
		t.Errorf("Contiguous of a contiguous cuda tensor copied it")
	}
}

var cpu = tensor.Device{Type: tensor.CPU}

// strided returns a uint8 tensor over n bytes 0, 1, 2, ... with the given
// shape and strides.
func strided(t *testing.T, n int, shape, strides []int64) *tensor.Tensor {
	t.Helper()
	buf := iota(n)
	x, err := tensor.FromPointer(unsafe.Pointer(&buf[0]), n, cpu, tensor.Uint8, shape, strides, 0)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestIsContiguous(t *testing.T) {
	tests := []struct {
		shape, strides []int64
		want           bool
	}{
		{[]int64{2, 3}, []int64{3, 1}, true},
		{[]int64{2, 3}, []int64{1, 2}, false},
		{[]int64{2, 3}, []int64{4, 1}, false},
		{[]int64{2, 1, 3}, []int64{3, 99, 1}, true},
		{[]int64{1, 6}, []int64{0, 1}, true},
		{[]int64{6, 1}, []int64{1, 0}, true},
		{[]int64{3, 1}, []int64{0, 1}, false},
		{[]int64{0, 3}, []int64{7, 7}, true},
		{[]int64{}, []int64{}, true},
	}
	for _, tt := range tests {
		x := strided(t, 64, tt.shape, tt.strides)
		if got := x.IsContiguous(); got != tt.want {
			t.Errorf("%v with strides %v: IsContiguous() = %v, want %v", tt.shape, tt.strides, got, tt.want)
		}
	}
}

func TestViews(t *testing.T) {
	// x is [[0 1 2 3] [4 5 6 7] [8 9 10 11]].
	x := must(tensor.FromSlice(iota(12), 3, 4))
	x = must(x.WithLayout("HW"))
	tests := []struct {
		name    string
		view    func() (*tensor.Tensor, error)
		shape   []int64
		strides []int64
		offset  uint64
		layout  string
		values  []uint8
	}{
		{"row", func() (*tensor.Tensor, error) { return x.Slice(0, 1, 2) },
			[]int64{1, 4}, []int64{4, 1}, 4, "HW", []uint8{4, 5, 6, 7}},
		{"columns", func() (*tensor.Tensor, error) { return x.Slice(1, 1, 3) },
			[]int64{3, 2}, []int64{4, 1}, 1, "HW", []uint8{1, 2, 5, 6, 9, 10}},
		{"empty slice", func() (*tensor.Tensor, error) { return x.Slice(1, 4, 4) },
			[]int64{3, 0}, []int64{4, 1}, 0, "HW", nil},
		{"crop", func() (*tensor.Tensor, error) { return x.Crop([]int64{1, 2}, []int64{2, 2}) },
			[]int64{2, 2}, []int64{4, 1}, 6, "HW", []uint8{6, 7, 10, 11}},
		{"whole crop", func() (*tensor.Tensor, error) { return x.Crop([]int64{0, 0}, []int64{3, 4}) },
			[]int64{3, 4}, []int64{4, 1}, 0, "HW", iota(12)},
		{"transpose", func() (*tensor.Tensor, error) { return x.Permute(1, 0) },
			[]int64{4, 3}, []int64{1, 4}, 0, "WH", []uint8{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
		{"identity", func() (*tensor.Tensor, error) { return x.Permute(0, 1) },
			[]int64{3, 4}, []int64{4, 1}, 0, "HW", iota(12)},
		{"reshape", func() (*tensor.Tensor, error) { return x.Reshape(2, -1) },
			[]int64{2, 6}, []int64{6, 1}, 0, "HW", iota(12)},
		{"reshape 3-D", func() (*tensor.Tensor, error) { return x.Reshape(-1, 2, 3) },
			[]int64{2, 2, 3}, []int64{6, 3, 1}, 0, "", iota(12)},
		{"flatten", func() (*tensor.Tensor, error) { return x.Reshape(-1) },
			[]int64{12}, []int64{1}, 0, "", iota(12)},
		{"reshape row", func() (*tensor.Tensor, error) {
			row, err := x.Slice(0, 2, 3)
			if err != nil {
				return nil, err
			}
			return row.Reshape(2, 2)
		}, []int64{2, 2}, []int64{2, 1}, 8, "HW", []uint8{8, 9, 10, 11}},
	}
	for _, tt := range tests {
		v, err := tt.view()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(v.Shape(), tt.shape) || !slices.Equal(v.Strides(), tt.strides) ||
			v.ByteOffset() != tt.offset || v.Layout() != tt.layout {
			t.Errorf("%s = %v strides %v offset %d, want shape %v strides %v offset %d layout %q",
				tt.name, v, v.Strides(), v.ByteOffset(), tt.shape, tt.strides, tt.offset, tt.layout)
		}
		if got := values[uint8](t, v); !slices.Equal(got, tt.values) {
			t.Errorf("%s values = %v, want %v", tt.name, got, tt.values)
		}
		if v.Base() != x.Base() {
			t.Errorf("%s does not share x's memory", tt.name)
		}
	}
}

func TestViewSharesMemory(t *testing.T) {
	s := make([]int32, 12)
	x := must(tensor.FromSlice(s, 3, 4))
	v := must(x.Crop([]int64{1, 1}, []int64{2, 2}))
	v = must(v.Permute(1, 0))
	w := must(tensor.FromSlice([]int32{1, 2, 3, 4}, 2, 2))
	if err := v.CopyFrom(w); err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 0, 0, 0, 0, 1, 3, 0, 0, 2, 4, 0}
	if !slices.Equal(s, want) {
		t.Errorf("after writing a transposed crop, slice = %v, want %v", s, want)
	}
}

func TestViewErrors(t *testing.T) {
	x := must(tensor.New(tensor.Float32, 2, 3, 4))
	nc := must(x.Permute(2, 1, 0))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"slice dim", second(x.Slice(3, 0, 1)), "Slice of dimension 3 of 3-D tensor(float32 [2 3 4] cpu)"},
		{"slice negative dim", second(x.Slice(-1, 0, 1)), "Slice of dimension -1"},
		{"slice end", second(x.Slice(1, 0, 4)), "Slice [0:4] of dimension 1 of size 3"},
		{"slice start", second(x.Slice(1, -1, 2)), "Slice [-1:2]"},
		{"slice reversed", second(x.Slice(1, 2, 1)), "Slice [2:1]"},
		{"crop rank", second(x.Crop([]int64{0, 0}, []int64{1, 1})), "Crop at [0 0] of shape [1 1] from 3-D"},
		{"crop past", second(x.Crop([]int64{0, 1, 0}, []int64{2, 3, 4})),
			"Crop at [0 1 0] of shape [2 3 4] leaves shape [2 3 4] in dimension 1"},
		{"crop negative", second(x.Crop([]int64{0, 0, -1}, []int64{1, 1, 1})), "in dimension 2"},
		{"reshape count", second(x.Reshape(5, 5)), "Reshape of tensor(float32 [2 3 4] cpu) to [5 5]: 25 elements, want 24"},
		{"reshape infer", second(x.Reshape(5, -1)), "to [5 -1]: no size for -1 makes 24 elements"},
		{"reshape two -1", second(x.Reshape(-1, -1)), "Reshape to [-1 -1]: more than one -1"},
		{"reshape negative", second(x.Reshape(-2, 12)), "Reshape to [-2 12]: dimension 0 is -2"},
		{"reshape overflow", second(x.Reshape(1<<62, 1<<62)), "too many elements"},
		{"reshape strided", second(nc.Reshape(24)), "Reshape of tensor(float32 [4 3 2] cpu) with strides [1 4 12]: not contiguous"},
		{"permute length", second(x.Permute(0, 1)), "Permute [0 1] of 3-D"},
		{"permute repeat", second(x.Permute(0, 1, 1)), "Permute [0 1 1] is not a permutation of 0 to 2"},
		{"permute range", second(x.Permute(0, 1, 3)), "Permute [0 1 3] is not a permutation"},
		{"layout length", second(x.WithLayout("HW")), `layout "HW" names 2 dimensions, tensor has 3`},
		{"layout lowercase", second(x.WithLayout("hwc")), `layout "hwc" has 'h', want uppercase letters`},
		{"layout repeat", second(x.WithLayout("HWH")), `layout "HWH" repeats 'H'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.err, tt.want) })
	}
	empty := must(tensor.New(tensor.Float32, 0, 4))
	wantErr(t, second(empty.Reshape(-1, 0)), "no size for -1")
}

// second returns the second of two values: the error of a call.
func second[T any](_ T, err error) error { return err }

func TestEmptyTensor(t *testing.T) {
	x := must(tensor.New(tensor.Float32, 0, 3))
	if x.Data() != nil || x.NumElements() != 0 || x.NBytes() != 0 || !x.IsContiguous() {
		t.Errorf("empty %v: data %p, %d elements", x, x.Data(), x.NumElements())
	}
	if b := must(x.Bytes()); len(b) != 0 {
		t.Errorf("empty Bytes = %v", b)
	}
	if v := must(tensor.Values[float32](x)); len(v) != 0 {
		t.Errorf("empty Values = %v", v)
	}
	r := must(x.Reshape(3, -1, 5))
	if !slices.Equal(r.Shape(), []int64{3, 0, 5}) {
		t.Errorf("Reshape(3, -1, 5) of empty = %v", r)
	}
	y := must(tensor.New(tensor.Float32, 3, 0))
	if err := y.CopyFrom(must(x.Permute(1, 0))); err != nil {
		t.Error(err)
	}
}

func TestContiguous(t *testing.T) {
	x := must(tensor.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	if c := must(x.Contiguous()); c != x {
		t.Error("Contiguous of a contiguous tensor is not the tensor")
	}
	x = must(x.WithLayout("HW"))
	p := must(x.Permute(1, 0))
	c := must(p.Contiguous())
	if !c.IsContiguous() || c.Base() == x.Base() || c.Layout() != "WH" {
		t.Errorf("Contiguous of %v = %v, strides %v", p, c, c.Strides())
	}
	if got := must(tensor.Values[float64](c)); !slices.Equal(got, []float64{1, 4, 2, 5, 3, 6}) {
		t.Errorf("Contiguous values = %v", got)
	}
	// Strides of every size, and an element type of 16 bytes.
	vec := tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}
	s := make([]float32, 4*2*3*2)
	for i := range s {
		s[i] = float32(i)
	}
	v := must(tensor.FromPointer(unsafe.Pointer(&s[0]), len(s)*4, cpu, vec, []int64{2, 3, 2}, nil, 0))
	c = must(must(v.Permute(2, 0, 1)).Contiguous())
	f := must(tensor.FromPointer(c.Data(), int(c.NBytes()), cpu, tensor.Float32, []int64{12, 4}, nil, 0))
	got := values[float32](t, must(f.Slice(1, 0, 1)))
	want := []float32{0, 8, 16, 24, 32, 40, 4, 12, 20, 28, 36, 44}
	if !slices.Equal(got, want) {
		t.Errorf("permuted float32x4 first lanes = %v, want %v", got, want)
	}
}

func TestCopyFromErrors(t *testing.T) {
	x := must(tensor.New(tensor.Float32, 2, 3))
	wantErr(t, x.CopyFrom(must(tensor.New(tensor.Float64, 2, 3))), "CopyFrom into float32 elements from float64 elements")
	wantErr(t, x.CopyFrom(must(tensor.New(tensor.Float32, 3, 2))), "CopyFrom into shape [2 3] from shape [3 2]")
}

func TestBytesValuesErrors(t *testing.T) {
	x := must(tensor.FromSlice([]uint8{1, 2, 3, 4, 5, 6}, 2, 3))
	p := must(x.Permute(1, 0))
	_, err := p.Bytes()
	wantErr(t, err, "Bytes needs a contiguous tensor, tensor(uint8 [3 2] cpu) has strides [1 3]")
	_, err = tensor.Values[uint8](p)
	wantErr(t, err, "Values needs a contiguous tensor")
	_, err = tensor.Values[float32](x)
	wantErr(t, err, "Values of tensor(uint8 [2 3] cpu) asks for float32 elements, tensor has uint8")

	buf := make([]float32, 4)
	odd := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 16, cpu, tensor.Float32, []int64{3}, nil, 2))
	_, err = tensor.Values[float32](odd)
	wantErr(t, err, "is not aligned for float32")
	if b := must(odd.Bytes()); len(b) != 12 || &b[0] != (*byte)(unsafe.Add(unsafe.Pointer(&buf[0]), 2)) {
		t.Errorf("Bytes of a tensor at byte offset 2: %d bytes at %p", len(b), &b[0])
	}
}

func TestString(t *testing.T) {
	x := must(tensor.New(tensor.Uint8, 480, 640, 3))
	x = must(x.WithLayout("HWC"))
	if got, want := x.String(), "tensor(uint8 [480 640 3] HWC cpu)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	buf := make([]byte, 8)
	y := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 8, tensor.Device{Type: tensor.CUDA, ID: 1}, tensor.Float64, nil, nil, 0))
	if got, want := fmt.Sprint(y), "tensor(float64 [] cuda:1)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestCopyFromStridedViews copies between views of every kind — permuted,
// cropped, compact — and checks each element against the element read on
// its own (a one-element crop), so the merging of compact trailing
// dimensions into one copy never changes what is copied.
func TestCopyFromStridedViews(t *testing.T) {
	base := func() *tensor.Tensor {
		v := make([]int16, 4*5*6)
		for i := range v {
			v[i] = int16(i)
		}
		x, err := tensor.FromSlice(v, 4, 5, 6)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	views := map[string]func(*tensor.Tensor) (*tensor.Tensor, error){
		"whole":      func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Crop([]int64{0, 0, 0}, []int64{3, 4, 5}) },
		"inner crop": func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Crop([]int64{1, 1, 1}, []int64{3, 4, 5}) },
		"row crop":   func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Crop([]int64{1, 0, 0}, []int64{3, 4, 6}) },
		"permuted": func(x *tensor.Tensor) (*tensor.Tensor, error) {
			y, _ := x.Permute(2, 1, 0)
			return y.Crop([]int64{0, 0, 0}, []int64{3, 4, 4})
		},
		"last stride": func(x *tensor.Tensor) (*tensor.Tensor, error) {
			y, _ := x.Permute(0, 2, 1)
			return y.Crop([]int64{0, 0, 0}, []int64{3, 4, 5})
		},
	}
	at := func(x *tensor.Tensor, i, j, k int64) []byte {
		e, err := x.Crop([]int64{i, j, k}, []int64{1, 1, 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for sname, sview := range views {
		for dname, dview := range views {
			src, err := sview(base())
			if err != nil {
				t.Fatal(err)
			}
			dst, err := dview(must(tensor.New(tensor.Int16, 6, 6, 6)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(src.Shape(), dst.Shape()) {
				continue
			}
			if err := dst.CopyFrom(src); err != nil {
				t.Fatal(err)
			}
			s := src.Shape()
			for i := range s[0] {
				for j := range s[1] {
					for k := range s[2] {
						if !bytes.Equal(at(dst, i, j, k), at(src, i, j, k)) {
							t.Fatalf("%s → %s: element [%d %d %d] differs", sname, dname, i, j, k)
						}
					}
				}
			}
		}
	}
}

func TestDTypeKnown(t *testing.T) {
	for _, d := range []tensor.DType{tensor.Int8, tensor.Uint64, tensor.Float16, tensor.Boolean, {Code: tensor.Float, Bits: 32, Lanes: 4}, {Code: tensor.Bfloat, Bits: 16, Lanes: 1}} {
		if !d.Known() {
			t.Errorf("%s is not Known", d)
		}
	}
	for _, d := range []tensor.DType{{Code: 99, Bits: 8, Lanes: 1}, {Code: tensor.Float, Bits: 12, Lanes: 1}, {Code: tensor.Int, Bits: 8, Lanes: 0}, {}} {
		if d.Known() {
			t.Errorf("%s is Known", d)
		}
	}
}
