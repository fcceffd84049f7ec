/*
 * color.c — imgproc.ColorConvert and imgproc.ColorTwist, included by
 * imgproc.c (one translation unit: it uses imgproc.c's helpers and is not
 * compiled on its own).
 *
 * imgproc.ColorConvert (from, to): HWC uint8 or float32 images between
 * the colour spaces "rgb", "bgr", "gray", "ycbcr" and "hsv", with OpenCV's
 * definitions (cv2.cvtColor, 4.6):
 *   rgb <-> bgr     the first and third channels swapped.
 *   rgb/bgr -> gray imgproc.Grayscale's kernels (BT.601, 15-bit fixed point
 *                   on uint8), the same bytes: COLOR_RGB2GRAY.
 *   gray -> rgb/bgr the value copied to the three channels: COLOR_GRAY2RGB.
 *   rgb/bgr <-> ycbcr  full-range BT.601 (JPEG), COLOR_RGB2YCrCb and back,
 *                   but the channels in the order Y, Cb, Cr:
 *     uint8   Y  = (4899 R + 9617 G + 1868 B + 8192) >> 14
 *             Cr = min(255, ((R - Y) 11682 + (128 << 14) + 8192) >> 14)
 *             Cb = min(255, ((B - Y)  9241 + (128 << 14) + 8192) >> 14)
 *             back, with cb = Cb - 128, cr = Cr - 128 and floor(x / 2^14)
 *             written x >> 14: R = Y + ((22987 cr + 8192) >> 14),
 *             G = Y + ((-5636 cb - 11698 cr + 8192) >> 14),
 *             B = Y + ((29049 cb + 8192) >> 14), each clamped to [0, 255].
 *     float32 (values in [0, 1]) Y = (0.299f R + 0.587f G) + 0.114f B,
 *             Cr = (R - Y) 0.713f + 0.5f, Cb = (B - Y) 0.564f + 0.5f;
 *             back R = Y + (Cr - 0.5f) 1.403f,
 *             G = (Y + (Cb - 0.5f) -0.344f) + (Cr - 0.5f) -0.714f,
 *             B = Y + (Cb - 0.5f) 1.773f; each product rounded, no clamp.
 *   rgb/bgr <-> hsv  COLOR_RGB2HSV and COLOR_HSV2RGB:
 *     uint8   H in [0, 180), S and V in [0, 255]. To HSV in integers
 *             (OpenCV's tables): V = max, diff = V - min,
 *             S = (diff sdiv[V] + 2048) >> 12, sdiv[i] = round(255·2^12 / i),
 *             h = G - B if V = R, else B - R + 2 diff if V = G, else
 *             R - G + 4 diff; H = (h hdiv[diff] + 2048) >> 12 (arithmetic
 *             shift), plus 180 if negative, hdiv[i] = round(180·2^12 / (6 i));
 *             sdiv[0] = hdiv[0] = 0. Back: h = H, s = S·(1/255), v = V·(1/255)
 *             in float32 through hsv2rgb below, then each channel
 *             trunc(x·255) clamped to [0, 255] (truncated, as OpenCV's
 *             vector loop does).
 *     float32 H in degrees [0, 360), S and V in [0, 1] (for RGB in [0, 1]).
 *             To HSV: mx, mn = max, min of R, G, B, diff = mx - mn,
 *             S = diff / (|mx| + FLT_EPSILON), V = mx,
 *             rev = 60 / (diff + FLT_EPSILON), H = single-rounded
 *             h·rev + off with h, off = (G - B, 360 if G < B else 0) if
 *             R = mx, else (B - R, 120) if G = mx, else (R - G, 240).
 *             Back: hsv2rgb with hscale 6/360.
 *     hsv2rgb (OpenCV's vector HSV2RGB): hh = h·hscale, p = trunc(hh),
 *             f = hh - p, sector = p - trunc(p·(1/6))·6,
 *             t0 = v, t1 = v (1 - s), t2 = v·r(1 - s f), t3 = v·r(1 - s (1 - f))
 *             where r(1 - a b) is rounded once (as the fused multiply-add
 *             of OpenCV's AVX2 build); B, G, R = (t1, t3, t0), (t1, t0, t2),
 *             (t3, t0, t1), (t0, t2, t1), (t0, t1, t3), (t2, t1, t0) for
 *             sectors 0..5 (by comparisons of sector: < 1 or 2, ==, > 3 or 4).
 *   x -> x          a copy. Other pairs (between gray, ycbcr and hsv) are
 *                   refused: convert through rgb.
 * Alpha: from rgb, bgr, ycbcr or hsv a 4th channel is alpha, copied to
 * the output's 4th channel; to gray it is dropped (as imgproc.Grayscale
 * ignores it). gray takes 1 channel.
 * Variants: every conversion runs in AVX2 and AVX-512 (the copy as a
 * memcpy) on rows whose pixels are contiguous (the AVX-512 variant's single
 * roundings are fused multiply-adds; scalar and AVX2 compute them in
 * double, rounded to odd: fma_f). All compute the scalar reference's bytes.
 *
 * imgproc.ColorTwist (brightness b, contrast c, saturation s, hue h in
 * degrees): DALI's ColorTwist on RGB images (3 channels, or 4 with alpha
 * copied). One affine map per instance, computed in double from DALI's
 * constants and its 12 entries rounded to float32:
 *   M = b c Yiq2Rgb · Hue(h) · Sat(s) · Rgb2Yiq,  t = (half - half c) b,
 *   Rgb2Yiq = [.299 .587 .114; .596 -.274 -.321; .211 -.523 .311],
 *   Yiq2Rgb = [1 .956 .621; 1 -.272 -.647; 1 -1.107 1.705],
 *   Hue(h) = [1 0 0; 0 cos h sin h; 0 -sin h cos h], Sat(s) = diag(1, s, s),
 *   half = 128 for uint8, 0.5 for float32. Per pixel and channel k:
 *   out_k = ((M_k0 R + M_k1 G) + M_k2 B) + t in float32, each product
 *   rounded; uint8 clamps it to [0, 255] and rounds to nearest, ties to
 *   even. AVX2 and AVX-512 variants for both dtypes.
 */

/* ---- shared: per-pixel kernels over rows ---------------------------------- */

/* A strided scalar kernel: w pixels of cin channels at s (strides sx
 * between pixels, sc between channels) to cout channels at d. */
typedef void (*px_u8_fn)(const void *k, const uint8_t *s, int64_t sx, int64_t sc, uint8_t *d, int64_t dx, int64_t dc,
                         int64_t w, int64_t cin, int64_t cout);
typedef void (*px_f32_fn)(const void *k, const float *s, int64_t sx, int64_t sc, float *d, int64_t dx, int64_t dc,
                          int64_t w, int64_t cin, int64_t cout);
/* A row kernel for contiguous rows (pixel stride = channels, channel
 * stride 1); it computes what the strided kernel computes. */
typedef void (*row_u8_fn)(const void *k, const uint8_t *s, uint8_t *d, int64_t w, int64_t cin, int64_t cout);
typedef void (*row_f32_fn)(const void *k, const float *s, float *d, int64_t w, int64_t cin, int64_t cout);

typedef struct {
    px_u8_fn u8;
    px_f32_fn f32;
    row_u8_fn row_u8;   /* NULL: the strided kernel for every row */
    row_f32_fn row_f32; /* likewise */
} px_kernels;

/* px_run runs the kernels over each row of in into out. */
static void px_run(const void *k, const px_kernels *ks, const dynop_tensor *out, const dynop_tensor *in) {
    view vi = view_of(in), vo = view_of(out);
    int contig = rows_contig(&vi) && rows_contig(&vo);
    int u8 = is_u8(in->dtype);
    int64_t y;
    for (y = 0; y < vi.h; y++) {
        if (u8) {
            const uint8_t *s = (const uint8_t *)vi.p + y * vi.sy;
            uint8_t *d = (uint8_t *)vo.p + y * vo.sy;
            if (contig && ks->row_u8 != NULL) ks->row_u8(k, s, d, vi.w, vi.c, vo.c);
            else ks->u8(k, s, vi.sx, vi.sc, d, vo.sx, vo.sc, vi.w, vi.c, vo.c);
        } else {
            const float *s = (const float *)(const void *)vi.p + y * vi.sy;
            float *d = (float *)(void *)vo.p + y * vo.sy;
            if (contig && ks->row_f32 != NULL) ks->row_f32(k, s, d, vi.w, vi.c, vo.c);
            else ks->f32(k, s, vi.sx, vi.sc, d, vo.sx, vo.sc, vi.w, vi.c, vo.c);
        }
    }
}

/* The scalar tail of a row kernel: pixels x.. of a contiguous row. */
#define PX_TAIL(fn, k, s, d, x, w, cin, cout) fn(k, (s) + (x) * (cin), cin, 1, (d) + (x) * (cout), cout, 1, (w) - (x), cin, cout)

/* u8_rne rounds 0 <= v <= 255 to the nearest integer, ties to even (as
 * cvtps2dq in the default rounding mode), without libm. */
static inline int u8_rne(float v) {
    float r = (v + 8388608.0f) - 8388608.0f; /* 2^23 + v keeps no fraction */
    return (int)r;
}

/* trunc_i32 is cvttps2dq: the integer part of v, INT32_MIN for NaN and
 * out of range. */
