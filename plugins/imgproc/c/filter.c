/*
 * filter.c — imgproc.UnsharpMask, included by imgproc.c (one translation
 * unit: it uses imgproc.c's helpers and GaussianBlur's kernels).
 *
 * imgproc.UnsharpMask (sigma, amount = 1, threshold = 0): sharpens HWC
 * images of 1, 3 or 4 channels, uint8 or float32, by adding amount times
 * the difference between each element p and its blur b:
 *   b        imgproc.GaussianBlur of the image with the same sigma (radius
 *            ceil(3 sigma)), bit for bit its output: on uint8 the rounded
 *            uint8 blur, on float32 the float32 blur;
 *   float32  df = p - b; out = p + amount*df (the product rounded) where
 *            |df| > threshold, else p (a NaN df keeps p);
 *   uint8    df = (float)(p - b) (exact); v = (float)p + amount*df, the
 *            product rounded, clamped to [0, 255]; out = (int)(v + 0.5f)
 *            where |df| > threshold, else p;
 * amount and threshold are rounded to float32 once; amount is finite and
 * at least 0, threshold at least 0 (in the input's units: levels on
 * uint8). Borders replicate the edge, as GaussianBlur's.
 *
 * The blur runs GaussianBlur's row functions (its scratch layout and
 * ring of horizontal rows); each blurred row is then combined with the
 * input row by a step of its own in each variant, scalar, AVX2 and
 * AVX-512, which compute the same bytes.
 */

typedef struct {
    blur_inst *b;
    float amount, threshold;
} usm_inst;

static void usm_destroy(void *instance) {
    usm_inst *u = (usm_inst *)instance;
    if (u == NULL) return;
    blur_destroy(u->b);
    free(u);
}

static dynop_result usm_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    double sigma, amount = 1.0, threshold = 0.0;
    usm_inst *u;
    dynop_result rc;
    (void)user_data;
    if (!arg_float(args, n, "sigma", &sigma)) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.UnsharpMask: sigma is required");
    arg_float(args, n, "amount", &amount);
    arg_float(args, n, "threshold", &threshold);
    if (!(amount >= 0.0 && amount <= FLT_MAX))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.UnsharpMask: amount must be a finite number at least 0, got %g",
                     amount);
    if (!(threshold >= 0.0))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.UnsharpMask: threshold must be at least 0, got %g", threshold);
    u = (usm_inst *)calloc(1, sizeof *u);
    if (u == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "imgproc.UnsharpMask: out of memory");
    rc = blur_make("imgproc.UnsharpMask", sigma, 0, &u->b);
    if (rc != DYNOP_OK) {
        free(u);
        return rc;
    }
    u->amount = (float)amount;
    u->threshold = threshold > FLT_MAX ? (float)HUGE_VAL : (float)threshold;
    *instance = u;
    return DYNOP_OK;
}

static dynop_result usm_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                              uint32_t nout) {
    const usm_inst *u = (const usm_inst *)instance;
    dynop_result rc = check_image("imgproc.UnsharpMask", in, nin, nout, 0);
    blur_plan pl;
    int32_t d;
    if (rc != DYNOP_OK) return rc;
    out->dtype = in->dtype;
    out->ndim = 3;
    for (d = 0; d < 3; d++) out->shape[d] = in->shape[d];
    if (!blur_plan_of(u->b, in->dtype.code == DYNOP_DTYPE_UINT, in->shape[0], in->shape[1], in->shape[2],
                      !tensor_rows_contig(in), &pl))
        return no_memory("imgproc.UnsharpMask", SIZE_MAX);
    return set_scratch(&out[nout], pl.size, "imgproc.UnsharpMask");
}

/* The combine steps: k[0] is amount, k[1] threshold. */
static inline uint8_t usm8_one(uint8_t p, uint8_t b, float a, float t) {
    float df = (float)((int)p - (int)b), ad = df < 0.0f ? -df : df;
    if (ad > t) {
        float m = a * df;
        float v = (float)p + m;
        v = v > 0.0f ? v : 0.0f;
        v = v < 255.0f ? v : 255.0f;
        return (uint8_t)(int)(v + 0.5f);
    }
    return p;
}

static inline float usmf_one(float p, float b, float a, float t) {
    float df = p - b, ad = df < 0.0f ? -df : df;
    if (ad > t) {
        float m = a * df;
        return p + m;
    }
    return p;
}

