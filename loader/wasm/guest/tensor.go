package guest

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

// Tensor is one input or output of one sample, in the module's memory.
// Element [i0, i1, ...] is the DType.Size() bytes at
// (i0*Strides[0] + i1*Strides[1] + ...) * DType.Size() in Data.
type Tensor struct {
	DType tensor.DType
	// Shape and Strides have one entry per dimension; strides count
	// elements and are never negative.
	Shape, Strides []int64
	// Data holds the bytes that the shape and strides reach, from the
	// first element: DType.Size() * (1 + sum of (Shape[i]-1)*Strides[i])
	// bytes, or none for a tensor without elements. It aliases the
	// host's buffer, valid during the call; it is nil for inputs the host
	// passes to Setup without data. Outputs are written through it.
	Data []byte
}

// NumElements returns the number of elements: the product of the shape
// (1 for no dimensions).
func (t Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Contiguous reports whether the elements lie next to each other in
// row-major order, so that Data holds them in that order and nothing
// else. Strides of dimensions of size 1 do not matter, and a tensor
// without elements is contiguous.
func (t Tensor) Contiguous() bool {
	if t.NumElements() == 0 {
		return true
	}
	want := int64(1)
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if t.Shape[i] != 1 && t.Strides[i] != want {
			return false
		}
		want *= t.Shape[i]
	}
	return true
}

// Float32s returns Data as float32 values: for a contiguous tensor, its
// elements in row-major order; for a strided one, element [i0, i1, ...]
// is at index i0*Strides[0] + i1*Strides[1] + .... It panics if DType is
// not float32.
func (t Tensor) Float32s() []float32 {
	if t.DType != tensor.Float32 {
		panic(fmt.Sprintf("guest: Float32s of a %v tensor", t.DType))
	}
	if len(t.Data) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(t.Data))), len(t.Data)/4)
}

// Uint8s returns Data, indexed as [Tensor.Float32s] says. It panics if
// DType is not uint8.
func (t Tensor) Uint8s() []byte {
	if t.DType != tensor.Uint8 {
		panic(fmt.Sprintf("guest: Uint8s of a %v tensor", t.DType))
	}
	return t.Data
}

// decodeTensor reads the dynop_tensor at off. Strides of 0 (NULL) are
// taken as compact; a data pointer of 0 gives nil Data.
func decodeTensor(m memory, off uint32) (Tensor, error) {
	var t Tensor
	b, err := m.view(off, tensorSize)
	if err != nil {
		return t, fmt.Errorf("tensor: %v", err)
	}
	data, devType := le.Uint32(b[0:]), int32(le.Uint32(b[4:]))
	ndim := int32(le.Uint32(b[12:]))
	t.DType = tensor.DType{Code: tensor.Code(b[16]), Bits: b[17], Lanes: le.Uint16(b[18:])}
	shapeP, stridesP, byteOffset := le.Uint32(b[20:]), le.Uint32(b[24:]), le.Uint64(b[32:])
	size := t.DType.Size()
	switch {
	case ndim < 0 || ndim > MaxNDim:
		return t, fmt.Errorf("tensor: ndim %d is not between 0 and %d", ndim, MaxNDim)
	case size == 0:
		return t, fmt.Errorf("tensor: dtype %v has no size", t.DType)
	case data != 0 && devType != int32(tensor.CPU):
		return t, fmt.Errorf("tensor: on device type %d, not the CPU", devType)
	}
	if t.Shape, err = int64s(m, shapeP, ndim); err != nil {
		return t, fmt.Errorf("tensor: shape: %v", err)
	}
	if stridesP == 0 {
		t.Strides = compactStrides(t.Shape)
	} else if t.Strides, err = int64s(m, stridesP, ndim); err != nil {
		return t, fmt.Errorf("tensor: strides: %v", err)
	}
	for i := range t.Shape {
		if t.Shape[i] < 0 || t.Strides[i] < 0 {
			return t, fmt.Errorf("tensor: shape %v or strides %v negative", t.Shape, t.Strides)
		}
	}
	if data == 0 {
		return t, nil
	}
	n, ok := extent(t.Shape, t.Strides, uint64(size))
	if !ok {
		return t, fmt.Errorf("tensor: shape %v with strides %v reaches past the 32-bit address space", t.Shape, t.Strides)
	}
	if n == 0 {
		t.Data = []byte{}
		return t, nil
	}
	start := uint64(data) + byteOffset
	if byteOffset >= memLimit || start >= memLimit {
		return t, fmt.Errorf("tensor: data 0x%x + byte_offset %d lies past the 32-bit address space", data, byteOffset)
	}
	if t.Data, err = m.view(uint32(start), n); err != nil {
		return t, fmt.Errorf("tensor: data: %v", err)
	}
	return t, nil
}

// int64s reads n int64 values at off.
func int64s(m memory, off uint32, n int32) ([]int64, error) {
	b, err := elems(m, off, uint32(n), 8)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(le.Uint64(b[8*i:]))
	}
	return out, nil
}

// compactStrides returns the row-major strides of shape.
func compactStrides(shape []int64) []int64 {
	strides := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= max(shape[i], 1)
	}
	return strides
}

// extent returns how many bytes the elements of a tensor of shape and
// strides reach, elements of size bytes: 0 without elements, else size *
// (1 + sum of (shape[i]-1)*strides[i]); ok is false beyond 32 bits. Shape
// and strides are not negative.
func extent(shape, strides []int64, size uint64) (n uint64, ok bool) {
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	last := uint64(0) // the index of the last element reached
	for i, d := range shape {
		hi, step := bits.Mul64(uint64(d-1), uint64(strides[i]))
		if hi != 0 || step >= memLimit {
			return 0, false
		}
		if last += step; last >= memLimit {
			return 0, false
		}
	}
	if n = (last + 1) * size; n > memLimit {
		return 0, false
	}
	return n, true
}
