package discover

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/dynop/dynop/internal/regfile"
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

// formatError makes a [regfile.Error] for a plugin file an error
// wrapping [ErrFormat]: it is not a loadable plugin file. Other errors
// it returns as they are.
func formatError(err error) error {
	if regfile.Is(err) {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return err
}
