package wasm

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
)

// toneInfo is the info of the example plugin tone, as its module returns
// it (dynop_wasm_info).
const toneInfo = `{"abi": "1.0", "capabilities": ["clock"], "info": {"id": "dynop.plugin.tone", "version": "0.1.0", "api_version": "0.1.0",
 "description": "Example Go WebAssembly plugin: tone curves.",
 "operators": [{"name": "tone.Gamma", "doc": "Applies gamma correction.",
   "inputs": [{"name": "images", "dtypes": ["uint8", "float32"], "layouts": ["HWC"], "ndim": 3}],
   "outputs": [{"name": "out", "layout": "HWC"}],
   "args": [{"name": "gamma", "type": "float", "required": true, "min": 0.01, "max": 100}],
   "devices": ["cpu"]}],
 "interfaces": [{"uid": "5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10", "name": "dynop.example.Text", "version": "1.1.0"}],
 "requirements": {}}}`

// FuzzDecodeInfo feeds what a module's dynop_wasm_info may return to the
// decoder. An error names the module and wraps one of the loader's
// sentinels; an info that decodes is valid, asks only for capabilities a
// host knows, and decodes the same again from its own JSON.
func FuzzDecodeInfo(f *testing.F) {
	f.Add([]byte(toneInfo))
	f.Add([]byte(strings.Replace(toneInfo, `"abi": "1.0"`, `"abi": "2.0"`, 1)))
	f.Add([]byte(strings.Replace(toneInfo, `"clock"`, `"network"`, 1)))
	f.Add([]byte(strings.Replace(toneInfo, `"ndim": 3`, `"ndim": 1000`, 1)))
	f.Add([]byte(strings.Replace(toneInfo, `"type": "float"`, `"type": 99`, 1)))
	f.Add([]byte(strings.Replace(toneInfo, `"devices": ["cpu"]`, `"devices": ["cuda"]`, 1)))
	f.Add([]byte(`{"abi": "1.0", "info": {"id": ""}}`))
	f.Add([]byte(`{"abi": "1", "info": null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, caps, err := decodeInfo("m.wasm", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "wasm: m.wasm: ") {
				t.Errorf("error %q does not name the module", err)
			}
			if !errors.Is(err, ErrABI) && !errors.Is(err, plugin.ErrInvalid) && !errors.Is(err, dynop.ErrUnsupported) {
				t.Errorf("error %q wraps none of ErrABI, plugin.ErrInvalid, dynop.ErrUnsupported", err)
			}
			return
		}
		if err := info.Validate(); err != nil {
			t.Errorf("a decoded info does not validate: %v", err)
		}
		if info.APIVersion.IsZero() {
			t.Error("a decoded info has no API version")
		}
		for _, c := range caps {
			if !slices.Contains(dynop.SandboxCapabilities(), c) {
				t.Errorf("capability %q is not one a host knows", c)
			}
		}
		again, err := json.Marshal(moduleInfo{ABI: "1.0", Info: mustJSON(t, info), Capabilities: caps})
		if err != nil {
			t.Fatal(err)
		}
		info2, caps2, err := decodeInfo("m.wasm", again)
		if err != nil {
			t.Fatalf("the info's own JSON does not decode: %v\n%s", err, again)
		}
		if d := info.Diff(info2); d != "" || !slices.Equal(caps, caps2) {
			t.Errorf("decoded again, it differs: %s; capabilities %q, want %q", d, caps2, caps)
		}
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%+v): %v", v, err)
	}
	return b
}
