//go:build !linux

package machine

import "github.com/dynop/dynop/iface"

// osVersion returns zero: this package reads the release only on Linux.
func osVersion() iface.Version { return iface.Version{} }
