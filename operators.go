package dynop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"maps"
	"slices"
	"strings"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
)

// operatorsInterface is the interface through which the host reaches the
// operators a started plugin registered. The host adds it to the Info of
// every plugin that declares operators; instantiating one of them
// acquires it, so an operator instance keeps its plugin started like any
// interface reference does.
var operatorsInterface = iface.Desc{
	UID:     iface.MustParseUID("6D0C9C1E-3B8B-4F4E-A7A3-0F3E54C1D2B7"),
	Name:    "dynop.Operators",
	Version: iface.V(1, 0, 0),
}

// operatorTable is a started plugin's implementation of
// operatorsInterface: its operators by name.
type operatorTable map[string]op.Operator

// withTableInterfaces returns info with operatorsInterface and
// passesInterface added to its interfaces if it declares operators or
// passes.
func withTableInterfaces(info schema.Plugin) schema.Plugin {
	for _, t := range []struct {
		desc     iface.Desc
		declares bool
	}{{operatorsInterface, len(info.Operators) > 0}, {passesInterface, len(info.Passes) > 0}} {
		if _, ok := info.Provides(t.desc.UID); t.declares && !ok {
			info.Interfaces = append(slices.Clip(info.Interfaces), t.desc)
		}
	}
	return info
}

// fromTable starts plugin id, if need be, through the table interface
// desc and returns the entry name of its table (registered operators or
// passes) and the release of the reference that keeps it started.
func fromTable[M ~map[string]V, V any](ctx context.Context, h *Host, id string, desc iface.Desc, what, name string) (V, func() error, error) {
	var zero V
	impl, ref, err := h.Acquire(ctx, id, desc.UID, desc.Version)
	if err != nil {
		return zero, nil, err
	}
	v, ok := impl.(M)[name]
	if !ok { // publishTable makes this impossible
		return zero, nil, errors.Join(fmt.Errorf("dynop: %w: started plugin %q has no %s %q", ErrNotFound, id, what, name), ref.Release())
	}
	return v, ref.Release, nil
}

// publishTable checks that Start registered every name in declared
// into table and makes the table live as the interface desc; what names
// the entries, problem says what a missing one is. h.mu is held.
func publishTable[M ~map[string]V, V any](rec *record, desc iface.Desc, what, problem string, declared []string, table M) error {
	if len(declared) == 0 {
		return nil
	}
	var missing []string
	for _, name := range declared {
		if _, ok := table[name]; !ok {
			missing = append(missing, name)
		}
	}
	if missing != nil {
		return fmt.Errorf("dynop: start plugin %q: %w: %sInfo declares %s that Start did not register: %s",
			rec.id, ErrNotFound, problem, what, strings.Join(missing, ", "))
	}
	if rec.entry(desc.UID) == nil {
		rec.live = append(rec.live, &entry{rec: rec, desc: desc, impl: table})
	}
	return nil
}

// Operators returns the host's operator registry: every operator that the
// usable plugins declare, by name. Instantiating one ([op.Registry.New])
// starts its plugin if need be; closing the last instance (and releasing
// every other reference) stops it. If two plugins declare the same
// operator name, the one whose ID sorts first provides it and Open warns.
// Operators registered directly on the registry belong to no plugin.
func (h *Host) Operators() *op.Registry { return h.ops }

// NewOperator instantiates operator name with args; see
// [op.Registry.New]. Close the instance when done with it.
func (h *Host) NewOperator(ctx context.Context, name string, args schema.Args, opts ...op.Option) (*op.Instance, error) {
	return h.ops.New(ctx, name, args, opts...)
}

