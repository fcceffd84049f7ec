package native_test

import (
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
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
// runs as it always did, whatever its memory holds after its end.
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
		{"-DNEGATIVE", native.ErrABI, []string{`operator "test.Reverse": setup (sample 0)`, "asked for -5 bytes of scratch"}},
		{"-DHUGE", native.ErrABI, []string{"asked for 2199023255552 bytes of scratch; the most is 1099511627776"}},
		{"-DBAD_FLAG", native.ErrABI, []string{`register_operator "test.Reverse"`, "flags 0x3 has bits this host does not know (0x2)"}},
		{"-DOVERRUN", native.ErrBounds, []string{`operator "test.Reverse": run (sample 0)`, "its scratch (8 bytes): it wrote up to 1 byte(s) past its end (of 8)"}},
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
