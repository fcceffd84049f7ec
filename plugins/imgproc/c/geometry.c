/*
 * geometry.c — imgproc.Rotate. imgproc.c includes this file (the library
 * is one translation unit) and lists rotate_schema and rotate_op in its
 * arrays; it uses imgproc.c's helpers and compiles only there.
 *
 * imgproc.Rotate (angle, fill, keep_size) rotates HWC images, uint8 or
 * float32, with 1, 3 or 4 channels, counter-clockwise by angle degrees
 * about the image centre, as cv2.getRotationMatrix2D and DALI's rotate
 * do (x to the right, y down: a positive angle turns the top edge to the
 * left).
 *
 * Angle: a = angle mod 360 in [0, 360) (exact: the remainder of a binary
 * long division by 360, with 360 added to a negative remainder).
 * (alpha, beta) = (cos, sin) of a, computed by the plugin in double
 * (no libm): a is reduced exactly to t in [0, 45] degrees by quadrant and
 * complement, then x = t * (pi/180) and Taylor series; at multiples of 90
 * they are exactly 0 and +-1.
 *
 * Output size (H', W'): keep_size gives H x W. Otherwise DALI's rule:
 *   W' = ceil(|alpha| W + |beta| H - 0.01), H' = ceil(|alpha| H + |beta| W - 0.01)
 * then each is made one larger where its parity differs from the source
 * side it mostly comes from: W' takes W's parity and H' H's where a mod
 * 180 is within 45 degrees of 0 or 180 (inclusive), else W' takes H's and
 * H' W's. A multiple of 90 thus gives W x H or H x W exactly.
 *
 * Lossless rotations: a in {0, 90, 180, 270} where the output has the
 * rotated size (keep_size false, or a 0 or 180, or a square image) moves
 * whole pixels (bit-identical to cv2.rotate's ROTATE_90_COUNTERCLOCKWISE,
 * ROTATE_180, ROTATE_90_CLOCKWISE):
 *   90   out(y, x) = in(x, W-1-y)
 *   180  out(y, x) = in(H-1-y, W-1-x)
 *   270  out(y, x) = in(H-1-x, y)
 * Every other case is bilinear, with pixel centres at integer
 * coordinates: pixel (x, y) covers [x-0.5, x+0.5] x [y-0.5, y+0.5], and
 * the centres are c = ((W-1)/2, (H-1)/2) and c' = ((W'-1)/2, (H'-1)/2).
 * The forward map is cv2.getRotationMatrix2D(c, a, 1) moved to the new
 * canvas,
 *   M = [alpha, beta,  (1-alpha) cx - beta cy + (W'-W)/2;
 *        -beta, alpha, beta cx + (1-alpha) cy + (H'-H)/2]
 * and each output pixel reads the source at A (x, y, 1), A the inverse of
 * M computed as cv2.warpAffine computes it (D = 1/(M0 M4 - M1 M3);
 * A0 = M4 D, A1 = M1 (-D), A3 = M3 (-D), A4 = M0 D, A2 = -A0 M2 - A1 M5,
 * A5 = -A3 M2 - A4 M5, all in double). Coordinates are OpenCV's fixed
 * point, 5 fraction bits (INTER_BITS), rne rounding half to even:
 *   X = (rne((A1 y + A2) 1024) + 16 + rne(A0 x 1024)) >> 5  (floor)
 *   Y = (rne((A4 y + A5) 1024) + 16 + rne(A3 x 1024)) >> 5
 *   ix = X >> 5, fx = X & 31, iy = Y >> 5, fy = Y & 31.
 * q(j, i) is source pixel (row j, column i) if it lies in the image, the
 * fill value otherwise. If none of the four neighbours
 * (iy..iy+1, ix..ix+1) lies in the image the pixel is the fill value;
 * else, with W00 = (32-fx)(32-fy), W01 = fx(32-fy), W10 = (32-fx)fy,
 * W11 = fx fy (summing to 1024):
 *   uint8    out = (W00 q00 + W01 q01 + W10 q10 + W11 q11 + 512) >> 10,
 *            fill = clamp(rne(fill), 0, 255)
 *   float32  w = (float)W / 1024 (exact), out = ((q00 w00 + q01 w01) +
 *            q10 w10) + q11 w11, each product and sum rounded to float.
 * This is cv2.warpAffine(INTER_LINEAR, BORDER_CONSTANT) bit for bit,
 * given the same alpha and beta.
 *
 * Variants: the scalar reference; avx2 and avx512 compute 8 or 16
 * coordinates at once from the per-row base and per-column tables. Where
 * all four neighbours of every one of them lie in the image they
 * interpolate in SIMD: uint8 gathers whole pixels (4 bytes; 3-channel
 * pixels as the 4 bytes at 3x and at 3x+2, one channel as the 4 bytes
 * from min(x, W-4), so that no load leaves the row) and blends each
 * channel's pairs with 16-bit multiply-adds; float32 gathers elements
 * (avx2 loads the 3 channels of a pixel at once instead). Where none
 * lies in the image they copy the fill row; pixels in between, and the
 * row's tail, take the scalar pixel code. They need contiguous rows and
 * the source's offsets within int32; other tensors take the scalar code.
 * The lossless path is the same code in every variant.
 */

#define ROTATE_MAX ((int64_t)1 << 18)

typedef struct {
    double angle;    /* normalised, [0, 360) */
    int quarter;     /* 0..3 if angle is 90*quarter exactly, else -1 */
    double cos_a, sin_a;
    int keep_size;
    uint32_t nfill;  /* 1 to 4 */
    double fill[4];
} rotate_inst;

/* rot_mod360 returns a mod 360 in [0, 360): the remainder of |a| is exact
 * (each step subtracts 360*2^k from a value below 2*360*2^k), and a
 * negative a's remainder r becomes 360 - r (rounded; 0 if that is 360). */
static double rot_mod360(double a) {
    double m = a < 0 ? -a : a, s = 360.0;
    while (s <= m / 2.0) s *= 2.0;
    for (; s >= 360.0; s /= 2.0)
        if (m >= s) m -= s;
    if (a < 0 && m != 0.0) {
        m = 360.0 - m;
        if (m >= 360.0) m = 0.0;
    }
    return m;
}

/* rot_sincos_small: sin and cos of t degrees, 0 <= t <= 45, by Taylor
 * series in x = t * (pi/180) (|x| <= pi/4: the terms left out are below
 * 1e-21). */
