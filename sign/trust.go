package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynop/dynop/internal/english"
)

// TrustStore is a set of trusted Ed25519 public keys, found by key id.
// Once built it is safe for concurrent use by methods that do not change
// it; [TrustStore.Add] must not run at the same time as any other method.
// A nil *TrustStore is an empty store.
type TrustStore struct {
	// keys maps a key id to the keys with that id: one, unless two keys
	// share the first 8 bytes of their digests.
	keys map[string][]ed25519.PublicKey
	n    int // number of keys
}

// NewTrustStore returns a store of the given keys, see [TrustStore.Add].
func NewTrustStore(keys ...ed25519.PublicKey) *TrustStore {
	t := &TrustStore{keys: make(map[string][]ed25519.PublicKey)}
	t.Add(keys...)
	return t
}

// LoadTrustStore returns a store of the keys in the "*.pub" files in dir
// (see [ReadPublicKey]). Other files and subdirectories are ignored. A
// .pub file that cannot be read or parsed is an error naming it, for a
// store that silently lost keys would refuse plugins for no reason it
// could tell. A dir that does not exist is an error wrapping
// [fs.ErrNotExist] that names it; an empty dir gives an empty store.
func LoadTrustStore(dir string) (*TrustStore, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err) // *fs.PathError names dir
	}
	t := NewTrustStore()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".pub") || e.IsDir() {
			continue
		}
		k, err := ReadPublicKey(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("trust store: %w", err)
		}
		t.Add(k)
	}
	return t, nil
}

// Add adds keys to t, which must not be nil; the zero TrustStore is an
// empty store ready to use. Adding a key that t holds already does
// nothing. Add panics if a key is not ed25519.PublicKeySize bytes long.
func (t *TrustStore) Add(keys ...ed25519.PublicKey) {
	for _, k := range keys {
		if len(k) != ed25519.PublicKeySize {
			panic(fmt.Sprintf("sign: TrustStore.Add: ed25519 public key is %d bytes, want %d", len(k), ed25519.PublicKeySize))
		}
		id := KeyID(k)
		if slices.ContainsFunc(t.keys[id], func(h ed25519.PublicKey) bool { return bytes.Equal(h, k) }) {
			continue
		}
		if t.keys == nil {
			t.keys = make(map[string][]ed25519.PublicKey)
		}
		t.keys[id] = append(t.keys[id], slices.Clone(k))
		t.n++
	}
}

// Len returns the number of keys in t.
func (t *TrustStore) Len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// Fingerprint identifies the set of keys in t: the hex SHA-256 digest of
// the raw keys, sorted and concatenated. Equal sets have equal
// fingerprints, whatever the order the keys were added in. It is "" for an
// empty or nil store. A cache of verification results can keep the
// fingerprint to notice that the trusted keys changed.
func (t *TrustStore) Fingerprint() string {
	if t.Len() == 0 {
		return ""
	}
	all := make([]string, 0, t.n)
	for _, ks := range t.keys {
		for _, k := range ks {
			all = append(all, string(k))
		}
	}
	slices.Sort(all)
	h := sha256.New()
	for _, k := range all {
		h.Write([]byte(k)) // fixed length: no separator needed
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks the signature s of a plugin whose binary and manifest have
// the given digests now. It returns nil if s is good: made by a key in t,
// over the digests given. Otherwise its error wraps [ErrSignature] and says
// why:
//
//   - s names a key not in t: the error wraps [ErrUnknownKey] and names the
//     key id;
//   - the signature does not verify with that key: the signature file was
//     altered or made with another key;
//   - the binary or the manifest changed since it was signed: the error
//     gives the start of the signed and the current digests.
//
// The signature is checked before the digests, so that a digest reported
// as signed is one the key really signed.
func (t *TrustStore) Verify(s Signature, binary, manifest Digest) error {
	if s.KeyID == "" {
		return fmt.Errorf("%w: the signature names no key", ErrSignature)
	}
	var keys []ed25519.PublicKey
	if t != nil {
		keys = t.keys[s.KeyID]
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: signed by key %s, which is not in the trust store (it has %s)", ErrUnknownKey, s.KeyID, english.Plural(t.Len(), "key"))
	}
	msg := message(s.KeyID, s.Binary, s.Manifest)
	if !slices.ContainsFunc(keys, func(k ed25519.PublicKey) bool { return ed25519.Verify(k, msg, s.Sig) }) {
		return fmt.Errorf("%w: signature by key %s does not verify", ErrSignature, s.KeyID)
	}
	if s.Binary != binary {
		return fmt.Errorf("%w: the plugin binary changed since it was signed (signed sha256 %s, now %s)", ErrSignature, s.Binary.short(), binary.short())
	}
	if s.Manifest != manifest {
		return fmt.Errorf("%w: the plugin manifest changed since it was signed (signed sha256 %s, now %s)", ErrSignature, s.Manifest.short(), manifest.short())
	}
	return nil
}
