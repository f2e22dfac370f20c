//! One session file: read the way the reference reads (`store`), indexed
//! (`index`), written by whole lines and whole-file rewrites, assembled from
//! ranges of another (`assembly`), its open files pooled (`file_pool`).
//! This module is the session itself: its index, the bytes of its entries and
//! where they are persisted, the state behind the JavaScript `SessionManager`;
//! JavaScript keeps only the entry objects it has handed out.

pub mod assembly;
pub mod file_pool;
pub mod index;
pub mod loader;
pub mod store;

use foldhash::HashSet;
use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::entry::{
    read_line, read_line_with, EntryMeta, Key, Kind, LineRead, Role, NULL_KEY,
};
use crate::format::json::{self, JsValue};
use crate::format::json_text;
use crate::format::lazy;
use crate::format::migrate::{self, MigrateError};
use crate::parallel;
use assembly::Assembly;
use file_pool::{line_hash, FileIdentity, Gone, PoolOwner};
use index::{EntryIndex, NullishMessage};
use store::IoFailure;

pub const MAX_SESSION_HEADER_SCAN_BYTES: usize = 1024 * 1024;

/// From this file size on, `open` hands the memory its read freed back to the
/// system (about 8 MB of a 100 MB file); under a millisecond, but too much to
/// pay for each of thousands of small files.
const TRIM_AFTER_OPENING: u64 = 32 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum SessionError {
    Io(IoFailure),
    /// A plain `Error` with this message.
    Message(String),
    /// A `TypeError` with this message, where the reference hits one.
    Type(String),
    /// `Entry ${id} not found`: JavaScript spells the id.
    EntryNotFound,
}

impl From<IoFailure> for SessionError {
    fn from(e: IoFailure) -> Self {
        SessionError::Io(e)
    }
}

impl From<NullishMessage> for SessionError {
    fn from(e: NullishMessage) -> Self {
        let what = if e.is_null { "null" } else { "undefined" };
        SessionError::Type(format!("Cannot read properties of {what} (reading 'role')"))
    }
}

impl From<MigrateError> for SessionError {
    fn from(e: MigrateError) -> Self {
        match e {
            MigrateError::CannotCreateProperty(m) => SessionError::Type(m),
        }
    }
}

/// Where an entry's JSON line is.
#[derive(Debug, Clone)]
enum Line {
    /// Not serialized yet: only the JavaScript object exists (in-memory sessions,
    /// entries appended before the first flush).
    Pending,
    /// A span of the loaded file, read again when needed and checked against
    /// the hash of the bytes read then.
    File {
        offset: u64,
        len: usize,
        hash: u64,
    },
    Owned(Box<[u8]>),
}

pub enum OpenOutcome {
    /// No file at that path: the caller starts a new session there.
    Missing,
    /// An empty file: the caller starts a new session and writes its header.
    EmptyFile,
    Loaded {
        migrated: bool,
    },
}

pub enum PersistPlan {
    Skip,
    Append,
    /// The first flush: these positions have no line yet.
    Flush(Vec<u32>),
}

pub struct BranchOutcome {
    /// Old positions of the kept path entries, in their new order (after the header).
    pub kept: Vec<u32>,
    /// New parentId of each kept entry (`None` is null).
    pub parents: Vec<Option<Key>>,
    /// New firstKeptEntryId of each kept compaction.
    pub first_kept: Vec<Option<Key>>,
    /// Recreated labels: (position of the label entry that set it, new id).
    pub labels: Vec<(u32, String)>,
    /// parentId of each recreated label (`None` is null).
    pub label_parents: Vec<Option<Key>>,
}

/// One part of a branched session's path: its lines, each followed by `\n`.
#[derive(Default)]
struct Patched {
    assembly: Assembly,
    /// Each entry's place in `assembly` and the hash of its line (`None`: only
    /// the JavaScript object exists).
    spans: Vec<Option<(u64, usize, u64)>>,
}

/// See `Session::skeletons`.
pub struct SplitLines {
    pub ascii: Vec<u8>,
    pub other: Vec<u8>,
    /// 1 where the line went to `ascii`.
    pub mask: Vec<u8>,
    /// Per line, the slots (`format::lazy::SLOTS`) of the values cut from it.
    pub cuts: Vec<u8>,
}

pub enum HeaderScan {
    Found(Vec<u8>),
    NotFound,
    TooLong,
}

/// The file whose lines `Line::File` spans are, as it was when read.
struct Source {
    path: PathBuf,
    identity: FileIdentity,
}

pub struct Session {
    pub index: EntryIndex,
    lines: Vec<Line>,
    /// Where the `Line::File` lines are read from on demand. No descriptor is
    /// kept here: the process-wide pool (`file_pool`) holds the few most
    /// recently used, so thousands of live sessions hold a bounded number.
    source: Option<Source>,
    pub persist: bool,
    pub flushed: bool,
    file: Option<PathBuf>,
    /// This session's descriptors in the pool (closed when the session drops).
    files: PoolOwner,
    /// Bytes of `Line::Owned` lines.
    owned_bytes: usize,
    recorded: RecordedCuts,
}

/// The cuts (`format::lazy`) of the lines `open` read, found while it read
/// them, so neither a skeleton nor a cut value walks its line again: line `p`'s
/// are `cuts[first[p]..first[p + 1]]`. Emptied whenever the lines are replaced.
#[derive(Default)]
struct RecordedCuts {
    first: Vec<u32>,
    cuts: Vec<(u8, u32, u32)>,
}

impl RecordedCuts {
    fn from_lines(per_line: impl ExactSizeIterator<Item = Vec<lazy::Cut>>) -> RecordedCuts {
        let mut recorded = RecordedCuts {
            first: Vec::with_capacity(per_line.len() + 1),
            cuts: Vec::new(),
        };
        for cuts in per_line {
            recorded.first.push(recorded.cuts.len() as u32);
            // A line past 4 GiB (never a JavaScript string) keeps no cuts.
            if cuts.last().is_some_and(|c| c.end > u32::MAX as usize) {
                continue;
            }
            let stored = cuts.iter().map(|c| (c.slot, c.start as u32, c.end as u32));
            recorded.cuts.extend(stored);
        }
        recorded.first.push(recorded.cuts.len() as u32);
        recorded
    }

    fn of(&self, position: u32) -> Option<Vec<lazy::Cut>> {
        let p = position as usize;
        let (&from, &to) = (self.first.get(p)?, self.first.get(p + 1)?);
        let stored = &self.cuts[from as usize..to as usize];
        Some(
            stored
                .iter()
                .map(|&(slot, start, end)| lazy::Cut {
                    slot,
                    start: start as usize,
                    end: end as usize,
                })
                .collect(),
        )
    }

    fn heap_bytes(&self) -> usize {
        self.first.capacity() * 4 + self.cuts.capacity() * 12
    }
}

/// The error of a session whose file no longer holds the lines it read: the
/// entries are never built from another entry's bytes.
fn file_gone(path: &Path, how: Gone) -> SessionError {
    let what = match how {
        Gone::Io(e) => return SessionError::Io(e),
        Gone::Deleted => "was deleted",
        Gone::Replaced => "was replaced by another file",
    };
    SessionError::Message(format!(
        "Session file {what} after it was opened: {}",
        path.display()
    ))
}

