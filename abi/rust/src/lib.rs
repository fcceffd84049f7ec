//! dynop — `#[repr(C)]` bindings of the dynop C ABI,
//! `abi/include/dynop/dynop.h` (API 0.1.0), written by hand so that a
//! plugin needs no other crate: read the header for what each struct and
//! function means. A plugin depends on this crate by path
//! (`dynop = { path = "..." }`; `dynop new --lang rust` writes it).
//!
//! Names are the header's: `dynop_header`, `DYNOP_OK`, and members that
//! are Rust keywords are raw identifiers (`r#type`, `r#fn`, `r#match`).
//! Function pointers that may be NULL are `Option<unsafe extern "C" fn>`.
//! The header's initializer macros are `const fn`s (`uid`, `version`,
//! `header`, `variant`, `interface_desc`), DYNOP_HAS_MEMBER is
//! `dynop_has_member!`; where the header has an initializer macro for a
//! big struct (DYNOP_OPERATOR, DYNOP_NEED, ...), write a struct literal.
//!
//! The structs a plugin keeps in statics (its info, schemas, variants,
//! operators) hold raw pointers, and are `Sync` here so that a `static`
//! may hold them (see the end of this file).
//!
//! A panic must not unwind out of an `extern "C"` function into the host
//! (Rust aborts the process when one does): run the body of every entry
//! point in [`guard`] or [`catch_panic`], which turn a panic into an error
//! result whose message the host reports. See `guard.rs`.
//!
//! The layout is the ABI. The compile-time asserts at the end mirror the
//! header's; `tests/bindings.rs` checks every size and offset; and dynop's
//! own tests (TestRustBindingsMatchHeader) compare every struct, member
//! and constant here with what a C compiler makes of the header. Change
//! this file only with the header.
#![allow(non_camel_case_types)]
#![warn(unsafe_op_in_unsafe_fn)]

use std::ffi::c_void;
use std::os::raw::c_char;

mod guard;
pub use guard::{catch_panic, guard, log, panic_message, set_error, HostCell};

/* ------------------------------------------------------------------------
 * Versions of this header
 * ------------------------------------------------------------------------ */

/// The plugin API the header describes: dynop_plugin_info.api_version.
pub const DYNOP_API_VERSION_MAJOR: u32 = 0;
pub const DYNOP_API_VERSION_MINOR: u32 = 1;
pub const DYNOP_API_VERSION_PATCH: u32 = 0;
pub const DYNOP_API_VERSION: dynop_version = version(
    DYNOP_API_VERSION_MAJOR,
    DYNOP_API_VERSION_MINOR,
    DYNOP_API_VERSION_PATCH,
);

/* ------------------------------------------------------------------------
 * Value types
 * ------------------------------------------------------------------------ */

/// A 128-bit type identifier: the 16 bytes of its text form, in order.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dynop_uid {
    pub bytes: [u8; 16],
}

/// DYNOP_UID: `uid(0x3F0B6D52, 0x8A8C, 0x4E55, 0x9C, 0x5E, 0x2B, 0x1B, 0x0D,
/// 0x6C, 0x7A, 0x11)` is UID 3F0B6D52-8A8C-4E55-9C5E-2B1B0D6C7A11, in the
/// field order of DYNOP_UID (and of a Windows GUID literal).
#[allow(clippy::too_many_arguments)]
pub const fn uid(
    d1: u32,
    d2: u16,
    d3: u16,
    b0: u8,
    b1: u8,
    b2: u8,
    b3: u8,
    b4: u8,
    b5: u8,
    b6: u8,
    b7: u8,
) -> dynop_uid {
    let a = d1.to_be_bytes();
    let b = d2.to_be_bytes();
    let c = d3.to_be_bytes();
    dynop_uid {
        bytes: [
            a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], b0, b1, b2, b3, b4, b5, b6, b7,
        ],
    }
}

/// A semantic version: the plugin's own, or an interface's or ABI
/// struct's layout version.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dynop_version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// DYNOP_V.
pub const fn version(major: u32, minor: u32, patch: u32) -> dynop_version {
    dynop_version {
        major,
        minor,
        patch,
    }
}

/// The header every struct crossing the boundary starts with.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dynop_header {
    /// What struct this is (for an interface, its UID).
    pub r#type: dynop_uid,
    /// Its layout version (for an interface, the interface version).
    pub version: dynop_version,
    /// sizeof the struct as its writer compiled it.
    pub size: u32,
}

/// DYNOP_HEADER: the header of a struct of type T.
pub const fn header<T>(type_uid: dynop_uid, version: dynop_version) -> dynop_header {
    dynop_header {
        r#type: type_uid,
        version,
        size: std::mem::size_of::<T>() as u32,
    }
}

/// Whether a struct whose header says `size` holds the member at `offset`
/// of `member_size` bytes: what `dynop_has_member!` computes.
pub const fn has_member(size: u32, offset: usize, member_size: usize) -> bool {
    size as usize >= offset + member_size
}

/// The size of what p points to, which may be uninitialized.
pub const fn size_of_pointee<T>(_p: *const T) -> usize {
    std::mem::size_of::<T>()
}

