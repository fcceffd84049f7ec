package sign

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/internal/regfile"
)

// Errors of signature checks. Every verification failure wraps
// ErrSignature; ErrUnsigned and ErrUnknownKey wrap it too, so
// errors.Is(err, ErrSignature) holds for all of them.
var (
	// ErrSignature reports a signature that is missing, unreadable or
	// malformed, or that does not verify.
	ErrSignature = errors.New("signature check failed")
	// ErrUnsigned reports a plugin without a signature file.
	ErrUnsigned = fmt.Errorf("%w: not signed", ErrSignature)
	// ErrUnknownKey reports a signature by a key not in the trust store.
	ErrUnknownKey = fmt.Errorf("%w: key not trusted", ErrSignature)
)

// signatureSuffix is appended to a plugin's path to name its signature
// file: "libx.so" -> "libx.so.dynop.sig".
const signatureSuffix = ".dynop.sig"

// schemaV1 names the format of signature files and signed messages.
const schemaV1 = "dynop.signature/v1"

// maxSignatureFile bounds the size of a signature file that is read. A
// signature file is about 300 bytes.
const maxSignatureFile = 64 << 10

// SignaturePath returns the path of the signature file of the plugin at
// path plugin.
func SignaturePath(plugin string) string { return plugin + signatureSuffix }

// Signature is the content of a detached signature file: the digests of a
// plugin's binary and manifest, signed by one key. The signed message is
// the text
//
//	dynop.signature/v1
//	key <KeyID>
//	binary sha256 <hex digest>
//	manifest sha256 <hex digest>
//
// each line ending in a newline, and the file is indented JSON with a
// trailing newline:
//
//	{
//	  "schema": "dynop.signature/v1",
//	  "key_id": "<key id>",
//	  "binary_sha256": "<hex>",
//	  "manifest_sha256": "<hex>",
//	  "signature": "<standard base64>"
//	}
type Signature struct {
	KeyID    string // id of the signing key, see [KeyID]
	Binary   Digest // SHA-256 of the plugin binary
	Manifest Digest // SHA-256 of the plugin's manifest file
	Sig      []byte // ed25519 signature over the message below
}

// message returns the exact bytes that a signature signs (see
// [Signature]). Naming the key and the format inside the message binds
// the signature to both.
func message(keyID string, binary, manifest Digest) []byte {
	const hexLen = 2 * len(Digest{})
	b := make([]byte, 0, len(schemaV1)+len(keyID)+2*hexLen+len("\nkey \nbinary sha256 \nmanifest sha256 \n"))
	b = append(b, schemaV1+"\nkey "...)
	b = append(b, keyID...)
	b = append(b, "\nbinary sha256 "...)
	b = hex.AppendEncode(b, binary[:])
	b = append(b, "\nmanifest sha256 "...)
	b = hex.AppendEncode(b, manifest[:])
	return append(b, '\n')
}

// Sign signs the digests of a plugin's binary and manifest with key.
func Sign(key ed25519.PrivateKey, binary, manifest Digest) Signature {
	id := KeyID(key.Public().(ed25519.PublicKey))
	return Signature{
		KeyID:    id,
		Binary:   binary,
		Manifest: manifest,
		Sig:      ed25519.Sign(key, message(id, binary, manifest)),
	}
}

// signatureFile is the JSON form of a Signature. Pointers tell a missing
// field from an empty one.
type signatureFile struct {
	Schema    *string `json:"schema"`
	KeyID     *string `json:"key_id"`
	Binary    *string `json:"binary_sha256"`
	Manifest  *string `json:"manifest_sha256"`
	Signature *string `json:"signature"`
}

// marshal returns s in the form of a signature file (see [Signature]).
func (s Signature) marshal() []byte {
	str := func(v string) *string { return &v }
	f := signatureFile{
		Schema:    str(schemaV1),
		KeyID:     str(s.KeyID),
		Binary:    str(s.Binary.String()),
		Manifest:  str(s.Manifest.String()),
		Signature: str(base64.StdEncoding.EncodeToString(s.Sig)),
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		panic("sign: " + err.Error()) // cannot happen: all fields are strings
	}
	return append(b, '\n')
}

