//! The only napi code: it translates between JavaScript values and the core
//! types, and nothing else. One file per capability; what they share (errors,
//! strings) is here.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::session::store::IoFailure;
use crate::session::SessionError;

mod doctor;
mod grep;
mod listing;
mod memory;
mod recall;
mod search;
mod session;
mod text;
mod usage;

/// Errors cross as a message the JavaScript layer turns into the error the
/// reference would throw (`lib/errors.js`): a tag, then NUL-separated fields.
fn to_napi(err: SessionError) -> Error {
    let reason = match err {
        SessionError::Io(IoFailure {
            errno,
            syscall,
            path,
        }) => format!("\0io\0{errno}\0{syscall}\0{}", path.unwrap_or_default()),
        SessionError::Type(m) => format!("\0type\0{m}"),
        SessionError::EntryNotFound => "\0notfound".to_string(),
        SessionError::Message(m) => m,
    };
    Error::new(Status::GenericFailure, reason)
}

fn io_to_napi(err: IoFailure) -> Error {
    to_napi(SessionError::Io(err))
}

fn opt_pos(p: Option<u32>) -> i64 {
    p.map_or(-1, |p| p as i64)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Panics on purpose, so the tests can check that a Rust panic reaches
/// JavaScript as an Error instead of aborting the process.
#[napi(catch_unwind)]
pub fn panic_for_test(message: String) {
    panic!("{message}");
}

/// Which implementation of the OS layer this build has: "linux" (inotify,
/// openat, copy_file_range) or "portable" (std only, as macOS and Windows).
#[napi]
pub fn io_implementation() -> &'static str {
    crate::os::IMPLEMENTATION
}
