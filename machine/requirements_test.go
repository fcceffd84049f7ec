package machine_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/schema"
)

// Machines for the Check tests.
var (
	errNoNVML = errors.New("nvml: libnvidia-ml.so.1 not found (libnvidia-ml.so.1: cannot open shared object file: No such file or directory)")

	radeon = machine.GPU{Index: 0, Vendor: "amd", Name: "Radeon PRO W7900", Arch: iface.V(11, 0, 0), Driver: iface.V(6, 2, 4)}
	a100   = machine.GPU{Index: 0, Vendor: "nvidia", Name: "NVIDIA A100", Arch: iface.V(8, 0, 0), Driver: iface.V(470, 1, 0)}
	h100   = machine.GPU{Index: 1, Vendor: "nvidia", Name: "NVIDIA H100", Arch: iface.V(9, 0, 0), Driver: iface.V(550, 54, 15)}

	linuxBox = &machine.Machine{
		OS: "linux", Arch: "amd64", OSVersion: iface.V(6, 1, 0),
		CPUFeatures: []string{"avx", "avx2", "fma", "popcnt", "sse2", "sse3", "sse41", "sse42", "ssse3"},
		GPUErr:      errNoNVML,
	}
	gpuBox = &machine.Machine{
		OS: "linux", Arch: "amd64", OSVersion: iface.V(6, 1, 0), CPUFeatures: []string{"avx2", "sse2"},
		GPUs: []machine.GPU{a100, h100},
	}
	oldGPUBox = &machine.Machine{
		OS: "linux", Arch: "amd64", CPUFeatures: []string{"sse2"},
		GPUs: []machine.GPU{radeon, {Index: 1, Vendor: "nvidia", Name: "NVIDIA A100", Arch: iface.V(8, 0, 0), Driver: iface.V(470, 1, 0)}},
	}
	armMac = &machine.Machine{OS: "darwin", Arch: "arm64", OSVersion: iface.V(13, 1, 0), CPUFeatures: []string{"aes", "asimd", "fp"}}
	riscv  = &machine.Machine{OS: "linux", Arch: "riscv64", OSVersion: iface.V(6, 6, 0)}
)

