// Package signing signs a plugin file for release as `dynop sign` does,
// for release tools written in Go. The signature covers the SHA-256 of
// the binary and of its manifest: a host with a trust store loads the
// plugin only if both are unchanged and the key is trusted.
package signing

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// Sign writes the manifest of the plugin file at path, then signs the file
// and the manifest with key; it returns the path of the signature file,
// path + ".dynop.sig". The program must import the loader of the file's
// format from an init, for the manifest is read in a child process.
func Sign(ctx context.Context, key ed25519.PrivateKey, path string) (string, error) {
	m, err := dynop.ScanFile(ctx, path, dynop.Options{}) // the plugin's info, as hosts will see it
	if err != nil {
		return "", err
	}
	mpath, err := discover.WriteManifest(path, m) // path + ".dynop.json"
	if err != nil {
		return "", err
	}
	_, manifest, err := discover.ReadManifest(mpath) // and its digest
	if err != nil {
		return "", err
	}
	binary, _, err := sign.HashFile(path)
	if err != nil {
		return "", err
	}
	if binary != m.SHA256 {
		return "", fmt.Errorf("%s changed while it was being signed", path)
	}
	sigPath := sign.SignaturePath(path)
	return sigPath, sign.WriteSignature(sigPath, sign.Sign(key, binary, manifest))
}
