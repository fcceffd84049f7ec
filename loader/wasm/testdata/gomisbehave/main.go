//go:build wasip1

// Command gomisbehave is a test fixture: a Go WebAssembly plugin,
// dynop.plugin.gomisbehave, whose one operator gomisbehave.Do misbehaves
// as its argument mode says, at the stage its argument stage says
// ("run" unless given: "create", "setup" or "run"):
//
//	ok        copies x to y (float32, any shape)
//	trap      panics with "boom"
//	loop      spins for ever
//	grow      allocates 1 MiB chunks and keeps them, until memory runs out
//	overflow  writes y, then 64 float32 past its end (at stage run; at
//	          the others it fails)
//	baderror  calls set_error with an offset past memory (0xFFFFFFF0, 100
//	          bytes), then fails with an error
//	fail      fails with the error "failed on purpose"
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o gomisbehave.wasm ./loader/wasm/testdata/gomisbehave
package main

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/wasm/guest"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// rawSetError is the set_error import with plain offsets, to pass a bad
// one.
//
//go:wasmimport dynop set_error
func rawSetError(msg, msgLen uint32)

func init() {
	guest.Register(guest.Plugin{
		Info: schema.Plugin{
			ID:          "dynop.plugin.gomisbehave",
			Version:     iface.V(0, 1, 0),
			APIVersion:  schema.APIVersion,
			Description: "Test fixture: a Go WebAssembly plugin that misbehaves on request.",
			Operators: []schema.Op{{
				Name:    "gomisbehave.Do",
				Doc:     "Copies x to y, or misbehaves as mode says.",
				Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
				Outputs: []schema.Output{{Name: "y"}},
				Args: []schema.Arg{
					{Name: "mode", Type: schema.String, Required: true,
						Allowed: []any{"ok", "trap", "loop", "grow", "overflow", "baderror", "fail"}},
					{Name: "stage", Type: schema.String, Default: "run",
						Allowed: []any{"create", "setup", "run"}},
				},
				Devices: []schema.Device{schema.CPU},
			}},
		},
		Operators: map[string]guest.Factory{"gomisbehave.Do": newDo},
	})
}

type do struct{ mode, stage string }

func newDo(args guest.Args) (guest.Operator, error) {
	o := &do{mode: args.String("mode"), stage: args.String("stage")}
	if o.stage == "create" {
		if err := o.misbehave(); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *do) Setup(in []guest.Tensor) ([]guest.Desc, error) {
	if o.stage == "setup" {
		if err := o.misbehave(); err != nil {
			return nil, err
		}
	}
	return []guest.Desc{{DType: tensor.Float32, Shape: in[0].Shape}}, nil
}

func (o *do) Run(out, in []guest.Tensor) error {
	if o.stage == "run" && o.mode != "overflow" {
		if err := o.misbehave(); err != nil {
			return err
		}
	}
	if err := copyTensor(out[0], in[0]); err != nil {
		return err
	}
	if o.stage == "run" && o.mode == "overflow" {
		y := out[0].Data
		if len(y) == 0 {
			return fmt.Errorf("%w: overflow needs an output with elements", guest.ErrInvalidArgument)
		}
		end := unsafe.Add(unsafe.Pointer(unsafe.SliceData(y)), len(y))
		for i, past := 0, unsafe.Slice((*float32)(end), 64); i < len(past); i++ {
			past[i] = 12345
		}
	}
	return nil
}

// Package variables, so that the compiler keeps the loops.
var (
	spins int64
	hoard [][]byte
)

// misbehave does what the mode says, other than ok and overflow.
func (o *do) misbehave() error {
	switch o.mode {
	case "trap":
		panic("boom")
	case "loop":
		for {
			spins++
			if spins == -1 {
				break
			}
		}
	case "grow":
		for {
			chunk := make([]byte, 1<<20)
			chunk[len(chunk)-1] = byte(len(hoard))
			hoard = append(hoard, chunk)
		}
	case "baderror":
		rawSetError(0xFFFFFFF0, 100)
		return errors.New("baderror: set_error was just passed a bad pointer")
	case "fail":
		return errors.New("failed on purpose")
	case "overflow":
		return fmt.Errorf("%w: overflow works in run alone", guest.ErrInvalidArgument)
	}
	return nil
}

// copyTensor copies x's elements into y, of the same shape.
func copyTensor(y, x guest.Tensor) error {
	if !x.Contiguous() || !y.Contiguous() {
		return fmt.Errorf("%w: strided tensors", guest.ErrUnsupported)
	}
	copy(y.Float32s(), x.Float32s())
	return nil
}

func main() {}
