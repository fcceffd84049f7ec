//! guard and catch_panic: a panic becomes an error result whose message
//! the host gets through set_error or log, and nothing unwinds past them.

use std::ffi::CStr;
use std::os::raw::c_char;
use std::panic::panic_any;
use std::ptr;
use std::sync::Mutex;

use dynop::*;

/// What the fake hosts received: (set_error or log at level, message).
static CALLS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
/// Tests share CALLS: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

unsafe extern "C" fn host_set_error(_: *const dynop_host, message: *const c_char) {
    let m = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    CALLS.lock().unwrap().push(("set_error".to_string(), m));
}

unsafe extern "C" fn host_log(_: *const dynop_host, level: dynop_log_level, message: *const c_char) {
    let m = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    CALLS.lock().unwrap().push((format!("log {}", level), m));
}

fn host() -> dynop_host {
    dynop_host {
        header: DYNOP_HOST_HEADER,
        api_version: DYNOP_API_VERSION,
        add_interface: None,
        remove_interface: None,
        acquire: None,
        release: None,
        log: Some(host_log),
        set_error: Some(host_set_error),
        last_error: None,
        register_operator: None,
        register_pass: None,
        cpu_features: None,
        select_variant: None,
        plugin_path: ptr::null(),
    }
}

/// Runs f with CALLS empty and returns what the host received.
fn calls(f: impl FnOnce()) -> Vec<(String, String)> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    CALLS.lock().unwrap().clear();
    f();
    std::mem::take(&mut *CALLS.lock().unwrap())
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn guard_passes_results_through() {
    let h = host();
    let got = calls(|| {
        assert_eq!(guard(Some(&h), || DYNOP_OK), DYNOP_OK);
        assert_eq!(
            guard(Some(&h), || DYNOP_ERROR_UNSUPPORTED),
            DYNOP_ERROR_UNSUPPORTED
        );
    });
    assert!(got.is_empty(), "the host got {:?}", got);
}

#[test]
fn guard_turns_a_panic_into_an_error() {
    let h = host();
    let got = calls(|| {
        assert_eq!(guard(Some(&h), || panic!("amount {} is unlucky", 13)), DYNOP_ERROR);
        assert_eq!(guard(Some(&h), || panic!("a static str")), DYNOP_ERROR);
        assert_eq!(guard(Some(&h), || panic_any(42_i32)), DYNOP_ERROR);
        assert_eq!(guard(Some(&h), || panic!("NUL \0 inside")), DYNOP_ERROR);
        assert_eq!(guard(None, || panic!("no host to tell")), DYNOP_ERROR);
    });
    assert_eq!(
        got,
        vec![
            pair("set_error", "panic: amount 13 is unlucky"),
            pair("set_error", "panic: a static str"),
            pair("set_error", "panic: a panic whose payload is not a string"),
            pair("set_error", "panic: NUL \\0 inside"),
        ]
    );
}

#[test]
fn catch_panic_logs_and_returns_the_fallback() {
    let h = host();
    let got = calls(|| {
        assert_eq!(catch_panic(Some(&h), 0_usize, || 7), 7);
        let p: *const u8 = catch_panic(Some(&h), ptr::null(), || panic!("no info"));
        assert!(p.is_null());
        catch_panic(Some(&h), (), || panic!("in destroy"));
        catch_panic(None, (), || panic!("no host to tell"));
    });
    let level = format!("log {}", DYNOP_LOG_ERROR);
    assert_eq!(
        got,
        vec![pair(&level, "panic: no info"), pair(&level, "panic: in destroy")]
    );
}

/// A host without set_error or log (a zeroed table of an older host):
/// the panic is still caught.
#[test]
fn guard_without_host_functions() {
    let mut h = host();
    h.set_error = None;
    h.log = None;
    assert_eq!(guard(Some(&h), || panic!("quietly")), DYNOP_ERROR);
    assert_eq!(catch_panic(Some(&h), 1, || panic!("quietly")), 1);
}

/// A panic payload whose drop panics again does not unwind out.
#[test]
fn payload_drop_panics() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("dropping the payload");
        }
    }
    let h = host();
    let got = calls(|| assert_eq!(guard(Some(&h), || panic_any(Bomb)), DYNOP_ERROR));
    assert_eq!(
        got,
        vec![pair("set_error", "panic: a panic whose payload is not a string")]
    );
}

#[test]
fn host_cell() {
    static HOST: HostCell = HostCell::new();
    assert!(HOST.get().is_none());
    let h: &'static dynop_host = Box::leak(Box::new(host()));
    unsafe { HOST.set(h) };
    assert!(ptr::eq(HOST.get().unwrap(), h));
    let got = calls(|| {
        set_error(HOST.get(), "from the cell");
        log(HOST.get(), DYNOP_LOG_WARN, "logged");
    });
    assert_eq!(
        got,
        vec![
            pair("set_error", "from the cell"),
            pair(&format!("log {}", DYNOP_LOG_WARN), "logged")
        ]
    );
    unsafe { HOST.set(ptr::null()) };
    assert!(HOST.get().is_none());
}

#[test]
fn messages() {
    let p = std::panic::catch_unwind(|| panic!("{}", String::from("formatted"))).unwrap_err();
    assert_eq!(panic_message(&*p), "formatted");
    let p = std::panic::catch_unwind(|| panic!("literal")).unwrap_err();
    assert_eq!(panic_message(&*p), "literal");
}
