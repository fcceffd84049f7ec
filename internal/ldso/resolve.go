package ldso

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/dynop/dynop/internal/regfile"
)

// DefaultCachePath is where glibc's ldconfig writes the cache ld.so reads.
const DefaultCachePath = "/etc/ld.so.cache"

// Resolver finds shared libraries as glibc's dynamic linker does. It is
// safe for concurrent use.
type Resolver struct {
	// libraryPath is LD_LIBRARY_PATH split at ':' and ';', as NewResolver
	// read it; an empty entry is the working directory, as for ld.so.
	libraryPath []string
	// executableDir is $ORIGIN in LD_LIBRARY_PATH: the directory of the
	// running program.
	executableDir string
	// hwcaps are the glibc-hwcaps subdirectories this CPU supports, most
	// preferred first ("x86-64-v3", ...).
	hwcaps []string

	cachePath string
	cacheOnce sync.Once
	cache     map[string][]CacheEntry // by Key, in the file's order
	cacheErr  error
}

// NewResolver returns a Resolver for this process: it reads
// LD_LIBRARY_PATH now, and parses /etc/ld.so.cache on first use.
func NewResolver() *Resolver {
	r := &Resolver{cachePath: DefaultCachePath, hwcaps: supportedHWCaps()}
	if llp, ok := os.LookupEnv("LD_LIBRARY_PATH"); ok && llp != "" {
		r.libraryPath = splitLibraryPath(llp)
	}
	if exe, err := os.Executable(); err == nil {
		r.executableDir = filepath.Dir(exe)
	}
	return r
}

// Current returns a Resolver for the dynamic linker's search as it is
// now, shared by its callers: a new one whenever LD_LIBRARY_PATH or
// /etc/ld.so.cache changed (ldconfig after a package was installed), so
// that no answer outlives what it depends on, and the cache is parsed
// once per version of it otherwise.
func Current() *Resolver {
	key := os.Getenv("LD_LIBRARY_PATH")
	if fi, err := os.Stat(DefaultCachePath); err == nil {
		key += fmt.Sprintf("\x00%d\x00%d\x00%v", fi.Size(), fi.ModTime().UnixNano(), fi.Sys())
	}
	current.mu.Lock()
	defer current.mu.Unlock()
	if current.r == nil || current.key != key {
		current.r, current.key = NewResolver(), key
	}
	return current.r
}

var current struct {
	mu  sync.Mutex
	r   *Resolver
	key string
}

// splitLibraryPath splits LD_LIBRARY_PATH at ':' and ';', keeping empty
// entries (the working directory for ld.so).
func splitLibraryPath(s string) []string {
	return strings.Split(strings.ReplaceAll(s, ";", ":"), ":")
}

// CacheError returns the error, if any, of reading and parsing the
// resolver's ld.so.cache; a missing cache is no error (ld.so then goes on
// to the default directories), and neither is a bad one for Find, which
// goes on the same way.
func (r *Resolver) CacheError() error {
	r.loadCache()
	return r.cacheErr
}

// loadCache reads and parses the cache file once.
func (r *Resolver) loadCache() {
	r.cacheOnce.Do(func() {
		data, err := regfile.ReadFile(r.cachePath)
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err != nil {
			r.cacheErr = fmt.Errorf("ldso: %w", err)
			return
		}
		entries, err := ParseCache(data)
		if err != nil {
			r.cacheErr = fmt.Errorf("ldso: %s: %w", r.cachePath, err)
			return
		}
		r.cache = make(map[string][]CacheEntry)
		for _, e := range entries {
			r.cache[e.Key] = append(r.cache[e.Key], e)
		}
	})
}

