package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/table"
	"github.com/tetratelabs/wazero/sys"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/sign"
)

// wazeroEngine is the pure-Go engine: wazero's compiler, one runtime per
// compiled module.
type wazeroEngine struct{}

func init() { registerBackend(wazeroEngine{}) }

func (wazeroEngine) name() string { return "wazero" }

// wazeroModule is a module compiled by wazero, in a runtime of its own
// with the host's imports instantiated.
type wazeroModule struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	cache    wazero.CompilationCache // the compile's, closed with rt; nil without one
	seq      atomic.Uint64           // names instances
	name     string
	byModule sync.Map // api.Module → *instance, for the host functions
}

func (wazeroEngine) compile(ctx context.Context, e *engine, code []byte, sum sign.Digest) (_ compiledModule, err error) {
	// The memory limit is the allocator's (limitedMemory), which sees
	// the grows it refuses. Calls leave compiled code at every loop
	// back-edge to look at their context only if they have a deadline.
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(e.cfg.timeout > 0)
	m := &wazeroModule{name: e.name}
	var mc *moduleCache
	if e.cfg.cacheDir != "" {
		// The cache is keyed by sum, the digest of the very bytes
		// compiled (cache.go): an entry made for other bytes does not
		// verify.
		var cerr error
		if mc, cerr = openModuleCache(e.cfg.log, e.cfg.cacheDir, sum); cerr != nil {
			e.cfg.log.Warn("wasm: compiling without the compilation cache", "plugin", e.name, "err", cerr.Error())
		} else {
			rc = rc.WithCompilationCache(mc.wz)
			m.cache = mc.wz
			defer func() { mc.finish(m.compiled != nil) }()
		}
	}
	m.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	defer func() {
		if err != nil {
			m.close(ctx)
		}
	}()
	if err := m.instantiateHost(ctx); err != nil {
		return nil, err
	}
	m.compiled, err = m.rt.CompileModule(ctx, code)
	if err != nil && mc != nil && mc.placed != "" {
		// wazero could not use an entry that verified (only dynop
		// writes those): compile from scratch; the new entry replaces it.
		e.cfg.log.Warn("wasm: compilation cache: wazero could not use an entry; compiling the module again", "file", mc.entry, "err", err.Error())
		mc.remove()
		os.Remove(mc.placed)
		mc.placed = ""
		m.compiled, err = m.rt.CompileModule(ctx, code)
	}
	if err != nil {
		return nil, fmt.Errorf("wasm: %s: %w: %v", e.name, dynop.ErrFormat, err)
	}
	return m, nil
}

// instantiateHost defines the host's imports, modules "dynop" and WASI,
// in the module's runtime: each calls the function of the instance that
// calls it.
func (m *wazeroModule) instantiateHost(ctx context.Context) error {
	builders := map[string]wazero.HostModuleBuilder{}
	var order []string
	for _, f := range hostImports {
		b, ok := builders[f.module]
		if !ok {
			b = m.rt.NewHostModuleBuilder(f.module)
			builders[f.module] = b
			order = append(order, f.module)
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			v, ok := m.byModule.Load(mod)
			if !ok {
				panic(&abiError{fmt.Sprintf("%v: %s.%s called while the host was not calling the module", ErrABI, f.module, f.name)})
			}
			f.fn(v.(*instance), stack)
		}), wazeroTypes(f.params), wazeroTypes(f.results)).Export(f.name)
	}
	for _, name := range order {
		if _, err := builders[name].Instantiate(ctx); err != nil {
			return fmt.Errorf("wasm: %s: host module %s: %w", m.name, name, err)
		}
	}
	return nil
}

// wazeroTypes converts value types to wazero's.
func wazeroTypes(ts []valType) []api.ValueType {
	out := make([]api.ValueType, len(ts))
	for i, t := range ts {
		out[i] = api.ValueType(t)
	}
	return out
}

// fromWazero converts value types from wazero's.
func fromWazero(ts []api.ValueType) []valType {
	out := make([]valType, len(ts))
	for i, t := range ts {
		out[i] = valType(t)
	}
	return out
}

func (m *wazeroModule) imports() []importDesc {
	var out []importDesc
	for _, f := range m.compiled.ImportedFunctions() {
		mod, n, _ := f.Import()
		out = append(out, importDesc{mod, n, "function"})
	}
	for _, mem := range m.compiled.ImportedMemories() {
		mod, n, _ := mem.Import()
		out = append(out, importDesc{mod, n, "memory"})
	}
	return out
}

