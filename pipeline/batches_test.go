package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBatches: a pipeline compiled with Options.Tensors yields its output
// node's tensors batch by batch, with the files each sample came from,
// the same as what Stream yields from those files' bytes, with 1 and 2
// workers; it writes nothing.
func TestBatches(t *testing.T) {
	h := runHost(t)
	file := setup(t, 7, 3, "stop", "", "gamma")
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Outputs(); !slices.Equal(got, []string{"thumbs"}) || spec.BatchSize() != 3 {
		t.Fatalf("spec outputs %v, batch size %d", got, spec.BatchSize())
	}
	streamed, files := memorySpec(t, 7, Options{Workers: 1})
	var want [][]byte
	for outs, err := range streamed.Stream(context.Background(), steps(files, 7)) {
		if err != nil {
			t.Fatal(err)
		}
		for j := range outs[0].Len() {
			data, _ := outs[0].Sample(j).Bytes()
			want = append(want, slices.Clone(data))
		}
	}
	for _, workers := range []int{1, 2} {
		p, err := Compile(context.Background(), h, spec, Options{Tensors: true, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if p.Samples() != 7 {
			t.Errorf("Samples() = %d, want 7", p.Samples())
		}
		var got [][]byte
		var sizes []int
		for step, err := range p.Batches(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if len(step.Outputs) != 1 || len(step.Files) != step.Outputs[0].Len() {
				t.Fatalf("a step of %d outputs and %d files", len(step.Outputs), len(step.Files))
			}
			sizes = append(sizes, step.Outputs[0].Len())
			for j := range step.Outputs[0].Len() {
				if wantFile := filepath.Join(filepath.Dir(file), "in", "img"+string(rune('0'+len(got)))+".png"); !slices.Equal(step.Files[j], []string{wantFile}) {
					t.Errorf("sample %d came from %v, want %s", len(got), step.Files[j], wantFile)
				}
				data, _ := step.Outputs[0].Sample(j).Bytes()
				got = append(got, data)
			}
		}
		if !slices.Equal(sizes, []int{3, 3, 1}) || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%d workers: batches of %v samples (want [3 3 1]), outputs equal to Stream's: %v", workers, sizes, slices.EqualFunc(got, want, slices.Equal))
		}
		if _, err := p.Run(context.Background()); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "iterate over Batches") {
			t.Errorf("Run of a Tensors pipeline: %v", err)
		}
		p.Close()
	}
	if got := dirFiles(t, filepath.Join(filepath.Dir(file), "out")); len(got) != 0 {
		t.Errorf("Batches wrote %v", got)
	}
}

// TestBatchesBadInputs: on_error: skip leaves a bad file out of its
// batch; stop ends the iteration with an error naming it.
func TestBatchesBadInputs(t *testing.T) {
	h := runHost(t)
	for _, onError := range []string{"skip", "stop"} {
		file := setup(t, 4, 3, onError, "", "gamma")
		badInputs(t, file)
		spec, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(context.Background(), h, spec, Options{Tensors: true, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var names []string
		var last error
		for step, err := range p.Batches(context.Background()) {
			if err != nil {
				last = err
				break
			}
			for _, f := range step.Files {
				names = append(names, filepath.Base(f[0]))
			}
		}
		switch onError {
		case "skip":
			if last != nil || len(names) != 4 || slices.Contains(names, "img1b-notes.png") || slices.Contains(names, "img3b-cut.png") {
				t.Errorf("skip: samples %v, error %v; want the 4 good images", names, last)
			}
		case "stop":
			if last == nil || !strings.Contains(last.Error(), "img1b-notes.png") || !strings.Contains(last.Error(), "on_error: skip would skip it") {
				t.Errorf("stop: samples %v, then %v", names, last)
			}
		}
	}
}

func TestBatchesNeedsTensors(t *testing.T) {
	h := runHost(t)
	spec, _ := Load(setup(t, 1, 1, "stop", "", "gamma"))
	p, err := Compile(context.Background(), h, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, err := range p.Batches(context.Background()) {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Batches needs a pipeline compiled with Options.Tensors") {
			t.Errorf("Batches of a Run pipeline: %v", err)
		}
	}
	if _, err := Compile(context.Background(), h, spec, Options{Tensors: true, Memory: true}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Options.Memory and Tensors") {
		t.Errorf("Memory and Tensors: %v", err)
	}
}
