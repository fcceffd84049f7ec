// Package guest is the guest side of dynop's WebAssembly plugins for Go:
// a Go program that imports it and calls [Register] from an init function
// becomes a dynop plugin when built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm ./myplugin
//
// The package implements the exports of the wasm32 ABI
// (abi/include/dynop/dynop_wasm.h) with //go:wasmexport and calls the
// host through its imports (module "dynop") with //go:wasmimport. The
// host calls _initialize, which runs the program's init functions —
// main.main never runs — then reads the plugin's info, registers it and
// calls its operators.
//
// # A complete plugin
//
//	//go:build wasip1
//
//	// Command scale is a dynop plugin with one operator, acme.Scale.
//	package main
//
//	import (
//		"errors"
//
//		"github.com/dynop/dynop/iface"
//		"github.com/dynop/dynop/loader/wasm/guest"
//		"github.com/dynop/dynop/schema"
//		"github.com/dynop/dynop/tensor"
//	)
//
//	func init() {
//		guest.Register(guest.Plugin{
//			Info: schema.Plugin{
//				ID:         "acme.plugin.scale",
//				Version:    iface.V(1, 0, 0),
//				APIVersion: schema.APIVersion,
//				Operators: []schema.Op{{
//					Name:    "acme.Scale",
//					Doc:     "Multiplies float32 tensors by a factor.",
//					Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
//					Outputs: []schema.Output{{Name: "y"}},
//					Args:    []schema.Arg{{Name: "factor", Type: schema.Float, Default: 2.0}},
//					Devices: []schema.Device{schema.CPU},
//				}},
//			},
//			Operators: map[string]guest.Factory{
//				"acme.Scale": func(args guest.Args) (guest.Operator, error) {
//					return scale(args.Float("factor")), nil
//				},
//			},
//		})
//	}
//
//	type scale float32
//
//	func (s scale) Setup(in []guest.Tensor) ([]guest.Desc, error) {
//		return []guest.Desc{{DType: tensor.Float32, Shape: in[0].Shape}}, nil
//	}
//
//	func (s scale) Run(out, in []guest.Tensor) error {
//		if !in[0].Contiguous() {
//			return errors.New("acme.Scale: strided inputs are not supported")
//		}
//		y := out[0].Float32s()
//		for i, x := range in[0].Float32s() {
//			y[i] = float32(s) * x
//		}
//		return nil
//	}
//
//	func main() {}
//
// The info is a schema.Plugin and its operators are schema.Op, as in every
// Go plugin: package schema holds what a plugin declares without the host's
// runtime (the operator registry, graphs, dispatch, machine detection),
// which importing plugin or op would link into the module.
//
// # What the host passes
//
// The host checks arguments and inputs against the operator's schema
// before the plugin sees them: a factory gets every argument of the
// schema ([Args]), given or defaulted; Setup gets inputs of the count,
// dtypes, layouts and dimensions the schema allows. Setup is called once
// per sample of a batch and describes that sample's outputs; Run is
// called once per sample with outputs allocated as Setup said. Inputs are
// read-only. [Tensor.Data] aliases the host's buffers in the module's
// memory, valid only during the call.
//
// # Errors and panics
//
// An error from a [Factory], [Operator.Setup], [Operator.Run],
// [Plugin.Start] or [Plugin.Stop] fails the call: the module passes the
// error's text to the host (set_error) and returns
// DYNOP_ERROR_INVALID_ARGUMENT, or the code of an [*Error] in the error's
// chain ([ErrUnsupported] and the other sentinels are such errors, to
// wrap with %w).
//
// A panic is not recovered into an error: it crashes the module, whose
// instance the host then discards (a new one serves the next call). The
// package passes the panic's value to set_error ("guest: panic: ...")
// before the crash goes on, so that the host can say what happened; the
// Go runtime then prints the panic and its goroutines to stderr (which
// reaches the host's log only with the "stdio" capability) and aborts,
// which the host sees as a trap (wasm "unreachable"). Asking [Args] for
// an argument the schema does not have, or with the wrong type, panics
// likewise: it is a bug in the plugin.
//
// # Threads and memory
//
// A module instance runs one call at a time, and its goroutines run only
// while the host is in one of its exports. Memory the Go program
// allocates counts against the limit the host sets on the module's
// memory; running out of it crashes the module (a trap, as for a panic,
// but without set_error: the runtime cannot report it).
package guest
