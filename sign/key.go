package sign

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/dynop/dynop/internal/regfile"
)

// ErrKey reports a key file that cannot be used: it is not PEM, holds the
// wrong kind of block or key, or, for a private key, users other than its
// owner can access it.
var ErrKey = errors.New("unusable key")

// PEM block types of key files.
const (
	privatePEMType = "PRIVATE KEY" // PKCS #8
	publicPEMType  = "PUBLIC KEY"  // PKIX
)

// KeyID returns the id of a public key: the first 8 bytes of the SHA-256
// digest of the raw 32-byte key, as 16 lower-case hex digits. Signatures
// name their key by its id.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// marshalPrivateKey returns k as a PEM "PRIVATE KEY" block (PKCS #8). It
// panics if k is not ed25519.PrivateKeySize bytes long.
func marshalPrivateKey(k ed25519.PrivateKey) []byte {
	if len(k) != ed25519.PrivateKeySize {
		panic(fmt.Sprintf("sign: ed25519 private key is %d bytes, want %d", len(k), ed25519.PrivateKeySize))
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic("sign: " + err.Error()) // cannot happen for an ed25519 key
	}
	return pem.EncodeToMemory(&pem.Block{Type: privatePEMType, Bytes: der})
}

// marshalPublicKey returns k as a PEM "PUBLIC KEY" block (PKIX). It panics
// if k is not ed25519.PublicKeySize bytes long.
func marshalPublicKey(k ed25519.PublicKey) []byte {
	if len(k) != ed25519.PublicKeySize {
		panic(fmt.Sprintf("sign: ed25519 public key is %d bytes, want %d", len(k), ed25519.PublicKeySize))
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic("sign: " + err.Error()) // cannot happen for an ed25519 key
	}
	return pem.EncodeToMemory(&pem.Block{Type: publicPEMType, Bytes: der})
}

// ParsePrivateKey parses an Ed25519 private key from a PEM "PRIVATE KEY"
// block (PKCS #8), as written by [GenerateKeyFiles] or
// "openssl genpkey -algorithm ed25519". Its errors wrap [ErrKey] and say
// what is wrong.
func ParsePrivateKey(pemData []byte) (ed25519.PrivateKey, error) {
	der, err := decodePEM(pemData, privatePEMType)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: not a PKCS #8 private key: %v", ErrKey, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: not an ed25519 key (it is %T)", ErrKey, k)
	}
	return ek, nil
}

// ParsePublicKey parses an Ed25519 public key from a PEM "PUBLIC KEY" block
// (PKIX), as written by [GenerateKeyFiles] or "openssl pkey -pubout". Its
// errors wrap [ErrKey] and say what is wrong.
func ParsePublicKey(pemData []byte) (ed25519.PublicKey, error) {
	der, err := decodePEM(pemData, publicPEMType)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: not a PKIX public key: %v", ErrKey, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: not an ed25519 key (it is %T)", ErrKey, k)
	}
	return ek, nil
}

// decodePEM returns the content of the one PEM block in data, which must be
// of type want.
func decodePEM(data []byte, want string) ([]byte, error) {
	b, rest := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%w: not PEM (found no \"-----BEGIN %s-----\" line)", ErrKey, want)
	}
	if b.Type != want {
		return nil, fmt.Errorf("%w: PEM block is %s, want %s%s", ErrKey, b.Type, want, pemTypeHint(b.Type, want))
	}
	if len(b.Headers) != 0 {
		return nil, fmt.Errorf("%w: PEM block has headers (an encrypted key?); want a plain %s block", ErrKey, want)
	}
	if next, _ := pem.Decode(rest); next != nil {
		return nil, fmt.Errorf("%w: more than one PEM block (the second is %s); a key file holds one key", ErrKey, next.Type)
	}
	return b.Bytes, nil
}