static void rot_sincos_small(double t, double *s, double *c) {
    const double x = t * (3.14159265358979323846 / 180.0), x2 = x * x;
    double ps = 1.0 / 6402373705728000.0, pc = 1.0 / 2432902008176640000.0; /* 1/18!, 1/20! */
    ps = 1.0 / 121645100408832000.0 - x2 * ps;                               /* 1/19! */
    ps = 1.0 / 355687428096000.0 - x2 * ps;                                  /* 1/17! */
    ps = 1.0 / 1307674368000.0 - x2 * ps;                                    /* 1/15! */
    ps = 1.0 / 6227020800.0 - x2 * ps;                                       /* 1/13! */
    ps = 1.0 / 39916800.0 - x2 * ps;                                         /* 1/11! */
    ps = 1.0 / 362880.0 - x2 * ps;                                           /* 1/9! */
    ps = 1.0 / 5040.0 - x2 * ps;                                             /* 1/7! */
    ps = 1.0 / 120.0 - x2 * ps;                                              /* 1/5! */
    ps = 1.0 / 6.0 - x2 * ps;                                                /* 1/3! */
    *s = x - x * (x2 * ps);
    pc = 1.0 / 6402373705728000.0 - x2 * pc; /* 1/18! */
    pc = 1.0 / 20922789888000.0 - x2 * pc;   /* 1/16! */
    pc = 1.0 / 87178291200.0 - x2 * pc;      /* 1/14! */
    pc = 1.0 / 479001600.0 - x2 * pc;        /* 1/12! */
    pc = 1.0 / 3628800.0 - x2 * pc;          /* 1/10! */
    pc = 1.0 / 40320.0 - x2 * pc;            /* 1/8! */
    pc = 1.0 / 720.0 - x2 * pc;              /* 1/6! */
    pc = 1.0 / 24.0 - x2 * pc;               /* 1/4! */
    pc = 0.5 - x2 * pc;                      /* 1/2! */
    *c = 1.0 - x2 * pc;
}

/* rot_sincos: cos and sin of a in [0, 360) degrees; exact at multiples
 * of 90. */
static void rot_sincos(double a, int *quarter, double *cos_a, double *sin_a) {
    int q = a >= 270.0 ? 3 : a >= 180.0 ? 2 : a >= 90.0 ? 1 : 0;
    double t = a - 90.0 * q, s, c; /* exact: a and 90q are within a factor of 2 */
    *quarter = t == 0.0 ? q : -1;
    if (t == 0.0) {
        s = 0.0;
        c = 1.0;
    } else if (t <= 45.0) {
        rot_sincos_small(t, &s, &c);
    } else {
        rot_sincos_small(90.0 - t, &c, &s); /* 90 - t is exact */
    }
    switch (q) {
    case 0: *cos_a = c, *sin_a = s; break;
    case 1: *cos_a = t == 0.0 ? 0.0 : -s, *sin_a = c; break;
    case 2: *cos_a = -c, *sin_a = t == 0.0 ? 0.0 : -s; break;
    default: *cos_a = t == 0.0 ? 0.0 : s, *sin_a = -c; break;
    }
}

static int rot_finite(double v) { return v == v && v - v == 0.0; }

static dynop_result rotate_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    rotate_inst k, *r;
    const dynop_arg *a;
    double angle = 0.0;
    uint32_t i;
    (void)user_data;
    memset(&k, 0, sizeof k);
    if (!arg_float(args, n, "angle", &angle))
        return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Rotate: give angle, in degrees counter-clockwise");
    if (!rot_finite(angle))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Rotate: angle must be a finite number of degrees, got %g",
                     angle);
    k.angle = rot_mod360(angle);
    rot_sincos(k.angle, &k.quarter, &k.cos_a, &k.sin_a);
    a = find_arg(args, n, "keep_size");
    k.keep_size = a != NULL && a->type == DYNOP_ARG_BOOL && *(const int32_t *)a->values != 0;
    k.nfill = 1;
    for (i = 0; i < n; i++) /* find_arg passes over an empty list */
        if (args[i].name != NULL && strcmp(args[i].name, "fill") == 0 && args[i].count == 0 && args[i].given)
            return fail(DYNOP_ERROR_INVALID_ARGUMENT,
                        "imgproc.Rotate: fill takes 1 value, or one per channel (at most 4); got 0");
    a = find_arg(args, n, "fill");
    if (a != NULL) {
        if (a->type != DYNOP_ARG_FLOAT_LIST || a->count > 4)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                         "imgproc.Rotate: fill takes 1 value, or one per channel (at most 4); got %u",
                         (unsigned)a->count);
        k.nfill = a->count;
        for (i = 0; i < a->count; i++) {
            k.fill[i] = ((const double *)a->values)[i];
            if (!rot_finite(k.fill[i]))
                return failf(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Rotate: fill[%u] must be finite, got %g",
                             (unsigned)i, k.fill[i]);
        }
    }
    r = (rotate_inst *)malloc(sizeof *r);
    if (r == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "imgproc.Rotate: out of memory");
    *r = k;
    *instance = r;
    return DYNOP_OK;
}

static void rotate_destroy(void *instance) { free(instance); }

/* rot_ceil is ceil(v) for v < 2^62, 0 for v <= 0. */
static int64_t rot_ceil(double v) {
    int64_t i;
    if (!(v > 0.0)) return 0;
    i = (int64_t)v;
    return (double)i < v ? i + 1 : i;
}

/* rotate_size computes the output size of an H x W image. */
static void rotate_size(const rotate_inst *r, int64_t H, int64_t W, int64_t *oh, int64_t *ow) {
    double c = r->cos_a < 0 ? -r->cos_a : r->cos_a, s = r->sin_a < 0 ? -r->sin_a : r->sin_a;
    double m = r->angle >= 180.0 ? r->angle - 180.0 : r->angle;
    int own = m <= 45.0 || m >= 135.0;
    int64_t w, h;
    if (r->keep_size) {
        *oh = H;
        *ow = W;
        return;
    }
    w = rot_ceil(c * (double)W + s * (double)H - 0.01);
    h = rot_ceil(c * (double)H + s * (double)W - 0.01);
    if ((w & 1) != ((own ? W : H) & 1)) w++;
    if ((h & 1) != ((own ? H : W) & 1)) h++;
    *oh = h;
    *ow = w;
}

/* rotate_lossless: whether the rotation of an H x W image to oh x ow
 * moves whole pixels. */
static int rotate_lossless(const rotate_inst *r, int64_t H, int64_t W, int64_t oh, int64_t ow) {
    if (r->quarter < 0) return 0;
    return (r->quarter & 1) ? oh == W && ow == H : oh == H && ow == W;
}

/* rot_scratch_size: the bytes of a bilinear run's scratch (the column
 * tables and a row of fill pixels), 0 on overflow. */
static size_t rot_scratch_size(int64_t ow, int64_t C, size_t es, size_t *ad, size_t *bd, size_t *fill) {
    size_t size = 0;
    if (!carve(&size, ow, 4, ad) || !carve(&size, ow, 4, bd) || ow > INT64_MAX / 4 ||
        !carve(&size, ow * C, es, fill))
        return 0;
    return size;
}

