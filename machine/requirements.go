package machine

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/ldso"
	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/schema"
)

// envCPUFeatures is dispatch.EnvFeatures, the variable that turns CPU
// features off (package dispatch imports this one, so this one cannot
// import it; a test checks that the two agree).
const envCPUFeatures = "DYNOP_CPU_FEATURES"

// Check reports whether m meets r, the requirements of a plugin
// (schema.Plugin.Requirements). It returns nil, or an error wrapping
// [dynop.ErrUnsupported] that names every unmet requirement together, for
// example
//
//	unsupported: needs os windows or darwin (this is linux); needs CPU features avx512f, avx512bw (this CPU lacks them)
//
// The rules, for each field that is not zero:
//
//   - OS and Arch: m's must be in the list.
//   - MinOSVersion: m.OSVersion must not be older. An unknown (zero)
//     OSVersion meets it, and it is not checked on an OS that is not in
//     the OS list, whose versions it does not describe.
//   - CPUFeatures: m must have each (in m.CPUFeatures; on arm64, "neon"
//     is another name for "asimd"). A name
//     that [KnownCPUFeatures] does not list for m.Arch is reported as
//     unknown, with the known name it is likely a typo of; one the CPU
//     has but that was turned off (m.CPUFeaturesOff, from
//     DYNOP_CPU_FEATURES) is reported as turned off.
//     Features are not checked on an architecture that is not in the Arch
//     list: they are features of the architectures listed.
//   - GPU: at least one of m.GPUs must be of the vendor and have at least
//     the architecture and driver versions. Otherwise the error says why
//     there is no GPU (m.GPUErr), or why the GPU closest to a match falls
//     short.
func (m *Machine) Check(r schema.Requirements) error {
	var unmet []string
	osOK := len(r.OS) == 0 || slices.Contains(r.OS, m.OS)
	if !osOK {
		unmet = append(unmet, fmt.Sprintf("needs os %s (this is %s)", orList(r.OS), orUnknown(m.OS)))
	}
	if osOK && !r.MinOSVersion.IsZero() && !m.OSVersion.IsZero() && m.OSVersion.Compare(r.MinOSVersion) < 0 {
		unmet = append(unmet, fmt.Sprintf("needs %s %s or newer (this is %s)", osVersionName(m.OS), r.MinOSVersion, m.OSVersion))
	}
	archOK := len(r.Arch) == 0 || slices.Contains(r.Arch, m.Arch)
	if !archOK {
		unmet = append(unmet, fmt.Sprintf("needs arch %s (this is %s)", orList(r.Arch), orUnknown(m.Arch)))
	} else {
		unmet = append(unmet, unmetCPUFeatures(r.CPUFeatures, m)...)
	}
	if r.GPU != nil {
		if problem := unmetGPU(r.GPU, m); problem != "" {
			unmet = append(unmet, problem)
		}
	}
	if problem := unmetLibraries(r.Libraries, m); problem != "" {
		unmet = append(unmet, problem)
	}
	if len(unmet) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", errdefs.ErrUnsupported, strings.Join(unmet, "; "))
}

// unmetCPUFeatures describes the features that m lacks, those it cannot
// detect on its architecture, and names it does not know, in that order.
func unmetCPUFeatures(features []string, m *Machine) []string {
	if len(features) == 0 {
		return nil
	}
	known := KnownCPUFeatures(m.Arch)
	var missing, off, undetectable, unknown []string
	for i, f := range features {
		switch {
		case slices.Contains(features[:i], f), m.hasCPUFeature(f):
		case slices.Contains(m.CPUFeaturesOff, canonicalCPUFeature(m.Arch, f)):
			off = append(off, f)
		case known == nil:
			undetectable = append(undetectable, f)
		case slices.Contains(known, f):
			missing = append(missing, f)
		default:
			problem := fmt.Sprintf("unknown CPU feature %q on %s", f, m.Arch)
			// Names are lower case; a name in upper case is still a typo
			// worth a hint.
			if near := suggest.Nearest(strings.ToLower(f), known); near != "" {
				problem += fmt.Sprintf(" (did you mean %s?)", near)
			}
			unknown = append(unknown, problem)
		}
	}
	var unmet []string
	if len(missing) > 0 {
		them := "it"
		if len(missing) > 1 {
			them = "them"
		}
		unmet = append(unmet, fmt.Sprintf("needs %s (this CPU lacks %s)", cpuFeatureList(missing), them))
	}
	if len(off) > 0 {
		unmet = append(unmet, fmt.Sprintf("needs %s (turned off for this host: %s or Options.CPUFeatures)", cpuFeatureList(off), envCPUFeatures))
	}
	if len(undetectable) > 0 {
		unmet = append(unmet, fmt.Sprintf("needs %s, which dynop cannot detect on %s", cpuFeatureList(undetectable), orUnknown(m.Arch)))
	}
	return append(unmet, unknown...)
}

