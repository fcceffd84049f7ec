// Package ldso finds shared libraries the way glibc's dynamic linker
// (ld.so) does, by reading ELF files and /etc/ld.so.cache, without loading
// or running any of them.
//
// The host uses it before it loads a native plugin: [Walk] tells which
// shared libraries the plugin needs from the system and which of them
// cannot be found, and which libraries the plugin ships beside itself
// (found through a DT_RUNPATH or DT_RPATH entry that starts with $ORIGIN),
// so that the host can load verified copies of those first.
//
// The search follows glibc 2.36 as Debian builds it; see [Resolver.Find]
// for the order and for what is not modelled.
package ldso

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/internal/regfile"
)

// Errors that the functions of this package wrap.
var (
	// ErrNotFound: no file of the right class and machine has the name.
	ErrNotFound = errors.New("shared library not found")
	// ErrNotELF: a file is not an ELF file, or not a loadable one.
	ErrNotELF = errors.New("not an ELF shared object")
	// ErrNoDynamicSection: an ELF file has no dynamic section, so it is
	// not a shared object (a static executable, an object file, a
	// library whose section headers were stripped).
	ErrNoDynamicSection = errors.New("no dynamic section")
)

// Object is what the dynamic section of an ELF shared object says.
type Object struct {
	Path    string // absolute, cleaned, symbolic links not resolved
	Class   elf.Class
	Machine elf.Machine
	Data    elf.Data // byte order; ld.so skips files of another
	Soname  string   // DT_SONAME, "" if none
	Needed  []string // DT_NEEDED, in order
	// RunPath and RPath are the DT_RUNPATH and DT_RPATH entries as
	// written, split at ':' (they may contain $ORIGIN, ${ORIGIN}, $LIB,
	// $PLATFORM). Where the object has several DT_RUNPATH (or DT_RPATH)
	// tags, ld.so uses the last, and so do these.
	RunPath []string
	RPath   []string
	// NoDefaultLib is DF_1_NODEFLIB (-Wl,-z,nodefaultlib): ld.so does not
	// look in ld.so.cache or the default directories for the object's
	// dependencies.
	NoDefaultLib bool
}

// ReadObject reads the dynamic section of the ELF shared object at path.
// Its errors name the file and say what is wrong; they wrap [ErrNotELF]
// or [ErrNoDynamicSection] where those apply.
func ReadObject(path string) (*Object, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ldso: %s: %w", path, err)
	}
	f, err := regfile.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("ldso: %w", err)
	}
	defer f.Close()
	obj, err := readObject(f, abs)
	if err != nil {
		return nil, fmt.Errorf("ldso: %s: %w", abs, err)
	}
	return obj, nil
}

// readObject reads the dynamic section of the ELF file r, whose absolute
// path is path.
func readObject(r io.ReaderAt, path string) (*Object, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotELF, err)
	}
	defer ef.Close()
	if ef.Type != elf.ET_DYN && ef.Type != elf.ET_EXEC {
		return nil, fmt.Errorf("%w: ELF type %v", ErrNotELF, ef.Type)
	}
	if ef.SectionByType(elf.SHT_DYNAMIC) == nil {
		return nil, ErrNoDynamicSection
	}
	obj := &Object{Path: path, Class: ef.Class, Machine: ef.Machine, Data: ef.Data}
	strs := func(tag elf.DynTag) []string {
		if err != nil {
			return nil
		}
		var s []string
		s, err = ef.DynString(tag)
		return s
	}
	last := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[len(s)-1]
	}
	obj.Needed = strs(elf.DT_NEEDED)
	obj.Soname = last(strs(elf.DT_SONAME))
	obj.RunPath = splitPath(last(strs(elf.DT_RUNPATH)))
	obj.RPath = splitPath(last(strs(elf.DT_RPATH)))
	if err != nil {
		return nil, fmt.Errorf("reading the dynamic section: %w", err)
	}
	flags, err := ef.DynValue(elf.DT_FLAGS_1)
	if err != nil {
		return nil, fmt.Errorf("reading the dynamic section: %w", err)
	}
	for _, v := range flags {
		obj.NoDefaultLib = obj.NoDefaultLib || elf.DynFlag1(v)&elf.DF_1_NODEFLIB != 0
	}
	return obj, nil
}

// splitPath splits a DT_RUNPATH or DT_RPATH string at ':'; "" has no
// entries.
func splitPath(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ":")
}

// ObjectFor returns an Object of the ELF class, byte order and machine of
// shared libraries for goarch (a GOARCH value), with nothing else set:
// the one asking, when a library is to be found for a program of that
// architecture. It reports false for an architecture it does not know.
func ObjectFor(goarch string) (*Object, bool) {
	k, ok := goarchKinds[goarch]
	if !ok {
		return nil, false
	}
	return &Object{Class: k.class, Data: k.data, Machine: k.machine}, true
}

// goarchKinds is the ELF kind of each GOARCH's shared libraries.
var goarchKinds = map[string]elfKind{
	"amd64":   {elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64},
	"arm64":   {elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64},
	"386":     {elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386},
	"riscv64": {elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV},
	"ppc64le": {elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_PPC64},
	"s390x":   {elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390},
}
