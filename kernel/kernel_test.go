package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
)

// scratchKernel asks Setup for args bytes of HostMemory scratch and, in Run, takes
// it in two pieces and writes them.
type scratchKernel struct {
	shapes  [][][]int64 // pre-built, so Setup allocates nothing
	failing bool        // Setup fails
	sawPad  *Scratchpad // the scratchpad the last Run got
	runs    int
}

type pieces struct {
	first, second int // bytes of the two pieces
	align         int // alignment of the second piece
}

func (k *scratchKernel) Setup(_ *Context, n int64) (Requirements, error) {
	if k.failing {
		return Requirements{}, errors.New("setup failed")
	}
	return Requirements{OutputShapes: k.shapes, Scratch: [NumMemKinds]int64{HostMemory: n}}, nil
}

func (k *scratchKernel) Run(ctx *Context, p pieces) error {
	k.runs++
	k.sawPad = ctx.Scratchpad
	a, err := ctx.Scratchpad.Alloc(HostMemory, p.first, 64)
	if err != nil {
		return err
	}
	b, err := ctx.Scratchpad.Alloc(HostMemory, p.second, p.align)
	if err != nil {
		return err
	}
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 2
	}
	if !aligned(a, 64) || !aligned(b, p.align) {
		return errors.New("misaligned scratch")
	}
	return nil
}

func aligned(b []byte, align int) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(align) == 0
}

// deviceKernel asks for device scratch.
type deviceKernel struct{}

func (deviceKernel) Setup(*Context, int) (Requirements, error) {
	return Requirements{Scratch: [NumMemKinds]int64{DeviceMemory: 16}}, nil
}
func (deviceKernel) Run(*Context, int) error { return nil }

var wantErr = testutil.WantErr

func newScratch() (*scratchKernel, error) { return &scratchKernel{}, nil }

