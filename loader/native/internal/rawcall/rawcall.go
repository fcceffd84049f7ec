// Package rawcall makes raw cgo calls, the floor that benchmarks of calls
// through native plugins are measured against. Nop is compiled from the
// same source as the nop of the example plugin dynop.plugin.vecmath.
package rawcall

/*
static void nop(void) {}
*/
import "C"

// Nop calls an empty C function directly through cgo.
func Nop() { C.nop() }
