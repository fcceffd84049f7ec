package sign

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestKeyID(t *testing.T) {
	pub, _ := testKey(1)
	sum := sha256.Sum256(pub)
	want := hex.EncodeToString(sum[:8])
	if got := KeyID(pub); got != want {
		t.Errorf("KeyID = %s, want %s", got, want)
	}
	if len(want) != 16 {
		t.Errorf("KeyID is %d characters, want 16", len(want))
	}
	other, _ := testKey(2)
	if KeyID(other) == want {
		t.Error("two keys have the same id")
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	pub, priv := testKey(1)

	privPEM := marshalPrivateKey(priv)
	if !bytes.HasPrefix(privPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Errorf("marshalPrivateKey does not start with a PRIVATE KEY line:\n%s", privPEM)
	}
	gotPriv, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatalf("ParsePrivateKey: %v", err)
	}
	if !gotPriv.Equal(priv) {
		t.Error("private key changed in a PEM round trip")
	}

	pubPEM := marshalPublicKey(pub)
	if !bytes.HasPrefix(pubPEM, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Errorf("marshalPublicKey does not start with a PUBLIC KEY line:\n%s", pubPEM)
	}
	gotPub, err := ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatalf("ParsePublicKey: %v", err)
	}
	if !gotPub.Equal(pub) {
		t.Error("public key changed in a PEM round trip")
	}

	// Text around the block, as some tools write, is fine.
	withText := append([]byte("publisher key\n"), pubPEM...)
	if _, err := ParsePublicKey(append(withText, "\n"...)); err != nil {
		t.Errorf("ParsePublicKey with text around the block: %v", err)
	}
}

func TestMarshalKeyPanicsOnBadLength(t *testing.T) {
	for name, f := range map[string]func(){
		"private": func() { marshalPrivateKey(make(ed25519.PrivateKey, 10)) },
		"public":  func() { marshalPublicKey(make(ed25519.PublicKey, 10)) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "is 10 bytes") {
					t.Errorf("panic = %v, want one saying the key is 10 bytes", r)
				}
			}()
			f()
		})
	}
}

// foreignKeys returns PEM keys of other algorithms.
func foreignKeys(t *testing.T) (rsaPriv, rsaPub, ecPriv, ecPub, rsaPKCS1 []byte) {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, der []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	}
	der, err := x509.MarshalPKCS8PrivateKey(rk)
	rsaPriv = enc("PRIVATE KEY", der, err)
	der, err = x509.MarshalPKIXPublicKey(&rk.PublicKey)
	rsaPub = enc("PUBLIC KEY", der, err)
	der, err = x509.MarshalPKCS8PrivateKey(ek)
	ecPriv = enc("PRIVATE KEY", der, err)
	der, err = x509.MarshalPKIXPublicKey(&ek.PublicKey)
	ecPub = enc("PUBLIC KEY", der, err)
	rsaPKCS1 = enc("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk), nil)
	return
}

