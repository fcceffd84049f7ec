package sign

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDigest checks the digests of manifests, signature files and the
// registry cache on any text: no panic; an error gives the length found or
// the offending character; a digest that parses prints as the text in
// lower case, parses back to itself, and UnmarshalText leaves the digest
// unchanged on error.
func FuzzParseDigest(f *testing.F) {
	for _, s := range []string{
		testDigest("b").String(), strings.ToUpper(testDigest("m").String()), strings.Repeat("0", 64),
		strings.Repeat("g", 64), testDigest("b").String()[:63], testDigest("b").String() + "0", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDigest(s)
		if err != nil {
			if !strings.Contains(err.Error(), "sha256 digest") ||
				!strings.Contains(err.Error(), strconv.Itoa(len(s))+" characters") && !strings.Contains(err.Error(), "at offset") {
				t.Errorf("parseDigest(%q): error %q says neither the length nor the offending character", s, err)
			}
			if !d.IsZero() {
				t.Errorf("parseDigest(%q) failed but returned %v", s, d)
			}
			keep := testDigest("keep")
			if keep.UnmarshalText([]byte(s)) == nil || keep != testDigest("keep") {
				t.Errorf("UnmarshalText(%q) changed the digest on error", s)
			}
			return
		}
		if got := d.String(); got != strings.ToLower(s) {
			t.Errorf("parseDigest(%q).String() = %q", s, got)
		}
		text, _ := d.MarshalText()
		var back Digest
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Errorf("round trip of %q: %v, %v", s, back, err)
		}
	})
}

// FuzzParsePolicy checks ParsePolicy on any text: no panic; an error
// quotes the text and lists the policies; a policy that parses is named
// by the text (in any case), and its name parses back to it.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "off", "warn", "require", "default", "REQUIRE", "Warn", "requir", "on", "Policy(4)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		var u Policy = PolicyWarn
		uerr := u.UnmarshalText([]byte(s))
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) || !strings.Contains(err.Error(), "off, warn, require or default") {
				t.Errorf("ParsePolicy(%q): error %q does not quote the text and list the policies", s, err)
			}
			if uerr == nil || u != PolicyWarn {
				t.Errorf("UnmarshalText(%q) = %v and set %v; want an error, the policy unchanged", s, uerr, u)
			}
			return
		}
		if uerr != nil || u != p {
			t.Errorf("ParsePolicy(%q) = %v, but UnmarshalText gives %v, %v", s, p, u, uerr)
		}
		if s != "" && !strings.EqualFold(p.String(), s) {
			t.Errorf("ParsePolicy(%q) = %v", s, p)
		}
		text, err := p.MarshalText()
		if err != nil {
			t.Fatalf("%v.MarshalText: %v", p, err)
		}
		if back, err := ParsePolicy(string(text)); err != nil || back != p {
			t.Errorf("round trip of %v: ParsePolicy(%q) = %v, %v", p, text, back, err)
		}
	})
}

