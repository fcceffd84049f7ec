// Declarations of shim.c for the Go side of libdynop's API.
#ifndef DYNOP_CAPI_SHIM_H
#define DYNOP_CAPI_SHIM_H

#include <stddef.h>
#include <stdint.h>

// Output tensors' data is aligned to this many bytes.
#define DYNOP_CAPI_ALIGN 64

void dynop_capi_set_error(const char *msg, size_t n);
size_t dynop_capi_data_offset(int32_t ndim);
DLManagedTensorVersioned *dynop_capi_new_output(int32_t ndim, const int64_t *shape, DLDataType dtype,
                                                size_t nbytes);
DLManagedTensorVersioned *dynop_capi_new_view(int32_t ndim, const int64_t *shape, const int64_t *strides,
                                              DLDataType dtype, void *data, uint64_t byte_offset, uintptr_t id);
void dynop_capi_free_outputs(DLManagedTensorVersioned **ts, size_t n);
const char *dynop_capi_library_path(void);

#endif