fn file_changed(path: &Path) -> SessionError {
    SessionError::Message(format!(
        "Session file was changed on disk after it was opened (truncated or rewritten): {}",
        path.display()
    ))
}

fn not_a_session(path: &Path) -> SessionError {
    SessionError::Message(format!(
        "Session file is not a valid pi session: {}",
        path.display()
    ))
}

/// The JSON text of the value a key stands for; `None` is undefined.
pub fn key_json(key: &str) -> Option<Vec<u8>> {
    key_value(key).map(|v| json_text::stringify(&v))
}

/// The JSON value a key stands for; `None` is undefined.
pub fn key_value(key: &str) -> Option<JsValue> {
    match key.strip_prefix('\0') {
        None => Some(JsValue::str(key)),
        Some("undefined") => None,
        Some("null") => Some(JsValue::Null),
        Some("true") => Some(JsValue::Bool(true)),
        Some("false") => Some(JsValue::Bool(false)),
        Some(other) => Some(other.parse().map_or(JsValue::Null, JsValue::Num)),
    }
}

impl Session {
    pub fn new(persist: bool) -> Session {
        Session {
            index: EntryIndex::default(),
            lines: Vec::new(),
            source: None,
            persist,
            flushed: false,
            file: None,
            files: PoolOwner::new(),
            owned_bytes: 0,
            recorded: RecordedCuts::default(),
        }
    }

