package sign

import (
	"crypto/ed25519"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// writeFile writes data to dir/name, making dir/name's directory.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadTrustStore(t *testing.T) {
	dir := t.TempDir()
	pubA, _ := testKey(1)
	pubB, _ := testKey(2)
	pubC, privC := testKey(3)
	writeFile(t, dir, "alice.pub", marshalPublicKey(pubA))
	writeFile(t, dir, "bob.pub", marshalPublicKey(pubB))
	writeFile(t, dir, "bob-copy.pub", marshalPublicKey(pubB)) // the same key twice
	// Ignored: other names, and subdirectories even when named *.pub.
	writeFile(t, dir, "README", []byte("trusted plugin publishers\n"))
	writeFile(t, dir, "carol.pub.disabled", marshalPublicKey(pubC))
	writeFile(t, dir, "carol.key", marshalPrivateKey(privC))
	writeFile(t, dir, "old.pub/carol.pub", marshalPublicKey(pubC))
	writeFile(t, dir, "sub/carol.pub", marshalPublicKey(pubC))

	ts, err := LoadTrustStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Len() != 2 {
		t.Errorf("Len = %d, want 2", ts.Len())
	}
	want := []string{KeyID(pubA), KeyID(pubB)}
	slices.Sort(want)
	if got := ts.keyIDs(); !slices.Equal(got, want) {
		t.Errorf("KeyIDs = %q, want %q", got, want)
	}
	if got, want := ts.Fingerprint(), NewTrustStore(pubB, pubA).Fingerprint(); got != want {
		t.Errorf("Fingerprint = %s, want %s, that of the same keys given in code", got, want)
	}
}

func TestLoadTrustStoreErrors(t *testing.T) {
	pub, priv := testKey(1)

	t.Run("bad .pub", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "good.pub", marshalPublicKey(pub))
		bad := writeFile(t, dir, "bad.pub", []byte("ssh-ed25519 AAAA alice@example\n"))
		ts, err := LoadTrustStore(dir)
		checkErr(t, err, []error{ErrKey}, "trust store", bad, "not PEM")
		if ts != nil {
			t.Errorf("got a store of %d keys with the error", ts.Len())
		}
	})
	t.Run("private key as .pub", func(t *testing.T) {
		dir := t.TempDir()
		bad := writeFile(t, dir, "oops.pub", marshalPrivateKey(priv))
		_, err := LoadTrustStore(dir)
		checkErr(t, err, []error{ErrKey}, bad, "this is a private key")
	})
	t.Run("missing dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trusted")
		_, err := LoadTrustStore(dir)
		checkErr(t, err, []error{fs.ErrNotExist}, "trust store", dir)
	})
	t.Run("not a dir", func(t *testing.T) {
		path := writeFile(t, t.TempDir(), "keys", marshalPublicKey(pub))
		_, err := LoadTrustStore(path)
		checkErr(t, err, nil, "trust store", path)
	})
	t.Run("empty dir", func(t *testing.T) {
		ts, err := LoadTrustStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if ts.Len() != 0 || ts.keyIDs() != nil || ts.Fingerprint() != "" {
			t.Errorf("empty store: Len %d, KeyIDs %q, Fingerprint %q", ts.Len(), ts.keyIDs(), ts.Fingerprint())
		}
	})
}

func TestTrustStoreAdd(t *testing.T) {
	pubA, _ := testKey(1)
	pubB, _ := testKey(2)
	var ts TrustStore // the zero value is ready to use
	ts.Add(pubA)
	ts.Add(pubA, pubB, slices.Clone(pubA))
	if ts.Len() != 2 {
		t.Errorf("Len = %d after adding two keys, one three times; want 2", ts.Len())
	}

	// The store keeps its own copy of each key.
	pubC, privC := testKey(3)
	mine := slices.Clone(pubC)
	ts.Add(mine)
	mine[0] ^= 1
	if err := ts.Verify(Sign(privC, Digest{}, Digest{}), Digest{}, Digest{}); err != nil {
		t.Errorf("changing a key after Add changed the store: %v", err)
	}

	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "public key is 31 bytes, want 32") {
			t.Errorf("Add of a short key: panic = %v, want one saying the key is 31 bytes", r)
		}
	}()
	ts.Add(make(ed25519.PublicKey, 31))
}

func TestTrustStoreNil(t *testing.T) {
	var ts *TrustStore
	if ts.Len() != 0 || ts.keyIDs() != nil || ts.Fingerprint() != "" {
		t.Errorf("nil store: Len %d, KeyIDs %q, Fingerprint %q", ts.Len(), ts.keyIDs(), ts.Fingerprint())
	}
}

func TestFingerprint(t *testing.T) {
	a, _ := testKey(1)
	b, _ := testKey(2)
	c, _ := testKey(3)
	ab := NewTrustStore(a, b).Fingerprint()
	if len(ab) != 64 {
		t.Errorf("Fingerprint = %q, want 64 hex digits", ab)
	}
	if ba := NewTrustStore(b, a).Fingerprint(); ba != ab {
		t.Errorf("same keys in another order: %s != %s", ba, ab)
	}
	if aba := NewTrustStore(a, b, a).Fingerprint(); aba != ab {
		t.Errorf("same keys with a duplicate: %s != %s", aba, ab)
	}
	for name, other := range map[string]*TrustStore{
		"subset":   NewTrustStore(a),
		"superset": NewTrustStore(a, b, c),
		"other":    NewTrustStore(a, c),
	} {
		if fp := other.Fingerprint(); fp == ab {
			t.Errorf("%s of the keys has the same fingerprint", name)
		}
	}
	if fp := NewTrustStore().Fingerprint(); fp != "" {
		t.Errorf("empty store: Fingerprint = %q, want \"\"", fp)
	}
	ts := NewTrustStore(a)
	before := ts.Fingerprint()
	ts.Add(b)
	if ts.Fingerprint() == before || ts.Fingerprint() != ab {
		t.Error("Fingerprint did not follow Add")
	}
}

// TestTrustStoreConcurrentReads is for the race detector.
func TestTrustStoreConcurrentReads(t *testing.T) {
	pub, priv := testKey(1)
	other, _ := testKey(2)
	ts := NewTrustStore(pub, other)
	b, m := testDigest("b"), testDigest("m")
	s := Sign(priv, b, m)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if err := ts.Verify(s, b, m); err != nil {
					t.Error(err)
				}
				_ = ts.keyIDs()
				_ = ts.Fingerprint()
				_ = ts.Len()
			}
		})
	}
	wg.Wait()
}

func BenchmarkVerify(b *testing.B) {
	pub, priv := testKey(1)
	ts := NewTrustStore(pub)
	bin, man := testDigest("binary"), testDigest("manifest")
	s := Sign(priv, bin, man)
	b.ReportAllocs()
	for b.Loop() {
		if err := ts.Verify(s, bin, man); err != nil {
			b.Fatal(err)
		}
	}
}