func TestCreateOrGet(t *testing.T) {
	var m Manager
	m.Resize(4)
	calls := 0
	create := func() (*scratchKernel, error) { calls++; return &scratchKernel{}, nil }
	k1, err := CreateOrGet(&m, 1, create)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := CreateOrGet(&m, 1, create)
	if err != nil || k2 != k1 || calls != 1 {
		t.Fatalf("second CreateOrGet: %p, %v, %d create calls; want %p, nil, 1", k2, err, calls, k1)
	}
	if k, err := Get[*scratchKernel](&m, 1); err != nil || k != k1 {
		t.Fatalf("Get: %p, %v", k, err)
	}

	_, err = CreateOrGet(&m, 1, func() (deviceKernel, error) { return deviceKernel{}, nil })
	wantErr(t, err, ErrType, "slot 1", "kernel.deviceKernel", "*kernel.scratchKernel")
	_, err = Get[deviceKernel](&m, 1)
	wantErr(t, err, ErrType, "slot 1", "kernel.deviceKernel", "*kernel.scratchKernel")
	if k, _ := Get[*scratchKernel](&m, 1); k != k1 {
		t.Fatal("type mismatch replaced the kernel")
	}
	// An interface type matches any kernel implementing it.
	if _, err := Get[Runner[pieces]](&m, 1); err != nil {
		t.Fatal(err)
	}

	_, err = Get[*scratchKernel](&m, 2)
	wantErr(t, err, ErrEmpty, "slot 2")
	boom := errors.New("boom")
	if _, err := CreateOrGet(&m, 2, func() (*scratchKernel, error) { return nil, boom }); err != boom {
		t.Fatalf("create error: %v", err)
	}
	_, err = Get[*scratchKernel](&m, 2)
	wantErr(t, err, ErrEmpty, "slot 2")
	_, err = CreateOrGet(&m, 2, func() (Runner[pieces], error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("nil kernel: %v", err)
	}

	for _, i := range []int{-1, 4} {
		_, err = Get[*scratchKernel](&m, i)
		wantErr(t, err, ErrRange, "index ", "4 instances")
		_, err = CreateOrGet(&m, i, create)
		wantErr(t, err, ErrRange)
		wantErr(t, m.Clear(i), ErrRange)
		_, err = m.Requirements(i)
		wantErr(t, err, ErrRange)
	}
}

func TestResizeClearReset(t *testing.T) {
	var m Manager
	m.Resize(4)
	for i := range 4 {
		if _, err := CreateOrGet(&m, i, newScratch); err != nil {
			t.Fatal(err)
		}
	}
	k0, _ := Get[*scratchKernel](&m, 0)
	m.Resize(2)
	if m.Len() != 2 {
		t.Fatalf("Len %d", m.Len())
	}
	m.Resize(4)
	if k, err := Get[*scratchKernel](&m, 0); k != k0 || err != nil {
		t.Fatal("Resize dropped a slot below n")
	}
	for _, i := range []int{2, 3} {
		_, err := Get[*scratchKernel](&m, i)
		wantErr(t, err, ErrEmpty, "slot")
	}
	if err := m.Clear(0); err != nil {
		t.Fatal(err)
	}
	_, err := Get[*scratchKernel](&m, 0)
	wantErr(t, err, ErrEmpty, "slot 0")
	m.Reset()
	if m.Len() != 4 {
		t.Fatalf("Reset changed Len to %d", m.Len())
	}
	_, err = Get[*scratchKernel](&m, 1)
	wantErr(t, err, ErrEmpty, "slot 1")
}

func TestSetupRun(t *testing.T) {
	var m Manager
	m.Resize(1)
	k, _ := CreateOrGet(&m, 0, newScratch)
	k.shapes = [][][]int64{{{3, 4}}}

	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(8)); err != nil {
		t.Fatal(err)
	}
	err := Run[*scratchKernel](&m, 0, nil, pieces{4, 4, 4})
	if err != nil {
		t.Fatal(err)
	}
	req, err := m.Requirements(0)
	if err != nil || req.Scratch[HostMemory] != 8 || req.OutputShapes[0][0][1] != 4 {
		t.Fatalf("Requirements: %+v, %v", req, err)
	}

	k.failing = true
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(8)); err == nil {
		t.Fatal("Setup did not fail")
	}
	err = Run[*scratchKernel](&m, 0, nil, pieces{})
	wantErr(t, err, ErrNotSetUp, "slot 0")
	_, err = m.Requirements(0)
	wantErr(t, err, ErrNotSetUp, "slot 0")

	// A new kernel in the slot is not set up.
	k.failing = false
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(8)); err != nil {
		t.Fatal(err)
	}
	m.Clear(0)
	_, err = Setup[*scratchKernel](&m, 0, nil, int64(8))
	wantErr(t, err, ErrEmpty, "slot 0")
	CreateOrGet(&m, 0, newScratch)
	err = Run[*scratchKernel](&m, 0, nil, pieces{})
	wantErr(t, err, ErrNotSetUp, "slot 0")
	_, err = Setup[deviceKernel](&m, 0, nil, 0)
	wantErr(t, err, ErrType, "slot 0", "deviceKernel")
	err = Run[deviceKernel](&m, 0, nil, 0)
	wantErr(t, err, ErrType, "slot 0", "deviceKernel")
}

func TestAutomaticScratchpad(t *testing.T) {
	var m Manager
	m.Resize(1)
	k, _ := CreateOrGet(&m, 0, newScratch)
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(1000)); err != nil {
		t.Fatal(err)
	}
	for _, align := range []int{1, 64, 256} {
		if err := Run[*scratchKernel](&m, 0, nil, pieces{600, 400, align}); err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
	}
	if k.sawPad != &m.arena || m.arena.Capacity(HostMemory) < 1000 {
		t.Fatalf("kernel got %p, want the manager's arena %p of ≥1000 bytes (has %d)",
			k.sawPad, &m.arena, m.arena.Capacity(HostMemory))
	}
	capBefore := m.arena.Capacity(HostMemory)
	err := Run[*scratchKernel](&m, 0, &Context{}, pieces{600, 401, 8})
	wantErr(t, err, ErrScratch, "host", "asked 401", "400 left")
	if m.arena.Capacity(HostMemory) != capBefore {
		t.Fatal("arena reallocated for the same requirements")
	}
	// Alignments above 64 need their padding in the requirement.
	err = Run[*scratchKernel](&m, 0, nil, pieces{600, 400, 4096})
	wantErr(t, err, ErrScratch, "asked 400")
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(1000+4096)); err != nil {
		t.Fatal(err)
	}
	if err := Run[*scratchKernel](&m, 0, nil, pieces{600, 400, 4096}); err != nil {
		t.Fatal(err)
	}
	capBefore = m.arena.Capacity(HostMemory)
	// A smaller requirement reuses the arena.
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(10)); err != nil {
		t.Fatal(err)
	}
	if err := Run[*scratchKernel](&m, 0, nil, pieces{5, 5, 1}); err != nil || m.arena.Capacity(HostMemory) != capBefore {
		t.Fatalf("smaller run: %v, capacity %d", err, m.arena.Capacity(HostMemory))
	}
}

