/*
 * imgproc.c — the example native image-processing plugin,
 * dynop.plugin.imgproc. Its operators run on the CPU, each in three
 * variants compiled into this one library: "avx512" (AVX-512 F and BW),
 * "avx2" and "scalar", the portable reference in plain C. The host picks
 * one per instance (the first the CPU has); every variant computes the
 * reference's bytes exactly. The library itself is built for the baseline
 * of its architecture: SIMD code lives only in functions with
 * __attribute__((target(...))), and on other architectures than x86 only
 * the scalar variants are built.
 *
 * Images are HWC tensors (height, width, channels), uint8 or float32,
 * with any strides (in elements) and byte offset; the SIMD paths need
 * rows whose pixels and channels are contiguous (pixel stride = channels,
 * channel stride 1) and fall back to scalar code for other rows. Borders
 * "replicate the edge": a pixel outside the image takes the value of the
 * nearest edge pixel, (y, x) -> (clamp(y, 0, H-1), clamp(x, 0, W-1)).
 *
 * Build with -ffp-contract=off (no fused multiply-adds, so float results
 * do not depend on the compiler or the variant) and -fno-math-errno
 * (sqrtf is an instruction, not a call into libm, which the library does
 * not link); the Makefile and internal/cbuild do.
 *
 * imgproc.Grayscale: BT.601 luma of an HWC image with 3 or 4 channels
 * (alpha ignored), uint8 or float32, to HWC with 1 channel:
 *   uint8    Y = (9798 R + 19235 G + 3735 B + 16384) >> 15
 *   float32  Y = (0.299f*R + 0.587f*G) + 0.114f*B, each product rounded
 * bit-identical to the Go operator image.Grayscale. The scalar kernels are
 * exported for direct calls: dynop_imgproc_gray_u8, dynop_imgproc_gray_f32.
 *
 * imgproc.GaussianBlur (sigma > 0, radius r, 0 = ceil(3 sigma)): separable
 * Gaussian, weights w_i = exp(-i^2 / (2 sigma^2)) / sum, i in [-r, r],
 * first along rows, then along columns; HWC with 1, 3 or 4 channels.
 *   uint8    integer weights k_i = k_-i >= 0 summing to exactly 1 << 14:
 *            floors of w_i * 2^14, then the remainder handed out one unit
 *            to the centre if it is odd, then one unit to each pair +-i in
 *            order of largest fraction (ties to the inner tap);
 *            horizontal t = (sum k_i p(x+i) + 128) >> 8 (6 fraction bits),
 *            vertical out = (sum k_i t(y+i) + (1 << 19)) >> 20.
 *   float32  f_i = (float)w_i; acc = f_0 p(0), then for i = 1..r in order
 *            acc = acc + f_i (p(-i) + p(+i)); the same along columns.
 *   Outer taps whose (integer or float) weight is zero are skipped.
 *
 * imgproc.Sobel: per channel, gradient magnitude of the 3x3 Sobel
 * operators gx = [-1 0 1; -2 0 2; -1 0 1], gy its transpose (correlation:
 * gx = right column - left column), computed separably as
 *   S(x) = (p(y-1, x) + 2 p(y, x)) + p(y+1, x),  D(x) = p(y+1, x) - p(y-1, x)
 *   gx = S(x+1) - S(x-1),  gy = (D(x-1) + 2 D(x)) + D(x+1)
 *   uint8    (integers) out = min(255, (int)(sqrtf((float)(gx*gx + gy*gy)) + 0.5f))
 *   float32  out = sqrtf(gx*gx + gy*gy), each product rounded.
 *
 * imgproc.Resize (an output size; interp, antialias): interp "linear" (the
 * default) is bilinear, pixel centres aligned. For an output index d along
 * an axis of in -> out pixels:
 *   src = ((d + 0.5) * in) / out - 0.5 (double), clamped to [0, in-1],
 *   i0 = floor(src), i1 = min(i0+1, in-1), f = src - i0.
 *   uint8    w = lround(f * 2048); per source row h = p0 (2048-wx) + p1 wx,
 *            out = (h0 (2048-wy) + h1 wy + (1 << 21)) >> 22.
 *   float32  h = p0 (float)(1-fx) + p1 (float)fx per source row, then
 *            out = h0 (float)(1-fy) + h1 (float)fy, each product rounded.
 * "nearest" is OpenCV's INTER_NEAREST_EXACT (16-bit fixed point:
 * (ifx d + ifx/2 - 1) >> 16, ifx = ((in << 16) + out/2) / out, clamped);
 * "area" where either side grows is bilinear with OpenCV's INTER_AREA
 * coordinates (resize_coord_area). "cubic" (Keys, a = -0.75, OpenCV's
 * float weights), "area" shrinking (box weights by overlap) and antialias
 * (PIL's widened triangle or cubic) along a side that shrinks run the
 * n-tap path: per-axis weight tables, float32 sums in tap order, rows
 * then columns; uint8 converted to float32 and rounded at the end,
 * (int)(clamp(v, 0, 255) + 0.5f). plugins/imgproc/imgproc.go has the
 * full definitions.
 *
 * imgproc.Saxpy (a): out = (a*x) + y on float32 tensors of any shape, the
 * product rounded. Memory-bound: large arrays are written with
 * non-temporal stores. Direct calls: dynop_imgproc_saxpy_f32 (the scalar
 * reference), dynop_imgproc_saxpy_f32_avx2 and _avx512 (call these only
 * on a CPU that has the features).
 *
 * imgproc.native-grayscale: a populate pass for nodes of kind
 * image.Grayscale that attaches imgproc.Grayscale instead of the Go
 * operator. The two accept the same inputs (uint8 or float32 HWC with 3
 * or 4 channels, no arguments) and compute the same bytes, so the pass
 * can swap them without seeing the data.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__NO_MATH_ERRNO__)
#error "build imgproc.c with -fno-math-errno -ffp-contract=off (see the Makefile)"
#endif

/* -DIMGPROC_NO_SIMD builds only the scalar variants, as on other
 * architectures than x86. */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(IMGPROC_NO_SIMD)
#define IMGPROC_X86 1
#include <immintrin.h>
/* The variants' target attributes and the CPU features they need: exactly
 * the features the attribute names (the host adds what they imply). */
#define IMGPROC_AVX2 __attribute__((target("avx2")))
#define IMGPROC_AVX512 __attribute__((target("avx512f,avx512bw")))
#define IMGPROC_AVX2_FEATURES DYNOP_CPU_AVX2
#define IMGPROC_AVX512_FEATURES (DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW)
#define LD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST128(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define LD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ST256(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define LD512(p) _mm512_loadu_si512((const void *)(p))
#define ST512(p, v) _mm512_storeu_si512((void *)(p), (v))
#else
#define IMGPROC_X86 0
#endif

/* A WebAssembly build with -msimd128 adds variants "simd128" written with
 * wasm's v128 where clang does not vectorise the scalar code across
 * pixels (GaussianBlur). WebAssembly hosts report no CPU features, and
 * every engine dynop runs has SIMD, so they need none. */
#if defined(__wasm_simd128__) && !defined(IMGPROC_NO_SIMD)
#define IMGPROC_WASM_SIMD 1
#include <wasm_simd128.h>
#else
#define IMGPROC_WASM_SIMD 0
#endif

#define IMGPROC_PLUGIN "dynop.plugin.imgproc"

static const dynop_host *host_table;

/* fail explains an error to the host and returns it. */
static dynop_result fail(dynop_result rc, const char *msg) {
    if (host_table != NULL) host_table->set_error(host_table, msg);
    return rc;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static dynop_result failf(dynop_result rc, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail(rc, msg);
}

/* ---- helpers ------------------------------------------------------------ */

/* IMGPROC_VARIANTS(op) lists an operator's variants, best first and the
 * reference last: op_run_avx512, op_run_avx2 and op_run_scalar on x86,
 * only op_run_scalar elsewhere. */
#if IMGPROC_X86
#define IMGPROC_VARIANTS(op)                                                                                           \
    DYNOP_VARIANT("avx512", IMGPROC_AVX512_FEATURES, op##_run_avx512),                                                 \
        DYNOP_VARIANT("avx2", IMGPROC_AVX2_FEATURES, op##_run_avx2), DYNOP_VARIANT("scalar", 0, op##_run_scalar)
#else
#define IMGPROC_VARIANTS(op) DYNOP_VARIANT("scalar", 0, op##_run_scalar)
#endif


static int is_dtype(dynop_dtype t, int code, int bits) {
    return t.code == code && t.bits == bits && t.lanes == 1;
}

static int is_u8(dynop_dtype t) { return is_dtype(t, DYNOP_DTYPE_UINT, 8); }
static int is_f32(dynop_dtype t) { return is_dtype(t, DYNOP_DTYPE_FLOAT, 32); }

/* dtype_name writes a dtype's name ("int16", "float32x4") into buf. */
static const char *dtype_name(dynop_dtype t, char *buf, size_t size) {
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};
    const char *code = t.code < sizeof codes / sizeof codes[0] ? codes[t.code] : "code";
    if (t.code == DYNOP_DTYPE_BOOL && t.bits == 8 && t.lanes == 1) snprintf(buf, size, "bool");
    else if (t.lanes == 1) snprintf(buf, size, "%s%u", code, (unsigned)t.bits);
    else snprintf(buf, size, "%s%ux%u", code, (unsigned)t.bits, (unsigned)t.lanes);
    return buf;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up64(int64_t n) { return (n + 63) & ~(int64_t)63; }

/* lround_pos is lround for 0 <= v < 2^62, without libm. */
static int64_t lround_pos(double v) {
    int64_t i = (int64_t)v;
    return v - (double)i >= 0.5 ? i + 1 : i;
}

/* An HWC image: p points at element (0, 0, 0); strides are in elements. */
typedef struct {
    char *p;
    int64_t h, w, c;
    int64_t sy, sx, sc;
} view;

static view view_of(const dynop_tensor *t) {
    view v;
    v.p = (char *)t->data + t->byte_offset;
    v.h = t->shape[0];
    v.w = t->shape[1];
    v.c = t->shape[2];
    v.sy = t->strides[0];
    v.sx = t->strides[1];
    v.sc = t->strides[2];
    return v;
}

/* rows_contig: each row's pixels and channels are contiguous, so a row is
 * w*c consecutive elements. */
static int rows_contig(const view *v) { return (v->w <= 1 || v->sx == v->c) && (v->c <= 1 || v->sc == 1); }

/* tensor_rows_contig is rows_contig for an HWC tensor in setup, where
 * there is no data yet; without strides it answers no, which asks for the
 * larger scratch. */
static int tensor_rows_contig(const dynop_tensor *t) {
    return t->strides != NULL && (t->shape[1] <= 1 || t->strides[1] == t->shape[2]) &&
           (t->shape[2] <= 1 || t->strides[2] == 1);
}

static dynop_result no_memory(const char *op, size_t bytes);

/* Scratch memory is the host's (DYNOP_OPERATOR_SCRATCH): setup writes the
 * bytes a sample's run needs into the scratch tensor after the outputs,
 * and run finds them there, DYNOP_SCRATCH_ALIGN-aligned, from the
 * worker's arena. scratch_of returns run's scratch if it holds at least
 * size bytes, and fails otherwise (a host that gave less than setup asked
 * for, or a run whose inputs differ from setup's). */
static char *scratch_of(const dynop_tensor *scratch, size_t size, const char *op, dynop_result *rc) {
    if (scratch->data == NULL || scratch->ndim != 1 || scratch->shape[0] < 0 || (uint64_t)scratch->shape[0] < size) {
        *rc = failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: run needs %zu bytes of scratch; the host gave %lld", op, size,
                    scratch->data == NULL || scratch->ndim != 1 ? 0LL : (long long)scratch->shape[0]);
        return NULL;
    }
    return (char *)scratch->data + scratch->byte_offset;
}

/* set_scratch is setup's half: the sample's run will need size bytes. */
static dynop_result set_scratch(dynop_tensor *scratch, size_t size, const char *op) {
    if (size > SIZE_MAX / 2) return no_memory(op, size); /* fits an int64_t */
    scratch->shape[0] = (int64_t)size;
    return DYNOP_OK;
}

/* carve reserves count elements of size esize at *at in a scratch layout
 * of *size bytes, each piece 64-byte aligned; 0 on overflow. */
static int carve(size_t *size, int64_t count, size_t esize, size_t *at) {
    size_t bytes;
    if (count < 0 || (uint64_t)count > (SIZE_MAX - 64) / esize) return 0;
    bytes = ((size_t)count * esize + 63) & ~(size_t)63;
    if (*size > SIZE_MAX - bytes) return 0;
    *at = *size;
    *size += bytes;
    return 1;
}

static dynop_result no_memory(const char *op, size_t bytes) {
    return failf(DYNOP_ERROR_NO_MEMORY, "%s: out of memory (%zu bytes of scratch)", op, bytes);
}

/* Arguments, by name. */
static const dynop_arg *find_arg(const dynop_arg *args, uint32_t n, const char *name) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (args[i].name != NULL && strcmp(args[i].name, name) == 0 && args[i].count >= 1 && args[i].values != NULL)
            return &args[i];
    return NULL;
}

static int arg_float(const dynop_arg *args, uint32_t n, const char *name, double *v) {
    const dynop_arg *a = find_arg(args, n, name);
    if (a == NULL) return 0;
    if (a->type == DYNOP_ARG_FLOAT) *v = *(const double *)a->values;
    else if (a->type == DYNOP_ARG_INT) *v = (double)*(const int64_t *)a->values;
    else return 0;
    return 1;
}

static int arg_int(const dynop_arg *args, uint32_t n, const char *name, int64_t *v) {
    const dynop_arg *a = find_arg(args, n, name);
    if (a == NULL || a->type != DYNOP_ARG_INT) return 0;
    *v = *(const int64_t *)a->values;
    return 1;
}

/* check_image validates the one input of an image operator: an HWC
 * uint8 or float32 image with 1, 3 or 4 channels (3 or 4 if rgb_only).
 * A dtype or channel count the operator lacks is DYNOP_ERROR_UNSUPPORTED,
 * a malformed input DYNOP_ERROR_INVALID_ARGUMENT (the rule in dynop.h). */
static dynop_result check_image(const char *op, const dynop_tensor *in, uint32_t nin, uint32_t nout, int rgb_only) {
    char name[32];
    int64_t c;
    if (nin != 1 || nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: takes 1 input and 1 output", op);
    if (in->ndim != 3)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: want an HWC image (3 dimensions), got %d dimension(s)", op,
                     (int)in->ndim);
    if (!is_u8(in->dtype) && !is_f32(in->dtype))
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported dtype %s (want uint8 or float32)", op,
                     dtype_name(in->dtype, name, sizeof name));
    c = in->shape[2];
    if (rgb_only && c != 3 && c != 4)
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported channel count %lld (want 3 or 4)", op, (long long)c);
    if (!rgb_only && c != 1 && c != 3 && c != 4)
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported channel count %lld (want 1, 3 or 4)", op, (long long)c);
    if (in->shape[0] < 0 || in->shape[1] < 0)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: negative image size %lldx%lld", op, (long long)in->shape[0],
                     (long long)in->shape[1]);
    return DYNOP_OK;
}

static dynop_result create_stateless(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    (void)user_data;
    (void)args;
    (void)n;
    *instance = NULL;
    return DYNOP_OK;
}

#if IMGPROC_X86
/* load32_avx512 loads the bytes of p that mask m selects (of 32), zeros
 * elsewhere, without AVX-512 VL. */
IMGPROC_AVX512 static inline __m256i load32_avx512(__mmask32 m, const void *p) {
    return _mm512_castsi512_si256(_mm512_maskz_loadu_epi8((__mmask64)m, p));
}

/* pack4x8_avx2 packs four vectors of 8 int32 in [0, 255] into 32 bytes, in order. */
IMGPROC_AVX2 static inline __m256i pack4x8_avx2(__m256i a, __m256i b, __m256i c, __m256i d) {
    __m256i ab = _mm256_packus_epi32(a, b), cd = _mm256_packus_epi32(c, d);
    return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* pack16_avx2 packs 16 int16 in [0, 255] (in order) into 16 bytes. */
IMGPROC_AVX2 static inline __m128i pack16_avx2(__m256i v) {
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0x08));
}

/* store_bytes_avx2 stores the first n (at most 16) bytes of v. */
IMGPROC_AVX2 static inline void store_bytes_avx2(uint8_t *d, __m128i v, int64_t n) {
    uint8_t tmp[16];
    if (n >= 16) {
        ST128(d, v);
        return;
    }
    ST128(tmp, v);
    memcpy(d, tmp, (size_t)n);
}

/* tail_mask_avx2 has the first n (0..8) int32 lanes set. */
IMGPROC_AVX2 static inline __m256i tail_mask_avx2(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

/* ==== imgproc.Grayscale ================================================== */

/* Strides are in elements: sy between rows, sx between pixels, sc between
 * channels; the destination has one channel. */
DYNOP_EXPORT void dynop_imgproc_gray_u8(const uint8_t *src, int64_t h, int64_t w, int64_t sy, int64_t sx,
                                        int64_t sc, uint8_t *dst, int64_t dy, int64_t dx) {
    int64_t y, x;
    for (y = 0; y < h; y++) {
        const uint8_t *s = src + y * sy;
        uint8_t *d = dst + y * dy;
        for (x = 0; x < w; x++, s += sx, d += dx) {
            uint32_t v = 9798u * s[0] + 19235u * s[sc] + 3735u * s[2 * sc] + 16384u;
            *d = (uint8_t)(v >> 15);
        }
    }
}

DYNOP_EXPORT void dynop_imgproc_gray_f32(const float *src, int64_t h, int64_t w, int64_t sy, int64_t sx,
                                         int64_t sc, float *dst, int64_t dy, int64_t dx) {
    int64_t y, x;
    for (y = 0; y < h; y++) {
        const float *s = src + y * sy;
        float *d = dst + y * dy;
        for (x = 0; x < w; x++, s += sx, d += dx) {
            /* Separate roundings, no fused multiply-adds (the library is
             * built with -ffp-contract=off), so results match the Go
             * operator's bit for bit. */
            float r = 0.299f * s[0];
            float g = 0.587f * s[sc];
            float b = 0.114f * s[2 * sc];
            float rg = r + g;
            *d = rg + b;
        }
    }
}

static dynop_result gray_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                               uint32_t nout) {
    dynop_result rc = check_image("imgproc.Grayscale", in, nin, nout, 1);
    (void)instance;
    if (rc != DYNOP_OK) return rc;
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = 1;
    return DYNOP_OK;
}

/* Row kernels for contiguous rows: w pixels of c (3 or 4) channels to w values. */
typedef void (*gray_row_u8)(const uint8_t *s, uint8_t *d, int64_t w, int64_t c);
typedef void (*gray_row_f32)(const float *s, float *d, int64_t w, int64_t c);

static void gray_run_rows(const dynop_tensor *out, const dynop_tensor *in, gray_row_u8 f8, gray_row_f32 ff) {
    const char *src = (const char *)in->data + in->byte_offset;
    char *dst = (char *)out->data + out->byte_offset;
    int64_t h = in->shape[0], w = in->shape[1], c = in->shape[2], y;
    int64_t sy = in->strides[0], sx = in->strides[1], sc = in->strides[2];
    int64_t dy = out->strides[0], dx = out->strides[1];
    int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    if (f8 == NULL || sc != 1 || (w > 1 && (sx != c || dx != 1))) {
        if (u8) dynop_imgproc_gray_u8((const uint8_t *)src, h, w, sy, sx, sc, (uint8_t *)dst, dy, dx);
        else dynop_imgproc_gray_f32((const float *)src, h, w, sy, sx, sc, (float *)dst, dy, dx);
        return;
    }
    for (y = 0; y < h; y++) {
        if (u8) f8((const uint8_t *)src + y * sy, (uint8_t *)dst + y * dy, w, c);
        else ff((const float *)src + y * sy, (float *)dst + y * dy, w, c);
    }
}

static dynop_result gray_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)instance;
    (void)nout;
    (void)nin;
    gray_run_rows(out, in, NULL, NULL);
    return DYNOP_OK;
}

#if IMGPROC_X86
static inline void gray_tail_u8(const uint8_t *s, uint8_t *d, int64_t x, int64_t w, int64_t c) {
    dynop_imgproc_gray_u8(s + x * c, 1, w - x, 0, c, 1, d + x, 0, 1);
}

static inline void gray_tail_f32(const float *s, float *d, int64_t x, int64_t w, int64_t c) {
    dynop_imgproc_gray_f32(s + x * c, 1, w - x, 0, c, 1, d + x, 0, 1);
}

/* gray8_rb_g_avx2: luma from pixels as 32-bit lanes holding R and B as
 * 16-bit halves (rb) and G as the low half (g). */
IMGPROC_AVX2 static inline __m256i gray8_rb_g_avx2(__m256i rb, __m256i g) {
    __m256i y = _mm256_add_epi32(_mm256_madd_epi16(rb, _mm256_set1_epi32((3735 << 16) | 9798)),
                                 _mm256_madd_epi16(g, _mm256_set1_epi32(19235)));
    return _mm256_srli_epi32(_mm256_add_epi32(y, _mm256_set1_epi32(16384)), 15);
}

/* 8 RGBA pixels to 8 int32 lumas. */
IMGPROC_AVX2 static inline __m256i gray8_rgba_avx2(__m256i v) {
    const __m256i m = _mm256_set1_epi32(0x00FF00FF);
    return gray8_rb_g_avx2(_mm256_and_si256(v, m), _mm256_and_si256(_mm256_srli_epi32(v, 8), m));
}

