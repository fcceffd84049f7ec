package native_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"github.com/dynop/dynop/abi"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/stats"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/plugins/vecmath/govecmath"
	"github.com/dynop/dynop/schema"
)

var ctx = context.Background()

// fixture builds testdata/fixture.c with the given -D switches. A switch
// may leave a function or table unused.
func fixture(t testing.TB, name string, defines ...string) string {
	t.Helper()
	flags := append([]string{"-Wno-unused-function", "-Wno-unused-const-variable"}, defines...)
	return cbuild.Plugin(t, name, "loader/native/testdata/fixture.c", flags...)
}

// openHost opens a host over the plugin files paths and the Go plugins ps,
// without the registered Go plugins, logging to t, and closes it when the
// test ends.
func openHost(t testing.TB, paths []string, ps ...plugin.Plugin) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(ctx, dynop.Options{Paths: paths, Plugins: ps, NoRegistered: true, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

// broken returns the plugins of h that are broken.
func broken(h *dynop.Host) []dynop.PluginStatus {
	var out []dynop.PluginStatus
	for _, st := range h.Plugins() {
		if st.State == dynop.StateBroken {
			out = append(out, st)
		}
	}
	return out
}

var testLogger = testutil.Logger

var wantErr = testutil.WantErr

func wantStatus(t testing.TB, h *dynop.Host, id string, state dynop.State, starts, stops int) {
	t.Helper()
	st, err := h.Plugin(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != state || st.Starts != starts || st.Stops != stops {
		t.Errorf("plugin %s: state %v, %d starts, %d stops; want %v, %d, %d (err: %v)", id, st.State, st.Starts, st.Stops, state, starts, stops, st.Err)
	}
}

var data = []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

func checkStats(t testing.TB, s stats.Stats) {
	t.Helper()
	var sum, sq float64
	for _, x := range data {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	n := float64(len(data))
	mean := sum / n
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Mean", float64(s.Mean(data)), mean},
		{"Variance", float64(s.Variance(data)), sq/n - mean*mean},
		{"Norm", float64(s.Norm(data)), math.Sqrt(sq)},
	} {
		if math.Abs(c.got-c.want) > 1e-4*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := s.Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
}

// TestCPlusPlusOverC is the whole lifecycle of two native plugins, one
// depending on the other: nothing is loaded until used; acquiring the C++
// plugin loads and starts the C plugin first; releasing the last
// reference unloads both for real (their files leave the process's
// mappings); and acquiring again loads them afresh.
func TestCPlusPlusOverC(t *testing.T) {
	vm, st := cbuild.VecMath(t), cbuild.Stats(t)
	h := openHost(t, []string{vm, st})
	if b := broken(h); len(b) != 0 {
		t.Fatalf("broken: %v", b)
	}
	for _, p := range []string{vm, st} {
		if cbuild.Mapped(t, p) {
			t.Fatalf("%s is mapped after Open, before anything asked for it", p)
		}
	}
	for round := 1; round <= 2; round++ {
		s, ref, err := dynop.Acquire(ctx, h, stats.PluginID, stats.Interface)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !cbuild.Mapped(t, vm) || !cbuild.Mapped(t, st) {
			t.Fatalf("round %d: acquiring stats did not load both libraries", round)
		}
		wantStatus(t, h, vecmath.PluginID, dynop.StateStarted, round, round-1)
		wantStatus(t, h, stats.PluginID, dynop.StateStarted, round, round-1)
		checkStats(t, s)
		if err := ref.Release(); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{vm, st} {
			if cbuild.Mapped(t, p) {
				t.Errorf("round %d: %s is still mapped after the last release", round, p)
			}
		}
		wantStatus(t, h, stats.PluginID, dynop.StateAvailable, round, round)
		wantStatus(t, h, vecmath.PluginID, dynop.StateAvailable, round, round)
	}
	st0, _ := h.Plugin(stats.PluginID)
	if st0.Path != st {
		t.Errorf("PluginStatus.Path = %q, want %q", st0.Path, st)
	}
}

// TestGoPluginUsesNative: a Go plugin acquires the C plugin's interface in
// its Start and gets the typed binding.
func TestGoPluginUsesNative(t *testing.T) {
	user := &vecUser{}
	h := openHost(t, []string{cbuild.VecMath(t)}, user)
	d, ref, err := dynop.Acquire(ctx, h, userID, userDef)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Release()
	x := []float32{1, 2, 3}
	y := []float32{4, 5, 6}
	if got := d.Dot(x, y); got != 32 {
		t.Errorf("Dot through a Go plugin over the C plugin = %v, want 32", got)
	}
	m := user.m
	m.Saxpy(2, x, y)
	if want := []float32{6, 9, 12}; !equal(y, want) {
		t.Errorf("Saxpy: y = %v, want %v", y, want)
	}
	m.Scale(0.5, y)
	if want := []float32{3, 4.5, 6}; !equal(y, want) {
		t.Errorf("Scale: y = %v, want %v", y, want)
	}
	if _, ok := m.(native.Exported); !ok {
		t.Errorf("the binding %T is not native.Exported", m)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// vecUser is a Go plugin that provides the dot product of the C plugin.
type vecUser struct{ m vecmath.Math }

type dotter interface{ Dot(x, y []float32) float32 }

const userID = "dynop.plugin.vecuser"

var userDef = iface.Define[dotter]("7E57F1C5-0000-4000-8000-0000000000D0", "dynop.test.Dotter", iface.V(1, 0, 0))

func (*vecUser) Info() schema.Plugin {
	return schema.Plugin{ID: userID, Version: iface.V(1, 0, 0), Interfaces: []iface.Desc{userDef.Desc}}
}

func (u *vecUser) Start(ctx context.Context, h plugin.Registrar) error {
	m, _, err := plugin.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
	if err != nil {
		return err
	}
	u.m = m
	return userDef.Provide(h, m)
}

// TestNativeUsesGo: the C++ plugin, built to use the Go implementation of
// VecMath, acquires it through the one host and computes with it, C → Go.
func TestNativeUsesGo(t *testing.T) {
	const id = "dynop.plugin.stats.overgo"
	lib := cbuild.Stats(t, `-DSTATS_VECMATH_PLUGIN="`+govecmath.ID+`"`, `-DSTATS_PLUGIN_ID="`+id+`"`)
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	s, ref, err := dynop.Acquire(ctx, h, id, stats.Interface)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h, govecmath.ID, dynop.StateStarted, 1, 0)
	checkStats(t, s)
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h, govecmath.ID, dynop.StateAvailable, 1, 1)
}

// TestBadFiles loads one bad file after another. Each gets an error of its
// own, from native.Load and in the host's Broken list, and the host keeps
// serving a good plugin next to it.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := cbuild.VecMath(t)
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	otherMachine := bytes.Clone(goodBytes)
	binary.LittleEndian.PutUint16(otherMachine[18:], uint16(elf.EM_AARCH64))
	if elf.Machine(binary.LittleEndian.Uint16(goodBytes[18:])) == elf.EM_AARCH64 {
		binary.LittleEndian.PutUint16(otherMachine[18:], uint16(elf.EM_X86_64))
	}
	cases := []struct {
		name   string
		path   string
		target error
		want   []string
	}{
		{"missing", filepath.Join(dir, "libnothere.so"), fs.ErrNotExist, []string{"libnothere.so"}},
		{"directory", dir, dynop.ErrFormat, []string{"is a directory"}},
		{"text", write("libtext.so", []byte("this is not a library\n")), dynop.ErrFormat, []string{"libtext.so", "ELF"}},
		{"truncated", write("libtrunc.so", goodBytes[:len(goodBytes)/3]), dynop.ErrFormat, []string{"libtrunc.so", "truncated"}},
		{"other machine", write("libarm.so", otherMachine), dynop.ErrFormat, []string{"built for machine EM_"}},
		{"no entry symbol", fixture(t, "libnoentry.so", "-DNO_ENTRY"), dynop.ErrFormat, []string{"no exported function dynop_plugin_get_function"}},
		{"no get_info", fixture(t, "libnogetinfo.so", "-DNO_GET_INFO"), native.ErrABI, []string{`("get_info") returned NULL`}},
		{"get_info returns NULL", fixture(t, "libinfonull.so", "-DINFO_NULL"), native.ErrABI, []string{"plugin info (get_info's result) is NULL"}},
		{"no register", fixture(t, "libnoregister.so", "-DNO_REGISTER"), native.ErrABI, []string{`("register") returned NULL`, "no register entry point"}},
		{"info wrong type", fixture(t, "libwrongtype.so", "-DINFO_WRONG_TYPE"), native.ErrABI, []string{"plugin info", "has type UID", "no dynop_header"}},
		{"info from the future", fixture(t, "libfuture.so", "-DINFO_MAJOR=2"), native.ErrABI, []string{"layout version 2.0.0", "from the future"}},
		{"info too small", fixture(t, "libsmall.so", "-DINFO_SIZE=40"), native.ErrABI, []string{"says it is 40 bytes", "needs at least"}},
		{"api version unset", fixture(t, "libnoapi.so", "-DAPI_MAJOR=0", "-DAPI_MINOR=0"), native.ErrABI, []string{"api_version is 0.0.0"}},
		{"broken count", fixture(t, "libcount.so", "-DIFACE_COUNT=4000000000u"), native.ErrABI, []string{"interfaces has count 4000000000", "the count is broken"}},
		{"unresolved symbol", fixture(t, "libunresolved.so", "-DUNRESOLVED"), native.ErrLoad, []string{"undefined symbol: dynop_fixture_missing_function"}},
		{"truncated segment", write("libtruncseg.so", truncatedSegment(t, goodBytes)), dynop.ErrFormat, []string{"truncated: a loadable segment ends at byte"}},
	}
	var paths []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := native.Load(ctx, c.path, native.Options{})
			if p != nil {
				t.Errorf("Load returned a plugin for a bad file")
			}
			wantErr(t, err, c.target, c.want...)
		})
		paths = append(paths, c.path)
	}
	// A host lists them as broken, with the same reasons, read by the
	// scanner child process or by the host itself (the ELF checks).
	// A host lists the files as broken, with the same reasons, read by the
	// scanner child process or by the host itself (the ELF checks); a
	// missing file or a directory is a problem of the search path instead.
	h := openHost(t, append(paths, good))
	bad := broken(h)
	if len(bad) != len(cases)-2 {
		t.Fatalf("%d broken plugins, want %d: %v", len(bad), len(cases)-2, bad)
	}
	for _, c := range cases[2:] {
		i := slices.IndexFunc(bad, func(st dynop.PluginStatus) bool { return st.Path == c.path })
		if i < 0 {
			t.Errorf("%s is not listed as broken", c.path)
			continue
		}
		wantErr(t, bad[i].Err, c.target, c.path)
		if c.name != "text" { // not ELF: no loader sees it
			wantErr(t, bad[i].Err, c.target, c.want...)
		}
	}
	m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
	if err != nil {
		t.Fatalf("the good plugin next to the bad files: %v", err)
	}
	defer ref.Release()
	if got := m.Dot([]float32{1, 2}, []float32{3, 4}); got != 11 {
		t.Errorf("Dot = %v, want 11", got)
	}
}