static void usm8_scalar(const uint8_t *p, const uint8_t *b, uint8_t *d, int64_t n, const float *k) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = usm8_one(p[e], b[e], k[0], k[1]);
}

static void usmf_scalar(const float *p, const float *b, float *d, int64_t n, const float *k) {
    int64_t e;
    for (e = 0; e < n; e++) d[e] = usmf_one(p[e], b[e], k[0], k[1]);
}

static dynop_result usm_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in,
                                 const blur_kernels *kn, void (*f8)(const uint8_t *, const uint8_t *, uint8_t *, int64_t, const float *),
                                 void (*ff)(const float *, const float *, float *, int64_t, const float *)) {
    const usm_inst *u = (const usm_inst *)instance;
    blur_post post;
    post.u8 = f8;
    post.f32 = ff;
    post.k[0] = u->amount;
    post.k[1] = u->threshold;
    return blur_run_with(u->b, "imgproc.UnsharpMask", out, in, kn, &post);
}

static dynop_result usm_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return usm_run_with(instance, out, in, &blur_scalar, usm8_scalar, usmf_scalar);
}

#if IMGPROC_X86
/* 8 uint8 elements as int32 lanes to their sharpened values. */
IMGPROC_AVX2 static inline __m256i usm8x8_avx2(__m256i p, __m256i b, __m256 a, __m256 t) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 df = _mm256_cvtepi32_ps(_mm256_sub_epi32(p, b));
    __m256 m = _mm256_cmp_ps(_mm256_andnot_ps(sign, df), t, _CMP_GT_OQ);
    __m256 v = _mm256_add_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(a, df));
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    v = _mm256_add_ps(v, _mm256_set1_ps(0.5f));
    return _mm256_blendv_epi8(p, _mm256_cvttps_epi32(v), _mm256_castps_si256(m));
}

IMGPROC_AVX2 static void usm8_avx2(const uint8_t *p, const uint8_t *b, uint8_t *d, int64_t n, const float *k) {
    const __m256 a = _mm256_set1_ps(k[0]), t = _mm256_set1_ps(k[1]);
    int64_t e = 0;
    for (; e + 32 <= n; e += 32) {
        __m256i r[4];
        int j;
        for (j = 0; j < 4; j++)
            r[j] = usm8x8_avx2(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p + e + 8 * j))),
                               _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + e + 8 * j))), a, t);
        ST256(d + e, pack4x8_avx2(r[0], r[1], r[2], r[3]));
    }
    for (; e + 8 <= n; e += 8) {
        __m256i r = usm8x8_avx2(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p + e))),
                                _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(b + e))), a, t);
        __m128i v = _mm256_castsi256_si128(pack4x8_avx2(r, r, r, r));
        _mm_storel_epi64((__m128i *)(void *)(d + e), v);
    }
    for (; e < n; e++) d[e] = usm8_one(p[e], b[e], k[0], k[1]);
}

IMGPROC_AVX2 static void usmf_avx2(const float *p, const float *b, float *d, int64_t n, const float *k) {
    const __m256 a = _mm256_set1_ps(k[0]), t = _mm256_set1_ps(k[1]), sign = _mm256_set1_ps(-0.0f);
    int64_t e = 0;
    for (; e < n; e += 8) {
        __m256i lanes = tail_mask_avx2(n - e < 8 ? n - e : 8);
        __m256 x = n - e >= 8 ? _mm256_loadu_ps(p + e) : _mm256_maskload_ps(p + e, lanes);
        __m256 y = n - e >= 8 ? _mm256_loadu_ps(b + e) : _mm256_maskload_ps(b + e, lanes);
        __m256 df = _mm256_sub_ps(x, y);
        __m256 m = _mm256_cmp_ps(_mm256_andnot_ps(sign, df), t, _CMP_GT_OQ);
        __m256 v = _mm256_blendv_ps(x, _mm256_add_ps(x, _mm256_mul_ps(a, df)), m);
        if (n - e >= 8) _mm256_storeu_ps(d + e, v);
        else _mm256_maskstore_ps(d + e, lanes, v);
    }
}

