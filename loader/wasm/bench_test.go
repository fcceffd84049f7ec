package wasm_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/dynop/dynop/loader/wasm"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// rawScale is wgood.Scale called through wazero alone: the module
// instantiated with do-nothing host functions, the operator created, and
// one input and one output tensor of n float32 laid out in its memory
// once. Each call is one call of dynop_wasm_op_run — the floor a host
// could reach, with no copy in or out.
type rawScale struct {
	run      api.Function
	stack    []uint64
	deadline bool // a context with a deadline per call, as dynop's default
}

func newRawScale(b *testing.B, path string, n int, deadline bool) *rawScale {
	ctx := context.Background()
	code, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(deadline))
	b.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var handle uint32
	hb := rt.NewHostModuleBuilder("dynop")
	for _, f := range []struct {
		name            string
		params, results int
		fn              func(stack []uint64)
	}{
		{"log", 3, 0, nil}, {"set_error", 2, 0, nil}, {"last_error", 2, 1, nil},
		{"register_operator", 1, 1, func(stack []uint64) {
			if handle == 0 {
				handle = uint32(stack[0]) // the dynop_operator of wgood.Scale, which comes first
			}
		}},
		{"select_variant", 4, 1, nil},
		{"add_interface", 1, 1, nil}, {"remove_interface", 1, 1, nil}, {"acquire", 5, 1, nil},
	} {
		params := make([]api.ValueType, f.params)
		for i := range params {
			params[i] = api.ValueTypeI32
		}
		results := make([]api.ValueType, f.results)
		for i := range results {
			results[i] = api.ValueTypeI32
		}
		fn := f.fn
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) {
			if fn != nil {
				fn(stack)
			}
			if len(stack) > 0 {
				stack[0] = 0
			}
		}), params, results).Export(f.name)
	}
	hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) { stack[0] = 0 }),
		[]api.ValueType{api.ValueTypeI64}, []api.ValueType{api.ValueTypeI32}).Export("release")
	if _, err := hb.Instantiate(ctx); err != nil {
		b.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	call := func(name string, params ...uint64) uint64 {
		r, err := mod.ExportedFunction(name).Call(ctx, params...)
		if err != nil {
			b.Fatal(err)
		}
		if len(r) == 0 {
			return 0
		}
		return r[0]
	}
	if call("dynop_wasm_register") != 0 {
		b.Fatal("register failed")
	}
	mem := mod.Memory()
	// Arguments: factor 2.0 (float), fail_at -1 (int): two dynop_args.
	args := uint32(call("dynop_wasm_alloc", 256, 8))
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
	if call("dynop_wasm_op_create", uint64(handle), uint64(args), 2, uint64(out)) != 0 {
		b.Fatal("create failed")
	}
	inst, _ := mem.ReadUint32Le(out)
	// Two tensors, their shapes and strides, then the data.
	base := uint32(call("dynop_wasm_alloc", uint64(128+8*n+64), 64))
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
	return &rawScale{
		run:      mod.ExportedFunction("dynop_wasm_op_run"),
		stack:    []uint64{uint64(handle), uint64(inst), 1, uint64(base), 1, uint64(base + 40), 1, uint64(failed)},
		deadline: deadline,
	}
}

func (r *rawScale) call(b *testing.B) {
	stack := r.stack
	params := [8]uint64(stack)
	ctx := context.Background()
	if r.deadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	if err := r.run.CallWithStack(ctx, stack); err != nil || stack[0] != 0 {
		b.Fatal(err, stack[0])
	}
	copy(stack, params[:])
}

// BenchmarkCallVsRawWazero compares one run of wgood.Scale through dynop
// (op.Instance.Run: checks, tensors laid out, input copied in, output
// zeroed and copied out) with the same export called through wazero alone
// on data already in the module's memory, alternating in one loop, in
// both of dynop's modes, each against wazero configured alike: with a
// deadline per call (the default; wazero's close-on-context-done), and
// uninterruptible (Sandbox.CallTimeout < 0). ratio is dynop's time over
// raw wazero's: the target is ≤ 1.5.
func BenchmarkCallVsRawWazero(b *testing.B) {
	for _, mode := range []struct {
		name    string
		timeout time.Duration
	}{{"deadline", 0}, {"uninterruptible", -1}} {
		for _, n := range []int{16, 16 << 10, 256 << 10} {
			benchCallVsRaw(b, mode.name, mode.timeout, n)
		}
	}
}

func benchCallVsRaw(b *testing.B, mode string, timeout time.Duration, n int) {
	b.Run(fmt.Sprintf("%s/floats=%d", mode, n), func(b *testing.B) {
		path := wgood(b)
		raw := newRawScale(b, path, n, timeout >= 0)
		h := openHost(b, dynop.Options{Logger: nopLogger(), Loaders: []dynop.LoaderConfig{wasm.Config{CallTimeout: timeout}}}, path)
		inst, err := h.NewOperator(context.Background(), "wgood.Scale", schema.Args{"factor": 2.0})
		if err != nil {
			b.Fatal(err)
		}
		defer inst.Close()
		x, _ := tensor.New(tensor.Float32, int64(n))
		in, _ := tensor.NewBatch(x)
		descs, err := inst.Setup([]*tensor.Batch{in})
		if err != nil {
			b.Fatal(err)
		}
		out, _ := descs[0].Alloc()
		ctx := context.Background()
		var dynopTime, rawTime time.Duration
		b.SetBytes(int64(8 * n))
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if err := inst.Run(ctx, []*tensor.Batch{out}, []*tensor.Batch{in}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			raw.call(b)
			rawTime += time.Since(t1)
			dynopTime += t1.Sub(t0)
		}
		b.ReportMetric(float64(dynopTime.Nanoseconds())/float64(b.N), "dynop-ns/op")
		b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "wazero-ns/op")
		b.ReportMetric(float64(dynopTime)/float64(rawTime), "ratio")
	})
}
