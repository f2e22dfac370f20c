//! Listing: `list()`/`listAll()` (lib/listing.js) as `folder_scan`'s scan on
//! a thread of its own, its events reaching JavaScript in batches through a
//! threadsafe function; `findById`/`continueRecent`'s file discovery.

use napi_derive::napi;

use super::grep::{grep_gate, JsGrepGate};
use super::text::{text_js, Text};
use super::*;
use crate::catalog::discovery::Candidate;
use crate::catalog::folder_scan::{self, Event, Source};
use crate::catalog::grep_scan::GrepGate;
use crate::catalog::listing;
use crate::catalog::{scanner, summaries};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// Texts come as strings when they are UTF-8 (nearly always), or else as
/// JSON literals (`...Literal`): only JSON escapes carry lone surrogates to
/// JavaScript intact.
#[napi(object, object_from_js = false)]
pub struct JsSessionSummary {
    pub header: String,
    pub message_count: u32,
    #[napi(ts_type = "string")]
    pub first_message: Option<Text>,
    pub first_message_literal: Option<String>,
    #[napi(ts_type = "string")]
    pub all_messages_text: Option<Text>,
    pub all_messages_text_literal: Option<String>,
    pub last_activity: Option<f64>,
    pub unparsed_times: Vec<String>,
    /// A JSON literal.
    pub name: Option<String>,
}

/// The process's listing: its cache of summaries and the folder of the
/// persistent copy (`set_listing_cache_dir`).
pub(super) static LISTINGS: std::sync::LazyLock<folder_scan::Listings> =
    std::sync::LazyLock::new(folder_scan::Listings::default);

/// Sets (or with `null`, clears) the folder of the persistent listing cache.
/// The JavaScript layer checks that it is not inside pi's session folders.
#[napi(catch_unwind)]
pub fn set_listing_cache_dir(dir: Option<String>) {
    LISTINGS.set_cache_dir(dir.map(Into::into));
}

/// One file's listing result, a batch of unchanged files (`index` -2),
/// `listAll()`'s candidates (`index` -3, before any result), or the end of the
/// scan (`index` -1).
#[napi(object, object_from_js = false)]
pub struct JsScanResult {
    pub index: i64,
    /// The file's name, in a scan of one folder.
    pub name: Option<String>,
    pub summary: Option<JsSessionSummary>,
    pub mtime_ms: Option<f64>,
    /// The file could not be read (the reference's summary is then null).
    pub failed: bool,
    /// See `summaries::FileResult`.
    pub token: f64,
    pub unchanged: Option<JsUnchanged>,
    pub candidates: Option<JsCandidates>,
    pub read: Option<JsReadBatch>,
}

/// Files whose summaries the caller holds (their tokens were in `known`):
/// reported together, one call into JavaScript for many files.
#[napi(object)]
pub struct JsUnchanged {
    pub indices: Uint32Array,
    pub tokens: Float64Array,
}

/// Files read (or taken from the listing cache) whose summaries hold nothing
/// unusual: reported together, a column per field, so that JavaScript gets a
/// few arrays per batch instead of two objects of ten properties per file.
/// Files that failed, are not sessions, or have a text that is not UTF-8 or a
/// time only JavaScript can parse come one at a time, as before.
#[napi(object, object_from_js = false)]
pub struct JsReadBatch {
    pub indices: Uint32Array,
    /// Each file's name, in a scan of one folder.
    pub names: Option<Vec<String>>,
    pub tokens: Float64Array,
    pub mtime_ms: Float64Array,
    pub headers: Vec<String>,
    pub message_counts: Uint32Array,
    #[napi(ts_type = "string[]")]
    pub first_messages: Vec<Text>,
    /// Left out of a listing without texts.
    #[napi(ts_type = "string[] | undefined")]
    pub all_messages_texts: Option<Vec<Text>>,
    /// NaN where there was none.
    pub last_activity: Float64Array,
    /// JSON literals, null where the session has no name.
    pub session_names: Vec<Option<String>>,
}

