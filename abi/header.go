package abi

import (
	"encoding/binary"

	"github.com/dynop/dynop/iface"
)

// HeaderSize is sizeof(dynop_header): every struct that crosses the ABI
// starts with one, on every target.
const HeaderSize = 32

// Header is the decoded dynop_header at the start of an ABI struct.
type Header struct {
	// Type is the struct's type UID; for an interface, the interface UID.
	Type iface.UID
	// Version is the struct's layout version; for an interface, the
	// interface version.
	Version iface.Version
	// Size is sizeof the struct as its writer compiled it.
	Size uint32
}

// ParseHeader decodes the dynop_header in b, which must hold at least
// HeaderSize bytes, written in the byte order of the machine (native
// plugins) or little-endian (wasm32, and every machine dynop runs on).
func ParseHeader(b []byte) Header {
	b = b[:HeaderSize]
	return Header{
		Type: iface.UID(b[:16]),
		Version: iface.Version{
			Major: binary.LittleEndian.Uint32(b[16:]),
			Minor: binary.LittleEndian.Uint32(b[20:]),
			Patch: binary.LittleEndian.Uint32(b[24:]),
		},
		Size: binary.LittleEndian.Uint32(b[28:]),
	}
}
