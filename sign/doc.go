// Package sign signs dynop plugins and checks their signatures.
//
// A dynop plugin is a shared library with a JSON sidecar manifest. A
// publisher signs it with
//
//	dynop sign PLUGIN --key K
//
// which writes a detached signature next to the plugin, at
// [SignaturePath](PLUGIN) ("libx.so" -> "libx.so.dynop.sig"). The
// signature covers the SHA-256 digests of the binary and of the manifest
// and names the signing key by its [KeyID].
//
// A host checks signatures against a [TrustStore], a set of trusted public
// keys loaded from a directory of ".pub" files with [LoadTrustStore] or
// given in code with [NewTrustStore], under a [Policy]: off, warn or
// require. [TrustStore.Verify] reports every failure as an error wrapping
// [ErrSignature]; a plugin without a signature file gives [ErrUnsigned] and
// one signed by a key the host does not trust gives [ErrUnknownKey].
//
// # Keys
//
// Keys are Ed25519. Private keys are stored as PEM "PRIVATE KEY" blocks
// (PKCS #8) and public keys as PEM "PUBLIC KEY" blocks (PKIX), the forms
// OpenSSL reads and writes, so
//
//	openssl genpkey -algorithm ed25519 -out publisher.key
//	openssl pkey -in publisher.key -pubout -out publisher.pub
//
// makes a key pair this package accepts, as does [GenerateKeyFiles].
// [ReadPrivateKey] refuses a private key file that group or others can
// access, as ssh does.
package sign
