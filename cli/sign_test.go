package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/sign"
)

// copyFile copies src to dir/name and returns the new path.
func copyFile(t *testing.T, src, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, data, 0o700); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSigningWorkflow: keygen, manifest, sign, verify, and a host that
// trusts the key, from the command line.
func TestSigningWorkflow(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	lib := copyFile(t, cbuild.VecMath(t), dir, "libdynop_vecmath.so")
	unsigned := copyFile(t, cbuild.Stats(t), dir, "libdynop_stats.so")

	code, out, errOut := runCLI(t, "keygen", "--out", filepath.Join(keys, "release"))
	if code != 0 || !strings.Contains(out, "release.key") || !strings.Contains(out, "release.pub") {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Stat(filepath.Join(keys, "release.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("private key: %v, %v; want mode 0600", fi, err)
	}
	if code, _, errOut := runCLI(t, "keygen", "--out", filepath.Join(keys, "release")); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Errorf("keygen over an existing key: exit %d, %q; want 1 and a refusal", code, errOut)
	}
	pub, err := sign.ReadPublicKey(filepath.Join(keys, "release.pub"))
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut = runCLI(t, "manifest", lib)
	if code != 0 || !strings.Contains(out, "plugin dynop.plugin.vecmath 1.0.0") {
		t.Fatalf("manifest: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, err := discover.ReadManifest(discover.ManifestPath(lib)); err != nil {
		t.Fatalf("the manifest written does not read back: %v", err)
	}
	code, out, errOut = runCLI(t, "sign", "--key", filepath.Join(keys, "release.key"), lib)
	if code != 0 || !strings.Contains(out, "signed by key "+sign.KeyID(pub)) {
		t.Fatalf("sign: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "verify", "--key", filepath.Join(keys, "release.pub"), lib)
	if code != 0 || !strings.Contains(out, "ok, signed by key "+sign.KeyID(pub)) {
		t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
	}
	// sign writes the manifest of a plugin that has none.
	if code, _, errOut := runCLI(t, "sign", "--key", filepath.Join(keys, "release.key"), unsigned); code != 0 {
		t.Fatalf("sign without a manifest: exit %d: %s", code, errOut)
	}
	os.Remove(sign.SignaturePath(unsigned))

	// A host with the key in its trust store: the signed plugin is
	// available and says who signed it, the unsigned one is untrusted.
	trust := t.TempDir()
	copyFile(t, filepath.Join(keys, "release.pub"), trust, "release.pub")
	t.Setenv("DYNOP_TRUST_DIR", trust)
	code, out, _ = runCLI(t, "list", dir)
	if code != 0 {
		t.Errorf("list: exit %d", code)
	}
	for _, want := range []string{
		`dynop\.plugin\.stats +1\.0\.0 +untrusted +path +` + regexp.QuoteMeta(unsigned) + `\n +why +signature check failed: not signed`,
		`dynop\.plugin\.vecmath +1\.0\.0 +available +path +` + regexp.QuoteMeta(lib) + `\n +signed +by key ` + sign.KeyID(pub),
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list does not match %s:\n%s", want, out)
		}
	}
	t.Setenv("DYNOP_SIGNATURE_POLICY", "warn")
	if _, out, _ := runCLI(t, "list", dir); !regexp.MustCompile(`dynop\.plugin\.stats +1\.0\.0 +available`).MatchString(out) {
		t.Errorf("under policy warn the unsigned plugin is not available:\n%s", out)
	}
	t.Setenv("DYNOP_SIGNATURE_POLICY", "strict")
	if code, _, errOut := runCLI(t, "list", dir); code != 1 || !strings.Contains(errOut, `DYNOP_SIGNATURE_POLICY: `) || !strings.Contains(errOut, `"strict"`) {
		t.Errorf("a bad policy: exit %d, %q", code, errOut)
	}
}

// TestSignAndVerifyErrors: each command refuses bad input with a message
// that says what is wrong.
func TestSignAndVerifyErrors(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	lib := copyFile(t, cbuild.VecMath(t), dir, "libdynop_vecmath.so")
	runCLI(t, "keygen", "--out", filepath.Join(keys, "a"))
	runCLI(t, "keygen", "--out", filepath.Join(keys, "b"))
	if code, _, errOut := runCLI(t, "sign", "--key", filepath.Join(keys, "a.key"), lib); code != 0 {
		t.Fatal(errOut)
	}
	junk := filepath.Join(dir, "junk.so")
	os.WriteFile(junk, []byte("junk"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"manifest of no plugin", []string{"manifest", junk}, 1, "no plugin format"},
		{"manifest of nothing", []string{"manifest"}, 2, "manifest takes one or more plugin files"},
		{"sign without a key", []string{"sign", lib}, 2, "sign takes --key FILE"},
		{"sign with a public key", []string{"sign", "--key", copyFile(t, filepath.Join(keys, "a.pub"), keys, "a-pub-as.key"), lib}, 1, "PRIVATE KEY"},
		{"verify without a trust store", []string{"verify", lib}, 2, "verify needs a trust store"},
		{"verify with another key", []string{"verify", "--key", filepath.Join(keys, "b.pub"), lib}, 1, "key not trusted"},
		{"verify unsigned", []string{"verify", "--key", filepath.Join(keys, "a.pub"), junk}, 1, junk},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, c.code, c.want)
			}
		})
	}

	// The binary changes after signing: verify says so, and sign refuses
	// the stale manifest instead of signing it.
	f, _ := os.OpenFile(lib, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("tampered"))
	f.Close()
	if code, _, errOut := runCLI(t, "verify", "--key", filepath.Join(keys, "a.pub"), lib); code != 1 || !strings.Contains(errOut, "does not match the binary") {
		t.Errorf("verify of a tampered binary: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "sign", "--key", filepath.Join(keys, "a.key"), lib); code != 1 || !strings.Contains(errOut, "dynop manifest "+lib) {
		t.Errorf("sign over a stale manifest: exit %d, %q", code, errOut)
	}
}

// TestListStates: duplicates, broken files and unsupported plugins are
// listed with what they are and why.
func TestListStates(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	a := copyFile(t, cbuild.VecMath(t), first, "libvecmath.so")
	b := copyFile(t, a, second, "libvecmath.so")
	bad := filepath.Join(second, "libbad.so")
	os.WriteFile(bad, []byte("\x7fELF garbage"), 0o644)
	code, out, errOut := runCLI(t, "list", first, second)
	if code != 1 || !strings.Contains(errOut, "1 plugin file could not be used") {
		t.Errorf("exit %d, %q; want 1 for the broken file", code, errOut)
	}
	for _, want := range []string{
		`dynop\.plugin\.vecmath +1\.0\.0 +available +path +` + regexp.QuoteMeta(a),
		`dynop\.plugin\.vecmath +1\.0\.0 +duplicate +path +` + regexp.QuoteMeta(b) + `\n +using +` + regexp.QuoteMeta(a),
		`\? +\? +broken +path +` + regexp.QuoteMeta(bad) + `\n +why +.*malformed or truncated ELF`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list does not match %s:\n%s", want, out)
		}
	}
}
