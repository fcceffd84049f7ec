// Package stats declares the dynop.example.Stats interface — mean,
// variance and norm of a float32 slice — and binds native implementations
// of it to Go. The C++ plugin dynop.plugin.stats (cpp/stats.cpp, built into
// libdynop_stats.so by make) provides it, computing with the
// dynop.example.VecMath interface of another plugin.
package stats

/*
#cgo CFLAGS: -I${SRCDIR}/../../abi/include
#include "stats.h"

static float st_mean(const dynop_stats *t, const float *x, size_t n) { return t->mean(x, n); }
static float st_variance(const dynop_stats *t, const float *x, size_t n) { return t->variance(x, n); }
static float st_norm(const dynop_stats *t, const float *x, size_t n) { return t->norm(x, n); }
*/
import "C"

import (
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
)

// PluginID is the ID of the C++ plugin that provides the interface.
const PluginID = "dynop.plugin.stats"

// Stats computes summary statistics. Each returns 0 for an empty slice.
type Stats interface {
	// Mean returns the arithmetic mean of x.
	Mean(x []float32) float32
	// Variance returns the population variance of x.
	Variance(x []float32) float32
	// Norm returns the Euclidean norm of x.
	Norm(x []float32) float32
}

// Interface is the dynop.example.Stats interface, version 1.0.
var Interface = iface.Define[Stats]("2C7E94B0-5D13-4A86-B74F-0E619A3DC528", "dynop.example.Stats", iface.V(1, 0, 0))

func init() { native.RegisterBinding(Interface.UID, Bind) }

// Bind returns the Stats that calls the functions of table t, after
// checking its type, version, size and that no function is NULL.
func Bind(t native.Table) (any, error) {
	if err := t.Check(Interface.Desc, C.sizeof_dynop_stats); err != nil {
		return nil, err
	}
	if err := t.CheckFunctions(Interface.Desc, "mean", "variance", "norm"); err != nil {
		return nil, err
	}
	return table{(*C.dynop_stats)(t.Pointer())}, nil
}

type table struct{ t *C.dynop_stats }

var _ native.Exported = table{}

func (s table) NativeTable() native.Table { return native.TableAt(unsafe.Pointer(s.t)) }

func (s table) Mean(x []float32) float32 {
	return float32(C.st_mean(s.t, cFloats(x), C.size_t(len(x))))
}

func (s table) Variance(x []float32) float32 {
	return float32(C.st_variance(s.t, cFloats(x), C.size_t(len(x))))
}

func (s table) Norm(x []float32) float32 {
	return float32(C.st_norm(s.t, cFloats(x), C.size_t(len(x))))
}

func cFloats(x []float32) *C.float { return (*C.float)(unsafe.SliceData(x)) }
