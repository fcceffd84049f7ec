package capi

/*
#define DYNOP_HOST_NO_PROTOTYPES
#include <dynop/dynop_host.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/tensor"
)

// maxNDim is DYNOP_MAX_NDIM.
const maxNDim = C.DYNOP_MAX_NDIM

// importTensor checks a borrowed DLPack tensor and returns a tensor over
// its memory, which the caller keeps owning: it is used for the call only.
func importTensor(m *C.DLManagedTensorVersioned) (*tensor.Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: the tensor is NULL", errInvalid)
	}
	if m.version.major != C.DLPACK_MAJOR_VERSION {
		return nil, fmt.Errorf("%w: DLPack version %d.%d; this library reads DLPack %d.x (DLManagedTensorVersioned)", dynop.ErrVersion, m.version.major, m.version.minor, C.DLPACK_MAJOR_VERSION)
	}
	dl := &m.dl_tensor
	dev := tensor.Device{Type: tensor.DeviceType(dl.device.device_type), ID: int32(dl.device.device_id)}
	if dev.Type != tensor.CPU {
		return nil, fmt.Errorf("%w: the tensor is on device %s; libdynop runs operators on CPU tensors (kDLCPU) only", dynop.ErrUnsupported, dev)
	}
	ndim := int(dl.ndim)
	if ndim < 0 || ndim > maxNDim {
		return nil, fmt.Errorf("%w: ndim is %d; a tensor has 0 to DYNOP_MAX_NDIM (%d) dimensions", errInvalid, ndim, maxNDim)
	}
	if ndim > 0 && dl.shape == nil {
		return nil, fmt.Errorf("%w: shape is NULL for %d dimensions", errInvalid, ndim)
	}
	dt := tensor.DType{Code: tensor.Code(dl.dtype.code), Bits: uint8(dl.dtype.bits), Lanes: uint16(dl.dtype.lanes)}
	if dt.Size() == 0 || dt.Bits%8 != 0 {
		return nil, fmt.Errorf("%w: dtype {code %d, bits %d, lanes %d} is not a whole number of bytes; libdynop takes 8-, 16-, 32- and 64-bit elements", errInvalid, dt.Code, dt.Bits, dt.Lanes)
	}
	var shape, strides []int64
	if ndim > 0 {
		shape = append(shape, unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), ndim)...)
		if dl.strides != nil {
			strides = append(strides, unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), ndim)...)
		}
	}
	for i, s := range strides {
		if s < 0 {
			return nil, fmt.Errorf("%w: stride %d of dimension %d is negative (strides %v); libdynop takes no negative strides: pass a copy", errInvalid, s, i, strides)
		}
	}
	for i, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("%w: dimension %d is negative (shape %v)", errInvalid, i, shape)
		}
	}
	size, err := extent(shape, strides, int64(dt.Size()), uint64(dl.byte_offset))
	if err != nil {
		return nil, err
	}
	t, err := tensor.FromPointer(dl.data, size, dev, dt, shape, strides, uint64(dl.byte_offset))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalid, err)
	}
	return t, nil
}

// extent returns the bytes from a tensor's data pointer that its elements
// reach: offset plus one past the last element's last byte, with compact
// strides where strides is nil; an overflow is an error.
func extent(shape, strides []int64, elem int64, offset uint64) (int, error) {
	over := fmt.Errorf("%w: shape %v with strides %v and byte offset %d reaches past the address space", errInvalid, shape, strides, offset)
	if strides == nil {
		strides = make([]int64, len(shape))
		stride := uint64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = int64(stride)
			hi, lo := bits.Mul64(stride, uint64(shape[i]))
			if hi != 0 || lo > math.MaxInt64 {
				return 0, over
			}
			stride = lo
		}
	}
	last := uint64(0) // the last element's index, in elements
	for i, d := range shape {
		if d == 0 {
			return int(min(offset, math.MaxInt)), nil
		}
		hi, lo := bits.Mul64(uint64(d-1), uint64(strides[i]))
		var carry uint64
		if last, carry = bits.Add64(last, lo, 0); hi != 0 || carry != 0 {
			return 0, over
		}
	}
	hi, end := bits.Mul64(last+1, uint64(elem))
	end, carry := bits.Add64(end, offset, 0)
	if hi != 0 || last+1 == 0 || carry != 0 || end > math.MaxInt {
		return 0, over
	}
	return int(end), nil
}

// newOutput allocates an output sample in C memory, as the caller gets it:
// a DLManagedTensorVersioned with compact strides and a C deleter that
// frees it; and a tensor over its data for the operator to write.
func newOutput(dt tensor.DType, shape []int64) (*C.DLManagedTensorVersioned, *tensor.Tensor, error) {
	n := int64(dt.Size())
	for _, d := range shape {
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, nil, fmt.Errorf("%w: output %v %v is too large", errInvalid, dt, shape)
		}
		n = int64(lo)
	}
	var cshape *C.int64_t
	if len(shape) > 0 {
		cshape = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	ct := C.dynop_capi_new_output(C.int32_t(len(shape)), cshape,
		C.DLDataType{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits), lanes: C.uint16_t(dt.Lanes)}, C.size_t(n))
	if ct == nil {
		return nil, nil, fmt.Errorf("%w for output %v %v", errNoMemory, dt, shape)
	}
	t, err := tensor.FromPointer(ct.dl_tensor.data, int(n), tensor.Device{Type: tensor.CPU}, dt, shape, nil, 0)
	if err != nil {
		C.dynop_capi_free_outputs(&ct, 1)
		return nil, nil, err
	}
	return ct, t, nil
}

// views keeps the Go tensors that C holds as views (exportView) alive and
// pinned, by the number in their manager_ctx, until their deleter runs.
var views = struct {
	mu   sync.Mutex
	next uintptr
	live map[uintptr]*view
}{live: map[uintptr]*view{}}

type view struct {
	t   *tensor.Tensor
	pin runtime.Pinner
}

// exportView returns a DLManagedTensorVersioned describing t's memory,
// without a copy, for C to own: t stays alive and pinned until its
// deleter runs, which may be on any thread, after the host is closed.
func exportView(t *tensor.Tensor) (*C.DLManagedTensorVersioned, error) {
	if t.Device().Type != tensor.CPU {
		return nil, fmt.Errorf("%w: a tensor on %v: the C API hands out CPU tensors only", dynop.ErrUnsupported, t.Device())
	}
	if t.NDim() > maxNDim {
		return nil, fmt.Errorf("%w: a tensor of %d dimensions, more than DYNOP_MAX_NDIM", errInvalid, t.NDim())
	}
	v := &view{t: t}
	if t.Base() != nil {
		v.pin.Pin(t.Base())
	}
	views.mu.Lock()
	views.next++
	id := views.next
	views.live[id] = v
	views.mu.Unlock()
	dt := t.DType()
	var shape, strides *C.int64_t
	if t.NDim() > 0 {
		shape = (*C.int64_t)(unsafe.Pointer(&t.Shape()[0]))
		strides = (*C.int64_t)(unsafe.Pointer(&t.Strides()[0]))
	}
	ct := C.dynop_capi_new_view(C.int32_t(t.NDim()), shape, strides,
		C.DLDataType{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits), lanes: C.uint16_t(dt.Lanes)},
		t.Base(), C.uint64_t(t.ByteOffset()), C.uintptr_t(id))
	if ct == nil {
		viewDone(id)
		return nil, fmt.Errorf("%w for a view of %v %v", errNoMemory, dt, t.Shape())
	}
	return ct, nil
}

// viewDone forgets view id: its tensor may be collected.
func viewDone(id uintptr) {
	views.mu.Lock()
	v := views.live[id]
	delete(views.live, id)
	views.mu.Unlock()
	if v != nil {
		v.pin.Unpin()
	}
}

// liveViews returns how many views C holds.
func liveViews() int {
	views.mu.Lock()
	defer views.mu.Unlock()
	return len(views.live)
}

//export dynop_capi_view_done
func dynop_capi_view_done(id C.uintptr_t) { viewDone(uintptr(id)) }
