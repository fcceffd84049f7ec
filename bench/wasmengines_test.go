package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v37"
	"github.com/samyfodil/wazy"
	wazyapi "github.com/samyfodil/wazy/api"
	wazywasi "github.com/samyfodil/wazy/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynop/dynop/bench/internal/engines"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
)

// The WebAssembly engines side by side (issue 27): imgproc's kernels,
// compiled from the same C (testdata/engines.c includes
// plugins/imgproc/c/imgproc.c), run natively (the scalar reference and the
// best variant this CPU runs) and in wazero, Wasmtime and wazy, each with
// and without the mechanism that enforces a per-call deadline, from a
// module built without and with -msimd128. docs/wasm-engines.md has the
// results.

const (
	engW, engH, engC = 1920, 1080, 3 // the image: uint8 HWC
	engSigma         = 2.0           // GaussianBlur's sigma (radius 6)
	engOW, engOH     = 960, 540      // Resize's output (bilinear, imgproc's default)
	engDeadline      = 30 * time.Second
	engEpochTick     = time.Millisecond // the epoch ticker's period
	engFuel          = uint64(1) << 40  // the fuel a call starts with
)

// enginesFlags are the flags of every build of engines.c: imgproc's own
// (IMGPROC_CFLAGS), the optimization level opt, and where imgproc.c is.
func enginesFlags(opt string) []string {
	return append([]string{opt, "-I", cbuild.Path("plugins/imgproc/c")}, cbuild.ImgprocFlags...)
}

// enginesWasm returns engines.c built as a wasm32-wasi reactor: imgproc's
// scalar code (-DIMGPROC_NO_SIMD; its x86 variants cannot be built for
// wasm), with -msimd128 if simd (clang may then vectorise loops itself).
func enginesWasm(tb testing.TB, simd bool) []byte {
	tb.Helper()
	name, flags := "engines.wasm", append(enginesFlags("-O3"), "-DIMGPROC_NO_SIMD")
	if simd {
		name, flags = "engines-simd.wasm", append(flags, "-msimd128")
	}
	path := fixture(tb, name, func(t testing.TB) string {
		return cbuild.WasmRaw(t, name, []string{"bench/testdata/engines.c"}, flags...)
	})
	code, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return code
}

// enginesNative returns engines.c built natively with the C compiler
// (cc, gcc on the development machine) at optimization level opt (-O3;
// -O2 is what the Makefile builds the imgproc plugin with), with imgproc's
// AVX2 and AVX-512 variants.
func enginesNative(tb testing.TB, opt string) *engines.Native {
	tb.Helper()
	name := "libengines" + opt + ".so"
	path := fixture(tb, name, func(t testing.TB) string {
		return cbuild.Plugin(t, name, "bench/testdata/engines.c", enginesFlags(opt)...)
	})
	n, err := engines.OpenNative(path)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// bestVariant is the best variant of imgproc's kernels this CPU runs
// (honouring $DYNOP_CPU_FEATURES), and its name.
func bestVariant() (int, string) {
	cpu, err := dispatch.FromEnv()
	if err != nil {
		return engines.Scalar, "scalar"
	}
	switch av := cpu.Available(); {
	case av.Contains(dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW)):
		return engines.AVX512, "avx512"
	case av.Has(dispatch.AVX2):
		return engines.AVX2, "avx2"
	}
	return engines.Scalar, "scalar"
}

// engImage is the benchmarks' 1920×1080 RGB image: photo without alpha.
var engImage = sync.OnceValue(func() []byte {
	img := photo(engW, engH)
	rgb := make([]byte, 0, engW*engH*engC)
	for i := 0; i < len(img.Pix); i += 4 {
		rgb = append(rgb, img.Pix[i:i+3]...)
	}
	return rgb
})

// An engKernel is one of imgproc's kernels on the image.
type engKernel struct {
	name   string
	export string // the function engines.c exports
	out    int    // output bytes
	// native calls the native build; params are the wasm export's
	// parameters (wazero's encoding: i32 zero-extended, f32 as its bits).
	native func(n *engines.Native, in, out unsafe.Pointer, variant int) int32
	params func(in, out uint32) []uint64
}

