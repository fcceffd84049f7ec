package wasm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/sign"
)

// The module's exports that the host calls, as indexes into exports.
const (
	exABIVersion = iota
	exAlloc
	exFree
	exInfo
	exRegister
	exDeregister
	exCreate
	exSetup
	exRun
	exDestroy
)

// exInitialize is the WASI reactor's initializer, called first if the
// module has one.
const exInitialize = "_initialize"

// exports lists the exported functions the host calls, all required, with
// their wasm signatures.
var exports = [...]struct {
	name            string
	params, results []api.ValueType
}{
	exABIVersion: {"dynop_wasm_abi_version", nil, i32s(1)},
	exAlloc:      {"dynop_wasm_alloc", i32s(2), i32s(1)},
	exFree:       {"dynop_wasm_free", i32s(1), nil},
	exInfo:       {"dynop_wasm_info", nil, []api.ValueType{api.ValueTypeI64}},
	exRegister:   {"dynop_wasm_register", nil, i32s(1)},
	exDeregister: {"dynop_wasm_deregister", nil, i32s(1)},
	exCreate:     {"dynop_wasm_op_create", i32s(4), i32s(1)},
	exSetup:      {"dynop_wasm_op_setup", i32s(8), i32s(1)},
	exRun:        {"dynop_wasm_op_run", i32s(8), i32s(1)},
	exDestroy:    {"dynop_wasm_op_destroy", i32s(2), nil},
}

func i32s(n int) []api.ValueType {
	return slices.Repeat([]api.ValueType{api.ValueTypeI32}, n)
}

// abiMajor is the major version of dynop_wasm.h this host implements.
const abiMajor = 2

// abiScratchMinor is the minor version of dynop_wasm.h from which a
// module's setup and run exports pass the scratch tensor of an operator
// with DYNOP_OPERATOR_SCRATCH.
const abiScratchMinor = 1

const (
	pageSize           = 64 << 10
	defaultMemoryLimit = 512 << 20
	defaultCallTimeout = 30 * time.Second
	wasiModule         = wasi_snapshot_preview1.ModuleName
	hostModule         = "dynop"
	loaderName         = "wasm"
)

// Config is how a host runs WebAssembly plugins: put one in
// [dynop.Options.Loaders]. The zero Config is the default.
type Config struct {
	// MemoryLimit bounds the linear memory of each module instance, in
	// bytes, rounded down to 64 KiB pages; 0 means 512 MiB.
	MemoryLimit int64
	// CallTimeout bounds each call into a module (a deadline added to the
	// caller's context); 0 means 30 s. A negative CallTimeout makes calls
	// uninterruptible — neither a deadline nor the caller's context stops
	// one — and several times faster: wazero (v1.12) checks for
	// interruption at every loop back-edge by calling into Go (wazero
	// issue #2466). Use it only for modules you trust to terminate.
	CallTimeout time.Duration
	// Grant lists the capabilities a module may have if it asks for them
	// (see [Capabilities] and dynop_wasm.h). A module that asks for one
	// not granted is unsupported.
	Grant []string
}

// LoaderName implements [dynop.LoaderConfig]: "wasm".
func (Config) LoaderName() string { return loaderName }

// Validate implements [dynop.LoaderConfig]: it reports a memory limit
// under one 64 KiB page and a capability no host grants. [dynop.Open] and
// [Load] call it.
func (c Config) Validate() error {
	if c.MemoryLimit < 0 || c.MemoryLimit > 0 && c.MemoryLimit < pageSize {
		return fmt.Errorf("wasm: Config.MemoryLimit %d is neither 0 (the default) nor at least one 64 KiB page", c.MemoryLimit)
	}
	for _, g := range c.Grant {
		if !slices.Contains(capabilities, g) {
			return fmt.Errorf("wasm: Config.Grant: unknown capability %q (known: %s)", g, strings.Join(capabilities, ", "))
		}
	}
	return nil
}

// capabilities are what a module may ask for; see [Config.Grant].
var capabilities = []string{"clock", "random", "env", "stdio"}

// Capabilities returns the names [Config.Grant] accepts: "clock",
// "random", "env" and "stdio".
func Capabilities() []string { return slices.Clone(capabilities) }

