package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/internal/srctree"
)

// errNoHeader is returned when no place dynop looks in has dynop/dynop.h.
var errNoHeader = errors.New("dynop/dynop.h not found")

// includeDirCommand is dynop include-dir: it prints the directory holding
// dynop/dynop.h.
func includeDirCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("include-dir", flag.ContinueOnError)
	if err := noArgs("include-dir", fs, args); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	dir, err := findIncludeDir(exe, os.Getenv("DYNOP_ROOT"), srctree.Built())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, dir)
	return err
}

// findIncludeDir returns the directory holding dynop/dynop.h for the
// executable exe: <its directory, symlinks resolved>/../include (the
// layout of make install: $PREFIX/bin/dynop, $PREFIX/include/dynop), else
// abi/include in a source tree of the dynop module: root ($DYNOP_ROOT) if
// set, else the first directory above the executable whose go.mod
// declares module github.com/dynop/dynop, else builtFrom (the tree the
// binary was compiled in, if it still is one). The error names every
// place looked in.
func findIncludeDir(exe, root, builtFrom string) (string, error) {
	type place struct{ dir, why string }
	var places []place
	var looked []string
	if exe != "" {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if abs, err := filepath.Abs(exe); err == nil {
			exe = abs
		}
		places = append(places, place{filepath.Join(filepath.Dir(exe), "..", "include"), "the install layout beside " + exe})
	} else {
		looked = append(looked, "the install layout (the executable's path is unknown)")
	}
	if root != "" {
		places = append(places, place{filepath.Join(root, "abi", "include"), "$DYNOP_ROOT"})
	} else if exe != "" {
		if mod := moduleRootAbove(filepath.Dir(exe)); mod != "" {
			places = append(places, place{filepath.Join(mod, "abi", "include"), "the dynop checkout above " + exe})
		} else {
			looked = append(looked, "a go.mod of module "+srctree.Module+" above "+filepath.Dir(exe)+": none")
		}
	}
	if builtFrom != "" {
		if srctree.IsRoot(builtFrom) {
			places = append(places, place{filepath.Join(builtFrom, "abi", "include"), "the source tree this dynop was built from"})
		} else {
			looked = append(looked, builtFrom+" (the source tree this dynop was built from): not a checkout of "+srctree.Module+" any more")
		}
	}
	for _, p := range places {
		dir := filepath.Clean(p.dir)
		if fi, err := os.Stat(filepath.Join(dir, "dynop", "dynop.h")); err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
		looked = append(looked, filepath.Join(dir, "dynop", "dynop.h")+" ("+p.why+")")
	}
	return "", fmt.Errorf("%w; looked in:\n  %s\ninstall dynop (make install PREFIX=DIR) or set $DYNOP_ROOT to a checkout of %s",
		errNoHeader, strings.Join(looked, "\n  "), srctree.Module)
}

// moduleRootAbove returns the first of dir and the directories above it
// that holds a go.mod declaring the dynop module, or "".
func moduleRootAbove(dir string) string {
	for {
		if srctree.IsRoot(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