/// `dynop_offset_of!(T, member)` is C's `offsetof(T, member)`, in bytes
/// (core::mem::offset_of!, which needs Rust 1.77; this works from 1.51).
#[macro_export]
macro_rules! dynop_offset_of {
    ($T:ty, $member:ident) => {{
        let value = ::core::mem::MaybeUninit::<$T>::uninit();
        let base = value.as_ptr();
        // SAFETY: addr_of! takes the member's address without reading it
        // or making a reference to it.
        #[allow(unused_unsafe)]
        let member = unsafe { ::core::ptr::addr_of!((*base).$member) };
        member as usize - base as usize
    }};
}

/// DYNOP_HAS_MEMBER: `dynop_has_member!(T, p, member)` is true if `p` (a
/// `&T`, T starting with a dynop_header named header) is large enough to
/// contain member: test it before reading a member that was added after
/// the struct's first version.
#[macro_export]
macro_rules! dynop_has_member {
    ($T:ty, $p:expr, $member:ident) => {{
        let value = ::core::mem::MaybeUninit::<$T>::uninit();
        let base = value.as_ptr();
        // SAFETY: as in dynop_offset_of!.
        #[allow(unused_unsafe)]
        let member = unsafe { ::core::ptr::addr_of!((*base).$member) };
        let p: &$T = $p;
        $crate::has_member(
            p.header.size,
            member as usize - base as usize,
            $crate::size_of_pointee(member),
        )
    }};
}

/// A NUL-terminated byte string literal as a C string: `cstr(b"cpu\0")`.
/// Evaluated in a constant or a static, a missing NUL fails to compile.
/// (From Rust 1.77, `c"cpu".as_ptr()` does the same.)
pub const fn cstr(s: &'static [u8]) -> *const c_char {
    assert!(
        !s.is_empty() && s[s.len() - 1] == 0,
        "a C string needs a NUL at the end: b\"...\\0\""
    );
    s.as_ptr() as *const c_char
}

/// A list of pointers to statics, as dynop_plugin_info's lists want it:
/// `list(&PROVIDES)` where `static PROVIDES: [&dynop_interface_desc; 1]`.
pub const fn list<T>(items: &'static [&'static T]) -> *const *const T {
    items.as_ptr() as *const *const T
}

/* ------------------------------------------------------------------------
 * Results, log levels, references
 * ------------------------------------------------------------------------ */

pub type dynop_result = i32;
pub const DYNOP_OK: dynop_result = 0;
pub const DYNOP_ERROR: dynop_result = 1;
pub const DYNOP_ERROR_INVALID_ARGUMENT: dynop_result = 2;
pub const DYNOP_ERROR_NOT_FOUND: dynop_result = 3;
pub const DYNOP_ERROR_VERSION: dynop_result = 4;
pub const DYNOP_ERROR_STATE: dynop_result = 5;
pub const DYNOP_ERROR_CYCLE: dynop_result = 6;
pub const DYNOP_ERROR_NO_MEMORY: dynop_result = 7;
pub const DYNOP_ERROR_UNSUPPORTED: dynop_result = 8;
pub const DYNOP_ERROR_DUPLICATE: dynop_result = 9;
pub const DYNOP_ERROR_TYPE: dynop_result = 10;
pub const DYNOP_ERROR_CLOSED: dynop_result = 11;

pub type dynop_log_level = i32;
pub const DYNOP_LOG_DEBUG: dynop_log_level = -4;
pub const DYNOP_LOG_INFO: dynop_log_level = 0;
pub const DYNOP_LOG_WARN: dynop_log_level = 4;
pub const DYNOP_LOG_ERROR: dynop_log_level = 8;

pub type dynop_ref = u64;

/* ------------------------------------------------------------------------
 * Tensors: DLPack's DLTensor, byte for byte
 * ------------------------------------------------------------------------ */

pub const DYNOP_DEVICE_CPU: i32 = 1;
pub const DYNOP_DEVICE_CUDA: i32 = 2;
pub const DYNOP_DEVICE_CUDA_HOST: i32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dynop_device {
    pub device_type: i32,
    pub device_id: i32,
}

pub const DYNOP_DTYPE_INT: u8 = 0;
pub const DYNOP_DTYPE_UINT: u8 = 1;
pub const DYNOP_DTYPE_FLOAT: u8 = 2;
pub const DYNOP_DTYPE_OPAQUE_HANDLE: u8 = 3;
pub const DYNOP_DTYPE_BFLOAT: u8 = 4;
pub const DYNOP_DTYPE_COMPLEX: u8 = 5;
pub const DYNOP_DTYPE_BOOL: u8 = 6;

/// An element type: uint8 is { code: DYNOP_DTYPE_UINT, bits: 8, lanes: 1 }.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dynop_dtype {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// A tensor: element [i0, i1, ...] lies at data + byte_offset +
/// (i0*strides[0] + i1*strides[1] + ...) * element size. Shapes and
/// strides count elements.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_tensor {
    pub data: *mut c_void,
    pub device: dynop_device,
    pub ndim: i32,
    pub dtype: dynop_dtype,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// The most dimensions an operator's output may have.
