// Package errdefs defines, once, the sentinel errors that cross layers:
// the host, the operator and graph packages, the ABI runtime shared by
// the native and WebAssembly loaders, and the Go guest of a WebAssembly
// plugin all report these same values, so that [errors.Is] works across
// every layer and both loaders. Users see them as the root package's
// dynop.ErrNotFound and so on (and the guest's guest.ErrNotFound); no
// other package defines its own "not found", "closed" or "panicked".
//
// The package imports nothing but errors, so that every package can
// import it, the Go WebAssembly guest included.
package errdefs

import "errors"

var (
	// ErrNotFound: no such plugin, interface, operator or pass.
	ErrNotFound = errors.New("not found")
	// ErrState: the call is not allowed in the current state (a plugin
	// that stopped, a call outside register).
	ErrState = errors.New("not allowed in this state")
	// ErrCycle: plugins acquire each other while starting.
	ErrCycle = errors.New("dependency cycle")
	// ErrDuplicate: a name or ID given twice.
	ErrDuplicate = errors.New("duplicate")
	// ErrClosed: the host, graph or operator instance is closed.
	ErrClosed = errors.New("closed")
	// ErrReleased: the reference was already released.
	ErrReleased = errors.New("reference already released")
	// ErrPanic: Go code panicked (a plugin's, an operator's, a graph
	// node's); the panic was recovered.
	ErrPanic = errors.New("panicked")
	// ErrUnsupported: what was asked for is not supported here: a device
	// an operator has no backend for, a CPU no variant runs on, a
	// capability the sandbox does not grant.
	ErrUnsupported = errors.New("unsupported")
	// ErrABI: a plugin breaks dynop.h's rules: a struct with the wrong
	// type UID, a layout version from the future, a size too small for
	// its version, a NULL where a value is required, a pointer outside a
	// WebAssembly module's memory.
	ErrABI = errors.New("plugin breaks the dynop ABI")
)
