package guest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
)

// ABI is the version of the wasm32 ABI this package implements, as the
// info JSON spells it.
const ABI = "1.0"

// infoDoc is what dynop_wasm_info returns, as JSON.
type infoDoc struct {
	ABI          string      `json:"abi"`
	Info         plugin.Info `json:"info"`
	Capabilities []string    `json:"capabilities"`
}

// infoJSON returns p's info as dynop_wasm_info returns it: with a zero
// APIVersion made plugin.APIVersion and empty operator device lists made
// "cpu", and capabilities as a list even when there are none.
func infoJSON(p *Plugin) ([]byte, error) {
	doc := infoDoc{ABI: ABI, Info: p.Info, Capabilities: p.Capabilities}
	if doc.Info.APIVersion.IsZero() {
		doc.Info.APIVersion = plugin.APIVersion
	}
	doc.Info.Operators = slices.Clone(doc.Info.Operators)
	for i := range doc.Info.Operators {
		if len(doc.Info.Operators[i].Devices) == 0 {
			doc.Info.Operators[i].Devices = cpuOnly
		}
	}
	if doc.Capabilities == nil {
		doc.Capabilities = []string{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("info as JSON: %v", err)
	}
	return b, nil
}

// check reports what keeps p from registering: an operator of the info
// without a factory or on a device other than the CPU, a factory without
// an operator, interfaces or passes.
func (p *Plugin) check() error {
	switch {
	case len(p.Info.Interfaces) > 0:
		return codedf(abi.ErrorUnsupported, "plugin %q: a WebAssembly module cannot provide interfaces; info lists %d",
			p.Info.ID, len(p.Info.Interfaces))
	case len(p.Info.Passes) > 0:
		return codedf(abi.ErrorUnsupported, "plugin %q: a WebAssembly module cannot provide graph passes; info lists %d",
			p.Info.ID, len(p.Info.Passes))
	}
	for _, s := range p.Info.Operators {
		if p.Operators[s.Name] == nil {
			return codedf(abi.ErrorInvalidArgument, "plugin %q: operator %q has no factory in Plugin.Operators", p.Info.ID, s.Name)
		}
		if len(s.Devices) > 0 && !slices.Equal(s.Devices, cpuOnly) {
			return codedf(abi.ErrorUnsupported, "plugin %q: operator %q lists devices %v; a WebAssembly module runs on %q alone",
				p.Info.ID, s.Name, s.Devices, op.CPU)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Operators)) {
		if _, ok := p.Info.Operator(name); !ok {
			return codedf(abi.ErrorInvalidArgument, "plugin %q: Plugin.Operators has a factory for %q, which the info does not declare",
				p.Info.ID, name)
		}
	}
	return nil
}
