/*
 * codec.c — the native codec plugin, dynop.plugin.codec: image decoding
 * and encoding on the libraries the field uses, libjpeg-turbo (its
 * TurboJPEG 2.x API), libpng and libwebp. Link with -lturbojpeg -lpng
 * -lwebp (the Makefile asks pkg-config). The Go package plugins/codec
 * documents the operators precisely; in short:
 *
 * codec.Decode: the bytes of a JPEG, PNG or WebP file (1-D uint8, told
 * apart by their first bytes) to uint8 HWC pixels with channels 1, 3 or
 * 4. setup reads only the headers to size the output: JPEG at the
 * smallest DCT scale 1/8, 1/4, 1/2 or 1 whose result is at least
 * min_width x min_height (shrink-on-load), turned by the EXIF orientation
 * if orientation is set. run decodes: JPEG straight into the output (with
 * TJFLAG_BOTTOMUP and an in-place mirror for orientations 2, 3 and 4),
 * or into the host's scratch (DYNOP_OPERATOR_SCRATCH) for what the output
 * cannot take directly (orientations 5 to 8 transpose; CMYK and YCCK
 * pixels are converted to RGB; colour PNG and WebP to one channel go
 * through RGB). Every image may have at most 2^28 pixels (the limit of
 * image.Decode of plugins/image).
 *
 * codec.Encode: uint8 HWC with 1, 3 or 4 channels to the bytes of a PNG,
 * JPEG or WebP file. The size of the output is known only once encoded,
 * so setup encodes each sample into a buffer the instance keeps (its
 * TurboJPEG handle and buffers are reused from batch to batch) and run
 * copies the bytes of the encoding made from the same input tensor.
 *
 * Instances keep per-call state (the TurboJPEG handles, the encodings,
 * error texts), so the operators are not DYNOP_OPERATOR_CONCURRENT: a
 * pipeline makes one instance per worker.
 *
 * codec.native-codecs.decode and codec.native-codecs.encode: populate
 * passes for nodes of kind image.Decode and image.Encode that attach
 * codec.Decode and codec.Encode with the same arguments (Decode with
 * orientation off, as Go's image/jpeg ignores EXIF), or leave the Go
 * operator where the node has an argument without an equivalent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include <dynop/dynop.h>

#define CODEC_PLUGIN "dynop.plugin.codec"
#define DECODE "codec.Decode"
#define ENCODE "codec.Encode"

/* The most pixels an image Decode reads may have: image.Decode's limit. */
#define MAX_PIXELS ((int64_t)1 << 28)

static const dynop_host *host_table;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static dynop_result failf(dynop_result rc, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (host_table != NULL) host_table->set_error(host_table, msg);
    return rc;
}

/* ---- arguments ----------------------------------------------------------- */

static const dynop_arg *find_arg(const dynop_arg *args, uint32_t n, const char *name) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (args[i].name != NULL && strcmp(args[i].name, name) == 0 && args[i].count >= 1 && args[i].values != NULL)
            return &args[i];
    return NULL;
}

static int64_t arg_int(const dynop_arg *args, uint32_t n, const char *name, int64_t def) {
    const dynop_arg *a = find_arg(args, n, name);
    return a != NULL && a->type == DYNOP_ARG_INT ? *(const int64_t *)a->values : def;
}

static int arg_bool(const dynop_arg *args, uint32_t n, const char *name, int def) {
    const dynop_arg *a = find_arg(args, n, name);
    return a != NULL && a->type == DYNOP_ARG_BOOL ? *(const int32_t *)a->values != 0 : def;
}

static const char *arg_string(const dynop_arg *args, uint32_t n, const char *name, const char *def) {
    const dynop_arg *a = find_arg(args, n, name);
    return a != NULL && a->type == DYNOP_ARG_STRING && *(const char *const *)a->values != NULL
               ? *(const char *const *)a->values
               : def;
}

static int is_u8(dynop_dtype t) { return t.code == DYNOP_DTYPE_UINT && t.bits == 8 && t.lanes == 1; }
static int is_u16(dynop_dtype t) { return t.code == DYNOP_DTYPE_UINT && t.bits == 16 && t.lanes == 1; }

/* host_le reports whether uint16_t is little-endian here (PNG's samples
 * are big-endian). */
static int host_le(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static uint16_t luma16(uint32_t r, uint32_t g, uint32_t b) {
    return (uint16_t)(((uint64_t)9798 * r + (uint64_t)19235 * g + (uint64_t)3735 * b + 16384) >> 15);
}

static uint8_t luma8(uint32_t r, uint32_t g, uint32_t b) {
    return (uint8_t)((9798 * r + 19235 * g + 3735 * b + 16384) >> 15);
}

/* ==== EXIF orientation ===================================================== */

static uint32_t rd16(const uint8_t *p, int le) { return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : (uint32_t)p[0] << 8 | p[1]; }

static uint32_t rd32(const uint8_t *p, int le) {
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* tiff_orientation reads tag 0x0112 (Orientation, one SHORT) of IFD0 of
 * the TIFF structure t of n bytes; 1 if it is missing, malformed or out
 * of 1..8. Every read is checked against n. */
static int tiff_orientation(const uint8_t *t, size_t n) {
    int le;
    uint64_t ifd, count, k;
    if (n < 8) return 1;
    if (t[0] == 'I' && t[1] == 'I') le = 1;
    else if (t[0] == 'M' && t[1] == 'M') le = 0;
    else return 1;
    if (rd16(t + 2, le) != 42) return 1;
    ifd = rd32(t + 4, le);
    if (ifd > n || n - ifd < 2) return 1;
    count = rd16(t + ifd, le);
    if (n - ifd - 2 < 12 * count) return 1; /* more entries than the segment holds */
    for (k = 0; k < count; k++) {
        uint64_t e = ifd + 2 + 12 * k;
        uint32_t v;
        if (e > n || n - e < 12) return 1;
        if (rd16(t + e, le) != 0x0112) continue;
        if (rd16(t + e + 2, le) != 3 || rd32(t + e + 4, le) != 1) return 1; /* SHORT, count 1 */
        v = rd16(t + e + 8, le);
        return v >= 1 && v <= 8 ? (int)v : 1;
    }
    return 1;
}

/* exif_orientation returns the EXIF orientation (1..8) of the JPEG p of n
 * bytes: from the first APP1 segment starting "Exif\0\0" before the first
 * scan; 1 if there is none, or if the markers or the EXIF are malformed. */
static int exif_orientation(const uint8_t *p, size_t n) {
    size_t i = 2;
    while (i + 4 <= n) {
        uint8_t m;
        size_t len;
        if (p[i] != 0xFF) return 1;
        m = p[i + 1];
        if (m == 0xFF) { /* fill byte */
            i++;
            continue;
        }
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) { /* no length */
            i += 2;
            continue;
        }
        if (m == 0xDA || m == 0xD9) return 1; /* a scan, or the end */
        len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (len < 2 || len > n - i - 2) return 1;
        if (m == 0xE1 && len >= 8 && memcmp(p + i + 4, "Exif\0\0", 6) == 0) return tiff_orientation(p + i + 10, len - 8);
        i += 2 + len;
    }
    return 1;
}

/* Exported for tests and benchmarks that call the parser directly. */
DYNOP_EXPORT int dynop_codec_exif_orientation(const uint8_t *p, size_t n) {
    return n >= 2 && p[0] == 0xFF && p[1] == 0xD8 ? exif_orientation(p, n) : 1;
}

/* ==== codec.Decode ======================================================== */

enum { FMT_NONE, FMT_JPEG, FMT_PNG, FMT_WEBP };

static int sniff(const uint8_t *p, size_t n) {
    if (n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) return FMT_JPEG;
    if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) return FMT_PNG;
    if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) return FMT_WEBP;
    return FMT_NONE;
}


