// Package kernel manages compute kernel instances for an operator, after
// NVIDIA DALI's KernelManager (dali/kernels/kernel_manager.h).
//
// A kernel is any value with a Setup method ([Setupper]) that inspects its
// arguments and returns [Requirements] — the output shapes and the bytes of
// scratch memory per [MemKind] it will need — and a Run method ([Runner])
// that computes, taking its scratch from the [Context]'s [Scratchpad]. An
// operator keeps its kernels in a [Manager]: one slot per sample (for
// kernels that handle one sample) or per minibatch, each slot holding a
// kernel of any type together with the requirements its last Setup
// returned. The generic functions [CreateOrGet], [Get], [Setup] and [Run]
// check the slot's kernel type with a type assertion, so different slots
// may hold kernels of different types (say, a bilinear resampler for one
// sample and a nearest-neighbour one for the next).
//
// As in DALI, Run without a scratchpad in its Context uses one the Manager
// provides. Unlike DALI's, which allocates a fresh one per call, the
// Manager's is an arena that it keeps and reuses: it grows only when a
// slot's requirements exceed its capacity. Once warmed up, Run through a
// Manager allocates nothing from the Go heap, and Setup adds no allocation
// to the kernel's own (0 allocs/op; see the package tests and benchmarks).
//
// Where DALI throws, this package returns errors that wrap [ErrType],
// [ErrRange], [ErrEmpty], [ErrNotSetUp] or [ErrScratch] and name the slot,
// types or memory kind involved.
//
// A Manager, like DALI's, is not safe for concurrent use: an operator
// instance owns one and calls it from one goroutine at a time.
package kernel

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

var (
	// ErrType: the slot holds a kernel of another type than asked for.
	ErrType = errors.New("kernel: wrong kernel type")
	// ErrRange: the slot index is not in [0, Len()).
	ErrRange = errors.New("kernel: instance index out of range")
	// ErrEmpty: the slot holds no kernel.
	ErrEmpty = errors.New("kernel: empty slot")
	// ErrNotSetUp: Run on a slot whose kernel has had no successful Setup
	// since it was created, or whose last Setup failed.
	ErrNotSetUp = errors.New("kernel: run before setup")
	// ErrScratch: a kernel took more scratch than was reserved for it.
	ErrScratch = errors.New("kernel: scratch exhausted")
)

// Requirements is what a kernel's Setup reports, after DALI's
// KernelRequirements.
type Requirements struct {
	// OutputShapes has, per output, the shape of each sample; a kernel that
	// handles one sample puts one shape per output.
	OutputShapes [][][]int64
	// Scratch is the number of bytes per memory kind that Run may take from
	// the scratchpad.
	Scratch [NumMemKinds]int64
}

// Setupper is a kernel's setup half: from its arguments it computes what Run
// will need.
type Setupper[A any] interface {
	Setup(ctx *Context, args A) (Requirements, error)
}

// Runner is a kernel's run half.
type Runner[A any] interface {
	Run(ctx *Context, args A) error
}

// Context is what Setup and Run pass to a kernel, after DALI's
// KernelContext.
type Context struct {
	// Context carries cancellation; nil means context.Background().
	Context context.Context
	// Scratchpad is where Run takes scratch memory from. When nil, [Run]
	// gives the kernel the Manager's own arena, reserved from the slot's
	// requirements and reset.
	Scratchpad *Scratchpad
}

// Manager holds kernel instances in numbered slots. The zero Manager has no
// slots; [Manager.Resize] makes some. A Manager must not be copied after
// first use.
type Manager struct {
	slots []slot
	arena Scratchpad // the automatic scratchpad
	ctx   Context    // reused for calls with a nil Context or Scratchpad
}

type slot struct {
	k     any // the kernel; nil when empty
	req   Requirements
	setUp bool
}

// Resize makes n slots (n < 0 panics). Slots below n keep their kernels;
// those from n up are dropped.
func (m *Manager) Resize(n int) {
	if n < 0 {
		panic(fmt.Sprintf("kernel: Resize(%d)", n))
	}
	if n <= len(m.slots) {
		clear(m.slots[n:]) // let the dropped kernels go; also keeps regrown slots empty
		m.slots = m.slots[:n]
		return
	}
	m.slots = append(m.slots, make([]slot, n-len(m.slots))...)
}

// Reset drops every kernel and its requirements; the number of slots stays,
// and so does the automatic scratchpad's memory.
func (m *Manager) Reset() { clear(m.slots) }

// Len returns the number of slots.
func (m *Manager) Len() int { return len(m.slots) }

// Clear empties slot i.
func (m *Manager) Clear(i int) error {
	if err := m.check(i); err != nil {
		return err
	}
	m.slots[i] = slot{}
	return nil
}

