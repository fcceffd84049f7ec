package abihost

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// MaxStructSize bounds the size in an ABI struct's header. The structs
// are a few hundred bytes and grow by members at the end; a larger size
// is a broken header, and as an array's stride it would send the reader
// far outside the plugin's data.
const MaxStructSize = 4 << 10

// MaxString bounds the length of a string the host reads from a plugin:
// names, docs, descriptions and messages. A longer one is an ABI
// violation in an info (most likely a missing NUL), and is cut short in a
// message.
const MaxString = 64 << 10

// maxCount bounds the counts in a plugin's info: more interfaces, needs,
// operators, inputs or variants than this is a broken count, not a
// plugin.
const maxCount = 1 << 12

// reader reads structs from a plugin's memory, stopping at the first
// violation of the ABI.
type reader struct {
	m   Memory
	l   *layouts
	ps  uint32
	err error
}

func newReader(m Memory) *reader {
	ps := m.PointerSize()
	return &reader{m: m, l: layoutsFor(ps), ps: ps}
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{errdefs.ErrABI}, args...)...)
	}
}

// view is a struct read from the plugin's memory: its header and the
// bytes of the members this host knows that its size covers.
type view struct {
	addr uint64
	hdr  abi.Header
	b    []byte
	l    *structLayout
}

// has reports whether the struct is large enough to hold member i: a
// struct from before the member was added is not.
func (v view) has(i int) bool { return uint64(v.hdr.Size) >= uint64(v.l.end[i]) }

func (v view) u32(i int) uint32 {
	if !v.has(i) {
		return 0
	}
	return le.Uint32(v.b[v.l.off[i]:])
}

func (v view) u64(i int) uint64 {
	if !v.has(i) {
		return 0
	}
	return le.Uint64(v.b[v.l.off[i]:])
}

func (v view) f64(i int) float64 { return math.Float64frombits(v.u64(i)) }

// ptr returns pointer member i as an address.
func (v view) ptr(i int) uint64 {
	if !v.has(i) {
		return 0
	}
	if v.l.end[i]-v.l.off[i] == 4 {
		return uint64(le.Uint32(v.b[v.l.off[i]:]))
	}
	return le.Uint64(v.b[v.l.off[i]:])
}

func (v view) version(i int) iface.Version {
	if !v.has(i) {
		return iface.Version{}
	}
	b := v.b[v.l.off[i]:]
	return iface.Version{Major: le.Uint32(b), Minor: le.Uint32(b[4:]), Patch: le.Uint32(b[8:])}
}

func (v view) uid(i int) iface.UID {
	if !v.has(i) {
		return iface.UID{}
	}
	return iface.UID(v.b[v.l.off[i] : v.l.off[i]+16])
}

// check reads the struct at addr, checking its header: the type typ, a
// major version this host reads, and a size that covers minMember.
func (r *reader) check(what string, addr uint64, l *structLayout, typ iface.UID, minMember int) (view, bool) {
	if r.err != nil {
		return view{}, false
	}
	if addr == 0 {
		r.fail("%s is NULL", what)
		return view{}, false
	}
	hb, ok := r.m.Read(addr, abi.HeaderSize)
	if !ok {
		r.fail("%s at %#x lies outside the plugin's memory", what, addr)
		return view{}, false
	}
	h := abi.ParseHeader(hb)
	minSize := l.end[minMember]
	switch {
	case h.Type != typ:
		r.fail("%s has type UID {%s}, want {%s}: a struct of another type, or no dynop_header at its start", what, h.Type, typ)
	case h.Version.Major > structMajor:
		r.fail("%s has layout version %s, which is from the future: this host reads major version %d", what, h.Version, structMajor)
	case h.Version.Major < structMajor:
		r.fail("%s has layout version %s, older than any this host reads (major %d)", what, h.Version, structMajor)
	case h.Size < minSize:
		r.fail("%s says it is %d bytes, but its version %s needs at least %d", what, h.Size, h.Version, minSize)
	case h.Size > MaxStructSize:
		r.fail("%s says it is %d bytes, more than the %d any ABI struct may be: the size is broken", what, h.Size, MaxStructSize)
	default:
		b, ok := r.m.Read(addr, min(h.Size, l.end[len(l.end)-1]))
		if !ok {
			r.fail("%s at %#x, %d bytes, lies outside the plugin's memory", what, addr, h.Size)
			return view{}, false
		}
		return view{addr: addr, hdr: h, b: b, l: l}, true
	}
	return view{}, false
}

