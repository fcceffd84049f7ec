package guest

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Plugin is what a Go WebAssembly plugin is: its info and the code behind
// the operators that the info declares.
type Plugin struct {
	// Info describes the plugin, as for a native plugin. Its operators
	// run on the CPU: an operator's Devices must be empty (the module
	// declares "cpu") or list "cpu" alone. A WebAssembly module cannot
	// provide interfaces or graph passes, so Interfaces and Passes must
	// be empty. A zero APIVersion is declared as [schema.APIVersion], the
	// API this package implements.
	Info schema.Plugin
	// Capabilities lists what the module asks the host to grant beyond
	// computing: "clock" (the real clocks; otherwise time stands still),
	// "random" (the host's random source; otherwise a fixed seed), "env"
	// (the host's environment variables) and "stdio" (stdout and stderr
	// go to the host's log). A host that does not grant one of them
	// refuses the plugin as unsupported.
	Capabilities []string
	// Operators maps the name of each operator in Info.Operators to its
	// factory. Registering the plugin fails if an operator has none, or
	// if a factory has no operator.
	Operators map[string]Factory
	// Start, if not nil, runs when the host starts the plugin, after its
	// operators are registered; an error fails the start.
	Start func() error
	// Stop, if not nil, runs when the host stops the plugin. Its error
	// is logged by the host.
	Stop func() error
}

// Factory makes an instance of an operator from its arguments, which the
// host has checked against the operator's schema.
type Factory func(args Args) (Operator, error)

// Operator is an instance of an operator, made by a [Factory]. The host
// calls it from one thread at a time. If it implements [io.Closer], Close
// is called when the host destroys the instance (its error is dropped).
type Operator interface {
	// Setup describes the outputs for one sample's inputs: one Desc per
	// output of the schema, in order. The inputs' Data may be nil: the
	// host need not copy input data into the module to set up.
	Setup(inputs []Tensor) ([]Desc, error)
	// Run computes one sample's outputs, allocated as Setup described
	// them, from its inputs.
	Run(outputs, inputs []Tensor) error
}

// Desc describes one output of one sample, as Setup computes it.
type Desc struct {
	DType tensor.DType
	// Shape has at most MaxNDim dimensions, none negative.
	Shape []int64
}

// MaxNDim is the most dimensions an output may have (DYNOP_MAX_NDIM).
const MaxNDim = 16

// Error is an error with the result code the call it fails returns. Wrap
// one (or one of the sentinels below) with %w to choose the code:
//
//	return fmt.Errorf("%w: gamma above 10 on float16", guest.ErrUnsupported)
type Error struct {
	Code abi.Result // a DYNOP_ERROR_* code; OK counts as DYNOP_ERROR
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Code.String()
	}
	return e.Err.Error()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the host's sentinel error for e.Code
// (dynop.ErrNotFound for DYNOP_ERROR_NOT_FOUND, and so on), so that an
// error from a host call matches [ErrNotFound] and its kin.
func (e *Error) Is(target error) bool {
	s := abi.Sentinel(e.Code)
	return s != nil && s == target
}

// Sentinel errors for the codes a plugin usually returns. ErrNotFound,
// ErrState and ErrUnsupported are the host's own (dynop.ErrNotFound, ...),
// so an error the host passed on keeps its code. An error that wraps none
// of them (and no other [*Error] or host sentinel) returns
// DYNOP_ERROR_INVALID_ARGUMENT.
var (
	ErrFailed          = &Error{abi.ErrorGeneric, errors.New("failed")}
	ErrInvalidArgument = &Error{abi.ErrorInvalidArgument, errors.New("invalid argument")}
	ErrNotFound        = errdefs.ErrNotFound
	ErrState           = errdefs.ErrState
	ErrNoMemory        = &Error{abi.ErrorNoMemory, errors.New("out of memory")}
	ErrUnsupported     = errdefs.ErrUnsupported
)

// codedf returns an error with code and the message format makes.
func codedf(code abi.Result, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// resultOf returns the code that err fails a call with.
func resultOf(err error) abi.Result {
	var e *Error
	switch {
	case err == nil:
		return abi.OK
	case errors.As(err, &e):
		if e.Code == abi.OK {
			return abi.ErrorGeneric
		}
		return e.Code
	}
	if r := abi.ResultOf(err); r != abi.ErrorGeneric {
		return r // a host sentinel: dynop.ErrNotFound, ErrState, ...
	}
	return abi.ErrorInvalidArgument
}

// Register makes p the plugin that the module is. Call it once, from an
// init function of the main package; it panics if it is called twice or
// if p's info cannot be laid out (an argument default JSON cannot
// hold). Everything else about p is checked when the host registers the
// plugin, whose error says what is wrong.
func Register(p Plugin) {
	if mod.plugin != nil {
		panic("guest: Register called twice")
	}
	p.Capabilities = slices.Clone(p.Capabilities)
	im, info, caps, err := infoImage(&p)
	if err != nil {
		panic(fmt.Sprintf("guest: plugin %q: %v", p.Info.ID, err))
	}
	mod.plugin, mod.info = &p, placed{image: im, info: info, caps: caps}
}

// Log writes msg to the host's log at level (slog's levels are dynop's),
// tagged with the plugin.
func Log(level slog.Level, msg string) { host.log(int32(level), msg) }

// Acquire holds interface uid, at least version min, of plugin pluginID
// until [Release]: that plugin stays started meanwhile. A module cannot
// call into another plugin, so the reference only keeps the other plugin
// started. Errors carry the host's result and reason as an [*Error].
func Acquire(pluginID string, uid iface.UID, min iface.Version) (ref uint64, err error) {
	ref, rc := host.acquire(pluginID, uid, min)
	if rc != abi.OK {
		return 0, hostError("acquire", rc)
	}
	return ref, nil
}

// Release gives back a reference from [Acquire].
func Release(ref uint64) error {
	if rc := host.release(ref); rc != abi.OK {
		return hostError("release", rc)
	}
	return nil
}

// hostError describes a host call that returned rc, with the host's
// reason.
func hostError(call string, rc abi.Result) error {
	msg := host.lastError()
	if msg == "" {
		msg = rc.String()
	}
	return &Error{Code: rc, Err: fmt.Errorf("%s: %s", call, msg)}
}

// hostAPI is what the host provides: the imports of module "dynop".
// Strings are passed as they are; the wasip1 implementation passes their
// offsets and lengths.
type hostAPI interface {
	log(level int32, msg string)
	setError(msg string)
	lastError() string
	registerOperator(op uint32) abi.Result
	acquire(pluginID string, uid iface.UID, min iface.Version) (uint64, abi.Result)
	release(ref uint64) abi.Result
}

// cpuOnly is the device list of every operator of a WebAssembly plugin.
var cpuOnly = []schema.Device{schema.CPU}