// FuzzParseSignature checks signature files on any bytes: no panic; an
// error wraps ErrSignature and says it is about a signature file; a
// signature that parses has a well-formed key id and a 64-byte signature,
// marshals back to a file that parses to the same signature, and does not
// verify against a trust store unless it is a real signature by a
// trusted key.
func FuzzParseSignature(f *testing.F) {
	pub, priv := testKey(1)
	s := Sign(priv, testDigest("b"), testDigest("m"))
	f.Add(s.marshal())
	f.Add(bytes.ToUpper(s.marshal()))
	f.Add([]byte(`{"schema":"dynop.signature/v1","key_id":"0123456789abcdef","binary_sha256":"","manifest_sha256":"","signature":""}`))
	f.Add([]byte(`{"schema":"dynop.signature/v2"}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"schema":7}`))
	f.Add(s.marshal()[:40])
	store := NewTrustStore(pub)
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := parseSignature(data, "")
		if err != nil {
			if !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "signature file: ") {
				t.Errorf("ParseSignature(%q): error %q does not wrap ErrSignature and name the signature file", data, err)
			}
			return
		}
		if !isKeyID(sig.KeyID) || len(sig.Sig) != ed25519.SignatureSize {
			t.Errorf("ParseSignature(%q) = key id %q, %d-byte signature", data, sig.KeyID, len(sig.Sig))
		}
		back, err := parseSignature(sig.marshal(), "")
		if err != nil || back.KeyID != sig.KeyID || back.Binary != sig.Binary || back.Manifest != sig.Manifest || !bytes.Equal(back.Sig, sig.Sig) {
			t.Errorf("round trip of %q: %+v, %v; want %+v", data, back, err, sig)
		}
		err = store.Verify(sig, sig.Binary, sig.Manifest)
		genuine := sig.KeyID == s.KeyID && ed25519.Verify(pub, message(sig.KeyID, sig.Binary, sig.Manifest), sig.Sig)
		if (err == nil) != genuine {
			t.Errorf("Verify of %+v = %v; the signature is genuine: %v", sig, err, genuine)
		}
		if err != nil && !errors.Is(err, ErrSignature) {
			t.Errorf("Verify: error %q does not wrap ErrSignature", err)
		}
	})
}

// FuzzParsePublicKey checks public key files on any bytes: no panic; an
// error wraps ErrKey; a key that parses is an ed25519 public key whose
// file, as marshalPublicKey writes it, parses back to it.
func FuzzParsePublicKey(f *testing.F) {
	pub, priv := testKey(2)
	f.Add(marshalPublicKey(pub))
	f.Add(marshalPrivateKey(priv))
	f.Add(append(marshalPublicKey(pub), marshalPublicKey(pub)...))
	f.Add([]byte("# comment\n" + string(marshalPublicKey(pub)) + "trailing text\n"))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nProc-Type: 4,ENCRYPTED\n\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"))
	f.Add([]byte("not a key"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePublicKey(data)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Errorf("ParsePublicKey(%q): error %q does not wrap ErrKey", data, err)
			}
			return
		}
		if len(k) != ed25519.PublicKeySize {
			t.Fatalf("ParsePublicKey(%q) = a %d-byte key", data, len(k))
		}
		back, err := ParsePublicKey(marshalPublicKey(k))
		if err != nil || !k.Equal(back) {
			t.Errorf("round trip of %x: %x, %v", k, back, err)
		}
		if len(KeyID(k)) != 16 || !isKeyID(KeyID(k)) {
			t.Errorf("KeyID(%x) = %q", k, KeyID(k))
		}
	})
}

// FuzzParsePrivateKey checks private key files on any bytes: no panic; an
// error wraps ErrKey; a key that parses is an ed25519 private key whose
// file parses back to it, and whose signatures its public key verifies.
func FuzzParsePrivateKey(f *testing.F) {
	pub, priv := testKey(3)
	f.Add(marshalPrivateKey(priv))
	f.Add(marshalPublicKey(pub))
	f.Add([]byte(strings.Replace(string(marshalPrivateKey(priv)), "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", 2)))
	f.Add([]byte(strings.Replace(string(marshalPrivateKey(priv)), "PRIVATE KEY", "OPENSSH PRIVATE KEY", 2)))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePrivateKey(data)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Errorf("ParsePrivateKey(%q): error %q does not wrap ErrKey", data, err)
			}
			return
		}
		if len(k) != ed25519.PrivateKeySize {
			t.Fatalf("ParsePrivateKey(%q) = a %d-byte key", data, len(k))
		}
		back, err := ParsePrivateKey(marshalPrivateKey(k))
		if err != nil || !k.Equal(back) {
			t.Errorf("round trip of a private key: %v", err)
		}
		msg := message(KeyID(k.Public().(ed25519.PublicKey)), testDigest("b"), testDigest("m"))
		if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, ed25519.Sign(k, msg)) {
			t.Errorf("the key parsed from %q signs what its public key does not verify", data)
		}
	})
}
