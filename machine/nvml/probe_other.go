//go:build !linux || !cgo

package nvml

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/dynop/dynop/machine"
)

// probe would list the NVIDIA GPUs through the NVML library, but this build
// cannot load it: it needs cgo on Linux. The error wraps
// [errors.ErrUnsupported].
func probe(library string) ([]machine.GPU, error) {
	why := "this build has no cgo"
	if runtime.GOOS != "linux" {
		why = "it needs linux, this is " + runtime.GOOS
	}
	return nil, fmt.Errorf("nvml: cannot load %s: %w (%s)", library, errors.ErrUnsupported, why)
}