    /// About how many bytes of native memory this session holds.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self.lines.capacity() * std::mem::size_of::<Line>()
            + self.owned_bytes
            + self.recorded.heap_bytes()
    }

    /// Reads lines from `file` (just read, at `path`) from now on.
    fn set_source(&mut self, path: &Path, file: File, identity: FileIdentity) {
        file_pool::keep_for_reading(&self.files, path, file);
        self.source = Some(Source {
            path: path.to_path_buf(),
            identity,
        });
    }

    fn drop_source(&mut self) {
        self.source = None;
        self.files.forget_reads();
    }

    /// The file the `Line::File` lines are in, if it still is the one read.
    fn source_file(&self) -> Result<Option<Arc<File>>, SessionError> {
        let Some(source) = &self.source else {
            return Ok(None);
        };
        file_pool::for_reading(&self.files, &source.path, source.identity)
            .map(Some)
            .map_err(|how| file_gone(&source.path, how))
    }

    /// Reads `len` bytes at `offset` of the source into `buffer`; a file now
    /// too short has changed.
    fn read_span(
        &self,
        file: &File,
        offset: u64,
        len: usize,
        buffer: &mut Vec<u8>,
    ) -> Result<(), SessionError> {
        buffer.resize(len, 0);
        match crate::os::read_exact_at(file, &mut buffer[..len], offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(file_changed(self.source_path()))
            }
            Err(e) => Err(IoFailure::new(&e, "read", None).into()),
        }
    }

    fn source_path(&self) -> &Path {
        self.source
            .as_ref()
            .map_or(Path::new(""), |s| s.path.as_path())
    }

    /// `line` as it was read, or the error saying the file changed.
    fn checked<'l>(&self, line: &'l [u8], hash: u64) -> Result<&'l [u8], SessionError> {
        if line_hash(line) == hash {
            Ok(line)
        } else {
            Err(file_changed(self.source_path()))
        }
    }

    /// `newSession()`: only the header, nothing flushed.
    pub fn start_new(&mut self, header: EntryMeta) {
        self.index = EntryIndex::default();
        self.index.push(header);
        self.lines = vec![Line::Pending];
        self.recorded = RecordedCuts::default();
        self.owned_bytes = 0;
        self.drop_source();
        self.flushed = false;
    }

    /// Replaces the entries with ones held by JavaScript (`inMemory(cwd, options, entries)`).
    pub fn load_objects(&mut self, metas: Vec<EntryMeta>) {
        self.lines = vec![Line::Pending; metas.len()];
        self.recorded = RecordedCuts::default();
        self.index = EntryIndex::from_metas(metas);
        self.owned_bytes = 0;
        self.drop_source();
    }

    pub fn len(&self) -> usize {
        self.index.metas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.metas.is_empty()
    }

    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    pub fn set_file(&mut self, file: Option<PathBuf>) {
        self.file = file;
        self.files.forget_appends();
    }

    /// Whether an append writes its line right away (persisted and flushed).
    pub fn appends_lines(&self) -> bool {
        self.persist && self.flushed && self.file.is_some()
    }

    /// The fast append of a persisted, flushed session: the index fields are
    /// read from the line JavaScript serialized (from its start alone when
    /// `appendMessage` wrote it).
    pub fn append_line(&mut self, line: Vec<u8>) -> Result<u32, SessionError> {
        let meta = match crate::format::entry::read_appended_message(&line) {
            Some(meta) => meta,
            None => match read_line(&line) {
                LineRead::Entry(meta) => meta,
                LineRead::Skipped => {
                    return Err(SessionError::Message(
                        "Entry did not serialize to a JSON line".into(),
                    ))
                }
            },
        };
        self.append(meta, Some(line), None)
    }

    pub fn has_line(&self, position: u32) -> bool {
        !matches!(
            self.lines.get(position as usize),
            None | Some(Line::Pending)
        )
    }

    /// The JSON line of an entry; `None` when only the JavaScript object exists.
    pub fn line(&self, position: u32) -> Result<Option<Cow<'_, [u8]>>, SessionError> {
        match self.lines.get(position as usize) {
            None | Some(Line::Pending) => Ok(None),
            Some(Line::Owned(bytes)) => Ok(Some(Cow::Borrowed(bytes))),
            Some(Line::File { offset, len, hash }) => {
                let source = self.source_file()?.ok_or_else(|| {
                    SessionError::Message("Session file is no longer readable".into())
                })?;
                let mut bytes = Vec::new();
                self.read_span(&source, *offset, *len, &mut bytes)?;
                self.checked(&bytes, *hash)?;
                Ok(Some(Cow::Owned(bytes)))
            }
        }
    }

    /// The skeletons of the lines at `positions` (each heavy value
    /// `format::lazy` finds replaced by `0`, its slot in `cuts`) as two JSON
    /// array texts, the pure-ASCII ones and the others, with a mask saying
    /// which array each position went to: V8 parses a one-byte (ASCII) string
    /// faster than a two-byte one, and one non-ASCII line would otherwise make
    /// a whole batch two-byte. The values cut are read later, one at a time,
    /// by `cut_value`.
    pub fn skeletons(&self, positions: &[u32]) -> Result<SplitLines, SessionError> {
        let mut ascii = vec![b'['];
        let mut other = vec![b'['];
        let mut mask = Vec::with_capacity(positions.len());
        let mut slots = Vec::with_capacity(positions.len());
        let mut skeleton = Vec::new();
        let mut at = 0;
        self.each_line(positions, |line| {
            let cuts = self.cuts_of(positions[at], line);
            at += 1;
            let text: &[u8] = if cuts.is_empty() {
                line
            } else {
                skeleton.clear();
                lazy::write_skeleton(line, &cuts, &mut skeleton);
                &skeleton
            };
            let is_ascii = text.is_ascii();
            let out = if is_ascii { &mut ascii } else { &mut other };
            if out.len() > 1 {
                out.push(b',');
            }
            out.extend_from_slice(text);
            mask.push(is_ascii as u8);
            slots.push(lazy::mask(&cuts));
        })?;
        ascii.push(b']');
        other.push(b']');
        Ok(SplitLines {
            ascii,
            other,
            mask,
            cuts: slots,
        })
    }

    /// The cuts of the line at `position`, whose bytes are `line`: those found
    /// when `open` read it, else found again.
    fn cuts_of(&self, position: u32, line: &[u8]) -> Vec<lazy::Cut> {
        let recorded = match self.lines.get(position as usize) {
            Some(Line::File { .. }) => self.recorded.of(position),
            _ => None,
        };
        recorded.unwrap_or_else(|| lazy::cuts(line, lazy::THRESHOLD))
    }

    /// The JSON text of the value `skeletons` cut from the line at `position`
    /// at `slot`, read from the line again (and checked, as `line` checks it).
    pub fn cut_value(&self, position: u32, slot: u8) -> Result<Vec<u8>, SessionError> {
        let line = self.line(position)?.ok_or_else(|| {
            SessionError::Message("Session entry has no line to read a value from".into())
        })?;
        self.cuts_of(position, &line)
            .into_iter()
            .find(|c| c.slot == slot)
            .map(|c| line[c.start..c.end].to_vec())
            .ok_or_else(|| SessionError::Message("Session entry has no such value".into()))
    }

    /// Calls `emit` with the line of each position in turn (`null` for entries
    /// without one). Neighbouring file lines are read with one read.
    pub fn each_line(
        &self,
        positions: &[u32],
        mut emit: impl FnMut(&[u8]),
    ) -> Result<(), SessionError> {
        const MAX_GAP: u64 = 64 << 10;
        const MAX_RUN: u64 = 16 << 20;
        let span = |p: u32| match self.lines.get(p as usize) {
            Some(Line::File { offset, len, hash }) => Some((*offset, *len as u64, *hash)),
            _ => None,
        };
        let mut buffer = Vec::new();
        let mut source: Option<Arc<File>> = None;
        let mut i = 0;
        while i < positions.len() {
            let Some((run_start, first_len, _)) = span(positions[i]) else {
                match self.line(positions[i])? {
                    Some(line) => emit(&line),
                    None => emit(b"null"),
                }
                i += 1;
                continue;
            };
            let mut run_end = run_start + first_len;
            let mut j = i + 1;
            while j < positions.len() {
                match span(positions[j]) {
                    Some((off, len, _))
                        if off >= run_end
                            && off - run_end <= MAX_GAP
                            && off + len - run_start <= MAX_RUN =>
                    {
                        run_end = off + len;
                        j += 1;
                    }
                    _ => break,
                }
            }
            if source.is_none() {
                source = self.source_file()?;
            }
            let file = source.as_deref().ok_or_else(|| {
                SessionError::Message("Session file is no longer readable".into())
            })?;
            self.read_span(file, run_start, (run_end - run_start) as usize, &mut buffer)?;
            let bytes = &buffer;
            for &p in &positions[i..j] {
                let (off, len, hash) = span(p).unwrap_or((run_start, 0, line_hash(b"")));
                let from = (off - run_start) as usize;
                emit(self.checked(&bytes[from..from + len as usize], hash)?);
            }
            i = j;
        }
        Ok(())
    }

    pub fn new_entry_ids(&self, count: usize) -> Vec<String> {
        let mut ids: Vec<String> = Vec::with_capacity(count);
        for _ in 0..count {
            let id = migrate::new_entry_id(&|id| {
                self.index.get(id).is_some() || ids.iter().any(|i| i == id)
            });
            ids.push(id);
        }
        ids
    }

    /// Loads a session file. The manager's state changes only when this succeeds.
    pub fn open(&mut self, path: &Path) -> Result<OpenOutcome, SessionError> {
        if !path.exists() {
            return Ok(OpenOutcome::Missing);
        }
        let source = store::open_read(path)?;
        let identity = FileIdentity::of(&source)?;
        let (entries, size, unterminated) = read_lines_parallel(&source, |line| {
            let mut finder = lazy::CutFinder::new(lazy::THRESHOLD);
            let read = read_line_with(line, &mut finder);
            let cuts = finder.finish(&read);
            match read {
                LineRead::Entry(meta) => Some((meta, line_hash(line), cuts)),
                LineRead::Skipped => None,
            }
        })?;
        let mut metas = Vec::with_capacity(entries.len());
        let mut lines = Vec::with_capacity(entries.len());
        let mut cuts = Vec::with_capacity(entries.len());
        for (offset, len, (meta, hash, line_cuts)) in entries {
            metas.push(meta);
            lines.push(Line::File { offset, len, hash });
            cuts.push(line_cuts);
        }
        let Some(first) = metas.first() else {
            return if size == 0 {
                Ok(OpenOutcome::EmptyFile)
            } else {
                Err(not_a_session(path))
            };
        };
        if first.kind != Kind::Session || !first.id_is_string {
            return Err(not_a_session(path));
        }
        // The reference repairs a cut last line so the next append starts a line.
        if unterminated {
            store::end_last_line(path)?;
        }
        let migration = migrate::plan(&metas);
        let mut loaded = Session::new(self.persist);
        loaded.lines = lines;
        loaded.recorded = RecordedCuts::from_lines(cuts.into_iter());
        loaded.flushed = true;
        loaded.file = Some(path.to_path_buf());
        loaded.set_source(path, source, identity);
        if let Some(plan) = &migration {
            let positions: Vec<u32> = (0..metas.len() as u32).collect();
            let mut old: Vec<Vec<u8>> = Vec::with_capacity(metas.len());
            loaded.each_line(&positions, |line| old.push(line.to_vec()))?;
            let old: Vec<&[u8]> = old.iter().map(Vec::as_slice).collect();
            let migrated = migrate::migrate_lines(plan, &old)?;
            // In-memory managers migrate without writing, like `_rewriteFile()`.
            let mut written = None;
            if self.persist {
                let mut content = Vec::new();
                for line in &migrated {
                    content.extend_from_slice(line);
                    content.push(b'\n');
                }
                store::replace(path, &content)?;
                written = Some(content);
            }
            metas = migrated
                .iter()
                .map(|l| match read_line(l) {
                    LineRead::Entry(m) => m,
                    LineRead::Skipped => EntryMeta::opaque(),
                })
                .collect();
            loaded.owned_bytes = migrated.iter().map(Vec::len).sum();
            loaded.recorded = RecordedCuts::default();
            loaded.lines = migrated
                .into_iter()
                .map(|l| Line::Owned(l.into_boxed_slice()))
                .collect();
            loaded.drop_source();
            if let Some(content) = written {
                loaded.read_lines_from(path, &content);
            }
        }
        loaded.index = EntryIndex::from_metas(metas);
        *self = loaded;
        if size >= TRIM_AFTER_OPENING {
            // The read's blocks and per-line results were freed, much of it on
            // the reading threads' arenas, which glibc keeps until asked.
            crate::os::trim_memory();
        }
        Ok(OpenOutcome::Loaded {
            migrated: migration.is_some(),
        })
    }

    /// `_rewriteFile()` where every entry but some pending ones already has a line.
    pub fn rewrite(&mut self, pending: Vec<(u32, Vec<u8>)>) -> Result<(), SessionError> {
        if !self.persist {
            return Ok(());
        }
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        let content = self.content_with(&pending, None)?;
        store::replace(&path, &content)?;
        self.store_lines(pending);
        self.read_lines_from(&path, &content);
        Ok(())
    }

    /// Every entry's line (the given ones for pending entries), then `extra`.
    fn content_with(
        &self,
        pending: &[(u32, Vec<u8>)],
        extra: Option<&[u8]>,
    ) -> Result<Vec<u8>, SessionError> {
        let mut content = Vec::new();
        let mut given = pending.iter().peekable();
        // Positions whose stored lines come next, read together.
        let mut run: Vec<u32> = Vec::new();
        for position in 0..self.len() as u32 {
            let Some((_, line)) = given.next_if(|(p, _)| *p == position) else {
                run.push(position);
                continue;
            };
            self.each_line(&run, |l| {
                content.extend_from_slice(l);
                content.push(b'\n');
            })?;
            run.clear();
            content.extend_from_slice(line);
            content.push(b'\n');
        }
        self.each_line(&run, |l| {
            content.extend_from_slice(l);
            content.push(b'\n');
        })?;
        if let Some(line) = extra {
            content.extend_from_slice(line);
            content.push(b'\n');
        }
        Ok(content)
    }

    fn store_lines(&mut self, lines: Vec<(u32, Vec<u8>)>) {
        for (p, line) in lines {
            self.owned_bytes += line.len();
            self.lines[p as usize] = Line::Owned(line.into_boxed_slice());
        }
    }

    pub fn pending_positions(&self) -> Vec<u32> {
        (0..self.len() as u32)
            .filter(|&p| matches!(self.lines[p as usize], Line::Pending))
            .collect()
    }

    /// What `_persist()` will do for a new entry with this role.
    pub fn persist_plan(&self, role: Role) -> Result<PersistPlan, SessionError> {
        if !self.persist || self.file.is_none() {
            return Ok(PersistPlan::Skip);
        }
        if self.flushed {
            return Ok(PersistPlan::Append);
        }
        let conversation = self.index.has_conversation()? || {
            if role.is_nullish() {
                return Err(NullishMessage {
                    position: self.len() as u32,
                    is_null: role == Role::MessageNull,
                }
                .into());
            }
            role.is_conversation()
        };
        Ok(if conversation {
            PersistPlan::Flush(self.pending_positions())
        } else {
            PersistPlan::Skip
        })
    }

    /// Appends an entry. `line` is given when it is persisted now; `flush` holds
    /// the lines of pending entries for the first flush. Nothing changes unless
    /// the write succeeds.
    pub fn append(
        &mut self,
        meta: EntryMeta,
        line: Option<Vec<u8>>,
        flush: Option<Vec<(u32, Vec<u8>)>>,
    ) -> Result<u32, SessionError> {
        let mut line = line;
        let mut in_source = None;
        let mut created = None;
        match (line.as_mut(), flush, &self.file) {
            (Some(line), Some(flush), Some(path)) => {
                let content = self.content_with(&flush, Some(line))?;
                store::create_new(path, &content)?;
                created = Some((path.clone(), content));
                self.store_lines(flush);
                self.flushed = true;
            }
            (Some(line), None, Some(path)) => {
                // The newline goes on the caller's buffer so the write needs no copy.
                line.push(b'\n');
                let written =
                    file_pool::for_appending(&self.files, path).and_then(|(file, before)| {
                        store::append_to(&file, line)?;
                        Ok((before, crate::os::end_after_append(&file).ok()))
                    });
                line.pop();
                let (before, end) = written?;
                in_source = self.appended_at(path, before, end, line.len() as u64 + 1);
            }
            _ => {}
        }
        self.lines.push(match (line, in_source) {
            (Some(l), Some(offset)) => Line::File {
                offset,
                len: l.len(),
                hash: line_hash(&l),
            },
            (Some(l), None) => {
                self.owned_bytes += l.len();
                Line::Owned(l.into_boxed_slice())
            }
            (None, _) => Line::Pending,
        });
        let position = self.index.push(meta);
        if let Some((path, content)) = created {
            self.read_lines_from(&path, &content);
        }
        Ok(position)
    }

    /// After `content`, every entry's line each followed by `\n`, was written
    /// to `path` as a new file: the lines are read from that file from now on,
    /// as after `open`, rather than kept as copies. If the file cannot be
    /// opened for reading, the copies stay.
    fn read_lines_from(&mut self, path: &Path, content: &[u8]) {
        let Ok(file) = store::open_read(path) else {
            return;
        };
        let Ok(identity) = FileIdentity::of(&file) else {
            return;
        };
        let mut offset = 0u64;
        let mut lines = Vec::with_capacity(self.lines.len());
        for line in content.split(|&b| b == b'\n').take(self.lines.len()) {
            lines.push(Line::File {
                offset,
                len: line.len(),
                hash: line_hash(line),
            });
            offset += line.len() as u64 + 1;
        }
        if lines.len() != self.lines.len() || offset != content.len() as u64 {
            return;
        }
        // The same bytes at each position: cut spans and recorded cuts still hold.
        self.lines = lines;
        self.owned_bytes = 0;
        self.drop_source();
        self.set_source(path, file, identity);
    }

    /// Where a line of `written` bytes just appended to `path` is, when that is
    /// the file the session reads its lines from and the write began where the
    /// file ended before it (no other process appended meanwhile; `end` is where
    /// the write ended): then the session keeps the
    /// line's span, not a copy, as it does for the lines it read.
    fn appended_at(
        &self,
        path: &Path,
        before: Option<crate::os::Stat>,
        end: Option<u64>,
        written: u64,
    ) -> Option<u64> {
        let (source, before, end) = (self.source.as_ref()?, before?, end?);
        let same_file = source.path == path
            && source.identity
                == (FileIdentity {
                    dev: before.dev,
                    ino: before.ino,
                });
        (same_file && end == before.size + written).then_some(before.size)
    }

    /// `_persist(entry)` for an entry that is not appended: its line is written
    /// after the session's own, or (first flush) only the session's lines are.
    pub fn persist_detached(
        &mut self,
        line: &[u8],
        flush: Option<Vec<(u32, Vec<u8>)>>,
    ) -> Result<(), SessionError> {
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        match flush {
            Some(flush) => {
                let content = self.content_with(&flush, None)?;
                store::create_new(&path, &content)?;
                self.store_lines(flush);
                self.flushed = true;
                self.read_lines_from(&path, &content);
            }
            None => {
                let mut data = line.to_vec();
                data.push(b'\n');
                let (file, _) = file_pool::for_appending(&self.files, &path)?;
                store::append_to(&file, &data)?;
            }
        }
        Ok(())
    }

    /// `createBranchedSession(leafId)`: the path to `leaf` without label entries,
    /// re-chained, plus the labels that point into it, as a new session.
    pub fn branch_session(
        &mut self,
        leaf: Option<&str>,
        header: EntryMeta,
        header_line: Option<Vec<u8>>,
        new_file: Option<PathBuf>,
    ) -> Result<BranchOutcome, SessionError> {
        let path = self.index.branch(leaf);
        if path.is_empty() {
            return Err(SessionError::EntryNotFound);
        }
        let mut outcome = BranchOutcome {
            kept: Vec::new(),
            parents: Vec::new(),
            first_kept: Vec::new(),
            labels: Vec::new(),
            label_parents: Vec::new(),
        };
        let mut replacement_of_label: foldhash::HashMap<&str, Key> = Default::default();
        let mut pending_labels: Vec<&str> = Vec::new();
        let mut parent: Option<Key> = None;
        let mut metas = vec![header];
        for &p in &path {
            let meta = self.index.meta(p);
            if meta.kind == Kind::Label {
                pending_labels.push(&meta.id);
                continue;
            }
            for label in pending_labels.drain(..) {
                replacement_of_label.insert(label, meta.id.clone());
            }
            let first_kept = (meta.kind == Kind::Compaction).then(|| {
                if *meta.first_kept() == meta.id {
                    meta.id.clone()
                } else {
                    replacement_of_label
                        .get(&**meta.first_kept())
                        .cloned()
                        .unwrap_or_else(|| meta.first_kept().clone())
                }
            });
            let mut new_meta = meta.clone();
            new_meta.parent = parent.clone().unwrap_or_else(|| NULL_KEY.into());
            new_meta.parent_truthy = crate::session::index::is_truthy_key(&new_meta.parent);
            if let Some(fk) = &first_kept {
                new_meta.set_first_kept(fk.clone());
            }
            metas.push(new_meta);
            outcome.kept.push(p);
            outcome.parents.push(parent.replace(meta.id.clone()));
            outcome.first_kept.push(first_kept);
        }
        // The new file as pieces: the header, the path's lines (most copied from
        // the old file as they are), then the recreated labels. Spans are each
        // entry's place in the new file (`None`: only the JavaScript object exists).
        let mut head = Assembly::default();
        let mut spans: Vec<Option<(u64, usize, u64)>> = Vec::new();
        match &header_line {
            Some(line) => {
                spans.push(Some((0, line.len(), line_hash(line))));
                head.write(line);
                head.write(b"\n");
            }
            None => spans.push(None),
        }
        let mut parts = vec![head];
        let mut base = parts[0].len();
        for part in self.patched_lines(&outcome)? {
            spans.extend(
                part.spans
                    .into_iter()
                    .map(|s| s.map(|(at, len, hash)| (base + at, len, hash))),
            );
            base += part.assembly.len();
            parts.push(part.assembly);
        }
        let mut labels = Assembly::default();
        // The first recreated label hangs off `lastEntry?.id || null`.
        if parent
            .as_deref()
            .is_some_and(|k| !crate::session::index::is_truthy_key(k))
        {
            parent = None;
        }
        let kept_ids: HashSet<&str> = outcome
            .kept
            .iter()
            .map(|&p| &*self.index.meta(p).id)
            .collect();
        let mut taken: HashSet<String> = kept_ids.iter().map(|s| s.to_string()).collect();
        for label_position in self.index.labels.positions() {
            let target = self.index.meta(label_position).target();
            if !kept_ids.contains(&**target) {
                continue;
            }
            let id = migrate::new_entry_id(&|id| taken.contains(id));
            taken.insert(id.clone());
            let source = self.index.meta(label_position);
            let mut meta = EntryMeta::opaque();
            meta.kind = Kind::Label;
            meta.id = id.clone().into();
            meta.id_is_string = true;
            meta.parent = parent.clone().unwrap_or_else(|| NULL_KEY.into());
            meta.parent_truthy = parent.is_some();
            meta.set_target(target.clone());
            meta.label_truthy = true;
            meta.time = source.time;
            match self.line(label_position)? {
                Some(old) => {
                    let line = label_line(&old, &id, parent.as_deref(), target)?;
                    spans.push(Some((base + labels.len(), line.len(), line_hash(&line))));
                    labels.write(&line);
                    labels.write(b"\n");
                }
                None => spans.push(None),
            }
            metas.push(meta);
            outcome.labels.push((label_position, id.clone()));
            outcome.label_parents.push(parent.clone());
            parent = Some(id.into());
        }
        let index = EntryIndex::from_metas(metas);
        let mut flushed = false;
        let mut source = None;
        let old_source = self.source_file()?;
        if self.persist && index.has_conversation()? {
            // A flushed session's entries all have lines, so the text is whole.
            let path = new_file
                .clone()
                .ok_or_else(|| SessionError::Message("no session file".into()))?;
            parts.push(labels);
            store::replace_with(&path, |file| {
                assembly::write_parts(file, old_source.as_deref(), &parts)
            })?;
            let file = store::open_read(&path)?;
            let identity = FileIdentity::of(&file)?;
            source = Some((path, file, identity));
            flushed = true;
        } else {
            parts.push(labels);
        }
        // Written: lines are read back from the new file on demand; otherwise
        // each keeps its own text.
        let lines: Vec<Line> = match &source {
            Some(_) => spans
                .into_iter()
                .map(|span| match span {
                    None => Line::Pending,
                    Some((offset, len, hash)) => Line::File { offset, len, hash },
                })
                .collect(),
            None => {
                let content = assembly::read_parts(old_source.as_deref(), &parts)?;
                spans
                    .into_iter()
                    .map(|span| match span {
                        None => Line::Pending,
                        Some((at, len, _)) => {
                            Line::Owned(content[at as usize..at as usize + len].into())
                        }
                    })
                    .collect()
            }
        };
        let owned_bytes = lines
            .iter()
            .map(|l| match l {
                Line::Owned(bytes) => bytes.len(),
                _ => 0,
            })
            .sum();
        if self.persist {
            self.set_file(new_file);
        }
        self.index = index;
        self.lines = lines;
        self.recorded = RecordedCuts::default();
        self.owned_bytes = owned_bytes;
        self.drop_source();
        if let Some((path, file, identity)) = source {
            self.set_source(&path, file, identity);
        }
        self.flushed = flushed;
        Ok(outcome)
    }

    /// The kept entries' lines with their new parentId (and firstKeptEntryId),
    /// in parts (one per thread), in order.
    fn patched_lines(&self, outcome: &BranchOutcome) -> Result<Vec<Patched>, SessionError> {
        const PARALLEL_FROM: usize = 4096;
        let count = outcome.kept.len();
        let threads = parallel::threads();
        if threads < 2 || count < PARALLEL_FROM {
            return Ok(vec![self.patched_range(outcome, 0, count)?]);
        }
        let ranges: Vec<(usize, usize)> = (0..threads)
            .map(|t| (count * t / threads, count * (t + 1) / threads))
            .collect();
        parallel::map_in_order(&ranges, |&(from, to)| self.patched_range(outcome, from, to))
            .into_iter()
            .collect()
    }

    /// `patched_lines` for the kept entries `from..to`. A canonical file line whose
    /// parentId (and firstKeptEntryId) stay the same is copied as it is, with its
    /// newline; other lines are patched as text.
    fn patched_range(
        &self,
        outcome: &BranchOutcome,
        from: usize,
        to: usize,
    ) -> Result<Patched, SessionError> {
        let changes_of = |i: usize| {
            let mut changes: Vec<json_text::Change> = vec![(
                "parentId",
                Some(outcome.parents[i].as_deref().map_or(b"null".to_vec(), |k| {
                    key_json(k).unwrap_or_else(|| b"null".to_vec())
                })),
            )];
            if outcome.parents[i]
                .as_deref()
                .is_some_and(|k| key_json(k).is_none())
            {
                changes[0].1 = None;
            }
            if let Some(fk) = &outcome.first_kept[i] {
                changes.push(("firstKeptEntryId", key_json(fk)));
            }
            changes
        };
        // Whether the patch would write the same values the line already has.
        let unchanged = |i: usize| {
            let meta = self.index.meta(outcome.kept[i]);
            let same_parent = match outcome.parents[i].as_deref() {
                None => &*meta.parent == NULL_KEY,
                Some(k) => *meta.parent == *k && key_value(k).is_some(),
            };
            let same_first_kept = match outcome.first_kept[i].as_deref() {
                None => true,
                Some(k) => **meta.first_kept() == *k && key_value(k).is_some(),
            };
            same_parent && same_first_kept
        };
        let unreadable = |_| SessionError::Message("Unreadable entry line".into());
        let mut out = Patched::default();
        let mut failure = None;
        let mut i = from;
        while i < to {
            // Runs of entries with lines are read together.
            let run_end = (i..to)
                .find(|&j| !self.has_line(outcome.kept[j]))
                .unwrap_or(to);
            if run_end == i {
                out.spans.push(None);
                i += 1;
                continue;
            }
            let mut k = i;
            self.each_line(&outcome.kept[i..run_end], |old| {
                let at = out.assembly.len();
                let in_file = match self.lines.get(outcome.kept[k] as usize) {
                    Some(Line::File { offset, len, hash }) if *len == old.len() => {
                        Some((*offset, *hash))
                    }
                    _ => None,
                };
                match in_file {
                    Some((offset, hash))
                        if unchanged(k) && json_text::canonical_members(old).is_some() =>
                    {
                        out.assembly.copy(offset, old.len() as u64 + 1);
                        out.spans.push(Some((at, old.len(), hash)));
                    }
                    _ => match json_text::patch_line(old, &changes_of(k)) {
                        Ok(new) => {
                            out.spans.push(Some((at, new.len(), line_hash(&new))));
                            out.assembly.write_with(|b| {
                                b.extend_from_slice(&new);
                                b.push(b'\n');
                            });
                        }
                        Err(e) => failure = Some(e),
                    },
                }
                k += 1;
            })?;
            if let Some(e) = failure.take() {
                return Err(unreadable(e));
            }
            i = run_end;
        }
        Ok(out)
    }
}

