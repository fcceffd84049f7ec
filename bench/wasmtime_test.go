package bench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v37"

	"github.com/dynop/dynop/bench/internal/engines"
)

// The checks Wasmtime must pass before dynop could run plugins on it
// (issue 27): an epoch deadline stops a runaway call (a loop, a
// recursion) in time, a bottomless recursion and a grow past the memory
// limit fail cleanly, and the engine goes on working; stores used from many goroutines at once; and
// Wasmtime's signal handlers (it catches a wasm out-of-bounds access as
// a SIGSEGV) living with Go's, under the race detector and with the
// collector running all the time.

// wtTestDeadline is the deadline of the tests' runaway calls.
const wtTestDeadline = 50 * time.Millisecond

// wtTestEngine returns a Wasmtime engine with epoch interruption and its
// ticker, and engines.c compiled for it; both go at the end of the test.
func wtTestEngine(t *testing.T) (*wtEngine, *wasmtime.Module) {
	t.Helper()
	code := enginesWasm(t, false)
	e := newWtEngine(wtEpoch)
	t.Cleanup(e.close)
	module, err := wasmtime.NewModule(e.engine, code)
	if err != nil {
		t.Fatal(err)
	}
	return e, module
}

// isInterrupt reports whether err is Wasmtime's trap for an epoch
// deadline, from Func.Call or an unchecked call.
func isInterrupt(err error) bool {
	var trap *wasmtime.Trap
	if errors.As(err, &trap) {
		code := trap.Code()
		return code != nil && *code == wasmtime.Interrupt
	}
	var te *engines.TrapError
	return errors.As(err, &te) && te.Code == wasmtime.Interrupt
}

// spinUntilStopped calls spin (which never returns) with the store's
// epoch deadline at d and returns how long the call took; it fails the
// test unless the call ended with the interrupt trap.
func spinUntilStopped(t testing.TB, w *wtInstance, d time.Duration) time.Duration {
	t.Helper()
	spin := w.inst.GetFunc(w.store, "spin")
	w.store.SetEpochDeadline(w.e.ticks(d))
	start := time.Now()
	_, err := spin.Call(w.store)
	took := time.Since(start)
	if !isInterrupt(err) {
		t.Errorf("spin: want the interrupt trap, got %v", err)
	}
	return took
}

