/*
 * blas.c — dynop.plugin.blas, an example native plugin in C99 that wraps an
 * existing C library: OpenBLAS, through its CBLAS interface (cblas.h).
 * Build: see the Makefile's plugins target (pkg-config openblas gives the
 * flags; link with -lopenblas after the source).
 *
 * It provides two things:
 *
 *   - the interface dynop.blas.BLAS (../blas.h): sgemm, saxpy and sdot as
 *     a table of function pointers that call cblas_sgemm, cblas_saxpy and
 *     cblas_sdot. sgemm checks its sizes first, so that a bad one never
 *     reaches OpenBLAS (which would print an error and return).
 *   - the operator blas.MatMul: out = act(alpha * op(a) * op(b) + bias) on
 *     float32 matrices. The product is cblas_sgemm's; the epilogue (the
 *     bias added per column, then the activation), which OpenBLAS has no
 *     routine for, is the plugin's own, in three variants: "avx512"
 *     (AVX-512 F), "avx2" and "scalar", the reference. Each element is
 *     act(p + bias[j]) with one float32 addition and relu(x) = x < 0 ? 0 : x
 *     (NaN and -0 kept), which every variant computes bit for bit.
 *
 * Matrices of any strides are accepted: BLAS reads a row-major or a
 * column-major matrix in place (the latter as the transpose of a row-major
 * one), and run copies any other into compact memory it allocates first.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include <dynop/dynop.h>
#include "../blas.h"

#if defined(__x86_64__) || defined(__i386__)
#define BLAS_X86 1
#include <immintrin.h>
/* The variants' target attributes and the CPU features they need. */
#define BLAS_AVX2 __attribute__((target("avx2")))
#define BLAS_AVX512 __attribute__((target("avx512f")))
#else
#define BLAS_X86 0
#endif

/* BLAS sizes are int (OpenBLAS without INTERFACE64): at most this. */
#define BLAS_INT_MAX 2147483647

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

/* ==== dynop.blas.BLAS ==================================================== */

static int32_t max1(int32_t v) { return v > 1 ? v : 1; }

static dynop_result sgemm(int32_t trans_a, int32_t trans_b, int32_t m, int32_t n, int32_t k, float alpha,
                          const float *a, int32_t lda, const float *b, int32_t ldb, float beta, float *c,
                          int32_t ldc) {
    if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1) || m < 0 || n < 0 || k < 0 ||
        lda < max1(trans_a ? m : k) || ldb < max1(trans_b ? k : n) || ldc < max1(n))
        return DYNOP_ERROR_INVALID_ARGUMENT;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
    return DYNOP_OK;
}

static void saxpy(int32_t n, float alpha, const float *x, float *y) {
    if (n > 0) cblas_saxpy(n, alpha, x, 1, y, 1);
}

static float sdot(int32_t n, const float *x, const float *y) { return n > 0 ? cblas_sdot(n, x, 1, y, 1) : 0.0f; }

static const dynop_blas blas_table = {
    DYNOP_HEADER(DYNOP_BLAS_UID, DYNOP_BLAS_VERSION, dynop_blas),
    sgemm, saxpy, sdot,
};

/* ==== blas.MatMul: the epilogue's variants =============================== */

/* An epilogue computes c[j] = act(c[j] + bias[j]) for j < n, without the
 * addition if bias is NULL; act is relu if relu, else the identity. */
typedef void (*epilogue_fn)(float *c, const float *bias, int64_t n, int relu);

static void epilogue_scalar(float *c, const float *bias, int64_t n, int relu) {
    int64_t j;
    for (j = 0; j < n; j++) {
        float v = bias != NULL ? c[j] + bias[j] : c[j];
        c[j] = relu && v < 0.0f ? 0.0f : v;
    }
}

#if BLAS_X86
/* max(0, v) returns its second operand, v, where either is NaN or both are
 * zeros: x < 0 ? 0 : x, as the scalar reference. */