/* 8 RGB pixels (bytes 0..23 of v) to 8 int32 lumas. */
IMGPROC_AVX2 static inline __m256i gray8_rgb_avx2(__m256i v) {
    const __m256i crb = _mm256_setr_epi8(0, -1, 2, -1, 3, -1, 5, -1, 6, -1, 8, -1, 9, -1, 11, -1, 0, -1, 2, -1, 3, -1,
                                         5, -1, 6, -1, 8, -1, 9, -1, 11, -1);
    const __m256i cg = _mm256_setr_epi8(1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1, 1, -1, -1, -1, 4,
                                        -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1);
    v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 1, 2, 3, 3, 4, 5, 6));
    return gray8_rb_g_avx2(_mm256_shuffle_epi8(v, crb), _mm256_shuffle_epi8(v, cg));
}

IMGPROC_AVX2 static void gray_u8_avx2(const uint8_t *s, uint8_t *d, int64_t w, int64_t c) {
    int64_t x = 0;
    if (c == 4) {
        for (; x + 32 <= w; x += 32) {
            const uint8_t *p = s + 4 * x;
            ST256(d + x, pack4x8_avx2(gray8_rgba_avx2(LD256(p)), gray8_rgba_avx2(LD256(p + 32)),
                                      gray8_rgba_avx2(LD256(p + 64)), gray8_rgba_avx2(LD256(p + 96))));
        }
    } else {
        /* The last load reads 8 bytes past the 32 pixels. */
        for (; x + 35 <= w; x += 32) {
            const uint8_t *p = s + 3 * x;
            ST256(d + x, pack4x8_avx2(gray8_rgb_avx2(LD256(p)), gray8_rgb_avx2(LD256(p + 24)),
                                      gray8_rgb_avx2(LD256(p + 48)), gray8_rgb_avx2(LD256(p + 72))));
        }
    }
    gray_tail_u8(s, d, x, w, c);
}

IMGPROC_AVX2 static inline __m256 grayf_combine_avx2(__m256 r, __m256 g, __m256 b) {
    __m256 rg = _mm256_add_ps(_mm256_mul_ps(r, _mm256_set1_ps(0.299f)), _mm256_mul_ps(g, _mm256_set1_ps(0.587f)));
    return _mm256_add_ps(rg, _mm256_mul_ps(b, _mm256_set1_ps(0.114f)));
}

IMGPROC_AVX2 static void gray_f32_avx2(const float *s, float *d, int64_t w, int64_t c) {
    int64_t x = 0;
    if (c == 4) {
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (; x + 8 <= w; x += 8) {
            const float *p = s + 4 * x;
            __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8);
            __m256 v2 = _mm256_loadu_ps(p + 16), v3 = _mm256_loadu_ps(p + 24);
            __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);
            __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);
            __m256 r = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
            __m256 g = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
            __m256 b = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
            _mm256_storeu_ps(d + x, _mm256_permutevar8x32_ps(grayf_combine_avx2(r, g, b), order));
        }
    } else {
        const __m256i ir = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
        const __m256i ig = _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6);
        const __m256i ib = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
        for (; x + 8 <= w; x += 8) {
            const float *p = s + 3 * x;
            __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8), v2 = _mm256_loadu_ps(p + 16);
            __m256 r = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x92), v2, 0x24), ir);
            __m256 g = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x24), v2, 0x49), ig);
            __m256 b = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x49), v2, 0x92), ib);
            _mm256_storeu_ps(d + x, grayf_combine_avx2(r, g, b));
        }
    }
    gray_tail_f32(s, d, x, w, c);
}

IMGPROC_AVX512 static inline __m512i gray8_rb_g_avx512(__m512i rb, __m512i g) {
    __m512i y = _mm512_add_epi32(_mm512_madd_epi16(rb, _mm512_set1_epi32((3735 << 16) | 9798)),
                                 _mm512_madd_epi16(g, _mm512_set1_epi32(19235)));
    return _mm512_srli_epi32(_mm512_add_epi32(y, _mm512_set1_epi32(16384)), 15);
}

IMGPROC_AVX512 static inline __m512i gray8_rgba_avx512(__m512i v) {
    const __m512i m = _mm512_set1_epi32(0x00FF00FF);
    return gray8_rb_g_avx512(_mm512_and_si512(v, m), _mm512_and_si512(_mm512_srli_epi32(v, 8), m));
}

/* 16 RGB pixels (bytes 0..47 of v) to 16 int32 lumas. */
IMGPROC_AVX512 static inline __m512i gray8_rgb_avx512(__m512i v) {
    const __m512i crb = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 2, -1, 3, -1, 5, -1, 6, -1, 8, -1, 9, -1, 11, -1));
    const __m512i cg = _mm512_broadcast_i32x4(_mm_setr_epi8(1, -1, -1, -1, 4, -1, -1, -1, 7, -1, -1, -1, 10, -1, -1, -1));
    v = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0), v);
    return gray8_rb_g_avx512(_mm512_shuffle_epi8(v, crb), _mm512_shuffle_epi8(v, cg));
}

IMGPROC_AVX512 static void gray_u8_avx512(const uint8_t *s, uint8_t *d, int64_t w, int64_t c) {
    int64_t x = 0;
    if (c == 4) {
        for (; x + 64 <= w; x += 64) {
            const uint8_t *p = s + 4 * x;
            ST128(d + x, _mm512_cvtepi32_epi8(gray8_rgba_avx512(LD512(p))));
            ST128(d + x + 16, _mm512_cvtepi32_epi8(gray8_rgba_avx512(LD512(p + 64))));
            ST128(d + x + 32, _mm512_cvtepi32_epi8(gray8_rgba_avx512(LD512(p + 128))));
            ST128(d + x + 48, _mm512_cvtepi32_epi8(gray8_rgba_avx512(LD512(p + 192))));
        }
        for (; x + 16 <= w; x += 16) ST128(d + x, _mm512_cvtepi32_epi8(gray8_rgba_avx512(LD512(s + 4 * x))));
        if (x < w) {
            __mmask16 m = (__mmask16)((1u << (w - x)) - 1);
            _mm512_mask_cvtepi32_storeu_epi8(d + x, m, gray8_rgba_avx512(_mm512_maskz_loadu_epi32(m, s + 4 * x)));
        }
    } else {
        for (; x + 16 <= w; x += 16)
            ST128(d + x, _mm512_cvtepi32_epi8(gray8_rgb_avx512(_mm512_maskz_loadu_epi32(0x0FFF, s + 3 * x))));
        if (x < w) {
            int64_t n = w - x;
            __mmask64 mb = ((__mmask64)1 << (3 * n)) - 1;
            _mm512_mask_cvtepi32_storeu_epi8(d + x, (__mmask16)((1u << n) - 1),
                                             gray8_rgb_avx512(_mm512_maskz_loadu_epi8(mb, s + 3 * x)));
        }
    }
}

IMGPROC_AVX512 static inline __m512 grayf_combine_avx512(__m512 r, __m512 g, __m512 b) {
    __m512 rg = _mm512_add_ps(_mm512_mul_ps(r, _mm512_set1_ps(0.299f)), _mm512_mul_ps(g, _mm512_set1_ps(0.587f)));
    return _mm512_add_ps(rg, _mm512_mul_ps(b, _mm512_set1_ps(0.114f)));
}

IMGPROC_AVX512 static void gray_f32_avx512(const float *s, float *d, int64_t w, int64_t c) {
    int64_t x = 0;
    if (c == 4) {
        const __m512i i_rg = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
        const __m512i i_ba = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
        for (; x + 16 <= w; x += 16) {
            const float *p = s + 4 * x;
            __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16);
            __m512 v2 = _mm512_loadu_ps(p + 32), v3 = _mm512_loadu_ps(p + 48);
            __m512 a = _mm512_permutex2var_ps(v0, i_rg, v1), b = _mm512_permutex2var_ps(v2, i_rg, v3);
            __m512 e = _mm512_permutex2var_ps(v0, i_ba, v1), f = _mm512_permutex2var_ps(v2, i_ba, v3);
            __m512 r = _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0));
            __m512 g = _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2));
            __m512 bl = _mm512_shuffle_f32x4(e, f, _MM_SHUFFLE(1, 0, 1, 0));
            _mm512_storeu_ps(d + x, grayf_combine_avx512(r, g, bl));
        }
    } else {
        /* Channel k of pixel j is float 3j+k: from v0:v1 while below 32,
         * else from v2. */
        const __m512i r1 = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0);
        const __m512i r2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
        const __m512i g1 = _mm512_setr_epi32(1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0);
        const __m512i g2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
        const __m512i b1 = _mm512_setr_epi32(2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0);
        const __m512i b2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
        for (; x + 16 <= w; x += 16) {
            const float *p = s + 3 * x;
            __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16), v2 = _mm512_loadu_ps(p + 32);
            __m512 r = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, r1, v1), r2, v2);
            __m512 g = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, g1, v1), g2, v2);
            __m512 b = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, b1, v1), b2, v2);
            _mm512_storeu_ps(d + x, grayf_combine_avx512(r, g, b));
        }
    }
    gray_tail_f32(s, d, x, w, c);
}

static dynop_result gray_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                  uint32_t nin) {
    (void)instance;
    (void)nout;
    (void)nin;
    gray_run_rows(out, in, gray_u8_avx2, gray_f32_avx2);
    return DYNOP_OK;
}

static dynop_result gray_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)instance;
    (void)nout;
    (void)nin;
    gray_run_rows(out, in, gray_u8_avx512, gray_f32_avx512);
    return DYNOP_OK;
}
#endif /* IMGPROC_X86 */

/* ==== imgproc.Saxpy ====================================================== */

/* Arrays at least this long (in elements) are written with non-temporal
 * stores: they would not stay in the cache anyway, and streaming saves the
 * reads of the destination's lines. */
#ifndef SAXPY_STREAM_MIN
#define SAXPY_STREAM_MIN ((int64_t)1 << 20)
#endif

/* out[i] = (a*x[i]) + y[i], the product rounded; out may be x or y but
 * may not overlap them otherwise. The scalar reference. */
DYNOP_EXPORT void dynop_imgproc_saxpy_f32(float a, const float *x, const float *y, float *out, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) {
        float ax = a * x[i];
        out[i] = ax + y[i];
    }
}

#if IMGPROC_X86
/* dynop_imgproc_saxpy_f32_avx2 and _avx512 compute what
 * dynop_imgproc_saxpy_f32 does with AVX2 and AVX-512 (F); call them only on
 * a CPU that has the features. */
DYNOP_EXPORT IMGPROC_AVX2 void dynop_imgproc_saxpy_f32_avx2(float a, const float *x, const float *y, float *out,
                                                            int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    if (n >= SAXPY_STREAM_MIN && ((uintptr_t)out & 3) == 0) {
        int64_t head = (int64_t)(((32 - ((uintptr_t)out & 31)) & 31) / 4);
        dynop_imgproc_saxpy_f32(a, x, y, out, head);
        for (i = head; i + 32 <= n; i += 32) {
            __m256 r0 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i)), _mm256_loadu_ps(y + i));
            __m256 r1 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 8)), _mm256_loadu_ps(y + i + 8));
            __m256 r2 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 16)), _mm256_loadu_ps(y + i + 16));
            __m256 r3 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 24)), _mm256_loadu_ps(y + i + 24));
            _mm256_stream_ps(out + i, r0);
            _mm256_stream_ps(out + i + 8, r1);
            _mm256_stream_ps(out + i + 16, r2);
            _mm256_stream_ps(out + i + 24, r3);
        }
        _mm_sfence();
    }
    for (; i + 32 <= n; i += 32) {
        __m256 r0 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i)), _mm256_loadu_ps(y + i));
        __m256 r1 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 8)), _mm256_loadu_ps(y + i + 8));
        __m256 r2 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 16)), _mm256_loadu_ps(y + i + 16));
        __m256 r3 = _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i + 24)), _mm256_loadu_ps(y + i + 24));
        _mm256_storeu_ps(out + i, r0);
        _mm256_storeu_ps(out + i + 8, r1);
        _mm256_storeu_ps(out + i + 16, r2);
        _mm256_storeu_ps(out + i + 24, r3);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(x + i)), _mm256_loadu_ps(y + i)));
    if (i < n) {
        __m256i m = tail_mask_avx2(n - i);
        __m256 r = _mm256_add_ps(_mm256_mul_ps(va, _mm256_maskload_ps(x + i, m)), _mm256_maskload_ps(y + i, m));
        _mm256_maskstore_ps(out + i, m, r);
    }
}

DYNOP_EXPORT IMGPROC_AVX512 void dynop_imgproc_saxpy_f32_avx512(float a, const float *x, const float *y, float *out,
                                                                int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    int64_t i = 0;
    if (n >= SAXPY_STREAM_MIN && ((uintptr_t)out & 3) == 0) {
        int64_t head = (int64_t)(((64 - ((uintptr_t)out & 63)) & 63) / 4);
        dynop_imgproc_saxpy_f32(a, x, y, out, head);
        for (i = head; i + 64 <= n; i += 64) {
            __m512 r0 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i)), _mm512_loadu_ps(y + i));
            __m512 r1 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 16)), _mm512_loadu_ps(y + i + 16));
            __m512 r2 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 32)), _mm512_loadu_ps(y + i + 32));
            __m512 r3 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 48)), _mm512_loadu_ps(y + i + 48));
            _mm512_stream_ps(out + i, r0);
            _mm512_stream_ps(out + i + 16, r1);
            _mm512_stream_ps(out + i + 32, r2);
            _mm512_stream_ps(out + i + 48, r3);
        }
        _mm_sfence();
    }
    for (; i + 64 <= n; i += 64) {
        __m512 r0 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i)), _mm512_loadu_ps(y + i));
        __m512 r1 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 16)), _mm512_loadu_ps(y + i + 16));
        __m512 r2 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 32)), _mm512_loadu_ps(y + i + 32));
        __m512 r3 = _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i + 48)), _mm512_loadu_ps(y + i + 48));
        _mm512_storeu_ps(out + i, r0);
        _mm512_storeu_ps(out + i + 16, r1);
        _mm512_storeu_ps(out + i + 32, r2);
        _mm512_storeu_ps(out + i + 48, r3);
    }
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_add_ps(_mm512_mul_ps(va, _mm512_loadu_ps(x + i)), _mm512_loadu_ps(y + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 r = _mm512_add_ps(_mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, x + i)), _mm512_maskz_loadu_ps(m, y + i));
        _mm512_mask_storeu_ps(out + i, m, r);
    }
}
#endif /* IMGPROC_X86 */

typedef void (*saxpy_fn)(float a, const float *x, const float *y, float *out, int64_t n);

typedef struct {
    float a;
} saxpy_inst;

static dynop_result saxpy_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    double a = 1.0;
    saxpy_inst *s;
    (void)user_data;
    arg_float(args, n, "a", &a);
    s = (saxpy_inst *)malloc(sizeof *s);
    if (s == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "imgproc.Saxpy: out of memory");
    s->a = (float)a;
    *instance = s;
    return DYNOP_OK;
}

static void saxpy_destroy(void *instance) { free(instance); }

static dynop_result saxpy_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                uint32_t nout) {
    char name[32];
    int32_t d;
    (void)instance;
    if (nin != 2 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Saxpy: takes 2 inputs (x, y) and 1 output");
    if (!is_f32(in[0].dtype))
        return failf(DYNOP_ERROR_UNSUPPORTED, "imgproc.Saxpy: unsupported dtype %s for x (want float32)",
                     dtype_name(in[0].dtype, name, sizeof name));
    if (!is_f32(in[1].dtype))
        return failf(DYNOP_ERROR_UNSUPPORTED, "imgproc.Saxpy: unsupported dtype %s for y (want float32)",
                     dtype_name(in[1].dtype, name, sizeof name));
    if (in[0].ndim < 0 || in[0].ndim > DYNOP_MAX_NDIM)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Saxpy: x has %d dimensions (at most %d)", (int)in[0].ndim,
                     DYNOP_MAX_NDIM);
    if (in[0].ndim != in[1].ndim) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Saxpy: x and y differ in shape");
    for (d = 0; d < in[0].ndim; d++)
        if (in[0].shape[d] != in[1].shape[d]) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Saxpy: x and y differ in shape");
    out->dtype = in[0].dtype;
    out->ndim = in[0].ndim;
    for (d = 0; d < in[0].ndim; d++) out->shape[d] = in[0].shape[d];
    return DYNOP_OK;
}

/* saxpy_run_with walks the tensors as rows of their last dimension, after
 * dropping dimensions of size 1 and merging dimensions that are contiguous
 * in all three; fn computes rows whose elements are contiguous. */
static dynop_result saxpy_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in, saxpy_fn fn) {
    const float a = ((const saxpy_inst *)instance)->a;
    const float *xp = (const float *)(const void *)((const char *)in[0].data + in[0].byte_offset);
    const float *yp = (const float *)(const void *)((const char *)in[1].data + in[1].byte_offset);
    float *op = (float *)(void *)((char *)out->data + out->byte_offset);
    int64_t shape[DYNOP_MAX_NDIM], sx[DYNOP_MAX_NDIM], sy[DYNOP_MAX_NDIM], so[DYNOP_MAX_NDIM], idx[DYNOP_MAX_NDIM];
    int nd = 0, d;
    int64_t n, r, rows, i;
    for (d = 0; d < in[0].ndim; d++) {
        int64_t s = in[0].shape[d];
        if (s <= 0) return DYNOP_OK;
        if (s == 1) continue;
        if (nd > 0 && sx[nd - 1] == in[0].strides[d] * s && sy[nd - 1] == in[1].strides[d] * s &&
            so[nd - 1] == out->strides[d] * s) {
            shape[nd - 1] *= s; /* merge with the dimension before */
            sx[nd - 1] = in[0].strides[d];
            sy[nd - 1] = in[1].strides[d];
            so[nd - 1] = out->strides[d];
            continue;
        }
        shape[nd] = s;
        sx[nd] = in[0].strides[d];
        sy[nd] = in[1].strides[d];
        so[nd] = out->strides[d];
        nd++;
    }
    if (nd == 0) {
        fn(a, xp, yp, op, 1);
        return DYNOP_OK;
    }
    n = shape[nd - 1];
    rows = 1;
    for (d = 0; d < nd - 1; d++) {
        rows *= shape[d];
        idx[d] = 0;
    }
    for (r = 0; r < rows; r++) {
        int64_t ox = 0, oy = 0, oo = 0;
        for (d = 0; d < nd - 1; d++) {
            ox += idx[d] * sx[d];
            oy += idx[d] * sy[d];
            oo += idx[d] * so[d];
        }
        if (sx[nd - 1] == 1 && sy[nd - 1] == 1 && so[nd - 1] == 1) {
            fn(a, xp + ox, yp + oy, op + oo, n);
        } else {
            const float *x = xp + ox, *y = yp + oy;
            float *o = op + oo;
            for (i = 0; i < n; i++) {
                float ax = a * x[i * sx[nd - 1]];
                o[i * so[nd - 1]] = ax + y[i * sy[nd - 1]];
            }
        }
        for (d = nd - 2; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return DYNOP_OK;
}

static dynop_result saxpy_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                     uint32_t nin) {
    (void)nout;
    (void)nin;
    return saxpy_run_with(instance, out, in, dynop_imgproc_saxpy_f32);
}

#if IMGPROC_X86
static dynop_result saxpy_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return saxpy_run_with(instance, out, in, dynop_imgproc_saxpy_f32_avx2);
}

static dynop_result saxpy_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                     uint32_t nin) {
    (void)nout;
    (void)nin;
    return saxpy_run_with(instance, out, in, dynop_imgproc_saxpy_f32_avx512);
}
#endif

/* ==== imgproc.GaussianBlur =============================================== */

#define BLUR_SHIFT 14 /* uint8 weights sum to 1 << BLUR_SHIFT */
#define BLUR_MAX_SIGMA 256.0
#define BLUR_MAX_RADIUS 1024

/* exp_neg is exp(x) for x <= 0 to about an ulp (0 below -700), so that the
 * library needs no libm and its weights are the same everywhere. */
static double exp_neg(double x) {
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double inv_ln2 = 1.44269504088896338700e+00;
    union {
        double d;
        uint64_t u;
    } scale;
    double r, p = 1.0;
    int64_t k;
    int i;
    if (x < -700.0) return 0.0;
    if (x > 0.0) x = 0.0;
    k = (int64_t)(x * inv_ln2 - 0.5); /* round to nearest (x <= 0) */
    r = (x - (double)k * ln2_hi) - (double)k * ln2_lo;
    for (i = 16; i >= 1; i--) p = 1.0 + p * r / (double)i;
    scale.u = (uint64_t)(k + 1023) << 52;
    return p * scale.d;
}

/* One kernel as the row functions see it: radius r, and the weights of
 * taps 0..r (tap i is applied to p(-i) and p(+i)). */
typedef struct {
    int r;
    const int32_t *k;  /* uint8: r+1 integer weights */
    const int32_t *kp; /* uint8: the weights of taps 2j and 2j+1 as the
                        * 16-bit halves of kp[j] (low, high), for madd */
    const float *kf;   /* float32: r+1 weights */
} blur_k;

typedef struct {
    int r8, rf;   /* radii of the uint8 and float32 kernels */
    int32_t *k8;  /* r8+1 */
    int32_t *kp8; /* r8/2+1 */
    float *kf;    /* rf+1 */
} blur_inst;

typedef struct {
    double frac;
    int i;
} blur_frac;

static int blur_frac_cmp(const void *a, const void *b) {
    const blur_frac *x = (const blur_frac *)a, *y = (const blur_frac *)b;
    if (x->frac != y->frac) return x->frac > y->frac ? -1 : 1;
    return x->i - y->i;
}

static void blur_destroy(void *instance) {
    blur_inst *b = (blur_inst *)instance;
    if (b == NULL) return;
    free(b->k8);
    free(b->kp8);
    free(b->kf);
    free(b);
}

