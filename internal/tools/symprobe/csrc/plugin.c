/* The plugin: calls cblas_sdot of the library it bundles. */
#include <stdlib.h>
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
float plugin_run(void) {
    static const float x[] = {1, 2, 3}, y[] = {4, 5, 6};
    return cblas_sdot(3, x, 1, y, 1);
}
void *plugin_malloc(size_t n) { return malloc(n); }
void plugin_free(void *p) { free(p); }
void *plugin_malloc_addr(void) { return (void *)&malloc; }