static inline int32_t trunc_i32(float v) {
    if (!(v > -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
    return (int32_t)v;
}

/* fma_f is a·b + c rounded once to float, as a fused multiply-add, without
 * libm or an FMA unit: a·b is exact in double, the sum is rounded to odd
 * in double (its error, by TwoSum, nudges an even last bit towards the
 * exact value), and double's 29 more bits make rounding that to float
 * correct (Boldo and Melquiond's round-to-odd). */
static inline float fma_f(float a, float b, float c) {
    double p = (double)a * (double)b, cd = (double)c;
    double s = p + cd, bp = s - cd;
    double e = (p - bp) + (cd - (s - bp));
    if (e != 0.0 && s != 0.0 && s - s == 0.0) {
        uint64_t bits;
        memcpy(&bits, &s, sizeof bits);
        if ((bits & 1) == 0) {
            bits += (e > 0.0) == (s > 0.0) ? 1 : (uint64_t)-1;
            memcpy(&s, &bits, sizeof s);
        }
    }
    return (float)s;
}

/* ---- imgproc.ColorConvert ------------------------------------------------ */

enum { CS_RGB, CS_BGR, CS_GRAY, CS_YCC, CS_HSV, CS_COUNT };
static const char *const cs_names[CS_COUNT] = {"rgb", "bgr", "gray", "ycbcr", "hsv"};

enum { CC_COPY, CC_SWAP, CC_TO_GRAY, CC_FROM_GRAY, CC_TO_YCC, CC_FROM_YCC, CC_TO_HSV, CC_FROM_HSV };

typedef struct {
    int kind;
    int from, to;
    int ri;            /* where R is on the rgb/bgr side: 0 (rgb) or 2 (bgr) */
    int32_t sdiv[256]; /* uint8 RGB to HSV: round(255 * 2^12 / i) */
    int32_t hdiv[256]; /* round(180 * 2^12 / (6 i)) */
} cc_inst;

#define CC_OP "imgproc.ColorConvert"

static int cs_parse(const dynop_arg *args, uint32_t n, const char *name, int def, int *cs) {
    const dynop_arg *a = find_arg(args, n, name);
    const char *v;
    int i;
    if (a == NULL) {
        *cs = def;
        return def >= 0;
    }
    if (a->type != DYNOP_ARG_STRING) return 0;
    v = *(const char *const *)a->values;
    for (i = 0; v != NULL && i < CS_COUNT; i++)
        if (strcmp(v, cs_names[i]) == 0) {
            *cs = i;
            return 1;
        }
    return 0;
}

static dynop_result cc_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    cc_inst k, *p;
    int rgb_from, rgb_to, i;
    (void)user_data;
    memset(&k, 0, sizeof k);
    if (!cs_parse(args, n, "from", CS_RGB, &k.from) || !cs_parse(args, n, "to", -1, &k.to))
        return fail(DYNOP_ERROR_INVALID_ARGUMENT,
                    CC_OP ": from and to must each be one of \"rgb\", \"bgr\", \"gray\", \"ycbcr\", \"hsv\" (to is required)");
    rgb_from = k.from == CS_RGB || k.from == CS_BGR;
    rgb_to = k.to == CS_RGB || k.to == CS_BGR;
    k.ri = (rgb_from ? k.from : k.to) == CS_BGR ? 2 : 0;
    if (k.from == k.to) k.kind = CC_COPY;
    else if (rgb_from && rgb_to) k.kind = CC_SWAP;
    else if (rgb_from) k.kind = k.to == CS_GRAY ? CC_TO_GRAY : k.to == CS_YCC ? CC_TO_YCC : CC_TO_HSV;
    else if (rgb_to) k.kind = k.from == CS_GRAY ? CC_FROM_GRAY : k.from == CS_YCC ? CC_FROM_YCC : CC_FROM_HSV;
    else
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, CC_OP ": no conversion from %s to %s; convert through rgb",
                     cs_names[k.from], cs_names[k.to]);
    for (i = 1; i < 256; i++) {
        /* (2 q + i) / (2 i) is round(q / i), half up; no q/i here is a tie. */
        k.sdiv[i] = (int32_t)((2 * (255 << 12) + i) / (2 * i));
        k.hdiv[i] = (int32_t)((2 * (180 << 12) + 6 * i) / (12 * i));
    }
    p = (cc_inst *)malloc(sizeof *p);
    if (p == NULL) return fail(DYNOP_ERROR_NO_MEMORY, CC_OP ": out of memory");
    *p = k;
    *instance = p;
    return DYNOP_OK;
}

static void cc_destroy(void *instance) { free(instance); }

static dynop_result cc_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    const cc_inst *k = (const cc_inst *)instance;
    dynop_result rc = check_image(CC_OP, in, nin, nout, 0);
    int64_t c;
    if (rc != DYNOP_OK) return rc;
    c = in->shape[2];
    if (k->from == CS_GRAY && c != 1)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, CC_OP ": from gray takes 1 channel, got %lld", (long long)c);
    if (k->from != CS_GRAY && c != 3 && c != 4)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, CC_OP ": from %s takes 3 channels (or 4 with alpha), got %lld",
                     cs_names[k->from], (long long)c);
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = k->to == CS_GRAY ? 1 : k->from == CS_GRAY ? 3 : c;
    return DYNOP_OK;
}

static inline uint8_t clamp_u8(int32_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* floor(v / 2^14) for v >= -2^30, by a shift of a non-negative sum. */
static inline int32_t descale14(int32_t v) { return ((v + (1 << 30)) >> 14) - (1 << 16); }

/* hsv2rgb is OpenCV's vector HSV2RGB (see the top of the file). */
static inline void hsv2rgb(float h, float s, float v, float hscale, float *r, float *g, float *b) {
    float hh = h * hscale;
    float p = (float)trunc_i32(hh);
    float f = hh - p;
    float six = (float)trunc_i32(p * (1.0f / 6.0f));
    float sector = p - six * 6.0f;
    float t0 = v, t1 = v * (1.0f - s);
    float t2 = v * fma_f(-s, f, 1.0f);
    float t3 = v * fma_f(-s, 1.0f - f, 1.0f);
    *b = sector < 2.0f ? t1 : sector == 2.0f ? t3 : sector == 3.0f || sector == 4.0f ? t0 : sector > 4.0f ? t2 : 0.0f;
    *g = sector < 1.0f ? t3 : sector == 1.0f || sector == 2.0f ? t0 : sector == 3.0f ? t2 : sector > 3.0f ? t1 : 0.0f;
    *r = sector < 1.0f ? t0 : sector == 1.0f ? t2 : sector == 2.0f || sector == 3.0f ? t1 : sector == 4.0f ? t3
         : sector > 4.0f ? t0 : 0.0f;
}

static void cc_px_u8(const void *kp, const uint8_t *s, int64_t sx, int64_t sc, uint8_t *d, int64_t dx, int64_t dc,
                     int64_t w, int64_t cin, int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    const int64_t ri = k->ri, bi = 2 - k->ri;
    const uint8_t *s0 = s;
    uint8_t *d0 = d;
    int64_t x;
    switch (k->kind) {
    case CC_COPY:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            int64_t i;
            for (i = 0; i < cin; i++) d[i * dc] = s[i * sc];
        }
        return; /* alpha copied already */
    case CC_SWAP:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            uint8_t a = s[0], b = s[2 * sc];
            d[0] = b;
            d[dc] = s[sc];
            d[2 * dc] = a;
        }
        break;
    case CC_TO_GRAY:
        if (ri == 0) dynop_imgproc_gray_u8(s, 1, w, 0, sx, sc, d, 0, dx);
        else dynop_imgproc_gray_u8(s + 2 * sc, 1, w, 0, sx, -sc, d, 0, dx);
        return;
    case CC_FROM_GRAY:
        for (x = 0; x < w; x++, s += sx, d += dx) d[0] = d[dc] = d[2 * dc] = s[0];
        return;
    case CC_TO_YCC:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            int32_t r = s[ri * sc], g = s[sc], b = s[bi * sc];
            int32_t y = (4899 * r + 9617 * g + 1868 * b + 8192) >> 14;
            int32_t cr = ((r - y) * 11682 + (128 << 14) + 8192) >> 14;
            int32_t cb = ((b - y) * 9241 + (128 << 14) + 8192) >> 14;
            d[0] = (uint8_t)y;
            d[dc] = clamp_u8(cb);
            d[2 * dc] = clamp_u8(cr);
        }
        break;
    case CC_FROM_YCC:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            int32_t y = s[0], cb = s[sc] - 128, cr = s[2 * sc] - 128;
            d[ri * dc] = clamp_u8(y + descale14(22987 * cr + 8192));
            d[dc] = clamp_u8(y + descale14(-5636 * cb - 11698 * cr + 8192));
            d[bi * dc] = clamp_u8(y + descale14(29049 * cb + 8192));
        }
        break;
    case CC_TO_HSV:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            int32_t r = s[ri * sc], g = s[sc], b = s[bi * sc];
            int32_t v = r > g ? r : g, mn = r < g ? r : g, diff, h;
            if (b > v) v = b;
            if (b < mn) mn = b;
            diff = v - mn;
            h = v == r ? g - b : v == g ? b - r + 2 * diff : r - g + 4 * diff;
            /* h hdiv >= -2^30: an arithmetic shift by a non-negative sum. */
            h = ((h * k->hdiv[diff] + 2048 + (1 << 30)) >> 12) - (1 << 18);
            if (h < 0) h += 180;
            d[0] = clamp_u8(h);
            d[dc] = (uint8_t)((diff * k->sdiv[v] + 2048) >> 12);
            d[2 * dc] = (uint8_t)v;
        }
        break;
    case CC_FROM_HSV:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float r, g, b;
            hsv2rgb((float)s[0], (float)s[sc] * (1.0f / 255.0f), (float)s[2 * sc] * (1.0f / 255.0f), 6.0f / 180.0f,
                    &r, &g, &b);
            d[ri * dc] = clamp_u8(trunc_i32(r * 255.0f));
            d[dc] = clamp_u8(trunc_i32(g * 255.0f));
            d[bi * dc] = clamp_u8(trunc_i32(b * 255.0f));
        }
        break;
    }
    if (cout == 4)
        for (x = 0; x < w; x++) d0[x * dx + 3 * dc] = s0[x * sx + 3 * sc];
}

static void cc_px_f32(const void *kp, const float *s, int64_t sx, int64_t sc, float *d, int64_t dx, int64_t dc,
                      int64_t w, int64_t cin, int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    const int64_t ri = k->ri, bi = 2 - k->ri;
    const float *s0 = s;
    float *d0 = d;
    int64_t x;
    switch (k->kind) {
    case CC_COPY:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            int64_t i;
            for (i = 0; i < cin; i++) d[i * dc] = s[i * sc];
        }
        return;
    case CC_SWAP:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float a = s[0], b = s[2 * sc];
            d[0] = b;
            d[dc] = s[sc];
            d[2 * dc] = a;
        }
        break;
    case CC_TO_GRAY:
        if (ri == 0) dynop_imgproc_gray_f32(s, 1, w, 0, sx, sc, d, 0, dx);
        else dynop_imgproc_gray_f32(s + 2 * sc, 1, w, 0, sx, -sc, d, 0, dx);
        return;
    case CC_FROM_GRAY:
        for (x = 0; x < w; x++, s += sx, d += dx) d[0] = d[dc] = d[2 * dc] = s[0];
        return;
    case CC_TO_YCC:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float r = s[ri * sc], g = s[sc], b = s[bi * sc];
            float y = (0.299f * r + 0.587f * g) + 0.114f * b;
            d[0] = y;
            d[dc] = (b - y) * 0.564f + 0.5f;
            d[2 * dc] = (r - y) * 0.713f + 0.5f;
        }
        break;
    case CC_FROM_YCC:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float y = s[0], cb = s[sc] - 0.5f, cr = s[2 * sc] - 0.5f;
            d[ri * dc] = y + cr * 1.403f;
            d[dc] = (y + cb * -0.344f) + cr * -0.714f;
            d[bi * dc] = y + cb * 1.773f;
        }
        break;
    case CC_TO_HSV:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float r = s[ri * sc], g = s[sc], b = s[bi * sc];
            float mx = r > g ? r : g, mn = r < g ? r : g, diff, h, off, rev;
            if (b > mx) mx = b;
            if (b < mn) mn = b;
            diff = mx - mn;
            if (r == mx) {
                h = g - b;
                off = g < b ? 360.0f : 0.0f;
            } else if (g == mx) {
                h = b - r;
                off = 120.0f;
            } else {
                h = r - g;
                off = 240.0f;
            }
            rev = 60.0f / (diff + FLT_EPSILON);
            d[0] = fma_f(h, rev, off);
            d[dc] = diff / (fabsf(mx) + FLT_EPSILON);
            d[2 * dc] = mx;
        }
        break;
    case CC_FROM_HSV:
        for (x = 0; x < w; x++, s += sx, d += dx) {
            float r, g, b;
            hsv2rgb(s[0], s[sc], s[2 * sc], 6.0f / 360.0f, &r, &g, &b);
            d[ri * dc] = r;
            d[dc] = g;
            d[bi * dc] = b;
        }
        break;
    }
    if (cout == 4)
        for (x = 0; x < w; x++) d0[x * dx + 3 * dc] = s0[x * sx + 3 * sc];
}

