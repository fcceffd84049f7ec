package discover

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// seedManifest is a manifest as "dynop manifest" writes it for a native
// plugin with an operator.
const seedManifest = `{
  "schema": "dynop.manifest/v1",
  "format": "native",
  "file": "libdynop_imgproc.so",
  "size": 66192,
  "sha256": "a56cd08a0bf6dbeb4727fb5921fcd0d06b0f55e778cd46da373e4ca06b5f58af",
  "info": {
    "id": "dynop.plugin.imgproc",
    "version": "0.2.0",
    "api_version": "0.1.0",
    "interfaces": [{"uid": "6D0C9C1E-3B8B-4F4E-A7A3-0F3E54C1D2B7", "name": "dynop.Operators", "version": "1.0.0"}],
    "operators": [{"name": "imgproc.Resize", "inputs": [{"name": "images", "dtypes": ["uint8", "float32"], "layouts": ["HWC"], "ndim": 3}],
      "outputs": [{"name": "resized", "layout": "HWC"}],
      "args": [{"name": "width", "type": "int", "required": true, "min": 1, "max": 65535},
               {"name": "interp", "type": "string", "default": "linear", "allowed": ["linear"]}],
      "devices": ["cpu"]}],
    "needs": [{"plugin": "dynop.plugin.text", "interface": {"uid": "5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10", "name": "dynop.example.Text", "version": "1.1.0"}}],
    "requirements": {"os": ["linux"], "arch": ["amd64"], "cpu_features": ["sse2"], "gpu": {"vendor": "nvidia", "min_arch": "8.6.0"}}
  },
  "loader": {"capabilities": ["clock"]}
}
`

