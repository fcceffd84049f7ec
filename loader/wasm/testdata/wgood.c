/*
 * wgood.c — dynop.plugin.wgood, a small WebAssembly test plugin written
 * exactly like a native one; link it with abi/wasm/dynop_wasm.c.
 *
 * It provides the interface dynop.wgood.Counter 1.0.0 (add) and two
 * operators on float32 tensors of any shape and strides:
 *
 *   wgood.Scale      y = x * factor (float, default 2). With fail_at >= 0
 *                    (int, default -1), run fails with
 *                    DYNOP_ERROR_INVALID_ARGUMENT on reaching element
 *                    fail_at (in row-major order), if there is one.
 *   wgood.Misbehave  mode (a string, required) says what run does:
 *                      ok          y = x
 *                      trap        __builtin_trap()
 *                      loop        spins for ever
 *                      grow        mallocs 1 MiB blocks, touching them,
 *                                  until malloc fails, frees them and
 *                                  fails with DYNOP_ERROR_NO_MEMORY
 *                      growtrap    the same, but traps when malloc fails
 *                      overflow    writes y, then 64 float32 past its end
 *                                  (y must be contiguous)
 *                      badlog      calls the log import with a message
 *                                  outside memory
 *                      baderror    calls the set_error import with a
 *                                  message outside memory, then fails
 *                      setupshape  setup (not run) says y has 17
 *                                  dimensions, more than DYNOP_MAX_NDIM
 *                      setupdtype  setup says y has dtype code 99, not a
 *                                  DLPack type
 *                      recurse     recursion 64 calls deep with two calls
 *                                  per level (2^64 calls) and no loop: only
 *                                  a check at function entries stops it
 *                      stack       recursion without end: the call stack
 *                                  overflows
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>

/* The host's imports, called directly to misbehave: through the host
 * table a plugin cannot pass pointers outside its memory. A native build
 * (to compare its info with the wasm one) has no such imports. */
#if defined(__wasm__)
__attribute__((import_module("dynop"), import_name("log"))) void wgood_raw_log(int32_t level, uint32_t msg,
                                                                                uint32_t len);
__attribute__((import_module("dynop"), import_name("set_error"))) void wgood_raw_set_error(uint32_t msg,
                                                                                           uint32_t len);
#else
static void wgood_raw_log(int32_t level, uint32_t msg, uint32_t len) {
    (void)level;
    (void)msg;
    (void)len;
}
static void wgood_raw_set_error(uint32_t msg, uint32_t len) {
    (void)msg;
    (void)len;
}
#endif

static const dynop_host *host_table;

static dynop_result fail(dynop_result rc, const char *msg) {
    if (host_table != NULL) host_table->set_error(host_table, msg);
    return rc;
}

/* ---- dynop.wgood.Counter ------------------------------------------------- */

#define WGOOD_COUNTER_UID DYNOP_UID(0x5E0C3A71, 0x2B64, 0x4F0D, 0x9A, 0x17, 0x6C, 0x83, 0x0E, 0x42, 0xD5, 0x19)
#define WGOOD_COUNTER_VERSION DYNOP_V(1, 0, 0)

typedef struct wgood_counter {
    dynop_header header;
    int32_t (*add)(int32_t a, int32_t b);
} wgood_counter;

static int32_t counter_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

static const wgood_counter counter = {
    DYNOP_HEADER(WGOOD_COUNTER_UID, WGOOD_COUNTER_VERSION, wgood_counter),
    counter_add,
};

static const dynop_interface_desc counter_desc =
    DYNOP_INTERFACE_DESC(WGOOD_COUNTER_UID, WGOOD_COUNTER_VERSION, "dynop.wgood.Counter");
static const dynop_interface_desc *const provides[] = {&counter_desc};

/* ---- tensors --------------------------------------------------------------- */

static int is_f32(const dynop_tensor *t) { return t->dtype.code == DYNOP_DTYPE_FLOAT && t->dtype.bits == 32 && t->dtype.lanes == 1; }

static int64_t numel(const dynop_tensor *t) {
    int64_t n = 1;
    int32_t d;
    for (d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

/* at returns element i (in row-major order) of the float32 tensor t, with
 * any strides. */
static float *at(const dynop_tensor *t, int64_t i) {
    int64_t off = 0;
    int32_t d;
    for (d = t->ndim - 1; d >= 0; d--) {
        int64_t n = t->shape[d];
        off += (i % n) * t->strides[d];
        i /= n;
    }
    return (float *)(void *)((char *)t->data + t->byte_offset) + off;
}

/* setup_same: y has x's dtype and shape. */
static dynop_result setup_same(const dynop_tensor *x, dynop_tensor *y) {
    int32_t d;
    if (!is_f32(x)) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "x must be float32");
    if (x->ndim < 0 || x->ndim > DYNOP_MAX_NDIM) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "x has a bad ndim");
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    for (d = 0; d < x->ndim; d++) y->shape[d] = x->shape[d];
    return DYNOP_OK;
}

