//go:build !linux

package discover

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in a process group of its own, killed as a
// whole when the scan is cancelled or times out (a plugin may fork).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
