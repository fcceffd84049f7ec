package op

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
)

// Variant is one implementation of an operator backend, for the CPU
// features it needs (see package dispatch): an AVX2 build of a kernel, say,
// next to the plain C reference. An operator lists its variants per device
// in [Operator.Variants], best first, reference last; the registry picks
// the first one this CPU can run when it instantiates the operator, so a
// call costs what a call to that variant costs.
type Variant struct {
	// Name tells the variant apart: "avx512", "avx2", "scalar".
	Name string
	// Needs are the CPU features the variant uses.
	Needs dispatch.Features
	// Factory makes instances that run this variant.
	Factory Factory
}

// WithVariant makes [Registry.New] use the named variant instead of the
// best one, for benchmarks and tests. It is an error if the operator has
// no variant of that name, or the CPU cannot run it.
func WithVariant(name string) Option { return func(s *settings) { s.variant = name } }

// variantState is what a registry learns about an operator's variants on
// one device: those disabled because they disagreed with the reference.
type variantState struct {
	verified sync.Once
	mu       sync.Mutex
	disabled map[string]string // variant name → why
}

func (st *variantState) disabledCopy() map[string]string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return maps.Clone(st.disabled)
}

func (st *variantState) disable(name, why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.disabled == nil {
		st.disabled = make(map[string]string)
	}
	st.disabled[name] = why
}

// variants returns the operator's variant state for device d.
func (e *desc) variants(d schema.Device) *variantState {
	e.vmu.Lock()
	defer e.vmu.Unlock()
	if e.vstate == nil {
		e.vstate = make(map[schema.Device]*variantState)
	}
	st := e.vstate[d]
	if st == nil {
		st = &variantState{}
		e.vstate[d] = st
	}
	return st
}

func describeVariants(vs []Variant) []dispatch.Variant {
	out := make([]dispatch.Variant, len(vs))
	for i, v := range vs {
		out[i] = dispatch.Variant{Name: v.Name, Needs: v.Needs}
	}
	return out
}

// checkVariants verifies o's variants: each device's list is a valid
// dispatch list of non-nil factories for a device of the schema.
func checkVariants(o Operator) error {
	for d, vs := range o.Variants {
		if !o.Schema.HasDevice(d) {
			return fmt.Errorf("%w: operator %q: variants for device %q, which its schema does not list (%v)", schema.ErrOp, o.Schema.Name, d, o.Schema.Devices)
		}
		if err := dispatch.Check(describeVariants(vs)); err != nil {
			return fmt.Errorf("%w: operator %q on %s: %w", schema.ErrOp, o.Schema.Name, d, err)
		}
		for _, v := range vs {
			if v.Factory == nil {
				return fmt.Errorf("%w: operator %q on %s: variant %q has no factory", schema.ErrOp, o.Schema.Name, d, v.Name)
			}
		}
	}
	return nil
}

// withReferences returns o with Backends[d] set to the reference variant's
// factory where the device has variants and no backend.
func withReferences(o Operator) Operator {
	if len(o.Variants) == 0 {
		return o
	}
	o.Backends = maps.Clone(o.Backends)
	if o.Backends == nil {
		o.Backends = make(map[schema.Device]Factory)
	}
	for d, vs := range o.Variants {
		if o.Backends[d] == nil && len(vs) > 0 {
			o.Backends[d] = vs[len(vs)-1].Factory
		}
	}
	return o
}

// choose picks the factory to instantiate on dev: the backend if the
// device has no variants, else the variant forced by name or the best one
// this CPU runs that verification has not disabled.
func (r *Registry) choose(e *entry, o Operator, dev schema.Device, forced string) (Factory, string, error) {
	// Errors name neither the operator nor the plugin: New adds both.
	vs := o.Variants[dev]
	if len(vs) == 0 {
		if forced != "" {
			return nil, "", fmt.Errorf("%w: %q: the %s backend has no variants", ErrVariant, forced, dev)
		}
		return o.Backends[dev], "", nil
	}
	ch, err := dispatch.Choose(describeVariants(vs), r.cpu, e.Desc.variants(dev).disabledCopy())
	if forced != "" {
		i := slices.IndexFunc(vs, func(v Variant) bool { return v.Name == forced })
		switch {
		case i < 0:
			return nil, "", fmt.Errorf("%w: %q on %s (it has %s)", ErrVariant, forced, dev, variantNames(vs))
		case ch.Variants == nil: // the list itself is broken
			return nil, "", fmt.Errorf("%w: variants on %s: %w", schema.ErrOp, dev, err)
		case !ch.Variants[i].Runnable():
			return nil, "", fmt.Errorf("%w: variant %q on %s cannot run here: %s", errdefs.ErrUnsupported, forced, dev, ch.Variants[i].Why())
		}
		return vs[i].Factory, forced, nil
	}
	if err != nil {
		sentinel := schema.ErrOp // a broken list
		if ch.Variants != nil {
			sentinel = errdefs.ErrUnsupported
		}
		return nil, "", fmt.Errorf("%w on %s: %w", sentinel, dev, err)
	}
	return vs[ch.Index].Factory, vs[ch.Index].Name, nil
}

func variantNames(vs []Variant) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// Variants reports the variants of operator name on the chosen device
// (CPU by default): each one's needs, whether it can run, which one runs
// and why. An operator that a plugin provides is asked for them, which
// starts the plugin for the call. An operator without variants on the
// device returns a Choice with no variants.
func (r *Registry) Variants(ctx context.Context, name string, opts ...Option) (dispatch.Choice, error) {
	s := settingsOf(opts)
	e, err := r.entry(name)
	if err != nil {
		return dispatch.Choice{Index: -1}, err
	}
	o, release, err := operator(ctx, e)
	if err != nil {
		return dispatch.Choice{Index: -1}, err
	}
	defer release()
	vs := o.Variants[s.device]
	if len(vs) == 0 {
		return dispatch.Choice{Index: -1}, nil
	}
	ch, err := dispatch.Choose(describeVariants(vs), r.cpu, e.Desc.variants(s.device).disabledCopy())
	if errors.Is(err, dispatch.ErrNoVariant) && ch.Variants != nil {
		err = nil // the statuses say why
	}
	return ch, err
}
