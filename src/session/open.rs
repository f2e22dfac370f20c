//! `Session::open`: a session file loaded (each line's index fields, hash and
//! cuts found as it is read), a cut last line ended, an old version migrated.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::{not_a_session, SessionError};
use super::file_pool::{line_hash, FileIdentity};
use super::index::EntryIndex;
use super::read_lines::read_lines_parallel;
use super::state::{Line, RecordedCuts, Session};
use super::store;
use crate::format::entry::{read_line, read_line_with, EntryMeta, Kind, LineRead};
use crate::format::lazy;
use crate::format::migrate;

/// From this file size on, `open` hands the memory its read freed back to the
/// system (about 8 MB of a 100 MB file); under a millisecond, but too much to
/// pay for each of thousands of small files.
const TRIM_AFTER_OPENING: u64 = 32 * 1024 * 1024;
/// A line this long may be too long for the reference (`pi-sessions doctor`'s
/// too-large finding starts near V8's longest string, 512 MiB).
const LONG_LINE: usize = 256 << 20;

/// Whether an entry's line may be one `pi-sessions doctor` reports: it does
/// not begin with `{` (JSON that is no object, leading blanks), it is very
/// long, or it is not UTF-8.
pub(crate) fn odd_line(line: &[u8]) -> bool {
    line.first() != Some(&b'{')
        || line.len() > LONG_LINE
        || simdutf8::basic::from_utf8(line).is_err()
}

/// Whether lines that are no entries (blank, torn, not JSON, falsy) lie
/// between the entries' lines `(offset, len)`, before the first or after the
/// last (a file of `size` bytes whose last line is ended).
pub(crate) fn lines_between<T>(entries: &[(u64, usize, T)], size: u64) -> bool {
    let mut expected = 0u64;
    for (offset, len, _) in entries {
        if *offset != expected {
            return true;
        }
        expected = offset + *len as u64 + 1;
    }
    expected != size
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

impl Session {
    /// Loads a session file. The manager's state changes only when this succeeds.
    pub fn open(&mut self, path: &Path) -> Result<OpenOutcome, SessionError> {
        self.open_with(path, false)
    }

    /// `open`, seeing too whether `pi-sessions doctor` could fault the file
    /// (`may_be_damaged`), so that a recall page runs the doctor only then.
    /// The UTF-8 check costs about 7-10% of opening a large file, which pi's
    /// own opens are spared.
    pub fn open_checked(&mut self, path: &Path) -> Result<OpenOutcome, SessionError> {
        self.open_with(path, true)
    }

    fn open_with(&mut self, path: &Path, check: bool) -> Result<OpenOutcome, SessionError> {
        if !path.exists() {
            return Ok(OpenOutcome::Missing);
        }
        let source = store::open_read(path)?;
        let identity = FileIdentity::of(&source)?;
        let odd = AtomicBool::new(false);
        let (entries, size, unterminated) = read_lines_parallel(&source, |line| {
            if check && odd_line(line) {
                odd.store(true, Ordering::Relaxed);
            }
            let mut finder = lazy::CutFinder::new(lazy::THRESHOLD);
            let read = read_line_with(line, &mut finder);
            let cuts = finder.finish(&read);
            match read {
                LineRead::Entry(meta) => Some((meta, line_hash(line), cuts)),
                LineRead::Skipped => None,
            }
        })?;
        let lines_damaged =
            check && (unterminated || odd.into_inner() || lines_between(&entries, size));
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
        loaded.may_be_damaged = (check && migration.is_none())
            .then(|| lines_damaged || loaded.index.tree_may_be_damaged());
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::temp_dir;

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
}