typedef struct {
    tjhandle tj;   /* made on the first JPEG */
    int channels;  /* 1, 3, 4 */
    int orient;    /* apply EXIF orientation */
    int u16;       /* uint16 output */
    int64_t min_w, min_h;
    char err[256]; /* libpng's message */
} dec_inst;

/* What a sample's header says, and how run decodes it. */
typedef struct {
    int fmt;
    int64_t fw, fh;   /* the file's size */
    int64_t w, h;     /* decoded (scaled), before orientation */
    int64_t ow, oh;   /* the output's */
    int orientation;  /* 1..8 */
    int denom;        /* JPEG scale 1/denom */
    int cmyk;         /* JPEG: CMYK or YCCK */
    int via_rgb;      /* JPEG: colour to one channel, through RGB */
    int png_gray;     /* PNG: gray (or gray+alpha) colour type */
    int png16;        /* PNG: 16-bit samples, decoded as they are into a uint16 output */
    size_t stage;     /* uint16 from 8-bit samples: bytes of the uint8 image widened after */
    size_t scratch;   /* bytes of scratch run needs */
} dec_plan;

static dynop_result dec_create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    dec_inst *d;
    (void)user;
    d = (dec_inst *)calloc(1, sizeof *d);
    if (d == NULL) return failf(DYNOP_ERROR_NO_MEMORY, DECODE ": out of memory");
    d->channels = (int)arg_int(args, n, "channels", 3);
    d->orient = arg_bool(args, n, "orientation", 1);
    d->min_w = arg_int(args, n, "min_width", 0);
    d->min_h = arg_int(args, n, "min_height", 0);
    {
        const dynop_arg *a = find_arg(args, n, "dtype");
        if (a != NULL && a->type == DYNOP_ARG_DTYPE) {
            dynop_dtype t = *(const dynop_dtype *)a->values;
            if (!is_u8(t) && !is_u16(t)) {
                free(d);
                return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": dtype %s%u; want uint8 or uint16",
                             t.code == DYNOP_DTYPE_UINT ? "uint" : t.code == DYNOP_DTYPE_INT ? "int" : "float",
                             (unsigned)t.bits);
            }
            d->u16 = is_u16(t);
        }
    }
    if (d->channels != 1 && d->channels != 3 && d->channels != 4) {
        int c = d->channels;
        free(d);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": channels is %d; want 1, 3 or 4", c);
    }
    *instance = d;
    return DYNOP_OK;
}

static void dec_destroy(void *instance) {
    dec_inst *d = (dec_inst *)instance;
    if (d == NULL) return;
    if (d->tj != NULL) tjDestroy(d->tj);
    free(d);
}

/* input_bytes checks the one input, a 1-D uint8 vector with unit stride. */
static dynop_result input_bytes(const dynop_tensor *in, uint32_t nin, const uint8_t **p, size_t *n) {
    if (nin != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": takes 1 input, got %u", (unsigned)nin);
    if (!is_u8(in->dtype) || in->ndim != 1)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the input must be a 1-D uint8 vector of a file's bytes");
    if (in->shape[0] > 1 && in->strides != NULL && in->strides[0] != 1)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the input's bytes must be contiguous (stride %lld)",
                     (long long)in->strides[0]);
    *p = in->data == NULL ? NULL : (const uint8_t *)in->data + in->byte_offset;
    *n = in->shape[0] < 0 ? 0 : (size_t)in->shape[0];
    if (*p == NULL && *n > 0) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the input has no data");
    return DYNOP_OK;
}

static dynop_result too_large(const char *what, int64_t w, int64_t h) {
    return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                 DECODE ": %s: a %lldx%lld image has %lld pixels, more than the %lld Decode allows", what,
                 (long long)w, (long long)h, (long long)(w * h), (long long)MAX_PIXELS);
}

/* ---- JPEG ---------------------------------------------------------------- */

static dynop_result tj_handle(dec_inst *d) {
    if (d->tj == NULL && (d->tj = tjInitDecompress()) == NULL)
        return failf(DYNOP_ERROR_NO_MEMORY, DECODE ": JPEG: cannot make a TurboJPEG decompressor: %s",
                     tjGetErrorStr2(NULL));
    return DYNOP_OK;
}

static dynop_result jpeg_plan(dec_inst *d, const uint8_t *p, size_t n, dec_plan *pl) {
    int w, h, subsamp, cs, denom;
    dynop_result rc = tj_handle(d);
    if (rc != DYNOP_OK) return rc;
    if (n > (size_t)0xFFFFFFFFu) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": JPEG: the file is over 4 GiB");
    if (tjDecompressHeader3(d->tj, p, (unsigned long)n, &w, &h, &subsamp, &cs) != 0)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": JPEG: %s", tjGetErrorStr2(d->tj));
    if (w <= 0 || h <= 0) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": JPEG: the header says %dx%d", w, h);
    pl->fw = w;
    pl->fh = h;
    if ((int64_t)w * h > MAX_PIXELS) return too_large("JPEG", w, h);
    pl->cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    pl->via_rgb = d->channels == 1 && !pl->cmyk && cs != TJCS_GRAY; /* luma of RGB, as image.Decode */
    pl->orientation = d->orient ? exif_orientation(p, n) : 1;
    /* The smallest scale whose output is still at least min_width x
     * min_height, in the output's orientation. */
    for (denom = d->min_w > 0 || d->min_h > 0 ? 8 : 1; denom > 1; denom /= 2) {
        int64_t sw = ((int64_t)w + denom - 1) / denom, sh = ((int64_t)h + denom - 1) / denom;
        int64_t ow = pl->orientation >= 5 ? sh : sw, oh = pl->orientation >= 5 ? sw : sh;
        if (ow >= d->min_w && oh >= d->min_h) break;
    }
    pl->denom = denom;
    pl->w = ((int64_t)w + denom - 1) / denom;
    pl->h = ((int64_t)h + denom - 1) / denom;
    return DYNOP_OK;
}

/* cmyk_to_rgb converts n pixels of libjpeg's (Adobe, inverted) CMYK to c
 * channels as Go's image/jpeg and color.CMYKToRGB do: Go's CMYK is 255
 * minus libjpeg's, so R = (C' * 0x101) * (K' * 0x101) / 0xffff >> 8. */
static void cmyk_to(const uint8_t *s, uint8_t *d, size_t n, int c) {
    size_t i;
    for (i = 0; i < n; i++, s += 4, d += c) {
        uint32_t k = (uint32_t)s[3] * 0x101;
        uint8_t r = (uint8_t)(((uint32_t)s[0] * 0x101 * k / 0xffff) >> 8);
        uint8_t g = (uint8_t)(((uint32_t)s[1] * 0x101 * k / 0xffff) >> 8);
        uint8_t b = (uint8_t)(((uint32_t)s[2] * 0x101 * k / 0xffff) >> 8);
        if (c == 1) {
            d[0] = luma8(r, g, b);
        } else {
            d[0] = r;
            d[1] = g;
            d[2] = b;
            if (c == 4) d[3] = 0xFF;
        }
    }
}

/* mirror reverses the pixels of each of h rows of w pixels of c bytes. */
static void mirror(uint8_t *p, int64_t w, int64_t h, int64_t pitch, int c) {
    int64_t y, x;
    int k;
    for (y = 0; y < h; y++) {
        uint8_t *row = p + y * pitch;
        for (x = 0; x < w / 2; x++) {
            uint8_t *a = row + x * c, *b = row + (w - 1 - x) * c;
            for (k = 0; k < c; k++) {
                uint8_t t = a[k];
                a[k] = b[k];
                b[k] = t;
            }
        }
    }
}

/* transpose writes the w x h image s (compact, c channels) turned by
 * orientation o (5..8) into d (h x w, rows pitch bytes apart). */