/// `listAll()`'s files in the order they are scanned and reported (see
/// `discovery::folder_candidates`).
#[napi(object)]
pub struct JsCandidates {
    /// Index of each file's folder in the folders asked for.
    pub folders: Uint32Array,
    pub names: Vec<String>,
    /// `stats.mtimeMs`, NaN where the stat failed.
    pub mtime_ms: Float64Array,
}

impl JsScanResult {
    fn end() -> JsScanResult {
        JsScanResult {
            index: -1,
            name: None,
            summary: None,
            mtime_ms: None,
            failed: false,
            token: 0.0,
            unchanged: None,
            candidates: None,
            read: None,
        }
    }
}

fn summary_js(s: listing::SessionSummary) -> JsSessionSummary {
    let (first_message, first_message_literal) = text_js(s.first_message);
    let (all_messages_text, all_messages_text_literal) = text_js(s.all_messages_text);
    JsSessionSummary {
        header: s.header,
        message_count: s.message_count,
        first_message,
        first_message_literal,
        all_messages_text,
        all_messages_text_literal,
        last_activity: s.last_activity,
        unparsed_times: s.unparsed_times,
        name: s.name,
    }
}

/// Cancels a running scan.
#[napi]
pub struct ScanHandle {
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    files: u32,
}

#[napi]
impl ScanHandle {
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many files the scan reports (before the end mark).
    #[napi(getter)]
    pub fn files(&self) -> u32 {
        self.files
    }
}

type ScanCallback = ThreadsafeFunction<JsScanResult, (), JsScanResult, Status, false>;

fn known_tokens(known: &[f64]) -> summaries::Known {
    known.iter().map(|&t| t as u64).collect()
}

/// `listAll()`'s scan: the `.jsonl` files of `dirs`, found, stat'ed and
/// ordered on the scan's own thread (see `discovery::folder_candidates`) and
/// reported first as one message of candidates (index -3); then results by
/// index in that order as files finish, unchanged ones (their token in
/// `known`) in batches; then index -1. With `texts` false, summaries come
/// without `allMessagesText` (for callers that never show it).
#[napi(catch_unwind)]
pub fn scan_session_folders(
    dirs: Vec<String>,
    known: Float64Array,
    on_result: ScanCallback,
    texts: Option<bool>,
    gate: Option<JsGrepGate>,
) -> ScanHandle {
    let dirs = dirs.into_iter().map(Into::into).collect();
    let texts = texts.unwrap_or(true);
    spawn_scan(
        Source::Folders(dirs),
        known_tokens(&known),
        texts,
        gate.as_ref().map(grep_gate),
        on_result,
    )
}

/// `list()`'s scan of a whole folder: the `.jsonl` names of `dir` in the order
/// `readdir` gives them (sorted by bytes), read newest name first. Each result
/// carries its file's name and its index in that order (batches of unchanged
/// files carry indices only); `null` if the folder cannot be read. JavaScript
/// then holds no name or path before the first result arrives. `texts` as
/// in `scan_session_folders`.
#[napi(catch_unwind)]
pub fn scan_session_folder(
    dir: String,
    known: Float64Array,
    on_result: ScanCallback,
    texts: Option<bool>,
    gate: Option<JsGrepGate>,
) -> Option<ScanHandle> {
    let source = Source::folder(dir.into()).ok()?;
    let known = known_tokens(&known);
    let texts = texts.unwrap_or(true);
    Some(spawn_scan(
        source,
        known,
        texts,
        gate.as_ref().map(grep_gate),
        on_result,
    ))
}

/// How many unchanged files, or how long, a batch collects before it is sent.
const BATCH_FILES: usize = 2048;
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(4);
/// The first batch is sent sooner: JavaScript is idle until it arrives.
const FIRST_BATCH_FILES: usize = 128;

#[derive(Default)]
struct UnchangedBatch {
    indices: Vec<u32>,
    tokens: Vec<f64>,
    since: Option<std::time::Instant>,
    sent: bool,
}

