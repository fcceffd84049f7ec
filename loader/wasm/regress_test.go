package wasm_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func probe(t testing.TB) string {
	return fixture(t, "review_probe.wasm", func(t testing.TB) string {
		return cbuild.Wasm(t, "review_probe.wasm", []string{"loader/wasm/testdata/probe.c"}, `-DPROBE_ID="review.plugin.probe"`)
	})
}

func probeHeap(t testing.TB) string {
	return fixture(t, "review_probeheap.wasm", func(t testing.TB) string {
		return cbuild.Wasm(t, "review_probeheap.wasm", []string{"loader/wasm/testdata/probe.c"}, `-DPROBE_ID="review.plugin.probeheap"`, "-DPROBE_HEAP")
	})
}

func batchOf(t testing.TB, ts ...*tensor.Tensor) *tensor.Batch {
	t.Helper()
	b, err := tensor.NewBatch(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func f32(t testing.TB, v []float32, shape ...int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func vals(t testing.TB, x *tensor.Tensor) []float32 {
	t.Helper()
	c, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensor.Values[float32](c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Several samples, two inputs and two outputs, a strided input: baseline.
func TestRegressBatchPair(t *testing.T) {
	h := openHost(t, dynop.Options{}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Pair", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	big := f32(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	crop, err := big.Crop([]int64{1, 1}, []int64{2, 2}) // 5 6 / 8 9, byte_offset, strided
	if err != nil {
		t.Fatal(err)
	}
	a := batchOf(t, f32(t, []float32{1, 2, 3}, 1, 3), crop, f32(t, []float32{}, 0, 2))
	b := batchOf(t, f32(t, []float32{10, 20, 30}, 1, 3), f32(t, []float32{1, 1, 1, 1}, 2, 2), f32(t, []float32{}, 0, 2))
	outs, err := inst.Exec(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := vals(t, outs[0].Samples()[0]); !slices.Equal(got, []float32{11, 22, 33}) {
		t.Errorf("s[0] = %v", got)
	}
	if got := vals(t, outs[1].Samples()[1]); !slices.Equal(got, []float32{4, 5, 7, 8}) {
		t.Errorf("d[1] = %v", got)
	}
}

// An operator without inputs.
func TestRegressNoInputs(t *testing.T) {
	h := openHost(t, dynop.Options{}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Iota", schema.Args{"n": int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	outs, err := inst.Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := vals(t, outs[0].Samples()[0]); !slices.Equal(got, []float32{0, 1, 2, 3, 4}) {
		t.Errorf("y = %v", got)
	}
}

// A plugin whose register registers operator structs it mallocs (valid in
// the native ABI) cannot create a single operator instance: every
// instance comes from a replica, whose heap differs from the first
// instance's (the first ran dynop_wasm_info before register).
func TestRegressHeapOperatorStruct(t *testing.T) {
	h := openHost(t, dynop.Options{}, probeHeap(t))
	inst, err := h.NewOperator(context.Background(), "probe.Iota", schema.Args{"n": int64(3)})
	if err != nil {
		t.Fatalf("NewOperator: %v", err)
	}
	inst.Close()
}

// An output larger than the memory limit fails cleanly with ErrMemoryLimit,
// naming the plugin and operator (and the call: setup/run).
func TestRegressHugeOutput(t *testing.T) {
	h := openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{MemoryLimit: 16 << 20}}}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Iota", schema.Args{"n": int64(64 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	_, err = inst.Exec(context.Background())
	testutil.WantErr(t, err, wasm.ErrMemoryLimit, `plugin "review.plugin.probe"`, `operator "probe.Iota"`)
}

// A trap or a deadline in an instance that merely holds large tensors is
// reported as ErrMemoryLimit: atLimit labels any failure once memory is
// within 8 MiB of the limit, whatever the cause.
func TestRegressTrapNotMemoryLimit(t *testing.T) {
	h := openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{MemoryLimit: 32 << 20, CallTimeout: 2 * time.Second}}}, wgood(t))
	x := floats(t, make([]float32, 3<<20), 3<<20) // 12 MiB in, 12 MiB out
	for _, mode := range []string{"trap", "loop"} {
		inst, err := h.NewOperator(context.Background(), "wgood.Misbehave", schema.Args{"mode": mode})
		if err != nil {
			t.Fatal(err)
		}
		_, err = inst.Exec(context.Background(), x)
		inst.Close()
		if errors.Is(err, wasm.ErrMemoryLimit) {
			t.Errorf("%s: reported as reaching the memory limit: %v", mode, err)
		}
	}
}

// After a trap, the same operator instance re-attaches (create, setup with
// the run's inputs) and runs.
func TestRegressReattach(t *testing.T) {
	h := openHost(t, dynop.Options{}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Pair", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	nan := float32(math.NaN())
	a := batchOf(t, f32(t, []float32{1, 2}, 2), f32(t, []float32{nan, 2}, 2))
	b := batchOf(t, f32(t, []float32{10, 20}, 2), f32(t, []float32{10, 20}, 2))
	descs, err := inst.Setup([]*tensor.Batch{a, b})
	if err != nil {
		t.Fatal(err)
	}
	alloc := func() []*tensor.Batch {
		var outs []*tensor.Batch
		for _, d := range descs {
			o, err := d.Alloc()
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o)
		}
		return outs
	}
	outs := alloc()
	err = inst.Run(context.Background(), outs, []*tensor.Batch{a, b})
	testutil.WantErr(t, err, wasm.ErrTrap, `operator "probe.Pair" (plugin "review.plugin.probe"): run: wasm: `)
	a2 := batchOf(t, f32(t, []float32{1, 2}, 2), f32(t, []float32{3, 4}, 2))
	b2 := batchOf(t, f32(t, []float32{10, 20}, 2), f32(t, []float32{10, 20}, 2))
	if err := inst.Run(context.Background(), outs, []*tensor.Batch{a2, b2}); err != nil {
		t.Fatalf("run after a trap: %v", err)
	}
	if got := vals(t, outs[0].Samples()[1]); !slices.Equal(got, []float32{13, 24}) {
		t.Errorf("s[1] = %v", got)
	}
}

// Many goroutines create, run and close instances (some trapping) while
// the host closes under them: no race, no deadlock, no panic.
func TestRegressStressClose(t *testing.T) {
	opts := dynop.Options{NoDefaultPaths: true, NoRegistered: true, Paths: []string{probe(t)}, CacheDir: cacheDir(t), Logger: nopLogger()}
	h, err := dynop.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				inst, err := h.NewOperator(context.Background(), "probe.Pair", nil)
				if err != nil {
					return
				}
				x := float32(i)
				if (i+w)%3 == 0 {
					x = nan
				}
				inst.Exec(context.Background(), batchOf(t, f32(t, []float32{x, 1}, 2)), batchOf(t, f32(t, []float32{1, 1}, 2)))
				inst.Exec(context.Background(), batchOf(t, f32(t, []float32{1, 1}, 2)), batchOf(t, f32(t, []float32{1, 1}, 2)))
				inst.Close()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	cerr := make(chan error, 1)
	go func() { cerr <- h.Close(context.Background()) }()
	select {
	case err := <-cerr:
		t.Logf("close: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Host.Close deadlocked")
	}
	close(done)
	wg.Wait()
}

// Scanning a wasm file (Loader.Inspect) ignores the host's options: it
// compiles with a cache under os.UserCacheDir even when the host says
// NoCache, or names another CacheDir.
func TestRegressInspectIgnoresCacheOptions(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	mod := filepath.Join(dir, "probe.wasm")
	b, err := os.ReadFile(probe(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := dynop.Open(context.Background(), dynop.Options{Paths: []string{mod}, NoDefaultPaths: true, NoRegistered: true, NoCache: true, Logger: nopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	if _, err := os.Stat(filepath.Join(xdg, "dynop", "wasm")); err == nil {
		t.Errorf("a host opened with NoCache wrote a compilation cache to %s", filepath.Join(xdg, "dynop", "wasm"))
	}
}

// A module that runs out of memory under the limit (its malloc of a 40 MiB
// scratch buffer fails at 51 of 64 MiB) is not reported as ErrMemoryLimit:
// atLimit only looks at whether memory is within 8 MiB of the limit.
func TestRegressNoMemoryNotLabelled(t *testing.T) {
	h := openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{MemoryLimit: 64 << 20}}}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Iota", schema.Args{"n": int64(10 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	_, err = inst.Exec(context.Background())
	testutil.WantErr(t, err, wasm.ErrMemoryLimit, "no memory for the scratch buffer")
}

// Setup's errors from layout/grow say "run".
func TestRegressSetupErrorSaysRun(t *testing.T) {
	h := openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{MemoryLimit: 16 << 20}}}, probe(t))
	inst, err := h.NewOperator(context.Background(), "probe.Pair", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	x := batchOf(t, f32(t, make([]float32, 4<<20), 4<<20))
	_, err = inst.Setup([]*tensor.Batch{x, x})
	testutil.WantErr(t, err, wasm.ErrMemoryLimit, `operator "probe.Pair" (plugin "review.plugin.probe"): setup: wasm: `)
}

// TestLoadRefusesNamedPipe: wasm.Load of a named pipe blocked reading it
// for ever; now it is refused at once, naming it (issue 21, item 3).
func TestLoadRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p.wasm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := wasm.Load(context.Background(), fifo, dynop.Options{NoCache: true}); done <- err }()
	select {
	case err := <-done:
		testutil.WantErr(t, err, dynop.ErrFormat, fifo+": ", "not a regular file (a named pipe)")
	case <-time.After(5 * time.Second):
		t.Fatal("Load of a named pipe blocks")
	}
}
