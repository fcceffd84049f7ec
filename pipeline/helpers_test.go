package pipeline

import (
	"context"
	"errors"
	"github.com/dynop/dynop/schema"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/tensor"
)

// nop is an operator implementation that does nothing: the package reads
// schemas only.
type nop struct{}

func (nop) Setup([]*tensor.Batch) ([]op.OutputDesc, error)              { return nil, nil }
func (nop) Run(context.Context, []*tensor.Batch, []*tensor.Batch) error { return nil }

func newNop(*schema.Values) (op.Impl, error) { return nop{}, nil }

// testSchemas are the operators of testRegistry: "img.Decode" and
// "img.Resize" (which has required arguments) have one input and one
// output, "img.Split" two outputs, "img.Blend" an optional second input,
// "img.Read" no inputs, "img.Mask" two, "img.Sink" no outputs, and
// "img.Blur" a GPU backend only.
var testSchemas = []schema.Op{
	{
		Name:    "img.Decode",
		Inputs:  []schema.Input{{Name: "encoded"}},
		Outputs: []schema.Output{{Name: "images"}},
		Args: []schema.Arg{
			{Name: "channels", Type: schema.Int, Default: int64(3), Allowed: []any{int64(1), int64(3), int64(4)}},
		},
	},
	{
		Name:    "img.Resize",
		Inputs:  []schema.Input{{Name: "images"}},
		Outputs: []schema.Output{{Name: "resized"}},
		Args: []schema.Arg{
			{Name: "width", Type: schema.Int, Required: true, Min: schema.Bounds(1)},
			{Name: "height", Type: schema.Int, Required: true, Min: schema.Bounds(1)},
			{Name: "interp", Type: schema.String, Default: "linear", Allowed: []any{"linear", "nearest"}},
			{Name: "scale", Type: schema.Float, Default: 1.0, Min: schema.Bounds(0), Deprecated: []string{"factor"}},
		},
	},
	{
		Name:    "img.Split",
		Inputs:  []schema.Input{{Name: "images"}},
		Outputs: []schema.Output{{Name: "left"}, {Name: "right"}},
		Args:    []schema.Arg{{Name: "axes", Type: schema.IntList}},
	},
	{
		Name:           "img.Blend",
		Inputs:         []schema.Input{{Name: "a"}, {Name: "b"}},
		OptionalInputs: 1,
		Outputs:        []schema.Output{{Name: "blended"}},
		Args: []schema.Arg{
			{Name: "alpha", Type: schema.Float, Default: 0.5, Min: schema.Bounds(0), Max: schema.Bounds(1)},
			{Name: "invert", Type: schema.Bool, Default: false},
		},
	},
	{
		Name:    "img.Read",
		Outputs: []schema.Output{{Name: "data"}},
		Args:    []schema.Arg{{Name: "paths", Type: schema.StringList, Required: true}},
	},
	{
		Name:    "img.Mask",
		Inputs:  []schema.Input{{Name: "images"}, {Name: "mask"}},
		Outputs: []schema.Output{{Name: "masked"}},
	},
	{
		Name:   "img.Sink",
		Inputs: []schema.Input{{Name: "images"}},
		Args:   []schema.Arg{{Name: "tags", Type: schema.StringList}},
	},
	{
		Name:    "img.Blur",
		Inputs:  []schema.Input{{Name: "images"}},
		Outputs: []schema.Output{{Name: "blurred"}},
		Devices: []schema.Device{schema.GPU},
	},
}

// testRegistry returns a registry of testSchemas on a machine with a CPU
// only.
func testRegistry() *op.Registry {
	reg := op.NewRegistry(op.Options{Logger: slog.New(slog.DiscardHandler)})
	for _, s := range testSchemas {
		dev := schema.CPU
		if len(s.Devices) > 0 {
			dev = s.Devices[0]
		}
		if err := reg.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{dev: newNop}}); err != nil {
			panic(err)
		}
	}
	return reg
}

// problems returns the *pipeline.Errors that err joins, checking that
// each wraps pipeline.ErrInvalid.
func problems(t *testing.T, err error) []*Error {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error does not wrap ErrInvalid: %v", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error is not joined: %T %v", err, err)
	}
	var list []*Error
	for _, e := range joined.Unwrap() {
		var pe *Error
		if !errors.As(e, &pe) {
			t.Fatalf("not a *pipeline.Error: %T %v", e, e)
		}
		if !errors.Is(pe, ErrInvalid) {
			t.Errorf("does not wrap ErrInvalid: %v", pe)
		}
		list = append(list, pe)
	}
	return list
}

// errorCase is a file with exactly one problem.
type errorCase struct {
	name string
	yaml string
	// want is the start of the error's text, "file:line:col: field: ";
	// words must follow.
	want  string
	words []string
	is    error // wrapped too, if not nil
}

// check checks that err reports the case's one problem.
func (c errorCase) check(t *testing.T, err error) {
	t.Helper()
	list := problems(t, err)
	if len(list) != 1 {
		t.Fatalf("got %d errors, want 1:\n%v", len(list), err)
	}
	msg := list[0].Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q has more than one line", msg)
	}
	if !strings.HasPrefix(msg, c.want) {
		t.Errorf("error %q\ndoes not start with %q", msg, c.want)
	}
	for _, w := range c.words {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q\ndoes not say %q", msg, w)
		}
	}
	if c.is != nil && !errors.Is(err, c.is) {
		t.Errorf("error does not wrap %v: %v", c.is, err)
	}
}
