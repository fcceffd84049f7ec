// Package vecmath declares the dynop.example.VecMath interface — saxpy,
// dot and scale on float32 slices — and binds native implementations of
// it to Go.
//
// The interface is a C struct of function pointers, defined in vecmath.h.
// Two example plugins provide it: dynop.plugin.vecmath, in C (c/vecmath.c,
// built into libdynop_vecmath.so by make), and dynop.plugin.vecmath.go, in
// Go and exported to C (package govecmath). Go code acquires either as a
// [Math]:
//
//	m, ref, err := dynop.Acquire(ctx, host, vecmath.PluginID, vecmath.Interface)
//
// A call on a native implementation is one cgo call to a C trampoline that
// calls through the table: no reflection, no allocation.
package vecmath

/*
#cgo CFLAGS: -I${SRCDIR}/../../abi/include
#include "vecmath.h"

static void vm_saxpy(const dynop_vecmath *t, float a, const float *x, float *y, size_t n) { t->saxpy(a, x, y, n); }
static float vm_dot(const dynop_vecmath *t, const float *x, const float *y, size_t n) { return t->dot(x, y, n); }
static void vm_scale(const dynop_vecmath *t, float a, float *x, size_t n) { t->scale(a, x, n); }
static void vm_nop(const dynop_vecmath *t) { t->nop(); }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
)

// PluginID is the ID of the C plugin that provides the interface.
const PluginID = "dynop.plugin.vecmath"

// Math is vector math on float32 slices. Implementations are safe for
// concurrent use.
type Math interface {
	// Saxpy sets y[i] = a*x[i] + y[i]. It panics if len(x) != len(y).
	Saxpy(a float32, x, y []float32)
	// Dot returns the sum of x[i]*y[i]. It panics if len(x) != len(y).
	Dot(x, y []float32) float32
	// Scale sets x[i] = a*x[i].
	Scale(a float32, x []float32)
	// Nop does nothing; it measures the cost of a call.
	Nop()
}

// Interface is the dynop.example.VecMath interface, version 1.0.
var Interface = iface.Define[Math]("9A3C5E71-0B2D-4F68-8A1E-3C5D7F90A2B4", "dynop.example.VecMath", iface.V(1, 0, 0))

func init() { native.RegisterBinding(Interface.UID, Bind) }

// Bind returns the Math that calls the functions of table t, after
// checking its type, version, size and that no function is NULL. The
// native loader calls it for every plugin that adds the interface.
func Bind(t native.Table) (any, error) {
	if err := t.Check(Interface.Desc, C.sizeof_dynop_vecmath); err != nil {
		return nil, err
	}
	if err := t.CheckFunctions(Interface.Desc, "saxpy", "dot", "scale", "nop"); err != nil {
		return nil, err
	}
	return table{(*C.dynop_vecmath)(t.Pointer())}, nil
}

// table is a native implementation of Math.
type table struct{ t *C.dynop_vecmath }

var _ native.Exported = table{}

func (v table) NativeTable() native.Table { return native.TableAt(unsafe.Pointer(v.t)) }

func (v table) Saxpy(a float32, x, y []float32) {
	checkLen("Saxpy", x, y)
	C.vm_saxpy(v.t, C.float(a), cFloats(x), cFloats(y), C.size_t(len(x)))
}

func (v table) Dot(x, y []float32) float32 {
	checkLen("Dot", x, y)
	return float32(C.vm_dot(v.t, cFloats(x), cFloats(y), C.size_t(len(x))))
}

func (v table) Scale(a float32, x []float32) {
	C.vm_scale(v.t, C.float(a), cFloats(x), C.size_t(len(x)))
}

func (v table) Nop() { C.vm_nop(v.t) }

// cFloats passes a Go slice's array to C for the duration of one call,
// which cgo's pointer rules allow: float32s hold no Go pointers.
func cFloats(x []float32) *C.float { return (*C.float)(unsafe.SliceData(x)) }

// checkLen panics unless x and y have the same length.
func checkLen(op string, x, y []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("vecmath: %s: len(x) = %d, len(y) = %d", op, len(x), len(y)))
	}
}