static dynop_result rotate_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                 uint32_t nout) {
    const rotate_inst *r = (const rotate_inst *)instance;
    dynop_result rc = check_image("imgproc.Rotate", in, nin, nout, 0);
    int64_t oh, ow, C;
    size_t ad, bd, fill, size;
    if (rc != DYNOP_OK) return rc;
    C = in->shape[2];
    if (in->shape[0] > ROTATE_MAX || in->shape[1] > ROTATE_MAX)
        return failf(DYNOP_ERROR_UNSUPPORTED, "imgproc.Rotate: image %lldx%lld (width x height) is larger than %lld",
                     (long long)in->shape[1], (long long)in->shape[0], (long long)ROTATE_MAX);
    if (r->nfill != 1 && (int64_t)r->nfill != C)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     "imgproc.Rotate: fill has %u values for an image of %lld channels (want 1 or %lld)",
                     (unsigned)r->nfill, (long long)C, (long long)C);
    rotate_size(r, in->shape[0], in->shape[1], &oh, &ow);
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = oh;
    out->shape[1] = ow;
    out->shape[2] = C;
    size = rot_scratch_size(ow, C, is_u8(in->dtype) ? 1 : 4, &ad, &bd, &fill);
    if (size == 0 && ow > 0) return no_memory("imgproc.Rotate", SIZE_MAX);
    return set_scratch(&out[nout], size, "imgproc.Rotate");
}

/* ---- lossless quarter turns ---------------------------------------------- */

/* rot_quarter copies whole pixels for a quarter turn q (0 to 3), in tiles
 * of 64 x 64 output pixels so that reads down columns stay in cache. */
static void rot_quarter(const view *vi, const view *vo, int q, int u8) {
    const int64_t H = vi->h, W = vi->w, C = vi->c, T = 64;
    int64_t ty, tx, y, x, ch;
    for (ty = 0; ty < vo->h; ty += T)
        for (tx = 0; tx < vo->w; tx += T)
            for (y = ty; y < min64(ty + T, vo->h); y++)
                for (x = tx; x < min64(tx + T, vo->w); x++) {
                    int64_t sy, sx, si, di;
                    switch (q) {
                    case 0: sy = y, sx = x; break;
                    case 1: sy = x, sx = W - 1 - y; break;
                    case 2: sy = H - 1 - y, sx = W - 1 - x; break;
                    default: sy = H - 1 - x, sx = y; break;
                    }
                    si = sy * vi->sy + sx * vi->sx;
                    di = y * vo->sy + x * vo->sx;
                    if (u8)
                        for (ch = 0; ch < C; ch++) ((uint8_t *)vo->p)[di + ch * vo->sc] = ((const uint8_t *)vi->p)[si + ch * vi->sc];
                    else
                        for (ch = 0; ch < C; ch++)
                            ((uint32_t *)(void *)vo->p)[di + ch * vo->sc] =
                                ((const uint32_t *)(const void *)vi->p)[si + ch * vi->sc];
                }
}

/* ---- bilinear ------------------------------------------------------------ */

/* One run's constants, shared by the row kernels. */
typedef struct {
    const char *src; /* element (0, 0, 0) */
    int64_t H, W, C, sy, sx, sc;
    int u8;
    double A[6];           /* the inverse map */
    const int32_t *ad, *bd; /* per output column: rne(A0 x 1024), rne(A3 x 1024) */
    uint8_t f8[4];
    float ff[4];
    const char *fill_row; /* a contiguous output row of fill pixels */
} rot_run;

/* rot_rne rounds v (|v| < 2^31) to the nearest integer, ties to even,
 * as cvRound does: adding and subtracting 1.5 * 2^52 rounds in the FPU's
 * default mode. */
static int32_t rot_rne(double v) {
    const double magic = 6755399441055744.0;
    return (int32_t)((v + magic) - magic);
}

/* rot_asr is v >> n rounding down (floor(v / 2^n)), also for negative v. */
static inline int32_t rot_asr(int32_t v, int n) { return v >= 0 ? v >> n : ~(~v >> n); }

static void rot_row_base(const rot_run *k, int64_t y, int32_t *X0, int32_t *Y0) {
    *X0 = rot_rne((k->A[1] * (double)y + k->A[2]) * 1024.0) + 16;
    *Y0 = rot_rne((k->A[4] * (double)y + k->A[5]) * 1024.0) + 16;
}

/* rot_px writes output pixel x of a row whose base coordinates are X0,
 * Y0 at d, its channels dc elements apart: the reference. */
static void rot_px(const rot_run *k, int32_t X0, int32_t Y0, int64_t x, char *d, int64_t dc) {
    const int32_t X = rot_asr(X0 + k->ad[x], 5), Y = rot_asr(Y0 + k->bd[x], 5);
    const int32_t ix = rot_asr(X, 5), iy = rot_asr(Y, 5), fx = (int32_t)((uint32_t)X & 31u),
                  fy = (int32_t)((uint32_t)Y & 31u);
    const int64_t C = k->C;
    int in00, in01, in10, in11;
    int64_t o, ch;
    int32_t w00, w01, w10, w11;
    if (ix >= k->W || ix < -1 || iy >= k->H || iy < -1) {
        for (ch = 0; ch < C; ch++) {
            if (k->u8) ((uint8_t *)d)[ch * dc] = k->f8[ch];
            else ((float *)(void *)d)[ch * dc] = k->ff[ch];
        }
        return;
    }
    in00 = iy >= 0 && ix >= 0;
    in01 = iy >= 0 && ix + 1 < k->W;
    in10 = iy + 1 < k->H && ix >= 0;
    in11 = iy + 1 < k->H && ix + 1 < k->W;
    o = (int64_t)iy * k->sy + (int64_t)ix * k->sx;
    w00 = (32 - fx) * (32 - fy);
    w01 = fx * (32 - fy);
    w10 = (32 - fx) * fy;
    w11 = fx * fy;
    if (k->u8) {
        const uint8_t *s = (const uint8_t *)k->src;
        for (ch = 0; ch < C; ch++, o += k->sc) {
            const int32_t f = k->f8[ch];
            const int32_t p00 = in00 ? s[o] : f, p01 = in01 ? s[o + k->sx] : f;
            const int32_t p10 = in10 ? s[o + k->sy] : f, p11 = in11 ? s[o + k->sy + k->sx] : f;
            ((uint8_t *)d)[ch * dc] = (uint8_t)((p00 * w00 + p01 * w01 + p10 * w10 + p11 * w11 + 512) >> 10);
        }
    } else {
        const float *s = (const float *)(const void *)k->src;
        const float v00 = (float)w00 * (1.0f / 1024), v01 = (float)w01 * (1.0f / 1024);
        const float v10 = (float)w10 * (1.0f / 1024), v11 = (float)w11 * (1.0f / 1024);
        for (ch = 0; ch < C; ch++, o += k->sc) {
            const float f = k->ff[ch];
            const float p00 = in00 ? s[o] : f, p01 = in01 ? s[o + k->sx] : f;
            const float p10 = in10 ? s[o + k->sy] : f, p11 = in11 ? s[o + k->sy + k->sx] : f;
            float a = p00 * v00, b = p01 * v01, c = p10 * v10, e = p11 * v11;
            float ab = a + b, abc = ab + c;
            ((float *)(void *)d)[ch * dc] = abc + e;
        }
    }
}