// truncatedSegment returns lib without its section headers (so that the
// ELF headers still parse) and cut in the middle of its loadable code.
func truncatedSegment(t testing.TB, lib []byte) []byte {
	f, err := elf.NewFile(bytes.NewReader(lib))
	if err != nil {
		t.Fatal(err)
	}
	var end uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			end = max(end, p.Off+p.Filesz)
		}
	}
	b := bytes.Clone(lib[:end-64])
	binary.LittleEndian.PutUint64(b[0x28:], 0) // e_shoff
	binary.LittleEndian.PutUint16(b[0x3c:], 0) // e_shnum
	binary.LittleEndian.PutUint16(b[0x3e:], 0) // e_shstrndx
	return b
}

// TestNewerMinorIsFine: an info struct of a newer minor version, larger
// than this host knows, loads; the host ignores the tail.
func TestNewerMinorIsFine(t *testing.T) {
	lib := fixture(t, "libnewer.so", "-DINFO_MINOR=7", "-DINFO_SIZE=sizeof(dynop_plugin_info)+64")
	h := openHost(t, []string{lib})
	_, ref, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
}

var fixtureUID = iface.MustParseUID("7E57F1C5-0000-4000-8000-0000000000F1")

// TestUnusablePlugins: plugins that load but must not start. The host
// says why and keeps serving the others.
func TestUnusablePlugins(t *testing.T) {
	newer := fixture(t, "libnewerapi.so", "-DAPI_MINOR=99", `-DFIXTURE_ID="dynop.plugin.newer"`)
	clash := fixture(t, "libclash.so", `-DFIXTURE_ID="dynop.plugin.clash"`, `-DFIXTURE_IFACE_NAME="dynop.test.Other"`)
	same := fixture(t, "libsame.so")
	h := openHost(t, []string{newer, clash, same, cbuild.VecMath(t)})

	st, _ := h.Plugin("dynop.plugin.newer")
	if st.State != dynop.StateUnsupported {
		t.Errorf("plugin for API 0.99 is %v, want unsupported", st.State)
	}
	wantErr(t, st.Err, dynop.ErrVersion, "plugin API")
	_, _, err := h.Acquire(ctx, "dynop.plugin.newer", fixtureUID, iface.V(1, 0, 0))
	wantErr(t, err, nil, "plugin API")

	for _, id := range []string{"dynop.plugin.clash", "dynop.plugin.fixture"} {
		st, _ := h.Plugin(id)
		if st.State != dynop.StateBroken {
			t.Errorf("%s shares a UID with another name but is %v, want broken", id, st.State)
		}
		wantErr(t, st.Err, dynop.ErrDuplicate, fixtureUID.String(), `"dynop.test.Other" by dynop.plugin.clash`, `"dynop.test.Fixture" by dynop.plugin.fixture`)
	}
	if _, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface); err != nil {
		t.Errorf("an unrelated plugin: %v", err)
	} else {
		ref.Release()
	}
}

