/*
 * dynop_wasm.c — turns a C dynop plugin into a WebAssembly plugin.
 *
 * Link it with the plugin's unchanged source (which defines
 * dynop_plugin_get_function with "get_info", "register" and optionally
 * "deregister") and build for wasm32-wasi as a reactor:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -Iabi/include \
 *         -o plugin.wasm plugin.c abi/wasm/dynop_wasm.c
 *
 * It implements the exports of dynop_wasm.h on top of the plugin, and
 * gives the plugin's register and deregister a dynop_host table whose
 * functions call the host's imports (module "dynop"). See dynop_wasm.h
 * for the contract and abi/wasm/README.md for how to build.
 *
 * Capabilities: build this file with
 *   -DDYNOP_WASM_CAPABILITIES='"clock,random"'
 * (a comma-separated list) to ask the host for them; the default is none.
 *
 * Plain C99 with wasi-libc; compiles without warnings under -Wall -Wextra
 * -pedantic.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>
#include <dynop/dynop_wasm.h>

#if !defined(__wasm32__)
#error "dynop_wasm.c is for wasm32 targets: build with clang --target=wasm32-wasi"
#endif

/* The capabilities the module asks for: a comma-separated list. */
#ifndef DYNOP_WASM_CAPABILITIES
#define DYNOP_WASM_CAPABILITIES ""
#endif

#define WASM_EXPORT(name) __attribute__((export_name(name)))
#define WASM_IMPORT(name) __attribute__((import_module("dynop"), import_name(name)))

/* The most elements an array of the info may have, as the native host
 * reads it: more is a broken count. */
#define MAX_COUNT 4096u

/* END_OF(T, m) is the size a struct T needs to contain member m. */
#define END_OF(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))

/* ------------------------------------------------------------------------
 * Imports: the host's functions (dynop_wasm.h, "Imports")
 * ------------------------------------------------------------------------ */

WASM_IMPORT("log") void dynop_wasm_import_log(int32_t level, const char *msg, uint32_t len);
WASM_IMPORT("set_error") void dynop_wasm_import_set_error(const char *msg, uint32_t len);
WASM_IMPORT("last_error") uint32_t dynop_wasm_import_last_error(char *buf, uint32_t cap);
WASM_IMPORT("register_operator")
dynop_result dynop_wasm_import_register_operator(uint32_t op, const char *name, uint32_t name_len, const char *variant,
                                                 uint32_t variant_len);
WASM_IMPORT("add_interface") dynop_result dynop_wasm_import_add_interface(const void *table);
WASM_IMPORT("remove_interface") dynop_result dynop_wasm_import_remove_interface(const dynop_uid *uid);
WASM_IMPORT("acquire")
dynop_result dynop_wasm_import_acquire(const char *plugin_id, uint32_t id_len, const dynop_uid *uid,
                                       const dynop_version *min, dynop_ref *ref);
WASM_IMPORT("release") dynop_result dynop_wasm_import_release(dynop_ref ref);

static void log_str(dynop_log_level level, const char *msg) {
    if (msg == NULL) msg = "";
    dynop_wasm_import_log(level, msg, (uint32_t)strlen(msg));
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void logf_(dynop_log_level level, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_str(level, msg);
}

static void set_error_str(const char *msg) {
    if (msg == NULL) msg = "";
    dynop_wasm_import_set_error(msg, (uint32_t)strlen(msg));
}

/* ------------------------------------------------------------------------
 * The host table
 * ------------------------------------------------------------------------ */

/* Why the last host call failed when it failed here, in the shim, without
 * reaching the host (a malformed operator, a pass, select_variant): while
 * local_error_set, last_error returns local_error ("" after a local call
 * that succeeded) instead of asking the host. A call that reaches the host
 * clears it: the host's own last error is then the answer. */
static char local_error[256];
static int local_error_set;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static dynop_result local_fail(dynop_result rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(local_error, sizeof local_error, fmt, ap);
    va_end(ap);
    local_error_set = 1;
    return rc;
}

static void local_ok(void) {
    local_error[0] = '\0';
    local_error_set = 1;
}

static void remote(void) { local_error_set = 0; }

static dynop_result host_add_interface(const dynop_host *host, const void *iface) {
    (void)host;
    remote();
    return dynop_wasm_import_add_interface(iface);
}

static dynop_result host_remove_interface(const dynop_host *host, const dynop_uid *uid) {
    (void)host;
    remote();
    return dynop_wasm_import_remove_interface(uid);
}

/* acquire holds interface uid of plugin plugin_id, which keeps that plugin
 * started until release, but always sets *iface to NULL: a sandboxed module
 * can only reach its own linear memory and function table, so another
 * plugin's interface struct (host memory, or another module's) cannot be
 * handed to it, let alone its functions called. A wasm plugin acquires an
 * interface only to declare and hold the dependency. */
static dynop_result host_acquire(const dynop_host *host, const char *plugin_id, const dynop_uid *uid,
                                 dynop_version min_version, const void **iface, dynop_ref *ref) {
    dynop_version min = min_version; /* in linear memory, for the host to read */
    (void)host;
    if (iface != NULL) *iface = NULL;
    if (plugin_id == NULL || uid == NULL || iface == NULL || ref == NULL)
        return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "acquire: plugin_id, uid, iface and ref must not be NULL");
    remote();
    return dynop_wasm_import_acquire(plugin_id, (uint32_t)strlen(plugin_id), uid, &min, ref);
}

static dynop_result host_release(const dynop_host *host, dynop_ref ref) {
    (void)host;
    remote();
    return dynop_wasm_import_release(ref);
}