/// The line of a recreated label entry, key order as the reference builds it.
fn label_line(
    source: &[u8],
    id: &str,
    parent: Option<&str>,
    target: &str,
) -> Result<Vec<u8>, SessionError> {
    let text = json::decode_lossy(source);
    let value =
        json::parse(&text).map_err(|_| SessionError::Message("Unreadable label line".into()))?;
    let mut members = vec![
        (b"type".to_vec(), JsValue::str("label")),
        (b"id".to_vec(), JsValue::str(id)),
        (
            b"parentId".to_vec(),
            parent.map_or(JsValue::Null, |p| key_value(p).unwrap_or(JsValue::Null)),
        ),
    ];
    if let Some(ts) = value.get("timestamp") {
        members.push((b"timestamp".to_vec(), ts.clone()));
    }
    if let Some(t) = key_value(target) {
        members.push((b"targetId".to_vec(), t));
    }
    if let Some(label) = value.get("label") {
        members.push((b"label".to_vec(), label.clone()));
    }
    Ok(json_text::stringify(&JsValue::Obj(members)))
}

/// Lines kept as (offset, length, value), the length read and whether the last
/// line had no `\n`.
pub(crate) type LinesRead<T> = (Vec<(u64, usize, T)>, u64, bool);

/// Every line of `file` that `f` keeps, as (offset, length, value) in file order,
/// and the file's length and whether its last line has no `\n`. Each thread
/// reads and reads through its own range of whole lines, so the copying out of
/// the page cache is shared too.
fn read_lines_parallel<T: Send>(
    file: &File,
    f: impl Fn(&[u8]) -> Option<T> + Sync,
) -> Result<LinesRead<T>, IoFailure> {
    read_lines_parallel_in(file, None, f)
}

