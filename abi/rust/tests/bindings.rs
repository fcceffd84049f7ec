//! The bindings in src/lib.rs: the size of every struct and the offset
//! of every member, as C compilers lay out include/dynop/dynop.h on 64-bit
//! targets, and the helpers that stand for the header's macros. (dynop's
//! own tests compare the bindings with the header on every target dynop
//! is tested on, constants and member types included.)

use std::mem::size_of;

use dynop::*;
use dynop::{dynop_has_member, dynop_offset_of};

/// layout!(errors, T, size, member offset, ...) checks the size of T and
/// the offsets of its members, adding what differs to errors.
macro_rules! layout {
    ($errors:ident, $T:ident, $size:expr $(, $member:ident $offset:expr)* $(,)?) => {{
        if size_of::<$T>() != $size {
            $errors.push(format!("sizeof {} = {}, want {}", stringify!($T), size_of::<$T>(), $size));
        }
        $(
            let got = dynop_offset_of!($T, $member);
            if got != $offset {
                $errors.push(format!("offsetof {}.{} = {}, want {}", stringify!($T), stringify!($member), got, $offset));
            }
        )*
    }};
}

#[test]
#[cfg(target_pointer_width = "64")]
fn layout_64bit() {
    let mut errors: Vec<String> = Vec::new();
    layout!(errors, dynop_uid, 16, bytes 0);
    layout!(errors, dynop_version, 12, major 0, minor 4, patch 8);
    layout!(errors, dynop_header, 32, r#type 0, version 16, size 28);
    layout!(errors, dynop_device, 8, device_type 0, device_id 4);
    layout!(errors, dynop_dtype, 4, code 0, bits 1, lanes 2);
    layout!(errors, dynop_tensor, 48, data 0, device 8, ndim 16, dtype 20, shape 24, strides 32, byte_offset 40);
    layout!(errors, dynop_variant, 56, header 0, name 32, features 40, r#fn 48);
    layout!(errors, dynop_op_input, 80, header 0, name 32, doc 40, dtypes 48, layouts 56, ndim 64, channels 72);
    layout!(errors, dynop_op_output, 104, header 0, name 32, doc 40, layout 48, dtypes 56, dtype_arg 64, like 72,
        ndim 80, channels_arg 88, channels 96);
    layout!(errors, dynop_op_arg, 96, header 0, name 32, doc 40, r#type 48, flags 52, min 56, max 64,
        default_value 72, allowed 80, deprecated 88);
    layout!(errors, dynop_op_schema, 104, header 0, name 32, doc 40, devices 48, input_count 56,
        optional_inputs 60, inputs 64, output_count 72, outputs 80, arg_count 88, args 96);
    layout!(errors, dynop_arg, 32, name 0, r#type 8, given 12, count 16, values 24);
    layout!(errors, dynop_operator, 112, header 0, name 32, device 40, user_data 48, create 56, setup 64,
        run 72, destroy 80, variant_count 88, variants 96, flags 104);
    layout!(errors, dynop_pass_desc, 72, header 0, name 32, kind 40, r#match 48, priority 56, doc 64);
    layout!(errors, dynop_graph_node, 88, header 0, name 32, kind 40, definition 48, input_count 56,
        inputs 64, input_outputs 72, args_json 80);
    layout!(errors, dynop_graph_builder, 104, header 0, node_count 32, nodes 40, node 48, context 56,
        set_operator 64, group 72, output_count 80, outputs 88, output_outputs 96);
    layout!(errors, dynop_pass, 56, header 0, name 32, user 40, run 48);
    layout!(errors, dynop_interface_desc, 72, header 0, uid 32, version 48, name 64);
    layout!(errors, dynop_need, 48, header 0, plugin 32, iface 40);
    layout!(errors, dynop_requirements, 112, header 0, os 32, min_os_version 40, arch 56, cpu_features 64,
        gpu_vendor 72, gpu_min_arch 80, gpu_min_driver 92, libraries 104);
    layout!(errors, dynop_plugin_info, 168, header 0, api_version 32, id 48, plugin_version 56,
        description 72, author 80, build 88, flags 96, interface_count 100, interfaces 104, need_count 112,
        needs 120, requirements 128, operator_count 136, operators 144, pass_count 152, passes 160);
    layout!(errors, dynop_host, 144, header 0, api_version 32, add_interface 48, remove_interface 56,
        acquire 64, release 72, log 80, set_error 88, last_error 96, register_operator 104, register_pass 112,
        cpu_features 120, select_variant 128, plugin_path 136);
    layout!(errors, dynop_result, 4);
    layout!(errors, dynop_log_level, 4);
    layout!(errors, dynop_ref, 8);
    layout!(errors, dynop_cpu_features, 8);
    layout!(errors, dynop_arg_type, 4);
    layout!(errors, dynop_pass_kind, 4);
    layout!(errors, dynop_function, 8);
    layout!(errors, dynop_op_run_function, 8);
    layout!(errors, dynop_get_info_function, 8);
    layout!(errors, dynop_register_function, 8);
    layout!(errors, dynop_deregister_function, 8);
    assert!(
        errors.is_empty(),
        "the bindings differ from dynop.h:\n{}",
        errors.join("\n")
    );
}

/// uid() takes DYNOP_UID's arguments and stores the bytes of the text form.
#[test]
fn uid_bytes() {
    let u = uid(
        0x3F0B6D52, 0x8A8C, 0x4E55, 0x9C, 0x5E, 0x2B, 0x1B, 0x0D, 0x6C, 0x7A, 0x11,
    );
    let want = [
        0x3F, 0x0B, 0x6D, 0x52, 0x8A, 0x8C, 0x4E, 0x55, 0x9C, 0x5E, 0x2B, 0x1B, 0x0D, 0x6C, 0x7A,
        0x11,
    ];
    assert_eq!(u.bytes, want);
}

#[test]
fn headers() {
    let h = header::<dynop_host>(DYNOP_HOST_TYPE, DYNOP_HOST_VERSION);
    assert_eq!(h, DYNOP_HOST_HEADER);
    assert_eq!(h.size as usize, size_of::<dynop_host>());
    assert_eq!(
        DYNOP_VARIANT_HEADER.size as usize,
        size_of::<dynop_variant>()
    );
}

/// dynop_has_member! tells the members a host table of an older version
/// has from those it lacks.
#[test]
fn has_member() {
    let mut host = dynop_host {
        header: DYNOP_HOST_HEADER,
        api_version: DYNOP_API_VERSION,
        add_interface: None,
        remove_interface: None,
        acquire: None,
        release: None,
        log: None,
        set_error: None,
        last_error: None,
        register_operator: None,
        register_pass: None,
        cpu_features: None,
        select_variant: None,
        plugin_path: std::ptr::null(),
    };
    assert!(dynop_has_member!(dynop_host, &host, select_variant));
    host.header.size = dynop_offset_of!(dynop_host, cpu_features) as u32; // a dynop_host 1.2
    assert!(dynop_has_member!(dynop_host, &host, register_pass));
    assert!(!dynop_has_member!(dynop_host, &host, cpu_features));
    assert!(!dynop_has_member!(dynop_host, &host, select_variant));
}

#[test]
fn c_strings() {
    let s = cstr(b"cpu\0");
    assert_eq!(unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes(), b"cpu");
    assert!(std::panic::catch_unwind(|| cstr(b"no NUL")).is_err());
}
