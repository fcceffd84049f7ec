package engines

/*
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Wasmtime's C API, as libwasmtime.a (linked by wasmtime-go) defines it:
// the declarations of wasmtime/func.h, store.h, trap.h and error.h that
// the unchecked call needs, with the types' layouts (wasmtime_func_t is a
// store id and a pointer; wasmtime_val_raw_t a 16-byte union).
typedef struct eng_wt_func {
    uint64_t store_id;
    void *private_;
} eng_wt_func;

typedef union eng_wt_val {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    uint8_t v128[16];
    uint32_t anyref;
    uint32_t externref;
    void *funcref;
} eng_wt_val;

extern void *wasmtime_func_call_unchecked(void *store, const eng_wt_func *func, eng_wt_val *args_and_results,
                                          size_t args_and_results_len, void **trap);
extern void wasmtime_context_set_epoch_deadline(void *context, uint64_t ticks_beyond_current);
extern bool wasmtime_trap_code(const void *trap, uint8_t *code);
extern void wasm_trap_delete(void *trap);
extern void wasmtime_error_delete(void *error);

// eng_wt_call sets the store's epoch deadline (unless deadline is 0) and
// calls func with the raw values vals: 0 on success, the trap code + 1
// for a trap with a code, 255 for a trap without one, -1 for an error.
static int eng_wt_call(void *ctx, const eng_wt_func *func, eng_wt_val *vals, size_t n, uint64_t deadline) {
    void *trap = NULL, *err;
    uint8_t code;
    int rc;
    if (deadline != 0) wasmtime_context_set_epoch_deadline(ctx, deadline);
    err = wasmtime_func_call_unchecked(ctx, func, vals, n, &trap);
    if (err != NULL) {
        wasmtime_error_delete(err);
        return -1;
    }
    if (trap == NULL) return 0;
    rc = wasmtime_trap_code(trap, &code) ? (int)code + 1 : 255;
    wasm_trap_delete(trap);
    return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v37"
)

// Unchecked calls one exported function of a Wasmtime instance through
// wasmtime_func_call_unchecked, with no per-call allocation and no
// global lock: the caller sets the parameters ([Unchecked.SetI32], …),
// calls, and reads the results, which overwrite the parameters. It is
// owned by one goroutine, as its store is.
type Unchecked struct {
	store    *wasmtime.Store
	ctx      unsafe.Pointer
	fn       C.eng_wt_func
	vals     [8]C.eng_wt_val
	n        int
	deadline uint64
}

// NewUnchecked prepares calls of f in store, which take params
// parameters and results results.
func NewUnchecked(store *wasmtime.Store, f *wasmtime.Func, params, results int) (*Unchecked, error) {
	n := max(params, results)
	if n > 8 {
		return nil, fmt.Errorf("engines: %d values: at most 8", n)
	}
	u := &Unchecked{store: store, ctx: unsafe.Pointer(store.Context()), n: n}
	// A wasmtime.Func is its wasmtime_func_t and nothing else.
	u.fn = *(*C.eng_wt_func)(unsafe.Pointer(f))
	if u.fn.store_id == 0 {
		return nil, errors.New("engines: not a function")
	}
	runtime.KeepAlive(f)
	return u, nil
}

// SetDeadline makes the next call set the store's epoch deadline to ticks
// from the engine's current epoch first, in the same cgo call, as
// [wasmtime.Store.SetEpochDeadline] would; 0 leaves the store's deadline
// as it is.
func (u *Unchecked) SetDeadline(ticks uint64) { u.deadline = ticks }

// SetI32 and SetF32 set parameter i.
func (u *Unchecked) SetI32(i int, v int32) { *(*int32)(unsafe.Pointer(&u.vals[i])) = v }

func (u *Unchecked) SetF32(i int, v float32) {
	*(*uint32)(unsafe.Pointer(&u.vals[i])) = math.Float32bits(v)
}

// I32 returns result i of the last call.
func (u *Unchecked) I32(i int) int32 { return *(*int32)(unsafe.Pointer(&u.vals[i])) }

// A TrapError is a trap of an unchecked call, with Wasmtime's trap code.
type TrapError struct{ Code wasmtime.TrapCode }

func (e *TrapError) Error() string { return fmt.Sprintf("wasm trap (code %d)", e.Code) }

// ErrNoCode is the error of a trap without a code, or a failed call.
var ErrNoCode = errors.New("engines: the call failed without a trap code")

// Call calls the function. A trap returns a *TrapError.
func (u *Unchecked) Call() error {
	rc := C.eng_wt_call(u.ctx, &u.fn, &u.vals[0], C.size_t(u.n), C.uint64_t(u.deadline))
	u.deadline = 0
	runtime.KeepAlive(u.store)
	switch {
	case rc == 0:
		return nil
	case rc > 0 && rc < 255:
		return &TrapError{Code: wasmtime.TrapCode(rc - 1)}
	default:
		return ErrNoCode
	}
}