/* blur_make makes the kernels of a Gaussian of sigma and radius (0 for
 * ceil(3 sigma)), checking both, for operator op (named in errors). */
static dynop_result blur_make(const char *op, double sigma, int64_t radius, blur_inst **out) {
    double sum, scale;
    int64_t deficit, i;
    int r;
    double *g = NULL;
    blur_frac *fr = NULL;
    blur_inst *b;
    if (sigma != sigma)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: sigma must be a positive finite number, got NaN", op);
    if (!(sigma > 0.0) || sigma > DBL_MAX)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: sigma must be a positive finite number, got %g", op, sigma);
    if (sigma > BLUR_MAX_SIGMA)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: sigma must be at most %g, got %g", op, BLUR_MAX_SIGMA, sigma);
    if (radius < 0 || radius > BLUR_MAX_RADIUS)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: radius must be between 0 and %d, got %lld", op,
                     BLUR_MAX_RADIUS, (long long)radius);
    if (radius == 0) {
        double t = 3.0 * sigma; /* ceil */
        radius = (int64_t)t;
        if ((double)radius < t) radius++;
    }
    r = (int)radius;
    b = (blur_inst *)calloc(1, sizeof *b);
    if (b != NULL) {
        b->k8 = (int32_t *)calloc((size_t)r + 2, sizeof *b->k8);
        b->kp8 = (int32_t *)calloc((size_t)r / 2 + 2, sizeof *b->kp8);
        b->kf = (float *)calloc((size_t)r + 1, sizeof *b->kf);
        g = (double *)malloc(((size_t)r + 1) * sizeof *g);
        fr = (blur_frac *)malloc(((size_t)r + 1) * sizeof *fr);
    }
    if (b == NULL || b->k8 == NULL || b->kp8 == NULL || b->kf == NULL || g == NULL || fr == NULL) {
        free(g);
        free(fr);
        blur_destroy(b);
        return failf(DYNOP_ERROR_NO_MEMORY, "%s: out of memory", op);
    }
    /* Gaussian, normalized. */
    g[0] = 1.0;
    sum = 1.0;
    for (i = 1; i <= r; i++) {
        g[i] = exp_neg(-((double)i * (double)i) / (2.0 * sigma * sigma));
        sum += 2.0 * g[i];
    }
    for (i = 0; i <= r; i++) b->kf[i] = (float)(g[i] / sum);
    b->rf = r;
    while (b->rf > 0 && b->kf[b->rf] == 0.0f) b->rf--;
    /* uint8: floors of the weights in units of 2^-14, then the deficit
     * handed out so that k_0 + 2 sum k_i == 1 << 14 exactly: one to the
     * centre if it is odd, then one to each pair (two units) in order of
     * largest fraction, ties to the inner tap. */
    scale = (double)(1 << BLUR_SHIFT) / sum;
    deficit = 1 << BLUR_SHIFT;
    for (i = 0; i <= r; i++) {
        double q = g[i] * scale;
        b->k8[i] = (int32_t)q;
        fr[i].frac = q - (double)b->k8[i];
        fr[i].i = (int)i;
        deficit -= (i == 0 ? 1 : 2) * (int64_t)b->k8[i];
    }
    if (deficit & 1) {
        b->k8[0]++;
        deficit--;
    }
    qsort(fr + 1, (size_t)r, sizeof *fr, blur_frac_cmp);
    for (i = 1; i <= r && deficit >= 2; i++, deficit -= 2) b->k8[fr[i].i]++;
    b->k8[0] += (int32_t)deficit; /* even and rare: more units than taps */
    b->r8 = r;
    while (b->r8 > 0 && b->k8[b->r8] == 0) b->r8--;
    for (i = 0; i <= b->r8; i += 2) /* k8[r8+1] is 0 */
        b->kp8[i / 2] = (int32_t)((uint32_t)(uint16_t)b->k8[i] | ((uint32_t)(uint16_t)b->k8[i + 1] << 16));
    free(g);
    free(fr);
    *out = b;
    return DYNOP_OK;
}

static dynop_result blur_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    double sigma;
    int64_t radius = 0;
    blur_inst *b = NULL;
    dynop_result rc;
    (void)user_data;
    if (!arg_float(args, n, "sigma", &sigma)) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.GaussianBlur: sigma is required");
    arg_int(args, n, "radius", &radius);
    rc = blur_make("imgproc.GaussianBlur", sigma, radius, &b);
    if (rc == DYNOP_OK) *instance = b;
    return rc;
}

/* Where a blur's scratch pieces lie: a widened input row (hp), the ring
 * of horizontal results, the ring's row pointers, a contiguous output
 * row, and a contiguous copy of an input row for a post step (src, only
 * if asked for); size is the total, 0 for an empty image. */
typedef struct {
    size_t size, hp, ring, rows, tmp, src;
} blur_plan;

/* blur_plan_of lays out the scratch of an H x W x C image, with a copy of
 * an input row if src_copy; 0 on overflow. */
static int blur_plan_of(const blur_inst *b, int u8, int64_t H, int64_t W, int64_t C, int src_copy, blur_plan *pl) {
    const size_t es = u8 ? 1 : 4, ws = u8 ? 2 : 4; /* element sizes: tensor, work */
    const int64_t r = u8 ? b->r8 : b->rf, n = W * C, nr = round_up64(n);
    memset(pl, 0, sizeof *pl);
    if (H <= 0 || W <= 0) return 1;
    return carve(&pl->size, nr + 2 * r * C + 64, ws, &pl->hp) &&
           carve(&pl->size, min64(H, 2 * r + 1) * nr, ws, &pl->ring) &&
           carve(&pl->size, 2 * r + 1, sizeof(void *), &pl->rows) && carve(&pl->size, nr, es, &pl->tmp) &&
           carve(&pl->size, src_copy ? n : 0, es, &pl->src);
}

static dynop_result blur_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                               uint32_t nout) {
    dynop_result rc = check_image("imgproc.GaussianBlur", in, nin, nout, 0);
    blur_plan pl;
    int32_t d;
    if (rc != DYNOP_OK) return rc;
    out->dtype = in->dtype;
    out->ndim = 3;
    for (d = 0; d < 3; d++) out->shape[d] = in->shape[d];
    if (!blur_plan_of((const blur_inst *)instance, in->dtype.code == DYNOP_DTYPE_UINT, in->shape[0], in->shape[1],
                      in->shape[2], 0, &pl))
        return no_memory("imgproc.GaussianBlur", SIZE_MAX);
    return set_scratch(&out[nout], pl.size, "imgproc.GaussianBlur");
}

/* Row functions. Rows are n = W*C elements; hp is a widened input row with
 * r*C replicated elements on either side (hp[-r*C .. n + r*C)), t a row of
 * the horizontal result, rows[0..2r] the horizontal results of rows
 * y-r..y+r (clamped). SIMD versions may read and write past n up to
 * round_up64(n) (the buffers have room, and zeros past the data). */
typedef struct {
    void (*widen8)(const uint8_t *s, int16_t *d, int64_t n);
    void (*h8)(const int16_t *hp, int16_t *t, int64_t n, int64_t c, const blur_k *k);
    void (*v8)(const int16_t *const *rows, uint8_t *d, int64_t n, const blur_k *k);
    void (*hf)(const float *hp, float *t, int64_t n, int64_t c, const blur_k *k);
    void (*vf)(const float *const *rows, float *d, int64_t n, const blur_k *k);
} blur_kernels;

static void blur_widen8_scalar(const uint8_t *s, int16_t *d, int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = s[e];
}

static void blur_h8_scalar(const int16_t *hp, int16_t *t, int64_t n, int64_t c, const blur_k *k) {
    int64_t e;
    int i;
    for (e = 0; e < n; e++) {
        int32_t acc = k->k[0] * hp[e];
        for (i = 1; i <= k->r; i++) acc += k->k[i] * (hp[e - i * c] + hp[e + i * c]);
        t[e] = (int16_t)((acc + (1 << 7)) >> 8);
    }
}

static void blur_v8_scalar(const int16_t *const *rows, uint8_t *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    int64_t e;
    int i;
    for (e = 0; e < n; e++) {
        int32_t acc = k->k[0] * rows[r][e];
        for (i = 1; i <= r; i++) acc += k->k[i] * (rows[r - i][e] + rows[r + i][e]);
        d[e] = (uint8_t)((acc + (1 << 19)) >> 20);
    }
}

static void blur_hf_scalar(const float *hp, float *t, int64_t n, int64_t c, const blur_k *k) {
    int64_t e;
    int i;
    for (e = 0; e < n; e++) {
        float acc = k->kf[0] * hp[e];
        for (i = 1; i <= k->r; i++) {
            float s = hp[e - i * c] + hp[e + i * c];
            float p = k->kf[i] * s;
            acc = acc + p;
        }
        t[e] = acc;
    }
}

static void blur_vf_scalar(const float *const *rows, float *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    int64_t e;
    int i;
    for (e = 0; e < n; e++) {
        float acc = k->kf[0] * rows[r][e];
        for (i = 1; i <= r; i++) {
            float s = rows[r - i][e] + rows[r + i][e];
            float p = k->kf[i] * s;
            acc = acc + p;
        }
        d[e] = acc;
    }
}

static const blur_kernels blur_scalar = {blur_widen8_scalar, blur_h8_scalar, blur_v8_scalar, blur_hf_scalar,
                                         blur_vf_scalar};

#if IMGPROC_X86
IMGPROC_AVX2 static void blur_widen8_avx2(const uint8_t *s, int16_t *d, int64_t n) {
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) ST256(d + e, _mm256_cvtepu8_epi16(LD128(s + e)));
    for (; e < n; e++) d[e] = s[e];
}

/* blur_madd_avx2 adds taps a and b, weighted by the halves of kp, to the
 * 32-bit sums lo (elements 0-3, 8-11) and hi (4-7, 12-15). */
#define BLUR_MADD_AVX2(lo, hi, a, b, kk)                                                                              \
    do {                                                                                                              \
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), kk));                                \
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), kk));                                \
    } while (0)

IMGPROC_AVX2 static void blur_h8_avx2(const int16_t *hp, int16_t *t, int64_t n, int64_t c, const blur_k *k) {
    const int r = k->r;
    const __m256i z = _mm256_setzero_si256(), rnd = _mm256_set1_epi32(1 << 7);
    int64_t e;
    for (e = 0; e < n; e += 32) {
        const int16_t *p = hp + e;
        __m256i l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z;
        int i;
        a0 = LD256(p);
        a1 = LD256(p + 16);
        if (r >= 1) {
            b0 = _mm256_add_epi16(LD256(p - c), LD256(p + c));
            b1 = _mm256_add_epi16(LD256(p + 16 - c), LD256(p + 16 + c));
        }
        kk = _mm256_set1_epi32(k->kp[0]);
        BLUR_MADD_AVX2(l0, h0, a0, b0, kk);
        BLUR_MADD_AVX2(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            const int16_t *m = p - i * c, *q = p + i * c;
            a0 = _mm256_add_epi16(LD256(m), LD256(q));
            a1 = _mm256_add_epi16(LD256(m + 16), LD256(q + 16));
            if (i < r) {
                b0 = _mm256_add_epi16(LD256(m - c), LD256(q + c));
                b1 = _mm256_add_epi16(LD256(m + 16 - c), LD256(q + 16 + c));
            } else {
                b0 = b1 = z;
            }
            kk = _mm256_set1_epi32(k->kp[i / 2]);
            BLUR_MADD_AVX2(l0, h0, a0, b0, kk);
            BLUR_MADD_AVX2(l1, h1, a1, b1, kk);
        }
        l0 = _mm256_srai_epi32(_mm256_add_epi32(l0, rnd), 8);
        h0 = _mm256_srai_epi32(_mm256_add_epi32(h0, rnd), 8);
        l1 = _mm256_srai_epi32(_mm256_add_epi32(l1, rnd), 8);
        h1 = _mm256_srai_epi32(_mm256_add_epi32(h1, rnd), 8);
        ST256(t + e, _mm256_packs_epi32(l0, h0));
        ST256(t + e + 16, _mm256_packs_epi32(l1, h1));
    }
}

IMGPROC_AVX2 static void blur_v8_avx2(const int16_t *const *rows, uint8_t *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    const int16_t *const *mid = rows + r;
    const __m256i z = _mm256_setzero_si256(), rnd = _mm256_set1_epi32(1 << 19);
    int64_t e;
    for (e = 0; e < n; e += 32) {
        __m256i l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z;
        int i;
        a0 = LD256(mid[0] + e);
        a1 = LD256(mid[0] + e + 16);
        if (r >= 1) {
            b0 = _mm256_add_epi16(LD256(mid[-1] + e), LD256(mid[1] + e));
            b1 = _mm256_add_epi16(LD256(mid[-1] + e + 16), LD256(mid[1] + e + 16));
        }
        kk = _mm256_set1_epi32(k->kp[0]);
        BLUR_MADD_AVX2(l0, h0, a0, b0, kk);
        BLUR_MADD_AVX2(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            a0 = _mm256_add_epi16(LD256(mid[-i] + e), LD256(mid[i] + e));
            a1 = _mm256_add_epi16(LD256(mid[-i] + e + 16), LD256(mid[i] + e + 16));
            if (i < r) {
                b0 = _mm256_add_epi16(LD256(mid[-i - 1] + e), LD256(mid[i + 1] + e));
                b1 = _mm256_add_epi16(LD256(mid[-i - 1] + e + 16), LD256(mid[i + 1] + e + 16));
            } else {
                b0 = b1 = z;
            }
            kk = _mm256_set1_epi32(k->kp[i / 2]);
            BLUR_MADD_AVX2(l0, h0, a0, b0, kk);
            BLUR_MADD_AVX2(l1, h1, a1, b1, kk);
        }
        l0 = _mm256_srai_epi32(_mm256_add_epi32(l0, rnd), 20);
        h0 = _mm256_srai_epi32(_mm256_add_epi32(h0, rnd), 20);
        l1 = _mm256_srai_epi32(_mm256_add_epi32(l1, rnd), 20);
        h1 = _mm256_srai_epi32(_mm256_add_epi32(h1, rnd), 20);
        if (e + 32 <= n) {
            __m256i v = _mm256_packus_epi16(_mm256_packs_epi32(l0, h0), _mm256_packs_epi32(l1, h1));
            ST256(d + e, _mm256_permute4x64_epi64(v, _MM_SHUFFLE(3, 1, 2, 0)));
        } else {
            store_bytes_avx2(d + e, pack16_avx2(_mm256_packs_epi32(l0, h0)), n - e);
            if (n - e > 16) store_bytes_avx2(d + e + 16, pack16_avx2(_mm256_packs_epi32(l1, h1)), n - e - 16);
        }
    }
}

IMGPROC_AVX2 static void blur_hf_avx2(const float *hp, float *t, int64_t n, int64_t c, const blur_k *k) {
    const int r = k->r;
    int64_t e;
    for (e = 0; e < n; e += 32) {
        const float *p = hp + e;
        __m256 k0 = _mm256_set1_ps(k->kf[0]);
        __m256 a0 = _mm256_mul_ps(k0, _mm256_loadu_ps(p)), a1 = _mm256_mul_ps(k0, _mm256_loadu_ps(p + 8));
        __m256 a2 = _mm256_mul_ps(k0, _mm256_loadu_ps(p + 16)), a3 = _mm256_mul_ps(k0, _mm256_loadu_ps(p + 24));
        int i;
        for (i = 1; i <= r; i++) {
            const float *m = p - i * c, *q = p + i * c;
            __m256 ki = _mm256_set1_ps(k->kf[i]);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(ki, _mm256_add_ps(_mm256_loadu_ps(m), _mm256_loadu_ps(q))));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(ki, _mm256_add_ps(_mm256_loadu_ps(m + 8), _mm256_loadu_ps(q + 8))));
            a2 = _mm256_add_ps(a2, _mm256_mul_ps(ki, _mm256_add_ps(_mm256_loadu_ps(m + 16), _mm256_loadu_ps(q + 16))));
            a3 = _mm256_add_ps(a3, _mm256_mul_ps(ki, _mm256_add_ps(_mm256_loadu_ps(m + 24), _mm256_loadu_ps(q + 24))));
        }
        _mm256_storeu_ps(t + e, a0);
        _mm256_storeu_ps(t + e + 8, a1);
        _mm256_storeu_ps(t + e + 16, a2);
        _mm256_storeu_ps(t + e + 24, a3);
    }
}

IMGPROC_AVX2 static void blur_vf_avx2(const float *const *rows, float *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    const float *const *mid = rows + r;
    int64_t e;
    for (e = 0; e < n; e += 32) {
        __m256 k0 = _mm256_set1_ps(k->kf[0]);
        __m256 a[4];
        int i, j;
        for (j = 0; j < 4; j++) a[j] = _mm256_mul_ps(k0, _mm256_loadu_ps(mid[0] + e + 8 * j));
        for (i = 1; i <= r; i++) {
            const float *m = mid[-i] + e, *q = mid[i] + e;
            __m256 ki = _mm256_set1_ps(k->kf[i]);
            for (j = 0; j < 4; j++)
                a[j] = _mm256_add_ps(
                    a[j], _mm256_mul_ps(ki, _mm256_add_ps(_mm256_loadu_ps(m + 8 * j), _mm256_loadu_ps(q + 8 * j))));
        }
        for (j = 0; j < 4; j++) {
            int64_t left = n - e - 8 * j;
            if (left >= 8) _mm256_storeu_ps(d + e + 8 * j, a[j]);
            else if (left > 0) _mm256_maskstore_ps(d + e + 8 * j, tail_mask_avx2(left), a[j]);
        }
    }
}

static const blur_kernels blur_avx2 = {blur_widen8_avx2, blur_h8_avx2, blur_v8_avx2, blur_hf_avx2, blur_vf_avx2};

IMGPROC_AVX512 static void blur_widen8_avx512(const uint8_t *s, int16_t *d, int64_t n) {
    int64_t e = 0;
    for (; e + 32 <= n; e += 32) ST512(d + e, _mm512_cvtepu8_epi16(LD256(s + e)));
    if (e < n) {
        __mmask32 m = (__mmask32)((1u << (n - e)) - 1);
        _mm512_mask_storeu_epi16(d + e, m, _mm512_cvtepu8_epi16(load32_avx512(m, s + e)));
    }
}

#define BLUR_MADD_AVX512(lo, hi, a, b, kk)                                                                            \
    do {                                                                                                              \
        lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), kk));                                \
        hi = _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), kk));                                \
    } while (0)

IMGPROC_AVX512 static void blur_h8_avx512(const int16_t *hp, int16_t *t, int64_t n, int64_t c, const blur_k *k) {
    const int r = k->r;
    const __m512i z = _mm512_setzero_si512(), rnd = _mm512_set1_epi32(1 << 7);
    int64_t e;
    for (e = 0; e < n; e += 64) {
        const int16_t *p = hp + e;
        __m512i l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z;
        int i;
        a0 = LD512(p);
        a1 = LD512(p + 32);
        if (r >= 1) {
            b0 = _mm512_add_epi16(LD512(p - c), LD512(p + c));
            b1 = _mm512_add_epi16(LD512(p + 32 - c), LD512(p + 32 + c));
        }
        kk = _mm512_set1_epi32(k->kp[0]);
        BLUR_MADD_AVX512(l0, h0, a0, b0, kk);
        BLUR_MADD_AVX512(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            const int16_t *m = p - i * c, *q = p + i * c;
            a0 = _mm512_add_epi16(LD512(m), LD512(q));
            a1 = _mm512_add_epi16(LD512(m + 32), LD512(q + 32));
            if (i < r) {
                b0 = _mm512_add_epi16(LD512(m - c), LD512(q + c));
                b1 = _mm512_add_epi16(LD512(m + 32 - c), LD512(q + 32 + c));
            } else {
                b0 = b1 = z;
            }
            kk = _mm512_set1_epi32(k->kp[i / 2]);
            BLUR_MADD_AVX512(l0, h0, a0, b0, kk);
            BLUR_MADD_AVX512(l1, h1, a1, b1, kk);
        }
        l0 = _mm512_srai_epi32(_mm512_add_epi32(l0, rnd), 8);
        h0 = _mm512_srai_epi32(_mm512_add_epi32(h0, rnd), 8);
        l1 = _mm512_srai_epi32(_mm512_add_epi32(l1, rnd), 8);
        h1 = _mm512_srai_epi32(_mm512_add_epi32(h1, rnd), 8);
        ST512(t + e, _mm512_packs_epi32(l0, h0));
        ST512(t + e + 32, _mm512_packs_epi32(l1, h1));
    }
}

