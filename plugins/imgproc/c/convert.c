/*
 * convert.c — imgproc.Cast, imgproc.Normalize and imgproc.CropMirrorNormalize,
 * included by imgproc.c (one translation unit: it uses imgproc.c's helpers).
 *
 * float16 is IEEE binary16. Conversions of float32 to float16 round to
 * nearest, ties to even, overflow to +-inf (|x| >= 65520), keep
 * subnormals, and turn a NaN into a quiet NaN with its sign and the top 9
 * bits of its payload (bit 9 set): exactly what F16C's VCVTPS2PH does with
 * _MM_FROUND_TO_NEAREST_INT, and what numpy's astype(np.float16) gives for
 * every value but signalling NaNs (numpy keeps them signalling). float16 to
 * float32 is exact; a NaN is quieted (bit 22 set), as VCVTPH2PS does.
 *
 * imgproc.Cast (dtype): any tensor (any rank, any strides) of uint8,
 * int16, uint16, int32, float16 or float32 to the same shape in dtype,
 * one of those. The same dtype copies the bits. Otherwise:
 *   integer -> integer   saturates to the target's range.
 *   integer -> float32   rounds to nearest even (only int32 can round).
 *   integer -> float16   (float16)(float32)x: exact for |x| <= 2^24 and
 *                        +-inf beyond, so one correct rounding.
 *   float16 -> any       (float32)x exactly, then as float32.
 *   float32 -> integer   NaN -> 0; otherwise rounded to the nearest
 *                        integer, ties to even (cvRound, rint), and
 *                        saturated to the target's range: +-inf and
 *                        values beyond it give its max or min.
 *   float32 -> float16   as above.
 * OpenCV's saturate_cast<T>(float) rounds the same way but goes through
 * int32: a NaN, an infinity or |x| >= 2^31 becomes INT_MIN there before
 * saturating (so +inf -> 0 for uint8), where Cast gives 0 for NaN and the
 * saturated value otherwise.
 *
 * imgproc.Normalize (mean, std, scale = 1, shift = 0, dtype = float32):
 * DALI's Normalize with given mean and std, on HWC images (uint8 or
 * float32, 1 to 64 channels), per channel c:
 *   m_c = (float)mean_c, inv_c = (float)(scale / std_c) (the quotient of
 *   the float64 arguments rounded once to float32), sh = (float)shift,
 *   out = ((x - m_c) * inv_c) + sh   in float32, each operation rounded,
 * then stored as float32, or rounded to float16 (dtype float16). mean and
 * std have 1 value (every channel) or one per channel; std > 0, and
 * scale/std must be a finite float32.
 *
 * imgproc.CropMirrorNormalize (crop_w, crop_h, crop_pos_x, crop_pos_y,
 * mirror, mean, std, scale, shift, out_of_bounds_policy, fill_values,
 * output_layout, dtype): DALI's CMN on an
 * HWC image (uint8 or float32, 1 to 64 channels). The window is crop_w x
 * crop_h (0: the image's width or height), at
 *   x0 = roundf((float)crop_pos_x * (float)(W - crop_w)), likewise y0,
 * a float32 product rounded half away from zero (DALI's CalculateAnchor),
 * crop_pos in [0, 1] (0.5 centres it). A window larger than the image is
 * an error under out_of_bounds_policy "error" (the default); under "pad"
 * the anchor may be negative, and output pixels outside the image take
 * fill_values (1 value, or one per channel) as they are, not normalized
 * (as DALI). mirror flips the window horizontally: output pixel (y, x) is
 * input pixel (y0 + y, x0 + crop_w - 1 - x). Each value is normalized as
 * by imgproc.Normalize, and written as CHW (planes, the default, as DALI)
 * or HWC, float32 or float16.
 *
 * The variants: avx2 needs AVX2 and F16C (VCVTPH2PS, VCVTPS2PH; every CPU
 * with AVX2 we target has it, and the host checks it: DYNOP_CPU_F16C),
 * avx512 needs AVX-512 F and BW. They vectorize contiguous runs and use
 * the scalar code for strided rows and for the tails; all compute the
 * scalar reference's bytes. Float-to-integer rounding uses the current
 * rounding mode, which is round-to-nearest-even under Go and C.
 */

/* ---- float16 ------------------------------------------------------------ */

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f32_to_f16 rounds x to binary16, to nearest even (as VCVTPS2PH). */
static uint16_t f32_to_f16(float x) {
    uint32_t u = f32_bits(x), a = u & 0x7FFFFFFFu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a >= 0x7F800000u) { /* inf, NaN */
        if (a == 0x7F800000u) return (uint16_t)(sign | 0x7C00u);
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    }
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* >= 65520: inf */
    if (a >= 0x38800000u) {                                  /* normal: >= 2^-14 */
        uint32_t m = a - 0x38000000u;                        /* exponent rebiased by 112 */
        m += 0x0FFFu + ((m >> 13) & 1u);
        return (uint16_t)(sign | (m >> 13));
    }
    if (a <= 0x33000000u) return sign; /* <= 2^-25: rounds to zero */
    {
        /* subnormal: round(x * 2^24); the mantissa with its implicit bit
         * shifted by 126 - exponent, 14 to 24 bits */
        uint32_t e = a >> 23, mant = (a & 0x7FFFFFu) | 0x800000u, s = 126u - e;
        uint32_t q = mant >> s, rem = mant & ((1u << s) - 1u), half = 1u << (s - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
}

/* f16_to_f32 widens binary16 exactly (as VCVTPH2PS, which quiets NaNs). */
static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return f32_from_bits(sign | 0x7F800000u | (m << 13) | (m != 0 ? 0x400000u : 0));
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return sign != 0 ? -v : v;
    }
    return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

/* ---- imgproc.Cast ------------------------------------------------------- */

/* The dtypes Cast converts between. */
enum { CT_U8, CT_I16, CT_U16, CT_I32, CT_F16, CT_F32, CT_NONE };

static int cast_type(dynop_dtype t) {
    if (t.lanes != 1) return CT_NONE;
    if (t.code == DYNOP_DTYPE_UINT && t.bits == 8) return CT_U8;
    if (t.code == DYNOP_DTYPE_INT && t.bits == 16) return CT_I16;
    if (t.code == DYNOP_DTYPE_UINT && t.bits == 16) return CT_U16;
    if (t.code == DYNOP_DTYPE_INT && t.bits == 32) return CT_I32;
    if (t.code == DYNOP_DTYPE_FLOAT && t.bits == 16) return CT_F16;
    if (t.code == DYNOP_DTYPE_FLOAT && t.bits == 32) return CT_F32;
    return CT_NONE;
}

static const size_t cast_size[] = {1, 2, 2, 4, 2, 4};
static const int cast_is_float[] = {0, 0, 0, 0, 1, 1};
/* Integer targets' ranges (int32's is handled on its own). */
static const int32_t cast_lo[] = {0, -32768, 0, INT32_MIN};
static const int32_t cast_hi[] = {255, 32767, 65535, INT32_MAX};

/* rne rounds a finite x to the nearest integer, ties to even (for
 * |x| < 2^23 by adding and subtracting 2^23; larger floats are integers). */
static float rne(float x) {
    if (x >= 0.0f) return x < 8388608.0f ? (x + 8388608.0f) - 8388608.0f : x;
    return x > -8388608.0f ? (x - 8388608.0f) + 8388608.0f : x;
}

/* f32_to_int saturates x, rounded to nearest even, to integer type t; NaN -> 0. */
static int32_t f32_to_int(float x, int t) {
    if (x != x) return 0;
    if (t == CT_I32) {
        if (x >= 2147483648.0f) return INT32_MAX;
        if (x <= -2147483648.0f) return INT32_MIN;
        return (int32_t)rne(x);
    }
    if (x < (float)cast_lo[t]) x = (float)cast_lo[t];
    if (x > (float)cast_hi[t]) x = (float)cast_hi[t];
    return (int32_t)rne(x);
}

/* Rows are converted in blocks through a buffer of int32 (integer
 * sources) or float32 (float sources), which holds every source value
 * exactly: load fills it, store converts it to the target. */
#define CAST_BLOCK 512

