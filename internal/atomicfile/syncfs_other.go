//go:build !linux

package atomicfile

// syncFS reports false: without syncfs(2), files are synced one by one.
func syncFS(map[string]bool) bool { return false }
