//! `grepSessions` over many files (see `grep`): files read on threads of
//! their own, each file's candidates delivered in the order of the paths and
//! at most `WINDOW` deliveries ahead of what the caller has taken; and the
//! listing's gate, which reads a file for the signs of a grep.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::catalog::grep::{FieldSet, FileCandidates, FileGrep, Prefilter};
use crate::session::HeaderScan;

/// Deliveries made and not yet taken by the caller, at most: matching in
/// JavaScript (and a caller's `onMatch`, which may make it wait) is slower
/// than reading here, and without a bound every candidate of the archive
/// would be queued at once. The readers wait for `Window::taken`.
pub const WINDOW: u64 = 16;

/// A reader's buffer beyond this (grown for a long line) is let go after the file.
const KEPT_BUFFER: usize = 8 << 20;

/// How often, at most, a file without candidates is delivered (as progress).
const PROGRESS_WAIT: Duration = Duration::from_millis(10);

/// How many deliveries the caller has taken, and the end of waiting.
#[derive(Default)]
pub struct Window {
    taken: Mutex<u64>,
    moved: Condvar,
    cancel: AtomicBool,
}

impl Window {
    /// Stops the scan at the next file; a reader waiting for room delivers
    /// nothing more.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.moved.notify_all();
    }

    /// The caller is done with one more delivery: the readers may make another.
    pub fn taken(&self) {
        if let Ok(mut taken) = self.taken.lock() {
            *taken += 1;
        }
        self.moved.notify_all();
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Waits until delivery number `sent` (from 0) may go; false once cancelled.
    fn wait_for_room(&self, sent: u64) -> bool {
        let Ok(taken) = self.taken.lock() else {
            return false;
        };
        let room = self
            .moved
            .wait_while(taken, |taken| *taken + WINDOW <= sent && !self.cancelled());
        room.is_ok() && !self.cancelled()
    }
}

/// Receives a file's index in the paths (`None` once every file is done),
/// how many files are done, and the file's candidates.
pub type Deliver<'a> = dyn Fn(Option<usize>, usize, FileCandidates) + Sync + 'a;

/// Files finish out of order; each is delivered once those before it are.
struct InOrder {
    next: usize,
    ready: BTreeMap<usize, FileCandidates>,
    last_sent: Instant,
    sent: u64,
    /// `PROGRESS_WAIT` (the tests choose their own).
    progress_wait: Duration,
}

impl InOrder {
    fn new() -> InOrder {
        InOrder {
            next: 0,
            ready: BTreeMap::new(),
            last_sent: Instant::now(),
            sent: 0,
            progress_wait: PROGRESS_WAIT,
        }
    }

    /// File `i` is read: delivers it and the ready files after it, in order;
    /// one without candidates only when progress is due.
    fn finish(&mut self, i: usize, found: FileCandidates, window: &Window, deliver: &Deliver) {
        self.ready.insert(i, found);
        loop {
            let next = self.next;
            let Some(found) = self.ready.remove(&next) else {
                break;
            };
            self.next += 1;
            let due = self.last_sent.elapsed() >= self.progress_wait;
            if !found.candidates.is_empty() || found.header.is_some() || due {
                if window.wait_for_room(self.sent) {
                    deliver(Some(next), next + 1, found);
                }
                self.sent += 1;
                self.last_sent = Instant::now();
            }
        }
    }
}

/// The prefilter of a grep's pattern: literal, or a regex body when `regex`.
pub fn prefilter(pattern: &str, regex: bool, case_sensitive: bool) -> Prefilter {
    if regex {
        Prefilter::regex(pattern, !case_sensitive)
    } else {
        Prefilter::literal(pattern, !case_sensitive)
    }
}

/// A file's header line (as `readSessionHeader` finds it) when it may name a
/// parent session: it holds `parentSession`, or an escape that may spell it.
/// Most files are no forks, and their headers need not cross to JavaScript.
fn parent_header(path: &Path) -> Option<Vec<u8>> {
    match crate::session::read_header(path) {
        Ok(HeaderScan::Found(line))
            if memchr::memmem::find(&line, b"parentSession").is_some()
                || memchr::memmem::find(&line, b"\\u").is_some() =>
        {
            Some(line)
        }
        _ => None,
    }
}

