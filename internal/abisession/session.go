// Package abisession is what a started plugin's session needs on the
// host side of dynop.h, written once for the native and the WebAssembly
// loader: the gate that admits calls into the plugin's code and lets a
// stop wait for them, the table of references the plugin acquired, the
// checks of register_operator and add_interface against its info, the
// error of a failed plugin call, and the check of what setup wrote.
// Package abihost reads the structs; this package holds the rules of the
// calls.
package abisession

import (
	"encoding/json"
	"fmt"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/abihost"
	"sync"
	"sync/atomic"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Gate admits calls into a started plugin's code (operator functions,
// passes, interface calls the host makes) and lets Stop wait for those
// in flight, so that no call runs the plugin's code once its deregister
// (and unload) begins. Enter never waits, unlike a read lock, so calls
// may nest (a pass that instantiates one of its plugin's operators) even
// while Stop waits for the outer call: the inner one fails instead of
// deadlocking. The zero Gate is open.
type Gate struct {
	calls   atomic.Int64
	stopped atomic.Bool
	mu      sync.Mutex
	idle    *sync.Cond // on mu, made by Stop
}

// Enter begins a call; it returns false if the plugin stopped, and
// otherwise holds Stop off until Leave. Enter and Stop each write one
// variable and then read the other's, so at least one sees the other:
// either the call backs off or Stop waits for it.
func (g *Gate) Enter() bool {
	g.calls.Add(1)
	if g.stopped.Load() {
		g.Leave()
		return false
	}
	return true
}

// Leave ends a call begun by a successful Enter.
func (g *Gate) Leave() {
	if g.calls.Add(-1) == 0 && g.stopped.Load() {
		g.mu.Lock()
		if g.idle != nil {
			g.idle.Broadcast()
		}
		g.mu.Unlock()
	}
}

// Stop closes the gate and waits for the calls in flight to leave.
func (g *Gate) Stop() {
	g.stopped.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle == nil {
		g.idle = sync.NewCond(&g.mu)
	}
	for g.calls.Load() > 0 {
		g.idle.Wait()
	}
}

// Stopped reports whether Stop was called.
func (g *Gate) Stopped() bool { return g.stopped.Load() }

// refTokens numbers the references plugins hold, process-wide, so that a
// token from one start (or one plugin) never names a reference of
// another.
var refTokens atomic.Uint64

// Refs are the interface references a started plugin acquired through
// its host table, by the token (dynop_ref) it was given.
type Refs struct {
	mu   sync.Mutex
	held map[uint64]plugin.Ref
}

// Add keeps ref and returns its token, never 0.
func (r *Refs) Add(ref plugin.Ref) uint64 {
	token := refTokens.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = make(map[uint64]plugin.Ref)
	}
	r.held[token] = ref
	return token
}

// Release gives back the reference of token. During deregister
// (deferred) it only forgets it: the host releases what a plugin holds
// after the plugin is unloaded, so what it depended on outlives its code
// even if its deregister releases first and uses the interface after.
// An unknown token is an error wrapping dynop.ErrReleased.
func (r *Refs) Release(token uint64, deferred bool) error {
	r.mu.Lock()
	ref, ok := r.held[token]
	delete(r.held, token)
	r.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("release(%d): %w: no such reference, or released already", token, errdefs.ErrReleased)
	case deferred:
		return nil
	}
	return ref.Release()
}

// CheckOperator checks an operator backend a plugin registers against
// its info: a schema of that name that lists the device. It returns the
// schema; errors wrap dynop.ErrInvalid and say what is wrong.
func CheckOperator(info *schema.Plugin, name string, device schema.Device) (*schema.Op, error) {
	s, ok := info.Operator(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("register_operator %q (%s): %w: a backend without a schema: the plugin's info does not declare it", name, device, schema.ErrPlugin)
	case !s.HasDevice(device):
		return nil, fmt.Errorf("register_operator %q (%s): %w: the schema lists devices %v", name, device, schema.ErrPlugin, s.Devices)
	}
	return s, nil
}

// CheckInterface checks the header of an interface table a plugin adds
// against its info: an interface the info declares, with its version,
// and a size that holds the header. It returns the declared interface;
// errors wrap dynop.ErrInvalid, ErrABI or dynop.ErrVersion.
func CheckInterface(info *schema.Plugin, h abi.Header) (iface.Desc, error) {
	desc, ok := info.Provides(h.Type)
	switch {
	case !ok:
		return iface.Desc{}, fmt.Errorf("add_interface {%s}: %w: the plugin's info declares no interface with that UID", h.Type, schema.ErrPlugin)
	case h.Size < abi.HeaderSize:
		return iface.Desc{}, fmt.Errorf("add_interface %s: %w: its header says %d bytes, less than the header itself (%d)", desc, errdefs.ErrABI, h.Size, abi.HeaderSize)
	case h.Version != desc.Version:
		return iface.Desc{}, fmt.Errorf("add_interface %s: %w: the table has version %s", desc, iface.ErrVersion, h.Version)
	}
	return desc, nil
}