func TestParseKeyErrors(t *testing.T) {
	pub, priv := testKey(1)
	pubPEM, privPEM := marshalPublicKey(pub), marshalPrivateKey(priv)
	rsaPriv, rsaPub, ecPriv, ecPub, rsaPKCS1 := foreignKeys(t)
	junkDER := func(typ string) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: []byte("not DER")})
	}
	withHeader := pem.EncodeToMemory(&pem.Block{
		Type:    "PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"},
		Bytes:   []byte("x"),
	})
	other, _ := testKey(2)
	twoPub := append(bytes.Clone(pubPEM), marshalPublicKey(other)...)

	privCases := []struct {
		name string
		in   []byte
		want []string
	}{
		{"empty", nil, []string{"not PEM", "BEGIN PRIVATE KEY"}},
		{"garbage", []byte("hello, world\n"), []string{"not PEM"}},
		{"public key", pubPEM, []string{"PEM block is PUBLIC KEY, want PRIVATE KEY", "this is a public key"}},
		{"PKCS#1 RSA", rsaPKCS1, []string{"PEM block is RSA PRIVATE KEY, want PRIVATE KEY"}},
		{"encrypted", junkDER("ENCRYPTED PRIVATE KEY"), []string{"PEM block is ENCRYPTED PRIVATE KEY", "encrypted keys are not supported"}},
		{"openssh", junkDER("OPENSSH PRIVATE KEY"), []string{"OpenSSH keys are not supported"}},
		{"headers", withHeader, []string{"PEM block has headers"}},
		{"bad DER", junkDER("PRIVATE KEY"), []string{"not a PKCS #8 private key"}},
		{"RSA", rsaPriv, []string{"not an ed25519 key (it is *rsa.PrivateKey)"}},
		{"ECDSA", ecPriv, []string{"not an ed25519 key (it is *ecdsa.PrivateKey)"}},
		{"two keys", append(bytes.Clone(privPEM), privPEM...), []string{"more than one PEM block (the second is PRIVATE KEY)"}},
	}
	for _, tc := range privCases {
		t.Run("private/"+tc.name, func(t *testing.T) {
			k, err := ParsePrivateKey(tc.in)
			checkErr(t, err, []error{ErrKey}, tc.want...)
			if k != nil {
				t.Errorf("got a key with the error")
			}
		})
	}

	pubCases := []struct {
		name string
		in   []byte
		want []string
	}{
		{"garbage", []byte("ssh-ed25519 AAAAC3Nza"), []string{"not PEM", "BEGIN PUBLIC KEY"}},
		{"private key", privPEM, []string{"PEM block is PRIVATE KEY, want PUBLIC KEY", "this is a private key"}},
		{"bad DER", junkDER("PUBLIC KEY"), []string{"not a PKIX public key"}},
		{"RSA", rsaPub, []string{"not an ed25519 key (it is *rsa.PublicKey)"}},
		{"ECDSA", ecPub, []string{"not an ed25519 key (it is *ecdsa.PublicKey)"}},
		{"two keys", twoPub, []string{"more than one PEM block"}},
	}
	for _, tc := range pubCases {
		t.Run("public/"+tc.name, func(t *testing.T) {
			k, err := ParsePublicKey(tc.in)
			checkErr(t, err, []error{ErrKey}, tc.want...)
			if k != nil {
				t.Errorf("got a key with the error")
			}
		})
	}
}

func TestReadKeys(t *testing.T) {
	dir := t.TempDir()
	pub, priv := testKey(1)
	keyPath := filepath.Join(dir, "a.key")
	pubPath := filepath.Join(dir, "a.pub")
	if err := os.WriteFile(keyPath, marshalPrivateKey(priv), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, marshalPublicKey(pub), 0o644); err != nil {
		t.Fatal(err)
	}
	gotPriv, err := ReadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !gotPriv.Equal(priv) {
		t.Error("ReadPrivateKey returned another key")
	}
	gotPub, err := ReadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if !gotPub.Equal(pub) {
		t.Error("ReadPublicKey returned another key")
	}

	// Errors name the file.
	_, err = ReadPrivateKey(pubPath + ".missing")
	checkErr(t, err, []error{fs.ErrNotExist}, pubPath+".missing")
	_, err = ReadPublicKey(pubPath + ".missing")
	checkErr(t, err, []error{fs.ErrNotExist}, pubPath+".missing")
	_, err = ReadPublicKey(keyPath)
	checkErr(t, err, []error{ErrKey}, keyPath, "want PUBLIC KEY")
	_, err = ReadPublicKey(dir)
	checkErr(t, err, []error{ErrKey}, dir, "not a regular file")

	big := filepath.Join(dir, "big.pub")
	if err := os.WriteFile(big, make([]byte, maxKeyFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadPublicKey(big)
	checkErr(t, err, []error{ErrKey}, big, "over 65536 bytes")
}

func TestReadPrivateKeyRefusesOpenPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions on Windows")
	}
	_, priv := testKey(1)
	path := filepath.Join(t.TempDir(), "open.key")
	if err := os.WriteFile(path, marshalPrivateKey(priv), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o604, 0o620} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		k, err := ReadPrivateKey(path)
		checkErr(t, err, []error{ErrKey}, path, fmt.Sprintf("permissions %04o", mode), "too open", "chmod 600 "+path)
		if k != nil {
			t.Errorf("mode %o: got a key with the error", mode)
		}
	}
	for _, mode := range []fs.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPrivateKey(path); err != nil {
			t.Errorf("mode %o: %v", mode, err)
		}
	}
}

