/* dynop_host.h: the C API of libdynop, a dynop host for programs that are
 * not written in Go (C, C++, and through ctypes or cffi, Python).
 *
 * Build it with `make libdynop`: bin/libdynop.so (and bin/libdynop.a),
 * with bin/dynop-scanner beside it. Link with -Ibin/include (or
 * -Iabi/include) -Lbin -ldynop -Wl,-rpath,'$ORIGIN' (or wherever the
 * library lies). docs/c-api.md walks through a whole program.
 *
 * The calls
 * ---------
 * dynop_host_open        opens a host over plugin files and directories
 * dynop_host_plugins     lists the plugins it found, with their states
 * dynop_host_acquire     starts a plugin (and what it needs) and hands out
 *                        the C function table of one of its interfaces
 * dynop_host_release     releases it; the last release stops the plugin
 * dynop_operator_create  makes an operator instance by name, with arguments
 * dynop_operator_run     runs it on DLPack tensors, giving new DLPack tensors
 * dynop_operator_run_into runs it into the caller's DLPack tensors (0.2)
 * dynop_operator_destroy destroys it
 * dynop_pipeline_run     runs a pipeline file (`dynop run`)
 * dynop_pipeline_open    opens a pipeline file for iteration: its outputs'
 *                        tensors, batch by batch (dynop_pipeline_next), as
 *                        a training loop takes them; dynop_pipeline_close
 * dynop_host_close       stops every plugin and frees the host
 *
 * Results and errors
 * ------------------
 * Every fallible call returns a dynop_result of dynop.h: DYNOP_OK (0) or a
 * DYNOP_ERROR_* code. The message of the last call that failed on the
 * calling thread is dynop_last_error(): the library keeps it in C
 * thread-local storage, set by the failing call on the caller's own thread
 * (a call from C into the library runs on the thread that made it), so two
 * threads never see each other's messages. Each call of this API but
 * dynop_last_error, dynop_string_free and dynop_tensor_delete (which sets
 * it only when it fails) clears it first, so after a call that returned
 * DYNOP_OK it is "". The string is valid until the thread's next call:
 * read it before calling again (beware of argument evaluation order in
 * printf("%d %s", dynop_call(...), dynop_last_error())).
 *
 * Handles
 * -------
 * dynop_host_t, dynop_operator_t, dynop_iface_ref_t and dynop_pipeline_t
 * are opaque: their
 * values are numbers from a table inside the library, never addresses, and
 * every call looks its handle up before using it. NULL is
 * DYNOP_ERROR_INVALID_ARGUMENT, a handle that was closed (destroyed,
 * released, or whose host was closed) is DYNOP_ERROR_CLOSED, and a value
 * that was never a handle of that kind is DYNOP_ERROR_INVALID_ARGUMENT;
 * none of them crashes. Handle values are never reused.
 *
 * Threads
 * -------
 * Every function may be called from any thread, and from many at once.
 * Calls on one operator are serialized (an operator instance runs one call
 * at a time): use one operator per thread to run in parallel.
 *
 * Memory
 * ------
 * - Strings passed in are borrowed for the call.
 * - Strings handed out (plugin ids, paths, reasons in dynop_plugin_status)
 *   belong to the host and stay valid until dynop_host_close.
 * - Strings the library allocates for the caller (dynop_pipeline_run's
 *   summary) are the caller's, freed with dynop_string_free.
 * - dynop_last_error's string belongs to the library; it is valid on that
 *   thread until the thread's next call into the library.
 * - Input tensors are borrowed for the call: the library reads them during
 *   dynop_operator_run only, keeps no pointer to them after it returns and
 *   never calls their deleter; the caller still owns them.
 * - Output tensors are new DLManagedTensorVersioned that the caller owns:
 *   call each one's deleter exactly once (dynop_tensor_delete does). Their
 *   memory is plain C memory (malloc), independent of the operator and of
 *   the host: they stay valid after dynop_operator_destroy and
 *   dynop_host_close, and their deleter may run on any thread, even after
 *   the host is closed.
 * - Tensors from dynop_pipeline_next are the caller's too, but they view
 *   the pipeline's memory (Go memory the library keeps alive until their
 *   deleter runs): their deleter calls into the library.
 * - An interface table from dynop_host_acquire belongs to its plugin and is
 *   valid until its reference is released (or the host is closed).
 *
 * Scanning plugin files
 * ---------------------
 * A host reads a plugin file's info from its manifest (x.so.dynop.json,
 * written by `dynop manifest`), from the registry cache, or by running a
 * scanner child process that loads the file, so that a plugin that crashes
 * while being inspected takes down only the child. A Go host runs itself
 * as that child; a C program cannot serve as one, so libdynop runs the
 * program dynop_host_options.scanner names, by default dynop-scanner in
 * the directory of libdynop.so (`make libdynop` puts it there; the dynop
 * CLI serves as a scanner too). Without one, plugin files that have no
 * manifest and are not in the cache are listed as broken, with the reason.
 * WebAssembly modules are inspected in-process, in their sandbox.
 */
