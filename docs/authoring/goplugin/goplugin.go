// Package goplugin is a Go plugin, compiled into the programs that import
// it: acme.plugin.shout, which provides acme.example.Shouter on top of
// dynop.example.Text from the plugin dynop.plugin.text. Each lifecycle
// hook logs its name, so that the package's example shows their order.
package goplugin

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/text"
	"github.com/dynop/dynop/schema"
)

// ID is the plugin's ID.
const ID = "acme.plugin.shout"

// Shouter shouts. It is safe for concurrent use.
type Shouter interface {
	Shout(s string) string
}

// Interface is acme.example.Shouter, version 1.0.
var Interface = iface.Define[Shouter]("1B52E8DA-BD19-4544-A847-A491DFBD4720", "acme.example.Shouter", iface.V(1, 0, 0))

// Importing the package makes the plugin known to every host the program
// opens; nothing of it runs until a host is asked for Interface.
func init() { plugin.Register(&shoutPlugin{}) }

// shoutPlugin holds what one start acquired. The host runs one lifecycle
// step of a plugin at a time, so it needs no lock.
type shoutPlugin struct {
	log  *slog.Logger
	text text.Text
}

func (*shoutPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 0, 0), // the plugin's own; APIVersion stays zero: the host's
		Description: "Shouts: the Go plugin example of docs/authoring.md.",
		Interfaces:  []iface.Desc{Interface.Desc},
		Needs:       []schema.Need{{Plugin: text.ID, Interface: text.Interface.Desc}},
	}
}

// Start acquires what the plugin needs, passing ctx on (so that the
// host tells a dependency from a cycle), and adds what Info declares.
func (p *shoutPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	p.log = h.Logger()
	t, _, err := plugin.Acquire(ctx, h, text.ID, text.Interface) // released by the host after Unload
	if err != nil {
		return fmt.Errorf("%s needs %s: %w", ID, text.ID, err)
	}
	p.text = t
	p.log.Info("Start")
	return Interface.Provide(h, shouter{t})
}

// The optional hooks, found by type assertion.

func (p *shoutPlugin) Started(ctx context.Context)    { p.log.Info("Started") }
func (p *shoutPlugin) CanUnload() bool                { p.log.Info("CanUnload"); return true }
func (p *shoutPlugin) Stop(ctx context.Context) error { p.log.Info("Stop"); return nil }

func (p *shoutPlugin) Unload(ctx context.Context) error {
	p.log.Info("Unload")
	p.text = nil // dynop.plugin.text may stop once Unload returns
	return nil
}

type shouter struct{ text text.Text }

func (s shouter) Shout(str string) string { return s.text.Upper(str) + "!" }
