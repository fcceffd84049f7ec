package ldso

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// cLibrary compiles the C source src into the shared library dir/name
// with the linker flags flags (-Wl,-soname,..., -L and -l ...) and
// returns its path; it skips the test if there is no C compiler.
func cLibrary(t testing.TB, dir, name, src string, flags ...string) string {
	t.Helper()
	cc := cbuild.Compiler(t, false)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	srcFile := filepath.Join(t.TempDir(), "src.c")
	if err := os.WriteFile(srcFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append([]string{"-shared", "-fPIC", "-o", out, srcFile, "-Wl,--no-as-needed"}, flags...)
	if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", cc, args, err, msg)
	}
	return out
}

// cLibrary32 is cLibrary for a 32-bit x86 library (no C library: the
// machine may have no 32-bit one); it skips the test where the compiler
// cannot build one.
func cLibrary32(t testing.TB, dir, name string) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("32-bit x86 libraries are the other class only on amd64")
	}
	cc := cbuild.Compiler(t, false)
	srcFile := filepath.Join(t.TempDir(), "src.c")
	if err := os.WriteFile(srcFile, []byte("int f(void) { return 32; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if msg, err := exec.Command(cc, "-m32", "-nostdlib", "-shared", "-fPIC", "-Wl,-soname,"+name, "-o", out, srcFile).CombinedOutput(); err != nil {
		t.Skipf("%s cannot build a 32-bit library: %v\n%s", cc, err, msg)
	}
	return out
}

// writeFile writes content to the file path and returns path.
func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyFile copies the file src to dst, making dst's directory.
func copyFile(t testing.TB, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// hostObject returns an Object of this process's class and machine at
// path, with the given search paths, for tests of Find.
func hostObject(t testing.TB, path string, runPath, rPath []string) *Object {
	t.Helper()
	class, machine := elf.ELFCLASS64, elf.EM_X86_64
	switch runtime.GOARCH {
	case "amd64":
	case "arm64":
		machine = elf.EM_AARCH64
	default:
		t.Skipf("no test ELF kind for %s", runtime.GOARCH)
	}
	return &Object{Path: path, Class: class, Machine: machine, Data: elf.ELFDATA2LSB, RunPath: runPath, RPath: rPath}
}

// cacheEntry is an entry of a test ld.so.cache.
type cacheEntry struct {
	key, value string
	flags      int32
	hwcap      uint64
}

// x8664 are the flags of an x86-64 entry.
const x8664 = CacheFlagELFLibc6 | CacheFlagX8664Lib64

// newFormatCache returns an ld.so.cache in glibc's new format with the
// entries and, if there are any, the glibc-hwcaps subdirectory names (an
// entry's hwcap of hwcapExtension|i is in subdirs[i]).
func newFormatCache(entries []cacheEntry, subdirs []string) []byte {
	le := binary.LittleEndian
	var strs bytes.Buffer
	stringsAt := newHeaderSize + len(entries)*newEntrySize
	str := func(s string) uint32 {
		off := stringsAt + strs.Len()
		strs.WriteString(s)
		strs.WriteByte(0)
		return uint32(off)
	}
	body := make([]byte, 0, len(entries)*newEntrySize)
	for _, e := range entries {
		body = le.AppendUint32(body, uint32(e.flags))
		body = le.AppendUint32(body, str(e.key))
		body = le.AppendUint32(body, str(e.value))
		body = le.AppendUint32(body, 0)
		body = le.AppendUint64(body, e.hwcap)
	}
	var subdirOffsets []uint32
	for _, s := range subdirs {
		subdirOffsets = append(subdirOffsets, str(s))
	}
	lenStrings := strs.Len()
	for strs.Len()%4 != 0 {
		strs.WriteByte(0)
	}
	extension := 0
	var ext []byte
	if subdirs != nil {
		extension = stringsAt + strs.Len()
		ext = le.AppendUint32(ext, extensionMagic)
		ext = le.AppendUint32(ext, 2)
		// A generator section first (tag 0), which parsers skip.
		ext = le.AppendUint32(ext, 0)
		ext = le.AppendUint32(ext, 0)
		ext = le.AppendUint32(ext, uint32(extension))
		ext = le.AppendUint32(ext, 0)
		ext = le.AppendUint32(ext, extensionHWCap)
		ext = le.AppendUint32(ext, 0)
		ext = le.AppendUint32(ext, uint32(extension+8+2*16))
		ext = le.AppendUint32(ext, uint32(4*len(subdirs)))
		for _, off := range subdirOffsets {
			ext = le.AppendUint32(ext, off)
		}
	}
	header := []byte(newMagic)
	header = le.AppendUint32(header, uint32(len(entries)))
	header = le.AppendUint32(header, uint32(lenStrings))
	header = append(header, 2, 0, 0, 0) // little-endian
	header = le.AppendUint32(header, uint32(extension))
	header = append(header, make([]byte, 12)...)
	out := append(header, body...)
	out = append(out, strs.Bytes()...)
	return append(out, ext...)
}

// oldFormatCache returns an ld.so.cache in the old format with the
// entries, followed by the new format (with the same entries) if
// withNew.
func oldFormatCache(entries []cacheEntry, withNew bool) []byte {
	le := binary.LittleEndian
	out := []byte(oldMagic + "\x00")
	out = le.AppendUint32(out, uint32(len(entries)))
	var strs bytes.Buffer
	if withNew {
		end := oldHeaderSize + len(entries)*oldEntrySize
		for (end+strs.Len())%newAlign != 0 {
			strs.WriteByte(0)
		}
		// The old entries' strings are the new format's: ldconfig
		// shares them.
		newCache := newFormatCache(entries, nil)
		newStart := strs.Len()
		strs.Write(newCache)
		off := newStart + newHeaderSize + len(entries)*newEntrySize
		for _, e := range entries {
			out = le.AppendUint32(out, uint32(e.flags))
			out = le.AppendUint32(out, uint32(off))
			off += len(e.key) + 1
			out = le.AppendUint32(out, uint32(off))
			off += len(e.value) + 1
		}
		return append(out, strs.Bytes()...)
	}
	for _, e := range entries {
		out = le.AppendUint32(out, uint32(e.flags))
		out = le.AppendUint32(out, uint32(strs.Len()))
		strs.WriteString(e.key + "\x00")
		out = le.AppendUint32(out, uint32(strs.Len()))
		strs.WriteString(e.value + "\x00")
	}
	return append(out, strs.Bytes()...)
}