/* rot_px_span is rot_px for pixels [x0, x1) of a contiguous row d. */
static inline void rot_px_span(const rot_run *k, int32_t X0, int32_t Y0, int64_t x0, int64_t x1, char *d) {
    const int64_t ps = k->C * (k->u8 ? 1 : 4);
    int64_t x;
    for (x = x0; x < x1; x++) rot_px(k, X0, Y0, x, d + x * ps, 1);
}

/* A row kernel computes output row y, contiguous, of n pixels at d. */
typedef void (*rot_row_fn)(const rot_run *k, int64_t y, char *d, int64_t n);

#if IMGPROC_X86
/* Byte shuffles for the uint8 kernels: rot_sel(ch, at) moves byte ch of
 * each 32-bit lane to byte at of the lane (zeros elsewhere). */
static inline int32_t rot_sel_dword(int j, int ch, int at) {
    uint32_t v = 0xFFFFFFFFu & ~(0xFFu << (8 * at));
    return (int32_t)(v | ((uint32_t)(4 * j + ch) << (8 * at)));
}

IMGPROC_AVX2 static inline __m256i rot_sel_avx2(int ch, int at) {
    return _mm256_setr_epi32(rot_sel_dword(0, ch, at), rot_sel_dword(1, ch, at), rot_sel_dword(2, ch, at),
                             rot_sel_dword(3, ch, at), rot_sel_dword(0, ch, at), rot_sel_dword(1, ch, at),
                             rot_sel_dword(2, ch, at), rot_sel_dword(3, ch, at));
}

/* rot_classify_avx2 computes the source pixels and fractions of output
 * pixels x..x+7 and returns the mask of those whose four neighbours are
 * all in the image (bit i: pixel x+i) in *in, of those with none in *out. */
IMGPROC_AVX2 static inline void rot_coords_avx2(const rot_run *k, __m256i X0, __m256i Y0, int64_t x, __m256i *ix,
                                                __m256i *iy, __m256i *fx, __m256i *fy, int *in, int *out) {
    const __m256i X = _mm256_srai_epi32(_mm256_add_epi32(X0, LD256(k->ad + x)), 5);
    const __m256i Y = _mm256_srai_epi32(_mm256_add_epi32(Y0, LD256(k->bd + x)), 5);
    const __m256i m1 = _mm256_set1_epi32(-1), W1 = _mm256_set1_epi32((int)k->W - 1),
                  H1 = _mm256_set1_epi32((int)k->H - 1);
    __m256i i, o;
    *ix = _mm256_srai_epi32(X, 5);
    *iy = _mm256_srai_epi32(Y, 5);
    *fx = _mm256_and_si256(X, _mm256_set1_epi32(31));
    *fy = _mm256_and_si256(Y, _mm256_set1_epi32(31));
    /* in: 0 <= ix < W-1 and 0 <= iy < H-1; out: ix > W-1 or ix < -1 or
     * iy > H-1 or iy < -1. */
    i = _mm256_and_si256(_mm256_and_si256(_mm256_cmpgt_epi32(*ix, m1), _mm256_cmpgt_epi32(W1, *ix)),
                         _mm256_and_si256(_mm256_cmpgt_epi32(*iy, m1), _mm256_cmpgt_epi32(H1, *iy)));
    o = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(*ix, W1), _mm256_cmpgt_epi32(m1, *ix)),
                        _mm256_or_si256(_mm256_cmpgt_epi32(*iy, H1), _mm256_cmpgt_epi32(m1, *iy)));
    *in = _mm256_movemask_ps(_mm256_castsi256_ps(i));
    *out = _mm256_movemask_ps(_mm256_castsi256_ps(o));
}

/* rot_chan_avx2 interpolates channel ch of 8 pixels from their gathered
 * neighbours (p(ix) in g00, p(ix+1) in g01, the next row in g10, g11)
 * with the weight pairs of each row: (W00 q00 + W01 q01 + W10 q10 +
 * W11 q11 + 512) >> 10. */
IMGPROC_AVX2 static inline __m256i rot_chan_avx2(__m256i g00, __m256i g01, __m256i g10, __m256i g11, int ch,
                                                 __m256i wp0, __m256i wp1) {
    const __m256i sa = rot_sel_avx2(ch, 0), sb = rot_sel_avx2(ch, 2);
    const __m256i q0 = _mm256_or_si256(_mm256_shuffle_epi8(g00, sa), _mm256_shuffle_epi8(g01, sb));
    const __m256i q1 = _mm256_or_si256(_mm256_shuffle_epi8(g10, sa), _mm256_shuffle_epi8(g11, sb));
    const __m256i t = _mm256_add_epi32(_mm256_madd_epi16(q0, wp0), _mm256_madd_epi16(q1, wp1));
    return _mm256_srli_epi32(_mm256_add_epi32(t, _mm256_set1_epi32(512)), 10);
}

