/*
 * dynop.h — the C ABI between a dynop host and a native plugin.
 *
 * This is the one header a plugin author includes. It is plain C99, usable
 * from C++ (everything is extern "C"), and compiles without warnings under
 * -Wall -Wextra -pedantic as C99 and as C++11 or later.
 *
 * # The shape of a plugin
 *
 * A plugin is a shared library that exports one symbol,
 * dynop_plugin_get_function(). The host looks it up with dlsym and asks it
 * for the plugin's other entry points by name:
 *
 *   "get_info"    dynop_get_info_function    describe the plugin
 *   "register"    dynop_register_function    start: add interfaces, acquire others
 *   "deregister"  dynop_deregister_function  stop (optional)
 *
 * A name the plugin does not know yields NULL, so later API versions can ask
 * for entry points that older plugins lack. Build plugins with
 * -fvisibility=hidden: DYNOP_EXPORT marks the one symbol that must be seen.
 *
 * # Lifecycle
 *
 * The host reads a plugin's info without starting it. The first request for
 * one of its interfaces loads the library and calls register with the host
 * table. register adds every interface the info declares (add_interface)
 * and may acquire other plugins' interfaces (acquire), which starts those
 * first. If register fails, the plugin must leave nothing behind: the host
 * removes what it added, releases what it acquired, does not call
 * deregister, and unloads the library.
 *
 * Interfaces are reference counted by the host. When nothing references a
 * plugin's interfaces any more, the host calls deregister, releases what the
 * plugin still holds, and dlcloses the library; its code and data are gone.
 * The host table passed to register stays valid until deregister returns.
 *
 * # Structs that cross the boundary
 *
 * Every struct passed between host and plugin starts with a dynop_header:
 * the struct's type UID, its version and its size as the writer compiled
 * it. Structs only ever grow at the end, and every growth bumps the minor
 * version. A reader checks the UID, checks that the major version is one it
 * knows, and touches a member only if header.size covers it
 * (DYNOP_HAS_MEMBER). A struct from a newer writer is larger than the reader
 * knows and that is fine: the reader ignores the tail.
 *
 * # Interfaces
 *
 * An interface is a versioned struct of function pointers, starting with a
 * dynop_header whose type is the interface UID and whose version is the
 * interface version (NVIGI's interfaces, numpy's and liboil's function
 * tables). Callers acquire it by plugin ID, UID and the minimum version they
 * need; the host checks semantic-version compatibility (same major; minor at
 * least the one asked for; while the major is 0, the same minor).
 *
 * # Memory and threads
 *
 * Strings and structs a plugin hands to the host (its info, interface
 * tables) are the plugin's and must stay valid and unchanged while the
 * library is loaded; static storage is the usual choice. Strings the host
 * hands to the plugin are the host's, valid until the plugin's next call
 * into the host on the same thread. The host may call a plugin's interface
 * functions from several threads at once; register and deregister are never
 * called concurrently with each other for one plugin. Host functions are
 * safe to call from any thread.
 */
#ifndef DYNOP_DYNOP_H
#define DYNOP_DYNOP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Versions of this header
 * ------------------------------------------------------------------------ */

/* The plugin API version this header describes. A plugin records it in
 * dynop_plugin_info.api_version; a host refuses a plugin built for an API
 * newer than its own. While the major is 0 every minor is a breaking change. */
#define DYNOP_API_VERSION_MAJOR 0
#define DYNOP_API_VERSION_MINOR 1
#define DYNOP_API_VERSION_PATCH 0
#define DYNOP_API_VERSION                                                     \
    DYNOP_V(DYNOP_API_VERSION_MAJOR, DYNOP_API_VERSION_MINOR, DYNOP_API_VERSION_PATCH)

/* DYNOP_EXPORT makes a symbol visible to the host's dlsym even when the
 * plugin is built with -fvisibility=hidden. */
#if defined(_WIN32)
#define DYNOP_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define DYNOP_EXPORT __attribute__((visibility("default")))
#else
#define DYNOP_EXPORT
#endif

/* ------------------------------------------------------------------------
 * Value types: frozen forever, so they carry no header.
 * ------------------------------------------------------------------------ */

/* A 128-bit type identifier, stored as the 16 bytes of its text form
 * "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" in order (not the Windows GUID
 * layout with little-endian fields). Write one with DYNOP_UID. */
typedef struct dynop_uid {
    uint8_t bytes[16];
} dynop_uid;

/* DYNOP_UID(0x3F0B6D52, 0x8A8C, 0x4E55, 0x9C, 0x5E, 0x2B, 0x1B, 0x0D, 0x6C,
 * 0x7A, 0x11) is the initializer of UID 3F0B6D52-8A8C-4E55-9C5E-2B1B0D6C7A11,
 * in the same field order as a Windows GUID or NVIGI UID literal. */
#define DYNOP_UID(d1, d2, d3, b0, b1, b2, b3, b4, b5, b6, b7)                 \
    {{ (uint8_t)(((uint32_t)(d1) >> 24) & 0xFF),                              \
       (uint8_t)(((uint32_t)(d1) >> 16) & 0xFF),                              \
       (uint8_t)(((uint32_t)(d1) >> 8) & 0xFF),                               \
       (uint8_t)((uint32_t)(d1) & 0xFF),                                      \
       (uint8_t)(((uint32_t)(d2) >> 8) & 0xFF),                               \
       (uint8_t)((uint32_t)(d2) & 0xFF),                                      \
       (uint8_t)(((uint32_t)(d3) >> 8) & 0xFF),                               \
       (uint8_t)((uint32_t)(d3) & 0xFF),                                      \
       (uint8_t)(b0), (uint8_t)(b1), (uint8_t)(b2), (uint8_t)(b3),            \
       (uint8_t)(b4), (uint8_t)(b5), (uint8_t)(b6), (uint8_t)(b7) }}

/* A semantic version. For plugins it is the plugin's own version; for
 * interfaces and ABI structs it is the layout version (minor = growth at
 * the end, major = incompatible change). */
typedef struct dynop_version {
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
} dynop_version;

/* DYNOP_V(1, 2, 0) initializes a dynop_version. Unlike a bare {1, 2, 0},
 * it can be passed as one argument to the macros below. */
#define DYNOP_V(major, minor, patch) { (major), (minor), (patch) }

/* The header every struct crossing the boundary starts with. */
typedef struct dynop_header {
    dynop_uid type;        /* what struct this is */
    dynop_version version; /* its layout version */
    uint32_t size;         /* sizeof the struct as its writer compiled it */
} dynop_header;

/* DYNOP_HEADER(type_uid, version, struct_type) initializes the header of
 * a struct of C type struct_type: type_uid is a DYNOP_UID(...) (for an
 * interface, its UID), version a DYNOP_V(...) (for an interface, its
 * version). The ABI structs below have ready-made DYNOP_*_HEADER macros. */
#define DYNOP_HEADER(type_uid, version, struct_type)                          \
    { type_uid, version, (uint32_t)sizeof(struct_type) }

/* DYNOP_HAS_MEMBER(T, p, m) is true if the struct p (a T *, starting with a
 * dynop_header named "header") is large enough to contain member m. Use it
 * before reading a member that was added after the struct's first version. */
#define DYNOP_HAS_MEMBER(T, p, m)                                             \
    ((size_t)(p)->header.size >= offsetof(T, m) + sizeof(((T *)0)->m))

/* ------------------------------------------------------------------------
 * Results
 * ------------------------------------------------------------------------ */

