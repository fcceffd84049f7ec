package guest

import (
	"unsafe"
)

// The module's exports, as dynop_wasm.h declares them: i32 for pointers,
// sizes, counts, handles and results, i64 for dynop_wasm_info's result.

//go:wasmexport dynop_wasm_abi_version
func exportABIVersion() int32 { return abiVersion }

// abiVersion is DYNOP_WASM_ABI_VERSION: major 2 << 16 | minor 0.
const abiVersion = 2 << 16

//go:wasmexport dynop_wasm_alloc
func exportAlloc(size, align uint32) uint32 { return alloc(size, align) }

//go:wasmexport dynop_wasm_free
func exportFree(ptr uint32) { delete(allocs, ptr) }

//go:wasmexport dynop_wasm_info
func exportInfo() uint64 { return mod.infoAddr() }

func init() { allocate = alloc }

//go:wasmexport dynop_wasm_register
func exportRegister() int32 { return int32(mod.register()) }

//go:wasmexport dynop_wasm_deregister
func exportDeregister() int32 { return int32(mod.deregister()) }

//go:wasmexport dynop_wasm_op_create
func exportOpCreate(op, args, argCount, instance uint32) int32 {
	return int32(mod.create(op, args, argCount, instance))
}

//go:wasmexport dynop_wasm_op_setup
func exportOpSetup(op, instance, samples, inputs, inputCount, outputs, outputCount, failed uint32) int32 {
	return int32(mod.call(false, op, instance, samples, inputs, inputCount, outputs, outputCount, failed))
}

//go:wasmexport dynop_wasm_op_run
func exportOpRun(op, instance, samples, inputs, inputCount, outputs, outputCount, failed uint32) int32 {
	return int32(mod.call(true, op, instance, samples, inputs, inputCount, outputs, outputCount, failed))
}

//go:wasmexport dynop_wasm_op_destroy
func exportOpDestroy(op, instance uint32) { mod.destroy(op, instance) }

// allocs keeps the memory dynop_wasm_alloc handed out, by offset, until
// dynop_wasm_free: the host writes into it, so the collector must not
// reclaim it (it never moves it).
var allocs = map[uint32][]byte{}

// maxAlign bounds the alignment dynop_wasm_alloc accepts: a page.
const maxAlign = 1 << 16

// maxAlloc bounds the size dynop_wasm_alloc tries to allocate; larger
// requests get 0. Within it, running out of memory crashes the module
// (the Go runtime cannot report it): the host discards the instance.
const maxAlloc = 3 << 30

// alloc returns size bytes aligned to align (a power of two; 0 means
// 16, as in the C shim), zeroed, or 0 for a request it cannot meet.
func alloc(size, align uint32) uint32 {
	if align == 0 {
		align = 16
	}
	if align&(align-1) != 0 || align > maxAlign || uint64(size) > maxAlloc {
		return 0
	}
	// At least 16 bytes keeps the block out of the tiny allocator, whose
	// blocks may be only byte-aligned; others are 8-aligned.
	n := max(uint64(size), 16)
	if align > 8 {
		n += uint64(align) - 1
	}
	b := make([]byte, n)
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	aligned := (p + align - 1) &^ (align - 1)
	allocs[aligned] = b
	return aligned
}
