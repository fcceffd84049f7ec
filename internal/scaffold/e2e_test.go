package scaffold_test

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/scaffold"
	"github.com/dynop/dynop/internal/testutil"
	_ "github.com/dynop/dynop/loader/native" // the Rust plugin's loader
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestNewProjectsBuildAndRun does what the README of a new project tells
// a newcomer to do, for every language whose toolchain is on this
// machine: `dynop new` (the real command, built from cmd/dynop), then
// the three commands of the project's README as written there (build,
// test, run the pipeline through dynop), then `dynop inspect` of the
// plugin and of its operator. The pipeline must have brightened the
// sample image by its amount, through the SIMD variant where the CPU has
// one, checked against the reference by the host
// (DYNOP_VERIFY_VARIANTS=1).
func TestNewProjectsBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project per language: not with -short")
	}
	dynop := buildDynop(t)
	for _, lang := range scaffold.Languages {
		t.Run(lang, func(t *testing.T) {
			if err := scaffold.CheckToolchain(lang); err != nil {
				t.Skip(err)
			}
			name := "bright_" + strings.ReplaceAll(lang, "-", "")
			root := t.TempDir()
			env := isolatedEnv(t, dynop)
			out := runIn(t, root, env, dynop, "new", "--lang", lang, "--vendor", "acme", name)
			if !strings.Contains(out, "acme.plugin."+name) {
				t.Errorf("dynop new said %q; want it to name the plugin", out)
			}
			dir := filepath.Join(root, name)
			cmds := readmeCommands(t, filepath.Join(dir, "README.md"))
			if len(cmds) != 3 {
				t.Fatalf("README gives %d commands, want 3 (build, test, run): %q", len(cmds), cmds)
			}
			for i, c := range cmds {
				out := runIn(t, dir, env, "sh", "-c", c)
				if i == 1 && !regexp.MustCompile(`(?m)^(ok|test result: ok)`).MatchString(out) {
					t.Errorf("the test command %q did not say ok:\n%s", c, out)
				}
			}
			checkBrightened(t, filepath.Join(dir, "images", "sample.png"), filepath.Join(dir, "out", "sample.png"), 40)

			// dynop inspect: the plugin file, or for Go the plugin
			// compiled into the project's own dynop.
			inspector, target, extra := dynop, pluginFile(lang, dir, name), []string{}
			if lang == "go" {
				inspector, target = filepath.Join(dir, "bin", "dynop"), "acme.plugin."+name
			} else {
				extra = []string{target}
			}
			info := runIn(t, dir, env, inspector, "inspect", target)
			for _, want := range []string{"acme.plugin." + name, "available", name + ".Brighten"} {
				if !strings.Contains(info, want) {
					t.Errorf("dynop inspect %s lacks %q:\n%s", target, want, info)
				}
			}
			if lang != "go-wasm" && !strings.Contains(info, "acme."+name+".Brightness 1.0.0") {
				t.Errorf("dynop inspect %s does not show the interface:\n%s", target, info)
			}
			opInfo := runIn(t, dir, env, inspector, append([]string{"inspect", name + ".Brighten"}, extra...)...)
			if lang == "go-wasm" {
				if !strings.Contains(opInfo, "one implementation") {
					t.Errorf("dynop inspect %s.Brighten: want one implementation:\n%s", name, opInfo)
				}
			} else if want := chosenVariant(lang); !regexp.MustCompile(`\*\s+` + want + `\s`).MatchString(opInfo) {
				t.Errorf("dynop inspect %s.Brighten: want variant %s chosen on %s:\n%s", name, want, runtime.GOARCH, opInfo)
			}
		})
	}
}

// chosenVariant is the variant the host should choose on this machine.
func chosenVariant(lang string) string {
	switch {
	case runtime.GOARCH == "amd64" && dispatch.Detect()&dispatch.Of(dispatch.AVX2) != 0:
		return "avx2"
	case runtime.GOARCH == "arm64" && lang != "go":
		return "neon"
	}
	return "scalar"
}

func pluginFile(lang, dir, name string) string {
	switch lang {
	case "go-wasm":
		return filepath.Join(dir, "build", name+".wasm")
	case "rust":
		return filepath.Join(dir, "target", "release", "lib"+name+".so")
	}
	return filepath.Join(dir, "build", "lib"+name+".so")
}

