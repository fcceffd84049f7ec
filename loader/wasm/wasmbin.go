package wasm

import (
	"bytes"
	"encoding/binary"
)

// WebAssembly binary sections exportTable reads.
const (
	sectionTable  = 4
	sectionExport = 7
	externTable   = 1
)

// exportTable returns code with its function table 0 exported as name,
// and whether it did so: Wasmtime's API reaches a table only through an
// export, and C modules do not export theirs. A module without a table of
// its own, without an export section, that exports name already, or that
// does not parse is returned as it is (the engine's compile reports what
// does not parse).
func exportTable(code []byte, name string) ([]byte, bool) {
	const header = 8 // magic and version
	if len(code) < header || !bytes.Equal(code[:4], []byte("\x00asm")) {
		return code, false
	}
	hasTable := false
	exportAt, exportEnd := -1, -1
	for p := header; p < len(code); {
		id := code[p]
		size, n := binary.Uvarint(code[p+1:])
		if n <= 0 || size > uint64(len(code)-p-1-n) {
			return code, false
		}
		body := code[p+1+n : p+1+n+int(size)]
		switch id {
		case sectionTable:
			if count, k := binary.Uvarint(body); k > 0 && count > 0 {
				hasTable = true
			}
		case sectionExport:
			if exportAt >= 0 {
				return code, false // two export sections: not a valid module
			}
			exportAt, exportEnd = p, p+1+n+int(size)
		}
		p += 1 + n + int(size)
	}
	if !hasTable || exportAt < 0 {
		return code, false
	}
	_, n := binary.Uvarint(code[exportAt+1:])
	body := code[exportAt+1+n : exportEnd]
	count, k := binary.Uvarint(body)
	if k <= 0 {
		return code, false
	}
	// Check the exports parse, fill the section exactly, and that name is
	// not one of them: the rewrite must not make an invalid module valid.
	rest := body[k:]
	for i := uint64(0); i < count; i++ {
		l, m := binary.Uvarint(rest)
		if m <= 0 || l > uint64(len(rest)-m) {
			return code, false
		}
		if string(rest[m:m+int(l)]) == name {
			return code, false
		}
		rest = rest[m+int(l):]
		if len(rest) < 1 {
			return code, false
		}
		_, m2 := binary.Uvarint(rest[1:])
		if m2 <= 0 {
			return code, false
		}
		rest = rest[1+m2:]
	}
	if len(rest) != 0 {
		return code, false
	}
	nb := binary.AppendUvarint(nil, count+1)
	nb = append(nb, body[k:]...)
	nb = binary.AppendUvarint(nb, uint64(len(name)))
	nb = append(nb, name...)
	nb = append(nb, externTable, 0)
	out := make([]byte, 0, len(code)+len(name)+16)
	out = append(out, code[:exportAt]...)
	out = append(out, sectionExport)
	out = binary.AppendUvarint(out, uint64(len(nb)))
	out = append(out, nb...)
	out = append(out, code[exportEnd:]...)
	return out, true
}
