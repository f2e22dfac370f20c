//! pi-session-native: the session store of the pi coding agent in Rust.
//!
//! The crate is built in layers, each a folder, each importing only the ones
//! below it (ARCHITECTURE.md; `tests::layers` holds the code to it):
//!
//! - `format`: what a line means (no I/O, imports nothing of ours);
//! - `os`: what differs between operating systems, the only place that names
//!   an OS call;
//! - `parallel`: how work is split over threads;
//! - `session`: one session file, read, indexed and written;
//! - `catalog`: many session files: listing, search, usage, doctor, over one
//!   incremental scan;
//! - `binding`: the only napi code; it translates and nothing else.

pub mod catalog;
pub mod format;
pub mod os;
pub mod parallel;
pub mod session;

// Under `cargo test` napi does not register the exports, so they look unused.
#[cfg_attr(test, allow(dead_code))]
mod binding;
