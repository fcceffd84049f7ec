package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
)

const (
	textUID    = "5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10" // dynop.example.Text, plugins/text
	greeterUID = "C6A1D7F2-41B3-4E0A-A5C8-7D2E9F1B3C64" // dynop.example.Greeter, plugins/greeter
)

// TestListInterfaces: list --interfaces tables every interface the
// plugins provide or need, with its versions, providers and consumers;
// --json gives dynop.interfaces/v1.
func TestListInterfaces(t *testing.T) {
	code, out, errOut := runCLI(t, "list", "--interfaces")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^INTERFACE +UID +VERSIONS +PROVIDERS +CONSUMERS$`,
		`(?m)^dynop\.example\.Text +` + textUID + ` +1\.1\.0 +dynop\.plugin\.text +dynop\.plugin\.greeter \(1\.1\.0 or newer\)$`,
		`(?m)^dynop\.example\.Greeter +` + greeterUID + ` +1\.0\.0 +dynop\.plugin\.greeter +-$`,
		`(?m)^dynop\.Operators +\S+ +1\.0\.0 +\S*dynop\.plugin\.image`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list --interfaces does not match %s:\n%s", want, out)
		}
	}

	code, out, errOut = runCLI(t, "list", "--interfaces", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got struct {
		Schema     string
		Interfaces []struct {
			UID, Name string
			Versions  []string
			Providers []struct{ Plugin, Version, State string }
			Consumers []struct {
				Plugin     string
				MinVersion string `json:"min_version"`
				From       string
				State      string
				Met        bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Schema != "dynop.interfaces/v1" {
		t.Errorf("schema %q", got.Schema)
	}
	found := false
	for _, e := range got.Interfaces {
		if e.Name != "dynop.example.Text" {
			continue
		}
		found = true
		if e.UID != textUID || len(e.Versions) != 1 || e.Versions[0] != "1.1.0" ||
			len(e.Providers) != 1 || e.Providers[0].Plugin != "dynop.plugin.text" || e.Providers[0].Version != "1.1.0" || e.Providers[0].State != "available" ||
			len(e.Consumers) != 1 || e.Consumers[0].Plugin != "dynop.plugin.greeter" || e.Consumers[0].MinVersion != "1.1.0" ||
			e.Consumers[0].From != "dynop.plugin.text" || e.Consumers[0].State != "available" || !e.Consumers[0].Met {
			t.Errorf("dynop.example.Text: %+v", e)
		}
	}
	if !found {
		t.Errorf("no dynop.example.Text in\n%s", out)
	}

	code, _, errOut = runCLI(t, "list", "--ops", "--interfaces")
	if code != 2 || !strings.Contains(errOut, "list: --ops and --interfaces: give one") {
		t.Errorf("list --ops --interfaces: exit %d, %s", code, errOut)
	}
	// The flag does not outlive its command.
	if code, out, _ = runCLI(t, "list"); code != 0 || !strings.HasPrefix(out, "PLUGIN") {
		t.Errorf("list after list --interfaces: exit %d\n%s", code, out)
	}
}

// TestInspectInterface: inspect takes an interface's name or UID (any
// case, braces or not) and shows who provides and who needs it.
func TestInspectInterface(t *testing.T) {
	for _, target := range []string{"dynop.example.Text", textUID, strings.ToLower(textUID), "{" + textUID + "}"} {
		code, out, errOut := runCLI(t, "inspect", target)
		if code != 0 {
			t.Errorf("inspect %s: exit %d: %s", target, code, errOut)
			continue
		}
		for _, want := range []string{
			"interface  dynop.example.Text\n",
			"uid        " + textUID + "\n",
			"provider   dynop.plugin.text provides 1.1.0, available\n",
			"consumer   dynop.plugin.greeter needs 1.1.0 or newer from dynop.plugin.text, available\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("inspect %s lacks %q:\n%s", target, want, out)
			}
		}
	}
	code, out, errOut := runCLI(t, "inspect", "--json", "dynop.example.Greeter")
	if code != 0 {
		t.Fatalf("inspect --json: exit %d: %s", code, errOut)
	}
	var got struct {
		Schema    string
		Interface struct {
			UID, Name string
			Providers []struct{ Plugin string }
			Consumers []struct{ Plugin string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Schema != "dynop.interface/v1" || got.Interface.UID != greeterUID || got.Interface.Name != "dynop.example.Greeter" ||
		len(got.Interface.Providers) != 1 || got.Interface.Providers[0].Plugin != "dynop.plugin.greeter" ||
		got.Interface.Consumers == nil || len(got.Interface.Consumers) != 0 || !strings.Contains(out, `"consumers": []`) {
		t.Errorf("inspect --json dynop.example.Greeter: %+v\n%s", got, out)
	}
}

// TestInspectNotFound: a target that is nothing inspect knows is one
// error, prefixed once, that says what was tried and suggests the
// nearest name of any kind.
func TestInspectNotFound(t *testing.T) {
	for _, c := range []struct{ target, hint string }{
		{"nothing.at.all", ""},
		{"5E0C3A71-2B64-4F0D-9A17-6C830E42D519", ""}, // a UID no plugin declares
		{"dynop.example.Tex", ` (did you mean the interface "dynop.example.Text"?)`},
		{"dynop.plugin.imag", ` (did you mean the plugin "dynop.plugin.image"?)`},
		{"image.Resiz", ` (did you mean the operator "image.Resize"?)`},
	} {
		code, out, errOut := runCLI(t, "inspect", c.target)
		want := `dynop: inspect "` + c.target + `": not found: tried a plugin file (no such file), a plugin ID, an operator name, and an interface name or UID` +
			c.hint + "; dynop list, dynop list --ops and dynop list --interfaces show what there is\n"
		if code != 1 || out != "" || errOut != want {
			t.Errorf("inspect %s: exit %d, stdout %q, stderr\n%q\nwant exit 1 and\n%q", c.target, code, out, errOut, want)
		}
		if n := strings.Count(errOut, "dynop:"); n != 1 {
			t.Errorf("inspect %s: %d times \"dynop:\" in %q", c.target, n, errOut)
		}
	}
}

// TestInterfacesOf: interfaces gather their providers and consumers from
// the plugins' info whatever their states; a need is met only by a
// usable provider of a compatible version; an interface only needed is
// listed, named as its consumer names it.
func TestInterfacesOf(t *testing.T) {
	shape := iface.Desc{UID: iface.MustParseUID("11111111-2222-4333-8444-555555555555"), Name: "acme.Shape", Version: iface.V(1, 3, 0)}
	ghost := iface.Desc{UID: iface.MustParseUID("AAAAAAAA-2222-4333-8444-555555555555"), Name: "acme.Ghost", Version: iface.V(2, 0, 0)}
	need := func(from string, d iface.Desc, v iface.Version) schema.Need {
		d.Version = v
		return schema.Need{Plugin: from, Interface: d}
	}
	plugins := []dynop.PluginStatus{
		{Info: schema.Plugin{ID: "acme.plugin.a", Interfaces: []iface.Desc{shape}}, State: dynop.StateAvailable},
		{Info: schema.Plugin{ID: "acme.plugin.b", Interfaces: []iface.Desc{{UID: shape.UID, Name: shape.Name, Version: iface.V(1, 1, 0)}}}, State: dynop.StateBroken, Path: "/p/libb.so"},
		{Info: schema.Plugin{ID: "acme.plugin.c", Needs: []schema.Need{
			need("acme.plugin.a", shape, iface.V(1, 2, 0)), // met
			need("acme.plugin.a", shape, iface.V(1, 4, 0)), // too new
			need("acme.plugin.b", shape, iface.V(1, 0, 0)), // b is broken
			need("acme.plugin.z", ghost, iface.V(2, 0, 0)), // nobody provides it
		}}, State: dynop.StateStarted},
		{Err: errors.New("broken before its ID was known"), State: dynop.StateBroken},
	}
	es := interfacesOf(plugins)
	if len(es) != 2 || es[0].Name != "acme.Ghost" || es[1].Name != "acme.Shape" {
		t.Fatalf("interfaces %+v, want acme.Ghost and acme.Shape", es)
	}
	g, s := es[0], es[1]
	if len(g.Providers) != 0 || len(g.Versions) != 0 || len(g.Consumers) != 1 || g.Consumers[0].Met {
		t.Errorf("acme.Ghost: %+v", g)
	}
	if len(s.Versions) != 2 || s.Versions[0] != iface.V(1, 1, 0) || s.Versions[1] != iface.V(1, 3, 0) || len(s.Providers) != 2 {
		t.Errorf("acme.Shape: versions %v, providers %+v", s.Versions, s.Providers)
	}
	var met []bool
	for _, c := range s.Consumers {
		met = append(met, c.Met)
	}
	if len(met) != 3 || !met[0] || met[1] || met[2] {
		t.Errorf("acme.Shape's needs met: %v, want [true false false]", met)
	}
	if got := findInterface(es, "acme.Shape"); len(got) != 1 || got[0] != s {
		t.Errorf("findInterface by name: %v", got)
	}
	if got := findInterface(es, "11111111-2222-4333-8444-555555555555"); len(got) != 1 || got[0] != s {
		t.Errorf("findInterface by UID: %v", got)
	}
	if got := findInterface(es, "acme.shape"); len(got) != 0 {
		t.Errorf("findInterface of a name in the wrong case: %v", got)
	}

	var b bytes.Buffer
	if err := writeInterface(&b, s, false, palette{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"provider   acme.plugin.a provides 1.3.0, available\n",
		"provider   acme.plugin.b provides 1.1.0, broken, /p/libb.so\n",
		"consumer   acme.plugin.c needs 1.2.0 or newer from acme.plugin.a, started\n",
		"consumer   acme.plugin.c needs 1.4.0 or newer from acme.plugin.a (not met: acme.plugin.a does not provide it, usable, at a compatible version), started\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("inspect acme.Shape lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := writeInterface(&b, g, false, palette{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "provider   none: no plugin found provides it\n") {
		t.Errorf("inspect acme.Ghost:\n%s", b.String())
	}
	b.Reset()
	if err := writeInterfaces(&b, es, false, palette{}); err != nil {
		t.Fatal(err)
	}
	if want := regexp.MustCompile(`(?m)^acme\.Shape +11111111-2222-4333-8444-555555555555 +1\.1\.0, 1\.3\.0 +acme\.plugin\.a, acme\.plugin\.b \(broken\) +acme\.plugin\.c \(1\.2\.0 or newer\), `); !want.MatchString(b.String()) {
		t.Errorf("list --interfaces does not match %s:\n%s", want, b.String())
	}
}

// inspect of an operator's name without its prefix suggests the
// operators of that name: Resize is image.Resize.
func TestInspectSuggestsPrefixedOperator(t *testing.T) {
	t.Setenv("DYNOP_PLUGIN_PATH", "")
	code, _, stderr := runCLI(t, "inspect", "Resize", t.TempDir())
	if code != 1 || !strings.Contains(stderr, `(did you mean the operator "image.Resize"`) {
		t.Errorf("inspect Resize: exit %d, stderr %q; want exit 1 and a suggestion of image.Resize", code, stderr)
	}
}
