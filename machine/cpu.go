package machine

import (
	"runtime"
	"slices"

	"golang.org/x/sys/cpu"
)

// cpuFeature is a CPU feature name and the golang.org/x/sys/cpu flag that
// reports it. The name is the flag's field name without "Has", in lower
// case.
type cpuFeature struct {
	name string
	has  *bool
}

// x86Features are the features of 386 and amd64 CPUs, from cpu.X86.
// HasOSXSAVE is left out: it says what the operating system does, and
// x/sys/cpu already folds it into HasAVX and the AVX-512 flags.
var x86Features = []cpuFeature{
	{"adx", &cpu.X86.HasADX},
	{"aes", &cpu.X86.HasAES},
	{"amxbf16", &cpu.X86.HasAMXBF16},
	{"amxint8", &cpu.X86.HasAMXInt8},
	{"amxtile", &cpu.X86.HasAMXTile},
	{"avx", &cpu.X86.HasAVX},
	{"avx2", &cpu.X86.HasAVX2},
	{"avx512", &cpu.X86.HasAVX512},
	{"avx5124fmaps", &cpu.X86.HasAVX5124FMAPS},
	{"avx5124vnniw", &cpu.X86.HasAVX5124VNNIW},
	{"avx512bf16", &cpu.X86.HasAVX512BF16},
	{"avx512bitalg", &cpu.X86.HasAVX512BITALG},
	{"avx512bw", &cpu.X86.HasAVX512BW},
	{"avx512cd", &cpu.X86.HasAVX512CD},
	{"avx512dq", &cpu.X86.HasAVX512DQ},
	{"avx512er", &cpu.X86.HasAVX512ER},
	{"avx512f", &cpu.X86.HasAVX512F},
	{"avx512gfni", &cpu.X86.HasAVX512GFNI},
	{"avx512ifma", &cpu.X86.HasAVX512IFMA},
	{"avx512pf", &cpu.X86.HasAVX512PF},
	{"avx512vaes", &cpu.X86.HasAVX512VAES},
	{"avx512vbmi", &cpu.X86.HasAVX512VBMI},
	{"avx512vbmi2", &cpu.X86.HasAVX512VBMI2},
	{"avx512vl", &cpu.X86.HasAVX512VL},
	{"avx512vnni", &cpu.X86.HasAVX512VNNI},
	{"avx512vpclmulqdq", &cpu.X86.HasAVX512VPCLMULQDQ},
	{"avx512vpopcntdq", &cpu.X86.HasAVX512VPOPCNTDQ},
	{"avxifma", &cpu.X86.HasAVXIFMA},
	{"avxvnni", &cpu.X86.HasAVXVNNI},
	{"avxvnniint8", &cpu.X86.HasAVXVNNIInt8},
	{"bmi1", &cpu.X86.HasBMI1},
	{"bmi2", &cpu.X86.HasBMI2},
	{"cx16", &cpu.X86.HasCX16},
	{"erms", &cpu.X86.HasERMS},
	{"f16c", &cpu.X86.HasF16C},
	{"fma", &cpu.X86.HasFMA},
	{"lahf", &cpu.X86.HasLAHF},
	{"lzcnt", &cpu.X86.HasLZCNT},
	{"movbe", &cpu.X86.HasMOVBE},
	{"pclmulqdq", &cpu.X86.HasPCLMULQDQ},
	{"popcnt", &cpu.X86.HasPOPCNT},
	{"rdrand", &cpu.X86.HasRDRAND},
	{"rdseed", &cpu.X86.HasRDSEED},
	{"sse2", &cpu.X86.HasSSE2},
	{"sse3", &cpu.X86.HasSSE3},
	{"sse41", &cpu.X86.HasSSE41},
	{"sse42", &cpu.X86.HasSSE42},
	{"ssse3", &cpu.X86.HasSSSE3},
	{"xsave", &cpu.X86.HasXSAVE},
}

// arm64Features are the features of arm64 CPUs, from cpu.ARM64. HasEVTSTRM
// (the kernel's event stream) and HasCPUID (the kernel lets programs read
// ID registers) are left out: they say what the operating system does.
var arm64Features = []cpuFeature{
	{"aes", &cpu.ARM64.HasAES},
	{"asimd", &cpu.ARM64.HasASIMD},
	{"asimddp", &cpu.ARM64.HasASIMDDP},
	{"asimdfhm", &cpu.ARM64.HasASIMDFHM},
	{"asimdhp", &cpu.ARM64.HasASIMDHP},
	{"asimdrdm", &cpu.ARM64.HasASIMDRDM},
	{"atomics", &cpu.ARM64.HasATOMICS},
	{"crc32", &cpu.ARM64.HasCRC32},
	{"dcpop", &cpu.ARM64.HasDCPOP},
	{"dit", &cpu.ARM64.HasDIT},
	{"fcma", &cpu.ARM64.HasFCMA},
	{"fp", &cpu.ARM64.HasFP},
	{"fphp", &cpu.ARM64.HasFPHP},
	{"i8mm", &cpu.ARM64.HasI8MM},
	{"jscvt", &cpu.ARM64.HasJSCVT},
	{"lrcpc", &cpu.ARM64.HasLRCPC},
	{"pmull", &cpu.ARM64.HasPMULL},
	{"sha1", &cpu.ARM64.HasSHA1},
	{"sha2", &cpu.ARM64.HasSHA2},
	{"sha3", &cpu.ARM64.HasSHA3},
	{"sha512", &cpu.ARM64.HasSHA512},
	{"sm3", &cpu.ARM64.HasSM3},
	{"sm4", &cpu.ARM64.HasSM4},
	{"sve", &cpu.ARM64.HasSVE},
	{"sve2", &cpu.ARM64.HasSVE2},
}

// cpuFeatures maps each GOARCH this package knows to its features.
// x/sys/cpu fills in only the table of the architecture it runs on.
var cpuFeatures = map[string][]cpuFeature{
	"386":   x86Features,
	"amd64": x86Features,
	"arm64": arm64Features,
}

// cpuFeatureAliases maps, per GOARCH, other names of features to the names
// this package reports.
var cpuFeatureAliases = map[string]map[string]string{
	"arm64": {"neon": "asimd"},
}

// KnownCPUFeatures lists the feature names this package can report for
// arch (a GOARCH value), sorted: the names of golang.org/x/sys/cpu's
// feature flags for that architecture, without "Has", in lower case
// ("sse42" for X86.HasSSE42). It returns nil for architectures it does not
// know.
func KnownCPUFeatures(arch string) []string {
	table := cpuFeatures[arch]
	if table == nil {
		return nil
	}
	names := make([]string, len(table))
	for i, f := range table {
		names[i] = f.name
	}
	slices.Sort(names)
	return names
}

// DetectCPUFeatures returns the sorted names of the features this CPU
// has, as [Machine.CPUFeatures] lists them, without detecting the rest of
// the machine (GPUs).
func DetectCPUFeatures() []string {
	var names []string
	for _, f := range cpuFeatures[runtime.GOARCH] {
		if *f.has {
			names = append(names, f.name)
		}
	}
	slices.Sort(names)
	return names
}
