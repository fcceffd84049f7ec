/* An allocator that replaces libc's in the global scope (LD_PRELOAD), as
 * jemalloc or tcmalloc would: it forwards to glibc's own functions. With
 * it, RTLD_DEEPBIND is unsafe: a deep-bound plugin would bind libc's. */
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

__attribute__((visibility("default"))) void *malloc(size_t n) { return __libc_malloc(n); }
__attribute__((visibility("default"))) void free(void *p) { __libc_free(p); }
__attribute__((visibility("default"))) void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
__attribute__((visibility("default"))) void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
