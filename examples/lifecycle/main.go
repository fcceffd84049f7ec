// Command lifecycle is the dynop demo: a host over two Go plugins, one
// depending on the other, printing the lifecycle as it happens: enumerate,
// acquire (which starts both), use, release (which stops both, the
// dependent first).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/demo"
	"github.com/dynop/dynop/plugins/greeter"
	_ "github.com/dynop/dynop/plugins/text"
)

func main() {
	dynop.ServeScanner() // as a scanner child process, inspect a plugin file and exit
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lifecycle:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	log := demo.Logger(out)

	fmt.Fprintln(out, "== open: enumerate the compiled-in plugins; nothing starts")
	h, err := dynop.Open(ctx, dynop.Options{Logger: log})
	if err != nil {
		return err
	}
	printPlugins(out, h)

	fmt.Fprintf(out, "\n== acquire %s from %s: starts its dependency first\n", greeter.Interface.Name, greeter.ID)
	g, ref, err := dynop.Acquire(ctx, h, greeter.ID, greeter.Interface)
	if err != nil {
		return err
	}
	printPlugins(out, h)

	fmt.Fprintln(out, "\n== use")
	fmt.Fprintf(out, "Greet(%q) = %q\n", "plugin world", g.Greet("plugin world"))
	_, _, err = dynop.Acquire(ctx, h, greeter.ID, iface.Def[greeter.Greeter]{Desc: iface.Desc{
		UID: greeter.Interface.UID, Name: greeter.Interface.Name, Version: iface.V(1, 2, 0)}})
	fmt.Fprintf(out, "asking for %s v1.2.0 fails (errors.Is ErrVersion: %t):\n  %v\n",
		greeter.Interface.Name, errors.Is(err, dynop.ErrVersion), err)

	fmt.Fprintln(out, "\n== release the last reference: the greeter stops, then the text plugin it kept alive")
	if err := ref.Release(); err != nil {
		return err
	}
	printPlugins(out, h)

	fmt.Fprintln(out, "\n== close")
	if err := h.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "closed cleanly: no references leaked")
	return nil
}

func printPlugins(out io.Writer, h *dynop.Host) {
	for _, st := range h.Plugins() {
		var provides []string
		for _, d := range st.Info.Interfaces {
			provides = append(provides, d.Name+" v"+d.Version.String())
		}
		fmt.Fprintf(out, "  %-22s v%-6s %-9s refs=%d starts=%d stops=%d provides %s\n",
			st.Info.ID, st.Info.Version, st.State, st.Refs, st.Starts, st.Stops, strings.Join(provides, ", "))
	}
}