IMGPROC_AVX2 static void rot_row_u8_avx2(const rot_run *k, int64_t y, char *dst, int64_t n) {
    const uint8_t *s = (const uint8_t *)k->src;
    uint8_t *d = (uint8_t *)dst;
    const int C = (int)k->C;
    const __m256i v32 = _mm256_set1_epi32(32), rnd = _mm256_set1_epi32(512), vsy = _mm256_set1_epi32((int)k->sy);
    const __m256i c1 = _mm256_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1, 0, -1, 1, -1, 4, -1,
                                        5, -1, 8, -1, 9, -1, 12, -1, 13, -1);
    const __m256i c3 = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9,
                                        10, 12, 13, 14, -1, -1, -1, -1);
    int32_t X0s, Y0s;
    __m256i X0, Y0;
    int64_t x = 0;
    rot_row_base(k, y, &X0s, &Y0s);
    X0 = _mm256_set1_epi32(X0s);
    Y0 = _mm256_set1_epi32(Y0s);
    for (; x + 8 <= n; x += 8) {
        __m256i ix, iy, fx, fy, wxp, wp0, wp1, off, r[4], v;
        int in, out, ch;
        rot_coords_avx2(k, X0, Y0, x, &ix, &iy, &fx, &fy, &in, &out);
        if (in != 0xFF) {
            if (out == 0xFF) memcpy(d + x * C, k->fill_row, (size_t)(8 * C));
            else rot_px_span(k, X0s, Y0s, x, x + 8, dst);
            continue;
        }
        /* Weight pairs: (32-fx, fx) as 16-bit halves, times 32-fy and fy. */
        wxp = _mm256_or_si256(_mm256_sub_epi32(v32, fx), _mm256_slli_epi32(fx, 16));
        wp0 = _mm256_mullo_epi32(wxp, _mm256_sub_epi32(v32, fy));
        wp1 = _mm256_mullo_epi32(wxp, fy);
        if (C == 1) {
            /* Four bytes from min(ix, W-4), shifted so that p(ix) is byte 0. */
            const __m256i lo = _mm256_min_epi32(ix, _mm256_set1_epi32((int)k->W - 4));
            const __m256i sh = _mm256_slli_epi32(_mm256_sub_epi32(ix, lo), 3);
            __m256i g0, g1;
            off = _mm256_add_epi32(_mm256_mullo_epi32(iy, vsy), lo);
            g0 = _mm256_srlv_epi32(_mm256_i32gather_epi32((const int *)(const void *)s, off, 1), sh);
            g1 = _mm256_srlv_epi32(_mm256_i32gather_epi32((const int *)(const void *)s, _mm256_add_epi32(off, vsy), 1), sh);
            r[0] = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(g0, c1), wp0),
                                    _mm256_madd_epi16(_mm256_shuffle_epi8(g1, c1), wp1));
            r[0] = _mm256_srli_epi32(_mm256_add_epi32(r[0], rnd), 10);
            {
                __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[0]), _mm256_setzero_si256());
                _mm_storel_epi64((__m128i *)(void *)(d + x),
                                 _mm_unpacklo_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
            }
            continue;
        }
        {
            /* Whole pixels: p(ix) at off, p(ix+1) at off+4 (for 3 channels
             * at off+2, shifted down a byte, not to read past the pixel). */
            const int *b = (const int *)(const void *)s;
            __m256i g00, g01, g10, g11;
            off = _mm256_add_epi32(_mm256_mullo_epi32(iy, vsy), _mm256_mullo_epi32(ix, _mm256_set1_epi32(C)));
            g00 = _mm256_i32gather_epi32(b, off, 1);
            g10 = _mm256_i32gather_epi32(b, _mm256_add_epi32(off, vsy), 1);
            if (C == 4) {
                g01 = _mm256_i32gather_epi32(b, _mm256_add_epi32(off, _mm256_set1_epi32(4)), 1);
                g11 = _mm256_i32gather_epi32(b, _mm256_add_epi32(off, _mm256_add_epi32(vsy, _mm256_set1_epi32(4))), 1);
            } else {
                g01 = _mm256_srli_epi32(_mm256_i32gather_epi32(b, _mm256_add_epi32(off, _mm256_set1_epi32(2)), 1), 8);
                g11 = _mm256_srli_epi32(
                    _mm256_i32gather_epi32(b, _mm256_add_epi32(off, _mm256_add_epi32(vsy, _mm256_set1_epi32(2))), 1), 8);
            }
            for (ch = 0; ch < 3; ch++) r[ch] = rot_chan_avx2(g00, g01, g10, g11, ch, wp0, wp1);
            if (C == 4) r[3] = rot_chan_avx2(g00, g01, g10, g11, 3, wp0, wp1);
        }
        v = _mm256_or_si256(_mm256_or_si256(r[0], _mm256_slli_epi32(r[1], 8)), _mm256_slli_epi32(r[2], 16));
        if (C == 4) {
            ST256(d + 4 * x, _mm256_or_si256(v, _mm256_slli_epi32(r[3], 24)));
        } else {
            /* 12 bytes per 128-bit lane, stored as 16 + 8 bytes... of which
             * the first store's last 4 are overwritten by the second. */
            __m256i p = _mm256_shuffle_epi8(v, c3);
            __m128i hi = _mm256_extracti128_si256(p, 1);
            int32_t last;
            ST128(d + 3 * x, _mm256_castsi256_si128(p));
            _mm_storel_epi64((__m128i *)(void *)(d + 3 * x + 12), hi);
            last = _mm_cvtsi128_si32(_mm_srli_si128(hi, 8));
            memcpy(d + 3 * x + 20, &last, 4);
        }
    }
    rot_px_span(k, X0s, Y0s, x, n, dst);
}

/* Float lanes, by channel count (rows 1 and 4; 3 channels go pixel by
 * pixel): pixel (of a group of 8 or 2) and channel of each of 8 lanes. */
static const int32_t rot_fpix8[5][8] = {{0}, {0, 1, 2, 3, 4, 5, 6, 7}, {0}, {0}, {0, 0, 0, 0, 1, 1, 1, 1}};
static const int32_t rot_fch8[5][8] = {{0}, {0}, {0}, {0}, {0, 1, 2, 3, 0, 1, 2, 3}};

IMGPROC_AVX2 static void rot_row_f32_avx2(const rot_run *k, int64_t y, char *dst, int64_t n) {
    const float *s = (const float *)(const void *)k->src;
    float *d = (float *)(void *)dst;
    const int C = (int)k->C, P = C == 1 ? 8 : 2;
    const __m256i v32 = _mm256_set1_epi32(32), vsy = _mm256_set1_epi32((int)k->sy), vC = _mm256_set1_epi32(C);
    const __m256 scale = _mm256_set1_ps(1.0f / 1024);
    const __m256i pix = LD256(rot_fpix8[C]), chs = LD256(rot_fch8[C]);
    int32_t X0s, Y0s;
    __m256i X0, Y0;
    int64_t x = 0;
    rot_row_base(k, y, &X0s, &Y0s);
    X0 = _mm256_set1_epi32(X0s);
    Y0 = _mm256_set1_epi32(Y0s);
    for (; x + 8 <= n; x += 8) {
        __m256i ix, iy, fx, fy, off;
        __m256 w00, w01, w10, w11;
        int in, out, g;
        rot_coords_avx2(k, X0, Y0, x, &ix, &iy, &fx, &fy, &in, &out);
        if (in != 0xFF) {
            if (out == 0xFF) memcpy(d + x * C, k->fill_row, (size_t)(8 * C) * sizeof(float));
            else rot_px_span(k, X0s, Y0s, x, x + 8, dst);
            continue;
        }
        {
            const __m256i gx = _mm256_sub_epi32(v32, fx), gy = _mm256_sub_epi32(v32, fy);
            w00 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(gx, gy)), scale);
            w01 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(fx, gy)), scale);
            w10 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(gx, fy)), scale);
            w11 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(fx, fy)), scale);
        }
        off = _mm256_add_epi32(_mm256_mullo_epi32(iy, vsy), _mm256_mullo_epi32(ix, vC));
        if (C == 3) {
            /* A pixel's channels in a 128-bit vector, masked to 3: four
             * loads of neighbours, each times its broadcast weight (faster
             * than gathers, which fill 6 lanes of 8 here). */
            int32_t o[8];
            float w[4][8];
            const __m128i m3 = _mm_setr_epi32(-1, -1, -1, 0);
            const int64_t sy = k->sy;
            ST256(o, off);
            _mm256_storeu_ps(w[0], w00);
            _mm256_storeu_ps(w[1], w01);
            _mm256_storeu_ps(w[2], w10);
            _mm256_storeu_ps(w[3], w11);
            for (g = 0; g < 8; g++) {
                const float *p = s + o[g];
                const __m128 a = _mm_mul_ps(_mm_maskload_ps(p, m3), _mm_set1_ps(w[0][g]));
                const __m128 b = _mm_mul_ps(_mm_maskload_ps(p + C, m3), _mm_set1_ps(w[1][g]));
                const __m128 c = _mm_mul_ps(_mm_maskload_ps(p + sy, m3), _mm_set1_ps(w[2][g]));
                const __m128 e = _mm_mul_ps(_mm_maskload_ps(p + sy + C, m3), _mm_set1_ps(w[3][g]));
                _mm_maskstore_ps(d + (x + g) * C, m3, _mm_add_ps(_mm_add_ps(_mm_add_ps(a, b), c), e));
            }
            continue;
        }
        for (g = 0; g < 8; g += P) {
            const __m256i p = _mm256_add_epi32(pix, _mm256_set1_epi32(g));
            const __m256i i00 = _mm256_add_epi32(_mm256_permutevar8x32_epi32(off, p), chs);
            const __m256i i10 = _mm256_add_epi32(i00, vsy);
            const __m256 a = _mm256_mul_ps(_mm256_i32gather_ps(s, i00, 4), _mm256_permutevar8x32_ps(w00, p));
            const __m256 b = _mm256_mul_ps(_mm256_i32gather_ps(s + C, i00, 4), _mm256_permutevar8x32_ps(w01, p));
            const __m256 c = _mm256_mul_ps(_mm256_i32gather_ps(s, i10, 4), _mm256_permutevar8x32_ps(w10, p));
            const __m256 e = _mm256_mul_ps(_mm256_i32gather_ps(s + C, i10, 4), _mm256_permutevar8x32_ps(w11, p));
            const __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a, b), c), e);
            _mm256_storeu_ps(d + (x + g) * C, v);
        }
    }
    rot_px_span(k, X0s, Y0s, x, n, dst);
}

