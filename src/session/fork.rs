//! `forkFrom`: a session file copied under a new header, as a new session.

use std::path::Path;

use super::assembly::{self, Assembly};
use super::error::SessionError;
use super::file_pool::{line_hash, FileIdentity};
use super::index::EntryIndex;
use super::read_lines::read_lines_parallel;
use super::state::{Line, Session};
use super::store::{self, IoFailure};
use crate::format::entry::{read_line, EntryMeta, Kind, LineRead};
use crate::format::json_text;

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