/* Every fallible call returns a dynop_result: DYNOP_OK (zero) or an error
 * code. A plugin that returns an error from a host-called entry point may
 * explain it with dynop_host.set_error first.
 *
 * An operator that refuses its input (in setup or run) returns one of two
 * codes, by one rule: would other arguments make this input work?
 *  - No: DYNOP_ERROR_UNSUPPORTED. The input is well-formed but of a kind
 *    the operator has no code for, whatever its arguments: a dtype, a
 *    channel count, a number of dimensions, a size beyond the operator's
 *    limits. The caller must convert the input (a cast, a colour
 *    conversion, a resize) or use another operator. The host reports it as
 *    dynop.ErrUnsupported, as it does an operator with no backend for a
 *    device: something not implemented, not a mistake in the call.
 *  - Yes: DYNOP_ERROR_INVALID_ARGUMENT. The call is wrong: a NULL or
 *    malformed tensor (the wrong number of them, a negative size, more than
 *    DYNOP_MAX_NDIM dimensions, an empty image for an operator that needs
 *    pixels), an argument out of range, or an input that contradicts the
 *    arguments (imgproc.ColorConvert from "gray" given 3 channels,
 *    imgproc.Normalize's 3 means for a 4-channel image).
 * So imgproc.GaussianBlur on 2 channels and imgproc.Grayscale on 1 are
 * both UNSUPPORTED: no argument of theirs takes those channel counts. */
typedef int32_t dynop_result;
enum {
    DYNOP_OK = 0,
    DYNOP_ERROR = 1,                  /* unspecified failure */
    DYNOP_ERROR_INVALID_ARGUMENT = 2, /* a NULL or malformed argument */
    DYNOP_ERROR_NOT_FOUND = 3,        /* no such plugin or interface */
    DYNOP_ERROR_VERSION = 4,          /* incompatible version */
    DYNOP_ERROR_STATE = 5,            /* not allowed in the current state */
    DYNOP_ERROR_CYCLE = 6,            /* plugins acquire each other while starting */
    DYNOP_ERROR_NO_MEMORY = 7,        /* out of memory */
    DYNOP_ERROR_UNSUPPORTED = 8,      /* not supported here */
    DYNOP_ERROR_DUPLICATE = 9,        /* given twice */
    DYNOP_ERROR_TYPE = 10,            /* an interface of the wrong kind */
    DYNOP_ERROR_CLOSED = 11           /* the host is closed */
};

/* Log levels, numerically the same as Go's log/slog levels. */
typedef int32_t dynop_log_level;
enum {
    DYNOP_LOG_DEBUG = -4,
    DYNOP_LOG_INFO = 0,
    DYNOP_LOG_WARN = 4,
    DYNOP_LOG_ERROR = 8
};

/* A reference to an acquired interface, handed out by dynop_host.acquire
 * and given back with dynop_host.release. Zero is never a reference. */
typedef uint64_t dynop_ref;

/* ------------------------------------------------------------------------
 * Tensors: DLPack's DLTensor, byte for byte
 * ------------------------------------------------------------------------ */

/* Data crosses the boundary as DLPack tensors (dlpack.h, v0.8 and later):
 * dynop_device, dynop_dtype and dynop_tensor have exactly the layout of
 * DLDevice, DLDataType and DLTensor, so a plugin that uses dlpack.h may
 * cast between them. These are value types, frozen like DLPack's, and
 * carry no header. */

/* Where a tensor's memory is: DLPack's DLDeviceType values. */
enum {
    DYNOP_DEVICE_CPU = 1,
    DYNOP_DEVICE_CUDA = 2,
    DYNOP_DEVICE_CUDA_HOST = 3
};

typedef struct dynop_device {
    int32_t device_type; /* DYNOP_DEVICE_* */
    int32_t device_id;   /* which device of that type; 0 for the CPU */
} dynop_device;

/* Element type codes: DLPack's DLDataTypeCode values. */
enum {
    DYNOP_DTYPE_INT = 0,
    DYNOP_DTYPE_UINT = 1,
    DYNOP_DTYPE_FLOAT = 2,
    DYNOP_DTYPE_OPAQUE_HANDLE = 3,
    DYNOP_DTYPE_BFLOAT = 4,
    DYNOP_DTYPE_COMPLEX = 5,
    DYNOP_DTYPE_BOOL = 6
};

/* An element type: code, bits per lane, lanes (1 for scalars).
 * uint8 is {DYNOP_DTYPE_UINT, 8, 1}, float32 {DYNOP_DTYPE_FLOAT, 32, 1}. */
typedef struct dynop_dtype {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} dynop_dtype;

/* A tensor: element [i0, i1, ...] lies at
 *   (char *)data + byte_offset + (i0*strides[0] + i1*strides[1] + ...) * element size.
 * Shapes and strides count elements. strides is never NULL in tensors the
 * host passes. The memory belongs to the host, valid for the call. */
typedef struct dynop_tensor {
    void *data;
    dynop_device device;
    int32_t ndim;
    dynop_dtype dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} dynop_tensor;

/* The most dimensions a tensor crossing the boundary has: the host passes
 * no input with more (it fails the call instead), and setup writes output
 * shapes into arrays of this many elements. */
#define DYNOP_MAX_NDIM 16

/* A generic function pointer; cast it to the type its name says. */
typedef void (*dynop_function)(void);

/* ------------------------------------------------------------------------
 * CPU features and variants
 * ------------------------------------------------------------------------ */

/* A set of CPU features as a bit mask. The names are those of
 * golang.org/x/sys/cpu's flags in lower case (HasAVX512BW is "avx512bw"),
 * which is how requirements, DYNOP_CPU_FEATURES and dynop inspect spell
 * them. The bit numbers are part of the ABI and never change; new
 * features get new bits. */
typedef uint64_t dynop_cpu_features;

/* x86 (386, amd64) */
#define DYNOP_CPU_SSE2 (UINT64_C(1) << 0)
#define DYNOP_CPU_SSE3 (UINT64_C(1) << 1)
#define DYNOP_CPU_SSSE3 (UINT64_C(1) << 2)
#define DYNOP_CPU_SSE41 (UINT64_C(1) << 3)
#define DYNOP_CPU_SSE42 (UINT64_C(1) << 4)
#define DYNOP_CPU_POPCNT (UINT64_C(1) << 5)
#define DYNOP_CPU_AVX (UINT64_C(1) << 6)
#define DYNOP_CPU_AVX2 (UINT64_C(1) << 7)
#define DYNOP_CPU_FMA (UINT64_C(1) << 8)
#define DYNOP_CPU_F16C (UINT64_C(1) << 9)
#define DYNOP_CPU_BMI1 (UINT64_C(1) << 10)
#define DYNOP_CPU_BMI2 (UINT64_C(1) << 11)
#define DYNOP_CPU_LZCNT (UINT64_C(1) << 12)
#define DYNOP_CPU_MOVBE (UINT64_C(1) << 13)
#define DYNOP_CPU_AVX512F (UINT64_C(1) << 14)
#define DYNOP_CPU_AVX512BW (UINT64_C(1) << 15)
#define DYNOP_CPU_AVX512VL (UINT64_C(1) << 16)
#define DYNOP_CPU_AVX512DQ (UINT64_C(1) << 17)
#define DYNOP_CPU_AVX512CD (UINT64_C(1) << 18)
#define DYNOP_CPU_AVX512VNNI (UINT64_C(1) << 19)
#define DYNOP_CPU_AVX512BF16 (UINT64_C(1) << 20)
#define DYNOP_CPU_AVX512IFMA (UINT64_C(1) << 21)
#define DYNOP_CPU_AVX512VBMI (UINT64_C(1) << 22)
#define DYNOP_CPU_AVX512VBMI2 (UINT64_C(1) << 23)
#define DYNOP_CPU_AVX512BITALG (UINT64_C(1) << 24)
#define DYNOP_CPU_AVX512VPOPCNTDQ (UINT64_C(1) << 25)
#define DYNOP_CPU_AVXVNNI (UINT64_C(1) << 26)
/* arm64 */
#define DYNOP_CPU_ASIMD (UINT64_C(1) << 32) /* NEON */
#define DYNOP_CPU_ASIMDDP (UINT64_C(1) << 33)
#define DYNOP_CPU_ASIMDHP (UINT64_C(1) << 34)
#define DYNOP_CPU_ASIMDFHM (UINT64_C(1) << 35)
#define DYNOP_CPU_ASIMDRDM (UINT64_C(1) << 36)
#define DYNOP_CPU_I8MM (UINT64_C(1) << 37)
#define DYNOP_CPU_SVE (UINT64_C(1) << 38)
#define DYNOP_CPU_SVE2 (UINT64_C(1) << 39)
#define DYNOP_CPU_FPHP (UINT64_C(1) << 40)
#define DYNOP_CPU_NEON DYNOP_CPU_ASIMD

