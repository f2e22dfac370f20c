//! `createBranchedSession`: the path to a leaf re-chained without label
//! entries, the labels into it recreated, written as a new file whose
//! unchanged lines are copied from the old one.

use foldhash::HashSet;
use std::path::PathBuf;

use super::assembly::{self, Assembly};
use super::error::SessionError;
use super::file_pool::{line_hash, FileIdentity};
use super::index::EntryIndex;
use super::state::{Line, RecordedCuts, Session};
use super::store;
use crate::format::entry::{EntryMeta, Key, Kind, NULL_KEY};
use crate::format::json::{self, JsValue};
use crate::format::json_text;
use crate::format::migrate;
use crate::parallel;

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