pub const DYNOP_MAX_NDIM: u32 = 16;

/// A generic function pointer; transmute it to the type its name says.
pub type dynop_function = Option<unsafe extern "C" fn()>;

/* ------------------------------------------------------------------------
 * CPU features and variants
 * ------------------------------------------------------------------------ */

pub type dynop_cpu_features = u64;

// x86 (386, amd64)
pub const DYNOP_CPU_SSE2: dynop_cpu_features = 1 << 0;
pub const DYNOP_CPU_SSE3: dynop_cpu_features = 1 << 1;
pub const DYNOP_CPU_SSSE3: dynop_cpu_features = 1 << 2;
pub const DYNOP_CPU_SSE41: dynop_cpu_features = 1 << 3;
pub const DYNOP_CPU_SSE42: dynop_cpu_features = 1 << 4;
pub const DYNOP_CPU_POPCNT: dynop_cpu_features = 1 << 5;
pub const DYNOP_CPU_AVX: dynop_cpu_features = 1 << 6;
pub const DYNOP_CPU_AVX2: dynop_cpu_features = 1 << 7;
pub const DYNOP_CPU_FMA: dynop_cpu_features = 1 << 8;
pub const DYNOP_CPU_F16C: dynop_cpu_features = 1 << 9;
pub const DYNOP_CPU_BMI1: dynop_cpu_features = 1 << 10;
pub const DYNOP_CPU_BMI2: dynop_cpu_features = 1 << 11;
pub const DYNOP_CPU_LZCNT: dynop_cpu_features = 1 << 12;
pub const DYNOP_CPU_MOVBE: dynop_cpu_features = 1 << 13;
pub const DYNOP_CPU_AVX512F: dynop_cpu_features = 1 << 14;
pub const DYNOP_CPU_AVX512BW: dynop_cpu_features = 1 << 15;
pub const DYNOP_CPU_AVX512VL: dynop_cpu_features = 1 << 16;
pub const DYNOP_CPU_AVX512DQ: dynop_cpu_features = 1 << 17;
pub const DYNOP_CPU_AVX512CD: dynop_cpu_features = 1 << 18;
pub const DYNOP_CPU_AVX512VNNI: dynop_cpu_features = 1 << 19;
pub const DYNOP_CPU_AVX512BF16: dynop_cpu_features = 1 << 20;
pub const DYNOP_CPU_AVX512IFMA: dynop_cpu_features = 1 << 21;
pub const DYNOP_CPU_AVX512VBMI: dynop_cpu_features = 1 << 22;
pub const DYNOP_CPU_AVX512VBMI2: dynop_cpu_features = 1 << 23;
pub const DYNOP_CPU_AVX512BITALG: dynop_cpu_features = 1 << 24;
pub const DYNOP_CPU_AVX512VPOPCNTDQ: dynop_cpu_features = 1 << 25;
pub const DYNOP_CPU_AVXVNNI: dynop_cpu_features = 1 << 26;
// arm64
pub const DYNOP_CPU_ASIMD: dynop_cpu_features = 1 << 32;
pub const DYNOP_CPU_ASIMDDP: dynop_cpu_features = 1 << 33;
pub const DYNOP_CPU_ASIMDHP: dynop_cpu_features = 1 << 34;
pub const DYNOP_CPU_ASIMDFHM: dynop_cpu_features = 1 << 35;
pub const DYNOP_CPU_ASIMDRDM: dynop_cpu_features = 1 << 36;
pub const DYNOP_CPU_I8MM: dynop_cpu_features = 1 << 37;
pub const DYNOP_CPU_SVE: dynop_cpu_features = 1 << 38;
pub const DYNOP_CPU_SVE2: dynop_cpu_features = 1 << 39;
pub const DYNOP_CPU_FPHP: dynop_cpu_features = 1 << 40;
pub const DYNOP_CPU_NEON: dynop_cpu_features = DYNOP_CPU_ASIMD;

pub const DYNOP_VARIANT_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0F,
);
pub const DYNOP_VARIANT_VERSION_MAJOR: u32 = 1;
pub const DYNOP_VARIANT_VERSION: dynop_version = version(DYNOP_VARIANT_VERSION_MAJOR, 0, 0);
pub const DYNOP_VARIANT_HEADER: dynop_header =
    header::<dynop_variant>(DYNOP_VARIANT_TYPE, DYNOP_VARIANT_VERSION);

/// One implementation of a function for the CPU features it needs. A list
/// of variants is an array of these, best first, the reference last.
/// Compile each with `#[target_feature(enable = "...")]` on the function.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_variant {
    pub header: dynop_header,
    /// "avx2", "scalar": unique in its list; a letter, then letters,
    /// digits and _.
    pub name: *const c_char,
    /// DYNOP_CPU_* bits it needs; 0 for none.
    pub features: dynop_cpu_features,
    /// The implementation, transmuted to dynop_function.
    pub r#fn: dynop_function,
}

