package wasm

import "fmt"

// ValueType is a WebAssembly value type, by its binary encoding: the
// type of a parameter or result in [Table.Call].
type ValueType byte

// The value types of WebAssembly 1.0's numbers.
const (
	I32 ValueType = 0x7f
	I64 ValueType = 0x7e
	F32 ValueType = 0x7d
	F64 ValueType = 0x7c
)

// valType is the name the loader's code uses for ValueType.
type valType = ValueType

// The value types of the host's imports and the plugin's exports.
const (
	valI32 = I32
	valI64 = I64
	valF32 = F32
	valF64 = F64
)

// The value types a host cannot pass to or take from a module: a
// function with one is neither a host import nor callable through
// [Table.Call].
const (
	valV128      valType = 0x7b
	valFuncref   valType = 0x70
	valExternref valType = 0x6f
	valUnknown   valType = 0 // any other (a proposal's reference types)
)

// String names the type as the WebAssembly text format does: "i32".
func (t ValueType) String() string { return valTypeName(t) }

// numeric reports whether t is one of WebAssembly 1.0's numbers, the
// types a host passes as one 64-bit value.
func (t ValueType) numeric() bool {
	switch t {
	case I32, I64, F32, F64:
		return true
	}
	return false
}

// memory is a module instance's linear memory as the host reads and
// writes it: every access bounds-checked, false when out of range.
type memory interface {
	Size() uint32
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
	ReadUint32Le(offset uint32) (uint32, bool)
	WriteUint32Le(offset, v uint32) bool
	ReadUint64Le(offset uint32) (uint64, bool)
	WriteUint64Le(offset uint32, v uint64) bool
}

// exitError is a module's call of WASI proc_exit: the host function
// panics with it, and the engine ends the running call with it.
type exitError struct{ code uint32 }

func (e *exitError) Error() string { return fmt.Sprintf("the module exited with code %d", e.code) }