impl UnchangedBatch {
    /// Adds a file; returns the batch to send when it is due.
    fn add(&mut self, index: usize, token: u64) -> Option<JsScanResult> {
        self.indices.push(index as u32);
        self.tokens.push(token as f64);
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        let files = if self.sent {
            BATCH_FILES
        } else {
            FIRST_BATCH_FILES
        };
        // The clock read every 16 files: a file costs less than reading it.
        let due = self.indices.len() >= files
            || (self.indices.len().is_multiple_of(16) && since.elapsed() >= BATCH_WAIT);
        due.then(|| self.take()).flatten()
    }

    fn take(&mut self) -> Option<JsScanResult> {
        if self.indices.is_empty() {
            return None;
        }
        self.since = None;
        self.sent = true;
        Some(JsScanResult {
            index: -2,
            unchanged: Some(JsUnchanged {
                indices: std::mem::take(&mut self.indices).into(),
                tokens: std::mem::take(&mut self.tokens).into(),
            }),
            ..JsScanResult::end()
        })
    }
}

/// Read results for one `JsReadBatch`, sent on the same terms as unchanged
/// files, except that the first is sent alone at once (the first progress
/// call waits for it) and the clock is read at every file (reads are slow).
#[derive(Default)]
struct ReadBatch {
    indices: Vec<u32>,
    names: Vec<String>,
    tokens: Vec<f64>,
    mtime_ms: Vec<f64>,
    headers: Vec<String>,
    message_counts: Vec<u32>,
    first_messages: Vec<Text>,
    all_messages_texts: Vec<Text>,
    last_activity: Vec<f64>,
    session_names: Vec<Option<String>>,
    since: Option<std::time::Instant>,
    sent: bool,
    /// The listing hands over message texts (see `scan_session_folders`).
    texts: bool,
}

/// One file's plain summary in the forms JavaScript gets, made on the scan
/// thread before the batch's lock is taken (encoding a long text is the
/// costly part, and the scan threads do it side by side).
struct ReadRow {
    index: u32,
    name: Option<String>,
    token: f64,
    mtime_ms: f64,
    header: String,
    message_count: u32,
    first_message: Text,
    all_messages_text: Option<Text>,
    last_activity: f64,
    session_name: Option<String>,
}

impl ReadRow {
    /// Whether a summary holds nothing unusual: texts in UTF-8 (a JSON
    /// literal otherwise), no times only JavaScript can parse.
    fn plain(summary: &listing::SessionSummary, texts: bool) -> bool {
        summary.unparsed_times.is_empty()
            && std::str::from_utf8(&summary.first_message).is_ok()
            && (!texts || std::str::from_utf8(&summary.all_messages_text).is_ok())
    }

    /// The row of a summary that is `plain`.
    fn new(
        index: usize,
        name: Option<String>,
        summary: listing::SessionSummary,
        mtime_ms: f64,
        token: u64,
        texts: bool,
    ) -> ReadRow {
        let text = |bytes: Vec<u8>| Text::new(String::from_utf8(bytes).unwrap_or_default());
        ReadRow {
            index: index as u32,
            name,
            token: token as f64,
            mtime_ms,
            header: summary.header,
            message_count: summary.message_count,
            first_message: text(summary.first_message),
            all_messages_text: texts.then(|| text(summary.all_messages_text)),
            last_activity: summary.last_activity.unwrap_or(f64::NAN),
            session_name: summary.name,
        }
    }
}

impl ReadBatch {
    /// Adds a file; returns the batch to send when it is due.
    fn add(&mut self, row: ReadRow) -> Option<JsScanResult> {
        self.indices.push(row.index);
        self.names.extend(row.name);
        self.tokens.push(row.token);
        self.mtime_ms.push(row.mtime_ms);
        self.headers.push(row.header);
        self.message_counts.push(row.message_count);
        self.first_messages.push(row.first_message);
        self.all_messages_texts.extend(row.all_messages_text);
        self.last_activity.push(row.last_activity);
        self.session_names.push(row.session_name);
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        let due = !self.sent || self.indices.len() >= BATCH_FILES || since.elapsed() >= BATCH_WAIT;
        due.then(|| self.take()).flatten()
    }

