package abi_test

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/schema"
)

// recipe builds the bytes abi/testdata/fuzzinfo.c makes an info of.
type recipe []byte

func (r recipe) b(v ...byte) recipe { return append(r, v...) }

// s is a string: its length and bytes, or one of the harness's codes
// (255 NULL, 254 70,000 bytes without a NUL, 253 10,000 bytes).
func (r recipe) s(text string) recipe {
	switch text {
	case "<NULL>":
		return append(r, 255)
	case "<no NUL>":
		return append(r, 254)
	case "<10 KB>":
		return append(r, 253)
	}
	return append(append(r, byte(len(text))), text...)
}

func (r recipe) u32(v uint32) recipe { return append(r, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }

// parts are the pieces of a plugin with one interface and one operator
// of one input, one output and one argument, which a case changes.
type parts struct {
	infoHeader recipe // how the info's header is broken, and its extra bytes
	id         string
	descHeader recipe
	ifaceName  string
	opName     string
	dtypes     string
	argType    byte
	argLie     recipe // after the args: the count lies
	ifaceLie   recipe // at the end: the interface count lies
}

func valid() parts {
	return parts{infoHeader: recipe{0}, id: "acme.plugin.fuzz", descHeader: recipe{0}, ifaceName: "acme.Fuzz", opName: "acme.Op",
		dtypes: "uint8", argType: 1, argLie: recipe{0}, ifaceLie: recipe{0}}
}

func (p parts) recipe() []byte {
	var r recipe
	r = r.b(0).b(p.infoHeader...).b(0).s(p.id).b(1, 2, 3).s("A plugin made by the fuzzer.").s("").s("").b(0)
	r = r.b(1, 0, 0).b(p.descHeader...) // one interface: the array, an element, its header
	r = r.b(0x5B, 0x1E, 0x0C, 0x3A, 0x2F, 0x64, 0x4B, 0x7E, 0x9D, 0x1A, 0x8C, 0x3F, 0x2E, 0x6A, 0x4B, 0x10).b(1, 1, 0).s(p.ifaceName)
	r = r.b(0)          // no needs
	r = r.b(0)          // no requirements
	r = r.b(1, 0, 0, 0) // one operator
	r = r.s(p.opName).s("Does nothing.").s("cpu").b(1, 0)
	r = r.b(0).s("in").s("").s(p.dtypes).s("").u32(0) // one input
	r = r.b(1).b(0).s("out").s("").s("")              // one output
	r = r.b(1).b(0).s("n").s("").b(p.argType, 0).u32(0).u32(0).s("<NULL>").s("<NULL>").s("<NULL>")
	r = r.b(p.argLie...)
	r = r.b(0) // no passes
	return r.b(p.ifaceLie...)
}

// TestMalformedInfoSameErrorBothLoaders feeds the same malformed infos
// through the native loader (fuzzinfo.c as a library) and the
// WebAssembly loader (the same C as a module): both read them with one
// decoder, so both fail with the same text after the loader's own
// "native: PATH: " or "wasm: PATH: ".
func TestMalformedInfoSameErrorBothLoaders(t *testing.T) {
	ctx := context.Background()
	lib := cbuild.Plugin(t, "libfuzzinfo.so", "abi/testdata/fuzzinfo.c")
	file := filepath.Join(t.TempDir(), "recipe")
	t.Setenv("DYNOP_FUZZ_INFO", file)
	var mod string
	load := func(t *testing.T, r []byte) (nativeErr, wasmErr error) {
		if err := os.WriteFile(file, r, 0o600); err != nil {
			t.Fatal(err)
		}
		// A module has no files: the recipe is built in.
		mod = cbuild.Wasm(t, "fuzzinfo.wasm", []string{"abi/testdata/fuzzinfo.c"}, `-DFUZZINFO_RECIPE="`+hex.EncodeToString(r)+`"`)
		_, nativeErr = native.Load(ctx, lib, native.Options{})
		_, wasmErr = wasm.Load(ctx, mod, dynop.Options{NoCache: true})
		return nativeErr, wasmErr
	}
	if n, w := load(t, valid().recipe()); n != nil || w != nil {
		t.Fatalf("the valid recipe: native %v, wasm %v", n, w)
	}
	for _, tc := range []struct {
		name   string
		change func(*parts)
		want   string // what the error says, after the loader's prefix
	}{
		{"header size broken", func(p *parts) { p.infoHeader = recipe{16}.u32(1 << 30) },
			"plugin breaks the dynop ABI: plugin info (get_info's result) says it is 1073741824 bytes, more than the 4096 any ABI struct may be: the size is broken"},
		{"header of another type", func(p *parts) { p.descHeader = recipe{1, 3} },
			"plugin breaks the dynop ABI: interfaces[0] has type UID {6D79A0C0-3B5E-4C1F-8E02-517AD4902B01}, want {6D79A0C1-3B5E-4C1F-8E02-517AD4902B01}: a struct of another type, or no dynop_header at its start"},
		{"version from the future", func(p *parts) { p.descHeader = recipe{2} },
			"plugin breaks the dynop ABI: interfaces[0] has layout version 2.0.0, which is from the future: this host reads major version 1"},
		{"interface count past the array", func(p *parts) { p.ifaceLie = recipe{0xEE}.u32(5) },
			"plugin breaks the dynop ABI: plugin info: interfaces has count 268435461, more than 4096: the count is broken"},
		{"argument count past the array", func(p *parts) { p.argLie = recipe{0xEE}.u32(7) },
			`plugin breaks the dynop ABI: operator "acme.Op" args: array is NULL or its count 268435463 is broken`},
		{"NULL interface name", func(p *parts) { p.ifaceName = "<NULL>" },
			"plugin breaks the dynop ABI: interfaces[0]: name is NULL"},
		{"NULL operator name", func(p *parts) { p.opName = "<NULL>" },
			"plugin breaks the dynop ABI: operators[0]: name is NULL"},
		{"NULL id", func(p *parts) { p.id = "<NULL>" },
			"plugin breaks the dynop ABI: plugin info: id is NULL"},
		{"out-of-range dtype", func(p *parts) { p.dtypes = "uint8,uint7" },
			`plugin breaks the dynop ABI: operator "acme.Op" input 0: `},
		{"argument type out of range", func(p *parts) { p.argType = 99 },
			`invalid info: invalid plugin info: plugin "acme.plugin.fuzz": provides invalid operator schema: operator "acme.Op": argument "n": unknown type 99`},
		{"a 10 KB id", func(p *parts) { p.id = "<10 KB>" },
			"invalid info: invalid plugin info: plugin id"},
		{"an id without its NUL", func(p *parts) { p.id = "<no NUL>" },
			"plugin breaks the dynop ABI: plugin info: id is longer than 65536 bytes, or not NUL-terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.change(&p)
			nErr, wErr := load(t, p.recipe())
			if nErr == nil || wErr == nil {
				t.Fatalf("accepted: native %v, wasm %v", nErr, wErr)
			}
			n := strings.TrimPrefix(nErr.Error(), "native: "+lib+": ")
			w := strings.TrimPrefix(wErr.Error(), "wasm: "+mod+": ")
			if n != w {
				t.Errorf("the loaders disagree:\nnative: %s\nwasm:   %s", n, w)
			}
			if !strings.HasPrefix(n, tc.want) {
				t.Errorf("error %q, want it to start with %q", n, tc.want)
			}
			for _, err := range []error{nErr, wErr} {
				if !errors.Is(err, native.ErrABI) && !errors.Is(err, schema.ErrPlugin) {
					t.Errorf("%v wraps neither ErrABI nor schema.ErrPlugin", err)
				}
			}
		})
	}
}
