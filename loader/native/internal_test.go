package native

import (
	"context"
	"fmt"
	"github.com/dynop/dynop/abi"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func TestHeaderMatchesGo(t *testing.T) {
	api, size := headerABI()
	if api != schema.APIVersion {
		t.Errorf("dynop.h says API %s, package plugin says %s", api, schema.APIVersion)
	}
	if size != abi.HeaderSize {
		t.Errorf("sizeof(dynop_header) = %d, abi.HeaderSize = %d", size, abi.HeaderSize)
	}
}

// TestTensorLayoutMatchesGo: dynop_tensor in dynop.h and tensor.DLTensor
// are the same bytes, so a Go tensor's descriptor can be handed to C as is.
func TestTensorLayoutMatchesGo(t *testing.T) {
	var g tensor.DLTensor
	want := [8]uintptr{unsafe.Sizeof(g), unsafe.Offsetof(g.Data), unsafe.Offsetof(g.Device), unsafe.Offsetof(g.NDim),
		unsafe.Offsetof(g.DType), unsafe.Offsetof(g.Shape), unsafe.Offsetof(g.Strides), unsafe.Offsetof(g.ByteOffset)}
	if got := tensorLayout(); got != want {
		t.Errorf("dynop_tensor size and offsets %v, tensor.DLTensor %v", got, want)
	}
	if cMaxNDim() != tensor.MaxNDim {
		t.Errorf("DYNOP_MAX_NDIM is %d, tensor.MaxNDim %d", cMaxNDim(), tensor.MaxNDim)
	}
}

// TestGlobalSymbols: a library is loaded RTLD_LOCAL unless the plugin
// asks for RTLD_GLOBAL with its flag or the host does with Options; only
// then do its symbols resolve in the global scope. Either way the library
// unloads when released, unless someone resolved a symbol in it: glibc then
// keeps it for them, so each case looks up a marker of its own, last.
func TestGlobalSymbols(t *testing.T) {
	uid := iface.MustParseUID("7E57F1C5-0000-4000-8000-0000000000F1")
	for i, c := range []struct {
		name       string
		defines    []string
		opts       Options
		wantGlobal bool
	}{
		{"local by default", nil, Options{}, false},
		{"plugin asks", []string{"-DGLOBAL"}, Options{}, true},
		{"host asks", nil, Options{GlobalSymbols: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			marker := fmt.Sprintf("dynop_fixture_marker_%d", i)
			lib := cbuild.Plugin(t, "libglobal.so", "loader/native/testdata/fixture.c", append(c.defines, "-DMARKER="+marker)...)
			p, err := Load(ctx, lib, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.GlobalSymbols() != c.wantGlobal {
				t.Errorf("GlobalSymbols() = %v, want %v", p.GlobalSymbols(), c.wantGlobal)
			}
			h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{p}, NoRegistered: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)
			cycle := func(check func()) {
				t.Helper()
				_, ref, err := h.Acquire(ctx, "dynop.plugin.fixture", uid, iface.V(1, 0, 0))
				if err != nil {
					t.Fatal(err)
				}
				if !cbuild.Mapped(t, lib) {
					t.Errorf("%s is not mapped while started", lib)
				}
				check()
				if err := ref.Release(); err != nil {
					t.Fatal(err)
				}
			}
			cycle(func() {})
			if cbuild.Mapped(t, lib) {
				t.Errorf("%s is still mapped after the last release", lib)
			}
			cycle(func() {
				if got := symbolVisible(marker); got != c.wantGlobal {
					t.Errorf("while started, %s visible = %v, want %v", marker, got, c.wantGlobal)
				}
			})
		})
	}
}

// TestResultCodes checks package abi's result constants against dynop.h.
func TestResultCodes(t *testing.T) {
	want := []abi.Result{abi.OK, abi.ErrorGeneric, abi.ErrorInvalidArgument, abi.ErrorNotFound, abi.ErrorVersion, abi.ErrorState,
		abi.ErrorCycle, abi.ErrorNoMemory, abi.ErrorUnsupported, abi.ErrorDuplicate, abi.ErrorType, abi.ErrorClosed}
	got := cResults()
	if !slices.Equal(got, want) {
		t.Fatalf("dynop.h's results are %v; package abi has %v", got, want)
	}
	for _, r := range got {
		if strings.HasPrefix(r.String(), "dynop_result(") {
			t.Errorf("result %d has no name", int32(r))
		}
	}
}
