// Package native loads dynop plugins that are native shared libraries
// with the C ABI of abi/include/dynop/dynop.h.
//
// Importing the package registers its loader with the host, so that ELF
// files in [dynop.Options.Paths] load:
//
//	import _ "github.com/dynop/dynop/loader/native"
//
// A host reads a plugin file's info without running it in the host's
// process (see package discover): from its manifest, the registry cache,
// or a scanner child process (the host's program run again, whose main
// calls dynop.ServeScanner first) in which this package checks the file with
// debug/elf (ELF class and machine, type, the exported entry symbol), then
// loads it with dlopen(RTLD_NOW) just long enough to read its info — so a
// symbol that does not resolve is found there, not on the first call —
// and unloads it. [Load] does the same in the calling process.
// When the host first needs one of the plugin's interfaces it calls
// Start, which copies the file into a sealed memfd, hashing it, checks
// that the digest is the one enumerated (and, under signature policy
// require, that the signature still verifies), loads the libraries the
// plugin ships beside it (its manifest's bundled files) from sealed
// copies checked the same way, and dlopens the memfd — RTLD_LAZY and
// RTLD_LOCAL, or RTLD_GLOBAL if the plugin asks with
// DYNOP_PLUGIN_GLOBAL_SYMBOLS or [Options.GlobalSymbols] says so, and
// RTLD_DEEPBIND where that is safe (see [DeepBind]). Before that, at
// enumeration, a plugin whose system libraries the dynamic linker
// cannot find is unsupported, naming them. It
// checks that the info is unchanged and calls the plugin's register with
// a host table. When the last reference
// goes, the host calls deregister, then Unload dlcloses the library: it
// leaves /proc/self/maps (where it shows as /memfd:dynop:PATH), and the
// next acquisition loads it afresh.
//
// A library's code and static data exist once per process, however often
// it is dlopened, so one library can be started by one host at a time: a
// second host (or a second Plugin of the same file) gets an error wrapping
// [dynop.ErrState] until the first stops it.
//
// # Interfaces
//
// A native plugin's interface is a C struct of function pointers that
// starts with a dynop_header. Go callers get it as a [Table], or as the
// typed value of the binding registered for its UID with
// [RegisterBinding]: a Go type whose methods call the function pointers
// through small C trampolines, with no reflection and no allocation per
// call. In the other direction, a native plugin can acquire any interface
// whose implementation is [Exported], including Go implementations that
// build a C table of their own.
//
// # Operators
//
// The operator schemas in a plugin's info become schema.Op values in its
// [schema.Plugin], read without running the plugin. The backends its
// register hands to register_operator become op.Factory functions: an
// instance's Setup and Run call the plugin's setup and run once per
// sample, one cgo call per batch, with DLPack tensors whose data pointers
// travel as call arguments. Operator calls hold the plugin started: its
// deregister waits for the calls in flight, and later calls fail with
// [dynop.ErrState].
//
// # Passes
//
// The pass descriptors in a plugin's info become schema.Pass values in
// its [schema.Plugin], so a host knows the passes before the plugin starts.
// The passes its register hands to register_pass reach the host as values
// that implement graph.PopulatePass, graph.PartitionPass and
// graph.GlobalPass. Each run lays the graph out in C memory for the call
// (every node's name, kind, definition, producers and arguments as JSON),
// and the builder's set_operator and group go back to the graph.Builder
// of the build. A run holds the plugin started like an operator call; a
// failed run is a [*abi.ResultError] with the plugin's message, or else the
// message of the builder call that failed.
//
// Every ABI struct the plugin hands over is checked before it is read: its
// type UID, a major version this host knows, and a size that covers the
// members of its version. Violations are errors wrapping [ErrABI]; the
// host carries on with its other plugins.
package native

