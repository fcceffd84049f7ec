package discover_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// signedPlugin writes a plugin with a manifest, signed with key.
func signedPlugin(t *testing.T, dir string, key []byte) string {
	t.Helper()
	path := writePlugin(t, dir, "p.so", "id=test.plugin.signed")
	writeManifest(t, path)
	signFile(t, path, key)
	return path
}

// TestSignatures: under require each way a signature can fail makes the
// file untrusted with the reason; a good one names its signer; off checks
// nothing.
func TestSignatures(t *testing.T) {
	pub, key := newKey(t)
	otherPub, otherKey := newKey(t)
	trust := sign.NewTrustStore(pub)
	check := func(t *testing.T, path string, policy sign.Policy) *discover.File {
		t.Helper()
		opts := options(t, path)
		opts.Trust, opts.Policy = trust, policy
		res := enumerate(t, opts)
		if policy == sign.PolicyDefault && res.Policy != sign.PolicyRequire {
			t.Errorf("policy %v with a trust store, want require", res.Policy)
		}
		f := only(t, res)
		if f.Err != nil {
			t.Fatalf("broken: %v", f.Err)
		}
		return f
	}
	t.Run("good", func(t *testing.T) {
		f := check(t, signedPlugin(t, t.TempDir(), key), sign.PolicyDefault)
		if f.Untrusted != nil || f.Signer != sign.KeyID(pub) {
			t.Errorf("signer %q, untrusted %v; want %s", f.Signer, f.Untrusted, sign.KeyID(pub))
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.unsigned")
		writeManifest(t, path)
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrUnsigned, sign.SignaturePath(path))
	})
	t.Run("signed without a manifest", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), key)
		os.Remove(discover.ManifestPath(path))
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrSignature, "no manifest")
	})
	t.Run("tampered binary, manifest remade", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), key)
		writePlugin(t, filepath.Dir(path), "p.so", "id=test.plugin.signed", "version=6.6.6")
		writeManifest(t, path)
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrSignature, "binary changed since it was signed")
	})
	t.Run("tampered manifest", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), key)
		m, _, _ := discover.ReadManifest(discover.ManifestPath(path))
		m.Info.Description = "trust me"
		discover.WriteManifest(path, m)
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrSignature, "manifest changed since it was signed")
	})
	t.Run("untrusted key", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), otherKey)
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrUnknownKey, sign.KeyID(otherPub))
	})
	t.Run("truncated signature", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), key)
		data, _ := os.ReadFile(sign.SignaturePath(path))
		os.WriteFile(sign.SignaturePath(path), data[:len(data)/2], 0o644)
		wantErr(t, check(t, path, sign.PolicyRequire).Untrusted, sign.ErrSignature, "truncated")
	})
	t.Run("off", func(t *testing.T) {
		path := writePlugin(t, t.TempDir(), "p.so", "id=test.plugin.unsigned")
		if f := check(t, path, sign.PolicyOff); f.Untrusted != nil || f.Signer != "" {
			t.Errorf("policy off checked: %+v", f)
		}
	})
	t.Run("no trust store", func(t *testing.T) {
		path := signedPlugin(t, t.TempDir(), key)
		opts := options(t, path)
		opts.Policy = sign.PolicyWarn
		f := only(t, enumerate(t, opts))
		wantErr(t, f.Untrusted, sign.ErrUnknownKey, "no trust store")
	})
}

// TestSignatureVerdictCached: the verdict comes from the cache while the
// trust store is the same, and is made again when it changes.
func TestSignatureVerdictCached(t *testing.T) {
	pub, key := newKey(t)
	path := signedPlugin(t, t.TempDir(), key)
	opts := options(t, path)
	opts.Trust = sign.NewTrustStore()
	if f := only(t, enumerate(t, opts)); f.Untrusted == nil {
		t.Fatal("trusted by an empty trust store")
	}
	opts.Trust = sign.NewTrustStore(pub)
	opts.Scanner = failingScanner(t)
	f := only(t, enumerate(t, opts))
	if !f.Cached || f.Untrusted != nil || f.Signer != sign.KeyID(pub) {
		t.Errorf("after trusting the key: cached %v, untrusted %v, signer %q", f.Cached, f.Untrusted, f.Signer)
	}
	if f := only(t, enumerate(t, opts)); !f.Cached || f.Signer != sign.KeyID(pub) {
		t.Errorf("the verdict was not cached: %+v", f)
	}
}

// TestCheckLoaded: the loader's last check before it runs a file's bytes.
// Other bytes fail; under require, a signature file changed since
// enumeration fails too, so a tampered cache cannot vouch for a plugin.
func TestCheckLoaded(t *testing.T) {
	pub, key := newKey(t)
	path := signedPlugin(t, t.TempDir(), key)
	opts := options(t, path)
	opts.Trust = sign.NewTrustStore(pub)
	f := only(t, enumerate(t, opts))
	if err := f.CheckLoaded(f.SHA256); err != nil {
		t.Fatalf("the enumerated bytes: %v", err)
	}
	var other sign.Digest
	other[0] = 1
	wantErr(t, f.CheckLoaded(other), discover.ErrChanged, path, "sha256 "+f.SHA256.String()[:16])
	if err := f.CheckLoaded(other); !strings.Contains(err.Error(), sign.ErrSignature.Error()) {
		t.Errorf("under require a changed file is a signature failure: %v", err)
	}
	_, otherKey := newKey(t)
	signFile(t, path, otherKey)
	wantErr(t, f.CheckLoaded(f.SHA256), sign.ErrUnknownKey, path)
	os.Remove(sign.SignaturePath(path))
	wantErr(t, f.CheckLoaded(f.SHA256), sign.ErrUnsigned, path)

	// VerifyFile is what dynop verify runs.
	signFile(t, path, key)
	if signer, err := discover.VerifyFile(path, sign.NewTrustStore(pub)); err != nil || signer != sign.KeyID(pub) {
		t.Errorf("VerifyFile = %q, %v", signer, err)
	}
	writePlugin(t, filepath.Dir(path), "p.so", "id=test.plugin.signed", "tampered")
	_, err := discover.VerifyFile(path, sign.NewTrustStore(pub))
	wantErr(t, err, sign.ErrSignature, "does not match the binary")
}