/* A feature implies the ones it is built on, as compilers' target options
 * do: avx2 implies avx, avx512f implies avx2, fma and f16c, every other
 * avx512 feature implies avx512f, sve and the asimd extensions imply
 * asimd. The host closes a variant's features under these implications
 * before comparing them with the CPU, so "avx512bw" alone is enough for a
 * function built with __attribute__((target("avx512bw"))); and turning a
 * feature off with DYNOP_CPU_FEATURES turns off every feature that implies
 * it. */

#define DYNOP_VARIANT_TYPE                                                    \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0F)
#define DYNOP_VARIANT_VERSION_MAJOR 1
#define DYNOP_VARIANT_VERSION DYNOP_V(DYNOP_VARIANT_VERSION_MAJOR, 0, 0)
#define DYNOP_VARIANT_HEADER                                                  \
    DYNOP_HEADER(DYNOP_VARIANT_TYPE, DYNOP_VARIANT_VERSION, dynop_variant)

/* One implementation of a function for the CPU features it needs (numpy's
 * and liboil's CPU-specific implementations). A list of variants is an
 * array of these, best first; the last is the reference: the portable
 * implementation the others must agree with, usually plain C ("scalar").
 * The host takes the first variant whose features this CPU has and that
 * DYNOP_CPU_FEATURES has not turned off, once, and calls only that one: a
 * variant is never called on a CPU that lacks what it needs.
 *
 * Compile each variant for its features and only it, so that one library
 * carries them all: __attribute__((target("avx2,fma"))) on the function
 * (GCC and Clang), with the library itself built for the baseline. */
typedef struct dynop_variant {
    dynop_header header;         /* DYNOP_VARIANT_TYPE */
    const char *name;            /* "avx512", "avx2", "scalar": unique in its list;
                                  * a letter, then letters, digits and _ */
    dynop_cpu_features features; /* DYNOP_CPU_* bits it needs; 0 for none */
    dynop_function fn;           /* the implementation, cast to dynop_function */
} dynop_variant;

/* DYNOP_VARIANT(name, features, fn) initializes a dynop_variant. */
#define DYNOP_VARIANT(name, features, fn)                                     \
    { DYNOP_VARIANT_HEADER, name, features, (dynop_function)(fn) }

/* ------------------------------------------------------------------------
 * Operators
 * ------------------------------------------------------------------------ */

/* An operator (DALI's term) is a schema, data the host reads without
 * running the plugin, and a backend per device, which the plugin registers
 * from register with dynop_host.register_operator.
 *
 * The schema's arrays (inputs, outputs, args) are arrays of structs that
 * each start with a header; the host steps through an array by the size in
 * its first element's header, so the element structs can grow like any
 * other. */

/* Argument types. Lists hold elements of the scalar type. */
typedef int32_t dynop_arg_type;
enum {
    DYNOP_ARG_INT = 1,    /* int64_t */
    DYNOP_ARG_FLOAT = 2,  /* double */
    DYNOP_ARG_BOOL = 3,   /* int32_t, 0 or 1 */
    DYNOP_ARG_STRING = 4, /* const char * */
    DYNOP_ARG_DTYPE = 5,  /* dynop_dtype */
    DYNOP_ARG_INT_LIST = 6,
    DYNOP_ARG_FLOAT_LIST = 7,
    DYNOP_ARG_BOOL_LIST = 8,
    DYNOP_ARG_STRING_LIST = 9,
    DYNOP_ARG_DTYPE_LIST = 10
};

/* Flags in dynop_op_arg.flags. */
enum {
    DYNOP_ARG_REQUIRED = 1u << 0, /* must be given; has no default */
    DYNOP_ARG_HAS_MIN = 1u << 1,  /* min bounds the value (each element) */
    DYNOP_ARG_HAS_MAX = 1u << 2,  /* max bounds the value (each element) */
    /* Read by hosts from dynop_host 1.4 on; an older host takes the
     * bound as closed, and create must refuse the bound itself: */
    DYNOP_ARG_MIN_EXCLUSIVE = 1u << 3, /* the value must be above min, not equal to it */
    DYNOP_ARG_MAX_EXCLUSIVE = 1u << 4  /* the value must be below max, not equal to it */
};

#define DYNOP_OP_INPUT_TYPE                                                   \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x06)
#define DYNOP_OP_INPUT_VERSION_MAJOR 1
#define DYNOP_OP_INPUT_VERSION DYNOP_V(DYNOP_OP_INPUT_VERSION_MAJOR, 1, 0)
#define DYNOP_OP_INPUT_HEADER                                                 \
    DYNOP_HEADER(DYNOP_OP_INPUT_TYPE, DYNOP_OP_INPUT_VERSION, dynop_op_input)

#define DYNOP_OP_OUTPUT_TYPE                                                  \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x07)
#define DYNOP_OP_OUTPUT_VERSION_MAJOR 1
#define DYNOP_OP_OUTPUT_VERSION DYNOP_V(DYNOP_OP_OUTPUT_VERSION_MAJOR, 2, 0)
#define DYNOP_OP_OUTPUT_HEADER                                                \
    DYNOP_HEADER(DYNOP_OP_OUTPUT_TYPE, DYNOP_OP_OUTPUT_VERSION, dynop_op_output)

#define DYNOP_OP_ARG_TYPE                                                     \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x08)
#define DYNOP_OP_ARG_VERSION_MAJOR 1
#define DYNOP_OP_ARG_VERSION DYNOP_V(DYNOP_OP_ARG_VERSION_MAJOR, 0, 0)
#define DYNOP_OP_ARG_HEADER                                                   \
    DYNOP_HEADER(DYNOP_OP_ARG_TYPE, DYNOP_OP_ARG_VERSION, dynop_op_arg)

#define DYNOP_OP_SCHEMA_TYPE                                                  \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x09)
#define DYNOP_OP_SCHEMA_VERSION_MAJOR 1
#define DYNOP_OP_SCHEMA_VERSION DYNOP_V(DYNOP_OP_SCHEMA_VERSION_MAJOR, 0, 0)
#define DYNOP_OP_SCHEMA_HEADER                                                \
    DYNOP_HEADER(DYNOP_OP_SCHEMA_TYPE, DYNOP_OP_SCHEMA_VERSION, dynop_op_schema)

