package wasm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/sign"
)

// The loader runs modules on one of two engines behind one model: the
// same imports (module "dynop" of dynop_wasm.h and WASI preview 1, both
// implemented once, in Go, in host.go and wasi.go), the same
// capabilities, memory limit, per-call deadline, traps, instance
// replacement and authenticated compilation cache. What differs is how
// an engine compiles, calls and stops a call:
//
//   - Wasmtime (engine_wasmtime.go, through cgo): Cranelift code, SIMD,
//     and a deadline checked as an epoch counter at every function entry
//     and loop header, 1.0–1.4× the cost of the uninterruptible code.
//   - wazero (engine_wazero.go, pure Go): the engine of CGO_ENABLED=0
//     builds and of the dynop_wazero build tag. Its deadline
//     (WithCloseOnContextDone) leaves compiled code at every loop
//     back-edge, 5–9× the cost of its uninterruptible code, and it does
//     not stop a recursion without loops (docs/WASM.md).
//
// docs/wasm-engines.md measures both, and the alternatives.

// backend is a WebAssembly engine the loader compiles modules with.
type backend interface {
	// name is how the engine is shown: "wasmtime" or "wazero".
	name() string
	// compile compiles code, whose SHA-256 is sum, for e, using the
	// compilation cache in e.cfg.cacheDir if there is one. A module
	// that does not compile is dynop.ErrFormat.
	compile(ctx context.Context, e *engine, code []byte, sum sign.Digest) (compiledModule, error)
}

// compiledModule is a module compiled by a backend, instantiated for each
// module instance.
type compiledModule interface {
	// imports lists what the module imports, in order.
	imports() []importDesc
	// exportedFunctions returns the types of its exported functions, by
	// name.
	exportedFunctions() map[string]funcType
	// exportedMemories returns the initial size, in 64 KiB pages, of its
	// exported memories, by name.
	exportedMemories() map[string]uint32
	// instantiate makes an instance whose imports call in's host
	// functions, whose memory cannot grow beyond e.cfg.memPages and whose
	// start function, if any, runs within timeout (0: no deadline). It
	// runs no other function.
	instantiate(ctx context.Context, in *instance, timeout time.Duration) (moduleInstance, error)
	// close frees the compiled code; no instance is left.
	close(ctx context.Context) error
}

// importDesc is one import of a module.
type importDesc struct {
	module, name string
	kind         string // "function", "memory", "table" or "global"
}

// funcType is a function's WebAssembly type.
type funcType struct{ params, results []valType }

// moduleInstance is one instance of a compiled module: its own memory,
// called by one goroutine at a time.
type moduleInstance interface {
	// memory returns its exported memory "memory".
	memory() memory
	// function returns its exported function name, or nil.
	function(name string) function
	// tableFunction returns the function at index idx of its function
	// table 0, if it has type ft; the error wraps ErrABI, or
	// dynop.ErrUnsupported for a type the engine cannot call.
	tableFunction(idx uint32, ft funcType) (function, error)
	// growRefused reports whether the module asked for memory beyond
	// the limit since the last resetRefused.
	growRefused() bool
	resetRefused()
	// close frees the instance.
	close()
}

// function is a function of a module instance.
type function interface {
	// call calls it with its parameters in stack, which receives its
	// results, stopping it when ctx is done or, if timeout > 0, timeout
	// after the call begins. A failed call's error is classified: it
	// wraps context.DeadlineExceeded, context.Canceled, ErrTrap, or is
	// an *exitError or an *abiError. A call that never started (its
	// context was already done, or the engine cannot make it) wraps
	// errNotStarted, and leaves the instance as it was.
	call(ctx context.Context, timeout time.Duration, stack []uint64) error
}

// errNotStarted marks the error of a call that never started: the
// module ran nothing and its instance is as it was.
var errNotStarted = errors.New("the call did not start")

// notStarted is err as the error of a call that never started.
func notStarted(err error) error { return fmt.Errorf("%w: %w", errNotStarted, err) }

// stopError says why ctx ended a call: its error, and the cause its
// canceller gave where that says more.
func stopError(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// hostImport is a function the host provides to modules: a function of
// module "dynop" or of WASI.
type hostImport struct {
	module, name    string
	params, results []valType
	fn              func(in *instance, stack []uint64)
}

// hostImports lists every function the host provides, dynop's then
// WASI's.
var hostImports = func() []hostImport {
	var all []hostImport
	for _, f := range hostFunctions {
		all = append(all, hostImport{hostModule, f.name, f.params, f.results, f.fn})
	}
	for _, f := range wasiFunctions {
		all = append(all, hostImport{wasiModuleName, f.name, f.params, f.results, func(in *instance, stack []uint64) { f.fn(in.wasi, stack) }})
	}
	return all
}()

// hostImportIndex finds a host import by module and name.
var hostImportIndex = func() map[[2]string]int {
	m := make(map[[2]string]int, len(hostImports))
	for i, f := range hostImports {
		m[[2]string{f.module, f.name}] = i
	}
	return m
}()

// backends are the engines of this build, by name.
var backends = map[string]backend{}

// registerBackend adds an engine; engine files call it from init.
func registerBackend(b backend) { backends[b.name()] = b }

// engineOrder is the order of preference of the engines: fastest first.
var engineOrder = []string{"wasmtime", "wazero"}

// Engines returns the names of the WebAssembly engines this build has,
// fastest first: "wasmtime" and "wazero", or only "wazero" in a build
// without cgo or with the build tag dynop_wazero. The first is the
// default of [Config.Engine].
func Engines() []string {
	var out []string
	for _, n := range engineOrder {
		if _, ok := backends[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// backendOf returns the engine name, or the default for "".
func backendOf(name string) (backend, error) {
	if name == "" {
		name = Engines()[0]
	}
	if b, ok := backends[name]; ok {
		return b, nil
	}
	if slices.Contains(engineOrder, name) {
		return nil, fmt.Errorf("wasm: Config.Engine: %w: engine %q is not in this build (it has %s; wasmtime needs cgo and no dynop_wazero build tag)", dynop.ErrUnsupported, name, strings.Join(Engines(), ", "))
	}
	return nil, fmt.Errorf("wasm: Config.Engine: unknown engine %q (known: %s)", name, strings.Join(engineOrder, ", "))
}