BLAS_AVX2 static void epilogue_avx2(float *c, const float *bias, int64_t n, int relu) {
    const __m256 zero = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 v = _mm256_loadu_ps(c + j);
        if (bias != NULL) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + j));
        if (relu) v = _mm256_max_ps(zero, v);
        _mm256_storeu_ps(c + j, v);
    }
    if (j < n) {
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - j)), lanes);
        __m256 v = _mm256_maskload_ps(c + j, m);
        if (bias != NULL) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + j, m));
        if (relu) v = _mm256_max_ps(zero, v);
        _mm256_maskstore_ps(c + j, m, v);
    }
}

BLAS_AVX512 static void epilogue_avx512(float *c, const float *bias, int64_t n, int relu) {
    const __m512 zero = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512 v = _mm512_loadu_ps(c + j);
        if (bias != NULL) v = _mm512_add_ps(v, _mm512_loadu_ps(bias + j));
        if (relu) v = _mm512_max_ps(zero, v);
        _mm512_storeu_ps(c + j, v);
    }
    if (j < n) {
        const __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, c + j);
        if (bias != NULL) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j));
        if (relu) v = _mm512_max_ps(zero, v);
        _mm512_mask_storeu_ps(c + j, m, v);
    }
}
#endif

/* ==== blas.MatMul ======================================================== */

#define MATMUL "blas.MatMul"

typedef struct {
    int trans_a, trans_b, relu;
    float alpha;
} matmul_inst;

/* Arguments, by name. */
static const dynop_arg *find_arg(const dynop_arg *args, uint32_t n, const char *name, dynop_arg_type type) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (args[i].name != NULL && strcmp(args[i].name, name) == 0 && args[i].type == type && args[i].count >= 1 &&
            args[i].values != NULL)
            return &args[i];
    return NULL;
}

static dynop_result matmul_create(void *user_data, const dynop_arg *args, uint32_t n, void **instance) {
    const dynop_arg *a;
    matmul_inst s = {0, 0, 0, 1.0f};
    matmul_inst *p;
    (void)user_data;
    if ((a = find_arg(args, n, "transpose_a", DYNOP_ARG_BOOL)) != NULL) s.trans_a = *(const int32_t *)a->values != 0;
    if ((a = find_arg(args, n, "transpose_b", DYNOP_ARG_BOOL)) != NULL) s.trans_b = *(const int32_t *)a->values != 0;
    if ((a = find_arg(args, n, "alpha", DYNOP_ARG_FLOAT)) != NULL) {
        double v = *(const double *)a->values;
        if (!(v >= -3.4028234663852886e38 && v <= 3.4028234663852886e38))
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": alpha %g is not a finite float32", v);
        s.alpha = (float)v;
    }
    if ((a = find_arg(args, n, "activation", DYNOP_ARG_STRING)) != NULL) {
        const char *act = *(const char *const *)a->values;
        if (act != NULL && strcmp(act, "relu") == 0) s.relu = 1;
        else if (act == NULL || strcmp(act, "none") != 0)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": unknown activation \"%.64s\" (want \"none\" or \"relu\")",
                         act != NULL ? act : "");
    }
    p = (matmul_inst *)malloc(sizeof *p);
    if (p == NULL) return fail(DYNOP_ERROR_NO_MEMORY, MATMUL ": out of memory");
    *p = s;
    *instance = p;
    return DYNOP_OK;
}

static void matmul_destroy(void *instance) { free(instance); }

static int is_f32(dynop_dtype t) { return t.code == DYNOP_DTYPE_FLOAT && t.bits == 32 && t.lanes == 1; }

/* dtype_name writes a dtype's name ("int16", "float32x4") into buf. */
static const char *dtype_name(dynop_dtype t, char *buf, size_t size) {
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};
    const char *code = t.code < sizeof codes / sizeof codes[0] ? codes[t.code] : "code";
    if (t.code == DYNOP_DTYPE_BOOL && t.bits == 8 && t.lanes == 1) snprintf(buf, size, "bool");
    else if (t.lanes == 1) snprintf(buf, size, "%s%u", code, (unsigned)t.bits);
    else snprintf(buf, size, "%s%ux%u", code, (unsigned)t.bits, (unsigned)t.lanes);
    return buf;
}