// FuzzParseManifest checks the manifest reader on any bytes: no panic; an
// error from parseManifest wraps ErrManifest and says more than that; a
// manifest that parses reads the same through ReadManifest, whose digest
// is the file's, has every required field, encodes, and reads back to
// itself; its Info's Validate does not panic (the WebAssembly
// loader decodes a module's info the same way and validates it).
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(seedManifest))
	f.Add([]byte(strings.Replace(seedManifest, "dynop.manifest/v1", "dynop.manifest/v2", 1)))
	f.Add([]byte(strings.Replace(seedManifest, `"type": "int"`, `"type": 99`, 1)))
	f.Add([]byte(strings.Replace(seedManifest, `"default": "linear"`, `"default": 7`, 1)))
	f.Add([]byte(seedManifest[:200]))
	f.Add([]byte(`{"schema":"dynop.manifest/v1","format":"wasm","size":1,"sha256":"` + strings.Repeat("0", 64) + `","info":{"id":"a.plugin.b","api_version":"0.1.0"}}`))
	f.Add([]byte(`{"schema":"dynop.manifest/v1","format":"","size":-1,"sha256":"zz","info":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	path := filepath.Join(f.TempDir(), "lib.so.dynop.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			if !errors.Is(err, ErrManifest) || strings.TrimSpace(strings.TrimPrefix(err.Error(), ErrManifest.Error()+":")) == "" {
				t.Errorf("parseManifest(%q): error %q does not wrap ErrManifest and say what is wrong", data, err)
			}
			if m != nil {
				t.Errorf("parseManifest(%q) failed but returned %+v", data, m)
			}
			return
		}
		// Through a file, for manifests only: writing one costs more than
		// parsing it, and ReadManifest adds nothing to a parse error but
		// the file's name.
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rm, digest, err := ReadManifest(path)
		if err != nil || !reflect.DeepEqual(m, rm) {
			t.Fatalf("parseManifest = %+v; ReadManifest = %+v, %v", m, rm, err)
		}
		if d, _, _ := sign.HashReader(bytes.NewReader(data)); d != digest {
			t.Errorf("ReadManifest's digest %v is not the file's %v", digest, d)
		}
		if m.Schema != ManifestSchema || m.Format == "" || m.SHA256.IsZero() || m.Info.ID == "" || m.Info.APIVersion.IsZero() {
			t.Errorf("parseManifest(%q) = %+v, which lacks a required field", data, m)
		}
		_ = m.Info.Validate() // must not panic; whether it passes is the host's to judge
		out, err := m.Encode()
		if err != nil {
			t.Fatalf("a manifest read from %q does not encode: %v", data, err)
		}
		back, err := parseManifest(out)
		if err != nil {
			t.Fatalf("the manifest %s, encoded from %q, does not parse: %v", out, data, err)
		}
		if again, _ := back.Encode(); !bytes.Equal(again, out) {
			t.Errorf("round trip of %q:\n%s\nencodes as\n%s", data, out, again)
		}
	})
}

// testManifest returns a manifest whose plugin has one operator with one
// argument, a.
func testManifest(a schema.Arg) *Manifest {
	return &Manifest{
		Schema: ManifestSchema, Format: "native", Size: 1, SHA256: sign.Digest{1},
		Info: schema.Plugin{ID: "acme.plugin.blur", APIVersion: schema.APIVersion, Version: iface.V(1, 0, 0),
			Operators: []schema.Op{{Name: "acme.Blur", Args: []schema.Arg{a}, Devices: []schema.Device{schema.CPU}}}},
	}
}

// TestManifestUnencodable checks that a manifest whose Info has no JSON
// form (an argument type a C plugin made up, a NaN bound) is an error
// naming the plugin, operator, argument and value: from Encode and
// WriteManifest, which then writes nothing, and in a scanner's answer,
// which a host reads as that error.
func TestManifestUnencodable(t *testing.T) {
	for _, c := range []struct {
		arg  schema.Arg
		want string
	}{
		{schema.Arg{Name: "radius", Type: 99}, `plugin "acme.plugin.blur": operator "acme.Blur": argument "radius": unknown type 99`},
		{schema.Arg{Name: "radius", Type: 0}, `operator "acme.Blur": argument "radius": unknown type 0`},
		{schema.Arg{Name: "sigma", Type: schema.Float, Min: schema.Bounds(math.NaN())}, `operator "acme.Blur": argument "sigma": json: unsupported value: NaN`},
		{schema.Arg{Name: "sigma", Type: schema.Float, Default: math.Inf(1)}, `operator "acme.Blur": argument "sigma": json: unsupported value: +Inf`},
	} {
		m := testManifest(c.arg)
		_, err := m.Encode()
		if err == nil || !errors.Is(err, schema.ErrPlugin) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Encode: got %v, want an error wrapping schema.ErrPlugin saying %q", err, c.want)
		}
		bin := filepath.Join(t.TempDir(), "libblur.so")
		if _, err := WriteManifest(bin, m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteManifest: got %v, want an error saying %q", err, c.want)
		}
		if _, err := os.Stat(ManifestPath(bin)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("WriteManifest of an unencodable manifest wrote a file (%v)", err)
		}
		data := answer(Format{Name: "native"}, m, nil)
		if _, err := parseManifest(data); !errors.Is(err, ErrManifest) {
			t.Errorf("parseManifest(the scanner's answer) = %v, want ErrManifest", err)
		}
		_, err = parseAnswer(Format{Name: "native"}, data, nil, "")
		if err == nil || !errors.Is(err, schema.ErrPlugin) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a scanner answering %s: host reads %v, want schema.ErrPlugin saying %q", data, err, c.want)
		}
	}
	// A manifest that encodes is what a scanner answers.
	m := testManifest(schema.Arg{Name: "radius", Type: schema.Int, Default: int64(3)})
	out, err := m.Encode()
	if err != nil || !bytes.Equal(out, answer(Format{Name: "native"}, m, nil)) {
		t.Fatalf("Encode = %q, %v; the scanner answers %q", out, err, answer(Format{Name: "native"}, m, nil))
	}
	if back, err := parseManifest(out); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("parseManifest(%s) = %+v, %v; want %+v", out, back, err, m)
	}
}
