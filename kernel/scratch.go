package kernel

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/dynop/dynop/internal/errdefs"
)

// MemKind is a kind of memory a kernel may ask for scratch in, after DALI's
// mm::memory_kind.
type MemKind int

// The memory kinds. Only HostMemory exists on this machine; PinnedMemory
// is backed by ordinary host memory. DeviceMemory and ManagedMemory have
// no allocator yet: reserving a non-zero amount of either fails with an error wrapping
// [dynop.ErrUnsupported] that says there is no such memory.
const (
	HostMemory MemKind = iota
	PinnedMemory
	DeviceMemory
	ManagedMemory
	NumMemKinds = 4 // the number of memory kinds; an untyped constant, for array lengths
)

var memKindNames = [NumMemKinds]string{"host", "pinned", "device", "managed"}

func (k MemKind) String() string {
	if k >= 0 && k < NumMemKinds {
		return memKindNames[k]
	}
	return "MemKind(" + strconv.Itoa(int(k)) + ")"
}

// backed reports whether memory of kind k can be had on this machine.
func (k MemKind) backed() bool { return k == HostMemory || k == PinnedMemory }

const (
	baseAlign   = 64   // every arena starts at a multiple of this
	maxAlign    = 4096 // the largest alignment Alloc accepts
	slackAllocs = 8    // Reserve leaves room for the padding of this many allocations aligned ≤ baseAlign
)

// maxRequest is the largest number of bytes one kind may reserve, chosen so
// that rounding and slack cannot overflow an int on any platform.
const maxRequest = math.MaxInt - 2*maxAlign - slackAllocs*baseAlign

// Scratchpad holds one bump-allocated arena per [MemKind]: a single []byte
// starting at a 64-byte boundary. [Scratchpad.Reserve] sizes it from a
// kernel's [Requirements]; [Scratchpad.Alloc] and [Allocate] hand out pieces
// of it without touching the Go heap; [Scratchpad.Reset] makes all pieces
// invalid and the memory reusable. Memory handed out is not zeroed.
//
// Besides capacity, each kind has a budget: the byte count passed to the last
// Reserve. Allocations whose sizes (padding not counted) would exceed the
// budget fail with [ErrScratch] even if the arena has room, so a kernel that
// takes more than its Setup asked for is caught at once.
//
// The zero Scratchpad is empty and ready to use. A Scratchpad is not safe
// for concurrent use.
type Scratchpad struct {
	arenas [NumMemKinds]arena
}

type arena struct {
	buf   []byte
	off   int // next free byte of buf
	used  int // bytes handed out, padding not counted
	limit int // budget from the last Reserve
}

// NewScratchpad returns an empty Scratchpad; Reserve before allocating.
func NewScratchpad() *Scratchpad { return new(Scratchpad) }

// Reserve makes allocations totalling req[k] bytes of each kind k succeed,
// sets each kind's budget to req[k] and resets the scratchpad. An arena is
// reallocated only when it is smaller than needed, so a steady-state Reserve
// allocates nothing.
//
// The rule: kind k gets a capacity of at least req[k] rounded up to 64 bytes,
// plus 64 bytes for each of 8 allocations. That covers the alignment padding
// of up to 8 allocations aligned to at most 64 bytes each; more allocations
// are fine when their sizes keep the following ones aligned (as slices of one
// element type do), and larger alignments should be added to req by the
// kernel's Setup.
//
// A negative request, or a non-zero one for DeviceMemory or ManagedMemory, is an
// error and leaves the scratchpad unchanged.
func (s *Scratchpad) Reserve(req [NumMemKinds]int64) error {
	for k, n := range req {
		kind := MemKind(k)
		if n < 0 || n > maxRequest {
			return fmt.Errorf("kernel: invalid %s scratch request of %d bytes", kind, n)
		}
		if n > 0 && !kind.backed() {
			return fmt.Errorf("kernel: no %s memory for %d bytes of scratch (no GPU allocator yet): %w",
				kind, n, errdefs.ErrUnsupported)
		}
	}
	for k, n := range req {
		a := &s.arenas[k]
		if need := reserveSize(int(n)); need > len(a.buf) {
			a.buf = alignedBytes(need)
		}
		a.limit = int(n)
	}
	s.Reset()
	return nil
}

func reserveSize(n int) int {
	if n == 0 {
		return 0
	}
	return (n+baseAlign-1)&^(baseAlign-1) + slackAllocs*baseAlign
}

// alignedBytes returns n bytes starting at a multiple of baseAlign.
func alignedBytes(n int) []byte {
	b := make([]byte, n+baseAlign-1)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (baseAlign - 1))
	return b[off : off+n : off+n]
}

// Alloc bump-allocates size bytes of the given kind, starting at a multiple
// of align (a power of two no larger than 4096). The slice's capacity ends
// with it, so appending to it cannot overwrite a neighbour. A size of zero
// always succeeds and takes nothing. When the arena or the kind's budget
// has too little left the error wraps [ErrScratch] and names the kind, the
// size asked for and what is left. Alloc never allocates from the Go heap;
// the bytes are not zeroed.
func (s *Scratchpad) Alloc(kind MemKind, size, align int) ([]byte, error) {
	if kind < 0 || kind >= NumMemKinds {
		return nil, fmt.Errorf("kernel: invalid memory kind %d", int(kind))
	}
	if align <= 0 || align > maxAlign || align&(align-1) != 0 {
		return nil, fmt.Errorf("kernel: alignment %d is not a power of two ≤ %d", align, maxAlign)
	}
	if size < 0 {
		return nil, fmt.Errorf("kernel: negative %s scratch size %d", kind, size)
	}
	a := &s.arenas[kind]
	if size == 0 {
		return a.buf[:0:0], nil
	}
	pad := 0
	if len(a.buf) > 0 {
		addr := uintptr(unsafe.Pointer(unsafe.SliceData(a.buf))) + uintptr(a.off)
		pad = int(-addr & uintptr(align-1))
	}
	left := max(min(a.limit-a.used, len(a.buf)-a.off-pad), 0)
	if size > left {
		return nil, fmt.Errorf("%w: %s: asked %d bytes, %d left", ErrScratch, kind, size, left)
	}
	start := a.off + pad
	a.off = start + size
	a.used += size
	return a.buf[start:a.off:a.off], nil
}

// Scalar lists the element types [Allocate] accepts: types without
// pointers, so that scratch memory, which the garbage collector does not
// scan, never hides a pointer from it.
type Scalar interface {
	~bool | ~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// Allocate takes n elements of type T from the scratchpad, aligned to T's
// alignment, as [Scratchpad.Alloc] does. The elements are not zeroed.
// It returns nil for n == 0.
func Allocate[T Scalar](s *Scratchpad, kind MemKind, n int) ([]T, error) {
	var zero T
	size, align := int(unsafe.Sizeof(zero)), int(unsafe.Alignof(zero))
	if n < 0 || n > math.MaxInt/size {
		return nil, fmt.Errorf("kernel: cannot allocate %d elements of %d bytes", n, size)
	}
	b, err := s.Alloc(kind, n*size, align)
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// Reset makes every allocation invalid and all memory reusable; capacities
// and budgets stay.
func (s *Scratchpad) Reset() {
	for k := range s.arenas {
		s.arenas[k].off, s.arenas[k].used = 0, 0
	}
}

// Capacity returns the size in bytes of kind's arena.
func (s *Scratchpad) Capacity(kind MemKind) int64 {
	if kind < 0 || kind >= NumMemKinds {
		return 0
	}
	return int64(len(s.arenas[kind].buf))
}
