package sign

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"testing"
)

// testKey returns a fixed key pair made from seed byte b.
func testKey(b byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
	return priv.Public().(ed25519.PublicKey), priv
}

// testDigest returns a fixed digest of the text s.
func testDigest(s string) Digest {
	d, _, err := HashReader(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return d
}

// checkErr fails t unless err wraps each of targets and its message holds
// each of parts.
func checkErr(t *testing.T, err error, targets []error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one saying %q", parts)
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Errorf("error %q does not wrap %q", err, target)
		}
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

// parseDigest parses a digest written as 64 hex digits, as
// [Digest.UnmarshalText] does.
func parseDigest(s string) (Digest, error) {
	var d Digest
	err := d.UnmarshalText([]byte(s))
	return d, err
}

// keyIDs returns the ids of the keys in t, sorted.
func (t *TrustStore) keyIDs() []string {
	if t == nil || len(t.keys) == 0 {
		return nil
	}
	ids := make([]string, 0, len(t.keys))
	for id := range t.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
