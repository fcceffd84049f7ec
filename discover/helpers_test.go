package discover_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

var ctx = context.Background()

// A text format for plugin files, read by the test loader: the magic line,
// then key=value lines. "id" and "version" make the info; "crash", "hang"
// and "print" make the scanner misbehave.
const textMagic = "#dynop-test-plugin\n"

var textFormat = discover.Format{Name: "text", Magic: textMagic, Inspect: inspectText, Bundled: bundledText}

// bundledText lists the files a text plugin's "bundle=" lines name.
func bundledText(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if rel, ok := strings.CutPrefix(line, "bundle="); ok {
			out = append(out, rel)
		}
	}
	return out, nil
}

// TestMain serves as the scanner child when the tests start this binary
// as one (unless $DYNOP_TEST_UNSERVING says to be a program that does
// not).
func TestMain(m *testing.M) {
	if count := os.Getenv(unservingEnv); count != "" {
		unservingMain(count)
	}
	discover.ServeScanner([]discover.Format{textFormat})
	os.Exit(m.Run())
}

// unservingEnv names a file; with it set, this binary is a host program
// whose main does not call ServeScanner: see unservingMain.
const unservingEnv = "DYNOP_TEST_UNSERVING"

// unservingMain is the main of a program that opens a host without first
// serving as a scanner: started as a scanner child, it runs instead. It
// appends a line to the file count and enumerates the plugin file it was
// given (as such a program might enumerate its plugins), printing what it
// learned, and exits 0 without an answer.
func unservingMain(count string) {
	f, err := os.OpenFile(count, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		fmt.Fprintln(f, "ran")
		f.Close()
	}
	res, err := discover.Enumerate(context.Background(), discover.Options{
		Paths: []string{os.Getenv("DYNOP_SCANNER_FILE")}, NoDefaultPaths: true, NoCache: true,
		Formats: []discover.Format{textFormat}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println("unserving main:", err)
		os.Exit(0)
	}
	for _, f := range res.Files {
		fmt.Printf("unserving main: %s: %v\n", f.Path, f.Err)
	}
	os.Exit(0)
}

func inspectText(ctx context.Context, path string) (schema.Plugin, json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	defer f.Close()
	info := schema.Plugin{Version: iface.V(1, 0, 0)}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "id":
			info.ID = v
		case "version":
			info.Version = iface.MustParseVersion(v)
		case "cpu":
			info.Requirements.CPUFeatures = append(info.Requirements.CPUFeatures, v)
		case "crash":
			var p *int
			*p = 1 //lint:ignore SA5011 the crash is the point
		case "hang":
			time.Sleep(time.Hour)
		case "print":
			fmt.Println(v)
		case "bundle":
			// Listed by bundledText.
		case "refuse":
			return schema.Plugin{}, nil, fmt.Errorf("%w: the loader refuses it: %s", discover.ErrFormat, v)
		}
	}
	return info, json.RawMessage(`{"from":"text"}`), nil
}

// writePlugin writes a text plugin file called name in dir.
func writePlugin(t testing.TB, dir, name string, lines ...string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, name), textMagic+strings.Join(lines, "\n")+"\n")
}

func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// logBuffer is a logger whose output the test can read.
type logBuffer = testutil.LogBuffer

// options returns Enumerate options over paths only, with a cache in a
// fresh directory.
func options(t testing.TB, paths ...string) discover.Options {
	return discover.Options{
		Paths: paths, NoDefaultPaths: true, Formats: []discover.Format{textFormat},
		CacheDir: t.TempDir(), ScanTimeout: 20 * time.Second, Logger: slog.New(slog.DiscardHandler),
	}
}

func enumerate(t testing.TB, opts discover.Options) *discover.Result {
	t.Helper()
	res, err := discover.Enumerate(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// only returns the one file of res.
func only(t testing.TB, res *discover.Result) *discover.File {
	t.Helper()
	if len(res.Files) != 1 {
		t.Fatalf("found %d files, want 1: %v", len(res.Files), res.Files)
	}
	return res.Files[0]
}

var wantErr = testutil.WantErr

// writeManifest scans the plugin file path and writes its manifest.
func writeManifest(t testing.TB, path string) *discover.Manifest {
	t.Helper()
	m, err := discover.Inspect(ctx, path, discover.Options{Formats: []discover.Format{textFormat}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discover.WriteManifest(path, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// signFile signs the plugin file path and its manifest with key.
func signFile(t testing.TB, path string, key ed25519.PrivateKey) {
	t.Helper()
	d, _, err := sign.HashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := sign.HashFile(discover.ManifestPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := sign.WriteSignature(sign.SignaturePath(path), sign.Sign(key, d, md)); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, key
}

// failingScanner returns a scanner program that fails every scan, to
// prove that none runs.
func failingScanner(t testing.TB) string {
	return script(t, "exit 7")
}

// script writes a shell script to run as the scanner.
func script(t testing.TB, body string) string {
	t.Helper()
	return writeExecutable(t, filepath.Join(t.TempDir(), "scanner.sh"), "#!/bin/sh\n"+body+"\n")
}

func writeExecutable(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// encode returns m as a manifest file holds it.
func encode(t testing.TB, m *discover.Manifest) []byte {
	t.Helper()
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
