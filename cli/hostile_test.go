package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
)

// Tests of the CLI against plugins that misbehave: plugin files that are
// named pipes, plugins whose register never returns, whose strings carry
// terminal escape sequences, whose deregister fails. testdata/hostile.c is
// the plugin.

var (
	dynopOnce sync.Once
	dynopDir  string // holds the dynop buildDynop built; TestMain removes it
	dynopPath string
	dynopErr  error
)

// buildDynop builds the real dynop (cmd/dynop) once for the test binary's
// run.
func buildDynop(t *testing.T) string {
	t.Helper()
	gocmd := cbuild.GoCommand(t)
	dynopOnce.Do(func() {
		if dynopDir, dynopErr = os.MkdirTemp("", "dynop-cli-test-bin"); dynopErr != nil {
			return
		}
		dynopPath = filepath.Join(dynopDir, "dynop")
		cmd := exec.Command(gocmd, "build", "-o", dynopPath, "./cmd/dynop")
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

// hostile builds testdata/hostile.c with the -D switches flags.
func hostile(t *testing.T, name string, flags ...string) string {
	t.Helper()
	return cbuild.Plugin(t, name, "cli/testdata/hostile.c", flags...)
}

// hostilePipeline writes a pipeline that decodes one image, runs
// hostile.Nop over it and writes the result, and returns its path.
func hostilePipeline(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`name: hostile
inputs:
  photos:
    files: [%q]
operators:
  - name: decode
    op: image.Decode
    inputs: [photos]
    args: {channels: 3}
  - name: nop
    op: hostile.Nop
    inputs: [decode]
outputs:
  result:
    from: nop
    dir: out
`, cbuild.Path("examples/pipelines/images/rings.png"))
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a buffer a child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor polls cond every 20ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestNamedPipePluginPath: a named pipe given as a plugin file — to
// inspect, to list, to run with --plugin, in $DYNOP_PLUGIN_PATH, or in
// dynop.Options.Paths — is refused at once, saying it is not a regular
// file but a named pipe; opening it used to block for ever.
func TestNamedPipePluginPath(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "x.so")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	const want = "not a regular file (a named pipe)"
	// promptly runs fn, and if it blocks past 20 seconds, keeps opening
	// the pipe (which lets a blocked open go on) until it returns, and
	// fails.
	promptly := func(t *testing.T, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn()
		}()
		select {
		case <-done:
			return
		case <-time.After(20 * time.Second):
		}
		for !waitFor(100*time.Millisecond, func() bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}) {
			if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		t.Fatalf("blocked for more than 20s on the named pipe %s", fifo)
	}
	cli := func(t *testing.T, args ...string) {
		t.Helper()
		var code int
		var stderr string
		promptly(t, func() { code, _, stderr = runCLI(t, args...) })
		if code != 1 || !strings.Contains(stderr, fifo) || !strings.Contains(stderr, want) {
			t.Errorf("dynop %q: exit %d, stderr %q; want 1 and %q", args, code, stderr, want)
		}
	}
	t.Run("inspect", func(t *testing.T) { cli(t, "inspect", fifo) })
	t.Run("list", func(t *testing.T) { cli(t, "list", fifo) })
	t.Run("run", func(t *testing.T) { cli(t, "run", "--plugin", fifo, "--out", t.TempDir(), demo) })
	t.Run("env", func(t *testing.T) {
		t.Setenv("DYNOP_PLUGIN_PATH", fifo)
		cli(t, "list")
	})
	t.Run("Open", func(t *testing.T) {
		promptly(t, func() {
			h, err := dynop.Open(context.Background(), dynop.Options{Paths: []string{fifo}, NoRegistered: true,
				NoDefaultPaths: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			defer h.Close(context.Background())
			ps := h.Plugins()
			if len(ps) != 1 || ps[0].State != dynop.StateBroken || ps[0].Err == nil || !strings.Contains(ps[0].Err.Error(), want) {
				t.Errorf("Open over a named pipe: %+v; want it broken, saying %q", ps, want)
			}
		})
	})
}

// TestSecondSignalEndsRun: `dynop run` with a plugin whose register never
// returns stops at the second SIGINT (or SIGTERM), with status 130 (143);
// the first says it is stopping and that another Ctrl-C forces the exit.
// It used to ignore both, and SIGKILL alone ended it.
func TestSecondSignalEndsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dynop")
	}
	bin := buildDynop(t)
	lib := hostile(t, "libblocks.so", "-DREGISTER_BLOCKS", "-DPLAIN")
	pipe := hostilePipeline(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "registering")
			cmd := exec.Command(bin, "run", "--plugin", lib, "--out", t.TempDir(), pipe)
			cmd.Env = append(os.Environ(), "HOSTILE_MARKER="+marker)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			exited := make(chan struct{})
			go func() {
				waitErr = cmd.Wait()
				close(exited)
			}()
			defer func() {
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
					<-exited
				}
			}()
			if !waitFor(60*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
				t.Fatalf("the plugin's register never ran; stderr:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if !waitFor(10*time.Second, func() bool { return strings.Contains(stderr.String(), "stopping") }) {
				t.Fatalf("no word of stopping after the first %v; stderr:\n%s", tc.sig, stderr.String())
			}
			select {
			case <-exited:
				t.Fatalf("exited (%v) at the first signal, though register never returns", waitErr)
			case <-time.After(200 * time.Millisecond):
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10s after the second %v; stderr:\n%s", tc.sig, stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(waitErr, &exit) || exit.ExitCode() != tc.code {
				t.Errorf("exit %v after two %v, want status %d; stderr:\n%s", waitErr, tc.sig, tc.code, stderr.String())
			}
			if s := stderr.String(); !strings.Contains(s, "press Ctrl-C again") || !strings.Contains(s, "exiting at once") {
				t.Errorf("stderr does not say another Ctrl-C forces the exit, then that it exits:\n%s", s)
			}
		})
	}
}

