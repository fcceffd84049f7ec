package wasm_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
)

func TestBadModules(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(notWasm, []byte("\x00asm\x01\x00\x00\x00 this is no module"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.wasm")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		path   string
		target error
		want   []string
	}{
		{"not a module", notWasm, dynop.ErrFormat, []string{"garbage.wasm"}},
		{"text", text, dynop.ErrFormat, []string{"text.wasm"}},
		{"no entry exports", cbuild.WasmRaw(t, "noexports.wasm", []string{"loader/wasm/testdata/noexports.c"}), wasm.ErrABI,
			[]string{"not a dynop plugin module", "dynop_wasm_abi_version is missing", "dynop_wasm_op_run is missing", "Go plugins import loader/wasm/guest"}},
		{"unknown import", cbuild.Wasm(t, "badimport.wasm", []string{"loader/wasm/testdata/badimport.c"}), wasm.ErrABI,
			[]string{"imports function dynop.teleport, which this host does not provide"}},
		{"info outside memory", cbuild.WasmRaw(t, "badinfo.wasm", []string{"loader/wasm/testdata/badinfo.c"}), wasm.ErrABI,
			[]string{"plugin info (get_info's result) at 0xffff0000 lies outside the plugin's memory"}},
		{"built for ABI 1.0", cbuild.WasmRaw(t, "abi1.wasm", []string{"loader/wasm/testdata/badinfo.c"}, "-DBADINFO_ABI_VERSION=0x10000"), wasm.ErrABI,
			[]string{"dynop_wasm_abi_version returned version 1.0; this host implements 2.x: rebuild the module with this dynop's abi/wasm/dynop_wasm.c (C) or loader/wasm/guest (Go)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := wasm.Load(context.Background(), c.path, dynop.Options{CacheDir: cacheDir(t)})
			testutil.WantErr(t, err, c.target, c.want...)
			if c.name == "text" {
				return // not a wasm file: no loader claims it
			}
			// A host lists the file as broken, says why, and carries on.
			h := openHost(t, dynop.Options{}, c.path, wgood(t))
			var found bool
			for _, st := range h.Plugins() {
				if st.Path == c.path {
					found = true
					if st.State != dynop.StateBroken {
						t.Errorf("state %v, want broken", st.State)
					}
					testutil.WantErr(t, st.Err, c.target, c.want...)
				}
			}
			if !found {
				t.Fatalf("%s not listed: %+v", c.path, h.Plugins())
			}
			if _, err := exec(t, h, "wgood.Scale", nil, floats(t, []float32{1}, 1)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	path := cbuild.Wasm(t, "wclock.wasm", []string{"loader/wasm/testdata/wgood.c"}, `-DDYNOP_WASM_CAPABILITIES="clock,random"`)
	p, err := wasm.Load(context.Background(), path, dynop.Options{CacheDir: cacheDir(t), Loaders: []dynop.LoaderConfig{wasm.Config{Grant: []string{"random"}}}})
	testutil.WantErr(t, err, dynop.ErrUnsupported, `plugin "dynop.plugin.wgood" asks for clock, which this host does not grant`)
	testutil.WantErr(t, err, wasm.ErrCapability)
	if p == nil || len(p.Capabilities()) != 2 {
		t.Fatalf("Load returned %v with its error; want the plugin, asking for clock and random", p)
	}

	h := openHost(t, dynop.Options{}, path)
	st := h.Plugins()[0]
	if st.State != dynop.StateUnsupported {
		t.Fatalf("state %v, want unsupported", st.State)
	}
	testutil.WantErr(t, st.Err, wasm.ErrCapability, "asks for clock, random, which this host does not grant")
	_, err = h.NewOperator(context.Background(), "wgood.Scale", nil)
	testutil.WantErr(t, err, dynop.ErrUnsupported, "asks for clock, random")

	h = openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{Grant: []string{"clock", "random"}}}}, path)
	if _, err := exec(t, h, "wgood.Scale", nil, floats(t, []float32{1}, 1)); err != nil {
		t.Fatal(err)
	}

	_, err = dynop.Open(context.Background(), dynop.Options{NoDefaultPaths: true, Paths: []string{path}, CacheDir: t.TempDir(), Loaders: []dynop.LoaderConfig{wasm.Config{Grant: []string{"network"}}}})
	testutil.WantErr(t, err, nil, "dynop: open: Options.Loaders[0] (wasm): wasm: Config.Grant: unknown capability \"network\" (known: clock, random, env, stdio)")
	// wasm.Load checks a Config with the same rules as Open.
	_, err = wasm.Load(context.Background(), path, dynop.Options{Loaders: []dynop.LoaderConfig{&wasm.Config{MemoryLimit: 1000}}})
	testutil.WantErr(t, err, nil, "wasm: Config.MemoryLimit 1000 is neither 0 (the default) nor at least one 64 KiB page")
	// Open refuses a second Config, a nil one and one for a loader this
	// program does not have, saying which.
	for _, c := range []struct {
		loaders  []dynop.LoaderConfig
		sentinel error
		want     string
	}{
		{[]dynop.LoaderConfig{wasm.Config{}, &wasm.Config{Grant: []string{"clock"}}}, dynop.ErrDuplicate, `dynop: open: Options.Loaders[1]: duplicate: a second *wasm.Config for loader "wasm"`},
		{[]dynop.LoaderConfig{nil}, nil, "dynop: open: Options.Loaders[0] is nil"},
		{[]dynop.LoaderConfig{otherLoader{}}, dynop.ErrNotFound, `dynop: open: Options.Loaders[0]: not found: settings (wasm_test.otherLoader) for loader "gpu-sim", which this program has not registered (import its package)`},
	} {
		_, err = dynop.Open(context.Background(), dynop.Options{NoDefaultPaths: true, Loaders: c.loaders})
		testutil.WantErr(t, err, c.sentinel, c.want)
	}
	// The wasm loader refuses settings of another type under its name.
	_, err = wasm.Load(context.Background(), path, dynop.Options{Loaders: []dynop.LoaderConfig{otherLoader{name: "wasm"}}})
	testutil.WantErr(t, err, nil, `wasm: dynop.Options.Loaders holds a wasm_test.otherLoader for loader "wasm", want a wasm.Config`)
}

// otherLoader is settings for a loader called name, "gpu-sim" by default.
type otherLoader struct{ name string }

func (o otherLoader) LoaderName() string { return cmp.Or(o.name, "gpu-sim") }
func (otherLoader) Validate() error      { return nil }