func TestUserScratchpad(t *testing.T) {
	var m Manager
	m.Resize(1)
	k, _ := CreateOrGet(&m, 0, newScratch)
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(100)); err != nil {
		t.Fatal(err)
	}
	sp := NewScratchpad()
	if err := sp.Reserve([NumMemKinds]int64{HostMemory: 100}); err != nil {
		t.Fatal(err)
	}
	ctx := &Context{Scratchpad: sp}
	if err := Run[*scratchKernel](&m, 0, ctx, pieces{50, 50, 32}); err != nil {
		t.Fatal(err)
	}
	if k.sawPad != sp || m.arena.Capacity(HostMemory) != 0 {
		t.Fatalf("kernel got %p (want %p); manager arena capacity %d (want 0)", k.sawPad, sp, m.arena.Capacity(HostMemory))
	}
	// The caller resets its own scratchpad: without that it is used up.
	err := Run[*scratchKernel](&m, 0, ctx, pieces{50, 50, 32})
	wantErr(t, err, ErrScratch, "host", "asked 50", "0 left")
}

func TestDeviceScratch(t *testing.T) {
	var m Manager
	m.Resize(1)
	CreateOrGet(&m, 0, func() (deviceKernel, error) { return deviceKernel{}, nil })
	if _, err := Setup[deviceKernel](&m, 0, nil, 0); err != nil {
		t.Fatal(err)
	}
	err := Run[deviceKernel](&m, 0, nil, 0)
	wantErr(t, err, errdefs.ErrUnsupported, "slot 0", "no device memory", "16 bytes")
	wantErr(t, NewScratchpad().Reserve([NumMemKinds]int64{ManagedMemory: 1}), errdefs.ErrUnsupported, "no managed memory")
	if err := NewScratchpad().Reserve([NumMemKinds]int64{PinnedMemory: 10}); err != nil {
		t.Fatalf("pinned: %v", err)
	}
}

func TestCancelled(t *testing.T) {
	var m Manager
	m.Resize(1)
	k, _ := CreateOrGet(&m, 0, newScratch)
	Setup[*scratchKernel](&m, 0, nil, int64(0))
	c, cancel := context.WithCancel(context.Background())
	cancel()
	err := Run[*scratchKernel](&m, 0, &Context{Context: c}, pieces{})
	if !errors.Is(err, context.Canceled) || k.runs != 0 {
		t.Fatalf("Run on a cancelled context: %v, %d runs", err, k.runs)
	}
}

