//go:build linux && cgo

package nvml

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// The NVML types this package uses, as nvml.h declares them.
typedef int nvmlReturn_t; // an enum; NVML_SUCCESS is 0
typedef struct nvmlDevice_st *nvmlDevice_t;

// dynop_nvml_open dlopens path, or copies dlerror's message into err.
// dlerror's message belongs to the thread, so it is read here, in the same
// C call as dlopen.
static void *dynop_nvml_open(const char *path, char *err, size_t cap) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *msg = dlerror();
		snprintf(err, cap, "%s", msg != NULL ? msg : "dlopen failed");
	}
	return lib;
}

// dynop_nvml_sym looks name up in lib, or copies dlerror's message into err.
static void *dynop_nvml_sym(void *lib, const char *name, char *err, size_t cap) {
	dlerror();
	void *sym = dlsym(lib, name);
	if (sym == NULL) {
		const char *msg = dlerror();
		snprintf(err, cap, "%s", msg != NULL ? msg : "the symbol is NULL");
	}
	return sym;
}

static void dynop_nvml_close(void *lib) { dlclose(lib); }

// Trampolines: Go cannot call C function pointers, so these call fn with
// the signature of the NVML function it points to.

// nvmlInit_v2, nvmlShutdown
static nvmlReturn_t dynop_nvml_call(void *fn) {
	return ((nvmlReturn_t (*)(void))fn)();
}

// nvmlSystemGetDriverVersion
static nvmlReturn_t dynop_nvml_call_string(void *fn, char *buf, unsigned int len) {
	return ((nvmlReturn_t (*)(char *, unsigned int))fn)(buf, len);
}

// nvmlDeviceGetCount_v2
static nvmlReturn_t dynop_nvml_call_count(void *fn, unsigned int *count) {
	return ((nvmlReturn_t (*)(unsigned int *))fn)(count);
}

// nvmlDeviceGetHandleByIndex_v2
static nvmlReturn_t dynop_nvml_call_handle(void *fn, unsigned int index, nvmlDevice_t *device) {
	return ((nvmlReturn_t (*)(unsigned int, nvmlDevice_t *))fn)(index, device);
}

// nvmlDeviceGetName
static nvmlReturn_t dynop_nvml_call_device_string(void *fn, nvmlDevice_t device, char *buf, unsigned int len) {
	return ((nvmlReturn_t (*)(nvmlDevice_t, char *, unsigned int))fn)(device, buf, len);
}

// nvmlDeviceGetCudaComputeCapability
static nvmlReturn_t dynop_nvml_call_device_ints(void *fn, nvmlDevice_t device, int *a, int *b) {
	return ((nvmlReturn_t (*)(nvmlDevice_t, int *, int *))fn)(device, a, b);
}

// nvmlErrorString
static const char *dynop_nvml_call_error_string(void *fn, nvmlReturn_t result) {
	return ((const char *(*)(nvmlReturn_t))fn)(result);
}
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/machine"
)

// Buffer sizes that nvml.h recommends.
const (
	driverVersionSize = 80 // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
	deviceNameSize    = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
)

// probe lists the NVIDIA GPUs through the NVML library at library, a file
// name that dlopen searches the library path for or a path: it loads the
// library, initializes NVML, reads the driver version and each device's
// name and CUDA compute capability, shuts NVML down and unloads the
// library. The GPUs have Vendor "nvidia" and NVML's device indices.
//
// If the library is not installed the error wraps [errNotFound]. Other
// errors name the library and, for a function that is missing or fails,
// the NVML function, its return code and, if the library has
// nvmlErrorString, NVML's text for it. A device that cannot be read fails
// the whole probe.
func probe(library string) ([]machine.GPU, error) {
	l, err := load(library)
	if err != nil {
		return nil, err
	}
	defer C.dynop_nvml_close(l.handle)

	if r := C.dynop_nvml_call(l.init); r != 0 {
		return nil, l.fail("nvmlInit_v2", -1, r)
	}
	// A failing shutdown does not make the GPUs listed wrong, and nothing
	// can be done about it: its result is ignored.
	defer C.dynop_nvml_call(l.shutdown)
	return l.gpus()
}

// lib is a loaded NVML library and the functions the probe calls.
type lib struct {
	name   string // as given to Probe, for messages
	handle unsafe.Pointer

	init, shutdown, driverVersion, deviceCount, deviceByIndex, deviceName, computeCapability unsafe.Pointer
	errorString                                                                              unsafe.Pointer // nil if the library lacks it
}

