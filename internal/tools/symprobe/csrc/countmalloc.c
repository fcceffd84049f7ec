/* A counting allocator preloaded into the host (LD_PRELOAD). Each block
 * it hands out has a 16-byte header with a magic number, so its free can
 * tell its own blocks from blocks that libc's malloc handed out: those it
 * counts as "foreign" and gives to libc's free, so nothing is corrupted.
 * Built with -fno-builtin: gcc would turn calloc's malloc+memset into a
 * call to calloc itself. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);
#define MAGIC 0x5e1ec7edc0ffee11ULL
static unsigned long n_malloc, n_own_free, n_foreign_free;
void *malloc(size_t n) {
    uint64_t *b = __libc_malloc(n + 16);
    if (!b) return NULL;
    b[0] = MAGIC;
    b[1] = n;
    __atomic_add_fetch(&n_malloc, 1, __ATOMIC_RELAXED);
    return b + 2;
}
static int own(void *p) { return ((uint64_t *)p)[-2] == MAGIC; }
void free(void *p) {
    if (!p) return;
    if (own(p)) {
        ((uint64_t *)p)[-2] = 0;
        __atomic_add_fetch(&n_own_free, 1, __ATOMIC_RELAXED);
        __libc_free((uint64_t *)p - 2);
    } else {
        __atomic_add_fetch(&n_foreign_free, 1, __ATOMIC_RELAXED);
        __libc_free(p);
    }
}
void *calloc(size_t a, size_t b) {
    size_t n = a * b;
    if (b && n / b != a) return NULL;
    void *p = malloc(n);
    if (p) memset(p, 0, n);
    return p;
}
void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    if (!own(p)) return __libc_realloc(p, n);
    size_t old = ((uint64_t *)p)[-1];
    void *q = malloc(n);
    if (!q) return NULL;
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}
void countmalloc_stats(unsigned long *m, unsigned long *own_f, unsigned long *foreign_f) {
    *m = n_malloc;
    *own_f = n_own_free;
    *foreign_f = n_foreign_free;
}