// TestInterrupts: the first signal cancels the context and says so; the
// second exits with 128 + its number; a command that the first stopped
// and that failed exits so too.
func TestInterrupts(t *testing.T) {
	var stderr syncBuffer
	exits := make(chan int, 1)
	ctx, in := catchInterrupts(context.Background(), &stderr, func(code int) { exits <- code })
	defer in.stop()
	if in.status(1) != 1 || in.status(0) != 0 {
		t.Errorf("status without a signal changed")
	}
	in.ch <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first signal did not cancel the context")
	}
	if !waitFor(10*time.Second, func() bool { return strings.Contains(stderr.String(), "terminated: stopping; press Ctrl-C again") }) {
		t.Errorf("stderr %q", stderr.String())
	}
	if in.status(1) != 143 || in.status(0) != 0 {
		t.Errorf("status after SIGTERM: %d for a failure, %d for a success; want 143 and 0", in.status(1), in.status(0))
	}
	in.ch <- syscall.SIGINT
	select {
	case code := <-exits:
		if code != 130 {
			t.Errorf("exit %d after a second signal, SIGINT; want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not exit")
	}
}

// hostileText is what testdata/hostile.c puts in every string, after
// "Description." or the like, escaped as the CLI prints it. (The lone
// byte \x9b does not survive the scanner's JSON: it arrives as U+FFFD.)
const hostileText = `\x1b[2J\x1b[31mall plugins verified\x1b[0m\rEVIL\u009b31m`

// rawHostile are the raw sequences that must never reach the terminal.
var rawHostile = []string{"\x1b]0;", "\x1b[2J", "\x1b[31mall", "\r", "\u009b", "\u202e"}

func checkEscaped(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, raw := range rawHostile {
		if strings.Contains(out, raw) {
			t.Errorf("%s prints %q raw:\n%s", what, raw, out)
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not print %q:\n%s", what, w, out)
		}
	}
}