// pemTypeHint explains common mix-ups of key files.
func pemTypeHint(got, want string) string {
	switch {
	case got == publicPEMType && want == privatePEMType:
		return " (this is a public key; signing needs the private key)"
	case got == privatePEMType && want == publicPEMType:
		return " (this is a private key; give the public key, which \"openssl pkey -pubout\" prints)"
	case got == "ENCRYPTED PRIVATE KEY":
		return " (encrypted keys are not supported; decrypt it with \"openssl pkey\")"
	case got == "OPENSSH PRIVATE KEY":
		return " (OpenSSH keys are not supported; make a key with \"openssl genpkey -algorithm ed25519\")"
	}
	return ""
}

// ReadPrivateKey reads an Ed25519 private key from the PEM file at path,
// see [ParsePrivateKey]. Like ssh, it refuses (with [ErrKey]) a key file
// that gives group or others any access, such as mode 0644; the error gives
// the file's mode and the chmod 600 that fixes it. The mode is not checked on Windows.
// Errors name the file.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	data, err := readKeyFile(path, func(perm fs.FileMode) error {
		if perm&0o077 != 0 && runtime.GOOS != "windows" {
			return fmt.Errorf("permissions %04o are too open; a private key must be accessible by its owner only (chmod 600 %s)", perm, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ReadPublicKey reads an Ed25519 public key from the PEM file at path, see
// [ParsePublicKey]. Errors name the file.
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := readKeyFile(path, nil)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// maxKeyFile bounds the size of a key file. An Ed25519 key in PEM is about
// 120 bytes; the slack allows for comments around it.
const maxKeyFile = 64 << 10

// readKeyFile reads the key file at path. It must be a regular file of at
// most maxKeyFile bytes whose permissions checkPerm, if not nil, accepts.
// Errors name the file.
func readKeyFile(path string, checkPerm func(fs.FileMode) error) ([]byte, error) {
	f, err := regfile.Open(path) // a named pipe would block the read
	if regfile.Is(err) {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrKey, err)
	}
	if err != nil {
		return nil, err // *fs.PathError: names the file
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if checkPerm != nil {
		if err := checkPerm(fi.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrKey, err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, err // read errors from *os.File name the file
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("%s: %w: file is over %d bytes; it is not a key file", path, ErrKey, maxKeyFile)
	}
	return data, nil
}

// GenerateKeyFiles makes a new Ed25519 key pair and writes the private key
// to prefix+".key" with mode 0600 and the public key to prefix+".pub" with
// mode 0644. It never overwrites a file: if either exists it fails, naming
// the file and wrapping [fs.ErrExist], before writing anything. It returns
// the two paths and the key's [KeyID]. A nil rand means crypto/rand.
func GenerateKeyFiles(prefix string, rand io.Reader) (keyPath, pubPath, keyID string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return "", "", "", fmt.Errorf("generating key: %w", err)
	}
	keyPath, pubPath = prefix+".key", prefix+".pub"

	// Create both files before writing either, so that an existing file
	// stops everything. O_EXCL makes the check and the creation one step.
	kf, err := createExclusive(keyPath, 0o600)
	if err != nil {
		return "", "", "", err
	}
	pf, err := createExclusive(pubPath, 0o644)
	if err != nil {
		kf.Close()
		os.Remove(keyPath) // ours: O_EXCL created it, empty
		return "", "", "", err
	}
	err = errors.Join(
		writeAndClose(kf, marshalPrivateKey(priv)),
		writeAndClose(pf, marshalPublicKey(pub)),
	)
	if err != nil {
		os.Remove(keyPath)
		os.Remove(pubPath)
		return "", "", "", err
	}
	return keyPath, pubPath, KeyID(pub), nil
}

// createExclusive creates a new file at path with mode perm, which the
// umask does not change. It fails if path exists.
func createExclusive(path string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s: %w; not overwriting it", path, fs.ErrExist)
	}
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

// writeAndClose writes data to f, flushes it to disk and closes f.
func writeAndClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
