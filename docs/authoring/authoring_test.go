package authoring_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/dynop/dynop/abi"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/docs/authoring/lifecycle/counter"
	"github.com/dynop/dynop/docs/authoring/signing"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/demo"
	"github.com/dynop/dynop/internal/scaffold"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
	"github.com/dynop/dynop/tensor"
)

// TestMain serves as the scanner child process when a host of the tests
// (one over a plugin file without a manifest) starts this binary as one.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}

// logBuffer collects a host's log; hosts log from many goroutines.
type logBuffer = testutil.LogBuffer

// openHost opens a host over the plugin files paths, isolated from the
// machine's plugins and registry cache, logging at debug level into log
// (if not nil); more adjusts the options. It closes the host when the
// test ends, failing the test if a reference leaked.
func openHost(t *testing.T, log *logBuffer, paths []string, more func(*dynop.Options)) *dynop.Host {
	t.Helper()
	opts := dynop.Options{Paths: paths, NoDefaultPaths: true, NoRegistered: true, CacheDir: t.TempDir()}
	if log != nil {
		opts.Logger = demo.Logger(log)
	} else {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if more != nil {
		more(&opts)
	}
	h, err := dynop.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("closing the host: %v", err)
		}
	})
	return h
}

// status returns the status of plugin id, failing the test if h lacks it.
func status(t *testing.T, h *dynop.Host, id string) dynop.PluginStatus {
	t.Helper()
	st, err := h.Plugin(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLifecycle runs lifecycle/lifecycle.c through a host: nothing is
// loaded at open; the first acquisition starts VecMath from the counter's
// register; calls reach the plugin from many goroutines; the release
// calls deregister, unloads the library and then stops VecMath; a second
// start begins with fresh static data. Without VecMath, register fails
// and the host unloads the library without calling deregister.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	vm := cbuild.VecMath(t)
	lib := cbuild.Plugin(t, "libacme_counter.so", "docs/authoring/lifecycle/lifecycle.c", "-I", cbuild.Path("plugins/vecmath"))

	var log logBuffer
	h := openHost(t, &log, []string{vm, lib}, nil)
	if st := status(t, h, counter.PluginID); st.State != dynop.StateAvailable || cbuild.Mapped(t, lib) {
		t.Fatalf("after open: %s is %s (mapped %t), want available and not loaded", counter.PluginID, st.State, cbuild.Mapped(t, lib))
	}

	c, ref, err := dynop.Acquire(ctx, h, counter.PluginID, counter.Interface)
	if err != nil {
		t.Fatal(err)
	}
	if !cbuild.Mapped(t, lib) {
		t.Error("the library is not loaded after the acquisition")
	}
	if got := c.Norm2([]float32{1, 2, 3}); got != 14 {
		t.Errorf("Norm2(1, 2, 3) = %g, want 14", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				c.Next()
			}
		})
	}
	wg.Wait()
	if got := c.Next(); got != 8001 {
		t.Errorf("after 8000 concurrent calls Next() = %d, want 8001", got)
	}
	if st := status(t, h, "dynop.plugin.vecmath"); st.State != dynop.StateStarted || st.Refs != 1 {
		t.Errorf("vecmath is %s with %d references while the counter holds it, want started with 1", st.State, st.Refs)
	}
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
	if cbuild.Mapped(t, lib) {
		t.Error("the library is still loaded after the last release")
	}
	// The order the guide shows, line by line.
	order := []string{
		`level=DEBUG msg="plugin starting" plugin=acme.plugin.counter`,
		`level=INFO msg=register plugin=acme.plugin.counter native=true`,
		`level=DEBUG msg="plugin starting" plugin=dynop.plugin.vecmath`,
		`level=DEBUG msg="vecmath: registered" plugin=dynop.plugin.vecmath native=true`,
		`level=DEBUG msg="plugin started" plugin=dynop.plugin.vecmath`,
		`level=DEBUG msg="plugin started" plugin=acme.plugin.counter`,
		`level=DEBUG msg="plugin stopping" plugin=acme.plugin.counter`,
		`level=INFO msg=deregister plugin=acme.plugin.counter native=true`,
		`level=DEBUG msg="plugin stopped" plugin=acme.plugin.counter`,
		`level=DEBUG msg="plugin stopping" plugin=dynop.plugin.vecmath`,
		`level=DEBUG msg="plugin stopped" plugin=dynop.plugin.vecmath`,
	}
	demo.CheckOrder(t, log.String(), order...)
	inGuide(t, strings.Join(order, "\n"))

	// A new start loads the library afresh: its static data starts over.
	c, ref, err = dynop.Acquire(ctx, h, counter.PluginID, counter.Interface)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Next(); got != 1 {
		t.Errorf("after a restart Next() = %d, want 1", got)
	}
	ref.Release()

	t.Run("register fails", func(t *testing.T) {
		var log logBuffer
		h := openHost(t, &log, []string{lib}, nil) // no VecMath on the path
		_, _, err := dynop.Acquire(ctx, h, counter.PluginID, counter.Interface)
		if !errors.Is(err, dynop.ErrNotFound) || !strings.Contains(err.Error(), "dynop.plugin.vecmath") {
			t.Fatalf("err = %v, want one wrapping dynop.ErrNotFound that names dynop.plugin.vecmath", err)
		}
		inGuide(t, err.Error())
		st := status(t, h, counter.PluginID)
		if st.State != dynop.StateAvailable || st.Starts != 0 || cbuild.Mapped(t, lib) {
			t.Errorf("after a failed register the plugin is %s, started %d times, mapped %t; want available, 0, not mapped", st.State, st.Starts, cbuild.Mapped(t, lib))
		}
		if out := log.String(); !strings.Contains(out, "msg=register") || strings.Contains(out, "msg=deregister") {
			t.Errorf("want register called and deregister not:\n%s", out)
		}
	})
}

