package capi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func TestHandles(t *testing.T) {
	h := newHandles()
	host := h.add(kindHost, "host")
	opr := h.add(kindOperator, "op")
	if v, err := h.get(host, kindHost); err != nil || v != "host" {
		t.Fatalf("get(host) = %v, %v", v, err)
	}
	for _, c := range []struct {
		id   uintptr
		k    kind
		want string
		is   error
	}{
		{0, kindHost, "the host handle is NULL", errInvalid},
		{opr, kindHost, "is an operator handle, not a host handle", errInvalid},
		{host, kindRef, "is a host handle, not an interface reference handle", errInvalid},
		{1 << 40, kindOperator, "is not an operator handle of this library", errInvalid},
		{opr &^ 3, kindOperator, "is not an operator handle of this library", errInvalid},
	} {
		_, err := h.get(c.id, c.k)
		if !errors.Is(err, c.is) || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("get(%#x, %v) = %v, want %v with %q", c.id, c.k, err, c.is, c.want)
		}
	}
	if v, err := h.remove(opr, kindOperator); err != nil || v != "op" {
		t.Fatalf("remove(op) = %v, %v", v, err)
	}
	for _, call := range []func(uintptr, kind) (any, error){h.get, h.remove} {
		_, err := call(opr, kindOperator)
		if !errors.Is(err, dynop.ErrClosed) || !strings.Contains(err.Error(), "used after it was closed or released") {
			t.Errorf("a removed handle: %v, want ErrClosed", err)
		}
	}
	if next := h.add(kindOperator, "again"); next == opr {
		t.Errorf("handle %#x reused", next)
	}
}

