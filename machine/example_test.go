package machine_test

import (
	"fmt"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/machine"
)

// A host asks Current what this computer offers; the example describes a
// machine by hand so that its output is the same everywhere.
func Example() {
	m := &machine.Machine{
		OS:          "linux",
		Arch:        "amd64",
		OSVersion:   iface.V(6, 1, 0),
		CPUFeatures: []string{"avx", "avx2", "fma", "sse2", "sse42"},
		GPUs: []machine.GPU{{
			Index:  0,
			Vendor: "nvidia",
			Name:   "NVIDIA H100 80GB HBM3",
			Arch:   iface.V(9, 0, 0),
			Driver: iface.V(550, 54, 15),
		}},
	}
	fmt.Println(m)

	driver, err := machine.ParseDriverVersion("535.104")
	fmt.Println(driver, err)
	_, err = machine.ParseDriverVersion("535.x")
	fmt.Println(err)
	// Output:
	// linux/amd64 kernel 6.1.0, CPU avx avx2 fma sse2 sse42, GPU 0 "NVIDIA H100 80GB HBM3" (nvidia, arch 9.0, driver 550.54.15)
	// 535.104.0 <nil>
	// syntax error: driver version "535.x": part "x" is not a decimal number below 2^32
}

// Without a GPU probe, or on a machine without GPUs, GPUs is empty and
// GPUErr says why; that is not an error for the caller.
func ExampleCurrent() {
	m := machine.Current()
	if len(m.GPUs) == 0 {
		fmt.Println("no GPU:", m.GPUErr)
	}
	// Output:
	// no GPU: no GPU probe (import github.com/dynop/dynop/machine/nvml)
}
