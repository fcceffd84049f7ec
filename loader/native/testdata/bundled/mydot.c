/* libmydot.so.0: the library a plugin ships beside it (a stand-in for
 * OpenBLAS): cblas_sdot, correct. Built with -Wl,-soname,libmydot.so.0. */
__attribute__((visibility("default"))) float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy) {
    float sum = 0;
    int i;
    for (i = 0; i < n; i++) sum += x[i * incx] * y[i * incy];
    return sum;
}
