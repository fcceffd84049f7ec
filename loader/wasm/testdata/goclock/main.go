//go:build wasip1

// Command goclock is a test fixture: a Go WebAssembly plugin,
// dynop.plugin.goclock, that asks for the capability "clock". Its one
// operator goclock.Now ignores its input x (float32, any shape) and
// outputs t, of shape [1]: float32(time.Now().Unix() % 100000), the real
// time only where the host grants the clock.
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goclock.wasm ./loader/wasm/testdata/goclock
package main

import (
	"time"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/wasm/guest"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func init() {
	guest.Register(guest.Plugin{
		Info: schema.Plugin{
			ID:          "dynop.plugin.goclock",
			Version:     iface.V(0, 1, 0),
			APIVersion:  schema.APIVersion,
			Description: "Test fixture: a Go WebAssembly plugin that reads the clock.",
			Operators: []schema.Op{{
				Name:    "goclock.Now",
				Doc:     "Outputs the Unix time in seconds, modulo 100000.",
				Inputs:  []schema.Input{{Name: "x", Doc: "Ignored.", DTypes: []tensor.DType{tensor.Float32}}},
				Outputs: []schema.Output{{Name: "t"}},
				Devices: []schema.Device{schema.CPU},
			}},
		},
		Capabilities: []string{"clock"},
		Operators: map[string]guest.Factory{
			"goclock.Now": func(guest.Args) (guest.Operator, error) { return now{}, nil },
		},
	})
}

type now struct{}

func (now) Setup([]guest.Tensor) ([]guest.Desc, error) {
	return []guest.Desc{{DType: tensor.Float32, Shape: []int64{1}}}, nil
}

func (now) Run(out, _ []guest.Tensor) error {
	out[0].Float32s()[0] = float32(time.Now().Unix() % 100000)
	return nil
}

func main() {}