// config is how a host runs WebAssembly modules: its Config with the
// defaults applied, and the host options the loader uses.
type config struct {
	memPages uint32
	timeout  time.Duration // 0: calls cannot be interrupted
	grant    map[string]bool
	cacheDir string // the compilation cache; "" for none
	log      *slog.Logger
}

// configOf returns the configuration of a host opened with opts (nil:
// the defaults). A Config in opts.Loaders may be a value or a pointer.
func configOf(opts *dynop.Options) (config, error) {
	var wc Config
	c := config{log: slog.Default(), grant: make(map[string]bool)}
	if opts != nil {
		switch v := opts.LoaderConfig(loaderName).(type) {
		case Config:
			wc = v
		case *Config:
			wc = *v
		case nil:
		default:
			return c, fmt.Errorf("wasm: dynop.Options.Loaders holds a %T for loader %q, want a wasm.Config", v, loaderName)
		}
		if opts.Logger != nil {
			c.log = opts.Logger
		}
	}
	if err := wc.Validate(); err != nil {
		return c, err
	}
	if wc.MemoryLimit == 0 {
		wc.MemoryLimit = defaultMemoryLimit
	}
	c.memPages = uint32(min(wc.MemoryLimit/pageSize, 65536))
	switch c.timeout = wc.CallTimeout; {
	case c.timeout == 0:
		c.timeout = defaultCallTimeout
	case c.timeout < 0:
		c.timeout = 0 // uninterruptible
	}
	for _, g := range wc.Grant {
		c.grant[g] = true
	}
	if opts == nil || !opts.NoCache {
		dir := ""
		if opts != nil {
			dir = opts.CacheDir
		}
		if dir == "" {
			if d, err := os.UserCacheDir(); err == nil {
				dir = filepath.Join(d, "dynop")
			}
		}
		if dir != "" {
			c.cacheDir = filepath.Join(dir, "wasm")
		}
	}
	return c, nil
}

// engine is a wazero runtime with the host modules instantiated and one
// compiled plugin module: what a started plugin runs its instances on.
type engine struct {
	name     string // the plugin ID or path, for messages
	cfg      config
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	caps     map[string]bool // the capabilities granted to the module
	sess     *session        // the started plugin; nil while only reading info
	seq      atomic.Uint64   // names instances
	byModule sync.Map        // api.Module → *instance, for the host functions
	// CompileTime is how long compiling (or loading it from the cache)
	// took.
	compileTime time.Duration
	cache       wazero.CompilationCache // the compile's, closed with rt; nil without one
}

// newEngine compiles code, whose SHA-256 is sum, checking its imports
// and exports, for a plugin that may use caps.
func newEngine(ctx context.Context, name string, code []byte, sum sign.Digest, cfg config, caps []string) (_ *engine, err error) {
	// The memory limit is the allocator's (limitedMemory), which sees
	// the grows it refuses.
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(cfg.timeout > 0)
	e := &engine{name: name, cfg: cfg, caps: make(map[string]bool)}
	for _, c := range caps {
		e.caps[c] = true
	}
	var mc *moduleCache
	var prepared time.Duration // preparing the cache
	if cfg.cacheDir != "" {
		// The cache is keyed by sum, the digest of the very bytes
		// compiled (cache.go): an entry made for other bytes does not
		// verify.
		start := time.Now()
		var cerr error
		if mc, cerr = openModuleCache(cfg.log, cfg.cacheDir, sum); cerr != nil {
			cfg.log.Warn("wasm: compiling without the compilation cache", "plugin", name, "err", cerr.Error())
		} else {
			rc = rc.WithCompilationCache(mc.wz)
			e.cache = mc.wz
			defer func() { mc.finish(e.compiled != nil) }()
		}
		prepared = time.Since(start)
	}
	e.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	defer func() {
		if err != nil {
			e.close(ctx)
		}
	}()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, e.rt); err != nil {
		return nil, fmt.Errorf("wasm: %s: WASI: %w", name, err)
	}
	if err := e.instantiateHost(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	e.compiled, err = e.rt.CompileModule(ctx, code)
	if err != nil && mc != nil && mc.placed != "" {
		// wazero could not use an entry that verified (only dynop
		// writes those): compile from scratch; the new entry replaces it.
		cfg.log.Warn("wasm: compilation cache: wazero could not use an entry; compiling the module again", "file", mc.entry, "err", err.Error())
		mc.remove()
		os.Remove(mc.placed)
		mc.placed = ""
		e.compiled, err = e.rt.CompileModule(ctx, code)
	}
	if err != nil {
		return nil, fmt.Errorf("wasm: %s: %w: %v", name, dynop.ErrFormat, err)
	}
	e.compileTime = prepared + time.Since(start)
	if err := checkImports(name, e.compiled, e.rt.Module(wasiModule)); err != nil {
		return nil, err
	}
	if err := checkExports(name, e.compiled); err != nil {
		return nil, err
	}
	if mem := e.compiled.ExportedMemories()["memory"]; mem.Min() > cfg.memPages {
		return nil, fmt.Errorf("wasm: %s: %w: the module's memory starts at %d MiB, more than the limit of %d MiB", name, ErrMemoryLimit, uint64(mem.Min())*pageSize>>20, uint64(cfg.memPages)*pageSize>>20)
	}
	return e, nil
}

