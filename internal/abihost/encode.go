package abihost

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
)

// Image is structs of dynop.h laid out in bytes, as a plugin would lay
// them out in its memory, with pointers relative to the image's start
// until [Image.Place] puts it at an address: what the Go guest of a
// WebAssembly module hands the host, and what tests feed the decoder.
type Image struct {
	b      []byte
	ptr    uint32   // pointer size
	relocs []uint32 // offsets of the pointers that point into the image
}

// NewImage returns an empty image for pointers of ptrSize bytes.
func NewImage(ptrSize uint32) *Image {
	// Offset 0 stays unused, so that no struct or string is at offset 0,
	// which would read as NULL.
	return &Image{b: make([]byte, 8), ptr: ptrSize}
}

// Len returns the image's size in bytes.
func (im *Image) Len() int { return len(im.b) }

// Place returns the image's bytes for the address base: every pointer
// into the image made absolute.
func (im *Image) Place(base uint64) []byte {
	out := append([]byte(nil), im.b...)
	for _, at := range im.relocs {
		if im.ptr == 4 {
			le.PutUint32(out[at:], le.Uint32(out[at:])+uint32(base))
		} else {
			le.PutUint64(out[at:], le.Uint64(out[at:])+base)
		}
	}
	return out
}

// alloc returns the offset of n zero bytes aligned to 8.
func (im *Image) alloc(n uint32) uint32 {
	at := (uint32(len(im.b)) + 7) &^ 7
	im.b = append(im.b, make([]byte, at+n-uint32(len(im.b)))...)
	return at
}

// String places s with its NUL and returns its offset; "" is placed too
// (NULL is 0, from the caller).
func (im *Image) String(s string) uint32 {
	at := im.alloc(uint32(len(s)) + 1)
	copy(im.b[at:], s)
	return at
}

// optString is String, or 0 (NULL) for "".
func (im *Image) optString(s string) uint32 {
	if s == "" {
		return 0
	}
	return im.String(s)
}

// str is a struct being written at offset at with layout l.
type str struct {
	im *Image
	at uint32
	l  *structLayout
}

func (im *Image) newStruct(l *structLayout, typ iface.UID, version iface.Version) str {
	return im.newStructs(l, typ, version, 1)[0]
}

// newStructs places an array of n structs of layout l, with their
// headers, and returns them (nil for none).
func (im *Image) newStructs(l *structLayout, typ iface.UID, version iface.Version, n int) []str {
	if n == 0 {
		return nil
	}
	size := l.end[len(l.end)-1]
	size = (size + 7) &^ 7 // sizeof: the struct's alignment is at most 8
	at := im.alloc(size * uint32(n))
	out := make([]str, n)
	for i := range out {
		s := str{im, at + uint32(i)*size, l}
		h := im.b[s.at:]
		copy(h, typ[:])
		le.PutUint32(h[16:], version.Major)
		le.PutUint32(h[20:], version.Minor)
		le.PutUint32(h[24:], version.Patch)
		le.PutUint32(h[28:], size)
		out[i] = s
	}
	return out
}

// first returns the offset of the first of ss, or 0 (NULL) for none.
func first(ss []str) uint32 {
	if len(ss) == 0 {
		return 0
	}
	return ss[0].at
}

func (s str) u32(i int, v uint32) { le.PutUint32(s.im.b[s.at+s.l.off[i]:], v) }
func (s str) u64(i int, v uint64) { le.PutUint64(s.im.b[s.at+s.l.off[i]:], v) }

// ptr sets pointer member i to offset off in the image (0: NULL).
func (s str) ptr(i int, off uint32) {
	if off == 0 {
		return
	}
	at := s.at + s.l.off[i]
	if s.im.ptr == 4 {
		le.PutUint32(s.im.b[at:], off)
	} else {
		le.PutUint64(s.im.b[at:], uint64(off))
	}
	s.im.relocs = append(s.im.relocs, at)
}

func (s str) version(i int, v iface.Version) {
	b := s.im.b[s.at+s.l.off[i]:]
	le.PutUint32(b, v.Major)
	le.PutUint32(b[4:], v.Minor)
	le.PutUint32(b[8:], v.Patch)
}

func (s str) uid(i int, u iface.UID) { copy(s.im.b[s.at+s.l.off[i]:], u[:]) }

// pointers places an array of the offsets ptrs and returns its offset.
func (im *Image) pointers(ptrs []uint32) uint32 {
	if len(ptrs) == 0 {
		return 0
	}
	at := im.alloc(uint32(len(ptrs)) * im.ptr)
	for i, p := range ptrs {
		(str{im, at, &structLayout{off: []uint32{uint32(i) * im.ptr}}}).ptr(0, p)
	}
	return at
}

