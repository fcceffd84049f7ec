package wasm_test

import (
	"slices"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
)

// Config.Engine names an engine of this build; an unknown name, or an
// engine this build lacks, is refused with a message that says which
// engines there are.
func TestConfigEngine(t *testing.T) {
	for _, e := range append([]string{""}, wasm.Engines()...) {
		if err := (wasm.Config{Engine: e}).Validate(); err != nil {
			t.Errorf("Engine %q: %v", e, err)
		}
	}
	err := wasm.Config{Engine: "v8"}.Validate()
	testutil.WantErr(t, err, nil, `wasm: Config.Engine: unknown engine "v8" (known: wasmtime, wazero)`)
	if !slices.Contains(wasm.Engines(), "wasmtime") {
		// A build without cgo, or with the tag dynop_wazero.
		err := wasm.Config{Engine: "wasmtime"}.Validate()
		testutil.WantErr(t, err, dynop.ErrUnsupported, `engine "wasmtime" is not in this build (it has wazero; wasmtime needs cgo and no dynop_wazero build tag)`)
	}
}
