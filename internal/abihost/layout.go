package abihost

import (
	"fmt"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
)

// The type UIDs of dynop.h's structs: DYNOP_*_TYPE, which differ only in
// their last byte.
var (
	typeInterfaceDesc = structType(0x01)
	typeNeed          = structType(0x02)
	typeRequirements  = structType(0x03)
	typePluginInfo    = structType(0x04)
	typeOpInput       = structType(0x06)
	typeOpOutput      = structType(0x07)
	typeOpArg         = structType(0x08)
	typeOpSchema      = structType(0x09)
	typeOperator      = structType(0x0A)
	typePassDesc      = structType(0x0B)
	typePass          = structType(0x0E)
	typeVariant       = structType(0x0F)
)

func structType(last byte) iface.UID {
	u := iface.MustParseUID("6D79A0C1-3B5E-4C1F-8E02-517AD4902B00")
	u[15] = last
	return u
}

// structMajor is the major layout version of every struct this host
// reads: DYNOP_*_VERSION_MAJOR, 1 for all of them today.
const structMajor = 1

// fieldKind is the C type of a struct member, as far as its size and
// alignment go.
type fieldKind uint8

const (
	fHeader  fieldKind = iota // dynop_header: 32 bytes, 4-aligned
	fVersion                  // dynop_version: 12 bytes, 4-aligned
	fUID                      // dynop_uid: 16 bytes
	fU32                      // uint32_t, int32_t, an enum
	fU64                      // uint64_t (dynop_cpu_features)
	fF64                      // double
	fPtr                      // a pointer: 8 bytes natively, 4 in wasm32
)

// structLayout is where each member of one of dynop.h's structs lies for
// one pointer size, computed with C's rules (each member at the next
// multiple of its alignment).
type structLayout struct {
	name string
	off  []uint32 // by member index
	end  []uint32 // by member index: the size a struct needs to hold the member (END_OF)
}

// newLayout lays out members for pointers of ptrSize bytes.
func newLayout(name string, ptrSize uint32, members ...fieldKind) structLayout {
	l := structLayout{name: name, off: make([]uint32, len(members)), end: make([]uint32, len(members))}
	var at uint32
	for i, m := range members {
		size, align := m.sizeAlign(ptrSize)
		at = (at + align - 1) &^ (align - 1)
		l.off[i] = at
		at += size
		l.end[i] = at
	}
	return l
}

func (k fieldKind) sizeAlign(ptrSize uint32) (size, align uint32) {
	switch k {
	case fHeader:
		return abi.HeaderSize, 4
	case fVersion:
		return 12, 4
	case fUID:
		return 16, 1
	case fU32:
		return 4, 4
	case fU64, fF64:
		return 8, 8
	case fPtr:
		return ptrSize, ptrSize
	}
	panic(fmt.Sprintf("abihost: field kind %d", k))
}

// The members of each struct, by index; the index names follow the C
// member names.
const (
	// dynop_plugin_info
	infoAPIVersion = 1 + iota
	infoID
	infoPluginVersion
	infoDescription
	infoAuthor
	infoBuild
	infoFlags
	infoInterfaceCount
	infoInterfaces
	infoNeedCount
	infoNeeds
	infoRequirements
	infoOperatorCount // since 1.1
	infoOperators
	infoPassCount // since 1.2
	infoPasses
)

const (
	// dynop_interface_desc
	descUID = 1 + iota
	descVersion
	descName
)

const (
	// dynop_need
	needPlugin = 1 + iota
	needIface
)

const (
	// dynop_requirements
	reqOS = 1 + iota
	reqMinOSVersion
	reqArch
	reqCPUFeatures
	reqGPUVendor
	reqGPUMinArch
	reqGPUMinDriver
	reqLibraries // since 1.1
)

const (
	// dynop_op_schema
	schemaName = 1 + iota
	schemaDoc
	schemaDevices
	schemaInputCount
	schemaOptionalInputs
	schemaInputs
	schemaOutputCount
	schemaOutputs
	schemaArgCount
	schemaArgs
)

const (
	// dynop_op_input
	inputName = 1 + iota
	inputDoc
	inputDTypes
	inputLayouts
	inputNDim
	inputChannels // since 1.1
)

const (
	// dynop_op_output
	outputName = 1 + iota
	outputDoc
	outputLayout
	outputDTypes // since 1.1
	outputDTypeArg
	outputLike
	outputNDim
	outputChannelsArg // since 1.2
	outputChannels
)

const (
	// dynop_op_arg
	argName = 1 + iota
	argDoc
	argType
	argFlags
	argMin
	argMax
	argDefault
	argAllowed
	argDeprecated
)

const (
	// dynop_operator
	operatorName = 1 + iota
	operatorDevice
	operatorUserData
	operatorCreate
	operatorSetup
	operatorRun
	operatorDestroy
	operatorVariantCount // since 1.1
	operatorVariants
	operatorFlags // since 1.2
)