IMGPROC_AVX512 static void blur_v8_avx512(const int16_t *const *rows, uint8_t *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    const int16_t *const *mid = rows + r;
    const __m512i z = _mm512_setzero_si512(), rnd = _mm512_set1_epi32(1 << 19);
    int64_t e;
    for (e = 0; e < n; e += 64) {
        __m512i l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z;
        int i;
        a0 = LD512(mid[0] + e);
        a1 = LD512(mid[0] + e + 32);
        if (r >= 1) {
            b0 = _mm512_add_epi16(LD512(mid[-1] + e), LD512(mid[1] + e));
            b1 = _mm512_add_epi16(LD512(mid[-1] + e + 32), LD512(mid[1] + e + 32));
        }
        kk = _mm512_set1_epi32(k->kp[0]);
        BLUR_MADD_AVX512(l0, h0, a0, b0, kk);
        BLUR_MADD_AVX512(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            a0 = _mm512_add_epi16(LD512(mid[-i] + e), LD512(mid[i] + e));
            a1 = _mm512_add_epi16(LD512(mid[-i] + e + 32), LD512(mid[i] + e + 32));
            if (i < r) {
                b0 = _mm512_add_epi16(LD512(mid[-i - 1] + e), LD512(mid[i + 1] + e));
                b1 = _mm512_add_epi16(LD512(mid[-i - 1] + e + 32), LD512(mid[i + 1] + e + 32));
            } else {
                b0 = b1 = z;
            }
            kk = _mm512_set1_epi32(k->kp[i / 2]);
            BLUR_MADD_AVX512(l0, h0, a0, b0, kk);
            BLUR_MADD_AVX512(l1, h1, a1, b1, kk);
        }
        l0 = _mm512_packs_epi32(_mm512_srai_epi32(_mm512_add_epi32(l0, rnd), 20),
                                _mm512_srai_epi32(_mm512_add_epi32(h0, rnd), 20));
        l1 = _mm512_packs_epi32(_mm512_srai_epi32(_mm512_add_epi32(l1, rnd), 20),
                                _mm512_srai_epi32(_mm512_add_epi32(h1, rnd), 20));
        if (e + 64 <= n) {
            _mm256_storeu_si256((__m256i *)(void *)(d + e), _mm512_cvtepi16_epi8(l0));
            _mm256_storeu_si256((__m256i *)(void *)(d + e + 32), _mm512_cvtepi16_epi8(l1));
        } else {
            int64_t left = n - e;
            __mmask32 m0 = left >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << left) - 1);
            _mm512_mask_cvtepi16_storeu_epi8(d + e, m0, l0);
            if (left > 32) _mm512_mask_cvtepi16_storeu_epi8(d + e + 32, (__mmask32)((1u << (left - 32)) - 1), l1);
        }
    }
}

IMGPROC_AVX512 static void blur_hf_avx512(const float *hp, float *t, int64_t n, int64_t c, const blur_k *k) {
    const int r = k->r;
    int64_t e;
    for (e = 0; e < n; e += 64) {
        const float *p = hp + e;
        __m512 k0 = _mm512_set1_ps(k->kf[0]);
        __m512 a[4];
        int i, j;
        for (j = 0; j < 4; j++) a[j] = _mm512_mul_ps(k0, _mm512_loadu_ps(p + 16 * j));
        for (i = 1; i <= r; i++) {
            const float *m = p - i * c, *q = p + i * c;
            __m512 ki = _mm512_set1_ps(k->kf[i]);
            for (j = 0; j < 4; j++)
                a[j] = _mm512_add_ps(
                    a[j], _mm512_mul_ps(ki, _mm512_add_ps(_mm512_loadu_ps(m + 16 * j), _mm512_loadu_ps(q + 16 * j))));
        }
        for (j = 0; j < 4; j++) _mm512_storeu_ps(t + e + 16 * j, a[j]);
    }
}

IMGPROC_AVX512 static void blur_vf_avx512(const float *const *rows, float *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    const float *const *mid = rows + r;
    int64_t e;
    for (e = 0; e < n; e += 64) {
        __m512 k0 = _mm512_set1_ps(k->kf[0]);
        __m512 a[4];
        int i, j;
        for (j = 0; j < 4; j++) a[j] = _mm512_mul_ps(k0, _mm512_loadu_ps(mid[0] + e + 16 * j));
        for (i = 1; i <= r; i++) {
            const float *m = mid[-i] + e, *q = mid[i] + e;
            __m512 ki = _mm512_set1_ps(k->kf[i]);
            for (j = 0; j < 4; j++)
                a[j] = _mm512_add_ps(
                    a[j], _mm512_mul_ps(ki, _mm512_add_ps(_mm512_loadu_ps(m + 16 * j), _mm512_loadu_ps(q + 16 * j))));
        }
        for (j = 0; j < 4; j++) {
            int64_t left = n - e - 16 * j;
            if (left >= 16) _mm512_storeu_ps(d + e + 16 * j, a[j]);
            else if (left > 0) _mm512_mask_storeu_ps(d + e + 16 * j, (__mmask16)((1u << left) - 1), a[j]);
        }
    }
}

static const blur_kernels blur_avx512 = {blur_widen8_avx512, blur_h8_avx512, blur_v8_avx512, blur_hf_avx512,
                                         blur_vf_avx512};
#endif /* IMGPROC_X86 */

/* blur_fill widens input row y into hp (element 0 of the row at hp[0]) and
 * replicates its edge pixels r times on either side. */
static void blur_fill(const view *vi, int64_t y, char *hp, int64_t r, int u8, const blur_kernels *kn) {
    const int64_t w = vi->w, c = vi->c, n = w * c;
    int64_t x, ch;
    if (u8) {
        const uint8_t *row = (const uint8_t *)vi->p + y * vi->sy;
        int16_t *d = (int16_t *)(void *)hp;
        if (rows_contig(vi)) kn->widen8(row, d, n);
        else
            for (x = 0; x < w; x++)
                for (ch = 0; ch < c; ch++) d[x * c + ch] = row[x * vi->sx + ch * vi->sc];
        for (x = 1; x <= r; x++)
            for (ch = 0; ch < c; ch++) {
                d[-x * c + ch] = d[ch];
                d[n + (x - 1) * c + ch] = d[n - c + ch];
            }
    } else {
        const float *row = (const float *)(const void *)vi->p + y * vi->sy;
        float *d = (float *)(void *)hp;
        if (rows_contig(vi)) memcpy(d, row, (size_t)n * sizeof *d);
        else
            for (x = 0; x < w; x++)
                for (ch = 0; ch < c; ch++) d[x * c + ch] = row[x * vi->sx + ch * vi->sc];
        for (x = 1; x <= r; x++)
            for (ch = 0; ch < c; ch++) {
                d[-x * c + ch] = d[ch];
                d[n + (x - 1) * c + ch] = d[n - c + ch];
            }
    }
}

/* store_row copies a contiguous row of w*c elements into row y of v. */
static void store_row(const view *v, int64_t y, const char *src, int u8) {
    int64_t x, ch;
    if (u8) {
        uint8_t *d = (uint8_t *)v->p + y * v->sy;
        for (x = 0; x < v->w; x++)
            for (ch = 0; ch < v->c; ch++) d[x * v->sx + ch * v->sc] = ((const uint8_t *)src)[x * v->c + ch];
    } else {
        float *d = (float *)(void *)v->p + y * v->sy;
        for (x = 0; x < v->w; x++)
            for (ch = 0; ch < v->c; ch++) d[x * v->sx + ch * v->sc] = ((const float *)(const void *)src)[x * v->c + ch];
    }
}

/* A step after the vertical pass (imgproc.UnsharpMask's combine, in
 * filter.c): it computes output row d of n elements from the input row p
 * and the blurred row b, both contiguous (d may be b), with parameters k. */
typedef struct {
    void (*u8)(const uint8_t *p, const uint8_t *b, uint8_t *d, int64_t n, const float *k);
    void (*f32)(const float *p, const float *b, float *d, int64_t n, const float *k);
    float k[2];
} blur_post;

/* blur_run_with blurs in into out with b's kernels and the row functions
 * kn, then applies post (if not NULL) to each blurred row; op names the
 * operator in errors. */
static dynop_result blur_run_with(const blur_inst *b, const char *op, const dynop_tensor *out, const dynop_tensor *in,
                                  const blur_kernels *kn, const blur_post *post) {
    const int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    const size_t es = u8 ? 1 : 4, ws = u8 ? 2 : 4; /* element sizes: tensor, work */
    view vi = view_of(in), vo = view_of(out);
    const int64_t H = vi.h, W = vi.w, C = vi.c, n = W * C;
    blur_k k;
    blur_plan pl;
    int64_t r, rc, nr, R, y, next, j;
    char *mem, *hp, *ring, *tmp;
    const int16_t **rows8;
    const float **rowsf;
    dynop_result err = DYNOP_OK;
    if (H <= 0 || W <= 0) return DYNOP_OK;
    k.r = u8 ? b->r8 : b->rf;
    k.k = b->k8;
    k.kp = b->kp8;
    k.kf = b->kf;
    r = k.r;
    rc = r * C;
    nr = round_up64(n);
    R = min64(H, 2 * r + 1);
    if (!blur_plan_of(b, u8, H, W, C, post != NULL && !rows_contig(&vi), &pl)) return no_memory(op, SIZE_MAX);
    mem = scratch_of(&out[1], pl.size, op, &err);
    if (mem == NULL) return err;
    hp = mem + pl.hp + (size_t)rc * ws; /* element 0 of the row */
    ring = mem + pl.ring;
    rows8 = (const int16_t **)(void *)(mem + pl.rows);
    rowsf = (const float **)(void *)(mem + pl.rows);
    tmp = mem + pl.tmp;
    /* Zeros past the replicated right edge, where SIMD rows read. */
    memset(hp + (size_t)(n + rc) * ws, 0, (size_t)(nr - n + 64) * ws);
    next = 0;
    for (y = 0; y < H; y++) {
        const int64_t last = min64(H - 1, y + r);
        int contig = rows_contig(&vo);
        char *d;
        /* Horizontal pass for the rows up to y + r, into the ring. */
        for (; next <= last; next++) {
            char *t = ring + (size_t)((next % R) * nr) * ws;
            blur_fill(&vi, next, hp, r, u8, kn);
            if (u8) kn->h8((const int16_t *)(const void *)hp, (int16_t *)(void *)t, n, C, &k);
            else kn->hf((const float *)(const void *)hp, (float *)(void *)t, n, C, &k);
        }
        /* Vertical pass over rows y-r..y+r (clamped) while they are hot. */
        for (j = 0; j <= 2 * r; j++) {
            int64_t yy = y - r + j;
            yy = yy < 0 ? 0 : yy >= H ? H - 1 : yy;
            char *t = ring + (size_t)((yy % R) * nr) * ws;
            if (u8) rows8[j] = (const int16_t *)(const void *)t;
            else rowsf[j] = (const float *)(const void *)t;
        }
        d = contig ? vo.p + y * vo.sy * (int64_t)es : tmp;
        if (post != NULL) {
            const char *p = rows_contig(&vi) ? vi.p + y * vi.sy * (int64_t)es : mem + pl.src;
            if (p != vi.p + y * vi.sy * (int64_t)es) {
                int64_t x, ch;
                const char *row = vi.p + y * vi.sy * (int64_t)es;
                for (x = 0; x < W; x++)
                    for (ch = 0; ch < C; ch++)
                        memcpy(mem + pl.src + (size_t)(x * C + ch) * es, row + (x * vi.sx + ch * vi.sc) * (int64_t)es, es);
            }
            if (u8) {
                kn->v8(rows8, (uint8_t *)tmp, n, &k);
                post->u8((const uint8_t *)p, (const uint8_t *)tmp, (uint8_t *)d, n, post->k);
            } else {
                kn->vf(rowsf, (float *)(void *)tmp, n, &k);
                post->f32((const float *)(const void *)p, (const float *)(const void *)tmp, (float *)(void *)d, n,
                          post->k);
            }
        } else if (u8) kn->v8(rows8, (uint8_t *)d, n, &k);
        else kn->vf(rowsf, (float *)(void *)d, n, &k);
        if (!contig) store_row(&vo, y, tmp, u8);
    }
    return DYNOP_OK;
}

static dynop_result blur_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return blur_run_with((const blur_inst *)instance, "imgproc.GaussianBlur", out, in, &blur_scalar, NULL);
}

#if IMGPROC_X86
static dynop_result blur_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                  uint32_t nin) {
    (void)nout;
    (void)nin;
    return blur_run_with((const blur_inst *)instance, "imgproc.GaussianBlur", out, in, &blur_avx2, NULL);
}

static dynop_result blur_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return blur_run_with((const blur_inst *)instance, "imgproc.GaussianBlur", out, in, &blur_avx512, NULL);
}
#endif

#if IMGPROC_WASM_SIMD
static void blur_widen8_simd128(const uint8_t *s, int16_t *d, int64_t n) {
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) {
        v128_t v = wasm_v128_load(s + e);
        wasm_v128_store(d + e, wasm_u16x8_extend_low_u8x16(v));
        wasm_v128_store(d + e + 8, wasm_u16x8_extend_high_u8x16(v));
    }
    for (; e < n; e++) d[e] = s[e];
}

/* BLUR_MADD_SIMD128 adds taps a and b, weighted by the halves of kk, to
 * the 32-bit sums lo (elements 0-3) and hi (4-7): AVX2's madd, 8 lanes. */
#define BLUR_MADD_SIMD128(lo, hi, a, b, kk)                                                                           \
    do {                                                                                                              \
        lo = wasm_i32x4_add(lo, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11), kk));       \
        hi = wasm_i32x4_add(hi, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15), kk));     \
    } while (0)

static void blur_h8_simd128(const int16_t *hp, int16_t *t, int64_t n, int64_t c, const blur_k *k) {
    const int r = k->r;
    const v128_t z = wasm_i32x4_splat(0), rnd = wasm_i32x4_splat(1 << 7);
    int64_t e;
    for (e = 0; e < n; e += 16) {
        const int16_t *p = hp + e;
        v128_t l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z;
        int i;
        a0 = wasm_v128_load(p);
        a1 = wasm_v128_load(p + 8);
        if (r >= 1) {
            b0 = wasm_i16x8_add(wasm_v128_load(p - c), wasm_v128_load(p + c));
            b1 = wasm_i16x8_add(wasm_v128_load(p + 8 - c), wasm_v128_load(p + 8 + c));
        }
        kk = wasm_i32x4_splat(k->kp[0]);
        BLUR_MADD_SIMD128(l0, h0, a0, b0, kk);
        BLUR_MADD_SIMD128(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            const int16_t *m = p - i * c, *q = p + i * c;
            a0 = wasm_i16x8_add(wasm_v128_load(m), wasm_v128_load(q));
            a1 = wasm_i16x8_add(wasm_v128_load(m + 8), wasm_v128_load(q + 8));
            if (i < r) {
                b0 = wasm_i16x8_add(wasm_v128_load(m - c), wasm_v128_load(q + c));
                b1 = wasm_i16x8_add(wasm_v128_load(m + 8 - c), wasm_v128_load(q + 8 + c));
            } else {
                b0 = b1 = z;
            }
            kk = wasm_i32x4_splat(k->kp[i / 2]);
            BLUR_MADD_SIMD128(l0, h0, a0, b0, kk);
            BLUR_MADD_SIMD128(l1, h1, a1, b1, kk);
        }
        l0 = wasm_i32x4_shr(wasm_i32x4_add(l0, rnd), 8);
        h0 = wasm_i32x4_shr(wasm_i32x4_add(h0, rnd), 8);
        l1 = wasm_i32x4_shr(wasm_i32x4_add(l1, rnd), 8);
        h1 = wasm_i32x4_shr(wasm_i32x4_add(h1, rnd), 8);
        wasm_v128_store(t + e, wasm_i16x8_narrow_i32x4(l0, h0));
        wasm_v128_store(t + e + 8, wasm_i16x8_narrow_i32x4(l1, h1));
    }
}

static void blur_v8_simd128(const int16_t *const *rows, uint8_t *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    const int16_t *const *mid = rows + r;
    const v128_t z = wasm_i32x4_splat(0), rnd = wasm_i32x4_splat(1 << 19);
    int64_t e;
    for (e = 0; e < n; e += 16) {
        v128_t l0 = z, h0 = z, l1 = z, h1 = z, kk, a0, a1, b0 = z, b1 = z, v;
        int i;
        a0 = wasm_v128_load(mid[0] + e);
        a1 = wasm_v128_load(mid[0] + e + 8);
        if (r >= 1) {
            b0 = wasm_i16x8_add(wasm_v128_load(mid[-1] + e), wasm_v128_load(mid[1] + e));
            b1 = wasm_i16x8_add(wasm_v128_load(mid[-1] + e + 8), wasm_v128_load(mid[1] + e + 8));
        }
        kk = wasm_i32x4_splat(k->kp[0]);
        BLUR_MADD_SIMD128(l0, h0, a0, b0, kk);
        BLUR_MADD_SIMD128(l1, h1, a1, b1, kk);
        for (i = 2; i <= r; i += 2) {
            a0 = wasm_i16x8_add(wasm_v128_load(mid[-i] + e), wasm_v128_load(mid[i] + e));
            a1 = wasm_i16x8_add(wasm_v128_load(mid[-i] + e + 8), wasm_v128_load(mid[i] + e + 8));
            if (i < r) {
                b0 = wasm_i16x8_add(wasm_v128_load(mid[-i - 1] + e), wasm_v128_load(mid[i + 1] + e));
                b1 = wasm_i16x8_add(wasm_v128_load(mid[-i - 1] + e + 8), wasm_v128_load(mid[i + 1] + e + 8));
            } else {
                b0 = b1 = z;
            }
            kk = wasm_i32x4_splat(k->kp[i / 2]);
            BLUR_MADD_SIMD128(l0, h0, a0, b0, kk);
            BLUR_MADD_SIMD128(l1, h1, a1, b1, kk);
        }
        l0 = wasm_i32x4_shr(wasm_i32x4_add(l0, rnd), 20);
        h0 = wasm_i32x4_shr(wasm_i32x4_add(h0, rnd), 20);
        l1 = wasm_i32x4_shr(wasm_i32x4_add(l1, rnd), 20);
        h1 = wasm_i32x4_shr(wasm_i32x4_add(h1, rnd), 20);
        v = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(l0, h0), wasm_i16x8_narrow_i32x4(l1, h1));
        if (e + 16 <= n) {
            wasm_v128_store(d + e, v);
        } else {
            uint8_t tail[16];
            wasm_v128_store(tail, v);
            memcpy(d + e, tail, (size_t)(n - e));
        }
    }
}

static void blur_hf_simd128(const float *hp, float *t, int64_t n, int64_t c, const blur_k *k) {
    int64_t e;
    int i;
    for (e = 0; e < n; e += 4) { /* t has room up to round_up64(n) */
        v128_t acc = wasm_f32x4_mul(wasm_f32x4_splat(k->kf[0]), wasm_v128_load(hp + e));
        for (i = 1; i <= k->r; i++) {
            v128_t s = wasm_f32x4_add(wasm_v128_load(hp + e - i * c), wasm_v128_load(hp + e + i * c));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(k->kf[i]), s));
        }
        wasm_v128_store(t + e, acc);
    }
}

static void blur_vf_simd128(const float *const *rows, float *d, int64_t n, const blur_k *k) {
    const int r = k->r;
    int64_t e;
    int i;
    for (e = 0; e + 4 <= n; e += 4) {
        v128_t acc = wasm_f32x4_mul(wasm_f32x4_splat(k->kf[0]), wasm_v128_load(rows[r] + e));
        for (i = 1; i <= r; i++) {
            v128_t s = wasm_f32x4_add(wasm_v128_load(rows[r - i] + e), wasm_v128_load(rows[r + i] + e));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(k->kf[i]), s));
        }
        wasm_v128_store(d + e, acc);
    }
    for (; e < n; e++) { /* the tail, as blur_vf_scalar computes it */
        float acc = k->kf[0] * rows[r][e];
        for (i = 1; i <= r; i++) {
            float s = rows[r - i][e] + rows[r + i][e];
            float p = k->kf[i] * s;
            acc = acc + p;
        }
        d[e] = acc;
    }
}

static const blur_kernels blur_simd128 = {blur_widen8_simd128, blur_h8_simd128, blur_v8_simd128, blur_hf_simd128,
                                          blur_vf_simd128};

static dynop_result blur_run_simd128(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                     uint32_t nin) {
    (void)nout;
    (void)nin;
    return blur_run_with((const blur_inst *)instance, "imgproc.GaussianBlur", out, in, &blur_simd128, NULL);
}
#endif

/* ==== imgproc.Sobel ====================================================== */

/* load_row returns row y of v as w*c contiguous elements: the row itself
 * if it is contiguous, else a copy in buf. */
static const char *load_row(const view *v, int64_t y, char *buf, int u8) {
    const char *row = v->p + y * v->sy * (int64_t)(u8 ? 1 : 4);
    int64_t x, ch;
    if (rows_contig(v)) return row;
    if (u8) {
        for (x = 0; x < v->w; x++)
            for (ch = 0; ch < v->c; ch++) ((uint8_t *)buf)[x * v->c + ch] = ((const uint8_t *)row)[x * v->sx + ch * v->sc];
    } else {
        for (x = 0; x < v->w; x++)
            for (ch = 0; ch < v->c; ch++)
                ((float *)(void *)buf)[x * v->c + ch] = ((const float *)(const void *)row)[x * v->sx + ch * v->sc];
    }
    return buf;
}

/* Where a Sobel's scratch pieces lie: the S and D rows, copies of three
 * strided input rows, a contiguous output row. */
typedef struct {
    size_t size, s, d, r[3], tmp;
} sobel_plan;

/* sobel_plan_of lays out the scratch of an H x W x C image whose rows are
 * contiguous or not; 0 on overflow. */
static int sobel_plan_of(int u8, int64_t H, int64_t W, int64_t C, int in_contig, sobel_plan *pl) {
    const size_t es = u8 ? 1 : 4, ws = u8 ? 2 : 4;
    const int64_t n = W * C, nr = round_up64(n), copy = in_contig ? 0 : n;
    memset(pl, 0, sizeof *pl);
    if (H <= 0 || W <= 0) return 1;
    return carve(&pl->size, nr + 2 * C + 64, ws, &pl->s) && carve(&pl->size, nr + 2 * C + 64, ws, &pl->d) &&
           carve(&pl->size, copy, es, &pl->r[0]) && carve(&pl->size, copy, es, &pl->r[1]) &&
           carve(&pl->size, copy, es, &pl->r[2]) && carve(&pl->size, nr, es, &pl->tmp);
}

