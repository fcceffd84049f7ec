// Package abihost is the host side of dynop.h, written once for both
// loaders: it decodes and checks the structs a plugin hands the host
// (dynop_plugin_info and everything it points to, dynop_operator and its
// variants, dynop_pass) from the plugin's memory, whichever it is. The
// native loader reads C memory of its process through it; the
// WebAssembly loader reads a module's linear memory, where pointers are
// 32-bit offsets. The two see the same rules and give the same errors:
// a malformed struct is an error wrapping dynop's ErrABI whose text does
// not depend on the loader.
//
// The loaders stay transports: how code gets into the process or the
// sandbox, and how a call crosses into it.
package abihost

import (
	"encoding/binary"
)

// Memory is the memory a plugin's structs live in.
type Memory interface {
	// PointerSize is the size of a pointer in the plugin's structs: 8
	// for a native plugin on a 64-bit machine, 4 for a wasm32 module.
	PointerSize() uint32
	// Read returns the n bytes at addr, or false if they are not all in
	// the plugin's memory. Native memory cannot tell: it returns true for
	// any address but 0.
	Read(addr uint64, n uint32) ([]byte, bool)
	// CString returns the NUL-terminated string at addr, looking at no
	// more than max bytes, and false if its end is not within them (or
	// within the plugin's memory).
	CString(addr uint64, max int) (string, bool)
}

// le is the byte order of every machine dynop runs on, and of wasm32.
var le = binary.LittleEndian

// Bytes is a Memory over b, whose first byte is at address base: for
// tests, and for a guest that lays structs out in its own memory.
type Bytes struct {
	B    []byte
	Base uint64
	Ptr  uint32 // the pointer size; 0 means 4
}

// PointerSize implements Memory.
func (m Bytes) PointerSize() uint32 {
	if m.Ptr == 0 {
		return 4
	}
	return m.Ptr
}

// Read implements Memory.
func (m Bytes) Read(addr uint64, n uint32) ([]byte, bool) {
	if addr < m.Base || addr-m.Base > uint64(len(m.B)) || uint64(len(m.B))-(addr-m.Base) < uint64(n) {
		return nil, false
	}
	at := addr - m.Base
	return m.B[at : at+uint64(n)], true
}

// CString implements Memory.
func (m Bytes) CString(addr uint64, max int) (string, bool) {
	if addr < m.Base || addr-m.Base >= uint64(len(m.B)) {
		return "", false
	}
	rest := m.B[addr-m.Base:]
	if len(rest) > max {
		rest = rest[:max]
	}
	for i, c := range rest {
		if c == 0 {
			return string(rest[:i]), true
		}
	}
	return string(rest), false
}