/* ---- imgproc.ColorTwist -------------------------------------------------- */

#define CT_OP "imgproc.ColorTwist"
#define CT_MAX_FACTOR 100.0
#define CT_MAX_HUE 1e6

typedef struct {
    /* Per dtype, M row-major with t last: m[4k + j] = M_kj, m[4k + 3] = t. */
    float m8[12], mf[12];
} ct_inst;

/* sincos_deg computes sin and cos of deg degrees (|deg| <= 1e6) to about
 * an ulp, without libm: an exact reduction to [-45, 45] degrees, then
 * Taylor series. */
static void sincos_deg(double deg, double *sn, double *cs) {
    double q = deg / 90.0;
    int64_t n = (int64_t)(q + (q >= 0 ? 0.5 : -0.5));
    double x = (deg - 90.0 * (double)n) * (3.14159265358979323846 / 180.0), x2 = x * x;
    double s = 1, c = 1;
    int i;
    /* Horner, from the 17th (sine) and 16th (cosine) orders. */
    for (i = 16; i >= 2; i -= 2) {
        s = 1 - x2 * s / ((double)(i + 1) * (double)i);
        c = 1 - x2 * c / ((double)i * (double)(i - 1));
    }
    s *= x;
    switch ((int)(((n % 4) + 4) % 4)) {
    case 0: *sn = s; *cs = c; break;
    case 1: *sn = c; *cs = -s; break;
    case 2: *sn = -s; *cs = -c; break;
    default: *sn = -c; *cs = s; break;
    }
}

static dynop_result ct_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    static const double rgb2yiq[3][3] = {{.299, .587, .114}, {.596, -.274, -.321}, {.211, -.523, .311}};
    static const double yiq2rgb[3][3] = {{1, .956, .621}, {1, -.272, -.647}, {1, -1.107, 1.705}};
    double br = 1, co = 1, sa = 1, hue = 0, sn, cs, hs[3][3], a[3][3], m[3][3];
    ct_inst *k;
    int i, j, l;
    (void)user_data;
    arg_float(args, n, "brightness", &br);
    arg_float(args, n, "contrast", &co);
    arg_float(args, n, "saturation", &sa);
    arg_float(args, n, "hue", &hue);
    if (!(br >= 0 && br <= CT_MAX_FACTOR) || !(co >= -CT_MAX_FACTOR && co <= CT_MAX_FACTOR) ||
        !(sa >= -CT_MAX_FACTOR && sa <= CT_MAX_FACTOR) || !(hue >= -CT_MAX_HUE && hue <= CT_MAX_HUE))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     CT_OP ": brightness must be in [0, %g], contrast and saturation in [-%g, %g], hue in [-%g, %g]; "
                           "got %g, %g, %g, %g",
                     CT_MAX_FACTOR, CT_MAX_FACTOR, CT_MAX_FACTOR, CT_MAX_HUE, CT_MAX_HUE, br, co, sa, hue);
    sincos_deg(hue, &sn, &cs);
    /* Hue(h) · Sat(s) */
    hs[0][0] = 1, hs[0][1] = 0, hs[0][2] = 0;
    hs[1][0] = 0, hs[1][1] = cs * sa, hs[1][2] = sn * sa;
    hs[2][0] = 0, hs[2][1] = -sn * sa, hs[2][2] = cs * sa;
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
            for (a[i][j] = 0, l = 0; l < 3; l++) a[i][j] += hs[i][l] * rgb2yiq[l][j];
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) {
            for (m[i][j] = 0, l = 0; l < 3; l++) m[i][j] += yiq2rgb[i][l] * a[l][j];
            m[i][j] *= br * co;
        }
    k = (ct_inst *)malloc(sizeof *k);
    if (k == NULL) return fail(DYNOP_ERROR_NO_MEMORY, CT_OP ": out of memory");
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 3; j++) k->m8[4 * i + j] = k->mf[4 * i + j] = (float)m[i][j];
        k->m8[4 * i + 3] = (float)((128.0 - 128.0 * co) * br);
        k->mf[4 * i + 3] = (float)((0.5 - 0.5 * co) * br);
    }
    *instance = k;
    return DYNOP_OK;
}

static void ct_destroy(void *instance) { free(instance); }

static dynop_result ct_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    dynop_result rc = check_image(CT_OP, in, nin, nout, 1);
    (void)instance;
    if (rc != DYNOP_OK) return rc;
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = in->shape[2];
    return DYNOP_OK;
}

/* ct_apply is one output channel: ((M_k0 R + M_k1 G) + M_k2 B) + t. */
static inline float ct_apply(const float *m, float r, float g, float b) {
    float x = m[0] * r, y = m[1] * g, z = m[2] * b;
    float xy = x + y, xyz = xy + z;
    return xyz + m[3];
}

static inline uint8_t ct_u8(float v) {
    v = v > 0.0f ? v : 0.0f; /* clamp first: the rounding needs [0, 255] */
    v = v < 255.0f ? v : 255.0f;
    return (uint8_t)u8_rne(v);
}

static void ct_px_u8(const void *kp, const uint8_t *s, int64_t sx, int64_t sc, uint8_t *d, int64_t dx, int64_t dc,
                     int64_t w, int64_t cin, int64_t cout) {
    const float *m = ((const ct_inst *)kp)->m8;
    int64_t x;
    (void)cout;
    for (x = 0; x < w; x++, s += sx, d += dx) {
        float r = s[0], g = s[sc], b = s[2 * sc];
        d[0] = ct_u8(ct_apply(m, r, g, b));
        d[dc] = ct_u8(ct_apply(m + 4, r, g, b));
        d[2 * dc] = ct_u8(ct_apply(m + 8, r, g, b));
        if (cin == 4) d[3 * dc] = s[3 * sc];
    }
}

static void ct_px_f32(const void *kp, const float *s, int64_t sx, int64_t sc, float *d, int64_t dx, int64_t dc,
                      int64_t w, int64_t cin, int64_t cout) {
    const float *m = ((const ct_inst *)kp)->mf;
    int64_t x;
    (void)cout;
    for (x = 0; x < w; x++, s += sx, d += dx) {
        float r = s[0], g = s[sc], b = s[2 * sc];
        d[0] = ct_apply(m, r, g, b);
        d[dc] = ct_apply(m + 4, r, g, b);
        d[2 * dc] = ct_apply(m + 8, r, g, b);
        if (cin == 4) d[3 * dc] = s[3 * sc];
    }
}

/* ---- SIMD ------------------------------------------------------------------ */

#if IMGPROC_X86
/* Byte planes: 16 pixels of 3 or 4 interleaved channels to one vector of
 * 16 bytes per channel, and back (SSSE3 shuffles; used by both the AVX2
 * and the AVX-512 variants). */
IMGPROC_AVX2 static inline void ld3_u8(const uint8_t *p, __m128i *r, __m128i *g, __m128i *b) {
    __m128i a0 = LD128(p), a1 = LD128(p + 16), a2 = LD128(p + 32);
    *r = _mm_or_si128(
        _mm_or_si128(_mm_shuffle_epi8(a0, _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
                     _mm_shuffle_epi8(a1, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1))),
        _mm_shuffle_epi8(a2, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13)));
    *g = _mm_or_si128(
        _mm_or_si128(_mm_shuffle_epi8(a0, _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
                     _mm_shuffle_epi8(a1, _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1))),
        _mm_shuffle_epi8(a2, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14)));
    *b = _mm_or_si128(
        _mm_or_si128(_mm_shuffle_epi8(a0, _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)),
                     _mm_shuffle_epi8(a1, _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1))),
        _mm_shuffle_epi8(a2, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15)));
}

IMGPROC_AVX2 static inline void st3_u8(uint8_t *p, __m128i r, __m128i g, __m128i b) {
    ST128(p, _mm_or_si128(
                 _mm_or_si128(
                     _mm_shuffle_epi8(r, _mm_setr_epi8(0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5)),
                     _mm_shuffle_epi8(g, _mm_setr_epi8(-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1))),
                 _mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1))));
    ST128(p + 16,
          _mm_or_si128(
              _mm_or_si128(
                  _mm_shuffle_epi8(r, _mm_setr_epi8(-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1)),
                  _mm_shuffle_epi8(g, _mm_setr_epi8(5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10))),
              _mm_shuffle_epi8(b, _mm_setr_epi8(-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1))));
    ST128(p + 32,
          _mm_or_si128(
              _mm_or_si128(
                  _mm_shuffle_epi8(r, _mm_setr_epi8(-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1)),
                  _mm_shuffle_epi8(g, _mm_setr_epi8(-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1))),
              _mm_shuffle_epi8(b, _mm_setr_epi8(10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15))));
}

/* A 4x4 transpose of bytes within each 16: pixel-major to channel-major
 * and back (it is its own inverse). */
#define TR4x4_U8 _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)

IMGPROC_AVX2 static inline void ld4_u8(const uint8_t *p, __m128i *r, __m128i *g, __m128i *b, __m128i *a) {
    __m128i c0 = _mm_shuffle_epi8(LD128(p), TR4x4_U8), c1 = _mm_shuffle_epi8(LD128(p + 16), TR4x4_U8);
    __m128i c2 = _mm_shuffle_epi8(LD128(p + 32), TR4x4_U8), c3 = _mm_shuffle_epi8(LD128(p + 48), TR4x4_U8);
    __m128i t0 = _mm_unpacklo_epi32(c0, c1), t1 = _mm_unpackhi_epi32(c0, c1);
    __m128i t2 = _mm_unpacklo_epi32(c2, c3), t3 = _mm_unpackhi_epi32(c2, c3);
    *r = _mm_unpacklo_epi64(t0, t2);
    *g = _mm_unpackhi_epi64(t0, t2);
    *b = _mm_unpacklo_epi64(t1, t3);
    *a = _mm_unpackhi_epi64(t1, t3);
}

IMGPROC_AVX2 static inline void st4_u8(uint8_t *p, __m128i r, __m128i g, __m128i b, __m128i a) {
    __m128i t0 = _mm_unpacklo_epi32(r, g), t1 = _mm_unpacklo_epi32(b, a);
    __m128i t2 = _mm_unpackhi_epi32(r, g), t3 = _mm_unpackhi_epi32(b, a);
    ST128(p, _mm_shuffle_epi8(_mm_unpacklo_epi64(t0, t1), TR4x4_U8));
    ST128(p + 16, _mm_shuffle_epi8(_mm_unpackhi_epi64(t0, t1), TR4x4_U8));
    ST128(p + 32, _mm_shuffle_epi8(_mm_unpacklo_epi64(t2, t3), TR4x4_U8));
    ST128(p + 48, _mm_shuffle_epi8(_mm_unpackhi_epi64(t2, t3), TR4x4_U8));
}