// The layout versions the encoder writes: each struct's current one.
var (
	vInfo         = iface.V(1, 2, 0)
	vOperator     = iface.V(1, 2, 0)
	vOpOutput     = iface.V(1, 2, 0)
	vOpInput      = iface.V(1, 1, 0)
	vRequirements = iface.V(1, 1, 0)
	v10           = iface.V(1, 0, 0)
)

// EncodeInfo lays out info as a dynop_plugin_info with everything it
// points to and returns the info's offset in the image, for
// [DecodeInfo] to read back as the same info. Values that JSON cannot
// carry (an argument's default) are an error.
func (im *Image) EncodeInfo(info schema.Plugin, flags uint32) (uint32, error) {
	l := layoutsFor(im.ptr)
	var descs, needs, ops, passes []uint32
	for _, d := range info.Interfaces {
		descs = append(descs, im.desc(d))
	}
	for _, n := range info.Needs {
		s := im.newStruct(&l.need, typeNeed, v10)
		s.ptr(needPlugin, im.String(n.Plugin))
		s.ptr(needIface, im.desc(n.Interface))
		needs = append(needs, s.at)
	}
	var req uint32
	if rq := info.Requirements; rq.OS != nil || rq.Arch != nil || rq.CPUFeatures != nil || !rq.MinOSVersion.IsZero() || rq.GPU != nil || rq.Libraries != nil {
		s := im.newStruct(&l.requirements, typeRequirements, vRequirements)
		s.ptr(reqLibraries, im.optString(strings.Join(rq.Libraries, ",")))
		s.ptr(reqOS, im.optString(strings.Join(rq.OS, ",")))
		s.version(reqMinOSVersion, rq.MinOSVersion)
		s.ptr(reqArch, im.optString(strings.Join(rq.Arch, ",")))
		s.ptr(reqCPUFeatures, im.optString(strings.Join(rq.CPUFeatures, ",")))
		if g := rq.GPU; g != nil {
			s.ptr(reqGPUVendor, im.optString(g.Vendor))
			s.version(reqGPUMinArch, g.MinArch)
			s.version(reqGPUMinDriver, g.MinDriver)
		}
		req = s.at
	}
	for _, sc := range info.Operators {
		at, err := im.schema(sc)
		if err != nil {
			return 0, err
		}
		ops = append(ops, at)
	}
	for _, p := range info.Passes {
		s := im.newStruct(&l.passDesc, typePassDesc, v10)
		s.ptr(passDescName, im.String(p.Name))
		for k, kind := range passKinds {
			if kind == p.Kind {
				s.u32(passDescKind, k)
			}
		}
		s.ptr(passDescMatch, im.optString(p.Match))
		s.u32(passDescPriority, uint32(int32(p.Priority)))
		s.ptr(passDescDoc, im.optString(p.Doc))
		passes = append(passes, s.at)
	}
	s := im.newStruct(&l.info, typePluginInfo, vInfo)
	s.version(infoAPIVersion, info.APIVersion)
	s.ptr(infoID, im.String(info.ID))
	s.version(infoPluginVersion, info.Version)
	s.ptr(infoDescription, im.optString(info.Description))
	s.ptr(infoAuthor, im.optString(info.Author))
	s.ptr(infoBuild, im.optString(info.Build))
	s.u32(infoFlags, flags)
	s.u32(infoInterfaceCount, uint32(len(descs)))
	s.ptr(infoInterfaces, im.pointers(descs))
	s.u32(infoNeedCount, uint32(len(needs)))
	s.ptr(infoNeeds, im.pointers(needs))
	s.ptr(infoRequirements, req)
	s.u32(infoOperatorCount, uint32(len(ops)))
	s.ptr(infoOperators, im.pointers(ops))
	s.u32(infoPassCount, uint32(len(passes)))
	s.ptr(infoPasses, im.pointers(passes))
	return s.at, nil
}

func (im *Image) desc(d iface.Desc) uint32 {
	s := im.newStruct(&layoutsFor(im.ptr).desc, typeInterfaceDesc, v10)
	s.uid(descUID, d.UID)
	s.version(descVersion, d.Version)
	s.ptr(descName, im.String(d.Name))
	return s.at
}

