package nvml_test

import (
	"fmt"

	"github.com/dynop/dynop/machine"
	_ "github.com/dynop/dynop/machine/nvml" // registers the NVIDIA GPU probe
)

// Importing the package is all a program does to have machine.Current
// list NVIDIA GPUs. Without the NVIDIA driver there are none, and GPUErr
// says that libnvidia-ml.so.1 is not found.
func Example() {
	m := machine.Current()
	for _, g := range m.GPUs {
		fmt.Println(g)
	}
	if len(m.GPUs) == 0 {
		fmt.Println("no NVIDIA GPU:", m.GPUErr)
	}
}
