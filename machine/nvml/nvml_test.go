//go:build linux && cgo

package nvml_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/machine/nvml"
)

// fakeNVML is a fake libnvidia-ml.so.1 with two GPUs. Defines change it:
// INIT_RESULT makes nvmlInit_v2 fail, NAME_RESULT makes nvmlDeviceGetName
// fail for the second device, DRIVER replaces the driver version,
// NO_COMPUTE_CAPABILITY and NO_ERROR_STRING leave those functions out.
// If FAKE_NVML_TRACE names a file, init and shutdown append a line to it.
const fakeNVML = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef INIT_RESULT
#define INIT_RESULT 0
#endif
#ifndef NAME_RESULT
#define NAME_RESULT 0
#endif
#ifndef DRIVER
#define DRIVER "550.54.15"
#endif

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st { const char *name; int major, minor; } *nvmlDevice_t;

static struct nvmlDevice_st devices[] = {{"Fake H100", 9, 0}, {"Fake A10", 8, 6}};
static int initialized;

static void trace(const char *event) {
	const char *path = getenv("FAKE_NVML_TRACE");
	FILE *f;
	if (path == NULL || *path == 0) return;
	f = fopen(path, "a");
	if (f == NULL) return;
	fprintf(f, "%s\n", event);
	fclose(f);
}

static nvmlReturn_t copy(const char *s, char *buf, unsigned int len) {
	if (strlen(s) >= len) return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	strcpy(buf, s);
	return 0;
}

nvmlReturn_t nvmlInit_v2(void) {
	trace("init");
	if (INIT_RESULT != 0) return INIT_RESULT;
	initialized++;
	return 0;
}

nvmlReturn_t nvmlShutdown(void) {
	trace("shutdown");
	if (!initialized) return 1; /* NVML_ERROR_UNINITIALIZED */
	initialized--;
	return 0;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int len) {
	if (!initialized) return 1;
	return copy(DRIVER, version, len);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
	if (!initialized) return 1;
	*count = 2;
	return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
	if (!initialized) return 1;
	if (index >= 2) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*device = &devices[index];
	return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int len) {
	if (!initialized) return 1;
	if (NAME_RESULT != 0 && device == &devices[1]) return NAME_RESULT;
	return copy(device->name, name, len);
}

#ifndef NO_COMPUTE_CAPABILITY
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
	if (!initialized) return 1;
	*major = device->major;
	*minor = device->minor;
	return 0;
}
#endif