#ifndef DYNOP_DYNOP_HOST_H
#define DYNOP_DYNOP_HOST_H

#include <dynop/dynop.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * DLPack >= 1.0: the structs of dlpack.h this API uses, under their DLPack
 * names and with their layout. Include dlpack.h before this header to use
 * its own declarations instead (and the rest of it).
 * ------------------------------------------------------------------------ */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 } DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U
} DLDataTypeCode;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif /* DLPACK_DLPACK_H_ */

/* ------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------ */

/* The version of this API. A program may check at run time that the
 * library it loaded is at least the one it was compiled against:
 * dynop_host_api_version().major == DYNOP_HOST_API_VERSION_MAJOR and
 * .minor >= DYNOP_HOST_API_VERSION_MINOR. */
#define DYNOP_HOST_API_VERSION_MAJOR 0
#define DYNOP_HOST_API_VERSION_MINOR 2
#define DYNOP_HOST_API_VERSION_PATCH 0

/* ------------------------------------------------------------------------
 * Handles
 * ------------------------------------------------------------------------ */

typedef struct dynop_host_s dynop_host_t;         /* an open host */
typedef struct dynop_operator_s dynop_operator_t; /* an operator instance */
typedef struct dynop_iface_ref_s dynop_iface_ref_t; /* a reference to an interface */
typedef struct dynop_pipeline_s dynop_pipeline_t; /* a pipeline open for iteration (0.2) */

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------ */

/* How a host is opened. Set struct_size to sizeof(dynop_host_options) and
 * zero what you do not set (dynop_host_options o = {.struct_size = sizeof o};): every
 * zero field means the default. A program compiled against an older
 * header passes a smaller struct_size and gets the defaults for the fields
 * it does not know; one compiled against a newer header passes a larger
 * one, accepted if the fields this library does not know are all zero
 * (DYNOP_ERROR_UNSUPPORTED otherwise). A struct_size smaller than the
 * first version of the struct is DYNOP_ERROR_VERSION. */
typedef struct dynop_host_options {
    uint32_t struct_size;
    /* Plugin files and directories, searched before $DYNOP_PLUGIN_PATH,
     * the directory plugins beside the executable and
     * $XDG_DATA_HOME/dynop/plugins. */
    const char *const *paths;
    size_t path_count;
    int32_t no_default_paths; /* nonzero: search paths only */
    int32_t no_cache;         /* nonzero: neither read nor write the registry cache */
    const char *cache_dir;    /* NULL: $XDG_CACHE_HOME/dynop */
    const char *trust_dir;    /* a directory of trusted public keys (*.pub) */
    const char *signature_policy; /* "off", "warn", "require"; NULL: require with a trust dir, else off */
    const char *cpu_features; /* CPU features off, as $DYNOP_CPU_FEATURES: "-avx512f,-avx2" */
    const char *sandbox;      /* "prefer-native" (NULL), "unsigned" or "always" */
    const char *scanner;      /* the scanner program; NULL: dynop-scanner beside libdynop.so */
    uint32_t scan_timeout_ms; /* one scan's limit; 0: 10 s */
    int32_t log_level;        /* slog level of what is logged to stderr: -4 debug, 0 info, 4 warn (default: 0) */
} dynop_host_options;

/* The size of the first version of dynop_host_options: the smallest
 * struct_size dynop_host_open accepts. */
#define DYNOP_HOST_OPTIONS_SIZE_V0_1 ((uint32_t)offsetof(dynop_host_options, log_level) + 4u)

/* ------------------------------------------------------------------------
 * Plugins
 * ------------------------------------------------------------------------ */

/* A plugin's state (dynop.State). */
enum {
    DYNOP_PLUGIN_AVAILABLE = 0,   /* usable, not started */
    DYNOP_PLUGIN_STARTING = 1,
    DYNOP_PLUGIN_STARTED = 2,
    DYNOP_PLUGIN_STOPPING = 3,
    DYNOP_PLUGIN_BROKEN = 4,      /* its file cannot be used; error says why */
    DYNOP_PLUGIN_UNSUPPORTED = 5, /* this machine lacks what it requires */
    DYNOP_PLUGIN_UNTRUSTED = 6,   /* its signature does not verify */
    DYNOP_PLUGIN_DUPLICATE = 7    /* another plugin with its id is used */
};