static void transpose(const uint8_t *s, int64_t w, int64_t h, int c, int o, uint8_t *d, int64_t pitch) {
    int64_t y, x; /* output coordinates: h' = w rows, w' = h columns */
    for (y = 0; y < w; y++) {
        uint8_t *row = d + y * pitch;
        for (x = 0; x < h; x++) {
            int64_t sy, sx;
            switch (o) {
            case 5: sy = x; sx = y; break;                  /* transpose */
            case 6: sy = h - 1 - x; sx = y; break;          /* rotate 90 clockwise */
            case 7: sy = h - 1 - x; sx = w - 1 - y; break;  /* transverse */
            default: sy = x; sx = w - 1 - y; break;         /* 8: rotate 90 counter-clockwise */
            }
            memcpy(row + x * c, s + (sy * w + sx) * c, (size_t)c);
        }
    }
}

/* tj_failed reports a failed decompression, except for warnings that
 * leave the image whole (extraneous bytes before a marker). */
static dynop_result tj_failed(dec_inst *d) {
    const char *msg = tjGetErrorStr2(d->tj);
    if (tjGetErrorCode(d->tj) == TJERR_WARNING && strstr(msg, "extraneous bytes") != NULL) return DYNOP_OK;
    return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": JPEG: %s", msg);
}

/* to_out converts n pixels of k channels (4: CMYK, 3: RGB to luma) to c channels. */
static void to_out(const uint8_t *s, uint8_t *d, size_t n, int k, int c) {
    size_t i;
    if (k == 4) {
        cmyk_to(s, d, n, c);
        return;
    }
    for (i = 0; i < n; i++, s += 3) d[i] = luma8(s[0], s[1], s[2]); /* k == 3: c == 1 */
}

/* jpeg_run decodes: straight into the output where it can (orientations
 * 3 and 4 bottom-up, 2 and 3 mirrored in place); else into scratch, then
 * converted (CMYK to RGB, RGB to luma) and/or transposed into the output. */
static dynop_result jpeg_run(dec_inst *d, const uint8_t *p, size_t n, const dec_plan *pl, uint8_t *out,
                             int64_t pitch, uint8_t *scratch) {
    int c = d->channels, o = pl->orientation, k = pl->cmyk ? 4 : pl->via_rgb ? 3 : c, pf;
    int flags = TJFLAG_FASTUPSAMPLE | TJFLAG_LIMITSCANS;
    int64_t w = pl->w, h = pl->h, y;
    size_t px = (size_t)w * (size_t)h;
    int convert = pl->cmyk || pl->via_rgb;
    uint8_t *dst = out;
    int64_t dpitch = pitch;
    pf = pl->cmyk ? TJPF_CMYK : k == 3 ? TJPF_RGB : k == 1 ? TJPF_GRAY : TJPF_RGBA;
    if (convert || o >= 5) {
        dst = scratch;
        dpitch = w * k;
    }
    if (o == 3 || o == 4) flags |= TJFLAG_BOTTOMUP;
    if (tjDecompress2(d->tj, p, (unsigned long)n, dst, (int)w, (int)dpitch, (int)h, pf, flags) != 0) {
        dynop_result rc = tj_failed(d);
        if (rc != DYNOP_OK) return rc;
    }
    if (convert && o >= 5) {
        to_out(scratch, scratch + px * (size_t)k, px, k, c);
        transpose(scratch + px * (size_t)k, w, h, c, o, out, pitch);
    } else if (convert) {
        for (y = 0; y < h; y++) to_out(scratch + (size_t)(y * w * k), out + y * pitch, (size_t)w, k, c);
    } else if (o >= 5) {
        transpose(scratch, w, h, c, o, out, pitch);
    }
    if (o == 2 || o == 3) mirror(out, w, h, pitch, c);
    return DYNOP_OK;
}

/* ---- PNG ----------------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t n, off;
    char *err;
    char warn[128]; /* libpng's last warning, which often says why an error came */
} png_src;

static void png_read_mem(png_structp png, png_bytep out, size_t len) {
    png_src *s = (png_src *)png_get_io_ptr(png);
    if (len > s->n - s->off) png_error(png, "truncated: the file ends early");
    memcpy(out, s->p + s->off, len);
    s->off += len;
}

static void png_fail(png_structp png, png_const_charp msg) {
    png_src *s = (png_src *)png_get_error_ptr(png);
    if (s->warn[0] != 0) snprintf(s->err, 256, "%s (%s)", msg, s->warn);
    else snprintf(s->err, 256, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg) {
    png_src *s = (png_src *)png_get_error_ptr(png);
    snprintf(s->warn, sizeof s->warn, "%s", msg);
}

/* png_enc_warn drops the writer's warnings (its error pointer is a buffer). */
static void png_enc_warn(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

/* png_decode reads the PNG p of n bytes: its header into pl if out is
 * NULL, else its pixels into out (rows pitch bytes apart) as c channels,
 * through scratch (w*h*3 bytes) where a colour image becomes gray. */
static dynop_result png_decode(dec_inst *d, const uint8_t *p, size_t n, dec_plan *pl, uint8_t *out, int64_t pitch,
                               uint8_t *scratch) {
    png_src src;
    png_structp png;
    png_infop info = NULL;
    volatile dynop_result rc = DYNOP_OK;
    src.p = p;
    src.n = n;
    src.off = 0;
    src.err = d->err;
    src.warn[0] = 0;
    d->err[0] = 0;
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail, png_warn);
    if (png == NULL) return failf(DYNOP_ERROR_NO_MEMORY, DECODE ": PNG: cannot make a libpng reader");
    info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return failf(DYNOP_ERROR_NO_MEMORY, DECODE ": PNG: cannot make a libpng reader");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": PNG: %s", d->err);
    }
    png_set_read_fn(png, &src, png_read_mem);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff); /* the pixel limit below says more */
    png_read_info(png, info);
    {
        png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
        int ct = png_get_color_type(png, info), c = d->channels, passes, pass;
        int64_t y;
        pl->fw = pl->w = pl->ow = w;
        pl->fh = pl->h = pl->oh = h;
        pl->png_gray = !(ct & PNG_COLOR_MASK_COLOR);
        pl->png16 = d->u16 && png_get_bit_depth(png, info) == 16;
        if ((int64_t)w * h > MAX_PIXELS) {
            rc = too_large("PNG", w, h);
        } else if (out != NULL) {
            int via_rgb = c == 1 && !pl->png_gray; /* luma of RGB, as image.Decode */
            size_t es = pl->png16 ? 2 : 1;           /* bytes per sample */
            png_set_expand(png);                     /* palette to RGB, gray to 8 bits, tRNS to alpha */
            if (pl->png16) {
                if (host_le()) png_set_swap(png); /* samples in the host's order */
            } else {
                png_set_strip_16(png); /* the high byte, as Go's 16-to-8 bits */
            }
            if (c == 1 || c == 3) png_set_strip_alpha(png);
            if (c >= 3 || via_rgb) png_set_gray_to_rgb(png);
            if (c == 4) png_set_add_alpha(png, pl->png16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
            passes = png_set_interlace_handling(png);
            png_read_update_info(png, info);
            if (png_get_rowbytes(png, info) != (size_t)w * (via_rgb ? 3 : (size_t)c) * es)
                png_error(png, "unexpected row size after conversion");
            for (pass = 0; pass < passes; pass++)
                for (y = 0; y < (int64_t)h; y++)
                    png_read_row(png, via_rgb ? scratch + (size_t)y * w * 3 * es : out + y * pitch, NULL);
            if (via_rgb) {
                for (y = 0; y < (int64_t)h; y++) {
                    png_uint_32 x;
                    if (pl->png16) {
                        const uint16_t *s = (const uint16_t *)(const void *)(scratch + (size_t)y * w * 6);
                        uint16_t *o = (uint16_t *)(void *)(out + y * pitch);
                        for (x = 0; x < w; x++, s += 3) o[x] = luma16(s[0], s[1], s[2]);
                    } else {
                        const uint8_t *s = scratch + (size_t)y * w * 3;
                        uint8_t *o = out + y * pitch;
                        for (x = 0; x < w; x++, s += 3) o[x] = luma8(s[0], s[1], s[2]);
                    }
                }
            }
            png_read_end(png, NULL);
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    return rc;
}

/* ---- WebP ---------------------------------------------------------------- */

static const char *webp_status(VP8StatusCode s) {
    switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt data (bitstream error)";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated (not enough data)";
    default: return "unknown error";
    }
}

static dynop_result webp_plan(const uint8_t *p, size_t n, dec_plan *pl) {
    WebPBitstreamFeatures f;
    VP8StatusCode s = WebPGetFeatures(p, n, &f);
    if (s != VP8_STATUS_OK) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": WebP: %s", webp_status(s));
    if (f.has_animation)
        return failf(DYNOP_ERROR_UNSUPPORTED, DECODE ": WebP: an animated WebP (%dx%d) is not supported; extract a "
                                              "frame first", f.width, f.height);
    pl->fw = pl->w = pl->ow = f.width;
    pl->fh = pl->h = pl->oh = f.height;
    if ((int64_t)f.width * f.height > MAX_PIXELS) return too_large("WebP", f.width, f.height);
    return DYNOP_OK;
}

