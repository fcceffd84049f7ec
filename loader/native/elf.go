package native

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/regfile"
)

// entrySymbol is the one symbol a native plugin exports.
const entrySymbol = "dynop_plugin_get_function"

// machines maps GOARCH to the ELF machine of its code.
var machines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"386":     elf.EM_386,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"riscv64": elf.EM_RISCV,
	"ppc64le": elf.EM_PPC64,
	"ppc64":   elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"loong64": elf.EM_LOONGARCH,
}

// checkFile makes sure path is a shared library this process can load and
// that it exports [entrySymbol], reading the file with debug/elf: no code
// of the plugin runs and the dynamic linker never sees a bad file, so each
// problem gets an error of its own instead of dlerror's wording. Errors
// wrap [dynop.ErrFormat] or the file system's error.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("native: %w", err)
	}
	if fi.IsDir() {
		return fmt.Errorf("native: %s: %w: it is a directory, not a shared library", path, dynop.ErrFormat)
	}
	f, err := regfile.Open(path) // a named pipe would block the read
	if regfile.Is(err) {
		return fmt.Errorf("native: %s: %w: %w", path, dynop.ErrFormat, err)
	}
	if err != nil {
		return fmt.Errorf("native: %w", err)
	}
	defer f.Close()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("native: %s: %w: "+format, append([]any{path, dynop.ErrFormat}, args...)...)
	}
	var ident [elf.EI_NIDENT]byte
	n, err := io.ReadFull(f, ident[:])
	if string(ident[:min(n, 4)]) != elf.ELFMAG[:min(n, 4)] || n < 4 {
		return bad("not an ELF shared library (it does not start with the ELF magic \\x7fELF)")
	}
	if err != nil {
		return bad("malformed or truncated ELF (%d bytes, shorter than an ELF header)", n)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return bad("malformed or truncated ELF (%d bytes): %v", fi.Size(), err)
	}
	wantClass := elf.ELFCLASS64
	if unsafe.Sizeof(uintptr(0)) == 4 {
		wantClass = elf.ELFCLASS32
	}
	wantOrder := binary.ByteOrder(binary.LittleEndian)
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		wantOrder = binary.BigEndian
	}
	switch want, known := machines[runtime.GOARCH]; {
	case ef.Class != wantClass:
		return bad("built for %v, this process is %v (%s)", ef.Class, wantClass, runtime.GOARCH)
	case ef.ByteOrder != wantOrder:
		return bad("built for %v, this process is %v", ef.ByteOrder, wantOrder)
	case known && ef.Machine != want:
		return bad("built for machine %v, this process runs on %v (%s)", ef.Machine, want, runtime.GOARCH)
	case ef.Type != elf.ET_DYN:
		return bad("ELF type is %v, want a shared library (ET_DYN)", ef.Type)
	}
	// Every section the dynamic linker maps must lie inside the file.
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Off+p.Filesz > uint64(fi.Size()) {
			return bad("truncated: a loadable segment ends at byte %d, the file has %d", p.Off+p.Filesz, fi.Size())
		}
	}
	syms, err := ef.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return bad("unreadable dynamic symbol table: %v", err)
	}
	if !slices.ContainsFunc(syms, func(s elf.Symbol) bool {
		return s.Name == entrySymbol && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC
	}) {
		return bad("no exported function %s: not a dynop plugin (build it with DYNOP_EXPORT on %s, see dynop.h)", entrySymbol, entrySymbol)
	}
	return nil
}