// checkSaxpy runs saxpy on n floats in w's memory and checks the result.
func checkSaxpy(t testing.TB, w *wtInstance, n int) {
	t.Helper()
	malloc, err := prepare1(w.prepare, "malloc")
	if err != nil {
		t.Fatal(err)
	}
	p, err := malloc(uint32(8 * n))
	if err != nil || p == 0 {
		t.Fatalf("malloc: %#x, %v", p, err)
	}
	x, y := p, p+uint32(4*n)
	mem := w.memory()
	for i := range n {
		putF32(mem, x+uint32(4*i), float32(i))
		putF32(mem, y+uint32(4*i), 1)
	}
	call, err := w.prepare("saxpy", []uint64{f32param(0.5), uint64(x), uint64(y), uint64(y), uint64(n)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(); err != nil {
		t.Fatalf("saxpy: %v", err)
	}
	mem = w.memory()
	for i := range n {
		if got, want := getF32(mem, y+uint32(4*i)), 0.5*float32(i)+1; got != want {
			t.Fatalf("saxpy: y[%d] = %g, want %g", i, got, want)
		}
	}
	free, err := prepare1(w.prepare, "free")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := free(p); err != nil {
		t.Fatal(err)
	}
}

func putF32(mem []byte, at uint32, v float32) {
	b := math.Float32bits(v)
	mem[at], mem[at+1], mem[at+2], mem[at+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
}

func getF32(mem []byte, at uint32) float32 {
	return math.Float32frombits(uint32(mem[at]) | uint32(mem[at+1])<<8 | uint32(mem[at+2])<<16 | uint32(mem[at+3])<<24)
}

// TestWasmtimeDeadline: an endless loop is stopped by the epoch deadline
// within twice the deadline, through Func.Call and through the unchecked
// call; the trap is the interrupt; and the engine then runs another
// instance normally.
func TestWasmtimeDeadline(t *testing.T) {
	e, module := wtTestEngine(t)
	w, err := newWtInstance(e, module)
	if err != nil {
		t.Fatal(err)
	}
	defer w.store.Close()
	took := spinUntilStopped(t, w, wtTestDeadline)
	t.Logf("Func.Call: spin stopped after %v (deadline %v)", took.Round(10*time.Microsecond), wtTestDeadline)
	if took < wtTestDeadline-2*engEpochTick || took > 2*wtTestDeadline {
		t.Errorf("spin stopped after %v: want between the deadline (%v) and twice it", took, wtTestDeadline)
	}

	u, err := engines.NewUnchecked(w.store, w.inst.GetFunc(w.store, "spin"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	u.SetDeadline(e.ticks(wtTestDeadline))
	start := time.Now()
	err = u.Call()
	took = time.Since(start)
	t.Logf("unchecked: spin stopped after %v", took.Round(10*time.Microsecond))
	if !isInterrupt(err) {
		t.Errorf("unchecked spin: want the interrupt trap, got %v", err)
	}
	if took < wtTestDeadline-2*engEpochTick || took > 2*wtTestDeadline {
		t.Errorf("unchecked spin stopped after %v: want between the deadline (%v) and twice it", took, wtTestDeadline)
	}

	// dynop discards an instance whose call trapped; the engine and the
	// compiled module go on.
	w2, err := newWtInstance(e, module)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.store.Close()
	checkSaxpy(t, w2, 1000)
}

// TestWasmtimeRunaways: the other ways a call runs away, each stopped,
// and a new instance on the same engine computes afterwards: a recursion
// with no loop (2^64 calls, 64 deep), which only a check at function
// entries stops (wazero v1.12 checks at loop headers only: see
// docs/WASM.md), by the epoch deadline within twice it; a recursion
// without end, by a trap; and a memory grow beyond the
// store's limit, refused (the module's malloc returns NULL).
func TestWasmtimeRunaways(t *testing.T) {
	e, module := wtTestEngine(t)
	fresh := func() *wtInstance {
		t.Helper()
		w, err := newWtInstance(e, module)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.store.Close)
		return w
	}
	t.Run("recurse", func(t *testing.T) {
		w := fresh()
		recurse := w.inst.GetFunc(w.store, "recurse")
		w.store.SetEpochDeadline(e.ticks(wtTestDeadline))
		start := time.Now()
		_, err := recurse.Call(w.store, int32(64))
		took := time.Since(start)
		t.Logf("recurse(64) stopped after %v (deadline %v)", took.Round(10*time.Microsecond), wtTestDeadline)
		if !isInterrupt(err) {
			t.Errorf("recurse(64): want the interrupt trap, got %v", err)
		}
		if took > 2*wtTestDeadline {
			t.Errorf("recurse(64) stopped after %v: want at most twice the deadline (%v)", took, wtTestDeadline)
		}
		checkSaxpy(t, fresh(), 100)
	})
	t.Run("bottomless", func(t *testing.T) {
		w := fresh()
		w.arm()
		_, err := w.inst.GetFunc(w.store, "bottomless").Call(w.store, int32(0))
		// The C stack lives in the module's memory (clang's shadow stack,
		// below the data), so it usually runs out first: it wraps below
		// address 0 and traps out of bounds. Either way the call traps.
		var trap *wasmtime.Trap
		if !errors.As(err, &trap) || trap.Code() == nil ||
			(*trap.Code() != wasmtime.StackOverflow && *trap.Code() != wasmtime.MemoryOutOfBounds) {
			t.Errorf("bottomless: want the stack overflow or the out-of-bounds trap, got %v", err)
		} else {
			t.Logf("bottomless: trap code %d", *trap.Code())
		}
		checkSaxpy(t, fresh(), 100)
	})
	t.Run("memory", func(t *testing.T) {
		const limit = 64 << 20
		w := fresh()
		w.store.Limiter(limit, -1, -1, -1, -1)
		malloc, err := prepare1(w.prepare, "malloc")
		if err != nil {
			t.Fatal(err)
		}
		if p, err := malloc(2 * limit); err != nil || p != 0 {
			t.Errorf("malloc(%d) under a limit of %d: %#x, %v; want NULL", 2*limit, limit, p, err)
		}
		if size := len(w.memory()); size > limit {
			t.Errorf("the memory grew to %d bytes, over the limit %d", size, limit)
		}
		checkSaxpy(t, w, 100) // the instance itself goes on
	})
}

// TestWasmtimeDeadlineConcurrent: 16 goroutines, each with its own store
// and instance of one module on one engine, each stop a runaway call by
// its deadline and then compute correctly, three times over, all at once
// (run it with -race).
func TestWasmtimeDeadlineConcurrent(t *testing.T) {
	const goroutines, rounds = 16, 3
	e, module := wtTestEngine(t)
	var (
		mu    sync.Mutex
		stops []time.Duration
		wg    sync.WaitGroup
	)
	for range goroutines {
		wg.Go(func() {
			w, err := newWtInstance(e, module)
			if err != nil {
				t.Error(err)
				return
			}
			defer w.store.Close()
			for range rounds {
				took := spinUntilStopped(t, w, wtTestDeadline)
				mu.Lock()
				stops = append(stops, took)
				mu.Unlock()
				// The trapped instance is replaced, as dynop does.
				w.store.Close()
				if w, err = newWtInstance(e, module); err != nil {
					t.Error(err)
					return
				}
				checkSaxpy(t, w, 256)
			}
		})
	}
	wg.Wait()
	slices.Sort(stops)
	if len(stops) == 0 {
		return
	}
	t.Logf("%d runaway calls on %d goroutines (GOMAXPROCS %d), deadline %v: stopped after %v (median), %v–%v",
		len(stops), goroutines, runtime.GOMAXPROCS(0), wtTestDeadline, stops[len(stops)/2].Round(10*time.Microsecond),
		stops[0].Round(10*time.Microsecond), stops[len(stops)-1].Round(10*time.Microsecond))
	// 16 spinning threads share the machine's cores, so a call notices
	// its deadline when the OS next runs it: the bound here is loose.
	if last := stops[len(stops)-1]; last > 20*wtTestDeadline {
		t.Errorf("a runaway call took %v to stop (deadline %v)", last, wtTestDeadline)
	}
}

// TestWasmtimeSignals: Wasmtime turns a wasm access outside the module's
// memory (a SIGSEGV in its guard region) into a trap, and after that, Go's
// own SIGSEGV handling (a nil dereference becomes a panic) still works:
// the two handlers live together.
func TestWasmtimeSignals(t *testing.T) {
	e, module := wtTestEngine(t)
	w, err := newWtInstance(e, module)
	if err != nil {
		t.Fatal(err)
	}
	defer w.store.Close()
	peek, err := prepare1(w.prepare, "peek")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := peek(0xFFFFFFF0)
		var trap *wasmtime.Trap
		if !errors.As(err, &trap) || trap.Code() == nil || *trap.Code() != wasmtime.MemoryOutOfBounds {
			t.Fatalf("peek outside the memory: want the out-of-bounds trap, got %v", err)
		}
		if err := goNilDeref(); err == nil {
			t.Fatal("a nil dereference in Go did not panic")
		}
	}
	checkSaxpy(t, w, 64)
}

// goNilDeref dereferences a nil pointer and returns the panic it
// recovers.
func goNilDeref() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	var p *[1 << 20]byte
	_ = p[len(p)/2]
	return nil
}

// TestWasmtimeGC runs wasm calls (correct ones, and runaway ones stopped
// by their deadline) on 4 goroutines while the collector runs all the time
// (GOGC=1 for the test, and a goroutine that allocates and collects) and
// stores are dropped to their finalizers: Wasmtime's signal handlers and
// memory live with Go's collector.
func TestWasmtimeGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	e, module := wtTestEngine(t)
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		var keep [][]byte
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			keep = append(keep, make([]byte, 64<<10))
			if len(keep) > 64 {
				keep = keep[:0]
			}
			if i%16 == 0 {
				runtime.GC()
			}
		}
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 40 {
				w, err := newWtInstance(e, module)
				if err != nil {
					t.Error(err)
					return
				}
				checkSaxpy(t, w, 4096)
				if i%10 == 0 {
					spinUntilStopped(t, w, 5*time.Millisecond)
				}
				if i%2 == 0 {
					w.store.Close()
				} // else the store's finalizer closes it
			}
		})
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	runtime.GC()
}
