package discover_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// mkfifo makes a named pipe at path.
func mkfifo(t testing.TB, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return path
}

// promptly runs fn and fails the test if it takes more than 10 seconds,
// which a read blocked on a named pipe would: then it keeps opening the
// pipes for reading and writing, which lets a blocked open go on, until
// fn returns, so that the test ends.
func promptly(t *testing.T, fifos []string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return
	case <-time.After(10 * time.Second):
	}
	for {
		for _, p := range fifos {
			if f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		select {
		case <-done:
			t.Fatalf("blocked for more than 10s on a named pipe among %s", fifos)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestNamedPipeEntry: a named pipe given as a plugin file, directly or
// through a symbolic link, is broken as not a regular file, and
// enumeration does not block opening it.
func TestNamedPipeEntry(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "p.so"))
	link := filepath.Join(t.TempDir(), "link.so")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link} {
		var res *discover.Result
		promptly(t, []string{fifo}, func() { res = enumerate(t, options(t, path)) })
		f := only(t, res)
		wantErr(t, f.Err, discover.ErrFormat, "plugin file "+path, "not a regular file (a named pipe)")
	}
}

// TestIrregularFilesInDirectory: in a plugin directory, a named pipe, a
// socket and a link to a device with a plugin's name are broken, each
// saying what it is; a directory with a plugin's name is skipped, and a
// plugin next to them is read.
func TestIrregularFilesInDirectory(t *testing.T) {
	dir := t.TempDir()
	writePlugin(t, dir, "a.so", "id=test.plugin.a")
	fifo := mkfifo(t, filepath.Join(dir, "b.so"))
	if err := os.Mkdir(filepath.Join(dir, "c.so"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "d.so")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets: %v", err)
	}
	defer l.Close()
	// A link may point into its directory only; /dev/null is elsewhere,
	// so the device is given as an entry of its own.
	var res *discover.Result
	promptly(t, []string{fifo}, func() { res = enumerate(t, options(t, dir, "/dev/null")) })
	got := map[string]*discover.File{}
	for _, f := range res.Files {
		got[filepath.Base(f.Path)] = f
	}
	if len(res.Files) != 4 || got["a.so"] == nil || got["c.so"] != nil {
		t.Fatalf("found %v; want a.so, b.so, d.so and /dev/null, and not the directory c.so", res.Files)
	}
	if f := got["a.so"]; f.Err != nil || f.Info.ID != "test.plugin.a" {
		t.Errorf("the plugin next to them: %+v", f)
	}
	for name, kind := range map[string]string{"b.so": "a named pipe", "d.so": "a socket", "null": "a character device"} {
		wantErr(t, got[name].Err, discover.ErrFormat, "not a regular file ("+kind+")", got[name].Path)
	}
}

// TestNamedPipeFunctions: Inspect, VerifyFile and sign.HashFile refuse a named
// pipe promptly, naming it.
func TestNamedPipeFunctions(t *testing.T) {
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "p.so"))
	promptly(t, []string{fifo}, func() {
		_, err := discover.Inspect(ctx, fifo, discover.Options{Formats: []discover.Format{textFormat}})
		wantErr(t, err, discover.ErrFormat, fifo, "not a regular file (a named pipe)")
		_, err = discover.VerifyFile(fifo, nil)
		wantErr(t, err, discover.ErrFormat, fifo, "not a regular file (a named pipe)")
		_, _, err = sign.HashFile(fifo)
		if !regfile.Is(err) || !strings.Contains(err.Error(), fifo+": not a regular file (a named pipe)") {
			t.Errorf("sign.HashFile of a named pipe = %v", err)
		}
	})
}

// TestNamedPipeManifestAndSignature: a named pipe where a plugin's
// manifest or signature should be makes the plugin broken or untrusted
// with the reason, without blocking.
func TestNamedPipeManifestAndSignature(t *testing.T) {
	t.Run("manifest", func(t *testing.T) {
		path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.m")
		fifo := mkfifo(t, discover.ManifestPath(path))
		var res *discover.Result
		promptly(t, []string{fifo}, func() { res = enumerate(t, options(t, path)) })
		wantErr(t, only(t, res).Err, discover.ErrManifest, fifo, "not a regular file (a named pipe)")
	})
	t.Run("signature", func(t *testing.T) {
		path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.s")
		writeManifest(t, path)
		fifo := mkfifo(t, sign.SignaturePath(path))
		pub, _ := newKey(t)
		opts := options(t, path)
		opts.Trust, opts.Policy = sign.NewTrustStore(pub), sign.PolicyRequire
		var res *discover.Result
		promptly(t, []string{fifo}, func() { res = enumerate(t, opts) })
		f := only(t, res)
		if f.Err != nil {
			t.Fatalf("broken: %v", f.Err)
		}
		wantErr(t, f.Untrusted, sign.ErrSignature, fifo, "not a regular file (a named pipe)")
	})
	t.Run("manifest replaced after enumeration", func(t *testing.T) {
		pub, key := newKey(t)
		path := signedPlugin(t, t.TempDir(), key)
		opts := options(t, path)
		opts.Trust = sign.NewTrustStore(pub)
		f := only(t, enumerate(t, opts))
		if f.Err != nil || f.Untrusted != nil {
			t.Fatalf("broken or untrusted: %v, %v", f.Err, f.Untrusted)
		}
		os.Remove(discover.ManifestPath(path))
		fifo := mkfifo(t, discover.ManifestPath(path))
		promptly(t, []string{fifo}, func() {
			wantErr(t, f.CheckLoaded(f.SHA256), sign.ErrSignature, "manifest "+fifo, "not a regular file (a named pipe)")
		})
	})
}

// TestEmptyPluginID: a plugin whose info has no ID is broken for that
// reason, as the scanner child reports it, and not because the scanner
// "printed garbage".
func TestEmptyPluginID(t *testing.T) {
	path := writePlugin(t, t.TempDir(), "p.so", "id=")
	f := only(t, enumerate(t, options(t, path)))
	wantErr(t, f.Err, schema.ErrPlugin, "plugin file "+path, "invalid plugin info: the plugin id is empty")
	if strings.Contains(f.Err.Error(), "garbage") {
		t.Errorf("the error blames the scanner: %v", f.Err)
	}
	_, err := discover.Inspect(ctx, path, discover.Options{Formats: []discover.Format{textFormat}})
	wantErr(t, err, schema.ErrPlugin, path, "the plugin id is empty")

	// A scanner that really prints a manifest without an id printed
	// garbage.
	m := writeManifest(t, writePlugin(t, t.TempDir(), "q.so", "id=test.plugin.q"))
	m.Info.ID = ""
	answer := writeFile(t, filepath.Join(t.TempDir(), "answer.json"), string(encode(t, m)))
	opts := options(t, path)
	opts.Scanner = script(t, "cat "+answer+" >&3")
	wantErr(t, only(t, enumerate(t, opts)).Err, discover.ErrScan, "printed garbage", "missing required field info.id")
}