var (
	dynopOnce sync.Once
	dynopDir  string // holds the dynop buildDynop built; TestMain removes it
	dynopPath string
	dynopErr  error
)

func TestMain(m *testing.M) {
	dynop.ServeScanner() // a child that reads a plugin file's info
	code := m.Run()
	if dynopDir != "" {
		os.RemoveAll(dynopDir)
	}
	os.Exit(code)
}

// buildDynop builds cmd/dynop once for the test binary's run.
func buildDynop(t *testing.T) string {
	t.Helper()
	dynopOnce.Do(func() {
		dynopDir, dynopErr = os.MkdirTemp("", "dynop-scaffold-test")
		if dynopErr != nil {
			return
		}
		dynopPath = filepath.Join(dynopDir, "dynop")
		cmd := exec.Command(cbuild.GoCommand(t), "build", "-o", dynopPath, "./cmd/dynop")
		cmd.Dir = cbuild.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			dynopErr = fmt.Errorf("go build ./cmd/dynop: %v\n%s", err, out)
		}
	})
	if dynopErr != nil {
		t.Fatal(dynopErr)
	}
	return dynopPath
}

// isolatedEnv is the environment the commands run in: dynop first on
// PATH, as the README assumes; dynop's caches and search paths in t's
// temporary directory; DYNOP_VERIFY_VARIANTS on.
func isolatedEnv(t *testing.T, dynop string) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DYNOP_") || k == "PATH" || k == "XDG_CACHE_HOME" || k == "XDG_DATA_HOME" || k == "GOFLAGS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+filepath.Dir(dynop)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		"DYNOP_VERIFY_VARIANTS=1",
	)
}