static void host_log(const dynop_host *host, dynop_log_level level, const char *message) {
    (void)host;
    log_str(level, message);
}

static void host_set_error(const dynop_host *host, const char *message) {
    (void)host;
    set_error_str(message);
}

/* The host's last error, NUL-terminated: small_error, or a larger buffer
 * from malloc when the message does not fit. */
static char small_error[256];
static char *error_buf = small_error;
static uint32_t error_cap = sizeof small_error;

static const char *host_last_error(const dynop_host *host) {
    uint32_t n;
    (void)host;
    if (local_error_set) return local_error;
    n = dynop_wasm_import_last_error(error_buf, error_cap - 1);
    if (n > error_cap - 1 && n < UINT32_MAX) {
        char *bigger = (char *)malloc((size_t)n + 1);
        if (bigger != NULL) {
            if (error_buf != small_error) free(error_buf);
            error_buf = bigger;
            error_cap = n + 1;
            n = dynop_wasm_import_last_error(error_buf, error_cap - 1);
        }
    }
    if (n > error_cap - 1) n = error_cap - 1; /* truncated: out of memory */
    error_buf[n] = '\0';
    return error_buf;
}

static int uid_equal(const dynop_uid *a, const dynop_uid *b) { return memcmp(a->bytes, b->bytes, 16) == 0; }

/* check_header says what is wrong with the header of the struct at p (of
 * type want, major version major, at least min_size bytes), or returns
 * NULL if nothing is. */
static const char *check_header(const void *p, const dynop_uid *want, uint32_t major, size_t min_size) {
    const dynop_header *h = (const dynop_header *)p;
    if (p == NULL) return "is NULL";
    if (!uid_equal(&h->type, want)) return "has the wrong type UID (a struct of another type, or no dynop_header)";
    if (h->version.major > major) return "has a layout version from the future (a newer major version)";
    if (h->version.major < major) return "has a layout version older than any this shim reads";
    if ((size_t)h->size < min_size) return "is smaller than its version needs";
    return NULL;
}

static const dynop_uid operator_type = DYNOP_OPERATOR_TYPE;
static const dynop_uid variant_type = DYNOP_VARIANT_TYPE;

/* variants_of returns op's variants and their count and stride, or NULL
 * if op has none (run is the implementation). */
static const char *variants_of(const dynop_operator *op, uint32_t *count, size_t *stride) {
    *count = 0;
    *stride = 0;
    if (!DYNOP_HAS_MEMBER(dynop_operator, op, variants) || op->variant_count == 0) return NULL;
    *count = op->variant_count;
    *stride = op->variants != NULL ? (size_t)op->variants[0].header.size : 0;
    return (const char *)op->variants;
}

/* check_variants checks a list of count variants at p, stepping by the
 * size in the first one's header; on failure it records why (prefixed
 * with what) as the local error and returns an error code. */
static dynop_result check_variants(const char *what, const char *p, uint32_t count) {
    size_t stride = 0;
    uint32_t i;
    if (p == NULL || count == 0 || count > MAX_COUNT)
        return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "%s: the list is NULL, empty or its count %u is broken", what,
                          (unsigned)count);
    for (i = 0; i < count; i++) {
        const dynop_variant *v = (const dynop_variant *)(const void *)(p + (size_t)i * stride);
        const char *problem = check_header(v, &variant_type, DYNOP_VARIANT_VERSION_MAJOR, END_OF(dynop_variant, fn));
        if (problem != NULL) return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "%s[%u] %s", what, (unsigned)i, problem);
        if (i == 0)
            stride = v->header.size;
        else if (v->header.size != stride)
            return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "%s[%u] says it is %u bytes, but element 0 says %u", what,
                              (unsigned)i, (unsigned)v->header.size, (unsigned)stride);
        if (v->name == NULL || v->fn == NULL)
            return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "%s[%u]: name or fn is NULL", what, (unsigned)i);
    }
    return DYNOP_OK;
}

/* The reference variant: the last. */
static const dynop_variant *last_variant(const char *p, uint32_t count, size_t stride) {
    return (const dynop_variant *)(const void *)(p + (size_t)(count - 1) * stride);
}

/* register_operator registers op under the handle (uint32_t)op. A wasm
 * module runs on the CPU only, and runs its reference implementation: run,
 * or with variants the last (the portable one; CPU features mean nothing
 * in wasm), whose name the host gets as variant. */
static dynop_result host_register_operator(const dynop_host *host, const dynop_operator *op) {
    const char *problem, *variants, *vname = "";
    uint32_t count;
    size_t stride;
    (void)host;
    problem = check_header(op, &operator_type, DYNOP_OPERATOR_VERSION_MAJOR, END_OF(dynop_operator, destroy));
    if (problem != NULL)
        return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "register_operator: the operator %s", problem);
    if (op->name == NULL || op->device == NULL)
        return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "register_operator: name or device is NULL");
    if (strcmp(op->device, "cpu") != 0) {
        local_fail(DYNOP_ERROR_UNSUPPORTED,
                   "register_operator %s: device \"%s\": WebAssembly plugins run on the cpu only", op->name,
                   op->device);
        set_error_str(local_error);
        return DYNOP_ERROR_UNSUPPORTED;
    }
    if (op->create == NULL || op->setup == NULL)
        return local_fail(DYNOP_ERROR_INVALID_ARGUMENT, "register_operator %s: create and setup must not be NULL",
                          op->name);
    variants = variants_of(op, &count, &stride);
    if (variants == NULL) {
        if (op->run == NULL)
            return local_fail(DYNOP_ERROR_INVALID_ARGUMENT,
                              "register_operator %s: run is NULL and there are no variants", op->name);
    } else {
        dynop_result rc;
        char what[160];
        if (op->run != NULL)
            return local_fail(DYNOP_ERROR_INVALID_ARGUMENT,
                              "register_operator %s: both run and variants are set: with variants, run must be NULL",
                              op->name);
        snprintf(what, sizeof what, "register_operator %s: variants", op->name);
        rc = check_variants(what, variants, count);
        if (rc != DYNOP_OK) return rc;
        vname = last_variant(variants, count, stride)->name;
    }
    remote();
    return dynop_wasm_import_register_operator((uint32_t)(uintptr_t)op, op->name, (uint32_t)strlen(op->name), vname,
                                               (uint32_t)strlen(vname));
}

