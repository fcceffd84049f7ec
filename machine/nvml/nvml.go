// Package nvml lists NVIDIA GPUs for package machine, through the NVIDIA
// Management Library (NVML) that comes with the NVIDIA driver.
//
// Importing the package registers a GPU probe named "nvml" with
// [machine.RegisterGPUProbe], so that [machine.Current] and
// [machine.Detect] list NVIDIA GPUs:
//
//	import _ "github.com/dynop/dynop/machine/nvml"
//
// The GPUs it lists have the vendor "nvidia" and NVML's device indices.
//
// The probe loads libnvidia-ml.so.1, which the NVIDIA driver installs on
// the library search path, with dlopen each time it runs and unloads it
// afterwards, so programs build and start on machines without the driver;
// there the probe fails with an error that says the library is not found,
// which becomes [machine.Machine.GPUErr]. The environment variable
// DYNOP_NVML_LIBRARY, when set and not empty, names another library (a
// file name or a path) to load instead, for tests with a fake one; it is
// read each time the probe runs.
//
// The package declares the few NVML types and functions it calls itself, so
// it needs no CUDA headers to build, only cgo. Without cgo, and on systems
// other than Linux, the probe fails with an error wrapping
// [errors.ErrUnsupported].
package nvml

import (
	"errors"
	"os"

	"github.com/dynop/dynop/machine"
)

// defaultLibrary is the NVML library that the registered probe loads. The
// NVIDIA driver installs it on the library search path.
const defaultLibrary = "libnvidia-ml.so.1"

// libraryEnv names the environment variable that, when set and not empty,
// is the file name or path of the library the registered probe loads
// instead of [defaultLibrary]. It is read each time the probe runs.
const libraryEnv = "DYNOP_NVML_LIBRARY"

// errNotFound reports that the NVML library is not installed: dlopen did
// not find the file.
var errNotFound = errors.New("not found")

// vendor is the [machine.GPU.Vendor] of the GPUs that NVML lists.
const vendor = "nvidia"

func init() {
	machine.RegisterGPUProbe("nvml", func() ([]machine.GPU, error) { return probe(library()) })
}

// library returns the library the registered probe loads.
func library() string {
	if lib := os.Getenv(libraryEnv); lib != "" {
		return lib
	}
	return defaultLibrary
}
