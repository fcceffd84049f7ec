package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteUnsynced is [Write] without the sync: path holds the old content
// or the new, never part of either, as long as the machine stays up; a
// power loss may lose the new content until [SyncAll] returns for it.
// Writers of many files write them unsynced and sync them together
// before recording that they are done, which costs one flush instead of
// one per file.
func WriteUnsynced(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

// SyncAll makes the files at paths, written with [WriteUnsynced], and
// their renames durable: on Linux with one syncfs(2) per file system
// (found through each file's directory), elsewhere with an fsync of each
// file and its directory. Errors name the file or directory.
func SyncAll(paths []string) error {
	dirs := map[string]bool{}
	for _, p := range paths {
		dirs[filepath.Dir(p)] = true
	}
	if syncFS(dirs) {
		return nil
	}
	for _, p := range paths {
		if err := syncPath(p); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := syncPath(d); err != nil {
			return err
		}
	}
	return nil
}

// syncPath fsyncs the file or directory at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