// CallError is the error of a plugin function that returned rc: the
// plugin's kind ("native", "wasm"), ID and call, and the message it gave
// with set_error. sample, if not negative, is the sample the call failed
// on. last is the host error the plugin got during the call, if any: the
// error unwraps to it if it has rc's code (the plugin passed it on).
func CallError(kind, pluginID, call string, rc abi.Result, msg string, sample int, last error) *abi.ResultError {
	if sample >= 0 {
		call = fmt.Sprintf("%s (sample %d)", call, sample)
	}
	e := &abi.ResultError{Kind: kind, Plugin: pluginID, Call: call, Result: rc, Message: msg}
	if last != nil && abi.ResultOf(last) == rc {
		e.Cause = last
	}
	return e
}

// MaxScratch is the most scratch memory, in bytes, that an operator's
// setup may ask for one sample (DYNOP_OPERATOR_SCRATCH): more is taken
// for a broken shape rather than a need.
const MaxScratch = 1 << 40

// SetupOutput is what a plugin's setup wrote for one output of one
// sample: the dtype, the ndim, and the shape array to read ndim elements
// of.
type SetupOutput struct {
	DType tensor.DType
	NDim  int
	Dim   func(x int) int64
}

// OutputDescs checks what a plugin's setup wrote for each output of each
// of samples samples (at(j, i) is sample j's output i) and returns the
// outputs' descriptions: dtype and ndim within the ABI's, the same in
// every sample, and the schema's layout where it fits. Errors start with
// "sample N" (the caller's error names the operator and the step) and
// wrap dynop's ErrABI or schema.ErrOp.
func OutputDescs(s *schema.Op, samples int, at func(sample, output int) SetupOutput) ([]op.OutputDesc, error) {
	descs := make([]op.OutputDesc, len(s.Outputs))
	for i := range descs {
		d := &descs[i]
		d.Shapes = make([][]int64, samples)
		for j := range samples {
			o := at(j, i)
			if o.NDim < 0 || o.NDim > tensor.MaxNDim {
				return nil, fmt.Errorf("sample %d: %w: output %d has ndim %d, not 0 to DYNOP_MAX_NDIM (%d)", j, errdefs.ErrABI, i, o.NDim, tensor.MaxNDim)
			}
			if !o.DType.Known() {
				return nil, fmt.Errorf("sample %d: %w: output %d has dtype %s, which is not a DLPack type this host knows", j, errdefs.ErrABI, i, o.DType)
			}
			if j == 0 {
				d.DType = o.DType
			} else if o.DType != d.DType || o.NDim != len(d.Shapes[0]) {
				return nil, fmt.Errorf("sample %d: %w: output %d is %s with %d dimension(s); sample 0's is %s with %d", j, schema.ErrOp, i, o.DType, o.NDim, d.DType, len(d.Shapes[0]))
			}
			d.Shapes[j] = make([]int64, o.NDim)
			for x := range o.NDim {
				d.Shapes[j][x] = o.Dim(x)
			}
		}
		if l := s.Outputs[i].Layout; samples > 0 && len(l) == len(d.Shapes[0]) {
			d.Layout = l
		}
	}
	return descs, nil
}

// LoaderData decodes into v the loader's own data that the manifest of
// f keeps (none: v is left as it is); loader ("native", "wasm") begins
// the error, which wraps discover.ErrManifest.
func LoaderData(loader string, f *discover.File, v any) error {
	if len(f.Loader) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Loader, v); err != nil {
		return fmt.Errorf("%s: %s: %w: the manifest's loader data: %v", loader, f.Path, discover.ErrManifest, err)
	}
	return nil
}

// CheckVariants checks a list of variants a plugin gave (an operator's,
// or one for select_variant; what names it) as package dispatch checks
// one: valid unique names, CPU features this dynop knows. It returns the
// variants' descriptions for dispatch.Choose; errors wrap ErrABI.
func CheckVariants(what string, vs []abihost.Variant) ([]dispatch.Variant, error) {
	desc := make([]dispatch.Variant, len(vs))
	for i, v := range vs {
		desc[i] = dispatch.Variant{Name: v.Name, Needs: dispatch.Features(v.Needs)}
	}
	if err := dispatch.Check(desc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errdefs.ErrABI, what, err)
	}
	return desc, nil
}

// CheckOperatorVariants checks the variants of an operator a plugin
// registers, if it has any (see CheckVariants), naming the operator in
// errors as abihost.DecodeOperator does.
func CheckOperatorVariants(o abihost.Operator) error {
	if o.Variants == nil {
		return nil
	}
	if _, err := CheckVariants("variants", o.Variants); err != nil {
		return fmt.Errorf("register_operator %q (%s): %w", o.Name, o.Device, err)
	}
	return nil
}

// Samples returns how many samples a call over inputs computes: the
// batches' length, or 1 for an operator without inputs, which makes one
// sample. The loaders call a plugin's run per sample.
func Samples(inputs []*tensor.Batch) int {
	if len(inputs) == 0 {
		return 1
	}
	return inputs[0].Len()
}