static dynop_result host_register_pass(const dynop_host *host, const dynop_pass *pass) {
    (void)host;
    (void)pass;
    local_fail(DYNOP_ERROR_UNSUPPORTED, "wasm plugins cannot provide graph passes yet");
    set_error_str(local_error);
    return DYNOP_ERROR_UNSUPPORTED;
}

/* cpu_features: a wasm module has no CPU features to use. */
static dynop_cpu_features host_cpu_features(const dynop_host *host) {
    (void)host;
    return 0;
}

/* select_variant takes the reference (the last variant) if it needs no
 * CPU features: the only kind of variant a wasm module can run. */
static int32_t host_select_variant(const dynop_host *host, const char *name, const dynop_variant *variants,
                                   uint32_t count) {
    const dynop_variant *ref;
    char what[160];
    (void)host;
    if (name == NULL) name = "(NULL)";
    snprintf(what, sizeof what, "select_variant %s: variants", name);
    if (check_variants(what, (const char *)variants, count) != DYNOP_OK) return -1;
    ref = last_variant((const char *)variants, count, (size_t)variants[0].header.size);
    if (ref->features != 0) {
        local_fail(DYNOP_ERROR_UNSUPPORTED,
                   "select_variant %s: no variant can run: the last, \"%s\", needs CPU features %#llx, and "
                   "WebAssembly plugins have none",
                   name, ref->name, (unsigned long long)ref->features);
        return -1;
    }
    local_ok();
    logf_(DYNOP_LOG_DEBUG, "select_variant %s: variant \"%s\" (the reference; wasm has no CPU features)", name,
          ref->name);
    return (int32_t)(count - 1);
}

static const dynop_host host_table = {
    DYNOP_HOST_HEADER,
    DYNOP_API_VERSION,
    host_add_interface,
    host_remove_interface,
    host_acquire,
    host_release,
    host_log,
    host_set_error,
    host_last_error,
    host_register_operator,
    host_register_pass,
    host_cpu_features,
    host_select_variant,
};

/* ------------------------------------------------------------------------
 * Exports: memory and lifecycle
 * ------------------------------------------------------------------------ */

WASM_EXPORT("dynop_wasm_abi_version") uint32_t dynop_wasm_abi_version(void) { return DYNOP_WASM_ABI_VERSION; }

/* dynop_wasm_alloc returns size bytes aligned to align (a power of two; 0
 * means 16), which dynop_wasm_free frees, or 0. */
WASM_EXPORT("dynop_wasm_alloc") void *dynop_wasm_alloc(uint32_t size, uint32_t align) {
    void *p = NULL;
    if (align == 0) align = 16;
    if ((align & (align - 1)) != 0) return NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    if (posix_memalign(&p, align, size != 0 ? size : 1) != 0) return NULL;
    return p;
}

WASM_EXPORT("dynop_wasm_free") void dynop_wasm_free(void *p) { free(p); }

/* entry returns the plugin's entry point called name, or NULL. */
static dynop_function entry(const char *name) { return dynop_plugin_get_function(name); }

WASM_EXPORT("dynop_wasm_register") dynop_result dynop_wasm_register(void) {
    dynop_register_function reg = (dynop_register_function)entry("register");
    remote();
    if (reg == NULL) {
        set_error_str("the plugin has no register entry point: dynop_plugin_get_function(\"register\") is NULL");
        return DYNOP_ERROR;
    }
    return reg(&host_table);
}

/* dynop_wasm_deregister calls the plugin's deregister; a plugin without
 * one has nothing to stop. */
WASM_EXPORT("dynop_wasm_deregister") dynop_result dynop_wasm_deregister(void) {
    dynop_deregister_function dereg = (dynop_deregister_function)entry("deregister");
    remote();
    if (dereg == NULL) return DYNOP_OK;
    return dereg(&host_table);
}

/* ------------------------------------------------------------------------
 * Exports: operators. op is the handle register_operator gave the host:
 * the address of the plugin's dynop_operator, which the shim checked.
 * ------------------------------------------------------------------------ */

static const dynop_operator *op_of(uint32_t op) { return (const dynop_operator *)(uintptr_t)op; }