func (im *Image) schema(sc schema.Op) (uint32, error) {
	l := layoutsFor(im.ptr)
	devices := make([]string, len(sc.Devices))
	for i, d := range sc.Devices {
		devices[i] = string(d)
	}
	ins := im.newStructs(&l.input, typeOpInput, vOpInput, len(sc.Inputs))
	for i, in := range sc.Inputs {
		s := ins[i]
		s.ptr(inputName, im.String(in.Name))
		s.ptr(inputDoc, im.optString(in.Doc))
		dtypes := make([]string, len(in.DTypes))
		for j, dt := range in.DTypes {
			dtypes[j] = dt.String()
		}
		s.ptr(inputDTypes, im.optString(strings.Join(dtypes, ",")))
		s.ptr(inputLayouts, im.optString(strings.Join(in.Layouts, ",")))
		s.u32(inputNDim, uint32(int32(in.NDim)))
		channels := make([]string, len(in.Channels))
		for j, c := range in.Channels {
			channels[j] = strconv.Itoa(c)
		}
		s.ptr(inputChannels, im.optString(strings.Join(channels, ",")))
	}
	outs := im.newStructs(&l.output, typeOpOutput, vOpOutput, len(sc.Outputs))
	for i, out := range sc.Outputs {
		s := outs[i]
		s.ptr(outputName, im.String(out.Name))
		s.ptr(outputDoc, im.optString(out.Doc))
		s.ptr(outputLayout, im.optString(out.Layout))
		dtypes := make([]string, len(out.DTypes))
		for j, dt := range out.DTypes {
			dtypes[j] = dt.String()
		}
		s.ptr(outputDTypes, im.optString(strings.Join(dtypes, ",")))
		s.ptr(outputDTypeArg, im.optString(out.DTypeArg))
		s.ptr(outputLike, im.optString(out.Like))
		s.u32(outputNDim, uint32(int32(out.NDim)))
		s.ptr(outputChannelsArg, im.optString(out.ChannelsArg))
		s.u32(outputChannels, uint32(int32(out.Channels)))
	}
	args := im.newStructs(&l.arg, typeOpArg, v10, len(sc.Args))
	for i, a := range sc.Args {
		if err := im.arg(args[i], a); err != nil {
			return 0, fmt.Errorf("operator %q argument %q: %w", sc.Name, a.Name, err)
		}
	}
	s := im.newStruct(&l.schema, typeOpSchema, v10)
	s.ptr(schemaName, im.String(sc.Name))
	s.ptr(schemaDoc, im.optString(sc.Doc))
	s.ptr(schemaDevices, im.optString(strings.Join(devices, ",")))
	s.u32(schemaInputCount, uint32(len(sc.Inputs)))
	s.u32(schemaOptionalInputs, uint32(int32(sc.OptionalInputs)))
	s.ptr(schemaInputs, first(ins))
	s.u32(schemaOutputCount, uint32(len(sc.Outputs)))
	s.ptr(schemaOutputs, first(outs))
	s.u32(schemaArgCount, uint32(len(sc.Args)))
	s.ptr(schemaArgs, first(args))
	return s.at, nil
}

func (im *Image) arg(s str, a schema.Arg) error {
	var flags uint32
	if a.Required {
		flags |= argRequired
	}
	if a.Min != nil {
		flags |= argHasMin
		s.u64(argMin, math.Float64bits(*a.Min))
		if a.MinExclusive {
			flags |= argMinExclusive
		}
	}
	if a.Max != nil {
		flags |= argHasMax
		s.u64(argMax, math.Float64bits(*a.Max))
		if a.MaxExclusive {
			flags |= argMaxExclusive
		}
	}
	s.ptr(argName, im.String(a.Name))
	s.ptr(argDoc, im.optString(a.Doc))
	s.u32(argType, uint32(a.Type))
	s.u32(argFlags, flags)
	if a.Default != nil {
		b, err := json.Marshal(a.Default)
		if err != nil {
			return err
		}
		s.ptr(argDefault, im.String(string(b)))
	}
	if len(a.Allowed) > 0 {
		b, err := json.Marshal(a.Allowed)
		if err != nil {
			return err
		}
		s.ptr(argAllowed, im.String(string(b)))
	}
	s.ptr(argDeprecated, im.optString(strings.Join(a.Deprecated, ",")))
	return nil
}

// EncodeOperator lays out a dynop_operator named name for device, whose
// functions are the non-NULL markers fn (a Go guest calls its operators
// itself: the host only needs them not NULL), and returns its offset.
func (im *Image) EncodeOperator(name string, device schema.Device, fn uint32) uint32 {
	s := im.newStruct(&layoutsFor(im.ptr).operator, typeOperator, vOperator)
	s.ptr(operatorName, im.String(name))
	s.ptr(operatorDevice, im.String(string(device)))
	for _, m := range []int{operatorCreate, operatorSetup, operatorRun, operatorDestroy} {
		s.u32(m, fn) // not a pointer into the image: no relocation
	}
	return s.at
}

// HeaderOf returns the header of the struct at offset at: for tests.
func (im *Image) HeaderOf(at uint32) abi.Header { return abi.ParseHeader(im.b[at:]) }
