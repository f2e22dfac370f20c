//! `Session`, the state behind one JavaScript `SessionManager`: the index,
//! where each entry's line is (a range of the file read and a 64-bit hash,
//! owned bytes, or pending in JavaScript), the file the lines are read back
//! from, and its accessors.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::{file_changed, file_gone, SessionError};
use super::file_pool::{self, line_hash, FileIdentity, PoolOwner};
use super::index::EntryIndex;
use super::store::IoFailure;
use crate::format::entry::EntryMeta;
use crate::format::lazy;
use crate::format::migrate;

/// Where an entry's JSON line is.
#[derive(Debug, Clone)]
pub(super) enum Line {
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

/// The file whose lines `Line::File` spans are, as it was when read.
pub(super) struct Source {
    pub(super) path: PathBuf,
    pub(super) identity: FileIdentity,
}

pub struct Session {
    pub index: EntryIndex,
    pub(super) lines: Vec<Line>,
    /// Where the `Line::File` lines are read from on demand. No descriptor is
    /// kept here: the process-wide pool (`file_pool`) holds the few most
    /// recently used, so thousands of live sessions hold a bounded number.
    pub(super) source: Option<Source>,
    pub persist: bool,
    pub flushed: bool,
    pub(super) file: Option<PathBuf>,
    /// This session's descriptors in the pool (closed when the session drops).
    pub(super) files: PoolOwner,
    /// Bytes of `Line::Owned` lines.
    pub(super) owned_bytes: usize,
    pub(super) recorded: RecordedCuts,
    /// Whether the file read by `open` may hold what `pi-sessions doctor`
    /// reports (see `open`); `None` when not known (not opened from a file).
    pub(super) may_be_damaged: Option<bool>,
}

/// The cuts (`format::lazy`) of the lines `open` read, found while it read
/// them, so neither a skeleton nor a cut value walks its line again: line `p`'s
/// are `cuts[first[p]..first[p + 1]]`. Emptied whenever the lines are replaced.
#[derive(Default)]
pub(super) struct RecordedCuts {
    first: Vec<u32>,
    cuts: Vec<(u8, u32, u32)>,
}

impl RecordedCuts {
    pub(super) fn from_lines(
        per_line: impl ExactSizeIterator<Item = Vec<lazy::Cut>>,
    ) -> RecordedCuts {
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

    pub(super) fn of(&self, position: u32) -> Option<Vec<lazy::Cut>> {
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
            may_be_damaged: None,
        }
    }

    /// Whether the file `open` read may be damaged: `Some(false)` when
    /// `pi-sessions doctor` would find nothing in it but CRLF line ends (every
    /// line an entry that begins with `{`, valid UTF-8, a header then entries
    /// with string ids whose parents come before them, no id twice, the last
    /// line ended); `None` when the session was not opened by `open_checked`
    /// or was migrated.
    pub fn may_be_damaged(&self) -> Option<bool> {
        self.may_be_damaged
    }

    /// About how many bytes of native memory this session holds.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self.lines.capacity() * std::mem::size_of::<Line>()
            + self.owned_bytes
            + self.recorded.heap_bytes()
    }

    /// Reads lines from `file` (just read, at `path`) from now on.
    pub(super) fn set_source(&mut self, path: &Path, file: File, identity: FileIdentity) {
        file_pool::keep_for_reading(&self.files, path, file);
        self.source = Some(Source {
            path: path.to_path_buf(),
            identity,
        });
    }

    pub(super) fn drop_source(&mut self) {
        self.source = None;
        self.files.forget_reads();
    }

    /// The file the `Line::File` lines are in, if it still is the one read.
    pub(super) fn source_file(&self) -> Result<Option<Arc<File>>, SessionError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::temp_dir;

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
}