// load dlopens library and looks up the functions the probe calls.
func load(library string) (*lib, error) {
	var msg [512]C.char
	cname := C.CString(library)
	defer C.free(unsafe.Pointer(cname))
	handle := C.dynop_nvml_open(cname, &msg[0], C.size_t(len(msg)))
	if handle == nil {
		text := C.GoString(&msg[0])
		// glibc: "NAME: cannot open shared object file: No such file or
		// directory". A dependency that is missing names the dependency.
		if strings.Contains(text, library) && strings.Contains(text, "No such file or directory") {
			return nil, fmt.Errorf("nvml: %s %w (%s)", library, errNotFound, text)
		}
		return nil, fmt.Errorf("nvml: cannot load %s: %s", library, text)
	}
	l := &lib{name: library, handle: handle}
	for _, sym := range []struct {
		name     string
		fn       *unsafe.Pointer
		optional bool
	}{
		{"nvmlInit_v2", &l.init, false},
		{"nvmlShutdown", &l.shutdown, false},
		{"nvmlSystemGetDriverVersion", &l.driverVersion, false},
		{"nvmlDeviceGetCount_v2", &l.deviceCount, false},
		{"nvmlDeviceGetHandleByIndex_v2", &l.deviceByIndex, false},
		{"nvmlDeviceGetName", &l.deviceName, false},
		{"nvmlDeviceGetCudaComputeCapability", &l.computeCapability, false},
		{"nvmlErrorString", &l.errorString, true},
	} {
		csym := C.CString(sym.name)
		*sym.fn = C.dynop_nvml_sym(handle, csym, &msg[0], C.size_t(len(msg)))
		C.free(unsafe.Pointer(csym))
		if *sym.fn == nil && !sym.optional {
			C.dynop_nvml_close(handle)
			return nil, fmt.Errorf("nvml: %s: no function %s (%s)", library, sym.name, C.GoString(&msg[0]))
		}
	}
	return l, nil
}

// gpus lists the GPUs of an initialized library.
func (l *lib) gpus() ([]machine.GPU, error) {
	var version [driverVersionSize]C.char
	if r := C.dynop_nvml_call_string(l.driverVersion, &version[0], C.uint(len(version))); r != 0 {
		return nil, l.fail("nvmlSystemGetDriverVersion", -1, r)
	}
	driver, err := machine.ParseDriverVersion(goString(version[:]))
	if err != nil {
		return nil, fmt.Errorf("nvml: %s: nvmlSystemGetDriverVersion: %w", l.name, err)
	}

	var count C.uint
	if r := C.dynop_nvml_call_count(l.deviceCount, &count); r != 0 {
		return nil, l.fail("nvmlDeviceGetCount_v2", -1, r)
	}
	var gpus []machine.GPU
	for i := range int(count) {
		var device C.nvmlDevice_t
		if r := C.dynop_nvml_call_handle(l.deviceByIndex, C.uint(i), &device); r != 0 {
			return nil, l.fail("nvmlDeviceGetHandleByIndex_v2", i, r)
		}
		var name [deviceNameSize]C.char
		if r := C.dynop_nvml_call_device_string(l.deviceName, device, &name[0], C.uint(len(name))); r != 0 {
			return nil, l.fail("nvmlDeviceGetName", i, r)
		}
		var major, minor C.int
		if r := C.dynop_nvml_call_device_ints(l.computeCapability, device, &major, &minor); r != 0 {
			return nil, l.fail("nvmlDeviceGetCudaComputeCapability", i, r)
		}
		gpus = append(gpus, machine.GPU{
			Index:  i,
			Vendor: vendor,
			Name:   goString(name[:]),
			Arch:   iface.V(uint32(max(major, 0)), uint32(max(minor, 0)), 0),
			Driver: driver,
		})
	}
	return gpus, nil
}

// fail returns the error of an NVML function that returned r, for device
// if it is not negative.
func (l *lib) fail(function string, device int, r C.nvmlReturn_t) error {
	call := function
	if device >= 0 {
		call = fmt.Sprintf("%s for device %d", function, device)
	}
	msg := fmt.Sprintf("nvml: %s: %s returned %d", l.name, call, int(r))
	if l.errorString != nil {
		if text := C.dynop_nvml_call_error_string(l.errorString, r); text != nil {
			msg += " (" + C.GoString(text) + ")"
		}
	}
	return errors.New(msg)
}

// goString returns the NUL-terminated string in buf, all of buf if NVML
// left out the NUL.
func goString(buf []C.char) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf))
	if n := bytes.IndexByte(b, 0); n >= 0 {
		b = b[:n]
	}
	return string(b)
}
