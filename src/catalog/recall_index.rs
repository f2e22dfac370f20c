//! A session's recall index: what a page of `recallRead` (lib/recall.js) needs
//! of one session file (ids, resolved parents, each entry's newest child,
//! which entries a page shows, where each line is) without reading the file.
//! Built once from the file, it is kept in the cache folder beside the
//! listing cache, so a later process reads a page of a 500 MB session in
//! milliseconds; it is extended by what was appended and made again when the
//! file was rewritten.
//!
//! Only a clean file gets one: one `pi-sessions doctor` could not fault
//! (`Session::open_checked` would find `may_be_damaged` false: the tests hold
//! the two to each other), of the current version, every id a distinct
//! non-empty string. There the manager's walks
//! reduce to array hops, which is all this holds; any other file is read by
//! a manager, as before.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::catalog::codec::{Decoder, Encoder};
use crate::catalog::scanner::{checksum, head_checksum, read_private, write_private, TAIL_CHECK};
use crate::format::entry::{read_line, EntryMeta, Kind, LineRead};
use crate::session::file_pool::line_hash;
use crate::session::recall::{is_readable, RecallBranch};
use crate::session::store::{self, IoFailure};
use crate::session::{lines_between, odd_line, read_lines_parallel_in};

/// No position (no parent, no child, no session_info entry).
const NONE: u32 = u32::MAX;
/// Files under this size are indexed again on each open (a few milliseconds)
/// rather than leave a file in the cache folder for each session read.
const PERSIST_FROM: u64 = 8 << 20;
const MAGIC: &[u8; 16] = b"pisn-recall-v1\0\0";
/// Indexes kept in the cache folder at most, the least recently written
/// removed first (each about 2% of its session's size).
const KEPT: usize = 64;
const SUBFOLDER: &str = "recall";

/// The version of a file the index describes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileVersion {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    head: u64,
    tail: Vec<u8>,
}

/// How the index was come by (the benchmark and the tests tell them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read from the cache folder, the file unchanged.
    Stored,
    /// Read from the cache folder and extended by what was appended.
    Extended,
    /// Made from the whole file.
    Built,
}

#[derive(Debug)]
pub struct RecallIndex {
    path: PathBuf,
    version: FileVersion,
    pub origin: Origin,
    offsets: Vec<u64>,
    lens: Vec<u32>,
    hashes: Vec<u64>,
    parents: Vec<u32>,
    last_child: Vec<u32>,
    readable: Vec<u8>,
    /// Position p's id is `ids[id_ends[p - 1]..id_ends[p]]` (the header's is empty).
    ids: Vec<u8>,
    id_ends: Vec<u32>,
    /// Positions after the header, by id bytes, for lookups.
    sorted: Vec<u32>,
    last_info: u32,
}

/// A line read for a page no longer has the bytes it was indexed with.
#[derive(Debug, PartialEq, Eq)]
pub enum LinesError {
    Changed,
    Io(IoFailure),
}

fn version_of(file: &File) -> Result<FileVersion, IoFailure> {
    let st = crate::os::fstat(file).map_err(|e| IoFailure::new(&e, "fstat", None))?;
    // The head and the bytes before the end, as the scan engine checks a file's.
    let tail_from = st.size.saturating_sub(TAIL_CHECK as u64);
    let tail = store::read_at(file, tail_from, (st.size - tail_from) as usize)?;
    Ok(FileVersion {
        dev: st.dev,
        ino: st.ino,
        size: st.size,
        mtime: (st.mtime.sec, st.mtime.nsec as i64),
        ctime: (st.ctime.sec, st.ctime.nsec as i64),
        head: head_checksum(file, st.size)?,
        tail,
    })
}

/// The name of `path`'s index in the cache folder.
fn stored_name(path: &Path) -> String {
    format!("{:016x}.idx", checksum(path.as_os_str().as_encoded_bytes()))
}

/// Whether an id can key a clean index: a non-empty string that no other
/// kind of key could be mistaken for.
fn plain_id(meta: &EntryMeta) -> bool {
    meta.id_is_string && !meta.id.is_empty() && !meta.id.starts_with('\0')
}