/*
#cgo CFLAGS: -I${SRCDIR}/../../abi/include
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <string.h>
#include "loader.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/abisession"
	"os"
	"path/filepath"
	"runtime/cgo"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

func init() {
	dynop.RegisterLoader(dynop.Loader{
		Name:    "native",
		Magic:   "\x7fELF",
		Check:   checkFile,
		Inspect: inspect,
		Bundled: bundledFiles,
		Plugin:  newPlugin,
		Errors:  map[string]error{"abi": ErrABI, "load": ErrLoad},
	})
}

// loaderData is what a native plugin's manifest keeps besides its info.
type loaderData struct {
	Flags uint32 `json:"flags,omitempty"` // dynop_plugin_info.flags
	// Needs are the sonames the library needs from the system (those
	// it does not ship), and RunPath, RPath and NoDefaultLib what its
	// dynamic section says of where to find them: the host checks that
	// the dynamic linker finds them before it lists the plugin available.
	Needs        []string `json:"needs,omitempty"`
	RunPath      []string `json:"runpath,omitempty"`
	RPath        []string `json:"rpath,omitempty"`
	NoDefaultLib bool     `json:"nodefaultlib,omitempty"`
}

// inspect reads the plugin in the file at path, in a scanner child (the
// loader has no settings of its own: opts go unused). A plugin whose
// libraries the dynamic linker cannot find is not loaded: the error
// names them and wraps [dynop.ErrUnsupported].
func inspect(ctx context.Context, path string, _ *dynop.Options) (schema.Plugin, json.RawMessage, error) {
	if err := checkFile(path); err != nil {
		return schema.Plugin{}, nil, err
	}
	deps, obj, err := dependencies(path)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	if err := missingError(path, deps.Missing); err != nil {
		return schema.Plugin{}, nil, err
	}
	info, flags, err := readFile(ctx, path, DeepBindAuto)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	d := loaderData{Flags: flags, Needs: deps.System, RunPath: obj.RunPath, RPath: obj.RPath, NoDefaultLib: obj.NoDefaultLib}
	var data json.RawMessage
	if d.Flags != 0 || d.Needs != nil {
		data, _ = json.Marshal(d)
	}
	return info, data, nil
}

// newPlugin makes the plugin enumerated as f, without loading it. A
// plugin whose system libraries the dynamic linker cannot find now is
// unsupported.
func newPlugin(f *discover.File, opts *dynop.Options) (plugin.Plugin, error) {
	var d loaderData
	if err := abisession.LoaderData("native", f, &d); err != nil {
		return nil, err
	}
	p := &Plugin{path: f.Path, info: f.Info, flags: d.Flags, file: f}
	switch c := opts.LoaderConfig(loaderName).(type) {
	case Config:
		p.opts.DeepBind = c.DeepBind
	case *Config:
		p.opts.DeepBind = c.DeepBind
	}
	return p, checkSystemLibraries(f.Path, &d)
}

const loaderName = "native"

// Config is how a host loads native plugins: put one in
// [dynop.Options.Loaders]. The zero Config is the default.
type Config struct {
	// DeepBind says when a plugin is loaded with RTLD_DEEPBIND; the
	// default deep-binds where it is safe. See [DeepBind].
	DeepBind DeepBind
}

// LoaderName implements [dynop.LoaderConfig]: "native".
func (Config) LoaderName() string { return loaderName }

// Validate implements [dynop.LoaderConfig]: it reports an unknown
// DeepBind.
func (c Config) Validate() error {
	if c.DeepBind > DeepBindNever {
		return fmt.Errorf("native: Config.DeepBind %d is none of auto, always, never", uint8(c.DeepBind))
	}
	return nil
}

// Options configure how a native plugin is loaded.
type Options struct {
	// GlobalSymbols loads the library with RTLD_GLOBAL, making its symbols
	// available to libraries loaded after it, even if the plugin does not
	// ask for it with DYNOP_PLUGIN_GLOBAL_SYMBOLS.
	//
	// A global library still unloads when the plugin stops, unless code
	// outside it bound to one of its symbols (dlsym(RTLD_DEFAULT, ...), or
	// a library that links against it): glibc then keeps it mapped for as
	// long as that code may use it.
	GlobalSymbols bool
	// DeepBind says when the library is loaded with RTLD_DEEPBIND; see
	// [DeepBind] and [Config.DeepBind], which sets it for a host's
	// plugins.
	DeepBind DeepBind
}

// Plugin is a native plugin: a [plugin.Plugin] whose lifecycle steps load
// the shared library, call its entry points and unload it. Hand it to a
// host in [dynop.Options.Plugins], or let the host load it from
// [dynop.Options.Paths].
type Plugin struct {
	path  string // absolute
	opts  Options
	info  schema.Plugin
	flags uint32
	file  *discover.File // what was enumerated: the bytes Start may load

	mu  sync.Mutex // the host runs one lifecycle step at a time; this makes misuse safe
	lib *library   // while started
}

var (
	_ plugin.Plugin   = (*Plugin)(nil)
	_ plugin.Stopper  = (*Plugin)(nil)
	_ plugin.Unloader = (*Plugin)(nil)
)

// library is a dlopen'ed plugin library and, while it is started, its
// host table and session.
type library struct {
	path    string                // the plugin file, for messages
	who     *C.dynop_loader_ident // the file and plugin ID, for reports of crashes in its code
	memfd   *os.File              // the sealed copy loaded, if loaded from one
	handle  unsafe.Pointer        // from dlopen
	getFunc unsafe.Pointer        // dynop_plugin_get_function
	deps    []*dependency         // the bundled libraries loaded for it

	host    *C.dynop_loader_host
	sess    *session
	session cgo.Handle // of sess, which the host table carries
	release func()     // gives up the process-wide claim on the file; set while started
}

// Load reads the native plugin in the file at path without starting it,
// in this process: it loads the library to call its get_info, as NVIGI
// does, and unloads it. Hosts do not call it for the files they find (see
// package discover, which reads manifests or runs Load in a scanner child
// process); it is for programs that take a plugin file as it is.
// The returned Plugin knows its Info and the file's SHA-256; the library
// is loaded again only when the host starts the plugin, and only if the
// file still has that digest. Errors name the file and what is wrong with
// it, and wrap [dynop.ErrFormat] (not a loadable library), [ErrLoad] (the
// dynamic linker refused it: a missing dependency, an unresolved symbol),
// [ErrABI] (the plugin breaks the C ABI) or the file system's error.
func Load(ctx context.Context, path string, opts Options) (*Plugin, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	deps, _, err := dependencies(path)
	if err != nil {
		return nil, err
	}
	if err := missingError(path, deps.Missing); err != nil {
		return nil, err
	}
	info, flags, err := readFile(ctx, path, opts.DeepBind)
	if err != nil {
		return nil, err
	}
	d, _, err := sign.HashFile(path) // Start loads only these bytes
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	f := &discover.File{Path: path, SHA256: d, Info: info}
	for _, rel := range deps.Bundled {
		b := discover.BundledFile{Path: rel}
		if b.SHA256, b.Size, err = sign.HashFile(f.BundledPath(b)); err != nil {
			return nil, fmt.Errorf("native: %s: bundled library: %w", path, err)
		}
		f.Bundled = append(f.Bundled, b)
	}
	return &Plugin{path: path, opts: opts, info: info, flags: flags, file: f}, nil
}

// readFile checks the library at path with debug/elf, loads it
// (RTLD_NOW, and RTLD_DEEPBIND where that is safe) to read its info and
// flags and to find its register entry point, and unloads it.
func readFile(ctx context.Context, path string, policy DeepBind) (schema.Plugin, uint32, error) {
	if err := ctx.Err(); err != nil {
		return schema.Plugin{}, 0, err
	}
	// dlopen searches the library path for a name without a slash; the
	// file checked must be the file loaded.
	path, err := filepath.Abs(path)
	if err != nil {
		return schema.Plugin{}, 0, fmt.Errorf("native: %w", err)
	}
	if err := checkFile(path); err != nil {
		return schema.Plugin{}, 0, err
	}
	deep, _ := decideDeepBind(policy, 0)
	lib, err := openLibrary(path, loadMode{now: true, deep: deep})
	if err != nil {
		return schema.Plugin{}, 0, err
	}
	info, flags, err := lib.readInfo()
	if err == nil {
		_, err = lib.function(epRegister)
	}
	if cerr := lib.close(); err == nil {
		err = cerr
	}
	return info, flags, err
}

// Info implements [plugin.Plugin]: the info read by [Load].
func (p *Plugin) Info() schema.Plugin { return p.info }

// Path returns the file the plugin was loaded from, as an absolute path.
func (p *Plugin) Path() string { return p.path }

// GlobalSymbols reports whether the library is loaded with RTLD_GLOBAL.
func (p *Plugin) GlobalSymbols() bool {
	return p.opts.GlobalSymbols || p.flags&uint32(C.DYNOP_PLUGIN_GLOBAL_SYMBOLS) != 0
}

// DeepBind reports whether the library (and its bundled libraries) would
// be loaded with RTLD_DEEPBIND if it started now, and if not, why not.
func (p *Plugin) DeepBind() (bool, string) {
	deep, risk := decideDeepBind(p.opts.DeepBind, p.flags)
	switch {
	case deep:
		return true, ""
	case p.opts.DeepBind == DeepBindNever:
		return false, "the host's DeepBind is never"
	case p.flags&uint32(C.DYNOP_PLUGIN_NO_DEEP_BIND) != 0:
		return false, "the plugin sets DYNOP_PLUGIN_NO_DEEP_BIND"
	}
	return false, risk
}

// Bundled returns the paths of the libraries the plugin ships and loads
// before itself, in load order.
func (p *Plugin) Bundled() []string {
	var out []string
	for _, b := range p.file.Bundled {
		out = append(out, p.file.BundledPath(b))
	}
	return out
}

// Start implements [plugin.Plugin]: it loads the library, checks that
// its info is still what [Load] read, and calls its register entry point.
// If register fails, the library is unloaded again.
func (p *Plugin) Start(ctx context.Context, h plugin.Registrar) (err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lib != nil {
		return fmt.Errorf("native: plugin %q: Start: %w: it is started already", p.info.ID, dynop.ErrState)
	}
	release, err := claim(p.path, p.info.ID)
	if err != nil {
		return err
	}
	deep, risk := decideDeepBind(p.opts.DeepBind, p.flags)
	switch {
	case risk != "" && deep:
		h.Logger().Warn("plugin asks for RTLD_DEEPBIND, which is unsafe here", "why", risk) // the registrar's logger names the plugin
	case risk != "":
		h.Logger().Info("plugin loaded without RTLD_DEEPBIND: the host's symbols may interpose on its calls into its libraries", "why", risk)
	}
	lib, err := openChecked(p.path, p.file, loadMode{global: p.GlobalSymbols(), deep: deep})
	if err != nil {
		release()
		return err
	}
	defer func() {
		// Undo everything unless register succeeded, also on a panic.
		if p.lib == nil {
			err = errors.Join(err, lib.close())
			release()
		}
	}()
	info, flags, err := lib.readInfo()
	if err != nil {
		return err
	}
	var diffs []string
	if d := p.info.Diff(info); d != "" {
		diffs = append(diffs, d)
	}
	if flags != p.flags {
		diffs = append(diffs, fmt.Sprintf("flags: %#x ≠ %#x", p.flags, flags))
	}
	if diffs != nil {
		return fmt.Errorf("native: %s: %w: the plugin's info changed since it was enumerated: %s", p.path, dynop.ErrInvalid, strings.Join(diffs, "; "))
	}
	register, err := lib.function(epRegister)
	if err != nil {
		return err
	}
	s := newSession(p, h)
	s.who = lib.who
	lib.sess, lib.session = s, cgo.NewHandle(s)
	cid := C.CString(p.info.ID)
	C.dynop_loader_set_plugin(lib.who, cid)
	C.free(unsafe.Pointer(cid))
	lib.host = C.dynop_loader_new_host(C.uintptr_t(lib.session), C.dynop_cpu_features(h.CPU().Available()), lib.who)
	if lib.host == nil {
		return fmt.Errorf("native: plugin %q: out of memory for its host table", p.info.ID)
	}
	s.begin(ctx, "register")
	if err := s.end("register", C.dynop_loader_call_step(register, &lib.host.pub, epRegister.cname)); err != nil {
		return err
	}
	if err := s.publishOperators(); err != nil {
		// register succeeded, so the plugin holds state: let it go.
		return errors.Join(err, lib.deregister(ctx))
	}
	lib.release = release
	p.lib = lib
	return nil
}

// started maps the libraries started in this process, by file identity
// (as the dynamic linker identifies them), to the plugin ID started.
var (
	startedMu sync.Mutex
	started   = make(map[fileID]string)
)

type fileID struct{ dev, ino uint64 }

// claim records that the library at path is being started as plugin id,
// or fails if it is started already; release undoes the claim.
func claim(path, id string) (release func(), err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("native: plugin %q: %w", id, err)
	}
	var key fileID
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		key = fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	startedMu.Lock()
	defer startedMu.Unlock()
	if other, busy := started[key]; busy {
		return nil, fmt.Errorf("native: plugin %q: %w: its library %s is started already in this process (as plugin %q, by another host or another Plugin of the file); its code and static data exist once per process, so it can serve one host at a time",
			id, dynop.ErrState, path, other)
	}
	started[key] = id
	return func() {
		startedMu.Lock()
		delete(started, key)
		startedMu.Unlock()
	}, nil
}

// Stop implements [plugin.Stopper]: it calls the plugin's
// deregister entry point, if it has one.
func (p *Plugin) Stop(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lib := p.lib
	if lib == nil {
		return nil
	}
	return lib.deregister(ctx)
}

// deregister marks the session stopped, so no operator instance calls in
// any more, and calls the plugin's deregister entry point, if it has one.
func (lib *library) deregister(ctx context.Context) error {
	s := lib.sess
	s.stop()
	deregister := C.dynop_loader_get_function(lib.who, lib.getFunc, epDeregister.cname)
	if deregister == nil {
		return nil // deregister is optional
	}
	s.begin(ctx, "deregister")
	return s.end("deregister", C.dynop_loader_call_step(deregister, &lib.host.pub, epDeregister.cname))
}

// Unload implements [plugin.Unloader]: it dlcloses the library. After it
// the plugin's code and data are gone; the next Start loads them again.
func (p *Plugin) Unload(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	lib := p.lib
	p.lib = nil
	if lib == nil {
		return nil
	}
	if lib.sess != nil {
		lib.sess.stop()
	}
	err := lib.close()
	lib.release()
	return err
}

// loadMode is how dlopen loads a library.
type loadMode struct {
	global bool // RTLD_GLOBAL, else RTLD_LOCAL
	now    bool // RTLD_NOW, else RTLD_LAZY
	deep   bool // RTLD_DEEPBIND
}

// entryPoint is a name dynop_plugin_get_function knows, with its C string
// allocated once.
type entryPoint struct {
	name  string
	cname *C.char
}

func newEntryPoint(name string) entryPoint { return entryPoint{name, C.CString(name)} }

var (
	epGetInfo    = newEntryPoint("get_info")
	epRegister   = newEntryPoint("register")
	epDeregister = newEntryPoint("deregister")
	cEntry       = C.CString(entrySymbol)
)

// openLibrary dlopens the plugin file at path as mode says.
func openLibrary(path string, mode loadMode) (*library, error) {
	return dlopen(&library{path: path}, path, mode)
}

// openChecked copies the file at path into a sealed memfd, passes the
// digest of the bytes to f.CheckLoaded, and only if it agrees loads f's
// bundled libraries (see loadBundled) and then dlopens the memfd, as
// openLibrary does the file.
func openChecked(path string, f *discover.File, mode loadMode) (*library, error) {
	memfd, digest, err := sealedCopy(path)
	if err != nil {
		return nil, err
	}
	if err := f.CheckLoaded(digest); err != nil {
		memfd.Close()
		return nil, fmt.Errorf("native: %w", err)
	}
	deps, err := loadBundled(f, mode.deep)
	if err != nil {
		memfd.Close()
		return nil, err
	}
	lib, err := dlopen(&library{path: path, memfd: memfd}, fdPath(memfd), mode)
	if err != nil {
		return nil, errors.Join(err, unloadBundled(deps))
	}
	lib.deps = deps
	if err := checkBound(path, deps); err != nil {
		return nil, errors.Join(err, lib.close())
	}
	return lib, nil
}

// installHandlers makes fatal signals and exit() in plugin code name the
// plugin (see dynop_loader_install_handlers), from the first library
// loaded on.
var installHandlers = sync.OnceFunc(func() { C.dynop_loader_install_handlers() })

// dlopen loads lib from name and finds its entry point. On failure it
// has closed lib, and its memfd, if any.
func dlopen(lib *library, name string, mode loadMode) (*library, error) {
	if _, err := dlopenFile(lib, name, mode); err != nil {
		return nil, err
	}
	var buf [512]C.char
	entry := C.dynop_loader_dlsym(lib.handle, cEntry, &buf[0], C.size_t(len(buf)))
	if entry == nil {
		err := fmt.Errorf("native: %s: %w: no entry point %s: %s", lib.path, dynop.ErrFormat, entrySymbol, C.GoString(&buf[0]))
		return nil, errors.Join(err, lib.close())
	}
	lib.getFunc = entry
	return lib, nil
}

// dlopenFile loads lib from name, a plugin or a library it ships. On
// failure it has closed lib's memfd, if any.
func dlopenFile(lib *library, name string, mode loadMode) (*library, error) {
	installHandlers()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cpath := C.CString(lib.path)
	lib.who = C.dynop_loader_new_ident(cpath)
	C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	lib.handle = C.dynop_loader_dlopen(lib.who, cname, cBool(mode.global), cBool(mode.now), cBool(mode.deep), &buf[0], C.size_t(len(buf)))
	if lib.handle == nil {
		C.dynop_loader_free_ident(lib.who)
		lib.who = nil
		if lib.memfd != nil {
			lib.memfd.Close() // nothing was loaded from it
		}
		msg := strings.ReplaceAll(C.GoString(&buf[0]), name, lib.path)
		return nil, fmt.Errorf("native: %s: %w: %s", lib.path, ErrLoad, msg)
	}
	return lib, nil
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// close frees the host table and session, if any, and dlcloses lib.
func (lib *library) close() error {
	if lib.host != nil {
		C.dynop_loader_free_host(lib.host)
		lib.host = nil
	}
	if lib.session != 0 {
		lib.session.Delete()
		lib.session = 0
	}
	var buf [512]C.char
	rc := C.dynop_loader_dlclose(lib.who, lib.handle, &buf[0], C.size_t(len(buf)))
	loaded := lib.stillLoaded()
	lib.closeMemfd(loaded)
	if !loaded {
		C.dynop_loader_free_ident(lib.who)
	} // else code of the library may still run, and a crash in it names it
	lib.who = nil
	var err error
	if rc != 0 {
		err = fmt.Errorf("native: %s: dlclose: %s", lib.path, C.GoString(&buf[0]))
	}
	// What the plugin linked against goes after it.
	if deps := lib.deps; deps != nil {
		lib.deps = nil
		err = errors.Join(err, unloadBundled(deps))
	}
	return err
}

// stillLoaded reports whether the library is loaded after its dlclose:
// one whose symbols other code bound to stays.
func (lib *library) stillLoaded() bool {
	name := lib.path
	if lib.memfd != nil {
		name = fdPath(lib.memfd)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.dynop_loader_is_loaded(cname) != 0
}

// closeMemfd closes the memfd the library was loaded from, unless the
// library is still loaded: the dynamic linker knows a library by the name
// it was opened by (/proc/self/fd/N), and would hand a later dlopen of a
// new memfd that got the same descriptor number the old library. So a
// library that stays loaded (one whose symbols other code bound to) keeps
// its descriptor, and its name, for the life of the process.
func (lib *library) closeMemfd(loaded bool) {
	if lib.memfd == nil {
		return
	}
	if loaded {
		keptMu.Lock()
		kept = append(kept, lib.memfd)
		keptMu.Unlock()
	} else {
		lib.memfd.Close()
	}
	lib.memfd = nil
}

// kept are the memfds of libraries that did not unload.
var (
	keptMu sync.Mutex
	kept   []*os.File
)

// function returns entry point ep, or an error if the plugin has none.
func (lib *library) function(ep entryPoint) (C.dynop_function, error) {
	f := C.dynop_loader_get_function(lib.who, lib.getFunc, ep.cname)
	if f == nil {
		return nil, fmt.Errorf("native: %s: %w: %s(%q) returned NULL: the plugin has no %s entry point", lib.path, ErrABI, entrySymbol, ep.name, ep.name)
	}
	return f, nil
}

// readInfo calls get_info and decodes the result (package abihost),
// checking every struct.
func (lib *library) readInfo() (schema.Plugin, uint32, error) {
	getInfo, err := lib.function(epGetInfo)
	if err != nil {
		return schema.Plugin{}, 0, err
	}
	ci := C.dynop_loader_get_info(lib.who, getInfo)
	info, flags, err := abihost.DecodeInfo(cMemory{}, addrOf(unsafe.Pointer(ci)))
	if err != nil {
		// Nothing marshals, lists or starts an info before it is whole:
		// the scanner child reports this error instead of a manifest.
		return schema.Plugin{}, 0, fmt.Errorf("native: %s: %w", lib.path, err)
	}
	return info, flags, nil
}

// symbolVisible reports whether name resolves in the process's global
// symbol scope (dlsym(RTLD_DEFAULT, name)): true for symbols of libraries
// loaded with RTLD_GLOBAL.
func symbolVisible(name string) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.dynop_loader_symbol_visible(cname) != 0
}

// headerABI returns what dynop.h says about the plugin API version and
// the header's size, so that tests keep the Go and C sides in step.
func headerABI() (api iface.Version, headerSize uintptr) {
	return iface.V(C.DYNOP_API_VERSION_MAJOR, C.DYNOP_API_VERSION_MINOR, C.DYNOP_API_VERSION_PATCH), C.sizeof_dynop_header
}
