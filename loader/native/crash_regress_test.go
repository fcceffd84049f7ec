package native_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/tensor"
)

// crashEnv names the plugin file TestCrashChild loads, in the child
// process the crash tests start.
const crashEnv = "DYNOP_TEST_CRASH_PLUGIN"

// TestCrashChild is the child of TestCrashNamesThePlugin: it starts the
// plugin in $DYNOP_TEST_CRASH_PLUGIN and runs test.Nop on two samples,
// which one of the fixture's switches makes crash or exit. It does
// nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	lib := os.Getenv(crashEnv)
	if lib == "" {
		t.Skip("the child of TestCrashNamesThePlugin")
	}
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{lib}, NoRegistered: true, NoDefaultPaths: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.NewOperator(ctx, "test.Nop", nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tensor.New(tensor.Uint8, 4)
	if _, err := in.Exec(ctx, mustBatch(t, x, x)); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the plugin did not end the process")
}

// TestCrashNamesThePlugin: a crash or an exit() in a native plugin's code
// ended the host with Go's dump of a "signal arrived during cgo execution",
// or silently, with no word of which plugin (exit(0) in run made the host
// exit 0 having done nothing). Now the first line says which plugin, file
// and call (issue 21, item 5).
func TestCrashNamesThePlugin(t *testing.T) {
	for _, c := range []struct {
		define string
		status int
		want   string
	}{
		{"-DCRASH_REGISTER", 2, `dynop: SIGSEGV (segmentation fault) in native plugin "dynop.plugin.ops" (LIB), during register; the host process ends`},
		{"-DCRASH_RUN", 2, `dynop: SIGSEGV (segmentation fault) in native plugin "dynop.plugin.ops" (LIB), during test.Nop run, sample 1;`},
		{"-DABORT_RUN", 2, `dynop: SIGABRT (abort) in native plugin "dynop.plugin.ops" (LIB), during test.Nop run, sample 0;`},
		{"-DEXIT_REGISTER", 7, `dynop: exit(7) called by native plugin "dynop.plugin.ops" (LIB), during register: the host process ends with it`},
		{"-DEXIT0_RUN", 70, `dynop: exit(0) called by native plugin "dynop.plugin.ops" (LIB), during test.Nop run, sample 0: the host process ends with it, with status 70 instead of 0`},
	} {
		t.Run(c.define, func(t *testing.T) {
			lib := opsPlugin(t, c.define)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashEnv+"="+lib)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			cmd.WaitDelay = time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
			err := cmd.Wait()
			timer.Stop()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.status {
				t.Errorf("the child ended with %v, want exit status %d", err, c.status)
			}
			out := stderr.String()
			want := strings.ReplaceAll(c.want, "LIB", lib)
			i := strings.Index(out, want)
			if i < 0 {
				t.Fatalf("the output does not say %q:\n%s", want, out)
			}
			// The plugin is named before the Go runtime's report.
			for _, g := range []string{"signal arrived during cgo execution", "goroutine "} {
				if j := strings.Index(out, g); j >= 0 && j < i {
					t.Errorf("%q comes before the plugin's name:\n%s", g, out)
				}
			}
		})
	}
}