static void rot_row_avx2(const rot_run *k, int64_t y, char *d, int64_t n) {
    if (k->u8) rot_row_u8_avx2(k, y, d, n);
    else rot_row_f32_avx2(k, y, d, n);
}

/* ---- AVX-512: 16 pixels at a time --------------------------------------- */

IMGPROC_AVX512 static inline __m512i rot_sel_avx512(int ch, int at) {
    return _mm512_setr_epi32(rot_sel_dword(0, ch, at), rot_sel_dword(1, ch, at), rot_sel_dword(2, ch, at),
                             rot_sel_dword(3, ch, at), rot_sel_dword(0, ch, at), rot_sel_dword(1, ch, at),
                             rot_sel_dword(2, ch, at), rot_sel_dword(3, ch, at), rot_sel_dword(0, ch, at),
                             rot_sel_dword(1, ch, at), rot_sel_dword(2, ch, at), rot_sel_dword(3, ch, at),
                             rot_sel_dword(0, ch, at), rot_sel_dword(1, ch, at), rot_sel_dword(2, ch, at),
                             rot_sel_dword(3, ch, at));
}

IMGPROC_AVX512 static inline void rot_coords_avx512(const rot_run *k, __m512i X0, __m512i Y0, int64_t x, __m512i *ix,
                                                    __m512i *iy, __m512i *fx, __m512i *fy, __mmask16 *in,
                                                    __mmask16 *out) {
    const __m512i X = _mm512_srai_epi32(_mm512_add_epi32(X0, LD512(k->ad + x)), 5);
    const __m512i Y = _mm512_srai_epi32(_mm512_add_epi32(Y0, LD512(k->bd + x)), 5);
    const __m512i m1 = _mm512_set1_epi32(-1), W1 = _mm512_set1_epi32((int)k->W - 1),
                  H1 = _mm512_set1_epi32((int)k->H - 1);
    *ix = _mm512_srai_epi32(X, 5);
    *iy = _mm512_srai_epi32(Y, 5);
    *fx = _mm512_and_si512(X, _mm512_set1_epi32(31));
    *fy = _mm512_and_si512(Y, _mm512_set1_epi32(31));
    *in = _mm512_cmpgt_epi32_mask(*ix, m1) & _mm512_cmpgt_epi32_mask(W1, *ix) & _mm512_cmpgt_epi32_mask(*iy, m1) &
          _mm512_cmpgt_epi32_mask(H1, *iy);
    *out = _mm512_cmpgt_epi32_mask(*ix, W1) | _mm512_cmpgt_epi32_mask(m1, *ix) | _mm512_cmpgt_epi32_mask(*iy, H1) |
           _mm512_cmpgt_epi32_mask(m1, *iy);
}

IMGPROC_AVX512 static inline __m512i rot_chan_avx512(__m512i g00, __m512i g01, __m512i g10, __m512i g11, int ch,
                                                     __m512i wp0, __m512i wp1) {
    const __m512i sa = rot_sel_avx512(ch, 0), sb = rot_sel_avx512(ch, 2);
    const __m512i q0 = _mm512_or_si512(_mm512_shuffle_epi8(g00, sa), _mm512_shuffle_epi8(g01, sb));
    const __m512i q1 = _mm512_or_si512(_mm512_shuffle_epi8(g10, sa), _mm512_shuffle_epi8(g11, sb));
    const __m512i t = _mm512_add_epi32(_mm512_madd_epi16(q0, wp0), _mm512_madd_epi16(q1, wp1));
    return _mm512_srli_epi32(_mm512_add_epi32(t, _mm512_set1_epi32(512)), 10);
}