func f32param(v float32) uint64 { return uint64(math.Float32bits(v)) }

var engKernels = []engKernel{
	{"Blur", "blur_u8", engW * engH * engC,
		func(n *engines.Native, in, out unsafe.Pointer, v int) int32 {
			return n.Blur(in, out, engW, engH, engC, engSigma, v)
		},
		func(in, out uint32) []uint64 {
			return []uint64{uint64(in), uint64(out), engW, engH, engC, f32param(engSigma), 0}
		}},
	{"Sobel", "sobel_u8", engW * engH * engC,
		func(n *engines.Native, in, out unsafe.Pointer, v int) int32 {
			return n.Sobel(in, out, engW, engH, engC, v)
		},
		func(in, out uint32) []uint64 { return []uint64{uint64(in), uint64(out), engW, engH, engC, 0} }},
	{"Resize", "resize_u8", engOW * engOH * engC,
		func(n *engines.Native, in, out unsafe.Pointer, v int) int32 {
			return n.Resize(in, out, engW, engH, engC, engOW, engOH, v)
		},
		func(in, out uint32) []uint64 {
			return []uint64{uint64(in), uint64(out), engW, engH, engC, engOW, engOH, 0}
		}},
	{"Grayscale", "gray_u8", engW * engH,
		func(n *engines.Native, in, out unsafe.Pointer, v int) int32 {
			return n.Gray(in, out, engW, engH, engC, v)
		},
		func(in, out uint32) []uint64 { return []uint64{uint64(in), uint64(out), engW, engH, engC, 0} }},
}

// nativeImages are the image and an output buffer in C memory, shared by
// the native rows; refs the native scalar outputs each engine's output is
// checked against.
var (
	nativeMu       sync.Mutex
	nativeIn       []byte
	nativeOut      []byte
	nativeRefs     = map[string][]byte{}
	nativeRefsDone bool
)

// nativeBuffers returns the image and an output buffer in C memory.
func nativeBuffers() (in, out []byte) {
	nativeMu.Lock()
	defer nativeMu.Unlock()
	if nativeIn == nil {
		nativeIn, nativeOut = engines.Alloc(engW*engH*engC), engines.Alloc(engW*engH*engC)
		copy(nativeIn, engImage())
	}
	return nativeIn, nativeOut
}

// nativeRef returns kernel k's output computed by the native scalar
// reference.
func nativeRef(tb testing.TB, n *engines.Native, k engKernel) []byte {
	tb.Helper()
	in, out := nativeBuffers()
	nativeMu.Lock()
	defer nativeMu.Unlock()
	if ref, ok := nativeRefs[k.name]; ok {
		return ref
	}
	if rc := k.native(n, unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), engines.Scalar); rc != 0 {
		tb.Fatalf("%s: native scalar: dynop_result %d", k.name, rc)
	}
	ref := bytes.Clone(out[:k.out])
	nativeRefs[k.name] = ref
	return ref
}

// A guest is a module instance in one engine, with the image written
// into its memory at in and room for any output at out.
type guest interface {
	// prepare returns a call of export name with params (wazero's
	// encoding), made as the engine's mode says (with a deadline or
	// not); it returns the first result.
	prepare(name string, params []uint64) (func() (uint64, error), error)
	memory() []byte
	buffers() (in, out uint32)
	close()
}

// An engineSpec is one engine in one mode.
type engineSpec struct {
	name string
	open func(code []byte) (guest, error)
	// deadline: each call's time is bounded (a runaway call is stopped).
	deadline bool
}

var engineSpecs = []engineSpec{
	{"wazero", func(code []byte) (guest, error) { return openWazero(code, false) }, false},
	{"wazero-deadline", func(code []byte) (guest, error) { return openWazero(code, true) }, true},
	{"wasmtime", func(code []byte) (guest, error) { return openWasmtime(code, wtPlain) }, false},
	{"wasmtime-epoch", func(code []byte) (guest, error) { return openWasmtime(code, wtEpoch) }, true},
	{"wasmtime-fuel", func(code []byte) (guest, error) { return openWasmtime(code, wtFuel) }, false},
	{"wazy-deadline", openWazy, true},
}