// TestDuplicateID: two files with the same plugin ID; the second is a
// duplicate and names the first.
func TestDuplicateID(t *testing.T) {
	a, b := fixture(t, "liba.so"), fixture(t, "libb.so")
	h := openHost(t, []string{a, b})
	var dups []dynop.PluginStatus
	for _, st := range h.Plugins() {
		if st.State == dynop.StateDuplicate {
			dups = append(dups, st)
		}
	}
	if len(dups) != 1 || dups[0].Path != b || dups[0].DuplicateOf != a {
		t.Fatalf("duplicates %v, want only %s, of %s", dups, b, a)
	}
	wantErr(t, dups[0].Err, dynop.ErrDuplicate, `"dynop.plugin.fixture"`, a)
	if st, _ := h.Plugin("dynop.plugin.fixture"); st.Path != a {
		t.Errorf("the plugin comes from %s, want the first file %s", st.Path, a)
	}
}

// TestRegisterFails: register returns an error code with a message. The
// message and the code reach the Go error, the library is unloaded again,
// and the host keeps working.
func TestRegisterFails(t *testing.T) {
	lib := fixture(t, "libfails.so", "-DREGISTER_FAILS")
	h := openHost(t, []string{lib, cbuild.VecMath(t)})
	_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	wantErr(t, err, dynop.ErrUnsupported, "register returned DYNOP_ERROR_UNSUPPORTED", "no frobnicator on this machine")
	var re *abi.ResultError
	if !errors.As(err, &re) || re.Result != abi.ErrorUnsupported || re.Call != "register" {
		t.Errorf("error %v is not a *ResultError for register with DYNOP_ERROR_UNSUPPORTED", err)
	}
	if cbuild.Mapped(t, lib) {
		t.Errorf("%s stays mapped after its register failed", lib)
	}
	wantStatus(t, h, "dynop.plugin.fixture", dynop.StateAvailable, 0, 0)
	if _, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface); err != nil {
		t.Errorf("another plugin after a failed register: %v", err)
	} else {
		ref.Release()
	}
}

