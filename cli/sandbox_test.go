package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/loader/wasm"
)

// TestSandboxFlag lists a directory with imgproc's native and WebAssembly
// builds under each spelling of --sandbox and $DYNOP_SANDBOX.
func TestSandboxFlag(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{cbuild.Imgproc(t): "libdynop_imgproc.so", cbuild.ImgprocWasm(t): "dynop_imgproc.wasm"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		env  string
		want []string // the state of the native build, and words of why one build is passed over
	}{
		{nil, "", []string{"available", "has it and is used", "a native build is preferred to the sandbox"}},
		{[]string{"--sandbox"}, "", []string{"unsupported", "sandbox policy always"}},
		{[]string{"--sandbox=always"}, "", []string{"unsupported", "sandbox policy always"}},
		{[]string{"--sandbox=unsigned"}, "", []string{"untrusted", "sandbox policy unsigned"}},
		{nil, "unsigned", []string{"untrusted", "sandbox policy unsigned"}},
		{[]string{"--sandbox=prefer-native"}, "always", []string{"available", "has it and is used"}}, // the flag wins
	} {
		t.Run(strings.Join(c.args, " ")+" env="+c.env, func(t *testing.T) {
			t.Setenv("DYNOP_SANDBOX", c.env)
			args := append([]string{"list", "--json"}, c.args...)
			code, out, errOut := runCLI(t, append(args, dir)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			i := strings.Index(out, `"path": "`+filepath.Join(dir, "libdynop_imgproc.so")+`"`)
			if i < 0 {
				t.Fatalf("native build not listed:\n%s", out)
			}
			entry := out[i:]
			if j := strings.Index(entry, "}"); j > 0 {
				entry = entry[:j]
			}
			if !strings.Contains(entry, `"state": "`+c.want[0]+`"`) {
				t.Errorf("native build: want state %s:\n%s", c.want[0], entry)
			}
			for _, w := range c.want[1:] {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
	code, _, errOut := runCLI(t, "list", "--sandbox=sometimes", dir)
	if code != 2 || !strings.Contains(errOut, "want prefer-native, unsigned or always") {
		t.Errorf("--sandbox=sometimes: exit %d, %s", code, errOut)
	}
	t.Setenv("DYNOP_SANDBOX", "sometimes")
	code, _, errOut = runCLI(t, "list", dir)
	if code != 1 || !strings.Contains(errOut, "DYNOP_SANDBOX") {
		t.Errorf("DYNOP_SANDBOX=sometimes: exit %d, %s", code, errOut)
	}
}

// TestSandboxGrant: a WebAssembly plugin that asks for the clock is
// unsupported until $DYNOP_SANDBOX_GRANT grants it; an unknown capability
// is an error that names the variable.
func TestSandboxGrant(t *testing.T) {
	wasm := cbuild.GoWasm(t, "loader/wasm/testdata/goclock")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DYNOP_SANDBOX_GRANT", "")
	_, out, _ := runCLI(t, "inspect", wasm)
	if !strings.Contains(out, "unsupported") || !strings.Contains(out, "asks for clock") || !strings.Contains(out, "DYNOP_SANDBOX_GRANT") {
		t.Errorf("without a grant: want unsupported, naming the clock and DYNOP_SANDBOX_GRANT:\n%s", out)
	}
	t.Setenv("DYNOP_SANDBOX_GRANT", "clock,random")
	if code, out, errOut := runCLI(t, "inspect", wasm); code != 0 || !strings.Contains(out, "available") {
		t.Errorf("with clock granted: exit %d:\n%s%s", code, out, errOut)
	}
	t.Setenv("DYNOP_SANDBOX_GRANT", "clock,network")
	if code, _, errOut := runCLI(t, "list"); code != 1 || !strings.Contains(errOut, "DYNOP_SANDBOX_GRANT") || !strings.Contains(errOut, "network") {
		t.Errorf("an unknown capability: exit %d: %s", code, errOut)
	}
}

// TestWasmEngine: inspect and list say which engine runs a WebAssembly
// plugin, the fastest of the build unless $DYNOP_WASM_ENGINE chooses; an
// engine the build does not have is an error that names the variable.
func TestWasmEngine(t *testing.T) {
	path := cbuild.ImgprocWasm(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, engine := range append([]string{""}, wasm.Engines()...) {
		t.Run("engine="+engine, func(t *testing.T) {
			t.Setenv("DYNOP_WASM_ENGINE", engine)
			want := engine
			if want == "" {
				want = wasm.Engines()[0]
			}
			code, out, errOut := runCLI(t, "inspect", path)
			if code != 0 || !strings.Contains(out, "sandbox      WebAssembly, run by "+want+"\n") {
				t.Errorf("inspect: exit %d, want a line naming %s:\n%s%s", code, want, out, errOut)
			}
			code, out, errOut = runCLI(t, "list", "--json", path)
			if code != 0 || !strings.Contains(out, `"engine": "`+want+`"`) {
				t.Errorf("list --json: exit %d, want engine %s:\n%s%s", code, want, out, errOut)
			}
		})
	}
	t.Setenv("DYNOP_WASM_ENGINE", "v8")
	if code, _, errOut := runCLI(t, "list"); code != 1 || !strings.Contains(errOut, "DYNOP_WASM_ENGINE") || !strings.Contains(errOut, `unknown engine "v8"`) {
		t.Errorf("an unknown engine: exit %d: %s", code, errOut)
	}
}
