package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	goimage "image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/demo"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/loader/wasm"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
	"github.com/dynop/dynop/tensor"
)

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one, as main does.
func TestMain(m *testing.M) {
	dynop.ServeScanner() // the scanner child process is this test binary
	os.Exit(m.Run())
}

// images are the bundled sample images the program processes.
var images = cbuild.Path("examples/pipelines/images")

// isolated returns the flags that keep a test's host to the paths it is
// given and its registry cache to a directory of its own, then more.
func isolated(t *testing.T, more ...string) []string {
	return append([]string{"-only", "-cache", t.TempDir(), "-images", images}, more...)
}

// runProgram runs the program with args and returns what it printed on
// stdout and stderr.
func runProgram(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, log bytes.Buffer
	err = run(ctx, args, &out, &log)
	return out.String(), log.String(), err
}

// checkOutputs checks that dir holds one grayscale 128×96 PNG file per
// bundled image, named after it, and nothing else.
func checkOutputs(t *testing.T, dir string) {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(images, "*.png"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no sample images in %s (%v)", images, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	var want []string
	for _, in := range inputs {
		want = append(want, filepath.Base(in))
	}
	if !slices.Equal(names, want) {
		t.Fatalf("output directory holds %q, want %q", names, want)
	}
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 128 || b.Dy() != 96 {
			t.Errorf("%s is %d×%d, want 128×96", name, b.Dx(), b.Dy())
		}
		if _, gray := img.(*goimage.Gray); !gray {
			t.Errorf("%s is a %T, want a grayscale image", name, img)
		}
	}
}