// TestNativeAcquireErrors: a native plugin's register acquires something
// it cannot have; the host's error reaches it as a code and message, it
// passes them on, and the Go caller gets the host's sentinel.
func TestNativeAcquireErrors(t *testing.T) {
	t.Run("missing plugin", func(t *testing.T) {
		lib := fixture(t, "libmissing.so", `-DACQUIRE_FROM="dynop.plugin.nothere"`)
		h := openHost(t, []string{lib})
		_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
		wantErr(t, err, dynop.ErrNotFound, "DYNOP_ERROR_NOT_FOUND", `"dynop.plugin.nothere"`)
	})
	t.Run("cycle", func(t *testing.T) {
		a := fixture(t, "libcyca.so", `-DFIXTURE_ID="dynop.plugin.cyca"`, `-DACQUIRE_FROM="dynop.plugin.cycb"`)
		b := fixture(t, "libcycb.so", `-DFIXTURE_ID="dynop.plugin.cycb"`, `-DACQUIRE_FROM="dynop.plugin.cyca"`)
		h := openHost(t, []string{a, b})
		_, _, err := h.Acquire(ctx, "dynop.plugin.cyca", fixtureUID, iface.V(1, 0, 0))
		wantErr(t, err, dynop.ErrCycle, "dynop.plugin.cyca", "dynop.plugin.cycb")
		for _, p := range []string{a, b} {
			if cbuild.Mapped(t, p) {
				t.Errorf("%s stays mapped after the cycle was refused", p)
			}
		}
	})
	t.Run("Go value not exported to C", func(t *testing.T) {
		lib := fixture(t, "libwantsgo.so", `-DACQUIRE_FROM="dynop.plugin.govalue"`)
		h := openHost(t, []string{lib}, goValue{})
		_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
		wantErr(t, err, dynop.ErrType, "DYNOP_ERROR_TYPE", "not exported to C")
		wantStatus(t, h, "dynop.plugin.govalue", dynop.StateAvailable, 1, 1)
	})
}

