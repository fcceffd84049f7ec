package dynop

import (
	"context"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"github.com/dynop/dynop/schema"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/iface"
)

// passesInterface is the interface through which the host reaches the
// graph passes a started plugin registered. The host adds it to the Info
// of every plugin that declares passes; a build that runs one of them
// acquires it, so the plugin stays started until the graph closes.
var passesInterface = iface.Desc{
	UID:     iface.MustParseUID("9A51F7E2-0C3D-4B8E-9D1A-5E6F7A8B9C0D"),
	Name:    "dynop.Passes",
	Version: iface.V(1, 0, 0),
}

// passTable is a started plugin's implementation of passesInterface.
type passTable map[string]any

// Passes returns the host's graph passes: the fusion pass built into
// dynop ([graph.FusePass]) and every pass the usable plugins declare.
// Building a graph with them ([graph.Build]) starts the plugins whose
// passes it runs; closing the graph lets them stop. If two plugins
// declare the same pass name, the one whose ID sorts first provides it
// and Open warns.
func (h *Host) Passes() *graph.Passes { return h.passes }

// declarePasses puts the builtin passes and the passes of every usable
// plugin into the registry. Only Open calls it, after sorting.
func (h *Host) declarePasses() {
	h.passes = graph.NewPasses()
	if _, err := h.passes.Register(graph.FuseDesc, graph.FusePass()); err != nil {
		panic(err) // a builtin pass that does not register is a bug
	}
	for _, rec := range h.sorted {
		if rec.unusable != nil {
			continue
		}
		for _, d := range rec.info.Passes {
			if _, err := declarePass(h.passes, d, rec.id, passProvider{h, rec.id}); err != nil {
				h.log.Warn("pass declared twice; ignoring this plugin's", "plugin", rec.id, "pass", d.Name, "err", err)
			}
		}
	}
}

// declarePass declares a pass that a plugin provides on demand (see
// package graph).
var declarePass = friend.Get[func(*graph.Passes, schema.Pass, string, lazy.Provider[any]) (func(), error)]()

// checkPass checks a pass a plugin registers as graph.Passes' Register
// would: a valid descriptor, and code that implements its kind.
var checkPass = friend.Get[func(schema.Pass, any) error]()

// passProvider starts plugin id to provide its passes.
type passProvider struct {
	h  *Host
	id string
}

// Provide implements lazy.Provider.
func (p passProvider) Provide(ctx context.Context, name string) (any, func() error, error) {
	return fromTable[passTable](ctx, p.h, p.id, passesInterface, "pass", name)
}

// RegisterPass implements plugin.Registrar.
func (hd *handle) RegisterPass(name string, pass any) error {
	h, rec := hd.h, hd.rec
	fail := func(sentinel error, format string, args ...any) error {
		return fmt.Errorf("dynop: plugin %q: RegisterPass %q: %w: "+format, append([]any{rec.id, name, sentinel}, args...)...)
	}
	desc, ok := rec.info.Pass(name)
	if !ok {
		var names []string
		for _, d := range rec.info.Passes {
			names = append(names, d.Name)
		}
		return fail(ErrInvalid, "its Info does not declare the pass (declares %s)", orNone(names))
	}
	if err := checkPass(desc, pass); err != nil {
		return fmt.Errorf("dynop: plugin %q: RegisterPass: %w", rec.id, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := hd.usable("RegisterPass"); err != nil {
		return err
	}
	if !rec.registering {
		return fail(ErrState, "allowed only during Start")
	}
	if _, dup := rec.passes[name]; dup {
		return fail(ErrDuplicate, "already registered")
	}
	if rec.passes == nil {
		rec.passes = make(passTable)
	}
	rec.passes[name] = pass
	return nil
}

// publishPasses checks that Start registered every pass Info declares
// and makes them live as passesInterface. h.mu is held.
func (h *Host) publishPasses(rec *record) error {
	var declared []string
	for _, d := range rec.info.Passes {
		declared = append(declared, d.Name)
	}
	return publishTable(rec, passesInterface, "pass(es)", "", declared, rec.passes)
}
