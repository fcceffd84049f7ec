// Package nvml lists NVIDIA GPUs for package machine, through the NVIDIA
// Management Library (NVML) that comes with the NVIDIA driver.
//
// Importing the package registers a GPU probe named "nvml" with
// [machine.RegisterGPUProbe], so that [machine.Current] and
// [machine.Detect] list NVIDIA GPUs:
//
//	import _ "github.com/dynop/dynop/machine/nvml"
//
// The probe loads [DefaultLibrary] with dlopen each time it runs and
// unloads it afterwards, so programs build and start on machines without
// the driver; there the probe fails with an error wrapping [ErrNotFound],
// which becomes [machine.Machine.GPUErr]. The environment variable named by
// [LibraryEnv] replaces the library, for tests with a fake one.
//
// The package declares the few NVML types and functions it calls itself, so
// it needs no CUDA headers to build, only cgo. Without cgo, and on systems
// other than Linux, [Probe] fails with an error wrapping
// [errors.ErrUnsupported].
package nvml

import (
	"errors"
	"os"

	"github.com/dynop/dynop/machine"
)

// DefaultLibrary is the NVML library that the registered probe loads. The
// NVIDIA driver installs it on the library search path.
const DefaultLibrary = "libnvidia-ml.so.1"

// LibraryEnv names the environment variable that, when set and not empty,
// is the file name or path of the library the registered probe loads
// instead of [DefaultLibrary]. It is read each time the probe runs.
const LibraryEnv = "DYNOP_NVML_LIBRARY"

// ErrNotFound reports that the NVML library is not installed: dlopen did
// not find the file.
var ErrNotFound = errors.New("not found")

// Vendor is the [machine.GPU.Vendor] of the GPUs that NVML lists.
const Vendor = "nvidia"

func init() {
	machine.RegisterGPUProbe("nvml", func() ([]machine.GPU, error) { return Probe(library()) })
}

// library returns the library the registered probe loads.
func library() string {
	if lib := os.Getenv(LibraryEnv); lib != "" {
		return lib
	}
	return DefaultLibrary
}