#define DYNOP_OPERATOR_TYPE                                                   \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0A)
#define DYNOP_OPERATOR_VERSION_MAJOR 1
#define DYNOP_OPERATOR_VERSION DYNOP_V(DYNOP_OPERATOR_VERSION_MAJOR, 2, 0)
#define DYNOP_OPERATOR_HEADER                                                 \
    DYNOP_HEADER(DYNOP_OPERATOR_TYPE, DYNOP_OPERATOR_VERSION, dynop_operator)

/* One input of an operator: a batch of tensors. Lists are comma-separated
 * and NULL or "" for "any": dtypes by name ("uint8,float32"), layouts as
 * dimension letters ("HWC,HW"). ndim 0 means any (or what layouts imply).
 * Since 1.1, channels lists the sizes the layout's dimension named C may
 * have ("1,3,4"; NULL or "" for any), which hosts from dynop_host 1.4
 * check pipelines with before anything runs. */
typedef struct dynop_op_input {
    dynop_header header; /* DYNOP_OP_INPUT_TYPE */
    const char *name;
    const char *doc;
    const char *dtypes;
    const char *layouts;
    int32_t ndim;
    /* Since 1.1: */
    const char *channels;
} dynop_op_input;

/* One output of an operator. layout names its dimensions ("HWC") if it
 * always has that layout; NULL or "" for none. Since 1.1, what the host
 * checks pipelines with before anything runs (each NULL, "" or 0 for
 * unknown): dtypes lists the dtypes the output may have ("uint8";
 * one: it has that one), dtype_arg names a dtype argument whose value it
 * has, like names an input whose dtype, and whose layout and ndim where
 * layout and ndim say nothing, it has, and ndim is its number of
 * dimensions. Hosts from dynop_host 1.4 read them. Since 1.2, the size
 * of the output's dimension named C: channels_arg names an int argument
 * whose value it is, else channels is the count, DYNOP_CHANNELS_LIKE for
 * that of the input like names, or 0 for unknown. */
typedef struct dynop_op_output {
    dynop_header header; /* DYNOP_OP_OUTPUT_TYPE */
    const char *name;
    const char *doc;
    const char *layout;
    /* Since 1.1: */
    const char *dtypes;
    const char *dtype_arg;
    const char *like;
    int32_t ndim;
    /* Since 1.2: */
    const char *channels_arg;
    int32_t channels;
} dynop_op_output;

/* dynop_op_output.channels of an output with as many channels as its
 * like input. */
#define DYNOP_CHANNELS_LIKE (-1)

/* One argument of an operator. Values are JSON text: default_value is the
 * default ("3", "0.5", "true", "\"linear\"", "[1, 2]"; dtypes by name, as
 * "\"uint8\""), or NULL for none; allowed is a JSON array of the values
 * (each element, for lists) the argument may take, or NULL for any.
 * deprecated lists former names, comma-separated. */
typedef struct dynop_op_arg {
    dynop_header header; /* DYNOP_OP_ARG_TYPE */
    const char *name;    /* snake_case */
    const char *doc;
    dynop_arg_type type; /* DYNOP_ARG_* */
    uint32_t flags;      /* DYNOP_ARG_* flags */
    double min, max;     /* bounds, if flags say so */
    const char *default_value;
    const char *allowed;
    const char *deprecated;
} dynop_op_arg;

/* An operator's schema, listed in dynop_plugin_info.operators. name is
 * namespaced: lower-case namespaces and a CamelCase name ("imgproc.Gray").
 * devices lists the devices the plugin registers backends for ("cpu").
 * The last optional_inputs inputs may be left out. */
typedef struct dynop_op_schema {
    dynop_header header; /* DYNOP_OP_SCHEMA_TYPE */
    const char *name;
    const char *doc;
    const char *devices;
    uint32_t input_count;
    uint32_t optional_inputs;
    const dynop_op_input *inputs;
    uint32_t output_count;
    const dynop_op_output *outputs;
    uint32_t arg_count;
    const dynop_op_arg *args;
} dynop_op_schema;

/* An argument value as create receives it. create gets every argument of
 * the schema, in the schema's order, given or defaulted. values points to
 * count elements of the C type the arg type names (count is 1 for a
 * scalar, 0 for an optional argument without default that was not given).
 * Strings and arrays are the host's, valid during create: copy what you
 * keep. */
typedef struct dynop_arg {
    const char *name;
    dynop_arg_type type;
    int32_t given; /* nonzero if the caller gave it; zero if defaulted */
    uint32_t count;
    const void *values;
} dynop_arg;

/* An operator's backend for one device, registered from register with
 * dynop_host.register_operator.
 *
 * The host calls the functions per sample: setup and run receive the
 * sample's tensors, one per input and output. They may be called from
 * several threads at once for different instances, and for one instance
 * only if the operator sets DYNOP_OPERATOR_CONCURRENT (since 1.2): then
 * the host makes one instance and shares it between its workers, so what
 * create makes (tables, a model) is made once; setup and run must then
 * keep nothing in the instance.
 *
 *   create   makes an instance from the arguments; *instance is passed to
 *            the others (it may be NULL if the operator keeps no state).
 *            create and setup are required: the host refuses a NULL one.
 *   setup    fills in each outputs[i]: dtype, ndim (at most
 *            DYNOP_MAX_NDIM) and shape (an array of DYNOP_MAX_NDIM the
 *            host provides). data and strides are NULL during setup.
 *   run      computes outputs (allocated as setup said) from inputs; or,
 *            where the CPU matters, variants: one run per set of CPU
 *            features (see dynop_variant), of which the host calls one.
 *   destroy  frees an instance; may be NULL.
 *
 * A function that fails returns an error code, and may say why first with
 * dynop_host.set_error, from the same thread.
 *
 * Scratch (since 1.2). An operator that needs temporary memory for run
 * sets DYNOP_OPERATOR_SCRATCH in flags and takes it from the host instead
 * of allocating it: setup and run then get one tensor more after the
 * outputs, outputs[output_count] (output_count still counts the schema's
 * outputs only), the sample's scratch. setup finds it as a uint8 vector
 * with ndim 1 and shape[0] 0, and writes into shape[0] the bytes run will
 * need for the sample. run finds it with data pointing at that many bytes,
 * aligned to DYNOP_SCRATCH_ALIGN, uninitialized, shape[0] as setup wrote
 * it and strides[0] 1. The memory is the host's, valid for the call only:
 * a worker's arena that every operator it runs shares, reserved once for
 * the largest request and reused from batch to batch, so a steady-state
 * run allocates nothing. Hosts honour the flag from dynop_host 1.4 on: a
 * plugin that sets it checks DYNOP_HOST_HAS_SCRATCH(host) in register and
 * fails there on an older host, which would not pass the extra tensor. */
typedef dynop_result (*dynop_op_run_function)(void *instance, const dynop_tensor *outputs,
                                              uint32_t output_count, const dynop_tensor *inputs,
                                              uint32_t input_count);

typedef struct dynop_operator {
    dynop_header header; /* DYNOP_OPERATOR_TYPE */
    const char *name;    /* of a schema in the plugin's info */
    const char *device;  /* "cpu" */
    void *user_data;     /* passed to create */
    dynop_result (*create)(void *user_data, const dynop_arg *args, uint32_t arg_count, void **instance);
    dynop_result (*setup)(void *instance, const dynop_tensor *inputs, uint32_t input_count,
                          dynop_tensor *outputs, uint32_t output_count);
    dynop_op_run_function run; /* NULL if there are variants */
    void (*destroy)(void *instance);
    /* Since 1.1: */
    uint32_t variant_count;        /* entries in variants; 0 if run is the implementation */
    const dynop_variant *variants; /* implementations of run (dynop_op_run_function), best
                                    * first, the reference last; the host picks one when
                                    * it creates an instance and calls it as it would call
                                    * run. create,
                                    * setup and destroy are shared by all of them, and
                                    * every variant must compute what the reference does
                                    * (DYNOP_VERIFY_VARIANTS=1 checks) */
    /* Since 1.2: */
    uint32_t flags; /* DYNOP_OPERATOR_* flags; a host refuses bits it does not know */
} dynop_operator;