/* check_input checks that input name is a float32 tensor of ndim
 * dimensions of at most BLAS_INT_MAX elements each. */
static dynop_result check_input(const char *name, const dynop_tensor *t, int ndim) {
    char dt[32];
    int d;
    if (!is_f32(t->dtype))
        return failf(DYNOP_ERROR_UNSUPPORTED, MATMUL ": %s has dtype %s (want float32)", name,
                     dtype_name(t->dtype, dt, sizeof dt));
    if (t->ndim != ndim)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": %s has %d dimension(s) (want %d: %s)", name, (int)t->ndim,
                     ndim, ndim == 2 ? "a matrix" : "a vector");
    for (d = 0; d < ndim; d++)
        if (t->shape[d] < 0 || t->shape[d] > BLAS_INT_MAX)
            return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": %s has a dimension of %lld (BLAS takes 0 to %d)", name,
                         (long long)t->shape[d], BLAS_INT_MAX);
    return DYNOP_OK;
}

/* matmul_sizes checks the inputs and returns op(a)'s m x k and op(b)'s
 * k x n. */
static dynop_result matmul_sizes(const matmul_inst *s, const dynop_tensor *in, uint32_t nin, int64_t *m, int64_t *n,
                                 int64_t *k) {
    dynop_result rc;
    int64_t kb;
    if (nin != 2 && nin != 3)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": takes 2 or 3 inputs (a, b and bias), got %u",
                     (unsigned)nin);
    if ((rc = check_input("a", &in[0], 2)) != DYNOP_OK || (rc = check_input("b", &in[1], 2)) != DYNOP_OK ||
        (nin == 3 && (rc = check_input("bias", &in[2], 1)) != DYNOP_OK))
        return rc;
    *m = in[0].shape[s->trans_a ? 1 : 0];
    *k = in[0].shape[s->trans_a ? 0 : 1];
    kb = in[1].shape[s->trans_b ? 1 : 0];
    *n = in[1].shape[s->trans_b ? 0 : 1];
    if (*k != kb)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT,
                     MATMUL ": inner dimensions differ: %sa is %lldx%lld and %sb is %lldx%lld (a's columns must be b's rows)",
                     s->trans_a ? "transposed " : "", (long long)*m, (long long)*k, s->trans_b ? "transposed " : "",
                     (long long)kb, (long long)*n);
    if (nin == 3 && in[2].shape[0] != *n)
        return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": bias has %lld elements, want %lld (one per column of the output)",
                     (long long)in[2].shape[0], (long long)*n);
    return DYNOP_OK;
}

static dynop_result matmul_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                 uint32_t nout) {
    int64_t m, n, k;
    dynop_result rc;
    if (nout != 1) return failf(DYNOP_ERROR_INVALID_ARGUMENT, MATMUL ": has 1 output, got %u", (unsigned)nout);
    if ((rc = matmul_sizes((const matmul_inst *)instance, in, nin, &m, &n, &k)) != DYNOP_OK) return rc;
    out->dtype = in[0].dtype;
    out->ndim = 2;
    out->shape[0] = m;
    out->shape[1] = n;
    return DYNOP_OK;
}

/* A matrix as stored: element (i, j) at p[i*s0 + j*s1]. */
typedef struct {
    float *p;
    int64_t rows, cols, s0, s1;
} mat;

static mat mat_of(const dynop_tensor *t) {
    mat x;
    x.p = (float *)(void *)((char *)t->data + t->byte_offset);
    x.rows = t->shape[0];
    x.cols = t->shape[1];
    x.s0 = t->strides[0];
    x.s1 = t->strides[1];
    return x;
}

/* row_major reports whether BLAS reads x in place as a row-major matrix,
 * and its leading dimension. */