impl RecallIndex {
    /// The index of `path`: the stored one when the file is as it was, the
    /// stored one extended when lines were appended, else made from the file
    /// (and stored, for files of `PERSIST_FROM` bytes on, when `cache_dir` is
    /// given). `None` when the file is not clean (see the module's note).
    pub fn open(path: &Path, cache_dir: Option<&Path>) -> Result<Option<RecallIndex>, IoFailure> {
        RecallIndex::open_from(path, cache_dir, PERSIST_FROM, true)
    }

    /// `open` made from the file whatever is stored: for a file whose lines
    /// were found changed under a stored index that its version did not tell
    /// (a rewrite of the same size that set its times back, where the OS has
    /// no change time).
    pub fn open_fresh(
        path: &Path,
        cache_dir: Option<&Path>,
    ) -> Result<Option<RecallIndex>, IoFailure> {
        RecallIndex::open_from(path, cache_dir, PERSIST_FROM, false)
    }

    /// `open`, storing indexes of files of `persist_from` bytes on, and
    /// reading the stored one when `use_stored`.
    fn open_from(
        path: &Path,
        cache_dir: Option<&Path>,
        persist_from: u64,
        use_stored: bool,
    ) -> Result<Option<RecallIndex>, IoFailure> {
        let file = store::open_read(path)?;
        let now = version_of(&file)?;
        let folder = cache_dir.map(|dir| dir.join(SUBFOLDER));
        let name = stored_name(path);
        let stored = folder
            .as_deref()
            .filter(|_| use_stored && now.size >= persist_from)
            .and_then(|dir| RecallIndex::load(&dir.join(&name), path));
        let (index, changed) = match stored {
            Some(index) if index.version == now => (Some(index), false),
            Some(mut index) if index.may_extend_to(&now, &file)? => {
                let extended = index.extend(&file, now.clone())?;
                (extended.then_some(index), true)
            }
            _ => (None, true),
        };
        let index = match index {
            Some(index) => index,
            None => match RecallIndex::build(path, &file, now)? {
                Some(index) => index,
                None => return Ok(None),
            },
        };
        if changed && index.version.size >= persist_from {
            if let Some(dir) = &folder {
                // A cache that cannot be written only costs the next open its speed.
                if write_private(dir, &name, &index.encode()).is_ok() {
                    prune(dir, KEPT);
                }
            }
        }
        Ok(Some(index))
    }

    /// The index of the whole file, if it is clean.
    fn build(
        path: &Path,
        file: &File,
        version: FileVersion,
    ) -> Result<Option<RecallIndex>, IoFailure> {
        let odd = std::sync::atomic::AtomicBool::new(false);
        let (entries, size, unterminated) = read_lines_parallel_in(file, None, |line| {
            if odd_line(line) {
                odd.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            match read_line(line) {
                LineRead::Entry(meta) => Some((meta, line_hash(line))),
                LineRead::Skipped => None,
            }
        })?;
        if unterminated || odd.into_inner() || lines_between(&entries, size) || size != version.size
        {
            return Ok(None);
        }
        let mut offsets = Vec::with_capacity(entries.len());
        let mut lens = Vec::with_capacity(entries.len());
        let mut hashes = Vec::with_capacity(entries.len());
        let mut metas = Vec::with_capacity(entries.len());
        for (offset, len, (meta, hash)) in entries {
            offsets.push(offset);
            lens.push(len as u32);
            hashes.push(hash);
            metas.push(meta);
        }
        let Some(header) = metas.first() else {
            return Ok(None);
        };
        if header.kind != Kind::Session
            || !header.id_is_string
            || crate::format::migrate::plan(&metas).is_some()
        {
            return Ok(None);
        }
        let count = metas.len();
        let mut index = RecallIndex {
            path: path.to_path_buf(),
            version,
            origin: Origin::Built,
            offsets,
            lens,
            hashes,
            parents: Vec::with_capacity(count),
            last_child: vec![NONE; count],
            readable: Vec::with_capacity(count),
            ids: Vec::new(),
            id_ends: Vec::with_capacity(count),
            sorted: Vec::new(),
            last_info: NONE,
        };
        // What `EntryIndex::tree_may_be_damaged` requires (no second header, every id a
        // string of its own, every truthy parentId an entry before it), judged as the
        // entries come: an id seen so far is one before.
        let mut seen: foldhash::HashMap<&str, u32> = foldhash::HashMap::default();
        seen.reserve(count);
        for (p, meta) in metas.iter().enumerate() {
            let parent = if p == 0 {
                NONE
            } else {
                if meta.kind == Kind::Session || !plain_id(meta) {
                    return Ok(None);
                }
                let parent = if meta.parent_truthy {
                    match seen.get(&*meta.parent) {
                        Some(&parent) => parent,
                        None => return Ok(None),
                    }
                } else {
                    NONE
                };
                if seen.insert(&meta.id, p as u32).is_some() {
                    return Ok(None);
                }
                parent
            };
            index.push_entry(p as u32, meta, parent);
        }
        drop(seen);
        // Most ids are 8 characters: their first 8 bytes, big-endian, order most pairs at once.
        let mut keyed: Vec<(u64, u32)> = (1..count as u32)
            .map(|p| {
                let id = index.id_bytes(p);
                let mut head = [0u8; 8];
                let n = id.len().min(8);
                head[..n].copy_from_slice(&id[..n]);
                (u64::from_be_bytes(head), p)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| index.id_bytes(a.1).cmp(index.id_bytes(b.1)))
        });
        let sorted = keyed.into_iter().map(|(_, p)| p).collect();
        index.sorted = sorted;
        Ok(Some(index))
    }

