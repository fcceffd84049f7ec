/* The bundled library: the correct cblas_sdot. Its cblas_sdot calls
 * sdot_kernel, another exported function, so an internal call can be
 * interposed too. VARIANT_ADD changes the answer for the impostor. */
#ifndef VARIANT_ADD
#define VARIANT_ADD 0
#endif
float sdot_kernel(int n, const float *x, int incx, const float *y, int incy) {
    float s = 0;
    for (int i = 0; i < n; i++) s += x[i * incx] * y[i * incy];
    return s;
}
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy) {
    return sdot_kernel(n, x, incx, y, incy) + VARIANT_ADD;
}
