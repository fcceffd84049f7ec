package wasm

import (
	"context"
	"fmt"
	"slices"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
)

// Table is an interface a WebAssembly plugin provides: a struct in the
// module's memory that starts with a dynop_header and holds function
// table indices (C function pointers in wasm32), one per slot. Go code
// calls slot i with [Table.Call]. It lives in the plugin's first module
// instance, and calls take turns.
type Table struct {
	s   *session
	off uint32
	hdr abi.Header

	// Guarded by s.mainMu: the functions looked up so far, by slot, and
	// the stack calls use.
	fns   []slotFn
	stack []uint64
}

// slotFn is the function a slot held when it was last called: looking it
// up in the module's function table makes a new wrapper each time.
type slotFn struct {
	in  *instance
	idx uint32
	ft  funcType
	fn  function
}

// Header returns the table's dynop_header.
func (t *Table) Header() abi.Header { return t.hdr }

// Slots returns how many function slots follow the header.
func (t *Table) Slots() int { return int(t.hdr.Size-abi.HeaderSize) / 4 }

// Call calls the function in slot (0 is the first after the header) with
// args, checking that its wasm type is params → results, under the
// host's call deadline, and returns its results. Parameters and results
// are numbers: [I32], [I64], [F32] or [F64]. A call that fails once
// running (a trap, an exit, a deadline, the memory limit) discards the
// plugin's first instance, and with it the interface: later calls fail
// until the plugin restarts. One refused before it runs (bad arguments,
// ctx already done) leaves the interface working.
func (t *Table) Call(ctx context.Context, slot int, params, results []ValueType, args ...uint64) ([]uint64, error) {
	s := t.s
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	return t.call(ctx, slot, params, results, args)
}

// call is Call in the plugin's first instance, which it holds.
func (t *Table) call(ctx context.Context, slot int, params, results []ValueType, args []uint64) ([]uint64, error) {
	s := t.s
	in := s.main
	what := func() string {
		return fmt.Sprintf("wasm: plugin %q: interface {%s} slot %d", s.p.info.ID, t.hdr.Type, slot)
	}
	if slot < 0 || slot >= t.Slots() {
		return nil, fmt.Errorf("%s: %w: the table has %d slots", what(), dynop.ErrInvalid, t.Slots())
	}
	if in.dead != nil {
		return nil, fmt.Errorf("%s: %w: the plugin's first module instance was discarded: %w", what(), dynop.ErrState, in.dead)
	}
	if len(args) != len(params) {
		return nil, fmt.Errorf("%s: %w: %d arguments for %d parameters", what(), dynop.ErrInvalid, len(args), len(params))
	}
	b, ok := in.mem.Read(t.off+abi.HeaderSize+4*uint32(slot), 4)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the table lies outside the module's memory", what(), ErrABI)
	}
	fn, err := t.function(in, slot, le.Uint32(b), params, results)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if n := max(len(params), len(results)); cap(t.stack) < n {
		t.stack = make([]uint64, n)
	}
	stack := t.stack[:max(len(params), len(results))]
	copy(stack, args)
	if err := in.run(ctx, fn, stack); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if len(results) == 0 {
		return nil, nil
	}
	return append([]uint64(nil), stack[:len(results)]...), nil
}

// function returns the function at index idx of in's function table for
// slot, looked up once for as long as the slot holds it and is called
// with the same type, which must be numbers.
func (t *Table) function(in *instance, slot int, idx uint32, params, results []ValueType) (function, error) {
	if len(t.fns) <= slot {
		t.fns = append(t.fns, make([]slotFn, slot+1-len(t.fns))...)
	}
	c := &t.fns[slot]
	if c.fn != nil && c.in == in && c.idx == idx && slices.Equal(c.ft.params, params) && slices.Equal(c.ft.results, results) {
		return c.fn, nil
	}
	for k, ts := range [2][]ValueType{params, results} {
		for i, t := range ts {
			if !t.numeric() {
				which := [2]string{"parameter", "result"}[k]
				return nil, fmt.Errorf("%w: %s %d has type %s: Call passes i32, i64, f32 and f64 only", dynop.ErrInvalid, which, i, t)
			}
		}
	}
	ft := funcType{slices.Clone(params), slices.Clone(results)}
	fn, err := in.mod.tableFunction(idx, ft)
	if err != nil {
		return nil, err
	}
	*c = slotFn{in, idx, ft, fn}
	return fn, nil
}
