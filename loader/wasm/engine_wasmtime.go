//go:build cgo && !dynop_wazero

package wasm

/*
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// Wasmtime's C API as libwasmtime.a (linked by wasmtime-go v37) defines
// it: the declarations this file needs, with the layouts of the types it
// reads (wasmtime_func_t is a store id and a pointer, wasmtime_val_raw_t
// a 16-byte union, wasm_byte_vec_t a size and a pointer).
typedef struct dyn_wt_func { uint64_t store_id; void *private_; } dyn_wt_func;
typedef union dyn_wt_val { int32_t i32; int64_t i64; float f32; double f64; uint8_t v128[16]; void *funcref; } dyn_wt_val;
typedef struct dyn_byte_vec { size_t size; char *data; } dyn_byte_vec;
typedef struct dyn_linear_memory {
    void *env;
    uint8_t *(*get_memory)(void *env, size_t *byte_size, size_t *byte_capacity);
    void *(*grow_memory)(void *env, size_t new_size);
    void (*finalizer)(void *);
} dyn_linear_memory;
typedef struct dyn_memory_creator {
    void *env;
    void *(*new_memory)(void *env, const void *ty, size_t minimum, size_t maximum, size_t reserved_size_in_bytes,
                        size_t guard_size_in_bytes, dyn_linear_memory *memory_ret);
    void (*finalizer)(void *);
} dyn_memory_creator;

extern void *wasmtime_func_call_unchecked(void *context, const dyn_wt_func *func, dyn_wt_val *args_and_results,
                                          size_t args_and_results_len, void **trap);
extern void wasmtime_context_set_epoch_deadline(void *context, uint64_t ticks_beyond_current);
extern void wasmtime_store_epoch_deadline_callback(void *store,
                                                   void *(*func)(void *context, void *data, uint64_t *delta, uint8_t *kind),
                                                   void *data, void (*finalizer)(void *));
extern bool wasmtime_trap_code(const void *trap, uint8_t *code);
extern void wasm_trap_message(const void *trap, dyn_byte_vec *out);
extern void wasm_trap_delete(void *trap);
extern void wasmtime_error_message(const void *error, dyn_byte_vec *out);
extern void wasmtime_error_delete(void *error);
extern void *wasmtime_error_new(const char *msg);
extern void wasm_byte_vec_delete(dyn_byte_vec *);
extern void wasmtime_config_host_memory_creator_set(void *config, dyn_memory_creator *creator);

// dyn_mem is one instance's linear memory: reserved once (it never
// moves), made accessible as it grows, never beyond limit. refused is set
// when the module asks for more than limit.
typedef struct dyn_mem {
    uint8_t *base;
    size_t size, reserve, guard, limit;
    int refused, used;
} dyn_mem;

// dyn_next_mem is the memory the thread's next instantiation creates:
// set around wasmtime_instance_new by the goroutine, locked to its
// thread, that instantiates.
static __thread dyn_mem *dyn_next_mem;

static void dyn_set_next_mem(dyn_mem *m) { dyn_next_mem = m; }

static uint8_t *dyn_mem_get(void *env, size_t *size, size_t *capacity) {
    dyn_mem *m = env;
    *size = m->size;
    *capacity = m->reserve;
    return m->base;
}

static void *dyn_mem_grow(void *env, size_t n) {
    dyn_mem *m = env;
    if (n > m->limit || n > m->reserve) {
        m->refused = 1;
        return wasmtime_error_new("dynop: the memory limit");
    }
    if (n > m->size) {
        if (mprotect(m->base, n, PROT_READ | PROT_WRITE) != 0) return wasmtime_error_new("dynop: mprotect failed");
        m->size = n;
    }
    return NULL;
}

// dyn_mem_free is Wasmtime's finalizer of the memory: it unmaps it. The
// struct stays: Go owns it and frees it once the store is gone.
static void dyn_mem_free(void *env) {
    dyn_mem *m = env;
    if (m->base != NULL) munmap(m->base, m->reserve + m->guard);
    m->base = NULL;
    m->size = 0;
}

static void *dyn_new_memory(void *env, const void *ty, size_t minimum, size_t maximum, size_t reserved, size_t guard,
                            dyn_linear_memory *ret) {
    dyn_mem *m = dyn_next_mem;
    size_t reserve;
    void *base;
    (void)env;
    (void)ty;
    if (m == NULL || m->used) return wasmtime_error_new("dynop: a memory made outside an instantiation, or a second one");
    if (maximum < m->limit) m->limit = maximum;
    if (minimum > m->limit) {
        m->refused = 1;
        return wasmtime_error_new("dynop: the module's memory starts beyond the memory limit");
    }
    reserve = reserved != 0 ? reserved : (m->limit + 0xffff) & ~(size_t)0xffff;
    base = mmap(NULL, reserve + guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return wasmtime_error_new("dynop: could not reserve the module's memory");
    if (minimum > 0 && mprotect(base, minimum, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, reserve + guard);
        return wasmtime_error_new("dynop: could not map the module's memory");
    }
    m->base = base;
    m->size = minimum;
    m->reserve = reserve;
    m->guard = guard;
    m->used = 1;
    ret->env = m;
    ret->get_memory = dyn_mem_get;
    ret->grow_memory = dyn_mem_grow;
    ret->finalizer = dyn_mem_free;
    return NULL;
}

static void dyn_set_memory_creator(void *config) {
    dyn_memory_creator c = {NULL, dyn_new_memory, NULL};
    wasmtime_config_host_memory_creator_set(config, &c);
}

// dynopWasmtimeTick is the Go side of the epoch callback: 0 to go on.
extern int dynopWasmtimeTick(uintptr_t data);

static void *dyn_tick(void *context, void *data, uint64_t *delta, uint8_t *kind) {
    (void)context;
    if (dynopWasmtimeTick((uintptr_t)data) != 0) return wasmtime_error_new("dynop: interrupted");
    *delta = 1;
    *kind = 0;
    return NULL;
}

static void dyn_set_tick(void *store, uintptr_t data) { wasmtime_store_epoch_deadline_callback(store, dyn_tick, (void *)data, NULL); }

// dyn_message copies a byte vector's text into buf (n bytes) and frees it.
static void dyn_message(dyn_byte_vec *v, char *buf, size_t n) {
    size_t k = v->size < n - 1 ? v->size : n - 1;
    if (v->data != NULL) memcpy(buf, v->data, k);
    buf[k] = 0;
    wasm_byte_vec_delete(v);
}

// dyn_call_buf is what a call passes, in C memory (so that cgo checks no
// Go pointer per call): the function, its values, and the message of a
// trap.
typedef struct dyn_call_buf {
    dyn_wt_func fn;
    dyn_wt_val vals[8];
    char msg[1024];
} dyn_call_buf;

// dyn_call calls b->fn with the raw values b->vals (n of them), after
// setting the store's epoch deadline one tick ahead if epochs is set: 0
// on success, the trap code + 1 for a trap with a code, 255 for a trap
// without one, -1 for an error (the epoch callback's); b->msg receives
// the trap's or error's message.
// The pointers come as integers: cgo checks every pointer argument, and
// both are C memory.
static int dyn_call(uintptr_t context, uintptr_t buf, size_t n, int epochs) {
    void *ctx = (void *)context, *trap = NULL, *err;
    dyn_call_buf *b = (dyn_call_buf *)buf;
    dyn_byte_vec v = {0, NULL};
    uint8_t code;
    int rc;
    if (epochs) wasmtime_context_set_epoch_deadline(ctx, 1);
    err = wasmtime_func_call_unchecked(ctx, &b->fn, b->vals, n, &trap);
    if (err != NULL) {
        wasmtime_error_message(err, &v);
        dyn_message(&v, b->msg, sizeof b->msg);
        wasmtime_error_delete(err);
        return -1;
    }
    if (trap == NULL) return 0;
    rc = wasmtime_trap_code(trap, &code) ? (int)code + 1 : 255;
    wasm_trap_message(trap, &v);
    dyn_message(&v, b->msg, sizeof b->msg);
    wasm_trap_delete(trap);
    return rc;
}
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/cgo"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v37"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/sign"
)

// wasmtimeVersion is the Wasmtime the module's libwasmtime.a is: part of
// a cache entry's tag, since compiled code is only good for one.
const wasmtimeVersion = "37.0.0"

// tickPeriod is how often the epoch advances while calls run: a call
// stops within one period after its deadline or its context's end.
const tickPeriod = time.Millisecond

// wasmtimeEngine is the engine of cgo builds: Wasmtime's Cranelift code.
type wasmtimeEngine struct{}

func init() { registerBackend(wasmtimeEngine{}) }

func (wasmtimeEngine) name() string { return "wasmtime" }

// wtEngine is one Wasmtime engine of the process: with epoch
// interruption (calls with a deadline) or without (uninterruptible
// calls). Compiled code is only valid in an engine configured alike.
type wtEngine struct {
	engine   *wasmtime.Engine
	epochs   bool
	tag      string       // names the configuration in cache entries
	active   atomic.Int64 // calls running
	sleeping atomic.Bool  // the ticker waits for wake
	wake     chan struct{}
}

var (
	wtEnginesMu sync.Mutex
	wtEngines   [2]*wtEngine // without, with epochs
)

// wasmtimeEngineOf returns the process's engine with or without epoch
// interruption, made on first use.
func wasmtimeEngineOf(epochs bool) *wtEngine {
	wtEnginesMu.Lock()
	defer wtEnginesMu.Unlock()
	i := 0
	if epochs {
		i = 1
	}
	if e := wtEngines[i]; e != nil {
		return e
	}
	cfg := wasmtime.NewConfig()
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	cfg.SetWasmSIMD(true)
	cfg.SetWasmMultiMemory(false) // the memory creator makes one memory per instance
	cfg.SetEpochInterruption(epochs)
	// Copy-on-write memory images need memories Wasmtime maps itself; the
	// memory creator (dyn_new_memory) is what enforces the limit.
	cfg.SetMemoryInitCOWSet(false)
	// The config's wasm_config_t is its first field.
	C.dyn_set_memory_creator(unsafe.Pointer(*(**C.char)(unsafe.Pointer(cfg))))
	e := &wtEngine{engine: wasmtime.NewEngineWithConfig(cfg), epochs: epochs, wake: make(chan struct{}, 1)}
	e.tag = fmt.Sprintf("wasmtime-%s-%s-%s-simd", wasmtimeVersion, runtime.GOARCH, runtime.GOOS)
	if epochs {
		e.tag += "-epochs"
		go e.tick()
	}
	wtEngines[i] = e
	return e
}

// idleTicks is how many ticks without a call the ticker makes before it
// sleeps: calls that follow each other closely do not wake it each time.
const idleTicks = 100

// tick advances the engine's epoch every tickPeriod while calls run, and
// sleeps once none has run for idleTicks periods.
func (e *wtEngine) tick() {
	t := time.NewTicker(tickPeriod)
	defer t.Stop()
	idle := 0
	for {
		if e.active.Load() != 0 {
			idle = 0
		} else if idle++; idle > idleTicks {
			e.sleeping.Store(true)
			if e.active.Load() == 0 { // else a call began: enter may not have seen sleeping
				t.Stop()
				<-e.wake
				t.Reset(tickPeriod)
			}
			e.sleeping.Store(false)
			idle = 0
			continue
		}
		<-t.C
		e.engine.IncrementEpoch()
	}
}

// enter counts a call in, waking the ticker if it sleeps; leave counts it
// out.
func (e *wtEngine) enter() {
	if e.active.Add(1) == 1 && e.sleeping.Load() {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *wtEngine) leave() { e.active.Add(-1) }

// wasmtimeModule is a module compiled by Wasmtime.
type wasmtimeModule struct {
	eng    *wtEngine
	module *wasmtime.Module
	name   string
	memMax uint64 // bytes: the host's memory limit
	table  bool   // the module exports its function table as tableExport

	mu   sync.Mutex
	live map[*wasmtimeInstance]struct{} // instances not closed: close closes them
}

// tableExport is the name under which compile exports a module's function
// table 0, so that Table.Call can look functions up in it.
const tableExport = "dynop:table"

func (wasmtimeEngine) compile(ctx context.Context, e *engine, code []byte, sum sign.Digest) (compiledModule, error) {
	eng := wasmtimeEngineOf(e.cfg.timeout > 0)
	m := &wasmtimeModule{eng: eng, name: e.name, memMax: uint64(e.cfg.memPages) * pageSize}
	code, m.table = exportTable(code, tableExport)
	var err error
	if m.module, err = compileCached(e, eng, code, sum); err != nil {
		return nil, err
	}
	return m, nil
}

// compileCached compiles code with eng, through the compilation cache:
// its entry (cache.go's format, MACed) holds Wasmtime's serialized
// module, keyed by sum and the engine's tag.
func compileCached(e *engine, eng *wtEngine, code []byte, sum sign.Digest) (*wasmtime.Module, error) {
	compile := func() (*wasmtime.Module, error) {
		m, err := wasmtime.NewModule(eng.engine, code)
		if err != nil {
			return nil, fmt.Errorf("wasm: %s: %w: %v", e.name, dynop.ErrFormat, err)
		}
		return m, nil
	}
	if e.cfg.cacheDir == "" {
		return compile()
	}
	log := e.cfg.log
	removeLegacy(log, e.cfg.cacheDir)
	key := loadCacheKey(log)
	store := filepath.Join(e.cfg.cacheDir, storeDir)
	if key.persistent {
		if err := os.MkdirAll(store, 0o700); err != nil {
			log.Warn("wasm: compiling without the compilation cache", "plugin", e.name, "err", err.Error())
			return compile()
		}
	}
	// The code compiled may differ from the file (exportTable), so the
	// entry's name is the file's digest and its payload key the code's.
	entry := filepath.Join(store, hex.EncodeToString(sum[:])+"-"+eng.tag)
	ckey := sha256.Sum256(code)
	wkey := hex.EncodeToString(ckey[:])
	var data []byte
	var err error
	if key.persistent {
		data, err = readEntry(entry)
	} else if b, ok := memEntries.Load(entry); ok {
		data = b.([]byte)
	} else {
		err = fs.ErrNotExist
	}
	remove := func() {
		if !key.persistent {
			memEntries.Delete(entry)
		} else if err := os.RemoveAll(entry); err != nil {
			log.Warn("wasm: compilation cache: could not remove a refused entry", "file", entry, "err", err.Error())
		}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		var got string
		var payload []byte
		if err == nil {
			got, payload, err = decodeEntry(data, key.secret, sum, eng.tag)
		}
		if err == nil && got != wkey {
			err = errors.New("it is for other code than this module's")
		}
		if err == nil {
			// The payload verified: dynop wrote it, from this module.
			if m, derr := wasmtime.NewModuleDeserialize(eng.engine, payload); derr == nil {
				cacheStats.hits.Add(1)
				return m, nil
			} else {
				msg, _, _ := strings.Cut(derr.Error(), "\n")
				log.Warn("wasm: compilation cache: Wasmtime could not use an entry; compiling the module again", "file", entry, "err", msg)
			}
		} else {
			cacheStats.refused.Add(1)
			log.Warn("wasm: compilation cache: refused an entry; compiling the module again", "file", entry, "reason", err.Error())
		}
		remove()
	}
	m, err := compile()
	if err != nil {
		return nil, err
	}
	cacheStats.compiles.Add(1)
	payload, err := m.Serialize()
	if err != nil {
		log.Warn("wasm: compilation cache: could not serialize a compiled module", "plugin", e.name, "err", err.Error())
		return m, nil
	}
	data = encodeEntry(key.secret, sum, eng.tag, wkey, payload)
	if !key.persistent {
		memEntries.Store(entry, data)
	} else if err := atomicfile.Write(entry, data, 0o600); err != nil {
		log.Warn("wasm: compilation cache: could not store a compiled module", "file", entry, "err", err.Error())
		return m, nil
	}
	cacheStats.stored.Add(1)
	return m, nil
}

func (m *wasmtimeModule) imports() []importDesc {
	var out []importDesc
	for _, im := range m.module.Imports() {
		name := ""
		if n := im.Name(); n != nil {
			name = *n
		}
		out = append(out, importDesc{im.Module(), name, externKind(im.Type())})
	}
	return out
}

// externKind names an extern type's kind.
func externKind(t *wasmtime.ExternType) string {
	switch {
	case t.FuncType() != nil:
		return "function"
	case t.MemoryType() != nil:
		return "memory"
	case t.TableType() != nil:
		return "table"
	case t.GlobalType() != nil:
		return "global"
	}
	return "extern"
}

func (m *wasmtimeModule) exportedFunctions() map[string]funcType {
	out := map[string]funcType{}
	for _, ex := range m.module.Exports() {
		if ft := ex.Type().FuncType(); ft != nil {
			out[ex.Name()] = funcType{fromWasmtime(ft.Params()), fromWasmtime(ft.Results())}
		}
	}
	return out
}

func (m *wasmtimeModule) exportedMemories() map[string]uint32 {
	out := map[string]uint32{}
	for _, ex := range m.module.Exports() {
		if mt := ex.Type().MemoryType(); mt != nil {
			out[ex.Name()] = uint32(mt.Minimum())
		}
	}
	return out
}

// kindV128 is the kind Wasmtime gives v128 (WASMTIME_V128 of
// wasmtime/val.h), which wasmtime-go does not name.
const kindV128 wasmtime.ValKind = 4

// fromWasmtime converts value types from Wasmtime's.
func fromWasmtime(ts []*wasmtime.ValType) []valType {
	out := make([]valType, len(ts))
	for i, t := range ts {
		switch t.Kind() {
		case wasmtime.KindI32:
			out[i] = valI32
		case wasmtime.KindI64:
			out[i] = valI64
		case wasmtime.KindF32:
			out[i] = valF32
		case wasmtime.KindF64:
			out[i] = valF64
		case wasmtime.KindFuncref:
			out[i] = valFuncref
		case wasmtime.KindExternref:
			out[i] = valExternref
		case kindV128:
			out[i] = valV128
		default:
			out[i] = valUnknown
		}
	}
	return out
}

// toWasmtime converts value types to Wasmtime's.
func toWasmtime(ts []valType) []*wasmtime.ValType {
	out := make([]*wasmtime.ValType, len(ts))
	for i, t := range ts {
		switch t {
		case valI32:
			out[i] = wasmtime.NewValType(wasmtime.KindI32)
		case valI64:
			out[i] = wasmtime.NewValType(wasmtime.KindI64)
		case valF32:
			out[i] = wasmtime.NewValType(wasmtime.KindF32)
		default:
			out[i] = wasmtime.NewValType(wasmtime.KindF64)
		}
	}
	return out
}

func (m *wasmtimeModule) close(context.Context) error {
	m.mu.Lock()
	live := make([]*wasmtimeInstance, 0, len(m.live))
	for wi := range m.live {
		live = append(live, wi)
	}
	m.mu.Unlock()
	for _, wi := range live {
		wi.close()
	}
	m.module.Close()
	return nil
}

// wasmtimeInstance is an instance of a wasmtimeModule, in a store of its
// own.
type wasmtimeInstance struct {
	m      *wasmtimeModule
	in     *instance
	store  *wasmtime.Store
	ctx    unsafe.Pointer // the store's context
	inst   *wasmtime.Instance
	mem    *C.dyn_mem // its memory, owned by the store
	lin    wtMemory
	handle cgo.Handle      // for the epoch callback
	buf    *C.dyn_call_buf // what calls pass, in C memory

	// The running call: its context, its timeout (0: none) and deadline
	// (monotonic nanoseconds since wtStart; 0 until the first tick
	// during the call), and why a host function or the epoch callback
	// stopped it.
	callCtx  context.Context
	timeout  time.Duration
	deadline int64
	stopped  error
	closed   bool
}

// wtStart is the origin of the deadlines' clock.
var wtStart = time.Now()

func (m *wasmtimeModule) instantiate(ctx context.Context, in *instance, timeout time.Duration) (_ moduleInstance, err error) {
	wi := &wasmtimeInstance{m: m, in: in, store: wasmtime.NewStore(m.eng.engine)}
	wi.ctx = unsafe.Pointer(wi.store.Context())
	wi.buf = (*C.dyn_call_buf)(C.calloc(1, C.sizeof_dyn_call_buf))
	m.mu.Lock()
	if m.live == nil {
		m.live = map[*wasmtimeInstance]struct{}{}
	}
	m.live[wi] = struct{}{}
	m.mu.Unlock()
	defer func() {
		if err != nil {
			wi.close()
		}
	}()
	wi.handle = cgo.NewHandle(wi)
	if m.eng.epochs {
		C.dyn_set_tick(unsafe.Pointer(*(**C.char)(unsafe.Pointer(wi.store))), C.uintptr_t(wi.handle))
	}
	var imports []wasmtime.AsExtern
	for _, im := range m.module.Imports() {
		name := ""
		if n := im.Name(); n != nil {
			name = *n
		}
		i, ok := hostImportIndex[[2]string{im.Module(), name}]
		if !ok {
			return nil, fmt.Errorf("%w: import %s.%s is not provided", ErrABI, im.Module(), name)
		}
		imports = append(imports, wi.hostFunc(&hostImports[i]))
	}
	wi.mem = (*C.dyn_mem)(C.calloc(1, C.sizeof_dyn_mem))
	wi.mem.limit = C.size_t(m.memMax)
	if m.eng.epochs {
		// A start function runs within the deadline too.
		wi.callCtx, wi.timeout, wi.deadline = ctx, timeout, 0
		wi.store.SetEpochDeadline(1)
		m.eng.enter()
	}
	runtime.LockOSThread()
	C.dyn_set_next_mem(wi.mem)
	wi.inst, err = wasmtime.NewInstance(wi.store, m.module, imports)
	C.dyn_set_next_mem(nil)
	runtime.UnlockOSThread()
	if m.eng.epochs {
		m.eng.leave()
		wi.callCtx = nil
	}
	if err != nil {
		if wi.stopped != nil {
			return nil, wi.stopped
		}
		return nil, fmt.Errorf("%w: %v", ErrTrap, err)
	}
	if wi.mem.used == 0 {
		return nil, fmt.Errorf("%w: the module has no memory of its own", ErrABI)
	}
	wi.lin.m = wi.mem
	return wi, nil
}

// hostFunc makes the function of the store that calls the instance's
// host import f. A panic (an abiError, or an exitError from proc_exit)
// becomes a trap that ends the running call, and that call's error.
func (wi *wasmtimeInstance) hostFunc(f *hostImport) *wasmtime.Func {
	ty := wasmtime.NewFuncType(toWasmtime(f.params), toWasmtime(f.results))
	stack := make([]uint64, max(len(f.params), len(f.results), 1)) // WASI's path_open takes 9
	return wasmtime.NewFunc(wi.store, ty, func(_ *wasmtime.Caller, args []wasmtime.Val) (results []wasmtime.Val, trap *wasmtime.Trap) {
		defer func() {
			if r := recover(); r != nil {
				switch err := r.(type) {
				case *abiError:
					wi.stopped = err
				case *exitError:
					wi.stopped = err
				default:
					wi.stopped = fmt.Errorf("%w: host function %s.%s panicked: %v", ErrTrap, f.module, f.name, r)
				}
				results, trap = nil, wasmtime.NewTrap(wi.stopped.Error())
			}
		}()
		for i, a := range args {
			switch f.params[i] {
			case valI32:
				stack[i] = uint64(uint32(a.I32()))
			case valI64:
				stack[i] = uint64(a.I64())
			}
		}
		f.fn(wi.in, stack)
		results = make([]wasmtime.Val, len(f.results))
		for i, t := range f.results {
			switch t {
			case valI32:
				results[i] = wasmtime.ValI32(int32(uint32(stack[i])))
			default:
				results[i] = wasmtime.ValI64(int64(stack[i]))
			}
		}
		return results, nil
	})
}

//export dynopWasmtimeTick
func dynopWasmtimeTick(data C.uintptr_t) C.int {
	wi, ok := cgo.Handle(data).Value().(*wasmtimeInstance)
	if !ok {
		return 1
	}
	now := int64(time.Since(wtStart))
	if wi.timeout > 0 && wi.deadline == 0 {
		// The first tick of the call, at most one period after it began:
		// the deadline counts from here, so a call is stopped at most a
		// period late, never early.
		wi.deadline = now + int64(wi.timeout)
	}
	if wi.deadline != 0 && now >= wi.deadline {
		wi.stopped = fmt.Errorf("%w: the call ran past its deadline", context.DeadlineExceeded)
		return 1
	}
	if c := wi.callCtx; c != nil && c.Err() != nil {
		if context.Cause(c) == context.DeadlineExceeded {
			wi.stopped = fmt.Errorf("%w: the caller's deadline passed", context.DeadlineExceeded)
		} else {
			wi.stopped = stopError(c)
		}
		return 1
	}
	return 0
}

func (wi *wasmtimeInstance) memory() memory { return &wi.lin }

func (wi *wasmtimeInstance) function(name string) function {
	f := wi.inst.GetFunc(wi.store, name)
	if f == nil {
		return nil
	}
	return wi.newFunction(f)
}

// newFunction prepares calls of f.
func (wi *wasmtimeInstance) newFunction(f *wasmtime.Func) *wasmtimeFunction {
	ft := f.Type(wi.store)
	wf := &wasmtimeFunction{wi: wi, f: f, ft: funcType{fromWasmtime(ft.Params()), fromWasmtime(ft.Results())}}
	wf.uncallable = callable(wf.ft)
	// A wasmtime.Func is its wasmtime_func_t and nothing else.
	wf.raw = *(*C.dyn_wt_func)(unsafe.Pointer(f))
	return wf
}

func (wi *wasmtimeInstance) tableFunction(idx uint32, ft funcType) (function, error) {
	if err := callable(ft); err != nil {
		return nil, fmt.Errorf("function table index %d: %w", idx, err)
	}
	var tbl *wasmtime.Table
	if wi.m.table {
		if ex := wi.inst.GetExport(wi.store, tableExport); ex != nil {
			tbl = ex.Table()
		}
	}
	if tbl == nil {
		return nil, fmt.Errorf("%w: function table index %d: the module has no function table", ErrABI, idx)
	}
	if uint64(idx) >= tbl.Size(wi.store) {
		return nil, fmt.Errorf("%w: function table index %d: the table has %d entries (want type %s)", ErrABI, idx, tbl.Size(wi.store), signature(ft))
	}
	v, err := tbl.Get(wi.store, uint64(idx))
	if err != nil || v.Funcref() == nil {
		return nil, fmt.Errorf("%w: function table index %d: no function there (want type %s)", ErrABI, idx, signature(ft))
	}
	f := wi.newFunction(v.Funcref())
	if !slices.Equal(f.ft.params, ft.params) || !slices.Equal(f.ft.results, ft.results) {
		return nil, fmt.Errorf("%w: function table index %d: it has type %s (want type %s)", ErrABI, idx, signature(f.ft), signature(ft))
	}
	return f, nil
}

func (wi *wasmtimeInstance) growRefused() bool { return wi.mem != nil && wi.mem.refused != 0 }

func (wi *wasmtimeInstance) resetRefused() {
	if wi.mem != nil && wi.mem.refused != 0 { // a read costs less than a write, per call
		wi.mem.refused = 0
	}
}

func (wi *wasmtimeInstance) close() {
	if wi.closed {
		return
	}
	wi.closed = true
	wi.m.mu.Lock()
	delete(wi.m.live, wi)
	wi.m.mu.Unlock()
	wi.lin.m = nil
	wi.store.Close() // unmaps the memory (dyn_mem_free)
	if wi.handle != 0 {
		wi.handle.Delete()
	}
	C.free(unsafe.Pointer(wi.mem)) // Go's, once the store is gone
	wi.mem = nil
	C.free(unsafe.Pointer(wi.buf))
	wi.buf = nil
}

// wasmtimeFunction is a function of a wasmtimeInstance, called through
// wasmtime_func_call_unchecked: no allocation per call.
type wasmtimeFunction struct {
	wi  *wasmtimeInstance
	f   *wasmtime.Func
	ft  funcType
	raw C.dyn_wt_func
	// uncallable says why dyn_call cannot call it, if it cannot.
	uncallable error
}

// callable reports why dyn_call cannot call a function of type ft, or
// nil if it can: it passes at most len(dyn_call_buf.vals) values each
// way, and numbers only.
func callable(ft funcType) error {
	const most = len(C.dyn_call_buf{}.vals)
	if max(len(ft.params), len(ft.results)) > most {
		return fmt.Errorf("%w: type %s: a call through the host passes at most %d parameters and %d results", dynop.ErrUnsupported, signature(ft), most, most)
	}
	for _, t := range slices.Concat(ft.params, ft.results) {
		if !t.numeric() {
			return fmt.Errorf("%w: type %s: a call through the host passes numbers only (i32, i64, f32, f64), not %s", dynop.ErrUnsupported, signature(ft), t)
		}
	}
	return nil
}

func (f *wasmtimeFunction) call(ctx context.Context, timeout time.Duration, stack []uint64) error {
	wi := f.wi
	if wi.closed {
		return notStarted(fmt.Errorf("%w: the module instance is closed", dynop.ErrState))
	}
	if f.uncallable != nil {
		return notStarted(f.uncallable)
	}
	b := wi.buf
	n := max(len(f.ft.params), len(f.ft.results))
	if len(stack) < n {
		return notStarted(fmt.Errorf("%w: a stack of %d values for a function of type %s", dynop.ErrInvalid, len(stack), signature(f.ft)))
	}
	b.fn = f.raw
	for i := range f.ft.params {
		*(*uint64)(unsafe.Pointer(&b.vals[i])) = stack[i]
	}
	eng := wi.m.eng
	wi.stopped = nil
	epochs := C.int(0)
	if eng.epochs {
		if ctx.Err() != nil {
			return notStarted(stopError(ctx))
		}
		wi.callCtx, wi.timeout, wi.deadline = ctx, timeout, 0
		eng.enter()
		epochs = 1
	}
	rc := C.dyn_call(C.uintptr_t(uintptr(wi.ctx)), C.uintptr_t(uintptr(unsafe.Pointer(b))), C.size_t(n), epochs)
	if eng.epochs {
		eng.leave()
		wi.callCtx = nil
	}
	runtime.KeepAlive(wi.store)
	if rc != 0 {
		if wi.stopped != nil {
			return wi.stopped
		}
		if rc > 0 && rc < 255 && wasmtime.TrapCode(rc-1) == wasmtime.Interrupt {
			return fmt.Errorf("%w: the call was interrupted", context.DeadlineExceeded)
		}
		return fmt.Errorf("%w: %s", ErrTrap, trapMessage(rc, C.GoString(&b.msg[0])))
	}
	for i, t := range f.ft.results {
		v := *(*uint64)(unsafe.Pointer(&b.vals[i]))
		if t == valI32 || t == valF32 {
			v = uint64(uint32(v))
		}
		stack[i] = v
	}
	return nil
}

// trapWords say what each of Wasmtime's trap codes means, in the words
// wazero and the WebAssembly spec tests use.
var trapWords = map[wasmtime.TrapCode]string{
	wasmtime.StackOverflow:          "stack overflow",
	wasmtime.MemoryOutOfBounds:      "out of bounds memory access",
	wasmtime.HeapMisaligned:         "unaligned atomic",
	wasmtime.TableOutOfBounds:       "out of bounds table access",
	wasmtime.IndirectCallToNull:     "uninitialized element",
	wasmtime.BadSignature:           "indirect call type mismatch",
	wasmtime.IntegerOverflow:        "integer overflow",
	wasmtime.IntegerDivisionByZero:  "integer divide by zero",
	wasmtime.BadConversionToInteger: "invalid conversion to integer",
	wasmtime.UnreachableCodeReached: "unreachable",
	wasmtime.OutOfFuel:              "out of fuel",
}

// trapMessage words a trap: what happened (by the trap code rc of
// dyn_call) and in which function, the innermost frame of Wasmtime's
// message msg ("… 0: 0xf85 - <unknown>!misbehave_run …").
func trapMessage(rc C.int, msg string) string {
	what, ok := trapWords[wasmtime.TrapCode(rc-1)]
	if rc <= 0 || rc >= 255 || !ok {
		what = "trap"
		if _, cause, ok := strings.Cut(msg, "Caused by:"); ok {
			what = strings.TrimSpace(cause)
		}
	}
	if _, frames, ok := strings.Cut(msg, "wasm backtrace:"); ok {
		for _, line := range strings.Split(frames, "\n") {
			if _, fn, ok := strings.Cut(line, "!"); ok {
				return fmt.Sprintf("%s (in %s)", what, strings.TrimSpace(fn))
			}
		}
	}
	return what
}

// wtMemory is a Wasmtime instance's linear memory, read in place: it is
// reserved once and never moves (dyn_new_memory), so only its size
// changes.
type wtMemory struct{ m *C.dyn_mem }

func (w *wtMemory) bytes() []byte {
	if w.m == nil || w.m.base == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(w.m.base)), int(w.m.size))
}

// Size implements memory.
func (w *wtMemory) Size() uint32 { return uint32(len(w.bytes())) }

// Read implements memory.
func (w *wtMemory) Read(off, n uint32) ([]byte, bool) {
	b := w.bytes()
	if uint64(off)+uint64(n) > uint64(len(b)) {
		return nil, false
	}
	return b[off : off+n : off+n], true
}

// Write implements memory.
func (w *wtMemory) Write(off uint32, v []byte) bool {
	b := w.bytes()
	if uint64(off)+uint64(len(v)) > uint64(len(b)) {
		return false
	}
	copy(b[off:], v)
	return true
}

// ReadUint32Le implements memory.
func (w *wtMemory) ReadUint32Le(off uint32) (uint32, bool) {
	b, ok := w.Read(off, 4)
	if !ok {
		return 0, false
	}
	return le.Uint32(b), true
}

// WriteUint32Le implements memory.
func (w *wtMemory) WriteUint32Le(off, v uint32) bool {
	b, ok := w.Read(off, 4)
	if ok {
		le.PutUint32(b, v)
	}
	return ok
}

// ReadUint64Le implements memory.
func (w *wtMemory) ReadUint64Le(off uint32) (uint64, bool) {
	b, ok := w.Read(off, 8)
	if !ok {
		return 0, false
	}
	return le.Uint64(b), true
}

// WriteUint64Le implements memory.
func (w *wtMemory) WriteUint64Le(off uint32, v uint64) bool {
	b, ok := w.Read(off, 8)
	if ok {
		le.PutUint64(b, v)
	}
	return ok
}