/// DYNOP_VARIANT.
pub const fn variant(
    name: *const c_char,
    features: dynop_cpu_features,
    f: dynop_function,
) -> dynop_variant {
    dynop_variant {
        header: DYNOP_VARIANT_HEADER,
        name,
        features,
        r#fn: f,
    }
}

/* ------------------------------------------------------------------------
 * Operators
 * ------------------------------------------------------------------------ */

pub type dynop_arg_type = i32;
pub const DYNOP_ARG_INT: dynop_arg_type = 1; // i64
pub const DYNOP_ARG_FLOAT: dynop_arg_type = 2; // f64
pub const DYNOP_ARG_BOOL: dynop_arg_type = 3; // i32, 0 or 1
pub const DYNOP_ARG_STRING: dynop_arg_type = 4; // *const c_char
pub const DYNOP_ARG_DTYPE: dynop_arg_type = 5; // dynop_dtype
pub const DYNOP_ARG_INT_LIST: dynop_arg_type = 6;
pub const DYNOP_ARG_FLOAT_LIST: dynop_arg_type = 7;
pub const DYNOP_ARG_BOOL_LIST: dynop_arg_type = 8;
pub const DYNOP_ARG_STRING_LIST: dynop_arg_type = 9;
pub const DYNOP_ARG_DTYPE_LIST: dynop_arg_type = 10;

/// Flags in dynop_op_arg.flags.
pub const DYNOP_ARG_REQUIRED: u32 = 1 << 0;
pub const DYNOP_ARG_HAS_MIN: u32 = 1 << 1;
pub const DYNOP_ARG_HAS_MAX: u32 = 1 << 2;
/// The value must be above min, not equal to it (hosts from dynop_host 1.4).
pub const DYNOP_ARG_MIN_EXCLUSIVE: u32 = 1 << 3;
/// The value must be below max, not equal to it (hosts from dynop_host 1.4).
pub const DYNOP_ARG_MAX_EXCLUSIVE: u32 = 1 << 4;

pub const DYNOP_OP_INPUT_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x06,
);
pub const DYNOP_OP_INPUT_VERSION_MAJOR: u32 = 1;
pub const DYNOP_OP_INPUT_VERSION: dynop_version = version(DYNOP_OP_INPUT_VERSION_MAJOR, 1, 0);
pub const DYNOP_OP_INPUT_HEADER: dynop_header =
    header::<dynop_op_input>(DYNOP_OP_INPUT_TYPE, DYNOP_OP_INPUT_VERSION);

pub const DYNOP_OP_OUTPUT_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x07,
);
pub const DYNOP_OP_OUTPUT_VERSION_MAJOR: u32 = 1;
pub const DYNOP_OP_OUTPUT_VERSION: dynop_version = version(DYNOP_OP_OUTPUT_VERSION_MAJOR, 2, 0);
pub const DYNOP_OP_OUTPUT_HEADER: dynop_header =
    header::<dynop_op_output>(DYNOP_OP_OUTPUT_TYPE, DYNOP_OP_OUTPUT_VERSION);

pub const DYNOP_OP_ARG_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x08,
);
pub const DYNOP_OP_ARG_VERSION_MAJOR: u32 = 1;
pub const DYNOP_OP_ARG_VERSION: dynop_version = version(DYNOP_OP_ARG_VERSION_MAJOR, 0, 0);
pub const DYNOP_OP_ARG_HEADER: dynop_header =
    header::<dynop_op_arg>(DYNOP_OP_ARG_TYPE, DYNOP_OP_ARG_VERSION);

pub const DYNOP_OP_SCHEMA_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x09,
);
pub const DYNOP_OP_SCHEMA_VERSION_MAJOR: u32 = 1;
pub const DYNOP_OP_SCHEMA_VERSION: dynop_version = version(DYNOP_OP_SCHEMA_VERSION_MAJOR, 0, 0);
pub const DYNOP_OP_SCHEMA_HEADER: dynop_header =
    header::<dynop_op_schema>(DYNOP_OP_SCHEMA_TYPE, DYNOP_OP_SCHEMA_VERSION);

pub const DYNOP_OPERATOR_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0A,
);
pub const DYNOP_OPERATOR_VERSION_MAJOR: u32 = 1;
pub const DYNOP_OPERATOR_VERSION: dynop_version = version(DYNOP_OPERATOR_VERSION_MAJOR, 2, 0);
pub const DYNOP_OPERATOR_HEADER: dynop_header =
    header::<dynop_operator>(DYNOP_OPERATOR_TYPE, DYNOP_OPERATOR_VERSION);

/// One input of an operator. Lists are comma-separated, NULL or "" for
/// any; ndim 0 means any.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_op_input {
    pub header: dynop_header,
    pub name: *const c_char,
    pub doc: *const c_char,
    pub dtypes: *const c_char,
    pub layouts: *const c_char,
    pub ndim: i32,
    // Since 1.1:
    /// The sizes the layout's C dimension may have ("1,3,4"; null: any).
    pub channels: *const c_char,
}