static dynop_result sobel_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                uint32_t nout) {
    dynop_result rc = check_image("imgproc.Sobel", in, nin, nout, 0);
    sobel_plan pl;
    int32_t d;
    (void)instance;
    if (rc != DYNOP_OK) return rc;
    out->dtype = in->dtype;
    out->ndim = 3;
    for (d = 0; d < 3; d++) out->shape[d] = in->shape[d];
    if (!sobel_plan_of(in->dtype.code == DYNOP_DTYPE_UINT, in->shape[0], in->shape[1], in->shape[2],
                       tensor_rows_contig(in), &pl))
        return no_memory("imgproc.Sobel", SIZE_MAX);
    return set_scratch(&out[nout], pl.size, "imgproc.Sobel");
}

/* Row functions: sd computes S and D of n elements from the rows above
 * (a), at (b) and below (cc); g computes a row of magnitudes from S and D,
 * which hold c replicated elements on either side (S[-c .. n+c)) and zeros
 * after them up to round_up64(n) + c. */
typedef struct {
    void (*sd8)(const uint8_t *a, const uint8_t *b, const uint8_t *cc, int16_t *S, int16_t *D, int64_t n);
    void (*g8)(const int16_t *S, const int16_t *D, uint8_t *d, int64_t n, int64_t c);
    void (*sdf)(const float *a, const float *b, const float *cc, float *S, float *D, int64_t n);
    void (*gf)(const float *S, const float *D, float *d, int64_t n, int64_t c);
} sobel_kernels;

static void sobel_sd8_scalar(const uint8_t *a, const uint8_t *b, const uint8_t *cc, int16_t *S, int16_t *D,
                             int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) {
        S[e] = (int16_t)(a[e] + 2 * b[e] + cc[e]);
        D[e] = (int16_t)(cc[e] - a[e]);
    }
}

static inline uint8_t sobel_mag8(int32_t gx, int32_t gy) {
    int32_t v = (int32_t)(sqrtf((float)(gx * gx + gy * gy)) + 0.5f);
    return (uint8_t)(v > 255 ? 255 : v);
}

static void sobel_g8_scalar(const int16_t *S, const int16_t *D, uint8_t *d, int64_t n, int64_t c) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = sobel_mag8(S[e + c] - S[e - c], D[e - c] + 2 * D[e] + D[e + c]);
}

static void sobel_sdf_scalar(const float *a, const float *b, const float *cc, float *S, float *D, int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) {
        float b2 = 2.0f * b[e];
        float ab = a[e] + b2;
        S[e] = ab + cc[e];
        D[e] = cc[e] - a[e];
    }
}

static inline float sobel_magf(float gx, float gy) {
    float xx = gx * gx;
    float yy = gy * gy;
    return sqrtf(xx + yy);
}

static void sobel_gf_scalar(const float *S, const float *D, float *d, int64_t n, int64_t c) {
    int64_t e;
    for (e = 0; e < n; e++) {
        float gx = S[e + c] - S[e - c];
        float d2 = 2.0f * D[e];
        float gy = D[e - c] + d2;
        gy = gy + D[e + c];
        d[e] = sobel_magf(gx, gy);
    }
}

static const sobel_kernels sobel_scalar = {sobel_sd8_scalar, sobel_g8_scalar, sobel_sdf_scalar, sobel_gf_scalar};

#if IMGPROC_X86
IMGPROC_AVX2 static void sobel_sd8_avx2(const uint8_t *a, const uint8_t *b, const uint8_t *cc, int16_t *S, int16_t *D,
                                        int64_t n) {
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) {
        __m256i va = _mm256_cvtepu8_epi16(LD128(a + e)), vb = _mm256_cvtepu8_epi16(LD128(b + e));
        __m256i vc = _mm256_cvtepu8_epi16(LD128(cc + e));
        ST256(S + e, _mm256_add_epi16(_mm256_add_epi16(va, _mm256_slli_epi16(vb, 1)), vc));
        ST256(D + e, _mm256_sub_epi16(vc, va));
    }
    sobel_sd8_scalar(a + e, b + e, cc + e, S + e, D + e, n - e);
}

/* sobel_mag8_avx2: 8 lanes of gx*gx + gy*gy to rounded magnitudes. */
IMGPROC_AVX2 static inline __m256i sobel_mag8_avx2(__m256i ss) {
    __m256 m = _mm256_sqrt_ps(_mm256_cvtepi32_ps(ss));
    return _mm256_cvttps_epi32(_mm256_add_ps(m, _mm256_set1_ps(0.5f)));
}

IMGPROC_AVX2 static void sobel_g8_avx2(const int16_t *S, const int16_t *D, uint8_t *d, int64_t n, int64_t c) {
    int64_t e;
    for (e = 0; e < n; e += 16) {
        __m256i gx = _mm256_sub_epi16(LD256(S + e + c), LD256(S + e - c));
        __m256i gy = _mm256_add_epi16(_mm256_add_epi16(LD256(D + e - c), _mm256_slli_epi16(LD256(D + e), 1)),
                                      LD256(D + e + c));
        __m256i lo = _mm256_unpacklo_epi16(gx, gy), hi = _mm256_unpackhi_epi16(gx, gy);
        lo = sobel_mag8_avx2(_mm256_madd_epi16(lo, lo));
        hi = sobel_mag8_avx2(_mm256_madd_epi16(hi, hi));
        store_bytes_avx2(d + e, pack16_avx2(_mm256_packs_epi32(lo, hi)), n - e);
    }
}

IMGPROC_AVX2 static void sobel_sdf_avx2(const float *a, const float *b, const float *cc, float *S, float *D,
                                        int64_t n) {
    const __m256 two = _mm256_set1_ps(2.0f);
    int64_t e = 0;
    for (; e + 8 <= n; e += 8) {
        __m256 va = _mm256_loadu_ps(a + e), vb = _mm256_loadu_ps(b + e), vc = _mm256_loadu_ps(cc + e);
        _mm256_storeu_ps(S + e, _mm256_add_ps(_mm256_add_ps(va, _mm256_mul_ps(two, vb)), vc));
        _mm256_storeu_ps(D + e, _mm256_sub_ps(vc, va));
    }
    sobel_sdf_scalar(a + e, b + e, cc + e, S + e, D + e, n - e);
}

IMGPROC_AVX2 static void sobel_gf_avx2(const float *S, const float *D, float *d, int64_t n, int64_t c) {
    const __m256 two = _mm256_set1_ps(2.0f);
    int64_t e;
    for (e = 0; e < n; e += 8) {
        __m256 gx = _mm256_sub_ps(_mm256_loadu_ps(S + e + c), _mm256_loadu_ps(S + e - c));
        __m256 gy = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(D + e - c), _mm256_mul_ps(two, _mm256_loadu_ps(D + e))),
                                  _mm256_loadu_ps(D + e + c));
        __m256 m = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(gx, gx), _mm256_mul_ps(gy, gy)));
        if (e + 8 <= n) _mm256_storeu_ps(d + e, m);
        else _mm256_maskstore_ps(d + e, tail_mask_avx2(n - e), m);
    }
}

static const sobel_kernels sobel_avx2 = {sobel_sd8_avx2, sobel_g8_avx2, sobel_sdf_avx2, sobel_gf_avx2};

IMGPROC_AVX512 static void sobel_sd8_avx512(const uint8_t *a, const uint8_t *b, const uint8_t *cc, int16_t *S,
                                            int16_t *D, int64_t n) {
    int64_t e = 0;
    /* Zen 4 is slow at masked stores: full vectors, then the tail. */
    for (; e + 32 <= n; e += 32) {
        __m512i va = _mm512_cvtepu8_epi16(LD256(a + e)), vb = _mm512_cvtepu8_epi16(LD256(b + e));
        __m512i vc = _mm512_cvtepu8_epi16(LD256(cc + e));
        ST512(S + e, _mm512_add_epi16(_mm512_add_epi16(va, _mm512_slli_epi16(vb, 1)), vc));
        ST512(D + e, _mm512_sub_epi16(vc, va));
    }
    if (e < n) {
        __mmask32 m = (__mmask32)((1u << (n - e)) - 1);
        __m512i va = _mm512_cvtepu8_epi16(load32_avx512(m, a + e));
        __m512i vb = _mm512_cvtepu8_epi16(load32_avx512(m, b + e));
        __m512i vc = _mm512_cvtepu8_epi16(load32_avx512(m, cc + e));
        _mm512_mask_storeu_epi16(S + e, m, _mm512_add_epi16(_mm512_add_epi16(va, _mm512_slli_epi16(vb, 1)), vc));
        _mm512_mask_storeu_epi16(D + e, m, _mm512_sub_epi16(vc, va));
    }
}

IMGPROC_AVX512 static inline __m512i sobel_mag8_avx512(__m512i ss) {
    __m512 m = _mm512_sqrt_ps(_mm512_cvtepi32_ps(ss));
    return _mm512_cvttps_epi32(_mm512_add_ps(m, _mm512_set1_ps(0.5f)));
}

IMGPROC_AVX512 static void sobel_g8_avx512(const int16_t *S, const int16_t *D, uint8_t *d, int64_t n, int64_t c) {
    int64_t e;
    for (e = 0; e < n; e += 32) {
        __m512i gx = _mm512_sub_epi16(LD512(S + e + c), LD512(S + e - c));
        __m512i gy = _mm512_add_epi16(_mm512_add_epi16(LD512(D + e - c), _mm512_slli_epi16(LD512(D + e), 1)),
                                      LD512(D + e + c));
        __m512i lo = _mm512_unpacklo_epi16(gx, gy), hi = _mm512_unpackhi_epi16(gx, gy);
        __m512i v;
        lo = sobel_mag8_avx512(_mm512_madd_epi16(lo, lo));
        hi = sobel_mag8_avx512(_mm512_madd_epi16(hi, hi));
        v = _mm512_packs_epi32(lo, hi);
        if (e + 32 <= n) ST256(d + e, _mm512_cvtusepi16_epi8(v));
        else _mm512_mask_cvtusepi16_storeu_epi8(d + e, (__mmask32)((1u << (n - e)) - 1), v);
    }
}

IMGPROC_AVX512 static void sobel_sdf_avx512(const float *a, const float *b, const float *cc, float *S, float *D,
                                            int64_t n) {
    const __m512 two = _mm512_set1_ps(2.0f);
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) {
        __m512 va = _mm512_loadu_ps(a + e), vb = _mm512_loadu_ps(b + e), vc = _mm512_loadu_ps(cc + e);
        _mm512_storeu_ps(S + e, _mm512_add_ps(_mm512_add_ps(va, _mm512_mul_ps(two, vb)), vc));
        _mm512_storeu_ps(D + e, _mm512_sub_ps(vc, va));
    }
    if (e < n) {
        __mmask16 m = (__mmask16)((1u << (n - e)) - 1);
        __m512 va = _mm512_maskz_loadu_ps(m, a + e), vb = _mm512_maskz_loadu_ps(m, b + e);
        __m512 vc = _mm512_maskz_loadu_ps(m, cc + e);
        _mm512_mask_storeu_ps(S + e, m, _mm512_add_ps(_mm512_add_ps(va, _mm512_mul_ps(two, vb)), vc));
        _mm512_mask_storeu_ps(D + e, m, _mm512_sub_ps(vc, va));
    }
}

IMGPROC_AVX512 static void sobel_gf_avx512(const float *S, const float *D, float *d, int64_t n, int64_t c) {
    const __m512 two = _mm512_set1_ps(2.0f);
    int64_t e;
    for (e = 0; e < n; e += 16) {
        __m512 gx = _mm512_sub_ps(_mm512_loadu_ps(S + e + c), _mm512_loadu_ps(S + e - c));
        __m512 gy = _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(D + e - c), _mm512_mul_ps(two, _mm512_loadu_ps(D + e))),
                                  _mm512_loadu_ps(D + e + c));
        __m512 m = _mm512_sqrt_ps(_mm512_add_ps(_mm512_mul_ps(gx, gx), _mm512_mul_ps(gy, gy)));
        if (e + 16 <= n) _mm512_storeu_ps(d + e, m);
        else _mm512_mask_storeu_ps(d + e, (__mmask16)((1u << (n - e)) - 1), m);
    }
}

static const sobel_kernels sobel_avx512 = {sobel_sd8_avx512, sobel_g8_avx512, sobel_sdf_avx512, sobel_gf_avx512};
#endif /* IMGPROC_X86 */

static dynop_result sobel_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                   const sobel_kernels *kn) {
    const int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    const size_t es = u8 ? 1 : 4, ws = u8 ? 2 : 4;
    view vi = view_of(in), vo = view_of(out);
    const int64_t H = vi.h, W = vi.w, C = vi.c, n = W * C;
    int64_t nr, y, ch;
    sobel_plan pl;
    char *mem, *S, *D, *tmp;
    dynop_result err = DYNOP_OK;
    (void)instance;
    if (H <= 0 || W <= 0) return DYNOP_OK;
    nr = round_up64(n);
    if (!sobel_plan_of(u8, H, W, C, rows_contig(&vi), &pl)) return no_memory("imgproc.Sobel", SIZE_MAX);
    mem = scratch_of(&out[1], pl.size, "imgproc.Sobel", &err);
    if (mem == NULL) return err;
    memset(mem + pl.s, 0, (size_t)(nr + 2 * C + 64) * ws);
    memset(mem + pl.d, 0, (size_t)(nr + 2 * C + 64) * ws);
    S = mem + pl.s + (size_t)C * ws; /* element 0 */
    D = mem + pl.d + (size_t)C * ws;
    tmp = mem + pl.tmp;
    for (y = 0; y < H; y++) {
        const char *a = load_row(&vi, y > 0 ? y - 1 : 0, mem + pl.r[0], u8);
        const char *b = load_row(&vi, y, mem + pl.r[1], u8);
        const char *cc = load_row(&vi, y < H - 1 ? y + 1 : H - 1, mem + pl.r[2], u8);
        int contig = rows_contig(&vo);
        char *d = contig ? vo.p + y * vo.sy * (int64_t)es : tmp;
        if (u8) {
            int16_t *s16 = (int16_t *)(void *)S, *d16 = (int16_t *)(void *)D;
            kn->sd8((const uint8_t *)a, (const uint8_t *)b, (const uint8_t *)cc, s16, d16, n);
            for (ch = 0; ch < C; ch++) {
                s16[-C + ch] = s16[ch];
                d16[-C + ch] = d16[ch];
                s16[n + ch] = s16[n - C + ch];
                d16[n + ch] = d16[n - C + ch];
            }
            kn->g8(s16, d16, (uint8_t *)d, n, C);
        } else {
            float *sf = (float *)(void *)S, *df = (float *)(void *)D;
            kn->sdf((const float *)(const void *)a, (const float *)(const void *)b, (const float *)(const void *)cc,
                    sf, df, n);
            for (ch = 0; ch < C; ch++) {
                sf[-C + ch] = sf[ch];
                df[-C + ch] = df[ch];
                sf[n + ch] = sf[n - C + ch];
                df[n + ch] = df[n - C + ch];
            }
            kn->gf(sf, df, (float *)(void *)d, n, C);
        }
        if (!contig) store_row(&vo, y, tmp, u8);
    }
    return DYNOP_OK;
}

static dynop_result sobel_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                     uint32_t nin) {
    (void)nout;
    (void)nin;
    return sobel_run_with(instance, out, in, &sobel_scalar);
}

#if IMGPROC_X86
static dynop_result sobel_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return sobel_run_with(instance, out, in, &sobel_avx2);
}

static dynop_result sobel_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                     uint32_t nin) {
    (void)nout;
    (void)nin;
    return sobel_run_with(instance, out, in, &sobel_avx512);
}
#endif

/* ==== imgproc.Resize ===================================================== */

#define RESIZE_MAX ((int64_t)1 << 20)
#define RESIZE_MAX_SCALE 64.0
#define RESIZE_MAX_SCRATCH ((size_t)1 << 30) /* bytes: the n-tap path of extreme shrinks would need more */

/* Interpolations (the interp argument). */
enum { RESIZE_LINEAR, RESIZE_NEAREST, RESIZE_CUBIC, RESIZE_AREA };
static const char *const resize_interps[] = {"linear", "nearest", "cubic", "area"};

/* A resize's arguments: the output size rule (DALI's modes: width and/or
 * height, a missing one keeping the aspect ratio, or the shorter or
 * longer side, or a scale factor; max_size caps both sides), the
 * interpolation and antialias. */
typedef struct {
    int64_t width, height, shorter, longer, max_size;
    double scale;
    int interp, antialias;
} resize_inst;

/* resize_coord maps output index d of out to source pixels i0, i1 of in
 * and the fraction f of i1 (shared by every variant, in double). */
static void resize_coord(int64_t d, int64_t in, int64_t out, int64_t *i0, int64_t *i1, double *f) {
    double src = (((double)d + 0.5) * (double)in) / (double)out - 0.5;
    if (!(src > 0.0)) src = 0.0;
    if (src > (double)(in - 1)) src = (double)(in - 1);
    *i0 = (int64_t)src;
    *i1 = *i0 + 1 < in ? *i0 + 1 : in - 1;
    *f = src - (double)*i0;
}

/* resize_coord_area is OpenCV's INTER_AREA where the image grows (along
 * either axis), for both axes: i0 = floor(d*scale) with scale =
 * 1/(out/in), f = (float)((d+1) - (i0+1)*(out/in)), 0 if not positive,
 * else its fraction; from the last pixel on, i0 = in-1 and f = 0. */
static void resize_coord_area(int64_t d, int64_t in, int64_t out, int64_t *i0, int64_t *i1, double *f) {
    const double inv = (double)out / (double)in, scale = 1.0 / inv;
    int64_t sx = (int64_t)((double)d * scale); /* floor: not negative */
    float fx = (float)((double)(d + 1) - (double)(sx + 1) * inv);
    fx = fx <= 0.0f ? 0.0f : fx - (float)(int64_t)fx;
    if (sx >= in - 1) {
        sx = in - 1;
        fx = 0.0f;
    }
    *i0 = sx;
    *i1 = sx + 1 < in ? sx + 1 : in - 1;
    *f = fx;
}

typedef void (*resize_coord_fn)(int64_t d, int64_t in, int64_t out, int64_t *i0, int64_t *i1, double *f);

/* The horizontal tables of one run. */
typedef struct {
    int64_t in_w, out_w, c;
    const int32_t *x0;          /* out_w: i0 */
    const int32_t *wx;          /* out_w: uint8 weight of i1, lround(f*2048) */
    const int32_t *wp;          /* out_w*c (and zeros after): (wx << 16) | (2048 - wx) */
    const float *f0, *f1;       /* out_w: (float)(1 - f), (float)f */
    int64_t safe2, safe3, safe4; /* leading x with x0[x] + 2 (3, 4) <= in_w */
} resize_tab;

/* Row functions: h resamples a contiguous source row into h (out_w*c
 * elements; SIMD versions may write up to 4 elements past them), v blends
 * two such rows into n output elements. */
typedef struct {
    void (*h8)(const uint8_t *s, int32_t *h, const resize_tab *t);
    void (*v8)(const int32_t *h0, const int32_t *h1, int32_t wy, uint8_t *d, int64_t n);
    void (*hf)(const float *s, float *h, const resize_tab *t);
    void (*vf)(const float *h0, const float *h1, float w0, float w1, float *d, int64_t n);
} resize_kernels;

static inline void resize_h8_from(const uint8_t *s, int32_t *h, const resize_tab *t, int64_t x) {
    const int64_t c = t->c, last = t->in_w - 1;
    int64_t ch;
    for (; x < t->out_w; x++) {
        const int64_t i0 = t->x0[x], i1 = i0 < last ? i0 + 1 : last;
        const int32_t w1 = t->wx[x], w0 = 2048 - w1;
        for (ch = 0; ch < c; ch++) h[x * c + ch] = s[i0 * c + ch] * w0 + s[i1 * c + ch] * w1;
    }
}

static inline void resize_hf_from(const float *s, float *h, const resize_tab *t, int64_t x) {
    const int64_t c = t->c, last = t->in_w - 1;
    int64_t ch;
    for (; x < t->out_w; x++) {
        const int64_t i0 = t->x0[x], i1 = i0 < last ? i0 + 1 : last;
        const float w0 = t->f0[x], w1 = t->f1[x];
        for (ch = 0; ch < c; ch++) {
            float a = s[i0 * c + ch] * w0;
            float b = s[i1 * c + ch] * w1;
            h[x * c + ch] = a + b;
        }
    }
}

static void resize_h8_scalar(const uint8_t *s, int32_t *h, const resize_tab *t) { resize_h8_from(s, h, t, 0); }

static void resize_hf_scalar(const float *s, float *h, const resize_tab *t) { resize_hf_from(s, h, t, 0); }

static void resize_v8_scalar(const int32_t *h0, const int32_t *h1, int32_t wy, uint8_t *d, int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = (uint8_t)((h0[e] * (2048 - wy) + h1[e] * wy + (1 << 21)) >> 22);
}

static void resize_vf_scalar(const float *h0, const float *h1, float w0, float w1, float *d, int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) {
        float a = h0[e] * w0;
        float b = h1[e] * w1;
        d[e] = a + b;
    }
}

static const resize_kernels resize_scalar = {resize_h8_scalar, resize_v8_scalar, resize_hf_scalar, resize_vf_scalar};

#if IMGPROC_WASM_SIMD
/* resize_*_simd128 are the AVX2 kernels below with wasm's v128: one pixel
 * per vector in h, 16 elements per iteration in v. */
