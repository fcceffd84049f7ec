package ldso

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// ErrSonameMismatch: a library that a plugin bundles has a DT_SONAME other
// than the name the plugin's DT_NEEDED uses for it, or none.
var ErrSonameMismatch = errors.New("bundled library's DT_SONAME differs from the DT_NEEDED name")

// Dependencies are the shared libraries a plugin needs, as [Walk] found
// them.
type Dependencies struct {
	// Bundled are the libraries found through a DT_RUNPATH or DT_RPATH
	// entry that expands from $ORIGIN (of the plugin or of a bundled
	// library), as paths relative to the plugin's directory in slash
	// form (they may start with ../). They are in load order: every
	// library comes after the bundled libraries it needs; a cycle is
	// broken where the walk, in DT_NEEDED order from the plugin, meets it.
	Bundled []string
	// System are the sonames needed from the system (found elsewhere, or
	// not found), without duplicates, sorted.
	System []string
	// Missing are the sonames of System that cannot be found, sorted.
	Missing []string
}

// providedByLinker are the names the dynamic linker always satisfies: its
// own (the program interpreters) and the kernel's vDSO.
var providedByLinker = map[string]bool{
	"linux-vdso.so.1":             true,
	"linux-gate.so.1":             true,
	"linux-vdso64.so.1":           true,
	"ld-linux-x86-64.so.2":        true,
	"ld-linux.so.2":               true,
	"ld-linux-aarch64.so.1":       true,
	"ld-linux-armhf.so.3":         true,
	"ld-linux-riscv64-lp64d.so.1": true,
	"ld64.so.2":                   true,
	"ld64.so.1":                   true,
}

// Walk reads the plugin at pluginPath and finds the libraries it needs,
// without loading any. Each DT_NEEDED name is resolved once, the first
// time the walk meets it, breadth first from the plugin as ld.so loads
// them, with r and the DT_RPATH of the objects that led to it. A library
// found through an $ORIGIN entry is bundled and walked in turn (its own
// $ORIGIN is its own directory); a system library is not walked, as its
// package brings its dependencies. A bundled library of another class or
// machine is skipped, as ld.so skips it, so the name may be found
// elsewhere or be missing.
//
// A bundled library must have the DT_SONAME its users need it by: the
// host loads bundled libraries from anonymous memory files, and the
// dynamic linker then satisfies a DT_NEEDED name with the loaded library
// of that soname. Walk's error for one that does not wraps
// [ErrSonameMismatch]; a missing library is no error, but is listed in
// Missing.
func Walk(pluginPath string, r *Resolver) (*Dependencies, error) {
	plugin, err := ReadObject(pluginPath)
	if err != nil {
		return nil, err
	}
	pluginDir := filepath.Dir(plugin.Path)

	// node is the plugin or a bundled library, with the chain of objects
	// that led to it (itself first), whose DT_RPATHs ld.so searches.
	type node struct {
		obj   *Object
		chain []*Object
	}
	var (
		queue     = []node{{plugin, []*Object{plugin}}}
		walked    = map[*Object]bool{plugin: true} // the plugin and bundled libraries
		bundled   = map[string]*Object{}           // by soname
		system    = map[string]bool{}              // soname: found
		plugins   = map[string]bool{plugin.Soname: plugin.Soname != ""}
		relPathOf = map[*Object]string{}
	)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, name := range n.obj.Needed {
			if bundled[name] != nil || plugins[name] {
				continue
			}
			if _, seen := system[name]; seen {
				continue
			}
			if providedByLinker[name] {
				system[name] = true
				continue
			}
			path, origin, err := r.search(name, n.chain)
			switch {
			case errors.Is(err, ErrNotFound):
				system[name] = false
				continue
			case err != nil:
				return nil, err
			case origin == nil || !walked[origin]:
				system[name] = true
				continue
			}
			lib, err := ReadObject(path)
			if err != nil {
				return nil, err
			}
			if lib.Soname != name {
				has := "has no DT_SONAME"
				if lib.Soname != "" {
					has = fmt.Sprintf("has DT_SONAME %q", lib.Soname)
				}
				return nil, fmt.Errorf("ldso: %s: %w: it %s, but %s needs it as %q; the host loads bundled libraries from anonymous memory files, and the dynamic linker matches a DT_NEEDED name against the sonames of the libraries loaded, so the soname must be the needed name: link the library with -Wl,-soname,%s",
					lib.Path, ErrSonameMismatch, has, n.obj.Path, name, name)
			}
			rel, err := filepath.Rel(pluginDir, lib.Path)
			if err != nil {
				return nil, fmt.Errorf("ldso: %s: %w", lib.Path, err)
			}
			bundled[name] = lib
			walked[lib] = true
			relPathOf[lib] = filepath.ToSlash(rel)
			queue = append(queue, node{lib, append([]*Object{lib}, n.chain...)})
		}
	}

	deps := &Dependencies{}
	// Load order: depth first from the plugin, each library after the
	// bundled libraries it needs; a library met again while it is being
	// visited (a cycle) is taken as loaded.
	visited := map[*Object]bool{}
	var visit func(obj *Object)
	visit = func(obj *Object) {
		visited[obj] = true
		for _, name := range obj.Needed {
			if lib := bundled[name]; lib != nil && !visited[lib] {
				visit(lib)
				deps.Bundled = append(deps.Bundled, relPathOf[lib])
			}
		}
	}
	visit(plugin)
	for name, found := range system {
		deps.System = append(deps.System, name)
		if !found {
			deps.Missing = append(deps.Missing, name)
		}
	}
	slices.Sort(deps.System)
	slices.Sort(deps.Missing)
	return deps, nil
}
