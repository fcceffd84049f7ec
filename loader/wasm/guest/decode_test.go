package guest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func TestDecodeArgsEveryType(t *testing.T) {
	m := newTestMem(1 << 16)
	p := m.args(
		arg{"n", schema.Int, true, 1, encI64(-7)},
		arg{"f", schema.Float, false, 1, encF64(0.25)},
		arg{"b", schema.Bool, true, 1, encBool(true)},
		arg{"s", schema.String, true, 1, m.encStr("linear")},
		arg{"d", schema.DType, true, 1, encDType(tensor.Float32)},
		arg{"ns", schema.IntList, true, 3, encI64(1, 2, 1<<40)},
		arg{"fs", schema.FloatList, true, 2, encF64(1.5, -2)},
		arg{"bs", schema.BoolList, true, 3, encBool(true, false, true)},
		arg{"ss", schema.StringList, true, 2, m.encStr("a", "")},
		arg{"ds", schema.DTypeList, true, 2, encDType(tensor.Uint8, tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4})},
		arg{"unset", schema.Int, false, 0, nil},
		arg{"empty", schema.IntList, true, 0, nil},
	)
	a, err := decodeArgs(m.sliceMemory, p, 12)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	check("n", a.Int("n"), int64(-7))
	check("f", a.Float("f"), 0.25)
	check("b", a.Bool("b"), true)
	check("s", a.String("s"), "linear")
	check("d", a.DType("d"), tensor.Float32)
	check("ns", a.IntList("ns"), []int64{1, 2, 1 << 40})
	check("fs", a.FloatList("fs"), []float64{1.5, -2})
	check("bs", a.BoolList("bs"), []bool{true, false, true})
	check("ss", a.StringList("ss"), []string{"a", ""})
	check("ds", a.DTypeList("ds"), []tensor.DType{tensor.Uint8, {Code: tensor.Float, Bits: 32, Lanes: 4}})
	check("unset", a.Int("unset"), int64(0))
	check("empty", a.IntList("empty"), []int64(nil))
	check("names", a.Names(), []string{"n", "f", "b", "s", "d", "ns", "fs", "bs", "ss", "ds", "unset", "empty"})
	check("given", []bool{a.Given("n"), a.Given("f"), a.Given("unset"), a.Given("nope")}, []bool{true, false, false, false})
	check("has", []bool{a.Has("f"), a.Has("unset"), a.Has("empty"), a.Has("nope")}, []bool{true, false, false, false})

	// Lists are copies, and the strings are Go memory: changing either
	// memory changes nothing the operator has.
	a.IntList("ns")[0] = 99
	clear(m.sliceMemory)
	check("ns again", a.IntList("ns"), []int64{1, 2, 1 << 40})
	check("s again", a.String("s"), "linear")
}

func TestArgsPanicOnOperatorBugs(t *testing.T) {
	m := newTestMem(1 << 12)
	a, err := decodeArgs(m.sliceMemory, m.args(arg{"gamma", schema.Float, true, 1, encF64(2)}), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { a.Int("gamma") }, `argument "gamma" is of type float, asked for as int`},
		{func() { a.Float("gama") }, `no argument "gama"; the operator's arguments are gamma`},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic %v, want one saying %q", r, tc.want)
				}
			}()
			tc.f()
		}()
	}
}

func TestDecodeArgsMalformed(t *testing.T) {
	m := newTestMem(1 << 12)
	for _, tc := range []struct {
		name  string
		args  func() (uint32, uint32)
		wants string
	}{
		{"scalar twice", func() (uint32, uint32) {
			return m.args(arg{"n", schema.Int, true, 2, encI64(1, 2)}), 1
		}, `argument "n" (int): 2 values for a scalar`},
		{"unknown type", func() (uint32, uint32) { return m.args(arg{"n", 11, true, 0, nil}), 1 }, `argument "n": unknown type 11`},
		{"null values", func() (uint32, uint32) { return m.args(arg{"n", schema.Int, true, 1, nil}), 1 }, "NULL pointer"},
		{"null array", func() (uint32, uint32) { return 0, 2 }, "arguments: NULL pointer"},
		{"past memory", func() (uint32, uint32) { return uint32(len(m.sliceMemory) - 10), 1 }, "past the end of memory"},
		{"twice", func() (uint32, uint32) {
			return m.args(arg{"n", schema.Int, true, 1, encI64(1)}, arg{"n", schema.Int, true, 1, encI64(1)}), 2
		}, `argument "n" passed twice`},
		{"null name", func() (uint32, uint32) {
			p := m.args(arg{"n", schema.Int, true, 1, encI64(1)})
			le.PutUint32(m.sliceMemory[p:], 0)
			return p, 1
		}, "argument 0: name: NULL string"},
		{"null string", func() (uint32, uint32) {
			return m.args(arg{"s", schema.String, true, 1, le.AppendUint32(nil, 0)}), 1
		}, `argument "s" (string): element 0: NULL string`},
	} {
		p, n := tc.args()
		if _, err := decodeArgs(m.sliceMemory, p, n); err == nil || !strings.Contains(err.Error(), tc.wants) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wants)
		}
	}
}