// goValue provides the fixture's interface as a plain Go value.
type goValue struct{}

func (goValue) Info() schema.Plugin {
	return schema.Plugin{ID: "dynop.plugin.govalue", Version: iface.V(1, 0, 0),
		Interfaces: []iface.Desc{{UID: fixtureUID, Name: "dynop.test.Fixture", Version: iface.V(1, 0, 0)}}}
}

func (g goValue) Start(ctx context.Context, h plugin.Registrar) error {
	return h.AddInterface(g.Info().Interfaces[0], g)
}

// TestOnlyTheEntryIsExported: the example plugins export one symbol.
func TestOnlyTheEntryIsExported(t *testing.T) {
	for _, lib := range []string{cbuild.VecMath(t), cbuild.Stats(t)} {
		f, err := elf.Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.DynamicSymbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var defined []string
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				defined = append(defined, s.Name)
			}
		}
		if len(defined) != 1 || defined[0] != "dynop_plugin_get_function" {
			t.Errorf("%s exports functions %v, want only %s", filepath.Base(lib), defined, "dynop_plugin_get_function")
		}
	}
}

// TestBindingChecksTheTable: the typed binding refuses tables too small
// for their version, of another type or with NULL functions.
func TestBindingChecksTheTable(t *testing.T) {
	// The tables live in (pointer-aligned) Go memory here: Bind only
	// reads them.
	mk := func(uid iface.UID, minor, size uint32) unsafe.Pointer {
		words := new([12]uint64)
		b := unsafe.Slice((*byte)(unsafe.Pointer(words)), 96)
		copy(b[:16], uid[:])
		binary.NativeEndian.PutUint32(b[16:], 1)
		binary.NativeEndian.PutUint32(b[20:], minor)
		binary.NativeEndian.PutUint32(b[28:], size)
		return unsafe.Pointer(words)
	}
	_, err := vecmath.Bind(native.TableAt((mk(vecmath.Interface.UID, 0, 40))))
	wantErr(t, err, native.ErrABI, "says 40 bytes", "needs at least")
	_, err = vecmath.Bind(native.TableAt((mk(fixtureUID, 0, 96))))
	wantErr(t, err, dynop.ErrType, "has type {"+fixtureUID.String()+"}")
	_, err = vecmath.Bind(native.TableAt((mk(vecmath.Interface.UID, 3, 96))))
	wantErr(t, err, native.ErrABI, "function saxpy is NULL")
}

