package abi_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// probe is the interface results.c acquires from dynop.plugin.fail_N.
var probe = iface.Desc{UID: iface.MustParseUID("3F9A2C51-7D0E-4B6A-8E21-5C4D901BA736"), Name: "dynop.test.Probe", Version: iface.V(1, 0, 0)}

// failing is a Go plugin whose start fails with err.
type failing struct {
	id  string
	err error
}

func (f failing) Info() schema.Plugin {
	return schema.Plugin{ID: f.id, Version: iface.V(1, 0, 0), APIVersion: schema.APIVersion, Interfaces: []iface.Desc{probe}}
}

func (f failing) Start(context.Context, plugin.Registrar) error { return f.err }

// lastCode is the highest dynop_result dynop.h defines.
const lastCode = abi.ErrorClosed

// hostError returns the host error that stands for code, for a failing
// plugin's start, and the code a plugin should get back for it: the
// sentinel's own, or DYNOP_ERROR for a code without one.
func hostError(code abi.Result) (error, abi.Result) {
	if s := abi.Sentinel(code); s != nil {
		return fmt.Errorf("fails on purpose: %w", s), code
	}
	return errors.New("fails on purpose"), abi.ErrorGeneric
}

// TestResultsBothWaysBothLoaders walks every dynop_result code both ways
// through both loaders, with one C plugin built as a native library and
// as a WebAssembly module:
//   - plugin to host: an operator's create returns the code; the host's
//     error is an *abi.ResultError with that code, matches the host's
//     sentinel for it (and no other) with errors.Is, and maps back to the
//     code;
//   - host to plugin: the plugin's acquire fails because the plugin
//     acquired fails to start with the host's sentinel for the code (or
//     does not exist, for DYNOP_ERROR_NOT_FOUND), and acquire returns the
//     code.
func TestResultsBothWaysBothLoaders(t *testing.T) {
	ctx := context.Background()
	for _, loader := range []struct {
		name string
		load func(t *testing.T) plugin.Plugin
	}{
		{"native", func(t *testing.T) plugin.Plugin {
			p, err := native.Load(ctx, cbuild.Plugin(t, "libresults.so", "abi/testdata/results.c"), native.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"wasm", func(t *testing.T) plugin.Plugin {
			p, err := wasm.Load(ctx, cbuild.Wasm(t, "results.wasm", []string{"abi/testdata/results.c"}), dynop.Options{NoCache: true})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(loader.name, func(t *testing.T) {
			plugins := []plugin.Plugin{loader.load(t)}
			wantAcquire := map[string]abi.Result{}
			for code := abi.ErrorGeneric; code <= lastCode; code++ {
				id := fmt.Sprintf("dynop.plugin.fail_%d", code)
				if code == abi.ErrorNotFound {
					wantAcquire[id] = code // no such plugin
					continue
				}
				err, want := hostError(code)
				plugins = append(plugins, failing{id, err})
				wantAcquire[id] = want
			}
			var logs testutil.LogBuffer
			h, err := dynop.Open(ctx, dynop.Options{Plugins: plugins, NoRegistered: true, NoDefaultPaths: true, NoCache: true, Logger: logs.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)

			// Plugin to host.
			for code := abi.OK; code <= lastCode+1; code++ {
				in, err := h.NewOperator(ctx, "results.Return", schema.Args{"code": int64(code)})
				if code == abi.OK {
					if err != nil {
						t.Fatalf("code 0: %v", err)
					}
					in.Close()
					continue
				}
				var re *abi.ResultError
				if !errors.As(err, &re) || re.Result != code {
					t.Errorf("create returning %d (%v): error %v is not a ResultError with that code", code, code, err)
					continue
				}
				if re.Message != fmt.Sprintf("create returns code %d on purpose", code) {
					t.Errorf("%v: message %q", code, re.Message)
				}
				want := abi.Sentinel(code)
				for other := abi.ErrorGeneric; other <= lastCode; other++ {
					s := abi.Sentinel(other)
					if s != nil && errors.Is(err, s) != (s == want) {
						t.Errorf("%v: errors.Is(err, sentinel of %v) = %v", code, other, !(s == want))
					}
				}
				back := abi.ErrorGeneric
				if want != nil {
					back = code
				}
				if got := abi.ResultOf(err); got != back {
					t.Errorf("%v: ResultOf(the error) = %v, want %v", code, got, back)
				}
			}

			// Host to plugin: register's acquires, as the plugin logged them.
			got := map[string]abi.Result{}
			for _, m := range regexp.MustCompile(`acquire (dynop\.plugin\.fail_\d+): (-?\d+)`).FindAllStringSubmatch(logs.String(), -1) {
				if _, seen := got[m[1]]; !seen { // a wasm replica's register logs again
					n, _ := strconv.Atoi(m[2])
					got[m[1]] = abi.Result(n)
				}
			}
			for id, want := range wantAcquire {
				if got[id] != want {
					t.Errorf("acquire %s returned %v to the plugin, want %v", id, got[id], want)
				}
			}
		})
	}
}

// TestSentinels: every code but DYNOP_OK, DYNOP_ERROR and
// DYNOP_ERROR_NO_MEMORY has a sentinel of its own, which maps back to it,
// and the one-way mappings hold.
func TestSentinels(t *testing.T) {
	seen := map[error]abi.Result{}
	for code := abi.OK; code <= lastCode+1; code++ {
		s := abi.Sentinel(code)
		switch code {
		case abi.OK, abi.ErrorGeneric, abi.ErrorNoMemory, lastCode + 1:
			if s != nil {
				t.Errorf("Sentinel(%v) = %v, want nil", code, s)
			}
			continue
		}
		if s == nil {
			t.Errorf("Sentinel(%v) = nil", code)
			continue
		}
		if other, dup := seen[s]; dup {
			t.Errorf("%v and %v share sentinel %v", code, other, s)
		}
		seen[s] = code
		if got := abi.ResultOf(fmt.Errorf("x: %w", s)); got != code {
			t.Errorf("ResultOf(%v) = %v, want %v", s, got, code)
		}
	}
	for _, tc := range []struct {
		err  error
		want abi.Result
	}{
		{nil, abi.OK},
		{errors.New("x"), abi.ErrorGeneric},
		{dynop.ErrReleased, abi.ErrorState},
		{errors.ErrUnsupported, abi.ErrorUnsupported},
		{dynop.ErrUnsupported, abi.ErrorUnsupported},
		{dynop.ErrNotFound, abi.ErrorNotFound},
		{dynop.ErrInvalid, abi.ErrorInvalidArgument},
		{dynop.ErrClosed, abi.ErrorClosed},
	} {
		if got := abi.ResultOf(tc.err); got != tc.want {
			t.Errorf("ResultOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	// The bug issue 22 names: DYNOP_ERROR_UNSUPPORTED was errors.ErrUnsupported, not dynop.ErrUnsupported.
	if !errors.Is(&abi.ResultError{Result: abi.ErrorUnsupported}, dynop.ErrUnsupported) {
		t.Error("a plugin's DYNOP_ERROR_UNSUPPORTED does not match dynop.ErrUnsupported")
	}
}
