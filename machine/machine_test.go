package machine

import (
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/dynop/dynop/iface"
)

// TestCurrent checks what Current detects on the machine running the test.
// The package's own tests import no probe, so there are no GPUs.
func TestCurrent(t *testing.T) {
	m := Current()
	if m != Current() {
		t.Error("Current returned two different machines")
	}
	if m.OS != runtime.GOOS || m.Arch != runtime.GOARCH {
		t.Errorf("OS/Arch = %s/%s, want %s/%s", m.OS, m.Arch, runtime.GOOS, runtime.GOARCH)
	}
	if runtime.GOARCH == "amd64" && !m.hasCPUFeature("sse2") {
		t.Errorf("amd64 CPU without sse2: %v", m.CPUFeatures)
	}
	if runtime.GOARCH == "arm64" && !(m.hasCPUFeature("asimd") && m.hasCPUFeature("neon")) {
		t.Errorf("arm64 CPU without asimd (neon): %v", m.CPUFeatures)
	}
	if !slices.IsSorted(m.CPUFeatures) {
		t.Errorf("CPUFeatures not sorted: %v", m.CPUFeatures)
	}
	known := KnownCPUFeatures(m.Arch)
	for _, f := range m.CPUFeatures {
		if !slices.Contains(known, f) {
			t.Errorf("CPU feature %q is not in KnownCPUFeatures(%q)", f, m.Arch)
		}
	}
	if runtime.GOOS == "linux" && m.OSVersion.IsZero() {
		t.Error("OSVersion is zero on linux")
	}
	if len(m.GPUs) != 0 || !errors.Is(m.GPUErr, ErrNoGPUProbe) {
		t.Errorf("GPUs, GPUErr = %v, %v; want none, %v", m.GPUs, m.GPUErr, ErrNoGPUProbe)
	}
	if got, want := m.GPUErr.Error(), "no GPU probe (import github.com/dynop/dynop/machine/nvml)"; got != want {
		t.Errorf("GPUErr = %q, want %q", got, want)
	}
	s := m.String()
	if want := runtime.GOOS + "/" + runtime.GOARCH; !strings.HasPrefix(s, want) {
		t.Errorf("String() = %q, want prefix %q", s, want)
	}
	if want := ", no GPU (no GPU probe (import github.com/dynop/dynop/machine/nvml))"; !strings.HasSuffix(s, want) {
		t.Errorf("String() = %q, want suffix %q", s, want)
	}
	t.Log(s)
}

func TestDetectIsFresh(t *testing.T) {
	a, b := Detect(), Detect()
	if a == b || a == Current() {
		t.Fatal("Detect returned a shared machine")
	}
	if !reflect.DeepEqual(a.CPUFeatures, b.CPUFeatures) || a.OSVersion != b.OSVersion {
		t.Errorf("two detections differ: %v and %v", a, b)
	}
	if len(a.CPUFeatures) > 0 {
		a.CPUFeatures[0] = "changed"
		if b.CPUFeatures[0] == "changed" || Current().CPUFeatures[0] == "changed" {
			t.Error("machines share their CPUFeatures")
		}
	}
}