    fn take(&mut self) -> Option<JsScanResult> {
        if self.indices.is_empty() {
            return None;
        }
        self.since = None;
        self.sent = true;
        let names = std::mem::take(&mut self.names);
        Some(JsScanResult {
            index: -4,
            read: Some(JsReadBatch {
                names: (!names.is_empty()).then_some(names),
                indices: std::mem::take(&mut self.indices).into(),
                tokens: std::mem::take(&mut self.tokens).into(),
                mtime_ms: std::mem::take(&mut self.mtime_ms).into(),
                headers: std::mem::take(&mut self.headers),
                message_counts: std::mem::take(&mut self.message_counts).into(),
                first_messages: std::mem::take(&mut self.first_messages),
                all_messages_texts: self
                    .texts
                    .then(|| std::mem::take(&mut self.all_messages_texts)),
                last_activity: std::mem::take(&mut self.last_activity).into(),
                session_names: std::mem::take(&mut self.session_names),
            }),
            ..JsScanResult::end()
        })
    }
}
/// `listAll()`'s candidates as one message (index -3).
fn candidates_js(candidates: &[Candidate]) -> JsScanResult {
    JsScanResult {
        index: -3,
        candidates: Some(candidate_columns(candidates)),
        ..JsScanResult::end()
    }
}

fn candidate_columns(candidates: &[Candidate]) -> JsCandidates {
    JsCandidates {
        folders: candidates
            .iter()
            .map(|c| c.folder)
            .collect::<Vec<_>>()
            .into(),
        names: candidates.iter().map(|c| c.name.clone()).collect(),
        mtime_ms: candidates
            .iter()
            .map(|c| c.mtime_ms.unwrap_or(f64::NAN))
            .collect::<Vec<_>>()
            .into(),
    }
}

/// Runs `folder_scan`'s scan on a thread of its own and sends its events to
/// `on_result`: unchanged files and plain read files in batches, the others
/// one at a time, what is batched sent before the end.
fn spawn_scan(
    source: Source,
    known: summaries::Known,
    texts: bool,
    gate: Option<GrepGate>,
    on_result: ScanCallback,
) -> ScanHandle {
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    let files = source.files();
    std::thread::spawn(move || {
        let send = |message| {
            on_result.call(message, ThreadsafeFunctionCallMode::NonBlocking);
        };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let passes = gate
                .as_ref()
                .map(|g| |path: &std::path::Path| g.passes(path));
            let unchanged = std::sync::Mutex::new(UnchangedBatch::default());
            let reads = std::sync::Mutex::new(ReadBatch {
                texts,
                ..ReadBatch::default()
            });
            let on_event = |event: Event| match event {
                Event::Candidates(candidates) => send(candidates_js(candidates)),
                Event::Unchanged { index, token } => {
                    let due = unchanged.lock().ok().and_then(|mut b| b.add(index, token));
                    if let Some(message) = due {
                        send(message);
                    }
                }
                Event::Read {
                    index,
                    name,
                    summary: Some(summary),
                    mtime_ms,
                    token,
                } if ReadRow::plain(&summary, texts) => {
                    let row = ReadRow::new(index, name, summary, mtime_ms, token, texts);
                    let due = reads.lock().ok().and_then(|mut b| b.add(row));
                    if let Some(message) = due {
                        send(message);
                    }
                }
                Event::Read {
                    index,
                    name,
                    summary,
                    mtime_ms,
                    token,
                } => send(JsScanResult {
                    index: index as i64,
                    name,
                    summary: summary.map(summary_js),
                    mtime_ms: Some(mtime_ms),
                    token: token as f64,
                    ..JsScanResult::end()
                }),
                Event::Failed { index, name } => send(JsScanResult {
                    index: index as i64,
                    name,
                    failed: true,
                    ..JsScanResult::end()
                }),
                Event::End => {
                    if let Some(message) = unchanged.lock().ok().and_then(|mut b| b.take()) {
                        send(message);
                    }
                    if let Some(message) = reads.lock().ok().and_then(|mut b| b.take()) {
                        send(message);
                    }
                    send(JsScanResult::end());
                }
            };
            LISTINGS.scan(
                source,
                &known,
                texts,
                passes.as_ref().map(|f| f as &scanner::Gate),
                &flag,
                &on_event,
            );
        }))
        .inspect_err(|_| send(JsScanResult::end()));
    });
    ScanHandle { cancel, files }
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `findById`'s candidates (see `discovery::files_with_id`).
#[napi(object)]
pub struct JsSessionsWithId {
    /// `[fileName, headerLine]`, in `readdirSync` order.
    pub files: Vec<Vec<String>>,
    /// False when files after the last one listed were not examined.
    pub complete: bool,
}

