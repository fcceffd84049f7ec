/* A host program that runs the RTLD_DEEPBIND safety rule
 * (loader/native/deepbind.c, linked in) and prints its verdict:
 * "unsafe=0 why=" or "unsafe=1 why=...".
 *
 * It takes the addresses of malloc and free in its code, as Debian's
 * python3 does: built non-PIE, it then has undefined symbols malloc and
 * free whose value is their PLT entry's address (for function pointer
 * equality), which dlsym(RTLD_DEFAULT) returns. They are no definitions:
 * the rule must not take them for a replaced allocator.
 *
 * With -DOWN_MALLOC it replaces libc's allocator itself, with functions
 * that forward to glibc's own, as a program linking jemalloc statically
 * would: that, the rule must see. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int dynop_loader_deep_bind_unsafe(char *why, size_t cap);

#ifdef OWN_MALLOC
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n) { return __libc_malloc(n); }
void free(void *p) { __libc_free(p); }
void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
#endif

static void *(*volatile host_malloc)(size_t);
static void (*volatile host_free)(void *);

int main(void) {
    char why[256] = "";
    void *p;
    int unsafe;
    host_malloc = malloc;
    host_free = free;
    p = host_malloc(16);
    unsafe = dynop_loader_deep_bind_unsafe(why, sizeof why);
    host_free(p);
    printf("unsafe=%d why=%s\n", unsafe, why);
    return 0;
}
