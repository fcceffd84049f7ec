package native_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/schema"
)

// recipe builds the bytes testdata/fuzzinfo.c reads an info from.
type recipe []byte

func (r recipe) b(v ...byte) recipe { return append(r, v...) }

func (r recipe) s(text string) recipe { return append(append(r, byte(len(text))), text...) }

func (r recipe) u32(v uint32) recipe { return append(r, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }

// validRecipe is a plugin with one interface and one operator of one input
// and one output, every header as its struct.
func validRecipe() recipe {
	var r recipe
	r = r.b(0, 0, 0).s("acme.plugin.fuzz").b(1, 2, 3).s("A plugin made by the fuzzer.").s("").s("").b(0)
	r = r.b(1, 0, 0, 0) // one interface: the array, an element, its header as is
	r = r.b(0x5B, 0x1E, 0x0C, 0x3A, 0x2F, 0x64, 0x4B, 0x7E, 0x9D, 0x1A, 0x8C, 0x3F, 0x2E, 0x6A, 0x4B, 0x10).b(1, 1, 0).s("acme.Fuzz")
	r = r.b(0)          // no needs
	r = r.b(0)          // no requirements
	r = r.b(1, 0, 0, 0) // one operator
	r = r.s("acme.Op").s("Does nothing.").s("cpu").b(1, 0)
	r = r.b(0).s("in").s("").s("uint8").s("").u32(0) // one input
	r = r.b(1).b(0).s("out").s("").s("")             // one output
	r = r.b(0).b(0)                                  // no args, NULL array
	r = r.b(0)                                       // the arg count is true
	r = r.b(0)                                       // no passes
	return r.b(0)                                    // the interface count is true
}

// FuzzNativeInfo reads infos that a C harness builds from the input —
// headers of other types, versions and sizes, NULLs, long strings without
// their NUL, counts that lie beyond any the reader takes, ragged arrays —
// through native.Load, in this process. The reader must neither crash nor
// accept anything invalid: an error names the file and wraps native.ErrABI
// or schema.ErrPlugin; an info that loads validates.
func FuzzNativeInfo(f *testing.F) {
	lib := cbuild.Plugin(f, "libfuzzinfo.so", "abi/testdata/fuzzinfo.c")
	in := filepath.Join(f.TempDir(), "recipe")
	os.Setenv("DYNOP_FUZZ_INFO", in)
	valid := validRecipe()
	f.Add([]byte(valid))
	f.Add([]byte{0xEE})
	f.Add([]byte{0, 4, 10})           // an info header of 40 bytes
	f.Add([]byte{0, 16, 0, 0, 0, 64}) // an info header of 1 GiB
	f.Add([]byte{0, 1, 3})            // another type
	f.Add([]byte{0, 2})               // a major version from the future
	f.Add([]byte{0, 0, 0, 254})       // an id without its NUL
	for _, i := range []int{3, 24, 40, 60, 75, 90, 100} {
		if i < len(valid) {
			mutated := append(recipe(nil), valid...)
			mutated[i] ^= 0xFF
			f.Add([]byte(mutated))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(in, data, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := native.Load(ctx, lib, native.Options{})
		if err != nil {
			if !errors.Is(err, native.ErrABI) && !errors.Is(err, schema.ErrPlugin) {
				t.Errorf("Load: %v: wraps neither native.ErrABI nor schema.ErrPlugin", err)
			}
			if !strings.Contains(err.Error(), lib) {
				t.Errorf("Load: %v: does not name the file", err)
			}
			return
		}
		if err := p.Info().Validate(); err != nil {
			t.Errorf("Load accepted an invalid info: %v", err)
		}
	})
}

// TestNativeInfoRecipe: the fuzz target's valid seed is a valid plugin,
// so that mutations start from one.
func TestNativeInfoRecipe(t *testing.T) {
	lib := cbuild.Plugin(t, "libfuzzinfo.so", "abi/testdata/fuzzinfo.c")
	in := filepath.Join(t.TempDir(), "recipe")
	t.Setenv("DYNOP_FUZZ_INFO", in)
	if err := os.WriteFile(in, validRecipe(), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := native.Load(ctx, lib, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := p.Info()
	if info.ID != "acme.plugin.fuzz" || len(info.Interfaces) != 1 || len(info.Operators) != 1 || info.Operators[0].Inputs[0].Name != "in" {
		t.Errorf("info %+v", info)
	}
}