/* dynop_operator.flags: setup and run get a scratch tensor (see above). */
#define DYNOP_OPERATOR_SCRATCH UINT32_C(1)
/* dynop_operator.flags: setup and run may be called from several threads
 * at once for one instance (see above). */
#define DYNOP_OPERATOR_CONCURRENT UINT32_C(2)

/* The alignment of scratch memory, in bytes. */
#define DYNOP_SCRATCH_ALIGN 64

/* DYNOP_OPERATOR(name, device, user_data, create, setup, run, destroy)
 * initializes a dynop_operator with a single run. */
#define DYNOP_OPERATOR(name, device, user_data, create, setup, run, destroy)  \
    DYNOP_OPERATOR_FLAGS(name, device, user_data, create, setup, run, destroy, 0)

/* DYNOP_OPERATOR_FLAGS is DYNOP_OPERATOR with flags (DYNOP_OPERATOR_*). */
#define DYNOP_OPERATOR_FLAGS(name, device, user_data, create, setup, run, destroy, flags) \
    { DYNOP_OPERATOR_HEADER, name, device, user_data, create, setup, run, destroy, 0, NULL, flags }

/* DYNOP_OPERATOR_VARIANTS(name, device, user_data, create, setup, destroy,
 * variants) initializes a dynop_operator whose run comes in variants:
 * variants is a static array of dynop_variant, best first. */
#define DYNOP_OPERATOR_VARIANTS(name, device, user_data, create, setup, destroy, variants) \
    DYNOP_OPERATOR_VARIANTS_FLAGS(name, device, user_data, create, setup, destroy, variants, 0)

/* DYNOP_OPERATOR_VARIANTS_FLAGS is DYNOP_OPERATOR_VARIANTS with flags
 * (DYNOP_OPERATOR_*). */
#define DYNOP_OPERATOR_VARIANTS_FLAGS(name, device, user_data, create, setup, destroy, variants, flags) \
    { DYNOP_OPERATOR_HEADER, name, device, user_data, create, setup, NULL, destroy,                         \
      (uint32_t)(sizeof(variants) / sizeof((variants)[0])), variants, flags }

/* ------------------------------------------------------------------------
 * Graph passes
 * ------------------------------------------------------------------------ */

/* A graph pass changes a graph while the host builds it: populate passes
 * attach definitions to nodes, partition passes group nodes into
 * subgraphs, global passes see the whole graph last. A plugin declares
 * its passes in dynop_plugin_info.passes, data the host reads without
 * running the plugin, and registers their code from register with
 * dynop_host.register_pass. A build that needs one of the passes starts
 * the plugin; the graph keeps it started until the graph is closed.
 *
 * During a build the host calls the pass's run with a dynop_graph_builder:
 * a read-only view of the graph's nodes and the functions through which
 * the pass changes the graph. The builder and everything it points to
 * (nodes, their input arrays, strings) are the host's and live only while
 * run runs: copy what you keep, and never call the builder's functions
 * after run returns. Strings are UTF-8 and NUL-terminated.
 *
 * Threads: for one build, the host calls run from one thread at a time,
 * but it may be any thread, and builds of different graphs may run the
 * same pass on several threads at once (with the same user pointer). Call
 * the builder's functions only from within run, on the thread that called
 * it. A run that fails returns an error code and may say why first with
 * dynop_host.set_error, from the same thread. */

/* Kinds of pass, in dynop_pass_desc.kind: the order in which a build runs
 * them. */
typedef uint32_t dynop_pass_kind;
enum {
    DYNOP_PASS_POPULATE = 1,  /* attaches definitions to nodes it matches */
    DYNOP_PASS_PARTITION = 2, /* groups nodes into subgraph nodes */
    DYNOP_PASS_GLOBAL = 3     /* sees the whole graph, after partitioning */
};

/* No node: dynop_graph_builder.node outside populate passes. */
#define DYNOP_NO_NODE ((uint32_t)0xFFFFFFFFu)

#define DYNOP_PASS_DESC_TYPE                                                  \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0B)
#define DYNOP_PASS_DESC_VERSION_MAJOR 1
#define DYNOP_PASS_DESC_VERSION DYNOP_V(DYNOP_PASS_DESC_VERSION_MAJOR, 0, 0)
#define DYNOP_PASS_DESC_HEADER                                                \
    DYNOP_HEADER(DYNOP_PASS_DESC_TYPE, DYNOP_PASS_DESC_VERSION, dynop_pass_desc)

#define DYNOP_GRAPH_NODE_TYPE                                                 \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0C)
#define DYNOP_GRAPH_NODE_VERSION_MAJOR 1
#define DYNOP_GRAPH_NODE_VERSION DYNOP_V(DYNOP_GRAPH_NODE_VERSION_MAJOR, 0, 0)
#define DYNOP_GRAPH_NODE_HEADER                                               \
    DYNOP_HEADER(DYNOP_GRAPH_NODE_TYPE, DYNOP_GRAPH_NODE_VERSION, dynop_graph_node)

#define DYNOP_GRAPH_BUILDER_TYPE                                              \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0D)
#define DYNOP_GRAPH_BUILDER_VERSION_MAJOR 1
#define DYNOP_GRAPH_BUILDER_VERSION DYNOP_V(DYNOP_GRAPH_BUILDER_VERSION_MAJOR, 1, 0)
#define DYNOP_GRAPH_BUILDER_HEADER                                            \
    DYNOP_HEADER(DYNOP_GRAPH_BUILDER_TYPE, DYNOP_GRAPH_BUILDER_VERSION, dynop_graph_builder)

#define DYNOP_PASS_TYPE                                                       \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0E)
#define DYNOP_PASS_VERSION_MAJOR 1
#define DYNOP_PASS_VERSION DYNOP_V(DYNOP_PASS_VERSION_MAJOR, 0, 0)
#define DYNOP_PASS_HEADER                                                     \
    DYNOP_HEADER(DYNOP_PASS_TYPE, DYNOP_PASS_VERSION, dynop_pass)

/* A pass, as dynop_plugin_info.passes declares it. The strings are the
 * plugin's, like the rest of its info. */
typedef struct dynop_pass_desc {
    dynop_header header;  /* DYNOP_PASS_DESC_TYPE */
    const char *name;     /* unique among the host's passes, such as "acme.fuse-blur";
                           * a letter, then letters, digits and _ . + - */
    dynop_pass_kind kind; /* DYNOP_PASS_* */
    const char *match;    /* populate passes: the node name or node kind whose nodes
                           * they populate (a name wins over a kind); NULL for the others */
    int32_t priority;     /* higher runs first; ties by name. Populate passes with
                           * the same match are tried in this order until one
                           * attaches a definition */
    const char *doc;      /* what the pass does, in a sentence; may be NULL */
} dynop_pass_desc;

/* DYNOP_PASS_DESC(name, kind, match, priority, doc) initializes a
 * dynop_pass_desc. */
#define DYNOP_PASS_DESC(name, kind, match, priority, doc)                     \
    { DYNOP_PASS_DESC_HEADER, name, kind, match, priority, doc }

