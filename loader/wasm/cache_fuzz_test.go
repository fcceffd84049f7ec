package wasm

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
)

// FuzzDecodeEntry feeds any bytes to the reader of compilation cache
// entries, which come from a directory others may write. Only an entry
// whose MAC verifies under the key is accepted, and then it is exactly
// what encodeEntry writes for its wazero file name and payload; every
// refusal says why. An entry encoded under the key decodes to what was
// encoded, and no longer does with any one byte changed.
func FuzzDecodeEntry(f *testing.F) {
	secret := bytes.Repeat([]byte{7}, keySize)
	sum := sha256.Sum256([]byte("module"))
	const tag = "wazero-v1.12.0-amd64-linux"
	wkey := strings.Repeat("ab", 32)
	good := encodeEntry(secret, sum, tag, wkey, []byte("compiled code"))
	f.Add(good, []byte("compiled code"), uint(0))
	f.Add(good[:len(good)-1], []byte{}, uint(3))
	f.Add([]byte(entryFormat+"\nmodule 00\nwazero x y\npayload 99999999999999999999\n"), []byte("x"), uint(40))
	f.Add([]byte("dynop-wasm-cache 2\n"), []byte(nil), uint(1))
	f.Add([]byte{}, []byte("\x00"), uint(0))
	f.Fuzz(func(t *testing.T, data, payload []byte, flip uint) {
		k, p, err := decodeEntry(data, secret, sum, tag)
		if err != nil {
			if err.Error() == "" {
				t.Error("a refusal says nothing")
			}
		} else if !bytes.Equal(data, encodeEntry(secret, sum, tag, k, p)) {
			t.Errorf("accepted %q, which is not the entry of its own name %q and payload %q", data, k, p)
		}
		entry := encodeEntry(secret, sum, tag, wkey, payload)
		k, p, err = decodeEntry(entry, secret, sum, tag)
		if err != nil || k != wkey || !bytes.Equal(p, payload) {
			t.Fatalf("an entry of payload %q decodes to %q, %q, %v", payload, k, p, err)
		}
		i := flip % uint(len(entry))
		entry[i] ^= 1
		if _, _, err := decodeEntry(entry, secret, sum, tag); err == nil {
			t.Errorf("an entry with byte %d changed was accepted", i)
		}
	})
}