/// `read_lines_parallel` reading `chunk` bytes at a time (default: up to 8
/// MiB); a chunk that still fits in the CPU cache when its lines are parsed
/// pays where each line is only scanned once.
pub(crate) fn read_lines_parallel_in<T: Send>(
    file: &File,
    chunk: Option<usize>,
    f: impl Fn(&[u8]) -> Option<T> + Sync,
) -> Result<LinesRead<T>, IoFailure> {
    const PARALLEL_FROM: u64 = 4 << 20;
    let size = file.metadata().map_or(0, |m| m.len());
    let threads = parallel::threads();
    let mut starts = vec![0u64];
    if threads > 1 && size >= PARALLEL_FROM {
        for t in 1..threads as u64 {
            // A split inside a huge line is given up rather than read through twice.
            match store::line_start_from(file, size * t / threads as u64, 16 << 20)? {
                Some(at) if at > *starts.last().unwrap_or(&0) && at < size => starts.push(at),
                _ => {}
            }
        }
    }
    let read_range = |start: u64, end: Option<u64>| -> Result<LinesRead<T>, IoFailure> {
        let mut out = Vec::new();
        let mut reader = store::RangeReader {
            file,
            pos: start,
            end,
        };
        let hint = end.unwrap_or(size).saturating_sub(start);
        let mut visit = |offset: u64, line: &[u8]| {
            if let Some(v) = f(line) {
                out.push((start + offset, line.len(), v));
            }
        };
        let (len, unterminated) = match chunk {
            None => store::for_each_line(&mut reader, hint, visit)?,
            Some(chunk) => {
                let chunk = (hint as usize + 1).min(chunk);
                store::for_each_block_in(&mut reader, &mut Vec::new(), chunk, |offset, block| {
                    let mut from = 0;
                    for nl in memchr::memchr_iter(b'\n', block) {
                        visit(offset + from as u64, &block[from..nl]);
                        from = nl + 1;
                    }
                    if from < block.len() {
                        visit(offset + from as u64, &block[from..]);
                    }
                })?
            }
        };
        Ok((out, start + len, unterminated))
    };
    if starts.len() == 1 {
        return read_range(0, None);
    }
    let ends = starts[1..].iter().map(|&e| Some(e)).chain([None]);
    let ranges: Vec<(u64, Option<u64>)> = starts.iter().copied().zip(ends).collect();
    let parts = parallel::map_in_order(&ranges, |&(start, end)| read_range(start, end));
    let mut all = Vec::new();
    let mut last = (0, false);
    for part in parts {
        let (lines, end, unterminated) = part?;
        all.extend(lines);
        last = (end, unterminated);
    }
    Ok((all, last.0, last.1))
}