// TestCPUFeatureTables checks every name in the tables against the field of
// golang.org/x/sys/cpu it reads, and that the tables miss no field but the
// few left out on purpose. If x/sys/cpu gains a flag, add it to the table.
func TestCPUFeatureTables(t *testing.T) {
	for _, tc := range []struct {
		arch    string
		table   []cpuFeature
		flags   any // pointer to the x/sys/cpu struct
		leftOut []string
	}{
		{"amd64", x86Features, &cpu.X86, []string{"HasOSXSAVE"}},
		{"arm64", arm64Features, &cpu.ARM64, []string{"HasEVTSTRM", "HasCPUID"}},
	} {
		v := reflect.ValueOf(tc.flags).Elem()
		fields := map[*bool]string{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if strings.HasPrefix(f.Name, "Has") && f.Type.Kind() == reflect.Bool {
				fields[v.Field(i).Addr().Interface().(*bool)] = f.Name
			}
		}
		for _, f := range tc.table {
			field, ok := fields[f.has]
			if !ok {
				t.Errorf("%s: feature %q reads no Has field of x/sys/cpu", tc.arch, f.name)
				continue
			}
			if want := strings.ToLower(strings.TrimPrefix(field, "Has")); f.name != want {
				t.Errorf("%s: feature %q reads %s; want the name %q", tc.arch, f.name, field, want)
			}
			delete(fields, f.has)
		}
		for _, field := range fields {
			if !slices.Contains(tc.leftOut, field) {
				t.Errorf("%s: x/sys/cpu field %s is in no feature table", tc.arch, field)
			}
		}
		names := KnownCPUFeatures(tc.arch)
		if len(names) != len(tc.table) || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Errorf("KnownCPUFeatures(%q) = %v: want %d sorted names without repeats", tc.arch, names, len(tc.table))
		}
	}
}

func TestKnownCPUFeatures(t *testing.T) {
	amd64 := KnownCPUFeatures("amd64")
	for _, want := range []string{"sse2", "sse3", "ssse3", "sse41", "sse42", "popcnt", "avx", "avx2", "fma", "bmi1", "bmi2",
		"avx512f", "avx512bw", "avx512vl", "avx512cd", "avx512dq", "avx512vnni"} {
		if !slices.Contains(amd64, want) {
			t.Errorf("KnownCPUFeatures(amd64) lacks %q", want)
		}
	}
	if !reflect.DeepEqual(KnownCPUFeatures("386"), amd64) {
		t.Error("386 and amd64 know different features")
	}
	arm64 := KnownCPUFeatures("arm64")
	for _, want := range []string{"asimd", "fp", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "sve", "sve2"} {
		if !slices.Contains(arm64, want) {
			t.Errorf("KnownCPUFeatures(arm64) lacks %q", want)
		}
	}
	if slices.Contains(arm64, "neon") {
		t.Error(`KnownCPUFeatures(arm64) lists the alias "neon"`)
	}
	for _, arch := range []string{"riscv64", "wasm", ""} {
		if got := KnownCPUFeatures(arch); got != nil {
			t.Errorf("KnownCPUFeatures(%q) = %v, want nil", arch, got)
		}
	}
	amd64[0] = "changed"
	if KnownCPUFeatures("amd64")[0] == "changed" {
		t.Error("KnownCPUFeatures returns a shared slice")
	}
}