/// One output of an operator.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_op_output {
    pub header: dynop_header,
    pub name: *const c_char,
    pub doc: *const c_char,
    pub layout: *const c_char,
    // Since 1.1: what the host checks pipelines with (null or 0: unknown).
    /// The dtypes the output may have ("uint8").
    pub dtypes: *const c_char,
    /// A dtype argument whose value is the output's dtype.
    pub dtype_arg: *const c_char,
    /// An input whose dtype (and layout, ndim) the output has.
    pub like: *const c_char,
    pub ndim: i32,
    // Since 1.2: the size of the C dimension.
    /// An int argument whose value it is.
    pub channels_arg: *const c_char,
    /// The count, DYNOP_CHANNELS_LIKE for that of the like input, 0 unknown.
    pub channels: i32,
}

/// dynop_op_output.channels of an output with as many channels as its
/// like input.
pub const DYNOP_CHANNELS_LIKE: i32 = -1;

/// One argument of an operator. Values are JSON text.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_op_arg {
    pub header: dynop_header,
    pub name: *const c_char,
    pub doc: *const c_char,
    /// DYNOP_ARG_*
    pub r#type: dynop_arg_type,
    /// DYNOP_ARG_REQUIRED, DYNOP_ARG_HAS_MIN, DYNOP_ARG_HAS_MAX
    pub flags: u32,
    pub min: f64,
    pub max: f64,
    pub default_value: *const c_char,
    pub allowed: *const c_char,
    pub deprecated: *const c_char,
}

/// An operator's schema, listed in dynop_plugin_info.operators.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_op_schema {
    pub header: dynop_header,
    pub name: *const c_char,
    pub doc: *const c_char,
    pub devices: *const c_char,
    pub input_count: u32,
    pub optional_inputs: u32,
    pub inputs: *const dynop_op_input,
    pub output_count: u32,
    pub outputs: *const dynop_op_output,
    pub arg_count: u32,
    pub args: *const dynop_op_arg,
}

/// An argument value as create receives it: values points to count
/// elements of the type the arg type names. The host's, valid during
/// create.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_arg {
    pub name: *const c_char,
    pub r#type: dynop_arg_type,
    pub given: i32,
    pub count: u32,
    pub values: *const c_void,
}

pub type dynop_op_run_function = Option<
    unsafe extern "C" fn(
        instance: *mut c_void,
        outputs: *const dynop_tensor,
        output_count: u32,
        inputs: *const dynop_tensor,
        input_count: u32,
    ) -> dynop_result,
>;

/// An operator's backend for one device, registered from register with
/// dynop_host.register_operator.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_operator {
    pub header: dynop_header,
    pub name: *const c_char,
    pub device: *const c_char,
    pub user_data: *mut c_void,
    pub create: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            args: *const dynop_arg,
            arg_count: u32,
            instance: *mut *mut c_void,
        ) -> dynop_result,
    >,
    pub setup: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            inputs: *const dynop_tensor,
            input_count: u32,
            outputs: *mut dynop_tensor,
            output_count: u32,
        ) -> dynop_result,
    >,
    /// None if there are variants.
    pub run: dynop_op_run_function,
    pub destroy: Option<unsafe extern "C" fn(instance: *mut c_void)>,
    // Since 1.1:
    pub variant_count: u32,
    /// Implementations of run (dynop_op_run_function), best first.
    pub variants: *const dynop_variant,
    // Since 1.2:
    /// DYNOP_OPERATOR_* flags.
    pub flags: u32,
}

/// dynop_operator.flags: setup and run get a scratch tensor after the
/// outputs (see dynop.h).
pub const DYNOP_OPERATOR_SCRATCH: u32 = 1;

/// dynop_operator.flags: setup and run may be called from several threads
/// at once for one instance (see dynop.h).
pub const DYNOP_OPERATOR_CONCURRENT: u32 = 2;

/// The alignment of scratch memory, in bytes.
pub const DYNOP_SCRATCH_ALIGN: u32 = 64;

/* ------------------------------------------------------------------------
 * Graph passes
 * ------------------------------------------------------------------------ */

pub type dynop_pass_kind = u32;
pub const DYNOP_PASS_POPULATE: dynop_pass_kind = 1;
pub const DYNOP_PASS_PARTITION: dynop_pass_kind = 2;
pub const DYNOP_PASS_GLOBAL: dynop_pass_kind = 3;

/// No node: dynop_graph_builder.node outside populate passes.
pub const DYNOP_NO_NODE: u32 = 0xFFFF_FFFF;

pub const DYNOP_PASS_DESC_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0B,
);
pub const DYNOP_PASS_DESC_VERSION_MAJOR: u32 = 1;
pub const DYNOP_PASS_DESC_VERSION: dynop_version = version(DYNOP_PASS_DESC_VERSION_MAJOR, 0, 0);
pub const DYNOP_PASS_DESC_HEADER: dynop_header =
    header::<dynop_pass_desc>(DYNOP_PASS_DESC_TYPE, DYNOP_PASS_DESC_VERSION);

pub const DYNOP_GRAPH_NODE_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0C,
);
pub const DYNOP_GRAPH_NODE_VERSION_MAJOR: u32 = 1;
pub const DYNOP_GRAPH_NODE_VERSION: dynop_version = version(DYNOP_GRAPH_NODE_VERSION_MAJOR, 0, 0);
pub const DYNOP_GRAPH_NODE_HEADER: dynop_header =
    header::<dynop_graph_node>(DYNOP_GRAPH_NODE_TYPE, DYNOP_GRAPH_NODE_VERSION);