/* Buffers on the stack are aligned to cache lines, where the compiler
 * can: vectors that cross lines cost (a 64-byte one at every access). */
#if defined(__GNUC__) || defined(__clang__)
#define CONVERT_ALIGN64 __attribute__((aligned(64)))
#else
#define CONVERT_ALIGN64
#endif

typedef union {
    int32_t i[CAST_BLOCK];
    float f[CAST_BLOCK];
} cast_buf;

/* cast_load_scalar reads elements from..n-1 of type st, ss elements apart. */
static void cast_load_scalar(const char *s, int64_t ss, int st, cast_buf *b, int64_t from, int64_t n) {
    int64_t j;
    switch (st) {
    case CT_U8:
        for (j = from; j < n; j++) b->i[j] = ((const uint8_t *)s)[j * ss];
        break;
    case CT_I16:
        for (j = from; j < n; j++) b->i[j] = ((const int16_t *)(const void *)s)[j * ss];
        break;
    case CT_U16:
        for (j = from; j < n; j++) b->i[j] = ((const uint16_t *)(const void *)s)[j * ss];
        break;
    case CT_I32:
        for (j = from; j < n; j++) b->i[j] = ((const int32_t *)(const void *)s)[j * ss];
        break;
    case CT_F16:
        for (j = from; j < n; j++) b->f[j] = f16_to_f32(((const uint16_t *)(const void *)s)[j * ss]);
        break;
    default:
        for (j = from; j < n; j++) b->f[j] = ((const float *)(const void *)s)[j * ss];
        break;
    }
}

/* cast_f2i_scalar converts floats f[from..n-1] to integers of type dt in
 * i (which may be f's buffer). */
static void cast_f2i_scalar(const float *f, int32_t *i, int dt, int64_t from, int64_t n) {
    int64_t j;
    for (j = from; j < n; j++) i[j] = f32_to_int(f[j], dt);
}

static int32_t sat32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* cast_store_scalar writes elements from..n-1 of v (int32, or float32 if
 * isf) as type dt, ds elements apart; integer targets from floats were
 * converted by f2i first. */
static void cast_store_scalar(const void *v, int isf, char *d, int64_t ds, int dt, int64_t from, int64_t n) {
    const int32_t *bi = (const int32_t *)v;
    const float *bf = (const float *)v;
    int64_t j;
    switch (dt) {
    case CT_U8:
        for (j = from; j < n; j++) ((uint8_t *)d)[j * ds] = (uint8_t)sat32(bi[j], 0, 255);
        break;
    case CT_I16:
        for (j = from; j < n; j++) ((int16_t *)(void *)d)[j * ds] = (int16_t)sat32(bi[j], -32768, 32767);
        break;
    case CT_U16:
        for (j = from; j < n; j++) ((uint16_t *)(void *)d)[j * ds] = (uint16_t)sat32(bi[j], 0, 65535);
        break;
    case CT_I32:
        for (j = from; j < n; j++) ((int32_t *)(void *)d)[j * ds] = bi[j];
        break;
    case CT_F16:
        for (j = from; j < n; j++)
            ((uint16_t *)(void *)d)[j * ds] = f32_to_f16(isf ? bf[j] : (float)bi[j]);
        break;
    default:
        for (j = from; j < n; j++) ((float *)(void *)d)[j * ds] = isf ? bf[j] : (float)bi[j];
        break;
    }
}

/* A variant's block kernels: load and store handle contiguous runs (stride
 * 1) and call the scalar ones for strided runs and tails. */
typedef struct {
    void (*load)(const char *s, int64_t ss, int st, cast_buf *b, int64_t n);
    void (*f2i)(const float *f, int32_t *i, int dt, int64_t n);
    void (*store)(const void *v, int isf, char *d, int64_t ds, int dt, int64_t n);
} cast_kernels;

static void cast_load_all_scalar(const char *s, int64_t ss, int st, cast_buf *b, int64_t n) {
    cast_load_scalar(s, ss, st, b, 0, n);
}
static void cast_f2i_all_scalar(const float *f, int32_t *i, int dt, int64_t n) { cast_f2i_scalar(f, i, dt, 0, n); }
static void cast_store_all_scalar(const void *v, int isf, char *d, int64_t ds, int dt, int64_t n) {
    cast_store_scalar(v, isf, d, ds, dt, 0, n);
}

static const cast_kernels cast_scalar = {cast_load_all_scalar, cast_f2i_all_scalar, cast_store_all_scalar};

#if IMGPROC_X86
/* The avx2 variants of this file also use F16C. */
#define CONVERT_AVX2 __attribute__((target("avx2,f16c")))
#define CONVERT_AVX2_FEATURES (DYNOP_CPU_AVX2 | DYNOP_CPU_F16C)
#define F16_ROUND (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

CONVERT_AVX2 static void cast_load_avx2(const char *s, int64_t ss, int st, cast_buf *b, int64_t n) {
    int64_t j = 0;
    if (ss != 1) {
        cast_load_scalar(s, ss, st, b, 0, n);
        return;
    }
    switch (st) {
    case CT_U8:
        for (; j + 8 <= n; j += 8)
            ST256(b->i + j, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(s + j))));
        break;
    case CT_I16:
        for (; j + 8 <= n; j += 8) ST256(b->i + j, _mm256_cvtepi16_epi32(LD128(s + 2 * j)));
        break;
    case CT_U16:
        for (; j + 8 <= n; j += 8) ST256(b->i + j, _mm256_cvtepu16_epi32(LD128(s + 2 * j)));
        break;
    case CT_I32:
        for (; j + 8 <= n; j += 8) ST256(b->i + j, LD256(s + 4 * j));
        break;
    case CT_F16:
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(b->f + j, _mm256_cvtph_ps(LD128(s + 2 * j)));
        break;
    default:
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(b->f + j, _mm256_loadu_ps((const float *)(const void *)s + j));
        break;
    }
    cast_load_scalar(s, 1, st, b, j, n);
}

CONVERT_AVX2 static void cast_f2i_avx2(const float *f, int32_t *i, int dt, int64_t n) {
    int64_t j = 0;
    if (dt == CT_I32) {
        const __m256 top = _mm256_set1_ps(2147483648.0f);
        for (; j + 8 <= n; j += 8) {
            __m256 x = _mm256_loadu_ps(f + j);
            __m256 ord = _mm256_cmp_ps(x, x, _CMP_ORD_Q), big = _mm256_cmp_ps(x, top, _CMP_GE_OQ);
            /* NaN -> 0; >= 2^31 converts to INT32_MIN, flipped to INT32_MAX */
            __m256i r = _mm256_cvtps_epi32(_mm256_and_ps(x, ord));
            ST256(i + j, _mm256_xor_si256(r, _mm256_castps_si256(big)));
        }
    } else {
        const __m256 lo = _mm256_set1_ps((float)cast_lo[dt]), hi = _mm256_set1_ps((float)cast_hi[dt]);
        for (; j + 8 <= n; j += 8) {
            __m256 x = _mm256_loadu_ps(f + j);
            x = _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));
            x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
            ST256(i + j, _mm256_cvtps_epi32(x));
        }
    }
    cast_f2i_scalar(f, i, dt, j, n);
}