// Guests are made once per process, engine and module, and closed in
// TestMain.
var (
	guestMu sync.Mutex
	guests  = map[string]guest{}
)

func engineGuest(tb testing.TB, e engineSpec, simd bool) guest {
	tb.Helper()
	key := fmt.Sprintf("%s/simd=%v", e.name, simd)
	guestMu.Lock()
	g := guests[key]
	guestMu.Unlock()
	if g != nil {
		return g
	}
	g, err := e.open(enginesWasm(tb, simd))
	if err != nil {
		tb.Fatalf("%s: %v", e.name, err)
	}
	guestMu.Lock()
	defer guestMu.Unlock()
	guests[key] = g
	return g
}

func closeEngines() {
	guestMu.Lock()
	defer guestMu.Unlock()
	for k, g := range guests {
		g.close()
		delete(guests, k)
	}
	wtMu.Lock()
	defer wtMu.Unlock()
	for m, e := range wtEngines {
		e.close()
		delete(wtEngines, m)
	}
}

// placeImage mallocs the input and output buffers in a guest's memory
// and writes the image.
func placeImage(malloc func(n uint32) (uint32, error), mem func() []byte) (in, out uint32, err error) {
	if in, err = malloc(engW * engH * engC); err == nil {
		out, err = malloc(engW * engH * engC)
	}
	if err == nil && (in == 0 || out == 0) {
		err = errors.New("malloc returned NULL")
	}
	if err == nil {
		if m := mem(); uint64(len(m)) < uint64(out)+engW*engH*engC {
			err = fmt.Errorf("malloc returned %#x and %#x in a memory of %d bytes", in, out, len(m))
		} else {
			copy(m[in:], engImage())
		}
	}
	return in, out, err
}

// ---- wazero -------------------------------------------------------------

// wazeroGuest runs in wazero v1.12 configured as loader/wasm configures
// it: with deadline, WithCloseOnContextDone and a 30 s context deadline
// per call; without, neither (CallTimeout < 0).
type wazeroGuest struct {
	rt       wazero.Runtime
	mod      api.Module
	deadline bool
	in, out  uint32
}

func openWazero(code []byte, deadline bool) (guest, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(deadline))
	g := &wazeroGuest{rt: rt, deadline: deadline}
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	g.mod = mod
	malloc, err := g.prepare1("malloc")
	if err == nil {
		g.in, g.out, err = placeImage(malloc, g.memory)
	}
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return g, nil
}

func (g *wazeroGuest) prepare1(name string) (func(n uint32) (uint32, error), error) {
	return prepare1(g.prepare, name)
}

// prepare1 makes a call of a one-parameter export returning an i32.
func prepare1(prepare func(string, []uint64) (func() (uint64, error), error), name string) (func(uint32) (uint32, error), error) {
	param := []uint64{0}
	call, err := prepare(name, param)
	if err != nil {
		return nil, err
	}
	return func(n uint32) (uint32, error) {
		param[0] = uint64(n)
		r, err := call()
		return uint32(r), err
	}, nil
}

func (g *wazeroGuest) prepare(name string, params []uint64) (func() (uint64, error), error) {
	f := g.mod.ExportedFunction(name)
	if f == nil {
		return nil, fmt.Errorf("no export %s", name)
	}
	stack := make([]uint64, max(len(params), len(f.Definition().ResultTypes()), 1))
	if !g.deadline {
		return func() (uint64, error) {
			copy(stack, params)
			err := f.CallWithStack(ctx, stack)
			return stack[0], err
		}, nil
	}
	return func() (uint64, error) {
		c, cancel := context.WithTimeout(ctx, engDeadline)
		copy(stack, params)
		err := f.CallWithStack(c, stack)
		cancel()
		return stack[0], err
	}, nil
}

func (g *wazeroGuest) memory() []byte {
	m := g.mod.ExportedMemory("memory")
	b, _ := m.Read(0, m.Size())
	return b
}

func (g *wazeroGuest) buffers() (in, out uint32) { return g.in, g.out }
func (g *wazeroGuest) close()                    { g.rt.Close(ctx) }

