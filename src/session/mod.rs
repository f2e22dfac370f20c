//! One session file: read the way the reference reads (`store`), indexed
//! (`index`), written by whole lines and whole-file rewrites, assembled from
//! ranges of another (`assembly`), its open files pooled (`file_pool`).
//! The session itself, the state behind the JavaScript `SessionManager`
//! (`state`), is opened (`open`), written (`persist`), branched (`branch`),
//! forked (`fork`) and handed to JavaScript as skeletons (`skeletons`);
//! JavaScript keeps only the entry objects it has handed out; `recall` is what
//! a page of `recallRead` needs of a branch.

pub mod assembly;
mod branch;
mod error;
pub mod file_pool;
mod fork;
mod header;
pub mod index;
pub mod loader;
mod open;
mod persist;
mod read_lines;
pub mod recall;
mod skeletons;
mod state;
pub mod store;

pub use branch::{key_json, key_value, BranchOutcome};
pub use error::SessionError;
pub use fork::fork_file;
pub use header::{read_header, HeaderScan, MAX_SESSION_HEADER_SCAN_BYTES};
pub use open::OpenOutcome;
pub(crate) use open::{lines_between, odd_line};
pub use persist::PersistPlan;
pub(crate) use read_lines::read_lines_parallel_in;
pub use skeletons::SplitLines;
pub use state::Session;

/// A new empty folder for a test's files (the catalog's tests use it too).
#[cfg(test)]
pub(crate) fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pisn-session-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Seeded numbers below `n` for tests (a linear congruential generator: the
/// same every run; the tests need variety, not quality).
#[cfg(test)]
pub(crate) fn seeded_numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n.max(1)
    }
}
