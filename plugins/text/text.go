// Package text is an example Go plugin, dynop.plugin.text, that provides a
// small text-shaping interface. It depends on nothing; the greeter plugin
// depends on it.
//
// Importing the package registers the plugin with every dynop host the
// program opens; nothing runs until a host is asked for its interface.
package text

import (
	"context"
	"log/slog"
	"strings"
	"unicode"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// ID is the plugin's ID.
const ID = "dynop.plugin.text"

// Text shapes strings.
type Text interface {
	// Upper returns s in upper case.
	Upper(s string) string
	// Title returns s with the first letter of each word in upper case.
	Title(s string) string
}

// Interface is the Text interface as the plugin provides it: version 1.1
// added Title to 1.0's Upper.
var Interface = iface.Define[Text]("5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10", "dynop.example.Text", iface.V(1, 1, 0))

func init() { plugin.Register(&textPlugin{}) }

// textPlugin keeps the logger of its current start; the host never runs
// two lifecycle steps of one plugin at once, so it needs no lock.
type textPlugin struct {
	log *slog.Logger
}

func (*textPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 0, 0),
		Description: "Example plugin: upper-casing and title-casing text.",
		Author:      "dynop",
		Interfaces:  []iface.Desc{Interface.Desc},
	}
}

func (p *textPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	p.log = h.Logger()
	p.log.Debug("text: Start: adding " + Interface.Name)
	return Interface.Provide(h, shaper{})
}

func (p *textPlugin) Stop(ctx context.Context) error {
	p.log.Debug("text: Stop")
	return nil
}

type shaper struct{}

func (shaper) Upper(s string) string { return strings.ToUpper(s) }

func (shaper) Title(s string) string {
	out := []rune(s)
	start := true
	for i, r := range out {
		if start && unicode.IsLetter(r) {
			out[i] = unicode.ToUpper(r)
		}
		start = unicode.IsSpace(r)
	}
	return string(out)
}
