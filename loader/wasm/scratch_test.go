package wasm_test

import (
	"context"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
)

// TestWasmScratch: a module's operator that sets DYNOP_OPERATOR_SCRATCH
// gets from each sample's setup to its run the scratch it asked for,
// aligned, in guest memory its instance keeps; one from before flags
// runs as before; and what the host cannot honour fails saying so, as
// for a native plugin (abi/testdata/scratch.c).
func TestWasmScratch(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		define string
		target error
		want   []string
	}{
		{"", nil, nil},
		{"-DOLD_STRUCT", nil, nil},
		{"-DNEGATIVE", wasm.ErrABI, []string{`operator "test.Reverse" (plugin "dynop.plugin.scratch"): setup: wasm: sample 0: `, "asked for -5 bytes of scratch"}},
		{"-DHUGE", wasm.ErrABI, []string{"asked for 2199023255552 bytes of scratch; a module has at most 4294967295"}},
		{"-DBAD_FLAG", wasm.ErrABI, []string{`register_operator "test.Reverse"`, "flags 0x80000001 has bits this host does not know (0x80000000)"}},
	} {
		t.Run(c.define, func(t *testing.T) {
			var defines []string
			if c.define != "" {
				defines = append(defines, c.define)
			}
			h := openHost(t, dynop.Options{}, cbuild.Wasm(t, "scratch.wasm", []string{"abi/testdata/scratch.c"}, defines...))
			in, err := h.NewOperator(ctx, "test.Reverse", nil)
			if err != nil {
				if c.target != nil {
					testutil.WantErr(t, err, c.target, c.want...)
					return
				}
				t.Fatal(err)
			}
			defer in.Close()
			inputs := testutil.ReverseInputs(t)
			for range 2 { // the second run reuses the arena
				outs, err := in.Exec(ctx, inputs...)
				if c.target != nil {
					testutil.WantErr(t, err, c.target, c.want...)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				testutil.CheckReversed(t, outs, inputs, c.define == "")
			}
		})
	}
}
