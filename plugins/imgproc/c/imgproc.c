/*
 * imgproc.c — the example native image-processing plugin,
 * dynop.plugin.imgproc. It provides operators that run on the CPU with
 * plain C kernels; the same kernels are exported so that benchmarks can
 * call them directly and compare.
 *
 * imgproc.Grayscale: BT.601 luma of an HWC image with 3 or 4 channels
 * (alpha ignored), uint8 or float32, to HWC with 1 channel:
 *   uint8    Y = (77 R + 150 G + 29 B + 128) >> 8
 *   float32  Y = 0.299 R + 0.587 G + 0.114 B
 * bit-identical to the Go operator image.Grayscale.
 *
 * imgproc.native-grayscale: a populate pass for nodes of kind
 * image.Grayscale that attaches imgproc.Grayscale instead of the Go
 * operator. The two accept the same inputs (uint8 or float32 HWC with 3
 * or 4 channels, no arguments) and compute the same bytes, so the pass
 * can swap them without seeing the data.
 */
#include <stdio.h>
#include <string.h>

#include <dynop/dynop.h>

#define IMGPROC_PLUGIN "dynop.plugin.imgproc"

static const dynop_host *host_table;

/* fail explains an error to the host and returns it. */
static dynop_result fail(dynop_result rc, const char *msg) {
    if (host_table != NULL) host_table->set_error(host_table, msg);
    return rc;
}

/* ---- kernels ----------------------------------------------------------- */

/* Strides are in elements: sy between rows, sx between pixels, sc between
 * channels; the destination has one channel. */
DYNOP_EXPORT void dynop_imgproc_gray_u8(const uint8_t *src, int64_t h, int64_t w, int64_t sy, int64_t sx,
                                        int64_t sc, uint8_t *dst, int64_t dy, int64_t dx) {
    int64_t y, x;
    for (y = 0; y < h; y++) {
        const uint8_t *s = src + y * sy;
        uint8_t *d = dst + y * dy;
        for (x = 0; x < w; x++, s += sx, d += dx) {
            uint32_t v = 77u * s[0] + 150u * s[sc] + 29u * s[2 * sc] + 128u;
            *d = (uint8_t)(v >> 8);
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
            /* Separate statements: no contraction into fused multiply-adds,
             * so results match the Go operator's bit for bit. */
            float r = 0.299f * s[0];
            float g = 0.587f * s[sc];
            float b = 0.114f * s[2 * sc];
            float rg = r + g;
            *d = rg + b;
        }
    }
}

/* ---- imgproc.Grayscale ------------------------------------------------- */

static int is_dtype(dynop_dtype t, int code, int bits) {
    return t.code == code && t.bits == bits && t.lanes == 1;
}

static dynop_result gray_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    (void)user_data;
    (void)args;
    (void)n;
    *instance = NULL; /* stateless */
    return DYNOP_OK;
}

static dynop_result gray_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                               uint32_t nout) {
    char msg[128];
    (void)instance;
    if (nin != 1 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "imgproc.Grayscale: takes 1 input and 1 output");
    if (in->ndim != 3 || (in->shape[2] != 3 && in->shape[2] != 4)) {
        snprintf(msg, sizeof msg, "imgproc.Grayscale: want an HWC image with 3 or 4 channels, got %d dimension(s)%s",
                 (int)in->ndim, in->ndim == 3 ? " and another channel count" : "");
        return fail(DYNOP_ERROR_INVALID_ARGUMENT, msg);
    }
    if (!is_dtype(in->dtype, DYNOP_DTYPE_UINT, 8) && !is_dtype(in->dtype, DYNOP_DTYPE_FLOAT, 32)) {
        return fail(DYNOP_ERROR_UNSUPPORTED, "imgproc.Grayscale: want uint8 or float32");
    }
    out->dtype = in->dtype;
    out->ndim = 3;
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = 1;
    return DYNOP_OK;
}

static dynop_result gray_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                             uint32_t nin) {
    const char *src = (const char *)in->data + in->byte_offset;
    char *dst = (char *)out->data + out->byte_offset;
    (void)instance;
    (void)nout;
    (void)nin;
    if (in->dtype.code == DYNOP_DTYPE_UINT) {
        dynop_imgproc_gray_u8((const uint8_t *)src, in->shape[0], in->shape[1], in->strides[0], in->strides[1],
                              in->strides[2], (uint8_t *)dst, out->strides[0], out->strides[1]);
    } else {
        dynop_imgproc_gray_f32((const float *)src, in->shape[0], in->shape[1], in->strides[0], in->strides[1],
                               in->strides[2], (float *)dst, out->strides[0], out->strides[1]);
    }
    return DYNOP_OK;
}

/* ---- schema and registration ------------------------------------------- */

static const dynop_op_input gray_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", "Images with 3 (RGB) or 4 (RGBA) channels.", "uint8,float32", "HWC", 3},
};
static const dynop_op_output gray_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "gray", "BT.601 luma, one channel, the input's dtype.", "HWC"},
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
static const dynop_operator gray_op = {
    DYNOP_OPERATOR_HEADER, "imgproc.Grayscale", "cpu", NULL, gray_create, gray_setup, gray_run, NULL,
};

static const dynop_op_schema *const operators[] = {&gray_schema};

/* ---- imgproc.native-grayscale ------------------------------------------ */

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

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    IMGPROC_PLUGIN,
    DYNOP_V(0, 1, 0),
    "Example C plugin: image-processing operators.",
    "dynop",
    NULL,
    0,
    0, NULL,
    0, NULL,
    NULL,
    1, operators,
    1, passes,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
    rc = host->register_operator(host, &gray_op);
    if (rc == DYNOP_OK) rc = host->register_pass(host, &native_grayscale_pass);
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
