package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/plugins/npy"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkersMatchSerial: a run's outputs, skipped inputs and progress
// do not depend on the number of workers or of batches in flight: with
// 1, 2 and 8 workers and prefetch 1 to 4 they are those of a serial run
// (one worker, one batch at a time), byte for byte. The inputs include
// two that cannot be decoded, and batches smaller than the workers.
func TestWorkersMatchSerial(t *testing.T) {
	h := runHost(t)
	file := setup(t, 11, 3, "skip", "", "gamma")
	badInputs(t, file)
	out := filepath.Join(filepath.Dir(file), "out")
	type result struct {
		outputs  map[string][]byte
		images   int
		skipped  []Skipped
		progress []Progress
	}
	run := func(workers, prefetch int) result {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		var r result
		sum, _, err := compileRun(t, h, file, Options{Workers: workers, Prefetch: prefetch, Progress: func(p Progress) { r.progress = append(r.progress, p) }})
		if err != nil {
			t.Fatalf("%d workers, prefetch %d: %v", workers, prefetch, err)
		}
		r.outputs, r.images, r.skipped = readAll(t, out), sum.Images, sum.Skipped
		return r
	}
	serial := run(1, 1)
	if serial.images != 11 || len(serial.skipped) != 2 || len(serial.outputs) != 11 || len(serial.progress) != 5 {
		t.Fatalf("serial run: %d images, skipped %v, %d outputs, progress %v", serial.images, serial.skipped, len(serial.outputs), serial.progress)
	}
	for _, workers := range []int{1, 2, 8} {
		for prefetch := 1; prefetch <= 4; prefetch++ {
			got := run(workers, prefetch)
			what := fmt.Sprintf("%d workers, prefetch %d", workers, prefetch)
			if !maps.EqualFunc(got.outputs, serial.outputs, slices.Equal) {
				t.Errorf("%s: outputs differ from the serial run's", what)
			}
			if got.images != serial.images || !slices.Equal(got.skipped, serial.skipped) || !slices.Equal(got.progress, serial.progress) {
				t.Errorf("%s: %d images, skipped %v, progress %v; serial: %d, %v, %v", what, got.images, got.skipped, got.progress, serial.images, serial.skipped, serial.progress)
			}
		}
	}
}

// TestRunLeavesNoGoroutines: a run that succeeds, one that stops at a bad
// input and one that is cancelled all return with every goroutine they
// started gone.
func TestRunLeavesNoGoroutines(t *testing.T) {
	h := runHost(t)
	before := runtime.NumGoroutine()
	ok := setup(t, 7, 2, "skip", "", "gamma")
	if _, _, err := compileRun(t, h, ok, Options{Workers: 3, Prefetch: 3}); err != nil {
		t.Fatal(err)
	}
	stop := setup(t, 7, 2, "stop", "", "gamma")
	badInputs(t, stop)
	if _, _, err := compileRun(t, h, stop, Options{Workers: 3, Prefetch: 3}); err == nil {
		t.Fatal("a bad input under on_error: stop did not stop the run")
	}
	spec, err := Load(ok)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(context.Background(), h, spec, Options{Workers: 3, Prefetch: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	p.opts.Progress = func(Progress) { cancel() }
	if _, err := p.Run(ctx); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	// Goroutines that returned may take a moment to be counted out.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before the runs, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}

func TestNegativeWorkersOrPrefetch(t *testing.T) {
	h := runHost(t)
	spec, err := Load(setup(t, 1, 1, "stop", "", "gamma"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Workers: -1}, {Prefetch: -3}} {
		_, err := Compile(context.Background(), h, spec, o)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "each must be 0 (the default) or more") {
			t.Errorf("Compile with %+v: %v", o, err)
		}
	}
}

// TestNpyOutput: an output with format npy goes through npy.Encode and
// is written as NAME.npy, the image as a NumPy array; a host without the
// npy plugin refuses the file, naming the output and the plugin.
func TestNpyOutput(t *testing.T) {
	file := setup(t, 2, 2, "stop", "", "gamma")
	src, _ := os.ReadFile(file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(src), "dir: out}", "dir: out, format: npy}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(context.Background(), runHost(t), spec, Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "outputs.thumbs.format: format npy is written by operator npy.Encode (plugin dynop.plugin.npy), which this host does not have") {
		t.Fatalf("a host without npy.Encode: %v", err)
	}
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New(), npy.New()}, NoRegistered: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, _, err := compileRun(t, h, file, Options{}); err != nil {
		t.Fatal(err)
	}
	out := readAll(t, filepath.Join(filepath.Dir(file), "out"))
	for k, w := range []int64{23, 24} { // the test images' widths
		data := out[fmt.Sprintf("img%d.npy", k)]
		want, _ := npy.Header(tensor.Uint8, []int64{17, w, 1})
		if !bytes.HasPrefix(data, want) || int64(len(data)) != int64(len(want))+17*w {
			t.Errorf("img%d.npy: %d bytes starting %q; want the header of a 17x%dx1 uint8 array, then its pixels", k, len(data), data[:min(len(data), 80)], w)
		}
	}
}

// passOp is a pass-through operator whose factory counts the instances
// it makes in made; with shared, its instances are safe for concurrent
// calls (op.SharedImpl).
func passOp(name string, shared bool, made *atomic.Int64) op.Operator {
	return op.Operator{
		Schema: schema.Op{Name: name, Doc: "passes through", Inputs: []schema.Input{{Name: "x"}}, Outputs: []schema.Output{{Name: "y"}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) {
			made.Add(1)
			if shared {
				return sharedPass{}, nil
			}
			return passImpl{}, nil
		}},
	}
}

type passImpl struct{}

func (passImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (passImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	for k := range in[0].Len() {
		if err := out[0].Sample(k).CopyFrom(in[0].Sample(k)); err != nil {
			return err
		}
	}
	return nil
}

type sharedPass struct{ passImpl }

func (s sharedPass) Share() (op.Impl, bool) { return s, true }

// TestWorkersShareConcurrentOperators: each worker has its own instance
// of an operator, unless the operator declares itself safe for
// concurrent calls: then one is made and the workers share it.
func TestWorkersShareConcurrentOperators(t *testing.T) {
	var shared, own atomic.Int64
	h := runHost(t, passOp("test.Shared", true, &shared), passOp("test.Own", false, &own))
	file := setup(t, 8, 4, "stop", "  - {name: a, op: test.Shared, inputs: [gamma]}\n  - {name: b, op: test.Own, inputs: [a]}", "b")
	sum, _, err := compileRun(t, h, file, Options{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Images != 8 || shared.Load() != 1 || own.Load() != 4 {
		t.Errorf("4 workers over 8 images: %d images; %d instances of the shared operator (want 1), %d of the other (want 4)", sum.Images, shared.Load(), own.Load())
	}
}
