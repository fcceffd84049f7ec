/* The host's library: exports the same names with other answers.
 * cblas_sdot: dot + 10 (42); sdot_kernel: dot + 100 (132 through cblas_sdot of myblas). */
static float dot(int n, const float *x, int incx, const float *y, int incy) {
    float s = 0;
    for (int i = 0; i < n; i++) s += x[i * incx] * y[i * incy];
    return s;
}
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy) { return dot(n, x, incx, y, incy) + 10; }
float sdot_kernel(int n, const float *x, int incx, const float *y, int incy) { return dot(n, x, incx, y, incy) + 100; }