// parseSignature parses a signature file written by
// [Signature.marshal], the file named name; name is "" for data that is
// not from a file. Fields it does not know are ignored, for newer writers
// may add some. Its errors wrap [ErrSignature] and say what is wrong: the
// data is not JSON or is truncated, the schema is not one this package
// reads, a field is missing, a digest or key id is malformed, or the
// signature is not 64 bytes. Key ids and digests may be written in either
// case.
func parseSignature(data []byte, name string) (Signature, error) {
	subject := "signature file"
	if name != "" {
		subject += " " + name
	}
	fail := func(format string, args ...any) (Signature, error) {
		return Signature{}, fmt.Errorf("%w: %s: %s", ErrSignature, subject, fmt.Sprintf(format, args...))
	}

	if len(strings.TrimSpace(string(data))) == 0 {
		return fail("empty")
	}
	var f signatureFile
	if err := json.Unmarshal(data, &f); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) ||
			errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end of JSON input"):
			return fail("truncated: the JSON ends early, after %d bytes", len(data))
		case errors.As(err, &syn):
			return fail("not JSON: %v (at byte %d)", syn, syn.Offset)
		case errors.As(err, &typ) && typ.Field == "":
			return fail("not a JSON object (it is a JSON %s)", typ.Value)
		case errors.As(err, &typ):
			return fail("%s is a JSON %s, want a string", typ.Field, typ.Value)
		}
		return fail("not JSON: %v", err)
	}

	if f.Schema == nil {
		return fail("missing field schema (want %q)", schemaV1)
	}
	if *f.Schema != schemaV1 {
		return fail("unknown schema %q; this host reads only %q (was the plugin signed by a newer dynop?)", *f.Schema, schemaV1)
	}
	var missing []string
	for _, fld := range []struct {
		name string
		v    *string
	}{
		{"key_id", f.KeyID},
		{"binary_sha256", f.Binary},
		{"manifest_sha256", f.Manifest},
		{"signature", f.Signature},
	} {
		if fld.v == nil {
			missing = append(missing, fld.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return fail("missing field %s", missing[0])
	default:
		return fail("missing fields %s", strings.Join(missing, ", "))
	}

	var s Signature
	id := strings.ToLower(*f.KeyID)
	if !isKeyID(id) {
		return fail("key_id %q is not a key id, want 16 hex digits", *f.KeyID)
	}
	s.KeyID = id
	if err := s.Binary.UnmarshalText([]byte(*f.Binary)); err != nil {
		return fail("binary_sha256: %v", err)
	}
	if err := s.Manifest.UnmarshalText([]byte(*f.Manifest)); err != nil {
		return fail("manifest_sha256: %v", err)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(*f.Signature)
	if err != nil {
		return fail("signature is not standard base64: %v", err)
	}
	if len(sig) != ed25519.SignatureSize {
		return fail("signature is %d bytes, want %d (an ed25519 signature)", len(sig), ed25519.SignatureSize)
	}
	s.Sig = sig
	return s, nil
}

// ReadSignature reads the signature file at path (see [Signature]).
// Fields it does not know are ignored, for newer writers may add some;
// key ids and digests may be written in either case. It refuses a file
// over 64 KiB, far more than a signature needs. If the file does not
// exist the error wraps both [ErrUnsigned] and [fs.ErrNotExist]; every
// other error wraps [ErrSignature] and says what is wrong: the data is not
// JSON or is truncated, the schema is not one this package reads, a field
// is missing, a digest or key id is malformed, or the signature is not 64
// bytes. Errors name the file.
func ReadSignature(path string) (Signature, error) {
	f, err := regfile.Open(path) // a named pipe would block the read
	if errors.Is(err, fs.ErrNotExist) {
		return Signature{}, fmt.Errorf("%w: %w", ErrUnsigned, err) // err names the file
	}
	if regfile.Is(err) {
		return Signature{}, fmt.Errorf("%w: signature file %s: %w", ErrSignature, path, err)
	}
	if err != nil {
		return Signature{}, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSignatureFile+1))
	if err != nil {
		return Signature{}, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	if len(data) > maxSignatureFile {
		return Signature{}, fmt.Errorf("%w: signature file %s: over %d bytes, too big for a signature", ErrSignature, path, maxSignatureFile)
	}
	return parseSignature(data, path)
}

// WriteSignature writes s to the file at path with mode 0644, replacing
// any file there. It writes a temporary file in the same directory and
// renames it into place, so that readers see the old file or the new one,
// never a part.
func WriteSignature(path string, s Signature) error {
	if err := atomicfile.Write(path, s.marshal(), 0o644); err != nil {
		return fmt.Errorf("writing signature %s: %w", path, err)
	}
	return nil
}

// isKeyID reports whether id has the form of a key id: 16 lower-case hex
// digits.
func isKeyID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}