static dynop_result webp_run(dec_inst *d, const uint8_t *p, size_t n, const dec_plan *pl, uint8_t *out, int64_t pitch,
                             uint8_t *scratch) {
    WebPDecoderConfig cfg;
    VP8StatusCode s;
    int c = d->channels;
    if (!WebPInitDecoderConfig(&cfg)) return failf(DYNOP_ERROR_VERSION, DECODE ": WebP: libwebp version mismatch");
    cfg.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
    cfg.output.is_external_memory = 1;
    if (c == 1) {
        cfg.output.u.RGBA.rgba = scratch;
        cfg.output.u.RGBA.stride = (int)(pl->w * 3);
        cfg.output.u.RGBA.size = (size_t)(pl->w * pl->h * 3);
    } else {
        cfg.output.u.RGBA.rgba = out;
        cfg.output.u.RGBA.stride = (int)pitch;
        cfg.output.u.RGBA.size = (size_t)(pitch * (pl->h - 1) + pl->w * c);
    }
    s = WebPDecode(p, n, &cfg);
    WebPFreeDecBuffer(&cfg.output);
    if (s != VP8_STATUS_OK) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": WebP: %s", webp_status(s));
    if (c == 1) {
        int64_t y, x;
        for (y = 0; y < pl->h; y++) {
            const uint8_t *sp = scratch + y * pl->w * 3;
            for (x = 0; x < pl->w; x++, sp += 3) out[y * pitch + x] = luma8(sp[0], sp[1], sp[2]);
        }
    }
    return DYNOP_OK;
}

/* ---- setup and run --------------------------------------------------------- */

/* plan reads the header of the sample p of n bytes. */
static dynop_result plan(dec_inst *d, const uint8_t *p, size_t n, dec_plan *pl) {
    dynop_result rc;
    size_t px, c = (size_t)d->channels;
    memset(pl, 0, sizeof *pl);
    pl->orientation = 1;
    pl->denom = 1;
    pl->fmt = sniff(p, n);
    switch (pl->fmt) {
    case FMT_JPEG: rc = jpeg_plan(d, p, n, pl); break;
    case FMT_PNG: rc = png_decode(d, p, n, pl, NULL, 0, NULL); break;
    case FMT_WEBP: rc = webp_plan(p, n, pl); break;
    default: {
        char hex[3 * 8 + 1] = "";
        size_t i;
        for (i = 0; i < n && i < 8; i++) snprintf(hex + (i ? 3 * i - 1 : 0), 4, i ? " %02x" : "%02x", p[i]);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     DECODE ": not a JPEG, PNG or WebP file: %zu bytes starting %s%s", n, n ? "" : "(empty)", hex);
    }
    }
    if (rc != DYNOP_OK) return rc;
    pl->ow = pl->orientation >= 5 ? pl->h : pl->w;
    pl->oh = pl->orientation >= 5 ? pl->w : pl->h;
    px = (size_t)pl->w * (size_t)pl->h;
    switch (pl->fmt) {
    case FMT_JPEG:
        if (pl->cmyk || pl->via_rgb) pl->scratch = px * (pl->cmyk ? 4 : 3) + (pl->orientation >= 5 ? px * c : 0);
        else if (pl->orientation >= 5) pl->scratch = px * c;
        break;
    case FMT_PNG:
    case FMT_WEBP:
        if (c == 1 && (pl->fmt == FMT_WEBP || !pl->png_gray)) pl->scratch = px * 3 * (pl->png16 ? 2 : 1);
        break;
    }
    /* uint16 from 8-bit samples: the uint8 image is staged after the
     * scratch, then widened (v * 257). */
    if (d->u16 && !pl->png16) {
        pl->scratch = (pl->scratch + 63) & ~(size_t)63;
        pl->stage = (size_t)pl->ow * (size_t)pl->oh * c;
        pl->scratch += pl->stage;
    }
    return DYNOP_OK;
}

static dynop_result dec_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    dec_inst *d = (dec_inst *)instance;
    const uint8_t *p;
    size_t n;
    dec_plan pl;
    dynop_result rc = input_bytes(in, nin, &p, &n);
    if (rc != DYNOP_OK) return rc;
    if (nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": has 1 output, got %u", (unsigned)nout);
    if ((rc = plan(d, p, n, &pl)) != DYNOP_OK) return rc;
    out[0].dtype.code = DYNOP_DTYPE_UINT;
    out[0].dtype.bits = d->u16 ? 16 : 8;
    out[0].dtype.lanes = 1;
    out[0].ndim = 3;
    out[0].shape[0] = pl.oh;
    out[0].shape[1] = pl.ow;
    out[0].shape[2] = d->channels;
    out[1].shape[0] = (int64_t)pl.scratch; /* DYNOP_OPERATOR_SCRATCH */
    return DYNOP_OK;
}

static dynop_result dec_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                            uint32_t nin) {
    dec_inst *d = (dec_inst *)instance;
    const uint8_t *p;
    size_t n;
    dec_plan pl;
    uint8_t *o, *scratch;
    int64_t pitch;
    int c = d->channels;
    size_t es = d->u16 ? 2 : 1;
    dynop_result rc = input_bytes(in, nin, &p, &n);
    if (rc != DYNOP_OK) return rc;
    if (nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": has 1 output, got %u", (unsigned)nout);
    if ((rc = plan(d, p, n, &pl)) != DYNOP_OK) return rc;
    if (out[0].ndim != 3 || out[0].shape[0] != pl.oh || out[0].shape[1] != pl.ow || out[0].shape[2] != c)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the output is not the %lldx%lldx%d setup asked for",
                     (long long)pl.oh, (long long)pl.ow, c);
    if ((pl.ow > 1 && out[0].strides[1] != c) || (c > 1 && out[0].strides[2] != 1) ||
        (pl.oh > 1 && out[0].strides[0] < pl.ow * c))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the output's rows must be contiguous");
    if (pl.scratch > 0 && (out[1].data == NULL || out[1].shape[0] < (int64_t)pl.scratch))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": run needs %zu bytes of scratch; the host gave %lld",
                     pl.scratch, out[1].data == NULL ? 0LL : (long long)out[1].shape[0]);
    if (pl.oh == 0 || pl.ow == 0) return DYNOP_OK;
    if (!(d->u16 ? is_u16(out[0].dtype) : is_u8(out[0].dtype)))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, DECODE ": the output is not the %s setup asked for",
                     d->u16 ? "uint16" : "uint8");
    o = (uint8_t *)out[0].data + out[0].byte_offset;
    pitch = (pl.oh > 1 ? out[0].strides[0] : pl.ow * c) * (int64_t)es; /* bytes */
    scratch = pl.scratch > 0 ? (uint8_t *)out[1].data + out[1].byte_offset : NULL;
    if (pl.stage > 0) { /* 8-bit samples into a uint16 output: decode, then widen */
        uint8_t *stage = scratch + (pl.scratch - pl.stage);
        int64_t y, i, row = pl.ow * c;
        switch (pl.fmt) {
        case FMT_JPEG: rc = jpeg_run(d, p, n, &pl, stage, row, scratch); break;
        case FMT_PNG: rc = png_decode(d, p, n, &pl, stage, row, scratch); break;
        default: rc = webp_run(d, p, n, &pl, stage, row, scratch); break;
        }
        if (rc != DYNOP_OK) return rc;
        for (y = 0; y < pl.oh; y++) {
            const uint8_t *s = stage + y * row;
            uint16_t *w = (uint16_t *)(void *)(o + y * pitch);
            for (i = 0; i < row; i++) w[i] = (uint16_t)(s[i] * 257u);
        }
        return DYNOP_OK;
    }
    switch (pl.fmt) {
    case FMT_JPEG: return jpeg_run(d, p, n, &pl, o, pitch, scratch);
    case FMT_PNG: return png_decode(d, p, n, &pl, o, pitch, scratch);
    default: return webp_run(d, p, n, &pl, o, pitch, scratch);
    }
}