func TestGenerateKeyFiles(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "publisher")
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	keyPath, pubPath, id, err := GenerateKeyFiles(prefix, bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	if keyPath != prefix+".key" || pubPath != prefix+".pub" {
		t.Errorf("paths = %s, %s, want %s.key, %s.pub", keyPath, pubPath, prefix, prefix)
	}
	wantPriv := ed25519.NewKeyFromSeed(seed)
	wantPub := wantPriv.Public().(ed25519.PublicKey)
	if id != KeyID(wantPub) {
		t.Errorf("key id = %s, want %s", id, KeyID(wantPub))
	}

	if runtime.GOOS != "windows" {
		for path, want := range map[string]fs.FileMode{keyPath: 0o600, pubPath: 0o644} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s has mode %04o, want %04o", path, got, want)
			}
		}
	}

	priv, err := ReadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.Equal(wantPriv) {
		t.Error("the key file does not hold the key made from rand")
	}
	pub, err := ReadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(wantPub) {
		t.Error("the .pub file does not hold the key's public key")
	}

	// A nil rand uses crypto/rand.
	_, _, id2, err := GenerateKeyFiles(filepath.Join(t.TempDir(), "random"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !isKeyID(id2) || id2 == id {
		t.Errorf("key id from crypto/rand = %q", id2)
	}
}

func TestGenerateKeyFilesNeverOverwrites(t *testing.T) {
	for _, existing := range []string{".key", ".pub"} {
		t.Run(existing, func(t *testing.T) {
			dir := t.TempDir()
			prefix := filepath.Join(dir, "publisher")
			old := []byte("precious\n")
			if err := os.WriteFile(prefix+existing, old, 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, _, err := GenerateKeyFiles(prefix, nil)
			checkErr(t, err, []error{fs.ErrExist}, prefix+existing, "already exists", "not overwriting")

			got, err := os.ReadFile(prefix + existing)
			if err != nil || !bytes.Equal(got, old) {
				t.Errorf("existing file now holds %q (%v), want it untouched", got, err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory holds %q, want only the existing file", names)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy ran out") }

func TestGenerateKeyFilesRandError(t *testing.T) {
	dir := t.TempDir()
	_, _, _, err := GenerateKeyFiles(filepath.Join(dir, "k"), failingReader{})
	checkErr(t, err, nil, "generating key", "entropy ran out")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed GenerateKeyFiles left %d files", len(entries))
	}
}

// TestOpenSSLInterop checks that OpenSSL reads our keys and signatures and
// that we read its keys.
func TestOpenSSLInterop(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(openssl, args...).CombinedOutput()
		if err != nil {
			t.Skipf("openssl %s: %v\n%s (an OpenSSL without ed25519?)", strings.Join(args, " "), err, out)
		}
		return out
	}
	dir := t.TempDir()

	// A key made by OpenSSL.
	keyPath := filepath.Join(dir, "ossl.key")
	pubPath := filepath.Join(dir, "ossl.pub")
	run("genpkey", "-algorithm", "ed25519", "-out", keyPath)
	run("pkey", "-in", keyPath, "-pubout", "-out", pubPath)
	if err := os.Chmod(keyPath, 0o600); err != nil {
		t.Fatal(err)
	}
	priv, err := ReadPrivateKey(keyPath)
	if err != nil {
		t.Fatalf("reading an OpenSSL private key: %v", err)
	}
	pub, err := ReadPublicKey(pubPath)
	if err != nil {
		t.Fatalf("reading an OpenSSL public key: %v", err)
	}
	if !pub.Equal(priv.Public()) {
		t.Fatal("OpenSSL's public key does not match its private key")
	}

	// Our signature, checked by OpenSSL with our public key file.
	_, ourKey, _, err := GenerateKeyFiles(filepath.Join(dir, "ours"), nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ReadPrivateKey(filepath.Join(dir, "ours.key"))
	if err != nil {
		t.Fatal(err)
	}
	s := Sign(k, testDigest("binary"), testDigest("manifest"))
	msgPath := filepath.Join(dir, "msg")
	sigPath := filepath.Join(dir, "sig")
	if err := os.WriteFile(msgPath, message(s.KeyID, s.Binary, s.Manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigPath, s.Sig, 0o644); err != nil {
		t.Fatal(err)
	}
	out := run("pkeyutl", "-verify", "-pubin", "-inkey", ourKey, "-rawin", "-in", msgPath, "-sigfile", sigPath)
	if !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Errorf("openssl does not verify our signature: %s", out)
	}
}
