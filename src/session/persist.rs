//! How entries reach the file: appends (one whole line per write, kept as a
//! span of the file when it lands at its end), the persist plan that
//! reproduces `_persist()` and its first flush, `_rewriteFile()`.

use std::path::Path;

use super::error::SessionError;
use super::file_pool::{self, line_hash, FileIdentity};
use super::index::NullishMessage;
use super::state::{Line, Session};
use super::store;
use crate::format::entry::{read_line, EntryMeta, LineRead, Role};

pub enum PersistPlan {
    Skip,
    Append,
    /// The first flush: these positions have no line yet.
    Flush(Vec<u32>),
}

impl Session {
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
    pub(super) fn read_lines_from(&mut self, path: &Path, content: &[u8]) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::temp_dir;

    fn meta(line: &str) -> EntryMeta {
        match read_line(line.as_bytes()) {
            LineRead::Entry(m) => m,
            LineRead::Skipped => panic!(),
        }
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
