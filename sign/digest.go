package sign

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	"github.com/dynop/dynop/internal/regfile"
)

// Digest is a SHA-256 digest. Its text form is 64 lower-case hex digits.
type Digest [sha256.Size]byte

// String returns d as lower-case hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// IsZero reports whether d is all zero bytes, as an unset Digest is.
func (d Digest) IsZero() bool { return d == Digest{} }

// short returns the start of d's hex form, enough to tell two digests apart
// in a message.
func (d Digest) short() string { return d.String()[:16] + "…" }

// MarshalText returns d as lower-case hex.
func (d Digest) MarshalText() ([]byte, error) {
	b := make([]byte, hex.EncodedLen(len(d)))
	hex.Encode(b, d[:])
	return b, nil
}

// UnmarshalText sets d from exactly 64 hex digits (either case). The error
// says what is wrong: the length found, or the first character that is not
// a hex digit and where it is. On error d is unchanged.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) != hex.EncodedLen(len(d)) {
		return fmt.Errorf("sha256 digest is %d characters, want %d hex digits", len(b), hex.EncodedLen(len(d)))
	}
	for i, c := range b {
		if !isHex(c) {
			return fmt.Errorf("sha256 digest has %q at offset %d, want only hex digits", b[i:i+1], i)
		}
	}
	var v Digest
	if _, err := hex.Decode(v[:], b); err != nil {
		return fmt.Errorf("sha256 digest: %v", err) // unreachable: checked above
	}
	*d = v
	return nil
}

// HashReader reads r to its end and returns the SHA-256 digest of what it
// read and the number of bytes read.
func HashReader(r io.Reader) (Digest, int64, error) {
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, *buf) // hide WriteTo, which brings its own buffer
	if err != nil {
		return Digest{}, n, err
	}
	var d Digest
	h.Sum(d[:0])
	return d, n, nil
}

// copyBuffers are the buffers HashReader reads through: a host hashes
// every plugin file it has not seen, thousands at a time.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// HashFile returns the SHA-256 digest and the size of the file at path.
// A file that is not a regular file (a named pipe, a device), links
// followed, is refused without blocking, with an error wrapping a
// *regfile.Error. Its errors name the file.
func HashFile(path string) (Digest, int64, error) {
	f, err := regfile.Open(path)
	if err != nil {
		if regfile.Is(err) {
			return Digest{}, 0, fmt.Errorf("%s: %w", path, err)
		}
		return Digest{}, 0, err // *fs.PathError: names the file
	}
	defer f.Close()
	d, n, err := HashReader(f)
	if err != nil {
		return Digest{}, 0, err // read errors from *os.File name the file too
	}
	return d, n, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
