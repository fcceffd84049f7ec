package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/dynop/dynop/sign"
)

// fileKey identifies a file on the machine.
type fileKey struct{ dev, ino uint64 }

func keyOf(fi fs.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // the field types differ by OS
}

// stamp is what the cache compares to tell whether a file changed: its
// identity, size, modification time and status-change time. A file
// rewritten in place with its old mtime restored still changes its ctime,
// and a file replaced by rename changes its inode.
type stamp struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // ns since the epoch
	CTime int64  `json:"ctime"` // ns since the epoch
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
}

func stampOf(fi fs.FileInfo) stamp {
	s := stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.CTime = ctime(st)
		s.Dev, s.Ino = uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // the field types differ by OS
	}
	return s
}

// lockFile takes an exclusive lock on the file at path, creating it, and
// returns what releases it. It is advisory and best effort: if the lock
// cannot be had, the caller goes on without it.
func lockFile(path string) (unlock func()) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// fileKind names the kind of file that mode m is, for messages: "a named
// pipe", "a socket", "a character device"...
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// notRegularError is the error for a file that is not a regular file:
// reading a named pipe or a device could block for ever or never end, so
// such a file is refused before it is read.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string { return "not a regular file (" + fileKind(e.mode) + ")" }

// openRegular opens the file at path (links followed) for reading if it is
// a regular file, and fails with a [notRegularError] (which does not name
// the file) otherwise. It never blocks on a named pipe or a device: it
// looks at the file before opening it, opens it with O_NONBLOCK, and
// looks again at what it opened, in case the file was replaced in
// between. O_NONBLOCK changes nothing for a regular file.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &notRegularError{fi.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &notRegularError{fi.Mode()}
	}
	return f, nil
}

// formatError makes a [notRegularError] for a plugin file an error
// wrapping [ErrFormat]: it is not a loadable plugin file. Other errors
// it returns as they are.
func formatError(err error) error {
	var nr *notRegularError
	if errors.As(err, &nr) {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return err
}

// checkRegular returns a [notRegularError] if the file at path exists and
// is not a regular file (links followed), and nil otherwise. It guards
// files that code outside this package opens (a manifest, a signature),
// which must not be handed a named pipe; the window between the check and
// that open remains.
func checkRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // the reader reports what is wrong
	}
	return &notRegularError{fi.Mode()}
}

// hashFile returns the SHA-256 and size of the regular file at path; see
// [openRegular].
func hashFile(path string) (sign.Digest, int64, error) {
	f, err := openRegular(path)
	if err != nil {
		return sign.Digest{}, 0, err
	}
	defer f.Close()
	return sign.HashReader(f)
}

// HashFile returns the SHA-256 and size of the plugin file at path, as
// [sign.HashFile] does, but refuses without blocking a file that is not a
// regular file (a named pipe, a device, a socket, a directory), links
// followed: then its error names the file and wraps [ErrFormat].
func HashFile(path string) (sign.Digest, int64, error) {
	d, n, err := hashFile(path)
	if err = formatError(err); errors.Is(err, ErrFormat) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return d, n, err
}
