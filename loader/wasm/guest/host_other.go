//go:build !wasip1

package guest

import (
	"context"
	"log/slog"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
)

// Outside WebAssembly there is no host to call: Log goes to
// slog.Default(), and the host calls fail as unsupported. The package
// builds everywhere so that its decoding is tested on the build machine.
var (
	host hostAPI = noHost{}
	mem  memory  = sliceMemory(nil)
)

type noHost struct{}

func (noHost) log(level int32, msg string) {
	slog.Default().Log(context.Background(), slog.Level(level), msg)
}
func (noHost) setError(string)                    {}
func (noHost) lastError() string                  { return "not running as a WebAssembly module" }
func (noHost) registerOperator(uint32) abi.Result { return abi.ErrorUnsupported }
func (noHost) acquire(string, iface.UID, iface.Version) (uint64, abi.Result) {
	return 0, abi.ErrorUnsupported
}
func (noHost) release(uint64) abi.Result { return abi.ErrorUnsupported }
