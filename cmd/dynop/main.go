// Command dynop inspects the plugins a dynop host knows.
//
// Usage:
//
//	dynop version          print the dynop build, the plugin API version and the Go toolchain
//	dynop list [--json]    list the plugins, their state and interfaces
//	dynop help             print this help
//
// For now the host knows the Go plugins compiled into this binary (the
// example plugins under plugins/); later versions discover plugins on disk.
//
// # JSON output of list
//
// `dynop list --json` prints one object, stable within a schema version:
//
//	{
//	  "schema": "dynop.list/v1",
//	  "plugins": [
//	    {
//	      "id": "dynop.plugin.greeter",          // vendor.plugin.name[.backend]
//	      "version": "1.0.0",                     // plugin version
//	      "api_version": "0.1.0",                 // plugin API it was built for
//	      "description": "…", "author": "…", "build": "…",   // omitted when empty
//	      "interfaces": [{"uid": "C6A1D7F2-…", "name": "dynop.example.Greeter", "version": "1.0.0"}],
//	      "needs": [{"plugin": "dynop.plugin.text", "interface": {"uid": "…", "name": "…", "version": "1.1.0"}}],
//	      "requirements": {"os": […], "arch": […], "cpu_features": […], "gpu": {…}},  // empty fields omitted
//	      "state": "available",                   // available, starting, started, stopping or unusable
//	      "error": "…"                            // why it is unusable; omitted otherwise
//	    }
//	  ]
//	}
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
	_ "github.com/dynop/dynop/plugins/greeter" // example plugins, compiled in
	_ "github.com/dynop/dynop/plugins/text"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: dynop <command> [flags]

Commands:
  version          print the dynop build, the plugin API version and the Go toolchain
  list [--json]    list the plugins the host knows, their state and interfaces
  help             print this help
`

// errUsage marks errors after which the usage is worth reading.
var errUsage = errors.New("usage")

// run executes the command line args and returns the exit status: 0 on
// success, 1 on failure, 2 on a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "dynop: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "dynop: %v\n", err)
		return 1
	}
}

func dispatch(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command given", errUsage)
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "version":
		if err := noArgs(cmd, flag.NewFlagSet(cmd, flag.ContinueOnError), args); err != nil {
			return err
		}
		return version(stdout)
	case "list":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		asJSON := fs.Bool("json", false, "print JSON (schema dynop.list/v1) instead of a table")
		if err := noArgs(cmd, fs, args); err != nil {
			return err
		}
		return list(ctx, stdout, *asJSON)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	}
}

// noArgs parses flags and rejects positional arguments.
func noArgs(cmd string, fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("%w: help for %s", errUsage, cmd)
		}
		return fmt.Errorf("%w: %s: %v", errUsage, cmd, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, cmd, fs.Args())
	}
	return nil
}

func version(w io.Writer) error {
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			v += " " + rev[:min(12, len(rev))] + dirty
		}
	}
	_, err := fmt.Fprintf(w, "dynop %s\nplugin API %s\n%s %s/%s\n", v, plugin.APIVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

// listEntry is one plugin in `dynop list --json`.
type listEntry struct {
	plugin.Info
	State dynop.State `json:"state"`
	Error string      `json:"error,omitempty"`
}

func list(ctx context.Context, w io.Writer, asJSON bool) error {
	h, err := dynop.Open(ctx, dynop.Options{})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	return writeList(w, h.Plugins(), asJSON)
}

// writeList prints plugins as a table, or as JSON (schema dynop.list/v1).
func writeList(w io.Writer, plugins []dynop.PluginStatus, asJSON bool) error {
	if asJSON {
		out := struct {
			Schema  string      `json:"schema"`
			Plugins []listEntry `json:"plugins"`
		}{Schema: "dynop.list/v1", Plugins: make([]listEntry, len(plugins))}
		for i, st := range plugins {
			out.Plugins[i] = listEntry{Info: st.Info, State: st.State}
			if st.State == dynop.StateUnusable && st.Err != nil {
				out.Plugins[i].Error = st.Err.Error()
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tVERSION\tSTATE\tINTERFACES")
	for _, st := range plugins {
		lines := make([]string, 0, len(st.Info.Interfaces)+len(st.Info.Needs)+1)
		for _, d := range st.Info.Interfaces {
			lines = append(lines, fmt.Sprintf("provides %s %s {%s}", d.Name, d.Version, d.UID))
		}
		for _, n := range st.Info.Needs {
			lines = append(lines, fmt.Sprintf("needs    %s from %s, %s or newer", n.Interface.Name, n.Plugin, n.Interface.Version))
		}
		if st.State == dynop.StateUnusable && st.Err != nil {
			lines = append(lines, "error    "+strings.ReplaceAll(st.Err.Error(), "\n", "; "))
		}
		if len(lines) == 0 {
			lines = append(lines, "")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.Info.ID, st.Info.Version, st.State, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "\t\t\t%s\n", l)
		}
	}
	return tw.Flush()
}