/// `findById`'s candidates in `dir` (`readdirSync` order) whose header id is `id`,
/// up to the first file named for the id unless `whole`; `null` if the folder
/// cannot be read.
#[napi(catch_unwind)]
pub fn find_sessions_with_id(dir: String, id: String, whole: bool) -> Option<JsSessionsWithId> {
    let found =
        crate::catalog::discovery::files_with_id(std::path::Path::new(&dir), &id, whole).ok()?;
    Some(JsSessionsWithId {
        files: found
            .files
            .into_iter()
            .map(|(path, line)| vec![file_name(&path), lossy(&line)])
            .collect(),
        complete: found.complete,
    })
}

/// The `.jsonl` files of `dir` whose header id starts with `prefix`, as
/// [name, header line] in `readdirSync` order; `null` if the folder cannot be read.
#[napi(catch_unwind)]
pub fn find_sessions_with_id_prefix(dir: String, prefix: String) -> Option<Vec<Vec<String>>> {
    let found =
        crate::catalog::discovery::files_with_id_prefix(std::path::Path::new(&dir), &prefix)
            .ok()?;
    Some(
        found
            .into_iter()
            .map(|(path, line)| vec![file_name(&path), lossy(&line)])
            .collect(),
    )
}

/// `findMostRecentSession`'s order: the `.jsonl` file names of `dir`, newest
/// first; `null` where the reference gives up.
#[napi(catch_unwind)]
pub fn recent_session_files(dir: String) -> Option<Vec<String>> {
    crate::catalog::discovery::recent_files(std::path::Path::new(&dir))
        .map(|paths| paths.iter().map(|p| file_name(p)).collect())
}

/// What the listing makes of one file: its summary without texts (`null`
/// where the listing has none: not a session, or not readable) and its mtime.
#[napi(object, object_from_js = false)]
pub struct JsFileSummary {
    pub summary: Option<JsSessionSummary>,
    /// `stats.mtimeMs`, NaN where the file could not be stat'ed.
    pub mtime_ms: f64,
}

/// The listing's summary of one session file, from (and into) the process's
/// listing cache: for `recallSearch`, which reads the summaries of the files
/// it finds hits in instead of listing every file.
#[napi(catch_unwind)]
pub fn session_file_summary(path: String) -> JsFileSummary {
    match LISTINGS.summary_of(std::path::Path::new(&path)) {
        Ok(result) => JsFileSummary {
            summary: result.summary.map(summary_js),
            mtime_ms: result.mtime_ms,
        },
        Err(_) => JsFileSummary {
            summary: None,
            mtime_ms: f64::NAN,
        },
    }
}

/// The `.jsonl` files of `dirs`, newest mtime first, with their mtimes: the
/// order in which `listPrompts` reads them, found and stat'ed as `listAll()`'s
/// scan finds them (`discovery::folder_candidates`), without reading them.
#[napi(catch_unwind)]
pub fn session_file_candidates(dirs: Vec<String>) -> JsCandidates {
    let dirs: Vec<std::path::PathBuf> = dirs.into_iter().map(Into::into).collect();
    let (candidates, _read, _views) = crate::catalog::discovery::folder_candidates(&dirs);
    candidate_columns(&candidates)
}