/* ld_u8 and st_u8: 3 or 4 channels (a is left alone for 3). */
IMGPROC_AVX2 static inline void ld_u8(const uint8_t *p, int64_t c, __m128i *r, __m128i *g, __m128i *b, __m128i *a) {
    if (c == 4) ld4_u8(p, r, g, b, a);
    else ld3_u8(p, r, g, b);
}

IMGPROC_AVX2 static inline void st_u8(uint8_t *p, int64_t c, __m128i r, __m128i g, __m128i b, __m128i a) {
    if (c == 4) st4_u8(p, r, g, b, a);
    else st3_u8(p, r, g, b);
}

/* ---- AVX2: 16 bytes as two vectors of 8 int32, and back with saturation */
IMGPROC_AVX2 static inline __m256i lo8_avx2(__m128i v) { return _mm256_cvtepu8_epi32(v); }
IMGPROC_AVX2 static inline __m256i hi8_avx2(__m128i v) { return _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)); }
IMGPROC_AVX2 static inline __m128i pack8x2_avx2(__m256i lo, __m256i hi) {
    __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    return _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

#define MUL32_AVX2(v, k) _mm256_mullo_epi32(v, _mm256_set1_epi32(k))

/* Float planes: 8 pixels of 3 channels (the deinterleave of
 * imgproc.Grayscale's kernel), and 8 of 4 channels with the pixels of
 * each plane in the order 0, 2, 4, 6, 1, 3, 5, 7 (st4f_avx2 takes them so). */
IMGPROC_AVX2 static inline void ld3f_avx2(const float *p, __m256 *r, __m256 *g, __m256 *b) {
    __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8), v2 = _mm256_loadu_ps(p + 16);
    *r = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x92), v2, 0x24),
                                  _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
    *g = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x24), v2, 0x49),
                                  _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6));
    *b = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x49), v2, 0x92),
                                  _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
}

IMGPROC_AVX2 static inline void st3f_avx2(float *p, __m256 r, __m256 g, __m256 b) {
    __m256 xr = _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
    __m256 xg = _mm256_permutevar8x32_ps(g, _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2));
    __m256 xb = _mm256_permutevar8x32_ps(b, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
    _mm256_storeu_ps(p, _mm256_blend_ps(_mm256_blend_ps(xr, xg, 0x92), xb, 0x24));
    _mm256_storeu_ps(p + 8, _mm256_blend_ps(_mm256_blend_ps(xr, xg, 0x24), xb, 0x49));
    _mm256_storeu_ps(p + 16, _mm256_blend_ps(_mm256_blend_ps(xr, xg, 0x49), xb, 0x92));
}

IMGPROC_AVX2 static inline void ld4f_avx2(const float *p, __m256 *r, __m256 *g, __m256 *b, __m256 *a) {
    __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8);
    __m256 v2 = _mm256_loadu_ps(p + 16), v3 = _mm256_loadu_ps(p + 24);
    __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);
    __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);
    *r = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    *g = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    *b = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    *a = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

IMGPROC_AVX2 static inline void st4f_avx2(float *p, __m256 r, __m256 g, __m256 b, __m256 a) {
    __m256 t0 = _mm256_unpacklo_ps(r, g), t1 = _mm256_unpacklo_ps(b, a);
    __m256 t2 = _mm256_unpackhi_ps(r, g), t3 = _mm256_unpackhi_ps(b, a);
    _mm256_storeu_ps(p, _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0)));
    _mm256_storeu_ps(p + 8, _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2)));
    _mm256_storeu_ps(p + 16, _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0)));
    _mm256_storeu_ps(p + 24, _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2)));
}

IMGPROC_AVX2 static inline void ldf_avx2(const float *p, int64_t c, __m256 *r, __m256 *g, __m256 *b, __m256 *a) {
    if (c == 4) ld4f_avx2(p, r, g, b, a);
    else ld3f_avx2(p, r, g, b);
}

IMGPROC_AVX2 static inline void stf_avx2(float *p, int64_t c, __m256 r, __m256 g, __m256 b, __m256 a) {
    if (c == 4) st4f_avx2(p, r, g, b, a);
    else st3f_avx2(p, r, g, b);
}

/* 8 lanes of the uint8 conversions, in int32. */
IMGPROC_AVX2 static inline __m256i gray8_avx2(__m256i r, __m256i g, __m256i b) {
    __m256i y = _mm256_add_epi32(_mm256_add_epi32(MUL32_AVX2(r, 9798), MUL32_AVX2(g, 19235)), MUL32_AVX2(b, 3735));
    return _mm256_srli_epi32(_mm256_add_epi32(y, _mm256_set1_epi32(16384)), 15);
}

IMGPROC_AVX2 static inline void ycc8_avx2(__m256i r, __m256i g, __m256i b, __m256i *y, __m256i *cb, __m256i *cr) {
    const __m256i half = _mm256_set1_epi32((128 << 14) + 8192);
    __m256i t = _mm256_add_epi32(_mm256_add_epi32(MUL32_AVX2(r, 4899), MUL32_AVX2(g, 9617)), MUL32_AVX2(b, 1868));
    *y = _mm256_srli_epi32(_mm256_add_epi32(t, _mm256_set1_epi32(8192)), 14);
    *cr = _mm256_srai_epi32(_mm256_add_epi32(MUL32_AVX2(_mm256_sub_epi32(r, *y), 11682), half), 14);
    *cb = _mm256_srai_epi32(_mm256_add_epi32(MUL32_AVX2(_mm256_sub_epi32(b, *y), 9241), half), 14);
}

IMGPROC_AVX2 static inline void rgb8_avx2(__m256i y, __m256i cb, __m256i cr, __m256i *r, __m256i *g, __m256i *b) {
    const __m256i d = _mm256_set1_epi32(8192), c128 = _mm256_set1_epi32(128);
    cb = _mm256_sub_epi32(cb, c128);
    cr = _mm256_sub_epi32(cr, c128);
    *r = _mm256_add_epi32(y, _mm256_srai_epi32(_mm256_add_epi32(MUL32_AVX2(cr, 22987), d), 14));
    *g = _mm256_add_epi32(
        y, _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(MUL32_AVX2(cb, -5636), MUL32_AVX2(cr, -11698)), d), 14));
    *b = _mm256_add_epi32(y, _mm256_srai_epi32(_mm256_add_epi32(MUL32_AVX2(cb, 29049), d), 14));
}

/* ---- AVX2 HSV ---------------------------------------------------------------- */

/* fma4_avx2 is fma_f's a·b + c rounded to odd in double, 4 lanes. */
IMGPROC_AVX2 static inline __m256d fma4_avx2(__m256d a, __m256d b, __m256d c) {
    const __m256d z = _mm256_setzero_pd();
    __m256d p = _mm256_mul_pd(a, b), s = _mm256_add_pd(p, c), bp = _mm256_sub_pd(s, c);
    __m256d e = _mm256_add_pd(_mm256_sub_pd(p, bp), _mm256_sub_pd(c, _mm256_sub_pd(s, bp)));
    __m256d need = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(e, z, _CMP_NEQ_UQ), _mm256_cmp_pd(s, z, _CMP_NEQ_UQ)),
                                 _mm256_cmp_pd(_mm256_sub_pd(s, s), z, _CMP_EQ_OQ));
    /* -1 where e and s differ in sign (as fma_f's comparisons say), +1 elsewhere */
    __m256i adj = _mm256_or_si256(
        _mm256_castpd_si256(_mm256_xor_pd(_mm256_cmp_pd(e, z, _CMP_GT_OQ), _mm256_cmp_pd(s, z, _CMP_GT_OQ))),
        _mm256_set1_epi64x(1));
    __m256i bits = _mm256_castpd_si256(s);
    __m256i even = _mm256_cmpeq_epi64(_mm256_and_si256(bits, _mm256_set1_epi64x(1)), _mm256_setzero_si256());
    bits = _mm256_add_epi64(bits, _mm256_and_si256(_mm256_and_si256(even, _mm256_castpd_si256(need)), adj));
    return _mm256_castsi256_pd(bits);
}

/* fma8_avx2 is fma_f on 8 lanes. */
IMGPROC_AVX2 static inline __m256 fma8_avx2(__m256 a, __m256 b, __m256 c) {
    __m256d lo = fma4_avx2(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_castps256_ps128(b)),
                           _mm256_cvtps_pd(_mm256_castps256_ps128(c)));
    __m256d hi = fma4_avx2(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)),
                           _mm256_cvtps_pd(_mm256_extractf128_ps(c, 1)));
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

#define SEL8(m, x) _mm256_and_ps(m, x)
#define CMP8(a, k, op) _mm256_cmp_ps(a, _mm256_set1_ps(k), op)

/* hsv2rgb on 8 lanes. */
IMGPROC_AVX2 static inline void hsv2rgb8_avx2(__m256 h, __m256 s, __m256 v, float hscale, __m256 *r, __m256 *g,
                                              __m256 *b) {
    const __m256 one = _mm256_set1_ps(1.0f), ns = _mm256_xor_ps(s, _mm256_set1_ps(-0.0f));
    __m256 hh = _mm256_mul_ps(h, _mm256_set1_ps(hscale));
    __m256 p = _mm256_cvtepi32_ps(_mm256_cvttps_epi32(hh));
    __m256 f = _mm256_sub_ps(hh, p);
    __m256 six = _mm256_cvtepi32_ps(_mm256_cvttps_epi32(_mm256_mul_ps(p, _mm256_set1_ps(1.0f / 6.0f))));
    __m256 sec = _mm256_sub_ps(p, _mm256_mul_ps(six, _mm256_set1_ps(6.0f)));
    __m256 t0 = v, t1 = _mm256_mul_ps(v, _mm256_sub_ps(one, s));
    __m256 t2 = _mm256_mul_ps(v, fma8_avx2(ns, f, one));
    __m256 t3 = _mm256_mul_ps(v, fma8_avx2(ns, _mm256_sub_ps(one, f), one));
    __m256 lt1 = CMP8(sec, 1.0f, _CMP_LT_OQ), lt2 = CMP8(sec, 2.0f, _CMP_LT_OQ);
    __m256 eq1 = CMP8(sec, 1.0f, _CMP_EQ_OQ), eq2 = CMP8(sec, 2.0f, _CMP_EQ_OQ);
    __m256 eq3 = CMP8(sec, 3.0f, _CMP_EQ_OQ), eq4 = CMP8(sec, 4.0f, _CMP_EQ_OQ);
    __m256 gt3 = CMP8(sec, 3.0f, _CMP_GT_OQ), gt4 = CMP8(sec, 4.0f, _CMP_GT_OQ);
    *b = _mm256_or_ps(_mm256_or_ps(SEL8(lt2, t1), SEL8(eq2, t3)),
                      _mm256_or_ps(SEL8(_mm256_or_ps(eq3, eq4), t0), SEL8(gt4, t2)));
    *g = _mm256_or_ps(_mm256_or_ps(SEL8(lt1, t3), SEL8(_mm256_or_ps(eq1, eq2), t0)),
                      _mm256_or_ps(SEL8(eq3, t2), SEL8(gt3, t1)));
    *r = _mm256_or_ps(_mm256_or_ps(_mm256_or_ps(SEL8(lt1, t0), SEL8(eq1, t2)), SEL8(_mm256_or_ps(eq2, eq3), t1)),
                      _mm256_or_ps(SEL8(eq4, t3), SEL8(gt4, t0)));
}

