package imgproc_test

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	_ "github.com/dynop/dynop/loader/wasm" // the sandboxed build
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/sign"
	"github.com/dynop/dynop/tensor"
)

// TestWasmAgreesWithNative runs every case of the variant proof on the
// WebAssembly build (compiled by clang for wasm32 with -msimd128: the
// scalar code, and GaussianBlur's and Resize's variants written with
// wasm's v128) and
// on the native scalar variant: the same operator, sandboxed or not,
// computes the same bytes.
func TestWasmAgreesWithNative(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	wasmLib := cbuild.ImgprocWasm(t)
	cases := variantCases(t)
	want, _ := runCases(t, cbuild.Imgproc(t), "-sse2", cases)
	got, ran := runCases(t, wasmLib, "", cases)
	exact := 0
	for i, c := range cases {
		variant := "scalar"
		if strings.HasPrefix(c.name, "imgproc.GaussianBlur ") || strings.HasPrefix(c.name, "imgproc.Resize ") {
			variant = "simd128" // the wasm module's first variant that needs no CPU features
		}
		if ran[i] != variant {
			t.Errorf("%s: the wasm build ran variant %q, want %s", c.name, ran[i], variant)
		}
		if err := op.Agree(got[i], want[i]); err != nil {
			t.Errorf("%s: wasm disagrees with native scalar: %v", c.name, err)
		} else if sameBytes(t, got[i], want[i]) {
			exact++
		}
	}
	t.Logf("%d of %d cases bit-identical between wasm and native scalar", exact, len(cases))
	if exact != len(cases) {
		t.Errorf("only %d of %d cases are bit-identical; the scalar code is the same C", exact, len(cases))
	}
}

func sameBytes(t *testing.T, a, b []*tensor.Batch) bool {
	for i := range a {
		for j, x := range a[i].Samples() {
			bx, _ := x.Bytes()
			by, _ := b[i].Samples()[j].Bytes()
			if string(bx) != string(by) {
				return false
			}
		}
	}
	return true
}

