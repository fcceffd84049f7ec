package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file systems of dirs with syncfs(2), one call per
// file system, and reports whether it did; on any failure the caller
// syncs file by file instead.
func syncFS(dirs map[string]bool) bool {
	done := map[uint64]bool{} // file systems, by device
	for d := range dirs {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil {
			return false
		}
		if done[st.Dev] {
			continue
		}
		f, err := os.Open(d)
		if err != nil {
			return false
		}
		err = unix.Syncfs(int(f.Fd()))
		f.Close()
		if err != nil {
			return false
		}
		done[st.Dev] = true
	}
	return true
}