/* uint8 RGB to HSV on 8 lanes of int32. */
IMGPROC_AVX2 static inline void tohsv8_avx2(const cc_inst *k, __m256i r, __m256i g, __m256i b, __m256i *H,
                                            __m256i *S, __m256i *V) {
    __m256i v = _mm256_max_epi32(_mm256_max_epi32(r, g), b);
    __m256i d = _mm256_sub_epi32(v, _mm256_min_epi32(_mm256_min_epi32(r, g), b));
    __m256i h = _mm256_add_epi32(_mm256_sub_epi32(r, g), _mm256_slli_epi32(d, 2));
    h = _mm256_blendv_epi8(h, _mm256_add_epi32(_mm256_sub_epi32(b, r), _mm256_slli_epi32(d, 1)),
                           _mm256_cmpeq_epi32(v, g));
    h = _mm256_blendv_epi8(h, _mm256_sub_epi32(g, b), _mm256_cmpeq_epi32(v, r));
    h = _mm256_mullo_epi32(h, _mm256_i32gather_epi32((const int *)k->hdiv, d, 4));
    h = _mm256_srai_epi32(_mm256_add_epi32(h, _mm256_set1_epi32(2048)), 12);
    *H = _mm256_add_epi32(h, _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), h), _mm256_set1_epi32(180)));
    *S = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_mullo_epi32(d, _mm256_i32gather_epi32((const int *)k->sdiv, v, 4)),
                         _mm256_set1_epi32(2048)),
        12);
    *V = v;
}

/* uint8 HSV to RGB on 8 lanes of int32 (trunc(x·255), packed with
 * saturation later). */
IMGPROC_AVX2 static inline void fromhsv8_avx2(__m256i h, __m256i s, __m256i v, __m256i *r, __m256i *g, __m256i *b) {
    const __m256 k = _mm256_set1_ps(1.0f / 255.0f), c255 = _mm256_set1_ps(255.0f);
    __m256 rf, gf, bf;
    hsv2rgb8_avx2(_mm256_cvtepi32_ps(h), _mm256_mul_ps(_mm256_cvtepi32_ps(s), k), _mm256_mul_ps(_mm256_cvtepi32_ps(v), k),
                  6.0f / 180.0f, &rf, &gf, &bf);
    *r = _mm256_cvttps_epi32(_mm256_mul_ps(rf, c255));
    *g = _mm256_cvttps_epi32(_mm256_mul_ps(gf, c255));
    *b = _mm256_cvttps_epi32(_mm256_mul_ps(bf, c255));
}

/* float32 RGB to HSV on 8 lanes. */
IMGPROC_AVX2 static inline void tohsvf8_avx2(__m256 r, __m256 g, __m256 b, __m256 *H, __m256 *S, __m256 *V) {
    __m256 mx = _mm256_max_ps(b, _mm256_max_ps(r, g)), mn = _mm256_min_ps(b, _mm256_min_ps(r, g));
    __m256 d = _mm256_sub_ps(mx, mn), eps = _mm256_set1_ps(FLT_EPSILON);
    __m256 mr = _mm256_cmp_ps(r, mx, _CMP_EQ_OQ), mg = _mm256_cmp_ps(g, mx, _CMP_EQ_OQ);
    __m256 h = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_sub_ps(r, g), _mm256_sub_ps(b, r), mg), _mm256_sub_ps(g, b), mr);
    __m256 off = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_set1_ps(240.0f), _mm256_set1_ps(120.0f), mg),
                                  _mm256_and_ps(_mm256_cmp_ps(g, b, _CMP_LT_OQ), _mm256_set1_ps(360.0f)), mr);
    __m256 rev = _mm256_div_ps(_mm256_set1_ps(60.0f), _mm256_add_ps(d, eps));
    *H = fma8_avx2(h, rev, off);
    *S = _mm256_div_ps(d, _mm256_add_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), mx), eps));
    *V = mx;
}

IMGPROC_AVX2 static void cc_row_u8_avx2(const void *kp, const uint8_t *s, uint8_t *d, int64_t w, int64_t cin,
                                        int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    int64_t x = 0;
    __m128i p0, p1, p2, a = _mm_setzero_si128();
    switch (k->kind) {
    case CC_COPY:
        memcpy(d, s, (size_t)(w * cin) * sizeof *s);
        return;
    case CC_SWAP:
        for (; x + 16 <= w; x += 16) {
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            st_u8(d + x * cout, cout, p2, p1, p0, a);
        }
        break;
    case CC_TO_GRAY:
        if (k->ri == 0) {
            gray_u8_avx2(s, d, w, cin);
            return;
        }
        for (; x + 16 <= w; x += 16) {
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            ST128(d + x, pack8x2_avx2(gray8_avx2(lo8_avx2(p2), lo8_avx2(p1), lo8_avx2(p0)),
                                      gray8_avx2(hi8_avx2(p2), hi8_avx2(p1), hi8_avx2(p0))));
        }
        break;
    case CC_FROM_GRAY:
        for (; x + 16 <= w; x += 16) {
            p0 = LD128(s + x);
            st3_u8(d + 3 * x, p0, p0, p0);
        }
        break;
    case CC_TO_YCC:
        for (; x + 16 <= w; x += 16) {
            __m256i y0, cb0, cr0, y1, cb1, cr1;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            if (k->ri != 0) {
                __m128i t = p0;
                p0 = p2;
                p2 = t;
            }
            ycc8_avx2(lo8_avx2(p0), lo8_avx2(p1), lo8_avx2(p2), &y0, &cb0, &cr0);
            ycc8_avx2(hi8_avx2(p0), hi8_avx2(p1), hi8_avx2(p2), &y1, &cb1, &cr1);
            st_u8(d + x * cout, cout, pack8x2_avx2(y0, y1), pack8x2_avx2(cb0, cb1), pack8x2_avx2(cr0, cr1), a);
        }
        break;
    case CC_FROM_YCC:
        for (; x + 16 <= w; x += 16) {
            __m256i r0, g0, b0, r1, g1, b1;
            __m128i r, g, b;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            rgb8_avx2(lo8_avx2(p0), lo8_avx2(p1), lo8_avx2(p2), &r0, &g0, &b0);
            rgb8_avx2(hi8_avx2(p0), hi8_avx2(p1), hi8_avx2(p2), &r1, &g1, &b1);
            r = pack8x2_avx2(r0, r1), g = pack8x2_avx2(g0, g1), b = pack8x2_avx2(b0, b1);
            if (k->ri == 0) st_u8(d + x * cout, cout, r, g, b, a);
            else st_u8(d + x * cout, cout, b, g, r, a);
        }
        break;
    case CC_TO_HSV:
        for (; x + 16 <= w; x += 16) {
            __m256i h0, s0, v0, h1, s1, v1;
            __m128i r, b;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            r = k->ri == 0 ? p0 : p2, b = k->ri == 0 ? p2 : p0;
            tohsv8_avx2(k, lo8_avx2(r), lo8_avx2(p1), lo8_avx2(b), &h0, &s0, &v0);
            tohsv8_avx2(k, hi8_avx2(r), hi8_avx2(p1), hi8_avx2(b), &h1, &s1, &v1);
            st_u8(d + x * cout, cout, pack8x2_avx2(h0, h1), pack8x2_avx2(s0, s1), pack8x2_avx2(v0, v1), a);
        }
        break;
    case CC_FROM_HSV:
        for (; x + 16 <= w; x += 16) {
            __m256i r0, g0, b0, r1, g1, b1;
            __m128i r, g, b;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            fromhsv8_avx2(lo8_avx2(p0), lo8_avx2(p1), lo8_avx2(p2), &r0, &g0, &b0);
            fromhsv8_avx2(hi8_avx2(p0), hi8_avx2(p1), hi8_avx2(p2), &r1, &g1, &b1);
            r = pack8x2_avx2(r0, r1), g = pack8x2_avx2(g0, g1), b = pack8x2_avx2(b0, b1);
            if (k->ri == 0) st_u8(d + x * cout, cout, r, g, b, a);
            else st_u8(d + x * cout, cout, b, g, r, a);
        }
        break;
    default:
        break;
    }
    PX_TAIL(cc_px_u8, kp, s, d, x, w, cin, cout);
}

IMGPROC_AVX2 static void cc_row_f32_avx2(const void *kp, const float *s, float *d, int64_t w, int64_t cin,
                                         int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    int64_t x = 0;
    __m256 p0, p1, p2, a = _mm256_setzero_ps();
    switch (k->kind) {
    case CC_COPY:
        memcpy(d, s, (size_t)(w * cin) * sizeof *s);
        return;
    case CC_SWAP:
        for (; x + 8 <= w; x += 8) {
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            stf_avx2(d + x * cout, cout, p2, p1, p0, a);
        }
        break;
    case CC_TO_GRAY:
        if (k->ri == 0) {
            gray_f32_avx2(s, d, w, cin);
            return;
        }
        for (; x + 8 <= w; x += 8) {
            __m256 y;
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            y = grayf_combine_avx2(p2, p1, p0);
            if (cin == 4) y = _mm256_permutevar8x32_ps(y, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_ps(d + x, y);
        }
        break;
    case CC_FROM_GRAY:
        for (; x + 8 <= w; x += 8) {
            p0 = _mm256_loadu_ps(s + x);
            st3f_avx2(d + 3 * x, p0, p0, p0);
        }
        break;
    case CC_TO_YCC:
        for (; x + 8 <= w; x += 8) {
            __m256 y, cb, cr;
            const __m256 half = _mm256_set1_ps(0.5f);
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            if (k->ri != 0) {
                __m256 t = p0;
                p0 = p2;
                p2 = t;
            }
            y = grayf_combine_avx2(p0, p1, p2);
            cb = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(p2, y), _mm256_set1_ps(0.564f)), half);
            cr = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(p0, y), _mm256_set1_ps(0.713f)), half);
            stf_avx2(d + x * cout, cout, y, cb, cr, a);
        }
        break;
    case CC_FROM_YCC:
        for (; x + 8 <= w; x += 8) {
            __m256 r, g, b, cb, cr;
            const __m256 half = _mm256_set1_ps(0.5f);
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            cb = _mm256_sub_ps(p1, half);
            cr = _mm256_sub_ps(p2, half);
            r = _mm256_add_ps(p0, _mm256_mul_ps(cr, _mm256_set1_ps(1.403f)));
            g = _mm256_add_ps(_mm256_add_ps(p0, _mm256_mul_ps(cb, _mm256_set1_ps(-0.344f))),
                              _mm256_mul_ps(cr, _mm256_set1_ps(-0.714f)));
            b = _mm256_add_ps(p0, _mm256_mul_ps(cb, _mm256_set1_ps(1.773f)));
            if (k->ri == 0) stf_avx2(d + x * cout, cout, r, g, b, a);
            else stf_avx2(d + x * cout, cout, b, g, r, a);
        }
        break;
    case CC_TO_HSV:
        for (; x + 8 <= w; x += 8) {
            __m256 hh, ss, vv;
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            if (k->ri == 0) tohsvf8_avx2(p0, p1, p2, &hh, &ss, &vv);
            else tohsvf8_avx2(p2, p1, p0, &hh, &ss, &vv);
            stf_avx2(d + x * cout, cout, hh, ss, vv, a);
        }
        break;
    case CC_FROM_HSV:
        for (; x + 8 <= w; x += 8) {
            __m256 r, g, b;
            ldf_avx2(s + x * cin, cin, &p0, &p1, &p2, &a);
            hsv2rgb8_avx2(p0, p1, p2, 6.0f / 360.0f, &r, &g, &b);
            if (k->ri == 0) stf_avx2(d + x * cout, cout, r, g, b, a);
            else stf_avx2(d + x * cout, cout, b, g, r, a);
        }
        break;
    default:
        break;
    }
    PX_TAIL(cc_px_f32, kp, s, d, x, w, cin, cout);
}