/* ==== codec.Encode ======================================================== */

enum { OUT_PNG, OUT_JPEG, OUT_WEBP };

/* One encoding, made by setup from the input tensor key names. */
typedef struct {
    const void *data;
    int bits; /* 8 or 16 */
    int64_t shape[3], strides[3];
    uint8_t *buf;
    size_t len, cap;
} enc_entry;

typedef struct {
    int format, quality, subsamp, progressive, compression, lossless;
    tjhandle tj;
    enc_entry *e;  /* the encodings of the samples setup saw since the last run */
    size_t n, cap; /* used, allocated (entries past n keep their buffers) */
    int ran;       /* run came after the last setup: the next setup starts a new batch */
    uint8_t *tmp;  /* a compact or RGB copy of an input */
    size_t tmpcap;
    char err[256];
} enc_inst;

static dynop_result enc_create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    enc_inst *e;
    const char *f = arg_string(args, n, "format", "png"), *ss = arg_string(args, n, "subsampling", "420");
    (void)user;
    e = (enc_inst *)calloc(1, sizeof *e);
    if (e == NULL) return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": out of memory");
    if (strcmp(f, "png") == 0) e->format = OUT_PNG;
    else if (strcmp(f, "jpeg") == 0) e->format = OUT_JPEG;
    else if (strcmp(f, "webp") == 0) e->format = OUT_WEBP;
    else {
        free(e);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": format %s; want png, jpeg or webp", f);
    }
    if (strcmp(ss, "420") == 0) e->subsamp = TJSAMP_420;
    else if (strcmp(ss, "422") == 0) e->subsamp = TJSAMP_422;
    else if (strcmp(ss, "444") == 0) e->subsamp = TJSAMP_444;
    else {
        free(e);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": subsampling %s; want 420, 422 or 444", ss);
    }
    e->quality = (int)arg_int(args, n, "quality", 90);
    e->compression = (int)arg_int(args, n, "compression", 6);
    e->progressive = arg_bool(args, n, "progressive", 0);
    e->lossless = arg_bool(args, n, "lossless", 0);
    if (e->quality < 1 || e->quality > 100 || e->compression < 0 || e->compression > 9) {
        int q = e->quality, z = e->compression;
        free(e);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": quality %d (want 1..100) or compression %d (want 0..9)",
                     q, z);
    }
    if (e->format == OUT_JPEG && (e->tj = tjInitCompress()) == NULL) {
        free(e);
        return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": cannot make a TurboJPEG compressor: %s", tjGetErrorStr2(NULL));
    }
    *instance = e;
    return DYNOP_OK;
}

static void enc_destroy(void *instance) {
    enc_inst *e = (enc_inst *)instance;
    size_t i;
    if (e == NULL) return;
    for (i = 0; i < e->cap; i++) free(e->e[i].buf);
    free(e->e);
    free(e->tmp);
    if (e->tj != NULL) tjDestroy(e->tj);
    free(e);
}

static int reserve(uint8_t **buf, size_t *cap, size_t n) {
    uint8_t *p;
    if (n <= *cap) return 1;
    if (n < *cap * 2) n = *cap * 2;
    p = (uint8_t *)realloc(*buf, n);
    if (p == NULL) return 0;
    *buf = p;
    *cap = n;
    return 1;
}

static int same_input(const enc_entry *x, const dynop_tensor *t) {
    return x->data == (const char *)t->data + t->byte_offset && x->bits == t->dtype.bits && x->shape[0] == t->shape[0] &&
           x->shape[1] == t->shape[1] && x->shape[2] == t->shape[2] && x->strides[0] == t->strides[0] &&
           x->strides[1] == t->strides[1] && x->strides[2] == t->strides[2];
}

/* png_sink appends libpng's output to an entry. */
static void png_write_mem(png_structp png, png_bytep p, size_t len) {
    enc_entry *x = (enc_entry *)png_get_io_ptr(png);
    if (len > SIZE_MAX - x->len || !reserve(&x->buf, &x->cap, x->len + len)) png_error(png, "out of memory");
    memcpy(x->buf + x->len, p, len);
    x->len += len;
}

static void png_flush_mem(png_structp png) { (void)png; }

static void png_enc_fail(png_structp png, png_const_charp msg) {
    char *err = (char *)png_get_error_ptr(png);
    snprintf(err, 256, "%s", msg);
    png_longjmp(png, 1);
}

static dynop_result png_encode(enc_inst *e, enc_entry *x, const uint8_t *src, int64_t pitch, int64_t w, int64_t h,
                               int c, int depth) {
    png_structp png;
    png_infop info;
    int64_t y;
    e->err[0] = 0;
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, e->err, png_enc_fail, png_enc_warn);
    if (png == NULL) return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": PNG: cannot make a libpng writer");
    info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": PNG: cannot make a libpng writer");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": PNG: %s", e->err);
    }
    png_set_write_fn(png, x, png_write_mem, png_flush_mem);
    png_set_compression_level(png, e->compression);
    if (e->compression == 0) png_set_filter(png, 0, PNG_FILTER_NONE);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth,
                 c == 1 ? PNG_COLOR_TYPE_GRAY : c == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (depth == 16 && host_le()) png_set_swap(png); /* the rows hold host-order samples */
    for (y = 0; y < h; y++) png_write_row(png, src + y * pitch);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return DYNOP_OK;
}

/* webp_write appends libwebp's output to an entry. */
static int webp_write(const uint8_t *p, size_t len, const WebPPicture *pic) {
    enc_entry *x = (enc_entry *)pic->custom_ptr;
    if (len > SIZE_MAX - x->len || !reserve(&x->buf, &x->cap, x->len + len)) return 0;
    memcpy(x->buf + x->len, p, len);
    x->len += len;
    return 1;
}

/* webp_encode encodes with libwebp's advanced API, exact: the colour of
 * fully transparent pixels is kept, as straight alpha means. */
