/*
 * engines.c — the imgproc plugin's kernels as plain functions, for
 * BenchmarkWasmEngines, which runs the same C natively and in each
 * WebAssembly engine. It includes plugins/imgproc/c/imgproc.c (build with
 * -I plugins/imgproc/c, -ffp-contract=off and -fno-math-errno, as the
 * plugin is built) and calls its operators' own create, setup and run
 * functions, so every engine runs imgproc's code, not a copy of it:
 *
 *   gray_u8(in, out, w, h, c, variant)          imgproc.Grayscale
 *   blur_u8(in, out, w, h, c, sigma, variant)   imgproc.GaussianBlur
 *   sobel_u8(in, out, w, h, c, variant)         imgproc.Sobel
 *   resize_u8(in, out, w, h, c, ow, oh, variant) imgproc.Resize (interp
 *                                               linear, its default)
 *
 * on compact uint8 HWC images; variant 0 is the scalar reference, 1 avx2
 * and 2 avx512 (x86 native builds only: built with -DIMGPROC_NO_SIMD or for
 * wasm32 there is only the scalar one). Each returns a dynop_result, 0 for
 * success. Scratch memory is kept between calls, as a host's arena is.
 *
 *   saxpy(a, x, y, out, n)  out = a*x + y on float32, imgproc's scalar
 *                           reference, for the call-overhead benchmark
 *   spin()                  never returns: the deadline tests stop it
 *   peek(p)                 the 32-bit word at p: the tests read outside
 *                           a module's memory with it, to trap
 *   recurse(n)              calls itself twice per level, n levels deep
 *                           (2^n calls) and in no loop: only a check at
 *                           function entries stops recurse(64)
 *   bottomless(n)           recurses until the call stack overflows
 *                           (recurse and bottomless: WebAssembly only)
 *   malloc(n), free(p)      the module's allocator, for the host to place
 *                           data in linear memory
 *
 * In a WebAssembly build (a wasm32-wasi reactor) these are the export
 * names; natively they are the symbols eng_gray_u8, eng_blur_u8, ….
 */
#include "imgproc.c"

#if defined(__wasm__)
#define ENG_EXPORT(name) __attribute__((export_name(#name)))
#else
#define ENG_EXPORT(name) DYNOP_EXPORT
#endif

typedef dynop_result (*eng_setup_fn)(void *, const dynop_tensor *, uint32_t, dynop_tensor *, uint32_t);
typedef dynop_result (*eng_run_fn)(void *, const dynop_tensor *, uint32_t, const dynop_tensor *, uint32_t);

/* eng_variant finds variant (0 scalar, 1 avx2, 2 avx512) in a list; NULL
 * if this build has no such variant. */
static eng_run_fn eng_variant(const dynop_variant *vs, size_t n, int32_t variant) {
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    size_t i;
    if (variant < 0 || variant > 2) return NULL;
    for (i = 0; i < n; i++)
        if (strcmp(vs[i].name, names[variant]) == 0) return (eng_run_fn)vs[i].fn;
    return NULL;
}

#define ENG_VARIANT(list, v) eng_variant(list, sizeof list / sizeof list[0], v)

/* The scratch arena, DYNOP_SCRATCH_ALIGN-aligned, grown as needed and
 * kept (base is what malloc returned). */
static char *eng_scratch_base, *eng_scratch;
static size_t eng_scratch_size;

static void *eng_scratch_of(size_t size) {
    if (size <= eng_scratch_size) return eng_scratch;
    free(eng_scratch_base);
    eng_scratch = NULL;
    eng_scratch_size = 0;
    if (size > SIZE_MAX - DYNOP_SCRATCH_ALIGN) return NULL;
    eng_scratch_base = (char *)malloc(size + DYNOP_SCRATCH_ALIGN);
    if (eng_scratch_base == NULL) return NULL;
    eng_scratch = eng_scratch_base + (DYNOP_SCRATCH_ALIGN - (uintptr_t)eng_scratch_base % DYNOP_SCRATCH_ALIGN);
    eng_scratch_size = size;
    return eng_scratch;
}

/* eng_run sets up and runs an operator instance on a compact h x w x c
 * uint8 image in, writing the compact oh x ow x oc image out, as a host
 * does: setup (the output's shape and the scratch it asks for), then the
 * variant's run. */