/* One plugin as the host sees it. Set struct_size to
 * sizeof(dynop_plugin_status) in each element (the library steps through
 * the array by it); the library writes only the fields that fit in it. Strings belong to the host (valid until it is
 * closed); path is "" for Go plugins compiled into the library, error ""
 * when there is nothing to say. */
typedef struct dynop_plugin_status {
    uint32_t struct_size;
    int32_t state; /* DYNOP_PLUGIN_* */
    const char *id;
    dynop_version version;
    const char *path;
    const char *error;
    uint32_t refs;   /* references held to its interfaces */
    uint32_t starts; /* completed starts */
    uint32_t stops;  /* completed stops */
} dynop_plugin_status;

/* ------------------------------------------------------------------------
 * Functions
 * ------------------------------------------------------------------------ */

#ifndef DYNOP_HOST_NO_PROTOTYPES

/* The version of the library: DYNOP_HOST_API_VERSION_* when it was built. */
dynop_version dynop_host_api_version(void);

/* The message of the last failed call on this thread, "" if none. Never
 * NULL. Valid until this thread's next call into the library. */
const char *dynop_last_error(void);

/* Opens a host: finds plugin files (running none of their code) and the
 * Go plugins compiled into the library (image.*, npy.*). options may be
 * NULL for every default. On success *host is the new host; on failure it
 * is set to NULL. */
dynop_result dynop_host_open(const dynop_host_options *options, dynop_host_t **host);

/* Closes a host: destroys the operators and releases the interface
 * references still open on it (their handles are closed from then on),
 * stops every plugin and frees the host. Output tensors stay valid. */
dynop_result dynop_host_close(dynop_host_t *host);

/* Lists the host's plugins, usable or not, sorted by id then path: writes
 * min(capacity, the number of plugins) entries into statuses (which may be
 * NULL when capacity is 0) and the number of plugins into *count. Call it
 * with capacity 0 to learn the count. */
dynop_result dynop_host_plugins(dynop_host_t *host, dynop_plugin_status *statuses, size_t capacity,
                                size_t *count);

/* Acquires interface uid of plugin plugin_id at version min_version or a
 * compatible later one (same major, minor at least min_version's),
 * starting the plugin and what it depends on if they are not started.
 * *table is the interface's C function table (its dynop_header first),
 * valid until *ref is released. An interface that has no C table (a Go
 * interface with no C export) is DYNOP_ERROR_TYPE. */
dynop_result dynop_host_acquire(dynop_host_t *host, const char *plugin_id, const dynop_uid *uid,
                                dynop_version min_version, const void **table,
                                dynop_iface_ref_t **ref);

/* Releases a reference: the table is not to be used again. The last
 * reference to a plugin's interfaces stops it. */
dynop_result dynop_host_release(dynop_iface_ref_t *ref);

/* Makes an instance of the operator named name (such as
 * "imgproc.GaussianBlur"), with its arguments as a JSON object (NULL or ""
 * for none), checked against the operator's schema. The first instance of
 * a plugin's operator starts the plugin. */
dynop_result dynop_operator_create(dynop_host_t *host, const char *name, const char *args_json,
                                   dynop_operator_t **op);

/* The number of inputs and outputs of the operator's schema. */
dynop_result dynop_operator_arity(dynop_operator_t *op, uint32_t *num_inputs, uint32_t *num_outputs);

/* Runs the operator on a batch of batch_size samples per input: sets it up
 * for the inputs' shapes, allocates the outputs and runs it.
 * inputs[i * batch_size + s] is sample s of input i (num_inputs *
 * batch_size tensors): borrowed, DLPack 1.x, on the CPU, at most
 * DYNOP_MAX_NDIM dimensions, strides NULL or not negative, deleter may be
 * NULL. outputs has room for num_outputs * batch_size pointers
 * (num_outputs must be the operator's); on DYNOP_OK outputs[o *
 * batch_size + s] is a new tensor, sample s of output o, owned by the
 * caller (call its deleter once). On failure no output is made: a NULL or
 * wrong handle, count or batch_size leaves outputs untouched, and any later
 * failure sets every element of outputs to NULL. */
dynop_result dynop_operator_run(dynop_operator_t *op, DLManagedTensorVersioned *const *inputs,
                                uint32_t num_inputs, uint32_t batch_size,
                                DLManagedTensorVersioned **outputs, uint32_t num_outputs);