WASM_EXPORT("dynop_wasm_op_create")
dynop_result dynop_wasm_op_create(uint32_t op, const dynop_arg *args, uint32_t arg_count, uint32_t *instance) {
    const dynop_operator *o = op_of(op);
    void *inst = NULL;
    dynop_result rc;
    if (o == NULL || instance == NULL) {
        set_error_str("op_create: op or instance is 0");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    rc = o->create(o->user_data, args, arg_count, &inst);
    *instance = rc == DYNOP_OK ? (uint32_t)(uintptr_t)inst : 0;
    return rc;
}

WASM_EXPORT("dynop_wasm_op_setup")
dynop_result dynop_wasm_op_setup(uint32_t op, uint32_t instance, uint32_t samples, const dynop_tensor *inputs,
                                 uint32_t input_count, dynop_tensor *outputs, uint32_t output_count,
                                 uint32_t *failed) {
    const dynop_operator *o = op_of(op);
    uint32_t s;
    if (o == NULL) {
        set_error_str("op_setup: op is 0");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    for (s = 0; s < samples; s++) {
        const dynop_tensor *in = input_count != 0 ? inputs + (size_t)s * input_count : inputs;
        dynop_tensor *out = output_count != 0 ? outputs + (size_t)s * output_count : outputs;
        dynop_result rc = o->setup((void *)(uintptr_t)instance, in, input_count, out, output_count);
        if (rc != DYNOP_OK) {
            if (failed != NULL) *failed = s;
            return rc;
        }
    }
    return DYNOP_OK;
}

WASM_EXPORT("dynop_wasm_op_run")
dynop_result dynop_wasm_op_run(uint32_t op, uint32_t instance, uint32_t samples, const dynop_tensor *inputs,
                               uint32_t input_count, dynop_tensor *outputs, uint32_t output_count, uint32_t *failed) {
    const dynop_operator *o = op_of(op);
    const char *variants;
    dynop_op_run_function run;
    uint32_t s, count;
    size_t stride;
    if (o == NULL) {
        set_error_str("op_run: op is 0");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    variants = variants_of(o, &count, &stride);
    /* The implementation register_operator named: run or the reference. */
    run = variants == NULL ? o->run : (dynop_op_run_function)last_variant(variants, count, stride)->fn;
    for (s = 0; s < samples; s++) {
        const dynop_tensor *in = input_count != 0 ? inputs + (size_t)s * input_count : inputs;
        dynop_tensor *out = output_count != 0 ? outputs + (size_t)s * output_count : outputs;
        dynop_result rc = run((void *)(uintptr_t)instance, out, output_count, in, input_count);
        if (rc != DYNOP_OK) {
            if (failed != NULL) *failed = s;
            return rc;
        }
    }
    return DYNOP_OK;
}

WASM_EXPORT("dynop_wasm_op_destroy") void dynop_wasm_op_destroy(uint32_t op, uint32_t instance) {
    const dynop_operator *o = op_of(op);
    if (o != NULL && o->destroy != NULL) o->destroy((void *)(uintptr_t)instance);
}

/* ------------------------------------------------------------------------
 * Exports: info. dynop_wasm_info writes the plugin's dynop_plugin_info as
 * the JSON of the plugin.Info that the native host's reader
 * (loader/native) makes of it, checking what that reader checks.
 * ------------------------------------------------------------------------ */

/* A JSON writer into a growing buffer, with the first error met. */
typedef struct writer {
    char *p;
    size_t n, cap;
    int failed;
    char err[384];
} writer;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void wfail(writer *w, const char *fmt, ...) {
    va_list ap;
    if (w->failed) return;
    w->failed = 1;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
}

static void put(writer *w, const char *s, size_t n) {
    if (w->failed) return;
    if (w->cap - w->n <= n) {
        size_t cap = w->cap ? w->cap : 4096;
        char *p;
        while (cap - w->n <= n) cap *= 2;
        p = (char *)realloc(w->p, cap);
        if (p == NULL) {
            wfail(w, "out of memory for the info's JSON");
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->n, s, n);
    w->n += n;
    w->p[w->n] = '\0';
}

static void puts_(writer *w, const char *s) { put(w, s, strlen(s)); }

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(writer *w, const char *fmt, ...) {
    char buf[64];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) {
        wfail(w, "internal error: formatting a number");
        return;
    }
    put(w, buf, (size_t)n);
}

/* utf8_len returns the length of the valid UTF-8 sequence at s (of at
 * most n bytes), or 0 if it is not one, by the rules of Go's
 * utf8.DecodeRune: no overlong forms, surrogates or code points above
 * U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len, i;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4;
    else
        return 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* put_utf8 writes the n bytes at s, each byte that starts no valid UTF-8
 * sequence as \ufffd, as Go's encoding/json does (so the JSON is valid
 * UTF-8, and decodes to what the native reader's strings encode to).
 * Where escape is set it also escapes s as a JSON string's contents. */
static void put_utf8(writer *w, const char *s, size_t n, int escape) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0; /* bytes from i - run to i need no change */
    while (i < n) {
        unsigned char c = u[i];
        size_t len;
        const char *rep = NULL;
        char esc[8];
        if (escape && (c == '"' || c == '\\' || c < 0x20)) {
            switch (c) {
            case '"': rep = "\\\""; break;
            case '\\': rep = "\\\\"; break;
            case '\n': rep = "\\n"; break;
            case '\r': rep = "\\r"; break;
            case '\t': rep = "\\t"; break;
            default:
                snprintf(esc, sizeof esc, "\\u%04x", (unsigned)c);
                rep = esc;
            }
            len = 1;
        } else if ((len = utf8_len(u + i, n - i)) == 0) {
            rep = "\\ufffd";
            len = 1;
        }
        if (rep == NULL) {
            i += len;
            run += len;
            continue;
        }
        put(w, s + i - run, run);
        puts_(w, rep);
        run = 0;
        i += len;
    }
    put(w, s + i - run, run);
}

/* put_str writes s as a JSON string; NULL is "". */
static void put_str(writer *w, const char *s) {
    if (s == NULL) s = "";
    puts_(w, "\"");
    put_utf8(w, s, strlen(s), 1);
    puts_(w, "\"");
}

/* put_key writes ,"key": (no comma before the first member). */
static void put_key(writer *w, int *first, const char *key) {
    if (!*first) puts_(w, ",");
    *first = 0;
    puts_(w, "\"");
    puts_(w, key);
    puts_(w, "\":");
}

static void put_version(writer *w, dynop_version v) {
    putf(w, "\"%lu.%lu.%lu\"", (unsigned long)v.major, (unsigned long)v.minor, (unsigned long)v.patch);
}

static int version_zero(dynop_version v) { return v.major == 0 && v.minor == 0 && v.patch == 0; }

/* put_uid writes a UID in iface.UID's text form. */
static void put_uid(writer *w, const dynop_uid *u) {
    static const char digits[] = "0123456789ABCDEF";
    char buf[40];
    size_t n = 0;
    int i;
    buf[n++] = '"';
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) buf[n++] = '-';
        buf[n++] = digits[u->bytes[i] >> 4];
        buf[n++] = digits[u->bytes[i] & 0xF];
    }
    buf[n++] = '"';
    put(w, buf, n);
}

