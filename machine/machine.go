// Package machine describes the computer a program runs on, in the terms
// that plugin requirements use: the operating system and its version, the
// CPU architecture and its features, and the GPUs.
//
// [Current] detects the machine once and shares the result; [Detect]
// detects it afresh. CPU features come from golang.org/x/sys/cpu, named
// after its fields ("avx2" for HasAVX2); [KnownCPUFeatures] lists the names
// for an architecture. [Machine.Check] checks a plugin's requirements
// (a schema.Requirements, from the plugin's info) against a machine.
//
// GPUs come from the probes that vendor subpackages register with
// [RegisterGPUProbe] from their init functions, so that a program pays for
// GPU detection (and its cgo) only if it asks for it:
//
//	import _ "github.com/dynop/dynop/machine/nvml" // NVIDIA GPUs, through NVML
//
// A machine without GPUs, or without the libraries the probes load, is not
// an error for its callers: [Machine.GPUs] is empty and [Machine.GPUErr]
// says why.
package machine

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dynop/dynop/iface"
)

// Machine describes what a computer offers plugins.
type Machine struct {
	// OS is the operating system, a GOOS value such as "linux".
	OS string
	// Arch is the CPU architecture, a GOARCH value such as "amd64".
	Arch string
	// OSVersion is the operating system's release. On Linux it is the
	// kernel release from uname ("6.1.0-18-amd64" is 6.1.0). It is zero
	// where it is unknown, which is everywhere else.
	OSVersion iface.Version
	// CPUFeatures lists the CPU features present, by their lower-case
	// names (see [KnownCPUFeatures]), sorted.
	CPUFeatures []string
	// CPUFeaturesOff lists the features the CPU has that were turned off
	// (by DYNOP_CPU_FEATURES, see package dispatch), sorted. They are not
	// in CPUFeatures: requirements see a CPU without them.
	CPUFeaturesOff []string
	// GPUs lists the GPUs that the registered probes found.
	GPUs []GPU
	// GPUErr says why GPUs could not be listed: no probe is registered
	// ([ErrNoGPUProbe]), or every probe failed, for example because the
	// vendor's library is not installed. It is nil if a probe ran, even
	// one that found no GPU.
	GPUErr error
}

// GPU is a graphics processor that a GPU probe found ([RegisterGPUProbe]).
type GPU struct {
	// Index is the GPU's index among its vendor's GPUs, as the vendor's
	// library counts them (the NVML index for NVIDIA).
	Index int
	// Vendor is "nvidia", "amd" or "intel".
	Vendor string
	// Name is the product name, such as "NVIDIA H100 80GB HBM3".
	Name string
	// Arch is the GPU architecture as a version; for NVIDIA it is the CUDA
	// compute capability major.minor (9.0 for Hopper). Zero if unknown.
	Arch iface.Version
	// Driver is the version of the vendor's driver ("550.54.15" is
	// 550.54.15). Zero if unknown.
	Driver iface.Version
}

// String describes g in one line, for example
// `GPU 0 "NVIDIA H100 80GB HBM3" (nvidia, arch 9.0, driver 550.54.15)`.
// Unknown parts are left out.
func (g GPU) String() string {
	var details []string
	if g.Vendor != "" {
		details = append(details, g.Vendor)
	}
	if !g.Arch.IsZero() {
		details = append(details, "arch "+archString(g.Arch))
	}
	if !g.Driver.IsZero() {
		details = append(details, "driver "+g.Driver.String())
	}
	s := fmt.Sprintf("GPU %d %q", g.Index, g.Name)
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s
}

// archString formats a GPU architecture version as GPU vendors write it:
// major.minor ("8.6"), with the patch number only if it is not zero.
func archString(v iface.Version) string {
	if v.Patch != 0 {
		return v.String()
	}
	return strconv.FormatUint(uint64(v.Major), 10) + "." + strconv.FormatUint(uint64(v.Minor), 10)
}

// current is the machine that Current returns, detected on first use.
var current = sync.OnceValue(Detect)

// Current returns this machine, detected on the first call and shared by
// all callers, which must not modify it. GPU probes registered after the
// first call are not seen; they register from init functions, so this
// matters only to a program that calls Current from an init function of
// its own.
func Current() *Machine { return current() }