/* ColorTwist, 8 lanes: ((m0 r + m1 g) + m2 b) + t. */
IMGPROC_AVX2 static inline __m256 ct8_avx2(const float *m, __m256 r, __m256 g, __m256 b) {
    __m256 xy = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(m[0]), r), _mm256_mul_ps(_mm256_set1_ps(m[1]), g));
    return _mm256_add_ps(_mm256_add_ps(xy, _mm256_mul_ps(_mm256_set1_ps(m[2]), b)), _mm256_set1_ps(m[3]));
}

/* to uint8 in int32: clamped to [0, 255], rounded to nearest even. */
IMGPROC_AVX2 static inline __m256i ct8_u8_avx2(const float *m, __m256 r, __m256 g, __m256 b) {
    __m256 v = _mm256_min_ps(_mm256_max_ps(ct8_avx2(m, r, g, b), _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    return _mm256_cvtps_epi32(v);
}

IMGPROC_AVX2 static void ct_row_u8_avx2(const void *kp, const uint8_t *s, uint8_t *d, int64_t w, int64_t cin,
                                        int64_t cout) {
    const float *m = ((const ct_inst *)kp)->m8;
    int64_t x = 0;
    __m128i p0, p1, p2, a = _mm_setzero_si128();
    for (; x + 16 <= w; x += 16) {
        __m256 r0, g0, b0, r1, g1, b1;
        ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
        r0 = _mm256_cvtepi32_ps(lo8_avx2(p0)), g0 = _mm256_cvtepi32_ps(lo8_avx2(p1));
        b0 = _mm256_cvtepi32_ps(lo8_avx2(p2));
        r1 = _mm256_cvtepi32_ps(hi8_avx2(p0)), g1 = _mm256_cvtepi32_ps(hi8_avx2(p1));
        b1 = _mm256_cvtepi32_ps(hi8_avx2(p2));
        st_u8(d + x * cout, cout, pack8x2_avx2(ct8_u8_avx2(m, r0, g0, b0), ct8_u8_avx2(m, r1, g1, b1)),
              pack8x2_avx2(ct8_u8_avx2(m + 4, r0, g0, b0), ct8_u8_avx2(m + 4, r1, g1, b1)),
              pack8x2_avx2(ct8_u8_avx2(m + 8, r0, g0, b0), ct8_u8_avx2(m + 8, r1, g1, b1)), a);
    }
    PX_TAIL(ct_px_u8, kp, s, d, x, w, cin, cout);
}

IMGPROC_AVX2 static void ct_row_f32_avx2(const void *kp, const float *s, float *d, int64_t w, int64_t cin,
                                         int64_t cout) {
    const float *m = ((const ct_inst *)kp)->mf;
    int64_t x = 0;
    __m256 r, g, b, a = _mm256_setzero_ps();
    for (; x + 8 <= w; x += 8) {
        ldf_avx2(s + x * cin, cin, &r, &g, &b, &a);
        stf_avx2(d + x * cout, cout, ct8_avx2(m, r, g, b), ct8_avx2(m + 4, r, g, b), ct8_avx2(m + 8, r, g, b), a);
    }
    PX_TAIL(ct_px_f32, kp, s, d, x, w, cin, cout);
}

/* ---- AVX-512: 16 bytes as one vector of 16 int32 --------------------------- */
IMGPROC_AVX512 static inline __m512i x16_avx512(__m128i v) { return _mm512_cvtepu8_epi32(v); }
IMGPROC_AVX512 static inline __m128i pack16_avx512(__m512i v) {
    v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_setzero_si512()), _mm512_set1_epi32(255));
    return _mm512_cvtepi32_epi8(v);
}

#define MUL32_AVX512(v, k) _mm512_mullo_epi32(v, _mm512_set1_epi32(k))

/* Float planes, 16 pixels, in order. */
IMGPROC_AVX512 static inline void ld3f_avx512(const float *p, __m512 *r, __m512 *g, __m512 *b) {
    const __m512i r1 = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0);
    const __m512i r2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
    const __m512i g1 = _mm512_setr_epi32(1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0);
    const __m512i g2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
    const __m512i b1 = _mm512_setr_epi32(2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0);
    const __m512i b2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
    __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16), v2 = _mm512_loadu_ps(p + 32);
    *r = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, r1, v1), r2, v2);
    *g = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, g1, v1), g2, v2);
    *b = _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, b1, v1), b2, v2);
}

IMGPROC_AVX512 static inline void st3f_avx512(float *p, __m512 r, __m512 g, __m512 b) {
    /* Float j of vector k is channel (16k + j) % 3 of pixel (16k + j) / 3:
     * r and g first, then b. */
    const __m512i a0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
    const __m512i b0 = _mm512_setr_epi32(0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15);
    const __m512i a1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
    const __m512i b1 = _mm512_setr_epi32(0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15);
    const __m512i a2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
    const __m512i b2 = _mm512_setr_epi32(26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31);
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(_mm512_permutex2var_ps(r, a0, g), b0, b));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(_mm512_permutex2var_ps(r, a1, g), b1, b));
    _mm512_storeu_ps(p + 32, _mm512_permutex2var_ps(_mm512_permutex2var_ps(r, a2, g), b2, b));
}

IMGPROC_AVX512 static inline void ld4f_avx512(const float *p, __m512 *r, __m512 *g, __m512 *b, __m512 *a) {
    const __m512i i_rg = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i i_ba = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16);
    __m512 v2 = _mm512_loadu_ps(p + 32), v3 = _mm512_loadu_ps(p + 48);
    __m512 x = _mm512_permutex2var_ps(v0, i_rg, v1), y = _mm512_permutex2var_ps(v2, i_rg, v3);
    __m512 e = _mm512_permutex2var_ps(v0, i_ba, v1), f = _mm512_permutex2var_ps(v2, i_ba, v3);
    *r = _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(1, 0, 1, 0));
    *g = _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 2, 3, 2));
    *b = _mm512_shuffle_f32x4(e, f, _MM_SHUFFLE(1, 0, 1, 0));
    *a = _mm512_shuffle_f32x4(e, f, _MM_SHUFFLE(3, 2, 3, 2));
}

IMGPROC_AVX512 static inline void st4f_avx512(float *p, __m512 r, __m512 g, __m512 b, __m512 a) {
    /* x = r0-7 g0-7, y = r8-15 g8-15, e = b0-7 a0-7, f = b8-15 a8-15 */
    const __m512i lo = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
    const __m512i hi = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
    __m512 x = _mm512_shuffle_f32x4(r, g, _MM_SHUFFLE(1, 0, 1, 0)), y = _mm512_shuffle_f32x4(r, g, _MM_SHUFFLE(3, 2, 3, 2));
    __m512 e = _mm512_shuffle_f32x4(b, a, _MM_SHUFFLE(1, 0, 1, 0)), f = _mm512_shuffle_f32x4(b, a, _MM_SHUFFLE(3, 2, 3, 2));
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(x, lo, e));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(x, hi, e));
    _mm512_storeu_ps(p + 32, _mm512_permutex2var_ps(y, lo, f));
    _mm512_storeu_ps(p + 48, _mm512_permutex2var_ps(y, hi, f));
}

IMGPROC_AVX512 static inline void ldf_avx512(const float *p, int64_t c, __m512 *r, __m512 *g, __m512 *b, __m512 *a) {
    if (c == 4) ld4f_avx512(p, r, g, b, a);
    else ld3f_avx512(p, r, g, b);
}

IMGPROC_AVX512 static inline void stf_avx512(float *p, int64_t c, __m512 r, __m512 g, __m512 b, __m512 a) {
    if (c == 4) st4f_avx512(p, r, g, b, a);
    else st3f_avx512(p, r, g, b);
}

IMGPROC_AVX512 static inline __m512i gray16_avx512(__m512i r, __m512i g, __m512i b) {
    __m512i y =
        _mm512_add_epi32(_mm512_add_epi32(MUL32_AVX512(r, 9798), MUL32_AVX512(g, 19235)), MUL32_AVX512(b, 3735));
    return _mm512_srli_epi32(_mm512_add_epi32(y, _mm512_set1_epi32(16384)), 15);
}

IMGPROC_AVX512 static inline __m512 grayf16_avx512(__m512 r, __m512 g, __m512 b) {
    __m512 rg = _mm512_add_ps(_mm512_mul_ps(r, _mm512_set1_ps(0.299f)), _mm512_mul_ps(g, _mm512_set1_ps(0.587f)));
    return _mm512_add_ps(rg, _mm512_mul_ps(b, _mm512_set1_ps(0.114f)));
}

/* ---- AVX-512 HSV: fused multiply-adds are instructions here ------------------ */

#define CMP16(a, k, op) _mm512_cmp_ps_mask(a, _mm512_set1_ps(k), op)

