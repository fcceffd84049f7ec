package wasm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func tone(t testing.TB) string {
	return fixture(t, "tone.wasm", func(t testing.TB) string { return cbuild.GoWasm(t, "plugins/tone") })
}

// TestGoPlugin runs the example Go plugin tone.Gamma on uint8 and float32
// images, a batch of two of different sizes, and on a crop (strided),
// against the same arithmetic in Go.
func TestGoPlugin(t *testing.T) {
	h := openHost(t, dynop.Options{}, tone(t))
	rng := rand.New(rand.NewPCG(3, 4))
	const g = 2.2
	in, err := tensor.Random(rng, tensor.Uint8, "HWC", [][]int64{{5, 7, 3}, {2, 3, 3}})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := h.NewOperator(context.Background(), "tone.Gamma", schema.Args{"gamma": g})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	outs, err := inst.Exec(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for j, x := range in.Samples() {
		xs, _ := x.Bytes()
		ys, _ := outs[0].Samples()[j].Bytes()
		for i, v := range xs {
			if want := uint8(math.Round(255 * math.Pow(float64(v)/255, 1/g))); ys[i] != want {
				t.Fatalf("sample %d element %d: gamma(%d) = %d, want %d", j, i, v, ys[i], want)
			}
		}
	}
	f, _ := tensor.Random(rng, tensor.Float32, "HWC", [][]int64{{6, 6, 3}})
	crop, err := f.Samples()[0].Crop([]int64{1, 2, 0}, []int64{3, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := tensor.NewBatch(crop)
	finst, err := h.NewOperator(context.Background(), "tone.Gamma", schema.Args{"gamma": g})
	if err != nil {
		t.Fatal(err)
	}
	defer finst.Close()
	fouts, err := finst.Exec(context.Background(), cb)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := crop.Contiguous()
	wv, _ := tensor.Values[float32](want)
	got, _ := tensor.Values[float32](fouts[0].Samples()[0])
	for i, v := range wv {
		w := float32(0)
		if v > 0 {
			w = float32(math.Pow(float64(v), 1/g))
		}
		if got[i] != w {
			t.Fatalf("float element %d: gamma(%g) = %g, want %g", i, v, got[i], w)
		}
	}
}

// TestGoCapability checks a Go module that asks for the real clock: a
// host that does not grant it lists it as unsupported; one that does
// gives it the real time, where wazero's default clock is fixed.
func TestGoCapability(t *testing.T) {
	path := fixture(t, "goclock.wasm", func(t testing.TB) string { return cbuild.GoWasm(t, "loader/wasm/testdata/goclock") })
	h := openHost(t, dynop.Options{}, path)
	if st := h.Plugins()[0]; st.State != dynop.StateUnsupported {
		t.Fatalf("without the grant: state %v, want unsupported", st.State)
	} else {
		testutil.WantErr(t, st.Err, wasm.ErrCapability, `"dynop.plugin.goclock" asks for clock`)
	}
	h = openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{Grant: []string{"clock"}}}}, path)
	got, err := exec(t, h, "goclock.Now", nil, floats(t, []float32{0}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if now := float32(time.Now().Unix() % 100000); math.Abs(float64(got[0]-now)) > 5 {
		t.Errorf("the module's clock says %v, the host's %v", got[0], now)
	}
}

// TestStartUp loads a plugin with an empty compilation cache, then again
// with the cache filled, and starts it: the cached start skips
// compilation.
func TestStartUp(t *testing.T) {
	path := tone(t)
	opts := dynop.Options{CacheDir: t.TempDir(), Logger: testutil.Logger(t)}
	load := func() *wasm.Plugin {
		p, err := wasm.Load(context.Background(), path, opts)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := load().CompileTime()
	p := load()
	cached := p.CompileTime()
	h := openHost(t, dynop.Options{Plugins: []plugin.Plugin{p}, CacheDir: opts.CacheDir})
	if _, err := exec(t, h, "tone.Gamma", schema.Args{"gamma": 1.0}, floats(t, []float32{0.5}, 1, 1, 1)); err != nil {
		t.Fatal(err)
	}
	started := p.CompileTime()
	t.Logf("tone.wasm: compiled in %v with an empty cache, %v from the cache, %v at start", first, cached, started)
	if cached*3 > first || started*3 > first {
		t.Errorf("compiling took %v with an empty cache and %v, %v with it: the cache does not help", first, cached, started)
	}
}
