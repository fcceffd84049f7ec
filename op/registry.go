package op

import (
	"context"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/schema"
)

// Factory creates an operator implementation from validated arguments.
type Factory func(args *schema.Values) (Impl, error)

// Operator is an operator ready to instantiate: its schema and a factory
// per device. Registering one whose schema lists a device without a
// backend, or with a backend for a device its schema does not list, is an
// error.
type Operator struct {
	Schema   schema.Op
	Backends map[schema.Device]Factory
	// Variants lists, for a device whose backend comes in CPU-specific
	// implementations, every implementation, best first, the reference
	// last (see [Variant]). Backends[d] is then the reference's factory;
	// Register fills it in when it is nil.
	Variants map[schema.Device][]Variant
}

// Entry is what a registry knows about one operator.
type Entry struct {
	Schema schema.Op `json:"schema"`
	// Plugin is the ID of the plugin that provides the operator, or "" if
	// it was registered directly.
	Plugin string `json:"plugin,omitempty"`
}

// entry is one operator in a registry: registered with its backends, or
// declared with a provider.
type entry = lazy.Entry[*desc, Operator]

// desc is what a registry keeps with an operator besides its backends:
// its schema, normalized, and the state of its variants on each device.
type desc struct {
	schema schema.Op

	vmu    sync.Mutex
	vstate map[schema.Device]*variantState
}

// Options configures a Registry.
type Options struct {
	// Logger receives warnings, such as deprecated argument names. Nil
	// means slog.Default().
	Logger *slog.Logger
	// Devices are the devices this machine has. Empty means CPU only.
	Devices []schema.Device
	// MaxSampleBytes bounds the size of one output sample that an
	// operator's Setup may ask for, so that a plugin's mistake (or a
	// hostile file) is an error rather than an allocation that takes the
	// process down. Zero means 4 GiB.
	MaxSampleBytes int64
	// CPU is what operators' variants may use; nil means
	// [dispatch.Host]: every feature this CPU has.
	CPU *dispatch.CPU
	// VerifyVariants checks, at an operator's first Run, every variant
	// this CPU can run against the reference variant on random inputs
	// shaped like the real ones, and disables (with a warning) those
	// that fail or disagree: integer outputs must match exactly, floating
	// ones within [Agree]'s tolerance. It is the DYNOP_VERIFY_VARIANTS
	// self-check (after liboil).
	VerifyVariants bool
	// NotFound is added to the error of an operator name the registry
	// does not have when no operator is close to it or none has its
	// prefix: a host says where it looked for plugins, since a plugin
	// that was not found is the likely cause.
	NotFound string
}

// defaultMaxSampleBytes is the default of Options.MaxSampleBytes: 4 GiB.
const defaultMaxSampleBytes = 4 << 30

// Registry maps operator names to operators. It is safe for concurrent
// use.
type Registry struct {
	log      *slog.Logger
	devices  []schema.Device
	maxBytes int64
	cpu      dispatch.CPU
	verify   bool
	notFound string

	ops *lazy.Registry[*desc, Operator]
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	r := &Registry{log: opts.Logger, devices: opts.Devices, maxBytes: opts.MaxSampleBytes, verify: opts.VerifyVariants, notFound: opts.NotFound, ops: lazy.New(duplicate)}
	if opts.CPU != nil {
		r.cpu = *opts.CPU
	} else {
		r.cpu = dispatch.Host()
	}
	if r.maxBytes <= 0 {
		r.maxBytes = defaultMaxSampleBytes
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if len(r.devices) == 0 {
		r.devices = []schema.Device{schema.CPU}
	}
	return r
}

// Register adds an operator with its backends. Its schema's Devices, if
// empty, become the devices of its backends; otherwise they must match
// them exactly. Errors wrap [schema.ErrOp] or [dynop.ErrDuplicate].
func (r *Registry) Register(o Operator) error {
	o = withReferences(o)
	if len(o.Schema.Devices) == 0 {
		o.Schema.Devices = slices.Sorted(maps.Keys(o.Backends))
	}
	if err := checkBackends(o); err != nil {
		return err
	}
	s, err := normalized(o.Schema)
	if err != nil {
		return err
	}
	_, err = r.ops.Add(s.Name, &entry{Desc: &desc{schema: s}, Value: Operator{Schema: s, Backends: maps.Clone(o.Backends), Variants: maps.Clone(o.Variants)}})
	return err
}

// checkBackends verifies that o's schema is valid and that o has a
// non-nil backend (or a list of variants) for every device its schema
// lists and for no other: a schema without a backend, or a backend without
// a schema, is an error wrapping [schema.ErrOp]. So is a malformed list of
// variants.
func checkBackends(o Operator) error {
	if err := o.Schema.Validate(); err != nil {
		return err
	}
	if err := checkVariants(o); err != nil {
		return err
	}
	o = withReferences(o)
	if len(o.Backends) == 0 {
		return fmt.Errorf("%w: operator %q: no backends: a schema needs a factory for at least one device", schema.ErrOp, o.Schema.Name)
	}
	for _, d := range o.Schema.Devices {
		if o.Backends[d] == nil {
			return fmt.Errorf("%w: operator %q: schema lists device %s, which has no backend", schema.ErrOp, o.Schema.Name, d)
		}
	}
	for d := range o.Backends {
		if !o.Schema.HasDevice(d) {
			return fmt.Errorf("%w: operator %q: backend for device %q, which its schema does not list (%v)", schema.ErrOp, o.Schema.Name, d, o.Schema.Devices)
		}
	}
	return nil
}

// declare adds an operator known only by its schema, provided by plugin
// through p when it is instantiated (a host starts the plugin, and the
// release p returns lets it stop), and returns a function that removes
// it. Errors wrap [schema.ErrOp] or [dynop.ErrDuplicate]. Only a host
// declares operators: it gets this method through package friend (see
// init), as
//
//	friend.Get[func(*op.Registry, schema.Op, string, lazy.Provider[op.Operator]) (func(), error)]()
func (r *Registry) declare(s schema.Op, plugin string, p lazy.Provider[Operator]) (remove func(), err error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("%w: operator %q: declared without a provider", schema.ErrOp, s.Name)
	}
	s, err = normalized(s)
	if err != nil {
		return nil, err
	}
	return r.ops.Add(s.Name, &entry{Desc: &desc{schema: s}, Plugin: plugin, Provider: p})
}