/// `readSessionHeader`: the first parsed entry within the first MiB, if it is a
/// header. Reads 4 KiB at a time, like the reference, so a header costs one read.
pub fn read_header(path: &Path) -> Result<HeaderScan, IoFailure> {
    use std::io::Read;
    const CHUNK: usize = 1024;
    let mut file = std::fs::File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let candidate = |line: &[u8]| -> Option<HeaderScan> {
        match read_line(line) {
            LineRead::Skipped => None,
            LineRead::Entry(meta) if meta.kind == Kind::Session && meta.id_is_string => {
                Some(HeaderScan::Found(line.to_vec()))
            }
            LineRead::Entry(_) => Some(HeaderScan::NotFound),
        }
    };
    let mut bytes: Vec<u8> = Vec::new();
    let mut line_start = 0;
    loop {
        let before = bytes.len();
        let want = (MAX_SESSION_HEADER_SCAN_BYTES + 1 - before).min(CHUNK);
        bytes.resize(before + want, 0);
        let n = loop {
            match file.read(&mut bytes[before..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoFailure::new(&e, "read", None)),
            }
        };
        bytes.truncate(before + n);
        let limit = bytes.len().min(MAX_SESSION_HEADER_SCAN_BYTES);
        for nl in memchr::memchr_iter(b'\n', &bytes[before.min(limit)..limit]) {
            let end = before + nl;
            if let Some(found) = candidate(&bytes[line_start..end]) {
                return Ok(found);
            }
            line_start = end + 1;
        }
        if bytes.len() > MAX_SESSION_HEADER_SCAN_BYTES {
            return Ok(HeaderScan::TooLong);
        }
        if n == 0 {
            return Ok(candidate(&bytes[line_start..]).unwrap_or(HeaderScan::NotFound));
        }
    }
}