func TestHasCPUFeature(t *testing.T) {
	arm := &Machine{Arch: "arm64", CPUFeatures: []string{"asimd", "fp"}}
	x86 := &Machine{Arch: "amd64", CPUFeatures: []string{"avx", "sse2"}}
	for _, tc := range []struct {
		m    *Machine
		name string
		want bool
	}{
		{arm, "asimd", true},
		{arm, "neon", true},
		{arm, "sve", false},
		{x86, "avx", true},
		{x86, "avx2", false},
		{x86, "AVX", false}, // names are lower case
		{x86, "neon", false},
		{&Machine{Arch: "arm64"}, "neon", false},
	} {
		if got := tc.m.hasCPUFeature(tc.name); got != tc.want {
			t.Errorf("%s %v: hasCPUFeature(%q) = %v, want %v", tc.m.Arch, tc.m.CPUFeatures, tc.name, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	h100 := GPU{Index: 0, Vendor: "nvidia", Name: "NVIDIA H100 80GB HBM3", Arch: iface.V(9, 0, 0), Driver: iface.V(550, 54, 15)}
	for _, tc := range []struct {
		m    Machine
		want string
	}{
		{
			Machine{OS: "linux", Arch: "amd64", OSVersion: iface.V(6, 1, 0), CPUFeatures: []string{"avx", "sse2"}, GPUErr: ErrNoGPUProbe},
			"linux/amd64 kernel 6.1.0, CPU avx sse2, no GPU (no GPU probe (import github.com/dynop/dynop/machine/nvml))",
		},
		{
			Machine{OS: "linux", Arch: "amd64", OSVersion: iface.V(6, 1, 0), CPUFeatures: []string{"avx2"},
				GPUs: []GPU{h100, {Index: 1, Vendor: "nvidia", Name: "NVIDIA A10", Arch: iface.V(8, 6, 0), Driver: iface.V(550, 54, 15)}}},
			`linux/amd64 kernel 6.1.0, CPU avx2, GPU 0 "NVIDIA H100 80GB HBM3" (nvidia, arch 9.0, driver 550.54.15), ` +
				`GPU 1 "NVIDIA A10" (nvidia, arch 8.6, driver 550.54.15)`,
		},
		{
			Machine{OS: "windows", Arch: "riscv64"},
			"windows/riscv64, CPU features unknown, no GPU",
		},
		{
			Machine{OS: "freebsd", Arch: "arm64", OSVersion: iface.V(14, 0, 0), CPUFeatures: []string{"asimd"},
				GPUErr: errors.Join(errors.New("first"), errors.New("second"))},
			"freebsd/arm64 OS version 14.0.0, CPU asimd, no GPU (first; second)",
		},
		{
			Machine{OS: "linux", Arch: "amd64", CPUFeatures: []string{"sse2"}, GPUs: []GPU{{Index: 2, Name: "Mystery", Arch: iface.V(1, 2, 3)}}},
			`linux/amd64, CPU sse2, GPU 2 "Mystery" (arch 1.2.3)`,
		},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("String() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

func TestParseDriverVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want iface.Version
	}{
		{"550.54.15", iface.V(550, 54, 15)},
		{"535.104", iface.V(535, 104, 0)},
		{"470.57.02", iface.V(470, 57, 2)},
		{"31", iface.V(31, 0, 0)},
	} {
		got, err := ParseDriverVersion(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDriverVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", `syntax error: driver version "": part "" is not a decimal number below 2^32`},
		{"550.54.15.1", `syntax error: driver version "550.54.15.1": want at most 3 dot-separated numbers, got 4`},
		{"550.x", `syntax error: driver version "550.x": part "x" is not a decimal number below 2^32`},
		{"550..1", `syntax error: driver version "550..1": part "" is not a decimal number below 2^32`},
		{"-1.0", `syntax error: driver version "-1.0": part "-1" is not a decimal number below 2^32`},
		{"+1.0", `syntax error: driver version "+1.0": part "+1" is not a decimal number below 2^32`},
		{"4294967296", `syntax error: driver version "4294967296": part "4294967296" is not a decimal number below 2^32`},
		{" 550.54", `syntax error: driver version " 550.54": part " 550" is not a decimal number below 2^32`},
	} {
		v, err := ParseDriverVersion(tc.in)
		if err == nil {
			t.Errorf("ParseDriverVersion(%q) = %v, want an error", tc.in, v)
			continue
		}
		if !errors.Is(err, iface.ErrSyntax) || err.Error() != tc.want {
			t.Errorf("ParseDriverVersion(%q) error = %q, want %q wrapping iface.ErrSyntax", tc.in, err, tc.want)
		}
	}
}

func TestParseKernelRelease(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want iface.Version
	}{
		{"6.1.0-18-amd64", iface.V(6, 1, 0)},
		{"5.15.146.1-microsoft-standard-WSL2", iface.V(5, 15, 146)},
		{"6.8", iface.V(6, 8, 0)},
		{"6.8.", iface.V(6, 8, 0)},
		{"4.4.0+", iface.V(4, 4, 0)},
		{"6.18.44-fc-v509", iface.V(6, 18, 44)},
		{"", iface.Version{}},
		{"linux", iface.Version{}},
		{".6.1", iface.Version{}},
		{"6..1", iface.Version{}},
		{"99999999999.1", iface.Version{}},
	} {
		if got := parseKernelRelease(tc.in); got != tc.want {
			t.Errorf("parseKernelRelease(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRegisterGPUProbePanics(t *testing.T) {
	var s probeSet
	s.register("vendor", func() ([]GPU, error) { return nil, nil })
	for _, tc := range []struct {
		name  string
		probe gpuProbe
		want  string
	}{
		{"", func() ([]GPU, error) { return nil, nil }, "machine: RegisterGPUProbe with an empty name"},
		{"other", nil, `machine: RegisterGPUProbe("other") with a nil probe`},
		{"vendor", func() ([]GPU, error) { return nil, nil }, `machine: GPU probe "vendor" registered twice`},
	} {
		func() {
			defer func() {
				if got := recover(); got != tc.want {
					t.Errorf("register(%q) panicked with %v, want %q", tc.name, got, tc.want)
				}
			}()
			s.register(tc.name, tc.probe)
		}()
	}
	// The exported function checks its arguments the same way, before it
	// touches the shared registry.
	defer func() {
		if got, want := recover(), "machine: RegisterGPUProbe with an empty name"; got != want {
			t.Errorf("RegisterGPUProbe panicked with %v, want %q", got, want)
		}
	}()
	RegisterGPUProbe("", nil)
}

func TestProbeSetRun(t *testing.T) {
	a100 := GPU{Index: 0, Vendor: "nvidia", Name: "A100", Arch: iface.V(8, 0, 0), Driver: iface.V(535, 104, 0)}
	arc := GPU{Index: 0, Vendor: "intel", Name: "Arc A770"}
	errNoLib := errors.New("amd: libamd_smi.so not found")
	errNoNVML := errors.New("nvml: libnvidia-ml.so.1 not found")
	found := func(gpus ...GPU) gpuProbe { return func() ([]GPU, error) { return gpus, nil } }
	fail := func(err error) gpuProbe { return func() ([]GPU, error) { return []GPU{{Name: "ignored"}}, err } }

	for _, tc := range []struct {
		name     string
		probes   map[string]gpuProbe
		wantGPUs []GPU
		wantErr  string
		wantIs   []error
	}{
		{name: "none", wantErr: ErrNoGPUProbe.Error(), wantIs: []error{ErrNoGPUProbe}},
		{name: "one finds", probes: map[string]gpuProbe{"nvml": found(a100)}, wantGPUs: []GPU{a100}},
		{name: "one finds nothing", probes: map[string]gpuProbe{"nvml": found()}},
		{name: "in name order", probes: map[string]gpuProbe{"nvml": found(a100), "intel": found(arc)}, wantGPUs: []GPU{arc, a100}},
		{name: "one fails", probes: map[string]gpuProbe{"nvml": fail(errNoNVML)}, wantErr: errNoNVML.Error(), wantIs: []error{errNoNVML}},
		{name: "one of two fails", probes: map[string]gpuProbe{"amd": fail(errNoLib), "nvml": found(a100)}, wantGPUs: []GPU{a100}},
		{
			name:    "all fail",
			probes:  map[string]gpuProbe{"amd": fail(errNoLib), "nvml": fail(errNoNVML)},
			wantErr: "amd: libamd_smi.so not found; nvml: libnvidia-ml.so.1 not found",
			wantIs:  []error{errNoLib, errNoNVML},
		},
		{
			name:    "panic",
			probes:  map[string]gpuProbe{"bad": func() ([]GPU, error) { panic("boom") }},
			wantErr: `machine: GPU probe "bad" panicked: boom`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s probeSet
			for name, p := range tc.probes {
				s.register(name, p)
			}
			gpus, err := s.run()
			if !reflect.DeepEqual(gpus, tc.wantGPUs) {
				t.Errorf("GPUs = %v, want %v", gpus, tc.wantGPUs)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("error = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("error %q does not wrap %q", err, target)
				}
			}
		})
	}
}
