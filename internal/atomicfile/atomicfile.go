// Package atomicfile writes files so that readers see the old content or
// the new, never part of either: through a temporary file in the same
// directory, synced, then renamed over the target.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path atomically with permissions perm. On failure
// the temporary file is removed and path is unchanged. Errors name path.
func Write(path string, data []byte, perm fs.FileMode) error { return write(path, data, perm, true) }

func write(path string, data []byte, perm fs.FileMode, sync bool) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