static void resize_h8_simd128(const uint8_t *s, int32_t *h, const resize_tab *t) {
    int64_t x = 0;
    if (t->c == 4) {
        /* Its 8 bytes at i0 (p0 then p1) to the 16-bit pairs (p0, p1) of
         * each channel; an index of 16 or more swizzles in a zero. */
        const v128_t ctl = wasm_i8x16_const(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1);
        for (; x < t->safe2; x++) {
            v128_t q = wasm_v128_load64_zero(s + 4 * (int64_t)t->x0[x]);
            wasm_v128_store(h + 4 * x, wasm_i32x4_dot_i16x8(wasm_i8x16_swizzle(q, ctl), wasm_v128_load(t->wp + 4 * x)));
        }
    } else if (t->c == 3) {
        const v128_t ctl = wasm_i8x16_const(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
        for (; x < t->safe3; x++) {
            v128_t q = wasm_v128_load64_zero(s + 3 * (int64_t)t->x0[x]);
            wasm_v128_store(h + 3 * x, wasm_i32x4_dot_i16x8(wasm_i8x16_swizzle(q, ctl), wasm_v128_load(t->wp + 3 * x)));
        }
    }
    resize_h8_from(s, h, t, x);
}

static void resize_v8_simd128(const int32_t *h0, const int32_t *h1, int32_t wy, uint8_t *d, int64_t n) {
    const v128_t w = wasm_i32x4_splat(wy), rnd = wasm_i32x4_splat(1 << 21);
    int64_t e;
    for (e = 0; e < n; e += 16) {
        v128_t r[4], v;
        int j;
        for (j = 0; j < 4; j++) {
            v128_t a = wasm_v128_load(h0 + e + 4 * j), b = wasm_v128_load(h1 + e + 4 * j);
            v128_t sum = wasm_i32x4_add(wasm_i32x4_shl(a, 11), wasm_i32x4_mul(wasm_i32x4_sub(b, a), w));
            r[j] = wasm_i32x4_shr(wasm_i32x4_add(sum, rnd), 22);
        }
        v = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(r[0], r[1]), wasm_i16x8_narrow_i32x4(r[2], r[3]));
        if (e + 16 <= n) {
            wasm_v128_store(d + e, v);
        } else {
            uint8_t tail[16];
            wasm_v128_store(tail, v);
            memcpy(d + e, tail, (size_t)(n - e));
        }
    }
}

static void resize_hf_simd128(const float *s, float *h, const resize_tab *t) {
    int64_t x = 0;
    if (t->c == 4) {
        for (; x < t->safe2; x++) {
            const float *p = s + 4 * (int64_t)t->x0[x];
            v128_t a = wasm_f32x4_mul(wasm_v128_load(p), wasm_f32x4_splat(t->f0[x]));
            v128_t b = wasm_f32x4_mul(wasm_v128_load(p + 4), wasm_f32x4_splat(t->f1[x]));
            wasm_v128_store(h + 4 * x, wasm_f32x4_add(a, b));
        }
    } else if (t->c == 3) {
        for (; x < t->safe3; x++) {
            const float *p = s + 3 * (int64_t)t->x0[x];
            v128_t a = wasm_f32x4_mul(wasm_v128_load(p), wasm_f32x4_splat(t->f0[x]));
            v128_t b = wasm_f32x4_mul(wasm_v128_load(p + 3), wasm_f32x4_splat(t->f1[x]));
            wasm_v128_store(h + 3 * x, wasm_f32x4_add(a, b));
        }
    }
    resize_hf_from(s, h, t, x);
}

static void resize_vf_simd128(const float *h0, const float *h1, float w0, float w1, float *d, int64_t n) {
    const v128_t a = wasm_f32x4_splat(w0), b = wasm_f32x4_splat(w1);
    int64_t e = 0;
    for (; e + 4 <= n; e += 4)
        wasm_v128_store(d + e, wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(h0 + e), a),
                                              wasm_f32x4_mul(wasm_v128_load(h1 + e), b)));
    resize_vf_scalar(h0 + e, h1 + e, w0, w1, d + e, n - e);
}

static const resize_kernels resize_simd128 = {resize_h8_simd128, resize_v8_simd128, resize_hf_simd128,
                                              resize_vf_simd128};
#endif

#if IMGPROC_X86
/* The SIMD versions of v compute h0 (2048-wy) + h1 wy as the equal
 * (h0 << 11) + (h1 - h0) wy, one multiply fewer. */
IMGPROC_AVX2 static void resize_h8_avx2(const uint8_t *s, int32_t *h, const resize_tab *t) {
    int64_t x = 0;
    if (t->c == 4) {
        /* One pixel per 128-bit lane: its 8 bytes at i0 (p0 then p1) to
         * the 16-bit pairs (p0, p1) of each channel. */
        const __m256i ctl = _mm256_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1, 0, -1, 4, -1, 1, -1,
                                             5, -1, 2, -1, 6, -1, 3, -1, 7, -1);
        for (; x + 2 <= t->safe2; x += 2) {
            __m128i q0 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x]));
            __m128i q1 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x + 1]));
            __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(q0), q1, 1);
            ST256(h + 4 * x, _mm256_madd_epi16(_mm256_shuffle_epi8(v, ctl), LD256(t->wp + 4 * x)));
        }
    } else if (t->c == 3) {
        const __m128i ctl = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
        for (; x < t->safe3; x++) {
            __m128i q = _mm_loadl_epi64((const __m128i *)(const void *)(s + 3 * (int64_t)t->x0[x]));
            ST128(h + 3 * x, _mm_madd_epi16(_mm_shuffle_epi8(q, ctl), LD128(t->wp + 3 * x)));
        }
    } else {
        const __m256i ctl = _mm256_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1, 0, -1, 1, -1, 4,
                                             -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1);
        for (; x + 8 <= t->safe4; x += 8) {
            __m256i v = _mm256_i32gather_epi32((const int *)(const void *)s, LD256(t->x0 + x), 1);
            ST256(h + x, _mm256_madd_epi16(_mm256_shuffle_epi8(v, ctl), LD256(t->wp + x)));
        }
    }
    resize_h8_from(s, h, t, x);
}

IMGPROC_AVX2 static void resize_v8_avx2(const int32_t *h0, const int32_t *h1, int32_t wy, uint8_t *d, int64_t n) {
    const __m256i w = _mm256_set1_epi32(wy), rnd = _mm256_set1_epi32(1 << 21);
    int64_t e;
    for (e = 0; e < n; e += 32) {
        __m256i r[4], v;
        int j;
        for (j = 0; j < 4; j++) {
            __m256i a = LD256(h0 + e + 8 * j), b = LD256(h1 + e + 8 * j);
            __m256i s = _mm256_add_epi32(_mm256_slli_epi32(a, 11), _mm256_mullo_epi32(_mm256_sub_epi32(b, a), w));
            r[j] = _mm256_srai_epi32(_mm256_add_epi32(s, rnd), 22);
        }
        v = pack4x8_avx2(r[0], r[1], r[2], r[3]);
        if (e + 32 <= n) {
            ST256(d + e, v);
        } else {
            store_bytes_avx2(d + e, _mm256_castsi256_si128(v), n - e);
            if (n - e > 16) store_bytes_avx2(d + e + 16, _mm256_extracti128_si256(v, 1), n - e - 16);
        }
    }
}

IMGPROC_AVX2 static void resize_hf_avx2(const float *s, float *h, const resize_tab *t) {
    int64_t x = 0;
    if (t->c == 4) {
        for (; x < t->safe2; x++) {
            const float *p = s + 4 * (int64_t)t->x0[x];
            __m128 a = _mm_mul_ps(_mm_loadu_ps(p), _mm_set1_ps(t->f0[x]));
            __m128 b = _mm_mul_ps(_mm_loadu_ps(p + 4), _mm_set1_ps(t->f1[x]));
            _mm_storeu_ps(h + 4 * x, _mm_add_ps(a, b));
        }
    } else if (t->c == 3) {
        for (; x < t->safe3; x++) {
            const float *p = s + 3 * (int64_t)t->x0[x];
            __m128 a = _mm_mul_ps(_mm_loadu_ps(p), _mm_set1_ps(t->f0[x]));
            __m128 b = _mm_mul_ps(_mm_loadu_ps(p + 3), _mm_set1_ps(t->f1[x]));
            _mm_storeu_ps(h + 3 * x, _mm_add_ps(a, b));
        }
    } else {
        for (; x + 8 <= t->safe2; x += 8) {
            __m256i idx = LD256(t->x0 + x);
            __m256 a = _mm256_mul_ps(_mm256_i32gather_ps(s, idx, 4), _mm256_loadu_ps(t->f0 + x));
            __m256 b = _mm256_mul_ps(_mm256_i32gather_ps(s + 1, idx, 4), _mm256_loadu_ps(t->f1 + x));
            _mm256_storeu_ps(h + x, _mm256_add_ps(a, b));
        }
    }
    resize_hf_from(s, h, t, x);
}

IMGPROC_AVX2 static void resize_vf_avx2(const float *h0, const float *h1, float w0, float w1, float *d, int64_t n) {
    const __m256 a = _mm256_set1_ps(w0), b = _mm256_set1_ps(w1);
    int64_t e = 0;
    for (; e + 32 <= n; e += 32) {
        int j;
        for (j = 0; j < 32; j += 8)
            _mm256_storeu_ps(d + e + j, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(h0 + e + j), a),
                                                      _mm256_mul_ps(_mm256_loadu_ps(h1 + e + j), b)));
    }
    for (; e < n; e += 8) {
        __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(h0 + e), a), _mm256_mul_ps(_mm256_loadu_ps(h1 + e), b));
        if (e + 8 <= n) _mm256_storeu_ps(d + e, v);
        else _mm256_maskstore_ps(d + e, tail_mask_avx2(n - e), v);
    }
}

static const resize_kernels resize_avx2 = {resize_h8_avx2, resize_v8_avx2, resize_hf_avx2, resize_vf_avx2};

IMGPROC_AVX512 static void resize_h8_avx512(const uint8_t *s, int32_t *h, const resize_tab *t) {
    int64_t x = 0;
    if (t->c == 4) {
        /* One pixel per 128-bit lane: its 8 bytes widened to words
         * [R0 G0 B0 A0 R1 G1 B1 A1], then paired by channel. */
        const __m512i ctl =
            _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
        for (; x + 4 <= t->safe2; x += 4) {
            __m128i q0 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x]));
            __m128i q1 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x + 1]));
            __m128i q2 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x + 2]));
            __m128i q3 = _mm_loadl_epi64((const __m128i *)(const void *)(s + 4 * (int64_t)t->x0[x + 3]));
            __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi64(q0, q1)),
                                                _mm_unpacklo_epi64(q2, q3), 1);
            __m512i z = _mm512_shuffle_epi8(_mm512_cvtepu8_epi16(v), ctl);
            ST512(h + 4 * x, _mm512_madd_epi16(z, LD512(t->wp + 4 * x)));
        }
    } else if (t->c == 1) {
        const __m512i ctl =
            _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1));
        for (; x + 16 <= t->safe4; x += 16) {
            __m512i v = _mm512_i32gather_epi32(LD512(t->x0 + x), (const void *)s, 1);
            ST512(h + x, _mm512_madd_epi16(_mm512_shuffle_epi8(v, ctl), LD512(t->wp + x)));
        }
    } else {
        resize_h8_avx2(s, h, t);
        return;
    }
    resize_h8_from(s, h, t, x);
}

IMGPROC_AVX512 static inline __m512i resize_blend8_avx512(const int32_t *h0, const int32_t *h1, __m512i w,
                                                          __mmask16 m) {
    __m512i a = _mm512_maskz_loadu_epi32(m, h0), b = _mm512_maskz_loadu_epi32(m, h1);
    __m512i s = _mm512_add_epi32(_mm512_slli_epi32(a, 11), _mm512_mullo_epi32(_mm512_sub_epi32(b, a), w));
    return _mm512_srai_epi32(_mm512_add_epi32(s, _mm512_set1_epi32(1 << 21)), 22);
}

IMGPROC_AVX512 static void resize_v8_avx512(const int32_t *h0, const int32_t *h1, int32_t wy, uint8_t *d, int64_t n) {
    const __m512i w = _mm512_set1_epi32(wy);
    int64_t e = 0;
    for (; e + 64 <= n; e += 64) {
        ST128(d + e, _mm512_cvtepi32_epi8(resize_blend8_avx512(h0 + e, h1 + e, w, 0xFFFF)));
        ST128(d + e + 16, _mm512_cvtepi32_epi8(resize_blend8_avx512(h0 + e + 16, h1 + e + 16, w, 0xFFFF)));
        ST128(d + e + 32, _mm512_cvtepi32_epi8(resize_blend8_avx512(h0 + e + 32, h1 + e + 32, w, 0xFFFF)));
        ST128(d + e + 48, _mm512_cvtepi32_epi8(resize_blend8_avx512(h0 + e + 48, h1 + e + 48, w, 0xFFFF)));
    }
    for (; e + 16 <= n; e += 16) ST128(d + e, _mm512_cvtepi32_epi8(resize_blend8_avx512(h0 + e, h1 + e, w, 0xFFFF)));
    if (e < n) {
        __mmask16 m = (__mmask16)((1u << (n - e)) - 1);
        _mm512_mask_cvtepi32_storeu_epi8(d + e, m, resize_blend8_avx512(h0 + e, h1 + e, w, m));
    }
}

IMGPROC_AVX512 static void resize_vf_avx512(const float *h0, const float *h1, float w0, float w1, float *d,
                                            int64_t n) {
    const __m512 a = _mm512_set1_ps(w0), b = _mm512_set1_ps(w1);
    int64_t e = 0;
    for (; e + 64 <= n; e += 64) {
        int j;
        for (j = 0; j < 64; j += 16)
            _mm512_storeu_ps(d + e + j, _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(h0 + e + j), a),
                                                      _mm512_mul_ps(_mm512_loadu_ps(h1 + e + j), b)));
    }
    for (; e + 16 <= n; e += 16)
        _mm512_storeu_ps(d + e, _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(h0 + e), a),
                                              _mm512_mul_ps(_mm512_loadu_ps(h1 + e), b)));
    if (e < n) {
        __mmask16 m = (__mmask16)((1u << (n - e)) - 1);
        __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, h0 + e), a),
                                 _mm512_mul_ps(_mm512_maskz_loadu_ps(m, h1 + e), b));
        _mm512_mask_storeu_ps(d + e, m, v);
    }
}

static const resize_kernels resize_avx512 = {resize_h8_avx512, resize_v8_avx512, resize_hf_avx2, resize_vf_avx512};
#endif /* IMGPROC_X86 */

/* ---- the n-tap path: cubic, area when shrinking, antialiased ---------- */

/* The filter of one axis on the n-tap path. */
enum { GEN_LINEAR, GEN_CUBIC, GEN_AA_LINEAR, GEN_AA_CUBIC, GEN_AREA };

/* gen_taps is the number of taps of kind k resampling in to out pixels,
 * the same for every output index (unused ones weigh 0). */
static int64_t gen_taps(int k, int64_t in, int64_t out) {
    int64_t n;
    if (k == GEN_LINEAR) return 2;
    if (k == GEN_CUBIC) return 4;
    if (k == GEN_AREA) n = (in + out - 1) / out + 1;
    else {
        double support = (k == GEN_AA_CUBIC ? 2.0 : 1.0) * (double)in / (double)out;
        int64_t c = (int64_t)support;
        if ((double)c < support) c++;
        n = 2 * c + 1;
    }
    return n < in ? n : in;
}

/* cubic_coeffs: OpenCV's INTER_CUBIC weights (Keys, a = -0.75) of the
 * taps at -1, 0, 1, 2 for the fraction x, in float. */
static void cubic_coeffs(float x, float *c) {
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

/* The antialiasing filters, of support 1 (triangle) and 2 (Keys, a =
 * -0.75), in double. */
static double aa_filter(int k, double t) {
    const double a = -0.75;
    if (t < 0) t = -t;
    if (k == GEN_AA_LINEAR) return t < 1.0 ? 1.0 - t : 0.0;
    if (t < 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

/* gen_weights writes the n weights of output index d of kind k (in to out
 * pixels) into w, for source pixels s0, s0+1, ... (indices outside
 * [0, in) replicate the edge), and returns s0. Windows that end past the
 * image move left, their weights right, while the image is wide enough. */
static int64_t gen_weights(int k, int64_t in, int64_t out, int64_t n, int64_t d, float *w) {
    int64_t s0, count = 0, i;
    for (i = 0; i < n; i++) w[i] = 0.0f;
    if (k == GEN_LINEAR) {
        int64_t i0, i1;
        double f;
        resize_coord(d, in, out, &i0, &i1, &f);
        s0 = i0;
        w[0] = (float)(1.0 - f);
        w[1] = (float)f;
        count = 2;
    } else if (k == GEN_CUBIC) {
        double src = (((double)d + 0.5) * (double)in) / (double)out - 0.5;
        int64_t i0 = (int64_t)src;
        if ((double)i0 > src) i0--; /* floor */
        cubic_coeffs((float)(src - (double)i0), w);
        return i0 - 1; /* replicated edges: nothing moves */
    } else if (k == GEN_AREA) {
        /* Overlaps of [i, i+1) with [d in/out, (d+1) in/out), times out. */
        const int64_t lo = d * in / out, hi = ((d + 1) * in + out - 1) / out;
        s0 = lo;
        for (i = lo; i < hi && count < n; i++, count++) {
            int64_t a = i * out > d * in ? i * out : d * in;
            int64_t b = (i + 1) * out < (d + 1) * in ? (i + 1) * out : (d + 1) * in;
            w[count] = (float)((double)(b - a) / (double)in);
        }
    } else {
        /* PIL's: the filter widened by s = in/out around the centre
         * (d + 0.5) s, its window cut to the image, normalized. */
        const double s = (double)in / (double)out, support = (k == GEN_AA_CUBIC ? 2.0 : 1.0) * s;
        const double c = ((double)d + 0.5) * s;
        double sum = 0.0;
        int64_t xmin = (int64_t)(c - support + 0.5), xmax = (int64_t)(c + support + 0.5);
        if (c - support + 0.5 < 0.0) xmin = 0;
        if (xmax > in) xmax = in;
        if (xmax - xmin > n) xmax = xmin + n;
        s0 = xmin;
        for (i = xmin; i < xmax; i++) sum += aa_filter(k, ((double)i + 0.5 - c) / s);
        for (i = xmin; i < xmax; i++, count++) w[count] = (float)(aa_filter(k, ((double)i + 0.5 - c) / s) / sum);
    }
    if (s0 + n > in && in >= n) {
        const int64_t shift = s0 + n - in;
        for (i = n - 1; i >= shift; i--) w[i] = w[i - shift];
        for (; i >= 0; i--) w[i] = 0.0f;
        s0 -= shift;
    }
    return s0;
}

/* The horizontal table of the n-tap path: output element e = d*c + ch
 * (of ne) sums, for taps j = 0..n-1 in order, w[j*es + e] times the
 * padded source row's element idx[e] + j*c; es is ne rounded up to 32,
 * and the elements from ne to es read element 0 with weight 0. */
typedef struct {
    int64_t ne, es, c, n;
    const int32_t *idx;
    const float *w;
} gen_tab;

/* Row functions of the n-tap path: widen8 converts n uint8 to float; h
 * resamples a padded float row into es elements; vf and v8 sum the n
 * rows[j] weighted by w[j] into ne float32 or uint8 elements (uint8:
 * clamped to [0, 255], then (int)(v + 0.5f)). */
typedef struct {
    void (*widen8)(const uint8_t *s, float *d, int64_t n);
    void (*h)(const float *p, float *h, const gen_tab *t);
    void (*vf)(const float *const *rows, const float *w, int64_t n, float *d, int64_t ne);
    void (*v8)(const float *const *rows, const float *w, int64_t n, uint8_t *d, int64_t ne);
} gen_kernels;

static void gen_widen8_scalar(const uint8_t *s, float *d, int64_t n) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = (float)s[e];
}

static void gen_h_scalar(const float *p, float *h, const gen_tab *t) {
    int64_t e, j;
    for (e = 0; e < t->ne; e++) {
        const float *q = p + t->idx[e];
        float acc = q[0] * t->w[e];
        for (j = 1; j < t->n; j++) {
            float m = q[j * t->c] * t->w[j * t->es + e];
            acc = acc + m;
        }
        h[e] = acc;
    }
}

static inline float gen_sum(const float *const *rows, const float *w, int64_t n, int64_t e) {
    float acc = rows[0][e] * w[0];
    int64_t j;
    for (j = 1; j < n; j++) {
        float m = rows[j][e] * w[j];
        acc = acc + m;
    }
    return acc;
}

static inline uint8_t gen_u8(float v) {
    v = v > 0.0f ? v : 0.0f;
    v = v < 255.0f ? v : 255.0f;
    return (uint8_t)(int)(v + 0.5f);
}

static void gen_vf_scalar(const float *const *rows, const float *w, int64_t n, float *d, int64_t ne) {
    int64_t e;
    for (e = 0; e < ne; e++) d[e] = gen_sum(rows, w, n, e);
}

static void gen_v8_scalar(const float *const *rows, const float *w, int64_t n, uint8_t *d, int64_t ne) {
    int64_t e;
    for (e = 0; e < ne; e++) d[e] = gen_u8(gen_sum(rows, w, n, e));
}

static const gen_kernels gen_scalar = {gen_widen8_scalar, gen_h_scalar, gen_vf_scalar, gen_v8_scalar};

#if IMGPROC_X86
IMGPROC_AVX2 static void gen_widen8_avx2(const uint8_t *s, float *d, int64_t n) {
    int64_t e = 0;
    for (; e + 8 <= n; e += 8)
        _mm256_storeu_ps(d + e, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(s + e)))));
    for (; e < n; e++) d[e] = (float)s[e];
}

