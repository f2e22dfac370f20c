//! napi for `grepSessions` (see `grep`): reads files on threads of its own and
//! hands JavaScript each file's candidate blocks, in the order of the paths.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::catalog::grep::{FieldSet, FileCandidates, FileGrep, Prefilter};

/// One file's candidates (or only progress, or the end).
#[napi(object)]
pub struct JsGrepFile {
    /// Index of the file in the paths; -1 once every file is done.
    pub file: i32,
    /// Files done so far.
    pub done: u32,
    /// Raw JSON texts of ids, timestamps, roles and tool call arguments, and
    /// ASCII texts (byte offsets).
    pub json: Buffer,
    /// The candidates' texts in UTF-16 (unit offsets; every target is little-endian,
    /// so JavaScript reads them as 'utf16le').
    pub texts: Uint16Array,
    /// Per entry, 6 numbers: id start, end, timestamp start, end, role start,
    /// end (a missing value is 0, 0).
    pub entries: Uint32Array,
    /// Per candidate, 8 numbers: entry, field, block index, text start, end
    /// (in `json` when the next is 1: ASCII; else in `texts`), 1 or 0,
    /// arguments start, end (in `json`).
    pub candidates: Uint32Array,
}

impl JsGrepFile {
    fn of(file: i32, done: usize, found: FileCandidates) -> JsGrepFile {
        let entries: Vec<u32> = found
            .entries
            .iter()
            .flat_map(|e| {
                [
                    e.id.0,
                    e.id.1,
                    e.timestamp.0,
                    e.timestamp.1,
                    e.role.0,
                    e.role.1,
                ]
            })
            .collect();
        let candidates: Vec<u32> = found
            .candidates
            .iter()
            .flat_map(|c| {
                [
                    c.entry,
                    c.field as u32,
                    c.block_index,
                    c.text.0,
                    c.text.1,
                    u32::from(c.ascii),
                    c.arguments.0,
                    c.arguments.1,
                ]
            })
            .collect();
        JsGrepFile {
            file,
            done: done as u32,
            json: found.json.into(),
            texts: found.texts.into(),
            entries: entries.into(),
            candidates: candidates.into(),
        }
    }
}

type GrepCallback = ThreadsafeFunction<JsGrepFile, (), JsGrepFile, Status, false>;

/// Messages sent and not yet taken by JavaScript, at most: matching there
/// (and a caller's `onMatch`, which may make it wait) is slower than reading
/// here, and without a bound every candidate of the archive would be queued
/// at once. The readers wait for `taken()`.
const WINDOW: u64 = 16;

/// How many messages JavaScript has taken, and the end of waiting.
#[derive(Default)]
struct Window {
    taken: Mutex<u64>,
    moved: std::sync::Condvar,
    cancel: AtomicBool,
}

impl Window {
    /// Waits until message number `sent` (from 0) may go; false once cancelled.
    fn wait_for_room(&self, sent: u64) -> bool {
        let Ok(taken) = self.taken.lock() else {
            return false;
        };
        let room = self.moved.wait_while(taken, |taken| {
            *taken + WINDOW <= sent && !self.cancel.load(Ordering::Relaxed)
        });
        room.is_ok() && !self.cancel.load(Ordering::Relaxed)
    }
}

/// A running grep; `cancel()` stops it at the next file.
#[napi]
pub struct GrepScan {
    window: Arc<Window>,
}

#[napi]
impl GrepScan {
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.window.cancel.store(true, Ordering::Relaxed);
        self.window.moved.notify_all();
    }

    /// JavaScript is done with one more message: the readers may send another.
    #[napi(catch_unwind)]
    pub fn taken(&self) {
        if let Ok(mut taken) = self.window.taken.lock() {
            *taken += 1;
        }
        self.window.moved.notify_all();
    }
}

fn prefilter(pattern: &str, regex: bool, case_sensitive: bool) -> Prefilter {
    if regex {
        Prefilter::regex(pattern, !case_sensitive)
    } else {
        Prefilter::literal(pattern, !case_sensitive)
    }
}

