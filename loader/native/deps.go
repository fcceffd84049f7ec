package native

/*
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/ldso"
	"github.com/dynop/dynop/sign"
)

// A plugin's shared-library dependencies come in two kinds. Those it
// ships (bundled: found through a RUNPATH entry under $ORIGIN) are listed
// in its manifest with their digests, and the loader loads them first,
// from sealed copies it checked, so that the plugin's DT_NEEDED entries
// bind to them by soname. Those it needs from the system are found as
// the dynamic linker would, before the plugin is listed available: a
// plugin whose libraries are missing is unsupported, each missing soname
// named.

// dependencies walks the dependencies of the plugin file at path.
func dependencies(path string) (*ldso.Dependencies, *ldso.Object, error) {
	obj, err := ldso.ReadObject(path)
	if err != nil {
		return nil, nil, fmt.Errorf("native: %w: %w", dynop.ErrFormat, err)
	}
	deps, err := ldso.Walk(path, ldso.Current())
	if err != nil {
		return nil, nil, fmt.Errorf("native: %s: %w: %w", path, dynop.ErrFormat, err)
	}
	return deps, obj, nil
}

// bundledFiles lists the libraries the plugin file at path ships, in
// load order ([discover.Format.Bundled]).
func bundledFiles(path string) ([]string, error) {
	deps, _, err := dependencies(path)
	if err != nil {
		return nil, err
	}
	return deps.Bundled, nil
}

// missingError is the error of a plugin file whose system libraries
// missing (sonames) the dynamic linker cannot find.
func missingError(path string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("native: %s: %w: %w (by the dynamic linker's search): %s; install %s, or ship %s beside the plugin (RUNPATH $ORIGIN)",
		path, dynop.ErrUnsupported, discover.ErrMissingLibrary, ldso.WithHints(missing), them(len(missing)), them(len(missing)))
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// checkSystemLibraries finds the system libraries the manifest's loader
// data d lists for the plugin file at path, as the dynamic linker would
// now, without reading the file.
func checkSystemLibraries(path string, d *loaderData) error {
	if len(d.Needs) == 0 {
		return nil
	}
	obj, ok := ldso.ObjectFor(runtime.GOARCH)
	if !ok {
		return nil // not a machine the resolver knows
	}
	// The host loads a copy of the plugin (and loads its bundled libraries
	// itself): what $ORIGIN finds now is nothing the dynamic linker
	// would find for the copy.
	obj.Path, obj.RunPath, obj.RPath, obj.NoDefaultLib = path, withoutOrigin(d.RunPath), withoutOrigin(d.RPath), d.NoDefaultLib
	r := ldso.Current()
	var missing []string
	for _, soname := range d.Needs {
		if _, err := r.Find(soname, obj); err != nil {
			missing = append(missing, soname)
		}
	}
	return missingError(path, missing)
}

// withoutOrigin returns the search path entries of list that do not
// start from $ORIGIN.
func withoutOrigin(list []string) []string {
	var out []string
	for _, e := range list {
		if !strings.Contains(e, "$ORIGIN") && !strings.Contains(e, "${ORIGIN}") {
			out = append(out, e)
		}
	}
	return out
}

// DeepBind says when a native plugin's library is loaded with
// RTLD_DEEPBIND, which makes its own symbols and those of the libraries
// it links against win over the host process's: a host that has another
// library with the same symbols (another BLAS) cannot then interpose on
// the plugin's calls into its own. See docs/symbols.md.
type DeepBind uint8

const (
	// DeepBindAuto, the default, deep-binds every plugin where it is
	// safe, by docs/symbols.md's rule: not where the process replaces
	// libc's allocator (malloc and free would cross allocators) or the
	// C++ runtime's operator new or standard streams, runs a sanitizer
	// (whose runtime refuses it), or has copy relocations of libc data
	// such as environ. A plugin that sets DYNOP_PLUGIN_DEEP_BIND is
	// deep-bound anyway, with a warning where it is unsafe; one that sets
	// DYNOP_PLUGIN_NO_DEEP_BIND never is.
	DeepBindAuto DeepBind = iota
	// DeepBindAlways deep-binds every plugin.
	DeepBindAlways
	// DeepBindNever deep-binds none, whatever the plugin asks.
	DeepBindNever
)

// String returns "auto", "always" or "never".
func (d DeepBind) String() string {
	switch d {
	case DeepBindAuto:
		return "auto"
	case DeepBindAlways:
		return "always"
	case DeepBindNever:
		return "never"
	}
	return fmt.Sprintf("DeepBind(%d)", uint8(d))
}

// deepBindUnsafe says why RTLD_DEEPBIND is unsafe in this process, or
// "" if it is safe. It looks again each time: a library loaded since may
// have changed the answer.
func deepBindUnsafe() string {
	var why [256]C.char
	if C.dynop_loader_deep_bind_unsafe(&why[0], C.size_t(len(why))) == 0 {
		return ""
	}
	return C.GoString(&why[0])
}

// decideDeepBind applies policy to a plugin with flags: whether to
// deep-bind it, and, where the safety check ran and failed, why it is
// unsafe (the plugin is then deep-bound only if it asks).
func decideDeepBind(policy DeepBind, flags uint32) (deep bool, risk string) {
	switch {
	case policy == DeepBindNever:
		return false, ""
	case policy == DeepBindAlways:
		return true, ""
	case flags&uint32(C.DYNOP_PLUGIN_NO_DEEP_BIND) != 0:
		return false, ""
	}
	risk = deepBindUnsafe()
	return risk == "" || flags&uint32(C.DYNOP_PLUGIN_DEEP_BIND) != 0, risk
}

// dependency is a bundled library loaded for one or more plugins. Two
// plugins that ship the same library (same soname, same digest) share
// one copy, as the dynamic linker would bind both to the first anyway.
type dependency struct {
	soname string
	digest sign.Digest
	lib    *library // nil while no plugin uses it but it stayed loaded
	name   string   // what it was loaded by: /proc/self/fd/N of its memfd
	refs   int
}

var (
	depsMu sync.Mutex
	loaded = make(map[string]*dependency) // by soname
)

// loadBundled loads the bundled libraries of f, in order, each from a
// sealed copy whose digest f.CheckBundled accepted; deep says whether
// with RTLD_DEEPBIND. On failure it has unloaded those it loaded.
func loadBundled(f *discover.File, deep bool) (deps []*dependency, err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, unloadBundled(deps))
			deps = nil
		}
	}()
	for i, b := range f.Bundled {
		d, err := loadDependency(f, i, b, deep)
		if err != nil {
			return deps, err
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// loadDependency loads f's bundled library i.
func loadDependency(f *discover.File, i int, b discover.BundledFile, deep bool) (*dependency, error) {
	path := f.BundledPath(b)
	memfd, digest, err := sealedCopy(path)
	if err != nil {
		return nil, err
	}
	if err := f.CheckBundled(i, digest); err != nil {
		memfd.Close()
		return nil, fmt.Errorf("native: %w", err)
	}
	obj, err := ldso.ReadObject(fdPath(memfd))
	if err == nil && obj.Soname == "" {
		err = fmt.Errorf("it has no DT_SONAME; link it with -Wl,-soname,%s", b.Path[strings.LastIndex(b.Path, "/")+1:])
	}
	if err != nil {
		memfd.Close()
		return nil, fmt.Errorf("native: plugin file %s: bundled library %s: %w: %w", f.Path, b.Path, dynop.ErrFormat, err)
	}
	depsMu.Lock()
	defer depsMu.Unlock()
	if d := loaded[obj.Soname]; d != nil {
		memfd.Close()
		if d.digest != digest {
			return nil, fmt.Errorf("native: plugin file %s: bundled library %s: %w: another plugin's %s, with other bytes (sha256 %s), is loaded in this process, and the dynamic linker binds a soname to the library loaded first",
				f.Path, b.Path, ErrLoad, obj.Soname, d.digest.String()[:16]+"…")
		}
		if d.lib == nil {
			// It stayed loaded when its last user unloaded (-z nodelete,
			// say): open it again, by the name it was loaded by.
			lib, err := dlopenFile(&library{path: path}, d.name, loadMode{deep: deep})
			if err != nil {
				return nil, fmt.Errorf("native: plugin file %s: bundled library %s: %w", f.Path, b.Path, err)
			}
			d.lib = lib
		}
		d.refs++
		return d, nil
	}
	cname := C.CString(obj.Soname)
	var other [512]C.char
	already := C.dynop_loader_loaded_as(cname, &other[0], C.size_t(len(other))) != 0
	C.free(unsafe.Pointer(cname))
	if already {
		memfd.Close()
		return nil, fmt.Errorf("native: plugin file %s: bundled library %s: %w: a library with its soname %s is loaded in this process already (%s), and the dynamic linker would bind the plugin to that copy instead of the one it ships",
			f.Path, b.Path, ErrLoad, obj.Soname, C.GoString(&other[0]))
	}
	lib, err := dlopenFile(&library{path: path, memfd: memfd}, fdPath(memfd), loadMode{deep: deep})
	if err != nil {
		return nil, fmt.Errorf("native: plugin file %s: bundled library %s: %w", f.Path, b.Path, err)
	}
	d := &dependency{soname: obj.Soname, digest: digest, lib: lib, name: fdPath(memfd), refs: 1}
	loaded[obj.Soname] = d
	return d, nil
}

// checkBound checks, after the plugin at path loaded, that each soname
// of deps names the copy loaded for it: another plugin starting at the
// same time may have loaded a library of that soname from elsewhere in
// between, and the plugin would then be bound to that one.
func checkBound(path string, deps []*dependency) error {
	for _, d := range deps {
		cname := C.CString(d.soname)
		var got [512]C.char
		C.dynop_loader_loaded_as(cname, &got[0], C.size_t(len(got)))
		C.free(unsafe.Pointer(cname))
		if name := C.GoString(&got[0]); name != d.name {
			return fmt.Errorf("native: plugin file %s: %w: its bundled %s is not the library of that soname the process binds (%s is)",
				path, ErrLoad, d.soname, name)
		}
	}
	return nil
}

// unloadBundled gives up deps, in reverse order, unloading each that no
// other plugin uses.
func unloadBundled(deps []*dependency) error {
	if len(deps) == 0 {
		return nil
	}
	var errs []error
	depsMu.Lock()
	defer depsMu.Unlock()
	for i := len(deps) - 1; i >= 0; i-- {
		d := deps[i]
		if d.refs--; d.refs > 0 {
			continue
		}
		errs = append(errs, d.lib.close())
		d.lib = nil
		cname := C.CString(d.name)
		stays := C.dynop_loader_is_loaded(cname) != 0 // its memfd is kept open then
		C.free(unsafe.Pointer(cname))
		if !stays {
			delete(loaded, d.soname)
		}
	}
	return errors.Join(errs...)
}