/* One node of the graph a pass sees: an element of dynop_graph_builder.nodes.
 * Graph inputs are nodes too: kind "", no inputs, no definition. */
typedef struct dynop_graph_node {
    dynop_header header;     /* DYNOP_GRAPH_NODE_TYPE */
    const char *name;        /* unique in the graph */
    const char *kind;        /* the definition the node asks for, typically an
                              * operator name; "" for a graph input */
    const char *definition;  /* the name of the definition attached (an operator
                              * name, a subgraph's name), or NULL if none is yet */
    uint32_t input_count;    /* entries in inputs and input_outputs */
    const uint32_t *inputs;  /* for each input of the node, the index in
                              * dynop_graph_builder.nodes of the node producing it;
                              * NULL if input_count is 0 */
    const uint32_t *input_outputs; /* for each input, which output of that
                              * producer feeds it (0 for a graph input) */
    const char *args_json;   /* the node's arguments as a JSON object text ("{}" if
                              * none), or NULL if the host cannot write them as JSON */
} dynop_graph_node;

/* The graph as a running pass sees it, and the functions that change it.
 * Functions that fail return an error code; dynop_host.last_error then says
 * why, and if run returns an error without calling set_error, the host
 * reports the last such failure as run's reason. */
typedef struct dynop_graph_builder dynop_graph_builder;
struct dynop_graph_builder {
    dynop_header header;            /* DYNOP_GRAPH_BUILDER_TYPE */
    uint32_t node_count;            /* entries in nodes */
    const dynop_graph_node *nodes;  /* the graph's nodes, inputs included, in the
                                     * order they were added; step through them with
                                     * DYNOP_GRAPH_NODE, which uses nodes[0]'s size */
    uint32_t node;                  /* populate passes: the index of the node to
                                     * populate; DYNOP_NO_NODE for other passes */
    void *context;                  /* the host's; opaque to the pass */

    /* Instantiates operator op (from the operators of the host's build,
     * any plugin's) with args_json, a JSON object text such as
     * "{\"factor\": 2}", or NULL for the node's own arguments, on the
     * node's device, and attaches it to node nodes[node], replacing any
     * definition it has; nodes[node].definition then names op. Any kind of
     * pass may call it; it is what populate passes are for. A graph input
     * takes no definition. */
    dynop_result (*set_operator)(const dynop_graph_builder *b, uint32_t node, const char *op,
                                 const char *args_json);

    /* Partition passes only: asks to replace count nodes, given by their
     * indices, by a single node called name whose definition is a
     * subgraph of them, run serially. The groups a run asks for are
     * committed, in order, when run returns successfully; until then nodes
     * stays as it is. A group must be convex: no path may leave it and
     * come back. */
    dynop_result (*group)(const dynop_graph_builder *b, const char *name, const uint32_t *nodes,
                          uint32_t count);

    /* Since 1.1 (check with DYNOP_HAS_MEMBER): the graph's outputs, what
     * the graph hands its caller. For each, outputs has the index in
     * nodes of the node that makes it and output_outputs which of that
     * node's outputs it is; a pass that changes what a node computes
     * checks that no graph output reads it. NULL if output_count is 0. */
    uint32_t output_count;
    const uint32_t *outputs;
    const uint32_t *output_outputs;
};

/* DYNOP_GRAPH_NODE(b, i) is a pointer to node i (less than node_count) of
 * builder b, stepping by the size in the first node's header, so that a
 * plugin built against this header can read nodes of a larger, later
 * version; DYNOP_HAS_MEMBER tells which members a node has. */
#define DYNOP_GRAPH_NODE(b, i)                                                \
    ((const dynop_graph_node *)(const void *)((const char *)(b)->nodes +     \
                                              (size_t)(i) * (b)->nodes[0].header.size))

/* The code of a pass the plugin's info declares, registered from register
 * with dynop_host.register_pass. The struct must stay valid until the
 * plugin is unloaded.
 *
 *   run  runs the pass over the graph in b, with user. A populate pass
 *        attaches a definition to node b->node, or leaves it to the next
 *        pass (returning DYNOP_OK either way); a partition pass groups
 *        nodes; a global pass checks or changes what it sees. An error
 *        fails the build. */
typedef struct dynop_pass {
    dynop_header header; /* DYNOP_PASS_TYPE */
    const char *name;    /* of a pass in the plugin's info */
    void *user;          /* passed to run */
    dynop_result (*run)(void *user, const dynop_graph_builder *b);
} dynop_pass;

/* ------------------------------------------------------------------------
 * Plugin information
 * ------------------------------------------------------------------------ */

/* Type UIDs and current versions of the ABI structs: for each, _TYPE is
 * its UID, _VERSION its layout version, and _HEADER its header, ready to
 * start a static initializer. A host reads every minor version of a major
 * it knows. */
#define DYNOP_INTERFACE_DESC_TYPE                                             \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x01)
#define DYNOP_INTERFACE_DESC_VERSION_MAJOR 1
#define DYNOP_INTERFACE_DESC_VERSION DYNOP_V(DYNOP_INTERFACE_DESC_VERSION_MAJOR, 0, 0)
#define DYNOP_INTERFACE_DESC_HEADER                                           \
    DYNOP_HEADER(DYNOP_INTERFACE_DESC_TYPE, DYNOP_INTERFACE_DESC_VERSION, dynop_interface_desc)

#define DYNOP_NEED_TYPE                                                       \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x02)
#define DYNOP_NEED_VERSION_MAJOR 1
#define DYNOP_NEED_VERSION DYNOP_V(DYNOP_NEED_VERSION_MAJOR, 0, 0)
#define DYNOP_NEED_HEADER                                                     \
    DYNOP_HEADER(DYNOP_NEED_TYPE, DYNOP_NEED_VERSION, dynop_need)

#define DYNOP_REQUIREMENTS_TYPE                                               \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x03)
#define DYNOP_REQUIREMENTS_VERSION_MAJOR 1
#define DYNOP_REQUIREMENTS_VERSION DYNOP_V(DYNOP_REQUIREMENTS_VERSION_MAJOR, 1, 0)
#define DYNOP_REQUIREMENTS_HEADER                                             \
    DYNOP_HEADER(DYNOP_REQUIREMENTS_TYPE, DYNOP_REQUIREMENTS_VERSION, dynop_requirements)

#define DYNOP_PLUGIN_INFO_TYPE                                                \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x04)
#define DYNOP_PLUGIN_INFO_VERSION_MAJOR 1
#define DYNOP_PLUGIN_INFO_VERSION DYNOP_V(DYNOP_PLUGIN_INFO_VERSION_MAJOR, 2, 0)
#define DYNOP_PLUGIN_INFO_HEADER                                              \
    DYNOP_HEADER(DYNOP_PLUGIN_INFO_TYPE, DYNOP_PLUGIN_INFO_VERSION, dynop_plugin_info)

#define DYNOP_HOST_TYPE                                                       \
    DYNOP_UID(0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x05)
#define DYNOP_HOST_VERSION_MAJOR 1
#define DYNOP_HOST_VERSION DYNOP_V(DYNOP_HOST_VERSION_MAJOR, 5, 0)
#define DYNOP_HOST_HEADER                                                     \
    DYNOP_HEADER(DYNOP_HOST_TYPE, DYNOP_HOST_VERSION, dynop_host)

/* One interface: its type UID, its version and a human-readable name such
 * as "acme.math.VecMath". In dynop_plugin_info it is an interface the
 * plugin provides, at the version it provides; in a dynop_need it is an
 * interface the plugin acquires, at the minimum version it needs. */