// Find returns the path of the shared library that the dynamic linker
// would load for the DT_NEEDED name soname of the object from, or an error
// wrapping [ErrNotFound] that names soname. The path is the one ld.so
// opens: absolute, but not cleaned ("/opt/p/plugins/../lib/libfoo.so.1"),
// since cleaning is wrong where a directory before ".." is a symbolic
// link.
//
// A name with a '/' is a path, relative to the working directory. For
// other names, the search order is glibc's:
//
//  1. DT_RPATH of from, unless from has a DT_RUNPATH;
//  2. LD_LIBRARY_PATH (as NewResolver read it);
//  3. DT_RUNPATH of from;
//  4. /etc/ld.so.cache, unless from has DF_1_NODEFLIB;
//  5. the default directories, unless from has DF_1_NODEFLIB: on Debian
//     /lib/<multiarch>, /usr/lib/<multiarch>, /lib, /usr/lib (what
//     `ld.so --help` prints as the system search path).
//
// In each directory of steps 1, 2, 3 and 5, the glibc-hwcaps
// subdirectories that the CPU supports (glibc-hwcaps/x86-64-v4, -v3, -v2
// on amd64) come before the directory itself. In ld.so.cache, entries of
// those subdirectories come first, the most preferred level first.
//
// In path entries, $ORIGIN and ${ORIGIN} expand to the directory of
// from.Path: the path the object was opened by, made absolute, symbolic
// links not resolved, as glibc takes it from the name it loaded the
// object by. $LIB expands to lib/<multiarch> (Debian's glibc), $PLATFORM
// to the machine's AT_PLATFORM name (x86_64, i686, aarch64, taken from
// from.Machine rather than the kernel's auxiliary vector).
//
// A candidate file counts only if it is an ELF shared object of from's
// class, byte order and machine: ld.so skips others silently. A file
// that exists but is not ELF at all stops ld.so with "invalid ELF
// header", and stops Find with an error wrapping [ErrNotELF].
//
// Find does not model: the DT_RPATH of the objects that loaded from (see
// [Walk], which does for the plugin's own libraries) and of the main
// program; glibc 2.36's legacy hwcaps subdirectories (tls/, x86_64/ and
// their combinations, removed in glibc 2.37, where no Debian package puts
// libraries); ISA-level marks of ld.so.cache entries; libraries already
// loaded into the process.
func (r *Resolver) Find(soname string, from *Object) (string, error) {
	return r.find(soname, []*Object{from})
}

// find is Find with the chain of loaders: chain[0] asks for soname,
// chain[i+1] loaded chain[i]. ld.so searches the DT_RPATH of each of them
// (while the one asking has no DT_RUNPATH).
func (r *Resolver) find(soname string, chain []*Object) (string, error) {
	path, _, err := r.search(soname, chain)
	return path, err
}

// search is find, also reporting whether the library was found under a
// path entry that expands from $ORIGIN, and which object's origin it was.
func (r *Resolver) search(soname string, chain []*Object) (path string, origin *Object, err error) {
	from := chain[0]
	want := elfKind{from.Class, from.Data, from.Machine}
	if soname == "" {
		return "", nil, fmt.Errorf("ldso: empty library name: %w", ErrNotFound)
	}
	if strings.Contains(soname, "/") {
		ok, err := want.accepts(soname)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", nil, fmt.Errorf("ldso: %s: %w", soname, ErrNotFound)
		}
		abs, err := filepath.Abs(soname)
		return abs, nil, err
	}
	tryDirs := func(dirs []string, owner *Object) (string, *Object, error) {
		for _, dir := range dirs {
			expanded, fromOrigin := expand(dir, owner)
			for _, candidate := range r.candidates(expanded, soname) {
				ok, err := want.accepts(candidate)
				if err != nil {
					return "", nil, err
				}
				if ok {
					var o *Object
					if fromOrigin {
						o = owner
					}
					abs, err := absRaw(candidate)
					return abs, o, err
				}
			}
		}
		return "", nil, nil
	}
	if len(from.RunPath) == 0 {
		for _, loader := range chain {
			if len(loader.RunPath) != 0 {
				continue // ld.so ignores DT_RPATH beside DT_RUNPATH
			}
			if p, o, err := tryDirs(loader.RPath, loader); p != "" || err != nil {
				return p, o, err
			}
		}
	}
	exe := &Object{Path: filepath.Join(r.executableDir, "exe"), Class: from.Class, Machine: from.Machine}
	if p, o, err := tryDirs(r.libraryPath, exe); p != "" || err != nil {
		return p, o, err
	}
	if p, o, err := tryDirs(from.RunPath, from); p != "" || err != nil {
		return p, o, err
	}
	if !from.NoDefaultLib {
		if p, err := r.fromCache(soname, want); p != "" || err != nil {
			return p, nil, err
		}
		if p, o, err := tryDirs(systemDirs(from.Class, from.Machine), from); p != "" || err != nil {
			return p, o, err
		}
	}
	return "", nil, fmt.Errorf("ldso: %s (needed by %s): %w", soname, from.Path, ErrNotFound)
}

// candidates returns the files ld.so tries for soname in dir: the
// glibc-hwcaps subdirectories, then dir itself. An empty dir is the
// working directory.
func (r *Resolver) candidates(dir, soname string) []string {
	var c []string
	for _, level := range r.hwcaps {
		c = append(c, joinRaw(dir, "glibc-hwcaps/"+level+"/"+soname))
	}
	return append(c, joinRaw(dir, soname))
}

// absRaw makes path absolute without cleaning it, as ld.so names the
// objects it loads (ldd prints such names).
func absRaw(path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("ldso: %w", err)
	}
	return joinRaw(wd, path), nil
}

