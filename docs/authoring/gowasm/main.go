//go:build wasip1

// Command gowasm is a Go plugin built as a WebAssembly module, which dynop
// runs in its sandbox: acme.plugin.clock, whose operator clock.Stamp
// outputs the wall-clock time. A module gets no clock unless it asks for
// one and the host grants it: this one asks for "clock". Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o clock.wasm ./docs/authoring/gowasm
package main

import (
	"encoding/binary"
	"log/slog"
	"time"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/wasm/guest"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// The host calls _initialize, which runs init; main never runs.
func init() {
	guest.Register(guest.Plugin{
		Info: schema.Plugin{
			ID:          "acme.plugin.clock",
			Version:     iface.V(1, 0, 0),
			Description: "Stamps samples with the time: the sandbox example of docs/authoring.md.",
			Operators: []schema.Op{{
				Name:    "clock.Stamp",
				Doc:     "Outputs the Unix time in milliseconds, one int64 per sample; ignores its input.",
				Inputs:  []schema.Input{{Name: "x"}},
				Outputs: []schema.Output{{Name: "ms"}},
			}},
		},
		// Without "clock" the module would see a fixed time; a host that
		// does not grant it lists the plugin as unsupported.
		Capabilities: []string{"clock"},
		Operators:    map[string]guest.Factory{"clock.Stamp": newStamp},
		Start:        func() error { guest.Log(slog.LevelInfo, "clock: started"); return nil },
	})
}

// stamp is one operator instance; a module instance runs one call at a time.
type stamp struct{}

func newStamp(guest.Args) (guest.Operator, error) { return stamp{}, nil }

func (stamp) Setup([]guest.Tensor) ([]guest.Desc, error) {
	return []guest.Desc{{DType: tensor.Int64, Shape: []int64{1}}}, nil
}

// Run writes into the output the host allocated as Setup said; Data
// aliases the host's buffer in the module's memory, valid during the call.
func (stamp) Run(out, _ []guest.Tensor) error {
	binary.LittleEndian.PutUint64(out[0].Data, uint64(time.Now().UnixMilli()))
	return nil
}

func main() {}