pub const DYNOP_GRAPH_BUILDER_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0D,
);
pub const DYNOP_GRAPH_BUILDER_VERSION_MAJOR: u32 = 1;
pub const DYNOP_GRAPH_BUILDER_VERSION: dynop_version =
    version(DYNOP_GRAPH_BUILDER_VERSION_MAJOR, 1, 0);
pub const DYNOP_GRAPH_BUILDER_HEADER: dynop_header =
    header::<dynop_graph_builder>(DYNOP_GRAPH_BUILDER_TYPE, DYNOP_GRAPH_BUILDER_VERSION);

pub const DYNOP_PASS_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x0E,
);
pub const DYNOP_PASS_VERSION_MAJOR: u32 = 1;
pub const DYNOP_PASS_VERSION: dynop_version = version(DYNOP_PASS_VERSION_MAJOR, 0, 0);
pub const DYNOP_PASS_HEADER: dynop_header =
    header::<dynop_pass>(DYNOP_PASS_TYPE, DYNOP_PASS_VERSION);

/// A pass, as dynop_plugin_info.passes declares it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_pass_desc {
    pub header: dynop_header,
    pub name: *const c_char,
    /// DYNOP_PASS_*
    pub kind: dynop_pass_kind,
    pub r#match: *const c_char,
    pub priority: i32,
    pub doc: *const c_char,
}

/// One node of the graph a pass sees.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_graph_node {
    pub header: dynop_header,
    pub name: *const c_char,
    pub kind: *const c_char,
    pub definition: *const c_char,
    pub input_count: u32,
    pub inputs: *const u32,
    pub input_outputs: *const u32,
    pub args_json: *const c_char,
}

/// The graph as a running pass sees it, and the functions that change it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_graph_builder {
    pub header: dynop_header,
    pub node_count: u32,
    pub nodes: *const dynop_graph_node,
    pub node: u32,
    pub context: *mut c_void,
    pub set_operator: Option<
        unsafe extern "C" fn(
            b: *const dynop_graph_builder,
            node: u32,
            op: *const c_char,
            args_json: *const c_char,
        ) -> dynop_result,
    >,
    pub group: Option<
        unsafe extern "C" fn(
            b: *const dynop_graph_builder,
            name: *const c_char,
            nodes: *const u32,
            count: u32,
        ) -> dynop_result,
    >,
    // Since 1.1: the graph's outputs (check the header's size).
    pub output_count: u32,
    pub outputs: *const u32,
    pub output_outputs: *const u32,
}

/// DYNOP_GRAPH_NODE: node i of the builder b, stepping by the size in the
/// first node's header.
///
/// # Safety
/// b must be the builder the host passed to the running pass, with i less
/// than its node_count.
pub unsafe fn graph_node(b: &dynop_graph_builder, i: u32) -> *const dynop_graph_node {
    // SAFETY: the caller's promise: nodes holds node_count nodes of the
    // size in the first one's header.
    unsafe {
        let step = (*b.nodes).header.size as usize;
        (b.nodes as *const u8).add(i as usize * step) as *const dynop_graph_node
    }
}

/// The code of a pass the plugin's info declares.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_pass {
    pub header: dynop_header,
    pub name: *const c_char,
    pub user: *mut c_void,
    pub run: Option<
        unsafe extern "C" fn(user: *mut c_void, b: *const dynop_graph_builder) -> dynop_result,
    >,
}

/* ------------------------------------------------------------------------
 * Plugin information
 * ------------------------------------------------------------------------ */

pub const DYNOP_INTERFACE_DESC_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x01,
);
pub const DYNOP_INTERFACE_DESC_VERSION_MAJOR: u32 = 1;
pub const DYNOP_INTERFACE_DESC_VERSION: dynop_version =
    version(DYNOP_INTERFACE_DESC_VERSION_MAJOR, 0, 0);
pub const DYNOP_INTERFACE_DESC_HEADER: dynop_header =
    header::<dynop_interface_desc>(DYNOP_INTERFACE_DESC_TYPE, DYNOP_INTERFACE_DESC_VERSION);

pub const DYNOP_NEED_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x02,
);
pub const DYNOP_NEED_VERSION_MAJOR: u32 = 1;
pub const DYNOP_NEED_VERSION: dynop_version = version(DYNOP_NEED_VERSION_MAJOR, 0, 0);
pub const DYNOP_NEED_HEADER: dynop_header =
    header::<dynop_need>(DYNOP_NEED_TYPE, DYNOP_NEED_VERSION);

pub const DYNOP_REQUIREMENTS_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x03,
);
pub const DYNOP_REQUIREMENTS_VERSION_MAJOR: u32 = 1;
pub const DYNOP_REQUIREMENTS_VERSION: dynop_version =
    version(DYNOP_REQUIREMENTS_VERSION_MAJOR, 1, 0);