// ---- wazy ---------------------------------------------------------------

// wazyGuest runs in wazy v0.7.0, a fork of wazero whose compiled code
// checks Go's preemption word at loop headers: a done context always
// stops a call, so it has no uninterruptible mode. Each call gets a 30 s
// context deadline.
type wazyGuest struct {
	rt      wazy.Runtime
	mod     wazyapi.Module
	in, out uint32
}

func openWazy(code []byte) (guest, error) {
	rt := wazy.NewRuntimeWithConfig(ctx, wazy.NewRuntimeConfig())
	g := &wazyGuest{rt: rt}
	wazywasi.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, code, wazy.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	g.mod = mod
	malloc, err := prepare1(g.prepare, "malloc")
	if err == nil {
		g.in, g.out, err = placeImage(malloc, g.memory)
	}
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return g, nil
}

func (g *wazyGuest) prepare(name string, params []uint64) (func() (uint64, error), error) {
	f := g.mod.ExportedFunction(name)
	if f == nil {
		return nil, fmt.Errorf("no export %s", name)
	}
	stack := make([]uint64, max(len(params), len(f.Definition().ResultTypes()), 1))
	return func() (uint64, error) {
		c, cancel := context.WithTimeout(ctx, engDeadline)
		copy(stack, params)
		err := f.CallWithStack(c, stack)
		cancel()
		return stack[0], err
	}, nil
}

func (g *wazyGuest) memory() []byte {
	m := g.mod.ExportedMemory("memory")
	b, _ := m.Read(0, m.Size())
	return b
}

func (g *wazyGuest) buffers() (in, out uint32) { return g.in, g.out }
func (g *wazyGuest) close()                    { g.rt.Close(ctx) }

// ---- Wasmtime -----------------------------------------------------------

// A wtMode is how a Wasmtime engine bounds calls: not at all, by epoch
// (see wtEngine), or by fuel (each call first gets engFuel units: a bound
// on work, not on time).
type wtMode int

const (
	wtPlain wtMode = iota
	wtEpoch
	wtFuel
)

// wtEngine is a Wasmtime engine (Cranelift, opt level speed, SIMD on) in
// one mode. In epoch mode a ticker goroutine keeps the engine's epoch at
// the number of engEpochTick periods since start: a tick it is late for (on a
// loaded machine, where it waits for a core) is made up at its next run.
// A deadline is set in ticks from the engine's current epoch, so
// [wtEngine.ticks] adds the ticks the epoch is behind: the call is
// stopped at the first tick after the deadline in time, never before it.
type wtEngine struct {
	engine *wasmtime.Engine
	mode   wtMode
	start  time.Time
	epoch  atomic.Int64 // increments made; the engine's epoch is at least this
	stop   chan struct{}
	done   sync.WaitGroup
}

func newWtEngine(mode wtMode) *wtEngine {
	cfg := wasmtime.NewConfig()
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	cfg.SetWasmSIMD(true)
	cfg.SetEpochInterruption(mode == wtEpoch)
	cfg.SetConsumeFuel(mode == wtFuel)
	e := &wtEngine{engine: wasmtime.NewEngineWithConfig(cfg), mode: mode, start: time.Now(), stop: make(chan struct{})}
	if mode == wtEpoch {
		e.done.Go(func() {
			t := time.NewTicker(engEpochTick)
			defer t.Stop()
			for {
				select {
				case <-e.stop:
					return
				case now := <-t.C:
					for due := int64(now.Sub(e.start) / engEpochTick); e.epoch.Load() < due; {
						e.engine.IncrementEpoch()
						e.epoch.Add(1)
					}
				}
			}
		})
	}
	return e
}

// ticks returns the epoch deadline, in ticks from the engine's current
// epoch, of a call that may run for d from now.
func (e *wtEngine) ticks(d time.Duration) uint64 {
	behind := int64(time.Since(e.start)/engEpochTick) - e.epoch.Load()
	return uint64(int64(d/engEpochTick) + max(behind, 0))
}

func (e *wtEngine) close() {
	close(e.stop)
	e.done.Wait()
	e.engine.Close()
}