/* Since 0.2. Runs the operator as dynop_operator_run does, but into the
 * caller's outputs: outputs[o * batch_size + s] (num_outputs *
 * batch_size tensors) are borrowed, writable (not
 * DLPACK_FLAG_BITMASK_READ_ONLY), compact (strides NULL or row-major with
 * no gaps), of the dtype and shape the operator gives for these inputs
 * (else DYNOP_ERROR_INVALID_ARGUMENT, naming both), and overlap no input
 * (operators do not run in place). Their deleters are never called. */
dynop_result dynop_operator_run_into(dynop_operator_t *op, DLManagedTensorVersioned *const *inputs,
                                     uint32_t num_inputs, uint32_t batch_size,
                                     DLManagedTensorVersioned *const *outputs, uint32_t num_outputs);

/* Destroys an operator instance; the last one of a plugin's may stop it. */
dynop_result dynop_operator_destroy(dynop_operator_t *op);

/* Calls tensor->deleter(tensor): DYNOP_ERROR_INVALID_ARGUMENT if tensor
 * or its deleter is NULL. It is for languages that cannot call a function
 * pointer from a struct easily; it leaves dynop_last_error alone on
 * success. */
dynop_result dynop_tensor_delete(DLManagedTensorVersioned *tensor);

/* Runs the pipeline file at path (see package pipeline) with the host's
 * plugins. options_json (NULL or "" for none) is a JSON object with any of
 * "out_dir" (string), "inputs" ({"name": ["file or pattern", ...]}),
 * "workers" (number), "atomic" (bool), "resume" (bool). If summary_json
 * is not NULL, *summary_json is set to the run's summary as a JSON object
 * (pipeline.Summary: pipeline, images, batches, outputs, seconds, nodes,
 * ...), a string the caller frees with dynop_string_free; NULL on failure. */
dynop_result dynop_pipeline_run(dynop_host_t *host, const char *path, const char *options_json,
                                char **summary_json);

/* Since 0.2. Opens the pipeline file at path for iteration: its inputs are
 * read from their files, as dynop_pipeline_run reads them, but its outputs
 * are not encoded nor written: dynop_pipeline_next hands out each output
 * node's tensors, batch by batch. options_json (NULL or "" for none) is a
 * JSON object with any of "inputs" and "workers", as for
 * dynop_pipeline_run. If info_json is not NULL, *info_json is set to a
 * JSON object the caller frees with dynop_string_free: "name", "file",
 * "batch_size", "inputs" and "outputs" (names, in the file's order) and
 * "samples" (how many samples the iteration goes over). The pipeline
 * holds its plugins until dynop_pipeline_close (or dynop_host_close). */
dynop_result dynop_pipeline_open(dynop_host_t *host, const char *path, const char *options_json,
                                 dynop_pipeline_t **pipeline, char **info_json);

/* Since 0.2. Runs the pipeline's next batch. outputs has room for capacity
 * pointers, at least num_outputs * batch_size (see info_json; less is
 * DYNOP_ERROR_INVALID_ARGUMENT). On DYNOP_OK *count is the number of
 * samples n of the batch, 0 after the last one, and outputs[o * n + s] is
 * sample s of output o, a new tensor the caller owns (call its deleter
 * once); the other elements are NULL. A sample's tensors view the
 * pipeline's own memory, without a copy: they stay valid after
 * dynop_pipeline_close and dynop_host_close, until their deleter runs, and
 * their deleter calls into the library (it may run on any thread). If
 * files_json is not NULL and n > 0, *files_json is set to a JSON array
 * giving, per sample, the array of its input files (one per input, in
 * order), a string the caller frees with dynop_string_free. An input file
 * that cannot be read or run ends the iteration with its error, naming
 * the file (with on_error: skip it is left out of its batch instead); the
 * next call then gives *count 0. Calls on one pipeline are serialized;
 * up to two batches are read and run ahead of the caller. */
dynop_result dynop_pipeline_next(dynop_pipeline_t *pipeline, DLManagedTensorVersioned **outputs,
                                 size_t capacity, uint32_t *count, char **files_json);

/* Since 0.2. Stops the iteration (the batches in flight are dropped) and
 * closes the pipeline, which lets its plugins stop. */
dynop_result dynop_pipeline_close(dynop_pipeline_t *pipeline);

/* Frees a string the library allocated for the caller (NULL is fine). */
void dynop_string_free(char *s);

#endif /* DYNOP_HOST_NO_PROTOTYPES */

#ifdef __cplusplus
}
#endif

#endif /* DYNOP_DYNOP_HOST_H */
