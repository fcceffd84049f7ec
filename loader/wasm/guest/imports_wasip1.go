package guest

import (
	"unsafe"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
)

// The host's imports, module "dynop", as dynop_wasm.h declares them.
// Pointers are i32 offsets into the module's memory, lengths i32 bytes,
// results dynop_result (i32). add_interface and remove_interface take C
// function tables, which a Go module cannot make; they are declared for
// completeness and left unused.

//go:wasmimport dynop log
func importLog(level int32, msg unsafe.Pointer, msgLen int32)

//go:wasmimport dynop set_error
func importSetError(msg unsafe.Pointer, msgLen int32)

//go:wasmimport dynop last_error
func importLastError(buf unsafe.Pointer, bufCap int32) int32

//go:wasmimport dynop register_operator
func importRegisterOperator(op uint32) int32

//go:wasmimport dynop add_interface
func importAddInterface(table unsafe.Pointer) int32

//go:wasmimport dynop remove_interface
func importRemoveInterface(uid unsafe.Pointer) int32

//go:wasmimport dynop acquire
func importAcquire(pluginID unsafe.Pointer, idLen int32, uid unsafe.Pointer, min unsafe.Pointer, ref unsafe.Pointer) int32

//go:wasmimport dynop release
func importRelease(ref uint64) int32

var (
	host hostAPI = wasmHost{}
	mem  memory  = linearMemory{}
)

// wasmHost calls the imports.
type wasmHost struct{}

// str returns s's offset and length.
func str(s string) (unsafe.Pointer, int32) {
	return unsafe.Pointer(unsafe.StringData(s)), int32(len(s))
}

func (wasmHost) log(level int32, msg string) {
	p, n := str(msg)
	importLog(level, p, n)
}

func (wasmHost) setError(msg string) {
	p, n := str(msg)
	importSetError(p, n)
}

func (wasmHost) lastError() string {
	buf := make([]byte, 256)
	for {
		n := importLastError(unsafe.Pointer(unsafe.SliceData(buf)), int32(len(buf)))
		switch {
		case n <= 0:
			return ""
		case int(n) <= len(buf):
			return string(buf[:n])
		}
		buf = make([]byte, n) // the message grew past the buffer; ask again
	}
}

func (wasmHost) registerOperator(op uint32) abi.Result {
	return abi.Result(importRegisterOperator(op))
}

func (wasmHost) acquire(pluginID string, uid iface.UID, min iface.Version) (uint64, abi.Result) {
	p, n := str(pluginID)
	v := [3]uint32{min.Major, min.Minor, min.Patch} // dynop_version
	var ref uint64
	rc := importAcquire(p, n, unsafe.Pointer(&uid), unsafe.Pointer(&v), unsafe.Pointer(&ref))
	return ref, abi.Result(rc)
}

func (wasmHost) release(ref uint64) abi.Result { return abi.Result(importRelease(ref)) }

// linearMemory is the module's own memory: an offset is a pointer.
type linearMemory struct{}

// pointer returns offset off as a pointer.
func pointer(off uint32) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), off) }

func (linearMemory) view(off uint32, n uint64) ([]byte, error) {
	if err := checkSpan(off, n); err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*byte)(pointer(off)), n), nil
}

func (linearMemory) cstring(off uint32) (string, error) {
	if off == 0 {
		return "", errNullString
	}
	for n := uint32(0); n < maxString && uint64(off)+uint64(n) < memLimit; n++ {
		if *(*byte)(pointer(off + n)) == 0 {
			return string(unsafe.Slice((*byte)(pointer(off)), n)), nil
		}
	}
	return "", errNoNUL
}