CONVERT_AVX2 static void cast_store_avx2(const void *v, int isf, char *d, int64_t ds, int dt, int64_t n) {
    const int32_t *bi = (const int32_t *)v;
    const float *bf = (const float *)v;
    int64_t j = 0;
    if (ds != 1) {
        cast_store_scalar(v, isf, d, ds, dt, 0, n);
        return;
    }
    switch (dt) {
    case CT_U8: {
        const __m256i lo = _mm256_setzero_si256(), hi = _mm256_set1_epi32(255);
        for (; j + 32 <= n; j += 32) {
            __m256i v0 = _mm256_min_epi32(_mm256_max_epi32(LD256(bi + j), lo), hi);
            __m256i v1 = _mm256_min_epi32(_mm256_max_epi32(LD256(bi + j + 8), lo), hi);
            __m256i v2 = _mm256_min_epi32(_mm256_max_epi32(LD256(bi + j + 16), lo), hi);
            __m256i v3 = _mm256_min_epi32(_mm256_max_epi32(LD256(bi + j + 24), lo), hi);
            ST256(d + j, pack4x8_avx2(v0, v1, v2, v3));
        }
        break;
    }
    case CT_I16:
        for (; j + 16 <= n; j += 16) {
            __m256i p = _mm256_packs_epi32(LD256(bi + j), LD256(bi + j + 8));
            ST256(d + 2 * j, _mm256_permute4x64_epi64(p, 0xD8));
        }
        break;
    case CT_U16:
        for (; j + 16 <= n; j += 16) {
            __m256i p = _mm256_packus_epi32(LD256(bi + j), LD256(bi + j + 8));
            ST256(d + 2 * j, _mm256_permute4x64_epi64(p, 0xD8));
        }
        break;
    case CT_I32:
        for (; j + 8 <= n; j += 8) ST256(d + 4 * j, LD256(bi + j));
        break;
    case CT_F16:
        for (; j + 8 <= n; j += 8) {
            __m256 x = isf ? _mm256_loadu_ps(bf + j) : _mm256_cvtepi32_ps(LD256(bi + j));
            ST128(d + 2 * j, _mm256_cvtps_ph(x, F16_ROUND));
        }
        break;
    default:
        for (; j + 8 <= n; j += 8) {
            __m256 x = isf ? _mm256_loadu_ps(bf + j) : _mm256_cvtepi32_ps(LD256(bi + j));
            _mm256_storeu_ps((float *)(void *)d + j, x);
        }
        break;
    }
    cast_store_scalar(v, isf, d, 1, dt, j, n);
}

static const cast_kernels cast_avx2 = {cast_load_avx2, cast_f2i_avx2, cast_store_avx2};

IMGPROC_AVX512 static void cast_load_avx512(const char *s, int64_t ss, int st, cast_buf *b, int64_t n) {
    int64_t j = 0;
    if (ss != 1) {
        cast_load_scalar(s, ss, st, b, 0, n);
        return;
    }
    switch (st) {
    case CT_U8:
        for (; j + 16 <= n; j += 16) ST512(b->i + j, _mm512_cvtepu8_epi32(LD128(s + j)));
        break;
    case CT_I16:
        for (; j + 16 <= n; j += 16) ST512(b->i + j, _mm512_cvtepi16_epi32(LD256(s + 2 * j)));
        break;
    case CT_U16:
        for (; j + 16 <= n; j += 16) ST512(b->i + j, _mm512_cvtepu16_epi32(LD256(s + 2 * j)));
        break;
    case CT_I32:
        for (; j + 16 <= n; j += 16) ST512(b->i + j, LD512(s + 4 * j));
        break;
    case CT_F16:
        for (; j + 16 <= n; j += 16) _mm512_storeu_ps(b->f + j, _mm512_cvtph_ps(LD256(s + 2 * j)));
        break;
    default:
        for (; j + 16 <= n; j += 16) _mm512_storeu_ps(b->f + j, _mm512_loadu_ps((const float *)(const void *)s + j));
        break;
    }
    cast_load_scalar(s, 1, st, b, j, n);
}

IMGPROC_AVX512 static void cast_f2i_avx512(const float *f, int32_t *i, int dt, int64_t n) {
    int64_t j = 0;
    if (dt == CT_I32) {
        const __m512 top = _mm512_set1_ps(2147483648.0f);
        const __m512i max = _mm512_set1_epi32(INT32_MAX);
        for (; j + 16 <= n; j += 16) {
            __m512 x = _mm512_loadu_ps(f + j);
            __mmask16 ord = _mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), big = _mm512_cmp_ps_mask(x, top, _CMP_GE_OQ);
            __m512i r = _mm512_cvtps_epi32(_mm512_maskz_mov_ps(ord, x));
            ST512(i + j, _mm512_mask_mov_epi32(r, big, max));
        }
    } else {
        const __m512 lo = _mm512_set1_ps((float)cast_lo[dt]), hi = _mm512_set1_ps((float)cast_hi[dt]);
        for (; j + 16 <= n; j += 16) {
            __m512 x = _mm512_loadu_ps(f + j);
            x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), x);
            x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
            ST512(i + j, _mm512_cvtps_epi32(x));
        }
    }
    cast_f2i_scalar(f, i, dt, j, n);
}

IMGPROC_AVX512 static void cast_store_avx512(const void *v, int isf, char *d, int64_t ds, int dt, int64_t n) {
    const int32_t *bi = (const int32_t *)v;
    const float *bf = (const float *)v;
    int64_t j = 0;
    if (ds != 1) {
        cast_store_scalar(v, isf, d, ds, dt, 0, n);
        return;
    }
    switch (dt) {
    case CT_U8: {
        const __m512i lo = _mm512_setzero_si512(), hi = _mm512_set1_epi32(255);
        for (; j + 16 <= n; j += 16)
            ST128(d + j, _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(LD512(bi + j), lo), hi)));
        break;
    }
    case CT_I16:
        for (; j + 16 <= n; j += 16) ST256(d + 2 * j, _mm512_cvtsepi32_epi16(LD512(bi + j)));
        break;
    case CT_U16: {
        const __m512i lo = _mm512_setzero_si512(), hi = _mm512_set1_epi32(65535);
        for (; j + 16 <= n; j += 16)
            ST256(d + 2 * j, _mm512_cvtepi32_epi16(_mm512_min_epi32(_mm512_max_epi32(LD512(bi + j), lo), hi)));
        break;
    }
    case CT_I32:
        for (; j + 16 <= n; j += 16) ST512(d + 4 * j, LD512(bi + j));
        break;
    case CT_F16:
        for (; j + 16 <= n; j += 16) {
            __m512 x = isf ? _mm512_loadu_ps(bf + j) : _mm512_cvtepi32_ps(LD512(bi + j));
            ST256(d + 2 * j, _mm512_cvtps_ph(x, F16_ROUND));
        }
        break;
    default:
        for (; j + 16 <= n; j += 16) {
            __m512 x = isf ? _mm512_loadu_ps(bf + j) : _mm512_cvtepi32_ps(LD512(bi + j));
            _mm512_storeu_ps((float *)(void *)d + j, x);
        }
        break;
    }
    cast_store_scalar(v, isf, d, 1, dt, j, n);
}

static const cast_kernels cast_avx512 = {cast_load_avx512, cast_f2i_avx512, cast_store_avx512};
#endif /* IMGPROC_X86 */

typedef struct {
    int dt; /* CT_* */
} cast_inst;

/* arg_dtype reads a dtype argument. */
static int arg_dtype(const dynop_arg *args, uint32_t n, const char *name, dynop_dtype *v) {
    const dynop_arg *a = find_arg(args, n, name);
    if (a == NULL || a->type != DYNOP_ARG_DTYPE) return 0;
    *v = *(const dynop_dtype *)a->values;
    return 1;
}

static dynop_result cast_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    dynop_dtype t;
    char name[32];
    cast_inst *c;
    (void)user_data;
    if (!arg_dtype(args, n, "dtype", &t)) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Cast: argument dtype is required");
    if (cast_type(t) == CT_NONE)
        return failf(DYNOP_ERROR_UNSUPPORTED,
                     "imgproc.Cast: unsupported dtype %s (want uint8, int16, uint16, int32, float16 or float32)",
                     dtype_name(t, name, sizeof name));
    c = (cast_inst *)malloc(sizeof *c);
    if (c == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "imgproc.Cast: out of memory");
    c->dt = cast_type(t);
    *instance = c;
    return DYNOP_OK;
}

static void cast_destroy(void *instance) { free(instance); }

static const dynop_dtype cast_dtypes[] = {
    {DYNOP_DTYPE_UINT, 8, 1},   {DYNOP_DTYPE_INT, 16, 1},   {DYNOP_DTYPE_UINT, 16, 1},
    {DYNOP_DTYPE_INT, 32, 1},   {DYNOP_DTYPE_FLOAT, 16, 1}, {DYNOP_DTYPE_FLOAT, 32, 1},
};

