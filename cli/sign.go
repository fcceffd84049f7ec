package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// manifestCommand writes the manifest of each plugin file, read in a
// scanner child process.
func manifestCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	if err := parse("manifest", fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: manifest takes one or more plugin files", errUsage)
	}
	var errs []error
	for _, path := range fs.Args() {
		m, err := writeManifest(ctx, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: plugin %s %s (sha256 %s)\n", escapeCell(discover.ManifestPath(path)), escapeCell(m.Info.ID), m.Info.Version, m.SHA256)
		for _, b := range m.Bundled {
			fmt.Fprintf(stdout, "  bundles %s (sha256 %s)\n", escapeCell(b.Path), b.SHA256)
		}
	}
	return errors.Join(errs...)
}

// writeManifest scans the plugin file path and writes its manifest.
func writeManifest(ctx context.Context, path string) (*discover.Manifest, error) {
	m, err := dynop.ScanFile(ctx, path, dynop.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := discover.WriteManifest(path, m); err != nil {
		return nil, err
	}
	return m, nil
}

// keygenCommand writes a new ed25519 key pair.
func keygenCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	out := fs.String("out", "dynop-signing", "write the key pair to `PREFIX`.key and PREFIX.pub")
	if err := noArgs("keygen", fs, args); err != nil {
		return err
	}
	key, pub, id, err := sign.GenerateKeyFiles(*out, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "key %s\nprivate key: %s (keep it secret)\npublic key:  %s (put it in a trust store)\n", id, key, pub)
	return nil
}

// signCommand signs plugin files with a private key. A plugin without a
// manifest gets one first; a stale manifest is an error.
func signCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	keyPath := fs.String("key", "", "the private key `FILE` (from dynop keygen)")
	files, err := parseInterleaved("sign", fs, args)
	if err != nil {
		return err
	}
	if *keyPath == "" || len(files) == 0 {
		return fmt.Errorf("%w: sign takes --key FILE and one or more plugin files", errUsage)
	}
	key, err := sign.ReadPrivateKey(*keyPath)
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range files {
		sigPath, err := signFile(ctx, path, key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: signed by key %s\n", sigPath, sign.KeyID(key.Public().(ed25519.PublicKey)))
	}
	return errors.Join(errs...)
}

// signFile signs the plugin file path and its manifest with key.
func signFile(ctx context.Context, path string, key ed25519.PrivateKey) (string, error) {
	d, size, err := sign.HashFile(path) // refuses a named pipe, which would block
	if err != nil {
		return "", err
	}
	mpath := discover.ManifestPath(path)
	m, md, err := discover.ReadManifest(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err = writeManifest(ctx, path); err == nil {
			m, md, err = discover.ReadManifest(mpath)
		}
	}
	if err != nil {
		return "", err
	}
	if m.SHA256 != d || m.Size != size {
		return "", fmt.Errorf("%s: the manifest %s is for other bytes (sha256 %s, the file has %s); write it again with dynop manifest %s", path, mpath, m.SHA256, d, path)
	}
	if err := m.CheckFiles(path); err != nil {
		return "", fmt.Errorf("%s: the manifest %s: %w", path, mpath, err)
	}
	sigPath := sign.SignaturePath(path)
	return sigPath, sign.WriteSignature(sigPath, sign.Sign(key, d, md))
}

// verifyCommand checks plugin files' signatures against a trust store.
func verifyCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	dir := fs.String("trust", os.Getenv("DYNOP_TRUST_DIR"), "the trust store: a `DIR` of public keys (*.pub); default $DYNOP_TRUST_DIR")
	var keys listFlag
	fs.Var(&keys, "key", "a trusted public key `FILE` (repeatable)")
	files, err := parseInterleaved("verify", fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%w: verify takes one or more plugin files", errUsage)
	}
	if *dir == "" && len(keys) == 0 {
		return fmt.Errorf("%w: verify needs a trust store: --trust DIR, --key FILE or $DYNOP_TRUST_DIR", errUsage)
	}
	trust := sign.NewTrustStore()
	if *dir != "" {
		if trust, err = sign.LoadTrustStore(*dir); err != nil {
			return err
		}
	}
	for _, k := range keys {
		pub, err := sign.ReadPublicKey(k)
		if err != nil {
			return err
		}
		trust.Add(pub)
	}
	var errs []error
	for _, path := range files {
		signer, err := discover.VerifyFile(path, trust)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		fmt.Fprintf(stdout, "%s: ok, signed by key %s\n", path, signer)
	}
	return errors.Join(errs...)
}
