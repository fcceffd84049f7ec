// Package tensor describes n-dimensional arrays the way DLPack does, so
// that Go operators and native plugins can exchange them without copying.
//
// A [Tensor] is a descriptor of memory: where it starts, the [Device] it
// lives on, the [DType] of its elements, and a shape and strides counted
// in elements, the fields of DLPack's DLTensor ([DLTensor] mirrors its
// layout). Tensors wrap memory without copying it: Go slices
// ([FromSlice]), images ([FromImage]), fresh 64-byte aligned memory
// ([New]) or memory owned by C ([FromPointer]). Views ([Tensor.Slice],
// [Tensor.Crop], [Tensor.Reshape], [Tensor.Permute]) share their tensor's
// memory; [Tensor.Contiguous] and [Tensor.CopyFrom] copy. A [Batch] is a
// list of samples whose shapes may differ.
//
// A tensor's descriptor never changes once made, so a tensor may be used
// from several goroutines; its elements are plain memory, and writing them
// while another goroutine reads them is a data race, as with a slice.
//
// Memory on a device other than the CPU is described, checked and viewed
// like any other but never dereferenced: the methods that read or write
// elements need CPU memory and say so when they get something else.
//
// Every error of this package wraps [ErrInvalid] and says what is wrong.
package tensor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// ErrInvalid is wrapped by every error of this package.
var ErrInvalid = errors.New("invalid tensor")

// invalidError is an error of this package: it reads "tensor: " and what
// is wrong, and wraps ErrInvalid.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return "tensor: " + e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

// within returns err, an error of this package, with context put before
// what is wrong, as in "tensor: sample 2: shape [-1] has a negative ...".
func within(err error, format string, args ...any) error {
	var e *invalidError
	if !errors.As(err, &e) {
		return err
	}
	return invalidf("%s: %s", fmt.Sprintf(format, args...), e.msg)
}

const (
	// align is the alignment of the memory New allocates: a cache line,
	// and enough for every vector instruction set up to AVX-512.
	align = 64
	// maxNew is the most bytes New allocates.
	maxNew = 1 << 40
)

// MaxNDim is the most dimensions a tensor crossing the plugin ABI may
// have: DYNOP_MAX_NDIM of dynop.h. Schemas may not ask for more, and an
// output a plugin describes with more is refused.
const MaxNDim = 16

// Tensor describes an n-dimensional array of elements of one DType. Its
// element at index [i0, i1, ...] starts at byte
// Base + ByteOffset + (i0*Strides[0] + i1*Strides[1] + ...) * DType.Size.
//
// A Tensor keeps the Go memory it describes alive. Its descriptor never
// changes: methods that change the shape return a new tensor sharing the
// memory.
type Tensor struct {
	base    unsafe.Pointer // start of the memory; keeps Go memory alive
	size    int            // bytes from base that may be reached
	dev     Device
	dtype   DType
	shape   []int64
	strides []int64 // in elements; always len(shape)
	offset  uint64  // bytes from base to element [0, 0, ...]
	layout  string
}

// New returns a zeroed CPU tensor of the given type and shape with compact
// row-major strides. Its data is aligned to 64 bytes. New allocates at most
// 1 TiB and reports a larger shape as too large rather than trying.
func New(dt DType, shape ...int64) (*Tensor, error) {
	n, err := numElements(dt, shape)
	if err != nil {
		return nil, err
	}
	size := n * int64(dt.Size())
	if size > maxNew || size > math.MaxInt-align {
		return nil, invalidf("%v %v needs %d bytes, too large (at most %d)", dt, shape, size, int64(maxNew))
	}
	var base unsafe.Pointer
	if size > 0 {
		buf := make([]byte, size+align-1)
		p := unsafe.Pointer(unsafe.SliceData(buf))
		// An interior pointer keeps all of buf alive.
		base = unsafe.Add(p, -uintptr(p)&(align-1))
	}
	return newTensor(base, int(size), cpu, dt, shape, nil, 0)
}

