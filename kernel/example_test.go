package kernel_test

import (
	"fmt"

	"github.com/dynop/dynop/kernel"
)

// An operator resamples each sample of a batch with the filter the sample
// asks for, keeping one kernel per sample in a Manager (the kernel types
// Linear and Nearest are defined in resample_test.go).
func ExampleManager() {
	in := []float32{0, 10, 20, 30}
	filters := []string{"linear", "nearest", "linear", "nearest"}

	var m kernel.Manager
	m.Resize(len(filters))
	for i, f := range filters {
		if err := useFilter(&m, i, f); err != nil { // CreateOrGet, Clear on a type change
			fmt.Println(err)
			return
		}
		args := Args{In: in, Out: make([]float32, 3+i)}
		req, err := kernel.Setup[Resampler](&m, i, nil, args)
		if err != nil {
			fmt.Println(err)
			return
		}
		// No scratchpad given: Run reserves the Manager's own for req.Scratch.
		if err := kernel.Run[Resampler](&m, i, nil, args); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("sample %d %-7s shape %v scratch %3dB: %.4g\n",
			i, f, req.OutputShapes[0][0], req.Scratch[kernel.HostMemory], args.Out)
	}

	_, err := kernel.Get[*Linear](&m, 1)
	fmt.Println(err)
	// Output:
	// sample 0 linear  shape [3] scratch  24B: [1.667 15 28.33]
	// sample 1 nearest shape [4] scratch  16B: [0 10 20 30]
	// sample 2 linear  shape [5] scratch  40B: [0 7 15 23 30]
	// sample 3 nearest shape [6] scratch  24B: [0 10 10 20 30 30]
	// kernel: wrong kernel type: slot 1 holds *kernel_test.Nearest, want *kernel_test.Linear
}