typedef struct dynop_interface_desc {
    dynop_header header; /* DYNOP_INTERFACE_DESC_TYPE */
    dynop_uid uid;
    dynop_version version;
    const char *name;
} dynop_interface_desc;

/* DYNOP_INTERFACE_DESC(uid, version, name) initializes a
 * dynop_interface_desc; uid is a DYNOP_UID(...), version a DYNOP_V(...). */
#define DYNOP_INTERFACE_DESC(uid, version, name)                              \
    { DYNOP_INTERFACE_DESC_HEADER, uid, version, name }

/* An interface that the plugin acquires from another plugin. It is
 * informational: it lets a host show and check dependencies before anything
 * runs. The acquisition itself happens through dynop_host.acquire. */
typedef struct dynop_need {
    dynop_header header; /* DYNOP_NEED_TYPE */
    const char *plugin;  /* the providing plugin's ID */
    const dynop_interface_desc *iface;
} dynop_need;

/* DYNOP_NEED(plugin_id, desc_pointer) initializes a dynop_need. */
#define DYNOP_NEED(plugin_id, desc) { DYNOP_NEED_HEADER, plugin_id, desc }

/* What a machine must offer for the plugin to run. Lists are
 * comma-separated, lower case, and empty or NULL for "no restriction":
 * os and arch use Go's GOOS and GOARCH names ("linux", "amd64"),
 * cpu_features golang.org/x/sys/cpu's ("avx2,fma"), gpu_vendor one of
 * "nvidia", "amd", "intel". A zero version means no minimum.
 *
 * libraries (since 1.1) names shared libraries by soname
 * ("libcuda.so.1,libnvinfer.so.8") that the plugin needs from the system
 * besides those its DT_NEEDED entries name, which the host checks anyway:
 * typically libraries it dlopens itself. A plugin whose libraries the
 * dynamic linker cannot find is unsupported, with each missing soname
 * named. Case is kept. */
typedef struct dynop_requirements {
    dynop_header header; /* DYNOP_REQUIREMENTS_TYPE */
    const char *os;
    dynop_version min_os_version;
    const char *arch;
    const char *cpu_features;
    const char *gpu_vendor;
    dynop_version gpu_min_arch;   /* NVIDIA: CUDA compute capability */
    dynop_version gpu_min_driver;
    /* Since 1.1: */
    const char *libraries;        /* sonames, comma-separated; may be NULL */
} dynop_requirements;

/* Flags in dynop_plugin_info.flags. */
enum {
    /* Load the library with RTLD_GLOBAL instead of RTLD_LOCAL, so that
     * libraries loaded after it resolve symbols against it (DALI's
     * global_symbols). Needed rarely, for example by libraries that
     * expect their symbols to be found by other libraries' dlopen. */
    DYNOP_PLUGIN_GLOBAL_SYMBOLS = 1u << 0,
    /* Load the library with RTLD_DEEPBIND: its own symbols, and those of
     * the libraries it links against (its bundled ones included), come
     * before the host process's when its references are bound. So a host
     * that has another library with the same symbols (another BLAS, say)
     * cannot interpose on the plugin's calls into its own. Hosts load
     * plugins so by default when it is safe (docs/symbols.md); the flag
     * asks for it even where the host would not. */
    DYNOP_PLUGIN_DEEP_BIND = 1u << 1,
    /* Never load the library with RTLD_DEEPBIND: the plugin relies on the
     * host's definitions of symbols winning over its dependencies'. */
    DYNOP_PLUGIN_NO_DEEP_BIND = 1u << 2
};

/* What get_info returns: who the plugin is and what it provides. The host
 * reads it before starting the plugin and again when it starts, and
 * expects the same content both times. */
typedef struct dynop_plugin_info {
    dynop_header header;          /* DYNOP_PLUGIN_INFO_TYPE */
    dynop_version api_version;    /* DYNOP_API_VERSION, the API the plugin was built for */
    const char *id;               /* vendor.plugin.name[.backend], e.g. "acme.plugin.blur" */
    dynop_version plugin_version; /* the plugin's own version */
    const char *description;      /* one sentence; may be NULL */
    const char *author;           /* may be NULL */
    const char *build;            /* e.g. a VCS revision; may be NULL */
    uint32_t flags;               /* DYNOP_PLUGIN_* flags */
    uint32_t interface_count;     /* entries in interfaces */
    const dynop_interface_desc *const *interfaces; /* what register adds */
    uint32_t need_count;          /* entries in needs */
    const dynop_need *const *needs;
    const dynop_requirements *requirements; /* may be NULL: runs anywhere */
    /* Since 1.1: */
    uint32_t operator_count;      /* entries in operators */
    const dynop_op_schema *const *operators; /* what register registers */
    /* Since 1.2: */
    uint32_t pass_count;          /* entries in passes */
    const dynop_pass_desc *const *passes; /* what register registers with register_pass */
} dynop_plugin_info;

/* ------------------------------------------------------------------------
 * The host table
 * ------------------------------------------------------------------------ */

typedef struct dynop_host dynop_host;

/* The host as a plugin sees it: a versioned table of functions, passed to
 * register and deregister. Every function takes the table itself first.
 * Functions that fail return an error code; dynop_host.last_error then says
 * why. */
struct dynop_host {
    dynop_header header;       /* DYNOP_HOST_TYPE */
    dynop_version api_version; /* the plugin API the host implements */

    /* Publishes an interface. iface points to a struct that starts with a
     * dynop_header whose type and version are those of an interface the
     * plugin's info declares. Allowed only during register. The struct
     * must stay valid until the plugin is unloaded. */
    dynop_result (*add_interface)(const dynop_host *host, const void *iface);

    /* Withdraws an interface the plugin added. Allowed during register and
     * deregister; the host removes whatever is left when the plugin stops. */
    dynop_result (*remove_interface)(const dynop_host *host, const dynop_uid *uid);

    /* Acquires interface uid of plugin plugin_id, at least min_version,
     * starting that plugin if needed. On success *iface points to the
     * interface struct and *ref is a reference to give back with release;
     * the struct stays valid until then. References the plugin still holds
     * when it stops are released by the host after deregister. Called from
     * register, a dependency cycle fails with DYNOP_ERROR_CYCLE instead of
     * waiting for ever. */
    dynop_result (*acquire)(const dynop_host *host, const char *plugin_id,
                            const dynop_uid *uid, dynop_version min_version,
                            const void **iface, dynop_ref *ref);

    /* Gives back a reference from acquire. Releasing a reference twice is
     * an error. Called from deregister, the release takes effect after the
     * plugin is unloaded: what it depended on outlives its code. */
    dynop_result (*release)(const dynop_host *host, dynop_ref ref);

    /* Writes message to the host's log at level, tagged with the plugin. */
    void (*log)(const dynop_host *host, dynop_log_level level, const char *message);

    /* Explains the error that the function of the plugin now running on
     * this thread (register, deregister, an operator function, a pass's
     * run) is about to return. The host copies message before set_error
     * returns. */
    void (*set_error)(const dynop_host *host, const char *message);

    /* Returns why the calling thread's last failed host call failed, or ""
     * if it succeeded. The string is the host's, valid until the thread's
     * next call into the host. */
    const char *(*last_error)(const dynop_host *host);

    /* Since 1.1: */

    /* Registers a backend of one of the operators the plugin's info
     * declares. Allowed only during register; register must register a
     * backend for every device of every operator it declares. The struct
     * must stay valid until the plugin is unloaded. */
    dynop_result (*register_operator)(const dynop_host *host, const dynop_operator *op);

    /* Since 1.2: */

