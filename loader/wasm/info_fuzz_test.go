package wasm

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// FuzzModuleInfo reads what a module's dynop_wasm_info may hand over —
// an info and a capability list anywhere in its memory — with the
// module-specific rules on top of the shared decoder: operators on the
// cpu alone, no passes, capabilities a host knows. An error names the
// module and wraps ErrABI, schema.ErrPlugin or dynop.ErrUnsupported; an
// info it accepts validates and asks only for known capabilities.
func FuzzModuleInfo(f *testing.F) {
	im := abihost.NewImage(4)
	at, err := im.EncodeInfo(schema.Plugin{ID: "dynop.plugin.tone", Version: iface.V(0, 1, 0), APIVersion: schema.APIVersion,
		Operators: []schema.Op{{Name: "tone.Gamma", Devices: []schema.Device{schema.CPU},
			Inputs: []schema.Input{{Name: "images", DTypes: []tensor.DType{tensor.Uint8}}}, Outputs: []schema.Output{{Name: "out"}}}}}, 0)
	if err != nil {
		f.Fatal(err)
	}
	caps := im.String("clock,random")
	seed := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, at), caps)
	f.Add(append(seed, im.Place(0x1000)...))
	f.Add(append(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, at), 0), im.Place(0x1000)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 8 {
			return
		}
		info, caps, err := decodeInfo("m.wasm", abihost.Bytes{B: data[8:], Base: 0x1000, Ptr: 4},
			0x1000+uint64(binary.LittleEndian.Uint32(data)), 0x1000+uint64(binary.LittleEndian.Uint32(data[4:])))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "wasm: m.wasm: ") {
				t.Errorf("error %q does not name the module", err)
			}
			if !errors.Is(err, ErrABI) && !errors.Is(err, schema.ErrPlugin) && !errors.Is(err, dynop.ErrUnsupported) {
				t.Errorf("error %q wraps none of ErrABI, schema.ErrPlugin, dynop.ErrUnsupported", err)
			}
			return
		}
		if err := info.Validate(); err != nil {
			t.Errorf("an accepted info does not validate: %v", err)
		}
		for _, c := range caps {
			if !slices.Contains(Capabilities(), c) {
				t.Errorf("capability %q is not one a host knows", c)
			}
		}
	})
}
