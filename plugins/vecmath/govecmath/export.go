package govecmath

/*
#include <stddef.h>
*/
import "C"

import "unsafe"

// The functions of the C table in table.c. C calls them with C memory, which
// they view as Go slices for the duration of the call.

func floats(p *C.float, n C.size_t) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), int(n))
}

//export govecmathSaxpy
func govecmathSaxpy(a C.float, x, y *C.float, n C.size_t) {
	Math{}.Saxpy(float32(a), floats(x, n), floats(y, n))
}

//export govecmathDot
func govecmathDot(x, y *C.float, n C.size_t) C.float {
	return C.float(Math{}.Dot(floats(x, n), floats(y, n)))
}

//export govecmathScale
func govecmathScale(a C.float, x *C.float, n C.size_t) {
	Math{}.Scale(float32(a), floats(x, n))
}

//export govecmathNop
func govecmathNop() {}