// TestPluginTextEscaped: the strings of a plugin's info, its operator's
// docs, the errors it sets and the lines it logs reach the terminal with
// their escape sequences, carriage returns, C1 controls and bidi
// overrides spelled out, coloured or not; JSON escapes them its own way.
func TestPluginTextEscaped(t *testing.T) {
	lib := hostile(t, "libhostile.so")
	for _, color := range []string{"--color=never", "--color=always"} {
		code, out, errOut := runCLI(t, "inspect", color, lib)
		if code != 0 {
			t.Fatalf("inspect %s: exit %d: %s", color, code, errOut)
		}
		checkEscaped(t, "inspect "+color, out, `\x1b]0;owned\x07Description.`+hostileText, `\x1b]0;owned\x07Author.`,
			`\x1b]0;owned\x07Build.`, `\u202ereversed`)

		code, out, errOut = runCLI(t, "list", color, "--ops", lib)
		if code != 0 {
			t.Fatalf("list --ops %s: exit %d: %s", color, code, errOut)
		}
		checkEscaped(t, "list --ops "+color, out, `hostile.Nop`, `\x1b]0;owned\x07Operator doc.`+hostileText)

		code, out, errOut = runCLI(t, "list", color, lib)
		if code != 0 || !strings.Contains(out, "dynop.plugin.hostile") {
			t.Fatalf("list %s: exit %d: %s%s", color, code, out, errOut)
		}
		checkEscaped(t, "list "+color, out)
	}
	code, out, errOut := runCLI(t, "inspect", "hostile.Nop", lib)
	if code != 0 {
		t.Fatalf("inspect hostile.Nop: exit %d: %s", code, errOut)
	}
	checkEscaped(t, "inspect hostile.Nop", out, `\x1b]0;owned\x07Operator doc.`, `\x1b]0;owned\x07Input doc.`,
		`\x1b]0;owned\x07Output doc.`, `\x1b]0;owned\x07Arg doc.`)

	code, out, _ = runCLI(t, "inspect", "--json", lib)
	if code != 0 {
		t.Fatalf("inspect --json: exit %d", code)
	}
	checkEscaped(t, "inspect --json", out, `"description": "\u001b]0;owned\u0007Description.\u001b[2J`, `\rEVIL\u009b31m`, `\u202ereversed`)
	var doc struct{ Plugin struct{ Description string } }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.HasPrefix(doc.Plugin.Description, "\x1b]0;owned\x07Description.\x1b[2J") ||
		!strings.Contains(doc.Plugin.Description, "\rEVIL\u009b31m") || !strings.HasSuffix(doc.Plugin.Description, "\u202ereversed") {
		t.Errorf("inspect --json does not give the description as the plugin has it: %q, %v", doc.Plugin.Description, err)
	}

	// An error a plugin sets.
	failing := hostile(t, "libfailing.so", "-DREGISTER_FAILS")
	code, _, errOut = runCLI(t, "run", "--plugin", failing, "--out", t.TempDir(), hostilePipeline(t))
	if code != 1 {
		t.Errorf("run with a plugin whose register fails: exit %d, want 1", code)
	}
	checkEscaped(t, "run's error", errOut, `\x1b]0;owned\x07register refuses.`+hostileText)
}

// TestPluginLogEscaped: a line a plugin logs reaches stderr escaped. (In
// the real dynop: the CLI logs to the process's stderr.)
func TestPluginLogEscaped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dynop")
	}
	bin := buildDynop(t)
	lib := hostile(t, "libhostile.so")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--plugin", lib, "--out", t.TempDir(), hostilePipeline(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dynop run: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	checkEscaped(t, "run's log", stderr.String(), `level=ERROR msg="\x1b]0;owned\aLog line.`+hostileText, `plugin=dynop.plugin.hostile`)
	checkEscaped(t, "run's output", stdout.String(), "hostile.Nop")
}

// TestDeregisterFailureWarns: a plugin whose deregister fails leaves
// dynop run's outputs written and its status 0, but dynop says so, as a
// warning naming the plugin and what it said; it used to say nothing.
func TestDeregisterFailureWarns(t *testing.T) {
	lib := hostile(t, "libdereg.so", "-DDEREGISTER_FAILS")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--plugin", lib, "--out", out, hostilePipeline(t))
	if code != 0 {
		t.Fatalf("exit %d, want 0: the outputs were written\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "wrote 1 file to "+out) {
		t.Errorf("no outputs:\n%s", stdout)
	}
	checkEscaped(t, "run's warning", stderr, "dynop: warning: ", `stop plugin "dynop.plugin.hostile": deregister: `,
		`\x1b]0;owned\x07cannot let go.`+hostileText)
}

// TestEscape: what escapeText and escapeCell spell out, and what they
// leave alone.
func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, text, cell string }{
		{"plain — größe ✓", "plain — größe ✓", "plain — größe ✓"},
		{"a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`, `\x1b]0;title\x07`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"del\x7f nul\x00", `del\x7f nul\x00`, `del\x7f nul\x00`},
		{"c1 \u009b31m \u0085", `c1 \u009b31m \u0085`, `c1 \u009b31m \u0085`},
		{"bad \x9b\xff utf8", `bad \x9b\xff utf8`, `bad \x9b\xff utf8`},
		{"bidi \u202etxt\u202c \u2066x\u2069 \u200f", `bidi \u202etxt\u202c \u2066x\u2069 \u200f`, `bidi \u202etxt\u202c \u2066x\u2069 \u200f`},
		{"", "", ""},
	} {
		if got := escapeText(tc.in); got != tc.text {
			t.Errorf("escapeText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := escapeCell(tc.in); got != tc.cell {
			t.Errorf("escapeCell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
	}
}
