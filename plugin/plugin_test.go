package plugin

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
)

func TestValidateID(t *testing.T) {
	for _, id := range []string{"nvigi.plugin.template", "acme.plugin.blur.cuda", "a.plugin.b", "acme.plugin.asr-ggml.cuda_12"} {
		if err := schema.ValidatePluginID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
	for _, tc := range []struct{ id, want string }{
		{"", "has 1 part(s)"},
		{"acme.blur", "has 2 part(s)"},
		{"acme.plugin.blur.cuda.v2", "has 5 part(s)"},
		{"acme.plugins.blur", `has second part "plugins"`},
		{"Acme.plugin.blur", `has part "Acme"`},
		{"acme.plugin.9blur", `has part "9blur"`},
		{"acme.plugin.bl ur", `has part "bl ur"`},
		{"acme.plugin..cuda", `has part ""`},
	} {
		err := schema.ValidatePluginID(tc.id)
		if !errors.Is(err, schema.ErrPlugin) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalid", tc.id, err)
			continue
		}
		for _, want := range []string{fmt.Sprintf("%q", tc.id), tc.want, "vendor.plugin.name"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ValidateID(%q) = %q, missing %q", tc.id, err, want)
			}
		}
	}
	// A valid ID but for its length: refused, and quoted cut short.
	ok := "acme.plugin." + strings.Repeat("b", schema.MaxPluginIDLen-len("acme.plugin."))
	if err := schema.ValidatePluginID(ok); err != nil {
		t.Errorf("ValidateID of %d bytes = %v", len(ok), err)
	}
	long := "acme.plugin." + strings.Repeat("b", 10000)
	err := schema.ValidatePluginID(long)
	if !errors.Is(err, schema.ErrPlugin) || !strings.Contains(err.Error(), "is 10012 bytes long, more than 128") ||
		!strings.Contains(err.Error(), `"acme.plugin.bbbbbbbbbbbbbbbbbbbbbbbbbbbb…"`) || len(err.Error()) > 500 {
		t.Errorf("ValidateID of 10 KB = %v", err)
	}
}

var (
	uidA = iface.MustParseUID("11111111-1111-1111-1111-111111111111")
	uidB = iface.MustParseUID("22222222-2222-2222-2222-222222222222")
)

func TestInfoValidate(t *testing.T) {
	good := schema.Plugin{
		ID:         "acme.plugin.good",
		Interfaces: []iface.Desc{{UID: uidA, Name: "acme.A", Version: iface.V(1, 0, 0)}},
		Needs:      []schema.Need{{Plugin: "acme.plugin.other", Interface: iface.Desc{UID: uidB, Name: "acme.B", Version: iface.V(1, 0, 0)}}},
		Requirements: schema.Requirements{
			OS: []string{"linux"}, Arch: []string{"amd64"}, CPUFeatures: []string{"avx2"},
			GPU: &schema.GPURequirements{Vendor: "nvidia", MinArch: iface.V(8, 6, 0), MinDriver: iface.V(535, 0, 0)},
		},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(good) = %v", err)
	}
	if d, ok := good.Provides(uidA); !ok || d.Name != "acme.A" {
		t.Errorf("Provides(uidA) = %v, %t", d, ok)
	}
	if _, ok := good.Provides(uidB); ok {
		t.Error("Provides(uidB) = true for an interface it only needs")
	}

	bad := good
	bad.ID = "acme.good"
	bad.Interfaces = []iface.Desc{
		{UID: uidA, Name: "acme.A"},
		{UID: uidA, Name: "acme.A2"},
		{Name: "acme.Zero"},
	}
	bad.Needs = []schema.Need{
		{Plugin: "acme.good", Interface: iface.Desc{UID: uidB}},
		{Plugin: "acme.other", Interface: iface.Desc{UID: uidB, Name: "acme.B"}},
	}
	bad.Requirements.GPU = &schema.GPURequirements{Vendor: "3dfx"}
	err := bad.Validate()
	if !errors.Is(err, schema.ErrPlugin) {
		t.Fatalf("Validate(bad) = %v, want ErrInvalid", err)
	}
	for _, want := range []string{
		`plugin id "acme.good" has 2 part(s)`,
		`provides UID {11111111-1111-1111-1111-111111111111} twice, as "acme.A" and "acme.A2"`,
		`interface "acme.Zero": UID is zero`,
		`needs interface "" from itself`,
		`needs plugin id "acme.other", which has 2 part(s)`,
		"name is empty",
		`GPU vendor "3dfx" is not one of nvidia, amd, intel`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(bad) = %q\nmissing %q", err, want)
		}
	}
}