func init() {
	friend.Set((*Registry).declare)
	friend.Set(checkBackends) // a host checks what a plugin registers as Register would
}

// operator returns e's operator: the one registered, or the one its
// provider gives (starting its plugin), with a release function that lets
// the plugin stop again.
func operator(ctx context.Context, e *entry) (Operator, func() error, error) {
	o, release, err := e.Get(ctx, e.Desc.schema.Name)
	if err != nil {
		return Operator{}, nil, fmt.Errorf("op: operator %q: plugin %q: %w", e.Desc.schema.Name, e.Plugin, err)
	}
	if e.Declared() {
		o = withReferences(o)
	}
	return o, release, nil
}

// duplicate is the error of adding an operator whose name old has.
func duplicate(name string, old *entry) error {
	return fmt.Errorf("%w: operator %q is already registered%s", errdefs.ErrDuplicate, name, from(old.Plugin))
}

func from(plugin string) string {
	if plugin == "" {
		return ""
	}
	return fmt.Sprintf(" by plugin %q", plugin)
}

// Lookup returns the operator called name. An unknown name is an error
// wrapping [dynop.ErrNotFound], with a "did you mean" for a near miss.
func (r *Registry) Lookup(name string) (Entry, error) {
	e, err := r.entry(name)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Schema: e.Desc.schema, Plugin: e.Plugin}, nil
}

func (r *Registry) entry(name string) (*entry, error) {
	if e, ok := r.ops.Get(name); ok {
		return e, nil
	}
	names := r.ops.Names()
	e := &NotFoundError{Name: name, Suggestions: suggestOperators(name, names)}
	prefix, _, dotted := strings.Cut(name, ".")
	if len(e.Suggestions) == 0 || dotted && !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix+".") }) {
		e.Searched = r.notFound
	}
	return nil, e
}

// NotFoundError is the error of an operator name that no operator of the
// registry has: it wraps [dynop.ErrNotFound], suggests the operators the
// name may have meant, and, where no operator is close or none has the
// name's prefix (no plugin that provides such operators was found), says
// where the host looked for plugins ([Options.NotFound]).
type NotFoundError struct {
	Name string
	// Suggestions are the operators the name may have meant: those
	// whose name after the prefix is the name's (Resize: image.Resize,
	// imgproc.Resize), else the closest by spelling.
	Suggestions []string
	// Searched says where the host looked for plugins ([Options.NotFound]), or is
	// empty.
	Searched string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("op: operator %v: %q", errdefs.ErrNotFound, e.Name)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + english.Quoted(e.Suggestions, "or") + "?"
	}
	if e.Searched != "" {
		msg += "; " + e.Searched
	}
	return msg
}

// Unwrap returns [dynop.ErrNotFound].
func (e *NotFoundError) Unwrap() error { return errdefs.ErrNotFound }