#ifndef NO_ERROR_STRING
const char *nvmlErrorString(nvmlReturn_t result) {
	switch (result) {
	case 0: return "Success";
	case 1: return "Uninitialized";
	case 3: return "Not Supported";
	case 9: return "Driver Not Loaded";
	default: return "Unknown Error";
	}
}
#endif
`

// fakeGPUs are the GPUs of fakeNVML.
var fakeGPUs = []machine.GPU{
	{Index: 0, Vendor: "nvidia", Name: "Fake H100", Arch: iface.V(9, 0, 0), Driver: iface.V(550, 54, 15)},
	{Index: 1, Vendor: "nvidia", Name: "Fake A10", Arch: iface.V(8, 6, 0), Driver: iface.V(550, 54, 15)},
}

// buildFake compiles fakeNVML with the defines into libnvidia-ml.so.1 in a
// temporary directory and returns its path. It points FAKE_NVML_TRACE at a
// file in the same directory, whose lines trace returns.
func buildFake(t *testing.T, defines ...string) (library string, trace func() string) {
	t.Helper()
	cc := cbuild.Compiler(t, false)
	dir := t.TempDir()
	src := filepath.Join(dir, "fake_nvml.c")
	if err := os.WriteFile(src, []byte(fakeNVML), 0o644); err != nil {
		t.Fatal(err)
	}
	library = filepath.Join(dir, "libnvidia-ml.so.1")
	args := []string{"-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra", "-Werror"}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	cmd := exec.Command(cc, append(args, "-o", library, src)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake NVML: %v\n%s\n%s", err, cmd, out)
	}
	tracePath := filepath.Join(dir, "trace")
	t.Setenv("FAKE_NVML_TRACE", tracePath)
	return library, func() string {
		b, err := os.ReadFile(tracePath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return string(b)
	}
}

func TestProbe(t *testing.T) {
	library, trace := buildFake(t)
	gpus, err := nvml.Probe(library)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gpus, fakeGPUs) {
		t.Errorf("Probe = %v, want %v", gpus, fakeGPUs)
	}
	if got := trace(); got != "init\nshutdown\n" {
		t.Errorf("NVML calls traced %q, want init and shutdown", got)
	}
	if cbuild.Mapped(t, library) {
		t.Error("the library is still loaded after Probe")
	}
}

// TestProbeErrors checks the error of each way the fake can fail: its text,
// whether NVML was shut down after a successful init, and that the
// library was unloaded.
func TestProbeErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		defines []string
		want    string // {lib} is the library's path
		trace   string
	}{
		{
			name:    "init fails",
			defines: []string{"INIT_RESULT=9"},
			want:    "nvml: {lib}: nvmlInit_v2 returned 9 (Driver Not Loaded)",
			trace:   "init\n",
		},
		{
			name:    "init fails without nvmlErrorString",
			defines: []string{"INIT_RESULT=9", "NO_ERROR_STRING"},
			want:    "nvml: {lib}: nvmlInit_v2 returned 9",
			trace:   "init\n",
		},
		{
			name:    "device fails",
			defines: []string{"NAME_RESULT=3"},
			want:    "nvml: {lib}: nvmlDeviceGetName for device 1 returned 3 (Not Supported)",
			trace:   "init\nshutdown\n",
		},
		{
			name:    "driver version does not parse",
			defines: []string{`DRIVER="550.x"`},
			want:    `nvml: {lib}: nvmlSystemGetDriverVersion: syntax error: driver version "550.x": part "x" is not a decimal number below 2^32`,
			trace:   "init\nshutdown\n",
		},
		{
			name:    "driver version too long",
			defines: []string{`DRIVER="` + strings.Repeat("1", 100) + `"`},
			want:    "nvml: {lib}: nvmlSystemGetDriverVersion returned 7 (Unknown Error)",
			trace:   "init\nshutdown\n",
		},
		{
			name:    "missing function",
			defines: []string{"NO_COMPUTE_CAPABILITY"},
			want:    "nvml: {lib}: no function nvmlDeviceGetCudaComputeCapability ({lib}: undefined symbol: nvmlDeviceGetCudaComputeCapability)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			library, trace := buildFake(t, tc.defines...)
			gpus, err := nvml.Probe(library)
			if err == nil {
				t.Fatalf("Probe = %v, want an error", gpus)
			}
			checkErr(t, err, strings.ReplaceAll(tc.want, "{lib}", library))
			if gpus != nil {
				t.Errorf("Probe returned GPUs %v with its error", gpus)
			}
			if errors.Is(err, nvml.ErrNotFound) {
				t.Errorf("error %q wraps ErrNotFound", err)
			}
			if got := trace(); got != tc.trace {
				t.Errorf("NVML calls traced %q, want %q", got, tc.trace)
			}
			if cbuild.Mapped(t, library) {
				t.Error("the library is still loaded after Probe")
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
}

func TestProbeMissingLibrary(t *testing.T) {
	library := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	gpus, err := nvml.Probe(library)
	if err == nil {
		t.Fatalf("Probe(%q) = %v, want an error", library, gpus)
	}
	if !errors.Is(err, nvml.ErrNotFound) {
		t.Errorf("error %q does not wrap ErrNotFound", err)
	}
	want := "nvml: " + library + " not found (" + library + ": cannot open shared object file: No such file or directory)"
	checkErr(t, err, want)
}

func TestProbeNotALibrary(t *testing.T) {
	library := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	if err := os.WriteFile(library, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := nvml.Probe(library)
	if err == nil || errors.Is(err, nvml.ErrNotFound) || !strings.HasPrefix(err.Error(), "nvml: cannot load "+library+": ") {
		t.Errorf("error = %v, want one that says it cannot load %s and does not wrap ErrNotFound", err, library)
	}
}

// TestDefaultLibrary probes the real NVML: on a machine without the NVIDIA
// driver the error says it is not found; with it, there are GPUs.
func TestDefaultLibrary(t *testing.T) {
	gpus, err := nvml.Probe(nvml.DefaultLibrary)
	if err != nil {
		if !errors.Is(err, nvml.ErrNotFound) {
			t.Skipf("NVML is installed but fails: %v", err)
		}
		if !strings.HasPrefix(err.Error(), "nvml: libnvidia-ml.so.1 not found (") {
			t.Errorf("error = %q, want it to say libnvidia-ml.so.1 is not found", err)
		}
		return
	}
	for _, g := range gpus {
		if g.Vendor != "nvidia" || g.Name == "" || g.Arch.IsZero() || g.Driver.IsZero() {
			t.Errorf("NVML lists %v", g)
		}
	}
	t.Logf("NVML lists %v", gpus)
}

// TestRegisteredProbe checks that importing the package makes Detect list
// the GPUs of the library that DYNOP_NVML_LIBRARY names.
func TestRegisteredProbe(t *testing.T) {
	library, _ := buildFake(t)
	t.Setenv(nvml.LibraryEnv, library)
	m := machine.Detect()
	if m.GPUErr != nil || !reflect.DeepEqual(m.GPUs, fakeGPUs) {
		t.Errorf("Detect: GPUs, GPUErr = %v, %v; want %v, nil", m.GPUs, m.GPUErr, fakeGPUs)
	}
	if want := `GPU 1 "Fake A10" (nvidia, arch 8.6, driver 550.54.15)`; !strings.HasSuffix(m.String(), want) {
		t.Errorf("String() = %q, want suffix %q", m, want)
	}

	missing := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	t.Setenv(nvml.LibraryEnv, missing)
	m = machine.Detect()
	if m.GPUs != nil || !errors.Is(m.GPUErr, nvml.ErrNotFound) {
		t.Errorf("Detect: GPUs, GPUErr = %v, %v; want none and ErrNotFound", m.GPUs, m.GPUErr)
	}
	if want := ", no GPU (nvml: " + missing + " not found ("; !strings.Contains(m.String(), want) {
		t.Errorf("String() = %q, want it to contain %q", m, want)
	}
}