static dynop_result cast_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                               uint32_t nout) {
    char name[32];
    int32_t d;
    if (nin != 1 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Cast: takes 1 input and 1 output");
    if (cast_type(in->dtype) == CT_NONE)
        return failf(DYNOP_ERROR_UNSUPPORTED,
                     "imgproc.Cast: unsupported input dtype %s (want uint8, int16, uint16, int32, float16 or float32)",
                     dtype_name(in->dtype, name, sizeof name));
    if (in->ndim < 0 || in->ndim > DYNOP_MAX_NDIM)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Cast: the input has %d dimensions (at most %d)",
                     (int)in->ndim, DYNOP_MAX_NDIM);
    out->dtype = cast_dtypes[((const cast_inst *)instance)->dt];
    out->ndim = in->ndim;
    for (d = 0; d < in->ndim; d++) out->shape[d] = in->shape[d];
    return DYNOP_OK;
}

/* pair_rows describes two tensors of one shape as rows: dimensions of size
 * 1 dropped, and neighbours merged where both tensors have them
 * contiguous. The last of the nd dimensions is the row; nd is at least 1.
 * It returns 0 for an empty tensor. */
typedef struct {
    int nd;
    int64_t shape[DYNOP_MAX_NDIM], sa[DYNOP_MAX_NDIM], sb[DYNOP_MAX_NDIM];
} pair_rows;

static int pair_rows_of(const dynop_tensor *a, const dynop_tensor *b, pair_rows *r) {
    int d;
    r->nd = 0;
    for (d = 0; d < a->ndim; d++) {
        if (a->shape[d] == 0) return 0;
        if (a->shape[d] == 1) continue;
        if (r->nd > 0 && r->sa[r->nd - 1] == a->strides[d] * a->shape[d] &&
            r->sb[r->nd - 1] == b->strides[d] * a->shape[d]) {
            r->shape[r->nd - 1] *= a->shape[d];
            r->sa[r->nd - 1] = a->strides[d];
            r->sb[r->nd - 1] = b->strides[d];
            continue;
        }
        r->shape[r->nd] = a->shape[d];
        r->sa[r->nd] = a->strides[d];
        r->sb[r->nd] = b->strides[d];
        r->nd++;
    }
    if (r->nd == 0) { /* a scalar, or all ones: one element */
        r->shape[0] = 1;
        r->sa[0] = r->sb[0] = 1;
        r->nd = 1;
    }
    return 1;
}

static dynop_result cast_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                  const cast_kernels *k) {
    const int dt = ((const cast_inst *)instance)->dt, st = cast_type(in->dtype);
    const int64_t ssz = (int64_t)cast_size[st], dsz = (int64_t)cast_size[dt];
    const char *sp = (const char *)in->data + in->byte_offset;
    char *dp = (char *)out->data + out->byte_offset;
    int64_t idx[DYNOP_MAX_NDIM] = {0};
    pair_rows r;
    cast_buf buf CONVERT_ALIGN64;
    int d;
    if (!pair_rows_of(in, out, &r)) return DYNOP_OK;
    for (;;) {
        const int64_t n = r.shape[r.nd - 1], ss = r.sa[r.nd - 1], ds = r.sb[r.nd - 1];
        const char *s = sp;
        char *o = dp;
        int64_t j;
        for (d = 0; d < r.nd - 1; d++) {
            s += idx[d] * r.sa[d] * ssz;
            o += idx[d] * r.sb[d] * dsz;
        }
        if (st == dt && ss == 1 && ds == 1) memcpy(o, s, (size_t)(n * ssz));
        else if (st == dt) {
            for (j = 0; j < n; j++) memcpy(o + j * ds * dsz, s + j * ss * ssz, (size_t)ssz);
        } else {
            for (j = 0; j < n; j += CAST_BLOCK) {
                const int64_t m = min64(CAST_BLOCK, n - j);
                const float *f = buf.f;
                const int32_t *i = buf.i;
                /* float32 and int32 runs are read in place */
                if (st == CT_F32 && ss == 1) f = (const float *)(const void *)(s + j * ssz);
                else if (st == CT_I32 && ss == 1) i = (const int32_t *)(const void *)(s + j * ssz);
                else k->load(s + j * ss * ssz, ss, st, &buf, m);
                if (!cast_is_float[st]) k->store(i, 0, o + j * ds * dsz, ds, dt, m);
                else if (cast_is_float[dt]) k->store(f, 1, o + j * ds * dsz, ds, dt, m);
                else {
                    k->f2i(f, buf.i, dt, m);
                    k->store(buf.i, 0, o + j * ds * dsz, ds, dt, m);
                }
            }
        }
        for (d = r.nd - 2; d >= 0; d--) {
            if (++idx[d] < r.shape[d]) break;
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    return DYNOP_OK;
}

static dynop_result cast_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return cast_run_with(instance, out, in, &cast_scalar);
}

#if IMGPROC_X86
static dynop_result cast_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                  uint32_t nin) {
    (void)nout;
    (void)nin;
    return cast_run_with(instance, out, in, &cast_avx2);
}

static dynop_result cast_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return cast_run_with(instance, out, in, &cast_avx512);
}
#endif

/* ---- normalization (imgproc.Normalize, imgproc.CropMirrorNormalize) ---- */

#define NORM_MAX_CHANNELS 64
/* Rows are normalized in blocks of at most NORM_BLOCK values (through
 * buffers on the stack where they must be copied). */
#define NORM_BLOCK 1024

/* The coefficients: mean and inv repeat with period p (1, or the channel
 * count) over L = 16 p values, so a block that starts at a pixel whose
 * index is a multiple of 16 starts at coefficient 0, and any 8 or 16
 * values from a multiple of 8 or 16 have theirs in one run. */
typedef struct {
    int64_t p, l;
    float *mean, *inv; /* l each */
    float shift;
    int f16; /* output float16, else float32 */
    /* CropMirrorNormalize's */
    int64_t crop_w, crop_h;
    float pos_x, pos_y;
    int mirror, chw;
    int pad;            /* out_of_bounds_policy "pad" */
    int64_t nfill;      /* fill values: 1, or one per channel */
    float *fill;        /* nfill of them, as float32 */
    uint16_t *fill16;   /* and as float16 */
} norm_inst;

static void norm_destroy(void *instance) {
    norm_inst *ni = (norm_inst *)instance;
    if (ni == NULL) return;
    free(ni->mean);
    free(ni->inv);
    free(ni->fill);
    free(ni->fill16);
    free(ni);
}

/* norm_create_common reads mean, std, scale, shift and dtype. */
static dynop_result norm_create_common(const char *op, const dynop_arg *args, uint32_t n, norm_inst **out) {
    const dynop_arg *am = find_arg(args, n, "mean"), *as = find_arg(args, n, "std");
    double scale = 1.0, shift = 0.0;
    dynop_dtype t = {DYNOP_DTYPE_FLOAT, 32, 1};
    char name[32];
    norm_inst *ni;
    int64_t p, k;
    if (am == NULL || am->type != DYNOP_ARG_FLOAT_LIST || am->count > NORM_MAX_CHANNELS)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: mean must have 1 to %d values (one per channel, or one for all)",
                     op, NORM_MAX_CHANNELS);
    if (as == NULL || as->type != DYNOP_ARG_FLOAT_LIST || as->count > NORM_MAX_CHANNELS)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: std must have 1 to %d values (one per channel, or one for all)",
                     op, NORM_MAX_CHANNELS);
    if (am->count > 1 && as->count > 1 && am->count != as->count)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: mean has %u values and std %u; give one per channel or one for all",
                     op, (unsigned)am->count, (unsigned)as->count);
    arg_float(args, n, "scale", &scale);
    arg_float(args, n, "shift", &shift);
    arg_dtype(args, n, "dtype", &t);
    if (!is_f32(t) && !is_dtype(t, DYNOP_DTYPE_FLOAT, 16))
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported dtype %s (want float32 or float16)", op,
                     dtype_name(t, name, sizeof name));
    if (!(scale > -FLT_MAX && scale < FLT_MAX) || !(shift > -FLT_MAX && shift < FLT_MAX))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: scale (%g) and shift (%g) must be finite float32 values", op,
                     scale, shift);
    for (k = 0; k < (int64_t)am->count; k++) {
        double m = ((const double *)am->values)[k];
        if (!(m > -FLT_MAX && m < FLT_MAX))
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: mean[%lld] = %g is not a finite float32", op, (long long)k, m);
    }
    for (k = 0; k < (int64_t)as->count; k++) {
        double s = ((const double *)as->values)[k];
        if (!(s > 0))
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: std[%lld] = %g; it must be above 0", op, (long long)k, s);
        if (!(scale / s < FLT_MAX && scale / s > -FLT_MAX))
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: scale / std[%lld] = %g / %g is not a finite float32", op,
                         (long long)k, scale, s);
    }
    p = am->count > as->count ? am->count : as->count;
    ni = (norm_inst *)calloc(1, sizeof *ni);
    if (ni == NULL) return failf(DYNOP_ERROR_NO_MEMORY, "%s: out of memory", op);
    ni->p = p;
    ni->l = 16 * p;
    ni->mean = (float *)malloc((size_t)ni->l * sizeof(float));
    ni->inv = (float *)malloc((size_t)ni->l * sizeof(float));
    if (ni->mean == NULL || ni->inv == NULL) {
        norm_destroy(ni);
        return failf(DYNOP_ERROR_NO_MEMORY, "%s: out of memory", op);
    }
    for (k = 0; k < ni->l; k++) {
        int64_t c = k % p;
        ni->mean[k] = (float)((const double *)am->values)[am->count > 1 ? c : 0];
        ni->inv[k] = (float)(scale / ((const double *)as->values)[as->count > 1 ? c : 0]);
    }
    ni->shift = (float)shift;
    ni->f16 = !is_f32(t);
    *out = ni;
    return DYNOP_OK;
}