// runIn runs name with args in dir and returns its combined output,
// failing the test if it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s (%.1fs)", filepath.Base(name), strings.Join(args, " "), time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// readmeCommands returns the command lines of the first ```sh block of
// the README at path, without their comments.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no ```sh block", path)
	}
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// checkBrightened checks that every channel of the PNG at out is the
// one at in plus amount, saturated.
func checkBrightened(t *testing.T, in, out string, amount int) {
	t.Helper()
	a, b := readPNG(t, in), readPNG(t, out)
	if a.Bounds() != b.Bounds() {
		t.Fatalf("%s is %v, want %v like %s", out, b.Bounds(), a.Bounds(), in)
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r0, g0, b0, _ := a.At(x, y).RGBA()
			r1, g1, b1, _ := b.At(x, y).RGBA()
			for i, c := range [][2]uint32{{r0, r1}, {g0, g1}, {b0, b1}} {
				if want := min(int(c[0]>>8)+amount, 255); int(c[1]>>8) != want {
					t.Fatalf("%s: pixel (%d,%d) channel %d is %d, want %d", out, x, y, i, c[1]>>8, want)
				}
			}
		}
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// TestRustPanicsBecomeErrors builds a Rust project whose operator panics
// in create (amount 77) and in run (amount 78), loads it into a Go host
// and checks that each call returns an error with the panic's message,
// that the host and the plugin keep working, and that the process is
// still there to check: the dynop crate's guard stops the panic at the
// entry point.
func TestRustPanicsBecomeErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Rust project: not with -short")
	}
	if err := scaffold.CheckToolchain("rust"); err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "panicky")
	if _, err := scaffold.Generate(scaffold.Options{Name: "panicky", Vendor: "acme", Lang: "rust", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src", "lib.rs")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lib := string(b)
	for _, p := range []struct{ at, add string }{
		{"                op.amount = v.clamp(-255, 255) as i32; // the host checked -255..255\n",
			"                if v == 77 { panic!(\"amount {} is unlucky\", v); }\n"},
		{"        // SAFETY: the instance op_create made, and the sample's tensors.\n",
			"        if unsafe { (*(instance as *const BrightenOp)).amount } == 78 { panic!(\"run refuses 78\"); }\n"},
	} {
		if !strings.Contains(lib, p.at) {
			t.Fatalf("the template's src/lib.rs no longer has the line\n%sthat this test adds a panic after", p.at)
		}
		lib = strings.Replace(lib, p.at, p.at+p.add, 1)
	}
	if err := os.WriteFile(src, []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, os.Environ(), "cargo", "build", "--release", "--offline")

	ctx := t.Context()
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{filepath.Join(dir, "target", "release", "libpanicky.so")},
		NoDefaultPaths: true, NoRegistered: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	x, err := tensor.FromSlice([]uint8{10, 20, 250}, 3)
	if err != nil {
		t.Fatal(err)
	}
	brighten := func(amount int64) ([]uint8, error) {
		in, err := h.NewOperator(ctx, "panicky.Brighten", schema.Args{"amount": amount})
		if err != nil {
			return nil, err
		}
		defer in.Close()
		batch, err := tensor.NewBatch(x)
		if err != nil {
			return nil, err
		}
		outs, err := in.Exec(ctx, batch)
		if err != nil {
			return nil, err
		}
		return tensor.Values[uint8](outs[0].Sample(0))
	}
	for round := range 2 { // the plugin keeps working after a panic
		for amount, want := range map[int64]string{77: "panic: amount 77 is unlucky", 78: "panic: run refuses 78"} {
			_, err := brighten(amount)
			if round == 0 && amount == 77 { // docs/authoring.md quotes it
				guide, _ := os.ReadFile(filepath.Join(cbuild.Root(), "docs", "authoring.md"))
				if err == nil || !strings.Contains(string(guide), "\n"+err.Error()+"\n") {
					t.Errorf("docs/authoring.md does not quote the error, verbatim:\n%v", err)
				}
			}
			var re *abi.ResultError
			if !errors.As(err, &re) || re.Result != abi.ErrorGeneric || !strings.Contains(err.Error(), want) {
				t.Errorf("round %d, amount %d: error %v; want a DYNOP_ERROR result saying %q", round, amount, err, want)
			}
		}
		y, err := brighten(5)
		if err != nil || !slices.Equal(y, []uint8{15, 25, 255}) {
			t.Errorf("round %d, amount 5 after the panics: %v, %v; want [15 25 255]", round, y, err)
		}
	}
}

// TestMakefileRunsItsDynop: a project's Makefile runs the dynop that
// wrote it though none is on PATH; with that one gone and none on PATH,
// make stops and says how to choose one, make test still works (it needs
// no dynop), and make DYNOP=... runs the one given.
func TestMakefileRunsItsDynop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C project: not with -short")
	}
	if err := scaffold.CheckToolchain("c"); err != nil {
		t.Skip(err)
	}
	dynop := buildDynop(t)
	root := t.TempDir()
	writer := filepath.Join(root, "bin", "dynop") // a copy, to take away
	if err := os.MkdirAll(filepath.Dir(writer), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dynop)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(writer, b, 0o755); err != nil {
		t.Fatal(err)
	}
	env := noDynopEnv(t)
	runIn(t, root, env, writer, "new", "--lang", "c", "--vendor", "acme", "glow")
	dir := filepath.Join(root, "glow")
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "DYNOP ?= $(or $(wildcard "+writer+"),") {
		t.Errorf("the Makefile does not name the dynop that wrote it, %s:\n%s", writer, mk)
	}
	out := runIn(t, dir, env, "make")
	if !strings.Contains(out, writer+" manifest build/libglow.so") {
		t.Errorf("make did not run %s manifest:\n%s", writer, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "libglow.so.dynop.json")); err != nil {
		t.Errorf("no manifest: %v", err)
	}

	if err := os.Remove(writer); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, env, "make", "clean")
	cmd := exec.Command("make")
	cmd.Dir, cmd.Env = dir, env
	got, err := cmd.CombinedOutput()
	for _, want := range []string{"dynop not found: not at " + writer, "nor on PATH", "make DYNOP=/path/to/dynop"} {
		if err == nil || !strings.Contains(string(got), want) {
			t.Errorf("make without a dynop: %v, and the output lacks %q:\n%s", err, want, got)
		}
	}
	runIn(t, dir, env, "make", "test")
	if out := runIn(t, dir, env, "make", "DYNOP="+dynop); !strings.Contains(out, dynop+" manifest build/libglow.so") {
		t.Errorf("make DYNOP=%s did not run it:\n%s", dynop, out)
	}
}

// noDynopEnv is the environment without DYNOP and with no directory on
// PATH that has a dynop in it.
func noDynopEnv(t *testing.T) []string {
	var env, path []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "PATH" && k != "DYNOP" && k != "MAKEFLAGS" {
			env = append(env, kv)
		}
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "dynop")); err != nil && d != "" {
			path = append(path, d)
		}
	}
	return append(env, "PATH="+strings.Join(path, string(os.PathListSeparator)))
}
