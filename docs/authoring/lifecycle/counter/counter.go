// Package counter is the Go binding of acme.example.Counter, the
// interface of the native plugin in ../lifecycle.c: Go code that imports
// it acquires the plugin's C table as a [Counter].
package counter

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../abi/include
#include "../counter.h"

static uint64_t counter_next(const acme_counter *c) { return c->next(); }
static float counter_norm2(const acme_counter *c, const float *x, size_t n) { return c->norm2(x, n); }
*/
import "C"

import (
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
)

// PluginID is the ID of the plugin that provides the interface.
const PluginID = "acme.plugin.counter"

// Counter counts calls. It is safe for concurrent use.
type Counter interface {
	Next() uint64              // 1, 2, 3, ... since the plugin started
	Norm2(x []float32) float32 // the sum of x[i]*x[i]
}

// Interface is acme.example.Counter 1.0, as counter.h defines it.
var Interface = iface.Define[Counter]("438EC2C4-66CF-445A-AE02-D40A732A05C3", "acme.example.Counter", iface.V(1, 0, 0))

func init() { native.RegisterBinding(Interface.UID, bind) }

// bind checks the table a plugin added — its UID, a compatible version,
// a size that covers acme_counter 1.0, no NULL function — and wraps it.
func bind(t native.Table) (any, error) {
	if err := t.Check(Interface.Desc, C.sizeof_acme_counter); err != nil {
		return nil, err
	}
	if err := t.CheckFunctions(Interface.Desc, "next", "norm2"); err != nil {
		return nil, err
	}
	return table{(*C.acme_counter)(t.Pointer())}, nil
}

// table calls the plugin's functions: one cgo call each. It is valid
// while the reference acquired with it is held.
type table struct{ c *C.acme_counter }

func (t table) NativeTable() native.Table { return native.TableAt(unsafe.Pointer(t.c)) }

func (t table) Next() uint64 { return uint64(C.counter_next(t.c)) }

func (t table) Norm2(x []float32) float32 {
	return float32(C.counter_norm2(t.c, (*C.float)(unsafe.SliceData(x)), C.size_t(len(x))))
}