const (
	// dynop_variant
	variantName = 1 + iota
	variantFeatures
	variantFn
)

const (
	// dynop_pass_desc
	passDescName = 1 + iota
	passDescKind
	passDescMatch
	passDescPriority
	passDescDoc
)

const (
	// dynop_pass
	passName = 1 + iota
	passUser
	passRun
)

// layouts are the struct layouts for one pointer size.
type layouts struct {
	info, desc, need, requirements, schema, input, output, arg, operator, variant, passDesc, pass structLayout
}

func newLayouts(ptrSize uint32) *layouts {
	return &layouts{
		info: newLayout("dynop_plugin_info", ptrSize, fHeader, fVersion, fPtr, fVersion, fPtr, fPtr, fPtr, fU32,
			fU32, fPtr, fU32, fPtr, fPtr, fU32, fPtr, fU32, fPtr),
		desc:         newLayout("dynop_interface_desc", ptrSize, fHeader, fUID, fVersion, fPtr),
		need:         newLayout("dynop_need", ptrSize, fHeader, fPtr, fPtr),
		requirements: newLayout("dynop_requirements", ptrSize, fHeader, fPtr, fVersion, fPtr, fPtr, fPtr, fVersion, fVersion, fPtr),
		schema: newLayout("dynop_op_schema", ptrSize, fHeader, fPtr, fPtr, fPtr, fU32, fU32, fPtr, fU32, fPtr,
			fU32, fPtr),
		input:    newLayout("dynop_op_input", ptrSize, fHeader, fPtr, fPtr, fPtr, fPtr, fU32, fPtr),
		output:   newLayout("dynop_op_output", ptrSize, fHeader, fPtr, fPtr, fPtr, fPtr, fPtr, fPtr, fU32, fPtr, fU32),
		arg:      newLayout("dynop_op_arg", ptrSize, fHeader, fPtr, fPtr, fU32, fU32, fF64, fF64, fPtr, fPtr, fPtr),
		operator: newLayout("dynop_operator", ptrSize, fHeader, fPtr, fPtr, fPtr, fPtr, fPtr, fPtr, fPtr, fU32, fPtr, fU32),
		variant:  newLayout("dynop_variant", ptrSize, fHeader, fPtr, fU64, fPtr),
		passDesc: newLayout("dynop_pass_desc", ptrSize, fHeader, fPtr, fU32, fPtr, fU32, fPtr),
		pass:     newLayout("dynop_pass", ptrSize, fHeader, fPtr, fPtr, fPtr),
	}
}

// The layouts of the two targets dynop runs plugins for.
var (
	layouts64 = newLayouts(8) // native plugins on LP64 machines
	layouts32 = newLayouts(4) // wasm32 modules
)

func layoutsFor(ptrSize uint32) *layouts {
	if ptrSize == 4 {
		return layouts32
	}
	return layouts64
}

// Offsets returns, for pointers of ptrSize bytes, the offset of every
// member of every struct the decoder reads, as "struct.member" → offset:
// what a test compares with the C compilers' offsetof.
func Offsets(ptrSize uint32) map[string]uint32 {
	l := layoutsFor(ptrSize)
	out := map[string]uint32{}
	for _, s := range []struct {
		l       structLayout
		members []string
	}{
		{l.info, []string{"header", "api_version", "id", "plugin_version", "description", "author", "build", "flags", "interface_count", "interfaces", "need_count", "needs", "requirements", "operator_count", "operators", "pass_count", "passes"}},
		{l.desc, []string{"header", "uid", "version", "name"}},
		{l.need, []string{"header", "plugin", "iface"}},
		{l.requirements, []string{"header", "os", "min_os_version", "arch", "cpu_features", "gpu_vendor", "gpu_min_arch", "gpu_min_driver", "libraries"}},
		{l.schema, []string{"header", "name", "doc", "devices", "input_count", "optional_inputs", "inputs", "output_count", "outputs", "arg_count", "args"}},
		{l.input, []string{"header", "name", "doc", "dtypes", "layouts", "ndim", "channels"}},
		{l.output, []string{"header", "name", "doc", "layout", "dtypes", "dtype_arg", "like", "ndim", "channels_arg", "channels"}},
		{l.arg, []string{"header", "name", "doc", "type", "flags", "min", "max", "default_value", "allowed", "deprecated"}},
		{l.operator, []string{"header", "name", "device", "user_data", "create", "setup", "run", "destroy", "variant_count", "variants", "flags"}},
		{l.variant, []string{"header", "name", "features", "fn"}},
		{l.passDesc, []string{"header", "name", "kind", "match", "priority", "doc"}},
		{l.pass, []string{"header", "name", "user", "run"}},
	} {
		if len(s.members) != len(s.l.off) {
			panic("abihost: member names of " + s.l.name)
		}
		for i, m := range s.members {
			out[s.l.name+"."+m] = s.l.off[i]
		}
	}
	return out
}
