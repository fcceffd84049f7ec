// Package abi holds the Go side of the values that dynop.h defines for
// every plugin that is not Go — native libraries and WebAssembly modules
// alike: the dynop_result codes and the error a failed plugin call
// becomes. The C header is abi/include/dynop/dynop.h; its wasm32 form is
// abi/include/dynop/dynop_wasm.h.
package abi

import (
	"errors"
	"fmt"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// Result is a dynop_result, the status code of a call across the ABI.
type Result int32

// The results of dynop.h, with its enum's values.
const (
	OK                   Result = 0
	ErrorGeneric         Result = 1
	ErrorInvalidArgument Result = 2
	ErrorNotFound        Result = 3
	ErrorVersion         Result = 4
	ErrorState           Result = 5
	ErrorCycle           Result = 6
	ErrorNoMemory        Result = 7
	ErrorUnsupported     Result = 8
	ErrorDuplicate       Result = 9
	ErrorType            Result = 10
	ErrorClosed          Result = 11
)

var resultNames = [...]string{
	"DYNOP_OK", "DYNOP_ERROR", "DYNOP_ERROR_INVALID_ARGUMENT", "DYNOP_ERROR_NOT_FOUND",
	"DYNOP_ERROR_VERSION", "DYNOP_ERROR_STATE", "DYNOP_ERROR_CYCLE", "DYNOP_ERROR_NO_MEMORY",
	"DYNOP_ERROR_UNSUPPORTED", "DYNOP_ERROR_DUPLICATE", "DYNOP_ERROR_TYPE", "DYNOP_ERROR_CLOSED",
}

// String returns the result's name in dynop.h.
func (r Result) String() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("dynop_result(%d)", int32(r))
}

// The host's sentinel errors that results stand for. They are the root
// package's (dynop.ErrNotFound is ErrNotFound), defined here so that
// loaders need not import the host.
var (
	ErrNotFound  = errors.New("not found")
	ErrState     = errors.New("not allowed in this plugin state")
	ErrCycle     = errors.New("dependency cycle")
	ErrDuplicate = errors.New("duplicate")
	ErrClosed    = errors.New("host is closed")
	ErrReleased  = errors.New("reference already released")
)

// sentinels maps results to the host's sentinel errors, both ways.
var sentinels = []struct {
	r   Result
	err error
}{
	{ErrorNotFound, ErrNotFound},
	{ErrorVersion, iface.ErrVersion},
	{ErrorState, ErrState},
	{ErrorCycle, ErrCycle},
	{ErrorDuplicate, ErrDuplicate},
	{ErrorType, iface.ErrType},
	{ErrorClosed, ErrClosed},
	{ErrorInvalidArgument, plugin.ErrInvalid},
	{ErrorUnsupported, errors.ErrUnsupported},
}

// ResultOf returns the result code that tells a plugin about err.
func ResultOf(err error) Result {
	if err == nil {
		return OK
	}
	if errors.Is(err, ErrReleased) {
		return ErrorState // one-way: DYNOP_ERROR_STATE from a plugin is ErrState
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.r
		}
	}
	return ErrorGeneric
}

// ResultError is a plugin's failure: the result one of its functions
// returned and the message it gave with set_error. It matches the host's
// sentinel for its result with [errors.Is] (DYNOP_ERROR_NOT_FOUND is
// dynop.ErrNotFound, and so on), and unwraps to the host error that the
// plugin was passing on, if any.
type ResultError struct {
	Kind    string // the plugin's kind: "native" or "wasm"
	Plugin  string // the plugin's ID
	Call    string // what failed: an entry point ("register", "deregister"), an operator function ("run (sample 1)"), a pass (`pass "acme.fuse"`)
	Result  Result
	Message string // from set_error; may be empty
	Cause   error  // the host's error with the same result, if the plugin got one during the call
}

func (e *ResultError) Error() string {
	s := fmt.Sprintf("%s plugin %q: %s returned %v", e.Kind, e.Plugin, e.Call, e.Result)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Cause != nil && e.Message == "" {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the host error the plugin passed on, or nil.
func (e *ResultError) Unwrap() error { return e.Cause }

// Is reports whether target is the sentinel error of e.Result.
func (e *ResultError) Is(target error) bool {
	for _, s := range sentinels {
		if s.r == e.Result && s.err == target {
			return true
		}
	}
	return false
}
