package op

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dynop/dynop/dispatch"
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

// Provider produces an operator's backends on demand. The host declares
// the operators of a plugin that is not started with a Provider that
// starts it: Provide returns the operator and a release function that
// drops the reference keeping the plugin started.
type Provider interface {
	Provide(ctx context.Context, name string) (op Operator, release func() error, err error)
}

// Entry is what a registry knows about one operator.
type Entry struct {
	Schema schema.Op `json:"schema"`
	// Plugin is the ID of the plugin that provides the operator, or "" if
	// it was registered directly.
	Plugin string `json:"plugin,omitempty"`
}

type entry struct {
	Entry
	backends map[schema.Device]Factory   // registered directly
	vars     map[schema.Device][]Variant // registered directly
	provider Provider                    // declared

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
	// process down. Zero means DefaultMaxSampleBytes.
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
}

// DefaultMaxSampleBytes is the default bound on one output sample: 4 GiB.
const DefaultMaxSampleBytes = 4 << 30

// Registry maps operator names to operators. It is safe for concurrent
// use.
type Registry struct {
	log      *slog.Logger
	devices  []schema.Device
	maxBytes int64
	cpu      dispatch.CPU
	verify   bool

	mu  sync.RWMutex
	ops map[string]*entry
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	r := &Registry{log: opts.Logger, devices: opts.Devices, maxBytes: opts.MaxSampleBytes, verify: opts.VerifyVariants, ops: make(map[string]*entry)}
	if opts.CPU != nil {
		r.cpu = *opts.CPU
	} else {
		r.cpu = dispatch.Host()
	}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxSampleBytes
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
	if err := CheckBackends(o); err != nil {
		return err
	}
	s, err := normalized(o.Schema)
	if err != nil {
		return err
	}
	return r.add(&entry{Entry: Entry{Schema: s}, backends: maps.Clone(o.Backends), vars: maps.Clone(o.Variants)})
}

// CheckBackends verifies that o's schema is valid and that o has a
// non-nil backend (or a list of variants) for every device its schema
// lists and for no other: a schema without a backend, or a backend without
// a schema, is an error wrapping [schema.ErrOp]. So is a malformed list of
// variants.
func CheckBackends(o Operator) error {
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

// Declare adds an operator known only by its schema, provided by plugin
// through p when it is instantiated. Errors wrap [schema.ErrOp] or
// [dynop.ErrDuplicate].
func (r *Registry) Declare(s schema.Op, plugin string, p Provider) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("%w: operator %q: declared without a provider", schema.ErrOp, s.Name)
	}
	s, err := normalized(s)
	if err != nil {
		return err
	}
	return r.add(&entry{Entry: Entry{Schema: s, Plugin: plugin}, provider: p})
}

// operator returns e's operator: the one registered, or the one its
// provider gives (starting its plugin), with a release function that lets
// the plugin stop again.
func (e *entry) operator(ctx context.Context) (Operator, func() error, error) {
	if e.provider == nil {
		return Operator{Schema: e.Schema, Backends: e.backends, Variants: e.vars}, func() error { return nil }, nil
	}
	o, release, err := e.provider.Provide(ctx, e.Schema.Name)
	if err != nil {
		return Operator{}, nil, fmt.Errorf("op: operator %q: plugin %q: %w", e.Schema.Name, e.Plugin, err)
	}
	return withReferences(o), release, nil
}

func (r *Registry) add(e *entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, dup := r.ops[e.Schema.Name]; dup {
		return fmt.Errorf("%w: operator %q is already registered%s", errdefs.ErrDuplicate, e.Schema.Name, from(old.Plugin))
	}
	r.ops[e.Schema.Name] = e
	return nil
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
	return e.Entry, nil
}

func (r *Registry) entry(name string) (*entry, error) {
	r.mu.RLock()
	e, ok := r.ops[name]
	r.mu.RUnlock()
	if ok {
		return e, nil
	}
	hint := ""
	if near := suggest.Nearest(name, r.names()); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", near)
	}
	return nil, fmt.Errorf("op: operator %w: %q%s", errdefs.ErrNotFound, name, hint)
}

func (r *Registry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Collect(maps.Keys(r.ops))
}

// List returns every operator, sorted by name.
func (r *Registry) List() []Entry {
	r.mu.RLock()
	list := make([]Entry, 0, len(r.ops))
	for _, e := range r.ops {
		list = append(list, e.Entry)
	}
	r.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].Schema.Name < list[j].Schema.Name })
	return list
}

// HasDevice reports whether this machine has device d.
func (r *Registry) HasDevice(d schema.Device) bool { return slices.Contains(r.devices, d) }

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
	case !e.Schema.HasDevice(s.device):
		return nil, "", nil, fmt.Errorf("op: operator %q on device %s: %w: it has no %s backend (devices: %s)",
			name, s.device, errdefs.ErrUnsupported, s.device, devList(e.Schema.Devices))
	case !r.HasDevice(s.device):
		return nil, "", nil, fmt.Errorf("op: operator %q on device %s: %w: this machine has no %s device (it has: %s)",
			name, s.device, errdefs.ErrUnsupported, s.device, devList(r.devices))
	}
	v, err := e.Schema.Check(args, r.log)
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
	o, release, err := e.operator(ctx)
	if err != nil {
		return nil, err
	}
	in := &Instance{schema: vals.Schema(), plugin: e.Plugin, device: dev, args: vals, release: release, maxBytes: r.maxBytes}
	factory, variant, err := r.choose(e, o, dev, s.variant)
	in.variant = variant
	if err != nil {
		err = fmt.Errorf("op: %s: %w", in.what(), err)
	} else if factory == nil {
		err = fmt.Errorf("op: %s: %w: the started plugin has no %s backend", in.what(), errdefs.ErrUnsupported, dev)
	} else {
		err = in.guard("create", func() (err error) { in.impl, err = factory(vals); return err })
		if err == nil && in.impl == nil {
			err = fmt.Errorf("op: %s: create: %w: the factory returned no implementation", in.what(), schema.ErrOp)
		}
	}
	if err != nil {
		return nil, joinRelease(err, release)
	}
	if vs := o.Variants[dev]; r.verify && dev == schema.CPU && s.variant == "" && len(vs) > 1 { // random inputs are made on the CPU
		in.verify = &pendingVerify{r: r, st: e.variants(dev), variants: vs}
	}
	return in, nil
}