// joinRaw joins as ld.so does, without cleaning: "a/b/../c" where b is a
// symbolic link is not "a/c". An empty dir is the working directory.
func joinRaw(dir, name string) string {
	if dir == "" || strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// fromCache looks soname up in ld.so.cache as ld.so does: the entries of
// the key whose flags fit the object, glibc-hwcaps entries of supported
// levels first (the most preferred), then the first plain entry. The
// file must still be an ELF of the right kind; if not, ld.so goes on to
// the default directories, and so does fromCache, returning "".
func (r *Resolver) fromCache(soname string, want elfKind) (string, error) {
	r.loadCache()
	best, bestRank := "", len(r.hwcaps)+1
	for _, e := range r.cache[soname] {
		if !want.cacheFlagsFit(e.Flags) {
			continue
		}
		rank := len(r.hwcaps) // a plain entry
		switch {
		case e.HWCapsSubdir != "":
			rank = -1
			for i, level := range r.hwcaps {
				if level == e.HWCapsSubdir {
					rank = i
				}
			}
			if rank < 0 {
				continue // a level this CPU lacks
			}
		case e.HWCap != 0:
			continue // legacy hwcaps: not modelled, see Find
		}
		if rank < bestRank {
			best, bestRank = e.Value, rank
		}
		if rank == len(r.hwcaps) {
			break // the plain entry ends the search
		}
	}
	if best == "" {
		return "", nil
	}
	ok, err := want.accepts(best)
	if !ok || err != nil {
		return "", err
	}
	return best, nil
}

// expand substitutes ld.so's dynamic string tokens in a path entry of
// owner, and reports whether it started with $ORIGIN or ${ORIGIN}.
func expand(entry string, owner *Object) (string, bool) {
	fromOrigin := false
	var b strings.Builder
	for i := 0; i < len(entry); {
		if entry[i] != '$' {
			b.WriteByte(entry[i])
			i++
			continue
		}
		name, n := dstName(entry[i+1:])
		switch name {
		case "ORIGIN":
			fromOrigin = fromOrigin || i == 0
			b.WriteString(filepath.Dir(owner.Path))
		case "LIB":
			b.WriteString(libDir(owner.Class, owner.Machine))
		case "PLATFORM":
			b.WriteString(platform(owner.Class, owner.Machine))
		default:
			b.WriteByte('$') // not a token: ld.so keeps it as it is
			i++
			continue
		}
		i += 1 + n
	}
	return b.String(), fromOrigin
}

// dstName returns the token name that s (what follows a '$') starts with,
// "NAME" or "{NAME}", and its length in s; "" if none. Unbraced, the name
// must end the entry or be followed by '/', as glibc requires.
func dstName(s string) (string, int) {
	for _, name := range [...]string{"ORIGIN", "PLATFORM", "LIB"} {
		if strings.HasPrefix(s, "{"+name+"}") {
			return name, len(name) + 2
		}
		if strings.HasPrefix(s, name) && (len(s) == len(name) || s[len(name)] == '/') {
			return name, len(name)
		}
	}
	return "", 0
}

// multiarch returns Debian's multiarch triplet of the class and machine,
// "" for those it does not know.
func multiarch(class elf.Class, machine elf.Machine) string {
	switch {
	case machine == elf.EM_X86_64 && class == elf.ELFCLASS64:
		return "x86_64-linux-gnu"
	case machine == elf.EM_X86_64:
		return "x86_64-linux-gnux32"
	case machine == elf.EM_386:
		return "i386-linux-gnu"
	case machine == elf.EM_AARCH64:
		return "aarch64-linux-gnu"
	case machine == elf.EM_ARM:
		return "arm-linux-gnueabihf"
	case machine == elf.EM_RISCV && class == elf.ELFCLASS64:
		return "riscv64-linux-gnu"
	case machine == elf.EM_PPC64:
		return "powerpc64le-linux-gnu"
	case machine == elf.EM_S390:
		return "s390x-linux-gnu"
	}
	return ""
}

// libDir is $LIB: Debian configures glibc with slibdir /lib/<multiarch>.
func libDir(class elf.Class, machine elf.Machine) string {
	if t := multiarch(class, machine); t != "" {
		return "lib/" + t
	}
	if class == elf.ELFCLASS64 {
		return "lib64"
	}
	return "lib"
}

// platform is $PLATFORM, the kernel's AT_PLATFORM string for the machine.
// It is fixed per machine here; on 32-bit x86 the kernel says i686 for
// any CPU of the last twenty years.
func platform(class elf.Class, machine elf.Machine) string {
	switch machine {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_386:
		return "i686"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_ARM:
		return "v7l"
	}
	return strings.ToLower(strings.TrimPrefix(machine.String(), "EM_"))
}

// systemDirs are ld.so's default directories (`ld.so --help`, "system
// search path") on Debian.
func systemDirs(class elf.Class, machine elf.Machine) []string {
	if t := multiarch(class, machine); t != "" {
		return []string{"/lib/" + t, "/usr/lib/" + t, "/lib", "/usr/lib"}
	}
	if class == elf.ELFCLASS64 {
		return []string{"/lib64", "/usr/lib64"}
	}
	return []string{"/lib", "/usr/lib"}
}

// supportedHWCaps returns the glibc-hwcaps subdirectories that ld.so
// searches on this CPU, most preferred first. glibc 2.36 has them for
// x86-64 (ISA levels v2 to v4), POWER and s390x; only x86-64 is modelled.
// The levels come from /proc/cpuinfo's flags, which name the same CPUID
// bits glibc checks.
func supportedHWCaps() []string {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	return x86HWCaps(info)
}

// x86HWCaps returns the x86-64 ISA levels whose CPU flags the first
// "flags" line of a /proc/cpuinfo has, highest first.
func x86HWCaps(cpuinfo []byte) []string {
	var flags map[string]bool
	for line := range bytes.Lines(cpuinfo) {
		key, value, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(key)) == "flags" {
			flags = map[string]bool{}
			for _, f := range bytes.Fields(value) {
				flags[string(f)] = true
			}
			break
		}
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if !flags[n] {
				return false
			}
		}
		return true
	}
	var levels []string
	// The x86-64 psABI's levels; lahf_lm is LAHF-SAHF, pni is SSE3, abm
	// is LZCNT.
	v2 := has("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3")
	v3 := v2 && has("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
	v4 := v3 && has("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
	for _, l := range []struct {
		ok   bool
		name string
	}{{v4, "x86-64-v4"}, {v3, "x86-64-v3"}, {v2, "x86-64-v2"}} {
		if l.ok {
			levels = append(levels, l.name)
		}
	}
	return levels
}

// elfKind is what ld.so requires of a candidate: the class, byte order
// and machine of the object that needs it.
type elfKind struct {
	class   elf.Class
	data    elf.Data
	machine elf.Machine
}

// accepts reports whether the file at path is an ELF shared object of
// kind k. A file that cannot be opened, or an ELF of another class, byte
// order or machine, is skipped (false, nil), as ld.so skips it; a file
// that is there but not a loadable ELF is an error wrapping ErrNotELF, as
// it is for ld.so.
func (k elfKind) accepts(path string) (bool, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	var ident [elf.EI_NIDENT]byte
	if _, err := io.ReadFull(f, ident[:]); err != nil || string(ident[:4]) != elf.ELFMAG {
		return false, fmt.Errorf("ldso: %s: %w: invalid ELF header", path, ErrNotELF)
	}
	if elf.Class(ident[elf.EI_CLASS]) != k.class {
		return false, nil // ld.so: "found_other_class", not fatal
	}
	if k.data != elf.ELFDATANONE && elf.Data(ident[elf.EI_DATA]) != k.data {
		return false, fmt.Errorf("ldso: %s: %w: byte order %v, want %v", path, ErrNotELF, elf.Data(ident[elf.EI_DATA]), k.data)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return false, fmt.Errorf("ldso: %s: %w: %v", path, ErrNotELF, err)
	}
	defer ef.Close()
	if ef.Machine != k.machine {
		return false, nil
	}
	if ef.Type != elf.ET_DYN {
		return false, fmt.Errorf("ldso: %s: %w: ELF type %v cannot be loaded as a library", path, ErrNotELF, ef.Type)
	}
	return true, nil
}

// cacheFlagsFit reports whether ld.so for objects of kind k takes
// ld.so.cache entries with flags (glibc's _dl_cache_check_flags).
// Machines not listed take every entry; the ELF check still applies.
func (k elfKind) cacheFlagsFit(flags int32) bool {
	switch {
	case k.machine == elf.EM_X86_64 && k.class == elf.ELFCLASS64:
		return flags == CacheFlagELFLibc6|CacheFlagX8664Lib64
	case k.machine == elf.EM_X86_64:
		return flags == CacheFlagELFLibc6|CacheFlagX8664LibX32
	case k.machine == elf.EM_AARCH64 && k.class == elf.ELFCLASS64:
		return flags == CacheFlagELFLibc6|CacheFlagAArch64Lib64
	case k.machine == elf.EM_386:
		return flags == CacheFlagELF || flags == CacheFlagELFLibc6
	}
	return true
}