    /* Registers the code of one of the passes the plugin's info declares;
     * pass->name must be one of them (the error lists them). Allowed only
     * during register; register must register every pass it declares. The
     * struct must stay valid until the plugin is unloaded. */
    dynop_result (*register_pass)(const dynop_host *host, const dynop_pass *pass);

    /* Since 1.3: */

    /* Returns the CPU features plugins may use: those the CPU has, less
     * those turned off (DYNOP_CPU_FEATURES). */
    dynop_cpu_features (*cpu_features)(const dynop_host *host);

    /* Chooses among count variants of the function called name (such as
     * "acme.math.VecMath.saxpy"), as the host chooses among an operator's:
     * returns the index of the first whose features are available, and
     * logs the choice (at debug level). For the functions of an
     * interface table, which a plugin fills in from register. Returns -1
     * if none can run (last_error names the missing features) or the list
     * is malformed. */
    int32_t (*select_variant)(const dynop_host *host, const char *name, const dynop_variant *variants,
                              uint32_t count);

    /* Since 1.4: no new function; the host honours dynop_operator.flags
     * (DYNOP_OPERATOR_SCRATCH, DYNOP_OPERATOR_CONCURRENT). */

    /* Since 1.5: */

    /* The absolute path of the plugin's file as the host found it on its
     * search path, for a plugin that reads data files shipped beside it
     * (the host loads a sealed copy of the file, so dladdr and $ORIGIN
     * do not name it). NULL where the plugin has no such file: a
     * WebAssembly plugin, which cannot open files. Valid while the
     * plugin is loaded. Check DYNOP_HOST_HAS_PLUGIN_PATH(host) first. */
    const char *plugin_path;
};

/* DYNOP_HOST_HAS_SCRATCH(host) is nonzero if host passes scratch to
 * operators that set DYNOP_OPERATOR_SCRATCH (dynop_host 1.4 and later). */
#define DYNOP_HOST_HAS_SCRATCH(host)                                          \
    ((host)->header.version.major == DYNOP_HOST_VERSION_MAJOR && (host)->header.version.minor >= 4)

/* DYNOP_HOST_HAS_PLUGIN_PATH(host) is nonzero if host has the member
 * plugin_path (dynop_host 1.5 and later); it may still be NULL. */
#define DYNOP_HOST_HAS_PLUGIN_PATH(host)                                      \
    ((host)->header.version.major == DYNOP_HOST_VERSION_MAJOR && (host)->header.version.minor >= 5)

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------ */

/* "get_info": returns the plugin's info, valid while the library is
 * loaded. It must not call into the host and must be cheap. */
typedef const dynop_plugin_info *(*dynop_get_info_function)(void);

/* "register": starts the plugin; see the lifecycle above. */
typedef dynop_result (*dynop_register_function)(const dynop_host *host);

/* "deregister": stops the plugin. Optional. Its failure is logged; the
 * plugin is unloaded regardless. */
typedef dynop_result (*dynop_deregister_function)(const dynop_host *host);

/* The single symbol a plugin exports: returns the entry point called name,
 * or NULL if the plugin has none by that name. */
DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name);

/* The symbol name the host looks up. */
#define DYNOP_PLUGIN_ENTRY_SYMBOL "dynop_plugin_get_function"

/* ------------------------------------------------------------------------
 * Layout checks. The layout is the ABI: these hold on every target.
 * ------------------------------------------------------------------------ */

#if defined(__cplusplus) && __cplusplus >= 201103L
#define DYNOP_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define DYNOP_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else /* C99: a negative array size fails to compile */
#define DYNOP_STATIC_ASSERT(cond, name) typedef char dynop_assert_##name[(cond) ? 1 : -1]
#endif

#define DYNOP_PTR_ ((size_t)sizeof(void *))
DYNOP_STATIC_ASSERT(sizeof(dynop_uid) == 16, uid_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_version) == 12, version_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_header) == 32, header_size);
DYNOP_STATIC_ASSERT(offsetof(dynop_header, version) == 16, header_version_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_header, size) == 28, header_size_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_interface_desc, uid) == 32, desc_uid_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_interface_desc, name) == (DYNOP_PTR_ == 8 ? 64 : 60), desc_name_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_plugin_info, api_version) == 32, info_api_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_plugin_info, id) == (DYNOP_PTR_ == 8 ? 48 : 44), info_id_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_host, api_version) == 32, host_api_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_host, add_interface) == (DYNOP_PTR_ == 8 ? 48 : 44), host_first_fn_offset);
DYNOP_STATIC_ASSERT(sizeof(dynop_host) == (DYNOP_PTR_ == 8 ? 48 : 44) + 12 * DYNOP_PTR_, host_size);
DYNOP_STATIC_ASSERT(offsetof(dynop_requirements, libraries) == sizeof(dynop_requirements) - DYNOP_PTR_, requirements_libraries_last);
/* features, a uint64_t, follows the target's alignment for it: offset 40
 * on 64-bit targets and wasm32, 36 on i386. */
DYNOP_STATIC_ASSERT(DYNOP_PTR_ != 8 || (offsetof(dynop_variant, features) == 40 && sizeof(dynop_variant) == 56),
                    variant_layout);
DYNOP_STATIC_ASSERT(offsetof(dynop_plugin_info, passes) == sizeof(dynop_plugin_info) - DYNOP_PTR_, info_passes_last);
DYNOP_STATIC_ASSERT(offsetof(dynop_pass_desc, name) == 32, pass_desc_name_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_pass_desc, kind) == 32 + DYNOP_PTR_, pass_desc_kind_offset);
DYNOP_STATIC_ASSERT(sizeof(dynop_pass_desc) == (DYNOP_PTR_ == 8 ? 72 : 52), pass_desc_size);
DYNOP_STATIC_ASSERT(offsetof(dynop_graph_node, input_count) == 32 + 3 * DYNOP_PTR_, graph_node_count_offset);
DYNOP_STATIC_ASSERT(sizeof(dynop_graph_node) == (DYNOP_PTR_ == 8 ? 88 : 60), graph_node_size);
DYNOP_STATIC_ASSERT(offsetof(dynop_graph_builder, nodes) == 32 + DYNOP_PTR_, builder_nodes_offset);
DYNOP_STATIC_ASSERT(sizeof(dynop_graph_builder) == (DYNOP_PTR_ == 8 ? 104 : 68), builder_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_pass) == 32 + 3 * DYNOP_PTR_, pass_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_device) == 8 && sizeof(dynop_dtype) == 4, dlpack_value_sizes);
DYNOP_STATIC_ASSERT(offsetof(dynop_tensor, device) == DYNOP_PTR_, tensor_device_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_tensor, ndim) == DYNOP_PTR_ + 8, tensor_ndim_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_tensor, dtype) == DYNOP_PTR_ + 12, tensor_dtype_offset);
DYNOP_STATIC_ASSERT(offsetof(dynop_tensor, shape) == DYNOP_PTR_ + 16, tensor_shape_offset);
/* byte_offset, a uint64_t, follows the target's alignment for it, as in
 * DLPack: offset 40 on 64-bit targets; 32 on wasm32, 28 on i386. */
DYNOP_STATIC_ASSERT(DYNOP_PTR_ != 8 || (offsetof(dynop_tensor, byte_offset) == 40 && sizeof(dynop_tensor) == 48),
                    tensor_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_arg) == (DYNOP_PTR_ == 8 ? 32 : 20), arg_size);
DYNOP_STATIC_ASSERT(sizeof(dynop_result) == 4 && sizeof(dynop_ref) == 8, scalar_sizes);
#undef DYNOP_PTR_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DYNOP_DYNOP_H */