/// What a grep looks for, given to a listing so that it reads only the files
/// that may hold it (see `GrepGate`): `grepSessionFiles`' arguments.
#[napi(object)]
pub struct JsGrepGate {
    pub pattern: String,
    pub regex: bool,
    pub case_sensitive: bool,
    pub fields: u32,
}

/// A listing's gate for a grep: a file passes when it may hold a candidate
/// (`FileGrep::may_match`); one that cannot be read passes, for the listing
/// to report as it would.
pub struct GrepGate {
    filter: Prefilter,
    fields: FieldSet,
}

thread_local! {
    static GATE_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl GrepGate {
    pub fn new(gate: &JsGrepGate) -> GrepGate {
        GrepGate {
            filter: prefilter(&gate.pattern, gate.regex, gate.case_sensitive),
            fields: FieldSet(gate.fields),
        }
    }

    pub fn passes(&self, path: &std::path::Path) -> bool {
        let grep = FileGrep {
            filter: &self.filter,
            fields: self.fields,
        };
        let Ok(mut file) = std::fs::File::open(path) else {
            return true;
        };
        GATE_BUFFER.with_borrow_mut(|buf| grep.may_match(&mut file, buf).unwrap_or(true))
    }
}

/// How often, at most, a file without candidates reports progress.
const PROGRESS_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// Starts reading `paths` for blocks of `fields` (bits of `grep::Field`) that
/// may hold `pattern` (literal, or a regex body when `regex`); reports files
/// with candidates in the order of `paths`, progress now and then, and the
/// end (file -1). Unreadable files have no candidates.
#[napi(catch_unwind)]
pub fn grep_session_files(
    paths: Vec<String>,
    pattern: String,
    regex: bool,
    case_sensitive: bool,
    fields: u32,
    on_file: GrepCallback,
) -> GrepScan {
    let window = Arc::new(Window::default());
    let room = window.clone();
    std::thread::spawn(move || {
        let flag = &room.cancel;
        // Message `sent` (from 0), once JavaScript has room for it.
        let send = |sent: u64, message: JsGrepFile| {
            if room.wait_for_room(sent) {
                on_file.call(message, ThreadsafeFunctionCallMode::NonBlocking);
            }
        };
        let filter = prefilter(&pattern, regex, case_sensitive);
        let grep = FileGrep {
            filter: &filter,
            fields: FieldSet(fields),
        };
        // Files finish out of order; each is sent once those before it are.
        struct InOrder {
            next: usize,
            ready: BTreeMap<usize, FileCandidates>,
            last_sent: std::time::Instant,
            sent: u64,
        }
        let order = Mutex::new(InOrder {
            next: 0,
            ready: BTreeMap::new(),
            last_sent: std::time::Instant::now(),
            sent: 0,
        });
        let stop = || flag.load(Ordering::Relaxed);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // One buffer per thread, reused: a fresh allocation per file would
            // fault in every page of it again.
            let read_and_scan = |buffer: &mut Vec<u8>, i: usize| {
                buffer.clear();
                let read = std::fs::File::open(&paths[i])
                    .and_then(|mut file| std::io::Read::read_to_end(&mut file, buffer));
                let found = match read {
                    Ok(_) => grep.scan(buffer, &stop),
                    Err(_) => FileCandidates::default(),
                };
                let Ok(mut order) = order.lock() else { return };
                order.ready.insert(i, found);
                loop {
                    let next = order.next;
                    let Some(found) = order.ready.remove(&next) else {
                        break;
                    };
                    order.next += 1;
                    let due = order.last_sent.elapsed() >= PROGRESS_WAIT;
                    if !found.candidates.is_empty() || due {
                        // The other readers wait at the lock meanwhile, each
                        // holding no more than the file it has read.
                        send(order.sent, JsGrepFile::of(next as i32, next + 1, found));
                        order.sent += 1;
                        order.last_sent = std::time::Instant::now();
                    }
                }
            };
            let threads = crate::parallel::threads();
            crate::parallel::for_each_index_with(
                paths.len(),
                threads,
                flag,
                Vec::new,
                read_and_scan,
                drop,
            );
        }));
        let (done, sent) = order.lock().map_or((0, 0), |o| (o.next, o.sent));
        send(sent, JsGrepFile::of(-1, done, FileCandidates::default()));
    });
    GrepScan { window }
}