func (m *Manager) check(i int) error {
	if i < 0 || i >= len(m.slots) {
		return fmt.Errorf("%w: index %d, %d instances", ErrRange, i, len(m.slots))
	}
	return nil
}

// Requirements returns the requirements slot i's kernel returned from its
// last Setup. It fails with [ErrNotSetUp] when that Setup failed or there
// was none since the kernel was created.
func (m *Manager) Requirements(i int) (Requirements, error) {
	if err := m.check(i); err != nil {
		return Requirements{}, err
	}
	s := &m.slots[i]
	if s.k == nil {
		return Requirements{}, fmt.Errorf("%w: slot %d", ErrEmpty, i)
	}
	if !s.setUp {
		return Requirements{}, fmt.Errorf("%w: slot %d", ErrNotSetUp, i)
	}
	return s.req, nil
}

// CreateOrGet returns the K in slot i, calling create to make one when the
// slot is empty. An error from create is returned as is and leaves the slot
// empty. When the slot holds a kernel of another type the error wraps
// [ErrType] and the kernel stays: to replace it, call [Manager.Clear] first.
// K may be an interface type; then any kernel implementing it matches.
func CreateOrGet[K any](m *Manager, i int, create func() (K, error)) (K, error) {
	var zero K
	if err := m.check(i); err != nil {
		return zero, err
	}
	if m.slots[i].k != nil {
		return Get[K](m, i)
	}
	k, err := create()
	if err != nil {
		return zero, err
	}
	if any(k) == nil {
		return zero, fmt.Errorf("kernel: slot %d: create returned a nil %v", i, reflect.TypeFor[K]())
	}
	m.slots[i] = slot{k: k}
	return k, nil
}

// Get returns the K in slot i. The error wraps [ErrRange], [ErrEmpty] or
// [ErrType]; the last names the slot, the type asked for and the type found.
func Get[K any](m *Manager, i int) (K, error) {
	var zero K
	if err := m.check(i); err != nil {
		return zero, err
	}
	s := &m.slots[i]
	if s.k == nil {
		return zero, fmt.Errorf("%w: slot %d", ErrEmpty, i)
	}
	k, ok := s.k.(K)
	if !ok {
		return zero, fmt.Errorf("%w: slot %d holds %T, want %v", ErrType, i, s.k, reflect.TypeFor[K]())
	}
	return k, nil
}

// Setup calls the Setup method of the K in slot i and caches the
// requirements it returns, marking the slot set up. When Setup fails the
// mark and the cached requirements are cleared. A nil ctx stands for an
// empty Context. Setup allocates nothing itself: the Requirements value,
// shapes included, is kept as the kernel returned it.
func Setup[K Setupper[S], S any](m *Manager, i int, ctx *Context, args S) (Requirements, error) {
	k, err := Get[K](m, i)
	if err != nil {
		return Requirements{}, err
	}
	if ctx == nil {
		m.ctx = Context{}
		ctx = &m.ctx
	}
	req, err := k.Setup(ctx, args)
	s := &m.slots[i]
	if err != nil {
		s.req, s.setUp = Requirements{}, false
		return Requirements{}, err
	}
	s.req, s.setUp = req, true
	return req, nil
}

// Run calls the Run method of the K in slot i, which must be set up.
//
// When ctx or ctx.Scratchpad is nil the kernel gets a Context owned by the
// Manager, with ctx's Context field and the Manager's arena as Scratchpad;
// the arena is first reserved for the slot's requirements (memory is
// reallocated only when it is too small) and reset. A scratch requirement
// for DeviceMemory or ManagedMemory then makes Run fail, as there is no such
// memory yet. A Scratchpad the caller provides is passed on untouched: the
// caller reserves and resets it.
//
// If ctx.Context is already done Run returns its error without running the
// kernel. A panic in the kernel is not recovered; the operator layer above
// is the place for that.
func Run[K Runner[R], R any](m *Manager, i int, ctx *Context, args R) error {
	k, err := Get[K](m, i)
	if err != nil {
		return err
	}
	s := &m.slots[i]
	if !s.setUp {
		return fmt.Errorf("%w: slot %d", ErrNotSetUp, i)
	}
	var c context.Context
	if ctx != nil {
		c = ctx.Context
	}
	if c != nil {
		if err := c.Err(); err != nil {
			return err
		}
	}
	if ctx != nil && ctx.Scratchpad != nil {
		return k.Run(ctx, args)
	}
	if err := m.arena.Reserve(s.req.Scratch); err != nil {
		return fmt.Errorf("%w (slot %d)", err, i)
	}
	m.ctx = Context{Context: c, Scratchpad: &m.arena}
	err = k.Run(&m.ctx, args)
	m.ctx = Context{} // do not keep the caller's context.Context alive
	return err
}