    /// Records entry `p` (the next position), its resolved parent given.
    fn push_entry(&mut self, p: u32, meta: &EntryMeta, parent: u32) {
        self.parents.push(parent);
        if parent != NONE {
            self.last_child[parent as usize] = p;
        }
        self.readable.push(is_readable(meta) as u8);
        if p > 0 {
            self.ids.extend_from_slice(meta.id.as_bytes());
        }
        self.id_ends.push(self.ids.len() as u32);
        if meta.kind == Kind::SessionInfo {
            self.last_info = p;
        }
    }

    /// Whether `now` is this index's file with lines appended (the same file,
    /// longer, its start and the bytes before the indexed end as they were).
    fn may_extend_to(&self, now: &FileVersion, file: &File) -> Result<bool, IoFailure> {
        let was = &self.version;
        if (now.dev, now.ino) != (was.dev, was.ino) || now.size <= was.size {
            return Ok(false);
        }
        // The head as far as the indexed file had one.
        if head_checksum(file, was.size)? != was.head {
            return Ok(false);
        }
        let tail_from = was.size - was.tail.len() as u64;
        Ok(store::read_at(file, tail_from, was.tail.len())? == was.tail)
    }

    /// Adds the lines appended since the index was made; false (the index
    /// then half changed, to be dropped) when they would not leave the file clean.
    fn extend(&mut self, file: &File, now: FileVersion) -> Result<bool, IoFailure> {
        let from = self.version.size;
        let added = store::read_at(file, from, (now.size - from) as usize)?;
        if added.last() != Some(&b'\n') || added.len() as u64 != now.size - from {
            return Ok(false);
        }
        let mut new_ids: foldhash::HashMap<String, u32> = foldhash::HashMap::default();
        let mut offset = from;
        for line in added[..added.len() - 1].split(|&b| b == b'\n') {
            let LineRead::Entry(meta) = read_line(line) else {
                return Ok(false);
            };
            if odd_line(line) || meta.kind == Kind::Session || !plain_id(&meta) {
                return Ok(false);
            }
            if new_ids.contains_key(&*meta.id) || self.get(&meta.id).is_some() {
                return Ok(false);
            }
            let parent = if meta.parent_truthy {
                let found = new_ids
                    .get(&*meta.parent)
                    .copied()
                    .or_else(|| self.get(&meta.parent));
                match found {
                    Some(parent) => parent,
                    None => return Ok(false),
                }
            } else {
                NONE
            };
            let p = self.offsets.len() as u32;
            new_ids.insert(meta.id.to_string(), p);
            self.offsets.push(offset);
            self.lens.push(line.len() as u32);
            self.hashes.push(line_hash(line));
            self.last_child.push(NONE);
            self.push_entry(p, &meta, parent);
            offset += line.len() as u64 + 1;
        }
        let mut appended: Vec<u32> = new_ids.into_values().collect();
        appended.sort_unstable_by(|&a, &b| self.id_bytes(a).cmp(self.id_bytes(b)));
        self.sorted = merge_by(&self.sorted, &appended, |p| self.id_bytes(p));
        self.version = now;
        self.origin = Origin::Extended;
        Ok(true)
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    fn id_bytes(&self, position: u32) -> &[u8] {
        let p = position as usize;
        let start = if p == 0 {
            0
        } else {
            self.id_ends[p - 1] as usize
        };
        &self.ids[start..self.id_ends[p] as usize]
    }

    /// The id of the entry at `position` ('' for the header).
    pub fn id(&self, position: u32) -> &str {
        // Ids were read from UTF-8 lines (a clean file has no other).
        std::str::from_utf8(self.id_bytes(position)).unwrap_or("")
    }

    /// `byId.get(id)`: the position of the entry with this id.
    pub fn get(&self, id: &str) -> Option<u32> {
        self.sorted
            .binary_search_by(|&p| self.id_bytes(p).cmp(id.as_bytes()))
            .ok()
            .map(|at| self.sorted[at])
    }

    /// `getLeafId()` of the file's manager: the last entry's id, `None` for a
    /// file of only its header.
    pub fn leaf(&self) -> Option<&str> {
        (self.len() > 1).then(|| self.id(self.len() as u32 - 1))
    }

    /// The position of the last session_info entry (its name is the session's).
    pub fn last_info(&self) -> Option<u32> {
        (self.last_info != NONE).then_some(self.last_info)
    }

    /// `EntryIndex::recall_branch` on this file: the branch to `leaf` and
    /// where `target` is on it.
    pub fn branch(&self, leaf: Option<&str>, target: Option<&str>) -> RecallBranch {
        let mut positions = Vec::new();
        let mut at = leaf.and_then(|id| self.get(id)).unwrap_or(NONE);
        while at != NONE {
            positions.push(at);
            at = self.parents[at as usize];
        }
        positions.reverse();
        let readable = (0..positions.len() as u32)
            .filter(|&i| self.readable[positions[i as usize] as usize] != 0)
            .collect();
        let target = target.and_then(|t| {
            positions
                .iter()
                .position(|&p| self.id_bytes(p) == t.as_bytes())
                .map(|i| i as u32)
        });
        RecallBranch {
            positions,
            readable,
            target,
        }
    }

    /// `EntryIndex::newest_leaf_under` on this file.
    pub fn newest_leaf_under(&self, id: &str) -> Option<u32> {
        let mut at = self.get(id)?;
        let mut here = None;
        while self.last_child[at as usize] != NONE {
            at = self.last_child[at as usize];
            here = Some(at);
        }
        here
    }

    /// The lines at `positions`, as the file holds them now; `Changed` when
    /// one no longer has the bytes it was indexed with.
    pub fn lines(&self, positions: &[u32]) -> Result<Vec<String>, LinesError> {
        let file = store::open_read(&self.path).map_err(LinesError::Io)?;
        let mut out = Vec::with_capacity(positions.len());
        for &p in positions {
            let p = p as usize;
            if p >= self.len() {
                return Err(LinesError::Changed);
            }
            let line = store::read_at(&file, self.offsets[p], self.lens[p] as usize)
                .map_err(LinesError::Io)?;
            if line.len() != self.lens[p] as usize || line_hash(&line) != self.hashes[p] {
                return Err(LinesError::Changed);
            }
            out.push(String::from_utf8(line).map_err(|_| LinesError::Changed)?);
        }
        Ok(out)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Encoder {
            out: MAGIC.to_vec(),
        };
        out.bytes(self.path.as_os_str().as_encoded_bytes());
        let v = &self.version;
        for n in [
            v.dev,
            v.ino,
            v.size,
            v.mtime.0 as u64,
            v.mtime.1 as u64,
            v.ctime.0 as u64,
            v.ctime.1 as u64,
            v.head,
        ] {
            out.u64(n);
        }
        out.bytes(&v.tail);
        out.bytes(&le_bytes(&self.offsets, u64::to_le_bytes));
        out.bytes(&le_bytes(&self.lens, u32::to_le_bytes));
        out.bytes(&le_bytes(&self.hashes, u64::to_le_bytes));
        out.bytes(&le_bytes(&self.parents, u32::to_le_bytes));
        out.bytes(&le_bytes(&self.last_child, u32::to_le_bytes));
        out.bytes(&self.readable);
        out.bytes(&self.ids);
        out.bytes(&le_bytes(&self.id_ends, u32::to_le_bytes));
        out.bytes(&le_bytes(&self.sorted, u32::to_le_bytes));
        out.u64(self.last_info as u64);
        let sum = checksum(&out.out[MAGIC.len()..]);
        out.u64(sum);
        out.out
    }

    /// The index stored at `stored` for `path`; `None` for a missing, torn,
    /// foreign or inconsistent file.
    fn load(stored: &Path, path: &Path) -> Option<RecallIndex> {
        let bytes = read_private(stored).ok()?;
        let body = bytes.strip_prefix(MAGIC.as_slice())?;
        let (body, sum) = body.split_at(body.len().checked_sub(8)?);
        if checksum(body).to_le_bytes() != *sum {
            return None;
        }
        let mut input = Decoder::new(body);
        if input.bytes()? != path.as_os_str().as_encoded_bytes() {
            return None;
        }
        let mut n = [0u64; 8];
        for slot in &mut n {
            *slot = input.u64()?;
        }
        let version = FileVersion {
            dev: n[0],
            ino: n[1],
            size: n[2],
            mtime: (n[3] as i64, n[4] as i64),
            ctime: (n[5] as i64, n[6] as i64),
            head: n[7],
            tail: input.bytes()?.to_vec(),
        };
        let index = RecallIndex {
            path: path.to_path_buf(),
            version,
            origin: Origin::Stored,
            offsets: from_le(input.bytes()?, u64::from_le_bytes)?,
            lens: from_le(input.bytes()?, u32::from_le_bytes)?,
            hashes: from_le(input.bytes()?, u64::from_le_bytes)?,
            parents: from_le(input.bytes()?, u32::from_le_bytes)?,
            last_child: from_le(input.bytes()?, u32::from_le_bytes)?,
            readable: input.bytes()?.to_vec(),
            ids: input.bytes()?.to_vec(),
            id_ends: from_le(input.bytes()?, u32::from_le_bytes)?,
            sorted: from_le(input.bytes()?, u32::from_le_bytes)?,
            last_info: u32::try_from(input.u64()?).ok()?,
        };
        index.is_consistent().then_some(index)
    }

    /// Every array as long as the entries, every position in range, parents
    /// before and children after their entries (as a clean file has them), so
    /// no lookup of a stored index goes out of bounds and no walk loops.
    fn is_consistent(&self) -> bool {
        let n = self.len();
        let in_range = |p: &u32| *p == NONE || (*p as usize) < n;
        let ordered = |p: usize| {
            (self.parents[p] == NONE || (self.parents[p] as usize) < p)
                && (self.last_child[p] == NONE || (self.last_child[p] as usize) > p)
        };
        n > 0
            && [
                self.lens.len(),
                self.hashes.len(),
                self.parents.len(),
                self.last_child.len(),
                self.readable.len(),
                self.id_ends.len(),
            ]
            .iter()
            .all(|&l| l == n)
            && self.sorted.len() == n - 1
            && self.parents.iter().all(in_range)
            && self.last_child.iter().all(in_range)
            && (0..n).all(ordered)
            && self.sorted.iter().all(|&p| p > 0 && (p as usize) < n)
            && (self.last_info == NONE || (self.last_info as usize) < n)
            && self.id_ends.windows(2).all(|w| w[0] <= w[1])
            && self
                .id_ends
                .last()
                .is_some_and(|&end| end as usize == self.ids.len())
            && std::str::from_utf8(&self.ids).is_ok()
    }
}

/// Removes the least recently written indexes of `dir` beyond the `kept` newest.
fn prune(dir: &Path, kept: usize) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut indexes: Vec<(std::time::SystemTime, PathBuf)> = read
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".idx"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if indexes.len() <= kept {
        return;
    }
    indexes.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
    for (_, path) in &indexes[kept..] {
        let _ = std::fs::remove_file(path);
    }
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], to: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to(v)).collect()
}