// TestBuildChoice puts a native and a WebAssembly build of imgproc side by
// side and checks which one each sandbox policy runs, and why the other
// is passed over.
func TestBuildChoice(t *testing.T) {
	dir := t.TempDir()
	so := filepath.Join(dir, "libdynop_imgproc.so")
	wm := filepath.Join(dir, "dynop_imgproc.wasm")
	copyFile(t, cbuild.Imgproc(t), so)
	copyFile(t, cbuild.ImgprocWasm(t), wm)

	// choice opens a host and returns the winner's path and the loser's
	// status.
	choice := func(t *testing.T, opts dynop.Options) (string, dynop.PluginStatus) {
		t.Helper()
		opts.NoRegistered, opts.NoDefaultPaths, opts.Paths, opts.CacheDir = true, true, []string{dir}, t.TempDir()
		opts.Logger = testutil.Logger(t)
		h, err := dynop.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		in, err := h.NewOperator(context.Background(), "imgproc.Sobel", nil)
		if err != nil {
			t.Fatalf("%v; plugins: %+v", err, h.Plugins())
		}
		in.Close()
		var win string
		var lose dynop.PluginStatus
		for _, st := range h.Plugins() {
			if st.Info.ID != "dynop.plugin.imgproc" {
				continue
			}
			if st.State.Usable() && st.State != dynop.StateDuplicate {
				win = st.Path
			} else {
				lose = st
			}
		}
		return win, lose
	}

	t.Run("prefer native", func(t *testing.T) {
		win, lose := choice(t, dynop.Options{})
		if win != so || lose.Path != wm || lose.State != dynop.StateDuplicate {
			t.Fatalf("ran %s; passed over %s (%v)", win, lose.Path, lose.State)
		}
		testutil.WantErr(t, lose.Err, dynop.ErrDuplicate, so+" has it and is used", "a native build is preferred to the sandbox")
	})
	t.Run("always", func(t *testing.T) {
		win, lose := choice(t, dynop.Options{Sandbox: dynop.SandboxAlways})
		if win != wm || lose.Path != so || lose.State != dynop.StateUnsupported {
			t.Fatalf("ran %s; passed over %s (%v)", win, lose.Path, lose.State)
		}
		testutil.WantErr(t, lose.Err, dynop.ErrUnsupported, "is native", "sandbox policy always")
	})
	t.Run("unsigned", func(t *testing.T) {
		win, lose := choice(t, dynop.Options{Sandbox: dynop.SandboxUnsigned})
		if win != wm || lose.Path != so || lose.State != dynop.StateUntrusted {
			t.Fatalf("ran %s; passed over %s (%v)", win, lose.Path, lose.State)
		}
		testutil.WantErr(t, lose.Err, dynop.ErrSignature, "not signed by a trusted key", "sandbox policy unsigned")
	})
	t.Run("unsigned, native signed", func(t *testing.T) {
		pub, key, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{so, wm} {
			m, err := dynop.ScanFile(context.Background(), f, dynop.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mpath, err := discover.WriteManifest(f, m)
			if err != nil {
				t.Fatal(err)
			}
			d, _, err := sign.HashFile(f)
			if err != nil {
				t.Fatal(err)
			}
			md, _, err := sign.HashFile(mpath)
			if err != nil {
				t.Fatal(err)
			}
			if err := sign.WriteSignature(sign.SignaturePath(f), sign.Sign(key, d, md)); err != nil {
				t.Fatal(err)
			}
		}
		win, lose := choice(t, dynop.Options{TrustedKeys: []ed25519.PublicKey{pub}, Sandbox: dynop.SandboxUnsigned})
		if win != so || lose.Path != wm || lose.State != dynop.StateDuplicate {
			t.Fatalf("ran %s; passed over %s (%v: %v)", win, lose.Path, lose.State, lose.Err)
		}
	})
	t.Run("policy names", func(t *testing.T) {
		for _, p := range []dynop.SandboxPolicy{dynop.SandboxPreferNative, dynop.SandboxUnsigned, dynop.SandboxAlways} {
			if q, err := dynop.ParseSandboxPolicy(p.String()); err != nil || q != p {
				t.Errorf("ParseSandboxPolicy(%q) = %v, %v", p, q, err)
			}
		}
		_, err := dynop.ParseSandboxPolicy("sometimes")
		if err == nil || !strings.Contains(err.Error(), "want prefer-native, unsigned or always") {
			t.Errorf("ParseSandboxPolicy(sometimes): %v", err)
		}
	})
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Two native builds: an unsigned one first on the path, a signed one
// second, signature policy warn. The signed one wins on rank, and the
// first is told why — not that the winner comes first.
func TestRankedDuplicateMessage(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	unsigned := filepath.Join(d1, "libdynop_imgproc.so")
	signed := filepath.Join(d2, "libdynop_imgproc.so")
	copyFile(t, cbuild.Imgproc(t), unsigned)
	copyFile(t, cbuild.Imgproc(t), signed)
	pub, key, _ := ed25519.GenerateKey(nil)
	m, err := dynop.ScanFile(context.Background(), signed, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mpath, err := discover.WriteManifest(signed, m)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := sign.HashFile(signed)
	md, _, _ := sign.HashFile(mpath)
	if err := sign.WriteSignature(sign.SignaturePath(signed), sign.Sign(key, d, md)); err != nil {
		t.Fatal(err)
	}
	h, err := dynop.Open(context.Background(), dynop.Options{
		NoRegistered: true, NoDefaultPaths: true, Paths: []string{d1, d2}, CacheDir: t.TempDir(),
		TrustedKeys: []ed25519.PublicKey{pub}, SignaturePolicy: sign.PolicyWarn, Logger: testutil.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	for _, st := range h.Plugins() {
		if st.Path == unsigned {
			if st.State != dynop.StateDuplicate || st.DuplicateOf != signed {
				t.Fatalf("the unsigned build: %v, duplicate of %q; want duplicate of %s", st.State, st.DuplicateOf, signed)
			}
			testutil.WantErr(t, st.Err, dynop.ErrDuplicate, signed+" has it and is used", "its signature verifies, and this one's does not")
			if strings.Contains(st.Err.Error(), "comes first") {
				t.Errorf("the loser is told %s comes first, but it comes second on the search path", signed)
			}
		}
	}
}