static int row_major(const mat *x, int64_t *ld) {
    if ((x->cols == 1 || x->s1 == 1) && (x->rows == 1 || (x->s0 >= x->cols && x->s0 <= BLAS_INT_MAX))) {
        *ld = x->rows == 1 ? x->cols : x->s0;
        return 1;
    }
    return 0;
}

/* blas_operand returns how BLAS reads the input x (nonzero *flip: as the
 * transpose of a row-major matrix, x being column-major), copying it into
 * compact rows at *copy (to free) where it can read it neither way. */
static const float *blas_operand(const mat *x, int *flip, int64_t *ld, float **copy) {
    mat t;
    int64_t i, j;
    *flip = 0;
    *copy = NULL;
    if (row_major(x, ld)) return x->p;
    t.p = x->p;
    t.rows = x->cols;
    t.cols = x->rows;
    t.s0 = x->s1;
    t.s1 = x->s0;
    if (row_major(&t, ld)) {
        *flip = 1;
        return x->p;
    }
    *copy = (float *)malloc((size_t)x->rows * (size_t)x->cols * sizeof(float));
    if (*copy == NULL) return NULL;
    for (i = 0; i < x->rows; i++)
        for (j = 0; j < x->cols; j++) (*copy)[i * x->cols + j] = x->p[i * x->s0 + j * x->s1];
    *ld = x->cols;
    return *copy;
}

static dynop_result matmul_run_with(void *instance, const dynop_tensor *out, const dynop_tensor *in, uint32_t nin,
                                    epilogue_fn epilogue) {
    const matmul_inst *s = (const matmul_inst *)instance;
    mat a = mat_of(&in[0]), b = mat_of(&in[1]), c = mat_of(out);
    int64_t m, n, k, lda = 1, ldb = 1, ldc, i, j;
    int flip_a = 0, flip_b = 0;
    float *copy_a = NULL, *copy_b = NULL, *copy_bias = NULL, *tmp_c = NULL, *cp;
    const float *ap = NULL, *bp = NULL, *bias = NULL;
    dynop_result rc = DYNOP_OK;
    if ((rc = matmul_sizes(s, in, nin, &m, &n, &k)) != DYNOP_OK) return rc;
    if (m == 0 || n == 0) return DYNOP_OK;
    if (k > 0) {
        ap = blas_operand(&a, &flip_a, &lda, &copy_a);
        bp = blas_operand(&b, &flip_b, &ldb, &copy_b);
    }
    if (nin == 3) {
        const float *bq = (const float *)(const void *)((const char *)in[2].data + in[2].byte_offset);
        if (n == 1 || in[2].strides[0] == 1) bias = bq;
        else if ((copy_bias = (float *)malloc((size_t)n * sizeof(float))) != NULL) {
            for (j = 0; j < n; j++) copy_bias[j] = bq[j * in[2].strides[0]];
            bias = copy_bias;
        }
    }
    if (row_major(&c, &ldc)) cp = c.p;
    else {
        cp = tmp_c = (float *)malloc((size_t)m * (size_t)n * sizeof(float));
        ldc = n;
    }
    if ((k > 0 && (ap == NULL || bp == NULL)) || (nin == 3 && bias == NULL) || cp == NULL) {
        rc = fail(DYNOP_ERROR_NO_MEMORY, MATMUL ": out of memory copying strided matrices into compact ones");
        goto done;
    }
    if (k == 0) { /* an empty sum: BLAS is not called with k = 0 */
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) cp[i * ldc + j] = 0.0f;
    } else {
        int ta = s->trans_a ^ flip_a, tb = s->trans_b ^ flip_b;
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, s->alpha, ap, (int)lda, bp, (int)ldb, 0.0f, cp, (int)ldc);
    }
    if (bias != NULL || s->relu)
        for (i = 0; i < m; i++) epilogue(cp + i * ldc, bias, n, s->relu);
    if (tmp_c != NULL)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) c.p[i * c.s0 + j * c.s1] = tmp_c[i * n + j];
