package guest

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Sizes of the ABI's structs on wasm32.
const (
	tensorSize = 40 // dynop_tensor
	argSize    = 20 // dynop_arg
)

// memLimit is the end of a wasm32 address space.
const memLimit = 1 << 32

// maxString bounds the strings the host passes NUL-terminated (argument
// names and string values): longer ones are malformed.
const maxString = 1 << 24

var le = binary.LittleEndian

var (
	errNullString = errors.New("NULL string")
	errNoNUL      = fmt.Errorf("string without a NUL in its first %d bytes", maxString)
)

// memory is the module's linear memory as the decoders see it: offsets
// are wasm32 pointers. The wasip1 implementation aliases the module's
// own memory; tests use a byte slice.
type memory interface {
	// view returns the n bytes at off, aliasing the memory. It fails if
	// they do not lie in a 32-bit address space or off is 0 (NULL) and n
	// is not.
	view(off uint32, n uint64) ([]byte, error)
	// cstring returns a copy of the NUL-terminated string at off.
	cstring(off uint32) (string, error)
}

// checkSpan is the check every memory's view makes.
func checkSpan(off uint32, n uint64) error {
	switch {
	case n == 0:
		return nil
	case off == 0:
		return errors.New("NULL pointer")
	case n > memLimit-uint64(off):
		return fmt.Errorf("%d bytes at 0x%x reach past the 32-bit address space", n, off)
	}
	return nil
}

// sliceMemory is a memory of a byte slice, whose offset 0 is the slice's
// first byte: for tests and for decoding on other platforms.
type sliceMemory []byte

func (m sliceMemory) view(off uint32, n uint64) ([]byte, error) {
	if err := checkSpan(off, n); err != nil {
		return nil, err
	}
	if uint64(off)+n > uint64(len(m)) {
		return nil, fmt.Errorf("%d bytes at 0x%x reach past the end of memory (%d bytes)", n, off, len(m))
	}
	return m[off : uint64(off)+n : uint64(off)+n], nil
}

func (m sliceMemory) cstring(off uint32) (string, error) {
	if off == 0 {
		return "", errNullString
	}
	for i := uint64(off); i < uint64(len(m)) && i-uint64(off) < maxString; i++ {
		if m[i] == 0 {
			return string(m[off:i]), nil
		}
	}
	return "", errNoNUL
}

// elems returns the n elements of size bytes each at off.
func elems(m memory, off, n uint32, size uint64) ([]byte, error) {
	return m.view(off, uint64(n)*size)
}

// at returns off + i*size as an offset, or an error if it passes the
// address space.
func at(off uint32, i, size uint64) (uint32, error) {
	p := uint64(off) + i*size
	if p >= memLimit {
		return 0, fmt.Errorf("element %d of the array at 0x%x lies past the 32-bit address space", i, off)
	}
	return uint32(p), nil
}
