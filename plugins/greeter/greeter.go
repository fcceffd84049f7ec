// Package greeter is an example Go plugin, dynop.plugin.greeter, that
// provides a greeting interface built on the text plugin's interface: it
// acquires dynop.plugin.text from its Start, so starting the greeter
// starts the text plugin first, and stopping the greeter lets the text
// plugin stop after it.
package greeter

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
const ID = "dynop.plugin.greeter"

// Greeter greets.
type Greeter interface {
	// Greet returns a greeting for name.
	Greet(name string) string
}

// Interface is the Greeter interface as the plugin provides it.
var Interface = iface.Define[Greeter]("C6A1D7F2-41B3-4E0A-A5C8-7D2E9F1B3C64", "dynop.example.Greeter", iface.V(1, 0, 0))

func init() { plugin.Register(&greeterPlugin{}) }

// greeterPlugin holds what one start of the plugin acquired. The host never
// runs two lifecycle steps of one plugin at once, so it needs no lock.
type greeterPlugin struct {
	log  *slog.Logger
	text text.Text
}

func (*greeterPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 0, 0),
		Description: "Example plugin: greetings, shaped by dynop.plugin.text.",
		Author:      "dynop",
		Interfaces:  []iface.Desc{Interface.Desc},
		Needs:       []schema.Need{{Plugin: text.ID, Interface: text.Interface.Desc}},
	}
}

func (p *greeterPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	p.log = h.Logger()
	p.log.Debug("greeter: Start: acquiring " + text.Interface.Name + " from " + text.ID)
	// The host releases this reference after the greeter has stopped.
	t, _, err := plugin.Acquire(ctx, h, text.ID, text.Interface)
	if err != nil {
		return fmt.Errorf("greeter needs %s: %w", text.ID, err)
	}
	p.text = t
	p.log.Debug("greeter: Start: adding " + Interface.Name)
	return Interface.Provide(h, greeter{t})
}

func (p *greeterPlugin) Unload(ctx context.Context) error {
	p.log.Debug("greeter: Unload: dropping " + text.Interface.Name + "; " + text.ID + " may stop once this returns")
	p.text = nil
	return nil
}

type greeter struct{ text text.Text }

func (g greeter) Greet(name string) string {
	return "Hello, " + g.text.Title(name) + "!"
}