// apply makes an instance of operator name with args on h, runs it over
// the uint8 tensor x, closes it, and returns the output's elements and
// the variant that ran. It may run on any goroutine.
func apply(h *dynop.Host, name string, args schema.Args, x *tensor.Tensor, opts ...op.Option) (y []uint8, variant string, err error) {
	in, err := h.NewOperator(context.Background(), name, args, opts...)
	if err != nil {
		return nil, "", err
	}
	defer func() { err = errors.Join(err, in.Close()) }()
	b, err := tensor.NewBatch(x)
	if err != nil {
		return nil, "", err
	}
	outs, err := in.Exec(context.Background(), b)
	if err != nil {
		return nil, in.Variant(), err
	}
	y, err = tensor.Values[uint8](outs[0].Sample(0))
	return y, in.Variant(), err
}

// u8 returns a uint8 tensor of the given shape over s.
func u8(t *testing.T, s []uint8, shape ...int64) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(s, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestScratch runs scratch/scratch.c: the operator pads its row in the
// scratch it asked the host for, and stays inside it (the bounds-checking
// mode guards it).
func TestScratch(t *testing.T) {
	t.Setenv(native.CheckBoundsEnv, "1")
	lib := cbuild.Plugin(t, "libacme_boxblur.so", "docs/authoring/scratch/scratch.c")
	h := openHost(t, nil, []string{lib}, nil)
	x := []uint8{0, 3, 6, 9, 255, 0, 30}
	want := []uint8{1, 3, 6, 90, 88, 95, 20} // (a+b+c+1)/3, the ends replicated
	y, _, err := apply(h, "acme.BoxBlur3", nil, u8(t, x, int64(len(x))))
	if err != nil || !bytes.Equal(y, want) {
		t.Errorf("BoxBlur3(%v) = %v, %v; want %v", x, y, err, want)
	}
	// A view that starts inside its buffer, and an empty vector.
	long := append([]uint8{7, 7}, x...)
	view, err := u8(t, long, int64(len(long))).Slice(0, 2, int64(len(long)))
	if err != nil {
		t.Fatal(err)
	}
	if y, _, err := apply(h, "acme.BoxBlur3", nil, view); err != nil || !bytes.Equal(y, want) {
		t.Errorf("a view at offset 2: %v, %v; want %v", y, err, want)
	}
	if y, _, err := apply(h, "acme.BoxBlur3", nil, u8(t, nil, 0)); err != nil || len(y) != 0 {
		t.Errorf("an empty vector: %v, %v", y, err)
	}
}

// TestABI runs abi/threshold.c: arguments reach create (a string one
// copied), an argument the schema does not allow is refused before the
// plugin starts, instances run on several goroutines at once, and a
// strided input fails the call with the message the plugin gave
// set_error.
func TestABI(t *testing.T) {
	lib := cbuild.Plugin(t, "libacme_threshold.so", "docs/authoring/abi/threshold.c")
	h := openHost(t, nil, []string{lib}, nil)
	const id = "acme.plugin.threshold"

	_, _, err := apply(h, "acme.Threshold", schema.Args{"mode": "sideways"}, u8(t, []uint8{1}, 1))
	if !errors.Is(err, schema.ErrArgument) || status(t, h, id).Starts != 0 {
		t.Fatalf("mode sideways: err = %v, plugin started %d times; want schema.ErrArgument and no start", err, status(t, h, id).Starts)
	}

	x := u8(t, []uint8{0, 99, 100, 101, 255, 7}, 2, 3)
	var wg sync.WaitGroup
	for _, c := range []struct {
		args schema.Args
		want []uint8
	}{
		{schema.Args{}, []uint8{0, 0, 0, 0, 255, 0}},                                  // level 128, mode above
		{schema.Args{"level": 100}, []uint8{0, 0, 255, 255, 255, 0}},                  // x >= 100
		{schema.Args{"level": 100, "mode": "below"}, []uint8{255, 255, 0, 0, 0, 255}}, // x < 100
	} {
		wg.Go(func() { // instances run on several goroutines at once
			for range 50 {
				y, _, err := apply(h, "acme.Threshold", c.args, x)
				if err != nil || !bytes.Equal(y, c.want) {
					t.Errorf("%v: %v, %v; want %v", c.args, y, err, c.want)
					return
				}
			}
		})
	}
	wg.Wait()

	img := u8(t, make([]uint8, 4*4), 4, 4)
	crop, err := img.Crop([]int64{1, 1}, []int64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = apply(h, "acme.Threshold", nil, crop)
	re, ok := errors.AsType[*abi.ResultError](err)
	if !ok || !errors.Is(err, dynop.ErrInvalid) || re.Message != "acme.Threshold takes compact tensors only" {
		t.Fatalf("a strided input: err = %v, want a abi.ResultError wrapping dynop.ErrInvalid with the plugin's message", err)
	}
	inGuide(t, err.Error())
}

// TestVersioning runs versioning/versioning.c: a caller that asks for
// interface version 1.0 or 1.1 gets the 1.1 table, one that asks for 1.2
// or 2.0 gets ErrVersion before the plugin starts. It checks the
// compatibility rule while the major version is 0 and that a plugin
// built for a newer plugin API is unsupported.
func TestVersioning(t *testing.T) {
	ctx := context.Background()
	lib := cbuild.Plugin(t, "libacme_greeting.so", "docs/authoring/versioning/versioning.c")
	h := openHost(t, nil, []string{lib}, nil)
	const id = "acme.plugin.greeting"
	uid := iface.MustParseUID("982F9967-62F5-4705-9D28-E6206F992FC5")
	if v := status(t, h, id).Info.Version; v != iface.V(2, 1, 0) {
		t.Errorf("plugin version %v, want 2.1.0", v)
	}
	for _, min := range []iface.Version{iface.V(1, 0, 0), iface.V(1, 1, 0), iface.V(1, 0, 7)} {
		impl, ref, err := h.Acquire(ctx, id, uid, min)
		if err != nil {
			t.Fatalf("asking for %v: %v", min, err)
		}
		hd := impl.(native.Table).Header()
		if hd.Version != iface.V(1, 1, 0) || hd.Size != 32+2*8 {
			t.Errorf("asking for %v: got a table of version %v and %d bytes, want 1.1.0 and 48", min, hd.Version, hd.Size)
		}
		ref.Release()
	}
	for _, min := range []iface.Version{iface.V(1, 2, 0), iface.V(2, 0, 0), iface.V(0, 9, 0)} {
		_, _, err := h.Acquire(ctx, id, uid, min)
		if !errors.Is(err, dynop.ErrVersion) {
			t.Errorf("asking for %v: err = %v, want dynop.ErrVersion", min, err)
		}
		if min == iface.V(1, 2, 0) {
			inGuide(t, err.Error())
		}
	}
	if n := status(t, h, id).Starts; n != 3 {
		t.Errorf("the plugin started %d times, want 3: a version mismatch is found before it starts", n)
	}

	// While the major version is 0, minors must be equal; the patch never decides.
	for _, c := range []struct {
		provided, requested iface.Version
		ok                  bool
	}{
		{iface.V(1, 3, 0), iface.V(1, 1, 0), true},
		{iface.V(0, 2, 0), iface.V(0, 1, 0), false},
		{iface.V(0, 1, 0), iface.V(0, 2, 0), false},
		{iface.V(0, 1, 0), iface.V(0, 1, 9), true},
	} {
		if iface.Compatible(c.provided, c.requested) != c.ok {
			t.Errorf("Compatible(%v, %v) = %t", c.provided, c.requested, !c.ok)
		}
	}

	// A plugin built for another minor of plugin API 0 is unsupported.
	next := iface.V(schema.APIVersion.Major, schema.APIVersion.Minor+1, 0)
	h = openHost(t, nil, nil, func(o *dynop.Options) { o.Plugins = []plugin.Plugin{apiPlugin{next}} })
	st := status(t, h, "acme.plugin.future")
	if st.State != dynop.StateUnsupported || !errors.Is(st.Err, dynop.ErrUnsupported) {
		t.Errorf("a plugin for API %v is %s (%v), want unsupported", next, st.State, st.Err)
	}
	inGuide(t, st.Err.Error())
}

// apiPlugin is a Go plugin built for plugin API api.
type apiPlugin struct{ api iface.Version }

func (p apiPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: "acme.plugin.future", Version: iface.V(1, 0, 0), APIVersion: p.api}
}

func (apiPlugin) Start(context.Context, plugin.Registrar) error { return nil }

// TestVariants runs variants/variants.c: the host binds the AVX2 variant
// on a CPU with AVX2 and the scalar one with AVX2 turned off
// (Options.CPUFeatures, as $DYNOP_CPU_FEATURES), both compute the same,
// and Options.VerifyVariants finds no disagreement.
func TestVariants(t *testing.T) {
	lib := cbuild.Plugin(t, "libacme_invert.so", "docs/authoring/variants/variants.c")
	x := make([]uint8, 1000)
	for i := range x {
		x[i] = uint8(i * 7)
	}
	want := make([]uint8, len(x))
	for i, v := range x {
		want[i] = 255 - v
	}
	for _, c := range []struct {
		features string
		want     string
	}{
		{"", "avx2"},
		{"-avx2", "scalar"},
	} {
		var log logBuffer
		h := openHost(t, &log, []string{lib}, func(o *dynop.Options) {
			o.CPUFeatures, o.VerifyVariants = c.features, true
		})
		if c.want == "avx2" && !h.CPU().Available().Has(dispatch.AVX2) {
			c.want = "scalar" // not on this CPU
		}
		y, variant, err := apply(h, "acme.Invert", nil, u8(t, x, int64(len(x))))
		if err != nil {
			t.Fatal(err)
		}
		if variant != c.want || !bytes.Equal(y, want) {
			t.Errorf("CPUFeatures %q: variant %s computed %v…, want %s computing %v…", c.features, variant, y[:4], c.want, want[:4])
		}
		if c.want == "avx2" && !strings.Contains(log.String(), `msg="variant agrees with the reference" operator=acme.Invert plugin=acme.plugin.invert variant=avx2`) {
			t.Errorf("no verification of the avx2 variant in the log:\n%s", log.String())
		}
		if strings.Contains(log.String(), "level=WARN") {
			t.Errorf("CPUFeatures %q: warnings:\n%s", c.features, log.String())
		}
		// A variant can be forced, for tests and benchmarks.
		if _, variant, err := apply(h, "acme.Invert", nil, u8(t, x, int64(len(x))), op.WithVariant("scalar")); err != nil || variant != "scalar" {
			t.Errorf("WithVariant(scalar): variant %s, %v", variant, err)
		}
	}
}

// TestSandbox runs the examples in the WebAssembly sandbox: the Go module
// gowasm/main.go asks for the clock, so a host that does not grant it
// lists it as unsupported and one that does runs it; the C examples built
// for wasm32 with the shim compute what their native builds compute
// (the reference variant, for variants.c), also with SandboxAlways over
// both builds; a C module asking for a capability is refused likewise;
// and an input larger than the module's memory limit fails the call.
func TestSandbox(t *testing.T) {
	t.Run("go", func(t *testing.T) {
		mod := cbuild.GoWasm(t, "docs/authoring/gowasm")
		cache := t.TempDir() // shared: the module is compiled once
		h := openHost(t, nil, []string{mod}, func(o *dynop.Options) { o.CacheDir = cache })
		st := status(t, h, "acme.plugin.clock")
		if st.State != dynop.StateUnsupported || !errors.Is(st.Err, dynop.ErrUnsupported) || !errors.Is(st.Err, wasm.ErrCapability) {
			t.Fatalf("without the clock granted the plugin is %s (%v), want unsupported wrapping wasm.ErrCapability", st.State, st.Err)
		}
		inGuide(t, strings.ReplaceAll(st.Err.Error(), filepath.Dir(mod), "…"))

		var log logBuffer
		h = openHost(t, &log, []string{mod}, func(o *dynop.Options) {
			o.CacheDir = cache
			o.Loaders = []dynop.LoaderConfig{wasm.Config{Grant: []string{"clock"}}}
		})
		in, err := h.NewOperator(context.Background(), "clock.Stamp", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		b, _ := tensor.NewBatch(u8(t, []uint8{0}, 1))
		outs, err := in.Exec(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := tensor.Values[int64](outs[0].Sample(0))
		if d := time.Since(time.UnixMilli(ms[0])); d < -time.Minute || d > time.Minute {
			t.Errorf("clock.Stamp = %d, %v from now", ms[0], d)
		}
		if !strings.Contains(log.String(), `msg="clock: started" plugin=acme.plugin.clock`) {
			t.Errorf("the plugin's Start did not log:\n%s", log.String())
		}
	})

	t.Run("c", func(t *testing.T) {
		lib := cbuild.Plugin(t, "libacme_threshold.so", "docs/authoring/abi/threshold.c")
		mod := cbuild.Wasm(t, "threshold.wasm", []string{"docs/authoring/abi/threshold.c"})
		inv := cbuild.Wasm(t, "invert.wasm", []string{"docs/authoring/variants/variants.c"})
		clock := cbuild.Wasm(t, "clock.wasm", []string{"docs/authoring/abi/threshold.c"}, `-DDYNOP_WASM_CAPABILITIES="clock"`)
		x := u8(t, []uint8{0, 99, 100, 101, 255, 7}, 2, 3)
		want := []uint8{255, 255, 0, 0, 0, 255}

		h := openHost(t, nil, []string{lib, mod, inv}, func(o *dynop.Options) { o.Sandbox = dynop.SandboxAlways })
		y, _, err := apply(h, "acme.Threshold", schema.Args{"level": 100, "mode": "below"}, x)
		if err != nil || !bytes.Equal(y, want) {
			t.Errorf("sandboxed acme.Threshold: %v, %v; want %v", y, err, want)
		}
		if y, variant, err := apply(h, "acme.Invert", nil, u8(t, []uint8{0, 1, 200}, 3)); err != nil || variant != "scalar" || !bytes.Equal(y, []uint8{255, 254, 55}) {
			t.Errorf("sandboxed acme.Invert: %v (variant %q), %v; want [255 254 55] from the scalar reference", y, variant, err)
		}

		h = openHost(t, nil, []string{clock}, nil)
		if st := status(t, h, "acme.plugin.threshold"); st.State != dynop.StateUnsupported || !errors.Is(st.Err, wasm.ErrCapability) {
			t.Errorf("a C module asking for the clock is %s (%v), want unsupported", st.State, st.Err)
		}
		h = openHost(t, nil, []string{clock}, func(o *dynop.Options) { o.Loaders = []dynop.LoaderConfig{wasm.Config{Grant: []string{"clock"}}} })
		if y, _, err := apply(h, "acme.Threshold", schema.Args{"level": 100, "mode": "below"}, x); err != nil || !bytes.Equal(y, want) {
			t.Errorf("with the clock granted: %v, %v; want %v", y, err, want)
		}

		h = openHost(t, nil, []string{mod}, func(o *dynop.Options) { o.Loaders = []dynop.LoaderConfig{wasm.Config{MemoryLimit: 2 << 20}} })
		_, _, err = apply(h, "acme.Threshold", nil, u8(t, make([]uint8, 4<<20), 4<<20))
		if !errors.Is(err, wasm.ErrMemoryLimit) {
			t.Errorf("4 MiB through a module limited to 2 MiB: err = %v, want wasm.ErrMemoryLimit", err)
		}
		t.Log(err)
	})
}

// TestSigning runs the release flow of signing/signing.go: a key pair
// made as dynop keygen makes it, a plugin signed with it, a host with the
// public key in its trust store loads the plugin and names the signer; a
// tampered copy and an unsigned build are untrusted and never loaded,
// and signature policy warn loads the unsigned one with a warning.
func TestSigning(t *testing.T) {
	ctx := context.Background()
	const id = "acme.plugin.greeting"
	lib := cbuild.Plugin(t, "libacme_greeting.so", "docs/authoring/versioning/versioning.c")

	keyPath, pubPath, keyID, err := sign.GenerateKeyFiles(filepath.Join(t.TempDir(), "release"), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sign.ReadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	sigPath, err := signing.Sign(ctx, key, lib)
	if err != nil {
		t.Fatal(err)
	}
	if sigPath != lib+".dynop.sig" {
		t.Errorf("signature at %s, want %s.dynop.sig", sigPath, lib)
	}
	trust := t.TempDir() // what DYNOP_TRUST_DIR names: public keys only
	pub, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trust, "release.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := sign.LoadTrustStore(trust)
	if err != nil {
		t.Fatal(err)
	}
	if signer, err := discover.VerifyFile(lib, store); err != nil || signer != keyID { // dynop verify
		t.Errorf("VerifyFile: %s, %v; want signer %s", signer, err, keyID)
	}
	withTrust := func(o *dynop.Options) { o.TrustDir = trust }
	h := openHost(t, nil, []string{lib}, withTrust)
	if st := status(t, h, id); st.State != dynop.StateAvailable || st.Signer != keyID {
		t.Fatalf("signed: %s signed by %q (%v), want available signed by %s", st.State, st.Signer, st.Err, keyID)
	}
	if _, ref, err := h.Acquire(ctx, id, iface.MustParseUID("982F9967-62F5-4705-9D28-E6206F992FC5"), iface.V(1, 0, 0)); err != nil {
		t.Error(err)
	} else {
		ref.Release()
	}

	// A copy with a byte appended, next to the original's manifest and
	// signature: its manifest no longer matches it, so it is untrusted
	// and not scanned.
	tampered := filepath.Join(t.TempDir(), "libacme_greeting.so")
	for _, suffix := range []string{"", ".dynop.json", ".dynop.sig"} {
		data, err := os.ReadFile(lib + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "" {
			data = append(data, 0)
		}
		if err := os.WriteFile(tampered+suffix, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h = openHost(t, nil, []string{tampered}, withTrust)
	if ps := h.Plugins(); len(ps) != 1 || ps[0].State != dynop.StateUntrusted || !errors.Is(ps[0].Err, discover.ErrManifest) ||
		!errors.Is(ps[0].Err, dynop.ErrSignature) || !strings.Contains(ps[0].Err.Error(), "is stale") {
		t.Errorf("tampered binary: %+v, want one untrusted plugin file wrapping discover.ErrManifest and dynop.ErrSignature", ps)
	} else {
		t.Log(ps[0].Err)
	}
	// With its manifest written again (dynop manifest), the signature does
	// not verify: untrusted. So is a build that was never signed.
	m, err := dynop.ScanFile(ctx, tampered, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discover.WriteManifest(tampered, m); err != nil {
		t.Fatal(err)
	}
	unsigned := cbuild.Plugin(t, "libacme_greeting.so", "docs/authoring/versioning/versioning.c")
	for _, c := range []struct {
		path     string
		manifest bool // write the manifest first
		target   error
	}{{tampered, false, dynop.ErrSignature}, {unsigned, false, sign.ErrUnsigned}, {unsigned, true, sign.ErrUnsigned}} {
		if c.manifest {
			m, err := dynop.ScanFile(ctx, c.path, dynop.Options{})
			if err == nil {
				_, err = discover.WriteManifest(c.path, m)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		h := openHost(t, nil, []string{c.path}, withTrust)
		ps := h.Plugins()
		if len(ps) != 1 || ps[0].State != dynop.StateUntrusted || !errors.Is(ps[0].Err, c.target) {
			t.Fatalf("%s: %+v, want one untrusted plugin file wrapping %v", c.path, ps, c.target)
		}
		t.Log(ps[0].Err)
		if _, _, err := h.Acquire(ctx, id, iface.MustParseUID("982F9967-62F5-4705-9D28-E6206F992FC5"), iface.V(1, 0, 0)); !errors.Is(err, dynop.ErrSignature) && !errors.Is(err, dynop.ErrNotFound) {
			t.Errorf("%s: acquiring: %v, want dynop.ErrSignature", c.path, err)
		}
	}

	var log logBuffer
	h = openHost(t, &log, []string{unsigned}, func(o *dynop.Options) { o.TrustDir, o.SignaturePolicy = trust, sign.PolicyWarn })
	if st := status(t, h, id); st.State != dynop.StateAvailable || !strings.Contains(log.String(), "level=WARN") {
		t.Errorf("policy warn, unsigned: %s, log:\n%s\nwant available and a warning", st.State, log.String())
	}
}

// guidePath is the guide whose examples this package holds.
var guidePath = cbuild.Path("docs/authoring.md")

// guide returns the text of the guide.
func guide(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// inGuide fails t unless the guide quotes text, such as an error message
// or a log line, verbatim.
func inGuide(t *testing.T, text string) {
	t.Helper()
	if !strings.Contains(guide(t), text) {
		t.Errorf("docs/authoring.md does not quote, verbatim:\n%s", text)
	}
}

// exampleMark precedes a code block of the guide quoted from a file:
// <!-- example: docs/authoring/lifecycle/lifecycle.c -->.
var exampleMark = regexp.MustCompile(`^<!-- example: (\S+) -->$`)

// notExamples are the files under docs/authoring that the guide need not
// quote: this test and the package comment.
var notExamples = map[string]bool{"docs/authoring/authoring_test.go": true, "docs/authoring/doc.go": true}

// TestGuideQuotes checks that every code block of the guide that follows
// an <!-- example: PATH --> line is in PATH verbatim, as whole lines; that
// every C and Go block has such a line; and that every file under
// docs/authoring is quoted at least once.
func TestGuideQuotes(t *testing.T) {
	lines := strings.Split(guide(t), "\n")
	quoted := map[string]int{}
	for i := 0; i < len(lines); i++ {
		m := exampleMark.FindStringSubmatch(lines[i])
		fence := strings.HasPrefix(lines[i], "```")
		if m == nil && !(fence && (lines[i] == "```c" || lines[i] == "```go")) {
			if fence { // another language: skip the block
				for i++; i < len(lines) && lines[i] != "```"; i++ {
				}
			}
			continue
		}
		if m == nil {
			t.Errorf("docs/authoring.md:%d: a %s block without an <!-- example: PATH --> line before it", i+1, lines[i])
			continue
		}
		i++
		if i == len(lines) || (lines[i] != "```c" && lines[i] != "```go") {
			t.Errorf("docs/authoring.md:%d: the example line is not followed by a ```c or ```go block", i)
			continue
		}
		start := i + 1
		for i++; i < len(lines) && lines[i] != "```"; i++ {
		}
		if i == len(lines) {
			t.Fatalf("docs/authoring.md:%d: the code block is not closed", start)
		}
		block := strings.Join(lines[start:i], "\n") + "\n"
		path := m[1]
		if !strings.HasPrefix(path, "docs/authoring/") {
			t.Errorf("docs/authoring.md:%d: %s is not under docs/authoring/", start-1, path)
		}
		src, err := os.ReadFile(cbuild.Path(path))
		if err != nil {
			t.Errorf("docs/authoring.md:%d: %v", start-1, err)
			continue
		}
		if !strings.Contains("\n"+string(src), "\n"+block) {
			t.Errorf("docs/authoring.md:%d: the block is not in %s verbatim (as whole lines):\n%s", start, path, block)
		}
		quoted[path]++
	}
	err := filepath.WalkDir(cbuild.Path("docs/authoring"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(cbuild.Root(), p)
		rel = filepath.ToSlash(rel)
		if err == nil && !notExamples[rel] && quoted[rel] == 0 {
			t.Errorf("docs/authoring.md quotes nothing of %s", rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGuideCommands checks that the guide gives, for every language
// dynop new knows, the commands its projects' READMEs give.
func TestGuideCommands(t *testing.T) {
	for _, lang := range scaffold.Languages {
		cmds := scaffold.Commands(lang, "demo")
		if len(cmds) == 0 {
			t.Errorf("scaffold has no commands for %s", lang)
		}
		for _, c := range cmds {
			inGuide(t, "`"+c.Line+"`")
		}
		inGuide(t, "| `"+lang+"`")
	}
}

// TestTroubleshooting makes plugins in the states the guide's
// troubleshooting table explains — broken, duplicate, unsupported;
// TestSigning makes untrusted ones — and checks what their errors wrap.
func TestTroubleshooting(t *testing.T) {
	lib := cbuild.Plugin(t, "libacme_greeting.so", "docs/authoring/versioning/versioning.c")
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "libacme_greeting.so")
	bogus := filepath.Join(t.TempDir(), "libbogus.so")
	if err := errors.Join(os.WriteFile(second, data, 0o755), os.WriteFile(bogus, []byte("not a plugin\n"), 0o644)); err != nil {
		t.Fatal(err)
	}
	h := openHost(t, nil, []string{lib, second, bogus}, func(o *dynop.Options) {
		o.Plugins = []plugin.Plugin{avx2Plugin{}}
		o.CPUFeatures = "-avx2"
	})
	byPath := map[string]dynop.PluginStatus{}
	for _, st := range h.Plugins() {
		byPath[st.Path] = st
	}
	for _, c := range []struct {
		st     dynop.PluginStatus
		state  dynop.State
		target error
	}{
		{byPath[lib], dynop.StateAvailable, nil},
		{byPath[second], dynop.StateDuplicate, dynop.ErrDuplicate},
		{byPath[bogus], dynop.StateBroken, dynop.ErrFormat},
		{byPath[""], dynop.StateUnsupported, dynop.ErrUnsupported},
	} {
		if c.st.State != c.state || c.target != nil && !errors.Is(c.st.Err, c.target) {
			t.Errorf("%s %s: %s (%v), want %s wrapping %v", c.st.Info.ID, c.st.Path, c.st.State, c.st.Err, c.state, c.target)
		}
	}
	if d := byPath[second].DuplicateOf; d != lib {
		t.Errorf("the duplicate is a duplicate of %q, want %s", d, lib)
	}
	if err := byPath[""].Err; err == nil || !strings.Contains(err.Error(), "avx2") {
		t.Errorf("unsupported: %v, want the missing feature named", err)
	}
	for _, s := range []dynop.State{dynop.StateAvailable, dynop.StateUnsupported, dynop.StateBroken, dynop.StateUntrusted, dynop.StateDuplicate} {
		inGuide(t, "| `"+s.String()+"` |") // a row of the table
	}
}

// avx2Plugin is a Go plugin whose every code path needs AVX2.
type avx2Plugin struct{}

func (avx2Plugin) Info() schema.Plugin {
	return schema.Plugin{ID: "acme.plugin.fast", Version: iface.V(1, 0, 0),
		Requirements: schema.Requirements{CPUFeatures: []string{"avx2"}}}
}

func (avx2Plugin) Start(context.Context, plugin.Registrar) error { return nil }

// sentinels are the errors the guide names, as the compiler checks them.
var sentinels = map[string]error{
	"discover.ErrManifest":       discover.ErrManifest,
	"discover.ErrMissingLibrary": discover.ErrMissingLibrary,
	"discover.ErrScan":           discover.ErrScan,
	"dispatch.ErrUnknownFeature": dispatch.ErrUnknownFeature,
	"dynop.ErrCycle":             dynop.ErrCycle,
	"dynop.ErrDuplicate":         dynop.ErrDuplicate,
	"dynop.ErrFormat":            dynop.ErrFormat,
	"dynop.ErrInvalid":           dynop.ErrInvalid,
	"dynop.ErrNotFound":          dynop.ErrNotFound,
	"dynop.ErrSignature":         dynop.ErrSignature,
	"dynop.ErrState":             dynop.ErrState,
	"dynop.ErrUnsupported":       dynop.ErrUnsupported,
	"dynop.ErrVersion":           dynop.ErrVersion,
	"native.ErrABI":              native.ErrABI,
	"native.ErrBounds":           native.ErrBounds,
	"native.ErrLoad":             native.ErrLoad,
	"schema.ErrArgument":         schema.ErrArgument,
	"sign.ErrUnknownKey":         sign.ErrUnknownKey,
	"sign.ErrUnsigned":           sign.ErrUnsigned,
	"wasm.ErrABI":                wasm.ErrABI,
	"wasm.ErrCapability":         wasm.ErrCapability,
	"wasm.ErrMemoryLimit":        wasm.ErrMemoryLimit,
}

// TestGuideSentinels checks that every sentinel error the guide names
// exists, and that sign's two it says wrap dynop.ErrSignature do.
func TestGuideSentinels(t *testing.T) {
	re := regexp.MustCompile(`\b(?:dynop|iface|plugin|discover|sign|native|wasm|dispatch|op|guest|schema)\.Err[A-Za-z]+`)
	for _, name := range re.FindAllString(guide(t), -1) {
		if sentinels[name] == nil {
			t.Errorf("docs/authoring.md names %s, which is not in sentinels", name)
		}
	}
	for _, err := range []error{sign.ErrUnsigned, sign.ErrUnknownKey} {
		if !errors.Is(err, dynop.ErrSignature) {
			t.Errorf("%v does not wrap dynop.ErrSignature", err)
		}
	}
}
