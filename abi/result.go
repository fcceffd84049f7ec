// Package abi holds the Go side of the values that dynop.h defines for
// every plugin that is not Go — native libraries and WebAssembly modules
// alike: the dynop_result codes and the error a failed plugin call
// becomes. The C header is abi/include/dynop/dynop.h; its wasm32 form is
// abi/include/dynop/dynop_wasm.h.
package abi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
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

// sentinels maps results to the host's sentinel errors, both ways. Each
// is defined once, in internal/errdefs, and re-exported by the root
// package (dynop.ErrNotFound) and the Go guest.
var sentinels = []struct {
	r   Result
	err error
}{
	{ErrorNotFound, errdefs.ErrNotFound},
	{ErrorVersion, iface.ErrVersion},
	{ErrorState, errdefs.ErrState},
	{ErrorCycle, errdefs.ErrCycle},
	{ErrorDuplicate, errdefs.ErrDuplicate},
	{ErrorType, iface.ErrType},
	{ErrorClosed, errdefs.ErrClosed},
	{ErrorInvalidArgument, schema.ErrPlugin},
	{ErrorUnsupported, errdefs.ErrUnsupported},
}

// Sentinel returns the host's sentinel error that result r stands for,
// or nil for DYNOP_OK, DYNOP_ERROR, DYNOP_ERROR_NO_MEMORY and codes
// dynop.h does not define.
func Sentinel(r Result) error {
	for _, s := range sentinels {
		if s.r == r {
			return s.err
		}
	}
	return nil
}

// ResultOf returns the result code that tells a plugin about err.
func ResultOf(err error) Result {
	if err == nil {
		return OK
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.r
		}
	}
	// One-way: these come back from a plugin as ErrState and
	// ErrUnsupported.
	switch {
	case errors.Is(err, errdefs.ErrReleased):
		return ErrorState
	case errors.Is(err, errors.ErrUnsupported):
		return ErrorUnsupported
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
	return fmt.Sprintf("%s plugin %q: %s %s", e.Kind, e.Plugin, e.Call, e.outcome())
}

// outcome says what the call returned: "returned DYNOP_ERROR_…: message".
func (e *ResultError) outcome() string {
	s := fmt.Sprintf("returned %v", e.Result)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Cause != nil && e.Message == "" {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Without implements op.PluginCallError: for a call of plugin's
// operator function step ("run", or "run (sample 2)" on a sample), it
// returns "the native plugin returned DYNOP_ERROR_…: message" and the
// sample (-1: none), for the operator's error to say after naming the
// plugin, the operator and the step.
func (e *ResultError) Without(plugin, step string) (string, int, bool) {
	if plugin == "" || e.Plugin != plugin || step == "" {
		return "", 0, false
	}
	sample := -1
	if e.Call != step {
		var rest string
		var ok bool
		if rest, ok = strings.CutPrefix(e.Call, step+" (sample "); !ok {
			return "", 0, false
		}
		n, err := strconv.Atoi(strings.TrimSuffix(rest, ")"))
		if err != nil || !strings.HasSuffix(rest, ")") || n < 0 {
			return "", 0, false
		}
		sample = n
	}
	return fmt.Sprintf("the %s plugin %s", e.Kind, e.outcome()), sample, true
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