static dynop_result webp_encode(enc_inst *e, enc_entry *x, const uint8_t *src, int64_t pitch, int64_t w, int64_t h,
                                int c) {
    WebPConfig cfg;
    WebPPicture pic;
    int ok;
    if (!WebPConfigInit(&cfg) || !WebPPictureInit(&pic))
        return failf(DYNOP_ERROR_VERSION, ENCODE ": WebP: libwebp version mismatch");
    cfg.lossless = e->lossless;
    cfg.quality = e->lossless ? 75 : (float)e->quality;
    cfg.exact = 1;
    pic.use_argb = e->lossless;
    pic.width = (int)w;
    pic.height = (int)h;
    ok = c == 4 ? WebPPictureImportRGBA(&pic, src, (int)pitch) : WebPPictureImportRGB(&pic, src, (int)pitch);
    if (!ok) {
        WebPPictureFree(&pic);
        return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": WebP: out of memory for a %lldx%lld image", (long long)w,
                     (long long)h);
    }
    pic.writer = webp_write;
    pic.custom_ptr = x;
    ok = WebPEncode(&cfg, &pic);
    if (!ok) {
        int code = (int)pic.error_code;
        WebPPictureFree(&pic);
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": WebP: libwebp failed on a %lldx%lld image (error %d)",
                     (long long)w, (long long)h, code);
    }
    WebPPictureFree(&pic);
    return DYNOP_OK;
}

static dynop_result enc_sample(enc_inst *e, enc_entry *x, const dynop_tensor *t) {
    int64_t h = t->shape[0], w = t->shape[1], c = t->shape[2], y, xx, k, pitch;
    const uint8_t *base = (const uint8_t *)t->data + t->byte_offset, *src = base;
    static const char *const names[] = {"PNG", "JPEG", "WebP"};
    x->len = 0;
    if (h < 1 || w < 1)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": cannot encode an empty %lldx%lld image", (long long)w,
                     (long long)h);
    if ((e->format == OUT_JPEG && (w > 65535 || h > 65535)) ||
        (e->format == OUT_WEBP && (w > WEBP_MAX_DIMENSION || h > WEBP_MAX_DIMENSION)) || w > 0x7fffffff ||
        h > 0x7fffffff)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": a %lldx%lld image is too large for %s (at most %d per side)",
                     (long long)w, (long long)h, names[e->format],
                     e->format == OUT_JPEG ? 65535 : e->format == OUT_WEBP ? WEBP_MAX_DIMENSION : 0x7fffffff);
    if (t->dtype.bits == 16) { /* PNG only (enc_setup checks): rows of host-order samples */
        const uint16_t *b16 = (const uint16_t *)(const void *)base;
        pitch = t->strides[0];
        if ((w > 1 && t->strides[1] != c) || (c > 1 && t->strides[2] != 1) || (h > 1 && pitch < w * c)) {
            size_t need = (size_t)w * (size_t)h * (size_t)c * 2;
            uint16_t *d;
            if (!reserve(&e->tmp, &e->tmpcap, need)) return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": out of memory");
            d = (uint16_t *)(void *)e->tmp;
            for (y = 0; y < h; y++)
                for (xx = 0; xx < w; xx++)
                    for (k = 0; k < c; k++) *d++ = b16[y * t->strides[0] + xx * t->strides[1] + k * t->strides[2]];
            src = e->tmp;
            pitch = w * c;
        } else if (h == 1) {
            pitch = w * c;
        }
        return png_encode(e, x, src, pitch * 2, w, h, (int)c, 16);
    }
    /* The libraries read rows of contiguous pixels; copy other layouts,
     * and gray for WebP (which takes RGB), into tmp. */
    pitch = t->strides[0];
    if ((w > 1 && t->strides[1] != c) || (c > 1 && t->strides[2] != 1) || (h > 1 && pitch < w * c) ||
        (e->format == OUT_WEBP && c == 1)) {
        int64_t oc = e->format == OUT_WEBP && c == 1 ? 3 : c;
        size_t need = (size_t)w * (size_t)h * (size_t)oc;
        uint8_t *d;
        if (!reserve(&e->tmp, &e->tmpcap, need)) return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": out of memory");
        d = e->tmp;
        for (y = 0; y < h; y++)
            for (xx = 0; xx < w; xx++)
                for (k = 0; k < oc; k++)
                    *d++ = base[y * t->strides[0] + xx * t->strides[1] + (c == 1 ? 0 : k * t->strides[2])];
        src = e->tmp;
        c = oc;
        pitch = w * c;
    } else if (h == 1) {
        pitch = w * c;
    }
    switch (e->format) {
    case OUT_JPEG: {
        int ss = c == 1 ? TJSAMP_GRAY : e->subsamp;
        unsigned long size = tjBufSize((int)w, (int)h, ss);
        if (size == (unsigned long)-1 || !reserve(&x->buf, &x->cap, size))
            return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": JPEG: out of memory for a %lldx%lld image", (long long)w,
                         (long long)h);
        size = (unsigned long)x->cap;
        if (tjCompress2(e->tj, src, (int)w, (int)pitch, (int)h, c == 1 ? TJPF_GRAY : c == 3 ? TJPF_RGB : TJPF_RGBA,
                        &x->buf, &size, ss, e->quality,
                        TJFLAG_NOREALLOC | (e->progressive ? TJFLAG_PROGRESSIVE : 0)) != 0)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": JPEG: %s", tjGetErrorStr2(e->tj));
        x->len = size;
        return DYNOP_OK;
    }
    case OUT_PNG: return png_encode(e, x, src, pitch, w, h, (int)c, 8);
    default: return webp_encode(e, x, src, pitch, w, h, (int)c);
    }
}

static dynop_result enc_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    enc_inst *e = (enc_inst *)instance;
    enc_entry *x = NULL;
    size_t i;
    dynop_result rc;
    if (nin != 1 || nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": takes 1 input and 1 output");
    if ((!is_u8(in->dtype) && !is_u16(in->dtype)) || in->ndim != 3)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     ENCODE ": the input must be a uint8 (or, for PNG, uint16) HWC image (3 dimensions)");
    if (is_u16(in->dtype) && e->format != OUT_PNG)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     ENCODE ": the image is uint16, and %s holds 8-bit samples: write format png (16-bit), or "
                            "cast the image to uint8 first",
                     e->format == OUT_JPEG ? "JPEG" : "WebP");
    if (in->shape[2] != 1 && in->shape[2] != 3 && in->shape[2] != 4)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     ENCODE ": the image has %lld channels; Encode takes 1 (gray), 3 (RGB) or 4 (RGBA)",
                     (long long)in->shape[2]);
    if (in->data == NULL || in->strides == NULL) return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": no input data");
    if (e->ran) { /* a new batch: reuse the entries and their buffers */
        e->n = 0;
        e->ran = 0;
    }
    for (i = 0; i < e->n; i++) /* the same tensor again: its new encoding replaces the old */
        if (same_input(&e->e[i], in)) x = &e->e[i];
    if (x == NULL) {
        if (e->n == e->cap) {
            size_t nc = e->cap ? 2 * e->cap : 8;
            enc_entry *ne = (enc_entry *)realloc(e->e, nc * sizeof *ne);
            if (ne == NULL) return failf(DYNOP_ERROR_NO_MEMORY, ENCODE ": out of memory");
            memset(ne + e->cap, 0, (nc - e->cap) * sizeof *ne);
            e->e = ne;
            e->cap = nc;
        }
        x = &e->e[e->n++];
    }
    x->data = (const char *)in->data + in->byte_offset;
    x->bits = in->dtype.bits;
    for (i = 0; i < 3; i++) {
        x->shape[i] = in->shape[i];
        x->strides[i] = in->strides[i];
    }
    if ((rc = enc_sample(e, x, in)) != DYNOP_OK) {
        x->data = NULL; /* matches no input */
        e->ran = 1;     /* a failed setup: the next setup starts afresh */
        return rc;
    }
    out[0].dtype.code = DYNOP_DTYPE_UINT;
    out[0].dtype.bits = 8;
    out[0].dtype.lanes = 1;
    out[0].ndim = 1;
    out[0].shape[0] = (int64_t)x->len;
    return DYNOP_OK;
}

