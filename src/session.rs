//! One session: its index, the bytes of its entries and where they are persisted.
//! This is the state behind the JavaScript `SessionManager`; JavaScript keeps only
//! the entry objects it has handed out.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::entry::{read_line, EntryMeta, Key, Kind, LineRead, Role, NULL_KEY};
use crate::index::{EntryIndex, NullishMessage};
use crate::json::{self, JsValue};
use crate::migrate::{self, MigrateError};
use crate::store::{self, IoFailure};

pub const MAX_SESSION_HEADER_SCAN_BYTES: usize = 1024 * 1024;

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
    /// A span of the loaded file's bytes.
    File(usize, usize),
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

pub enum HeaderScan {
    Found(Vec<u8>),
    NotFound,
    TooLong,
}

pub struct Session {
    pub index: EntryIndex,
    lines: Vec<Line>,
    file_bytes: Vec<u8>,
    pub persist: bool,
    pub flushed: bool,
    pub file: Option<PathBuf>,
}

fn not_a_session(path: &Path) -> SessionError {
    SessionError::Message(format!(
        "Session file is not a valid pi session: {}",
        path.display()
    ))
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

fn set_or_remove(value: &mut JsValue, key: &str, to: Option<JsValue>) {
    match to {
        Some(v) => value.set(key, v),
        // `{ ...entry, key: undefined }` keeps the key, and JSON.stringify drops it.
        None => {
            if value.get(key).is_some() {
                value.remove(key);
            }
        }
    }
}

impl Session {
    pub fn new(persist: bool) -> Session {
        Session {
            index: EntryIndex::default(),
            lines: Vec::new(),
            file_bytes: Vec::new(),
            persist,
            flushed: false,
            file: None,
        }
    }

    /// `newSession()`: only the header, nothing flushed.
    pub fn start_new(&mut self, header: EntryMeta) {
        self.index = EntryIndex::default();
        self.index.push(header);
        self.lines = vec![Line::Pending];
        self.file_bytes = Vec::new();
        self.flushed = false;
    }

    /// Replaces the entries with ones held by JavaScript (`inMemory(cwd, options, entries)`).
    pub fn load_objects(&mut self, metas: Vec<EntryMeta>) {
        self.lines = vec![Line::Pending; metas.len()];
        self.index = EntryIndex::from_metas(metas);
        self.file_bytes = Vec::new();
    }

    pub fn len(&self) -> usize {
        self.index.metas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.metas.is_empty()
    }

    pub fn line(&self, position: u32) -> Option<&[u8]> {
        match self.lines.get(position as usize)? {
            Line::Pending => None,
            Line::File(start, end) => Some(&self.file_bytes[*start..*end]),
            Line::Owned(bytes) => Some(bytes),
        }
    }

    pub fn new_entry_id(&self) -> String {
        migrate::new_entry_id(&|id| self.index.get(id).is_some())
    }

    /// Loads a session file. The manager's state changes only when this succeeds.
    pub fn open(&mut self, path: &Path) -> Result<OpenOutcome, SessionError> {
        if !path.exists() {
            return Ok(OpenOutcome::Missing);
        }
        let file = store::split_lines(store::read_file(path)?);
        let mut metas = Vec::new();
        let mut lines = Vec::new();
        for &(start, end) in &file.spans {
            if let LineRead::Entry(meta) = read_line(&file.bytes[start..end]) {
                metas.push(meta);
                lines.push(Line::File(start, end));
            }
        }
        let Some(first) = metas.first() else {
            return if file.bytes.is_empty() {
                Ok(OpenOutcome::EmptyFile)
            } else {
                Err(not_a_session(path))
            };
        };
        if first.kind != Kind::Session || !first.id_is_string {
            return Err(not_a_session(path));
        }
        // The reference repairs a cut last line so the next append starts a line.
        if file.unterminated {
            store::append(path, b"\n")?;
        }
        let mut bytes = file.bytes;
        let migration = migrate::plan(&metas);
        if let Some(plan) = &migration {
            let old: Vec<&[u8]> = lines
                .iter()
                .map(|l| match l {
                    Line::File(s, e) => &bytes[*s..*e],
                    _ => &[][..],
                })
                .collect();
            let migrated = migrate::migrate_lines(plan, &old)?;
            let mut content = Vec::new();
            for line in &migrated {
                content.extend_from_slice(line);
                content.push(b'\n');
            }
            // In-memory managers migrate without writing, like `_rewriteFile()`.
            if self.persist {
                store::replace(path, &content)?;
            }
            metas = migrated
                .iter()
                .map(|l| match read_line(l) {
                    LineRead::Entry(m) => m,
                    LineRead::Skipped => EntryMeta::opaque(),
                })
                .collect();
            lines = migrated
                .into_iter()
                .map(|l| Line::Owned(l.into_boxed_slice()))
                .collect();
            bytes = Vec::new();
        }
        self.index = EntryIndex::from_metas(metas);
        self.lines = lines;
        self.file_bytes = bytes;
        self.file = Some(path.to_path_buf());
        self.flushed = true;
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
        let content = self.content_with(&pending, None);
        store::replace(&path, &content)?;
        self.store_lines(pending);
        Ok(())
    }

    fn content_with(&self, pending: &[(u32, Vec<u8>)], extra: Option<&[u8]>) -> Vec<u8> {
        let mut content = Vec::new();
        let mut given = pending.iter().peekable();
        for position in 0..self.len() as u32 {
            let line = match given.peek() {
                Some((p, line)) if *p == position => {
                    given.next();
                    Some(&line[..])
                }
                _ => self.line(position),
            };
            content.extend_from_slice(line.unwrap_or(b"null"));
            content.push(b'\n');
        }
        if let Some(line) = extra {
            content.extend_from_slice(line);
            content.push(b'\n');
        }
        content
    }

    fn store_lines(&mut self, lines: Vec<(u32, Vec<u8>)>) {
        for (p, line) in lines {
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
        let path = self.file.clone();
        match (&line, flush, &path) {
            (Some(line), Some(flush), Some(path)) => {
                let content = self.content_with(&flush, Some(line));
                store::create_new(path, &content)?;
                self.store_lines(flush);
                self.flushed = true;
            }
            (Some(line), None, Some(path)) => {
                let mut data = Vec::with_capacity(line.len() + 1);
                data.extend_from_slice(line);
                data.push(b'\n');
                store::append(path, &data)?;
            }
            _ => {}
        }
        self.lines.push(match line {
            Some(l) => Line::Owned(l.into_boxed_slice()),
            None => Line::Pending,
        });
        Ok(self.index.push(meta))
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
                let content = self.content_with(&flush, None);
                store::create_new(&path, &content)?;
                self.store_lines(flush);
                self.flushed = true;
            }
            None => {
                let mut data = line.to_vec();
                data.push(b'\n');
                store::append(&path, &data)?;
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
        let mut replacement_of_label: std::collections::HashMap<&str, Key> = Default::default();
        let mut pending_labels: Vec<&str> = Vec::new();
        let mut parent: Option<Key> = None;
        let mut metas = vec![header];
        let mut lines = vec![header_line.map_or(Line::Pending, |l| Line::Owned(l.into()))];
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
                if meta.first_kept == meta.id {
                    meta.id.clone()
                } else {
                    replacement_of_label
                        .get(&*meta.first_kept)
                        .cloned()
                        .unwrap_or_else(|| meta.first_kept.clone())
                }
            });
            let mut new_meta = meta.clone();
            new_meta.parent = parent.clone().unwrap_or_else(|| NULL_KEY.into());
            new_meta.parent_truthy = crate::index::is_truthy_key(&new_meta.parent);
            if let Some(fk) = &first_kept {
                new_meta.first_kept = fk.clone();
            }
            let line = match self.line(p) {
                Some(old) => {
                    let rewritten =
                        json::rewrite_line(old, |v| {
                            set_or_remove(
                                v,
                                "parentId",
                                Some(parent.as_deref().map_or(JsValue::Null, |k| {
                                    key_value(k).unwrap_or(JsValue::Null)
                                })),
                            );
                            if let Some(fk) = &first_kept {
                                set_or_remove(v, "firstKeptEntryId", key_value(fk));
                            }
                        })
                        .map_err(|_| SessionError::Message("Unreadable entry line".into()))?;
                    Line::Owned(rewritten.into_boxed_slice())
                }
                None => Line::Pending,
            };
            metas.push(new_meta);
            lines.push(line);
            outcome.kept.push(p);
            outcome.parents.push(parent.replace(meta.id.clone()));
            outcome.first_kept.push(first_kept);
        }
        // The first recreated label hangs off `lastEntry?.id || null`.
        if parent
            .as_deref()
            .is_some_and(|k| !crate::index::is_truthy_key(k))
        {
            parent = None;
        }
        let kept_ids: HashSet<&str> = outcome
            .kept
            .iter()
            .map(|&p| &*self.index.meta(p).id)
            .collect();
        let mut taken: HashSet<String> = kept_ids.iter().map(|s| s.to_string()).collect();
        for (target, label_position) in self.index.labels.iter() {
            if !kept_ids.contains(&**target) {
                continue;
            }
            let id = migrate::new_entry_id(&|id| taken.contains(id));
            taken.insert(id.clone());
            let source = self.index.meta(label_position);
            let mut meta = EntryMeta::opaque();
            meta.kind = Kind::Label;
            meta.id = id.clone().into_boxed_str();
            meta.id_is_string = true;
            meta.parent = parent.clone().unwrap_or_else(|| NULL_KEY.into());
            meta.parent_truthy = parent.is_some();
            meta.target = target.clone();
            meta.label_truthy = true;
            meta.time = source.time;
            let line = match self.line(label_position) {
                Some(old) => Line::Owned(label_line(old, &id, parent.as_deref(), target)?.into()),
                None => Line::Pending,
            };
            metas.push(meta);
            lines.push(line);
            outcome.labels.push((label_position, id.clone()));
            outcome.label_parents.push(parent.clone());
            parent = Some(id.into_boxed_str());
        }
        let index = EntryIndex::from_metas(metas);
        let mut flushed = false;
        if self.persist {
            if index.has_conversation()? {
                let path = new_file
                    .clone()
                    .ok_or_else(|| SessionError::Message("no session file".into()))?;
                let mut content = Vec::new();
                for line in &lines {
                    let bytes: &[u8] = match line {
                        Line::Owned(b) => b,
                        Line::File(s, e) => &self.file_bytes[*s..*e],
                        Line::Pending => b"null",
                    };
                    content.extend_from_slice(bytes);
                    content.push(b'\n');
                }
                store::replace(&path, &content)?;
                flushed = true;
            }
            self.file = new_file;
        }
        self.index = index;
        self.lines = lines;
        self.file_bytes = Vec::new();
        self.flushed = flushed;
        Ok(outcome)
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
    Ok(json::stringify(&JsValue::Obj(members)))
}