// FromSlice returns a CPU tensor of s's elements, sharing s's memory. With
// no shape it is 1-D of len(s) elements; otherwise the shape must have
// exactly len(s) elements.
func FromSlice[T Number](s []T, shape ...int64) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int64{int64(len(s))}
	}
	dt := DTypeOf[T]()
	n, err := numElements(dt, shape)
	if err != nil {
		return nil, err
	}
	if n != int64(len(s)) {
		return nil, invalidf("shape %v has %d elements, slice has %d", shape, n, len(s))
	}
	return newTensor(unsafe.Pointer(unsafe.SliceData(s)), len(s)*dt.Size(), cpu, dt, shape, nil, 0)
}

// FromPointer returns a tensor of memory owned elsewhere, as a DLPack
// import or a C plugin hands over: size bytes starting at p, on dev, whose
// element [0, 0, ...] starts byteOffset bytes after p. Nil strides mean
// compact row-major ones; strides must not be negative. Every element the
// shape reaches must lie within the size bytes; this is checked by
// arithmetic alone, so memory on other devices is never touched.
//
// The memory must stay valid, and Go memory must stay reachable some other
// way, for as long as the tensor and its views are used.
func FromPointer(p unsafe.Pointer, size int, dev Device, dt DType, shape, strides []int64, byteOffset uint64) (*Tensor, error) {
	return newTensor(p, size, dev, dt, shape, strides, byteOffset)
}

// newTensor checks a description of memory and returns the tensor it
// describes, with copies of shape and strides. Nil strides mean compact.
func newTensor(base unsafe.Pointer, size int, dev Device, dt DType, shape, strides []int64, offset uint64) (*Tensor, error) {
	n, err := numElements(dt, shape)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, invalidf("memory size %d is negative", size)
	}
	if strides == nil {
		strides, _ = compactStrides(shape) // numElements checked it fits
	} else {
		if len(strides) != len(shape) {
			return nil, invalidf("strides %v do not match shape %v", strides, shape)
		}
		for i, s := range strides {
			if s < 0 {
				return nil, invalidf("strides %v have negative stride %d in dimension %d", strides, s, i)
			}
		}
		strides = slices.Clone(strides)
	}
	if n > 0 {
		end, ok := extent(shape, strides, int64(dt.Size()))
		if ok = ok && offset <= math.MaxInt64; ok {
			end, ok = add(end, int64(offset))
		}
		if !ok || end > int64(size) {
			return nil, invalidf("%v %v with strides %v from byte offset %d reaches past the %d bytes of memory",
				dt, shape, strides, offset, size)
		}
		if base == nil {
			return nil, invalidf("%v %v has a nil data pointer", dt, shape)
		}
	}
	return &Tensor{base: base, size: size, dev: dev, dtype: dt,
		shape: slices.Clone(shape), strides: strides, offset: offset}, nil
}

// numElements checks that dt has a size and that shape is one of a tensor
// with no more than math.MaxInt64 bytes, and returns its number of elements.
func numElements(dt DType, shape []int64) (int64, error) {
	if dt.Size() == 0 {
		return 0, invalidf("dtype %v has no size", dt)
	}
	for i, d := range shape {
		if d < 0 {
			return 0, invalidf("shape %v has negative dimension %d", shape, i)
		}
	}
	// Compact strides multiply the dimensions, treating 0 as 1.
	if _, ok := compactStrides(shape); !ok {
		return 0, invalidf("shape %v has too many elements", shape)
	}
	n := product(shape)
	if _, ok := mul(n, int64(dt.Size())); !ok {
		return 0, invalidf("%v %v has too many bytes", dt, shape)
	}
	return n, nil
}

// compactStrides returns the row-major strides of shape, in which a
// dimension of size 0 counts as 1, and false if they overflow.
func compactStrides(shape []int64) ([]int64, bool) {
	strides := make([]int64, len(shape))
	s, ok := int64(1), true
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		if s, ok = mul(s, max(shape[i], 1)); !ok {
			return nil, false
		}
	}
	return strides, true
}

