package wasm

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
)

// tableModule is a module with a function table of two entries, an
// exported function and memory, as wat:
//
//	(module (type (func (param i32) (result i32)))
//	  (table 2 funcref) (memory 1)
//	  (func $dbl (type 0) local.get 0 local.get 0 i32.add)
//	  (elem (i32.const 1) $dbl)
//	  (export "memory" (memory 0)) (export "dbl" (func $dbl)))
var tableModule = []byte("\x00asm\x01\x00\x00\x00" +
	"\x01\x06\x01\x60\x01\x7f\x01\x7f" + // type
	"\x03\x02\x01\x00" + // function
	"\x04\x04\x01\x70\x00\x02" + // table
	"\x05\x03\x01\x00\x01" + // memory
	"\x07\x10\x02\x06memory\x02\x00\x03dbl\x00\x00" + // export
	"\x09\x07\x01\x00\x41\x01\x0b\x01\x00" + // elem
	"\x0a\x09\x01\x07\x00\x20\x00\x20\x00\x6a\x0b") // code

// exportTable adds an export of table 0 that an engine accepts, and the
// module keeps its other exports.
func TestExportTable(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, tableModule); err != nil {
		t.Fatalf("the fixture does not compile: %v", err)
	}
	out, ok := exportTable(tableModule, "dynop:table")
	if !ok {
		t.Fatal("exportTable did not export the table")
	}
	mod, err := rt.InstantiateWithConfig(ctx, out, wazero.NewModuleConfig())
	if err != nil {
		t.Fatalf("the rewritten module does not instantiate: %v", err)
	}
	if r, err := mod.ExportedFunction("dbl").Call(ctx, 21); err != nil || r[0] != 42 {
		t.Fatalf("dbl(21) = %v, %v; want 42", r, err)
	}
	if !bytes.Contains(out, []byte("dynop:table\x01\x00")) {
		t.Error("no table export in the rewritten module")
	}
	// Again: the name is exported already.
	if again, ok := exportTable(out, "dynop:table"); ok || !bytes.Equal(again, out) {
		t.Error("exportTable exported the table twice")
	}
}

// Modules exportTable cannot or need not change come back as they were.
func TestExportTableLeavesAlone(t *testing.T) {
	noTable := bytes.Replace(tableModule, []byte("\x04\x04\x01\x70\x00\x02"), nil, 1)
	for name, code := range map[string][]byte{
		"empty":            nil,
		"not wasm":         []byte("\x7fELF\x02\x01\x01\x00"),
		"no table":         noTable,
		"truncated":        tableModule[:len(tableModule)-19],
		"section too long": append(append([]byte{}, tableModule[:8]...), 0x01, 0xff, 0x01),
	} {
		if out, ok := exportTable(code, "dynop:table"); ok || !bytes.Equal(out, code) {
			t.Errorf("%s: exportTable changed the module", name)
		}
	}
}

// FuzzExportTable: whatever the bytes, exportTable does not panic, and
// what it changes still has every byte of the original after the export
// section.
func FuzzExportTable(f *testing.F) {
	f.Add(tableModule)
	f.Fuzz(func(t *testing.T, code []byte) {
		out, ok := exportTable(code, "t")
		if !ok && !bytes.Equal(out, code) {
			t.Fatal("changed the module without saying so")
		}
		if ok && len(out) <= len(code) {
			t.Fatalf("the rewritten module is %d bytes, the original %d", len(out), len(code))
		}
	})
}