/* norm_check_image validates an HWC image input of Normalize or CMN
 * against the instance's channel count. */
static dynop_result norm_check_image(const char *op, const norm_inst *ni, const dynop_tensor *in, uint32_t nin,
                                     uint32_t nout) {
    char name[32];
    if (nin != 1 || nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: takes 1 input and 1 output", op);
    if (in->ndim != 3)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: want an HWC image (3 dimensions), got %d dimension(s)", op,
                     (int)in->ndim);
    if (!is_u8(in->dtype) && !is_f32(in->dtype))
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported dtype %s (want uint8 or float32)", op,
                     dtype_name(in->dtype, name, sizeof name));
    if (in->shape[0] < 0 || in->shape[1] < 0)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: negative image size %lldx%lld", op, (long long)in->shape[0],
                     (long long)in->shape[1]);
    if (in->shape[2] < 1 || in->shape[2] > NORM_MAX_CHANNELS)
        return failf(DYNOP_ERROR_UNSUPPORTED, "%s: unsupported channel count %lld (want 1 to %d)", op,
                     (long long)in->shape[2], NORM_MAX_CHANNELS);
    if (ni->p > 1 && in->shape[2] != ni->p)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: mean and std have %lld values, the image %lld channels", op,
                     (long long)ni->p, (long long)in->shape[2]);
    return DYNOP_OK;
}

/* A variant's row kernels. norm computes n contiguous values from src
 * (uint8 if u8, else float32) with the coefficients from index 0 of
 * mean/inv (l of them, wrapping), into dst as float32 or, if f16, float16.
 * planes writes n pixels of c channels of float32 values (interleaved) as
 * c rows of n values, plane_stride elements apart, float32 or float16. */
typedef struct {
    void (*norm)(const void *src, int u8, void *dst, int f16, int64_t n, const float *mean, const float *inv, int64_t l,
                 float shift);
    void (*planes)(const float *src, int64_t n, int64_t c, void *dst, int64_t plane_stride, int f16);
} norm_kernels;

static void norm_row_scalar(const void *src, int u8, void *dst, int f16, int64_t n, const float *mean,
                            const float *inv, int64_t l, float shift) {
    int64_t j, k = 0;
    for (j = 0; j < n; j++) {
        float x = u8 ? (float)((const uint8_t *)src)[j] : ((const float *)src)[j];
        float dlt = x - mean[k];
        float prod = dlt * inv[k];
        float r = prod + shift;
        if (f16) ((uint16_t *)dst)[j] = f32_to_f16(r);
        else ((float *)dst)[j] = r;
        if (++k == l) k = 0;
    }
}

static void norm_planes_scalar(const float *src, int64_t n, int64_t c, void *dst, int64_t ps, int f16) {
    int64_t ch, x;
    for (ch = 0; ch < c; ch++) {
        if (f16) {
            uint16_t *d = (uint16_t *)dst + ch * ps;
            for (x = 0; x < n; x++) d[x] = f32_to_f16(src[x * c + ch]);
        } else {
            float *d = (float *)dst + ch * ps;
            for (x = 0; x < n; x++) d[x] = src[x * c + ch];
        }
    }
}

static const norm_kernels norm_scalar = {norm_row_scalar, norm_planes_scalar};

#if IMGPROC_X86
CONVERT_AVX2 static void norm_row_avx2(const void *src, int u8, void *dst, int f16, int64_t n, const float *mean,
                                       const float *inv, int64_t l, float shift) {
    const __m256 sh = _mm256_set1_ps(shift);
    int64_t j = 0, k = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 x = u8 ? _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                            _mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)src + j))))
                      : _mm256_loadu_ps((const float *)src + j);
        __m256 r = _mm256_add_ps(
            _mm256_mul_ps(_mm256_sub_ps(x, _mm256_loadu_ps(mean + k)), _mm256_loadu_ps(inv + k)), sh);
        if (f16) ST128((uint16_t *)dst + j, _mm256_cvtps_ph(r, F16_ROUND));
        else _mm256_storeu_ps((float *)dst + j, r);
        if ((k += 8) == l) k = 0;
    }
    if (j < n)
        norm_row_scalar(u8 ? (const void *)((const uint8_t *)src + j) : (const void *)((const float *)src + j), u8,
                        f16 ? (void *)((uint16_t *)dst + j) : (void *)((float *)dst + j), f16, n - j, mean + k,
                        inv + k, l - k, shift);
}

/* store8_avx2 stores 8 float32 values as float32 or float16. */
CONVERT_AVX2 static inline void store8_avx2(void *dst, int64_t at, __m256 v, int f16) {
    if (f16) ST128((uint16_t *)dst + at, _mm256_cvtps_ph(v, F16_ROUND));
    else _mm256_storeu_ps((float *)dst + at, v);
}

CONVERT_AVX2 static void norm_planes_avx2(const float *src, int64_t n, int64_t c, void *dst, int64_t ps, int f16) {
    int64_t x = 0;
    char *d0 = (char *)dst, *d1, *d2, *d3;
    const int64_t esz = f16 ? 2 : 4;
    if (c != 3 && c != 4) {
        norm_planes_scalar(src, n, c, dst, ps, f16);
        return;
    }
    d1 = d0 + ps * esz;
    d2 = d1 + ps * esz;
    d3 = d2 + ps * esz;
    if (c == 4) {
        /* the unpacks and shuffles leave pixels in the order 0 2 4 6 1 3 5 7 */
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (; x + 8 <= n; x += 8) {
            const float *p = src + 4 * x;
            __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8);
            __m256 v2 = _mm256_loadu_ps(p + 16), v3 = _mm256_loadu_ps(p + 24);
            __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);
            __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);
            __m256 r = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
            __m256 g = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
            __m256 b = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
            __m256 a = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
            store8_avx2(d0, x, _mm256_permutevar8x32_ps(r, order), f16);
            store8_avx2(d1, x, _mm256_permutevar8x32_ps(g, order), f16);
            store8_avx2(d2, x, _mm256_permutevar8x32_ps(b, order), f16);
            store8_avx2(d3, x, _mm256_permutevar8x32_ps(a, order), f16);
        }
    } else {
        const __m256i ir = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
        const __m256i ig = _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6);
        const __m256i ib = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
        for (; x + 8 <= n; x += 8) {
            const float *p = src + 3 * x;
            __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8), v2 = _mm256_loadu_ps(p + 16);
            store8_avx2(d0, x, _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x92), v2, 0x24), ir),
                        f16);
            store8_avx2(d1, x, _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x24), v2, 0x49), ig),
                        f16);
            store8_avx2(d2, x, _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x49), v2, 0x92), ib),
                        f16);
        }
    }
    if (x < n) norm_planes_scalar(src + x * c, n - x, c, d0 + x * esz, ps, f16);
}

