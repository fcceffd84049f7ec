package native_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/tensor"
)

func scratchPlugin(t testing.TB, defines ...string) string {
	t.Helper()
	return cbuild.Plugin(t, "libscratch.so", "abi/testdata/scratch.c", defines...)
}

// TestNativeScratch: an operator that sets DYNOP_OPERATOR_SCRATCH gets
// from each sample's setup to its run the scratch it asked for, aligned,
// from the scratchpad its instance shares; once warm a run allocates
// nothing (issue 23, memory reused).
func TestNativeScratch(t *testing.T) {
	h := openHost(t, []string{scratchPlugin(t)})
	in, err := h.NewOperator(ctx, "test.Reverse", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, ok := in.Impl().(op.ScratchImpl); !ok {
		t.Fatalf("the instance's implementation %T takes no scratch from the host", in.Impl())
	}
	sp := kernel.NewScratchpad()
	in.ShareScratchpad(sp)
	inputs := testutil.ReverseInputs(t)
	outs, err := in.Exec(ctx, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CheckReversed(t, outs, inputs, true)
	if c := sp.Capacity(kernel.HostMemory); c < 64+3 {
		t.Errorf("the shared scratchpad holds %d bytes; the run took its 67 from elsewhere", c)
	}
	if n := testing.AllocsPerRun(20, func() {
		if err := in.Run(ctx, outs, inputs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a warm run allocates %v times, want 0", n)
	}
	testutil.CheckReversed(t, outs, inputs, true)

	// Without a shared scratchpad the instance makes its own; and the
	// bounds-checking mode guards the scratch too, with the same results.
	in.ShareScratchpad(nil)
	if outs, err = in.Exec(ctx, inputs...); err != nil {
		t.Fatal(err)
	}
	testutil.CheckReversed(t, outs, inputs, true)
	t.Setenv(native.CheckBoundsEnv, "1")
	checked, err := h.NewOperator(ctx, "test.Reverse", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Close()
	if outs, err = checked.Exec(ctx, inputs...); err != nil {
		t.Fatal(err)
	}
	testutil.CheckReversed(t, outs, inputs, true)
}

// TestNativeScratchOldOperator: a dynop_operator 1.1, from before flags,
// runs as it always did, whatever its memory holds after its end; its
// input and outputs, structs of older minor versions, read as they are.
func TestNativeScratchOldOperator(t *testing.T) {
	h := openHost(t, []string{scratchPlugin(t, "-DOLD_STRUCT")})
	in, err := h.NewOperator(ctx, "test.Reverse", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	inputs := testutil.ReverseInputs(t)
	outs, err := in.Exec(ctx, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CheckReversed(t, outs, inputs, false)
	// Its outputs, dynop_op_output 1.0, read as they are: names, no types.
	e, err := h.Operators().Lookup("test.Reverse")
	if err != nil {
		t.Fatal(err)
	}
	for k, name := range []string{"out", "info"} {
		if o := e.Schema.Outputs[k]; o.Name != name || o.DTypes != nil || o.NDim != 0 || o.Like != "" {
			t.Errorf("output %d of a 1.0 struct reads as %+v", k, o)
		}
	}
	// Its input, dynop_op_input 1.0 (from before channels), reads whole.
	if in := e.Schema.Inputs[0]; in.Name != "in" || len(in.DTypes) != 1 || in.DTypes[0] != tensor.Uint8 || in.NDim != 1 || in.Channels != nil {
		t.Errorf("the input of a 1.0 struct reads as %+v", in)
	}
	// The current struct's say what they are.
	h2 := openHost(t, []string{scratchPlugin(t)})
	if e, err := h2.Operators().Lookup("test.Reverse"); err != nil || e.Schema.Outputs[1].DTypes[0] != tensor.Int64 || e.Schema.Outputs[1].NDim != 1 {
		t.Errorf("the 1.1 outputs read as %+v, %v", e.Schema.Outputs, err)
	}
}

// TestNativeScratchErrors: a scratch request that cannot be meant, a
// flag the host does not know and a run past the scratch's end each fail
// saying so.
func TestNativeScratchErrors(t *testing.T) {
	for _, c := range []struct {
		define string
		target error
		want   []string
	}{
		{"-DNEGATIVE", native.ErrABI, []string{`operator "test.Reverse" (plugin "dynop.plugin.scratch"): setup: native: sample 0: `, "asked for -5 bytes of scratch"}},
		{"-DHUGE", native.ErrABI, []string{"asked for 2199023255552 bytes of scratch; the most is 1099511627776"}},
		{"-DBAD_FLAG", native.ErrABI, []string{`register_operator "test.Reverse"`, "flags 0x80000001 has bits this host does not know (0x80000000)"}},
		{"-DOVERRUN", native.ErrBounds, []string{`operator "test.Reverse" (plugin "dynop.plugin.scratch"): run: native: sample 0: `, "its scratch (8 bytes): it wrote up to 1 byte(s) past its end (of 8)"}},
	} {
		t.Run(c.define, func(t *testing.T) {
			if c.define == "-DOVERRUN" {
				t.Setenv(native.CheckBoundsEnv, "1")
			}
			h := openHost(t, []string{scratchPlugin(t, c.define)})
			in, err := h.NewOperator(ctx, "test.Reverse", nil)
			if err == nil {
				defer in.Close()
				_, err = in.Exec(ctx, testutil.ReverseInputs(t)...)
			}
			testutil.WantErr(t, err, c.target, c.want...)
		})
	}
}

// TestNativeConcurrentShare: an operator that sets
// DYNOP_OPERATOR_CONCURRENT is created once and shared: two instances
// run at once on one plugin instance, each with its own scratch, and the
// plugin's destroy runs once, after both are closed. Without the flag
// an instance is not shared.
func TestNativeConcurrentShare(t *testing.T) {
	var logs testutil.LogBuffer
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{scratchPlugin(t, "-DCONCURRENT")}, NoRegistered: true, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	first, err := h.NewOperator(ctx, "test.Reverse", nil)
	if err != nil {
		t.Fatal(err)
	}
	second, ok := first.Share()
	if !ok {
		t.Fatal("a DYNOP_OPERATOR_CONCURRENT operator's instance is not shared")
	}
	inputs := testutil.ReverseInputs(t)
	var wg sync.WaitGroup
	for _, in := range []*op.Instance{first, second} {
		wg.Go(func() {
			for range 50 {
				outs, err := in.Exec(ctx, inputs...)
				if err != nil {
					t.Error(err)
					return
				}
				testutil.CheckReversed(t, outs, inputs, true)
			}
		})
	}
	wg.Wait()
	count := func(s string) int { return strings.Count(logs.String(), s) }
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if n := count("test.Reverse: destroy"); n != 0 {
		t.Errorf("the plugin's instance was destroyed while an instance sharing it is open (%d destroy)", n)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if c, d := count("test.Reverse: create"), count("test.Reverse: destroy"); c != 1 || d != 1 {
		t.Errorf("the plugin made %d instances and destroyed %d, want 1 and 1:\n%s", c, d, logs.String())
	}

	plain := openHost(t, []string{scratchPlugin(t)})
	in, err := plain.NewOperator(ctx, "test.Reverse", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, ok := in.Share(); ok {
		t.Error("an operator without DYNOP_OPERATOR_CONCURRENT was shared")
	}
}