IMGPROC_AVX512 static inline void hsv2rgb16_avx512(__m512 h, __m512 s, __m512 v, float hscale, __m512 *r, __m512 *g,
                                                   __m512 *b) {
    const __m512 one = _mm512_set1_ps(1.0f), z = _mm512_setzero_ps();
    __m512 hh = _mm512_mul_ps(h, _mm512_set1_ps(hscale));
    __m512 p = _mm512_cvtepi32_ps(_mm512_cvttps_epi32(hh));
    __m512 f = _mm512_sub_ps(hh, p);
    __m512 six = _mm512_cvtepi32_ps(_mm512_cvttps_epi32(_mm512_mul_ps(p, _mm512_set1_ps(1.0f / 6.0f))));
    __m512 sec = _mm512_sub_ps(p, _mm512_mul_ps(six, _mm512_set1_ps(6.0f)));
    __m512 t0 = v, t1 = _mm512_mul_ps(v, _mm512_sub_ps(one, s));
    __m512 t2 = _mm512_mul_ps(v, _mm512_fnmadd_ps(s, f, one));
    __m512 t3 = _mm512_mul_ps(v, _mm512_fnmadd_ps(s, _mm512_sub_ps(one, f), one));
    __mmask16 lt1 = CMP16(sec, 1.0f, _CMP_LT_OQ), lt2 = CMP16(sec, 2.0f, _CMP_LT_OQ);
    __mmask16 eq1 = CMP16(sec, 1.0f, _CMP_EQ_OQ), eq2 = CMP16(sec, 2.0f, _CMP_EQ_OQ);
    __mmask16 eq3 = CMP16(sec, 3.0f, _CMP_EQ_OQ), eq4 = CMP16(sec, 4.0f, _CMP_EQ_OQ);
    __mmask16 gt3 = CMP16(sec, 3.0f, _CMP_GT_OQ), gt4 = CMP16(sec, 4.0f, _CMP_GT_OQ);
    __m512 x = _mm512_mask_mov_ps(z, lt2, t1);
    x = _mm512_mask_mov_ps(x, eq2, t3);
    x = _mm512_mask_mov_ps(x, (__mmask16)(eq3 | eq4), t0);
    *b = _mm512_mask_mov_ps(x, gt4, t2);
    x = _mm512_mask_mov_ps(z, lt1, t3);
    x = _mm512_mask_mov_ps(x, (__mmask16)(eq1 | eq2), t0);
    x = _mm512_mask_mov_ps(x, eq3, t2);
    *g = _mm512_mask_mov_ps(x, gt3, t1);
    x = _mm512_mask_mov_ps(z, lt1, t0);
    x = _mm512_mask_mov_ps(x, eq1, t2);
    x = _mm512_mask_mov_ps(x, (__mmask16)(eq2 | eq3), t1);
    x = _mm512_mask_mov_ps(x, eq4, t3);
    *r = _mm512_mask_mov_ps(x, gt4, t0);
}

IMGPROC_AVX512 static inline void tohsv16_avx512(const cc_inst *k, __m512i r, __m512i g, __m512i b, __m512i *H,
                                                 __m512i *S, __m512i *V) {
    __m512i v = _mm512_max_epi32(_mm512_max_epi32(r, g), b);
    __m512i d = _mm512_sub_epi32(v, _mm512_min_epi32(_mm512_min_epi32(r, g), b));
    __m512i h = _mm512_add_epi32(_mm512_sub_epi32(r, g), _mm512_slli_epi32(d, 2));
    h = _mm512_mask_mov_epi32(h, _mm512_cmpeq_epi32_mask(v, g),
                              _mm512_add_epi32(_mm512_sub_epi32(b, r), _mm512_slli_epi32(d, 1)));
    h = _mm512_mask_mov_epi32(h, _mm512_cmpeq_epi32_mask(v, r), _mm512_sub_epi32(g, b));
    h = _mm512_mullo_epi32(h, _mm512_i32gather_epi32(d, (const void *)k->hdiv, 4));
    h = _mm512_srai_epi32(_mm512_add_epi32(h, _mm512_set1_epi32(2048)), 12);
    *H = _mm512_mask_add_epi32(h, _mm512_cmplt_epi32_mask(h, _mm512_setzero_si512()), h, _mm512_set1_epi32(180));
    *S = _mm512_srli_epi32(_mm512_add_epi32(_mm512_mullo_epi32(d, _mm512_i32gather_epi32(v, (const void *)k->sdiv, 4)),
                                            _mm512_set1_epi32(2048)),
                           12);
    *V = v;
}

IMGPROC_AVX512 static inline void fromhsv16_avx512(__m512i h, __m512i s, __m512i v, __m512i *r, __m512i *g,
                                                   __m512i *b) {
    const __m512 k = _mm512_set1_ps(1.0f / 255.0f), c255 = _mm512_set1_ps(255.0f);
    __m512 rf, gf, bf;
    hsv2rgb16_avx512(_mm512_cvtepi32_ps(h), _mm512_mul_ps(_mm512_cvtepi32_ps(s), k),
                     _mm512_mul_ps(_mm512_cvtepi32_ps(v), k), 6.0f / 180.0f, &rf, &gf, &bf);
    *r = _mm512_cvttps_epi32(_mm512_mul_ps(rf, c255));
    *g = _mm512_cvttps_epi32(_mm512_mul_ps(gf, c255));
    *b = _mm512_cvttps_epi32(_mm512_mul_ps(bf, c255));
}

IMGPROC_AVX512 static inline void tohsvf16_avx512(__m512 r, __m512 g, __m512 b, __m512 *H, __m512 *S, __m512 *V) {
    __m512 mx = _mm512_max_ps(b, _mm512_max_ps(r, g)), mn = _mm512_min_ps(b, _mm512_min_ps(r, g));
    __m512 d = _mm512_sub_ps(mx, mn), eps = _mm512_set1_ps(FLT_EPSILON);
    __mmask16 mr = _mm512_cmp_ps_mask(r, mx, _CMP_EQ_OQ), mg = _mm512_cmp_ps_mask(g, mx, _CMP_EQ_OQ);
    __m512 h = _mm512_mask_mov_ps(_mm512_mask_mov_ps(_mm512_sub_ps(r, g), mg, _mm512_sub_ps(b, r)), mr,
                                  _mm512_sub_ps(g, b));
    __m512 off = _mm512_mask_mov_ps(_mm512_mask_mov_ps(_mm512_set1_ps(240.0f), mg, _mm512_set1_ps(120.0f)), mr,
                                    _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(g, b, _CMP_LT_OQ), _mm512_set1_ps(360.0f)));
    __m512 rev = _mm512_div_ps(_mm512_set1_ps(60.0f), _mm512_add_ps(d, eps));
    __m512 absmx = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(mx), _mm512_set1_epi32(0x7FFFFFFF)));
    *H = _mm512_fmadd_ps(h, rev, off);
    *S = _mm512_div_ps(d, _mm512_add_ps(absmx, eps));
    *V = mx;
}

IMGPROC_AVX512 static void cc_row_u8_avx512(const void *kp, const uint8_t *s, uint8_t *d, int64_t w, int64_t cin,
                                            int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    int64_t x = 0;
    __m128i p0, p1, p2, a = _mm_setzero_si128();
    switch (k->kind) {
    case CC_COPY:
        memcpy(d, s, (size_t)(w * cin) * sizeof *s);
        return;
    case CC_SWAP:
        for (; x + 16 <= w; x += 16) {
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            st_u8(d + x * cout, cout, p2, p1, p0, a);
        }
        break;
    case CC_TO_GRAY:
        if (k->ri == 0) {
            gray_u8_avx512(s, d, w, cin);
            return;
        }
        for (; x + 16 <= w; x += 16) {
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            ST128(d + x, pack16_avx512(gray16_avx512(x16_avx512(p2), x16_avx512(p1), x16_avx512(p0))));
        }
        break;
    case CC_FROM_GRAY:
        for (; x + 16 <= w; x += 16) {
            p0 = LD128(s + x);
            st3_u8(d + 3 * x, p0, p0, p0);
        }
        break;
    case CC_TO_YCC:
        for (; x + 16 <= w; x += 16) {
            const __m512i half = _mm512_set1_epi32((128 << 14) + 8192);
            __m512i r, g, b, y, cb, cr;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            r = x16_avx512(k->ri == 0 ? p0 : p2), g = x16_avx512(p1), b = x16_avx512(k->ri == 0 ? p2 : p0);
            y = _mm512_add_epi32(_mm512_add_epi32(MUL32_AVX512(r, 4899), MUL32_AVX512(g, 9617)), MUL32_AVX512(b, 1868));
            y = _mm512_srli_epi32(_mm512_add_epi32(y, _mm512_set1_epi32(8192)), 14);
            cr = _mm512_srai_epi32(_mm512_add_epi32(MUL32_AVX512(_mm512_sub_epi32(r, y), 11682), half), 14);
            cb = _mm512_srai_epi32(_mm512_add_epi32(MUL32_AVX512(_mm512_sub_epi32(b, y), 9241), half), 14);
            st_u8(d + x * cout, cout, pack16_avx512(y), pack16_avx512(cb), pack16_avx512(cr), a);
        }
        break;
    case CC_FROM_YCC:
        for (; x + 16 <= w; x += 16) {
            const __m512i dd = _mm512_set1_epi32(8192), c128 = _mm512_set1_epi32(128);
            __m512i y, cb, cr;
            __m128i r, g, b;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            y = x16_avx512(p0), cb = _mm512_sub_epi32(x16_avx512(p1), c128), cr = _mm512_sub_epi32(x16_avx512(p2), c128);
            r = pack16_avx512(_mm512_add_epi32(y, _mm512_srai_epi32(_mm512_add_epi32(MUL32_AVX512(cr, 22987), dd), 14)));
            g = pack16_avx512(_mm512_add_epi32(
                y, _mm512_srai_epi32(
                       _mm512_add_epi32(_mm512_add_epi32(MUL32_AVX512(cb, -5636), MUL32_AVX512(cr, -11698)), dd), 14)));
            b = pack16_avx512(_mm512_add_epi32(y, _mm512_srai_epi32(_mm512_add_epi32(MUL32_AVX512(cb, 29049), dd), 14)));
            if (k->ri == 0) st_u8(d + x * cout, cout, r, g, b, a);
            else st_u8(d + x * cout, cout, b, g, r, a);
        }
        break;
    case CC_TO_HSV:
        for (; x + 16 <= w; x += 16) {
            __m512i hh, ss, vv;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            tohsv16_avx512(k, x16_avx512(k->ri == 0 ? p0 : p2), x16_avx512(p1), x16_avx512(k->ri == 0 ? p2 : p0), &hh,
                           &ss, &vv);
            st_u8(d + x * cout, cout, pack16_avx512(hh), pack16_avx512(ss), pack16_avx512(vv), a);
        }
        break;
    case CC_FROM_HSV:
        for (; x + 16 <= w; x += 16) {
            __m512i r, g, b;
            ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
            fromhsv16_avx512(x16_avx512(p0), x16_avx512(p1), x16_avx512(p2), &r, &g, &b);
            if (k->ri == 0) st_u8(d + x * cout, cout, pack16_avx512(r), pack16_avx512(g), pack16_avx512(b), a);
            else st_u8(d + x * cout, cout, pack16_avx512(b), pack16_avx512(g), pack16_avx512(r), a);
        }
        break;
    default:
        break;
    }
    PX_TAIL(cc_px_u8, kp, s, d, x, w, cin, cout);
}