/// Reads `paths` for `grep`'s candidates on threads of their own; delivers
/// files with candidates in the order of `paths`, others now and then as
/// progress, and the end, each once `window` has room. Unreadable files
/// have no candidates. Stops at the next file once `window` is cancelled.
/// A grep of no fields reads each file's header only, and delivers the files
/// whose header may name a parent (`FileCandidates::header`): where forks
/// are, without reading the files whole.
pub fn grep_files<P: AsRef<Path> + Sync>(
    paths: &[P],
    grep: &FileGrep,
    window: &Window,
    deliver: &Deliver,
) {
    let order = Mutex::new(InOrder::new());
    let stop = || window.cancelled();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // One buffer per thread, reused: a fresh allocation per file would
        // fault in every page of it again.
        let read_and_scan = |buffer: &mut Vec<u8>, i: usize| {
            let found = if grep.fields.0 == 0 {
                FileCandidates {
                    header: parent_header(paths[i].as_ref()),
                    ..FileCandidates::default()
                }
            } else {
                std::fs::File::open(paths[i].as_ref())
                    .and_then(|mut file| grep.scan_reader(&mut file, buffer, &stop))
                    .unwrap_or_default()
            };
            // A line far longer than the others is not kept for the next file.
            if buffer.len() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            // The other readers wait at the lock meanwhile, each holding no
            // more than the file it has read.
            if let Ok(mut order) = order.lock() {
                order.finish(i, found, window, deliver);
            }
        };
        crate::parallel::for_each_index_with(
            paths.len(),
            crate::parallel::threads(),
            &window.cancel,
            Vec::new,
            read_and_scan,
            drop,
        );
    }));
    let (done, sent) = order.lock().map_or((0, 0), |o| (o.next, o.sent));
    if window.wait_for_room(sent) {
        deliver(None, done, FileCandidates::default());
    }
}

/// `grep_files` over the `.jsonl` files of `dirs`, last name first (about
/// newest first, without a stat: `discovery::names_newest_first`); `listed`
/// is handed them, as (folder, name) in the order read, before any is read.
pub fn grep_folders(
    dirs: &[PathBuf],
    grep: &FileGrep,
    window: &Window,
    listed: &dyn Fn(Vec<(u32, String)>),
    deliver: &Deliver,
) {
    let files = crate::catalog::discovery::names_newest_first(dirs);
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(folder, name)| dirs[*folder as usize].join(name))
        .collect();
    listed(files);
    grep_files(&paths, grep, window, deliver);
}

/// A listing's gate for a grep: a file passes when it may hold a candidate
/// (`FileGrep::may_match`); one that cannot be read passes, for the listing
/// to report as it would.
pub struct GrepGate {
    pub filter: Prefilter,
    pub fields: FieldSet,
}