// hasRow fails t unless text has a line of a table the program prints
// whose cells match the regular expressions cells, in order.
func hasRow(t *testing.T, text string, cells ...string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  ` + strings.Join(cells, `\s+`) + `$`)
	if !re.MatchString(text) {
		t.Errorf("no line matches %s in:\n%s", re, text)
	}
}

// TestCompiledInPlugins runs the program without plugin files: the
// listing names the compiled-in plugins, the greeter greets and starts
// and stops with its dependency, vecmath is skipped, and the pipeline
// writes a small gray image per input with the Go operators.
func TestCompiledInPlugins(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runProgram(t, context.Background(), isolated(t, "-out", out)...)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	demo.CheckOrder(t, stdout,
		"== open: the host found 3 plugins and started none",
		"dynop.plugin.greeter",
		"dynop.plugin.image",
		"dynop.plugin.text",
		`Greet("embedding host") = "Hello, Embedding Host!"`,
		"while the reference is held:",
		"dynop.plugin.greeter: started, refs=1 starts=1 stops=0",
		"dynop.plugin.text: started, refs=1 starts=1 stops=0",
		"after Release:",
		"dynop.plugin.greeter: available, refs=0 starts=1 stops=1",
		"dynop.plugin.text: available, refs=0 starts=1 stops=1",
		"skipped: dynop.plugin.vecmath is not on the search path",
		"thumbnails: 6 images in 2 batches",
		"wrote 6 files to "+out,
		"== close: every plugin stopped, no reference leaked",
	)
	for _, id := range []string{"greeter", "image", "text"} {
		hasRow(t, stdout, `dynop\.plugin\.`+id, `v\d+\.\d+\.\d+`, "available", "compiled in")
	}
	hasRow(t, stdout, "gray", `image\.Grayscale`, `dynop\.plugin\.image`, `[1-9][0-9]*`, `[0-9.]+ ms`) // a call per worker's share of each batch
	if stderr != "" {
		t.Errorf("unexpected log:\n%s", stderr)
	}
	checkOutputs(t, out)
}

// TestNativePlugins runs the program over freshly built native plugins:
// it calls vecmath through its Go binding, and the imgproc plugin's
// graph pass runs the pipeline's gray node with its C kernel.
func TestNativePlugins(t *testing.T) {
	vm, ip := cbuild.VecMath(t), cbuild.Imgproc(t)
	out := t.TempDir()
	stdout, stderr, err := runProgram(t, context.Background(), isolated(t, "-v", "-out", out, vm, ip)...)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	demo.CheckOrder(t, stdout,
		"== open: the host found 5 plugins and started none",
		"dynop.plugin.greeter",
		"dynop.plugin.imgproc",
		"dynop.plugin.vecmath",
		`Greet("embedding host") = "Hello, Embedding Host!"`,
		"Dot([1 2 3 4], [5 6 7 8]) = 70",
		"thumbnails: 6 images in 2 batches",
		"wrote 6 files to "+out,
		"== close: every plugin stopped",
	)
	hasRow(t, stdout, `dynop\.plugin\.imgproc`, `v\S+`, "available", regexp.QuoteMeta(ip))
	hasRow(t, stdout, `dynop\.plugin\.vecmath`, `v\S+`, "available", regexp.QuoteMeta(vm))
	// The imgproc plugin's pass ran the gray node with its C kernel.
	hasRow(t, stdout, "gray", `imgproc\.Grayscale`, `dynop\.plugin\.imgproc`, `[1-9][0-9]*`, `[0-9.]+ ms`) // a call per worker's share of each batch
	// The debug log tells the lifecycle: nothing starts at open, each
	// plugin starts when first used and stops when released.
	demo.CheckOrder(t, stderr,
		`msg="plugin starting" plugin=dynop.plugin.greeter`,
		`msg="plugin starting" plugin=dynop.plugin.text`,
		`msg="plugin stopped" plugin=dynop.plugin.text`,
		`msg="plugin starting" plugin=dynop.plugin.vecmath`,
		`msg="plugin stopped" plugin=dynop.plugin.vecmath`,
		`msg="plugin started" plugin=dynop.plugin.imgproc`,
		`msg="plugin stopped" plugin=dynop.plugin.imgproc`,
	)
	checkOutputs(t, out)
}

// TestBadInput checks the program's answer to what a user can get wrong:
// a plugin path that does not exist is an error naming it; files that
// are not plugins are listed as broken with the reason, and the rest of
// the program runs; images that do not exist fail the pipeline and write
// nothing; a bad flag is a usage error; an interrupt stops it.
func TestBadInput(t *testing.T) {
	ctx := context.Background()

	t.Run("missing plugin path", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "libnothere.so")
		stdout, _, err := runProgram(t, ctx, isolated(t, missing)...)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
			t.Fatalf("err = %v, want one wrapping fs.ErrNotExist that names %s", err, missing)
		}
		if stdout != "" {
			t.Errorf("printed before failing:\n%s", stdout)
		}
	})

	t.Run("not a plugin", func(t *testing.T) {
		dir := t.TempDir()
		bogus := filepath.Join(dir, "libbogus.so")
		if err := os.WriteFile(bogus, []byte("not a plugin at all\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		stdout, stderr, err := runProgram(t, ctx, isolated(t, "-out", out, bogus)...)
		if err != nil {
			t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		demo.CheckOrder(t, stdout,
			"the host found 4 plugins",
			bogus,
			"why: plugin file "+bogus+": not a loadable plugin file",
			`Greet("embedding host") = "Hello, Embedding Host!"`,
			"wrote 6 files",
		)
		hasRow(t, stdout, `\?`, "-", "broken", regexp.QuoteMeta(bogus))
		demo.CheckOrder(t, stderr, `level=WARN msg="plugin file broken" path=`+bogus)
		checkOutputs(t, out)
	})

	t.Run("missing images", func(t *testing.T) {
		out := t.TempDir()
		args := append(isolated(t), "-out", out, "-images", filepath.Join(t.TempDir(), "none"))
		_, _, err := runProgram(t, ctx, args...)
		if !errors.Is(err, pipeline.ErrInvalid) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "compiling the pipeline") {
			t.Fatalf("err = %v, want a pipeline.ErrInvalid wrapping fs.ErrNotExist from compiling the pipeline", err)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("a failed pipeline left %d entries in %s", len(entries), out)
		}
	})

	t.Run("missing images, temporary output directory", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp) // where the program makes its output directory
		args := append(isolated(t), "-images", filepath.Join(t.TempDir(), "none"))
		if _, _, err := runProgram(t, ctx, args...); !errors.Is(err, pipeline.ErrInvalid) {
			t.Fatalf("err = %v, want pipeline.ErrInvalid", err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Errorf("a failed pipeline left %s in %s", entries[0].Name(), tmp)
		}
	})

	t.Run("bad flags", func(t *testing.T) {
		for _, args := range [][]string{{"-no-such-flag"}, {"-sandbox", "sometimes"}, {"-signatures", "maybe"}} {
			_, stderr, err := runProgram(t, ctx, args...)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr, "usage: embedding [flags] [PLUGIN-PATH...]") {
				t.Errorf("%q: err = %v, want a usage error with the usage on stderr:\n%s", args, err, stderr)
			}
		}
		if _, _, err := runProgram(t, ctx, "-h"); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("-h: err = %v, want flag.ErrHelp", err)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := runProgram(t, ctx, isolated(t, "-out", t.TempDir())...); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// guide is the host embedding guide, whose code comes from this program.
var guide = cbuild.Path("docs/embedding.md")

// excerptMark precedes a code block of the guide quoted from a file of
// the repository: <!-- excerpt: examples/embedding/main.go -->.
var excerptMark = regexp.MustCompile(`^<!-- excerpt: (\S+) -->$`)

// TestGuideExcerpts checks that every Go code block of docs/embedding.md
// is marked as an excerpt of a file in the repository and appears in
// that file verbatim, so that the guide's code cannot drift from code
// that compiles and is tested.
func TestGuideExcerpts(t *testing.T) {
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	files := map[string]string{}
	fromMain := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```go") {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("docs/embedding.md:%d: code block not closed", i+1)
		}
		block := strings.Join(lines[start:end], "\n") + "\n"
		m := excerptMark.FindStringSubmatch(strings.TrimSpace(prevLine(lines, i)))
		if m == nil {
			t.Errorf("docs/embedding.md:%d: a Go code block without an <!-- excerpt: FILE --> line before it", i+1)
			i = end
			continue
		}
		src, ok := files[m[1]]
		if !ok {
			b, err := os.ReadFile(cbuild.Path(m[1]))
			if err != nil {
				t.Fatalf("docs/embedding.md:%d: %v", i, err)
			}
			src = string(b)
			files[m[1]] = src
		}
		if !strings.Contains("\n"+src, "\n"+block) {
			t.Errorf("docs/embedding.md:%d: the excerpt is not in %s verbatim (as whole lines):\n%s", i+1, m[1], block)
		}
		if m[1] == "examples/embedding/main.go" {
			fromMain++
		}
		i = end
	}
	if fromMain < 6 {
		t.Errorf("the guide quotes %d blocks of main.go; it walks through the program in at least 6", fromMain)
	}
}

