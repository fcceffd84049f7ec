//go:build linux

package machine

import (
	"golang.org/x/sys/unix"

	"github.com/dynop/dynop/iface"
)

// osVersion returns the kernel release from uname, or zero if uname fails.
func osVersion() iface.Version {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return iface.Version{}
	}
	return parseKernelRelease(unix.ByteSliceToString(u.Release[:]))
}