/* ---- wgood.Scale ----------------------------------------------------------- */

typedef struct scale {
    float factor;
    int64_t fail_at;
} scale;

static dynop_result scale_create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    scale *s;
    uint32_t i;
    (void)user;
    s = (scale *)malloc(sizeof *s);
    if (s == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "out of memory");
    s->factor = 2.0f;
    s->fail_at = -1;
    for (i = 0; i < n; i++) {
        if (args[i].count != 1) continue;
        if (strcmp(args[i].name, "factor") == 0 && args[i].type == DYNOP_ARG_FLOAT)
            s->factor = (float)*(const double *)args[i].values;
        else if (strcmp(args[i].name, "fail_at") == 0 && args[i].type == DYNOP_ARG_INT)
            s->fail_at = *(const int64_t *)args[i].values;
    }
    *instance = s;
    return DYNOP_OK;
}

static dynop_result scale_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                uint32_t nout) {
    (void)instance;
    if (nin != 1 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "one input and one output");
    return setup_same(&in[0], &out[0]);
}

static dynop_result scale_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                              uint32_t nin) {
    const scale *s = (const scale *)instance;
    int64_t i, n = numel(&in[0]);
    (void)nout;
    (void)nin;
    for (i = 0; i < n; i++) {
        if (i == s->fail_at) {
            char msg[64];
            snprintf(msg, sizeof msg, "fail_at reached at element %lld", (long long)i);
            return fail(DYNOP_ERROR_INVALID_ARGUMENT, msg);
        }
        *at(&out[0], i) = *at(&in[0], i) * s->factor;
    }
    return DYNOP_OK;
}

static void destroy(void *instance) { free(instance); }

/* ---- wgood.Misbehave ----------------------------------------------------- */

enum { OK, TRAP, LOOP, GROW, GROWTRAP, OVERFLOW, BADLOG, BADERROR, SETUPSHAPE, SETUPDTYPE, RECURSE, STACK };
static const char *const modes[] = {"ok",       "trap",   "loop",       "grow",       "growtrap", "overflow",
                                    "badlog",   "baderror", "setupshape", "setupdtype", "recurse",  "stack"};

static dynop_result misbehave_create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    int *mode;
    uint32_t i, m;
    (void)user;
    for (i = 0; i < n; i++) {
        if (strcmp(args[i].name, "mode") != 0 || args[i].type != DYNOP_ARG_STRING || args[i].count != 1) continue;
        for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            if (strcmp(*(const char *const *)args[i].values, modes[m]) != 0) continue;
            mode = (int *)malloc(sizeof *mode);
            if (mode == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "out of memory");
            *mode = (int)m;
            *instance = mode;
            return DYNOP_OK;
        }
    }
    return fail(DYNOP_ERROR_INVALID_ARGUMENT, "mode is missing or unknown");
}

static dynop_result misbehave_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out,
                                    uint32_t nout) {
    dynop_result rc;
    if (nin != 1 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "one input and one output");
    rc = setup_same(&in[0], &out[0]);
    if (rc == DYNOP_OK && *(const int *)instance == SETUPSHAPE) out[0].ndim = DYNOP_MAX_NDIM + 1;
    if (rc == DYNOP_OK && *(const int *)instance == SETUPDTYPE) out[0].dtype.code = 99;
    return rc;
}

/* grow mallocs 1 MiB blocks until malloc fails, chaining them through
 * their first bytes. */
static dynop_result grow(int trap) {
    void *head = NULL;
    unsigned mib = 0;
    char msg[64];
    for (;;) {
        char *b = (char *)malloc(1 << 20);
        size_t i;
        if (b == NULL) break;
        for (i = 0; i < (1u << 20); i += 4096) b[i] = (char)i;
        *(void **)(void *)b = head;
        head = b;
        mib++;
    }
    if (trap) __builtin_trap();
    while (head != NULL) {
        void *next = *(void **)head;
        free(head);
        head = next;
    }
    snprintf(msg, sizeof msg, "out of memory after %u MiB", mib);
    return fail(DYNOP_ERROR_NO_MEMORY, msg);
}

/* deep calls itself twice per level, n levels deep: 2^n calls, none of
 * them in a loop (optnone keeps clang from turning a call into one). */
__attribute__((noinline, optnone)) static uint32_t deep(uint32_t n) {
    if (n == 0) return 1;
    return deep(n - 1) + deep(n - 1);
}

/* bottomless recurses until the call stack overflows (long before n
 * wraps). */
