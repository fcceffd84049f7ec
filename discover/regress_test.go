package discover_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// TestHugeAnswer: a scanner that writes more than the answer limit
// should be reported as such, promptly. The host stops reading at the
// limit but keeps the pipe open, so the child blocks on its write until
// the scan timeout kills it, and the error says it hangs.
func TestHugeAnswer(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.huge")
	opts := options(t, path)
	opts.ScanTimeout = 3 * time.Second
	opts.Scanner = script(t, "head -c 20000000 /dev/zero >&3; exit 0")
	start := time.Now()
	f := only(t, enumerate(t, opts))
	took := time.Since(start)
	wantErr(t, f.Err, discover.ErrScan, "larger than")
	if took >= opts.ScanTimeout {
		t.Errorf("took %v, the whole scan timeout: the child was blocked writing into a pipe nobody reads", took)
	}
}

// TestForkedChildKeepsResultFD: a scanner that answers in full and
// exits 0, leaving a background process that inherited descriptor 3, is
// reported as "timed out ... (it hangs)" and its answer is thrown away.
func TestForkedChildKeepsResultFD(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.forks")
	m := writeManifest(t, path)
	os.Remove(discover.ManifestPath(path))
	answer := writeFile(t, filepath.Join(t.TempDir(), "answer.json"), string(encode(t, m)))
	opts := options(t, path)
	opts.ScanTimeout = 2 * time.Second
	opts.Scanner = script(t, "cat "+answer+" >&3; (sleep 30 >/dev/null 2>&1) & exit 0")
	f := only(t, enumerate(t, opts))
	if f.Err != nil {
		t.Errorf("the scanner answered in full and exited 0, yet: %v", f.Err)
	}
}

// TestCachedNoLoaderError: a host without the loader for a format
// caches "no loader for it"; a host that has the loader, sharing the
// (default, per-user) cache, is served that stale verdict.
func TestCachedNoLoaderError(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.otherhost")
	opts := options(t, path)
	without := opts
	without.Formats = []discover.Format{{Name: "other", Magic: "\x00other", Inspect: inspectText}}
	if f := only(t, enumerate(t, without)); f.Err == nil {
		t.Fatalf("a host without the text loader read it")
	}
	f := only(t, enumerate(t, opts))
	if f.Err != nil {
		t.Errorf("a host with the loader: cached %v, %v", f.Cached, f.Err)
	}
}

// TestCachedScannerStartFailure: a scanner that could not even start
// (a transient or host-specific problem, not a verdict on the plugin) is
// cached as the plugin's verdict; a later host with a working scanner
// still sees the plugin broken.
func TestCachedScannerStartFailure(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.transient")
	opts := options(t, path)
	bad := opts
	bad.Scanner = filepath.Join(t.TempDir(), "no-such-scanner")
	if f := only(t, enumerate(t, bad)); f.Err == nil {
		t.Fatal("a missing scanner read the plugin")
	}
	f := only(t, enumerate(t, opts))
	if f.Err != nil {
		t.Errorf("with the host's own scanner: cached %v, %v", f.Cached, f.Err)
	}
}

// TestRequireRunsUnsignedCode: under policy require, a plugin file
// with no manifest can never verify (a signature needs a manifest), yet
// enumeration runs its code in a scanner child process first.
func TestRequireRunsUnsignedCode(t *testing.T) {
	pub, _ := newKey(t)
	path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.unsigned")
	marker := filepath.Join(t.TempDir(), "ran")
	opts := options(t, path)
	opts.Trust, opts.Policy = sign.NewTrustStore(pub), sign.PolicyRequire
	opts.Scanner = script(t, "touch "+marker+"; exit 7")
	f := only(t, enumerate(t, opts))
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("policy require ran the unsigned plugin's scanner (its code); file: err %v, untrusted %v", f.Err, f.Untrusted)
	}
}

// TestConcurrentHostsLoseEntries: two hosts over different
// directories opening at once with one cache: the last to save drops
// what the other learned, so its plugins are scanned (run) again.
func TestConcurrentHostsLoseEntries(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	writePlugin(t, dirA, "a.so", "id=test.plugin.a")
	writePlugin(t, dirB, "b.so", "id=test.plugin.b")
	cache := t.TempDir()
	exe, _ := os.Executable()
	optsA := options(t, dirA)
	optsA.CacheDir = cache
	optsA.Scanner = script(t, "sleep 1; exec "+exe) // slow to answer: saves last
	optsB := options(t, dirB)
	optsB.CacheDir = cache
	var wg sync.WaitGroup
	wg.Go(func() { enumerate(t, optsA) })
	time.Sleep(100 * time.Millisecond)
	wg.Go(func() { enumerate(t, optsB) })
	wg.Wait()
	optsB.Scanner = failingScanner(t)
	if f := only(t, enumerate(t, optsB)); !f.Cached {
		t.Errorf("host B's plugin is no longer cached (err %v): host A's save dropped it", f.Err)
	}
}

// TestTrustChangeRacesOnCacheMap: when the trust store changes, each
// cached file's verdict is made again and stored into the cache map under
// e.mu, while other workers read the same map in cache.lookup without it.
// Run with -race.
func TestTrustChangeRacesOnCacheMap(t *testing.T) {
	dir := t.TempDir()
	for i := range 64 {
		writePlugin(t, dir, fmt.Sprintf("p%03d.so", i), fmt.Sprintf("id=test.plugin.p%03d", i))
	}
	opts := options(t, dir)
	pub1, _ := newKey(t)
	pub2, _ := newKey(t)
	opts.Trust, opts.Policy = sign.NewTrustStore(pub1), sign.PolicyWarn
	enumerate(t, opts)
	opts.Trust = sign.NewTrustStore(pub2)
	opts.Scanner = failingScanner(t)
	for _, f := range enumerate(t, opts).Files {
		if !f.Cached {
			t.Errorf("%s not cached", f.Path)
		}
	}
}
