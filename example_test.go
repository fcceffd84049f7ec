package dynop_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugins/greeter"
	"github.com/dynop/dynop/plugins/text"
)

// Open enumerates the plugins compiled into the program (here the example
// plugins text and greeter, registered by their packages' init functions)
// and starts none of them.
func ExampleOpen() {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	for _, st := range h.Plugins() {
		fmt.Println(st.Info.ID, st.Info.Version, st.State)
	}
	// Output:
	// dynop.plugin.greeter 1.0.0 available
	// dynop.plugin.text 1.0.0 available
}

// Acquire returns a typed interface. The first acquisition starts the
// greeter plugin, which starts the text plugin it depends on.
func ExampleAcquire() {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	g, ref, err := dynop.Acquire(ctx, h, greeter.ID, greeter.Interface)
	if err != nil {
		log.Fatal(err)
	}
	defer ref.Release()
	fmt.Println(g.Greet("ada lovelace"))
	st, _ := h.Plugin(text.ID)
	fmt.Println(text.ID, st.State)
	// Output:
	// Hello, Ada Lovelace!
	// dynop.plugin.text started
}

// Releasing the last reference stops the plugin, and then the plugins it
// alone kept alive.
func ExampleRef_Release() {
	ctx := context.Background()
	h, _ := dynop.Open(ctx, dynop.Options{})
	defer h.Close(ctx)

	_, ref, err := dynop.Acquire(ctx, h, greeter.ID, greeter.Interface)
	if err != nil {
		log.Fatal(err)
	}
	if err := ref.Release(); err != nil {
		log.Fatal(err)
	}
	for _, st := range h.Plugins() {
		fmt.Println(st.Info.ID, st.State, "starts:", st.Starts, "stops:", st.Stops)
	}
	fmt.Println("second release:", ref.Release())
	// Output:
	// dynop.plugin.greeter available starts: 1 stops: 1
	// dynop.plugin.text available starts: 1 stops: 1
	// second release: dynop: release: reference already released
}

// A caller asks for the minimum interface version it was written against;
// a plugin that provides an older minor version is refused before it starts.
func ExampleHost_Acquire() {
	ctx := context.Background()
	h, _ := dynop.Open(ctx, dynop.Options{})
	defer h.Close(ctx)

	_, _, err := h.Acquire(ctx, text.ID, text.Interface.UID, iface.V(1, 4, 0))
	fmt.Println(errors.Is(err, dynop.ErrVersion))
	fmt.Println(err)
	// Output:
	// true
	// dynop: incompatible version: plugin "dynop.plugin.text" interface "dynop.example.Text" {5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10}: requested 1.4.0 or newer, provided 1.1.0: provided minor 1 is older than requested minor 4
}

// OnUnload registers a clear-callback: before a plugin stops, the program
// drops what it keeps that points into the plugin without a reference.
func ExampleHost_OnUnload() {
	ctx := context.Background()
	h, _ := dynop.Open(ctx, dynop.Options{})
	defer h.Close(ctx)

	cancel, err := h.OnUnload("", func(id string) { fmt.Println("dropping caches of", id) })
	if err != nil {
		log.Fatal(err)
	}
	defer cancel()
	_, ref, _ := dynop.Acquire(ctx, h, greeter.ID, greeter.Interface)
	ref.Release()
	// Output:
	// dropping caches of dynop.plugin.greeter
	// dropping caches of dynop.plugin.text
}

// Close reports references the program never released, and keeps their
// plugins started until they are: a call through a leaked interface never
// reaches a stopped plugin.
func ExampleHost_Close() {
	ctx := context.Background()
	h, _ := dynop.Open(ctx, dynop.Options{})
	t, ref, _ := dynop.Acquire(ctx, h, text.ID, text.Interface) // not released before Close
	err := h.Close(ctx)
	fmt.Println(errors.Is(err, dynop.ErrLeaked))
	fmt.Println(err)
	fmt.Println(t.Upper("still started"))
	ref.Release() // stops the plugin
	st, _ := h.Plugin(text.ID)
	fmt.Println(st.State)
	// Output:
	// true
	// dynop: close: interfaces still referenced at close (leaked): plugin "dynop.plugin.text" interface dynop.example.Text v1.1.0 {5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10} (1 reference(s)); kept started until released: "dynop.plugin.text"
	// STILL STARTED
	// available
}