__attribute__((noinline, optnone)) static uint32_t bottomless(volatile uint32_t n) {
    if (n == 0xFFFFFFFFu) return 0;
    return bottomless(n + 1) + n;
}

static dynop_result misbehave_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                                  uint32_t nin) {
    int64_t i, n = numel(&in[0]);
    (void)nout;
    (void)nin;
    switch (*(const int *)instance) {
    case TRAP: __builtin_trap();
    case LOOP: {
        volatile uint32_t spins = 0;
        for (;;) spins++;
    }
    case GROW: return grow(0);
    case GROWTRAP: return grow(1);
    case OVERFLOW: {
        float *y = at(&out[0], 0);
        int32_t d;
        int64_t stride = 1;
        for (d = out[0].ndim - 1; d >= 0; d--) {
            if (out[0].shape[d] != 1 && out[0].strides[d] != stride)
                return fail(DYNOP_ERROR_INVALID_ARGUMENT, "overflow needs a contiguous y");
            stride *= out[0].shape[d];
        }
        for (i = 0; i < n + 64; i++) y[i] = (float)i;
        return DYNOP_OK;
    }
    case BADLOG: wgood_raw_log(DYNOP_LOG_INFO, 0xFFFFFF00u, 1000); break;
    case BADERROR: wgood_raw_set_error(0xFFFFFFF0u, 100); return DYNOP_ERROR;
    case RECURSE: return deep(64) == 0 ? DYNOP_OK : DYNOP_ERROR;
    case STACK: return bottomless(0) == 0 ? DYNOP_OK : DYNOP_ERROR;
    default: break;
    }
    for (i = 0; i < n; i++) *at(&out[0], i) = *at(&in[0], i);
    return DYNOP_OK;
}

/* ---- schemas and registration -------------------------------------------- */

static const dynop_op_input x_input[] = {
    {DYNOP_OP_INPUT_HEADER, "x", "A float32 tensor of any shape.", "float32", NULL, 0, NULL},
};
static const dynop_op_output y_output[] = {
    {DYNOP_OP_OUTPUT_HEADER, "y", "A float32 tensor of x's shape.", NULL, NULL, NULL, NULL, 0, NULL, 0},
};
static const dynop_op_arg scale_args[] = {
    {DYNOP_OP_ARG_HEADER, "factor", "What x is multiplied by.", DYNOP_ARG_FLOAT, 0, 0, 0, "2.0", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "fail_at", "Fail on reaching this element; -1 never.", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN, -1,
     0, "-1", NULL, NULL},
};
static const dynop_op_schema scale_schema = {
    DYNOP_OP_SCHEMA_HEADER, "wgood.Scale", "Multiplies x by factor.", "cpu", 1, 0, x_input, 1, y_output, 2,
    scale_args,
};
static const dynop_operator scale_op =
    DYNOP_OPERATOR("wgood.Scale", "cpu", NULL, scale_create, scale_setup, scale_run, destroy);

static const dynop_op_arg misbehave_args[] = {
    {DYNOP_OP_ARG_HEADER, "mode", "What run does wrong.", DYNOP_ARG_STRING, DYNOP_ARG_REQUIRED, 0, 0, NULL,
     "[\"ok\", \"trap\", \"loop\", \"grow\", \"growtrap\", \"overflow\", \"badlog\", \"baderror\", \"setupshape\", \"setupdtype\", \"recurse\", \"stack\"]",
     NULL},
};
static const dynop_op_schema misbehave_schema = {
    DYNOP_OP_SCHEMA_HEADER, "wgood.Misbehave", "Copies x to y, or misbehaves as mode says.", "cpu", 1, 0, x_input,
    1, y_output, 1, misbehave_args,
};
static const dynop_operator misbehave_op =
    DYNOP_OPERATOR("wgood.Misbehave", "cpu", NULL, misbehave_create, misbehave_setup, misbehave_run, destroy);

static const dynop_op_schema *const operators[] = {&scale_schema, &misbehave_schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    "dynop.plugin.wgood",
    DYNOP_V(1, 0, 0),
    "A WebAssembly test plugin: a counter interface and operators that behave and misbehave.",
    "dynop",
    NULL,
    0,
    1, provides,
    0, NULL,
    NULL,
    2, operators,
    0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
    rc = host->add_interface(host, &counter);
    if (rc == DYNOP_OK) rc = host->register_operator(host, &scale_op);
    if (rc == DYNOP_OK) rc = host->register_operator(host, &misbehave_op);
    if (rc != DYNOP_OK) {
        host->set_error(host, host->last_error(host));
        return rc;
    }
    host->log(host, DYNOP_LOG_INFO, "wgood registered");
    return DYNOP_OK;
}

static dynop_result deregister_plugin(const dynop_host *host) {
    host->log(host, DYNOP_LOG_INFO, "wgood deregistered");
    host_table = NULL;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
