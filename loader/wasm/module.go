package wasm

import (
	"bytes"
	"context"
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
	"time"

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
	name string
	funcType
}{
	exABIVersion: {"dynop_wasm_abi_version", funcType{nil, i32s(1)}},
	exAlloc:      {"dynop_wasm_alloc", funcType{i32s(2), i32s(1)}},
	exFree:       {"dynop_wasm_free", funcType{i32s(1), nil}},
	exInfo:       {"dynop_wasm_info", funcType{nil, []valType{valI64}}},
	exRegister:   {"dynop_wasm_register", funcType{nil, i32s(1)}},
	exDeregister: {"dynop_wasm_deregister", funcType{nil, i32s(1)}},
	exCreate:     {"dynop_wasm_op_create", funcType{i32s(4), i32s(1)}},
	exSetup:      {"dynop_wasm_op_setup", funcType{i32s(8), i32s(1)}},
	exRun:        {"dynop_wasm_op_run", funcType{i32s(8), i32s(1)}},
	exDestroy:    {"dynop_wasm_op_destroy", funcType{i32s(2), nil}},
}

func i32s(n int) []valType {
	return slices.Repeat([]valType{valI32}, n)
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
	// one. Under Wasmtime that saves 0–30% of a call's time; under wazero
	// it makes calls several times faster, since wazero (v1.12) checks
	// for interruption at every loop back-edge by calling into Go (wazero
	// issue #2466). Use it only for modules you trust to terminate.
	CallTimeout time.Duration
	// Grant lists the capabilities a module may have if it asks for them
	// (see [Capabilities] and dynop_wasm.h). A module that asks for one
	// not granted is unsupported.
	Grant []string
	// Engine names the engine that runs modules: "wasmtime" or "wazero"
	// (see [Engines]); "" means the first of [Engines], the fastest this
	// build has.
	Engine string
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
	if _, err := backendOf(c.Engine); err != nil {
		return err
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
	backend  backend
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
	c.backend, _ = backendOf(wc.Engine)
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

// engine is one plugin's module compiled by a backend: what a started
// plugin runs its instances on.
type engine struct {
	name     string // the plugin ID or path, for messages
	cfg      config
	compiled compiledModule
	caps     map[string]bool // the capabilities granted to the module
	sess     *session        // the started plugin; nil while only reading info
	// CompileTime is how long compiling (or loading it from the cache)
	// took.
	compileTime time.Duration
}

// newEngine compiles code, whose SHA-256 is sum, with the configured
// backend, checking its imports and exports, for a plugin that may use
// caps.
func newEngine(ctx context.Context, name string, code []byte, sum sign.Digest, cfg config, caps []string) (_ *engine, err error) {
	e := &engine{name: name, cfg: cfg, caps: make(map[string]bool)}
	for _, c := range caps {
		e.caps[c] = true
	}
	start := time.Now()
	if e.compiled, err = cfg.backend.compile(ctx, e, code, sum); err != nil {
		return nil, err
	}
	e.compileTime = time.Since(start)
	defer func() {
		if err != nil {
			e.close(ctx)
		}
	}()
	if err := checkImports(name, e.compiled.imports()); err != nil {
		return nil, err
	}
	if err := checkExports(name, e.compiled); err != nil {
		return nil, err
	}
	if min := e.compiled.exportedMemories()["memory"]; min > cfg.memPages {
		return nil, fmt.Errorf("wasm: %s: %w: the module's memory starts at %d MiB, more than the limit of %d MiB", name, ErrMemoryLimit, uint64(min)*pageSize>>20, uint64(cfg.memPages)*pageSize>>20)
	}
	return e, nil
}

// close frees the compiled module and every instance of it.
func (e *engine) close(ctx context.Context) error { return e.compiled.close(ctx) }

// checkImports reports imports the host does not provide, naming each.
func checkImports(name string, imports []importDesc) error {
	var missing []string
	for _, im := range imports {
		if _, ok := hostImportIndex[[2]string{im.module, im.name}]; !ok || im.kind != "function" {
			missing = append(missing, fmt.Sprintf("%s %s.%s", im.kind, im.module, im.name))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("wasm: %s: %w: it imports %s, which this host does not provide (it provides the functions of module %q in dynop_wasm.h and of %s)", name, ErrABI, missing[0], hostModule, wasiModuleName)
	}
	return fmt.Errorf("wasm: %s: %w: it imports %s, which this host does not provide (it provides the functions of module %q in dynop_wasm.h and of %s)", name, ErrABI, strings.Join(missing, ", "), hostModule, wasiModuleName)
}

// checkExports reports missing or mistyped entry points, naming each.
func checkExports(name string, m compiledModule) error {
	fns := m.exportedFunctions()
	var problems []string
	for _, want := range exports {
		f, ok := fns[want.name]
		switch {
		case !ok:
			problems = append(problems, want.name+" is missing")
		case !slices.Equal(f.params, want.params) || !slices.Equal(f.results, want.results):
			problems = append(problems, fmt.Sprintf("%s has type %s, want %s", want.name, signature(f), signature(want.funcType)))
		}
	}
	if _, ok := m.exportedMemories()["memory"]; !ok {
		problems = append(problems, `the memory export "memory" is missing`)
	}
	if problems == nil {
		return nil
	}
	return fmt.Errorf("wasm: %s: %w: not a dynop plugin module: %s (see dynop_wasm.h; C plugins link abi/wasm/dynop_wasm.c, Go plugins import loader/wasm/guest)", name, ErrABI, strings.Join(problems, "; "))
}

// signature writes a function type as Go would: func(i32, i32) (i32).
func signature(ft funcType) string {
	names := func(ts []valType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = valTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("func(%s) (%s)", names(ft.params), names(ft.results))
}

// valTypeName names a value type as the WebAssembly text format does.
func valTypeName(t valType) string {
	switch t {
	case valI32:
		return "i32"
	case valI64:
		return "i64"
	case valF32:
		return "f32"
	case valF64:
		return "f64"
	case valV128:
		return "v128"
	case valFuncref:
		return "funcref"
	case valExternref:
		return "externref"
	}
	return fmt.Sprintf("type%#x", byte(t))
}

// instance is one instance of the plugin's module: its own memory, run by
// one goroutine at a time.
type instance struct {
	e   *engine
	mod moduleInstance
	mem memory
	fns [len(exports)]function
	// The stack of a call: params in, results out.
	stack [8]uint64

	wasi     *wasiEnv   // its WASI state
	abiMinor uint16     // of the module's dynop_wasm.h
	dead     error      // why the instance was discarded, if it was
	reg      *register  // while register runs in it
	message  string     // the set_error of the running call
	lastErr  error      // why the last failed host call failed
	stderr   *logWriter // the module's stdout and stderr, when granted
}

// newInstance instantiates the module and runs its initializer.
func (e *engine) newInstance(ctx context.Context) (*instance, error) {
	in := &instance{e: e}
	var out io.Writer
	if e.caps["stdio"] {
		in.stderr = &logWriter{log: e.cfg.log.With("plugin", e.name)}
		out = in.stderr
	}
	in.wasi = newWASIEnv(nil, e.caps, out)
	mod, err := e.compiled.instantiate(ctx, in, e.cfg.timeout)
	if err != nil {
		return nil, fmt.Errorf("wasm: %s: instantiate: %w", e.name, callError(err))
	}
	in.mod, in.mem = mod, mod.memory()
	in.wasi.setMemory(in.mem)
	for i, x := range exports {
		in.fns[i] = mod.function(x.name)
	}
	if init := mod.function(exInitialize); init != nil {
		if err := in.run(ctx, init, nil); err != nil {
			in.discard(err)
			return nil, fmt.Errorf("wasm: %s: %s: %w", e.name, exInitialize, err)
		}
	}
	if err := in.call(ctx, exABIVersion); err != nil {
		in.discard(err) // if it did not start
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
	n := copy(in.stack[:], params)
	clear(in.stack[n:])
	if err := in.run(ctx, in.fns[x], in.stack[:]); err != nil {
		return fmt.Errorf("%s: %w", exports[x].name, err)
	}
	return nil
}

// run calls fn, a function of in, with its parameters in stack, which
// receives its results, under the host's call deadline: the one way
// the host calls into a module. A call that ran and failed (a trap, an
// exit, a deadline, the memory limit) discards the instance, and its
// error says so; one that never started (ctx already done: see
// [function.call]) leaves it.
func (in *instance) run(ctx context.Context, fn function, stack []uint64) error {
	in.message = ""
	in.mod.resetRefused()
	if in.wasi.realClock {
		// A module granted the clock may sleep (WASI poll_oneoff): the
		// sleep ends with the call's deadline or its context.
		if t := in.e.cfg.timeout; t > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t)
			defer cancel()
		}
		in.wasi.setDone(ctx.Done())
		defer in.wasi.setDone(nil)
	}
	err := fn.call(ctx, in.e.cfg.timeout, stack)
	if err == nil {
		return nil
	}
	if errors.Is(err, errNotStarted) {
		return err
	}
	err = in.atLimit(callError(err))
	in.discard(err)
	return fmt.Errorf("%w (the module instance was discarded)", err)
}

// atLimit wraps err with ErrMemoryLimit if the module asked for more
// memory than the limit during the call: why it failed.
func (in *instance) atLimit(err error) error {
	if !in.mod.growRefused() {
		return err
	}
	return fmt.Errorf("%w (%d MiB; the module asked for more): %w", ErrMemoryLimit, uint64(in.e.cfg.memPages)*pageSize>>20, err)
}

// callError words a failed call's classified error (see
// [function.call]): an exit is a trap.
func callError(err error) error {
	var exit *exitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%w: %w", ErrTrap, exit)
	}
	return err
}

// discard closes the instance for good, after err.
func (in *instance) discard(err error) {
	if in.dead == nil {
		if err == nil {
			err = errors.New("discarded")
		}
		in.dead = err
	}
	in.mod.close()
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
type linear struct{ mem memory }

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

// free gives back memory from alloc. It runs even if ctx is done (under
// the call deadline still): a cancelled caller must not leave the memory
// taken in an instance that lives on.
func (in *instance) free(ctx context.Context, p uint32) {
	if p != 0 && in.dead == nil {
		_ = in.call(context.WithoutCancel(ctx), exFree, uint64(p))
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
