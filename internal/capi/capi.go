// Package capi is libdynop's C API (abi/include/dynop/dynop_host.h): the
// functions a C, C++ or Python program calls to be a dynop host. They are
// exported to C from here with //export; package capi/libdynop, a main
// package, links them into bin/libdynop.so (go build -buildmode=c-shared)
// and bin/libdynop.a (c-archive).
//
// C holds no Go pointer: hosts, operators and interface references reach
// C as numbers from a table ([handles]), looked up on every call. Errors
// become a dynop_result and a message kept in C thread-local storage
// (shim.c): a call from a C thread into Go runs on that thread, so the
// failing call sets the message of the thread that made it. Output tensors
// are C memory with a C deleter, so they outlive the operator and the host
// and need no Go to be freed.
package capi

/*
#cgo CFLAGS: -I${SRCDIR}/../../abi/include -std=c11 -Wall -Wextra -Werror
#cgo LDFLAGS: -ldl -lpthread
#define DYNOP_HOST_NO_PROTOTYPES
#include <dynop/dynop_host.h>
#include "shim.h"
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
	"github.com/dynop/dynop/tensor"

	_ "github.com/dynop/dynop/loader/wasm"   // WebAssembly plugins, sandboxed
	_ "github.com/dynop/dynop/plugins/image" // image.Read, Decode, Encode, Write, … for pipelines
	_ "github.com/dynop/dynop/plugins/npy"   // npy.Encode: pipeline outputs as .npy
)

// The version of the C API: DYNOP_HOST_API_VERSION_* in dynop_host.h.
const (
	APIMajor = 0
	APIMinor = 2
	APIPatch = 0
)

// ScannerName is the scanner program a host runs when its options name
// none, looked for in the directory of the library.
const ScannerName = "dynop-scanner"

// errInvalid is a bad argument from C: DYNOP_ERROR_INVALID_ARGUMENT;
// errNoMemory is a failed allocation: DYNOP_ERROR_NO_MEMORY.
var (
	errInvalid  = errors.New("invalid argument")
	errNoMemory = errors.New("out of memory")
)

var table = newHandles()

// resultOf is the dynop_result that tells C about err: the ABI's mapping
// of the host's sentinels (abi.ResultOf), invalid input of every package
// as DYNOP_ERROR_INVALID_ARGUMENT, and a missing file as
// DYNOP_ERROR_NOT_FOUND.
func resultOf(err error) abi.Result {
	if r := abi.ResultOf(err); r != abi.ErrorGeneric {
		return r
	}
	if errors.Is(err, errNoMemory) {
		return abi.ErrorNoMemory
	}
	for _, e := range []error{errInvalid, schema.ErrArgument, schema.ErrOp, op.ErrInput, tensor.ErrInvalid, pipeline.ErrInvalid, iface.ErrSyntax, dispatch.ErrUnknownFeature} {
		if errors.Is(err, e) {
			return abi.ErrorInvalidArgument
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return abi.ErrorNotFound // a pipeline file, a trust directory
	}
	return abi.ErrorGeneric
}

// fail sets the calling thread's message to "call: err" and returns err's
// result.
func fail(call string, err error) C.dynop_result {
	msg := call + ": " + err.Error()
	C.dynop_capi_set_error((*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
	return C.dynop_result(resultOf(err))
}

// begin clears the calling thread's message; every call starts with it.
func begin() { C.dynop_capi_set_error(nil, 0) }

// finish turns err into the call's result.
func finish(call string, err error) C.dynop_result {
	if err != nil {
		return fail(call, err)
	}
	return C.DYNOP_OK
}

// recoverExport turns a panic that reached an exported function into its
// result and message, so that none unwinds into C (and aborts it).
func recoverExport(call string, rc *C.dynop_result) {
	if p := recover(); p != nil {
		*rc = fail(call, fmt.Errorf("%w: libdynop panicked: %v", dynop.ErrPanic, p))
	}
}

// Guard turns a panic into an error, so that none unwinds into C.
func guard(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%w: libdynop panicked: %v", dynop.ErrPanic, p)
	}
}

func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// host is an open host and what C made with it.
type host struct {
	h *dynop.Host

	// calls is read-held by each call that uses h, so that close waits
	// for the calls in flight before it closes the host.
	calls sync.RWMutex

	mu     sync.Mutex
	closed bool
	open   map[uintptr]owned  // what C holds open on the host, by handle
	strs   map[string]*C.char // strings handed to C, freed at close
}

// cstr returns s as a C string that lives until the host is closed.
// h.mu must be held.
func (h *host) cstr(s string) *C.char {
	if p, ok := h.strs[s]; ok {
		return p
	}
	p := C.CString(s)
	h.strs[s] = p
	return p
}

// owned is what C holds open on a host under a handle: an operator, an
// interface reference or a pipeline.
type owned interface {
	tracking() *tracked
	close() error // once; later calls do nothing
}

// tracked is an owned value's host and handle number.
type tracked struct {
	host *host
	id   uintptr
}

func (t *tracked) tracking() *tracked { return t }

// track gives v, made on h, a handle of kind k; if h was closed
// meanwhile, it closes v instead and says so.
func (h *host) track(k kind, v owned) (uintptr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, errors.Join(fmt.Errorf("the host is %w", dynop.ErrClosed), v.close())
	}
	id := table.add(k, v)
	*v.tracking() = tracked{host: h, id: id}
	h.open[id] = v
	return id, nil
}

// closeHandle removes handle id of kind k and closes what it stands for:
// dynop_operator_destroy, dynop_host_release and dynop_pipeline_close.
func closeHandle(call string, id uintptr, k kind) C.dynop_result {
	v, err := table.remove(id, k)
	if err != nil {
		return fail(call, err)
	}
	o := v.(owned)
	h := o.tracking().host
	h.mu.Lock()
	delete(h.open, id)
	h.mu.Unlock()
	return finish(call, o.close())
}

type operator struct {
	tracked
	mu   sync.Mutex // one call at a time, as op.Instance requires
	in   *op.Instance
	done bool
}

type ref struct {
	tracked
	r    dynop.Ref
	once sync.Once
}

// close releases the reference once.
func (r *ref) close() (err error) {
	r.once.Do(func() { err = release(r.r) })
	return err
}

func getHost(id uintptr) (*host, error) {
	v, err := table.get(id, kindHost)
	if err != nil {
		return nil, err
	}
	return v.(*host), nil
}

//export dynop_host_api_version
func dynop_host_api_version() C.dynop_version {
	begin()
	return C.dynop_version{major: APIMajor, minor: APIMinor, patch: APIPatch}
}

// optionsMin is the size of the first version of dynop_host_options, the
// smallest a caller may pass; optionsKnown the size of the version this
// library knows.
const (
	optionsMin   = uintptr(C.DYNOP_HOST_OPTIONS_SIZE_V0_1)
	optionsKnown = uintptr(C.sizeof_dynop_host_options)
)

//export dynop_host_open
func dynop_host_open(copts *C.dynop_host_options, out *C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_host_open", &rc)
	begin()
	if out == nil {
		return fail("dynop_host_open", fmt.Errorf("%w: host (the out-parameter) is NULL", errInvalid))
	}
	*out = 0
	opts, err := readOptions(copts)
	if err != nil {
		return fail("dynop_host_open", err)
	}
	h, err := openHost(opts)
	if err != nil {
		return fail("dynop_host_open", err)
	}
	*out = C.uintptr_t(table.add(kindHost, h))
	return C.DYNOP_OK
}

func openHost(opts dynop.Options) (h *host, err error) {
	defer guard(&err)
	dh, err := dynop.Open(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	return &host{h: dh, open: map[uintptr]owned{}, strs: map[string]*C.char{}}, nil
}

// readOptions decodes the C options, honouring struct_size: the fields a
// smaller struct lacks are defaults, and a larger struct's fields beyond
// this library's must be zero.
func readOptions(c *C.dynop_host_options) (dynop.Options, error) {
	var o C.dynop_host_options
	if c != nil {
		size := uintptr(c.struct_size)
		switch {
		case size < optionsMin:
			return dynop.Options{}, fmt.Errorf("%w: options.struct_size %d is smaller than the first version of dynop_host_options (%d bytes); set it to sizeof(dynop_host_options)", dynop.ErrVersion, size, optionsMin)
		case size > optionsKnown:
			tail := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(c), optionsKnown)), size-optionsKnown)
			if i := slices.IndexFunc(tail, func(b byte) bool { return b != 0 }); i >= 0 {
				return dynop.Options{}, fmt.Errorf("%w: options.struct_size is %d and sets byte %d, beyond the %d bytes of dynop_host_options this library (API %d.%d) knows", dynop.ErrUnsupported, size, uintptr(i)+optionsKnown, optionsKnown, APIMajor, APIMinor)
			}
		}
		// Copy what the caller's struct has; the rest stays zero: defaults.
		n := min(size, optionsKnown)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&o)), n), unsafe.Slice((*byte)(unsafe.Pointer(c)), n))
	}
	opts := dynop.Options{
		NoDefaultPaths: o.no_default_paths != 0,
		NoCache:        o.no_cache != 0,
		CacheDir:       goString(o.cache_dir),
		TrustDir:       goString(o.trust_dir),
		CPUFeatures:    goString(o.cpu_features),
		Scanner:        goString(o.scanner),
		ScanTimeout:    time.Duration(o.scan_timeout_ms) * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(o.log_level)})),
	}
	if o.path_count > maxPaths {
		return opts, fmt.Errorf("%w: options.path_count is %d, more than %d paths", errInvalid, uint64(o.path_count), maxPaths)
	}
	if o.path_count > 0 && o.paths == nil {
		return opts, fmt.Errorf("%w: options.paths is NULL but path_count is %d", errInvalid, o.path_count)
	}
	for i, p := range unsafe.Slice(o.paths, int(o.path_count)) {
		if p == nil {
			return opts, fmt.Errorf("%w: options.paths[%d] is NULL", errInvalid, i)
		}
		opts.Paths = append(opts.Paths, C.GoString(p))
	}
	if o.signature_policy != nil {
		p, err := sign.ParsePolicy(C.GoString(o.signature_policy))
		if err != nil {
			return opts, fmt.Errorf("%w: options.signature_policy: %v", errInvalid, err)
		}
		opts.SignaturePolicy = p
	}
	if o.sandbox != nil {
		p, err := dynop.ParseSandboxPolicy(C.GoString(o.sandbox))
		if err != nil {
			return opts, fmt.Errorf("%w: options.sandbox: %v", errInvalid, err)
		}
		opts.Sandbox = p
	}
	if opts.Scanner == "" {
		opts.Scanner = defaultScanner()
	}
	return opts, nil
}

// maxPaths bounds dynop_host_options.path_count: a larger count is a
// mistake (an uninitialized or negative value), not a list of paths.
const maxPaths = 1 << 20

// defaultScanner returns the scanner beside the library (libdynop.so), or
// beside the program that libdynop.a is linked into, as an absolute path:
// never a bare name that exec would look for on $PATH.
func defaultScanner() string {
	lib := C.GoString(C.dynop_capi_library_path())
	if lib == "" {
		lib, _ = os.Executable()
	}
	if abs, err := filepath.Abs(lib); err == nil && lib != "" {
		return filepath.Join(filepath.Dir(abs), ScannerName)
	}
	return ScannerName
}

//export dynop_host_close
func dynop_host_close(hid C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_host_close", &rc)
	begin()
	v, err := table.remove(uintptr(hid), kindHost)
	if err != nil {
		return fail("dynop_host_close", err)
	}
	return finish("dynop_host_close", v.(*host).close())
}

// enter starts a call that uses h: it fails once h is closed, and
// close waits for it to leave.
func (h *host) enter() error {
	h.calls.RLock()
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		h.calls.RUnlock()
		return fmt.Errorf("the host is %w", dynop.ErrClosed)
	}
	return nil
}

// leave ends a call that entered.
func (h *host) leave() { h.calls.RUnlock() }

// close waits for the calls in flight, destroys what C left open on h,
// then closes it.
func (h *host) close() (err error) {
	defer guard(&err)
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.calls.Lock() // the calls in flight are done; new ones see closed
	h.calls.Unlock()
	h.mu.Lock()
	open := h.open
	h.open = nil
	h.mu.Unlock()
	// Pipelines first, then operators, then references: what uses
	// plugins before what holds them.
	ids := slices.SortedFunc(maps.Keys(open), func(a, b uintptr) int {
		return cmp.Or(cmp.Compare(kindOf(b), kindOf(a)), cmp.Compare(a, b))
	})
	var errs []error
	for _, id := range ids {
		table.remove(id, kindOf(id))
		errs = append(errs, open[id].close())
	}
	errs = append(errs, h.h.Close(context.Background()))
	h.mu.Lock()
	for _, p := range h.strs {
		C.free(unsafe.Pointer(p))
	}
	h.strs = nil
	h.mu.Unlock()
	return errors.Join(errs...)
}

//export dynop_host_plugins
func dynop_host_plugins(hid C.uintptr_t, out *C.dynop_plugin_status, capacity C.size_t, count *C.size_t) (rc C.dynop_result) {
	defer recoverExport("dynop_host_plugins", &rc)
	begin()
	h, err := getHost(uintptr(hid))
	if err != nil {
		return fail("dynop_host_plugins", err)
	}
	if count == nil {
		return fail("dynop_host_plugins", fmt.Errorf("%w: count is NULL", errInvalid))
	}
	if out == nil && capacity > 0 {
		return fail("dynop_host_plugins", fmt.Errorf("%w: statuses is NULL but capacity is %d", errInvalid, capacity))
	}
	if err := h.enter(); err != nil {
		return fail("dynop_host_plugins", err)
	}
	defer h.leave()
	list := h.h.Plugins()
	*count = C.size_t(len(list))
	n := len(list)
	if uint64(capacity) < uint64(n) {
		n = int(capacity)
	}
	if n == 0 {
		return C.DYNOP_OK
	}
	// The caller's array has its struct's size as stride, which may be
	// smaller (an older header) or larger (a newer one) than ours.
	stride := uintptr(out.struct_size)
	if stride < unsafe.Offsetof(out.state)+unsafe.Sizeof(out.state) {
		return fail("dynop_host_plugins", fmt.Errorf("%w: statuses[0].struct_size is %d; set it to sizeof(dynop_plugin_status)", dynop.ErrVersion, stride))
	}
	elem := func(i int) *C.dynop_plugin_status {
		return (*C.dynop_plugin_status)(unsafe.Add(unsafe.Pointer(out), uintptr(i)*stride))
	}
	for i := 1; i < n; i++ {
		if s := uintptr(elem(i).struct_size); s != stride {
			return fail("dynop_host_plugins", fmt.Errorf("%w: statuses[%d].struct_size is %d, statuses[0].struct_size %d; set each to sizeof(dynop_plugin_status)", errInvalid, i, s, stride))
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return fail("dynop_host_plugins", fmt.Errorf("the host is %w", dynop.ErrClosed))
	}
	for i, p := range list[:n] {
		var s C.dynop_plugin_status
		s.struct_size = C.uint32_t(stride)
		s.state = C.int32_t(p.State)
		s.id = h.cstr(p.Info.ID)
		s.version = C.dynop_version{major: C.uint32_t(p.Info.Version.Major), minor: C.uint32_t(p.Info.Version.Minor), patch: C.uint32_t(p.Info.Version.Patch)}
		s.path = h.cstr(p.Path)
		msg := ""
		if p.Err != nil {
			msg = p.Err.Error()
		}
		s.error = h.cstr(msg)
		s.refs, s.starts, s.stops = C.uint32_t(p.Refs), C.uint32_t(p.Starts), C.uint32_t(p.Stops)
		// Write only what the caller's struct has room for.
		size := min(stride, C.sizeof_dynop_plugin_status)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(elem(i))), size), unsafe.Slice((*byte)(unsafe.Pointer(&s)), size))
	}
	return C.DYNOP_OK
}

//export dynop_host_acquire
func dynop_host_acquire(hid C.uintptr_t, pluginID *C.char, uid *C.dynop_uid, min C.dynop_version, tableOut *unsafe.Pointer, refOut *C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_host_acquire", &rc)
	begin()
	if tableOut != nil {
		*tableOut = nil
	}
	if refOut != nil {
		*refOut = 0
	}
	h, err := getHost(uintptr(hid))
	if err == nil {
		switch {
		case pluginID == nil:
			err = fmt.Errorf("%w: plugin_id is NULL", errInvalid)
		case uid == nil:
			err = fmt.Errorf("%w: uid is NULL", errInvalid)
		case tableOut == nil:
			err = fmt.Errorf("%w: table (the out-parameter) is NULL", errInvalid)
		case refOut == nil:
			err = fmt.Errorf("%w: ref (the out-parameter) is NULL", errInvalid)
		}
	}
	if err != nil {
		return fail("dynop_host_acquire", err)
	}
	u := iface.UID(C.GoBytes(unsafe.Pointer(&uid.bytes[0]), 16))
	v := iface.Version{Major: uint32(min.major), Minor: uint32(min.minor), Patch: uint32(min.patch)}
	t, id, err := h.acquire(C.GoString(pluginID), u, v)
	if err != nil {
		return fail("dynop_host_acquire", err)
	}
	*tableOut, *refOut = t, C.uintptr_t(id)
	return C.DYNOP_OK
}

func (h *host) acquire(pluginID string, uid iface.UID, v iface.Version) (_ unsafe.Pointer, _ uintptr, err error) {
	defer guard(&err)
	if err := h.enter(); err != nil {
		return nil, 0, err
	}
	defer h.leave()
	impl, r, err := h.h.Acquire(context.Background(), pluginID, uid, v)
	if err != nil {
		return nil, 0, err
	}
	ex, ok := impl.(native.Exported)
	if !ok {
		return nil, 0, errors.Join(fmt.Errorf("interface {%s} of plugin %q is %w: a Go interface (%T) with no C function table", uid, pluginID, dynop.ErrType, impl), r.Release())
	}
	id, err := h.track(kindRef, &ref{r: r})
	if err != nil {
		return nil, 0, err
	}
	return ex.NativeTable().Pointer(), id, nil
}

//export dynop_host_release
func dynop_host_release(rid C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_host_release", &rc)
	begin()
	return closeHandle("dynop_host_release", uintptr(rid), kindRef)
}

func release(r dynop.Ref) (err error) {
	defer guard(&err)
	return r.Release()
}

//export dynop_operator_create
func dynop_operator_create(hid C.uintptr_t, name, argsJSON *C.char, out *C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_operator_create", &rc)
	begin()
	if out != nil {
		*out = 0
	}
	h, err := getHost(uintptr(hid))
	if err == nil {
		switch {
		case name == nil:
			err = fmt.Errorf("%w: name is NULL", errInvalid)
		case out == nil:
			err = fmt.Errorf("%w: op (the out-parameter) is NULL", errInvalid)
		}
	}
	if err != nil {
		return fail("dynop_operator_create", err)
	}
	id, err := h.newOperator(C.GoString(name), goString(argsJSON))
	if err != nil {
		return fail("dynop_operator_create", err)
	}
	*out = C.uintptr_t(id)
	return C.DYNOP_OK
}

// parseArgs decodes an operator's arguments from a JSON object.
func parseArgs(text string) (schema.Args, error) {
	if text == "" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var args schema.Args
	if err := d.Decode(&args); err != nil {
		return nil, fmt.Errorf("%w: args_json: %v", errInvalid, err)
	}
	if args == nil {
		return nil, fmt.Errorf("%w: args_json is null, not a JSON object", errInvalid)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: args_json: more after the JSON object", errInvalid)
	}
	return args, nil
}

func (h *host) newOperator(name, argsJSON string) (_ uintptr, err error) {
	defer guard(&err)
	if err := h.enter(); err != nil {
		return 0, err
	}
	defer h.leave()
	args, err := parseArgs(argsJSON)
	if err != nil {
		return 0, err
	}
	in, err := h.h.NewOperator(context.Background(), name, args)
	if err != nil {
		return 0, err
	}
	return h.track(kindOperator, &operator{in: in})
}

func getOperator(id uintptr) (*operator, error) {
	v, err := table.get(id, kindOperator)
	if err != nil {
		return nil, err
	}
	return v.(*operator), nil
}

//export dynop_operator_arity
func dynop_operator_arity(oid C.uintptr_t, nIn, nOut *C.uint32_t) (rc C.dynop_result) {
	defer recoverExport("dynop_operator_arity", &rc)
	begin()
	o, err := getOperator(uintptr(oid))
	if err == nil && (nIn == nil || nOut == nil) {
		err = fmt.Errorf("%w: num_inputs or num_outputs is NULL", errInvalid)
	}
	if err != nil {
		return fail("dynop_operator_arity", err)
	}
	s := o.in.Schema()
	*nIn, *nOut = C.uint32_t(len(s.Inputs)), C.uint32_t(len(s.Outputs))
	return C.DYNOP_OK
}

//export dynop_operator_destroy
func dynop_operator_destroy(oid C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_operator_destroy", &rc)
	begin()
	return closeHandle("dynop_operator_destroy", uintptr(oid), kindOperator)
}

// close closes the instance once, after the call in flight.
func (o *operator) close() (err error) {
	defer guard(&err)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	o.done = true
	return o.in.Close()
}

//export dynop_operator_run
func dynop_operator_run(oid C.uintptr_t, inputs **C.DLManagedTensorVersioned, numInputs, batchSize C.uint32_t, outputs **C.DLManagedTensorVersioned, numOutputs C.uint32_t) (rc C.dynop_result) {
	defer recoverExport("dynop_operator_run", &rc)
	begin()
	o, err := getOperator(uintptr(oid))
	if err != nil {
		return fail("dynop_operator_run", err)
	}
	err = o.checkCall(inputs == nil, outputs == nil, numInputs, batchSize, numOutputs)
	if err != nil {
		// outputs is not written: its length may be wrong.
		return fail("dynop_operator_run", err)
	}
	outs := unsafe.Slice(outputs, int(numOutputs)*int(batchSize))
	clear(outs)
	var ins []*C.DLManagedTensorVersioned
	if numInputs > 0 {
		ins = unsafe.Slice(inputs, int(numInputs)*int(batchSize))
	}
	return finish("dynop_operator_run", o.run(ins, int(numInputs), int(batchSize), outs))
}

// checkCall checks the counts and arrays of a run call against the
// operator's schema, before anything is read or written.
func (o *operator) checkCall(noInputs, noOutputs bool, numInputs, batchSize, numOutputs C.uint32_t) error {
	switch {
	case batchSize == 0:
		return fmt.Errorf("%w: batch_size is 0", errInvalid)
	case noInputs && numInputs > 0:
		return fmt.Errorf("%w: inputs is NULL but num_inputs is %d", errInvalid, numInputs)
	case noOutputs:
		return fmt.Errorf("%w: outputs is NULL", errInvalid)
	case int(numInputs) != len(o.in.Schema().Inputs):
		return fmt.Errorf("%w: operator %q takes %d input(s), not %d", errInvalid, o.in.Name(), len(o.in.Schema().Inputs), numInputs)
	case int(numOutputs) != len(o.in.Schema().Outputs):
		return fmt.Errorf("%w: operator %q has %d output(s), not %d", errInvalid, o.in.Name(), len(o.in.Schema().Outputs), numOutputs)
	}
	return nil
}

// run imports the inputs, sets the operator up, allocates the outputs in
// C memory and runs it. On failure it frees what it allocated.
func (o *operator) run(ins []*C.DLManagedTensorVersioned, numInputs, batchSize int, outs []*C.DLManagedTensorVersioned) (err error) {
	defer guard(&err)
	defer func() {
		if err != nil && len(outs) > 0 {
			C.dynop_capi_free_outputs(&outs[0], C.size_t(len(outs)))
		}
	}()
	batches, err := importBatches(ins, numInputs, batchSize, "input")
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return fmt.Errorf("operator %q is %w", o.in.Name(), dynop.ErrClosed)
	}
	descs, err := o.in.Setup(batches)
	if err != nil {
		return err
	}
	results := make([]*tensor.Batch, len(descs))
	for i, d := range descs {
		if len(d.Shapes) != batchSize {
			return fmt.Errorf("operator %q: output %d has %d samples for a batch of %d", o.in.Name(), i, len(d.Shapes), batchSize)
		}
		samples := make([]*tensor.Tensor, batchSize)
		for s, shape := range d.Shapes {
			ct, t, err := newOutput(d.DType, shape)
			if err != nil {
				return fmt.Errorf("output %d sample %d: %w", i, s, err)
			}
			outs[i*batchSize+s] = ct
			samples[s] = t
		}
		if results[i], err = tensor.NewBatch(samples...); err != nil {
			return err
		}
	}
	return o.in.Run(context.Background(), results, batches)
}

//export dynop_operator_run_into
func dynop_operator_run_into(oid C.uintptr_t, inputs **C.DLManagedTensorVersioned, numInputs, batchSize C.uint32_t, outputs **C.DLManagedTensorVersioned, numOutputs C.uint32_t) (rc C.dynop_result) {
	defer recoverExport("dynop_operator_run_into", &rc)
	begin()
	o, err := getOperator(uintptr(oid))
	if err != nil {
		return fail("dynop_operator_run_into", err)
	}
	err = o.checkCall(inputs == nil, outputs == nil, numInputs, batchSize, numOutputs)
	if err != nil {
		return fail("dynop_operator_run_into", err)
	}
	var ins []*C.DLManagedTensorVersioned
	if numInputs > 0 {
		ins = unsafe.Slice(inputs, int(numInputs)*int(batchSize))
	}
	outs := unsafe.Slice(outputs, int(numOutputs)*int(batchSize))
	return finish("dynop_operator_run_into", o.runInto(ins, int(numInputs), int(batchSize), outs))
}

// importBatches imports n batches of batchSize samples each, batch i's
// sample s at ts[i*batchSize+s]; what names them in errors ("input").
func importBatches(ts []*C.DLManagedTensorVersioned, n, batchSize int, what string) ([]*tensor.Batch, error) {
	batches := make([]*tensor.Batch, n)
	for i := range batches {
		samples := make([]*tensor.Tensor, batchSize)
		for s := range samples {
			t, err := importTensor(ts[i*batchSize+s])
			if err != nil {
				return nil, fmt.Errorf("%s %d sample %d: %w", what, i, s, err)
			}
			samples[s] = t
		}
		b, err := tensor.NewBatch(samples...)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %d: %v", errInvalid, what, i, err)
		}
		batches[i] = b
	}
	return batches, nil
}

// runInto sets the operator up for the inputs and runs it into the
// caller's outputs, which must be writable, compact, of the dtype and
// shape the operator gives, and not overlap an input.
func (o *operator) runInto(ins []*C.DLManagedTensorVersioned, numInputs, batchSize int, outs []*C.DLManagedTensorVersioned) (err error) {
	defer guard(&err)
	batches, err := importBatches(ins, numInputs, batchSize, "input")
	if err != nil {
		return err
	}
	results, err := importBatches(outs, len(outs)/batchSize, batchSize, "output")
	if err != nil {
		return err
	}
	for i, r := range results {
		for s := range batchSize {
			t := r.Sample(s)
			if outs[i*batchSize+s].flags&C.DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
				return fmt.Errorf("%w: output %d sample %d is read-only (DLPACK_FLAG_BITMASK_READ_ONLY)", errInvalid, i, s)
			}
			if !t.IsContiguous() {
				return fmt.Errorf("%w: output %d sample %d has strides %v: outputs must be compact (row-major, no gaps)", errInvalid, i, s, t.Strides())
			}
			for j, b := range batches {
				for k := range batchSize {
					if overlaps(t, b.Sample(k)) {
						return fmt.Errorf("%w: output %d sample %d overlaps input %d sample %d: operators do not run in place", errInvalid, i, s, j, k)
					}
				}
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return fmt.Errorf("operator %q is %w", o.in.Name(), dynop.ErrClosed)
	}
	descs, err := o.in.Setup(batches)
	if err != nil {
		return err
	}
	for i, d := range descs {
		for s, shape := range d.Shapes {
			t := results[i].Sample(s)
			if t.DType() != d.DType || !slices.Equal(t.Shape(), shape) {
				return fmt.Errorf("%w: output %d sample %d is %v %v; operator %q gives %v %v for these inputs", errInvalid, i, s, t.DType(), t.Shape(), o.in.Name(), d.DType, shape)
			}
		}
	}
	return o.in.Run(context.Background(), results, batches)
}

// overlaps reports whether the bytes two CPU tensors reach intersect.
func overlaps(a, b *tensor.Tensor) bool {
	if a.NumElements() == 0 || b.NumElements() == 0 {
		return false
	}
	span := func(t *tensor.Tensor) (lo, hi uintptr) {
		lo = uintptr(t.Data())
		end := int64(t.DType().Size())
		for k, d := range t.Shape() {
			end += (d - 1) * t.Strides()[k] * int64(t.DType().Size())
		}
		return lo, lo + uintptr(end)
	}
	alo, ahi := span(a)
	blo, bhi := span(b)
	return alo < bhi && blo < ahi
}