func TestScratchpad(t *testing.T) {
	s := NewScratchpad()
	if b, err := s.Alloc(HostMemory, 0, 1); err != nil || len(b) != 0 {
		t.Fatalf("zero-size alloc on an empty scratchpad: %v", err)
	}
	_, err := s.Alloc(HostMemory, 1, 1)
	wantErr(t, err, ErrScratch, "host", "asked 1", "0 left")
	for _, align := range []int{0, -8, 3, 8192} {
		if _, err := s.Alloc(HostMemory, 1, align); err == nil || !strings.Contains(err.Error(), "alignment") {
			t.Errorf("align %d: %v", align, err)
		}
	}
	if _, err := s.Alloc(NumMemKinds, 1, 1); err == nil {
		t.Error("invalid kind accepted")
	}
	if err := s.Reserve([NumMemKinds]int64{HostMemory: -1}); err == nil {
		t.Error("negative request accepted")
	}

	// The reservation rule: 8 allocations aligned to 64 always fit.
	if err := s.Reserve([NumMemKinds]int64{HostMemory: 8}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Capacity(HostMemory), int64(64+8*64); got != want {
		t.Fatalf("capacity %d, want %d", got, want)
	}
	if !aligned(s.arenas[HostMemory].buf, 64) {
		t.Fatal("arena not 64-byte aligned")
	}
	for range 8 {
		b, err := s.Alloc(HostMemory, 1, 64)
		if err != nil || !aligned(b, 64) || cap(b) != 1 {
			t.Fatalf("alloc: %v", err)
		}
	}
	_, err = s.Alloc(HostMemory, 1, 1)
	wantErr(t, err, ErrScratch, "asked 1", "0 left")
	s.Reset()
	if _, err := s.Alloc(HostMemory, 8, 1); err != nil {
		t.Fatalf("after Reset: %v", err)
	}

	// Typed allocation, aligned to the type.
	if err := s.Reserve([NumMemKinds]int64{HostMemory: 3 + 8*4 + 16*3}); err != nil {
		t.Fatal(err)
	}
	base := unsafe.SliceData(s.arenas[HostMemory].buf)
	b, _ := Allocate[int8](s, HostMemory, 3)
	f, err := Allocate[float64](s, HostMemory, 4)
	if err != nil || len(f) != 4 || uintptr(unsafe.Pointer(&f[0]))%8 != 0 {
		t.Fatalf("Allocate[float64]: %v", err)
	}
	c, err := Allocate[complex128](s, HostMemory, 3)
	if err != nil || len(c) != 3 {
		t.Fatalf("Allocate[complex128]: %v", err)
	}
	b[2], f[3], c[2] = 1, 2, 3
	if z, err := Allocate[int32](s, HostMemory, 0); z != nil || err != nil {
		t.Fatalf("Allocate 0: %v, %v", z, err)
	}
	if _, err := Allocate[int32](s, HostMemory, -1); err == nil {
		t.Fatal("Allocate -1 accepted")
	}
	_, err = Allocate[float32](s, PinnedMemory, 1)
	wantErr(t, err, ErrScratch, "pinned")
	if err := s.Reserve([NumMemKinds]int64{HostMemory: 8}); err != nil || unsafe.SliceData(s.arenas[HostMemory].buf) != base {
		t.Fatalf("Reserve of less than the capacity reallocated (%v)", err)
	}
	if s.Capacity(MemKind(-1)) != 0 || MemKind(9).String() != "MemKind(9)" || ManagedMemory.String() != "managed" {
		t.Fatal("MemKind edge cases")
	}
}

func TestZeroAllocs(t *testing.T) {
	var m Manager
	m.Resize(2)
	CreateOrGet(&m, 0, func() (*scratchKernel, error) {
		return &scratchKernel{shapes: [][][]int64{{{16, 16, 3}}}}, nil
	})
	CreateOrGet(&m, 1, newScratch)
	ctx := &Context{Context: context.Background()}
	p := pieces{512, 256, 128}
	if _, err := Setup[*scratchKernel](&m, 0, nil, int64(1024)); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup[*scratchKernel](&m, 1, ctx, int64(2048)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Context{nil, ctx} { // warm up
		Run[*scratchKernel](&m, 0, c, p)
		Run[*scratchKernel](&m, 1, c, p)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := Run[*scratchKernel](&m, 0, nil, p); err != nil {
			t.Fatal(err)
		}
		if err := Run[*scratchKernel](&m, 1, ctx, p); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Run: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := range 2 {
			if _, err := Setup[*scratchKernel](&m, i, ctx, int64(1024*(i+1))); err != nil {
				t.Fatal(err)
			}
			if err := Run[*scratchKernel](&m, i, nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}); n != 0 {
		t.Errorf("Setup+Run: %v allocs, want 0", n)
	}
}
