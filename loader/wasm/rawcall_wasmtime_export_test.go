//go:build cgo && !dynop_wazero

package wasm

import (
	"context"
	"fmt"
)

// CallGoAPI calls dynop_wasm_op_run once through wasmtime-go's Func.Call
// — Wasmtime's own Go API, what a program using the engine directly
// writes — with the instance's epoch deadline armed as the loader arms
// it. ok is false if the instance is not Wasmtime's.
func (r *RawScale) CallGoAPI(ctx context.Context) (ok bool, err error) {
	f, isWasmtime := r.in.fns[exRun].(*wasmtimeFunction)
	if !isWasmtime {
		return false, nil
	}
	wi := f.wi
	if eng := wi.m.eng; eng.epochs {
		wi.callCtx, wi.timeout, wi.deadline = ctx, r.in.e.cfg.timeout, 0
		wi.store.SetEpochDeadline(1)
		eng.enter()
		defer func() { eng.leave(); wi.callCtx = nil }()
	}
	args := make([]any, len(r.params))
	for i, p := range r.params {
		args[i] = int32(uint32(p))
	}
	res, err := f.f.Call(wi.store, args...)
	if err != nil {
		return true, err
	}
	if rc, _ := res.(int32); rc != 0 {
		return true, fmt.Errorf("dynop_wasm_op_run returned %d", rc)
	}
	return true, nil
}