/* put_double writes a finite double so that it reads back as the same
 * value. */
static void put_double(writer *w, const char *what, double v) {
    if (v != v || v > DBL_MAX || v < -DBL_MAX) {
        wfail(w, "%s is not a finite number", what);
        return;
    }
    putf(w, "%.17g", v);
}

/* put_list writes a comma-separated C list as a JSON array of its trimmed,
 * non-empty items, as the native reader's splitList; an empty list is
 * null (a nil slice). */
static void put_list(writer *w, const char *s) {
    int items = 0;
    if (s == NULL) s = "";
    while (*s != '\0') {
        const char *end = strchr(s, ',');
        const char *a = s, *b;
        if (end == NULL) end = s + strlen(s);
        b = end;
        /* Go's strings.TrimSpace: ASCII white space (and Unicode spaces,
         * which C plugins do not put in lists). */
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == '\v' || *a == '\f')) a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r' || b[-1] == '\v' ||
                         b[-1] == '\f'))
            b--;
        if (b > a) {
            puts_(w, items++ ? ",\"" : "[\"");
            put_utf8(w, a, (size_t)(b - a), 1);
            puts_(w, "\"");
        }
        s = *end == ',' ? end + 1 : end;
    }
    puts_(w, items ? "]" : "null");
}

static int list_empty(const char *s) {
    if (s == NULL) return 1;
    for (; *s != '\0'; s++)
        if (*s != ',' && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\v' && *s != '\f') return 0;
    return 1;
}

/* ---- JSON values from the plugin (defaults, allowed values) ------------- */

static const char *json_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static int hexdigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static int digit(char c) { return c >= '0' && c <= '9'; }

/* json_value returns the end of the JSON value at p, or NULL if there is
 * none (RFC 8259; bytes above 0x7F only in strings). */
static const char *json_value(const char *p, int depth) {
    if (depth > 200) return NULL;
    switch (*p) {
    case '"':
        for (p++;; p++) {
            unsigned char c = (unsigned char)*p;
            if (c == '"') return p + 1;
            if (c < 0x20) return NULL; /* also the end of the text */
            if (c == '\\') {
                p++;
                if (*p == 'u') {
                    if (!hexdigit(p[1]) || !hexdigit(p[2]) || !hexdigit(p[3]) || !hexdigit(p[4])) return NULL;
                    p += 4;
                } else if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') {
                    return NULL;
                }
            }
        }
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        int object = *p == '{';
        p = json_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (object) {
                if (*p != '"' || (p = json_value(p, depth + 1)) == NULL) return NULL;
                p = json_ws(p);
                if (*p != ':') return NULL;
                p = json_ws(p + 1);
            }
            if ((p = json_value(p, depth + 1)) == NULL) return NULL;
            p = json_ws(p);
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = json_ws(p + 1);
        }
    }
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default:
        if (*p == '-') p++;
        if (*p == '0')
            p++;
        else if (digit(*p))
            while (digit(*p)) p++;
        else
            return NULL;
        if (*p == '.') {
            if (!digit(*++p)) return NULL;
            while (digit(*p)) p++;
        }
        if (*p == 'e' || *p == 'E') {
            p++;
            if (*p == '+' || *p == '-') p++;
            if (!digit(*p)) return NULL;
            while (digit(*p)) p++;
        }
        return p;
    }
}

/* put_json writes text, which must be exactly one JSON value (white space
 * around it allowed), as it is. */
static void put_json(writer *w, const char *what, const char *text) {
    const char *start = json_ws(text), *end = json_value(start, 0);
    if (end == NULL || *json_ws(end) != '\0') {
        wfail(w, "%s is not one JSON value: %.80s", what, text);
        return;
    }
    put_utf8(w, start, (size_t)(end - start), 0);
}

/* ---- the info ------------------------------------------------------------ */

static const dynop_uid info_type = DYNOP_PLUGIN_INFO_TYPE;
static const dynop_uid desc_type = DYNOP_INTERFACE_DESC_TYPE;
static const dynop_uid need_type = DYNOP_NEED_TYPE;
static const dynop_uid requirements_type = DYNOP_REQUIREMENTS_TYPE;
static const dynop_uid schema_type = DYNOP_OP_SCHEMA_TYPE;
static const dynop_uid input_type = DYNOP_OP_INPUT_TYPE;
static const dynop_uid output_type = DYNOP_OP_OUTPUT_TYPE;
static const dynop_uid arg_type = DYNOP_OP_ARG_TYPE;
static const dynop_uid pass_desc_type = DYNOP_PASS_DESC_TYPE;

/* check checks a struct's header like the native reader; on failure it
 * records why, naming the struct as what. */
static int check(writer *w, const char *what, const void *p, const dynop_uid *type, uint32_t major, size_t min_size) {
    const char *problem;
    if (w->failed) return 0;
    problem = check_header(p, type, major, min_size);
    if (problem != NULL) {
        wfail(w, "%s %s", what, problem);
        return 0;
    }
    return 1;
}

