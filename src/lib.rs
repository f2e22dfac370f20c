//! pi-session-native: the session store of the pi coding agent in Rust.
//!
//! The core modules know nothing of Node; `binding` is the only napi layer.

pub mod assembly;
pub mod discovery;
pub mod doctor;
pub mod entry;
pub mod file_pool;
pub mod format;
pub mod index;
pub mod jsstring;
pub mod listing;
pub mod loader;
pub mod migrate;
pub mod os;
pub mod parallel;
pub mod scanner;
pub mod search;
pub mod session;
pub mod store;
pub mod usage;
pub mod usage_report;
pub mod watch;

// Under `cargo test` napi does not register the exports, so they look unused.
#[cfg_attr(test, allow(dead_code))]
mod binding;