func TestDecodeTensorExtents(t *testing.T) {
	m := newTestMem(1 << 16)
	data := m.alloc(4096)
	for i := range 4096 {
		m.sliceMemory[data+uint32(i)] = byte(i)
	}
	for _, tc := range []struct {
		name       string
		dt         tensor.DType
		shape      []int64
		strides    []int64 // nil: NULL
		byteOffset uint64
		wantStart  uint32 // offset of Data from data
		wantLen    int
		contiguous bool
	}{
		{"compact HWC uint8", tensor.Uint8, []int64{2, 3, 3}, []int64{9, 3, 1}, 0, 0, 18, true},
		{"NULL strides are compact", tensor.Float32, []int64{2, 3}, nil, 0, 0, 24, true},
		{"crop of a 4x5x3 image", tensor.Uint8, []int64{2, 2, 3}, []int64{15, 3, 1}, 15 + 3, 18, 15 + 3 + 3, false},
		{"column of float32", tensor.Float32, []int64{4, 1}, []int64{5, 1}, 8, 8, 4 * (1 + 3*5), false},
		{"column of 2 wide rows", tensor.Float32, []int64{4, 2}, []int64{5, 1}, 0, 0, 4 * (1 + 3*5 + 1), false},
		{"broadcast (stride 0)", tensor.Float32, []int64{3, 2}, []int64{0, 1}, 4, 4, 8, false},
		{"transposed", tensor.Uint16, []int64{3, 2}, []int64{1, 3}, 0, 0, 2 * 6, false},
		{"scalar", tensor.Float64, []int64{}, nil, 16, 16, 8, true},
		{"vector dtype", tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}, []int64{3}, []int64{2}, 0, 0, 16 * 5, false},
		{"zero size", tensor.Float32, []int64{3, 0, 2}, []int64{0, 2, 1}, 0, 0, 0, true},
		{"size-1 dim with odd stride", tensor.Uint8, []int64{1, 4}, []int64{100, 1}, 0, 0, 4, true},
	} {
		p := m.tensor(data, tc.dt, tc.shape, tc.strides, tc.byteOffset)
		got, err := decodeTensor(m.sliceMemory, p)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.DType != tc.dt || !slices.Equal(got.Shape, tc.shape) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got.DType, got.Shape, tc.dt, tc.shape)
		}
		if tc.strides != nil && !slices.Equal(got.Strides, tc.strides) {
			t.Errorf("%s: strides %v, want %v", tc.name, got.Strides, tc.strides)
		}
		if len(got.Data) != tc.wantLen {
			t.Errorf("%s: %d bytes of data, want %d", tc.name, len(got.Data), tc.wantLen)
		} else if tc.wantLen > 0 && got.Data[0] != byte(tc.wantStart) {
			t.Errorf("%s: data starts at byte %d, want %d", tc.name, got.Data[0], tc.wantStart)
		}
		if tc.shape != nil && got.Data == nil {
			t.Errorf("%s: nil Data, want an empty or full slice", tc.name)
		}
		if got.Contiguous() != tc.contiguous {
			t.Errorf("%s: Contiguous() = %v", tc.name, got.Contiguous())
		}
	}

	// Strides, when NULL, are made compact; dimensions of 0 count as 1.
	got, _ := decodeTensor(m.sliceMemory, m.tensor(data, tensor.Uint8, []int64{2, 0, 3}, nil, 0))
	if !slices.Equal(got.Strides, []int64{3, 3, 1}) {
		t.Errorf("NULL strides of [2 0 3] became %v", got.Strides)
	}
	// No data pointer (an input during setup): no Data.
	got, err := decodeTensor(m.sliceMemory, m.tensor(0, tensor.Uint8, []int64{2, 3}, []int64{3, 1}, 0))
	if err != nil || got.Data != nil || !slices.Equal(got.Shape, []int64{2, 3}) {
		t.Errorf("tensor without data: %+v, %v", got, err)
	}
}