// Detect detects this machine afresh, running every registered GPU probe,
// and returns a Machine that belongs to the caller.
func Detect() *Machine {
	m := &Machine{
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		OSVersion:   osVersion(),
		CPUFeatures: DetectCPUFeatures(),
	}
	m.GPUs, m.GPUErr = probes.run()
	return m
}

// hasCPUFeature reports whether the CPU has the named feature, a name in
// [KnownCPUFeatures] for m's architecture. On arm64, "neon" is accepted as
// another name for "asimd".
func (m *Machine) hasCPUFeature(name string) bool {
	return slices.Contains(m.CPUFeatures, canonicalCPUFeature(m.Arch, name))
}

// canonicalCPUFeature returns the name this package reports for the
// feature called name on arch: "asimd" for "neon" on arm64, name itself
// otherwise.
func canonicalCPUFeature(arch, name string) string {
	if alias, ok := cpuFeatureAliases[arch][name]; ok {
		return alias
	}
	return name
}

// String describes m in one line, for example
//
//	linux/amd64 kernel 6.1.0, CPU avx avx2 sse2 sse3, no GPU (no GPU probe (import …))
//
// or, where there are GPUs,
//
//	linux/amd64 kernel 6.1.0, CPU avx avx2 sse2 sse3, GPU 0 "NVIDIA H100 80GB HBM3" (nvidia, arch 9.0, driver 550.54.15)
func (m *Machine) String() string {
	var b strings.Builder
	b.WriteString(m.OS + "/" + m.Arch)
	if !m.OSVersion.IsZero() {
		b.WriteString(" " + osVersionName(m.OS) + " " + m.OSVersion.String())
	}
	if len(m.CPUFeatures) == 0 {
		b.WriteString(", CPU features unknown")
	} else {
		b.WriteString(", CPU " + strings.Join(m.CPUFeatures, " "))
	}
	switch {
	case len(m.GPUs) > 0:
		for _, g := range m.GPUs {
			b.WriteString(", " + g.String())
		}
	case m.GPUErr != nil:
		b.WriteString(", no GPU (" + oneLine(m.GPUErr.Error()) + ")")
	default:
		b.WriteString(", no GPU")
	}
	return b.String()
}

// osVersionName is what the operating system goos calls the release that
// [Machine.OSVersion] holds: "kernel" on Linux, "OS version" elsewhere.
func osVersionName(goos string) string {
	if goos == "linux" {
		return "kernel"
	}
	return "OS version"
}

// oneLine replaces the line breaks of s, which errors.Join puts between
// errors, with "; ".
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// ParseDriverVersion parses a GPU driver version: one to three
// dot-separated decimal numbers, such as "550.54.15" or "535.104" (missing
// parts are 0). Leading zeros are allowed, as NVIDIA writes "470.57.02".
// Errors wrap [iface.ErrSyntax] and quote s.
func ParseDriverVersion(s string) (iface.Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return iface.Version{}, fmt.Errorf("%w: driver version %q: want at most 3 dot-separated numbers, got %d", iface.ErrSyntax, s, len(parts))
	}
	var n [3]uint32
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return iface.Version{}, fmt.Errorf("%w: driver version %q: part %q is not a decimal number below 2^32", iface.ErrSyntax, s, p)
		}
		n[i] = uint32(v)
	}
	return iface.V(n[0], n[1], n[2]), nil
}

// parseKernelRelease returns the version at the start of a kernel release
// string: "6.1.0-18-amd64" is 6.1.0, "5.15.146.1-microsoft-standard-WSL2"
// is 5.15.146, "6.8" is 6.8.0. It returns zero if release does not start
// with a number.
func parseKernelRelease(release string) iface.Version {
	if end := strings.IndexFunc(release, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); end >= 0 {
		release = release[:end]
	}
	parts := strings.Split(strings.TrimSuffix(release, "."), ".")
	var n [3]uint32
	for i, p := range parts[:min(len(parts), 3)] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return iface.Version{}
		}
		n[i] = uint32(v)
	}
	return iface.V(n[0], n[1], n[2])
}