pub const DYNOP_REQUIREMENTS_HEADER: dynop_header =
    header::<dynop_requirements>(DYNOP_REQUIREMENTS_TYPE, DYNOP_REQUIREMENTS_VERSION);

pub const DYNOP_PLUGIN_INFO_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x04,
);
pub const DYNOP_PLUGIN_INFO_VERSION_MAJOR: u32 = 1;
pub const DYNOP_PLUGIN_INFO_VERSION: dynop_version = version(DYNOP_PLUGIN_INFO_VERSION_MAJOR, 2, 0);
pub const DYNOP_PLUGIN_INFO_HEADER: dynop_header =
    header::<dynop_plugin_info>(DYNOP_PLUGIN_INFO_TYPE, DYNOP_PLUGIN_INFO_VERSION);

pub const DYNOP_HOST_TYPE: dynop_uid = uid(
    0x6D79A0C1, 0x3B5E, 0x4C1F, 0x8E, 0x02, 0x51, 0x7A, 0xD4, 0x90, 0x2B, 0x05,
);
pub const DYNOP_HOST_VERSION_MAJOR: u32 = 1;
pub const DYNOP_HOST_VERSION: dynop_version = version(DYNOP_HOST_VERSION_MAJOR, 5, 0);
pub const DYNOP_HOST_HEADER: dynop_header =
    header::<dynop_host>(DYNOP_HOST_TYPE, DYNOP_HOST_VERSION);

/// DYNOP_HOST_HAS_SCRATCH: whether host passes scratch to operators that
/// set DYNOP_OPERATOR_SCRATCH (dynop_host 1.4 and later).
///
/// # Safety
/// host must point to the host table register or deregister received.
pub unsafe fn host_has_scratch(host: *const dynop_host) -> bool {
    let v = unsafe { (*host).header.version };
    v.major == DYNOP_HOST_VERSION_MAJOR && v.minor >= 4
}

/// DYNOP_HOST_HAS_PLUGIN_PATH: whether host has the member plugin_path
/// (dynop_host 1.5 and later); it may still be null.
///
/// # Safety
/// host must point to the host table register or deregister received.
pub unsafe fn host_has_plugin_path(host: *const dynop_host) -> bool {
    let v = unsafe { (*host).header.version };
    v.major == DYNOP_HOST_VERSION_MAJOR && v.minor >= 5
}

/// One interface: its UID, version and name ("acme.math.VecMath").
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_interface_desc {
    pub header: dynop_header,
    pub uid: dynop_uid,
    pub version: dynop_version,
    pub name: *const c_char,
}

/// DYNOP_INTERFACE_DESC.
pub const fn interface_desc(
    uid: dynop_uid,
    version: dynop_version,
    name: *const c_char,
) -> dynop_interface_desc {
    dynop_interface_desc {
        header: DYNOP_INTERFACE_DESC_HEADER,
        uid,
        version,
        name,
    }
}

/// An interface that the plugin acquires from another plugin.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_need {
    pub header: dynop_header,
    pub plugin: *const c_char,
    pub iface: *const dynop_interface_desc,
}

/// What a machine must offer for the plugin to run.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_requirements {
    pub header: dynop_header,
    pub os: *const c_char,
    pub min_os_version: dynop_version,
    pub arch: *const c_char,
    pub cpu_features: *const c_char,
    pub gpu_vendor: *const c_char,
    pub gpu_min_arch: dynop_version,
    pub gpu_min_driver: dynop_version,
    // Since 1.1:
    pub libraries: *const c_char,
}

/// Flags in dynop_plugin_info.flags.
pub const DYNOP_PLUGIN_GLOBAL_SYMBOLS: u32 = 1 << 0;
pub const DYNOP_PLUGIN_DEEP_BIND: u32 = 1 << 1;
pub const DYNOP_PLUGIN_NO_DEEP_BIND: u32 = 1 << 2;

/// What get_info returns: who the plugin is and what it provides.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_plugin_info {
    pub header: dynop_header,
    pub api_version: dynop_version,
    pub id: *const c_char,
    pub plugin_version: dynop_version,
    pub description: *const c_char,
    pub author: *const c_char,
    pub build: *const c_char,
    pub flags: u32,
    pub interface_count: u32,
    pub interfaces: *const *const dynop_interface_desc,
    pub need_count: u32,
    pub needs: *const *const dynop_need,
    pub requirements: *const dynop_requirements,
    // Since 1.1:
    pub operator_count: u32,
    pub operators: *const *const dynop_op_schema,
    // Since 1.2:
    pub pass_count: u32,
    pub passes: *const *const dynop_pass_desc,
}

/* ------------------------------------------------------------------------
 * The host table
 * ------------------------------------------------------------------------ */

