package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
)

// slowTrip is a pipeline line that passes images through test.Tripwire,
// which sleeps a little at each call: a run long enough to be killed.
const slowTrip = "  - {name: trip, op: test.Tripwire, inputs: [gamma]}"

func slowOp() func() error { return func() error { time.Sleep(10 * time.Millisecond); return nil } }

// childEnv names the pipeline file a test's child process runs; see
// runChild.
const childEnv = "DYNOP_PIPELINE_TEST_CHILD"

// childPluginEnv names a plugin file for runChild's host; childShardEnv
// the shard ("I/N") the child runs, and childOutEnv its output
// directory, if set.
const (
	childPluginEnv = "DYNOP_PIPELINE_TEST_PLUGIN"
	childShardEnv  = "DYNOP_PIPELINE_TEST_SHARD"
	childOutEnv    = "DYNOP_PIPELINE_TEST_OUT"
)

// runChild is TestMain's: in a child process started by
// TestKilledRunResumes it runs the pipeline file $DYNOP_PIPELINE_TEST_CHILD
// with Options.Resume until it is killed or done.
//
// With $DYNOP_PIPELINE_TEST_PLUGIN set (BenchmarkRunMemory), it runs the
// file once, with the plugin file at that path on the search path and
// without the test operator, for the parent to read its peak RSS.
func runChild() {
	file := os.Getenv(childEnv)
	lib := os.Getenv(childPluginEnv)
	ctx := context.Background()
	opts := dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true, NoDefaultPaths: true}
	if lib != "" {
		opts.Paths = []string{lib}
		opts.NoCache = true
	}
	h, err := dynop.Open(ctx, opts)
	if err == nil && lib == "" {
		err = h.Operators().Register(tripwire(1, slowOp()))
	}
	var spec *Spec
	if err == nil {
		spec, err = Load(file)
	}
	o := Options{Resume: lib == "", Workers: 2, OutDir: os.Getenv(childOutEnv)}
	if sh := os.Getenv(childShardEnv); sh != "" && err == nil {
		o.Shard, err = ParseShard(sh)
	}
	var p *Pipeline
	if err == nil {
		p, err = Compile(ctx, h, spec, o)
	}
	if err == nil {
		_, err = p.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestKilledRunResumes: a run killed (SIGKILL) at a random moment, several
// times over, then resumed, writes the outputs of one uninterrupted run,
// byte for byte; the resumed run runs none of the inputs the journal
// showed done with their outputs there.
func TestKilledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	h := runHost(t, tripwire(1, slowOp()))
	ref := setup(t, 40, 2, "skip", slowTrip, "trip")
	badInputs(t, ref)
	if _, _, err := compileRun(t, h, ref, Options{}); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, filepath.Join(filepath.Dir(ref), "out"))
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			file := setup(t, 40, 2, "skip", slowTrip, "trip")
			badInputs(t, file)
			out := filepath.Join(filepath.Dir(file), "out")
			rng := rand.New(rand.NewPCG(seed, 23))
			for kill := range 3 {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), childEnv+"="+file)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(30+rng.IntN(90)) * time.Millisecond)
				cmd.Process.Kill()
				err := cmd.Wait()
				t.Logf("kill %d: %v; %d outputs so far", kill, err, len(dirFiles(t, out)))
			}
			done := doneInJournal(t, out)
			sum, _, err := compileRun(t, h, file, Options{Resume: true})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Resumed != done {
				t.Errorf("resumed %d inputs; the journal showed %d done", sum.Resumed, done)
			}
			if sum.Resumed+sum.Images+len(sum.Skipped) != 42 {
				t.Errorf("resumed %d + ran %d + skipped %d inputs, of 42", sum.Resumed, sum.Images, len(sum.Skipped))
			}
			got := readAll(t, out) // temporary files the kills left are gone too
			if !maps.EqualFunc(got, want, slices.Equal) {
				t.Errorf("outputs after kills and a resume %v differ from an uninterrupted run's %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
		})
	}
}

// doneInJournal counts the inputs the journal in dir shows done with
// their outputs there.
func doneInJournal(t *testing.T, dir string) int {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, ".dynop-journal-*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("journals in %s: %v", dir, paths)
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Input == nil {
			continue // the header, or a line cut short
		}
		ok := e.Status == "done"
		for _, o := range e.Outputs {
			if _, err := os.Stat(o); err != nil {
				ok = false
			}
		}
		done[strings.Join(e.Input, "\n")] = ok
	}
	n := 0
	for _, ok := range done {
		if ok {
			n++
		}
	}
	return n
}