func TestRequirementsCheck(t *testing.T) {
	nvidia := func(minArch, minDriver iface.Version) *schema.GPURequirements {
		return &schema.GPURequirements{Vendor: "nvidia", MinArch: minArch, MinDriver: minDriver}
	}
	zero := iface.Version{}
	for _, tc := range []struct {
		name string
		r    schema.Requirements
		m    *machine.Machine
		want string // "" for nil
	}{
		{"nothing required", schema.Requirements{}, linuxBox, ""},
		{"nothing required, empty machine", schema.Requirements{}, &machine.Machine{}, ""},

		// OS and its version.
		{"os listed", schema.Requirements{OS: []string{"darwin", "linux"}}, linuxBox, ""},
		{"os not listed", schema.Requirements{OS: []string{"windows", "darwin"}}, linuxBox,
			"unsupported: needs os windows or darwin (this is linux)"},
		{"os not in three", schema.Requirements{OS: []string{"windows", "darwin", "freebsd"}}, linuxBox,
			"unsupported: needs os windows, darwin or freebsd (this is linux)"},
		{"os unknown", schema.Requirements{OS: []string{"linux"}}, &machine.Machine{}, "unsupported: needs os linux (this is unknown)"},
		{"kernel too old", schema.Requirements{MinOSVersion: iface.V(6, 8, 0)}, linuxBox,
			"unsupported: needs kernel 6.8.0 or newer (this is 6.1.0)"},
		{"kernel new enough", schema.Requirements{OS: []string{"linux"}, MinOSVersion: iface.V(6, 1, 0)}, linuxBox, ""},
		{"kernel unknown", schema.Requirements{MinOSVersion: iface.V(6, 8, 0)}, &machine.Machine{OS: "linux"}, ""},
		{"darwin too old", schema.Requirements{MinOSVersion: iface.V(14, 0, 0)}, armMac,
			"unsupported: needs OS version 14.0.0 or newer (this is 13.1.0)"},
		{"version not checked on another os", schema.Requirements{OS: []string{"windows"}, MinOSVersion: iface.V(10, 0, 0)}, linuxBox,
			"unsupported: needs os windows (this is linux)"},

		// Arch and CPU features.
		{"arch listed", schema.Requirements{Arch: []string{"amd64", "arm64"}}, armMac, ""},
		{"arch not listed", schema.Requirements{Arch: []string{"arm64"}, CPUFeatures: []string{"sve"}}, linuxBox,
			"unsupported: needs arch arm64 (this is amd64)"},
		{"features present", schema.Requirements{Arch: []string{"amd64"}, CPUFeatures: []string{"avx2", "fma", "sse42"}}, linuxBox, ""},
		{"one feature missing", schema.Requirements{CPUFeatures: []string{"avx2", "avx512f"}}, linuxBox,
			"unsupported: needs CPU feature avx512f (this CPU lacks it)"},
		{"features missing and os", schema.Requirements{OS: []string{"windows", "darwin"}, CPUFeatures: []string{"avx512f", "avx2", "avx512bw", "avx512f"}}, linuxBox,
			"unsupported: needs os windows or darwin (this is linux); needs CPU features avx512f, avx512bw (this CPU lacks them)"},
		{"neon is asimd", schema.Requirements{CPUFeatures: []string{"neon", "aes"}}, armMac, ""},
		{"arm64 feature missing", schema.Requirements{CPUFeatures: []string{"sve2"}}, armMac,
			"unsupported: needs CPU feature sve2 (this CPU lacks it)"},
		{"unknown features", schema.Requirements{CPUFeatures: []string{"sse4.2", "AVX2", "quantum", "avx"}}, linuxBox,
			`unsupported: unknown CPU feature "sse4.2" on amd64 (did you mean sse42?); ` +
				`unknown CPU feature "AVX2" on amd64 (did you mean avx2?); unknown CPU feature "quantum" on amd64`},
		{"x86 feature on arm64", schema.Requirements{CPUFeatures: []string{"avx2"}}, armMac,
			`unsupported: unknown CPU feature "avx2" on arm64`},
		{"missing before unknown", schema.Requirements{CPUFeatures: []string{"avx2x", "avx512vl"}}, linuxBox,
			`unsupported: needs CPU feature avx512vl (this CPU lacks it); unknown CPU feature "avx2x" on amd64 (did you mean avx2?)`},
		{"features of an unknown arch", schema.Requirements{CPUFeatures: []string{"v", "zbb"}}, riscv,
			"unsupported: needs CPU features v, zbb, which dynop cannot detect on riscv64"},

		// GPU.
		{"no GPU, probe failed", schema.Requirements{GPU: nvidia(zero, zero)}, linuxBox,
			"unsupported: needs an nvidia GPU; this machine has none (" + errNoNVML.Error() + ")"},
		{"no GPU, probes failed", schema.Requirements{GPU: &schema.GPURequirements{MinArch: iface.V(8, 6, 0)}},
			&machine.Machine{GPUErr: errors.Join(errors.New("amd: no"), errors.New("nvml: no"))},
			"unsupported: needs a GPU with arch 8.6 or newer; this machine has none (amd: no; nvml: no)"},
		{"no GPU found", schema.Requirements{GPU: &schema.GPURequirements{}}, &machine.Machine{}, "unsupported: needs a GPU; this machine has none"},
		{"any GPU", schema.Requirements{GPU: &schema.GPURequirements{}}, oldGPUBox, ""},
		{"vendor present", schema.Requirements{GPU: nvidia(zero, zero)}, gpuBox, ""},
		{"second GPU fits", schema.Requirements{GPU: nvidia(iface.V(8, 6, 0), iface.V(525, 0, 0))}, gpuBox, ""},
		{"exact versions fit", schema.Requirements{GPU: nvidia(iface.V(9, 0, 0), iface.V(550, 54, 15))}, gpuBox, ""},
		{"closest GPU too old", schema.Requirements{GPU: nvidia(iface.V(8, 6, 0), iface.V(525, 0, 0))}, oldGPUBox,
			`unsupported: needs an nvidia GPU with arch 8.6 or newer and driver 525.0.0 or newer ` +
				`(closest: GPU 1 "NVIDIA A100": arch 8.0 < 8.6, driver 470.1.0 < 525.0.0)`},
		{"closest is the first of equals", schema.Requirements{GPU: nvidia(iface.V(9, 0, 1), zero)}, gpuBox,
			`unsupported: needs an nvidia GPU with arch 9.0.1 or newer (closest: GPU 0 "NVIDIA A100": arch 8.0 < 9.0.1)`},
		{"closest has the fewest shortfalls", schema.Requirements{GPU: nvidia(iface.V(8, 6, 0), iface.V(500, 0, 0))},
			&machine.Machine{GPUs: []machine.GPU{a100, {Index: 1, Vendor: "nvidia", Name: "NVIDIA A10", Arch: iface.V(8, 6, 0), Driver: iface.V(470, 1, 0)}}},
			`unsupported: needs an nvidia GPU with arch 8.6 or newer and driver 500.0.0 or newer (closest: GPU 1 "NVIDIA A10": driver 470.1.0 < 500.0.0)`},
		{"wrong vendor", schema.Requirements{GPU: nvidia(zero, zero)}, &machine.Machine{GPUs: []machine.GPU{radeon}},
			`unsupported: needs an nvidia GPU (closest: GPU 0 "Radeon PRO W7900": vendor amd)`},
		{"vendor and versions unknown", schema.Requirements{GPU: &schema.GPURequirements{Vendor: "intel", MinArch: iface.V(1, 0, 0), MinDriver: iface.V(31, 0, 0)}},
			&machine.Machine{GPUs: []machine.GPU{{Index: 3, Name: "Mystery"}}},
			`unsupported: needs an intel GPU with arch 1.0 or newer and driver 31.0.0 or newer ` +
				`(closest: GPU 3 "Mystery": vendor unknown, arch unknown < 1.0, driver unknown < 31.0.0)`},

		// Everything at once.
		{"all unmet", schema.Requirements{
			OS: []string{"linux"}, MinOSVersion: iface.V(14, 0, 0), Arch: []string{"arm64"},
			CPUFeatures: []string{"sve2", "neon", "sha3", "crc"}, GPU: nvidia(iface.V(8, 6, 0), zero),
		}, armMac,
			"unsupported: needs os linux (this is darwin); needs CPU features sve2, sha3 (this CPU lacks them); " +
				`unknown CPU feature "crc" on arm64; needs an nvidia GPU with arch 8.6 or newer; this machine has none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Check(tc.r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = nil, want %q", tc.want)
			}
			if !errors.Is(err, errdefs.ErrUnsupported) {
				t.Errorf("error %q does not wrap errdefs.ErrUnsupported", err)
			}
			if err.Error() != tc.want {
				t.Errorf("Check =\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestRequirementsCheckCurrent checks requirements against the machine the
// test runs on.
func TestRequirementsCheckCurrent(t *testing.T) {
	m := machine.Current()
	if err := m.Check(schema.Requirements{}); err != nil {
		t.Errorf("zero requirements: %v", err)
	}
	own := schema.Requirements{
		OS:           []string{runtime.GOOS},
		MinOSVersion: m.OSVersion,
		Arch:         []string{runtime.GOARCH},
		CPUFeatures:  m.CPUFeatures,
	}
	if err := m.Check(own); err != nil {
		t.Errorf("this machine's own OS, arch and CPU features: %v", err)
	}
	other := schema.Requirements{OS: []string{"plan9"}}
	if err := m.Check(other); !errors.Is(err, errdefs.ErrUnsupported) {
		t.Errorf("requiring plan9: %v, want errdefs.ErrUnsupported", err)
	}
}

// A host checks a plugin's requirements against the machine before it
// offers the plugin; here the machine is described by hand.
func ExampleMachine_Check() {
	r := schema.Requirements{
		OS:          []string{"linux"},
		Arch:        []string{"amd64"},
		CPUFeatures: []string{"avx2", "avx512f"},
		GPU:         &schema.GPURequirements{Vendor: "nvidia", MinArch: iface.V(8, 6, 0)},
	}
	m := &machine.Machine{
		OS: "linux", Arch: "amd64", OSVersion: iface.V(6, 1, 0),
		CPUFeatures: []string{"avx", "avx2", "sse2"},
		GPUs:        []machine.GPU{{Index: 0, Vendor: "nvidia", Name: "NVIDIA A100", Arch: iface.V(8, 0, 0), Driver: iface.V(550, 54, 15)}},
	}
	err := m.Check(r)
	fmt.Println(errors.Is(err, errdefs.ErrUnsupported))
	fmt.Println(err)
	// Output:
	// true
	// unsupported: needs CPU feature avx512f (this CPU lacks it); needs an nvidia GPU with arch 8.6 or newer (closest: GPU 0 "NVIDIA A100": arch 8.0 < 8.6)
}

// TestLibrariesRequired: a library the dynamic linker finds meets the
// requirement; one it cannot is named, with a Debian package; on a
// machine description of another architecture nothing is looked for.
func TestLibrariesRequired(t *testing.T) {
	m := machine.Current()
	if m.OS != "linux" {
		t.Skip("shared libraries by soname are looked for on Linux only")
	}
	if err := m.Check(schema.Requirements{Libraries: []string{"libc.so.6", "libm.so.6"}}); err != nil {
		t.Errorf("libc and libm: %v", err)
	}
	err := m.Check(schema.Requirements{Libraries: []string{"libc.so.6", "libdynopnothere.so.4", "libdynopnothere.so.4"}})
	testutil.WantErr(t, err, errdefs.ErrUnsupported, "needs libdynopnothere.so.4 (Debian package libdynopnothere4), which the dynamic linker cannot find")
	if strings.Count(err.Error(), "libdynopnothere") != 2 { // the soname and the package, once
		t.Errorf("a library listed twice is reported twice: %v", err)
	}
	other := *m
	other.Arch = "s390x"
	if err := other.Check(schema.Requirements{Libraries: []string{"libdynopnothere.so.4"}}); err != nil {
		t.Errorf("another machine's libraries were looked for here: %v", err)
	}
}