// str returns the C string at addr ("" for NULL); one of MaxString bytes
// or more, or one outside the plugin's memory, fails the read.
func (r *reader) str(what string, addr uint64) string {
	if addr == 0 || r.err != nil {
		return ""
	}
	if _, ok := r.m.Read(addr, 1); !ok {
		r.fail("%s at %#x lies outside the plugin's memory", what, addr)
		return ""
	}
	s, ok := r.m.CString(addr, MaxString)
	if !ok {
		r.fail("%s is longer than %d bytes, or not NUL-terminated", what, MaxString)
		return ""
	}
	return s
}

// list splits the comma-separated C list at addr, read as str reads
// strings, into its trimmed, non-empty items.
func (r *reader) list(what string, addr uint64) []string {
	var out []string
	for item := range strings.SplitSeq(r.str(what, addr), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// pointers returns the C array of n pointers at addr; a NULL array with
// a non-zero count, or an implausible count, is an ABI violation.
func (r *reader) pointers(what string, addr uint64, n uint32) []uint64 {
	if n == 0 || r.err != nil {
		return nil
	}
	if addr == 0 {
		r.fail("plugin info: %s is NULL but its count is %d", what, n)
		return nil
	}
	if n > maxCount {
		r.fail("plugin info: %s has count %d, more than %d: the count is broken", what, n, maxCount)
		return nil
	}
	b, ok := r.m.Read(addr, n*r.ps)
	if !ok {
		r.fail("plugin info: %s at %#x, %d pointers, lies outside the plugin's memory", what, addr, n)
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		if r.ps == 4 {
			out[i] = uint64(le.Uint32(b[i*4:]))
		} else {
			out[i] = le.Uint64(b[i*8:])
		}
	}
	return out
}

// structs reads the n structs of the C array at addr, each of layout l
// with a header of type typ. The array's stride is the size in its first
// element's header.
func (r *reader) structs(what string, addr uint64, n uint32, l *structLayout, typ iface.UID, minMember int) []view {
	if n == 0 || r.err != nil {
		return nil
	}
	if addr == 0 || n > maxCount {
		r.fail("%s: array is NULL or its count %d is broken", what, n)
		return nil
	}
	var stride uint64 // element 0's size, once it is checked
	out := make([]view, 0, n)
	for i := range uint64(n) {
		v, ok := r.check(fmt.Sprintf("%s[%d]", what, i), addr+i*stride, l, typ, minMember)
		if !ok {
			return nil
		}
		if i == 0 {
			stride = uint64(v.hdr.Size)
		} else if uint64(v.hdr.Size) != stride {
			r.fail("%s[%d] says it is %d bytes, but element 0 says %d: elements of one array have one size", what, i, v.hdr.Size, stride)
			return nil
		}
		out = append(out, v)
	}
	return out
}

// DecodeInfo reads the dynop_plugin_info at addr (what get_info
// returned) and everything it points to, checking every struct, and
// validates the info ([schema.Plugin.Validate]). It returns the info and
// its flags (DYNOP_PLUGIN_*). Errors wrap dynop's ErrABI (a struct that
// breaks the ABI) or [schema.ErrPlugin] (an info that breaks its rules).
func DecodeInfo(m Memory, addr uint64) (schema.Plugin, uint32, error) {
	r := newReader(m)
	info, flags := r.info(addr)
	if r.err != nil {
		return schema.Plugin{}, 0, r.err
	}
	// Nothing marshals, lists or starts an info before it is whole.
	if err := info.Validate(); err != nil {
		return schema.Plugin{}, 0, fmt.Errorf("invalid info: %w", err)
	}
	return info, flags, nil
}

func (r *reader) info(addr uint64) (schema.Plugin, uint32) {
	l := r.l
	ci, ok := r.check("plugin info (get_info's result)", addr, &l.info, typePluginInfo, infoRequirements)
	if !ok {
		return schema.Plugin{}, 0
	}
	if ci.ptr(infoID) == 0 {
		r.fail("plugin info: id is NULL")
		return schema.Plugin{}, 0
	}
	info := schema.Plugin{
		ID:          r.str("plugin info: id", ci.ptr(infoID)),
		Version:     ci.version(infoPluginVersion),
		APIVersion:  ci.version(infoAPIVersion),
		Description: r.str("plugin info: description", ci.ptr(infoDescription)),
		Author:      r.str("plugin info: author", ci.ptr(infoAuthor)),
		Build:       r.str("plugin info: build", ci.ptr(infoBuild)),
	}
	if r.err == nil && info.APIVersion.IsZero() {
		r.fail("plugin %q: api_version is 0.0.0; set it to DYNOP_API_VERSION", info.ID)
	}
	for i, d := range r.pointers("interfaces", ci.ptr(infoInterfaces), ci.u32(infoInterfaceCount)) {
		if desc, ok := r.desc(fmt.Sprintf("interfaces[%d]", i), d); ok {
			info.Interfaces = append(info.Interfaces, desc)
		}
	}
	for i, p := range r.pointers("needs", ci.ptr(infoNeeds), ci.u32(infoNeedCount)) {
		what := fmt.Sprintf("needs[%d]", i)
		n, ok := r.check(what, p, &l.need, typeNeed, needIface)
		if !ok {
			break
		}
		if n.ptr(needPlugin) == 0 {
			r.fail("%s: plugin is NULL", what)
			break
		}
		if desc, ok := r.desc(what+".iface", n.ptr(needIface)); ok {
			info.Needs = append(info.Needs, schema.Need{Plugin: r.str(what+".plugin", n.ptr(needPlugin)), Interface: desc})
		}
	}
	if p := ci.ptr(infoRequirements); p != 0 {
		if rq, ok := r.check("requirements", p, &l.requirements, typeRequirements, reqGPUMinDriver); ok {
			info.Requirements = schema.Requirements{
				OS:           r.list("requirements.os", rq.ptr(reqOS)),
				MinOSVersion: rq.version(reqMinOSVersion),
				Arch:         r.list("requirements.arch", rq.ptr(reqArch)),
				CPUFeatures:  r.list("requirements.cpu_features", rq.ptr(reqCPUFeatures)),
			}
			if rq.has(reqLibraries) { // else requirements from before libraries
				info.Requirements.Libraries = r.list("requirements.libraries", rq.ptr(reqLibraries))
			}
			gpu := schema.GPURequirements{Vendor: r.str("requirements.gpu_vendor", rq.ptr(reqGPUVendor)),
				MinArch: rq.version(reqGPUMinArch), MinDriver: rq.version(reqGPUMinDriver)}
			if gpu != (schema.GPURequirements{}) {
				info.Requirements.GPU = &gpu
			}
		}
	}
	if ci.has(infoOperators) { // else an info from before operators
		info.Operators = r.operators(ci)
	}
	if ci.has(infoPasses) { // else an info from before passes
		info.Passes = r.passes(ci)
	}
	return info, ci.u32(infoFlags)
}

func (r *reader) desc(what string, addr uint64) (iface.Desc, bool) {
	d, ok := r.check(what, addr, &r.l.desc, typeInterfaceDesc, descName)
	if !ok {
		return iface.Desc{}, false
	}
	if d.ptr(descName) == 0 {
		r.fail("%s: name is NULL", what)
		return iface.Desc{}, false
	}
	return iface.Desc{UID: d.uid(descUID), Name: r.str(what+": name", d.ptr(descName)), Version: d.version(descVersion)}, true
}

// operators reads the operator schemas of an info.
func (r *reader) operators(ci view) []schema.Op {
	l := r.l
	var out []schema.Op
	for i, p := range r.pointers("operators", ci.ptr(infoOperators), ci.u32(infoOperatorCount)) {
		what := fmt.Sprintf("operators[%d]", i)
		cs, ok := r.check(what, p, &l.schema, typeOpSchema, schemaArgs)
		if !ok {
			break
		}
		if cs.ptr(schemaName) == 0 {
			r.fail("%s: name is NULL", what)
			break
		}
		name := r.str(what+": name", cs.ptr(schemaName))
		what = fmt.Sprintf("operator %q", name)
		s := schema.Op{
			Name:           name,
			Doc:            r.str(what+": doc", cs.ptr(schemaDoc)),
			OptionalInputs: int(int32(cs.u32(schemaOptionalInputs))),
		}
		for _, d := range r.list(what+": devices", cs.ptr(schemaDevices)) {
			s.Devices = append(s.Devices, schema.Device(d))
		}
		for j, ci := range r.structs(what+" inputs", cs.ptr(schemaInputs), cs.u32(schemaInputCount), &l.input, typeOpInput, inputNDim) {
			inWhat := fmt.Sprintf("%s input %d", what, j)
			in := schema.Input{Name: r.str(inWhat+": name", ci.ptr(inputName)), Doc: r.str(inWhat+": doc", ci.ptr(inputDoc)),
				Layouts: r.list(inWhat+": layouts", ci.ptr(inputLayouts)), NDim: int(int32(ci.u32(inputNDim)))}
			for _, c := range r.list(inWhat+": channels", ci.ptr(inputChannels)) {
				n, err := strconv.Atoi(c)
				if err != nil || n < 1 {
					r.fail("%s: channels: %q is not a positive count", inWhat, c)
					continue
				}
				in.Channels = append(in.Channels, n)
			}
			for _, name := range r.list(inWhat+": dtypes", ci.ptr(inputDTypes)) {
				dt, err := tensor.ParseDType(name)
				if err != nil {
					r.fail("%s input %d: %v", what, j, err)
				}
				in.DTypes = append(in.DTypes, dt)
			}
			s.Inputs = append(s.Inputs, in)
		}
		for j, co := range r.structs(what+" outputs", cs.ptr(schemaOutputs), cs.u32(schemaOutputCount), &l.output, typeOpOutput, outputLayout) {
			outWhat := fmt.Sprintf("%s output %d", what, j)
			out := schema.Output{Name: r.str(outWhat+": name", co.ptr(outputName)), Doc: r.str(outWhat+": doc", co.ptr(outputDoc)),
				Layout:   r.str(outWhat+": layout", co.ptr(outputLayout)),
				DTypeArg: r.str(outWhat+": dtype_arg", co.ptr(outputDTypeArg)), Like: r.str(outWhat+": like", co.ptr(outputLike)),
				NDim:        int(int32(co.u32(outputNDim))),
				ChannelsArg: r.str(outWhat+": channels_arg", co.ptr(outputChannelsArg)), Channels: int(int32(co.u32(outputChannels)))}
			for _, name := range r.list(outWhat+": dtypes", co.ptr(outputDTypes)) {
				dt, err := tensor.ParseDType(name)
				if err != nil {
					r.fail("%s: %v", outWhat, err)
				}
				out.DTypes = append(out.DTypes, dt)
			}
			s.Outputs = append(s.Outputs, out)
		}
		for j, ca := range r.structs(what+" args", cs.ptr(schemaArgs), cs.u32(schemaArgCount), &l.arg, typeOpArg, argDeprecated) {
			if a, err := r.arg(fmt.Sprintf("%s arg %d", what, j), ca); err != nil {
				r.fail("%s arg %d: %v", what, j, err)
			} else {
				s.Args = append(s.Args, a)
			}
		}
		out = append(out, s)
	}
	return out
}

// The flags of dynop_op_arg (DYNOP_ARG_*).
const (
	argRequired     = 1 << 0
	argHasMin       = 1 << 1
	argHasMax       = 1 << 2
	argMinExclusive = 1 << 3
	argMaxExclusive = 1 << 4
)

// arg converts one C argument description.
func (r *reader) arg(what string, ca view) (schema.Arg, error) {
	flags, typ := ca.u32(argFlags), ca.u32(argType)
	if typ > 0xff {
		return schema.Arg{}, fmt.Errorf("type %d is not a DYNOP_ARG_* type", typ)
	}
	a := schema.Arg{
		Name:       r.str(what+": name", ca.ptr(argName)),
		Doc:        r.str(what+": doc", ca.ptr(argDoc)),
		Type:       schema.Type(typ),
		Required:   flags&argRequired != 0,
		Deprecated: r.list(what+": deprecated", ca.ptr(argDeprecated)),
	}
	if flags&argHasMin != 0 {
		a.Min = schema.Bounds(ca.f64(argMin))
		a.MinExclusive = flags&argMinExclusive != 0
	}
	if flags&argHasMax != 0 {
		a.Max = schema.Bounds(ca.f64(argMax))
		a.MaxExclusive = flags&argMaxExclusive != 0
	}
	if p := ca.ptr(argDefault); p != 0 {
		if err := DecodeJSON(r.str(what+": default_value", p), &a.Default); err != nil {
			return a, fmt.Errorf("argument %q: default_value is not JSON: %v", a.Name, err)
		}
	}
	if p := ca.ptr(argAllowed); p != 0 {
		if err := DecodeJSON(r.str(what+": allowed", p), &a.Allowed); err != nil {
			return a, fmt.Errorf("argument %q: allowed is not a JSON array: %v", a.Name, err)
		}
	}
	if r.err != nil {
		return a, r.err
	}
	return a, a.Normalize()
}

// DecodeJSON decodes the one JSON value in text into v, keeping numbers
// as json.Number so that integers beyond 2^53 keep their value.
func DecodeJSON(text string, v any) error {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("text after the value")
	}
	return nil
}

// passKinds maps dynop_pass_kind values to graph pass kinds.
var passKinds = map[uint32]schema.PassKind{1: schema.Populate, 2: schema.Partition, 3: schema.Global}

// passes reads the pass descriptors of an info. What the descriptors say
// (names, matches) the host validates with the rest of the info; this
// checks what C can get wrong.
func (r *reader) passes(ci view) []schema.Pass {
	var out []schema.Pass
	for i, p := range r.pointers("passes", ci.ptr(infoPasses), ci.u32(infoPassCount)) {
		what := fmt.Sprintf("passes[%d]", i)
		cd, ok := r.check(what, p, &r.l.passDesc, typePassDesc, passDescDoc)
		if !ok {
			break
		}
		if cd.ptr(passDescName) == 0 {
			r.fail("%s: name is NULL", what)
			break
		}
		name := r.str(what+": name", cd.ptr(passDescName))
		kind, ok := passKinds[cd.u32(passDescKind)]
		if !ok {
			r.fail("%s (pass %q): kind is %d, not DYNOP_PASS_POPULATE (1), DYNOP_PASS_PARTITION (2) or DYNOP_PASS_GLOBAL (3)",
				what, name, cd.u32(passDescKind))
			break
		}
		out = append(out, schema.Pass{
			Name:     name,
			Kind:     kind,
			Match:    r.str(what+": match", cd.ptr(passDescMatch)),
			Priority: int(int32(cd.u32(passDescPriority))),
			Doc:      r.str(what+": doc", cd.ptr(passDescDoc)),
		})
	}
	return out
}

// Variant is one implementation in a list of variants (dynop_variant):
// its name, the CPU features it needs (dynop.h's DYNOP_CPU_* bits, which
// are package dispatch's) and its function's address.
type Variant struct {
	Name  string
	Needs uint64
	Fn    uint64
}

// DecodeVariants reads the array of n dynop_variant structs at addr
// (what names it in errors): names and functions that are not NULL.
// Errors wrap dynop's ErrABI. Whether the list is one a host can choose
// from (valid unique names, known features) is the host's check
// (abisession.CheckVariants), so that a guest that only writes these
// structs does not link package dispatch.
func DecodeVariants(m Memory, what string, addr uint64, n uint32) ([]Variant, error) {
	r := newReader(m)
	return r.variants(what, addr, n)
}

func (r *reader) variants(what string, addr uint64, n uint32) ([]Variant, error) {
	vs := r.structs(what, addr, n, &r.l.variant, typeVariant, variantFn)
	if r.err != nil {
		return nil, r.err
	}
	out := make([]Variant, len(vs))
	for i, v := range vs {
		if v.ptr(variantName) == 0 || v.ptr(variantFn) == 0 {
			return nil, fmt.Errorf("%w: %s[%d]: name or fn is NULL", errdefs.ErrABI, what, i)
		}
		out[i] = Variant{Name: r.str(fmt.Sprintf("%s[%d]: name", what, i), v.ptr(variantName)), Needs: v.u64(variantFeatures), Fn: v.ptr(variantFn)}
		if r.err != nil {
			return nil, r.err
		}
	}
	return out, nil
}

// Operator is an operator backend a plugin registers (dynop_operator),
// its functions as addresses in the plugin's memory.
type Operator struct {
	Addr                        uint64 // the struct's
	Name                        string
	Device                      schema.Device
	UserData                    uint64
	Create, Setup, Run, Destroy uint64
	Variants                    []Variant // nil if Run is the implementation
	Flags                       uint32    // Operator* flags; 0 before dynop_operator 1.2
}

// The flags of dynop_operator.
const (
	// OperatorScratch is DYNOP_OPERATOR_SCRATCH: setup and run get a
	// scratch tensor after the outputs.
	OperatorScratch = 1
	// OperatorConcurrent is DYNOP_OPERATOR_CONCURRENT: setup and run may
	// be called from several threads at once for one instance.
	OperatorConcurrent = 2
	operatorFlagsKnown = OperatorScratch | OperatorConcurrent
)

// Scratch reports whether the operator takes scratch from the host.
func (o Operator) Scratch() bool { return o.Flags&OperatorScratch != 0 }

// Concurrent reports whether one instance of the operator may run on
// several threads at once.
func (o Operator) Concurrent() bool { return o.Flags&OperatorConcurrent != 0 }

// DecodeOperator reads the dynop_operator at addr that a plugin hands
// register_operator and checks what the struct alone can get wrong:
// its header, create and setup set, run or variants (not both). Errors
// wrap dynop's ErrABI.
func DecodeOperator(m Memory, addr uint64) (Operator, error) {
	r := newReader(m)
	v, ok := r.check("register_operator: operator", addr, &r.l.operator, typeOperator, operatorDestroy)
	if !ok {
		return Operator{}, r.err
	}
	o := Operator{
		Addr:     addr,
		Name:     r.str("register_operator: name", v.ptr(operatorName)),
		Device:   schema.Device(r.str("register_operator: device", v.ptr(operatorDevice))),
		UserData: v.ptr(operatorUserData),
		Create:   v.ptr(operatorCreate),
		Setup:    v.ptr(operatorSetup),
		Run:      v.ptr(operatorRun),
		Destroy:  v.ptr(operatorDestroy),
	}
	if r.err != nil {
		return Operator{}, r.err
	}
	fail := func(format string, args ...any) (Operator, error) {
		return Operator{}, fmt.Errorf("register_operator %q (%s): %w: "+format, append([]any{o.Name, o.Device, errdefs.ErrABI}, args...)...)
	}
	if v.ptr(operatorName) == 0 || v.ptr(operatorDevice) == 0 {
		return fail("name and device must not be NULL")
	}
	if o.Create == 0 || o.Setup == 0 {
		return fail("create and setup must not be NULL")
	}
	if v.has(operatorFlags) {
		o.Flags = v.u32(operatorFlags)
		if unknown := o.Flags &^ operatorFlagsKnown; unknown != 0 {
			return fail("flags %#x has bits this host does not know (%#x): it would not do what the operator asks", o.Flags, unknown)
		}
	}
	if n := v.u32(operatorVariantCount); n > 0 { // 0 also for an operator from before variants
		vs, err := r.variants("variants", v.ptr(operatorVariants), n)
		if err != nil {
			return fail("%v", strings.TrimPrefix(err.Error(), errdefs.ErrABI.Error()+": "))
		}
		o.Variants = vs
	}
	switch {
	case o.Variants == nil && o.Run == 0:
		return fail("run is NULL and there are no variants")
	case o.Variants != nil && o.Run != 0:
		return fail("both run and variants are set: with variants, run must be NULL")
	}
	return o, nil
}

// Pass is the code of a graph pass a plugin registers (dynop_pass).
type Pass struct {
	Addr      uint64
	Name      string
	User, Run uint64
}

// DecodePass reads the dynop_pass at addr that a plugin hands
// register_pass. Errors wrap dynop's ErrABI.
func DecodePass(m Memory, addr uint64) (Pass, error) {
	r := newReader(m)
	v, ok := r.check("register_pass: pass", addr, &r.l.pass, typePass, passRun)
	if !ok {
		return Pass{}, r.err
	}
	if v.ptr(passName) == 0 {
		return Pass{}, fmt.Errorf("register_pass: %w: name is NULL", errdefs.ErrABI)
	}
	p := Pass{Addr: addr, Name: r.str("register_pass: name", v.ptr(passName)), User: v.ptr(passUser), Run: v.ptr(passRun)}
	return p, r.err
}