// TestFailedRunKeepsItsOutputsAndResumes: a run that stops at a failing
// node keeps the outputs of the batches it finished, its journal lists
// them, and a resumed run runs only the rest.
func TestFailedRunKeepsItsOutputsAndResumes(t *testing.T) {
	fail := true
	h := runHost(t, tripwire(3, func() error {
		if fail {
			return errors.New("disk on fire")
		}
		return nil
	}))
	file := setup(t, 8, 2, "stop", slowTrip, "trip")
	out := filepath.Join(filepath.Dir(file), "out")
	_, _, err := compileRun(t, h, file, Options{Workers: 1, Prefetch: 1})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failing run: %v", err)
	}
	kept := dirFiles(t, out)
	if len(kept) != 4 { // batches 1 and 2; the third call, batch 3's, fails
		t.Fatalf("the failed run kept %v, want the 4 outputs of its first two batches", kept)
	}
	fail = false
	sum, _, err := compileRun(t, h, file, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 4 || sum.Images != 4 || len(dirFiles(t, out)) != 8 {
		t.Errorf("resumed run: resumed %d, ran %d; output dir %v", sum.Resumed, sum.Images, dirFiles(t, out))
	}
	sum, _, err = compileRun(t, h, file, Options{Resume: true})
	if err != nil || sum.Resumed != 8 || sum.Images != 0 {
		t.Errorf("resuming a finished run: %v, resumed %d, ran %d", err, sum.Resumed, sum.Images)
	}
}

// TestOutputThatCannotBeWritten: an output that cannot be written (here a
// directory in its place, as a full disk would refuse it) stops the run
// naming the file and the journal; the outputs before it are intact, and
// a resume once it can be written finishes the run.
func TestOutputThatCannotBeWritten(t *testing.T) {
	h := runHost(t)
	file := setup(t, 6, 2, "stop", "", "gamma")
	out := filepath.Join(filepath.Dir(file), "out")
	block := filepath.Join(out, "img3.png", "x")
	if err := os.MkdirAll(block, 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := compileRun(t, h, file, Options{Workers: 1})
	if !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), filepath.Join(out, "img3.png")) || !strings.Contains(err.Error(), "run again with --resume") {
		t.Fatalf("blocked output: %v", err)
	}
	if got := dirFiles(t, out); !slices.Equal(got, []string{"img0.png", "img1.png", "img2.png", "img3.png"}) {
		t.Errorf("after the failure the output dir holds %v", got)
	}
	if err := os.RemoveAll(filepath.Join(out, "img3.png")); err != nil {
		t.Fatal(err)
	}
	sum, _, err := compileRun(t, h, file, Options{Resume: true})
	if err != nil || sum.Resumed != 3 || sum.Images != 3 {
		t.Errorf("resume: %v, resumed %d, ran %d", err, sum.Resumed, sum.Images)
	}
}

// TestResumeRefusesAnotherJournal: a journal of another pipeline file,
// of this one before it changed, or of another shard is refused, naming
// both; a journal cut short in its last line is read.
func TestResumeRefusesAnotherJournal(t *testing.T) {
	h := runHost(t)
	file := setup(t, 3, 2, "stop", "", "gamma")
	out := filepath.Join(filepath.Dir(file), "out")
	if _, _, err := compileRun(t, h, file, Options{}); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(out, ".dynop-journal-t.jsonl")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the last line short: the resume reads the rest.
	if err := os.WriteFile(journal, data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, _, err := compileRun(t, h, file, Options{Resume: true}); err != nil || sum.Resumed != 2 || sum.Images != 1 {
		t.Errorf("resume from a journal cut short: %v, resumed %d, ran %d", err, sum.Resumed, sum.Images)
	}

	other := filepath.Join(filepath.Dir(file), "other.yaml")
	src, _ := os.ReadFile(file)
	if err := os.WriteFile(other, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = compileRun(t, h, other, Options{Resume: true, Journal: journal})
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "it records pipeline "+file+", and this run is of "+other) {
		t.Errorf("resume with another pipeline's journal: %v", err)
	}
	if err := os.WriteFile(file, append(src, []byte("# changed\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = compileRun(t, h, file, Options{Resume: true})
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "the file has changed since") {
		t.Errorf("resume after the pipeline changed: %v", err)
	}
	_, _, err = compileRun(t, h, file, Options{Resume: true, Journal: journal, Shard: Shard{0, 2}})
	if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), `this run is of shard "0/2"`) && !strings.Contains(err.Error(), "has changed") {
		t.Errorf("resume of another shard: %v", err)
	}
	spec, _ := Load(file)
	if _, err := Compile(context.Background(), h, spec, Options{Resume: true, Atomic: true}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "an atomic run keeps no journal") {
		t.Errorf("Atomic with Resume: %v", err)
	}
	if err := os.WriteFile(journal, []byte("not a journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := compileRun(t, h, other, Options{Resume: true, Journal: journal}); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "it is not a dynop run journal") {
		t.Errorf("resume from a file that is not a journal: %v", err)
	}
}

// TestTemporariesRemoved: a run removes the temporary file a killed run
// left beside one of its outputs, and leaves other hidden files alone.
func TestTemporariesRemoved(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 2, "stop", "", "gamma")
	out := filepath.Join(filepath.Dir(file), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	left, other := filepath.Join(out, ".img1.png.tmp4711"), filepath.Join(out, ".notes.tmp1")
	for _, f := range []string{left, other} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := compileRun(t, h, file, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file of img1.png is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a hidden file that is no output's temporary was removed: %v", err)
	}
}
