package native_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/tensor"
)

// TestCheckBoundsCatchesOverrun: a native write past an output corrupted
// the Go heap silently. In the bounds-checking mode the run writes to
// guarded copies, and the call fails naming plugin, operator, sample and
// output (issue 21, item 10).
func TestCheckBoundsCatchesOverrun(t *testing.T) {
	t.Setenv(native.CheckBoundsEnv, "1")
	for _, c := range []struct{ define, want string }{
		{"-DOVERRUN", "it wrote up to 3 byte(s) past its end (of 6)"},
		{"-DUNDERRUN", "it wrote up to 1 byte(s) before its start"},
	} {
		t.Run(c.define, func(t *testing.T) {
			h := openHost(t, []string{opsPlugin(t, c.define)})
			in, err := h.NewOperator(ctx, "test.Nop", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			x, _ := tensor.FromSlice([]uint8{1, 2, 3, 4, 5, 6}, 2, 3)
			y, _ := tensor.FromSlice([]uint8{7, 8, 9, 10, 11, 12}, 2, 3)
			inputs := []*tensor.Batch{mustBatch(t, x, y)}
			descs, err := in.Setup(inputs)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := descs[0].Alloc()
			err = in.Run(ctx, []*tensor.Batch{out}, inputs)
			if !errors.Is(err, native.ErrBounds) {
				t.Fatalf("Run = %v, want ErrBounds", err)
			}
			for _, want := range []string{`op: operator "test.Nop" (plugin "dynop.plugin.ops"): run: native: sample 0: `, "\nnative: sample 1: ", `output 0 ("out"`, c.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v\ndoes not say %q", err, want)
				}
			}
		})
	}
}

// TestCheckBoundsKeepsResults: a run that stays within its outputs gives
// the same results with the mode on, and the instance runs again.
func TestCheckBoundsKeepsResults(t *testing.T) {
	want := argsOutput(t)
	t.Setenv(native.CheckBoundsEnv, "1")
	if got := argsOutput(t); !slices.Equal(got, want) {
		t.Errorf("with %s=1: %v, without: %v", native.CheckBoundsEnv, got, want)
	}
}

// argsOutput runs test.Args twice with its defaults and returns what it
// wrote.
func argsOutput(t *testing.T) []float64 {
	t.Helper()
	h := openHost(t, []string{opsPlugin(t)})
	in, err := h.NewOperator(ctx, "test.Args", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var got []float64
	for range 2 {
		outs, err := in.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err = tensor.Values[float64](outs[0].Samples()[0])
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}
