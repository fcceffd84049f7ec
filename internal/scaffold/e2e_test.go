package scaffold_test

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/scaffold"
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
