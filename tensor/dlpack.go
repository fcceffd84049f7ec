package tensor

import "unsafe"

// DLTensor has the memory layout of DLPack's DLTensor (and of
// dynop_tensor in dynop.h) on 64-bit targets and on 32-bit targets that,
// like 386, align 64-bit integers to 4 bytes; 32-bit ARM's C aligns
// ByteOffset to 8 bytes, Go to 4. Shape and Strides point to NDim int64s;
// a nil Strides means compact row-major strides.
type DLTensor struct {
	Data       unsafe.Pointer
	Device     Device
	NDim       int32
	DType      DType
	Shape      *int64
	Strides    *int64
	ByteOffset uint64
}

// DLPack returns the DLPack description of t: its Base, device, dtype,
// ByteOffset, and pointers to its own shape and strides, nil for a tensor
// without dimensions. The pointers are valid while t is reachable and
// must not be written through.
//
// Go memory may be handed to C only while pinned: pin the tensor's
// memory, shape and strides (runtime.Pinner) before passing the
// DLTensor's address to C.
func (t *Tensor) DLPack() DLTensor {
	dl := DLTensor{
		Data:       t.base,
		Device:     t.dev,
		NDim:       int32(len(t.shape)),
		DType:      t.dtype,
		ByteOffset: t.offset,
	}
	if len(t.shape) > 0 {
		dl.Shape, dl.Strides = &t.shape[0], &t.strides[0]
	}
	return dl
}