var (
	wtMu      sync.Mutex
	wtEngines = map[wtMode]*wtEngine{}
)

// sharedWtEngine returns the process's engine in mode m.
func sharedWtEngine(m wtMode) *wtEngine {
	wtMu.Lock()
	defer wtMu.Unlock()
	e := wtEngines[m]
	if e == nil {
		e = newWtEngine(m)
		wtEngines[m] = e
	}
	return e
}

// wtInstance is a module instance in its own store, in a Wasmtime engine.
type wtInstance struct {
	e     *wtEngine
	store *wasmtime.Store
	inst  *wasmtime.Instance
	mem   *wasmtime.Memory
}

// newWtInstance compiles code (or uses module) and instantiates it in a
// new store of e, with WASI (nothing granted), and runs _initialize.
func newWtInstance(e *wtEngine, module *wasmtime.Module) (*wtInstance, error) {
	store := wasmtime.NewStore(e.engine)
	store.SetWasi(wasmtime.NewWasiConfig())
	w := &wtInstance{e: e, store: store}
	w.arm()
	linker := wasmtime.NewLinker(e.engine)
	if err := linker.DefineWasi(); err != nil {
		store.Close()
		return nil, err
	}
	inst, err := linker.Instantiate(store, module)
	if err != nil {
		store.Close()
		return nil, err
	}
	w.inst = inst
	if init := inst.GetFunc(store, "_initialize"); init != nil {
		w.arm()
		if _, err := init.Call(store); err != nil {
			store.Close()
			return nil, err
		}
	}
	x := inst.GetExport(store, "memory")
	if x == nil || x.Memory() == nil {
		store.Close()
		return nil, errors.New("no exported memory")
	}
	w.mem = x.Memory()
	return w, nil
}

// arm sets what bounds the store's next call: its epoch deadline or its
// fuel.
func (w *wtInstance) arm() {
	switch w.e.mode {
	case wtEpoch:
		w.store.SetEpochDeadline(w.e.ticks(engDeadline))
	case wtFuel:
		if err := w.store.SetFuel(engFuel); err != nil {
			panic(err)
		}
	}
}

// prepare makes a call of export name through Func.Call, the bindings'
// ordinary call, arming the store first.
func (w *wtInstance) prepare(name string, params []uint64) (func() (uint64, error), error) {
	f := w.inst.GetFunc(w.store, name)
	if f == nil {
		return nil, fmt.Errorf("no export %s", name)
	}
	ty := f.Type(w.store).Params()
	if len(ty) != len(params) {
		return nil, fmt.Errorf("%s takes %d parameters, not %d", name, len(ty), len(params))
	}
	kinds := make([]wasmtime.ValKind, len(ty))
	for i, t := range ty {
		switch kinds[i] = t.Kind(); kinds[i] {
		case wasmtime.KindI32, wasmtime.KindI64, wasmtime.KindF32, wasmtime.KindF64:
		default:
			return nil, fmt.Errorf("%s: parameter %d has kind %v", name, i, kinds[i])
		}
	}
	// The arguments are boxed at each call, from params as they are
	// then, as a caller of Func.Call does.
	args := make([]any, len(params))
	return func() (uint64, error) {
		for i, p := range params {
			switch kinds[i] {
			case wasmtime.KindI32:
				args[i] = int32(uint32(p))
			case wasmtime.KindI64:
				args[i] = int64(p)
			case wasmtime.KindF32:
				args[i] = math.Float32frombits(uint32(p))
			case wasmtime.KindF64:
				args[i] = math.Float64frombits(p)
			}
		}
		w.arm()
		r, err := f.Call(w.store, args...)
		if err != nil {
			return 0, err
		}
		switch v := r.(type) {
		case int32:
			return uint64(uint32(v)), nil
		case nil:
			return 0, nil
		}
		return 0, fmt.Errorf("%s returned %T", name, r)
	}, nil
}

func (w *wtInstance) memory() []byte { return w.mem.UnsafeData(w.store) }

// wasmtimeGuest is a Wasmtime instance with the image placed.
type wasmtimeGuest struct {
	*wtInstance
	in, out uint32
}