// close closes the runtime and every instance on it.
func (e *engine) close(ctx context.Context) error {
	err := e.rt.Close(context.WithoutCancel(ctx))
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(context.WithoutCancel(ctx)))
	}
	return err
}

// checkImports reports imports the host does not provide, naming each.
func checkImports(name string, m wazero.CompiledModule, wasi api.Module) error {
	provided := map[string]bool{}
	for _, f := range hostFunctions {
		provided[hostModule+"."+f.name] = true
	}
	for n := range wasi.ExportedFunctionDefinitions() {
		provided[wasiModule+"."+n] = true
	}
	var missing []string
	for _, f := range m.ImportedFunctions() {
		mod, n, _ := f.Import()
		if !provided[mod+"."+n] {
			missing = append(missing, fmt.Sprintf("function %s.%s", mod, n))
		}
	}
	for _, mem := range m.ImportedMemories() {
		mod, n, _ := mem.Import()
		missing = append(missing, fmt.Sprintf("memory %s.%s", mod, n))
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("wasm: %s: %w: it imports %s, which this host does not provide (it provides the functions of module %q in dynop_wasm.h and of %s)", name, ErrABI, missing[0], hostModule, wasiModule)
	}
	return fmt.Errorf("wasm: %s: %w: it imports %s, which this host does not provide (it provides the functions of module %q in dynop_wasm.h and of %s)", name, ErrABI, strings.Join(missing, ", "), hostModule, wasiModule)
}

// checkExports reports missing or mistyped entry points, naming each.
func checkExports(name string, m wazero.CompiledModule) error {
	fns := m.ExportedFunctions()
	var problems []string
	for _, want := range exports {
		f, ok := fns[want.name]
		switch {
		case !ok:
			problems = append(problems, want.name+" is missing")
		case !slices.Equal(f.ParamTypes(), want.params) || !slices.Equal(f.ResultTypes(), want.results):
			problems = append(problems, fmt.Sprintf("%s has type %s, want %s", want.name, signature(f.ParamTypes(), f.ResultTypes()), signature(want.params, want.results)))
		}
	}
	if _, ok := m.ExportedMemories()["memory"]; !ok {
		problems = append(problems, `the memory export "memory" is missing`)
	}
	if problems == nil {
		return nil
	}
	return fmt.Errorf("wasm: %s: %w: not a dynop plugin module: %s (see dynop_wasm.h; C plugins link abi/wasm/dynop_wasm.c, Go plugins import loader/wasm/guest)", name, ErrABI, strings.Join(problems, "; "))
}

func signature(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("func(%s) (%s)", names(params), names(results))
}

