//! Many session files at once: listing summaries, search, usage accounting
//! and reports, the doctor, all over one incremental, append-aware scan with
//! a per-process and a persistent cache; discovery of files by id or age and
//! the watch on listed folders. Built on `session`, `format` and `os`.

pub mod codec;
pub mod discovery;
pub mod doctor;
pub mod folder_scan;
pub mod grep;
pub mod grep_scan;
pub mod listing;
mod prefilter;
pub mod recall_index;
pub mod scanner;
pub mod search;
pub mod summaries;
pub mod usage;
pub mod usage_origin;
pub mod usage_report;
pub mod usage_scan;
pub mod watch;
