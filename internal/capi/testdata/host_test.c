/* The C test of libdynop (run by TestC in capi_test.go): the lifecycle
 * over the example plugins, then every bad input, each checked for its
 * result code and the text of dynop_last_error().
 *
 * usage: host_test PLUGIN_DIR PIPELINE OUT_DIR RACE_DIR
 * (RACE_DIR: a copy of the imgproc plugin, for hosts beside the first) */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <dynop/dynop_host.h>
#include <vecmath.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n",      \
                    __FILE__, __LINE__, #cond, dynop_last_error());           \
            failures++;                                                       \
        }                                                                     \
    } while (0)

/* EXPECT_ERR runs call and checks its result is code and the thread's
 * message contains text. */
#define EXPECT_ERR(call, code, text)                                          \
    do {                                                                      \
        dynop_result r_ = (call);                                             \
        const char *m_ = dynop_last_error();                                  \
        if (r_ != (code) || strstr(m_, (text)) == NULL) {                     \
            fprintf(stderr, "%s:%d: %s: got result %d, message \"%s\"; want %d (%s), a message with \"%s\"\n", \
                    __FILE__, __LINE__, #call, (int)r_, m_, (int)(code), #code, (text)); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#define EXPECT_OK(call) EXPECT_ERR(call, DYNOP_OK, "")

/* An input tensor the test owns, with a deleter the library must never
 * call. */
static int input_deleter_calls;
static void input_deleter(DLManagedTensorVersioned *self) {
    (void)self;
    input_deleter_calls++;
}

static DLManagedTensorVersioned make_tensor(void *data, int32_t ndim, int64_t *shape, int64_t *strides,
                                            uint8_t code, uint8_t bits) {
    DLManagedTensorVersioned t;
    memset(&t, 0, sizeof t);
    t.version.major = DLPACK_MAJOR_VERSION;
    t.version.minor = DLPACK_MINOR_VERSION;
    t.deleter = input_deleter;
    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    t.dl_tensor.data = data;
    t.dl_tensor.device.device_type = kDLCPU;
    t.dl_tensor.ndim = ndim;
    t.dl_tensor.dtype.code = code;
    t.dl_tensor.dtype.bits = bits;
    t.dl_tensor.dtype.lanes = 1;
    t.dl_tensor.shape = shape;
    t.dl_tensor.strides = strides;
    return t;
}

/* Threads each run their own operator and check that the message of a
 * failure on one thread is not another's. */
typedef struct {
    dynop_host_t *host;
    int index;
    int failed;
} worker_arg;

static void *worker(void *p) {
    worker_arg *w = p;
    char name[64];
    snprintf(name, sizeof name, "imgproc.NoSuchOperator%d", w->index);
    for (int i = 0; i < 50; i++) {
        dynop_operator_t *op = NULL;
        if (dynop_operator_create(w->host, name, NULL, &op) != DYNOP_ERROR_NOT_FOUND ||
            strstr(dynop_last_error(), name) == NULL) {
            w->failed = 1;
        }
        if (dynop_operator_create(w->host, "imgproc.Saxpy", "{\"a\": 3}", &op) != DYNOP_OK ||
            strcmp(dynop_last_error(), "") != 0) {
            w->failed = 1;
            continue;
        }
        float x[4] = {1, 2, 3, (float)w->index}, y[4] = {1, 1, 1, 1};
        int64_t shape[1] = {4};
        DLManagedTensorVersioned tx = make_tensor(x, 1, shape, NULL, kDLFloat, 32);
        DLManagedTensorVersioned ty = make_tensor(y, 1, shape, NULL, kDLFloat, 32);
        DLManagedTensorVersioned *ins[2] = {&tx, &ty}, *outs[1] = {NULL};
        if (dynop_operator_run(op, ins, 2, 1, outs, 1) != DYNOP_OK) {
            w->failed = 1;
        } else {
            const float *o = outs[0]->dl_tensor.data;
            if (o[0] != 4 || o[3] != 3 * (float)w->index + 1) {
                w->failed = 1;
            }
            dynop_tensor_delete(outs[0]);
        }
        if (dynop_operator_destroy(op) != DYNOP_OK) {
            w->failed = 1;
        }
    }
    return NULL;
}

/* Threads that use a host while another thread closes it: every call
 * returns DYNOP_OK or DYNOP_ERROR_CLOSED, and none crashes. They run the
 * Go operator image.Invert (a native library serves one host at a time,
 * and the first host has imgproc started). */
typedef struct {
    dynop_host_t *host;
    const char *op, *args; /* an operator of one or two float inputs */
    int nin;
    float want; /* its output's element 63 */
    int calls, closed, other;
} racer_arg;

static void *racer(void *p) {
    racer_arg *a = p;
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = (float)i;
    int64_t shape[1] = {64};
    for (;;) {
        dynop_operator_t *op = NULL;
        dynop_result r = dynop_operator_create(a->host, a->op, a->args, &op);
        a->calls++;
        if (r == DYNOP_ERROR_CLOSED) {
            a->closed++;
            return NULL;
        }
        if (r != DYNOP_OK) {
            a->other++;
            fprintf(stderr, "racer: create: %d %s\n", (int)r, dynop_last_error());
            return NULL;
        }
        for (int i = 0; i < 20; i++) {
            DLManagedTensorVersioned tx = make_tensor(x, 1, shape, NULL, kDLFloat, 32);
            DLManagedTensorVersioned *ins[2] = {&tx, &tx}, *outs[1];
            r = dynop_operator_run(op, ins, (uint32_t)a->nin, 1, outs, 1);
            a->calls++;
            if (r == DYNOP_OK) {
                if (((const float *)outs[0]->dl_tensor.data)[63] != a->want) a->other++;
                dynop_tensor_delete(outs[0]);
            } else if (r == DYNOP_ERROR_CLOSED) {
                a->closed++;
            } else {
                a->other++;
                fprintf(stderr, "racer: run: %d %s\n", (int)r, dynop_last_error());
            }
            size_t n;
            r = dynop_host_plugins(a->host, NULL, 0, &n);
            a->calls++;
            if (r != DYNOP_OK && r != DYNOP_ERROR_CLOSED) a->other++;
        }
        r = dynop_operator_destroy(op);
        if (r != DYNOP_OK && r != DYNOP_ERROR_CLOSED) a->other++;
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: host_test PLUGIN_DIR PIPELINE OUT_DIR RACE_DIR\n");
        return 2;
    }
    dynop_version v = dynop_host_api_version();
    CHECK(v.major == DYNOP_HOST_API_VERSION_MAJOR && v.minor >= DYNOP_HOST_API_VERSION_MINOR);
    CHECK(strcmp(dynop_last_error(), "") == 0);

    /* Open over the plugin directory, with no cache: the plugin files have
     * no manifests, so dynop-scanner beside the library reads them. */
    const char *paths[1] = {argv[1]};
    dynop_host_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.paths = paths;
    opts.path_count = 1;
    opts.no_default_paths = 1;
    opts.no_cache = 1;
    opts.log_level = 8; /* errors only */
    dynop_host_t *host = NULL;
    EXPECT_OK(dynop_host_open(&opts, &host));
    CHECK(host != NULL);

    /* List: the compiled-in image and npy plugins, vecmath and imgproc. */
    size_t count = 0;
    EXPECT_OK(dynop_host_plugins(host, NULL, 0, &count));
    CHECK(count >= 4);
    dynop_plugin_status *list = calloc(count, sizeof *list);
    for (size_t i = 0; i < count; i++) list[i].struct_size = sizeof *list;
    size_t count2 = 0;
    EXPECT_OK(dynop_host_plugins(host, list, count, &count2));
    CHECK(count2 == count);
    int seen = 0;
    for (size_t i = 0; i < count; i++) {
        printf("plugin %s %u.%u.%u state %d path %s %s\n", list[i].id, list[i].version.major,
               list[i].version.minor, list[i].version.patch, list[i].state, list[i].path, list[i].error);
        if (strcmp(list[i].id, "dynop.plugin.vecmath") == 0) {
            seen |= 1;
            CHECK(list[i].state == DYNOP_PLUGIN_AVAILABLE);
            CHECK(strstr(list[i].path, "libdynop_vecmath.so") != NULL);
            CHECK(list[i].version.major == 1);
        }
        if (strcmp(list[i].id, "dynop.plugin.imgproc") == 0) seen |= 2;
        if (strcmp(list[i].id, "dynop.plugin.image") == 0) {
            seen |= 4;
            CHECK(strcmp(list[i].path, "") == 0);
        }
    }
    CHECK(seen == 7);

    /* Without a scanner, the plugin files (no manifests, no cache) are
     * listed as broken, and the reason names the scanner. */
    dynop_host_options noscan = opts;
    noscan.scanner = "/nonexistent/dynop-scanner";
    dynop_host_t *h3 = NULL;
    EXPECT_OK(dynop_host_open(&noscan, &h3));
    dynop_plugin_status st[8];
    for (int i = 0; i < 8; i++) st[i].struct_size = sizeof st[i];
    EXPECT_OK(dynop_host_plugins(h3, st, 8, &count2));
    int broken = 0;
    for (size_t i = 0; i < count2 && i < 8; i++) {
        if (strstr(st[i].path, "libdynop_vecmath.so") != NULL) {
            broken = st[i].state == DYNOP_PLUGIN_BROKEN && strstr(st[i].error, "/nonexistent/dynop-scanner") != NULL;
            if (!broken) printf("no-scanner vecmath: state %d error %s\n", st[i].state, st[i].error);
        }
    }
    CHECK(broken);
    EXPECT_OK(dynop_host_close(h3));

    /* A struct from an older header: only struct_size and state fit. */
    dynop_plugin_status small[1];
    memset(small, 0xAB, sizeof small);
    small[0].struct_size = 8;
    EXPECT_OK(dynop_host_plugins(host, small, 1, &count2));
    CHECK(small[0].id == (const char *)(uintptr_t)0xABABABABABABABABull);
    /* An array of such structs is stepped through by their size. */
    struct {
        uint32_t struct_size;
        int32_t state;
    } old2[2] = {{8, -1}, {8, -1}};
    EXPECT_OK(dynop_host_plugins(host, (dynop_plugin_status *)(void *)old2, 2, &count2));
    CHECK(old2[0].struct_size == 8 && old2[1].struct_size == 8);
    CHECK(old2[0].state == DYNOP_PLUGIN_AVAILABLE && old2[1].state == DYNOP_PLUGIN_AVAILABLE);
    dynop_plugin_status mixed[2];
    mixed[0].struct_size = sizeof mixed[0];
    mixed[1].struct_size = 8;
    EXPECT_ERR(dynop_host_plugins(host, mixed, 2, &count2), DYNOP_ERROR_INVALID_ARGUMENT, "statuses[1].struct_size is 8");

    /* Acquire VecMath, call it, release it. */
    const void *table = NULL;
    dynop_iface_ref_t *ref = NULL;
    dynop_uid uid = DYNOP_VECMATH_UID;
    dynop_version min = DYNOP_V(1, 0, 0);
    EXPECT_OK(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, min, &table, &ref));
    CHECK(table != NULL && ref != NULL);
    if (table != NULL) {
        const dynop_vecmath *vm = table;
        float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8};
        CHECK(vm->dot(x, y, 4) == 70.0f);
        EXPECT_OK(dynop_host_plugins(host, list, count, &count2));
        for (size_t i = 0; i < count; i++) {
            if (strcmp(list[i].id, "dynop.plugin.vecmath") == 0) {
                CHECK(list[i].state == DYNOP_PLUGIN_STARTED && list[i].refs == 1);
            }
        }
    }
    EXPECT_OK(dynop_host_release(ref));
    EXPECT_ERR(dynop_host_release(ref), DYNOP_ERROR_CLOSED, "interface reference handle");

    /* The minimum version is honoured. */
    dynop_version v2 = DYNOP_V(2, 0, 0), v15 = DYNOP_V(1, 5, 0);
    EXPECT_ERR(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, v2, &table, &ref), DYNOP_ERROR_VERSION, "dynop.example.VecMath");
    CHECK(table == NULL && ref == NULL);
    EXPECT_ERR(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, v15, &table, &ref), DYNOP_ERROR_VERSION, "1.5");
    EXPECT_ERR(dynop_host_acquire(host, "dynop.plugin.nosuch", &uid, min, &table, &ref), DYNOP_ERROR_NOT_FOUND, "dynop.plugin.nosuch");

    /* An operator: GaussianBlur of a constant 8x6 gray image is the image. */
    dynop_operator_t *blur = NULL;
    EXPECT_OK(dynop_operator_create(host, "imgproc.GaussianBlur", "{\"sigma\": 1.5}", &blur));
    uint32_t nin = 0, nout = 0;
    EXPECT_OK(dynop_operator_arity(blur, &nin, &nout));
    CHECK(nin == 1 && nout == 1);
    uint8_t img[6 * 8];
    memset(img, 100, sizeof img);
    int64_t shape[3] = {6, 8, 1};
    DLManagedTensorVersioned in = make_tensor(img, 3, shape, NULL, kDLUInt, 8);
    DLManagedTensorVersioned *ins[1] = {&in};
    DLManagedTensorVersioned *outs[1] = {NULL};
    EXPECT_OK(dynop_operator_run(blur, ins, 1, 1, outs, 1));
    DLManagedTensorVersioned *out = outs[0];
    CHECK(out != NULL);
    if (out != NULL) {
        CHECK(out->version.major == 1 && out->deleter != NULL);
        CHECK(out->dl_tensor.device.device_type == kDLCPU);
        CHECK(out->dl_tensor.ndim == 3 && out->dl_tensor.shape[0] == 6 && out->dl_tensor.shape[1] == 8 && out->dl_tensor.shape[2] == 1);
        CHECK(out->dl_tensor.strides[0] == 8 && out->dl_tensor.strides[1] == 1 && out->dl_tensor.strides[2] == 1);
        CHECK(out->dl_tensor.dtype.code == kDLUInt && out->dl_tensor.dtype.bits == 8);
        CHECK(((uintptr_t)out->dl_tensor.data & 63) == 0);
        const uint8_t *o = out->dl_tensor.data;
        int same = 1;
        for (int i = 0; i < 48; i++) same &= o[i] == 100;
        CHECK(same);
    }

    /* Into the caller's output: the same result, written in place. */
    {
        uint8_t dst[6 * 8], small[4 * 8];
        memset(dst, 0, sizeof dst);
        DLManagedTensorVersioned into = make_tensor(dst, 3, shape, NULL, kDLUInt, 8);
        into.flags = 0;
        into.deleter = NULL;
        DLManagedTensorVersioned *into_outs[1] = {&into};
        EXPECT_OK(dynop_operator_run_into(blur, ins, 1, 1, into_outs, 1));
        CHECK(out != NULL && memcmp(dst, out->dl_tensor.data, sizeof dst) == 0);
        into.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, into_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "output 0 sample 0 is read-only");
        into.flags = 0;
        int64_t small_shape[3] = {4, 8, 1};
        DLManagedTensorVersioned wrong = make_tensor(small, 3, small_shape, NULL, kDLUInt, 8);
        wrong.flags = 0;
        DLManagedTensorVersioned *wrong_outs[1] = {&wrong};
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, wrong_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "output 0 sample 0 is uint8 [4 8 1]; operator \"imgproc.GaussianBlur\" gives uint8 [6 8 1]");
        int64_t fshape[3] = {1, 2, 1};
        wrong = make_tensor(dst, 3, fshape, NULL, kDLFloat, 32); /* another dtype */
        wrong.flags = 0;
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, wrong_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "output 0 sample 0 is float32 [1 2 1]");
        DLManagedTensorVersioned same_mem = in;
        same_mem.flags = 0;
        DLManagedTensorVersioned *same_outs[1] = {&same_mem};
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, same_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "output 0 sample 0 overlaps input 0 sample 0: operators do not run in place");
        int64_t gaps[3] = {16, 2, 1}; /* every other pixel of a larger buffer */
        uint8_t big[6 * 16];
        DLManagedTensorVersioned strided = make_tensor(big, 3, shape, gaps, kDLUInt, 8);
        strided.flags = 0;
        DLManagedTensorVersioned *strided_outs[1] = {&strided};
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, strided_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "outputs must be compact");
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, NULL, 1), DYNOP_ERROR_INVALID_ARGUMENT, "outputs is NULL");
        EXPECT_ERR(dynop_operator_run_into(blur, ins, 1, 1, into_outs, 2), DYNOP_ERROR_INVALID_ARGUMENT, "has 1 output(s), not 2");
        EXPECT_ERR(dynop_operator_run_into(NULL, ins, 1, 1, into_outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "the operator handle is NULL");
    }

    /* Saxpy on a strided view and a batch of two: out = 2x + y. */
    dynop_operator_t *saxpy = NULL;
    EXPECT_OK(dynop_operator_create(host, "imgproc.Saxpy", "{\"a\": 2}", &saxpy));
    float grid[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, ones[3] = {1, 1, 1}, xs[2] = {10, 20}, ys[2] = {0.5f, 0.25f};
    int64_t col_shape[1] = {3}, col_strides[1] = {4}, two[1] = {2};
    DLManagedTensorVersioned x0 = make_tensor(&grid[0][1], 1, col_shape, col_strides, kDLFloat, 32); /* 2, 6, 10 */
    DLManagedTensorVersioned y0 = make_tensor(ones, 1, col_shape, NULL, kDLFloat, 32);
    DLManagedTensorVersioned x1 = make_tensor(xs, 1, two, NULL, kDLFloat, 32);
    DLManagedTensorVersioned y1 = make_tensor(ys, 1, two, NULL, kDLFloat, 32);
    DLManagedTensorVersioned *sins[4] = {&x0, &x1, &y0, &y1}; /* [input][sample] */
    DLManagedTensorVersioned *souts[2] = {NULL, NULL};
    EXPECT_OK(dynop_operator_run(saxpy, sins, 2, 2, souts, 1));
    if (souts[0] != NULL && souts[1] != NULL) {
        const float *a = souts[0]->dl_tensor.data, *b = souts[1]->dl_tensor.data;
        CHECK(souts[0]->dl_tensor.shape[0] == 3 && souts[1]->dl_tensor.shape[0] == 2);
        CHECK(a[0] == 5 && a[1] == 13 && a[2] == 21);
        CHECK(b[0] == 20.5f && b[1] == 40.25f);
    }
    /* The library owns no input: their deleters were never called. */
    CHECK(input_deleter_calls == 0);

    /* Bad input, each a result and a message. */
    EXPECT_ERR(dynop_host_open(&opts, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "host (the out-parameter) is NULL");
    dynop_host_options tiny = opts;
    tiny.struct_size = 8;
    dynop_host_t *h2 = (dynop_host_t *)1;
    EXPECT_ERR(dynop_host_open(&tiny, &h2), DYNOP_ERROR_VERSION, "smaller than the first version of dynop_host_options");
    CHECK(h2 == NULL);
    struct {
        dynop_host_options o;
        uint64_t newer_field;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.o = opts;
    newer.o.struct_size = sizeof newer;
    newer.newer_field = 1;
    EXPECT_ERR(dynop_host_open(&newer.o, &h2), DYNOP_ERROR_UNSUPPORTED, "beyond the");
    dynop_host_options badpol = opts;
    badpol.sandbox = "sometimes";
    EXPECT_ERR(dynop_host_open(&badpol, &h2), DYNOP_ERROR_INVALID_ARGUMENT, "options.sandbox");
    badpol = opts;
    badpol.signature_policy = "sometimes";
    EXPECT_ERR(dynop_host_open(&badpol, &h2), DYNOP_ERROR_INVALID_ARGUMENT, "options.signature_policy: unknown signature policy \"sometimes\"");
    badpol = opts;
    badpol.trust_dir = "/nonexistent/keys";
    EXPECT_ERR(dynop_host_open(&badpol, &h2), DYNOP_ERROR_NOT_FOUND, "/nonexistent/keys");
    badpol = opts;
    badpol.cpu_features = "-avx3";
    EXPECT_ERR(dynop_host_open(&badpol, &h2), DYNOP_ERROR_INVALID_ARGUMENT, "unknown CPU feature \"avx3\"");
    badpol.cpu_features = "-avx512f,-avx2";
    EXPECT_OK(dynop_host_open(&badpol, &h2));
    EXPECT_OK(dynop_host_close(h2));
    dynop_host_options nullpath = opts;
    nullpath.paths = NULL;
    EXPECT_ERR(dynop_host_open(&nullpath, &h2), DYNOP_ERROR_INVALID_ARGUMENT, "options.paths is NULL but path_count is 1");
    nullpath = opts;
    nullpath.path_count = (size_t)-1; /* a negative count: an error, not a panic */
    EXPECT_ERR(dynop_host_open(&nullpath, &h2), DYNOP_ERROR_INVALID_ARGUMENT, "options.path_count is 18446744073709551615, more than");
    /* A capacity larger than the list (SIZE_MAX): the count written, as many as there are. */
    EXPECT_OK(dynop_host_plugins(host, list, (size_t)-1, &count2));
    CHECK(count2 == count);

    EXPECT_ERR(dynop_host_plugins(NULL, list, count, &count2), DYNOP_ERROR_INVALID_ARGUMENT, "the host handle is NULL");
    EXPECT_ERR(dynop_host_plugins((dynop_host_t *)(uintptr_t)0x7fff0000, list, count, &count2), DYNOP_ERROR_INVALID_ARGUMENT, "is not a host handle of this library");
    EXPECT_ERR(dynop_host_plugins((dynop_host_t *)(void *)saxpy, list, count, &count2), DYNOP_ERROR_INVALID_ARGUMENT, "is an operator handle, not a host handle");
    EXPECT_ERR(dynop_host_plugins(host, NULL, 3, &count2), DYNOP_ERROR_INVALID_ARGUMENT, "statuses is NULL but capacity is 3");
    dynop_plugin_status unsized[1];
    memset(unsized, 0, sizeof unsized);
    EXPECT_ERR(dynop_host_plugins(host, unsized, 1, &count2), DYNOP_ERROR_VERSION, "statuses[0].struct_size is 0");
    EXPECT_ERR(dynop_host_acquire(host, NULL, &uid, min, &table, &ref), DYNOP_ERROR_INVALID_ARGUMENT, "plugin_id is NULL");
    EXPECT_ERR(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, NULL, min, &table, &ref), DYNOP_ERROR_INVALID_ARGUMENT, "uid is NULL");
    EXPECT_ERR(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, min, NULL, &ref), DYNOP_ERROR_INVALID_ARGUMENT, "table (the out-parameter) is NULL");
    EXPECT_ERR(dynop_host_release(NULL), DYNOP_ERROR_INVALID_ARGUMENT, "the interface reference handle is NULL");

    dynop_operator_t *bad = NULL;
    EXPECT_ERR(dynop_operator_create(host, "imgproc.GausianBlur", "{\"sigma\": 1}", &bad), DYNOP_ERROR_NOT_FOUND, "imgproc.GaussianBlur");
    CHECK(bad == NULL);
    EXPECT_ERR(dynop_operator_create(host, "imgproc.GaussianBlur", "{\"sigma\": ", &bad), DYNOP_ERROR_INVALID_ARGUMENT, "args_json: unexpected EOF");
    EXPECT_ERR(dynop_operator_create(host, "imgproc.GaussianBlur", "[1]", &bad), DYNOP_ERROR_INVALID_ARGUMENT, "args_json: json: cannot unmarshal array");
    EXPECT_ERR(dynop_operator_create(host, "imgproc.GaussianBlur", "{\"sigma\": -1}", &bad), DYNOP_ERROR_INVALID_ARGUMENT, "sigma");
    EXPECT_ERR(dynop_operator_create(host, "imgproc.GaussianBlur", "{}", &bad), DYNOP_ERROR_INVALID_ARGUMENT, "sigma");
    EXPECT_ERR(dynop_operator_create(host, NULL, NULL, &bad), DYNOP_ERROR_INVALID_ARGUMENT, "name is NULL");

    DLManagedTensorVersioned t;
    t = in;
    t.dl_tensor.ndim = DYNOP_MAX_NDIM + 1;
    EXPECT_ERR(dynop_operator_run(blur, ins, 1, 1, outs, 1), DYNOP_OK, ""); /* in is fine */
    if (outs[0] != NULL) EXPECT_OK(dynop_tensor_delete(outs[0]));
    DLManagedTensorVersioned *tins[1] = {&t};
    outs[0] = (DLManagedTensorVersioned *)&t; /* overwritten with NULL on failure */
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "ndim is 17; a tensor has 0 to DYNOP_MAX_NDIM (16) dimensions");
    CHECK(outs[0] == NULL);
    t = in;
    int64_t neg[3] = {8, -1, 1};
    t.dl_tensor.strides = neg;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "stride -1 of dimension 1 is negative");
    t = in;
    t.dl_tensor.dtype.bits = 4; /* packed int4: not a whole byte per element */
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "bits 4, lanes 1} is not a whole number of bytes");
    t = in;
    t.dl_tensor.device.device_type = kDLCUDA;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_UNSUPPORTED, "on device cuda");
    t = in;
    t.version.major = 0;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_VERSION, "DLPack version 0.");
    t = in;
    t.dl_tensor.data = NULL;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "nil data pointer");
    t = in;
    t.dl_tensor.shape = NULL;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "shape is NULL");
    t = in;
    t.dl_tensor.dtype.code = kDLFloat; /* float8: no size */
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "dtype");
    t = in;
    t.deleter = NULL; /* a borrowed input needs no deleter */
    EXPECT_OK(dynop_operator_run(blur, tins, 1, 1, outs, 1));
    if (outs[0] != NULL) EXPECT_OK(dynop_tensor_delete(outs[0]));
    DLManagedTensorVersioned *nullin[1] = {NULL};
    EXPECT_ERR(dynop_operator_run(blur, nullin, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "input 0 sample 0: invalid argument: the tensor is NULL");
    EXPECT_ERR(dynop_operator_run(blur, ins, 1, 1, NULL, 1), DYNOP_ERROR_INVALID_ARGUMENT, "outputs is NULL");
    EXPECT_ERR(dynop_operator_run(blur, ins, 1, 1, outs, 2), DYNOP_ERROR_INVALID_ARGUMENT, "has 1 output(s), not 2");
    EXPECT_ERR(dynop_operator_run(blur, ins, 2, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "takes 1 input(s), not 2");
    EXPECT_ERR(dynop_operator_run(blur, ins, 1, 0, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "batch_size is 0");
    int64_t two_d[2] = {6, 8};
    t = in;
    t.dl_tensor.ndim = 2;
    t.dl_tensor.shape = two_d;
    EXPECT_ERR(dynop_operator_run(blur, tins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "2 dimension(s)");
    EXPECT_ERR(dynop_operator_run(NULL, ins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "the operator handle is NULL");
    EXPECT_ERR(dynop_operator_run((dynop_operator_t *)(void *)host, ins, 1, 1, outs, 1), DYNOP_ERROR_INVALID_ARGUMENT, "is a host handle, not an operator handle");

    /* Deleters: NULL tensor, NULL deleter. */
    EXPECT_ERR(dynop_tensor_delete(NULL), DYNOP_ERROR_INVALID_ARGUMENT, "tensor is NULL");
    t = in;
    t.deleter = NULL;
    EXPECT_ERR(dynop_tensor_delete(&t), DYNOP_ERROR_INVALID_ARGUMENT, "the tensor's deleter is NULL");

    /* Errors are per thread; operators run from many threads at once. */
    pthread_t threads[4];
    worker_arg args[4];
    EXPECT_ERR(dynop_operator_create(host, "no.Such", NULL, &bad), DYNOP_ERROR_NOT_FOUND, "no.Such");
    for (int i = 0; i < 4; i++) {
        args[i].host = host;
        args[i].index = i;
        args[i].failed = 0;
        pthread_create(&threads[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(!args[i].failed);
    }
    CHECK(strstr(dynop_last_error(), "no.Such") != NULL); /* this thread's message is still its own */

    /* A host closed while threads use it, five times: close waits for the
     * calls in flight, the calls after it are DYNOP_ERROR_CLOSED, nothing
     * leaks (close would report it). */
    for (int round = 0; round < 5; round++) {
        dynop_host_t *h4 = NULL;
        dynop_host_options race_opts = opts;
        const char *race_paths[1] = {argv[4]};
        race_opts.paths = race_paths;
        EXPECT_OK(dynop_host_open(&race_opts, &h4));
        pthread_t rt[3];
        racer_arg ra[3];
        memset(ra, 0, sizeof ra);
        for (int i = 0; i < 3; i++) {
            ra[i].host = h4;
            /* A Go operator, and the C plugin's, whose instances must all be
             * destroyed before the plugin stops. */
            if (i == 0) {
                ra[i].op = "image.Invert", ra[i].args = NULL, ra[i].nin = 1, ra[i].want = -62;
            } else {
                ra[i].op = "imgproc.Saxpy", ra[i].args = "{\"a\": 1}", ra[i].nin = 2, ra[i].want = 126;
            }
            pthread_create(&rt[i], NULL, racer, &ra[i]);
        }
        struct timespec ms50 = {0, 50 * 1000 * 1000};
        nanosleep(&ms50, NULL);
        EXPECT_OK(dynop_host_close(h4));
        int total = 0;
        for (int i = 0; i < 3; i++) {
            pthread_join(rt[i], NULL);
            printf("racer %d: %d calls, %d closed\n", i, ra[i].calls, ra[i].closed);
            /* A racer that started late finds the host closed at once. */
            CHECK(ra[i].closed >= 1 && ra[i].other == 0);
            total += ra[i].calls;
        }
        CHECK(total > 3);
    }

    /* A pipeline file. */
    char opts_json[1024];
    char *summary = NULL;
    snprintf(opts_json, sizeof opts_json, "{\"out_dir\": \"%s\", \"atomic\": true}", argv[3]);
    EXPECT_OK(dynop_pipeline_run(host, argv[2], opts_json, &summary));
    CHECK(summary != NULL && strstr(summary, "\"images\":6") != NULL);
    dynop_string_free(summary);
    summary = (char *)1;
    EXPECT_ERR(dynop_pipeline_run(host, "/nonexistent/p.yaml", NULL, &summary), DYNOP_ERROR_NOT_FOUND, "/nonexistent/p.yaml");
    CHECK(summary == NULL);
    EXPECT_ERR(dynop_pipeline_run(host, argv[2], "{\"workers\": \"two\"}", NULL), DYNOP_ERROR_INVALID_ARGUMENT, "options_json");
    EXPECT_ERR(dynop_pipeline_run(NULL, argv[2], NULL, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "the host handle is NULL");
    EXPECT_ERR(dynop_pipeline_run(host, NULL, NULL, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "path is NULL");
    EXPECT_ERR(dynop_pipeline_run(host, argv[2], "{\"wrkers\": 2}", NULL), DYNOP_ERROR_INVALID_ARGUMENT, "unknown field \"wrkers\"");

    /* A pipeline iterated: its output tensors, batch by batch (6 images
     * in batches of 4), one kept past dynop_pipeline_close and
     * dynop_host_close. */
    dynop_pipeline_t *pipe = NULL, *pipe2 = NULL;
    char *info = NULL, *files = NULL;
    DLManagedTensorVersioned *pouts[4] = {NULL}, *kept = NULL;
    uint32_t n = 99;
    EXPECT_OK(dynop_pipeline_open(host, argv[2], "{\"workers\": 2}", &pipe, &info));
    CHECK(info != NULL && strstr(info, "\"batch_size\":4") != NULL && strstr(info, "\"outputs\":[\"thumbs\"]") != NULL &&
          strstr(info, "\"samples\":6") != NULL);
    dynop_string_free(info);
    EXPECT_ERR(dynop_pipeline_next(pipe, pouts, 3, &n, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "room for 3 tensors; a batch of this pipeline may have 4");
    EXPECT_ERR(dynop_pipeline_next(pipe, pouts, 4, NULL, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "count is NULL");
    EXPECT_ERR(dynop_pipeline_next(pipe, NULL, 4, &n, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "outputs is NULL");
    EXPECT_ERR(dynop_pipeline_next((dynop_pipeline_t *)host, pouts, 4, &n, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "is a host handle, not a pipeline handle");
    uint32_t samples = 0, batches = 0;
    for (;;) {
        dynop_result r = dynop_pipeline_next(pipe, pouts, 4, &n, &files);
        CHECK(r == DYNOP_OK);
        if (r != DYNOP_OK || n == 0) break;
        batches++;
        CHECK(files != NULL && strstr(files, "[[\"") == files);
        dynop_string_free(files);
        files = NULL;
        for (uint32_t s = 0; s < n; s++) {
            DLManagedTensorVersioned *t = pouts[s];
            CHECK(t != NULL && t->dl_tensor.ndim == 3 && t->dl_tensor.dtype.code == kDLUInt && t->dl_tensor.dtype.bits == 8 &&
                  t->dl_tensor.shape[2] == 1 && t->dl_tensor.shape[0] > 0 && t->dl_tensor.data != NULL);
            if (kept == NULL) {
                kept = t;
            } else if (t != NULL) {
                EXPECT_OK(dynop_tensor_delete(t));
            }
            pouts[s] = NULL;
        }
        samples += n;
    }
    CHECK(samples == 6 && batches == 2);
    EXPECT_OK(dynop_pipeline_next(pipe, pouts, 4, &n, &files));
    CHECK(n == 0 && files == NULL);
    EXPECT_OK(dynop_pipeline_close(pipe));
    EXPECT_ERR(dynop_pipeline_next(pipe, pouts, 4, &n, NULL), DYNOP_ERROR_CLOSED, "the pipeline handle");
    EXPECT_ERR(dynop_pipeline_close(pipe), DYNOP_ERROR_CLOSED, "the pipeline handle");
    EXPECT_ERR(dynop_pipeline_open(host, argv[2], "{\"out_dir\": \"x\"}", &pipe2, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "unknown field \"out_dir\"");
    EXPECT_ERR(dynop_pipeline_open(host, "/nonexistent/p.yaml", NULL, &pipe2, NULL), DYNOP_ERROR_NOT_FOUND, "/nonexistent/p.yaml");
    EXPECT_ERR(dynop_pipeline_open(NULL, argv[2], NULL, &pipe2, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "the host handle is NULL");
    EXPECT_ERR(dynop_pipeline_open(host, argv[2], NULL, NULL, NULL), DYNOP_ERROR_INVALID_ARGUMENT, "pipeline is NULL");
    /* One left open for dynop_host_close to close. */
    EXPECT_OK(dynop_pipeline_open(host, argv[2], NULL, &pipe2, NULL));
    EXPECT_OK(dynop_pipeline_next(pipe2, pouts, 4, &n, NULL));
    CHECK(n == 4);
    for (uint32_t s = 0; s < n; s++) {
        if (pouts[s] != NULL) pouts[s]->deleter(pouts[s]);
    }

    /* An operator destroyed, then used. */
    EXPECT_OK(dynop_operator_destroy(saxpy));
    EXPECT_ERR(dynop_operator_run(saxpy, sins, 2, 2, souts, 1), DYNOP_ERROR_CLOSED, "operator handle");
    EXPECT_ERR(dynop_operator_destroy(saxpy), DYNOP_ERROR_CLOSED, "operator handle");

    /* Close with blur and a reference still open: close destroys and
     * releases them. Outputs outlive the host. */
    EXPECT_OK(dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, min, &table, &ref));
    EXPECT_OK(dynop_host_close(host));
    EXPECT_ERR(dynop_host_close(host), DYNOP_ERROR_CLOSED, "the host handle");
    EXPECT_ERR(dynop_host_plugins(host, list, count, &count2), DYNOP_ERROR_CLOSED, "used after it was closed");
    EXPECT_ERR(dynop_operator_create(host, "imgproc.Saxpy", NULL, &bad), DYNOP_ERROR_CLOSED, "host handle");
    EXPECT_ERR(dynop_operator_run(blur, ins, 1, 1, outs, 1), DYNOP_ERROR_CLOSED, "operator handle");
    EXPECT_ERR(dynop_host_release(ref), DYNOP_ERROR_CLOSED, "interface reference handle");
    EXPECT_ERR(dynop_pipeline_next(pipe2, pouts, 4, &n, NULL), DYNOP_ERROR_CLOSED, "pipeline handle");
    if (kept != NULL) {
        /* A view of the pipeline's memory, valid after both closed. */
        const uint8_t *px = kept->dl_tensor.data;
        int64_t npx = kept->dl_tensor.shape[0] * kept->dl_tensor.shape[1];
        unsigned sum = 0;
        for (int64_t i = 0; i < npx; i++) sum += px[i];
        CHECK(sum > 0);
        EXPECT_OK(dynop_tensor_delete(kept));
    }
    if (out != NULL) {
        CHECK(((const uint8_t *)out->dl_tensor.data)[47] == 100);
        EXPECT_OK(dynop_tensor_delete(out));
    }
    for (int i = 0; i < 2; i++) {
        if (souts[i] != NULL) souts[i]->deleter(souts[i]);
    }
    CHECK(input_deleter_calls == 0);
    free(list);

    if (failures > 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