func openWasmtime(code []byte, mode wtMode) (guest, error) {
	e := sharedWtEngine(mode)
	module, err := wasmtime.NewModule(e.engine, code)
	if err != nil {
		return nil, err
	}
	w, err := newWtInstance(e, module)
	if err != nil {
		return nil, err
	}
	g := &wasmtimeGuest{wtInstance: w}
	malloc, err := prepare1(w.prepare, "malloc")
	if err == nil {
		g.in, g.out, err = placeImage(malloc, w.memory)
	}
	if err != nil {
		w.store.Close()
		return nil, err
	}
	return g, nil
}

func (g *wasmtimeGuest) buffers() (in, out uint32) { return g.in, g.out }
func (g *wasmtimeGuest) close()                    { g.store.Close() }

// ---- the benchmarks -----------------------------------------------------

// BenchmarkWasmEngines runs each of imgproc's kernels on a 1920×1080×3
// uint8 image (Grayscale writes 1 channel; Resize halves each side): the
// native build (gcc -O3) in its scalar reference and the best variant this
// CPU runs, the scalar reference built as the plugin is (-O2), then each engine on the module built without and with
// -msimd128 (…/simd). A wasm row times the call only: the image is in the
// module's memory before the loop. Every row's output is first checked
// against the native scalar one, byte for byte.
func BenchmarkWasmEngines(b *testing.B) {
	n, o2 := enginesNative(b, "-O3"), enginesNative(b, "-O2")
	best, bestName := bestVariant()
	for _, k := range engKernels {
		b.Run(k.name, func(b *testing.B) {
			want := nativeRef(b, n, k)
			in, out := nativeBuffers()
			pin, pout := unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0])
			for _, v := range []struct {
				name    string
				lib     *engines.Native
				variant int
			}{{"native-scalar", n, engines.Scalar}, {"native-best", n, best}, {"native-scalar-O2", o2, engines.Scalar}} {
				b.Run(v.name, func(b *testing.B) {
					if v.name == "native-best" {
						b.Logf("native-best is the %s variant", bestName)
					}
					clear(out)
					if rc := k.native(v.lib, pin, pout, v.variant); rc != 0 {
						b.Fatalf("dynop_result %d", rc)
					}
					if !bytes.Equal(out[:k.out], want) {
						b.Fatal("output differs from the native scalar reference's")
					}
					for b.Loop() {
						k.native(v.lib, pin, pout, v.variant)
					}
				})
			}
			for _, e := range engineSpecs {
				for _, simd := range []bool{false, true} {
					name := e.name
					if simd {
						name += "/simd"
					}
					b.Run(name, func(b *testing.B) {
						g := engineGuest(b, e, simd)
						gin, gout := g.buffers()
						call, err := g.prepare(k.export, k.params(gin, gout))
						if err != nil {
							b.Fatal(err)
						}
						clear(g.memory()[gout : gout+uint32(k.out)])
						if rc, err := call(); err != nil || rc != 0 {
							b.Fatalf("%s: dynop_result %d, %v", k.export, int32(rc), err)
						}
						if !bytes.Equal(g.memory()[gout:gout+uint32(k.out)], want) {
							b.Fatal("output differs from the native scalar reference's")
						}
						for b.Loop() {
							if rc, err := call(); err != nil || rc != 0 {
								b.Fatalf("%s: dynop_result %d, %v", k.export, int32(rc), err)
							}
						}
					})
				}
			}
		})
	}
}

