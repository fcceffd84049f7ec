//! Entry points that never unwind into the host.
//!
//! The host calls a plugin through `extern "C"` functions, and a panic
//! must not unwind out of one: Rust aborts the process when it does (from
//! 1.81; before, it was undefined behaviour), and the process is the
//! host's. Run the body of every entry point in [`guard`] (functions that
//! return a `dynop_result`) or [`catch_panic`] (the others):
//!
//! ```
//! # use dynop::*;
//! # use std::ffi::c_void;
//! static HOST: HostCell = HostCell::new();
//!
//! unsafe extern "C" fn op_setup(
//!     _instance: *mut c_void,
//!     _inputs: *const dynop_tensor,
//!     _input_count: u32,
//!     _outputs: *mut dynop_tensor,
//!     _output_count: u32,
//! ) -> dynop_result {
//!     guard(HOST.get(), || {
//!         // ... a panic here returns DYNOP_ERROR, its message set as the error
//!         DYNOP_OK
//!     })
//! }
//! ```
//!
//! register keeps the host table in a [`HostCell`] (`HOST.set(host)`), so
//! that the functions the host does not pass it to (an operator's create,
//! setup, run and destroy; an interface's functions) can explain a panic
//! with the host's set_error or log. A panic's message also goes to stderr
//! through Rust's panic hook, with where it happened.
//!
//! This works only if panics unwind: keep `panic = "unwind"` (Cargo's
//! default) in the plugin's profiles; with `panic = "abort"` a panic ends
//! the host's process.

use std::any::Any;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::{dynop_host, dynop_log_level, dynop_result, DYNOP_ERROR, DYNOP_LOG_ERROR};

/// The host table register received, kept in a static for the entry points
/// the host does not pass it to. Empty until [`HostCell::set`].
///
/// A process with two dynop hosts that load the same plugin file shares
/// the library and so its statics: the cell holds the table of the host
/// that started the plugin last, and an error set through it may go to
/// that host.
#[derive(Debug, Default)]
pub struct HostCell(AtomicPtr<dynop_host>);

impl HostCell {
    /// An empty cell, for a `static`.
    pub const fn new() -> HostCell {
        HostCell(AtomicPtr::new(ptr::null_mut()))
    }

    /// Keeps host, as register received it; NULL empties the cell (do it
    /// at the end of deregister).
    ///
    /// # Safety
    /// host is NULL or the table the host passed to register, which the
    /// host keeps valid until deregister returns; the cell must not be read
    /// after that unless it is set again.
    pub unsafe fn set(&self, host: *const dynop_host) {
        self.0.store(host as *mut dynop_host, Ordering::Release);
    }

    /// The table set last, or None.
    pub fn get(&self) -> Option<&dynop_host> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: set's promise: NULL or a table valid while it is kept.
        unsafe { p.as_ref() }
    }
}

/// Runs f and returns its result. If f panics, guard catches the panic,
/// explains it with the host's set_error ("panic: MESSAGE") and returns
/// DYNOP_ERROR: use it for every entry point that returns a
/// `dynop_result` (register, deregister, an operator's create, setup and
/// run, a pass's run). host may be None (the error then has no message).
pub fn guard<F: FnOnce() -> dynop_result>(host: Option<&dynop_host>, f: F) -> dynop_result {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(rc) => rc,
        Err(payload) => {
            set_error(host, &panic_text(payload));
            DYNOP_ERROR
        }
    }
}

/// Runs f and returns its result. If f panics, catch_panic catches the
/// panic, writes "panic: MESSAGE" to the host's log at DYNOP_LOG_ERROR and
/// returns on_panic: use it for entry points that have no error to return
/// (get_info and dynop_plugin_get_function, which return NULL on a panic;
/// an operator's destroy; an interface's functions that return nothing).
pub fn catch_panic<R, F: FnOnce() -> R>(host: Option<&dynop_host>, on_panic: R, f: F) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            log(host, DYNOP_LOG_ERROR, &panic_text(payload));
            on_panic
        }
    }
}

/// The message of a panic's payload: what panic! formatted, or a note
/// that the payload is not a string (std::panic::panic_any).
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "a panic whose payload is not a string"
    }
}

/// "panic: MESSAGE", and the payload dropped where its drop cannot unwind.
fn panic_text(payload: Box<dyn Any + Send>) -> String {
    let text = format!("panic: {}", panic_message(&*payload));
    // A payload's drop may panic in turn: catch that one, and leak its own
    // payload rather than drop it.
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    text
}

/// Explains the error the running entry point is about to return, with
/// the host's set_error; nothing if host is None. A NUL in message is
/// written as "\0".
pub fn set_error(host: Option<&dynop_host>, message: &str) {
    if let Some(host) = host {
        if let Some(set_error) = host.set_error {
            let m = c_message(message);
            // SAFETY: a host function, called with its own table and a C
            // string that it copies before it returns.
            unsafe { set_error(host, m.as_ptr()) };
        }
    }
}

/// Writes message to the host's log at level; nothing if host is None.
pub fn log(host: Option<&dynop_host>, level: dynop_log_level, message: &str) {
    if let Some(host) = host {
        if let Some(log) = host.log {
            let m = c_message(message);
            // SAFETY: as in set_error.
            unsafe { log(host, level, m.as_ptr()) };
        }
    }
}

/// message as a C string, a NUL in it written as "\0".
fn c_message(message: &str) -> CString {
    CString::new(message.replace('\0', "\\0")).unwrap_or_default()
}
