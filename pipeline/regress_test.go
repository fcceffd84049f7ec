package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Regression: output names are made unique with "-N", but "-N" can be the
// name of another input: a-2.png, a.jpg, a.png give bases a-2, a, a-2.
func TestRegressionOutputNameCollision(t *testing.T) {
	h := runHost(t)
	file := setup(t, 1, 8, "stop", "", "gamma")
	in := filepath.Join(filepath.Dir(file), "in")
	png0, err := os.ReadFile(filepath.Join(in, "img0.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(in, "img0.png"))
	for _, name := range []string{"a-2.png", "a.jpg", "a.png"} {
		if err := os.WriteFile(filepath.Join(in, name), png0, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, _, err := compileRun(t, h, file, Options{})
	out := filepath.Join(filepath.Dir(file), "out")
	t.Logf("err: %v", err)
	if sum != nil {
		t.Logf("images %d, outputs %v", sum.Images, sum.Outputs)
	}
	t.Logf("output dir: %v", dirFiles(t, out))
	if err != nil || len(dirFiles(t, out)) != 3 {
		t.Errorf("3 inputs should give 3 outputs")
	}
}

// Regression: an output dir equal to the input dir overwrites the inputs.
func TestRegressionOutputDirIsInputDir(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 8, "stop", "", "gamma")
	in := filepath.Join(filepath.Dir(file), "in")
	before, _ := os.ReadFile(filepath.Join(in, "img0.png"))
	_, _, err := compileRun(t, h, file, Options{OutDir: in})
	after, _ := os.ReadFile(filepath.Join(in, "img0.png"))
	if err == nil && !bytes.Equal(before, after) {
		t.Errorf("the run silently replaced its input in/img0.png (%d bytes) by its output (%d bytes)", len(before), len(after))
	}
}

// Regression: a rename that fails during commit leaves the files moved
// before it in place, though the run reports failure.
func TestRegressionCommitFailureLeavesPartialOutput(t *testing.T) {
	h := runHost(t)
	file := setup(t, 3, 8, "stop", "", "gamma")
	out := filepath.Join(filepath.Dir(file), "out")
	if err := os.MkdirAll(filepath.Join(out, "img1.png", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := compileRun(t, h, file, Options{Atomic: true})
	t.Logf("err: %v", err)
	if err != nil {
		if got := dirFiles(t, out); len(got) != 1 {
			t.Errorf("failed run left %v in the output dir (img1.png is the blocking directory)", got)
		}
	}
}

// Regression: a second Run of one Pipeline reports the calls of both.
func TestRegressionSecondRunSummary(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 8, "stop", "", "gamma")
	spec, _ := Load(file)
	p, err := Compile(context.Background(), h, spec, Options{Trace: true, Workers: 1}) // a call per batch
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Run(context.Background())
	sum, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sum.Nodes {
		if n.Calls != sum.Batches {
			t.Errorf("node %s: %d calls in a run of %d batches", n.Node, n.Calls, sum.Batches)
		}
	}
}

// Regression: every input skipped: the run succeeds with no output.
func TestRegressionAllSkipped(t *testing.T) {
	h := runHost(t)
	file := setup(t, 1, 8, "skip", "", "gamma")
	in := filepath.Join(filepath.Dir(file), "in")
	os.WriteFile(filepath.Join(in, "img0.png"), []byte("not an image"), 0o644)
	sum, _, err := compileRun(t, h, file, Options{})
	t.Logf("err %v, images %d, skipped %d, outputs %d", err, sum.Images, len(sum.Skipped), len(sum.Outputs))
}

// Regression: two outputs into one directory written two ways ("/x/out/"
// and "/x/out") get no suffix: one overwrites the other silently.
func TestRegressionSameDirSpelledTwice(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 8, "stop", "", "gamma")
	dir := filepath.Dir(file)
	yaml := "inputs: {photos: {files: [in/]}}\noperators:\n  - {name: decode, op: image.Decode, inputs: [photos]}\n  - {name: gray, op: image.Grayscale, inputs: [decode]}\n" +
		"outputs:\n  color: {from: decode, dir: " + dir + "/out/}\n  mono: {from: gray, dir: " + dir + "/out}\n"
	f2 := filepath.Join(dir, "two.yaml")
	os.WriteFile(f2, []byte(yaml), 0o644)
	sum, _, err := compileRun(t, h, f2, Options{})
	t.Logf("err %v; outputs %v; dir %v", err, sum.Outputs, dirFiles(t, filepath.Join(dir, "out")))
	if err == nil && len(dirFiles(t, filepath.Join(dir, "out"))) != 4 {
		t.Errorf("2 inputs x 2 outputs gave %d files, no error", len(dirFiles(t, filepath.Join(dir, "out"))))
	}
}
