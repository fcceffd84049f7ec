// Command native is the native-plugin demo: a host over two plugin
// libraries — dynop.plugin.stats in C++, which acquires the VecMath
// interface of dynop.plugin.vecmath in C — showing that nothing is loaded
// until used, that the C++ plugin's start loads and starts the C plugin
// first, and that releasing the last reference really unloads both
// (their files leave /proc/self/maps).
//
// Usage: native LIBVECMATH LIBSTATS (make demo builds and passes them).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/demo"
	_ "github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugins/stats"
)

func main() {
	dynop.ServeScanner() // as a scanner child process, inspect a plugin file and exit
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: native PLUGIN.so... (make demo passes the example plugins)")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "native:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, paths []string) error {
	log := demo.Logger(out)

	fmt.Fprintln(out, "== open: read each library's info in a scanner child process (dlopen, get_info, dlclose there) or from its manifest; nothing starts here")
	h, err := dynop.Open(ctx, dynop.Options{Paths: paths, NoRegistered: true, NoDefaultPaths: true, Logger: log})
	if err != nil {
		return err
	}
	for _, st := range h.Plugins() {
		if st.State == dynop.StateBroken {
			return fmt.Errorf("plugin file %s: %w", st.Path, st.Err)
		}
	}
	show(out, h)

	fmt.Fprintf(out, "\n== acquire %s from %s (C++): its register acquires VecMath, so the C plugin starts first\n", stats.Interface.Name, stats.PluginID)
	s, ref, err := dynop.Acquire(ctx, h, stats.PluginID, stats.Interface)
	if err != nil {
		return err
	}
	show(out, h)

	fmt.Fprintln(out, "\n== use: Go → C++ → C")
	x := []float32{2, 4, 4, 4, 5, 5, 7, 9}
	fmt.Fprintf(out, "x = %v\nmean = %g, variance = %g, norm = %.4f\n", x, s.Mean(x), s.Variance(x), s.Norm(x))

	fmt.Fprintln(out, "\n== release the last reference: stats deregisters and unloads; only then is vecmath released, and it unloads too")
	if err := ref.Release(); err != nil {
		return err
	}
	show(out, h)

	fmt.Fprintln(out, "\n== close")
	if err := h.Close(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "closed cleanly: no references leaked")
	return nil
}

// show prints each plugin's state and whether its library is mapped.
func show(out io.Writer, h *dynop.Host) {
	maps, _ := os.ReadFile("/proc/self/maps")
	for _, st := range h.Plugins() {
		where := "not loaded"
		if strings.Contains(string(maps), st.Path) {
			where = "loaded"
		}
		fmt.Fprintf(out, "  %-20s v%-6s %-9s refs=%d starts=%d stops=%d  %s: %s\n",
			st.Info.ID, st.Info.Version, st.State, st.Refs, st.Starts, st.Stops, filepath.Base(st.Path), where)
	}
}