static const norm_kernels norm_avx2 = {norm_row_avx2, norm_planes_avx2};

IMGPROC_AVX512 static void norm_row_avx512(const void *src, int u8, void *dst, int f16, int64_t n, const float *mean,
                                           const float *inv, int64_t l, float shift) {
    const __m512 sh = _mm512_set1_ps(shift);
    int64_t j = 0, k = 0;
    for (; j + 16 <= n; j += 16) {
        __m512 x = u8 ? _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(LD128((const uint8_t *)src + j)))
                      : _mm512_loadu_ps((const float *)src + j);
        __m512 r = _mm512_add_ps(
            _mm512_mul_ps(_mm512_sub_ps(x, _mm512_loadu_ps(mean + k)), _mm512_loadu_ps(inv + k)), sh);
        if (f16) ST256((uint16_t *)dst + j, _mm512_cvtps_ph(r, F16_ROUND));
        else _mm512_storeu_ps((float *)dst + j, r);
        if ((k += 16) == l) k = 0;
    }
    if (j < n)
        norm_row_scalar(u8 ? (const void *)((const uint8_t *)src + j) : (const void *)((const float *)src + j), u8,
                        f16 ? (void *)((uint16_t *)dst + j) : (void *)((float *)dst + j), f16, n - j, mean + k,
                        inv + k, l - k, shift);
}

/* The deinterleave of the avx2 variant serves avx512 too (it moves data). */
static const norm_kernels norm_avx512 = {norm_row_avx512, norm_planes_avx2};
#endif /* IMGPROC_X86 */

/* norm_gather copies n pixels of c channels, starting at pixel x0 of the
 * row at src (pixels sx, channels sc elements apart), into buf as
 * contiguous elements of size esz; mirrored, pixel x of buf is pixel
 * x0 + n - 1 - x of the row. */
static void norm_gather(const char *src, int64_t sx, int64_t sc, int64_t esz, int64_t x0, int64_t n, int64_t c,
                        int mirror, char *buf) {
    int64_t x, ch;
    if (sc == 1 && sx == c) { /* contiguous pixels, mirrored: fixed-size copies for the usual sizes */
        const char *p = src + (x0 + n - 1) * c * esz;
        switch (c * esz) {
#define NORM_REVERSE(size)                                                                                             \
    case size:                                                                                                         \
        for (x = 0; x < n; x++) memcpy(buf + x * (size), p - x * (size), size);                                        \
        return;
            NORM_REVERSE(1)
            NORM_REVERSE(3)
            NORM_REVERSE(4)
            NORM_REVERSE(12)
            NORM_REVERSE(16)
#undef NORM_REVERSE
        default:
            break;
        }
    }
    for (x = 0; x < n; x++) {
        const char *p = src + (mirror ? x0 + n - 1 - x : x0 + x) * sx * esz;
        char *q = buf + x * c * esz;
        if (sc == 1) memcpy(q, p, (size_t)(c * esz));
        else
            for (ch = 0; ch < c; ch++) memcpy(q + ch * esz, p + ch * sc * esz, (size_t)esz);
    }
}

/* norm_fill writes the fill values to output pixels [xa, xb) of row y
 * (CropMirrorNormalize's padding). */
static void norm_fill(const norm_inst *ni, const dynop_tensor *out, int64_t c, int64_t y, int64_t xa, int64_t xb,
                      int chw) {
    char *op = (char *)out->data + out->byte_offset;
    const int64_t s0 = out->strides[0], s1 = out->strides[1], s2 = out->strides[2], osz = ni->f16 ? 2 : 4;
    int64_t x, ch;
    for (x = xa; x < xb; x++)
        for (ch = 0; ch < c; ch++) {
            const int64_t f = ni->nfill > 1 ? ch : 0;
            char *q = op + (chw ? ch * s0 + y * s1 + x * s2 : y * s0 + x * s1 + ch * s2) * osz;
            if (ni->f16) memcpy(q, &ni->fill16[f], 2);
            else memcpy(q, &ni->fill[f], 4);
        }
}

/* norm_image computes CMN (and Normalize: the whole image, no mirror, HWC)
 * of in into out with a variant's kernels: for each output row, blocks of
 * at most NORM_BLOCK values (a multiple of 16 pixels), read in place where
 * the pixels are contiguous and in order, else gathered into a buffer;
 * written in place where the output's are, else through a buffer. */
static void norm_image(const norm_inst *ni, const dynop_tensor *out, const dynop_tensor *in, int64_t x0, int64_t y0,
                       int64_t cw, int64_t chh, int mirror, int chw, const norm_kernels *k) {
    union {
        float f[NORM_BLOCK];
        uint8_t b[NORM_BLOCK * 4];
    } raw CONVERT_ALIGN64, res CONVERT_ALIGN64;
    const view v = view_of(in);
    const int u8 = is_u8(in->dtype);
    const int64_t c = v.c, esz = u8 ? 1 : 4, osz = ni->f16 ? 2 : 4;
    const int64_t bp = NORM_BLOCK / c / 16 * 16; /* pixels per block */
    const int in_contig = v.c == 1 || v.sc == 1 ? (cw <= 1 || v.sx == c) : 0;
    char *op = (char *)out->data + out->byte_offset;
    int64_t y, x;
    for (y = 0; y < chh; y++) {
        const int inside = y0 + y >= 0 && y0 + y < v.h;
        const char *row = v.p + (inside ? y0 + y : 0) * v.sy * esz;
        /* the output columns [xa, xb) whose pixels are in the image (all
         * of them unless the window was padded) */
        int64_t xa = mirror ? x0 + cw - v.w : -x0, xb = mirror ? x0 + cw : v.w - x0;
        xa = xa < 0 ? 0 : xa;
        xb = xb > cw ? cw : xb;
        if (!inside || xb < xa) xa = xb = cw;
        if (xa > 0) norm_fill(ni, out, c, y, 0, xa, chw);
        if (xb < cw) norm_fill(ni, out, c, y, xb, cw, chw);
        for (x = xa; x < xb; x += bp) {
            const int64_t np = min64(bp, xb - x), nv = np * c;
            const void *src;
            int64_t ch, j;
            if (!mirror && in_contig) src = row + (x0 + x) * v.sx * esz;
            else {
                /* pixels x .. x+np-1 of the output: mirrored, input pixels
                 * x0+cw-1-x down to x0+cw-x-np */
                norm_gather(row, v.sx, v.sc, esz, mirror ? x0 + cw - x - np : x0 + x, np, c, mirror, (char *)raw.b);
                src = raw.b;
            }
            if (chw) {
                /* planes: out[ch][y][x], strides of out's dimensions */
                const int64_t s0 = out->strides[0], s1 = out->strides[1], s2 = out->strides[2];
                char *o = op + (y * s1 + x * s2) * osz;
                k->norm(src, u8, res.f, 0, nv, ni->mean, ni->inv, ni->l, ni->shift);
                if (s2 == 1) k->planes(res.f, np, c, o, s0, ni->f16);
                else
                    for (ch = 0; ch < c; ch++)
                        for (j = 0; j < np; j++) {
                            float r = res.f[j * c + ch];
                            char *q = o + (ch * s0 + j * s2) * osz;
                            if (ni->f16) {
                                uint16_t h = f32_to_f16(r);
                                memcpy(q, &h, 2);
                            } else memcpy(q, &r, 4);
                        }
            } else {
                const int64_t s0 = out->strides[0], s1 = out->strides[1], s2 = out->strides[2];
                char *o = op + (y * s0 + x * s1) * osz;
                if ((c == 1 || s2 == 1) && (np <= 1 || s1 == c)) k->norm(src, u8, o, ni->f16, nv, ni->mean, ni->inv, ni->l, ni->shift);
                else {
                    k->norm(src, u8, res.b, ni->f16, nv, ni->mean, ni->inv, ni->l, ni->shift);
                    for (j = 0; j < np; j++)
                        for (ch = 0; ch < c; ch++)
                            memcpy(o + (j * s1 + ch * s2) * osz, res.b + (j * c + ch) * osz, (size_t)osz);
                }
            }
        }
    }
}

