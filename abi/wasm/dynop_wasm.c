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

/* ------------------------------------------------------------------------
 * Imports: the host's functions (dynop_wasm.h, "Imports")
 * ------------------------------------------------------------------------ */

WASM_IMPORT("log") void dynop_wasm_import_log(int32_t level, const char *msg, uint32_t len);
WASM_IMPORT("set_error") void dynop_wasm_import_set_error(const char *msg, uint32_t len);
WASM_IMPORT("last_error") uint32_t dynop_wasm_import_last_error(char *buf, uint32_t cap);
WASM_IMPORT("register_operator") dynop_result dynop_wasm_import_register_operator(const dynop_operator *op);
WASM_IMPORT("select_variant")
int32_t dynop_wasm_import_select_variant(const char *name, uint32_t name_len, const dynop_variant *variants,
                                         uint32_t count);
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

/* register_operator hands op to the host, which reads and checks it (the
 * same code reads a native plugin's) and keeps its address as the
 * operator's handle. A wasm module runs on the CPU only: run, or with
 * variants the first that needs no CPU features (CPU features mean
 * nothing in wasm; the reference, last, needs none, and a variant written
 * for wasm SIMD before it needs none either). */
static dynop_result host_register_operator(const dynop_host *host, const dynop_operator *op) {
    (void)host;
    remote();
    return dynop_wasm_import_register_operator(op);
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

/* select_variant asks the host, which checks the list as it checks a
 * native plugin's and takes the reference (the last variant) if it needs
 * no CPU features: the only kind of variant a wasm module can run. */
static int32_t host_select_variant(const dynop_host *host, const char *name, const dynop_variant *variants,
                                   uint32_t count) {
    (void)host;
    if (name == NULL) name = "";
    remote();
    return dynop_wasm_import_select_variant(name, (uint32_t)strlen(name), variants, count);
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
    NULL, /* plugin_path: a WebAssembly plugin opens no files */
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

/* scratch_of is 1 if the operator takes a scratch tensor after each
 * sample's outputs (DYNOP_OPERATOR_SCRATCH; the host lays it out), else
 * 0. A struct from before flags has none. */
static uint32_t scratch_of(const dynop_operator *o) {
    if (o->header.size < offsetof(dynop_operator, flags) + sizeof o->flags) return 0;
    return (o->flags & DYNOP_OPERATOR_SCRATCH) != 0;
}

WASM_EXPORT("dynop_wasm_op_setup")
dynop_result dynop_wasm_op_setup(uint32_t op, uint32_t instance, uint32_t samples, const dynop_tensor *inputs,
                                 uint32_t input_count, dynop_tensor *outputs, uint32_t output_count,
                                 uint32_t *failed) {
    const dynop_operator *o = op_of(op);
    uint32_t s, stride;
    if (o == NULL) {
        set_error_str("op_setup: op is 0");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    stride = output_count + scratch_of(o);
    for (s = 0; s < samples; s++) {
        const dynop_tensor *in = input_count != 0 ? inputs + (size_t)s * input_count : inputs;
        dynop_tensor *out = stride != 0 ? outputs + (size_t)s * stride : outputs;
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
    dynop_op_run_function run;
    uint32_t s, stride;
    if (o == NULL) {
        set_error_str("op_run: op is 0");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    /* The implementation the host accepted at register_operator: run, or
     * the first variant that needs no CPU features (in an array whose
     * stride is the size in its headers; the host checked that the last
     * needs none). */
    run = o->run;
    if (run == NULL) {
        const char *v = (const char *)o->variants;
        uint32_t i = 0;
        while (i + 1 < o->variant_count &&
               ((const dynop_variant *)(const void *)(v + (size_t)i * o->variants[0].header.size))->features != 0)
            i++;
        run = (dynop_op_run_function)((const dynop_variant *)(const void *)(v + (size_t)i * o->variants[0].header.size))
                  ->fn;
    }
    stride = output_count + scratch_of(o);
    for (s = 0; s < samples; s++) {
        const dynop_tensor *in = input_count != 0 ? inputs + (size_t)s * input_count : inputs;
        dynop_tensor *out = stride != 0 ? outputs + (size_t)s * stride : outputs;
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
 * Exports: info. dynop_wasm_info hands the host the plugin's own
 * dynop_plugin_info, which the host reads and checks in the module's
 * memory with the same code that reads a native plugin's.
 * ------------------------------------------------------------------------ */

/* dynop_wasm_info returns the address of what the plugin's get_info
 * returns in the low 32 bits, and that of the NUL-terminated list of
 * capabilities the module asks for in the high 32 (0 for none); or 0 if
 * the plugin has no get_info, saying why through the log import. */
WASM_EXPORT("dynop_wasm_info") uint64_t dynop_wasm_info(void) {
    static const char capabilities[] = DYNOP_WASM_CAPABILITIES;
    dynop_get_info_function get_info = (dynop_get_info_function)entry("get_info");
    if (get_info == NULL) {
        log_str(DYNOP_LOG_ERROR, "dynop_wasm_info: the plugin has no get_info entry point: "
                                 "dynop_plugin_get_function(\"get_info\") is NULL");
        return 0;
    }
    return (uint64_t)(capabilities[0] != '\0' ? (uint32_t)(uintptr_t)capabilities : 0) << 32 |
           (uint32_t)(uintptr_t)get_info();
}