// instance is one instance of the plugin's module: its own memory, run by
// one goroutine at a time.
type instance struct {
	e   *engine
	mod api.Module
	mem api.Memory
	fns [len(exports)]api.Function
	// The stack of a call: params in, results out.
	stack [8]uint64

	lmem     *limitedMemory // its memory's buffer
	abiMinor uint16         // of the module's dynop_wasm.h
	dead     error          // why the instance was discarded, if it was
	reg      *register      // while register runs in it
	message  string         // the set_error of the running call
	lastErr  error          // why the last failed host call failed
	stderr   *logWriter     // the module's stdout and stderr, when granted
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

// newInstance instantiates the module and runs its initializer.
func (e *engine) newInstance(ctx context.Context) (*instance, error) {
	in := &instance{e: e}
	mc := wazero.NewModuleConfig().WithName(fmt.Sprintf("%s#%d", e.name, e.seq.Add(1))).WithStartFunctions()
	if e.caps["clock"] {
		mc = mc.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	if e.caps["random"] {
		mc = mc.WithRandSource(rand.Reader)
	}
	if e.caps["env"] {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				mc = mc.WithEnv(k, v)
			}
		}
	}
	if e.caps["stdio"] {
		in.stderr = &logWriter{log: e.cfg.log.With("plugin", e.name)}
		mc = mc.WithStdout(in.stderr).WithStderr(in.stderr)
	}
	if t := e.cfg.timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	in.lmem = &limitedMemory{limit: uint64(e.cfg.memPages) * pageSize}
	ctx = experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(_, _ uint64) experimental.LinearMemory { return in.lmem }))
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, mc)
	if err != nil {
		return nil, fmt.Errorf("wasm: %s: instantiate: %w", e.name, classify(ctx, err))
	}
	in.mod, in.mem = mod, mod.ExportedMemory("memory")
	for i, x := range exports {
		in.fns[i] = mod.ExportedFunction(x.name)
	}
	e.byModule.Store(mod, in)
	if init := mod.ExportedFunction(exInitialize); init != nil {
		if _, err := init.Call(ctx); err != nil {
			in.discard(err)
			return nil, fmt.Errorf("wasm: %s: %s: %w", e.name, exInitialize, classify(ctx, err))
		}
	}
	if err := in.call(ctx, exABIVersion); err != nil {
		return nil, fmt.Errorf("wasm: %s: %w", e.name, err)
	}
	if v := uint32(in.stack[0]); v>>16 != abiMajor {
		in.discard(nil)
		return nil, fmt.Errorf("wasm: %s: %w: %s returned version %d.%d; this host implements %d.x: rebuild the module with this dynop's abi/wasm/dynop_wasm.c (C) or loader/wasm/guest (Go)", e.name, ErrABI, exports[exABIVersion].name, v>>16, v&0xffff, abiMajor)
	} else {
		in.abiMinor = uint16(v)
	}
	return in, nil
}

// call calls export x with params under the host's call deadline; its
// results are in in.stack. A trap, an exit or a deadline discards the
// instance; the error says which.
func (in *instance) call(ctx context.Context, x int, params ...uint64) error {
	if in.dead != nil {
		return fmt.Errorf("%w: the module instance was discarded: %w", dynop.ErrState, in.dead)
	}
	if t := in.e.cfg.timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	in.message = ""
	in.lmem.refused.Store(false)
	n := copy(in.stack[:], params)
	clear(in.stack[n:])
	if err := in.fns[x].CallWithStack(ctx, in.stack[:]); err != nil {
		err = classify(ctx, err)
		err = in.atLimit(err)
		in.discard(err)
		return fmt.Errorf("%s: %w (the module instance was discarded)", exports[x].name, err)
	}
	return nil
}

// atLimit wraps err with ErrMemoryLimit if the module asked for more
// memory than the limit during the call: why it failed.
func (in *instance) atLimit(err error) error {
	if !in.lmem.refused.Load() {
		return err
	}
	return fmt.Errorf("%w (%d MiB; the module asked for more): %w", ErrMemoryLimit, in.lmem.limit>>20, err)
}

