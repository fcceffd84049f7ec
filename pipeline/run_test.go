package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// runHost opens a host with the image plugin and the operators of
// extra registered directly.
func runHost(t testing.TB, extra ...op.Operator) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	for _, o := range extra {
		if err := h.Operators().Register(o); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// writePNGs writes n w×h RGB test images named img0.png... into dir.
func writePNGs(t *testing.T, dir string, n, w, h int) []string {
	t.Helper()
	var paths []string
	for k := range n {
		img := image.NewNRGBA(image.Rect(0, 0, w+k, h))
		for y := range h {
			for x := range w + k {
				img.Set(x, y, color.NRGBA{uint8(x * 7), uint8(y * 5), uint8(k * 40), 255})
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("img%d.png", k))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

const demoYAML = `name: t
batch_size: %d
on_error: %s
inputs:
  photos: {files: [in/]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos]}
  - {name: gray, op: image.Grayscale, inputs: [decode]}
  - {name: contrast, op: image.Adjust, inputs: [gray], args: {contrast: 1.5}}
  - {name: gamma, op: image.Gamma, inputs: [contrast], args: {gamma: 0.7}}
%s
outputs:
  thumbs: {from: %s, dir: out}
`

// setup writes a pipeline over n images in a new directory and returns
// the pipeline file's path.
func setup(t *testing.T, n, batch int, onError, extraOps, from string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePNGs(t, filepath.Join(dir, "in"), n, 23, 17)
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, demoYAML, batch, onError, extraOps, from), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func compileRun(t *testing.T, h Registries, file string, opts Options) (*Summary, *Pipeline, error) {
	t.Helper()
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(context.Background(), h, spec, opts)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { p.Close() })
	sum, err := p.Run(context.Background())
	return sum, p, err
}

// dirFiles lists dir, hidden entries included.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".dynop-journal-") { // the run's journal
			names = append(names, e.Name())
		}
	}
	return names
}