func (m *wazeroModule) exportedFunctions() map[string]funcType {
	out := map[string]funcType{}
	for n, f := range m.compiled.ExportedFunctions() {
		out[n] = funcType{fromWazero(f.ParamTypes()), fromWazero(f.ResultTypes())}
	}
	return out
}

func (m *wazeroModule) exportedMemories() map[string]uint32 {
	out := map[string]uint32{}
	for n, mem := range m.compiled.ExportedMemories() {
		out[n] = mem.Min()
	}
	return out
}

func (m *wazeroModule) close(ctx context.Context) error {
	err := m.rt.Close(context.WithoutCancel(ctx))
	if m.cache != nil {
		err = errors.Join(err, m.cache.Close(context.WithoutCancel(ctx)))
	}
	return err
}

// wazeroInstance is an instance of a wazeroModule.
type wazeroInstance struct {
	m    *wazeroModule
	mod  api.Module
	lmem *limitedMemory // its memory's buffer
}

func (m *wazeroModule) instantiate(ctx context.Context, in *instance, timeout time.Duration) (moduleInstance, error) {
	mc := wazero.NewModuleConfig().WithName(fmt.Sprintf("%s#%d", m.name, m.seq.Add(1))).WithStartFunctions()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	wi := &wazeroInstance{m: m, lmem: &limitedMemory{limit: uint64(in.e.cfg.memPages) * pageSize}}
	ctx = experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(_, _ uint64) experimental.LinearMemory { return wi.lmem }))
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, mc)
	if err != nil {
		return nil, wazeroError(ctx, err)
	}
	wi.mod = mod
	m.byModule.Store(mod, in)
	return wi, nil
}

func (wi *wazeroInstance) memory() memory { return wi.mod.ExportedMemory("memory") }

func (wi *wazeroInstance) function(name string) function {
	if f := wi.mod.ExportedFunction(name); f != nil {
		return wazeroFunction{f}
	}
	return nil
}

func (wi *wazeroInstance) tableFunction(idx uint32, ft funcType) (fn function, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: function table index %d: %v (want type %s)", ErrABI, idx, r, signature(ft))
		}
	}()
	return wazeroFunction{table.LookupFunction(wi.mod, 0, idx, wazeroTypes(ft.params), wazeroTypes(ft.results))}, nil
}

func (wi *wazeroInstance) growRefused() bool { return wi.lmem.refused.Load() }
func (wi *wazeroInstance) resetRefused()     { wi.lmem.refused.Store(false) }

func (wi *wazeroInstance) close() {
	wi.m.byModule.Delete(wi.mod)
	wi.mod.Close(context.Background())
}

// wazeroFunction is an exported or table function of a wazero instance.
type wazeroFunction struct{ f api.Function }

func (f wazeroFunction) call(ctx context.Context, timeout time.Duration, stack []uint64) error {
	if ctx.Err() != nil {
		// wazero would close the module as the call began.
		return notStarted(stopError(ctx))
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := f.f.CallWithStack(ctx, stack); err != nil {
		return wazeroError(ctx, err)
	}
	return nil
}

// wazeroError turns a failed call's error into one that says what
// happened: a deadline, a cancellation, an exit, a breach of the ABI, or
// a trap.
func wazeroError(ctx context.Context, err error) error {
	var abiErr *abiError
	if errors.As(err, &abiErr) {
		return abiErr
	}
	var exit *exitError
	if errors.As(err, &exit) {
		return exit
	}
	var sysExit *sys.ExitError
	if errors.As(err, &sysExit) {
		switch sysExit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			if ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded {
				return fmt.Errorf("%w: the call ran past its deadline", context.DeadlineExceeded)
			}
			return context.DeadlineExceeded
		case sys.ExitCodeContextCanceled:
			if ctx.Err() != nil {
				return stopError(ctx)
			}
			return context.Canceled
		}
		return &exitError{sysExit.ExitCode()}
	}
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	return fmt.Errorf("%w: %s", ErrTrap, msg)
}

// limitedMemory is a module instance's linear memory, bounded by the
// host's limit: it records a grow it refuses, so that a failure after it
// is reported as reaching the limit.
type limitedMemory struct {
	buf     []byte
	limit   uint64
	refused atomic.Bool
}

// Reallocate implements experimental.LinearMemory.
func (m *limitedMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused.Store(true)
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size] // never written past len: still zero
		return m.buf
	}
	b := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
	copy(b, m.buf)
	m.buf = b
	return b
}

// Free implements experimental.LinearMemory.
func (m *limitedMemory) Free() { m.buf = nil }