thread_local! {
    static GATE_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl GrepGate {
    pub fn passes(&self, path: &Path) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::grep::Field;
    use std::path::PathBuf;

    const TEXT: FieldSet = FieldSet(1 << Field::Text as u32);

    /// A file's candidates: one block per match of `needle` in `file`.
    fn found(file: &str) -> FileCandidates {
        let filter = prefilter("needle", false, false);
        FileGrep {
            filter: &filter,
            fields: TEXT,
        }
        .scan(file.as_bytes(), &|| false)
    }

    fn user(text: &str) -> String {
        format!(r#"{{"type":"message","id":"a","message":{{"role":"user","content":"{text}"}}}}"#)
            + "\n"
    }

    /// Deliveries as (file, done, candidates).
    type Seen = Mutex<Vec<(Option<usize>, usize, usize)>>;

    fn record(seen: &Seen) -> impl Fn(Option<usize>, usize, FileCandidates) + Sync + '_ {
        |file, done, found| {
            seen.lock()
                .unwrap()
                .push((file, done, found.candidates.len()))
        }
    }

    #[test]
    fn files_finishing_out_of_order_are_delivered_in_order() {
        let (window, seen) = (Window::default(), Seen::default());
        let deliver = record(&seen);
        let mut order = InOrder::new();
        order.progress_wait = Duration::from_secs(3600);
        order.finish(2, found(&user("a needle")), &window, &deliver);
        order.finish(3, found(&user("no")), &window, &deliver);
        assert!(seen.lock().unwrap().is_empty(), "file 0 is not done");
        order.finish(0, found(&user("needle needle")), &window, &deliver);
        assert_eq!(*seen.lock().unwrap(), [(Some(0), 1, 1)]);
        // A file without candidates goes only as progress, when it is due.
        order.finish(1, found(&user("no")), &window, &deliver);
        assert_eq!(*seen.lock().unwrap(), [(Some(0), 1, 1), (Some(2), 3, 1)]);
        order.progress_wait = Duration::ZERO;
        order.finish(4, found(&user("no")), &window, &deliver);
        assert_eq!(
            *seen.lock().unwrap(),
            [(Some(0), 1, 1), (Some(2), 3, 1), (Some(4), 5, 0)]
        );
    }

    fn wait_for(what: impl Fn() -> bool) {
        let start = Instant::now();
        while !what() {
            assert!(start.elapsed() < Duration::from_secs(10), "timed out");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn deliveries_wait_for_the_window_and_cancel_ends_the_wait() {
        let dir = std::env::temp_dir().join(format!("pisn-grep-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths: Vec<PathBuf> = (0..40).map(|i| dir.join(format!("{i}.jsonl"))).collect();
        for path in &paths {
            std::fs::write(path, user("a needle")).unwrap();
        }
        let (window, seen) = (Window::default(), Seen::default());
        let filter = prefilter("needle", false, false);
        let grep = FileGrep {
            filter: &filter,
            fields: TEXT,
        };
        let count = || seen.lock().unwrap().len();
        let deliver = record(&seen);
        std::thread::scope(|scope| {
            let scan = scope.spawn(|| grep_files(&paths, &grep, &window, &deliver));
            wait_for(|| count() == WINDOW as usize);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(count(), WINDOW as usize, "no more than WINDOW ahead");
            for _ in 0..4 {
                window.taken();
            }
            wait_for(|| count() == WINDOW as usize + 4);
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(count(), WINDOW as usize + 4);
            window.cancel();
            scan.join().unwrap();
        });
        drop(deliver);
        let seen = seen.into_inner().unwrap();
        let files: Vec<Option<usize>> = seen.iter().map(|s| s.0).collect();
        assert_eq!(
            files,
            (0..20).map(Some).collect::<Vec<_>>(),
            "in order, no end"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_grep_of_no_fields_delivers_the_headers_that_may_name_a_parent() {
        let dir = std::env::temp_dir().join(format!("pisn-grep-{}", uuid::Uuid::new_v4()));
        let sessions = dir.join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let header = |extra: &str| {
            format!(
                "{{\"type\":\"session\",\"id\":\"s\"{extra}}}\n{}",
                user("needle")
            )
        };
        let files = [
            ("a.jsonl", header("")),
            ("b.jsonl", header(",\"parentSession\":\"/x/a.jsonl\"")),
            ("c.jsonl", header(",\"parent\\u0053ession\":\"/x/a.jsonl\"")),
            ("d.jsonl", user("needle")),
            (
                "e.jsonl",
                format!("not json\n{}", header(",\"parentSession\":\"/x/b.jsonl\"")),
            ),
        ];
        for (name, text) in &files {
            std::fs::write(sessions.join(name), text).unwrap();
        }
        let (window, seen) = (Window::default(), Mutex::new(Vec::new()));
        let filter = prefilter("needle", false, false);
        let grep = FileGrep {
            filter: &filter,
            fields: FieldSet(0),
        };
        let listed = Mutex::new(Vec::new());
        grep_folders(
            std::slice::from_ref(&sessions),
            &grep,
            &window,
            &|files| *listed.lock().unwrap() = files,
            &|file, _, found| {
                assert!(found.candidates.is_empty(), "no blocks are read");
                if let (Some(i), Some(header)) = (file, found.header) {
                    seen.lock()
                        .unwrap()
                        .push((i, String::from_utf8(header).unwrap()));
                }
            },
        );
        let listed = listed.into_inner().unwrap();
        let names: Vec<&str> = listed.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(
            names,
            ["e.jsonl", "d.jsonl", "c.jsonl", "b.jsonl", "a.jsonl"]
        );
        let seen = seen.into_inner().unwrap();
        let headers: Vec<(&str, &str)> =
            seen.iter().map(|(i, h)| (names[*i], h.as_str())).collect();
        assert_eq!(
            headers,
            [
                ("e.jsonl", "{\"type\":\"session\",\"id\":\"s\",\"parentSession\":\"/x/b.jsonl\"}"),
                ("c.jsonl", "{\"type\":\"session\",\"id\":\"s\",\"parent\\u0053ession\":\"/x/a.jsonl\"}"),
                ("b.jsonl", "{\"type\":\"session\",\"id\":\"s\",\"parentSession\":\"/x/a.jsonl\"}"),
            ],
            "the header a line that is no JSON does not hide, an escaped key; not a plain header, nor a file without one"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_whole_scan_ends_with_every_file_done() {
        let dir = std::env::temp_dir().join(format!("pisn-grep-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut paths: Vec<PathBuf> = (0..5).map(|i| dir.join(format!("{i}.jsonl"))).collect();
        for (i, path) in paths.iter().enumerate() {
            std::fs::write(path, user(if i % 2 == 0 { "needle" } else { "no" })).unwrap();
        }
        paths.push(dir.join("missing.jsonl"));
        let (window, seen) = (Window::default(), Seen::default());
        let filter = prefilter("NEEDLE", false, false);
        let grep = FileGrep {
            filter: &filter,
            fields: TEXT,
        };
        grep_files(&paths, &grep, &window, &record(&seen));
        let seen = seen.into_inner().unwrap();
        let with: Vec<_> = seen.iter().filter(|s| s.2 > 0).map(|s| s.0).collect();
        assert_eq!(with, [Some(0), Some(2), Some(4)]);
        assert_eq!(seen.last(), Some(&(None, 6, 0)));

        let gate = GrepGate {
            filter: prefilter("needle", true, true),
            fields: TEXT,
        };
        let passed: Vec<bool> = paths.iter().map(|p| gate.passes(p)).collect();
        assert_eq!(
            passed,
            [true, false, true, false, true, true],
            "unreadable passes"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