func TestRunWritesOutputsFusedOrNot(t *testing.T) {
	h := runHost(t)
	file := setup(t, 5, 2, "stop", "", "gamma")
	out := filepath.Join(filepath.Dir(file), "out")
	var progress []Progress
	// Two workers share each batch of two; the last batch has one sample:
	// 5 calls of each node.
	sum, p, err := compileRun(t, h, file, Options{Trace: true, Workers: 2, Progress: func(pr Progress) { progress = append(progress, pr) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Images != 5 || sum.Batches != 3 || len(sum.Outputs) != 5 || len(progress) != 3 || progress[2] != (Progress{Batch: 3, Batches: 3, Images: 5}) {
		t.Fatalf("summary %+v, progress %+v", sum, progress)
	}
	if got := dirFiles(t, out); !slices.Equal(got, []string{"img0.png", "img1.png", "img2.png", "img3.png", "img4.png"}) {
		t.Fatalf("output dir holds %v", got)
	}
	var nodes []string
	for _, n := range sum.Nodes {
		nodes = append(nodes, n.Node)
		if n.Calls != 5 {
			t.Errorf("node %s: %d calls, want 5", n.Node, n.Calls)
		}
	}
	slices.Sort(nodes)
	if want := []string{"contrast+gamma", "decode", "encode(thumbs)", "gray"}; !slices.Equal(nodes, want) {
		t.Errorf("summary nodes %v, want %v", nodes, want)
	}
	fused := readAll(t, out)

	var trace bytes.Buffer
	if err := p.WriteTrace(&trace); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Name, Ph string
			Dur      float64
			TID      int
		}
	}
	if err := json.Unmarshal(trace.Bytes(), &tr); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	spans, workers := map[string]int{}, map[int]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			spans[e.Name]++
			workers[e.TID]++
		}
	}
	if spans["decode"] != 5 || spans["contrast+gamma"] != 5 || spans["batch 3"] != 1 {
		t.Errorf("trace spans %v", spans)
	}
	// Row 0 holds the batches, rows 1 and 2 the two workers' nodes.
	if workers[1] == 0 || workers[2] == 0 || len(workers) != 3 {
		t.Errorf("spans per trace row %v: want work on both workers", workers)
	}

	if _, _, err := compileRun(t, h, file, Options{NoFuse: true, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	plain := readAll(t, out)
	for name, b := range fused {
		if !bytes.Equal(b, plain[name]) {
			t.Errorf("%s differs between the fused and the unfused run", name)
		}
	}
	img, err := png.Decode(bytes.NewReader(fused["img2.png"]))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 25 || b.Dy() != 17 {
		t.Errorf("img2.png is %v, want 25x17", b)
	}
	if _, gray := img.(*image.Gray); !gray {
		t.Errorf("img2.png is %T, want gray", img)
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, name := range dirFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		m[name] = b
	}
	return m
}

// badInputs adds a file that is not an image and a truncated PNG to the
// pipeline's input directory.
func badInputs(t *testing.T, file string) {
	t.Helper()
	in := filepath.Join(filepath.Dir(file), "in")
	if err := os.WriteFile(filepath.Join(in, "img1b-notes.png"), []byte("these are notes, not pixels"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(in, "img0.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "img3b-cut.png"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputsSkipOrStop(t *testing.T) {
	h := runHost(t)
	file := setup(t, 4, 3, "skip", "", "gamma")
	badInputs(t, file)
	sum, _, err := compileRun(t, h, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Images != 4 || len(sum.Skipped) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for i, want := range []string{"img1b-notes.png", "img3b-cut.png"} {
		if s := sum.Skipped[i]; !strings.HasSuffix(s.File, want) || !strings.Contains(s.Error, `node "decode"`) {
			t.Errorf("skipped[%d] = %+v, want %s with the decoder's error", i, s, want)
		}
	}
	out := filepath.Join(filepath.Dir(file), "out")
	if got := dirFiles(t, out); len(got) != 4 || slices.Contains(got, "img1b-notes.png") {
		t.Errorf("output dir holds %v", got)
	}

	file = setup(t, 4, 3, "stop", "", "gamma")
	badInputs(t, file)
	_, _, err = compileRun(t, h, file, Options{})
	if err == nil || !strings.Contains(err.Error(), "img1b-notes.png") || !strings.Contains(err.Error(), "on_error: skip would skip it") {
		t.Fatalf("stop on a bad input: %v", err)
	}
	if got := dirFiles(t, filepath.Join(filepath.Dir(file), "out")); len(got) != 0 {
		t.Errorf("a failed run left %v in the output dir", got)
	}
}

func TestOutputDirCannotBeWritten(t *testing.T) {
	h := runHost(t)
	file := setup(t, 1, 1, "stop", "", "gamma")
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := compileRun(t, h, file, Options{OutDir: filepath.Join(blocker, "out")})
	if !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "outputs.thumbs") || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("unwritable output dir: %v", err)
	}
}

// tripwire is an operator that passes uint8 batches through and calls
// trip on its n-th call and every call after.
func tripwire(n int64, trip func() error) op.Operator {
	var calls atomic.Int64
	return op.Operator{
		Schema: schema.Op{Name: "test.Tripwire", Doc: "passes through; trips", Inputs: []schema.Input{{Name: "x"}}, Outputs: []schema.Output{{Name: "y"}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) {
			return &tripImpl{n: n, calls: &calls, trip: trip}, nil
		}},
	}
}

type tripImpl struct {
	n     int64
	calls *atomic.Int64
	trip  func() error
}

func (tr *tripImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (tr *tripImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	if tr.calls.Add(1) >= tr.n {
		if err := tr.trip(); err != nil {
			return err
		}
	}
	for k := range in[0].Len() {
		if err := out[0].Sample(k).CopyFrom(in[0].Sample(k)); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// TestFailureOrCancellationMidRunLeavesNoOutput: with Options.Atomic, a
// run that fails or is cancelled writes nothing.
func TestFailureOrCancellationMidRunLeavesNoOutput(t *testing.T) {
	const trip = "  - {name: trip, op: test.Tripwire, inputs: [gamma]}"
	t.Run("node fails", func(t *testing.T) {
		h := runHost(t, tripwire(2, func() error { return errors.New("disk on fire") }))
		file := setup(t, 6, 2, "stop", trip, "trip")
		_, _, err := compileRun(t, h, file, Options{Atomic: true})
		if err == nil || !strings.Contains(err.Error(), `node "trip" (operator test.Tripwire)`) || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("failing node: %v", err)
		}
		if got := dirFiles(t, filepath.Join(filepath.Dir(file), "out")); len(got) != 0 {
			t.Errorf("a failed run left %v in the output dir", got)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		h := runHost(t, tripwire(2, func() error { cancel(); return nil }))
		file := setup(t, 6, 2, "skip", trip, "trip")
		spec, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(ctx, h, spec, Options{Atomic: true})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run: %v", err)
		}
		if got := dirFiles(t, filepath.Join(filepath.Dir(file), "out")); len(got) != 0 {
			t.Errorf("a cancelled run left %v in the output dir", got)
		}
	})
}

func TestInputOverrideAndValidation(t *testing.T) {
	h := runHost(t)
	file := setup(t, 3, 8, "stop", "", "gamma")
	other := t.TempDir()
	writePNGs(t, other, 2, 9, 9)
	out := t.TempDir()
	sum, _, err := compileRun(t, h, file, Options{Inputs: map[string][]string{"photos": {other}}, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Images != 2 || len(dirFiles(t, out)) != 2 {
		t.Errorf("override: %+v", sum)
	}
	_, _, err = compileRun(t, h, file, Options{Inputs: map[string][]string{"fotos": {other}}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `input "fotos"; the pipeline's inputs are photos`) {
		t.Errorf("override of an unknown input: %v", err)
	}
	// Validation runs against the host's schemas and cites the line.
	bad := filepath.Join(filepath.Dir(file), "bad.yaml")
	os.WriteFile(bad, []byte("inputs: {photos: {files: [in/]}}\noperators:\n  - {name: d, op: image.Decode, inputs: [photos], args: {chanels: 3}}\noutputs: {o: {from: d}}\n"), 0o644)
	_, _, err = compileRun(t, h, bad, Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "bad.yaml:3:") || !strings.Contains(err.Error(), `did you mean "channels"`) {
		t.Errorf("invalid pipeline: %v", err)
	}
}

// TestReadFileReusesBuffers: files are read into buffers handed back by
// earlier batches, the smallest that fits, with os.ReadFile's results:
// the whole file, empty for an empty one, all of a file whose size the
// file system does not know (/proc), and the file system's error.
func TestReadFileReusesBuffers(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, bytes.Repeat([]byte{byte(n)}, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	big, small, empty := write("big", 5000), write("small", 300), write("empty", 0)
	p := &Pipeline{opts: Options{Prefetch: 1}, spec: &Spec{batchSize: 2}, files: [][]string{{big, small}}}
	a, err := p.readFile(big)
	if err != nil || len(a) != 5000 || a[4999] != byte(5000%256) {
		t.Fatalf("readFile(big): %d bytes, %v", len(a), err)
	}
	b, _ := p.readFile(small)
	p.handBack(&batch{read: [][]byte{a, b}})
	again, err := p.readFile(small) // the 300-byte buffer fits, the smallest that does
	if err != nil || len(again) != 300 || &again[:1][0] != &b[:1][0] {
		t.Errorf("a file of the small one's size was not read into its buffer (%d bytes, %v)", len(again), err)
	}
	if e, err := p.readFile(empty); err != nil || len(e) != 0 {
		t.Errorf("readFile(empty) = %d bytes, %v", len(e), err)
	}
	want, _ := os.ReadFile("/proc/self/status")
	if got, err := p.readFile("/proc/self/status"); err != nil || len(got) < len(want)/2 || !bytes.HasPrefix(got, []byte("Name:")) {
		t.Errorf("readFile of a /proc file: %d bytes (os.ReadFile: %d), %v", len(got), len(want), err)
	}
	if _, err := p.readFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("readFile of a missing file: %v", err)
	}
	p.handBack(&batch{read: [][]byte{make([]byte, 1), make([]byte, 2), make([]byte, 3)}})
	if len(p.spare) > 2 {
		t.Errorf("%d spare buffers kept; the batches in flight hold 2", len(p.spare))
	}
}