done:
    free(copy_a);
    free(copy_b);
    free(copy_bias);
    free(tmp_c);
    return rc;
}

static dynop_result matmul_run_scalar(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    return matmul_run_with(instance, out, in, nin, epilogue_scalar);
}

#if BLAS_X86
static dynop_result matmul_run_avx2(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                    uint32_t nin) {
    (void)nout;
    return matmul_run_with(instance, out, in, nin, epilogue_avx2);
}

static dynop_result matmul_run_avx512(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                      uint32_t nin) {
    (void)nout;
    return matmul_run_with(instance, out, in, nin, epilogue_avx512);
}
#endif

/* Best first, the reference last. */
static const dynop_variant matmul_variants[] = {
#if BLAS_X86
    DYNOP_VARIANT("avx512", DYNOP_CPU_AVX512F, matmul_run_avx512),
    DYNOP_VARIANT("avx2", DYNOP_CPU_AVX2, matmul_run_avx2),
#endif
    DYNOP_VARIANT("scalar", 0, matmul_run_scalar),
};

static const dynop_op_input matmul_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "a", "The left matrix, M x K (K x M with transpose_a).", "float32", NULL, 2, NULL},
    {DYNOP_OP_INPUT_HEADER, "b", "The right matrix, K x N (N x K with transpose_b).", "float32", NULL, 2, NULL},
    {DYNOP_OP_INPUT_HEADER, "bias", "A vector of N values added to each row of the product.", "float32",
     NULL, 1, NULL},
};
static const dynop_op_output matmul_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "out", "act(alpha * op(a) * op(b) + bias), M x N.", NULL, "float32", NULL, NULL, 2, NULL,
     0},
};
static const dynop_op_arg matmul_args[] = {
    {DYNOP_OP_ARG_HEADER, "transpose_a", "Multiply by the transpose of a.", DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL,
     NULL},
    {DYNOP_OP_ARG_HEADER, "transpose_b", "Multiply by the transpose of b.", DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL,
     NULL},
    {DYNOP_OP_ARG_HEADER, "alpha", "The factor of the product.", DYNOP_ARG_FLOAT, 0, 0, 0, "1.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "activation", "Applied last: \"none\" or \"relu\" (x < 0 ? 0 : x).", DYNOP_ARG_STRING, 0,
     0, 0, "\"none\"", "[\"none\", \"relu\"]", NULL},
};
static const dynop_op_schema matmul_schema = {
    DYNOP_OP_SCHEMA_HEADER,
    MATMUL,
    "Multiplies float32 matrices with OpenBLAS's sgemm, then adds a bias per column and applies an activation.",
    "cpu",
    3, 1, matmul_inputs,
    1, matmul_outputs,
    4, matmul_args,
};
static const dynop_operator matmul_op = DYNOP_OPERATOR_VARIANTS_FLAGS(
    MATMUL, "cpu", NULL, matmul_create, matmul_setup, matmul_destroy, matmul_variants, DYNOP_OPERATOR_CONCURRENT);

/* ==== the plugin ========================================================= */

static const dynop_interface_desc blas_desc =
    DYNOP_INTERFACE_DESC(DYNOP_BLAS_UID, DYNOP_BLAS_VERSION, DYNOP_BLAS_NAME);
static const dynop_interface_desc *const provides[] = {&blas_desc};
static const dynop_op_schema *const operators[] = {&matmul_schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    DYNOP_BLAS_PLUGIN,
    DYNOP_V(0, 1, 0),
    "Example C plugin wrapping OpenBLAS: sgemm, saxpy and sdot as an interface, and the operator blas.MatMul.",
    "dynop",
    NULL,
    0,
    1, provides,
    0, NULL,
    NULL,
    1, operators,
    0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
    rc = host->add_interface(host, &blas_table);
    if (rc == DYNOP_OK) rc = host->register_operator(host, &matmul_op);
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
