// Package regfile opens and reads files that must be regular files —
// plugins, manifests, signatures, keys, caches — without ever blocking on
// a named pipe or a device someone put in their place.
//
// A plain os.Open of a FIFO blocks until a writer comes, and reading a
// device may never end: a plugin path, a search-path entry or a cache
// directory is outside input. Open looks at the file before opening it,
// opens it with O_NONBLOCK (which changes nothing for a regular file), and
// looks again at what it opened, in case the file was replaced in between.
package regfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Error is the error for a file that is not a regular file (links
// followed). It does not name the file: callers do.
type Error struct {
	Mode fs.FileMode // what the file is
}

func (e *Error) Error() string { return "not a regular file (" + Kind(e.Mode) + ")" }

// Kind names the kind of file that mode m is, for messages: "a named
// pipe", "a socket", "a character device"...
func Kind(m fs.FileMode) string {
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

// Open opens the file at path (links followed) for reading if it is a
// regular file; otherwise it fails with an *[Error], or the file system's
// error, without blocking.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{fi.Mode()}
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
		return nil, &Error{fi.Mode()}
	}
	return f, nil
}

// ReadFile reads the regular file at path, as os.ReadFile does, opening it
// with [Open].
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Check returns an *[Error] if the file at path exists and is not a
// regular file (links followed), and nil otherwise: what is wrong with a
// missing file its reader says.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return &Error{fi.Mode()}
}

// Is reports whether err is, or wraps, an *[Error].
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