/* ---- imgproc.Normalize -------------------------------------------------- */

static dynop_result normalize_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    norm_inst *ni;
    dynop_result rc = norm_create_common("imgproc.Normalize", args, n, &ni);
    (void)user_data;
    if (rc != DYNOP_OK) return rc;
    *instance = ni;
    return DYNOP_OK;
}

static dynop_result normalize_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                    uint32_t nout) {
    const norm_inst *ni = (const norm_inst *)instance;
    dynop_result rc = norm_check_image("imgproc.Normalize", ni, in, nin, nout);
    if (rc != DYNOP_OK) return rc;
    out->dtype.code = DYNOP_DTYPE_FLOAT;
    out->dtype.bits = ni->f16 ? 16 : 32;
    out->dtype.lanes = 1;
    out->ndim = 3;
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = in->shape[2];
    return DYNOP_OK;
}

static dynop_result normalize_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                       const norm_kernels *k) {
    norm_image((const norm_inst *)instance, out, in, 0, 0, in->shape[1], in->shape[0], 0, 0, k);
    return DYNOP_OK;
}

static dynop_result normalize_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout,
                                         const dynop_tensor *in, uint32_t nin) {
    (void)nout;
    (void)nin;
    return normalize_run_with(instance, out, in, &norm_scalar);
}

#if IMGPROC_X86
static dynop_result normalize_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                       uint32_t nin) {
    (void)nout;
    (void)nin;
    return normalize_run_with(instance, out, in, &norm_avx2);
}

static dynop_result normalize_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout,
                                         const dynop_tensor *in, uint32_t nin) {
    (void)nout;
    (void)nin;
    return normalize_run_with(instance, out, in, &norm_avx512);
}
#endif

/* ---- imgproc.CropMirrorNormalize ---------------------------------------- */

static dynop_result cmn_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    static const char op[] = "imgproc.CropMirrorNormalize";
    const dynop_arg *a;
    double px = 0.5, py = 0.5;
    int64_t cw = 0, ch = 0;
    norm_inst *ni;
    dynop_result rc;
    (void)user_data;
    arg_int(args, n, "crop_w", &cw);
    arg_int(args, n, "crop_h", &ch);
    arg_float(args, n, "crop_pos_x", &px);
    arg_float(args, n, "crop_pos_y", &py);
    if (cw < 0 || ch < 0)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: crop_w (%lld) and crop_h (%lld) must not be negative", op,
                     (long long)cw, (long long)ch);
    if (!(px >= 0 && px <= 1) || !(py >= 0 && py <= 1))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: crop_pos_x (%g) and crop_pos_y (%g) must be in [0, 1]", op, px,
                     py);
    rc = norm_create_common(op, args, n, &ni);
    if (rc != DYNOP_OK) return rc;
    ni->crop_w = cw;
    ni->crop_h = ch;
    ni->pos_x = (float)px;
    ni->pos_y = (float)py;
    a = find_arg(args, n, "mirror");
    ni->mirror = a != NULL && a->type == DYNOP_ARG_BOOL && *(const int32_t *)a->values != 0;
    a = find_arg(args, n, "out_of_bounds_policy");
    if (a != NULL && a->type == DYNOP_ARG_STRING) {
        const char *s = *(const char *const *)a->values;
        if (s != NULL && strcmp(s, "pad") == 0) ni->pad = 1;
        else if (s == NULL || strcmp(s, "error") != 0) {
            norm_destroy(ni);
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: out_of_bounds_policy %s (want \"error\" or \"pad\")", op,
                         s != NULL ? s : "NULL");
        }
    }
    a = find_arg(args, n, "fill_values");
    ni->nfill = a != NULL && a->type == DYNOP_ARG_FLOAT_LIST ? (int64_t)a->count : 0;
    if (ni->nfill > NORM_MAX_CHANNELS || (ni->nfill > 1 && ni->p > 1 && ni->nfill != ni->p)) {
        const long long nf = (long long)ni->nfill, p = (long long)ni->p;
        norm_destroy(ni);
        if (nf > NORM_MAX_CHANNELS)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: fill_values has %lld values (at most %d, one per channel)",
                         op, nf, NORM_MAX_CHANNELS);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "%s: fill_values has %lld values and mean/std %lld; give one per channel or one for all", op, nf, p);
    }
    ni->fill = (float *)malloc((size_t)(ni->nfill > 0 ? ni->nfill : 1) * sizeof(float));
    ni->fill16 = (uint16_t *)malloc((size_t)(ni->nfill > 0 ? ni->nfill : 1) * sizeof(uint16_t));
    if (ni->fill == NULL || ni->fill16 == NULL) {
        norm_destroy(ni);
        return failf(DYNOP_ERROR_NO_MEMORY, "%s: out of memory", op);
    }
    if (ni->nfill == 0) {
        ni->nfill = 1;
        ni->fill[0] = 0;
    } else {
        int64_t k;
        for (k = 0; k < ni->nfill; k++) ni->fill[k] = (float)((const double *)a->values)[k];
    }
    {
        int64_t k;
        for (k = 0; k < ni->nfill; k++) ni->fill16[k] = f32_to_f16(ni->fill[k]);
    }
    a = find_arg(args, n, "output_layout");
    ni->chw = 1;
    if (a != NULL && a->type == DYNOP_ARG_STRING) {
        const char *s = *(const char *const *)a->values;
        if (s != NULL && strcmp(s, "HWC") == 0) ni->chw = 0;
        else if (s == NULL || strcmp(s, "CHW") != 0) {
            norm_destroy(ni);
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, "%s: output_layout %s%s%s (want \"CHW\" or \"HWC\")", op,
                         s != NULL ? "\"" : "", s != NULL ? s : "NULL", s != NULL ? "\"" : "");
        }
    }
    *instance = ni;
    return DYNOP_OK;
}

/* cmn_anchor is DALI's CalculateAnchor: roundf(pos * (float)(size - crop)),
 * the product in float32, rounded half away from zero; negative where the
 * window is larger than the image (padded). */
static int64_t cmn_anchor(float pos, int64_t size, int64_t crop) {
    const int64_t d = size - crop;
    float a = pos * (float)d, m = a < 0 ? -a : a;
    int64_t i = (int64_t)m;
    if (m - (float)i >= 0.5f) i++;
    if (a < 0) i = -i;
    return d >= 0 ? (i < 0 ? 0 : i > d ? d : i) : (i > 0 ? 0 : i < d ? d : i);
}

/* cmn_window returns the crop window of an image of h x w. */
static dynop_result cmn_window(const norm_inst *ni, const dynop_tensor *in, int64_t *x0, int64_t *y0, int64_t *cw,
                               int64_t *chh) {
    int64_t h = in->shape[0], w = in->shape[1];
    *cw = ni->crop_w != 0 ? ni->crop_w : w;
    *chh = ni->crop_h != 0 ? ni->crop_h : h;
    if (!ni->pad && (*cw > w || *chh > h))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "imgproc.CropMirrorNormalize: the crop window %lldx%lld (crop_w x crop_h) is larger than the "
                     "%lldx%lld image (width x height); out_of_bounds_policy \"pad\" pads it",
                     (long long)*cw, (long long)*chh, (long long)w, (long long)h);
    *x0 = cmn_anchor(ni->pos_x, w, *cw);
    *y0 = cmn_anchor(ni->pos_y, h, *chh);
    return DYNOP_OK;
}

static dynop_result cmn_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                              uint32_t nout) {
    const norm_inst *ni = (const norm_inst *)instance;
    int64_t x0 = 0, y0 = 0, cw = 0, chh = 0;
    dynop_result rc = norm_check_image("imgproc.CropMirrorNormalize", ni, in, nin, nout);
    if (rc != DYNOP_OK) return rc;
    if (ni->nfill > 1 && in->shape[2] != ni->nfill)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "imgproc.CropMirrorNormalize: fill_values has %lld values, the image %lld channels",
                     (long long)ni->nfill, (long long)in->shape[2]);
    if ((rc = cmn_window(ni, in, &x0, &y0, &cw, &chh)) != DYNOP_OK) return rc;
    out->dtype.code = DYNOP_DTYPE_FLOAT;
    out->dtype.bits = ni->f16 ? 16 : 32;
    out->dtype.lanes = 1;
    out->ndim = 3;
    if (ni->chw) {
        out->shape[0] = in->shape[2];
        out->shape[1] = chh;
        out->shape[2] = cw;
    } else {
        out->shape[0] = chh;
        out->shape[1] = cw;
        out->shape[2] = in->shape[2];
    }
    return DYNOP_OK;
}