// suggestOperators returns the operators that name, which none has, may
// have meant: those whose name after the prefix ("Resize" of
// "imgproc.Resize") is name's after its prefix, if any (ignoring case);
// else the closest to name by spelling; else those whose name after the
// prefix is closest to name's.
func suggestOperators(name string, names []string) []string {
	base := func(n string) string { return n[strings.LastIndex(n, ".")+1:] }
	want := base(name)
	var out []string
	for _, n := range names {
		if strings.EqualFold(base(n), want) {
			out = append(out, n)
		}
	}
	if len(out) > 0 {
		return out
	}
	if near := suggest.Nearest(name, names); near != "" {
		return []string{near}
	}
	bases := make([]string, len(names))
	for i, n := range names {
		bases[i] = base(n)
	}
	if near := suggest.Nearest(want, bases); near != "" {
		for i, b := range bases {
			if b == near {
				out = append(out, names[i])
			}
		}
	}
	return out
}

// List returns every operator, sorted by name.
func (r *Registry) List() []Entry {
	es := r.ops.Entries()
	list := make([]Entry, len(es))
	for i, e := range es {
		list[i] = Entry{Schema: e.Desc.schema, Plugin: e.Plugin}
	}
	return list
}

// hasDevice reports whether this machine has device d.
func (r *Registry) hasDevice(d schema.Device) bool { return slices.Contains(r.devices, d) }

// Option configures [Registry.New] and [Registry.Check].
type Option func(*settings)

type settings struct {
	device  schema.Device
	variant string
}

// OnDevice picks the device whose backend to use; the default is CPU.
func OnDevice(d schema.Device) Option { return func(s *settings) { s.device = d } }

// Check validates what [Registry.New] would validate before running any
// operator or plugin code: the name, the device and the arguments.
func (r *Registry) Check(name string, args schema.Args, opts ...Option) (*schema.Values, error) {
	_, _, v, err := r.check(name, args, opts)
	return v, err
}

// settingsOf applies opts to the default settings.
func settingsOf(opts []Option) settings {
	s := settings{device: schema.CPU}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func (r *Registry) check(name string, args schema.Args, opts []Option) (*entry, schema.Device, *schema.Values, error) {
	s := settingsOf(opts)
	e, err := r.entry(name)
	if err != nil {
		return nil, "", nil, err
	}
	switch {
	case !e.Desc.schema.HasDevice(s.device):
		return nil, "", nil, fmt.Errorf("op: operator %q on device %s: %w: it has no %s backend (devices: %s)",
			name, s.device, errdefs.ErrUnsupported, s.device, devList(e.Desc.schema.Devices))
	case !r.hasDevice(s.device):
		return nil, "", nil, fmt.Errorf("op: operator %q on device %s: %w: this machine has no %s device (it has: %s)",
			name, s.device, errdefs.ErrUnsupported, s.device, devList(r.devices))
	}
	v, err := e.Desc.schema.Check(args, r.log)
	if err != nil {
		return nil, "", nil, err
	}
	return e, s.device, v, nil
}

func devList(ds []schema.Device) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = string(d)
	}
	return strings.Join(parts, ", ")
}

// New instantiates operator name with args on the chosen device (CPU by
// default). It checks everything [Registry.Check] checks first; then, for an
// operator a plugin provides, it starts the plugin if need be, and the
// instance keeps the plugin started until it is closed. Errors name the
// operator: [dynop.ErrNotFound], [dynop.ErrUnsupported],
// [schema.ErrArgument], the plugin's start error, or the factory's error
// ([dynop.ErrPanic] if it panicked).
func (r *Registry) New(ctx context.Context, name string, args schema.Args, opts ...Option) (*Instance, error) {
	s := settingsOf(opts)
	e, dev, vals, err := r.check(name, args, opts)
	if err != nil {
		return nil, err
	}
	o, release, err := operator(ctx, e)
	if err != nil {
		return nil, err
	}
	in := &Instance{schema: vals.Schema(), plugin: e.Plugin, device: dev, args: vals, maxBytes: r.maxBytes}
	factory, variant, err := r.choose(e, o, dev, s.variant)
	in.variant = variant
	if err != nil {
		err = in.fail("", err)
	} else if factory == nil {
		err = in.failf("create", "%w: the started plugin has no %s backend", errdefs.ErrUnsupported, dev)
	} else {
		err = in.guard("create", func() (err error) { in.impl, err = factory(vals); return err })
		if err == nil && in.impl == nil {
			err = in.failf("create", "%w: the factory returned no implementation", schema.ErrOp)
		}
	}
	if err != nil {
		return nil, joinRelease(err, release)
	}
	in.shared = &shared{impl: in.impl, release: release}
	in.shared.refs.Store(1)
	if vs := o.Variants[dev]; r.verify && dev == schema.CPU && s.variant == "" && len(vs) > 1 { // random inputs are made on the CPU
		in.verify = &pendingVerify{r: r, st: e.Desc.variants(dev), variants: vs}
	}
	return in, nil
}
