package sign_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/sign"
)

// The whole life of a signature: a publisher makes a key and signs a
// plugin; a host that trusts the key verifies it, and notices when the
// plugin changes.
func Example() {
	dir, err := os.MkdirTemp("", "sign-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	plugin := filepath.Join(dir, "libhello.so")
	manifest := plugin + ".dynop.json"
	if err := os.WriteFile(plugin, []byte("\x7fELF..."), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(`{"id": "acme.plugin.hello"}`), 0o644); err != nil {
		log.Fatal(err)
	}

	// The publisher makes a key pair once. (A fixed rand makes the output
	// repeatable; use nil for crypto/rand.)
	seed := strings.NewReader("an example seed, 32 bytes long..")
	keyPath, pubPath, keyID, err := sign.GenerateKeyFiles(filepath.Join(dir, "acme"), seed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("key id:", keyID)

	// dynop sign libhello.so --key acme.key
	key, err := sign.ReadPrivateKey(keyPath)
	if err != nil {
		log.Fatal(err)
	}
	binDigest, _, err := sign.HashFile(plugin)
	if err != nil {
		log.Fatal(err)
	}
	manDigest, _, err := sign.HashFile(manifest)
	if err != nil {
		log.Fatal(err)
	}
	if err := sign.WriteSignature(sign.SignaturePath(plugin), sign.Sign(key, binDigest, manDigest)); err != nil {
		log.Fatal(err)
	}

	// A host with acme.pub in its trust store checks the plugin.
	pub, err := sign.ReadPublicKey(pubPath)
	if err != nil {
		log.Fatal(err)
	}
	trust := sign.NewTrustStore(pub)
	policy, err := sign.ParsePolicy("") // e.g. from configuration
	if err != nil {
		log.Fatal(err)
	}
	policy = policy.Resolve(trust.Len() > 0)
	fmt.Println("policy:", policy)

	check := func() error {
		s, err := sign.ReadSignature(sign.SignaturePath(plugin))
		if err != nil {
			return err
		}
		b, _, err := sign.HashFile(plugin)
		if err != nil {
			return err
		}
		m, _, err := sign.HashFile(manifest)
		if err != nil {
			return err
		}
		return trust.Verify(s, b, m)
	}
	fmt.Println("verify:", check())

	// The manifest is edited after signing.
	if err := os.WriteFile(manifest, []byte(`{"id": "evil.plugin.hello"}`), 0o644); err != nil {
		log.Fatal(err)
	}
	err = check()
	fmt.Println("signature error:", errors.Is(err, sign.ErrSignature))
	fmt.Println(err)

	// Output:
	// key id: 4a98e244cac8ef8f
	// policy: require
	// verify: <nil>
	// signature error: true
	// signature check failed: the plugin manifest changed since it was signed (signed sha256 666b9156f6928377…, now 9f4220ae606388d0…)
}