type testPlugin struct{ id string }

func (p testPlugin) Info() schema.Plugin                  { return schema.Plugin{ID: p.id} }
func (testPlugin) Start(context.Context, Registrar) error { return nil }

// withEmptyRegistry runs f with the package registry empty, restoring it
// afterwards.
func withEmptyRegistry(t *testing.T, f func()) {
	t.Helper()
	registryMu.Lock()
	saved := registry
	registry = make(map[string]Plugin)
	registryMu.Unlock()
	defer func() {
		registryMu.Lock()
		registry = saved
		registryMu.Unlock()
	}()
	f()
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("panic = %v, want a panic saying %q", r, want)
		}
	}()
	f()
}

func TestRegister(t *testing.T) {
	withEmptyRegistry(t, func() {
		Register(testPlugin{"acme.plugin.zeta"})
		Register(testPlugin{"acme.plugin.alpha"})
		var ids []string
		for _, p := range Registered() {
			ids = append(ids, p.Info().ID)
		}
		if strings.Join(ids, ",") != "acme.plugin.alpha,acme.plugin.zeta" {
			t.Errorf("Registered = %v, want sorted by ID", ids)
		}
		mustPanic(t, "plugin: Register called twice for plugin acme.plugin.alpha", func() { Register(testPlugin{"acme.plugin.alpha"}) })
		mustPanic(t, "plugin: Register plugin is nil", func() { Register(nil) })
		mustPanic(t, `plugin id "Bad" has 1 part(s)`, func() { Register(testPlugin{"Bad"}) })
		if n := len(Registered()); n != 2 {
			t.Errorf("after rejected registrations, %d plugins are registered, want 2", n)
		}
	})
}

type releaser struct{ got []uint64 }

func (r *releaser) ReleaseRef(token uint64) error { r.got = append(r.got, token); return nil }

func TestRef(t *testing.T) {
	var zero Ref
	if !zero.IsZero() || !errors.Is(zero.Release(), ErrNoRef) {
		t.Errorf("zero Ref: IsZero %t, Release %v", zero.IsZero(), zero.Release())
	}
	var r releaser
	ref := friend.Get[func(interface{ ReleaseRef(uint64) error }, uint64) Ref]()(&r, 42)
	if ref.IsZero() || ref.Release() != nil || len(r.got) != 1 || r.got[0] != 42 {
		t.Errorf("Release called owner with %v", r.got)
	}
}

func TestInfoDiff(t *testing.T) {
	base := schema.Plugin{ID: "acme.plugin.x", Version: iface.V(1, 0, 0), Interfaces: []iface.Desc{}}
	if d := base.Diff(schema.Plugin{ID: "acme.plugin.x", Version: iface.V(1, 0, 0)}); d != "" {
		t.Errorf("equal infos (empty vs nil list) differ: %s", d)
	}
	nested := base
	nested.Requirements.OS = []string{}
	if d := base.Diff(nested); d != "" {
		t.Errorf("equal infos (empty vs nil nested list) differ: %s", d)
	}
	other := base
	other.Version = iface.V(1, 1, 0)
	other.Author = "someone"
	d := base.Diff(other)
	for _, want := range []string{"Version: 1.0.0 ≠ 1.1.0", "Author:  ≠ someone"} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff = %q, want it to contain %q", d, want)
		}
	}
	if strings.Contains(d, "ID") {
		t.Errorf("Diff = %q names a field that is equal", d)
	}
}