/// The host as a plugin sees it. Members after the first version are
/// there only if header.size covers them: check with dynop_has_member!.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dynop_host {
    pub header: dynop_header,
    pub api_version: dynop_version,
    pub add_interface:
        Option<unsafe extern "C" fn(host: *const dynop_host, iface: *const c_void) -> dynop_result>,
    pub remove_interface: Option<
        unsafe extern "C" fn(host: *const dynop_host, uid: *const dynop_uid) -> dynop_result,
    >,
    pub acquire: Option<
        unsafe extern "C" fn(
            host: *const dynop_host,
            plugin_id: *const c_char,
            uid: *const dynop_uid,
            min_version: dynop_version,
            iface: *mut *const c_void,
            reference: *mut dynop_ref,
        ) -> dynop_result,
    >,
    pub release:
        Option<unsafe extern "C" fn(host: *const dynop_host, reference: dynop_ref) -> dynop_result>,
    pub log: Option<
        unsafe extern "C" fn(
            host: *const dynop_host,
            level: dynop_log_level,
            message: *const c_char,
        ),
    >,
    pub set_error: Option<unsafe extern "C" fn(host: *const dynop_host, message: *const c_char)>,
    pub last_error: Option<unsafe extern "C" fn(host: *const dynop_host) -> *const c_char>,
    // Since 1.1:
    pub register_operator: Option<
        unsafe extern "C" fn(host: *const dynop_host, op: *const dynop_operator) -> dynop_result,
    >,
    // Since 1.2:
    pub register_pass: Option<
        unsafe extern "C" fn(host: *const dynop_host, pass: *const dynop_pass) -> dynop_result,
    >,
    // Since 1.3:
    pub cpu_features: Option<unsafe extern "C" fn(host: *const dynop_host) -> dynop_cpu_features>,
    pub select_variant: Option<
        unsafe extern "C" fn(
            host: *const dynop_host,
            name: *const c_char,
            variants: *const dynop_variant,
            count: u32,
        ) -> i32,
    >,
    // Since 1.5:
    pub plugin_path: *const c_char,
}

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------ */

/// "get_info"
pub type dynop_get_info_function = Option<unsafe extern "C" fn() -> *const dynop_plugin_info>;
/// "register"
pub type dynop_register_function =
    Option<unsafe extern "C" fn(host: *const dynop_host) -> dynop_result>;
/// "deregister" (optional)
pub type dynop_deregister_function =
    Option<unsafe extern "C" fn(host: *const dynop_host) -> dynop_result>;

/// The symbol the host looks up: the plugin defines it with
/// `#[no_mangle] pub extern "C" fn dynop_plugin_get_function(name: *const c_char) -> dynop_function`.
pub const DYNOP_PLUGIN_ENTRY_SYMBOL: &[u8] = b"dynop_plugin_get_function\0";

/* ------------------------------------------------------------------------
 * Statics. The host keeps pointers to the plugin's info, schemas,
 * variants and operators while the library is loaded, so they live in
 * statics; and a static must be Sync, which raw pointers are not. These
 * structs are plain data that nothing writes after it is built (the
 * pointers in them are only read, and dereferencing one is unsafe
 * anyway), so any thread may read them.
 * ------------------------------------------------------------------------ */

unsafe impl Sync for dynop_variant {}
unsafe impl Sync for dynop_op_input {}
unsafe impl Sync for dynop_op_output {}
unsafe impl Sync for dynop_op_arg {}
unsafe impl Sync for dynop_op_schema {}
unsafe impl Sync for dynop_operator {}
unsafe impl Sync for dynop_pass_desc {}
unsafe impl Sync for dynop_pass {}
unsafe impl Sync for dynop_interface_desc {}
unsafe impl Sync for dynop_need {}
unsafe impl Sync for dynop_requirements {}
unsafe impl Sync for dynop_plugin_info {}

/* ------------------------------------------------------------------------
 * Layout checks: the header's, at compile time.
 * ------------------------------------------------------------------------ */

const P: usize = std::mem::size_of::<*const c_void>();
const _: () = assert!(std::mem::size_of::<dynop_uid>() == 16);
const _: () = assert!(std::mem::size_of::<dynop_version>() == 12);
const _: () = assert!(std::mem::size_of::<dynop_header>() == 32);
const _: () = assert!(std::mem::size_of::<dynop_host>() == (if P == 8 { 48 } else { 44 }) + 12 * P);
const _: () = assert!(P != 8 || std::mem::size_of::<dynop_variant>() == 56);
const _: () = assert!(std::mem::size_of::<dynop_pass_desc>() == if P == 8 { 72 } else { 52 });
const _: () = assert!(std::mem::size_of::<dynop_graph_node>() == if P == 8 { 88 } else { 60 });
const _: () = assert!(std::mem::size_of::<dynop_graph_builder>() == if P == 8 { 104 } else { 68 });
const _: () = assert!(std::mem::size_of::<dynop_pass>() == 32 + 3 * P);
const _: () =
    assert!(std::mem::size_of::<dynop_device>() == 8 && std::mem::size_of::<dynop_dtype>() == 4);
const _: () = assert!(P != 8 || std::mem::size_of::<dynop_tensor>() == 48);
const _: () = assert!(std::mem::size_of::<dynop_arg>() == if P == 8 { 32 } else { 20 });
const _: () =
    assert!(std::mem::size_of::<dynop_result>() == 4 && std::mem::size_of::<dynop_ref>() == 8);
const _: () = assert!(std::mem::size_of::<dynop_function>() == P);
