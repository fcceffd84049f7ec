package plugin_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// Shouter is the interface the example plugin provides.
type Shouter interface{ Shout(s string) string }

// ShouterV1 is its descriptor, shared by the plugin and its callers.
var ShouterV1 = iface.Define[Shouter]("9D3C1B2A-7E6F-4D5C-8B9A-0F1E2D3C4B5A", "acme.Shouter", iface.V(1, 0, 0))

type shoutPlugin struct{}

func (shoutPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          "acme.plugin.shout",
		Version:     iface.V(0, 3, 1),
		Description: "Shouts.",
		Interfaces:  []iface.Desc{ShouterV1.Desc},
	}
}

func (shoutPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	return ShouterV1.Provide(h, shouter{})
}

// Stop is optional, found by type assertion.
func (shoutPlugin) Stop(ctx context.Context) error {
	fmt.Println("shout plugin deregistered")
	return nil
}

type shouter struct{}

func (shouter) Shout(s string) string { return strings.ToUpper(s) + "!" }

// A plugin declares its interfaces in Info and adds them in Start. A Go
// plugin compiled into the program would call plugin.Register(shoutPlugin{})
// from an init function; here it is handed to one host directly.
func Example() {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{shoutPlugin{}}, NoRegistered: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	s, ref, err := dynop.Acquire(ctx, h, "acme.plugin.shout", ShouterV1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Shout("hello"))
	ref.Release()
	// Output:
	// HELLO!
	// shout plugin deregistered
}