IMGPROC_AVX2 static void gen_h_avx2(const float *p, float *h, const gen_tab *t) {
    const __m256i step = _mm256_set1_epi32((int)t->c);
    int64_t e, j;
    for (e = 0; e < t->ne; e += 16) {
        __m256i i0 = LD256(t->idx + e), i1 = LD256(t->idx + e + 8);
        __m256 a0 = _mm256_mul_ps(_mm256_i32gather_ps(p, i0, 4), _mm256_loadu_ps(t->w + e));
        __m256 a1 = _mm256_mul_ps(_mm256_i32gather_ps(p, i1, 4), _mm256_loadu_ps(t->w + e + 8));
        for (j = 1; j < t->n; j++) {
            const float *w = t->w + j * t->es + e;
            i0 = _mm256_add_epi32(i0, step);
            i1 = _mm256_add_epi32(i1, step);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_i32gather_ps(p, i0, 4), _mm256_loadu_ps(w)));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_i32gather_ps(p, i1, 4), _mm256_loadu_ps(w + 8)));
        }
        _mm256_storeu_ps(h + e, a0);
        _mm256_storeu_ps(h + e + 8, a1);
    }
}

/* gen_sum4_avx2 sums 32 elements from e on. */
IMGPROC_AVX2 static inline void gen_sum4_avx2(const float *const *rows, const float *w, int64_t n, int64_t e, __m256 *a) {
    __m256 w0 = _mm256_set1_ps(w[0]);
    int64_t j;
    int q;
    for (q = 0; q < 4; q++) a[q] = _mm256_mul_ps(_mm256_loadu_ps(rows[0] + e + 8 * q), w0);
    for (j = 1; j < n; j++) {
        __m256 wj = _mm256_set1_ps(w[j]);
        for (q = 0; q < 4; q++) a[q] = _mm256_add_ps(a[q], _mm256_mul_ps(_mm256_loadu_ps(rows[j] + e + 8 * q), wj));
    }
}

IMGPROC_AVX2 static void gen_vf_avx2(const float *const *rows, const float *w, int64_t n, float *d, int64_t ne) {
    int64_t e;
    for (e = 0; e < ne; e += 32) {
        __m256 a[4];
        int q;
        gen_sum4_avx2(rows, w, n, e, a);
        for (q = 0; q < 4; q++) {
            int64_t left = ne - e - 8 * q;
            if (left >= 8) _mm256_storeu_ps(d + e + 8 * q, a[q]);
            else if (left > 0) _mm256_maskstore_ps(d + e + 8 * q, tail_mask_avx2(left), a[q]);
        }
    }
}

IMGPROC_AVX2 static void gen_v8_avx2(const float *const *rows, const float *w, int64_t n, uint8_t *d, int64_t ne) {
    const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);
    int64_t e;
    for (e = 0; e < ne; e += 32) {
        __m256 a[4];
        __m256i r[4], v;
        int q;
        gen_sum4_avx2(rows, w, n, e, a);
        for (q = 0; q < 4; q++) r[q] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_min_ps(_mm256_max_ps(a[q], lo), hi), half));
        v = pack4x8_avx2(r[0], r[1], r[2], r[3]);
        if (e + 32 <= ne) {
            ST256(d + e, v);
        } else {
            store_bytes_avx2(d + e, _mm256_castsi256_si128(v), ne - e);
            if (ne - e > 16) store_bytes_avx2(d + e + 16, _mm256_extracti128_si256(v, 1), ne - e - 16);
        }
    }
}

static const gen_kernels gen_avx2 = {gen_widen8_avx2, gen_h_avx2, gen_vf_avx2, gen_v8_avx2};

IMGPROC_AVX512 static void gen_widen8_avx512(const uint8_t *s, float *d, int64_t n) {
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) _mm512_storeu_ps(d + e, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(LD128(s + e))));
    for (; e < n; e++) d[e] = (float)s[e];
}

IMGPROC_AVX512 static void gen_h_avx512(const float *p, float *h, const gen_tab *t) {
    const __m512i step = _mm512_set1_epi32((int)t->c);
    int64_t e, j;
    for (e = 0; e < t->ne; e += 16) {
        __m512i i0 = LD512(t->idx + e);
        __m512 a0 = _mm512_mul_ps(_mm512_i32gather_ps(i0, p, 4), _mm512_loadu_ps(t->w + e));
        for (j = 1; j < t->n; j++) {
            i0 = _mm512_add_epi32(i0, step);
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_i32gather_ps(i0, p, 4), _mm512_loadu_ps(t->w + j * t->es + e)));
        }
        _mm512_storeu_ps(h + e, a0);
    }
}

IMGPROC_AVX512 static inline void gen_sum4_avx512(const float *const *rows, const float *w, int64_t n, int64_t e,
                                                  __m512 *a) {
    __m512 w0 = _mm512_set1_ps(w[0]);
    int64_t j;
    int q;
    for (q = 0; q < 4; q++) a[q] = _mm512_mul_ps(_mm512_loadu_ps(rows[0] + e + 16 * q), w0);
    for (j = 1; j < n; j++) {
        __m512 wj = _mm512_set1_ps(w[j]);
        for (q = 0; q < 4; q++) a[q] = _mm512_add_ps(a[q], _mm512_mul_ps(_mm512_loadu_ps(rows[j] + e + 16 * q), wj));
    }
}

/* The rows hold es elements, a multiple of 16: whole vectors of them
 * are read, and the output written up to ne. */
IMGPROC_AVX512 static void gen_vf_avx512(const float *const *rows, const float *w, int64_t n, float *d, int64_t ne) {
    int64_t e;
    for (e = 0; e < ne; e += 64) {
        __m512 a[4];
        int q;
        if (e + 64 > ne) { /* the last vectors, one by one */
            for (; e < ne; e += 16) {
                __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(rows[0] + e), _mm512_set1_ps(w[0]));
                int64_t j, left = ne - e;
                for (j = 1; j < n; j++)
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(rows[j] + e), _mm512_set1_ps(w[j])));
                _mm512_mask_storeu_ps(d + e, left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1), acc);
            }
            return;
        }
        gen_sum4_avx512(rows, w, n, e, a);
        for (q = 0; q < 4; q++) _mm512_storeu_ps(d + e + 16 * q, a[q]);
    }
}

IMGPROC_AVX512 static inline __m512i gen_u8_avx512(__m512 v) {
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
    return _mm512_cvttps_epi32(_mm512_add_ps(v, _mm512_set1_ps(0.5f)));
}

IMGPROC_AVX512 static void gen_v8_avx512(const float *const *rows, const float *w, int64_t n, uint8_t *d, int64_t ne) {
    int64_t e;
    for (e = 0; e < ne; e += 64) {
        __m512 a[4];
        int q;
        if (e + 64 > ne) {
            for (; e < ne; e += 16) {
                __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(rows[0] + e), _mm512_set1_ps(w[0]));
                int64_t j, left = ne - e;
                for (j = 1; j < n; j++)
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(rows[j] + e), _mm512_set1_ps(w[j])));
                _mm512_mask_cvtepi32_storeu_epi8(d + e, left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1),
                                                 gen_u8_avx512(acc));
            }
            return;
        }
        gen_sum4_avx512(rows, w, n, e, a);
        for (q = 0; q < 4; q++) ST128(d + e + 16 * q, _mm512_cvtepi32_epi8(gen_u8_avx512(a[q])));
    }
}

static const gen_kernels gen_avx512 = {gen_widen8_avx512, gen_h_avx512, gen_vf_avx512, gen_v8_avx512};
#endif /* IMGPROC_X86 */

static dynop_result resize_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    resize_inst k = {0, 0, 0, 0, 0, 0.0, RESIZE_LINEAR, 0}, *r;
    int64_t *ints[] = {&k.width, &k.height, &k.shorter, &k.longer, &k.max_size};
    const char *names[] = {"width", "height", "resize_shorter", "resize_longer", "max_size"};
    const dynop_arg *a;
    int i, modes;
    (void)user_data;
    a = find_arg(args, n, "interp");
    if (a != NULL && a->type == DYNOP_ARG_STRING && *(const char *const *)a->values != NULL) {
        const char *name = *(const char *const *)a->values;
        for (i = 0; i < 4 && strcmp(name, resize_interps[i]) != 0; i++) {}
        if (i == 4)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                         "imgproc.Resize: interp must be nearest, linear, cubic or area, got \"%.40s\"", name);
        k.interp = i;
    }
    a = find_arg(args, n, "antialias");
    if (a != NULL && a->type == DYNOP_ARG_BOOL) k.antialias = *(const int32_t *)a->values != 0;
    if (k.antialias && (k.interp == RESIZE_NEAREST || k.interp == RESIZE_AREA))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "imgproc.Resize: antialias applies to linear and cubic, not %s (%s)", resize_interps[k.interp],
                     k.interp == RESIZE_AREA ? "area averages what it shrinks already" : "nearest picks pixels");
    for (i = 0; i < 5; i++) {
        arg_int(args, n, names[i], ints[i]);
        if (*ints[i] < 0 || *ints[i] > RESIZE_MAX)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Resize: %s must be between 0 and %lld, got %lld",
                         names[i], (long long)RESIZE_MAX, (long long)*ints[i]);
    }
    arg_float(args, n, "scale", &k.scale);
    if (!(k.scale >= 0.0 && k.scale <= RESIZE_MAX_SCALE))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Resize: scale must be between 0 and %g, got %g",
                     RESIZE_MAX_SCALE, k.scale);
    modes = (k.width > 0 || k.height > 0) + (k.shorter > 0) + (k.longer > 0) + (k.scale > 0.0);
    if (modes != 1)
        return fail(DYNOP_ERROR_INVALID_ARGUMENT,
                    modes == 0 ? "imgproc.Resize: give the output size: width and/or height, resize_shorter, "
                                 "resize_longer or scale"
                               : "imgproc.Resize: give one of width and/or height, resize_shorter, resize_longer "
                                 "and scale, not several");
    if (k.max_size > 0 && k.width > 0 && k.height > 0)
        return fail(DYNOP_ERROR_INVALID_ARGUMENT,
                    "imgproc.Resize: max_size with both width and height: the size is fixed already");
    r = (resize_inst *)malloc(sizeof *r);
    if (r == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "imgproc.Resize: out of memory");
    *r = k;
    *instance = r;
    return DYNOP_OK;
}

/* scaled returns round(v * num / den), half away from zero, at least 1. */
static int64_t scaled(int64_t v, double num, double den) {
    int64_t x = lround_pos((double)v * num / den);
    return x < 1 ? 1 : x;
}

/* resize_size computes the output height and width for an ih x iw input
 * (both at least 1) by r's rule; 0 if it is larger than RESIZE_MAX. */
static int resize_size(const resize_inst *r, int64_t ih, int64_t iw, int64_t *oh, int64_t *ow) {
    int64_t h = r->height, w = r->width, m;
    if (r->scale > 0.0) {
        h = scaled(ih, r->scale, 1.0);
        w = scaled(iw, r->scale, 1.0);
    } else if (r->shorter > 0 || r->longer > 0) {
        const int64_t side = r->shorter > 0 ? r->shorter : r->longer;
        const int by_height = r->shorter > 0 ? ih <= iw : ih >= iw;
        h = by_height ? side : scaled(ih, (double)side, (double)iw);
        w = by_height ? scaled(iw, (double)side, (double)ih) : side;
    } else if (h == 0) {
        h = scaled(ih, (double)w, (double)iw);
    } else if (w == 0) {
        w = scaled(iw, (double)h, (double)ih);
    }
    m = h > w ? h : w;
    if (r->max_size > 0 && m > r->max_size) { /* both sides, keeping the aspect ratio */
        if (h >= w) {
            w = scaled(w, (double)r->max_size, (double)h);
            h = r->max_size;
        } else {
            h = scaled(h, (double)r->max_size, (double)w);
            w = r->max_size;
        }
    }
    if (h > RESIZE_MAX || w > RESIZE_MAX) return 0;
    *oh = h;
    *ow = w;
    return 1;
}

static void resize_destroy(void *instance) { free(instance); }

/* Where a resize's scratch pieces lie: the column tables, two
 * horizontally resampled rows, copies of a strided source row and of an
 * output row. */
typedef struct {
    size_t size, x0, wx, wp, f0, f1, h0, h1, src, tmp;
} resize_plan;

/* resize_plan_of lays out the scratch of resizing iw x C rows to ow, the
 * rows of the input and output contiguous or not; 0 on overflow. */
static int resize_plan_of(int u8, int64_t iw, int64_t ow, int64_t C, int in_contig, int out_contig,
                          resize_plan *pl) {
    const size_t es = u8 ? 1 : 4;
    const int64_t n = ow * C, nr = round_up64(n) + 64;
    memset(pl, 0, sizeof *pl);
    if (ow <= 0 || iw <= 0) return 1;
    return carve(&pl->size, ow + 16, 4, &pl->x0) && carve(&pl->size, ow + 16, 4, &pl->wx) &&
           carve(&pl->size, n + 64, 4, &pl->wp) && carve(&pl->size, ow + 16, 4, &pl->f0) &&
           carve(&pl->size, ow + 16, 4, &pl->f1) && carve(&pl->size, nr, 4, &pl->h0) &&
           carve(&pl->size, nr, 4, &pl->h1) && carve(&pl->size, in_contig ? 0 : iw * C, es, &pl->src) &&
           carve(&pl->size, out_contig ? 0 : n, es, &pl->tmp);
}

/* How a run resamples: the bilinear kernels with linear coordinates or
 * OpenCV's INTER_AREA ones where the image grows, nearest, or the n-tap
 * path with a filter kind per axis. */
enum { PATH_LINEAR, PATH_AREA_UP, PATH_NEAREST, PATH_GEN };

static int resize_path(const resize_inst *r, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int *kx, int *ky) {
    const int sx = ow < iw, sy = oh < ih;
    *kx = *ky = GEN_LINEAR;
    switch (r->interp) {
    case RESIZE_NEAREST:
        return PATH_NEAREST;
    case RESIZE_AREA:
        if (ow > iw || oh > ih) return PATH_AREA_UP;
        *kx = *ky = GEN_AREA;
        return PATH_GEN;
    case RESIZE_CUBIC:
        *kx = r->antialias && sx ? GEN_AA_CUBIC : GEN_CUBIC;
        *ky = r->antialias && sy ? GEN_AA_CUBIC : GEN_CUBIC;
        return PATH_GEN;
    default:
        if (!r->antialias || (!sx && !sy)) return PATH_LINEAR;
        *kx = sx ? GEN_AA_LINEAR : GEN_LINEAR;
        *ky = sy ? GEN_AA_LINEAR : GEN_LINEAR;
        return PATH_GEN;
    }
}

/* The n-tap path's scratch: the horizontal table (idx, w), the weights of
 * a row (wy, also the table's while it is made), a padded source row of
 * floats (P pixels on either side), the ring of ny horizontally resampled
 * rows of es floats and their pointers, a contiguous output row. */
typedef struct {
    size_t size, idx, w, wy, pad, ring, rows, tmp;
    int64_t nx, ny, P, es;
} gen_plan;

static int gen_plan_of(int u8, int kx, int ky, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t C,
                       int out_contig, gen_plan *pl) {
    const int64_t ne = ow * C;
    memset(pl, 0, sizeof *pl);
    pl->nx = gen_taps(kx, iw, ow);
    pl->ny = gen_taps(ky, ih, oh);
    pl->P = pl->nx + 2;
    pl->es = (ne + 31) & ~(int64_t)31;
    /* The table's indices into the padded row are int32 (for gathers). */
    return (iw + 2 * pl->P) * C + 16 <= INT32_MAX && pl->nx <= (int64_t)(SIZE_MAX / 4) / pl->es &&
           carve(&pl->size, pl->es, 4, &pl->idx) && carve(&pl->size, pl->nx * pl->es, 4, &pl->w) &&
           carve(&pl->size, pl->nx > pl->ny ? pl->nx : pl->ny, 4, &pl->wy) &&
           carve(&pl->size, (iw + 2 * pl->P) * C + 16, 4, &pl->pad) &&
           pl->ny <= (int64_t)(SIZE_MAX / 4) / pl->es && carve(&pl->size, pl->ny * pl->es, 4, &pl->ring) &&
           carve(&pl->size, pl->ny, sizeof(void *), &pl->rows) &&
           carve(&pl->size, out_contig ? 0 : ne, u8 ? 1 : 4, &pl->tmp);
}

/* The nearest path's scratch: the source column of each output pixel, a
 * contiguous copy of a strided source row, a contiguous output row. */
typedef struct {
    size_t size, xs, src, tmp;
} nearest_plan;

static int nearest_plan_of(int u8, int64_t iw, int64_t ow, int64_t C, int in_contig, int out_contig,
                           nearest_plan *pl) {
    memset(pl, 0, sizeof *pl);
    return carve(&pl->size, ow, 4, &pl->xs) && carve(&pl->size, in_contig ? 0 : iw * C, u8 ? 1 : 4, &pl->src) &&
           carve(&pl->size, out_contig ? 0 : ow * C, u8 ? 1 : 4, &pl->tmp);
}

/* resize_scratch is the scratch a run needs, 0 on overflow. */
static size_t resize_scratch(const resize_inst *r, int u8, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t C,
                             int in_contig, int out_contig) {
    int kx, ky;
    switch (resize_path(r, ih, iw, oh, ow, &kx, &ky)) {
    case PATH_NEAREST: {
        nearest_plan pl;
        return nearest_plan_of(u8, iw, ow, C, in_contig, out_contig, &pl) ? pl.size : 0;
    }
    case PATH_GEN: {
        gen_plan pl;
        return gen_plan_of(u8, kx, ky, ih, iw, oh, ow, C, out_contig, &pl) ? pl.size : 0;
    }
    default: {
        resize_plan pl;
        return resize_plan_of(u8, iw, ow, C, in_contig, out_contig, &pl) ? pl.size : 0;
    }
    }
}

static dynop_result resize_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                 uint32_t nout) {
    const resize_inst *r = (const resize_inst *)instance;
    dynop_result rc = check_image("imgproc.Resize", in, nin, nout, 0);
    size_t size;
    int64_t oh, ow;
    if (rc != DYNOP_OK) return rc;
    if (in->shape[0] == 0 || in->shape[1] == 0)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Resize: cannot resize an empty %lldx%lld image",
                     (long long)in->shape[0], (long long)in->shape[1]);
    if (in->shape[1] > INT32_MAX)
        return failf(DYNOP_ERROR_UNSUPPORTED, "imgproc.Resize: input width %lld is too large (at most %ld)",
                     (long long)in->shape[1], (long)INT32_MAX);
    if (!resize_size(r, in->shape[0], in->shape[1], &oh, &ow))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "imgproc.Resize: a %lldx%lld image would become larger than %lld pixels on a side",
                     (long long)in->shape[1], (long long)in->shape[0], (long long)RESIZE_MAX);
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = oh;
    out->shape[1] = ow;
    out->shape[2] = in->shape[2];
    /* Outputs are contiguous: the host allocates them compact. */
    size = resize_scratch(r, in->dtype.code == DYNOP_DTYPE_UINT, in->shape[0], in->shape[1], oh, ow, in->shape[2],
                          tensor_rows_contig(in), 1);
    if (size == 0) return no_memory("imgproc.Resize", SIZE_MAX);
    if (size > RESIZE_MAX_SCRATCH)
        return failf(DYNOP_ERROR_UNSUPPORTED,
                     "imgproc.Resize: resizing a %lldx%lld image to %lldx%lld with %s%s needs %zu MiB of scratch, "
                     "more than %d",
                     (long long)in->shape[1], (long long)in->shape[0], (long long)ow, (long long)oh,
                     resize_interps[r->interp], r->antialias ? " and antialias" : "", size >> 20,
                     (int)(RESIZE_MAX_SCRATCH >> 20));
    return set_scratch(&out[nout], size, "imgproc.Resize");
}

/* The two horizontally resampled source rows a run keeps. */
typedef struct {
    const view *vi;
    const resize_kernels *kn;
    const resize_tab *t;
    int u8;
    char *src;      /* a contiguous copy of a strided source row */
    int64_t id[2];  /* the source row each slot holds, -1 for none */
    char *buf[2];
} resize_rows;

/* resize_row returns source row j resampled, computing it into the slot
 * that does not hold row keep if neither has it. */
static const char *resize_row(resize_rows *rr, int64_t j, int64_t keep) {
    const char *s;
    int slot;
    if (rr->id[0] == j) return rr->buf[0];
    if (rr->id[1] == j) return rr->buf[1];
    slot = rr->id[0] == keep ? 1 : 0;
    s = load_row(rr->vi, j, rr->src, rr->u8);
    if (rr->u8) rr->kn->h8((const uint8_t *)s, (int32_t *)(void *)rr->buf[slot], rr->t);
    else rr->kn->hf((const float *)(const void *)s, (float *)(void *)rr->buf[slot], rr->t);
    rr->id[slot] = j;
    return rr->buf[slot];
}

