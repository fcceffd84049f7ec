package pipeline

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
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
		s, err := Parse(file, data)
		if err != nil {
			checkProblems(t, data, err, file)
			if s != nil {
				t.Errorf("Parse failed but returned a spec")
			}
			return
		}
		if s.version != 1 || s.batchSize < 1 || s.batchSize > 4096 || s.onError != onErrorStop && s.onError != onErrorSkip {
			t.Errorf("Parse(%q) = version %d, batch size %d, on_error %q", data, s.version, s.batchSize, s.onError)
		}
		names := map[string]bool{}
		for _, in := range s.inputs {
			names[in.name] = true
		}
		for _, n := range s.operators {
			if n.name == "" || n.operator == "" || names[n.name] {
				t.Errorf("Parse(%q): operator %q (op %q) is unnamed or not unique", data, n.name, n.operator)
			}
			names[n.name] = true
		}
		if len(s.inputs) == 0 || len(s.operators) == 0 || len(s.outputs) == 0 {
			t.Errorf("Parse(%q) has %d inputs, %d operators and %d outputs", data, len(s.inputs), len(s.operators), len(s.outputs))
		}
		if err := s.Validate(reg); err != nil {
			checkProblems(t, data, err, file)
			return
		}
		for _, n := range s.operators {
			for _, r := range n.inputs {
				if !names[r.node] {
					t.Errorf("Validate(%q) passed with a reference to %q", data, r)
				}
			}
		}
		for _, o := range s.outputs {
			if !names[o.from.node] {
				t.Errorf("Validate(%q) passed with output %q from %q", data, o.name, o.from)
			}
		}
		if err := s.Validate(reg); err != nil {
			t.Errorf("Validate(%q) passed, then failed: %v", data, err)
		}
		order := s.order()
		if len(order) != len(s.operators) {
			t.Fatalf("order() = %v for %d operators", order, len(s.operators))
		}
		done := map[string]bool{}
		for _, in := range s.inputs {
			done[in.name] = true
		}
		for _, i := range order {
			n := s.operators[i]
			for _, r := range n.inputs {
				if !done[r.node] {
					t.Errorf("order() = %v runs %q before %q, which it reads", order, n.name, r.node)
				}
			}
			done[n.name] = true
		}
	})
}

// checkProblems fails t unless err joins *pipeline.Errors wrapping
// ErrInvalid, each with a message and a position in file, in order.
func checkProblems(t *testing.T, data []byte, err error, file string) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("%q: error %q does not wrap ErrInvalid", data, err)
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	// YAML breaks lines at \n, \r\n and a lone \r (old Mac files).
	lines := strings.Count(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n") + 1
	var pos []Pos
	for _, e := range list {
		var pe *Error
		if !errors.As(e, &pe) {
			t.Fatalf("%q: problem %q (%T) is not a *pipeline.Error", data, e, e)
		}
		if strings.TrimSpace(pe.Msg) == "" || !errors.Is(pe, ErrInvalid) {
			t.Errorf("%q: problem %q has no message or does not wrap ErrInvalid", data, pe)
		}
		if pe.Pos.File != file || pe.Pos.Line < 1 || pe.Pos.Line > lines+1 || pe.Pos.Col < 1 {
			t.Errorf("%q: problem %q is at %v, outside the file's %d lines", data, pe, pe.Pos, lines)
		}
		pos = append(pos, pe.Pos)
	}
	if !slices.IsSortedFunc(pos, func(a, b Pos) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	}) {
		t.Errorf("%q: problems are not sorted by position: %v", data, pos)
	}
}