IMGPROC_AVX512 static void rot_row_u8_avx512(const rot_run *k, int64_t y, char *dst, int64_t n) {
    const uint8_t *s = (const uint8_t *)k->src;
    uint8_t *d = (uint8_t *)dst;
    const int C = (int)k->C;
    const __m512i v32 = _mm512_set1_epi32(32), rnd = _mm512_set1_epi32(512), vsy = _mm512_set1_epi32((int)k->sy);
    const __m512i c1 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1));
    const __m512i c3 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
    const __m512i pack3 = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 15, 15, 15);
    int32_t X0s, Y0s;
    __m512i X0, Y0;
    int64_t x = 0;
    rot_row_base(k, y, &X0s, &Y0s);
    X0 = _mm512_set1_epi32(X0s);
    Y0 = _mm512_set1_epi32(Y0s);
    for (; x + 16 <= n; x += 16) {
        __m512i ix, iy, fx, fy, wxp, wp0, wp1, off, r[4], v;
        __mmask16 in, out;
        int ch;
        rot_coords_avx512(k, X0, Y0, x, &ix, &iy, &fx, &fy, &in, &out);
        if (in != 0xFFFF) {
            if (out == 0xFFFF) memcpy(d + x * C, k->fill_row, (size_t)(16 * C));
            else rot_px_span(k, X0s, Y0s, x, x + 16, dst);
            continue;
        }
        wxp = _mm512_or_si512(_mm512_sub_epi32(v32, fx), _mm512_slli_epi32(fx, 16));
        wp0 = _mm512_mullo_epi32(wxp, _mm512_sub_epi32(v32, fy));
        wp1 = _mm512_mullo_epi32(wxp, fy);
        if (C == 1) {
            const __m512i lo = _mm512_min_epi32(ix, _mm512_set1_epi32((int)k->W - 4));
            const __m512i sh = _mm512_slli_epi32(_mm512_sub_epi32(ix, lo), 3);
            __m512i g0, g1;
            off = _mm512_add_epi32(_mm512_mullo_epi32(iy, vsy), lo);
            g0 = _mm512_srlv_epi32(_mm512_i32gather_epi32(off, (const void *)s, 1), sh);
            g1 = _mm512_srlv_epi32(_mm512_i32gather_epi32(_mm512_add_epi32(off, vsy), (const void *)s, 1), sh);
            r[0] = _mm512_add_epi32(_mm512_madd_epi16(_mm512_shuffle_epi8(g0, c1), wp0),
                                    _mm512_madd_epi16(_mm512_shuffle_epi8(g1, c1), wp1));
            r[0] = _mm512_srli_epi32(_mm512_add_epi32(r[0], rnd), 10);
            ST128(d + x, _mm512_cvtepi32_epi8(r[0]));
            continue;
        }
        {
            __m512i g00, g01, g10, g11;
            off = _mm512_add_epi32(_mm512_mullo_epi32(iy, vsy), _mm512_mullo_epi32(ix, _mm512_set1_epi32(C)));
            g00 = _mm512_i32gather_epi32(off, (const void *)s, 1);
            g10 = _mm512_i32gather_epi32(_mm512_add_epi32(off, vsy), (const void *)s, 1);
            if (C == 4) {
                g01 = _mm512_i32gather_epi32(_mm512_add_epi32(off, _mm512_set1_epi32(4)), (const void *)s, 1);
                g11 = _mm512_i32gather_epi32(_mm512_add_epi32(off, _mm512_add_epi32(vsy, _mm512_set1_epi32(4))),
                                             (const void *)s, 1);
            } else {
                g01 = _mm512_srli_epi32(
                    _mm512_i32gather_epi32(_mm512_add_epi32(off, _mm512_set1_epi32(2)), (const void *)s, 1), 8);
                g11 = _mm512_srli_epi32(
                    _mm512_i32gather_epi32(_mm512_add_epi32(off, _mm512_add_epi32(vsy, _mm512_set1_epi32(2))),
                                           (const void *)s, 1),
                    8);
            }
            for (ch = 0; ch < 3; ch++) r[ch] = rot_chan_avx512(g00, g01, g10, g11, ch, wp0, wp1);
            if (C == 4) r[3] = rot_chan_avx512(g00, g01, g10, g11, 3, wp0, wp1);
        }
        v = _mm512_or_si512(_mm512_or_si512(r[0], _mm512_slli_epi32(r[1], 8)), _mm512_slli_epi32(r[2], 16));
        if (C == 4) {
            ST512(d + 4 * x, _mm512_or_si512(v, _mm512_slli_epi32(r[3], 24)));
        } else {
            /* 12 bytes per 128-bit lane, the lanes' dwords gathered into
             * the first 48 bytes. */
            v = _mm512_permutexvar_epi32(pack3, _mm512_shuffle_epi8(v, c3));
            _mm512_mask_storeu_epi8(d + 3 * x, (__mmask64)0xFFFFFFFFFFFFull, v);
        }
    }
    rot_px_span(k, X0s, Y0s, x, n, dst);
}

/* Float lanes for 16-lane groups, by channel count: 16, 5 or 4 pixels
 * of 1, 3 or 4 channels. */
static const int32_t rot_fpix16[5][16] = {
    {0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {0},
    {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4}, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}};
static const int32_t rot_fch16[5][16] = {
    {0}, {0}, {0}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 2}, {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}};

IMGPROC_AVX512 static void rot_row_f32_avx512(const rot_run *k, int64_t y, char *dst, int64_t n) {
    const float *s = (const float *)(const void *)k->src;
    float *d = (float *)(void *)dst;
    const int C = (int)k->C, P = C == 1 ? 16 : C == 3 ? 5 : 4;
    const __m512i v32 = _mm512_set1_epi32(32), vsy = _mm512_set1_epi32((int)k->sy), vC = _mm512_set1_epi32(C);
    const __m512 scale = _mm512_set1_ps(1.0f / 1024);
    const __m512i pix = LD512(rot_fpix16[C]), chs = LD512(rot_fch16[C]);
    int32_t X0s, Y0s;
    __m512i X0, Y0;
    int64_t x = 0;
    rot_row_base(k, y, &X0s, &Y0s);
    X0 = _mm512_set1_epi32(X0s);
    Y0 = _mm512_set1_epi32(Y0s);
    for (; x + 16 <= n; x += 16) {
        __m512i ix, iy, fx, fy, off;
        __m512 w00, w01, w10, w11;
        __mmask16 in, out;
        int g;
        rot_coords_avx512(k, X0, Y0, x, &ix, &iy, &fx, &fy, &in, &out);
        if (in != 0xFFFF) {
            if (out == 0xFFFF) memcpy(d + x * C, k->fill_row, (size_t)(16 * C) * sizeof(float));
            else rot_px_span(k, X0s, Y0s, x, x + 16, dst);
            continue;
        }
        {
            const __m512i gx = _mm512_sub_epi32(v32, fx), gy = _mm512_sub_epi32(v32, fy);
            w00 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(gx, gy)), scale);
            w01 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(fx, gy)), scale);
            w10 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(gx, fy)), scale);
            w11 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(fx, fy)), scale);
        }
        off = _mm512_add_epi32(_mm512_mullo_epi32(iy, vsy), _mm512_mullo_epi32(ix, vC));
        for (g = 0; g < 16; g += P) {
            /* Pixel indices past 15 wrap (permutexvar reads 4 bits) to
             * pixels of this vector: valid addresses, lanes not stored. */
            const __m512i p = _mm512_add_epi32(pix, _mm512_set1_epi32(g));
            const __m512i i00 = _mm512_add_epi32(_mm512_permutexvar_epi32(p, off), chs);
            const __m512i i10 = _mm512_add_epi32(i00, vsy);
            const int np = 16 - g < P ? 16 - g : P;
            const __mmask16 m = (__mmask16)((1u << (np * C)) - 1u);
            const __m512 a = _mm512_mul_ps(_mm512_i32gather_ps(i00, s, 4), _mm512_permutexvar_ps(p, w00));
            const __m512 b = _mm512_mul_ps(_mm512_i32gather_ps(i00, s + C, 4), _mm512_permutexvar_ps(p, w01));
            const __m512 c = _mm512_mul_ps(_mm512_i32gather_ps(i10, s, 4), _mm512_permutexvar_ps(p, w10));
            const __m512 e = _mm512_mul_ps(_mm512_i32gather_ps(i10, s + C, 4), _mm512_permutexvar_ps(p, w11));
            const __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), c), e);
            _mm512_mask_storeu_ps(d + (x + g) * C, m, v);
        }
    }
    rot_px_span(k, X0s, Y0s, x, n, dst);
}

static void rot_row_avx512(const rot_run *k, int64_t y, char *d, int64_t n) {
    if (k->u8) rot_row_u8_avx512(k, y, d, n);
    else rot_row_f32_avx512(k, y, d, n);
}
#endif /* IMGPROC_X86 */

/* rot_simd_ok: whether the SIMD row kernels may run: contiguous rows in
 * and out, element offsets (gather indices) within int32, and for one
 * channel of uint8 at least 4 columns (its 4-byte loads stay in the row). */
