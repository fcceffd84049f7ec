// The C side of libdynop's API: the per-thread error message, the deleter
// of output tensors and dynop_tensor_delete, and where the library lies.
// They are C so that they need no Go: a deleter may run on any thread at
// any time, even after every host is closed.
#define _GNU_SOURCE
#define DYNOP_HOST_NO_PROTOTYPES
#include <dynop/dynop_host.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define DYNOP_CAPI_EXPORT __attribute__((visibility("default")))

static pthread_key_t error_key;
static pthread_once_t error_once = PTHREAD_ONCE_INIT;

static void make_error_key(void) { pthread_key_create(&error_key, free); }

void dynop_capi_set_error(const char *msg, size_t n) {
    pthread_once(&error_once, make_error_key);
    char *old = pthread_getspecific(error_key);
    if (old == NULL && n == 0) {
        return;
    }
    char *s = NULL;
    if (n > 0) {
        s = malloc(n + 1);
        if (s != NULL) {
            memcpy(s, msg, n);
            s[n] = 0;
        }
    }
    free(old);
    pthread_setspecific(error_key, s);
}

DYNOP_CAPI_EXPORT const char *dynop_last_error(void) {
    pthread_once(&error_once, make_error_key);
    const char *s = pthread_getspecific(error_key);
    return s != NULL ? s : "";
}

static void set_error_string(const char *msg) { dynop_capi_set_error(msg, strlen(msg)); }

DYNOP_CAPI_EXPORT dynop_result dynop_tensor_delete(DLManagedTensorVersioned *t) {
    if (t == NULL) {
        set_error_string("dynop_tensor_delete: tensor is NULL");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    if (t->deleter == NULL) {
        set_error_string("dynop_tensor_delete: the tensor's deleter is NULL: nothing to call (the tensor is not the library's output, or it was deleted already)");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    t->deleter(t);
    return DYNOP_OK;
}

DYNOP_CAPI_EXPORT void dynop_string_free(char *s) { free(s); }

// An output tensor is one block: the struct, shape, strides, then the data
// at dynop_capi_data_offset. The deleter frees it and clears the deleter
// first, so that a second call through a stale copy is at least visible.
static void free_output(DLManagedTensorVersioned *t) {
    t->deleter = NULL;
    free(t);
}

size_t dynop_capi_data_offset(int32_t ndim) {
    size_t n = sizeof(DLManagedTensorVersioned) + 2 * (size_t)ndim * sizeof(int64_t);
    return (n + DYNOP_CAPI_ALIGN - 1) / DYNOP_CAPI_ALIGN * DYNOP_CAPI_ALIGN;
}

DLManagedTensorVersioned *dynop_capi_new_output(int32_t ndim, const int64_t *shape, DLDataType dtype,
                                                size_t nbytes) {
    size_t off = dynop_capi_data_offset(ndim);
    if (nbytes > SIZE_MAX - off) {
        return NULL;
    }
    size_t total = (off + nbytes + DYNOP_CAPI_ALIGN - 1) / DYNOP_CAPI_ALIGN * DYNOP_CAPI_ALIGN;
    DLManagedTensorVersioned *t = aligned_alloc(DYNOP_CAPI_ALIGN, total);
    if (t == NULL) {
        return NULL;
    }
    memset(t, 0, total);
    int64_t *dims = (int64_t *)(t + 1);
    int64_t *strides = dims + ndim;
    int64_t stride = 1;
    for (int32_t i = ndim - 1; i >= 0; i--) {
        dims[i] = shape[i];
        strides[i] = stride;
        stride *= shape[i];
    }
    t->version.major = DLPACK_MAJOR_VERSION;
    t->version.minor = DLPACK_MINOR_VERSION;
    t->manager_ctx = NULL;
    t->deleter = free_output;
    t->flags = 0;
    t->dl_tensor.data = (char *)t + off;
    t->dl_tensor.device.device_type = kDLCPU;
    t->dl_tensor.device.device_id = 0;
    t->dl_tensor.ndim = ndim;
    t->dl_tensor.dtype = dtype;
    t->dl_tensor.shape = ndim > 0 ? dims : NULL;
    t->dl_tensor.strides = ndim > 0 ? strides : NULL;
    t->dl_tensor.byte_offset = 0;
    return t;
}

// A view is a tensor whose memory is Go's (a pipeline's output): the
// struct, shape and strides in one block, manager_ctx the number of the Go
// side's record, which keeps the memory alive and pinned until the deleter
// hands it back (dynop_capi_view_done, exported by package capi).
extern void dynop_capi_view_done(uintptr_t id);

static void free_view(DLManagedTensorVersioned *t) {
    uintptr_t id = (uintptr_t)t->manager_ctx;
    t->deleter = NULL;
    free(t);
    dynop_capi_view_done(id);
}

DLManagedTensorVersioned *dynop_capi_new_view(int32_t ndim, const int64_t *shape, const int64_t *strides,
                                              DLDataType dtype, void *data, uint64_t byte_offset, uintptr_t id) {
    DLManagedTensorVersioned *t = calloc(1, sizeof(DLManagedTensorVersioned) + 2 * (size_t)ndim * sizeof(int64_t));
    if (t == NULL) {
        return NULL;
    }
    int64_t *dims = (int64_t *)(t + 1);
    if (ndim > 0) {
        memcpy(dims, shape, (size_t)ndim * sizeof(int64_t));
        memcpy(dims + ndim, strides, (size_t)ndim * sizeof(int64_t));
    }
    t->version.major = DLPACK_MAJOR_VERSION;
    t->version.minor = DLPACK_MINOR_VERSION;
    t->manager_ctx = (void *)id;
    t->deleter = free_view;
    t->dl_tensor.data = data;
    t->dl_tensor.device.device_type = kDLCPU;
    t->dl_tensor.ndim = ndim;
    t->dl_tensor.dtype = dtype;
    t->dl_tensor.shape = ndim > 0 ? dims : NULL;
    t->dl_tensor.strides = ndim > 0 ? dims + ndim : NULL;
    t->dl_tensor.byte_offset = byte_offset;
    return t;
}

void dynop_capi_free_outputs(DLManagedTensorVersioned **ts, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (ts[i] != NULL) {
            ts[i]->deleter(ts[i]);
            ts[i] = NULL;
        }
    }
}

const char *dynop_capi_library_path(void) {
    Dl_info info;
    if (dladdr((void *)dynop_last_error, &info) == 0 || info.dli_fname == NULL) {
        return "";
    }
    return info.dli_fname;
}