// cpuFeatureList returns "CPU feature a" or "CPU features a, b".
func cpuFeatureList(names []string) string {
	if len(names) == 1 {
		return "CPU feature " + names[0]
	}
	return "CPU features " + strings.Join(names, ", ")
}

// unmetGPU describes why no GPU of m meets g, or returns "" if one does.
func unmetGPU(g *schema.GPURequirements, m *Machine) string {
	if len(m.GPUs) == 0 {
		problem := "needs " + g.String() + "; this machine has none"
		if m.GPUErr != nil {
			// errors.Join puts line breaks between errors.
			problem += " (" + strings.ReplaceAll(m.GPUErr.Error(), "\n", "; ") + ")"
		}
		return problem
	}
	var (
		best      GPU
		bestWhy   []string
		bestScore = -1
	)
	for _, gpu := range m.GPUs {
		why, score := mismatch(g, gpu)
		if score == 0 {
			return ""
		}
		if bestScore < 0 || score < bestScore {
			best, bestWhy, bestScore = gpu, why, score
		}
	}
	return fmt.Sprintf("needs %s (closest: GPU %d %q: %s)", g, best.Index, best.Name, strings.Join(bestWhy, ", "))
}

// mismatch says how gpu falls short of g, and scores it: 0 if it meets g,
// more the worse it is; a GPU of another vendor scores worse than any of
// the vendor.
func mismatch(g *schema.GPURequirements, gpu GPU) (why []string, score int) {
	if g.Vendor != "" && gpu.Vendor != g.Vendor {
		why = append(why, "vendor "+orUnknown(gpu.Vendor))
		score += 10
	}
	if !g.MinArch.IsZero() && gpu.Arch.Compare(g.MinArch) < 0 {
		have := "unknown"
		if !gpu.Arch.IsZero() {
			have = archString(gpu.Arch)
		}
		why = append(why, fmt.Sprintf("arch %s < %s", have, archString(g.MinArch)))
		score++
	}
	if !g.MinDriver.IsZero() && gpu.Driver.Compare(g.MinDriver) < 0 {
		have := "unknown"
		if !gpu.Driver.IsZero() {
			have = gpu.Driver.String()
		}
		why = append(why, fmt.Sprintf("driver %s < %s", have, g.MinDriver))
		score++
	}
	return why, score
}

// orList returns "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// orUnknown returns s, or "unknown" if it is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// unmetLibraries names the libraries the dynamic linker cannot find, with
// the Debian package likely to provide each. Only this machine's
// libraries can be looked for: on a Machine describing another OS or
// architecture, the libraries are not checked.
func unmetLibraries(libs []string, m *Machine) string {
	asker, ok := ldso.ObjectFor(m.Arch)
	if len(libs) == 0 || m.OS != "linux" || runtime.GOOS != "linux" || m.Arch != runtime.GOARCH || !ok {
		return ""
	}
	r := ldso.Current()
	var missing []string
	for i, lib := range libs {
		if slices.Contains(libs[:i], lib) {
			continue
		}
		if _, err := r.Find(lib, asker); err != nil {
			missing = append(missing, lib)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("needs %s, which the dynamic linker cannot find", ldso.WithHints(missing))
}