// BenchmarkWasmCall16 measures a call's overhead: saxpy on 16 float32
// already in the module's memory (engines.c's saxpy, imgproc's scalar
// reference), called through each engine's raw API with its deadline
// mechanism off and on, against the same C called natively through cgo.
// wazero's and wazy's rows call api.Function.CallWithStack (dynop's call,
// no allocation) and Call; Wasmtime's Func.Call (the bindings' call:
// arguments boxed, a global lock, ~9 allocations) and the unchecked C
// path (engines.Unchecked). With a deadline, wazero's and wazy's calls
// each get a context with a 30 s deadline, as loader/wasm's do, and
// Wasmtime's set their store's epoch deadline first.
func BenchmarkWasmCall16(b *testing.B) {
	const count = 16
	n := enginesNative(b, "-O3")
	b.Run("native-cgo", func(b *testing.B) {
		mem := engines.Alloc(2 * 4 * count)
		defer engines.Free(mem)
		for i := range count {
			putF32(mem, uint32(4*i), float32(i))
			putF32(mem, uint32(4*(count+i)), 1)
		}
		x, y := unsafe.Pointer(&mem[0]), unsafe.Pointer(&mem[4*count])
		for b.Loop() {
			n.Saxpy(0.5, x, y, y, count)
		}
	})
	// What a deadline context costs by itself: made and cancelled.
	b.Run("context.WithTimeout", func(b *testing.B) {
		for b.Loop() {
			_, cancel := context.WithTimeout(ctx, engDeadline)
			cancel()
		}
	})
	for _, deadline := range []bool{false, true} {
		wz, wt := spec("wazero"), spec("wasmtime")
		if deadline {
			wz, wt = spec("wazero-deadline"), spec("wasmtime-epoch")
		}
		b.Run(wz.name+"/CallWithStack", func(b *testing.B) {
			g := engineGuest(b, wz, false)
			callSaxpy(b, g)
		})
		b.Run(wz.name+"/Call", func(b *testing.B) {
			g := engineGuest(b, wz, false)
			x, y := saxpyData(b, g, count)
			f := g.(*wazeroGuest).mod.ExportedFunction("saxpy")
			a := f32param(0.5)
			for b.Loop() {
				c, cancel := ctx, context.CancelFunc(func() {})
				if deadline {
					c, cancel = context.WithTimeout(ctx, engDeadline)
				}
				if _, err := f.Call(c, a, uint64(x), uint64(y), uint64(y), count); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		})
		b.Run(wt.name+"/Func.Call", func(b *testing.B) {
			g := engineGuest(b, wt, false)
			callSaxpy(b, g)
		})
		b.Run(wt.name+"/unchecked", func(b *testing.B) {
			g := engineGuest(b, wt, false)
			x, y := saxpyData(b, g, count)
			w := g.(*wasmtimeGuest)
			u, err := engines.NewUnchecked(w.store, w.inst.GetFunc(w.store, "saxpy"), 5, 0)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if deadline {
					u.SetDeadline(w.e.ticks(engDeadline))
				}
				u.SetF32(0, 0.5)
				u.SetI32(1, int32(x))
				u.SetI32(2, int32(y))
				u.SetI32(3, int32(y))
				u.SetI32(4, count)
				if err := u.Call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("wazy-deadline/CallWithStack", func(b *testing.B) {
		g := engineGuest(b, spec("wazy-deadline"), false)
		callSaxpy(b, g)
	})
}

// spec returns the engine named name.
func spec(name string) engineSpec {
	for _, e := range engineSpecs {
		if e.name == name {
			return e
		}
	}
	panic("no engine " + name)
}

// saxpyData allocates x and y of count float32 in g's memory, x[i] = i
// and y[i] = 1 (normal numbers: y grows by x/2 each call).
func saxpyData(b *testing.B, g guest, count int) (x, y uint32) {
	malloc, err := prepare1(g.prepare, "malloc")
	if err != nil {
		b.Fatal(err)
	}
	p, err := malloc(uint32(8 * count))
	if err != nil || p == 0 {
		b.Fatalf("malloc: %#x, %v", p, err)
	}
	mem := g.memory()
	for i := range count {
		putF32(mem, p+uint32(4*i), float32(i))
		putF32(mem, p+uint32(4*(count+i)), 1)
	}
	return p, p + uint32(4*count)
}

// callSaxpy times g's prepared call of saxpy on 16 floats in its memory.
func callSaxpy(b *testing.B, g guest) {
	x, y := saxpyData(b, g, 16)
	call, err := g.prepare("saxpy", []uint64{f32param(0.5), uint64(x), uint64(y), uint64(y), 16})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := call(); err != nil {
			b.Fatal(err)
		}
	}
}