IMGPROC_AVX512 static void cc_row_f32_avx512(const void *kp, const float *s, float *d, int64_t w, int64_t cin,
                                             int64_t cout) {
    const cc_inst *k = (const cc_inst *)kp;
    int64_t x = 0;
    __m512 p0, p1, p2, a = _mm512_setzero_ps();
    switch (k->kind) {
    case CC_COPY:
        memcpy(d, s, (size_t)(w * cin) * sizeof *s);
        return;
    case CC_SWAP:
        for (; x + 16 <= w; x += 16) {
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            stf_avx512(d + x * cout, cout, p2, p1, p0, a);
        }
        break;
    case CC_TO_GRAY:
        if (k->ri == 0) {
            gray_f32_avx512(s, d, w, cin);
            return;
        }
        for (; x + 16 <= w; x += 16) {
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            _mm512_storeu_ps(d + x, grayf16_avx512(p2, p1, p0));
        }
        break;
    case CC_FROM_GRAY:
        for (; x + 16 <= w; x += 16) {
            p0 = _mm512_loadu_ps(s + x);
            st3f_avx512(d + 3 * x, p0, p0, p0);
        }
        break;
    case CC_TO_YCC:
        for (; x + 16 <= w; x += 16) {
            const __m512 half = _mm512_set1_ps(0.5f);
            __m512 r, b, y, cb, cr;
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            r = k->ri == 0 ? p0 : p2, b = k->ri == 0 ? p2 : p0;
            y = grayf16_avx512(r, p1, b);
            cb = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(b, y), _mm512_set1_ps(0.564f)), half);
            cr = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(r, y), _mm512_set1_ps(0.713f)), half);
            stf_avx512(d + x * cout, cout, y, cb, cr, a);
        }
        break;
    case CC_FROM_YCC:
        for (; x + 16 <= w; x += 16) {
            const __m512 half = _mm512_set1_ps(0.5f);
            __m512 r, g, b, cb, cr;
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            cb = _mm512_sub_ps(p1, half);
            cr = _mm512_sub_ps(p2, half);
            r = _mm512_add_ps(p0, _mm512_mul_ps(cr, _mm512_set1_ps(1.403f)));
            g = _mm512_add_ps(_mm512_add_ps(p0, _mm512_mul_ps(cb, _mm512_set1_ps(-0.344f))),
                              _mm512_mul_ps(cr, _mm512_set1_ps(-0.714f)));
            b = _mm512_add_ps(p0, _mm512_mul_ps(cb, _mm512_set1_ps(1.773f)));
            if (k->ri == 0) stf_avx512(d + x * cout, cout, r, g, b, a);
            else stf_avx512(d + x * cout, cout, b, g, r, a);
        }
        break;
    case CC_TO_HSV:
        for (; x + 16 <= w; x += 16) {
            __m512 hh, ss, vv;
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            if (k->ri == 0) tohsvf16_avx512(p0, p1, p2, &hh, &ss, &vv);
            else tohsvf16_avx512(p2, p1, p0, &hh, &ss, &vv);
            stf_avx512(d + x * cout, cout, hh, ss, vv, a);
        }
        break;
    case CC_FROM_HSV:
        for (; x + 16 <= w; x += 16) {
            __m512 r, g, b;
            ldf_avx512(s + x * cin, cin, &p0, &p1, &p2, &a);
            hsv2rgb16_avx512(p0, p1, p2, 6.0f / 360.0f, &r, &g, &b);
            if (k->ri == 0) stf_avx512(d + x * cout, cout, r, g, b, a);
            else stf_avx512(d + x * cout, cout, b, g, r, a);
        }
        break;
    default:
        break;
    }
    PX_TAIL(cc_px_f32, kp, s, d, x, w, cin, cout);
}

IMGPROC_AVX512 static inline __m512 ct16_avx512(const float *m, __m512 r, __m512 g, __m512 b) {
    __m512 xy = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(m[0]), r), _mm512_mul_ps(_mm512_set1_ps(m[1]), g));
    return _mm512_add_ps(_mm512_add_ps(xy, _mm512_mul_ps(_mm512_set1_ps(m[2]), b)), _mm512_set1_ps(m[3]));
}

IMGPROC_AVX512 static inline __m128i ct16_u8_avx512(const float *m, __m512 r, __m512 g, __m512 b) {
    __m512 v = _mm512_min_ps(_mm512_max_ps(ct16_avx512(m, r, g, b), _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
    return _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v));
}

IMGPROC_AVX512 static void ct_row_u8_avx512(const void *kp, const uint8_t *s, uint8_t *d, int64_t w, int64_t cin,
                                            int64_t cout) {
    const float *m = ((const ct_inst *)kp)->m8;
    int64_t x = 0;
    __m128i p0, p1, p2, a = _mm_setzero_si128();
    for (; x + 16 <= w; x += 16) {
        __m512 r, g, b;
        ld_u8(s + x * cin, cin, &p0, &p1, &p2, &a);
        r = _mm512_cvtepi32_ps(x16_avx512(p0)), g = _mm512_cvtepi32_ps(x16_avx512(p1));
        b = _mm512_cvtepi32_ps(x16_avx512(p2));
        st_u8(d + x * cout, cout, ct16_u8_avx512(m, r, g, b), ct16_u8_avx512(m + 4, r, g, b),
              ct16_u8_avx512(m + 8, r, g, b), a);
    }
    PX_TAIL(ct_px_u8, kp, s, d, x, w, cin, cout);
}

IMGPROC_AVX512 static void ct_row_f32_avx512(const void *kp, const float *s, float *d, int64_t w, int64_t cin,
                                             int64_t cout) {
    const float *m = ((const ct_inst *)kp)->mf;
    int64_t x = 0;
    __m512 r, g, b, a = _mm512_setzero_ps();
    for (; x + 16 <= w; x += 16) {
        ldf_avx512(s + x * cin, cin, &r, &g, &b, &a);
        stf_avx512(d + x * cout, cout, ct16_avx512(m, r, g, b), ct16_avx512(m + 4, r, g, b),
                   ct16_avx512(m + 8, r, g, b), a);
    }
    PX_TAIL(ct_px_f32, kp, s, d, x, w, cin, cout);
}
#endif /* IMGPROC_X86 */

/* ---- variants, schemas ------------------------------------------------------ */

static const px_kernels cc_scalar = {cc_px_u8, cc_px_f32, NULL, NULL};
static const px_kernels ct_scalar = {ct_px_u8, ct_px_f32, NULL, NULL};
#if IMGPROC_X86
static const px_kernels cc_avx2 = {cc_px_u8, cc_px_f32, cc_row_u8_avx2, cc_row_f32_avx2};
static const px_kernels cc_avx512 = {cc_px_u8, cc_px_f32, cc_row_u8_avx512, cc_row_f32_avx512};
static const px_kernels ct_avx2 = {ct_px_u8, ct_px_f32, ct_row_u8_avx2, ct_row_f32_avx2};
static const px_kernels ct_avx512 = {ct_px_u8, ct_px_f32, ct_row_u8_avx512, ct_row_f32_avx512};
#endif

#define PX_RUN(name, kernels)                                                                                          \
    static dynop_result name(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,           \
                             uint32_t nin) {                                                                           \
        (void)nout;                                                                                                    \
        (void)nin;                                                                                                     \
        px_run(instance, &kernels, out, in);                                                                           \
        return DYNOP_OK;                                                                                               \
    }

PX_RUN(colorconvert_run_scalar, cc_scalar)
PX_RUN(colortwist_run_scalar, ct_scalar)
#if IMGPROC_X86
PX_RUN(colorconvert_run_avx2, cc_avx2)
PX_RUN(colorconvert_run_avx512, cc_avx512)
PX_RUN(colortwist_run_avx2, ct_avx2)
PX_RUN(colortwist_run_avx512, ct_avx512)
#endif

static const dynop_variant colorconvert_variants[] = {IMGPROC_VARIANTS(colorconvert)};
static const dynop_variant colortwist_variants[] = {IMGPROC_VARIANTS(colortwist)};

static const dynop_op_input colorconvert_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images",
     "Images in the colour space from: 3 channels (4 with alpha) for rgb, bgr, ycbcr and hsv, 1 for gray.",
     "uint8,float32", "HWC", 3, "1,3,4"},
};
static const dynop_op_output colorconvert_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "converted",
     "The images in the colour space to, the input's dtype: 1 channel for gray, else 3 (4 with alpha, copied).", "HWC",
     NULL, NULL, "images", 0, NULL, 0},
};
#define CS_ALLOWED "[\"rgb\", \"bgr\", \"gray\", \"ycbcr\", \"hsv\"]"
static const dynop_op_arg colorconvert_args[] = {
    {DYNOP_OP_ARG_HEADER, "from", "The input's colour space.", DYNOP_ARG_STRING, 0, 0, 0, "\"rgb\"", CS_ALLOWED, NULL},
    {DYNOP_OP_ARG_HEADER, "to", "The output's colour space.", DYNOP_ARG_STRING, DYNOP_ARG_REQUIRED, 0, 0, NULL,
     CS_ALLOWED, NULL},
};
static const dynop_op_schema colorconvert_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.ColorConvert",
    "Converts images between the colour spaces rgb, bgr, gray, ycbcr (full-range BT.601, channels Y, Cb, Cr) and hsv, "
    "as OpenCV's cvtColor.",
    "cpu",
    1, 0, colorconvert_inputs,
    1, colorconvert_outputs,
    2, colorconvert_args,
};
static const dynop_operator colorconvert_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.ColorConvert", "cpu", NULL, cc_create, cc_setup, cc_destroy,
                                  colorconvert_variants, DYNOP_OPERATOR_CONCURRENT);

static const dynop_op_input colortwist_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "RGB images, 3 channels (4 with alpha, copied).", "uint8,float32", "HWC", 3, "3,4"},
};
static const dynop_op_output colortwist_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "twisted", "The images adjusted, of the input's shape and dtype.", "HWC", NULL, NULL,
     "images", 0, NULL, DYNOP_CHANNELS_LIKE},
};
static const dynop_op_arg colortwist_args[] = {
    {DYNOP_OP_ARG_HEADER, "brightness", "Multiplier of the result.", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, CT_MAX_FACTOR, "1.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "contrast", "Contrast factor around mid grey (128 for uint8, 0.5 for float32).",
     DYNOP_ARG_FLOAT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, -CT_MAX_FACTOR, CT_MAX_FACTOR, "1.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "saturation", "Saturation factor (scales I and Q in YIQ).", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, -CT_MAX_FACTOR, CT_MAX_FACTOR, "1.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "hue", "Hue rotation in degrees (in the IQ plane of YIQ).", DYNOP_ARG_FLOAT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, -CT_MAX_HUE, CT_MAX_HUE, "0.0", NULL, NULL},
};
static const dynop_op_schema colortwist_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    "imgproc.ColorTwist",
    "Adjusts brightness, contrast, saturation and hue of RGB images with one affine colour map, as DALI's ColorTwist.",
    "cpu",
    1, 0, colortwist_inputs,
    1, colortwist_outputs,
    4, colortwist_args,
};
static const dynop_operator colortwist_op =
    DYNOP_OPERATOR_VARIANTS_FLAGS("imgproc.ColorTwist", "cpu", NULL, ct_create, ct_setup, ct_destroy,
                                  colortwist_variants, DYNOP_OPERATOR_CONCURRENT);