static dynop_result cmn_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                 const norm_kernels *k) {
    const norm_inst *ni = (const norm_inst *)instance;
    int64_t x0 = 0, y0 = 0, cw = 0, chh = 0;
    dynop_result rc = cmn_window(ni, in, &x0, &y0, &cw, &chh);
    if (rc != DYNOP_OK) return rc;
    norm_image(ni, out, in, x0, y0, cw, chh, ni->mirror, ni->chw, k);
    return DYNOP_OK;
}

static dynop_result cmn_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return cmn_run_with(instance, out, in, &norm_scalar);
}

#if IMGPROC_X86
static dynop_result cmn_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                 uint32_t nin) {
    (void)nout;
    (void)nin;
    return cmn_run_with(instance, out, in, &norm_avx2);
}

static dynop_result cmn_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return cmn_run_with(instance, out, in, &norm_avx512);
}
#endif

/* ---- schemas -------------------------------------------------------------- */

/* The variants: avx2 needs F16C besides AVX2. */
#if IMGPROC_X86
#define CONVERT_VARIANTS(op)                                                                                           \
    DYNOP_VARIANT("avx512", IMGPROC_AVX512_FEATURES, op##_run_avx512),                                                 \
        DYNOP_VARIANT("avx2", CONVERT_AVX2_FEATURES, op##_run_avx2), DYNOP_VARIANT("scalar", 0, op##_run_scalar)
#else
#define CONVERT_VARIANTS(op) DYNOP_VARIANT("scalar", 0, op##_run_scalar)
#endif

static const dynop_variant cast_variants[] = {CONVERT_VARIANTS(cast)};
static const dynop_variant normalize_variants[] = {CONVERT_VARIANTS(normalize)};
static const dynop_variant cmn_variants[] = {CONVERT_VARIANTS(cmn)};

#define CAST_DTYPES "uint8,int16,uint16,int32,float16,float32"
#define CAST_DTYPES_JSON "[\"uint8\", \"int16\", \"uint16\", \"int32\", \"float16\", \"float32\"]"

static const dynop_op_input cast_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "input", "A tensor of any shape and strides.", CAST_DTYPES, NULL, 0, NULL},
};
static const dynop_op_output cast_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "output", "The input converted to dtype, of the input's shape.", NULL, NULL, "dtype",
     "input", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg cast_args[] = {
    {DYNOP_OP_ARG_HEADER, "dtype", "The output's dtype.", DYNOP_ARG_DTYPE, DYNOP_ARG_REQUIRED, 0, 0, NULL,
     CAST_DTYPES_JSON, NULL},
};
static const dynop_op_schema cast_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Cast",
    "Converts a tensor to another dtype: floats to integers rounded to nearest even and saturated (NaN to 0), "
    "integers saturated, float32 to float16 rounded to nearest even.",
    "cpu",
    1, 0, cast_inputs,
    1, cast_outputs,
    1, cast_args,
};
static const dynop_operator cast_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Cast", "cpu", NULL, cast_create, cast_setup, cast_destroy, cast_variants,
                                  DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_input norm_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 1 to 64 channels.", "uint8,float32", "HWC", 3, NULL},
};

#define NORM_COMMON_ARGS                                                                                               \
    {DYNOP_OP_ARG_HEADER, "scale", "The factor the normalized value is multiplied by.", DYNOP_ARG_FLOAT, 0, 0, 0,      \
     "1.0", NULL, NULL},                                                                                               \
        {DYNOP_OP_ARG_HEADER, "shift", "The value added last.", DYNOP_ARG_FLOAT, 0, 0, 0, "0.0", NULL, NULL},          \
        {DYNOP_OP_ARG_HEADER, "dtype", "The output's dtype.", DYNOP_ARG_DTYPE, 0, 0, 0, "\"float32\"",                 \
         "[\"float32\", \"float16\"]", NULL }

static const dynop_op_output normalize_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "normalized", "((x - mean) * (scale / std)) + shift per channel, of the input's shape.",
     "HWC", NULL, "dtype", NULL, 3, NULL, 0},
};
static const dynop_op_arg normalize_args[] = {
    {DYNOP_OP_ARG_HEADER, "mean", "The mean subtracted: one value per channel, or one for all.", DYNOP_ARG_FLOAT_LIST,
     DYNOP_ARG_REQUIRED, 0, 0, NULL, NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "std", "The standard deviation divided by, positive: one per channel, or one for all.",
     DYNOP_ARG_FLOAT_LIST, DYNOP_ARG_REQUIRED | DYNOP_ARG_HAS_MIN | DYNOP_ARG_MIN_EXCLUSIVE, 0, 0, NULL, NULL, NULL},
    NORM_COMMON_ARGS,
};
static const dynop_op_schema normalize_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Normalize",
    "Normalizes images per channel: ((x - mean) * (scale / std)) + shift, as float32 or float16.",
    "cpu",
    1, 0, norm_inputs,
    1, normalize_outputs,
    5, normalize_args,
};
static const dynop_operator normalize_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Normalize", "cpu", NULL, normalize_create, normalize_setup, norm_destroy,
                                  normalize_variants, DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_output cmn_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "output", "The window, mirrored if asked, normalized, as CHW or HWC.", NULL, NULL, "dtype",
     NULL, 3, NULL, 0},
};
static const dynop_op_arg cmn_args[] = {
    {DYNOP_OP_ARG_HEADER, "crop_w", "The window's width; 0 for the image's.", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN, 0, 0,
     "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "crop_h", "The window's height; 0 for the image's.", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN, 0, 0,
     "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "crop_pos_x",
     "The window's horizontal position: x0 = round((width - crop_w) * crop_pos_x); 0.5 centres it.", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 1, "0.5", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "crop_pos_y",
     "The window's vertical position: y0 = round((height - crop_h) * crop_pos_y); 0.5 centres it.", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 1, "0.5", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "mirror", "Flip the window horizontally.", DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "mean", "The mean subtracted: one value per channel, or one for all.", DYNOP_ARG_FLOAT_LIST, 0,
     0, 0, "[0.0]", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "std", "The standard deviation divided by, positive: one per channel, or one for all.",
     DYNOP_ARG_FLOAT_LIST, DYNOP_ARG_HAS_MIN | DYNOP_ARG_MIN_EXCLUSIVE, 0, 0, "[1.0]", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "out_of_bounds_policy",
     "A window larger than the image: \"error\", or \"pad\" with fill_values where it is outside.",
     DYNOP_ARG_STRING, 0, 0, 0, "\"error\"", "[\"error\", \"pad\"]", NULL},
    {DYNOP_OP_ARG_HEADER, "fill_values",
     "The output values of padded pixels (not normalized): one per channel, or one for all.", DYNOP_ARG_FLOAT_LIST, 0,
     0, 0, "[0.0]", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "output_layout", "The output's layout: planes (CHW, as DALI) or interleaved (HWC).",
     DYNOP_ARG_STRING, 0, 0, 0, "\"CHW\"", "[\"CHW\", \"HWC\"]", NULL},
    NORM_COMMON_ARGS,
};
static const dynop_op_schema cmn_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.CropMirrorNormalize",
    "Crops a window of images, mirrors it horizontally if asked and normalizes it per channel, "
    "((x - mean) * (scale / std)) + shift, into CHW or HWC float32 or float16 (DALI's CropMirrorNormalize).",
    "cpu",
    1, 0, norm_inputs,
    1, cmn_outputs,
    13, cmn_args,
};
static const dynop_operator cmn_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.CropMirrorNormalize", "cpu", NULL, cmn_create, cmn_setup, norm_destroy,
                                  cmn_variants, DYNOP_OPERATOR_CONCURRENT);