// classify turns a failed call's error into one that says what happened:
// a deadline, a cancellation, an exit, or a trap.
func classify(ctx context.Context, err error) error {
	var abiErr *abiError
	if errors.As(err, &abiErr) {
		return abiErr
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			if ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded {
				return fmt.Errorf("%w: the call ran past its deadline", context.DeadlineExceeded)
			}
			return context.DeadlineExceeded
		case sys.ExitCodeContextCanceled:
			return context.Canceled
		}
		return fmt.Errorf("%w: the module exited with code %d", ErrTrap, exit.ExitCode())
	}
	msg, _, _ := strings.Cut(err.Error(), "\nwasm stack trace:")
	return fmt.Errorf("%w: %s", ErrTrap, msg)
}

// discard closes the instance for good, after err.
func (in *instance) discard(err error) {
	if in.dead == nil {
		if err == nil {
			err = errors.New("discarded")
		}
		in.dead = err
	}
	in.e.byModule.Delete(in.mod)
	in.mod.Close(context.Background())
}

// abiError is a module's breach of the ABI found by a host function: it
// fails the call in which the module made it.
type abiError struct{ msg string }

func (e *abiError) Error() string { return e.msg }
func (e *abiError) Unwrap() error { return ErrABI }

// read returns n bytes of the module's memory at off, or panics with an
// abiError (which fails the running call) if they are not all in it.
func (in *instance) read(what string, off, n uint32) []byte {
	b, ok := in.mem.Read(off, n)
	if !ok {
		panic(&abiError{fmt.Sprintf("%v: %s at offset %#x, %d bytes, lies outside the module's memory (%d bytes)", ErrABI, what, off, n, in.mem.Size())})
	}
	return b
}

// linear is an instance's memory as package abihost reads it: wasm32
// pointers, every read bounds-checked.
type linear struct{ mem api.Memory }

// PointerSize implements abihost.Memory.
func (linear) PointerSize() uint32 { return 4 }

// Read implements abihost.Memory.
func (m linear) Read(addr uint64, n uint32) ([]byte, bool) {
	if addr > math.MaxUint32 {
		return nil, false
	}
	return m.mem.Read(uint32(addr), n)
}

// CString implements abihost.Memory.
func (m linear) CString(addr uint64, max int) (string, bool) {
	size := uint64(m.mem.Size())
	if addr >= size {
		return "", false
	}
	b, _ := m.mem.Read(uint32(addr), uint32(min(uint64(max), size-addr)))
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i]), true
	}
	return string(b), false
}

// alloc returns n bytes of guest memory from the module's allocator.
func (in *instance) alloc(ctx context.Context, n, align uint32) (uint32, error) {
	if err := in.call(ctx, exAlloc, uint64(n), uint64(align)); err != nil {
		return 0, err
	}
	p := uint32(in.stack[0])
	if p == 0 {
		return 0, fmt.Errorf("%w: %s could not allocate %d bytes (memory %.1f of %d MiB)", ErrMemoryLimit, exports[exAlloc].name, n, float64(in.mem.Size())/(1<<20), uint64(in.e.cfg.memPages)*pageSize>>20)
	}
	if _, ok := in.mem.Read(p, n); !ok || p%max(align, 1) != 0 {
		err := fmt.Errorf("%w: %s(%d, %d) returned offset %#x, outside the module's memory (%d bytes) or misaligned", ErrABI, exports[exAlloc].name, n, align, p, in.mem.Size())
		in.discard(err)
		return 0, err
	}
	return p, nil
}

// free gives back memory from alloc.
func (in *instance) free(ctx context.Context, p uint32) {
	if p != 0 && in.dead == nil {
		_ = in.call(ctx, exFree, uint64(p))
	}
}

// result is the dynop_result of the last call.
func (in *instance) result() int32 { return int32(uint32(in.stack[0])) }

// logWriter writes a module's stdout and stderr to the log, a line at a
// time.
type logWriter struct {
	log  *slog.Logger
	mu   sync.Mutex
	line []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line = append(w.line, p...)
	for {
		i := slices.Index(w.line, '\n')
		if i < 0 {
			break
		}
		w.log.Info("plugin output", "line", string(w.line[:i]))
		w.line = w.line[i+1:]
	}
	return len(p), nil
}

var _ io.Writer = (*logWriter)(nil)

// le is the byte order of wasm memory.
var le = binary.LittleEndian