IMGPROC_AVX512 static inline __m512i usm8x16_avx512(__m512i p, __m512i b, __m512 a, __m512 t) {
    __m512 df = _mm512_cvtepi32_ps(_mm512_sub_epi32(p, b));
    __mmask16 m = _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN),
                                                                              _mm512_castps_si512(df))),
                                     t, _CMP_GT_OQ);
    __m512 v = _mm512_add_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(a, df));
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
    v = _mm512_add_ps(v, _mm512_set1_ps(0.5f));
    return _mm512_mask_blend_epi32(m, p, _mm512_cvttps_epi32(v));
}

IMGPROC_AVX512 static void usm8_avx512(const uint8_t *p, const uint8_t *b, uint8_t *d, int64_t n, const float *k) {
    const __m512 a = _mm512_set1_ps(k[0]), t = _mm512_set1_ps(k[1]);
    int64_t e = 0;
    for (; e + 16 <= n; e += 16)
        ST128(d + e, _mm512_cvtepi32_epi8(usm8x16_avx512(_mm512_cvtepu8_epi32(LD128(p + e)),
                                                         _mm512_cvtepu8_epi32(LD128(b + e)), a, t)));
    if (e < n) {
        __mmask16 m = (__mmask16)((1u << (n - e)) - 1);
        __m512i x = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8((__mmask64)m, p + e)));
        __m512i y = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8((__mmask64)m, b + e)));
        _mm512_mask_cvtepi32_storeu_epi8(d + e, m, usm8x16_avx512(x, y, a, t));
    }
}

IMGPROC_AVX512 static void usmf_avx512(const float *p, const float *b, float *d, int64_t n, const float *k) {
    const __m512 a = _mm512_set1_ps(k[0]), t = _mm512_set1_ps(k[1]);
    const __m512i abs = _mm512_set1_epi32(INT32_MAX);
    int64_t e = 0;
    for (; e < n; e += 16) {
        __mmask16 lanes = n - e >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - e)) - 1);
        __m512 x = _mm512_maskz_loadu_ps(lanes, p + e), y = _mm512_maskz_loadu_ps(lanes, b + e);
        __m512 df = _mm512_sub_ps(x, y);
        __mmask16 m =
            _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(df), abs)), t, _CMP_GT_OQ);
        _mm512_mask_storeu_ps(d + e, lanes, _mm512_mask_blend_ps(m, x, _mm512_add_ps(x, _mm512_mul_ps(a, df))));
    }
}

static dynop_result usm_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                 uint32_t nin) {
    (void)nout;
    (void)nin;
    return usm_run_with(instance, out, in, &blur_avx2, usm8_avx2, usmf_avx2);
}

static dynop_result usm_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                   uint32_t nin) {
    (void)nout;
    (void)nin;
    return usm_run_with(instance, out, in, &blur_avx512, usm8_avx512, usmf_avx512);
}
#endif /* IMGPROC_X86 */

static const dynop_variant usm_variants[] = {IMGPROC_VARIANTS(usm)};

static const dynop_op_input usm_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 1, 3 or 4 channels.", "uint8,float32", "HWC", 3, "1,3,4"},
};
static const dynop_op_output usm_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "sharpened", "The sharpened images, of the input's shape and dtype.", "HWC", NULL, NULL,
     "images", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg usm_args[] = {
    {DYNOP_OP_ARG_HEADER, "sigma", "Standard deviation of the Gaussian blur in pixels, positive (as GaussianBlur's).",
     DYNOP_ARG_FLOAT, DYNOP_ARG_REQUIRED | DYNOP_ARG_HAS_MIN | DYNOP_ARG_MIN_EXCLUSIVE | DYNOP_ARG_HAS_MAX, 0,
     BLUR_MAX_SIGMA, NULL, NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "amount", "How much of the difference from the blur to add: out = in + amount (in - blur).",
     DYNOP_ARG_FLOAT, DYNOP_ARG_HAS_MIN, 0, 0, "1.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "threshold",
     "Elements whose difference from the blur is at most this (in the input's units) are left as they are.",
     DYNOP_ARG_FLOAT, DYNOP_ARG_HAS_MIN, 0, 0, "0.0", NULL, NULL},
};
static const dynop_op_schema usm_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.UnsharpMask",
    "Sharpens images: adds amount times the difference from their Gaussian blur where it exceeds threshold.",
    "cpu",
    1, 0, usm_inputs,
    1, usm_outputs,
    3, usm_args,
};
static const dynop_operator usm_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.UnsharpMask", "cpu", NULL, usm_create, usm_setup, usm_destroy, usm_variants,
                                  DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT);
