//! napi for `grepSessions` (see `grep`, `grep_scan`): each file's candidate
//! blocks, read on threads of their own, handed to JavaScript in the order
//! of the paths.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::catalog::grep::{FieldSet, FileCandidates, FileGrep};
use crate::catalog::grep_scan::{grep_files, grep_folders, prefilter, GrepGate, Window};

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
    /// Per entry, 8 numbers: id start, end, timestamp start, end, role start,
    /// end, a toolResult's toolName start, end (a missing value is 0, 0).
    pub entries: Uint32Array,
    /// Per candidate, 8 numbers: entry, field, block index, text start, end
    /// (in `json` when the next is 1: ASCII; else in `texts`), 1 or 0,
    /// arguments start, end (in `json`).
    pub candidates: Uint32Array,
    /// In a pass for headers (`fields` 0): the file's header line, when it
    /// may name a parent session.
    pub header: Option<String>,
    /// In a grep of folders, for a file with candidates: its folder's index
    /// in the folders, and its name.
    pub folder: Option<u32>,
    pub name: Option<String>,
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
                    e.tool_name.0,
                    e.tool_name.1,
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
            header: found.header.as_deref().map(super::lossy),
            folder: None,
            name: None,
            json: found.json.into(),
            texts: found.texts.into(),
            entries: entries.into(),
            candidates: candidates.into(),
        }
    }
}

type GrepCallback = ThreadsafeFunction<JsGrepFile, (), JsGrepFile, Status, false>;

/// A running grep; `cancel()` stops it at the next file.
#[napi]
pub struct GrepScan {
    window: Arc<Window>,
    /// In a grep of folders, the folders, and their files in the order read
    /// once listed.
    dirs: Vec<PathBuf>,
    files: Arc<OnceLock<Vec<(u32, String)>>>,
}

#[napi]
impl GrepScan {
    /// In a grep of folders, the files at `places` in the order read (none
    /// before the grep has listed them).
    #[napi(catch_unwind)]
    pub fn files(&self, places: Uint32Array) -> JsFolderFiles {
        let files = self.files.get().map_or(&[][..], |f| &f[..]);
        let at: Vec<&(u32, String)> = places
            .iter()
            .filter_map(|&p| files.get(p as usize))
            .collect();
        JsFolderFiles {
            folders: at.iter().map(|f| f.0).collect::<Vec<u32>>().into(),
            names: at.iter().map(|f| f.1.clone()).collect(),
        }
    }

    /// In a grep of folders, `stats.mtimeMs` of every file, in the order
    /// read (NaN where the stat fails): stat'ed now, only when a search
    /// needs to know which are newest.
    #[napi(catch_unwind)]
    pub fn mtimes(&self) -> Float64Array {
        let files = self.files.get().map_or(&[][..], |f| &f[..]);
        crate::catalog::discovery::mtimes_of(&self.dirs, files).into()
    }

    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.window.cancel();
    }

    /// JavaScript is done with one more message: the readers may send another
    /// (see `grep_scan::WINDOW`).
    #[napi(catch_unwind)]
    pub fn taken(&self) {
        self.window.taken();
    }
}

/// Files of a grep of folders: each one's folder (its index in the folders)
/// and name.
#[napi(object)]
pub struct JsFolderFiles {
    pub folders: Uint32Array,
    pub names: Vec<String>,
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

/// The listing's gate for `gate` (see `grep_scan::GrepGate`).
pub fn grep_gate(gate: &JsGrepGate) -> GrepGate {
    GrepGate {
        filter: prefilter(&gate.pattern, gate.regex, gate.case_sensitive),
        fields: FieldSet(gate.fields),
    }
}

/// Starts reading `paths` for blocks of `fields` (bits of `grep::Field`) that
/// may hold `pattern` (literal, or a regex body when `regex`); reports files
/// with candidates in the order of `paths`, progress now and then, and the
/// end (file -1). Unreadable files have no candidates. With `fields` 0, reads
/// each file's header only and reports those that may name a parent session.
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
        let filter = prefilter(&pattern, regex, case_sensitive);
        let grep = FileGrep {
            filter: &filter,
            fields: FieldSet(fields),
        };
        grep_files(&paths, &grep, &room, &|file, done, found| {
            let file = file.map_or(-1, |i| i as i32);
            on_file.call(
                JsGrepFile::of(file, done, found),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
    });
    GrepScan {
        window,
        dirs: Vec::new(),
        files: Arc::default(),
    }
}

/// `grepSessionFiles` over the `.jsonl` files of `dirs`, last name first
/// (about newest first, without a stat); each file with candidates comes
/// with its folder and name, `files(places)` names others, `mtimes()`
/// stats them all. One call instead of the names crossing to JavaScript and
/// back as paths.
#[napi(catch_unwind)]
pub fn grep_session_folders(
    dirs: Vec<String>,
    pattern: String,
    regex: bool,
    case_sensitive: bool,
    fields: u32,
    on_file: GrepCallback,
) -> GrepScan {
    let window = Arc::new(Window::default());
    let files: Arc<OnceLock<Vec<(u32, String)>>> = Arc::default();
    let dirs: Vec<PathBuf> = dirs.into_iter().map(Into::into).collect();
    let (room, listed, folders) = (window.clone(), files.clone(), dirs.clone());
    std::thread::spawn(move || {
        let dirs = folders;
        let filter = prefilter(&pattern, regex, case_sensitive);
        let grep = FileGrep {
            filter: &filter,
            fields: FieldSet(fields),
        };
        grep_folders(
            &dirs,
            &grep,
            &room,
            &|files| {
                let _ = listed.set(files);
            },
            &|file, done, found| {
                let mut message = JsGrepFile::of(file.map_or(-1, |i| i as i32), done, found);
                if !message.candidates.is_empty() || message.header.is_some() {
                    if let Some((folder, name)) = file.and_then(|i| listed.get()?.get(i)) {
                        message.folder = Some(*folder);
                        message.name = Some(name.clone());
                    }
                }
                on_file.call(message, ThreadsafeFunctionCallMode::NonBlocking);
            },
        );
    });
    GrepScan {
        window,
        dirs,
        files,
    }
}
