// Package govecmath is dynop.plugin.vecmath.go, an example Go plugin that
// provides the dynop.example.VecMath interface in pure Go and exports it to
// C: its implementation also carries a C function table (table.c) whose
// functions call back into Go, so native plugins can acquire it exactly as
// they acquire the C plugin's.
//
// Go callers get the pure Go implementation and never cross into C.
// Importing the package registers the plugin.
package govecmath

/*
#cgo CFLAGS: -I${SRCDIR}/../../../abi/include
#include "../vecmath.h"
extern const dynop_vecmath govecmath_table;
*/
import "C"

import (
	"context"
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/schema"
)

// ID is the plugin's ID: the vecmath plugin, Go backend.
const ID = "dynop.plugin.vecmath.go"

func init() { plugin.Register(goPlugin{}) }

type goPlugin struct{}

func (goPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 0, 0),
		Description: "Example Go plugin: dynop.example.VecMath in Go, exported to C.",
		Author:      "dynop",
		Interfaces:  []iface.Desc{vecmath.Interface.Desc},
	}
}

func (goPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	return vecmath.Interface.Provide(h, Math{})
}

// Math is the Go implementation of [vecmath.Math]. It is [native.Exported].
type Math struct{}

var (
	_ vecmath.Math    = Math{}
	_ native.Exported = Math{}
)

// NativeTable returns the C table whose functions call Math's methods.
func (Math) NativeTable() native.Table {
	return native.TableAt(unsafe.Pointer(&C.govecmath_table))
}

// Saxpy sets y[i] = a*x[i] + y[i].
func (Math) Saxpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, xi := range x {
		y[i] += a * xi
	}
}

// Dot returns the sum of x[i]*y[i].
func (Math) Dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s float32
	for i, xi := range x {
		s += xi * y[i]
	}
	return s
}

// Scale sets x[i] = a*x[i].
func (Math) Scale(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}

// Nop does nothing.
func (Math) Nop() {}
