package wasm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/dynop/dynop/op"
	"slices"
)

// RawScale is wgood.Scale's dynop_wasm_op_run called through the engine
// alone: in a module instance of the started plugin p, the operator
// created once and one input and one output tensor of n float32 laid out
// in its memory once. Each Call is one call of the export as the loader's
// engine makes any call — with the host's per-call deadline — and nothing
// else: no checks, no copy in or out. It is the floor a host could reach.
type RawScale struct {
	in     *instance
	stack  [8]uint64
	params [8]uint64
}

// NewRawScale prepares calls of wgood.Scale (factor 2) on n floats in a
// module instance of p, which must be started.
func NewRawScale(ctx context.Context, p *Plugin, n int) (*RawScale, error) {
	p.mu.Lock()
	s := p.sess
	p.mu.Unlock()
	if s == nil {
		return nil, errors.New("the plugin is not started")
	}
	k := slices.IndexFunc(s.ops, func(o *wasmOp) bool { return o.name == "wgood.Scale" })
	if k < 0 {
		return nil, errors.New("the plugin has no operator wgood.Scale")
	}
	in, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	mem := in.mem
	// Arguments: factor 2.0 (float), fail_at -1 (int): two dynop_args.
	args, err := in.alloc(ctx, 256, 8)
	if err != nil {
		return nil, err
	}
	put := func(off uint32, s string) { mem.Write(off, append([]byte(s), 0)) }
	put(args+100, "factor")
	put(args+110, "fail_at")
	mem.WriteUint64Le(args+120, 0x4000000000000000) // 2.0
	mem.WriteUint64Le(args+128, ^uint64(0))         // -1
	for i, a := range [][5]uint32{{args + 100, 2, 1, 1, args + 120}, {args + 110, 1, 1, 1, args + 128}} {
		for j, v := range a {
			mem.WriteUint32Le(args+uint32(20*i+4*j), v)
		}
	}
	out := args + 200
	handle := uint64(s.ops[k].handle)
	if err := in.call(ctx, exCreate, handle, uint64(args), 2, uint64(out)); err != nil || in.result() != 0 {
		return nil, fmt.Errorf("create: %v, result %d", err, in.result())
	}
	inst, _ := mem.ReadUint32Le(out)
	// Two tensors, their shapes and strides, then the data.
	base, err := in.alloc(ctx, uint32(128+8*n+64), 64)
	if err != nil {
		return nil, err
	}
	x := base + 128 // 64-aligned, as base is
	y := (x + uint32(4*n) + 63) &^ 63
	for k, data := range []uint32{x, y} {
		t := base + uint32(40*k)
		dims := base + 80 + uint32(16*k)
		var s [40]byte
		binary.LittleEndian.PutUint32(s[0:], data)
		binary.LittleEndian.PutUint32(s[4:], 1) // cpu
		binary.LittleEndian.PutUint32(s[12:], 1)
		s[16], s[17], s[18] = 2, 32, 1 // float32
		binary.LittleEndian.PutUint32(s[20:], dims)
		binary.LittleEndian.PutUint32(s[24:], dims+8)
		mem.Write(t, s[:])
		mem.WriteUint64Le(dims, uint64(n))
		mem.WriteUint64Le(dims+8, 1)
	}
	failed := base + 112
	return &RawScale{in: in, params: [8]uint64{handle, uint64(inst), 1, uint64(base), 1, uint64(base + 40), 1, uint64(failed)}}, nil
}

// Call calls dynop_wasm_op_run once.
func (r *RawScale) Call(ctx context.Context) error {
	r.stack = r.params
	if err := r.in.fns[exRun].call(ctx, r.in.e.cfg.timeout, r.stack[:]); err != nil {
		return err
	}
	if r.stack[0] != 0 {
		return fmt.Errorf("dynop_wasm_op_run returned %d", int32(r.stack[0]))
	}
	return nil
}

// Relays returns how many runs of the WebAssembly operator instance inst
// reused the last run's layout.
func Relays(inst *op.Instance) int { return inst.Impl().(*wasmImpl).relays }