/* check_array checks the count and pointer of an info array of pointers. */
static int check_array(writer *w, const char *what, const void *p, uint32_t n) {
    if (n == 0 || w->failed) return 0;
    if (p == NULL) {
        wfail(w, "plugin info: %s is NULL but its count is %u", what, (unsigned)n);
        return 0;
    }
    if (n > MAX_COUNT) {
        wfail(w, "plugin info: %s has count %u, more than %u: the count is broken", what, (unsigned)n, MAX_COUNT);
        return 0;
    }
    return 1;
}

/* struct_array checks the n structs of the array at p (each starting with
 * a header of type and major, stepping by the size in the first one's
 * header, the same in all) and returns that stride, or 0 if there are
 * none or they are malformed. */
static size_t struct_array(writer *w, const char *what, const void *p, uint32_t n, const dynop_uid *type,
                           uint32_t major, size_t min_size) {
    size_t stride = 0;
    uint32_t i;
    char name[160];
    if (n == 0 || w->failed) return 0;
    if (p == NULL || n > MAX_COUNT) {
        wfail(w, "%s: array is NULL or its count %u is broken", what, (unsigned)n);
        return 0;
    }
    for (i = 0; i < n; i++) {
        const dynop_header *h = (const dynop_header *)(const void *)((const char *)p + (size_t)i * stride);
        snprintf(name, sizeof name, "%s[%u]", what, (unsigned)i);
        if (!check(w, name, h, type, major, min_size)) return 0;
        if (i == 0) {
            stride = h->size;
        } else if (h->size != stride) {
            wfail(w, "%s says it is %u bytes, but element 0 says %u: elements of one array have one size", name,
                  (unsigned)h->size, (unsigned)stride);
            return 0;
        }
    }
    return stride;
}

#define ELEM(T, p, i, stride) ((const T *)(const void *)((const char *)(p) + (size_t)(i) * (stride)))

static void put_desc(writer *w, const char *what, const dynop_interface_desc *d) {
    if (!check(w, what, d, &desc_type, DYNOP_INTERFACE_DESC_VERSION_MAJOR, END_OF(dynop_interface_desc, name))) return;
    if (d->name == NULL) {
        wfail(w, "%s: name is NULL", what);
        return;
    }
    puts_(w, "{\"uid\":");
    put_uid(w, &d->uid);
    puts_(w, ",\"name\":");
    put_str(w, d->name);
    puts_(w, ",\"version\":");
    put_version(w, d->version);
    puts_(w, "}");
}

static const char *const arg_type_names[] = {"",         "int",     "float",    "bool",       "string", "dtype",
                                             "[]int",    "[]float", "[]bool",   "[]string",   "[]dtype"};

static void put_arg(writer *w, const char *what, const dynop_op_arg *a) {
    int first = 1;
    char name[224];
    if (a->type < DYNOP_ARG_INT || a->type > DYNOP_ARG_DTYPE_LIST) {
        wfail(w, "%s (%s): type %ld is not a DYNOP_ARG_* type", what, a->name ? a->name : "(NULL)", (long)a->type);
        return;
    }
    puts_(w, "{");
    put_key(w, &first, "name");
    put_str(w, a->name);
    if (a->doc != NULL && a->doc[0] != '\0') {
        put_key(w, &first, "doc");
        put_str(w, a->doc);
    }
    put_key(w, &first, "type");
    put_str(w, arg_type_names[a->type]);
    if (a->flags & DYNOP_ARG_REQUIRED) {
        put_key(w, &first, "required");
        puts_(w, "true");
    }
    snprintf(name, sizeof name, "%s (%s)", what, a->name ? a->name : "(NULL)");
    if (a->default_value != NULL) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: default_value", name);
        put_key(w, &first, "default");
        put_json(w, msg, a->default_value);
    }
    if (a->flags & DYNOP_ARG_HAS_MIN) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: min", name);
        put_key(w, &first, "min");
        put_double(w, msg, a->min);
    }
    if (a->flags & DYNOP_ARG_HAS_MAX) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: max", name);
        put_key(w, &first, "max");
        put_double(w, msg, a->max);
    }
    if (a->allowed != NULL) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: allowed", name);
        put_key(w, &first, "allowed");
        put_json(w, msg, a->allowed);
    }
    if (!list_empty(a->deprecated)) {
        put_key(w, &first, "deprecated");
        put_list(w, a->deprecated);
    }
    puts_(w, "}");
}

