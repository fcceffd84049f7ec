package guest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/schema"
)

// hostInfo returns p's info as the module hands it to the host: a zero
// APIVersion made schema.APIVersion and empty operator device lists made
// "cpu".
func hostInfo(p *Plugin) schema.Plugin {
	info := p.Info
	if info.APIVersion.IsZero() {
		info.APIVersion = schema.APIVersion
	}
	info.Operators = slices.Clone(info.Operators)
	for i := range info.Operators {
		if len(info.Operators[i].Devices) == 0 {
			info.Operators[i].Devices = cpuOnly
		}
	}
	return info
}

// infoImage lays out p's info as the dynop_plugin_info that
// dynop_wasm_info hands the host, and its capabilities as a
// comma-separated C string (at offset 0, NULL, if it asks for none).
func infoImage(p *Plugin) (im *abihost.Image, info, caps uint32, err error) {
	im = abihost.NewImage(4)
	if info, err = im.EncodeInfo(hostInfo(p), 0); err != nil {
		return nil, 0, 0, fmt.Errorf("info: %v", err)
	}
	if len(p.Capabilities) > 0 {
		caps = im.String(strings.Join(p.Capabilities, ","))
	}
	return im, info, caps, nil
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
				p.Info.ID, s.Name, s.Devices, schema.CPU)
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
