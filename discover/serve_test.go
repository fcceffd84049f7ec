package discover_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop/discover"
)

// TestUnservingScanner: a scanner program whose main does not call
// ServeScanner runs its normal main; the host says so, does not blame the
// plugin (nothing is cached, so a host with a working scanner reads the
// file), starts no further child once one did not serve, and the child's
// own enumeration starts no scanner of its own.
func TestUnservingScanner(t *testing.T) {
	dir := t.TempDir()
	workers := max(4, runtime.NumCPU()) // as many scans at once, at most
	n := workers + 3
	for i := range n {
		writePlugin(t, dir, fmt.Sprintf("p%02d.so", i), fmt.Sprintf("id=test.plugin.p%02d", i))
	}
	count := filepath.Join(t.TempDir(), "count")
	t.Setenv(unservingEnv, count)
	exe, _ := os.Executable()
	opts := options(t, dir)
	opts.Scanner = exe
	res := enumerate(t, opts)
	for _, f := range res.Files {
		wantErr(t, f.Err, discover.ErrScan, f.Path,
			"the scanner child ("+exe+") exited without answering (exit status 0): does its main call dynop.ServeScanner() first?")
	}
	// What the child printed: its own enumeration's error, for it started
	// no scanner of its own.
	if err := res.Files[0].Err; err == nil || !strings.Contains(err.Error(), "it printed: unserving main: ") ||
		!strings.Contains(err.Error(), "started as a scanner child (DYNOP_SCANNER is set) but did not serve as one") {
		t.Errorf("the child's own host started a scanner, or printed something else: %v", err)
	}
	data, _ := os.ReadFile(count)
	if runs := strings.Count(string(data), "ran"); runs < 1 || runs > workers {
		t.Errorf("the program ran %d times for %d files, with %d workers: a child that did not serve should stop further ones", runs, n, workers)
	}

	os.Unsetenv(unservingEnv)
	opts.Scanner = ""
	for _, f := range enumerate(t, opts).Files {
		if f.Err != nil || f.Cached {
			t.Errorf("with a scanner that serves: %s: cached %v, err %v; the unserving scanner's error is no verdict on the plugin", f.Path, f.Cached, f.Err)
		}
	}
}

// TestUnservingScannerHangs: a scanner program that neither serves nor
// exits (its normal main is a server, say) is killed at the timeout, and
// the host says it never started to answer rather than that the plugin
// hangs.
func TestUnservingScannerHangs(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.server")
	opts := options(t, path)
	opts.ScanTimeout = time.Second
	opts.Scanner = script(t, "echo listening; sleep 30")
	f := only(t, enumerate(t, opts))
	wantErr(t, f.Err, discover.ErrScan, "did not answer within 1s, nor start to: does its main call dynop.ServeScanner() first?; it printed: listening")
	if strings.Contains(f.Err.Error(), "hangs") {
		t.Errorf("the plugin is blamed: %v", f.Err)
	}
	opts.Scanner = ""
	if f := only(t, enumerate(t, opts)); f.Err != nil || f.Cached {
		t.Errorf("with a scanner that serves: cached %v, err %v", f.Cached, f.Err)
	}
}

// TestScannerWithoutLoader: a scanner program that has no loader of the
// format the host names answers so, saying what to import, and the answer
// is no verdict on the plugin.
func TestScannerWithoutLoader(t *testing.T) {
	exe, _ := os.Executable()
	for _, c := range []struct{ name, hint string }{
		{"wasm", "import github.com/dynop/dynop/loader/wasm"},
		{"acme", "import the package that registers it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.noloader")
			opts := options(t, path)
			opts.Formats = []discover.Format{{Name: c.name, Magic: textMagic, Inspect: inspectText}}
			f := only(t, enumerate(t, opts))
			wantErr(t, f.Err, discover.ErrScan, fmt.Sprintf("scanner child: no loader %q is registered in %s: %s", c.name, exe, c.hint))
			opts.Formats = []discover.Format{textFormat}
			if f := only(t, enumerate(t, opts)); f.Err != nil || f.Cached {
				t.Errorf("with the loader: cached %v, err %v", f.Cached, f.Err)
			}
		})
	}
}
