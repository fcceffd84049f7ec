package pipeline_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/pipeline"
)

// FuzzParse checks pipeline files on any bytes, parsed and validated
// against testRegistry's schemas: no panic; every problem is a
// *pipeline.Error wrapping ErrInvalid, at a position in the file, with a
// message, sorted by position; a file that parses has its defaults and
// only well-formed, unique names; one that also validates has every
// reference resolved, validates again, and its operators in an order
// where each comes after what it reads.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile("../examples/pipelines/demo.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte(full))
	for _, s := range []string{
		"inputs: {a: {files: x}}\noperators: [{name: d, op: img.Decode, inputs: a}]\noutputs: {o: {from: d}}\n",
		"inputs: {a: {files: x}}\noperators: [{name: d, op: img.Decode, inputs: [d]}]\noutputs: {o: {from: d.images}}\n",
		"inputs: {a: {files: [x]}}\noperators:\n  - {name: r, op: img.Resize, inputs: [a], args: {width: 0, factor: 1.5, scale: 2, hieght: 3}}\noutputs: {o: {from: r, format: jpeg, quality: 101}}\n",
		"inputs: &x {a: {files: x}}\noperators: *x\n",
		"version: 2\nbatch_size: 0\non_error: skip\n",
		"---\na: 1\n---\nb: 2\n",
		"- just\n- a list\n",
		"operators: [{name: b, op: img.Blur, device: gpu, inputs: [a]}]",
		"",
		"\t",
	} {
		f.Add([]byte(s))
	}
	reg := testRegistry()
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.yaml"
		s, err := pipeline.Parse(file, data)
		if err != nil {
			checkProblems(t, data, err, file)
			if s != nil {
				t.Errorf("Parse failed but returned a spec")
			}
			return
		}
		if s.Version != 1 || s.BatchSize < 1 || s.BatchSize > 4096 || s.OnError != pipeline.Stop && s.OnError != pipeline.Skip {
			t.Errorf("Parse(%q) = version %d, batch size %d, on_error %q", data, s.Version, s.BatchSize, s.OnError)
		}
		names := map[string]bool{}
		for _, in := range s.Inputs {
			names[in.Name] = true
		}
		for _, n := range s.Operators {
			if n.Name == "" || n.Op == "" || names[n.Name] {
				t.Errorf("Parse(%q): operator %q (op %q) is unnamed or not unique", data, n.Name, n.Op)
			}
			names[n.Name] = true
		}
		if len(s.Inputs) == 0 || len(s.Operators) == 0 || len(s.Outputs) == 0 {
			t.Errorf("Parse(%q) has %d inputs, %d operators and %d outputs", data, len(s.Inputs), len(s.Operators), len(s.Outputs))
		}
		if err := s.Validate(reg); err != nil {
			checkProblems(t, data, err, file)
			return
		}
		for _, n := range s.Operators {
			for _, r := range n.Inputs {
				if !names[r.Node] {
					t.Errorf("Validate(%q) passed with a reference to %q", data, r)
				}
			}
		}
		for _, o := range s.Outputs {
			if !names[o.From.Node] {
				t.Errorf("Validate(%q) passed with output %q from %q", data, o.Name, o.From)
			}
		}
		if err := s.Validate(reg); err != nil {
			t.Errorf("Validate(%q) passed, then failed: %v", data, err)
		}
		order := s.Order()
		if len(order) != len(s.Operators) {
			t.Fatalf("Order() = %v for %d operators", order, len(s.Operators))
		}
		done := map[string]bool{}
		for _, in := range s.Inputs {
			done[in.Name] = true
		}
		for _, i := range order {
			n := s.Operators[i]
			for _, r := range n.Inputs {
				if !done[r.Node] {
					t.Errorf("Order() = %v runs %q before %q, which it reads", order, n.Name, r.Node)
				}
			}
			done[n.Name] = true
		}
	})
}

// checkProblems fails t unless err joins *pipeline.Errors wrapping
// ErrInvalid, each with a message and a position in file, in order.
func checkProblems(t *testing.T, data []byte, err error, file string) {
	t.Helper()
	if !errors.Is(err, pipeline.ErrInvalid) {
		t.Fatalf("%q: error %q does not wrap ErrInvalid", data, err)
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	// YAML breaks lines at \n, \r\n and a lone \r (old Mac files).
	lines := strings.Count(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n") + 1
	var pos []pipeline.Pos
	for _, e := range list {
		var pe *pipeline.Error
		if !errors.As(e, &pe) {
			t.Fatalf("%q: problem %q (%T) is not a *pipeline.Error", data, e, e)
		}
		if strings.TrimSpace(pe.Msg) == "" || !errors.Is(pe, pipeline.ErrInvalid) {
			t.Errorf("%q: problem %q has no message or does not wrap ErrInvalid", data, pe)
		}
		if pe.Pos.File != file || pe.Pos.Line < 1 || pe.Pos.Line > lines+1 || pe.Pos.Col < 1 {
			t.Errorf("%q: problem %q is at %v, outside the file's %d lines", data, pe, pe.Pos, lines)
		}
		pos = append(pos, pe.Pos)
	}
	if !slices.IsSortedFunc(pos, func(a, b pipeline.Pos) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	}) {
		t.Errorf("%q: problems are not sorted by position: %v", data, pos)
	}
}
