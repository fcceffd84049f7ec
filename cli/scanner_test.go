package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
)

// testMainEnv makes TestMain the main of another program: "cli.Main", a
// program whose main only calls Main (as one that builds its own dynop
// does); "unserving", one whose main does not call dynop.ServeScanner,
// and prints a line and exits 0.
const testMainEnv = "DYNOP_TEST_MAIN"

// TestLoadersServeNoScannerFromInit: started as a scanner child, a
// program that imports the loaders (this binary: cli imports the native
// and WebAssembly loaders) gets to its main, which here does not serve:
// no init inspects the file, answers or exits.
func TestLoadersServeNoScannerFromInit(t *testing.T) {
	lib := cbuild.VecMath(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"native", "wasm"} {
		t.Run(format, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), testMainEnv+"=unserving",
				"DYNOP_SCANNER=1", "DYNOP_SCANNER_FORMAT="+format, "DYNOP_SCANNER_FILE="+lib)
			cmd.ExtraFiles = []*os.File{w}
			out, err := cmd.CombinedOutput()
			w.Close()
			answer, _ := io.ReadAll(r)
			if err != nil || !strings.Contains(string(out), "main ran, not serving") || len(answer) > 0 {
				t.Errorf("the child: %v, printed %q, answered %q; want it to reach main, which does not serve", err, out, answer)
			}
		})
	}
}

// TestScannerProgramMain: a host whose scanner program serves (here a
// program whose main calls only Main) reads a native plugin file that
// has no manifest; one whose main does not serve lists it as broken, with
// a reason that says why.
func TestScannerProgramMain(t *testing.T) {
	lib := cbuild.VecMath(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, main string) dynop.PluginStatus {
		t.Helper()
		t.Setenv(testMainEnv, main) // the scanner child inherits it
		var log bytes.Buffer
		h, err := dynop.Open(context.Background(), dynop.Options{
			Paths: []string{lib}, NoDefaultPaths: true, NoRegistered: true, CacheDir: t.TempDir(),
			Scanner: exe, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		for _, st := range h.Plugins() {
			if st.Path == lib {
				return st
			}
		}
		t.Fatalf("the host does not list %s: %v", lib, h.Plugins())
		return dynop.PluginStatus{}
	}
	t.Run("cli.Main", func(t *testing.T) {
		if st := open(t, "cli.Main"); st.State != dynop.StateAvailable || st.Info.ID != "dynop.plugin.vecmath" {
			t.Errorf("%s: %v, %v", st.Path, st.State, st.Err)
		}
	})
	t.Run("unserving", func(t *testing.T) {
		st := open(t, "unserving")
		testutil.WantErr(t, st.Err, discover.ErrScan, lib,
			"the scanner child ("+exe+") exited without answering (exit status 0): does its main call dynop.ServeScanner() first?; it printed: cli test binary: main ran, not serving")
		if st.State != dynop.StateBroken {
			t.Errorf("%s: %v, want broken", st.Path, st.State)
		}
		t.Logf("%s: %v", st.State, st.Err)
	})
}
