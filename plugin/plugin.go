// Package plugin is what a dynop plugin is made of: its info (a
// [schema.Plugin]), the lifecycle a host drives it through (Start, then
// optionally Started, CanUnload, Stop and Unload), and the [Registrar] it
// sees while it runs.
//
// # Lifecycle
//
// A host enumerates plugins by their Info and starts none of them. The first
// request for one of a plugin's interfaces starts it: the host calls
// [Plugin.Start], which adds the plugin's interfaces with
// [Registrar.AddInterface] and may acquire other plugins' interfaces (starting
// those first). If Start fails or panics, everything it added or
// acquired is undone and the plugin stays not started. After a successful
// Start the host calls Started, if the plugin has it.
//
// Interfaces are reference counted. When the last reference to the last
// interface of a plugin is released, the host asks CanUnload; if the plugin
// agrees (or lacks the method), the host calls the clear-callbacks that
// others registered against it with [Registrar.OnUnload], then Stop, then
// Unload, and finally releases the references the plugin itself held, which
// may stop the plugins it depended on. A plugin that answers CanUnload with
// false stays started and is asked again on the next release and at close.
//
// The optional steps are found by type assertion, as database/sql finds a
// driver's optional capabilities: [Stopper], [StartListener],
// [UnloadChecker] and [Unloader].
//
// # Go plugins
//
// A Go plugin compiled into the host registers itself from an init function
// with [Register], as database/sql drivers do:
//
//	func init() { plugin.Register(textPlugin{}) }
package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/dynop/dynop/dispatch"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
)

// Plugin is the one thing every plugin implements.
type Plugin interface {
	// Info describes the plugin. It is called when the host enumerates
	// plugins and must be cheap, side-effect free and always return the
	// same value.
	Info() schema.Plugin
	// Start starts the plugin: it adds every interface that Info lists
	// with h.AddInterface and every operator with h.RegisterOperator, and
	// may acquire other plugins' interfaces
	// through h. It should do no heavy lifting; interfaces do that.
	// An error (or a panic) leaves the plugin not started: the host removes
	// what it added and releases what it acquired.
	Start(ctx context.Context, h Registrar) error
}

// Stopper is implemented by plugins that have work to do when they
// stop. Stop runs after the clear-callbacks and before Unload; the
// host removes any interface the plugin did not remove itself.
type Stopper interface {
	Stop(ctx context.Context) error
}

// StartListener is implemented by plugins that want to know when they are
// fully started: Start succeeded and their interfaces are live.
type StartListener interface {
	Started(ctx context.Context)
}

// UnloadChecker is implemented by plugins that may not be ready to stop
// when their last reference goes, for example while work they handed out
// is still running. CanUnload false keeps the plugin started; the host asks
// again on the next release and at close, where it stops the plugin anyway.
type UnloadChecker interface {
	CanUnload() bool
}

// Unloader is implemented by plugins with final clean-up to do. Unload is
// the last call the host makes into a plugin before its code may go away.
//
// The lifecycle steps of a stop run on the goroutine whose Release dropped
// the last reference, so Stop and Unload must not wait for a
// goroutine that might be the one releasing it.
type Unloader interface {
	Unload(ctx context.Context) error
}

// Acquirer hands out references to plugins' interfaces. Both the host
// program's *dynop.Host and the [Registrar] a plugin sees implement it.
type Acquirer interface {
	// Acquire returns the implementation of interface uid of plugin
	// pluginID, starting the plugin if it is not started, and a reference
	// that must be released when the caller is done with it. The provided
	// interface version must be [iface.Compatible] with min.
	//
	// Code called from a plugin's Start should pass on Start's
	// context: through it the host sees that the acquisition is part of
	// that plugin's start, and reports a dependency cycle instead of
	// waiting for ever.
	Acquire(ctx context.Context, pluginID string, uid iface.UID, min iface.Version) (any, Ref, error)
}

// Registrar is the host as a plugin sees it, from its Start until it
// stops: where it registers its interfaces, operators and passes, and
// through which it reaches the host's logger, CPU features and other
// plugins. (It is not called Host: that is the host program's
// *dynop.Host.) It is safe for concurrent use. Calls on a Registrar
// after the plugin stopped fail.
type Registrar interface {
	Acquirer

	// AddInterface publishes impl as the plugin's implementation of desc.
	// It is allowed only during Start; desc must be one that Info
	// declares, with the same version.
	AddInterface(desc iface.Desc, impl any) error

	// RegisterOperator adds the backends of one of the operators Info
	// declares. It is allowed only during Start; o.Schema must equal
	// the declared schema (its Devices may be left empty) and o must have
	// a backend for each of its devices and no other. Start must
	// register every operator Info declares.
	RegisterOperator(o op.Operator) error
	// RegisterPass provides the code of pass name, one of the passes Info
	// declares: pass must implement the interface of the declared kind
	// (graph.PopulatePass, graph.PartitionPass or graph.GlobalPass). It
	// is allowed only during Start, and Start must register every
	// pass Info declares. The pass may be called whenever a graph is
	// built while the plugin is started; definitions it attaches keep the
	// plugin started until their graph closes.
	RegisterPass(name string, pass any) error
	// RemoveInterface withdraws one of the plugin's interfaces. It is
	// allowed only during Start and Stop, when no reference to
	// the interface can be held.
	RemoveInterface(uid iface.UID) error

	// OnUnload registers fn to be called before plugin pluginID stops,
	// before its Stop runs, so the caller can drop anything it holds
	// that points into that plugin without holding a reference (a cached
	// function, a registration). An empty pluginID means every plugin.
	// fn receives the ID of the plugin that is stopping. The callback is
	// removed by cancel, or when the plugin that registered it stops.
	// Callbacks must not acquire interfaces.
	OnUnload(pluginID string, fn func(pluginID string)) (cancel func(), err error)

	// Logger returns the host's logger with the plugin's ID attached.
	Logger() *slog.Logger

	// CPU returns the CPU features the plugin may use: those the CPU has,
	// less those the host turned off. A plugin that picks among
	// implementations itself passes it to dispatch.Choose.
	CPU() dispatch.CPU
}

// Acquire acquires interface def of plugin pluginID through a and returns it
// as a T. It asks for at least def.Version. If the implementation is not a
// T, the reference is released and the error wraps [iface.ErrType].
func Acquire[T any](ctx context.Context, a Acquirer, pluginID string, def iface.Def[T]) (T, Ref, error) {
	impl, ref, err := a.Acquire(ctx, pluginID, def.UID, def.Version)
	if err != nil {
		var zero T
		return zero, Ref{}, err
	}
	t, err := def.Cast(impl)
	if err != nil {
		return t, Ref{}, errors.Join(fmt.Errorf("plugin %q: %w", pluginID, err), ref.Release())
	}
	return t, ref, nil
}
