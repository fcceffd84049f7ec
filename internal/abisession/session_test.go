package abisession

import (
	"errors"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/tensor"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// TestGateNested: a call that begins while Stop waits for another fails
// at once (no deadlock, unlike a read lock with a writer waiting), and
// Stop returns when the call in flight leaves.
func TestGateNested(t *testing.T) {
	var g Gate
	if !g.Enter() {
		t.Fatal("a new gate is closed")
	}
	stopped := make(chan struct{})
	go func() {
		g.Stop()
		close(stopped)
	}()
	for !g.Stopped() {
		runtime.Gosched()
	}
	select {
	case <-stopped:
		t.Fatal("Stop returned while a call was in flight")
	case <-time.After(20 * time.Millisecond):
	}
	nested := make(chan bool, 1)
	go func() { nested <- g.Enter() }()
	select {
	case ok := <-nested:
		if ok {
			t.Error("a call entered a stopping gate")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a nested call waits for Stop, which waits for the outer call")
	}
	g.Leave()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return after the call in flight")
	}
	if g.Enter() {
		t.Error("a stopped gate admits calls")
	}
}

type counter struct{ released int }

func (c *counter) ReleaseRef(uint64) error { c.released++; return nil }

func TestRefs(t *testing.T) {
	var refs Refs
	c := &counter{}
	newRef := friend.Get[func(interface{ ReleaseRef(uint64) error }, uint64) plugin.Ref]()
	a, b := refs.Add(newRef(c, 1)), refs.Add(newRef(c, 2))
	if a == 0 || a == b {
		t.Fatalf("tokens %d, %d", a, b)
	}
	if err := refs.Release(a, false); err != nil || c.released != 1 {
		t.Errorf("Release: %v, %d released", err, c.released)
	}
	if err := refs.Release(b, true); err != nil || c.released != 1 {
		t.Errorf("deferred Release: %v, %d released (the host releases it after unload)", err, c.released)
	}
	err := refs.Release(a, false)
	if !errors.Is(err, errdefs.ErrReleased) || err.Error() != "release("+strconv.FormatUint(a, 10)+"): reference already released: no such reference, or released already" {
		t.Errorf("Release twice: %v", err)
	}
}

// sampleInfo declares one interface and one operator on the cpu.
func sampleInfo() schema.Plugin {
	return schema.Plugin{ID: "acme.plugin.sample", Version: iface.V(1, 0, 0), APIVersion: schema.APIVersion,
		Interfaces: []iface.Desc{{UID: iface.MustParseUID("5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10"), Name: "dynop.example.Text", Version: iface.V(1, 1, 0)}},
		Operators:  []schema.Op{{Name: "acme.Blur", Devices: []schema.Device{schema.CPU}}}}
}

func TestCheckInterface(t *testing.T) {
	info := sampleInfo()
	d := info.Interfaces[0]
	if got, err := CheckInterface(&info, abi.Header{Type: d.UID, Version: d.Version, Size: 48}); err != nil || got != d {
		t.Errorf("CheckInterface: %v, %v", got, err)
	}
	for _, tc := range []struct {
		h    abi.Header
		want error
		text string
	}{
		{abi.Header{Type: iface.MustParseUID("00000000-0000-0000-0000-000000000001"), Version: d.Version, Size: 48}, schema.ErrPlugin, "declares no interface with that UID"},
		{abi.Header{Type: d.UID, Version: d.Version, Size: 8}, errdefs.ErrABI, "its header says 8 bytes, less than the header itself (32)"},
		{abi.Header{Type: d.UID, Version: iface.V(1, 0, 0), Size: 48}, iface.ErrVersion, "the table has version 1.0.0"},
	} {
		if _, err := CheckInterface(&info, tc.h); !errors.Is(err, tc.want) || !contains(err, tc.text) {
			t.Errorf("CheckInterface(%+v): %v, want %v saying %q", tc.h, err, tc.want, tc.text)
		}
	}
}

func TestCheckOperator(t *testing.T) {
	info := sampleInfo()
	if s, err := CheckOperator(&info, "acme.Blur", "cpu"); err != nil || s.Name != "acme.Blur" {
		t.Errorf("CheckOperator: %v", err)
	}
	if _, err := CheckOperator(&info, "acme.Sharpen", "cpu"); !errors.Is(err, schema.ErrPlugin) || !contains(err, "a backend without a schema") {
		t.Errorf("an undeclared operator: %v", err)
	}
	if _, err := CheckOperator(&info, "acme.Blur", "gpu"); !errors.Is(err, schema.ErrPlugin) || !contains(err, "the schema lists devices [cpu]") {
		t.Errorf("an unlisted device: %v", err)
	}
}

func contains(err error, text string) bool {
	return err != nil && text != "" && strings.Contains(err.Error(), text)
}

func TestLoaderData(t *testing.T) {
	var d struct{ Flags uint32 }
	d.Flags = 7
	if err := LoaderData("native", &discover.File{Path: "/p/x.so"}, &d); err != nil || d.Flags != 7 {
		t.Errorf("no loader data: %v, flags %d (want untouched 7)", err, d.Flags)
	}
	if err := LoaderData("native", &discover.File{Path: "/p/x.so", Loader: []byte(`{"flags":3}`)}, &d); err != nil || d.Flags != 3 {
		t.Errorf("loader data: %v, flags %d, want 3", err, d.Flags)
	}
	err := LoaderData("wasm", &discover.File{Path: "/p/x.wasm", Loader: []byte(`{"flags":"x"}`)}, &d)
	if !errors.Is(err, discover.ErrManifest) || !strings.HasPrefix(err.Error(), "wasm: /p/x.wasm: ") || !strings.Contains(err.Error(), "the manifest's loader data") {
		t.Errorf("bad loader data: %v", err)
	}
}

func TestCheckVariants(t *testing.T) {
	good := []abihost.Variant{{Name: "avx2", Needs: uint64(dispatch.Of(dispatch.AVX2))}, {Name: "scalar"}}
	desc, err := CheckVariants("variants", good)
	if err != nil || len(desc) != 2 || desc[0].Needs != dispatch.Of(dispatch.AVX2) || desc[1].Name != "scalar" {
		t.Fatalf("CheckVariants(good) = %v, %v", desc, err)
	}
	for _, c := range []struct {
		vs   []abihost.Variant
		want string
	}{
		{[]abihost.Variant{{Name: "a"}, {Name: "a"}}, `select_variant f: malformed list of variants: variant name "a" used twice`},
		{[]abihost.Variant{{Name: "x", Needs: 1 << 63}}, `needs unknown feature bits 0x8000000000000000`},
	} {
		_, err := CheckVariants("select_variant f", c.vs)
		if !errors.Is(err, errdefs.ErrABI) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckVariants(%v) = %v, want ErrABI saying %q", c.vs, err, c.want)
		}
	}
	if err := CheckOperatorVariants(abihost.Operator{Name: "t.Op", Device: "cpu"}); err != nil {
		t.Errorf("an operator without variants: %v", err)
	}
	err = CheckOperatorVariants(abihost.Operator{Name: "t.Op", Device: "cpu", Variants: []abihost.Variant{{Name: "b"}, {Name: "b"}}})
	if !errors.Is(err, errdefs.ErrABI) || !strings.HasPrefix(err.Error(), `register_operator "t.Op" (cpu): plugin breaks the dynop ABI: variants: `) {
		t.Errorf("CheckOperatorVariants = %v", err)
	}
}

func TestSamples(t *testing.T) {
	x, err1 := tensor.FromSlice([]float32{1}, 1)
	y, err2 := tensor.FromSlice([]float32{2, 3}, 2)
	b, err3 := tensor.NewBatch(x, y)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if n := Samples(nil); n != 1 {
		t.Errorf("Samples(no inputs) = %d, want 1: an operator without inputs makes one sample", n)
	}
	if n := Samples([]*tensor.Batch{b, b}); n != 2 {
		t.Errorf("Samples(two batches of 2) = %d, want 2", n)
	}
}