/// `readSessionHeader`: the first parsed entry within the first MiB, if it is a header.
pub fn read_header(path: &Path) -> Result<HeaderScan, IoFailure> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let mut bytes = Vec::new();
    file.take(MAX_SESSION_HEADER_SCAN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| IoFailure::new(&e, "read", None))?;
    let beyond = bytes.len() > MAX_SESSION_HEADER_SCAN_BYTES;
    bytes.truncate(MAX_SESSION_HEADER_SCAN_BYTES);
    let candidate = |line: &[u8]| -> Option<HeaderScan> {
        match read_line(line) {
            LineRead::Skipped => None,
            LineRead::Entry(meta) if meta.kind == Kind::Session && meta.id_is_string => {
                Some(HeaderScan::Found(line.to_vec()))
            }
            LineRead::Entry(_) => Some(HeaderScan::NotFound),
        }
    };
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', &bytes) {
        if let Some(found) = candidate(&bytes[start..nl]) {
            return Ok(found);
        }
        start = nl + 1;
    }
    if beyond {
        return Ok(HeaderScan::TooLong);
    }
    Ok(candidate(&bytes[start..]).unwrap_or(HeaderScan::NotFound))
}

/// `forkFrom`'s copy: the source is read as `loadEntriesFromFile` reads it (a cut
/// last line gets its newline), then the new header and every non-header entry
/// go to `target` (created in `dir`, which is made if missing), which must not
/// exist. Without a target only the source is checked. Returns false for an
/// empty or invalid source, before anything is created.
pub fn fork_file(
    source: &Path,
    dir: &Path,
    target: Option<&Path>,
    header_line: &[u8],
) -> Result<bool, SessionError> {
    if !source.exists() {
        return Ok(false);
    }
    let file = store::split_lines(store::read_file(source)?);
    let mut content = Vec::with_capacity(file.bytes.len() + header_line.len() + 1);
    content.extend_from_slice(header_line);
    content.push(b'\n');
    let mut first = true;
    for &(start, end) in &file.spans {
        let line = &file.bytes[start..end];
        let LineRead::Entry(meta) = read_line(line) else {
            continue;
        };
        if first {
            if meta.kind != Kind::Session || !meta.id_is_string {
                return Ok(false);
            }
            first = false;
        }
        if meta.kind == Kind::Session {
            continue;
        }
        let canonical = json::rewrite_line(line, |_| {})
            .map_err(|_| SessionError::Message("Unreadable entry line".into()))?;
        content.extend_from_slice(&canonical);
        content.push(b'\n');
    }
    if first {
        return Ok(false);
    }
    if file.unterminated {
        store::append(source, b"\n")?;
    }
    if let Some(target) = target {
        std::fs::create_dir_all(dir).map_err(|e| IoFailure::new(&e, "mkdir", Some(dir)))?;
        store::create_new(target, &content)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-session-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
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
    fn lazy_flush_then_one_line_per_append() {
        let dir = temp_dir();
        let file = dir.join("s.jsonl");
        let mut s = Session::new(true);
        s.start_new(meta(r#"{"type":"session","id":"s","version":3}"#));
        s.file = Some(file.clone());
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