func TestExtent(t *testing.T) {
	for _, c := range []struct {
		shape, strides []int64
		elem           int64
		offset         uint64
		want           int
		err            string
	}{
		{nil, nil, 4, 0, 4, ""},
		{[]int64{3, 4}, nil, 4, 0, 48, ""},
		{[]int64{3, 4}, nil, 4, 8, 56, ""},
		{[]int64{3}, []int64{4}, 4, 4, 4 + (2*4+1)*4, ""},
		{[]int64{2, 3}, []int64{0, 1}, 1, 0, 3, ""}, // broadcast
		{[]int64{0, 5}, nil, 8, 16, 16, ""},
		{[]int64{1 << 62, 4}, nil, 8, 0, 0, "reaches past the address space"},
		{[]int64{2}, []int64{1 << 62}, 8, 0, 0, "reaches past the address space"},
		{[]int64{2}, nil, 8, 1 << 63, 0, "reaches past the address space"},
	} {
		got, err := extent(c.shape, c.strides, c.elem, c.offset)
		if c.err != "" {
			if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("extent(%v, %v, %d, %d) = %d, %v; want an error with %q", c.shape, c.strides, c.elem, c.offset, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("extent(%v, %v, %d, %d) = %d, %v; want %d", c.shape, c.strides, c.elem, c.offset, got, err, c.want)
		}
	}
}

func TestResultOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want abi.Result
	}{
		{fmt.Errorf("x: %w", errInvalid), abi.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", errNoMemory), abi.ErrorNoMemory},
		{fmt.Errorf("x: %w", schema.ErrArgument), abi.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", op.ErrInput), abi.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", tensor.ErrInvalid), abi.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", dynop.ErrNotFound), abi.ErrorNotFound},
		{fmt.Errorf("x: %w", dynop.ErrVersion), abi.ErrorVersion},
		{fmt.Errorf("x: %w", dynop.ErrClosed), abi.ErrorClosed},
		{fmt.Errorf("x: %w", dynop.ErrUnsupported), abi.ErrorUnsupported},
		{fmt.Errorf("x: %w", dynop.ErrType), abi.ErrorType},
		{fmt.Errorf("x: %w", dispatch.ErrUnknownFeature), abi.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", fs.ErrNotExist), abi.ErrorNotFound},
		{errors.New("anything else"), abi.ErrorGeneric},
	} {
		if got := resultOf(c.err); got != c.want {
			t.Errorf("resultOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	args, err := parseArgs(`{"sigma": 1.5, "radius": 3}`)
	if err != nil || len(args) != 2 || args["radius"].(interface{ String() string }).String() != "3" {
		t.Fatalf("parseArgs = %v, %v", args, err)
	}
	if args, err := parseArgs(""); err != nil || args != nil {
		t.Errorf(`parseArgs("") = %v, %v; want none`, args, err)
	}
	for in, want := range map[string]string{
		`null`:        "args_json is null, not a JSON object",
		`{"a": 1} {}`: "more after the JSON object",
		`{"a": `:      "args_json: unexpected EOF",
		`"text"`:      "cannot unmarshal string",
	} {
		if _, err := parseArgs(in); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("parseArgs(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestParsePipelineOptions(t *testing.T) {
	o, err := parsePipelineOptions(`{"out_dir": "/tmp/x", "workers": 3, "atomic": true, "inputs": {"photos": ["a.png"]}}`)
	if err != nil || o.OutDir != "/tmp/x" || o.Workers != 3 || !o.Atomic || o.Inputs["photos"][0] != "a.png" {
		t.Fatalf("parsePipelineOptions = %+v, %v", o, err)
	}
	for in, want := range map[string]string{
		`{"outdir": "x"}`:       `unknown field "outdir"`,
		`{"workers": 2} {}`:     "more after the JSON object",
		`{"workers": 2} junk`:   "more after the JSON object",
		`{"workers": "two"}`:    "cannot unmarshal string",
		`{"inputs": ["a.png"]}`: "cannot unmarshal array",
		`null`:                  "options_json is not a JSON object",
		` [1]`:                  "options_json is not a JSON object",
	} {
		if _, err := parsePipelineOptions(in); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("parsePipelineOptions(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := parseIterOptions(`{"out_dir": "x"}`); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), `unknown field "out_dir" (dynop_pipeline_open takes "inputs" and "workers")`) {
		t.Errorf("parseIterOptions with out_dir: %v", err)
	}
}

// FuzzOptionsJSON feeds the JSON texts C passes (args_json, and the
// options_json of dynop_pipeline_run and dynop_pipeline_open) to their
// parsers: none panics, every refusal is DYNOP_ERROR_INVALID_ARGUMENT,
// and what is accepted is one JSON object (or nothing).
func FuzzOptionsJSON(f *testing.F) {
	for _, s := range []string{"", `{}`, `{"sigma": 1.5}`, `{"out_dir": "/x", "workers": 2, "atomic": true, "resume": false, "inputs": {"a": ["b"]}}`,
		`{"workers": 2} {}`, `null`, `[]`, `{"a": {"b": [1, 2.5e3, "x", null, true]}}`, "{\"a\": \"\xff\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		valid := text == "" || json.Valid([]byte(text)) && strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{")
		if _, err := parseArgs(text); err != nil && !errors.Is(err, errInvalid) {
			t.Fatalf("parseArgs(%q): %v is not errInvalid", text, err)
		} else if err == nil && !valid {
			t.Fatalf("parseArgs accepted %q", text)
		}
		if _, err := parsePipelineOptions(text); err != nil && !errors.Is(err, errInvalid) {
			t.Fatalf("parsePipelineOptions(%q): %v is not errInvalid", text, err)
		} else if err == nil && !valid {
			t.Fatalf("parsePipelineOptions accepted %q", text)
		}
		if _, err := parseIterOptions(text); err != nil && !errors.Is(err, errInvalid) {
			t.Fatalf("parseIterOptions(%q): %v is not errInvalid", text, err)
		} else if err == nil && !valid {
			t.Fatalf("parseIterOptions accepted %q", text)
		}
	})
}

// TestHandlesConcurrent adds, looks up and removes handles from many
// goroutines (run it with -race): every handle is unique and, once
// removed, closed.
func TestHandlesConcurrent(t *testing.T) {
	h := newHandles()
	const workers, each = 8, 500
	ids := make([][]uintptr, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := h.add(kindOperator, i)
				if v, err := h.get(id, kindOperator); err != nil || v != i {
					t.Errorf("get(%#x) = %v, %v; want %d", id, v, err, i)
				}
				if i%2 == 0 {
					if _, err := h.remove(id, kindOperator); err != nil {
						t.Errorf("remove(%#x): %v", id, err)
					}
					if _, err := h.get(id, kindOperator); !errors.Is(err, dynop.ErrClosed) {
						t.Errorf("get(%#x) after remove: %v, want ErrClosed", id, err)
					}
				}
				ids[w] = append(ids[w], id)
			}
		}()
	}
	wg.Wait()
	seen := map[uintptr]bool{}
	for _, list := range ids {
		for _, id := range list {
			if seen[id] {
				t.Fatalf("handle %#x given twice", id)
			}
			seen[id] = true
		}
	}
	if len(h.live) != workers*each/2 {
		t.Errorf("%d live handles, want %d", len(h.live), workers*each/2)
	}
}