static int32_t eng_run(void *inst, eng_setup_fn setup, eng_run_fn run, const uint8_t *in, int32_t w, int32_t h,
                       int32_t c, uint8_t *out, int32_t ow, int32_t oh, int32_t oc) {
    int64_t ishape[3], istrides[3], oshape[3], ostrides[3], sshape[1] = {0}, sstrides[1] = {1};
    dynop_tensor tin, touts[2];
    dynop_result rc;
    if (run == NULL) return DYNOP_ERROR_UNSUPPORTED;
    ishape[0] = h, ishape[1] = w, ishape[2] = c;
    istrides[0] = (int64_t)w * c, istrides[1] = c, istrides[2] = 1;
    memset(&tin, 0, sizeof tin);
    tin.data = (void *)(uintptr_t)in;
    tin.device.device_type = DYNOP_DEVICE_CPU;
    tin.ndim = 3;
    tin.dtype.code = DYNOP_DTYPE_UINT;
    tin.dtype.bits = 8;
    tin.dtype.lanes = 1;
    tin.shape = ishape;
    tin.strides = istrides;
    touts[0] = tin;
    touts[0].data = out;
    touts[0].shape = oshape;
    touts[0].strides = ostrides;
    touts[1] = tin;
    touts[1].data = NULL;
    touts[1].ndim = 1;
    touts[1].shape = sshape;
    touts[1].strides = sstrides;
    rc = setup(inst, &tin, 1, touts, 1);
    if (rc != DYNOP_OK) return rc;
    if (oshape[0] != oh || oshape[1] != ow || oshape[2] != oc) return DYNOP_ERROR_INVALID_ARGUMENT;
    ostrides[0] = (int64_t)ow * oc, ostrides[1] = oc, ostrides[2] = 1;
    if (sshape[0] > 0) {
        touts[1].data = eng_scratch_of((size_t)sshape[0]);
        if (touts[1].data == NULL) return DYNOP_ERROR_NO_MEMORY;
    }
    return run(inst, touts, 1, &tin, 1);
}

ENG_EXPORT(gray_u8) int32_t eng_gray_u8(const uint8_t *in, uint8_t *out, int32_t w, int32_t h, int32_t c,
                                        int32_t variant) {
    return eng_run(NULL, gray_setup, ENG_VARIANT(gray_variants, variant), in, w, h, c, out, w, h, 1);
}

ENG_EXPORT(blur_u8) int32_t eng_blur_u8(const uint8_t *in, uint8_t *out, int32_t w, int32_t h, int32_t c,
                                        float sigma, int32_t variant) {
    /* The kernel's weights, made once per sigma, as an operator instance
     * makes them once. */
    static blur_inst *b;
    static float bsigma;
    if (b == NULL || bsigma != sigma) {
        blur_destroy(b);
        b = NULL;
        if (blur_make("imgproc.GaussianBlur", sigma, 0, &b) != DYNOP_OK) return DYNOP_ERROR_INVALID_ARGUMENT;
        bsigma = sigma;
    }
    return eng_run(b, blur_setup, ENG_VARIANT(blur_variants, variant), in, w, h, c, out, w, h, c);
}

ENG_EXPORT(sobel_u8) int32_t eng_sobel_u8(const uint8_t *in, uint8_t *out, int32_t w, int32_t h, int32_t c,
                                          int32_t variant) {
    return eng_run(NULL, sobel_setup, ENG_VARIANT(sobel_variants, variant), in, w, h, c, out, w, h, c);
}

ENG_EXPORT(resize_u8) int32_t eng_resize_u8(const uint8_t *in, uint8_t *out, int32_t w, int32_t h, int32_t c,
                                            int32_t ow, int32_t oh, int32_t variant) {
    resize_inst r;
    memset(&r, 0, sizeof r);
    r.width = ow;
    r.height = oh;
    r.interp = RESIZE_LINEAR;
    return eng_run(&r, resize_setup, ENG_VARIANT(resize_variants, variant), in, w, h, c, out, ow, oh, c);
}

ENG_EXPORT(saxpy) void eng_saxpy(float a, const float *x, const float *y, float *out, int32_t n) {
    dynop_imgproc_saxpy_f32(a, x, y, out, n);
}

/* spin's counter is volatile, so the loop is kept, and it is a loop with
 * a side effect, which the compiler may not assume ends. */
static volatile uint32_t eng_spins;

ENG_EXPORT(spin) void eng_spin(void) {
    for (;;) eng_spins++;
}

ENG_EXPORT(peek) uint32_t eng_peek(const volatile uint32_t *p) { return *p; }

#if defined(__wasm__)
/* optnone keeps clang from turning one of the calls into a loop. (Only
 * the WebAssembly build has them: gcc has no optnone.) */
ENG_EXPORT(recurse) __attribute__((noinline, optnone)) uint32_t eng_recurse(uint32_t n) {
    if (n == 0) return 1;
    return eng_recurse(n - 1) + eng_recurse(n - 1);
}

ENG_EXPORT(bottomless) __attribute__((noinline, optnone)) uint32_t eng_bottomless(volatile uint32_t n) {
    if (n == 0xFFFFFFFFu) return 0;
    return eng_bottomless(n + 1) + n;
}
#endif

ENG_EXPORT(malloc) void *eng_malloc(size_t n) { return malloc(n); }

ENG_EXPORT(free) void eng_free(void *p) { free(p); }