// product returns the number of elements of a checked shape.
func product(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// extent returns the number of bytes from the first byte of a non-empty
// tensor's element [0, 0, ...] to the end of its last reachable element.
func extent(shape, strides []int64, elemSize int64) (int64, bool) {
	last, ok := int64(0), true
	for i, d := range shape {
		var step int64
		if step, ok = mul(d-1, strides[i]); ok {
			last, ok = add(last, step)
		}
		if !ok {
			return 0, false
		}
	}
	if last, ok = mul(last, elemSize); !ok {
		return 0, false
	}
	return add(last, elemSize)
}

// mul returns a*b of non-negative numbers and whether it fits in an int64.
func mul(a, b int64) (int64, bool) {
	if a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// add returns a+b of non-negative numbers and whether it fits in an int64.
func add(a, b int64) (int64, bool) {
	if b > math.MaxInt64-a {
		return 0, false
	}
	return a + b, true
}

// Device returns the device the tensor's memory lives on.
func (t *Tensor) Device() Device { return t.dev }

// DType returns the type of the tensor's elements.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the size of each dimension. The slice is the tensor's own
// and must not be modified.
func (t *Tensor) Shape() []int64 { return t.shape }

// Strides returns the distance in elements between neighbours along each
// dimension. The slice is the tensor's own and must not be modified.
func (t *Tensor) Strides() []int64 { return t.strides }

// ByteOffset returns the number of bytes from [Tensor.Base] to the first
// element, DLPack's byte_offset.
func (t *Tensor) ByteOffset() uint64 { return t.offset }

// Layout returns the letters naming the dimensions, as in "HWC", or "" if
// they have no names.
func (t *Tensor) Layout() string { return t.layout }

// NDim returns the number of dimensions.
func (t *Tensor) NDim() int { return len(t.shape) }

// NumElements returns the number of elements: the product of the shape,
// 1 for a tensor with no dimensions.
func (t *Tensor) NumElements() int64 { return product(t.shape) }

// NBytes returns the number of bytes the elements take when compact.
func (t *Tensor) NBytes() int64 { return t.NumElements() * int64(t.dtype.Size()) }

// Base returns the start of the tensor's memory, DLPack's data pointer;
// the first element is [Tensor.ByteOffset] bytes further.
func (t *Tensor) Base() unsafe.Pointer { return t.base }

// Data returns the address of element [0, 0, ...], or nil for a tensor
// without elements.
func (t *Tensor) Data() unsafe.Pointer {
	if t.NumElements() == 0 {
		return nil
	}
	return unsafe.Add(t.base, t.offset)
}

// WithLayout returns a tensor like t whose dimensions are named by layout:
// one distinct uppercase letter per dimension, as in "NCHW", or "" for no
// names.
func (t *Tensor) WithLayout(layout string) (*Tensor, error) {
	if err := checkLayout(layout, len(t.shape)); err != nil {
		return nil, err
	}
	v := *t
	v.layout = layout
	return &v, nil
}

// checkLayout checks that layout is "" or names ndim dimensions, each
// with its own uppercase letter.
func checkLayout(layout string, ndim int) error {
	if layout == "" {
		return nil
	}
	if len(layout) != ndim {
		return invalidf("layout %q names %d dimensions, tensor has %d", layout, len(layout), ndim)
	}
	for i := range len(layout) {
		c := layout[i]
		if c < 'A' || c > 'Z' {
			return invalidf("layout %q has %q, want uppercase letters", layout, c)
		}
		if strings.IndexByte(layout[:i], c) >= 0 {
			return invalidf("layout %q repeats %q", layout, c)
		}
	}
	return nil
}

// IsContiguous reports whether the elements are compact and in row-major
// order. Strides of dimensions of size 1 do not matter, and a tensor with
// no elements is contiguous.
func (t *Tensor) IsContiguous() bool {
	if t.NumElements() == 0 {
		return true
	}
	want := int64(1)
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}

// onCPU returns an error naming op if t's memory is not on the CPU.
func (t *Tensor) onCPU(op string) error {
	if t.dev != cpu {
		return invalidf("%s needs CPU memory, tensor is on %v", op, t.dev)
	}
	return nil
}

// contiguousOnCPU returns an error naming op if t is not a contiguous CPU
// tensor.
func (t *Tensor) contiguousOnCPU(op string) error {
	if err := t.onCPU(op); err != nil {
		return err
	}
	if !t.IsContiguous() {
		return invalidf("%s needs a contiguous tensor, %v has strides %v; use Contiguous", op, t, t.strides)
	}
	return nil
}

// Span returns the bytes from the first to the end of the last reachable
// element of a CPU tensor, nil if there are none.
func (t *Tensor) Span() []byte {
	if t.NumElements() == 0 {
		return nil
	}
	n, _ := extent(t.shape, t.strides, int64(t.dtype.Size())) // checked when made
	return unsafe.Slice((*byte)(t.Data()), n)
}

// Bytes returns the elements of a contiguous CPU tensor as NBytes bytes
// that share the tensor's memory.
func (t *Tensor) Bytes() ([]byte, error) {
	if err := t.contiguousOnCPU("Bytes"); err != nil {
		return nil, err
	}
	return t.Span(), nil
}

// Values returns the elements of a contiguous CPU tensor whose DType is
// that of T, sharing the tensor's memory.
func Values[T Number](t *Tensor) ([]T, error) {
	if dt := DTypeOf[T](); dt != t.dtype {
		return nil, invalidf("Values of %v asks for %v elements, tensor has %v", t, dt, t.dtype)
	}
	if err := t.contiguousOnCPU("Values"); err != nil {
		return nil, err
	}
	p := t.Data()
	var zero T
	if uintptr(p)%unsafe.Alignof(zero) != 0 {
		return nil, invalidf("Values of %v: data at %p is not aligned for %v", t, p, t.dtype)
	}
	return unsafe.Slice((*T)(p), t.NumElements()), nil
}

// Contiguous returns t if it is contiguous, and otherwise a compact copy
// of a CPU tensor's elements.
func (t *Tensor) Contiguous() (*Tensor, error) {
	if t.IsContiguous() {
		return t, nil
	}
	if err := t.onCPU("Contiguous"); err != nil {
		return nil, err
	}
	c, err := New(t.dtype, t.shape...)
	if err != nil {
		return nil, err
	}
	c.layout = t.layout
	copyElements(c, t)
	return c, nil
}

// CopyFrom copies src's elements into t's. Both must be on the CPU and
// have the same DType and shape; their strides may differ. Their memory
// must not overlap.
func (t *Tensor) CopyFrom(src *Tensor) error {
	if err := t.onCPU("CopyFrom"); err != nil {
		return err
	}
	if err := src.onCPU("CopyFrom"); err != nil {
		return err
	}
	if t.dtype != src.dtype {
		return invalidf("CopyFrom into %v elements from %v elements", t.dtype, src.dtype)
	}
	if !slices.Equal(t.shape, src.shape) {
		return invalidf("CopyFrom into shape %v from shape %v", t.shape, src.shape)
	}
	copyElements(t, src)
	return nil
}

// copyElements copies the elements of src into dst, CPU tensors of one
// dtype and shape. The trailing dimensions that both store compactly make
// one piece copied at once (a whole row of an HWC crop, not a pixel); if
// the last dimension is strided in either, the pieces are its elements.
// The leading dimensions are walked index by index.
func copyElements(dst, src *Tensor) {
	if dst.NumElements() == 0 {
		return
	}
	es := int64(dst.dtype.Size())
	d, s := dst.Span(), src.Span()
	nd := len(dst.shape)
	run, lead := int64(1), nd // elements in the compact tail; dimensions before it
	for lead > 0 && (dst.shape[lead-1] == 1 || dst.strides[lead-1] == run && src.strides[lead-1] == run) {
		run *= dst.shape[lead-1]
		lead--
	}
	pieces, piece, dStep, sStep := int64(1), run*es, int64(0), int64(0)
	if lead == nd { // nd > 0 here: the last dimension is strided
		lead--
		pieces, piece = dst.shape[lead], es
		dStep, sStep = dst.strides[lead]*es, src.strides[lead]*es
	}
	idx := make([]int64, lead) // index over the leading dimensions
	for {
		var do, so int64
		for i, x := range idx {
			do += x * dst.strides[i] * es
			so += x * src.strides[i] * es
		}
		for range pieces {
			copy(d[do:do+piece], s[so:so+piece])
			do, so = do+dStep, so+sStep
		}
		i := lead - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < dst.shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// view returns a tensor of t's memory with another shape, strides, offset
// and layout.
func (t *Tensor) view(shape, strides []int64, offset uint64, layout string) *Tensor {
	v := *t
	v.shape, v.strides, v.offset, v.layout = shape, strides, offset, layout
	return &v
}

// Slice returns the view of t narrowed to indices [start, end) of
// dimension dim.
func (t *Tensor) Slice(dim int, start, end int64) (*Tensor, error) {
	if dim < 0 || dim >= len(t.shape) {
		return nil, invalidf("Slice of dimension %d of %d-D %v", dim, len(t.shape), t)
	}
	if start < 0 || start > end || end > t.shape[dim] {
		return nil, invalidf("Slice [%d:%d] of dimension %d of size %d", start, end, dim, t.shape[dim])
	}
	shape := slices.Clone(t.shape)
	shape[dim] = end - start
	start0 := make([]int64, len(shape))
	start0[dim] = start
	return t.view(shape, t.strides, t.offsetOf(start0, shape), t.layout), nil
}

// Crop returns the view of t of the given shape whose element [0, 0, ...]
// is t's element at start.
func (t *Tensor) Crop(start, shape []int64) (*Tensor, error) {
	if len(start) != len(t.shape) || len(shape) != len(t.shape) {
		return nil, invalidf("Crop at %v of shape %v from %d-D %v", start, shape, len(t.shape), t)
	}
	for i, d := range t.shape {
		if start[i] < 0 || shape[i] < 0 || start[i] > d || shape[i] > d-start[i] {
			return nil, invalidf("Crop at %v of shape %v leaves shape %v in dimension %d", start, shape, t.shape, i)
		}
	}
	shape = slices.Clone(shape)
	return t.view(shape, t.strides, t.offsetOf(start, shape), t.layout), nil
}

// offsetOf returns the byte offset of a view of the given shape whose
// first element is t's element at index. A view without elements keeps
// t's offset: its index may lie past t's last element.
func (t *Tensor) offsetOf(index, shape []int64) uint64 {
	off := t.offset
	if product(shape) == 0 {
		return off
	}
	for i, x := range index {
		off += uint64(x * t.strides[i] * int64(t.dtype.Size()))
	}
	return off
}

// Reshape returns a view of a contiguous tensor with another shape of as
// many elements. One dimension may be -1: it takes whatever size makes the
// counts match. The layout is kept if the number of dimensions is.
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) {
	if !t.IsContiguous() {
		return nil, invalidf("Reshape of %v with strides %v: not contiguous; use Contiguous", t, t.strides)
	}
	n := t.NumElements()
	shape = slices.Clone(shape)
	infer := -1
	known := int64(1)
	for i, d := range shape {
		switch {
		case d == -1 && infer >= 0:
			return nil, invalidf("Reshape to %v: more than one -1", shape)
		case d == -1:
			infer = i
		case d < 0:
			return nil, invalidf("Reshape to %v: dimension %d is %d", shape, i, d)
		default:
			var ok bool
			if known, ok = mul(known, d); !ok {
				return nil, invalidf("Reshape to %v: too many elements", shape)
			}
		}
	}
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return nil, invalidf("Reshape of %v to %v: no size for -1 makes %d elements", t, shape, n)
		}
		shape[infer] = n / known
		known = n
	}
	if known != n {
		return nil, invalidf("Reshape of %v to %v: %d elements, want %d", t, shape, known, n)
	}
	strides, _ := compactStrides(shape) // no more than n elements
	layout := t.layout
	if len(shape) != len(t.shape) {
		layout = ""
	}
	return t.view(shape, strides, t.offset, layout), nil
}

// Permute returns the view of t whose dimension i is t's dimension
// perm[i]. The layout's letters move with their dimensions: HWC permuted
// by 2, 0, 1 is CHW.
func (t *Tensor) Permute(perm ...int) (*Tensor, error) {
	if len(perm) != len(t.shape) {
		return nil, invalidf("Permute %v of %d-D %v", perm, len(t.shape), t)
	}
	shape := make([]int64, len(perm))
	strides := make([]int64, len(perm))
	layout := make([]byte, len(t.layout))
	seen := make([]bool, len(perm))
	for i, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return nil, invalidf("Permute %v is not a permutation of 0 to %d", perm, len(perm)-1)
		}
		seen[p] = true
		shape[i], strides[i] = t.shape[p], t.strides[p]
		if t.layout != "" {
			layout[i] = t.layout[p]
		}
	}
	return t.view(shape, strides, t.offset, string(layout)), nil
}

// String describes the tensor, as in "tensor(uint8 [480 640 3] HWC cpu)".
func (t *Tensor) String() string {
	layout := ""
	if t.layout != "" {
		layout = " " + t.layout
	}
	return fmt.Sprintf("tensor(%v %v%s %v)", t.dtype, t.shape, layout, t.dev)
}