// declareOperators puts the operators of every usable plugin into the
// registry, then those of unsupported and untrusted plugins that no usable
// plugin provides, so that asking for one says why it cannot run (the
// plugin's state and reason) rather than that it does not exist. Only Open
// calls it, after sorting.
func (h *Host) declareOperators() {
	for _, rec := range h.sorted {
		if rec.unusable != nil {
			continue
		}
		for _, s := range rec.info.Operators {
			if _, err := declareOperator(h.ops, s, rec.id, operatorProvider{h, rec.id}); err != nil {
				h.log.Warn("operator declared twice; ignoring this plugin's", "plugin", rec.id, "operator", s.Name, "err", err)
			}
		}
	}
	for _, rec := range h.sorted {
		if rec.state != StateUnsupported && rec.state != StateUntrusted {
			continue
		}
		for _, s := range rec.info.Operators {
			if _, err := h.ops.Lookup(s.Name); err != nil {
				declareOperator(h.ops, s, rec.id, operatorProvider{h, rec.id}) // its Provide fails with the plugin's reason
			}
		}
	}
}

// declareOperator declares an operator that a plugin provides on demand
// (see package op).
var declareOperator = friend.Get[func(*op.Registry, schema.Op, string, lazy.Provider[op.Operator]) (func(), error)]()

// checkBackends checks an operator a plugin registers as op.Registry's
// Register would: a valid schema, a backend for each of its devices and
// no other, well-formed variants.
var checkBackends = friend.Get[func(op.Operator) error]()

// operatorProvider starts plugin id to provide its operators.
type operatorProvider struct {
	h  *Host
	id string
}

// Provide implements lazy.Provider.
func (p operatorProvider) Provide(ctx context.Context, name string) (op.Operator, func() error, error) {
	return fromTable[operatorTable](ctx, p.h, p.id, operatorsInterface, "operator", name)
}

// RegisterOperator implements plugin.Registrar.
func (hd *handle) RegisterOperator(o op.Operator) error {
	h, rec := hd.h, hd.rec
	fail := func(sentinel error, format string, args ...any) error {
		return fmt.Errorf("dynop: plugin %q: RegisterOperator %q: %w: "+format, append([]any{rec.id, o.Schema.Name, sentinel}, args...)...)
	}
	declared, ok := rec.info.Operator(o.Schema.Name)
	if !ok {
		var names []string
		for _, s := range rec.info.Operators {
			names = append(names, s.Name)
		}
		return fail(ErrInvalid, "a backend without a schema: its Info does not declare the operator (declares %s)", orNone(names))
	}
	if len(o.Schema.Devices) == 0 {
		o.Schema.Devices = declared.Devices
	}
	if diff := schemaDiff(declared, &o.Schema); diff != "" {
		return fail(ErrInvalid, "schema differs from the one its Info declares: %s", diff)
	}
	if err := checkBackends(o); err != nil {
		return fmt.Errorf("dynop: plugin %q: RegisterOperator: %w", rec.id, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := hd.usable("RegisterOperator"); err != nil {
		return err
	}
	if !rec.registering {
		return fail(ErrState, "allowed only during Start")
	}
	if _, dup := rec.ops[o.Schema.Name]; dup {
		return fail(ErrDuplicate, "already registered")
	}
	if rec.ops == nil {
		rec.ops = make(operatorTable)
	}
	o.Backends = maps.Clone(o.Backends)
	rec.ops[o.Schema.Name] = o
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// schemaDiff names the top-level fields in which two schemas differ, with
// both values, comparing their JSON forms; "" if they agree.
func schemaDiff(a, b *schema.Op) string {
	ja, jb := jsonFields(a), jsonFields(b)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(ja)) {
		if string(ja[k]) != string(jb[k]) {
			diffs = append(diffs, fmt.Sprintf("%s: %s ≠ %s", k, ja[k], jb[k]))
		}
	}
	for k := range jb {
		if _, ok := ja[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: (none) ≠ %s", k, jb[k]))
		}
	}
	return strings.Join(diffs, "; ")
}

func jsonFields(s *schema.Op) map[string]json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil { // a schema that cannot be written differs from any other
		return map[string]json.RawMessage{"(json)": json.RawMessage(fmt.Sprintf("%q", err.Error()))}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m
}

// publishOperators checks that Start registered every operator Info
// declares and makes them live as operatorsInterface. h.mu is held.
func (h *Host) publishOperators(rec *record) error {
	var declared []string
	for _, s := range rec.info.Operators {
		declared = append(declared, s.Name)
	}
	return publishTable(rec, operatorsInterface, "operator(s)", "a schema without a backend: ", declared, rec.ops)
}
