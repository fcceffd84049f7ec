//go:build cgo && !dynop_wazero

package wasm

import (
	"context"
	"crypto/sha256"
	"os"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// Closing a compiled module closes the instances left on it, as wazero's
// runtime does: before, every Wasmtime store (its 4 GiB reservation, its
// memory) of an instance nobody discarded leaked, one per Load.
func TestWasmtimeCloseFreesInstances(t *testing.T) {
	code, err := os.ReadFile(cbuild.Wasm(t, "wgood.wasm", []string{"loader/wasm/testdata/wgood.c"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := configOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.cacheDir = ""
	cfg.backend = backends["wasmtime"]
	ctx := context.Background()
	e, err := newEngine(ctx, "wgood", code, sha256.Sum256(code), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ins []*instance
	for range 3 {
		in, err := e.newInstance(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	ins[0].discard(nil)
	m := e.compiled.(*wasmtimeModule)
	if n := len(m.live); n != 2 {
		t.Fatalf("%d live instances after one of three was discarded, want 2", n)
	}
	if err := e.close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(m.live); n != 0 {
		t.Errorf("%d instances left after the module closed", n)
	}
	for i, in := range ins {
		if wi := in.mod.(*wasmtimeInstance); !wi.closed || wi.mem != nil || wi.buf != nil {
			t.Errorf("instance %d: closed %v, memory struct %v, call buffer %v after the module closed", i, wi.closed, wi.mem, wi.buf)
		}
	}
}