static dynop_result enc_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                            uint32_t nin) {
    enc_inst *e = (enc_inst *)instance;
    const enc_entry *x = NULL;
    size_t i;
    if (nin != 1 || nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": takes 1 input and 1 output");
    e->ran = 1;
    for (i = e->n; i > 0 && x == NULL; i--)
        if (same_input(&e->e[i - 1], in)) x = &e->e[i - 1];
    if (x == NULL)
        return failf(DYNOP_ERROR_STATE, ENCODE ": run got an input that setup has not encoded (setup encodes, run "
                                        "copies; call setup with the same inputs first)");
    if (out[0].ndim != 1 || out[0].shape[0] != (int64_t)x->len || (x->len > 1 && out[0].strides[0] != 1))
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, ENCODE ": the output is not the %zu contiguous bytes setup asked for",
                     x->len);
    if (x->len > 0) memcpy((uint8_t *)out[0].data + out[0].byte_offset, x->buf, x->len);
    return DYNOP_OK;
}

/* ==== schemas and registration ============================================== */

static const dynop_op_input dec_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "encoded", "The bytes of a JPEG, PNG or WebP file, 1-D uint8.", "uint8", NULL, 1, NULL},
};
static const dynop_op_output dec_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "images", "Decoded pixels, HWC, of the dtype argument's dtype.", "HWC", NULL, "dtype",
     NULL, 0, "channels", 0},
};
static const dynop_op_arg dec_args[] = {
    {DYNOP_OP_ARG_HEADER, "channels",
     "Channels of the output: 1 for luma (BT.601), 3 for RGB, 4 for RGBA with straight alpha.", DYNOP_ARG_INT, 0, 0, 0,
     "3", "[1, 3, 4]", NULL},
    {DYNOP_OP_ARG_HEADER, "orientation",
     "Apply a JPEG's EXIF orientation (1-8), turning and mirroring the image upright; malformed EXIF is ignored.",
     DYNOP_ARG_BOOL, 0, 0, 0, "true", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "min_width",
     "JPEG shrink-on-load: decode at the smallest DCT scale 1/8, 1/4, 1/2 or 1 whose output is at least this wide "
     "and min_height high; 0 for no bound (both 0: full size).",
     DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 1 << 20, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "min_height", "JPEG shrink-on-load: the least height of the output (see min_width).",
     DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 1 << 20, "0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "dtype",
     "The output's dtype: uint8, or uint16, which keeps a 16-bit PNG's samples whole (8-bit samples become v * "
     "257).",
     DYNOP_ARG_DTYPE, 0, 0, 0, "\"uint8\"", "[\"uint8\", \"uint16\"]", NULL},
};
static const dynop_op_schema dec_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    DECODE,
    "Decodes JPEG (libjpeg-turbo), PNG (libpng) or WebP (libwebp) files, told apart by their first bytes, to uint8 "
    "(or uint16) HWC pixels; JPEG with EXIF orientation and shrink-on-load. Setup reads only the headers.",
    "cpu",
    1, 0, dec_inputs,
    1, dec_outputs,
    5, dec_args,
};
static const dynop_operator dec_op = DYNOP_OPERATOR_FLAGS(DECODE, "cpu", NULL, dec_create, dec_setup, dec_run,
                                                          dec_destroy, DYNOP_OPERATOR_SCRATCH);

static const dynop_op_input enc_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images",
     "Pixels, HWC with 1 (gray), 3 (RGB) or 4 (RGBA) channels: uint8, or uint16 for 16-bit PNG.", "uint8,uint16",
     "HWC", 3, "1,3,4"},
};
static const dynop_op_output enc_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "encoded", "The encoded file's bytes, 1-D uint8.", NULL, "uint8", NULL, NULL, 1, NULL, 0},
};
static const dynop_op_arg enc_args[] = {
    {DYNOP_OP_ARG_HEADER, "format", "The file format; JPEG has no alpha and drops the fourth channel.",
     DYNOP_ARG_STRING, 0, 0, 0, "\"png\"", "[\"png\", \"jpeg\", \"webp\"]", NULL},
    {DYNOP_OP_ARG_HEADER, "quality", "JPEG and lossy WebP quality, 1 (smallest) to 100 (best).", DYNOP_ARG_INT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 1, 100, "90", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "subsampling", "JPEG chroma subsampling of colour images: 420, 422 or 444 (none).",
     DYNOP_ARG_STRING, 0, 0, 0, "\"420\"", "[\"420\", \"422\", \"444\"]", NULL},
    {DYNOP_OP_ARG_HEADER, "progressive", "JPEG: write a progressive file.", DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL,
     NULL},
    {DYNOP_OP_ARG_HEADER, "compression", "PNG zlib level, 0 (none, fastest) to 9 (smallest).", DYNOP_ARG_INT,
     DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 9, "6", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "lossless", "WebP: encode losslessly (quality is then ignored).", DYNOP_ARG_BOOL, 0, 0, 0,
     "false", NULL, NULL},
};
static const dynop_op_schema enc_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    ENCODE,
    "Encodes uint8 HWC images with 1, 3 or 4 channels as PNG (libpng), JPEG (libjpeg-turbo) or WebP (libwebp). Setup "
    "encodes each sample into a buffer the instance keeps; run copies it out.",
    "cpu",
    1, 0, enc_inputs,
    1, enc_outputs,
    6, enc_args,
};
static const dynop_operator enc_op =
    DYNOP_OPERATOR(ENCODE, "cpu", NULL, enc_create, enc_setup, enc_run, enc_destroy);

/* ---- the populate passes ---------------------------------------------------- */

/* A node's arguments as the host writes them: a flat JSON object of
 * numbers, strings and booleans. json_args reads up to max of them into
 * keys and values (the raw text of each value, strings with their
 * quotes); 0 if the text is anything else (escapes, nesting, too many). */
typedef struct {
    char key[32];
    char val[64];
} json_kv;