fn from_le<T, const N: usize>(bytes: &[u8], from: fn([u8; N]) -> T) -> Option<Vec<T>> {
    let chunks = bytes.chunks_exact(N);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|c| from(c.try_into().unwrap_or([0; N])))
            .collect(),
    )
}

/// Two runs sorted by `key`, merged.
fn merge_by<'k>(a: &[u32], b: &[u32], key: impl Fn(u32) -> &'k [u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if key(a[i]) <= key(b[j]) {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{seeded_numbers as numbers, temp_dir as dir, Session};

    fn header(version: u32) -> String {
        format!("{{\"type\":\"session\",\"version\":{version},\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n")
    }

    /// `count` entries after `ids_before` earlier ones, each under a random
    /// earlier entry (or none), of every kind a page reads or skips.
    fn entries(next: &mut impl FnMut(u64) -> u64, ids_before: usize, count: usize) -> String {
        let mut out = String::new();
        for i in ids_before..ids_before + count {
            let parent = match next(10) {
                0 if i > 0 => "null".to_string(),
                _ if i == 0 => "null".to_string(),
                // Mostly the one before (a branch written in order), sometimes further back.
                1 | 2 => format!("\"e{}\"", next(i as u64)),
                _ => format!("\"e{}\"", i - 1),
            };
            let body = match next(8) {
                0 => "\"type\":\"message\",\"message\":{\"role\":\"system\",\"content\":\"x\"}"
                    .to_string(),
                1 => "\"type\":\"compaction\",\"summary\":\"s\",\"firstKeptEntryId\":\"e0\""
                    .to_string(),
                2 => format!("\"type\":\"session_info\",\"name\":\"n{i}\""),
                3 => "\"type\":\"label\",\"targetId\":\"e0\",\"label\":\"l\"".to_string(),
                4 => "\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[]}"
                    .to_string(),
                _ => format!(
                    "\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"ü {i}\"}}"
                ),
            };
            out.push_str(&format!(
                "{{{body},\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n"
            ));
        }
        out
    }

    /// Every answer of `index` equals the one the manager's index gives on the same file.
    fn assert_as_manager(index: &RecallIndex, path: &Path) {
        let mut session = Session::new(false);
        session.open_checked(path).unwrap();
        assert_eq!(session.may_be_damaged(), Some(false));
        let tree = &session.index;
        assert_eq!(index.len(), tree.metas.len());
        let leaf = tree
            .leaf
            .as_deref()
            .filter(|k| crate::session::index::is_truthy_key(k));
        assert_eq!(index.leaf(), leaf);
        let info = tree.metas.iter().rposition(|m| m.kind == Kind::SessionInfo);
        assert_eq!(index.last_info(), info.map(|p| p as u32));
        let ids: Vec<String> = tree.metas[1..].iter().map(|m| m.id.to_string()).collect();
        for id in ids.iter().map(String::as_str).chain(["nope", "", "s1"]) {
            assert_eq!(index.get(id), tree.get(id), "get {id}");
            // A page asks only of an entry it has.
            if tree.get(id).is_some() {
                let under = tree.newest_leaf_under(id);
                assert_eq!(index.newest_leaf_under(id), under, "leaf under {id}");
            }
        }
        for leaf in ids.iter().step_by(3) {
            for target in [ids.first(), ids.last(), ids.get(ids.len() / 2)] {
                let target = target.map(String::as_str);
                assert_eq!(
                    index.branch(Some(leaf), target),
                    tree.recall_branch(Some(leaf), target),
                    "branch to {leaf}, target {target:?}"
                );
            }
        }
        assert_eq!(index.branch(None, None), tree.recall_branch(None, None));
        let all: Vec<u32> = (0..index.len() as u32).collect();
        let bytes = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = bytes.lines().collect();
        assert_eq!(index.lines(&all).unwrap(), lines);
    }

    #[test]
    fn a_clean_file_is_answered_as_the_manager_answers_it() {
        for seed in 0..20u64 {
            let mut next = numbers(seed);
            let dir = dir();
            let path = dir.join("s.jsonl");
            let count = 1 + next(200) as usize;
            std::fs::write(&path, header(3) + &entries(&mut next, 0, count)).unwrap();
            let index = RecallIndex::open(&path, None).unwrap().expect("clean");
            assert_eq!(index.origin, Origin::Built);
            assert_as_manager(&index, &path);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn stored_then_extended_by_appends_then_built_again_after_a_rewrite() {
        for seed in 0..10u64 {
            let mut next = numbers(seed);
            let dir = dir();
            let cache = dir.join("cache");
            let path = dir.join("s.jsonl");
            let first = 1 + next(100) as usize;
            std::fs::write(&path, header(3) + &entries(&mut next, 0, first)).unwrap();
            let open = |path: &Path| {
                RecallIndex::open_from(path, Some(&cache), 0, true)
                    .unwrap()
                    .expect("clean")
            };
            assert_eq!(open(&path).origin, Origin::Built);
            let stored = open(&path);
            assert_eq!(stored.origin, Origin::Stored);
            assert_as_manager(&stored, &path);
            // Appended twice: each time the stored index grows by the new lines.
            let mut total = first;
            for _ in 0..2 {
                let more = 1 + next(50) as usize;
                store::append(&path, entries(&mut next, total, more).as_bytes()).unwrap();
                total += more;
                let extended = open(&path);
                assert_eq!(extended.origin, Origin::Extended);
                assert_as_manager(&extended, &path);
                assert_eq!(open(&path).origin, Origin::Stored);
            }
            assert_eq!(
                RecallIndex::open_from(&path, Some(&cache), 0, false)
                    .unwrap()
                    .unwrap()
                    .origin,
                Origin::Built
            );
            // Rewritten in place, the same size: the head differs, so it is indexed afresh.
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("\"s1\"", "\"s2\"");
            std::fs::write(&path, text).unwrap();
            let rebuilt = open(&path);
            assert_eq!(rebuilt.origin, Origin::Built);
            assert_as_manager(&rebuilt, &path);
            // A stored index whose parents would loop is read as none.
            let looped = {
                let mut index = open(&path);
                let last = index.len() - 1;
                index.parents[1] = last as u32;
                index.encode()
            };
            let stored_file = cache.join(SUBFOLDER).join(stored_name(&path));
            std::fs::write(&stored_file, looped).unwrap();
            assert_eq!(open(&path).origin, Origin::Built);
            // A stored index that is torn or foreign is read as none.
            let bytes = std::fs::read(&stored_file).unwrap();
            std::fs::write(&stored_file, &bytes[..bytes.len() / 2]).unwrap();
            assert_eq!(open(&path).origin, Origin::Built);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn a_file_that_is_not_clean_gets_none_and_so_does_an_append_that_spoils_it() {
        let dir = dir();
        let path = dir.join("s.jsonl");
        let mut next = numbers(7);
        let good = header(3) + &entries(&mut next, 0, 30);
        let entry = |id: &str, parent: &str| {
            format!("{{\"type\":\"message\",\"id\":{id},\"parentId\":{parent},\"message\":{{\"role\":\"user\",\"content\":\"x\"}}}}\n")
        };
        let spoilers = [
            entry("\"e3\"", "\"e29\""),     // an id written twice
            entry("\"zz\"", "\"missing\""), // a parent that is no entry
            entry("\"\"", "\"e29\""),       // an empty id
            entry("5", "\"e29\""),          // an id that is no string
            "\n".to_string(),               // a blank line
            "{\"type\":\"mess".to_string(), // a torn last line
            "not json\n".to_string(),
            header(3), // a second header
        ];
        for spoiler in &spoilers {
            std::fs::write(&path, good.clone() + spoiler).unwrap();
            assert!(
                RecallIndex::open(&path, None).unwrap().is_none(),
                "{spoiler:?}"
            );
            let cache = dir.join("cache");
            std::fs::write(&path, &good).unwrap();
            assert!(RecallIndex::open_from(&path, Some(&cache), 0, true)
                .unwrap()
                .is_some());
            store::append(&path, spoiler.as_bytes()).unwrap();
            assert!(
                RecallIndex::open_from(&path, Some(&cache), 0, true)
                    .unwrap()
                    .is_none(),
                "appended {spoiler:?}"
            );
        }
        // Bytes that are no UTF-8, and an older version (read by a migrating manager).
        let mut bytes = good.clone().into_bytes();
        let at = bytes.len() - 10;
        bytes[at] = 0xff;
        std::fs::write(&path, bytes).unwrap();
        assert!(RecallIndex::open(&path, None).unwrap().is_none());
        std::fs::write(&path, header(2) + &entries(&mut next, 0, 5)).unwrap();
        assert!(RecallIndex::open(&path, None).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_index_is_made_exactly_where_the_manager_sees_no_damage() {
        let dir = dir();
        let path = dir.join("s.jsonl");
        let (mut made, mut refused) = (0, 0);
        for seed in 0..300u64 {
            let mut next = numbers(seed);
            let count = 2 + next(30) as usize;
            let mut lines: Vec<String> = entries(&mut next, 0, count)
                .lines()
                .map(str::to_string)
                .collect();
            // A few changes a damaged or hand-edited file shows, or none.
            for _ in 0..next(3) {
                let at = next(lines.len() as u64) as usize;
                let other = next(count as u64 + 2);
                lines[at] = match next(6) {
                    0 => lines[at].replace(
                        "\"parentId\":",
                        &format!("\"parentId\":\"e{other}\",\"was\":"),
                    ),
                    1 => lines[at].replace("\"id\":", &format!("\"id\":\"e{other}\",\"was\":")),
                    2 => lines[at].replace("\"id\":", "\"id\":7,\"was\":"),
                    3 => lines[at].replace("\"parentId\":", "\"parentId\":0,\"was\":"),
                    4 => lines[at].replace("\"type\":\"", "\"type\":\"session\",\"was\":\""),
                    _ => lines[at].replace("\"parentId\":", "\"parentId\":\"\",\"was\":"),
                };
            }
            std::fs::write(&path, header(3) + &lines.join("\n") + "\n").unwrap();
            let mut session = Session::new(false);
            session.open_checked(&path).unwrap();
            let clean = session.may_be_damaged() == Some(false);
            let index = RecallIndex::open(&path, None).unwrap();
            assert_eq!(index.is_some(), clean, "seed {seed}: {lines:?}");
            if let Some(index) = index {
                assert_as_manager(&index, &path);
                made += 1;
            } else {
                refused += 1;
            }
        }
        assert!(made > 50 && refused > 50, "made {made}, refused {refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cache_folder_keeps_the_newest_indexes() {
        let dir = dir();
        let folder = dir.join("recall");
        std::fs::create_dir_all(&folder).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..5u64 {
            let file = folder.join(format!("{i}.idx"));
            std::fs::write(&file, b"x").unwrap();
            let when = old + std::time::Duration::from_secs(i);
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        std::fs::write(folder.join("other.bin"), b"x").unwrap();
        prune(&folder, 3);
        let mut left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["2.idx", "3.idx", "4.idx", "other.bin"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_line_changed_after_indexing_is_told_not_read() {
        let dir = dir();
        let path = dir.join("s.jsonl");
        let mut next = numbers(3);
        std::fs::write(&path, header(3) + &entries(&mut next, 0, 10)).unwrap();
        let index = RecallIndex::open(&path, None).unwrap().unwrap();
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"e5\"", "\"E5\"");
        std::fs::write(&path, text).unwrap();
        assert_eq!(index.lines(&[1, 2]).unwrap().len(), 2);
        assert_eq!(index.lines(&[6]), Err(LinesError::Changed));
        assert_eq!(index.lines(&[99]), Err(LinesError::Changed));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