/// `forkFrom`'s copy: the source is read as `loadEntriesFromFile` reads it (a cut
/// last line gets its newline), then the new header and every non-header entry
/// go to `target` (created in `dir`, which is made if missing), which must not
/// exist. Without a target only the source is checked. Returns false for an
/// empty or invalid source, before anything is created. Lines already in
/// `JSON.stringify` form are copied as they are.
pub fn fork_file(
    source: &Path,
    dir: &Path,
    target: Option<&Path>,
    header_line: &[u8],
) -> Result<Option<Session>, SessionError> {
    if !source.exists() {
        return Ok(None);
    }
    let input = store::open_read(source)?;
    // Lines already in JSON.stringify form are copied from the source by the kernel.
    let mut content = Assembly::default();
    content.write(header_line);
    content.write(b"\n");
    // The new file's index, built as it is written, so it need not be read again.
    let mut metas = vec![match read_line(header_line) {
        LineRead::Entry(m) => m,
        LineRead::Skipped => EntryMeta::opaque(),
    }];
    let mut lines = vec![Line::File {
        offset: 0,
        len: header_line.len(),
        hash: line_hash(header_line),
    }];
    // None until the first entry is seen; then whether it is a valid header.
    let mut valid: Option<bool> = None;
    let mut failure: Option<SessionError> = None;
    let copying = target.is_some();
    // Each entry's index fields, and its new text where the line is not already
    // in JSON.stringify form (None: copied as it is).
    let (entries, _, unterminated) = read_lines_parallel(&input, |line| {
        let LineRead::Entry(meta) = read_line(line) else {
            return None;
        };
        let as_is = !copying
            || meta.kind == Kind::Session
            || json_text::canonical_members(line).is_some()
            || !line.starts_with(b"{") && is_canonical_value(line);
        let rewritten = (!as_is).then(|| json_text::rewrite_line(line, |_| {}).map_err(|_| ()));
        let hash = (copying && as_is).then(|| line_hash(line));
        Some((meta, rewritten, hash))
    })?;
    for (offset, len, (meta, rewritten, hash)) in entries {
        if valid.is_none() {
            valid = Some(meta.kind == Kind::Session && meta.id_is_string);
        }
        if valid == Some(false) {
            break;
        }
        if meta.kind == Kind::Session || !copying {
            continue;
        }
        let at = content.len();
        let (written, hash) = match rewritten {
            // With its newline: every line but an unterminated last one has one,
            // and that one gets it before the copy (below).
            None => {
                content.copy(offset, len as u64 + 1);
                (len, hash.unwrap_or_default())
            }
            Some(Ok(canonical)) => {
                content.write(&canonical);
                content.write(b"\n");
                (canonical.len(), line_hash(&canonical))
            }
            Some(Err(())) => {
                failure = Some(SessionError::Message("Unreadable entry line".into()));
                break;
            }
        };
        lines.push(Line::File {
            offset: at,
            len: written,
            hash,
        });
        metas.push(meta);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if valid != Some(true) {
        return Ok(None);
    }
    if unterminated {
        store::end_last_line(source)?;
    }
    let mut forked = Session::new(true);
    if let Some(target) = target {
        std::fs::create_dir_all(dir).map_err(|e| IoFailure::new(&e, "mkdir", Some(dir)))?;
        store::create_new_with(target, |file| {
            assembly::write_parts(file, Some(&input), &[content])
        })?;
        let file = store::open_read(target)?;
        let identity = FileIdentity::of(&file)?;
        forked.set_source(target, file, identity);
        forked.index = EntryIndex::from_metas(metas);
        forked.lines = lines;
        forked.flushed = true;
        forked.file = Some(target.to_path_buf());
    }
    Ok(Some(forked))
}

/// A line holding a primitive or array already as `JSON.stringify` writes it.
fn is_canonical_value(line: &[u8]) -> bool {
    json_text::rewrite_line(line, |_| {}).is_ok_and(|c| c == line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-session-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn parallel_line_reading_equals_one_pass() {
        let dir = temp_dir();
        let path = dir.join("lines.jsonl");
        // About 9 MiB: lines of many lengths, blank lines, a line of 3 MiB that a
        // split point lands in, and no newline at the end.
        let mut data = Vec::new();
        let mut n = 0u64;
        let mut big = false;
        while data.len() < 9 << 20 {
            n += 1;
            match n % 7 {
                0 => data.extend_from_slice(b"\n"),
                // From about 3 to 6 MiB: across the middle, where two threads split.
                _ if data.len() > 3 << 20 && !std::mem::replace(&mut big, true) => {
                    data.extend_from_slice(format!("\"{}\"", "y".repeat(3 << 20)).as_bytes())
                }
                _ => data.extend_from_slice(
                    format!("\"{}\"", "x".repeat((n * 37 % 5000) as usize)).as_bytes(),
                ),
            }
            data.extend_from_slice(b"\n");
        }
        data.extend_from_slice(b"\"last\"");
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let keep = |line: &[u8]| (!line.is_empty()).then_some(line.len());
        let (parallel, size, unterminated) = read_lines_parallel(&file, keep).unwrap();
        let mut one_pass = Vec::new();
        let (size1, unterminated1) = store::for_each_line(
            &mut std::fs::File::open(&path).unwrap(),
            data.len() as u64,
            |at, line| {
                if let Some(v) = keep(line) {
                    one_pass.push((at, line.len(), v));
                }
            },
        )
        .unwrap();
        assert!(parallel::threads() < 2 || parallel.len() > 1000);
        let first_difference = parallel.iter().zip(&one_pass).position(|(a, b)| a != b);
        assert_eq!(
            first_difference,
            None,
            "{:?}",
            first_difference.map(|i| (&parallel[i], &one_pass[i]))
        );
        assert_eq!(parallel.len(), one_pass.len());
        assert_eq!((size, unterminated), (size1, unterminated1));
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn meta(line: &str) -> EntryMeta {
        match read_line(line.as_bytes()) {
            LineRead::Entry(m) => m,
            LineRead::Skipped => panic!(),
        }
    }

    #[test]
    fn open_repairs_a_cut_last_line_and_rejects_non_sessions() {
        let dir = temp_dir();
        let file = dir.join("a.jsonl");
        std::fs::write(
            &file,
            "{\"type\":\"session\",\"id\":\"s\",\"version\":3}\n{\"type\":\"mess",
        )
        .unwrap();
        let mut s = Session::new(true);
        assert!(matches!(
            s.open(&file),
            Ok(OpenOutcome::Loaded { migrated: false })
        ));
        assert!(std::fs::read(&file).unwrap().ends_with(b"mess\n"));
        assert_eq!(s.len(), 1);
        let bad = dir.join("b.jsonl");
        std::fs::write(&bad, "{\"type\":\"message\"}\n").unwrap();
        let mut s2 = Session::new(true);
        assert!(
            matches!(s2.open(&bad), Err(SessionError::Message(m)) if m.contains("not a valid pi session"))
        );
        assert!(s2.file.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_line_read_again_must_be_the_line_read_at_open() {
        let dir = temp_dir();
        let file = dir.join("changed.jsonl");
        let header = r#"{"type":"session","id":"s","version":3}"#;
        let a = r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#;
        let b = r#"{"type":"message","id":"b","parentId":null,"message":{"role":"user"}}"#;
        std::fs::write(&file, format!("{header}\n{a}\n{b}\n")).unwrap();
        let mut s = Session::new(true);
        assert!(s.open(&file).is_ok());
        assert_eq!(s.line(1).unwrap().as_deref(), Some(a.as_bytes()));
        // Rewritten in place: the same offsets now hold the other entry.
        std::fs::write(&file, format!("{header}\n{b}\n{a}\n")).unwrap();
        let changed = |r: Result<(), SessionError>| matches!(r, Err(SessionError::Message(m)) if m.contains("changed on disk"));
        assert!(changed(s.line(1).map(|_| ())));
        assert!(changed(s.each_line(&[1, 2], |_| {})));
        // Truncated: too short to hold the line.
        std::fs::write(&file, header).unwrap();
        assert!(changed(s.line(2).map(|_| ())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn skeletons_from_the_cuts_found_at_open_equal_those_found_again() {
        let dir = temp_dir();
        let file = dir.join("heavy.jsonl");
        let big = "x".repeat(lazy::THRESHOLD + 1);
        let mut lines = vec![r#"{"type":"session","id":"s","version":3}"#.to_string()];
        lines.push(format!(r#"{{"type":"message","id":"a","parentId":null,"message":{{"role":"user","content":"{big}","details":{{"d":"{big}"}}}}}}"#));
        lines.push(format!(r#"{{"type":"compaction","id":"b","parentId":"a","summary":"{big}","details":{{}},"systemMessage":{{"content":"é{big}"}}}}"#));
        lines.push(format!(
            r#"{{"type":"custom","id":"c","parentId":"b","data":["{big}"],"summary":"small"}}"#
        ));
        lines.push(format!(r#"{{"type":"message","id":"d","parentId":"c","message":{{"content":"{big}"}},"message":{{"role":"user"}}}}"#));
        lines.push(r#"{"type":"label","id":"e","parentId":"d"}"#.to_string());
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let mut opened = Session::new(true);
        assert!(opened.open(&file).is_ok());
        let positions: Vec<u32> = (0..lines.len() as u32).collect();
        let from_open = opened.skeletons(&positions).unwrap();
        // The same lines held in memory: their cuts are found again.
        let mut owned = Session::new(false);
        owned.lines = lines
            .iter()
            .map(|l| Line::Owned(l.as_bytes().into()))
            .collect();
        let found = owned.skeletons(&positions).unwrap();
        assert_eq!(from_open.ascii, found.ascii);
        assert_eq!(from_open.other, found.other);
        assert_eq!(from_open.cuts, found.cuts);
        assert_eq!(from_open.cuts, vec![0, 0b11, 1 << 4 | 1 << 6, 1 << 5, 0, 0]);
        let text = String::from_utf8(from_open.ascii).unwrap();
        assert!(text.contains(r#""message":{"role":"user","content":0,"details":0}"#));
        assert!(text.contains(r#""data":0,"summary":"small""#));
        assert_eq!(
            opened.cut_value(2, 6).unwrap(),
            format!(r#"{{"content":"é{big}"}}"#).into_bytes()
        );
        assert_eq!(
            opened.cut_value(3, 5).unwrap(),
            owned.cut_value(3, 5).unwrap()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn appended_lines_are_kept_as_spans_of_the_file_read() {
        let dir = temp_dir();
        let file = dir.join("grows.jsonl");
        let header = r#"{"type":"session","id":"s","version":3}"#;
        let user = |id: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":null,"message":{{"role":"user","content":"é"}}}}"#
            )
        };
        std::fs::write(&file, format!("{header}\n{}\n", user("a"))).unwrap();
        let mut s = Session::new(true);
        assert!(s.open(&file).is_ok());
        let b = s.append_line(user("b").into_bytes()).unwrap();
        assert!(matches!(s.lines[b as usize], Line::File { .. }));
        // Another process appends: the next line is found after its bytes.
        let mut other = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        std::io::Write::write_all(&mut other, b"{\"foreign\":1}\n").unwrap();
        let c = s.append_line(user("c").into_bytes()).unwrap();
        assert!(matches!(s.lines[c as usize], Line::File { .. }));
        assert_eq!(s.line(b).unwrap().as_deref(), Some(user("b").as_bytes()));
        assert_eq!(s.line(c).unwrap().as_deref(), Some(user("c").as_bytes()));
        assert_eq!(s.owned_bytes, 0);
        // Replaced by another file at the same path: appends go there, and the
        // session keeps its own copy of the line, the file it read being gone.
        // (Windows does not delete a file open here.)
        if cfg!(windows) {
            return;
        }
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, format!("{header}\n")).unwrap();
        let d = s.append_line(user("d").into_bytes()).unwrap();
        assert!(matches!(s.lines[d as usize], Line::Owned(_)));
        assert_eq!(s.line(d).unwrap().as_deref(), Some(user("d").as_bytes()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lazy_flush_then_one_line_per_append() {
        let dir = temp_dir();
        let file = dir.join("s.jsonl");
        let mut s = Session::new(true);
        s.start_new(meta(r#"{"type":"session","id":"s","version":3}"#));
        s.set_file(Some(file.clone()));
        let model = r#"{"type":"model_change","id":"a","parentId":null}"#;
        assert!(matches!(
            s.persist_plan(Role::NotMessage).unwrap(),
            PersistPlan::Skip
        ));
        s.append(meta(model), None, None).unwrap();
        assert!(!file.exists());
        let user = r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user"}}"#;
        let PersistPlan::Flush(pending) = s.persist_plan(Role::User).unwrap() else {
            panic!()
        };
        assert_eq!(pending, vec![0, 1]);
        let flush = vec![
            (0, br#"{"type":"session","id":"s","version":3}"#.to_vec()),
            (1, model.as_bytes().to_vec()),
        ];
        s.append(meta(user), Some(user.as_bytes().to_vec()), Some(flush))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3);
        assert!(matches!(
            s.persist_plan(Role::User).unwrap(),
            PersistPlan::Append
        ));
        // From the first flush on, the lines are read from the file written, not kept.
        let next = r#"{"type":"message","id":"c","parentId":"b","message":{"role":"user"}}"#;
        s.append_line(next.as_bytes().to_vec()).unwrap();
        assert!(s.lines.iter().all(|l| matches!(l, Line::File { .. })));
        assert_eq!(s.owned_bytes, 0);
        let mut read = Vec::new();
        s.each_line(&[0, 1, 2, 3], |l| {
            read.push(String::from_utf8(l.to_vec()).unwrap())
        })
        .unwrap();
        assert_eq!(read[1..], [model, user, next]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
