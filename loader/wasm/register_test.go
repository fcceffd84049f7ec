package wasm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
)

// TestRegisterRefusals: the host reads a module's dynop_operator and
// variant lists itself (ABI 2.0), so what a module may not register, and
// a variant list without one it can run, fail its start with the host's
// words.
func TestRegisterRefusals(t *testing.T) {
	for _, tc := range []struct {
		macro  string
		target error
		want   []string
	}{
		{"-DWREGISTER_GPU", dynop.ErrUnsupported, []string{`register_operator "wregister.Op": device "gpu": WebAssembly plugins run on the cpu only`}},
		{"-DWREGISTER_AVX", dynop.ErrUnsupported, []string{`register_operator "wregister.Op": no variant can run: the last, "avx2", needs CPU features avx2, and WebAssembly plugins have none`}},
		{"-DWREGISTER_BADTYPE", wasm.ErrABI, []string{"register_operator: operator has type UID {6D79A0C1-3B5E-4C1F-8E02-517AD4902B0B}, want {6D79A0C1-3B5E-4C1F-8E02-517AD4902B0A}"}},
		{"-DWREGISTER_SELECT", dynop.ErrUnsupported, []string{"select_variant wregister.fast", "no runnable variant", "WebAssembly plugins have no CPU features"}},
	} {
		t.Run(tc.macro, func(t *testing.T) {
			mod := cbuild.Wasm(t, "wregister.wasm", []string{"loader/wasm/testdata/wregister.c"}, tc.macro)
			var logs testutil.LogBuffer
			h := openHost(t, dynop.Options{Logger: logs.Logger()}, mod)
			_, err := h.NewOperator(context.Background(), "wregister.Op", nil)
			testutil.WantErr(t, err, tc.target, tc.want...)
			if tc.macro == "-DWREGISTER_SELECT" && !strings.Contains(logs.String(), "select ok: 1") {
				t.Errorf("select_variant of [avx2, scalar] did not choose the scalar one: %s", logs.String())
			}
		})
	}
	// Without a macro, the module starts: the refusals are the macros'.
	h := openHost(t, dynop.Options{}, cbuild.Wasm(t, "wregister.wasm", []string{"loader/wasm/testdata/wregister.c"}))
	in, err := h.NewOperator(context.Background(), "wregister.Op", nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
}