static void put_schema(writer *w, const dynop_op_schema *s) {
    char what[224];
    size_t stride;
    uint32_t j;
    int first = 1;
    snprintf(what, sizeof what, "operator \"%.160s\"", s->name);
    puts_(w, "{");
    put_key(w, &first, "name");
    put_str(w, s->name);
    put_key(w, &first, "doc");
    put_str(w, s->doc);
    if ((stride = struct_array(w, "inputs", s->inputs, s->input_count, &input_type, DYNOP_OP_INPUT_VERSION_MAJOR,
                               END_OF(dynop_op_input, ndim))) != 0) {
        put_key(w, &first, "inputs");
        for (j = 0; j < s->input_count; j++) {
            const dynop_op_input *in = ELEM(dynop_op_input, s->inputs, j, stride);
            int f = 1;
            puts_(w, j ? ",{" : "[{");
            put_key(w, &f, "name");
            put_str(w, in->name);
            if (in->doc != NULL && in->doc[0] != '\0') {
                put_key(w, &f, "doc");
                put_str(w, in->doc);
            }
            if (!list_empty(in->dtypes)) {
                put_key(w, &f, "dtypes");
                put_list(w, in->dtypes);
            }
            if (!list_empty(in->layouts)) {
                put_key(w, &f, "layouts");
                put_list(w, in->layouts);
            }
            if (in->ndim != 0) {
                put_key(w, &f, "ndim");
                putf(w, "%ld", (long)in->ndim);
            }
            puts_(w, "}");
        }
        puts_(w, "]");
    }
    if (s->optional_inputs != 0) {
        put_key(w, &first, "optional_inputs");
        putf(w, "%lu", (unsigned long)s->optional_inputs);
    }
    if ((stride = struct_array(w, "outputs", s->outputs, s->output_count, &output_type,
                               DYNOP_OP_OUTPUT_VERSION_MAJOR, END_OF(dynop_op_output, layout))) != 0) {
        put_key(w, &first, "outputs");
        for (j = 0; j < s->output_count; j++) {
            const dynop_op_output *out = ELEM(dynop_op_output, s->outputs, j, stride);
            int f = 1;
            puts_(w, j ? ",{" : "[{");
            put_key(w, &f, "name");
            put_str(w, out->name);
            if (out->doc != NULL && out->doc[0] != '\0') {
                put_key(w, &f, "doc");
                put_str(w, out->doc);
            }
            if (out->layout != NULL && out->layout[0] != '\0') {
                put_key(w, &f, "layout");
                put_str(w, out->layout);
            }
            puts_(w, "}");
        }
        puts_(w, "]");
    }
    if ((stride = struct_array(w, "args", s->args, s->arg_count, &arg_type, DYNOP_OP_ARG_VERSION_MAJOR,
                               END_OF(dynop_op_arg, deprecated))) != 0) {
        put_key(w, &first, "args");
        for (j = 0; j < s->arg_count; j++) {
            char name[256];
            snprintf(name, sizeof name, "%s arg %u", what, (unsigned)j);
            puts_(w, j ? "," : "[");
            put_arg(w, name, ELEM(dynop_op_arg, s->args, j, stride));
        }
        puts_(w, "]");
    }
    put_key(w, &first, "devices");
    put_list(w, s->devices);
    puts_(w, "}");
}

static const char *const pass_kinds[] = {"", "populate", "partition", "global"};