// prevLine returns the last non-blank line before line i.
func prevLine(lines []string, i int) string {
	for i--; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

// sentinels are the errors the packages export for errors.Is, as the
// guide names them; the compiler checks that they exist.
var sentinels = map[string]error{
	"dynop.ErrNotFound":          dynop.ErrNotFound,
	"dynop.ErrVersion":           dynop.ErrVersion,
	"dynop.ErrType":              dynop.ErrType,
	"dynop.ErrInvalid":           dynop.ErrInvalid,
	"dynop.ErrCycle":             dynop.ErrCycle,
	"dynop.ErrDuplicate":         dynop.ErrDuplicate,
	"dynop.ErrClosed":            dynop.ErrClosed,
	"dynop.ErrReleased":          dynop.ErrReleased,
	"dynop.ErrPanic":             dynop.ErrPanic,
	"dynop.ErrState":             dynop.ErrState,
	"dynop.ErrSignature":         dynop.ErrSignature,
	"dynop.ErrLeaked":            dynop.ErrLeaked,
	"dynop.ErrFormat":            dynop.ErrFormat,
	"dynop.ErrUnsupported":       dynop.ErrUnsupported,
	"iface.ErrSyntax":            iface.ErrSyntax,
	"plugin.ErrNoRef":            plugin.ErrNoRef,
	"discover.ErrScan":           discover.ErrScan,
	"discover.ErrManifest":       discover.ErrManifest,
	"discover.ErrLink":           discover.ErrLink,
	"discover.ErrChanged":        discover.ErrChanged,
	"sign.ErrUnsigned":           sign.ErrUnsigned,
	"sign.ErrUnknownKey":         sign.ErrUnknownKey,
	"sign.ErrKey":                sign.ErrKey,
	"native.ErrABI":              native.ErrABI,
	"native.ErrBounds":           native.ErrBounds,
	"native.ErrLoad":             native.ErrLoad,
	"wasm.ErrABI":                wasm.ErrABI,
	"wasm.ErrTrap":               wasm.ErrTrap,
	"wasm.ErrMemoryLimit":        wasm.ErrMemoryLimit,
	"wasm.ErrCapability":         wasm.ErrCapability,
	"schema.ErrArgument":         schema.ErrArgument,
	"op.ErrInput":                op.ErrInput,
	"schema.ErrOp":               schema.ErrOp,
	"op.ErrVariant":              op.ErrVariant,
	"graph.ErrInvalid":           graph.ErrInvalid,
	"schema.ErrPass":             schema.ErrPass,
	"pipeline.ErrInvalid":        pipeline.ErrInvalid,
	"pipeline.ErrOutput":         pipeline.ErrOutput,
	"pipeline.ErrNothing":        pipeline.ErrNothing,
	"dispatch.ErrUnknownFeature": dispatch.ErrUnknownFeature,
	"dispatch.ErrNoVariant":      dispatch.ErrNoVariant,
	"dispatch.ErrVariantList":    dispatch.ErrVariantList,
	"tensor.ErrInvalid":          tensor.ErrInvalid,
	"image.ErrDecode":            image.ErrDecode,
	"image.ErrEncode":            image.ErrEncode,
	"image.ErrChanged":           image.ErrChanged,
	"sign.ErrSignature":          sign.ErrSignature,
	"iface.ErrVersion":           iface.ErrVersion,
	"iface.ErrType":              iface.ErrType,
	"schema.ErrPlugin":           schema.ErrPlugin,
	"discover.ErrFormat":         discover.ErrFormat,
}

// TestGuideSentinels checks that every sentinel error the guide names
// exists (it is in sentinels, which the compiler checks), and that the
// guide names every sentinel in sentinels.
func TestGuideSentinels(t *testing.T) {
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:dynop|iface|plugin|discover|sign|native|wasm|dispatch|tensor|op|graph|pipeline|image|schema)\.Err[A-Z][A-Za-z]*\b`).FindAllString(string(data), -1) {
		named[m] = true
		if _, ok := sentinels[m]; !ok {
			t.Errorf("docs/embedding.md names %s, which is not a sentinel error of dynop", m)
		}
	}
	for name := range sentinels {
		if !named[name] {
			t.Errorf("docs/embedding.md does not name the sentinel %s", name)
		}
	}
	// The guide says which of dynop's sentinels are another package's.
	for _, same := range [][2]string{
		{"dynop.ErrVersion", "iface.ErrVersion"},
		{"dynop.ErrType", "iface.ErrType"},
		{"dynop.ErrInvalid", "schema.ErrPlugin"},
		{"dynop.ErrSignature", "sign.ErrSignature"},
		{"dynop.ErrFormat", "discover.ErrFormat"},
		{"native.ErrABI", "wasm.ErrABI"},
	} {
		if sentinels[same[0]] != sentinels[same[1]] {
			t.Errorf("%s is not %s, as docs/embedding.md says", same[0], same[1])
		}
		if !strings.Contains(string(data), fmt.Sprintf("`%s` (= `%s`", same[0], same[1])) {
			t.Errorf("docs/embedding.md does not say that %s is %s", same[0], same[1])
		}
	}
	for _, wraps := range []string{"sign.ErrUnsigned", "sign.ErrUnknownKey"} {
		if !errors.Is(sentinels[wraps], sign.ErrSignature) {
			t.Errorf("%s does not wrap sign.ErrSignature, as docs/embedding.md says", wraps)
		}
	}
}