func TestDecodeTensorMalformed(t *testing.T) {
	m := newTestMem(1 << 14)
	data := m.alloc(64)
	sh := m.i64s(2, 2)
	for _, tc := range []struct {
		name string
		make func() uint32
		want string
	}{
		{"null", func() uint32 { return 0 }, "tensor: NULL pointer"},
		{"ndim 17", func() uint32 {
			p := m.alloc(tensorSize)
			m.tensorAt(p, data, tensor.Uint8, m.i64s(make([]int64, 17)...), 0, 17, 0)
			return p
		}, "ndim 17 is not between 0 and 16"},
		{"negative ndim", func() uint32 {
			p := m.alloc(tensorSize)
			m.tensorAt(p, data, tensor.Uint8, sh, 0, -1, 0)
			return p
		}, "ndim -1"},
		{"no shape", func() uint32 {
			p := m.alloc(tensorSize)
			m.tensorAt(p, data, tensor.Uint8, 0, 0, 2, 0)
			return p
		}, "shape: NULL pointer"},
		{"negative shape", func() uint32 { return m.tensor(data, tensor.Uint8, []int64{2, -1}, nil, 0) }, "negative"},
		{"negative stride", func() uint32 { return m.tensor(data, tensor.Uint8, []int64{2, 2}, []int64{-2, 1}, 0) }, "negative"},
		{"no size", func() uint32 { return m.tensor(data, tensor.DType{Code: tensor.Float}, []int64{2}, nil, 0) }, "has no size"},
		{"past memory", func() uint32 { return m.tensor(data, tensor.Uint8, []int64{1 << 20}, nil, 0) }, "past the end of memory"},
		{"past 32 bits", func() uint32 { return m.tensor(data, tensor.Uint8, []int64{1 << 20, 2}, []int64{1 << 20, 1}, 0) }, "32-bit address space"},
		{"huge byte offset", func() uint32 { return m.tensor(data, tensor.Uint8, []int64{2}, nil, 1<<40) }, "byte_offset"},
		{"on a GPU", func() uint32 {
			p := m.tensor(data, tensor.Uint8, []int64{2}, nil, 0)
			le.PutUint32(m.sliceMemory[p+4:], uint32(tensor.CUDA))
			return p
		}, "device type 2"},
	} {
		if _, err := decodeTensor(m.sliceMemory, tc.make()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestExtent(t *testing.T) {
	for _, tc := range []struct {
		shape, strides []int64
		size           uint64
		want           uint64
		ok             bool
	}{
		{nil, nil, 4, 4, true},
		{[]int64{5}, []int64{1}, 4, 20, true},
		{[]int64{5, 0}, []int64{1 << 62, 1}, 4, 0, true},
		{[]int64{2, 3}, []int64{10, 2}, 1, 15, true},
		{[]int64{1 << 31, 2}, []int64{2, 1}, 1, 1 << 32, true},
		{[]int64{1 << 31, 3}, []int64{2, 1}, 1, 0, false},
		{[]int64{1 << 40}, []int64{1 << 40}, 1, 0, false},
		{[]int64{1 << 30}, []int64{1}, 8, 0, false},
	} {
		n, ok := extent(tc.shape, tc.strides, tc.size)
		if n != tc.want || ok != tc.ok {
			t.Errorf("extent(%v, %v, %d) = %d, %v; want %d, %v", tc.shape, tc.strides, tc.size, n, ok, tc.want, tc.ok)
		}
	}
}

func TestTensorViews(t *testing.T) {
	m := newTestMem(1 << 12)
	data := m.alloc(64)
	for i := range 4 {
		le.PutUint32(m.sliceMemory[data+uint32(4*i):], 0x3f800000+uint32(i)<<23) // 1, 2, 4, 8
	}
	x, err := decodeTensor(m.sliceMemory, m.tensor(data, tensor.Float32, []int64{2, 2}, nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Float32s(); !slices.Equal(got, []float32{1, 2, 4, 8}) {
		t.Errorf("Float32s = %v", got)
	}
	x.Float32s()[3] = 0.5 // writes through to memory
	if le.Uint32(m.sliceMemory[data+12:]) != 0x3f000000 {
		t.Error("Float32s does not alias the memory")
	}
	if x.NumElements() != 4 {
		t.Errorf("NumElements = %d", x.NumElements())
	}
	y, _ := decodeTensor(m.sliceMemory, m.tensor(data, tensor.Uint8, []int64{3}, []int64{2}, 1))
	if got := y.Uint8s(); len(got) != 5 || &got[0] != &m.sliceMemory[data+1] {
		t.Errorf("Uint8s = %v", got)
	}
	for _, f := range []func(){func() { x.Uint8s() }, func() { y.Float32s() }} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Error("a view of the wrong dtype did not panic")
				}
			}()
			f()
		}()
	}
}