// TestConcurrentUse: goroutines acquire the C++ plugin, compute and
// release at once, so the libraries load and unload under them again and
// again. Run with -race.
func TestConcurrentUse(t *testing.T) {
	h := openHost(t, []string{cbuild.VecMath(t), cbuild.Stats(t)})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				s, ref, err := dynop.Acquire(ctx, h, stats.PluginID, stats.Interface)
				if err != nil {
					t.Error(err)
					return
				}
				checkStats(t, s)
				if err := ref.Release(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st, _ := h.Plugin(stats.PluginID)
	if st.State != dynop.StateAvailable || st.Starts != st.Stops || st.Starts == 0 {
		t.Errorf("after the storm: %v, %d starts, %d stops", st.State, st.Starts, st.Stops)
	}
}

// TestReleaseTwiceFromC: a native plugin that releases a reference twice
// is told so: the second release fails, and the host's error (wrapping
// ErrReleased) reaches the Go caller through the plugin's register.
func TestReleaseTwiceFromC(t *testing.T) {
	other := fixture(t, "libother.so", `-DFIXTURE_ID="dynop.plugin.other"`)
	twice := fixture(t, "libtwice.so", `-DACQUIRE_FROM="dynop.plugin.other"`, "-DRELEASE_TWICE")
	h := openHost(t, []string{other, twice})
	_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	wantErr(t, err, dynop.ErrReleased, "DYNOP_ERROR_STATE", "release(", "no such reference, or released already")
	wantStatus(t, h, "dynop.plugin.other", dynop.StateAvailable, 1, 1)
}

// TestInfoChangedOnDisk: the library is replaced between enumeration and
// start; the start fails before the new bytes are loaded, naming both
// digests, and nothing stays loaded.
func TestInfoChangedOnDisk(t *testing.T) {
	lib := fixture(t, "libchanging.so")
	h := openHost(t, []string{lib})
	newer := fixture(t, "libchanged.so", `-DFIXTURE_IFACE_NAME="dynop.test.Renamed"`)
	if err := os.Rename(newer, lib); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	wantErr(t, err, discover.ErrChanged, lib, "when enumerated", "now")
	if cbuild.Mapped(t, lib) {
		t.Errorf("%s stays mapped after its start was refused", lib)
	}
}

// TestLiveInfoDiffers: the manifest says something the library does not
// (the binary's digest is right, its info is not): the start fails naming
// each field that differs, and nothing stays loaded.
func TestLiveInfoDiffers(t *testing.T) {
	lib := fixture(t, "libstale.so")
	m, err := dynop.ScanFile(ctx, lib, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Info.Interfaces[0].Name = "dynop.test.Renamed"
	m.Info.Description = "edited by hand"
	if _, err := discover.WriteManifest(lib, m); err != nil {
		t.Fatal(err)
	}
	h := openHost(t, []string{lib})
	_, _, err = h.Acquire(ctx, "dynop.plugin.fixture", iface.MustParseUID("7E57F1C5-0000-4000-8000-0000000000F1"), iface.V(1, 0, 0))
	wantErr(t, err, dynop.ErrInvalid, "info changed since it was enumerated", "Description: edited by hand ≠ Test fixture.", "Interfaces:", "dynop.test.Renamed")
	if cbuild.Mapped(t, lib) {
		t.Errorf("%s stays mapped after its start was refused", lib)
	}
}

// TestPanickingBinding: a binding that panics inside the callback from C
// fails the plugin's add_interface instead of crashing the process.
func TestPanickingBinding(t *testing.T) {
	uid := iface.MustParseUID("7E57F1C5-0000-4000-8000-0000000000F7")
	native.RegisterBinding(uid, func(native.Table) (any, error) { panic("binding bug") })
	lib := fixture(t, "libpanicbind.so", "-DFIXTURE_IFACE_UID=0xF7")
	h := openHost(t, []string{lib})
	_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", uid, iface.V(1, 0, 0))
	wantErr(t, err, nil, "add_interface", "panicked: binding bug")
}

// TestOneStartPerProcess: two hosts in one process cannot both start the
// same library (its static state exists once); the second is told why,
// and can start it once the first has stopped it.
func TestOneStartPerProcess(t *testing.T) {
	paths := []string{cbuild.VecMath(t), cbuild.Stats(t)}
	h1, h2 := openHost(t, paths), openHost(t, paths)
	s1, ref1, err := dynop.Acquire(ctx, h1, stats.PluginID, stats.Interface)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = dynop.Acquire(ctx, h2, stats.PluginID, stats.Interface)
	wantErr(t, err, dynop.ErrState, "is started already in this process", "libdynop_stats.so")
	checkStats(t, s1)
	if err := ref1.Release(); err != nil {
		t.Fatal(err)
	}
	s2, ref2, err := dynop.Acquire(ctx, h2, stats.PluginID, stats.Interface)
	if err != nil {
		t.Fatalf("after the first host stopped it: %v", err)
	}
	checkStats(t, s2)
	ref2.Release()
}

// TestRelativePath: a path without a slash names the file in the working
// directory, never a library on the search path.
func TestRelativePath(t *testing.T) {
	lib := cbuild.VecMath(t)
	t.Chdir(filepath.Dir(lib))
	p, err := native.Load(ctx, filepath.Base(lib), native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Path() != lib {
		t.Errorf("Path() = %q, want %q", p.Path(), lib)
	}
	if _, err := native.Load(ctx, "libm.so.6", native.Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(libm.so.6) in a directory without it: %v, want ErrNotExist (not the system libm)", err)
	}
}

// TestLastErrorClearedBySuccess: a plugin's acquire starts another plugin
// on the same thread, whose register ends with a failed host call and
// succeeds all the same; the acquire succeeds, and last_error must then be "", not the
// other plugin's error.
func TestLastErrorClearedBySuccess(t *testing.T) {
	dep := fixture(t, "libdep.so", `-DFIXTURE_ID="dynop.plugin.dep"`, "-DFAIL_LAST")
	user := fixture(t, "libuser.so", `-DACQUIRE_FROM="dynop.plugin.dep"`)
	h := openHost(t, []string{dep, user})
	_, ref, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ref.Release()
}

// panickyHandler is a slog handler that panics on the fixture's log line.
type panickyHandler struct{ slog.Handler }

func (h panickyHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "fixture:") {
		panic("log handler bug")
	}
	return h.Handler.Handle(ctx, r)
}

func (h panickyHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return panickyHandler{h.Handler.WithAttrs(as)}
}

// TestPanicInCallbackIsContained: a panic in Go code that a plugin's call
// into the host runs (here the log handler) does not unwind through the
// plugin's C frames: the plugin starts, and stops cleanly.
func TestPanicInCallbackIsContained(t *testing.T) {
	lib := fixture(t, "libpaniclog.so")
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir(), NoRegistered: true,
		Logger: slog.New(panickyHandler{slog.NewTextHandler(io.Discard, nil)})})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	_, ref, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureUID, iface.V(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
	if cbuild.Mapped(t, lib) {
		t.Errorf("%s is still mapped", lib)
	}
}
