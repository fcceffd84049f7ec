package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
)

// Interfaces, first-class: dynop list --interfaces and dynop inspect of an
// interface's name or UID show, from what the plugins declare (their
// info's interfaces and needs, [dynop.Host.Plugins]), every interface,
// the plugins that provide it at which version and those that need it.

// listInterfaces is set by list's --interfaces flag: list the interfaces
// instead of the plugins. Defining the flag resets it, as every command
// defines its flags anew.
var listInterfaces bool

// ifaceEntry is one interface in dynop.interfaces/v1 and
// dynop.interface/v1.
type ifaceEntry struct {
	UID  iface.UID `json:"uid"`
	Name string    `json:"name"`
	// Versions are the versions provided, each once, oldest first.
	Versions  []iface.Version `json:"versions"`
	Providers []ifaceProvider `json:"providers"`
	Consumers []ifaceConsumer `json:"consumers"`
}

// ifaceProvider is a plugin that provides an interface.
type ifaceProvider struct {
	Plugin  string        `json:"plugin"`
	Version iface.Version `json:"version"`
	State   dynop.State   `json:"state"`
	Path    string        `json:"path,omitempty"`
}

// ifaceConsumer is a plugin that needs an interface, from one plugin.
type ifaceConsumer struct {
	Plugin     string        `json:"plugin"`
	MinVersion iface.Version `json:"min_version"`
	From       string        `json:"from"`
	State      dynop.State   `json:"state"`
	Path       string        `json:"path,omitempty"`
	// Met reports whether From provides the interface, is usable, and
	// at a version compatible with MinVersion.
	Met bool `json:"met"`
}

// interfacesOf gathers the interfaces plugins provide or need, sorted by
// name and then UID; an interface no plugin provides is named as its
// first consumer names it.
func interfacesOf(plugins []dynop.PluginStatus) []*ifaceEntry {
	byUID := map[iface.UID]*ifaceEntry{}
	var out []*ifaceEntry
	entry := func(d iface.Desc) *ifaceEntry {
		e := byUID[d.UID]
		if e == nil {
			e = &ifaceEntry{UID: d.UID, Name: d.Name, Versions: []iface.Version{}, Providers: []ifaceProvider{}, Consumers: []ifaceConsumer{}}
			byUID[d.UID] = e
			out = append(out, e)
		}
		return e
	}
	for _, st := range plugins {
		if st.Info.ID == "" {
			continue
		}
		for _, d := range st.Info.Interfaces {
			e := entry(d)
			if len(e.Providers) == 0 {
				e.Name = d.Name // a provider's name, rather than a consumer's
			}
			e.Providers = append(e.Providers, ifaceProvider{Plugin: st.Info.ID, Version: d.Version, State: st.State, Path: st.Path})
			if !slices.Contains(e.Versions, d.Version) {
				e.Versions = append(e.Versions, d.Version)
			}
		}
	}
	for _, st := range plugins {
		if st.Info.ID == "" {
			continue
		}
		for _, n := range st.Info.Needs {
			e := entry(n.Interface)
			met := slices.ContainsFunc(e.Providers, func(p ifaceProvider) bool {
				return p.Plugin == n.Plugin && p.State.Usable() && iface.Compatible(p.Version, n.Interface.Version)
			})
			e.Consumers = append(e.Consumers, ifaceConsumer{Plugin: st.Info.ID, MinVersion: n.Interface.Version, From: n.Plugin, State: st.State, Path: st.Path, Met: met})
		}
	}
	for _, e := range out {
		slices.SortFunc(e.Versions, iface.Version.Compare)
	}
	slices.SortFunc(out, func(a, b *ifaceEntry) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), slices.Compare(a.UID[:], b.UID[:]))
	})
	return out
}

// findInterface returns the interfaces among es whose UID target is
// (in any case, braces or not) or, failing that, whose name it is.
func findInterface(es []*ifaceEntry, target string) []*ifaceEntry {
	var uid iface.UID
	if uid.UnmarshalText([]byte(target)) == nil {
		if i := slices.IndexFunc(es, func(e *ifaceEntry) bool { return e.UID == uid }); i >= 0 {
			return es[i : i+1]
		}
		return nil
	}
	var out []*ifaceEntry
	for _, e := range es {
		if e.Name == target {
			out = append(out, e)
		}
	}
	return out
}

// writeInterfaces prints interfaces as a table painted with pal, or as
// JSON (schema dynop.interfaces/v1).
func writeInterfaces(w io.Writer, es []*ifaceEntry, asJSON bool, pal palette) error {
	if asJSON {
		out := struct {
			Schema     string        `json:"schema"`
			Interfaces []*ifaceEntry `json:"interfaces"`
		}{"dynop.interfaces/v1", es}
		if out.Interfaces == nil {
			out.Interfaces = []*ifaceEntry{}
		}
		return newJSONEncoder(w).Encode(out)
	}
	var t table
	t.add(headerCells("INTERFACE", "UID", "VERSIONS", "PROVIDERS", "CONSUMERS")...)
	for _, e := range es {
		var versions, providers, consumers []string
		for _, v := range e.Versions {
			versions = append(versions, v.String())
		}
		for _, p := range e.Providers {
			providers = append(providers, p.Plugin+unusable(p.State))
		}
		for _, c := range e.Consumers {
			consumers = append(consumers, fmt.Sprintf("%s (%s or newer)%s", c.Plugin, c.MinVersion, unusable(c.State)))
		}
		t.addText(e.Name, e.UID.String(), orDash(strings.Join(versions, ", ")), orDash(strings.Join(providers, ", ")), orDash(strings.Join(consumers, ", ")))
	}
	return t.write(w, pal)
}

// unusable is " (STATE)" for a state that is not usable, or "".
func unusable(s dynop.State) string {
	if s.Usable() {
		return ""
	}
	return " (" + s.String() + ")"
}

// writeInterface prints one interface, as aligned "field  value" lines
// painted with pal or as JSON (schema dynop.interface/v1).
func writeInterface(w io.Writer, e *ifaceEntry, asJSON bool, pal palette) error {
	if asJSON {
		return newJSONEncoder(w).Encode(struct {
			Schema    string      `json:"schema"`
			Interface *ifaceEntry `json:"interface"`
		}{"dynop.interface/v1", e})
	}
	var t fieldTable
	t.row("interface", e.Name)
	t.row("uid", e.UID.String())
	if len(e.Providers) == 0 {
		t.styledRow("provider", "none: no plugin found provides it", styleRed)
	}
	for _, p := range e.Providers {
		t.styledRow("provider", fmt.Sprintf("%s provides %s, %s%s", p.Plugin, p.Version, p.State, pathNote(p.Path)), stateStyle(p.State))
	}
	if len(e.Consumers) == 0 {
		t.row("consumer", "none: no plugin found needs it")
	}
	for _, c := range e.Consumers {
		met, st := "", stateStyle(c.State)
		if !c.Met {
			met, st = fmt.Sprintf(" (not met: %s does not provide it, usable, at a compatible version)", c.From), styleRed
		}
		t.styledRow("consumer", fmt.Sprintf("%s needs %s or newer from %s%s, %s%s", c.Plugin, c.MinVersion, c.From, met, c.State, pathNote(c.Path)), st)
	}
	return t.write(w, pal)
}

// pathNote is ", PATH" for a plugin file, or "" for a plugin compiled in.
func pathNote(path string) string {
	if path == "" {
		return ""
	}
	return ", " + path
}
