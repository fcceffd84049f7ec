package pipeline

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop/tensor"
)

// memorySpec compiles the test pipeline over n images for Stream and
// returns it with the images' files as 1-D uint8 tensors.
func memorySpec(t *testing.T, n int, opts Options) (*Pipeline, []*tensor.Tensor) {
	t.Helper()
	h := runHost(t)
	file := setup(t, n, 3, "stop", "", "gamma")
	spec, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opts.Memory = true
	p, err := Compile(context.Background(), h, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var files []*tensor.Tensor
	for k := range n {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "in", "img"+string(rune('0'+k))+".png"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := tensor.FromSlice(data, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return p, files
}

// steps yields the files in batches of the given sizes.
func steps(files []*tensor.Tensor, sizes ...int) iter.Seq[[]*tensor.Batch] {
	return func(yield func([]*tensor.Batch) bool) {
		at := 0
		for _, n := range sizes {
			b, _ := tensor.NewBatch(files[at : at+n]...)
			at += n
			if !yield([]*tensor.Batch{b}) {
				return
			}
		}
	}
}

// TestStream: a pipeline fed from memory yields, step by step, the
// tensors of its output node (the images, of their sizes), the same with
// 1, 2 and 8 workers and prefetch 1 to 3.
func TestStream(t *testing.T) {
	var want [][]byte
	for _, o := range []Options{{Workers: 1, Prefetch: 1}, {Workers: 2}, {Workers: 8, Prefetch: 3}} {
		p, files := memorySpec(t, 7, o)
		var got [][]byte
		var sizes []int
		for outs, err := range p.Stream(context.Background(), steps(files, 3, 1, 3)) {
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 1 {
				t.Fatalf("a step yielded %d batches for the pipeline's one output", len(outs))
			}
			sizes = append(sizes, outs[0].Len())
			for j := range outs[0].Len() {
				data, err := outs[0].Sample(j).Bytes()
				if err != nil {
					t.Fatal(err)
				}
				if s := outs[0].Sample(j).Shape(); len(s) != 3 || s[0] != 17 || s[1] != int64(23+len(got)) {
					t.Errorf("sample %d has shape %v, want [17 %d C]: the gamma node's image", len(got), s, 23+len(got))
				}
				got = append(got, slices.Clone(data))
			}
		}
		if !slices.Equal(sizes, []int{3, 1, 3}) {
			t.Errorf("%+v: steps of %v samples, want [3 1 3]", o, sizes)
		}
		if want == nil {
			want = got
		} else if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%+v: outputs differ from one worker's", o)
		}
	}
}

func TestStreamErrors(t *testing.T) {
	p, files := memorySpec(t, 3, Options{Workers: 2})
	bad, _ := tensor.FromSlice([]uint8("not an image"), 12)
	two, _ := tensor.NewBatch(files[0], files[1])
	one, _ := tensor.NewBatch(files[2])
	withBad, _ := tensor.NewBatch(files[0], bad)
	for _, c := range []struct {
		name  string
		steps []*tensor.Batch // one per step; nil: a step with no batch
		say   string
		yield int
	}{
		{"a bad sample", []*tensor.Batch{two, withBad}, `step 1, sample 1: graph: node "decode"`, 1},
		{"wrong number of batches", []*tensor.Batch{one, nil}, "step 1: invalid pipeline: 0 batches for the pipeline's 1 input ([photos])", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := func(yield func([]*tensor.Batch) bool) {
				for _, b := range c.steps {
					var step []*tensor.Batch
					if b != nil {
						step = []*tensor.Batch{b}
					}
					if !yield(step) {
						return
					}
				}
			}
			n := 0
			var last error
			for _, err := range p.Stream(context.Background(), in) {
				if err != nil {
					last = err
					break
				}
				n++
			}
			if n != c.yield || last == nil || !strings.Contains(last.Error(), c.say) {
				t.Errorf("%d steps, then %v; want %d, then an error saying %q", n, last, c.yield, c.say)
			}
		})
	}
	h := runHost(t)
	spec, _ := Load(setup(t, 1, 1, "stop", "", "gamma"))
	files2, err := Compile(context.Background(), h, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer files2.Close()
	for _, err := range files2.Stream(context.Background(), steps(nil)) {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Stream needs a pipeline compiled with Options.Memory") {
			t.Errorf("Stream of a file pipeline: %v", err)
		}
	}
	if _, err := p.Run(context.Background()); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "run it with Stream") {
		t.Errorf("Run of a memory pipeline: %v", err)
	}
}

// TestStreamStopsEarly: leaving the loop early stops the work and the
// source, and leaves no goroutine behind.
func TestStreamStopsEarly(t *testing.T) {
	p, files := memorySpec(t, 6, Options{Workers: 2, Prefetch: 3})
	before := runtime.NumGoroutine()
	endless := func(yield func([]*tensor.Batch) bool) {
		for k := 0; ; k++ {
			b, _ := tensor.NewBatch(files[k%6])
			if !yield([]*tensor.Batch{b}) {
				return
			}
		}
	}
	n := 0
	for _, err := range p.Stream(context.Background(), endless) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 5 {
			break
		}
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before the stream, %d after", before, runtime.NumGoroutine())
		}
	}
}
