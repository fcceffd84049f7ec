/* _capsule.c: the destructor of the DLPack capsules dynop.Tensor.__dlpack__
 * makes, in C.
 *
 * A capsule that no consumer took must call its tensor's deleter when it is
 * destroyed. That destructor cannot be Python code (a ctypes callback): a
 * capsule may be destroyed while an exception is propagating (a consumer
 * that failed after calling __dlpack__, a call whose later argument
 * raised), and Python code cannot run with an exception set — the first C
 * call inside it raises that exception, ctypes prints and clears it, and
 * the interpreter then unwinds with no exception and crashes. So the
 * destructor saves the exception, calls the deleter (a ctypes callback,
 * which now runs with no exception set) and restores it, as NumPy's own
 * capsule destructor does.
 *
 * This is not an extension module and does not link against libpython:
 * the four CPython functions are resolved, when dynop loads this file with
 * ctypes, from the interpreter that loads it. Build:
 *   cc -O2 -fPIC -shared -o _dynop_capsule.so _capsule.c
 */
#include <stddef.h>
#include <stdint.h>

typedef struct _object PyObject;
extern int PyCapsule_IsValid(PyObject *capsule, const char *name);
extern void *PyCapsule_GetPointer(PyObject *capsule, const char *name);
extern void PyErr_Fetch(PyObject **type, PyObject **value, PyObject **traceback);
extern void PyErr_Restore(PyObject *type, PyObject *value, PyObject *traceback);

/* The head of DLManagedTensor (legacy) and DLManagedTensorVersioned. */
typedef struct {
    void *data;
    int32_t device_type, device_id;
    int32_t ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;
typedef struct legacy {
    dl_tensor t;
    void *manager_ctx;
    void (*deleter)(struct legacy *);
} legacy;
typedef struct versioned {
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(struct versioned *);
} versioned;

__attribute__((visibility("default"))) void dynop_py_capsule_destructor(PyObject *capsule) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        legacy *m = (legacy *)PyCapsule_GetPointer(capsule, "dltensor");
        if (m != NULL && m->deleter != NULL) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        versioned *m = (versioned *)PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m != NULL && m->deleter != NULL) m->deleter(m);
    }
    /* a used capsule ("used_dltensor"): the consumer owns the tensor */
    PyErr_Restore(type, value, traceback);
}