/* resize_linear_run resamples bilinearly, its coordinates from coord. */
static dynop_result resize_linear_run(const dynop_tensor *out, const dynop_tensor *in, const resize_kernels *kn,
                                      resize_coord_fn coord) {
    const int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    const size_t es = u8 ? 1 : 4;
    view vi = view_of(in), vo = view_of(out);
    const int64_t ih = vi.h, iw = vi.w, C = vi.c, oh = vo.h, ow = vo.w, n = ow * C;
    int32_t *x0, *wx, *wp;
    float *f0, *f1;
    resize_tab t;
    resize_rows rr;
    resize_plan pl;
    char *mem;
    int64_t x, y, ch;
    dynop_result err = DYNOP_OK;
    if (oh <= 0 || ow <= 0 || ih <= 0 || iw <= 0) return DYNOP_OK;
    if (!resize_plan_of(u8, iw, ow, C, rows_contig(&vi), rows_contig(&vo), &pl))
        return no_memory("imgproc.Resize", SIZE_MAX);
    mem = scratch_of(&out[1], pl.size, "imgproc.Resize", &err);
    if (mem == NULL) return err;
    memset(mem, 0, pl.size);
    x0 = (int32_t *)(void *)(mem + pl.x0);
    wx = (int32_t *)(void *)(mem + pl.wx);
    wp = (int32_t *)(void *)(mem + pl.wp);
    f0 = (float *)(void *)(mem + pl.f0);
    f1 = (float *)(void *)(mem + pl.f1);
    for (x = 0; x < ow; x++) {
        int64_t i0, i1;
        double f;
        int32_t w;
        coord(x, iw, ow, &i0, &i1, &f);
        w = (int32_t)lround_pos(f * 2048.0);
        x0[x] = (int32_t)i0;
        wx[x] = w;
        f0[x] = (float)(1.0 - f);
        f1[x] = (float)f;
        for (ch = 0; ch < C; ch++) wp[x * C + ch] = (int32_t)(((uint32_t)w << 16) | (uint32_t)(2048 - w));
    }
    t.in_w = iw;
    t.out_w = ow;
    t.c = C;
    t.x0 = x0;
    t.wx = wx;
    t.wp = wp;
    t.f0 = f0;
    t.f1 = f1;
    for (t.safe2 = 0; t.safe2 < ow && x0[t.safe2] + 2 <= iw; t.safe2++) {}
    for (t.safe3 = 0; t.safe3 < ow && x0[t.safe3] + 3 <= iw; t.safe3++) {}
    for (t.safe4 = 0; t.safe4 < ow && x0[t.safe4] + 4 <= iw; t.safe4++) {}
    rr.vi = &vi;
    rr.kn = kn;
    rr.t = &t;
    rr.u8 = u8;
    rr.src = mem + pl.src;
    rr.id[0] = rr.id[1] = -1;
    rr.buf[0] = mem + pl.h0;
    rr.buf[1] = mem + pl.h1;
    for (y = 0; y < oh; y++) {
        int64_t j0, j1;
        double fy;
        const char *h0, *h1;
        int contig = rows_contig(&vo);
        char *d = contig ? vo.p + y * vo.sy * (int64_t)es : mem + pl.tmp;
        coord(y, ih, oh, &j0, &j1, &fy);
        h0 = resize_row(&rr, j0, j1);
        h1 = resize_row(&rr, j1, j0);
        if (u8)
            kn->v8((const int32_t *)(const void *)h0, (const int32_t *)(const void *)h1, (int32_t)lround_pos(fy * 2048.0),
                   (uint8_t *)d, n);
        else
            kn->vf((const float *)(const void *)h0, (const float *)(const void *)h1, (float)(1.0 - fy), (float)fy,
                   (float *)(void *)d, n);
        if (!contig) store_row(&vo, y, mem + pl.tmp, u8);
    }
    return DYNOP_OK;
}

/* nearest_index is OpenCV's INTER_NEAREST_EXACT: the pixel under output
 * pixel d's centre, floor((d + 0.5) in/out) in 16-bit fixed point:
 * (ifx d + ifx/2 - 1) >> 16 with ifx = ((in << 16) + out/2) / out,
 * clamped to [0, in-1]. */
static int64_t nearest_index(int64_t d, int64_t in, int64_t out) {
    const int64_t ifx = ((in << 16) + out / 2) / out;
    int64_t i = (ifx * d + ifx / 2 - 1) >> 16;
    return i < 0 ? 0 : i > in - 1 ? in - 1 : i;
}

static dynop_result resize_nearest_run(const dynop_tensor *out, const dynop_tensor *in) {
    const int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    const size_t es = u8 ? 1 : 4;
    view vi = view_of(in), vo = view_of(out);
    const int64_t ih = vi.h, iw = vi.w, C = vi.c, oh = vo.h, ow = vo.w, ne = ow * C;
    const size_t pix = (size_t)C * es;
    nearest_plan pl;
    int32_t *xs;
    char *mem;
    int64_t x, y, prev = -1;
    dynop_result err = DYNOP_OK;
    if (oh <= 0 || ow <= 0 || ih <= 0 || iw <= 0) return DYNOP_OK;
    if (!nearest_plan_of(u8, iw, ow, C, rows_contig(&vi), rows_contig(&vo), &pl))
        return no_memory("imgproc.Resize", SIZE_MAX);
    mem = scratch_of(&out[1], pl.size, "imgproc.Resize", &err);
    if (mem == NULL) return err;
    xs = (int32_t *)(void *)(mem + pl.xs);
    for (x = 0; x < ow; x++) xs[x] = (int32_t)nearest_index(x, iw, ow);
    for (y = 0; y < oh; y++) {
        const int64_t sy = nearest_index(y, ih, oh);
        const int contig = rows_contig(&vo);
        char *d = contig ? vo.p + y * vo.sy * (int64_t)es : mem + pl.tmp;
        if (sy == prev && contig) {
            memcpy(d, vo.p + (y - 1) * vo.sy * (int64_t)es, (size_t)ne * es);
            continue;
        }
        prev = sy;
        {
            const char *s = load_row(&vi, sy, mem + pl.src, u8);
            /* Constant sizes, which compilers copy inline. */
            if (pix == 1)
                for (x = 0; x < ow; x++) d[x] = s[xs[x]];
            else if (pix == 3)
                for (x = 0; x < ow; x++) memcpy(d + 3 * x, s + 3 * (int64_t)xs[x], 3);
            else if (pix == 4)
                for (x = 0; x < ow; x++) memcpy(d + 4 * x, s + 4 * (int64_t)xs[x], 4);
            else if (pix == 12)
                for (x = 0; x < ow; x++) memcpy(d + 12 * x, s + 12 * (int64_t)xs[x], 12);
            else if (pix == 16)
                for (x = 0; x < ow; x++) memcpy(d + 16 * x, s + 16 * (int64_t)xs[x], 16);
            else
                for (x = 0; x < ow; x++) memcpy(d + (size_t)x * pix, s + (size_t)xs[x] * pix, pix);
        }
        if (!contig) store_row(&vo, y, d, u8);
    }
    return DYNOP_OK;
}

/* gen_fill writes source row y of vi into the padded float row pad
 * (element 0 of the row at pad + P*C), its edge pixels repeated P times
 * on either side. */
static void gen_fill(const view *vi, int64_t y, float *pad, int64_t P, int u8, const gen_kernels *gk) {
    const int64_t w = vi->w, c = vi->c, n = w * c;
    float *d = pad + P * c;
    int64_t x, ch;
    if (u8) {
        const uint8_t *row = (const uint8_t *)vi->p + y * vi->sy;
        if (rows_contig(vi)) gk->widen8(row, d, n);
        else
            for (x = 0; x < w; x++)
                for (ch = 0; ch < c; ch++) d[x * c + ch] = (float)row[x * vi->sx + ch * vi->sc];
    } else {
        const float *row = (const float *)(const void *)vi->p + y * vi->sy;
        if (rows_contig(vi)) memcpy(d, row, (size_t)n * sizeof *d);
        else
            for (x = 0; x < w; x++)
                for (ch = 0; ch < c; ch++) d[x * c + ch] = row[x * vi->sx + ch * vi->sc];
    }
    for (x = 1; x <= P; x++)
        for (ch = 0; ch < c; ch++) {
            d[-x * c + ch] = d[ch];
            d[n + (x - 1) * c + ch] = d[n - c + ch];
        }
}

static dynop_result resize_gen_run(const dynop_tensor *out, const dynop_tensor *in, int kx, int ky,
                                   const gen_kernels *gk) {
    const int u8 = in->dtype.code == DYNOP_DTYPE_UINT;
    const size_t es = u8 ? 1 : 4;
    view vi = view_of(in), vo = view_of(out);
    const int64_t ih = vi.h, iw = vi.w, C = vi.c, oh = vo.h, ow = vo.w, ne = ow * C;
    gen_plan pl;
    gen_tab t;
    char *mem;
    int32_t *idx;
    float *w, *wy, *pad, *ring;
    const float **rows;
    int64_t x, y, ch, j, next = 0;
    dynop_result err = DYNOP_OK;
    if (oh <= 0 || ow <= 0 || ih <= 0 || iw <= 0) return DYNOP_OK;
    if (!gen_plan_of(u8, kx, ky, ih, iw, oh, ow, C, rows_contig(&vo), &pl)) return no_memory("imgproc.Resize", SIZE_MAX);
    mem = scratch_of(&out[1], pl.size, "imgproc.Resize", &err);
    if (mem == NULL) return err;
    idx = (int32_t *)(void *)(mem + pl.idx);
    w = (float *)(void *)(mem + pl.w);
    wy = (float *)(void *)(mem + pl.wy);
    pad = (float *)(void *)(mem + pl.pad);
    ring = (float *)(void *)(mem + pl.ring);
    rows = (const float **)(void *)(mem + pl.rows);
    memset(mem + pl.idx, 0, (size_t)pl.es * 4);
    memset(mem + pl.w, 0, (size_t)(pl.nx * pl.es) * 4);
    memset(pad + (iw + 2 * pl.P) * C, 0, 16 * sizeof *pad);
    for (x = 0; x < ow; x++) {
        const int64_t s0 = gen_weights(kx, iw, ow, pl.nx, x, wy);
        for (ch = 0; ch < C; ch++) {
            idx[x * C + ch] = (int32_t)((s0 + pl.P) * C + ch);
            for (j = 0; j < pl.nx; j++) w[j * pl.es + x * C + ch] = wy[j];
        }
    }
    t.ne = ne;
    t.es = pl.es;
    t.c = C;
    t.n = pl.nx;
    t.idx = idx;
    t.w = w;
    for (y = 0; y < oh; y++) {
        const int64_t s0 = gen_weights(ky, ih, oh, pl.ny, y, wy);
        const int64_t lo = s0 < 0 ? 0 : s0 > ih - 1 ? ih - 1 : s0;
        const int64_t last = s0 + pl.ny - 1, hi = last < 0 ? 0 : last > ih - 1 ? ih - 1 : last;
        const int contig = rows_contig(&vo);
        char *d = contig ? vo.p + y * vo.sy * (int64_t)es : mem + pl.tmp;
        if (next < lo) next = lo;
        for (; next <= hi; next++) {
            gen_fill(&vi, next, pad, pl.P, u8, gk);
            gk->h(pad, ring + (next % pl.ny) * pl.es, &t);
        }
        for (j = 0; j < pl.ny; j++) {
            int64_t r = s0 + j;
            r = r < 0 ? 0 : r > ih - 1 ? ih - 1 : r;
            rows[j] = ring + (r % pl.ny) * pl.es;
        }
        if (u8) gk->v8(rows, wy, pl.ny, (uint8_t *)d, ne);
        else gk->vf(rows, wy, pl.ny, (float *)(void *)d, ne);
        if (!contig) store_row(&vo, y, d, u8);
    }
    return DYNOP_OK;
}

static dynop_result resize_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                    const resize_kernels *kn, const gen_kernels *gk) {
    int kx, ky;
    switch (resize_path((const resize_inst *)instance, in->shape[0], in->shape[1], out->shape[0], out->shape[1], &kx,
                        &ky)) {
    case PATH_NEAREST:
        return resize_nearest_run(out, in);
    case PATH_GEN:
        return resize_gen_run(out, in, kx, ky, gk);
    case PATH_AREA_UP:
        return resize_linear_run(out, in, kn, resize_coord_area);
    default:
        return resize_linear_run(out, in, kn, resize_coord);
    }
}

static dynop_result resize_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    (void)nin;
    return resize_run_with(instance, out, in, &resize_scalar, &gen_scalar);
}

#if IMGPROC_WASM_SIMD
static dynop_result resize_run_simd128(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                       uint32_t nin) {
    (void)nout;
    (void)nin;
    return resize_run_with(instance, out, in, &resize_simd128, &gen_scalar);
}
#endif

#if IMGPROC_X86
static dynop_result resize_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return resize_run_with(instance, out, in, &resize_avx2, &gen_avx2);
}

static dynop_result resize_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    (void)nin;
    return resize_run_with(instance, out, in, &resize_avx512, &gen_avx512);
}
#endif

/* ==== operators in files of their own ==================================== */

/* The library is one translation unit: imgproc.c includes the files below,
 * which use its helpers and define each operator's kernels, schema and
 * dynop_operator (listed in the arrays that follow). Nothing compiles them
 * on their own. */
#include "filter.c"

#include "convert.c"

#include "geometry.c" /* imgproc.Rotate */
#include "color.c"

/* ==== schemas and registration =========================================== */

/* Best first, the reference last. */
static const dynop_variant gray_variants[] = {IMGPROC_VARIANTS(gray)};
#if IMGPROC_WASM_SIMD
static const dynop_variant blur_variants[] = {DYNOP_VARIANT("simd128", 0, blur_run_simd128),
                                              DYNOP_VARIANT("scalar", 0, blur_run_scalar)};
#else
static const dynop_variant blur_variants[] = {IMGPROC_VARIANTS(blur)};
#endif
static const dynop_variant sobel_variants[] = {IMGPROC_VARIANTS(sobel)};
#if IMGPROC_WASM_SIMD
static const dynop_variant resize_variants[] = {DYNOP_VARIANT("simd128", 0, resize_run_simd128),
                                                DYNOP_VARIANT("scalar", 0, resize_run_scalar)};
#else
static const dynop_variant resize_variants[] = {IMGPROC_VARIANTS(resize)};
#endif
static const dynop_variant saxpy_variants[] = {IMGPROC_VARIANTS(saxpy)};

static const dynop_op_input gray_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 3 (RGB) or 4 (RGBA) channels.", "uint8,float32", "HWC", 3, "3,4"},
};
static const dynop_op_output gray_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "gray", "BT.601 luma, one channel, the input's dtype.", "HWC", NULL, NULL, "images", 0, NULL, 1},
};
static const dynop_op_schema gray_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Grayscale",
    "Converts RGB(A) images to BT.601 grayscale (alpha is ignored).",
    "cpu",
    1, 0, gray_inputs,
    1, gray_outputs,
    0, NULL,
};
static const dynop_operator gray_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Grayscale", "cpu", NULL, create_stateless, gray_setup, NULL, gray_variants,
                                  DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_input image_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 1, 3 or 4 channels.", "uint8,float32", "HWC", 3, "1,3,4"},
};

static const dynop_op_output blur_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "blurred", "The blurred images, of the input's shape and dtype.", "HWC", NULL, NULL, "images",
     0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg blur_args[] = {
    {DYNOP_OP_ARG_HEADER, "sigma", "Standard deviation of the Gaussian in pixels, positive.", DYNOP_ARG_FLOAT,
     DYNOP_ARG_REQUIRED | DYNOP_ARG_HAS_MIN | DYNOP_ARG_MIN_EXCLUSIVE | DYNOP_ARG_HAS_MAX, 0, BLUR_MAX_SIGMA, NULL, NULL,
     NULL},
    {DYNOP_OP_ARG_HEADER, "radius", "Kernel radius in pixels; 0 for ceil(3 sigma).", DYNOP_ARG_INT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, BLUR_MAX_RADIUS, "0", NULL, NULL},
};
static const dynop_op_schema blur_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.GaussianBlur",
    "Blurs images with a separable Gaussian kernel, replicating edge pixels.",
    "cpu",
    1, 0, image_inputs,
    1, blur_outputs,
    2, blur_args,
};
static const dynop_operator blur_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.GaussianBlur", "cpu", NULL, blur_create, blur_setup, blur_destroy,
                                  blur_variants, DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_output sobel_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "edges", "Sobel gradient magnitude per channel, of the input's shape and dtype.", "HWC", NULL,
     NULL, "images", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_schema sobel_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Sobel",
    "Computes the 3x3 Sobel gradient magnitude of each channel, replicating edge pixels.",
    "cpu",
    1, 0, image_inputs,
    1, sobel_outputs,
    0, NULL,
};
static const dynop_operator sobel_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Sobel", "cpu", NULL, create_stateless, sobel_setup, NULL, sobel_variants,
                                  DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_output resize_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "resized", "The images resized to height x width, the input's channels and dtype.",
     "HWC", NULL, NULL, "images", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg resize_args[] = {
    {DYNOP_OP_ARG_HEADER, "width", "Output width in pixels; 0 keeps the aspect ratio of height.", DYNOP_ARG_INT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, (double)RESIZE_MAX, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "height", "Output height in pixels; 0 keeps the aspect ratio of width.", DYNOP_ARG_INT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, (double)RESIZE_MAX, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "resize_shorter", "The shorter side's length, the aspect ratio kept; 0 for none.",
     DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, (double)RESIZE_MAX, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "resize_longer", "The longer side's length, the aspect ratio kept; 0 for none.",
     DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, (double)RESIZE_MAX, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "scale", "The factor both sides are multiplied by; 0 for none.", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, RESIZE_MAX_SCALE, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "max_size", "The most either side may be; the aspect ratio kept; 0 for no limit.",
     DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, (double)RESIZE_MAX, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "interp",
     "The interpolation: nearest (OpenCV's INTER_NEAREST_EXACT), linear (bilinear), cubic (Keys, a = -0.75, as "
     "OpenCV's INTER_CUBIC) or area (OpenCV's INTER_AREA).",
     DYNOP_ARG_STRING, 0, 0, 0, "\"linear\"", "[\"nearest\", \"linear\", \"cubic\", \"area\"]", NULL},
    {DYNOP_OP_ARG_HEADER, "antialias",
     "linear and cubic: widen the filter by the scale along a side that shrinks, as PIL and DALI do (DALI's "
     "default is true; false, this default, is what cv2.resize computes).",
     DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL, NULL},
};
static const dynop_op_schema resize_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Resize",
    "Resizes images (nearest, bilinear, bicubic or area interpolation, pixel centres aligned, optionally "
    "antialiased) to width x height, or keeping the aspect ratio to a width, a height, a shorter or longer side or "
    "a scale, optionally capped by max_size.",
    "cpu",
    1, 0, image_inputs,
    1, resize_outputs,
    8, resize_args,
};
static const dynop_operator resize_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Resize", "cpu", NULL, resize_create, resize_setup, resize_destroy,
                                  resize_variants, DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_input saxpy_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "x", "A float32 tensor of any shape.", "float32", NULL, 0, NULL},
    {DYNOP_OP_INPUT_HEADER, "y", "A float32 tensor of x's shape.", "float32", NULL, 0, NULL},
};
static const dynop_op_output saxpy_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "out", "(a*x) + y, of x's shape.", NULL, NULL, NULL, "x", 0, NULL, 0},
};
static const dynop_op_arg saxpy_args[] = {
    {DYNOP_OP_ARG_HEADER, "a", "The factor of x.", DYNOP_ARG_FLOAT, 0, 0, 0, "1.0", NULL, NULL},
};
static const dynop_op_schema saxpy_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Saxpy",
    "Computes a*x + y elementwise on float32 tensors (a memory-bound kernel).",
    "cpu",
    2, 0, saxpy_inputs,
    1, saxpy_outputs,
    1, saxpy_args,
};
static const dynop_operator saxpy_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Saxpy", "cpu", NULL, saxpy_create, saxpy_setup, saxpy_destroy,
                                  saxpy_variants, DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_schema *const operators[] = {&gray_schema, &blur_schema, &sobel_schema, &resize_schema, &saxpy_schema, &usm_schema, &cast_schema, &normalize_schema, &cmn_schema, &rotate_schema, &colorconvert_schema, &colortwist_schema};
static const dynop_operator *const operator_backends[] = {&gray_op, &blur_op, &sobel_op, &resize_op, &saxpy_op, &usm_op, &cast_op, &normalize_op, &cmn_op, &rotate_op, &colorconvert_op, &colortwist_op};

/* ---- imgproc.native-grayscale ------------------------------------------ */

/* A WebAssembly build (abi/wasm) cannot provide graph passes: it declares
 * and registers none. */
#if defined(__wasm__)
#define IMGPROC_PASSES 0
#else
#define IMGPROC_PASSES 1
#endif

#if IMGPROC_PASSES

static dynop_result native_grayscale(void *user, const dynop_graph_builder *b) {
    (void)user;
    /* The node's own arguments: image.Grayscale has none, and neither has
     * imgproc.Grayscale, so arguments the Go operator would refuse are
     * refused here too. */
    return b->set_operator(b, b->node, "imgproc.Grayscale", NULL);
}

static const dynop_pass_desc native_grayscale_desc = DYNOP_PASS_DESC(
    "imgproc.native-grayscale", DYNOP_PASS_POPULATE, "image.Grayscale", 0,
    "replaces the Go image.Grayscale with the native one");
static const dynop_pass native_grayscale_pass = {
    DYNOP_PASS_HEADER, "imgproc.native-grayscale", NULL, native_grayscale,
};

static const dynop_pass_desc *const passes[] = {&native_grayscale_desc};
#endif

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    IMGPROC_PLUGIN,
    DYNOP_V(0, 2, 0),
    "Example C plugin: image-processing operators with scalar, AVX2 and AVX-512 variants.",
    "dynop",
    NULL,
    0,
    0, NULL,
    0, NULL,
    NULL,
    (uint32_t)(sizeof operators / sizeof operators[0]), operators,
#if IMGPROC_PASSES
    1, passes,
#else
    0, NULL,
#endif
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc = DYNOP_OK;
    size_t i;
    host_table = host;
    if (!DYNOP_HOST_HAS_SCRATCH(host))
        return fail(DYNOP_ERROR_VERSION, "imgproc takes its operators' scratch memory from the host and shares their "
                                         "instances between threads, which need a host table of version 1.4 or "
                                         "later; upgrade the host");
    for (i = 0; rc == DYNOP_OK && i < sizeof operator_backends / sizeof operator_backends[0]; i++)
        rc = host->register_operator(host, operator_backends[i]);
#if IMGPROC_PASSES
    if (rc == DYNOP_OK) rc = host->register_pass(host, &native_grayscale_pass);
#endif
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

static dynop_result deregister_plugin(const dynop_host *host) {
    (void)host;
    host_table = NULL;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