static void put_info(writer *w, const dynop_plugin_info *ci) {
    uint32_t i;
    char what[64];
    int first = 1, any;
    if (!check(w, "plugin info (get_info's result)", ci, &info_type, DYNOP_PLUGIN_INFO_VERSION_MAJOR,
               END_OF(dynop_plugin_info, requirements)))
        return;
    if (ci->id == NULL) {
        wfail(w, "plugin info: id is NULL");
        return;
    }
    if (version_zero(ci->api_version)) {
        wfail(w, "plugin \"%.100s\": api_version is 0.0.0; set it to DYNOP_API_VERSION", ci->id);
        return;
    }
    puts_(w, "{");
    put_key(w, &first, "id");
    put_str(w, ci->id);
    put_key(w, &first, "version");
    put_version(w, ci->plugin_version);
    put_key(w, &first, "api_version");
    put_version(w, ci->api_version);
    if (ci->description != NULL && ci->description[0] != '\0') {
        put_key(w, &first, "description");
        put_str(w, ci->description);
    }
    if (ci->author != NULL && ci->author[0] != '\0') {
        put_key(w, &first, "author");
        put_str(w, ci->author);
    }
    if (ci->build != NULL && ci->build[0] != '\0') {
        put_key(w, &first, "build");
        put_str(w, ci->build);
    }

    put_key(w, &first, "interfaces");
    any = check_array(w, "interfaces", ci->interfaces, ci->interface_count);
    puts_(w, any ? "[" : "null");
    for (i = 0; any && i < ci->interface_count; i++) {
        snprintf(what, sizeof what, "interfaces[%u]", (unsigned)i);
        if (i) puts_(w, ",");
        put_desc(w, what, ci->interfaces[i]);
    }
    if (any) puts_(w, "]");

    if (DYNOP_HAS_MEMBER(dynop_plugin_info, ci, operators) &&
        check_array(w, "operators", ci->operators, ci->operator_count)) {
        put_key(w, &first, "operators");
        for (i = 0; i < ci->operator_count && !w->failed; i++) {
            const dynop_op_schema *s = ci->operators[i];
            snprintf(what, sizeof what, "operators[%u]", (unsigned)i);
            if (!check(w, what, s, &schema_type, DYNOP_OP_SCHEMA_VERSION_MAJOR, END_OF(dynop_op_schema, args))) break;
            if (s->name == NULL) {
                wfail(w, "%s: name is NULL", what);
                break;
            }
            puts_(w, i ? "," : "[");
            put_schema(w, s);
        }
        puts_(w, "]");
    }

    if (DYNOP_HAS_MEMBER(dynop_plugin_info, ci, passes) && check_array(w, "passes", ci->passes, ci->pass_count)) {
        put_key(w, &first, "passes");
        for (i = 0; i < ci->pass_count && !w->failed; i++) {
            const dynop_pass_desc *d = ci->passes[i];
            int f = 1;
            snprintf(what, sizeof what, "passes[%u]", (unsigned)i);
            if (!check(w, what, d, &pass_desc_type, DYNOP_PASS_DESC_VERSION_MAJOR, END_OF(dynop_pass_desc, doc)))
                break;
            if (d->name == NULL) {
                wfail(w, "%s: name is NULL", what);
                break;
            }
            if (d->kind < DYNOP_PASS_POPULATE || d->kind > DYNOP_PASS_GLOBAL) {
                wfail(w,
                      "%s (pass \"%.100s\"): kind is %lu, not DYNOP_PASS_POPULATE (1), DYNOP_PASS_PARTITION (2) or "
                      "DYNOP_PASS_GLOBAL (3)",
                      what, d->name, (unsigned long)d->kind);
                break;
            }
            puts_(w, i ? ",{" : "[{");
            put_key(w, &f, "name");
            put_str(w, d->name);
            put_key(w, &f, "kind");
            put_str(w, pass_kinds[d->kind]);
            if (d->match != NULL && d->match[0] != '\0') {
                put_key(w, &f, "match");
                put_str(w, d->match);
            }
            if (d->priority != 0) {
                put_key(w, &f, "priority");
                putf(w, "%ld", (long)d->priority);
            }
            if (d->doc != NULL && d->doc[0] != '\0') {
                put_key(w, &f, "doc");
                put_str(w, d->doc);
            }
            puts_(w, "}");
        }
        puts_(w, "]");
    }

    if (check_array(w, "needs", ci->needs, ci->need_count)) {
        put_key(w, &first, "needs");
        for (i = 0; i < ci->need_count && !w->failed; i++) {
            const dynop_need *n = ci->needs[i];
            snprintf(what, sizeof what, "needs[%u]", (unsigned)i);
            if (!check(w, what, n, &need_type, DYNOP_NEED_VERSION_MAJOR, END_OF(dynop_need, iface))) break;
            if (n->plugin == NULL) {
                wfail(w, "%s: plugin is NULL", what);
                break;
            }
            puts_(w, i ? ",{\"plugin\":" : "[{\"plugin\":");
            put_str(w, n->plugin);
            puts_(w, ",\"interface\":");
            snprintf(what, sizeof what, "needs[%u].iface", (unsigned)i);
            put_desc(w, what, n->iface);
            puts_(w, "}");
        }
        puts_(w, "]");
    }

    put_key(w, &first, "requirements");
    puts_(w, "{");
    if (ci->requirements != NULL && check(w, "requirements", ci->requirements, &requirements_type,
                                          DYNOP_REQUIREMENTS_VERSION_MAJOR,
                                          END_OF(dynop_requirements, gpu_min_driver))) {
        const dynop_requirements *rq = ci->requirements;
        int f = 1;
        if (!list_empty(rq->os)) {
            put_key(w, &f, "os");
            put_list(w, rq->os);
        }
        if (!version_zero(rq->min_os_version)) {
            put_key(w, &f, "min_os_version");
            put_version(w, rq->min_os_version);
        }
        if (!list_empty(rq->arch)) {
            put_key(w, &f, "arch");
            put_list(w, rq->arch);
        }
        if (!list_empty(rq->cpu_features)) {
            put_key(w, &f, "cpu_features");
            put_list(w, rq->cpu_features);
        }
        if ((rq->gpu_vendor != NULL && rq->gpu_vendor[0] != '\0') || !version_zero(rq->gpu_min_arch) ||
            !version_zero(rq->gpu_min_driver)) {
            int g = 1;
            put_key(w, &f, "gpu");
            puts_(w, "{");
            if (rq->gpu_vendor != NULL && rq->gpu_vendor[0] != '\0') {
                put_key(w, &g, "vendor");
                put_str(w, rq->gpu_vendor);
            }
            if (!version_zero(rq->gpu_min_arch)) {
                put_key(w, &g, "min_arch");
                put_version(w, rq->gpu_min_arch);
            }
            if (!version_zero(rq->gpu_min_driver)) {
                put_key(w, &g, "min_driver");
                put_version(w, rq->gpu_min_driver);
            }
            puts_(w, "}");
        }
    }
    puts_(w, "}}");
}

/* The info's JSON, made by the first call. */
static char *info_json;
static uint32_t info_len;

/* dynop_wasm_info returns the JSON {"abi": ..., "info": ..., "capabilities":
 * [...]} at (uint32_t)r, (uint32_t)(r >> 32) bytes long; or 0 (no JSON,
 * which the host rejects) if the plugin has no info or it is malformed,
 * saying why through the log import. */
WASM_EXPORT("dynop_wasm_info") uint64_t dynop_wasm_info(void) {
    writer w;
    dynop_get_info_function get_info;
    const dynop_plugin_info *ci;
    if (info_json != NULL) return (uint64_t)info_len << 32 | (uint32_t)(uintptr_t)info_json;
    memset(&w, 0, sizeof w);
    get_info = (dynop_get_info_function)entry("get_info");
    if (get_info == NULL) {
        log_str(DYNOP_LOG_ERROR, "dynop_wasm_info: the plugin has no get_info entry point: "
                                 "dynop_plugin_get_function(\"get_info\") is NULL");
        return 0;
    }
    ci = get_info();
    putf(&w, "{\"abi\":\"%d.%d\",\"info\":", DYNOP_WASM_ABI_MAJOR, DYNOP_WASM_ABI_MINOR);
    put_info(&w, ci);
    puts_(&w, ",\"capabilities\":");
    if (list_empty(DYNOP_WASM_CAPABILITIES))
        puts_(&w, "[]"); /* put_list would write null */
    else
        put_list(&w, DYNOP_WASM_CAPABILITIES);
    puts_(&w, "}");
    if (w.failed || w.n > UINT32_MAX) {
        logf_(DYNOP_LOG_ERROR, "dynop_wasm_info: %s", w.failed ? w.err : "the info's JSON is too large");
        free(w.p);
        return 0;
    }
    info_json = w.p;
    info_len = (uint32_t)w.n;
    return (uint64_t)info_len << 32 | (uint32_t)(uintptr_t)info_json;
}
