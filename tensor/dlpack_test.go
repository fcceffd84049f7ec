package tensor_test

import (
	"testing"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

func TestDLTensorLayout(t *testing.T) {
	var dl tensor.DLTensor
	got := []uintptr{
		unsafe.Offsetof(dl.Data), unsafe.Offsetof(dl.Device), unsafe.Offsetof(dl.NDim),
		unsafe.Offsetof(dl.DType), unsafe.Offsetof(dl.Shape), unsafe.Offsetof(dl.Strides),
		unsafe.Offsetof(dl.ByteOffset), unsafe.Sizeof(dl),
	}
	// The offsets of Data, Device, NDim, DType, Shape, Strides and
	// ByteOffset, and the size, as C compilers lay out DLPack's DLTensor.
	want := []uintptr{0, 8, 16, 20, 24, 32, 40, 48}
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = []uintptr{0, 4, 12, 16, 20, 24, 28, 36}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("DLTensor offsets and size %v, want %v", got, want)
			break
		}
	}
	if unsafe.Sizeof(tensor.Device{}) != 8 || unsafe.Sizeof(tensor.DType{}) != 4 {
		t.Errorf("Device is %d bytes, DType %d; DLPack's are 8 and 4",
			unsafe.Sizeof(tensor.Device{}), unsafe.Sizeof(tensor.DType{}))
	}
	if unsafe.Offsetof(tensor.DType{}.Bits) != 1 || unsafe.Offsetof(tensor.DType{}.Lanes) != 2 ||
		unsafe.Offsetof(tensor.Device{}.ID) != 4 {
		t.Error("Device or DType fields are not where DLPack has them")
	}
}

func TestDLPack(t *testing.T) {
	x := must(tensor.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3))
	v := must(x.Slice(1, 1, 3))
	dl := v.DLPack()
	if dl.Data != x.Base() || dl.Device != v.Device() || dl.NDim != 2 || dl.DType != tensor.Float32 || dl.ByteOffset != 4 {
		t.Errorf("DLPack() = %+v", dl)
	}
	shape, strides := unsafe.Slice(dl.Shape, dl.NDim), unsafe.Slice(dl.Strides, dl.NDim)
	if shape[0] != 2 || shape[1] != 2 || strides[0] != 3 || strides[1] != 1 {
		t.Errorf("DLPack shape %v strides %v", shape, strides)
	}
	// Reading element [1, 1] the way a C consumer does.
	elem := *(*float32)(unsafe.Add(dl.Data, dl.ByteOffset+uint64(4*(1*strides[0]+1*strides[1]))))
	if elem != 5 {
		t.Errorf("element [1, 1] through DLPack = %v, want 5", elem)
	}

	scalar := must(tensor.New(tensor.Int64)).DLPack()
	if scalar.NDim != 0 || scalar.Shape != nil || scalar.Strides != nil || scalar.Data == nil {
		t.Errorf("DLPack of a scalar = %+v", scalar)
	}

	round := must(tensor.FromPointer(dl.Data, 24, dl.Device, dl.DType, shape, strides, dl.ByteOffset))
	if got := values[float32](t, round); len(got) != 4 || got[0] != 1 || got[3] != 5 {
		t.Errorf("FromPointer of DLPack() values = %v", got)
	}
}