static const char *json_ws(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

static int json_args(const char *s, json_kv *kv, int max) {
    int n = 0;
    if (s == NULL) return -1;
    s = json_ws(s);
    if (*s++ != '{') return -1;
    s = json_ws(s);
    if (*s == '}') return *json_ws(s + 1) == 0 ? 0 : -1;
    for (;;) {
        size_t i = 0;
        if (n == max || *s++ != '"') return -1;
        while (*s != '"') {
            if (*s == 0 || *s == '\\' || i + 1 >= sizeof kv[n].key) return -1;
            kv[n].key[i++] = *s++;
        }
        kv[n].key[i] = 0;
        s = json_ws(s + 1);
        if (*s++ != ':') return -1;
        s = json_ws(s);
        i = 0;
        if (*s == '"') {
            kv[n].val[i++] = *s++;
            while (*s != '"') {
                if (*s == 0 || *s == '\\' || i + 2 >= sizeof kv[n].val) return -1;
                kv[n].val[i++] = *s++;
            }
            kv[n].val[i++] = *s++;
        } else {
            while (*s != 0 && *s != ',' && *s != '}' && *s != ' ' && *s != '\n' && *s != '\t' && *s != '\r') {
                if (i + 1 >= sizeof kv[n].val) return -1;
                kv[n].val[i++] = *s++;
            }
        }
        kv[n].val[i] = 0;
        n++;
        s = json_ws(s);
        if (*s == '}') return *json_ws(s + 1) == 0 ? n : -1;
        if (*s++ != ',') return -1;
        s = json_ws(s);
    }
}

static void pass_log(const char *node, const char *why) {
    char msg[256];
    if (host_table == NULL) return;
    snprintf(msg, sizeof msg, "codec: node %s keeps its Go operator: %s", node, why);
    host_table->log(host_table, DYNOP_LOG_DEBUG, msg);
}

/* is_int says whether s is a JSON integer (digits, an optional minus). */
static int is_int(const char *s) {
    if (*s == '-') s++;
    if (*s == 0) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

static dynop_result replace(const dynop_graph_builder *b, const char *op, const char *json) {
    const dynop_graph_node *nd = DYNOP_GRAPH_NODE(b, b->node);
    if (b->set_operator(b, b->node, op, json) != DYNOP_OK) {
        /* Leave the Go operator, which will say what is wrong. */
        char why[200];
        snprintf(why, sizeof why, "%s refused %s: %s", op, json, host_table ? host_table->last_error(host_table) : "");
        pass_log(nd->name, why);
    }
    return DYNOP_OK;
}

/* resize_target finds what shrink-on-load may decode for node i of b:
 * when its only reader is a resize (imgproc.Resize or image.Resize) to a
 * width, a height or both, or to a shorter side (both sides at least
 * that), and no graph output reads node i, it writes the least width and
 * height into w and h (JSON integers, "0" for no bound) and returns 1. A
 * host from before dynop_graph_builder 1.1 does not say which nodes the
 * graph's outputs read: then 0. */
static int resize_target(const dynop_graph_builder *b, uint32_t i, char *w, char *h, size_t cap) {
    const dynop_graph_node *reader = NULL;
    json_kv kv[8];
    uint32_t j, k;
    int readers = 0, n;
    if (!DYNOP_HAS_MEMBER(dynop_graph_builder, b, output_outputs)) return 0;
    for (k = 0; k < b->output_count; k++)
        if (b->outputs[k] == i) return 0;
    for (j = 0; j < b->node_count; j++) {
        const dynop_graph_node *nd = DYNOP_GRAPH_NODE(b, j);
        for (k = 0; k < nd->input_count; k++) {
            if (nd->inputs[k] == i) {
                readers++;
                reader = nd;
                break;
            }
        }
    }
    if (readers != 1 || (strcmp(reader->kind, "imgproc.Resize") != 0 && strcmp(reader->kind, "image.Resize") != 0))
        return 0;
    n = json_args(reader->args_json, kv, 8);
    snprintf(w, cap, "0");
    snprintf(h, cap, "0");
    for (j = 0; j < (uint32_t)(n > 0 ? n : 0); j++) {
        if (!is_int(kv[j].val)) continue;
        if (strcmp(kv[j].key, "width") == 0) snprintf(w, cap, "%s", kv[j].val);
        if (strcmp(kv[j].key, "height") == 0) snprintf(h, cap, "%s", kv[j].val);
        if (strcmp(kv[j].key, "resize_shorter") == 0 && strcmp(kv[j].val, "0") != 0) { /* both sides at least */
            snprintf(w, cap, "%s", kv[j].val);
            snprintf(h, cap, "%s", kv[j].val);
        }
    }
    return strcmp(w, "0") != 0 || strcmp(h, "0") != 0;
}

/* native_decode: image.Decode's arguments, channels and orientation (the
 * EXIF orientation, applied by default), mean the same for codec.Decode;
 * Go's image/jpeg decodes at full size.
 * Where the decoded images only go to a resize to a fixed size, JPEGs
 * decode shrunk in the DCT to the least 1/8, 1/4 or 1/2 still at least
 * that size (libvips' shrink-on-load): a JPEG of 1920x1080 resized to
 * 960x540 decodes at 960x540, in less than half the time. */
static dynop_result native_decode(void *user, const dynop_graph_builder *b) {
    const dynop_graph_node *nd = DYNOP_GRAPH_NODE(b, b->node);
    json_kv kv[4];
    char json[192], w[24], h[24];
    const char *channels = "3", *orientation = "true";
    int i, n = json_args(nd->args_json, kv, 4);
    (void)user;
    if (n < 0) {
        pass_log(nd->name, "its arguments are not a flat JSON object");
        return DYNOP_OK;
    }
    for (i = 0; i < n; i++) {
        if (strcmp(kv[i].key, "channels") == 0 && is_int(kv[i].val)) channels = kv[i].val;
        else if (strcmp(kv[i].key, "orientation") == 0 &&
                 (strcmp(kv[i].val, "true") == 0 || strcmp(kv[i].val, "false") == 0))
            orientation = kv[i].val;
        else {
            pass_log(nd->name, "an argument has no equivalent in codec.Decode");
            return DYNOP_OK;
        }
    }
    if (resize_target(b, b->node, w, h, sizeof w))
        snprintf(json, sizeof json,
                 "{\"channels\": %s, \"orientation\": %s, \"min_width\": %s, \"min_height\": %s}", channels,
                 orientation, w, h);
    else
        snprintf(json, sizeof json, "{\"channels\": %s, \"orientation\": %s}", channels, orientation);
    return replace(b, DECODE, json);
}

/* native_encode: image.Encode's format (png, jpeg) and quality mean the
 * same for codec.Encode, whose other arguments default to what Go's
 * encoders do (4:2:0 baseline JPEG, zlib level 6). */
static dynop_result native_encode(void *user, const dynop_graph_builder *b) {
    const dynop_graph_node *nd = DYNOP_GRAPH_NODE(b, b->node);
    json_kv kv[4];
    char json[160];
    const char *format = "\"png\"", *quality = "90";
    int i, n = json_args(nd->args_json, kv, 4);
    (void)user;
    if (n < 0) {
        pass_log(nd->name, "its arguments are not a flat JSON object");
        return DYNOP_OK;
    }
    for (i = 0; i < n; i++) {
        if (strcmp(kv[i].key, "format") == 0 &&
            (strcmp(kv[i].val, "\"png\"") == 0 || strcmp(kv[i].val, "\"jpeg\"") == 0))
            format = kv[i].val;
        else if (strcmp(kv[i].key, "quality") == 0 && is_int(kv[i].val))
            quality = kv[i].val;
        else {
            pass_log(nd->name, "an argument has no equivalent in codec.Encode");
            return DYNOP_OK;
        }
    }
    snprintf(json, sizeof json, "{\"format\": %s, \"quality\": %s}", format, quality);
    return replace(b, ENCODE, json);
}

static const dynop_pass_desc native_decode_desc =
    DYNOP_PASS_DESC("codec.native-codecs.decode", DYNOP_PASS_POPULATE, "image.Decode", 0,
                    "replaces the Go image.Decode with the native codec.Decode (libjpeg-turbo, libpng, libwebp)");
static const dynop_pass_desc native_encode_desc =
    DYNOP_PASS_DESC("codec.native-codecs.encode", DYNOP_PASS_POPULATE, "image.Encode", 0,
                    "replaces the Go image.Encode with the native codec.Encode (libjpeg-turbo, libpng, libwebp)");
static const dynop_pass native_decode_pass = {DYNOP_PASS_HEADER, "codec.native-codecs.decode", NULL, native_decode};
static const dynop_pass native_encode_pass = {DYNOP_PASS_HEADER, "codec.native-codecs.encode", NULL, native_encode};

static const dynop_pass_desc *const passes[] = {&native_decode_desc, &native_encode_desc};
static const dynop_op_schema *const operators[] = {&dec_schema, &enc_schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    CODEC_PLUGIN,
    DYNOP_V(0, 1, 0),
    "Native image codecs: JPEG (libjpeg-turbo), PNG (libpng) and WebP (libwebp) decoding and encoding.",
    "dynop",
    NULL,
    0,
    0, NULL,
    0, NULL,
    NULL,
    2, operators,
    2, passes,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
    if (!DYNOP_HOST_HAS_SCRATCH(host))
        return failf(DYNOP_ERROR_VERSION, "codec takes codec.Decode's scratch memory from the host, which needs a host "
                                          "table of version 1.4 or later; upgrade the host");
    rc = host->register_operator(host, &dec_op);
    if (rc == DYNOP_OK) rc = host->register_operator(host, &enc_op);
    if (rc == DYNOP_OK) rc = host->register_pass(host, &native_decode_pass);
    if (rc == DYNOP_OK) rc = host->register_pass(host, &native_encode_pass);
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
