package native

/*
#include <string.h>
*/
import "C"

import (
	"unsafe"

	"github.com/dynop/dynop/internal/abihost"
)

// cMemory is the process's C memory, where a native plugin's structs
// live, as package abihost reads it. It cannot tell an address the plugin
// owns from any other: every address but 0 reads.
type cMemory struct{}

var _ abihost.Memory = cMemory{}

// PointerSize implements abihost.Memory.
func (cMemory) PointerSize() uint32 { return uint32(unsafe.Sizeof(uintptr(0))) }

// Read implements abihost.Memory.
func (cMemory) Read(addr uint64, n uint32) ([]byte, bool) {
	if addr == 0 {
		return nil, false
	}
	return unsafe.Slice((*byte)(cPointer(addr)), n), true
}

// CString implements abihost.Memory.
func (cMemory) CString(addr uint64, max int) (string, bool) {
	if addr == 0 {
		return "", false
	}
	return cString((*C.char)(cPointer(addr)), max)
}

// cPointer returns the C address addr as a pointer.
func cPointer(addr uint64) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), uintptr(addr)) }

// addrOf returns the address of C memory at p.
func addrOf(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

// cString returns the NUL-terminated C string at s, at most max bytes of
// it, and whether its end was found within them.
func cString(s *C.char, max int) (string, bool) {
	if s == nil {
		return "", true
	}
	n := int(C.strnlen(s, C.size_t(max)))
	return C.GoStringN(s, C.int(n)), n < max
}

// goString returns the C string at s ("" for NULL), cut short after
// abihost.MaxString bytes: for messages, which a plugin may get wrong
// without harm.
func goString(s *C.char) string {
	str, _ := cString(s, abihost.MaxString)
	return str
}