static int rot_simd_ok(const view *vi, const view *vo, int u8) {
    const int64_t sy = vi->sy < 0 ? -vi->sy : vi->sy;
    if (!rows_contig(vi) || !rows_contig(vo) || vi->h < 2 || vi->w < 2) return 0;
    if (u8 && vi->c == 1 && vi->w < 4) return 0;
    return sy <= (int64_t)1 << 30 && sy * (vi->h - 1) + vi->w * vi->c < (int64_t)1 << 30;
}

static dynop_result rotate_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in, rot_row_fn simd) {
    const rotate_inst *r = (const rotate_inst *)instance;
    const int u8 = is_u8(in->dtype);
    const size_t es = u8 ? 1 : 4;
    view vi = view_of(in), vo = view_of(out);
    const int64_t H = vi.h, W = vi.w, C = vi.c, oh = vo.h, ow = vo.w;
    size_t pad, pbd, pfill, size;
    dynop_result err = DYNOP_OK;
    rot_run k;
    char *mem;
    int32_t *ad, *bd;
    int64_t x, y, ch;
    double M[6], D, *A = k.A;
    int contig;
    if (oh <= 0 || ow <= 0) return DYNOP_OK;
    if (H > 0 && W > 0 && rotate_lossless(r, H, W, oh, ow)) {
        rot_quarter(&vi, &vo, r->quarter, u8);
        return DYNOP_OK;
    }
    size = rot_scratch_size(ow, C, es, &pad, &pbd, &pfill);
    if (size == 0) return no_memory("imgproc.Rotate", SIZE_MAX);
    mem = scratch_of(&out[1], size, "imgproc.Rotate", &err);
    if (mem == NULL) return err;
    memset(&k, 0, sizeof k);
    k.src = vi.p;
    k.H = H;
    k.W = W;
    k.C = C;
    k.sy = vi.sy;
    k.sx = vi.sx;
    k.sc = vi.sc;
    k.u8 = u8;
    for (ch = 0; ch < C; ch++) {
        double f = r->fill[r->nfill == 1 ? 0 : ch];
        k.f8[ch] = (uint8_t)(f <= 0.0 ? 0 : f >= 255.0 ? 255 : rot_rne(f));
        k.ff[ch] = (float)f;
    }
    for (x = 0; x < ow; x++)
        for (ch = 0; ch < C; ch++) {
            if (u8) ((uint8_t *)(mem + pfill))[x * C + ch] = k.f8[ch];
            else ((float *)(void *)(mem + pfill))[x * C + ch] = k.ff[ch];
        }
    k.fill_row = mem + pfill;
    contig = rows_contig(&vo);
    if (H == 0 || W == 0) {
        /* Nothing to read: every pixel is the fill. */
        for (y = 0; y < oh; y++) {
            if (contig) memcpy(vo.p + y * vo.sy * (int64_t)es, k.fill_row, (size_t)(ow * C) * es);
            else
                for (x = 0; x < ow; x++)
                    for (ch = 0; ch < C; ch++) memcpy(vo.p + (y * vo.sy + x * vo.sx + ch * vo.sc) * (int64_t)es,
                                                      k.fill_row + (x * C + ch) * (int64_t)es, es);
        }
        return DYNOP_OK;
    }
    /* The forward map, cv2.getRotationMatrix2D about the centre and moved
     * to the canvas, then its inverse as cv2.warpAffine computes it. */
    {
        const double al = r->cos_a, be = r->sin_a, cx = (double)(W - 1) * 0.5, cy = (double)(H - 1) * 0.5;
        M[0] = al;
        M[1] = be;
        M[2] = (1 - al) * cx - be * cy;
        M[3] = -be;
        M[4] = al;
        M[5] = be * cx + (1 - al) * cy;
        M[2] += (double)(ow - W) * 0.5;
        M[5] += (double)(oh - H) * 0.5;
    }
    D = M[0] * M[4] - M[1] * M[3];
    D = D != 0 ? 1. / D : 0;
    A[0] = M[4] * D;
    A[1] = M[1] * -D;
    A[3] = M[3] * -D;
    A[4] = M[0] * D;
    A[2] = -A[0] * M[2] - A[1] * M[5];
    A[5] = -A[3] * M[2] - A[4] * M[5];
    ad = (int32_t *)(void *)(mem + pad);
    bd = (int32_t *)(void *)(mem + pbd);
    for (x = 0; x < ow; x++) {
        ad[x] = rot_rne(A[0] * (double)x * 1024.0);
        bd[x] = rot_rne(A[3] * (double)x * 1024.0);
    }
    k.ad = ad;
    k.bd = bd;
    if (simd != NULL && !rot_simd_ok(&vi, &vo, u8)) simd = NULL;
    for (y = 0; y < oh; y++) {
        char *d = vo.p + y * vo.sy * (int64_t)es;
        if (simd != NULL) {
            simd(&k, y, d, ow);
        } else {
            int32_t X0, Y0;
            rot_row_base(&k, y, &X0, &Y0);
            for (x = 0; x < ow; x++) rot_px(&k, X0, Y0, x, d + x * vo.sx * (int64_t)es, vo.sc);
        }
    }
    return DYNOP_OK;
}

static dynop_result rotate_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    (void)nin;
    return rotate_run_with(instance, out, in, NULL);
}

#if IMGPROC_X86
static dynop_result rotate_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    (void)nin;
    return rotate_run_with(instance, out, in, rot_row_avx2);
}

static dynop_result rotate_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    (void)nin;
    return rotate_run_with(instance, out, in, rot_row_avx512);
}
#endif

/* ---- schema ------------------------------------------------------------- */

static const dynop_variant rotate_variants[] = {IMGPROC_VARIANTS(rotate)};

static const dynop_op_input rotate_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 1, 3 or 4 channels.", "uint8,float32", "HWC", 3, "1,3,4"},
};
static const dynop_op_output rotate_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "rotated",
     "The images rotated, on a canvas that holds them whole (or of the input's size with keep_size), the input's "
     "channels and dtype.",
     "HWC", NULL, NULL, "images", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg rotate_args[] = {
    {DYNOP_OP_ARG_HEADER, "angle", "Rotation in degrees, counter-clockwise (as cv2.getRotationMatrix2D and DALI).",
     DYNOP_ARG_FLOAT, DYNOP_ARG_REQUIRED, 0, 0, NULL, NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "fill",
     "The value of pixels outside the source: one for every channel, or one per channel (uint8 rounds and clamps it).",
     DYNOP_ARG_FLOAT_LIST, 0, 0, 0, "[0]", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "keep_size",
     "Keep the input's height and width (corners are cut); false grows the canvas to hold the whole rotated image.",
     DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL, NULL},
};
static const dynop_op_schema rotate_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.Rotate",
    "Rotates images counter-clockwise about their centre: multiples of 90 degrees move whole pixels, other angles "
    "interpolate bilinearly (OpenCV's warpAffine fixed point), the outside filled with fill.",
    "cpu",
    1, 0, rotate_inputs,
    1, rotate_outputs,
    3, rotate_args,
};
static const dynop_operator rotate_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.Rotate", "cpu", NULL, rotate_create, rotate_setup, rotate_destroy,
                                  rotate_variants, DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT);
