package abihost

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestLayoutsMatchTheCompilers compiles, with the C compiler and with
// clang for wasm32, a file asserting every offset the decoder uses
// (offsetof of each member, for pointers of 8 and 4 bytes): the Go
// layouts are dynop.h's as the compilers lay it out.
func TestLayoutsMatchTheCompilers(t *testing.T) {
	for _, target := range []struct {
		name    string
		ptrSize uint32
		cc      func(t *testing.T) []string
	}{
		{"native", 8, func(t *testing.T) []string { return []string{cbuild.Compiler(t, false)} }},
		{"wasm32", 4, func(t *testing.T) []string { return []string{cbuild.WasmCompiler(t), "--target=wasm32-wasi"} }},
	} {
		t.Run(target.name, func(t *testing.T) {
			cc := target.cc(t)
			offsets := Offsets(target.ptrSize)
			var b strings.Builder
			b.WriteString("#include <stddef.h>\n#include <dynop/dynop.h>\n")
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range offsets {
					if !yield(k) {
						return
					}
				}
			}) {
				typ, member, _ := strings.Cut(k, ".")
				fmt.Fprintf(&b, "_Static_assert(offsetof(%s, %s) == %d, \"%s is at %d in package abihost\");\n", typ, member, offsets[k], k, offsets[k])
			}
			src := filepath.Join(t.TempDir(), "layout.c")
			if err := os.WriteFile(src, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append(cc[1:], "-std=c11", "-fsyntax-only", "-I", cbuild.Path("abi/include"), src)
			if out, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(cc, " "), err, out)
			}
			if len(offsets) != 96 { // every member of the 12 structs
				t.Errorf("%d members checked, want 96", len(offsets))
			}
		})
	}
}
