package native

// #include <dynop/dynop.h>
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
)

// Table is a native interface: a pointer to a C struct of function
// pointers that starts with a dynop_header. Native plugins add their
// interfaces as Tables; Go code reaches the functions through a typed
// binding (see [RegisterBinding]).
//
// The memory belongs to the plugin that provided the table and is valid
// while a reference to the interface is held.
type Table struct {
	p unsafe.Pointer
}

// TableAt returns the Table at p, which must point to C memory (never Go
// memory) starting with a dynop_header, or be nil.
func TableAt(p unsafe.Pointer) Table { return Table{p} }

// Pointer returns the address of the struct, for passing to C.
func (t Table) Pointer() unsafe.Pointer { return t.p }

// IsNil reports whether t points nowhere.
func (t Table) IsNil() bool { return t.p == nil }

// Header decodes the struct's header. t must not be nil.
func (t Table) Header() abi.Header {
	return abi.ParseHeader(unsafe.Slice((*byte)(t.p), abi.HeaderSize))
}

// NativeTable returns t itself; it makes every Table [Exported].
func (t Table) NativeTable() Table { return t }

// Check reports whether t can be read as interface want by code compiled
// against a struct of minSize bytes: the UID must be want's, the version
// compatible with want.Version (same major, minor at least want's), and
// header.size at least minSize. A table from a newer plugin may be larger.
func (t Table) Check(want iface.Desc, minSize uintptr) error {
	if t.p == nil {
		return fmt.Errorf("native: interface %s: table pointer is NULL", want)
	}
	h := t.Header()
	if h.Type != want.UID {
		return fmt.Errorf("native: interface %s: %w: the table's header has type {%s}", want, dynop.ErrType, h.Type)
	}
	if err := iface.CheckVersion("interface "+want.Name, h.Version, want.Version); err != nil {
		return fmt.Errorf("native: %w", err)
	}
	if uintptr(h.Size) < minSize {
		return fmt.Errorf("native: interface %s: %w: the table's header says %d bytes, version %s needs at least %d",
			want, ErrABI, h.Size, h.Version, minSize)
	}
	return nil
}

// CheckFunctions reports whether t, a table whose members after the
// header are function pointers in the order names lists them, is large
// enough to hold them all and has none NULL. Bindings call it after
// [Table.Check], so that no call ever jumps to address zero.
func (t Table) CheckFunctions(want iface.Desc, names ...string) error {
	ptr := unsafe.Sizeof(uintptr(0))
	if need := abi.HeaderSize + uintptr(len(names))*ptr; uintptr(t.Header().Size) < need {
		return fmt.Errorf("native: interface %s: %w: the table's header says %d bytes, %d functions need %d",
			want, ErrABI, t.Header().Size, len(names), need)
	}
	fns := unsafe.Slice((*unsafe.Pointer)(unsafe.Add(t.p, abi.HeaderSize)), len(names))
	for i, f := range fns {
		if f == nil {
			return fmt.Errorf("native: interface %s: %w: function %s is NULL", want, ErrABI, names[i])
		}
	}
	return nil
}

// Exported is implemented by interface implementations that native code
// can use: [Table], the typed bindings of native interfaces, and Go
// implementations that export a C table of their own. A native plugin can
// acquire an interface only if its implementation is Exported.
type Exported interface {
	NativeTable() Table
}

// A Binder turns a native interface table into the typed Go value that Go
// callers acquire, checking the table's version and size with
// [Table.Check]. The value should be [Exported] so that native plugins can
// acquire it too.
type Binder func(Table) (any, error)

var (
	bindingsMu sync.RWMutex
	bindings   = make(map[iface.UID]Binder)
)

// RegisterBinding makes every native plugin's implementation of interface
// uid reach Go callers as bind's value instead of a bare [Table]. The
// package that declares an interface's Go type registers its binding from
// init, as database/sql drivers register themselves, so any program that
// can name the type gets it. It panics if uid is bound twice.
func RegisterBinding(uid iface.UID, bind Binder) {
	bindingsMu.Lock()
	defer bindingsMu.Unlock()
	if _, dup := bindings[uid]; dup {
		panic(fmt.Sprintf("native: RegisterBinding called twice for {%s}", uid))
	}
	bindings[uid] = bind
}

// bindTable returns what Go callers get for table t: the registered
// binding's value, or t itself. It runs inside a callback from C, which a
// panic must not unwind through, so a panicking binder is an error.
func bindTable(t Table) (impl any, err error) {
	bindingsMu.RLock()
	bind := bindings[t.Header().Type]
	bindingsMu.RUnlock()
	if bind == nil {
		return t, nil
	}
	defer func() {
		if p := recover(); p != nil {
			impl, err = nil, fmt.Errorf("native: the binding of interface {%s} panicked: %v", t.Header().Type, p)
		}
	}()
	return bind(t)
}

// ErrABI reports a plugin that breaks dynop.h's rules: a struct with the
// wrong type UID, a layout version from the future, a size too small for
// its version, a NULL where a value is required. It is the same error as
// wasm.ErrABI: both loaders read plugins with one decoder.
var ErrABI = errdefs.ErrABI

// ErrLoad reports a library the dynamic linker refused: a missing
// dependency, a symbol that does not resolve. The message is dlerror's.
var ErrLoad = errors.New("the dynamic linker cannot load it")

// resultOf returns the result code that tells C code about err.
func resultOf(err error) abi.Result { return abi.ResultOf(err) }

// cResults returns dynop.h's result codes as the C compiler sees them, in
// order, so that a test keeps package abi's constants in step.
func cResults() []abi.Result {
	return []abi.Result{C.DYNOP_OK, C.DYNOP_ERROR, C.DYNOP_ERROR_INVALID_ARGUMENT, C.DYNOP_ERROR_NOT_FOUND,
		C.DYNOP_ERROR_VERSION, C.DYNOP_ERROR_STATE, C.DYNOP_ERROR_CYCLE, C.DYNOP_ERROR_NO_MEMORY,
		C.DYNOP_ERROR_UNSUPPORTED, C.DYNOP_ERROR_DUPLICATE, C.DYNOP_ERROR_TYPE, C.DYNOP_ERROR_CLOSED}
}
