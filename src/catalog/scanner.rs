//! The scan engine: many session files read on threads of our own, each fed
//! line by line to an accumulator (`Accumulator`: the listing's summary with
//! or without the usage tally, anything later), and a per-process cache that
//! lets the next scan read only what was appended to each file since the last
//! one (session files are append-only), saved to and loaded from a persistent
//! cache file. The engine names no accumulator: what a file's lines mean is
//! theirs, which versions of which files to read again is its own.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};

use crate::session::store;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::catalog::codec::{Decoder, Encoder};
use crate::session::store::IoFailure;

/// Bytes before the cached end that must still be there for an append-only
/// continuation; anything else means the file was rewritten.
pub(crate) const TAIL_CHECK: usize = 64;
const HEAD_CHECK: u64 = 4096;

static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What the scan feeds each file's lines to. It can stop at any line end and
/// continue later with what was appended: the engine keeps its state after
/// the last complete line, in memory and in the persistent cache.
pub trait Accumulator: Clone + Send + Sync + 'static {
    /// What it makes of a file; `None` for a file that counts for nothing.
    type Summary: Clone + Send + Sync + 'static;
    /// Made once per file version from its summary, on first ask (see
    /// `Version::derived`).
    type Derived: Send + Sync + 'static;
    /// Feeds a run of whole lines (without the final line break); the last
    /// piece may be an unterminated line.
    fn feed_block(&mut self, block: &[u8]);
    fn finish(&self) -> Option<Self::Summary>;
    /// The state and a summary in the persistent cache file.
    fn encode(&self, out: &mut Encoder);
    fn decode(input: &mut Decoder) -> Option<Self>;
    fn encode_summary(summary: &Self::Summary, out: &mut Encoder);
    fn decode_summary(input: &mut Decoder) -> Option<Self::Summary>;
}

/// A file version's summary as the cache holds it.
pub enum Held<'a, A: Accumulator> {
    /// Every line ended: the summary is the state's own (not kept twice).
    State(&'a A),
    /// The last line was unterminated: the summary made with it counted.
    Summary(Option<&'a A::Summary>),
}

#[derive(Clone)]
struct CacheEntry<A: Accumulator> {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    /// Changes with every write and cannot be set back, unlike the mtime.
    ctime_ns: i128,
    /// Checksum of the first `HEAD_CHECK` bytes (at most up to `offset`): a
    /// rewrite that grew is caught there when it left the old end as it was.
    head: u64,
    /// State after the last complete line (through the last `\n`).
    state: A,
    /// Offset just after that `\n`, and the bytes before it.
    offset: u64,
    tail: Vec<u8>,
    /// The summary with an unterminated last line counted, when the file has
    /// one; otherwise the summary is the state's own (not kept twice).
    unterminated: Option<Option<A::Summary>>,
    token: u64,
    /// Made from this version on first ask (the listing's: its search text).
    derived: OnceLock<Option<Arc<A::Derived>>>,
}

/// A cache entry, or its bytes in the cache file as read, decoded on first
/// use: a process that lists one folder decodes that folder's entries only,
/// and the scan threads decode them in parallel.
enum Slot<A: Accumulator> {
    Ready(Arc<CacheEntry<A>>),
    Stored(Arc<CacheFileBytes>, std::ops::Range<usize>),
}

/// A cache file's bytes: mapped, or read where it cannot be mapped. Mapped,
/// because a new process that lists reads the whole file (100 MB for 10,000
/// sessions), and a read into fresh memory faulted and zeroed every page of
/// it first (about 0.1 s here); the mapping shares the page cache's pages. The
/// file is only ever replaced by a rename (see `write_private`), which leaves a
/// mapping of the old one intact; a program that truncated it in place while
/// a process held it would end that process with SIGBUS.
pub enum CacheFileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for CacheFileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            CacheFileBytes::Mapped(map) => map,
            CacheFileBytes::Read(bytes) => bytes,
        }
    }
}

/// Where a cache is saved: its file's name in the cache folder and the magic
/// line it starts with. The file is the magic line, then entries (each a path
/// and its entry's bytes, length-prefixed, so that loading only finds where
/// each is), then a checksum of everything before it. Anything else in such a
/// file is ignored (and replaced on the next save).
pub struct CacheFile {
    pub name: &'static str,
    pub magic: &'static [u8; 16],
}

/// The state of files seen before, keyed by path.
pub struct ScanCache<A: Accumulator> {
    /// Keyed by the path's bytes: hashing a `Path` walks its components,
    /// which costs more than the rest of a lookup.
    entries: Mutex<foldhash::HashMap<std::ffi::OsString, Slot<A>>>,
    /// Set when an entry changed since the last save.
    dirty: AtomicBool,
    /// Bumped, under the lock, by every change of which entry a path has
    /// (see `versions_of`).
    generation: AtomicU64,
    /// What a file is read into from its start.
    fresh: A,
    file: CacheFile,
}

pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    // Enough to tell a torn or foreign file from ours, at memory speed (the
    // listing cache is about 5% of the sessions' bytes; FNV-1a took 0.2 s for
    // 100 MB).
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x243f_6a88_85a3_08d3).hash_one(bytes)
}

/// A version of a file as the cache holds it.
pub struct Version<A: Accumulator>(Arc<CacheEntry<A>>);

impl<A: Accumulator> Version<A> {
    /// Names this version; equal tokens, equal summaries.
    pub fn token(&self) -> u64 {
        self.0.token
    }

    pub fn held(&self) -> Held<'_, A> {
        self.0.held()
    }

    /// What `make` makes of this version, made once per version.
    pub fn derived(
        &self,
        make: impl FnOnce(Held<'_, A>) -> Option<A::Derived>,
    ) -> Option<Arc<A::Derived>> {
        self.0
            .derived
            .get_or_init(|| make(self.0.held()).map(Arc::new))
            .clone()
    }
}

impl<A: Accumulator> CacheEntry<A> {
    fn encode(&self, out: &mut Encoder) {
        out.u64(self.dev);
        out.u64(self.ino);
        out.u64(self.size);
        out.u64(self.mtime_ns as u64);
        out.u64((self.mtime_ns >> 64) as u64);
        out.u64(self.ctime_ns as u64);
        out.u64((self.ctime_ns >> 64) as u64);
        out.u64(self.head);
        self.state.encode(out);
        out.u64(self.offset);
        out.bytes(&self.tail);
        // Without an unterminated last line the result is the state's own
        // summary: it is recomputed on load instead of stored twice.
        match &self.unterminated {
            Some(Some(r)) => {
                out.u64(1);
                A::encode_summary(r, out);
            }
            _ => out.u64(0),
        }
    }

    fn decode(input: &mut Decoder) -> Option<CacheEntry<A>> {
        let dev = input.u64()?;
        let ino = input.u64()?;
        let size = input.u64()?;
        let low = input.u64()? as i128;
        let high = input.u64()? as i128;
        let ctime_low = input.u64()? as i128;
        let ctime_high = input.u64()? as i128;
        let head = input.u64()?;
        let state = A::decode(input)?;
        let offset = input.u64()?;
        let tail = input.bytes()?.to_vec();
        let unterminated = match input.u64()? {
            0 if offset < size => Some(None),
            0 => None,
            1 => Some(Some(A::decode_summary(input)?)),
            _ => return None,
        };
        Some(CacheEntry {
            dev,
            ino,
            size,
            mtime_ns: (high << 64) | (low & u64::MAX as i128),
            ctime_ns: (ctime_high << 64) | (ctime_low & u64::MAX as i128),
            head,
            state,
            offset,
            tail,
            unterminated,
            token: NEXT_TOKEN.fetch_add(1, Ordering::Relaxed),
            derived: OnceLock::new(),
        })
    }

    fn held(&self) -> Held<'_, A> {
        match &self.unterminated {
            Some(summary) => Held::Summary(summary.as_ref()),
            None => Held::State(&self.state),
        }
    }
}

/// The cache holds the text of every listed session, so it is the user's alone:
/// folders made for it and its file (and the temporary file it is written
/// through) are private to the user (`crate::os::create_private_dir_all`).
fn create_private_dir_all(dir: &Path) -> Result<(), IoFailure> {
    crate::os::create_private_dir_all(dir).map_err(|e| IoFailure::new(&e, "mkdir", Some(dir)))
}

/// Replaces `dir/name` with `data` through a 0600 temporary file renamed over
/// it, so a reader sees the old file or the new one, and the file that lands
/// is 0600 whatever mode the one it replaces had.
pub(crate) fn write_private(dir: &Path, name: &str, data: &[u8]) -> Result<(), IoFailure> {
    use std::io::Write;
    create_private_dir_all(dir)?;
    let target = dir.join(name);
    let temp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut file = crate::os::create_new_private(&temp)
            .map_err(|e| IoFailure::new(&e, "open", Some(&temp)))?;
        file.write_all(data)
            .map_err(|e| IoFailure::new(&e, "write", Some(&temp)))?;
        fs::rename(&temp, &target).map_err(|e| IoFailure::new(&e, "rename", Some(&target)))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Reads a private file, first narrowing its mode to 0600 if it is wider (a
/// file an earlier version wrote with 0644); a file not ours is read as it is.
pub(crate) fn read_private(path: &Path) -> std::io::Result<CacheFileBytes> {
    let mut file = File::open(path)?;
    let metadata = file.metadata()?;
    crate::os::narrow_to_private(&file, &metadata);
    if crate::os::MAP_CACHE_FILES && metadata.is_file() && metadata.len() > 0 {
        // SAFETY: the mapping is read only, and the file is replaced by
        // renames only (see `CacheFileBytes`).
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(CacheFileBytes::Mapped(map));
        }
    }
    // Sized once: growing a buffer of 100 MB by doubling copies it over and over.
    let mut bytes = Vec::with_capacity(metadata.len() as usize + 1);
    file.read_to_end(&mut bytes)?;
    Ok(CacheFileBytes::Read(bytes))
}

impl<A: Accumulator> ScanCache<A> {
    /// An empty cache whose files are read into `fresh`, saved as `file`.
    pub fn new(fresh: A, file: CacheFile) -> ScanCache<A> {
        ScanCache {
            entries: Mutex::default(),
            dirty: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            fresh,
            file,
        }
    }

    fn file_name(&self) -> (&'static str, &'static [u8; 16]) {
        (self.file.name, self.file.magic)
    }

    /// Adds the entries of the cache file in `dir` for paths not known yet. A
    /// missing, torn, foreign or corrupt file adds nothing. The entries are
    /// decoded when first asked for; one that does not decode is a miss.
    pub fn load_from(&self, dir: &Path) -> usize {
        let (name, magic) = self.file_name();
        let Ok(bytes) = read_private(&dir.join(name)) else {
            return 0;
        };
        let Some(body_len) = bytes
            .strip_prefix(magic.as_slice())
            .and_then(|rest| rest.len().checked_sub(8).map(|n| rest.split_at(n)))
            .filter(|(body, sum)| checksum(body).to_le_bytes() == **sum)
            .map(|(body, _)| body.len())
        else {
            return 0;
        };
        let start = magic.len();
        let body = &bytes[start..start + body_len];
        let mut input = Decoder::new(body);
        let Some(count) = input.u64() else { return 0 };
        let mut stored = Vec::new();
        for _ in 0..count {
            let Some((path, entry)) = input.bytes().zip(input.bytes()) else {
                return 0;
            };
            let at = start + (entry.as_ptr() as usize - body.as_ptr() as usize);
            // A path this OS cannot name is left out (it is listed again).
            let Some(path) = crate::os::os_string_from_bytes(path.to_vec()) else {
                continue;
            };
            let path = PathBuf::from(path);
            stored.push((path, at..at + entry.len()));
        }
        let bytes = Arc::new(bytes);
        let Ok(mut map) = self.entries.lock() else {
            return 0;
        };
        let mut added = 0;
        for (path, range) in stored {
            map.entry(path.into_os_string()).or_insert_with(|| {
                added += 1;
                Slot::Stored(bytes.clone(), range)
            });
        }
        if added > 0 {
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        added
    }

    /// Writes every entry to the cache file in `dir`, through a temporary file
    /// renamed over it: a reader sees the old file or the new one, never a mix.
    pub fn save_to(&self, dir: &Path) -> Result<(), IoFailure> {
        let (name, magic) = self.file_name();
        let mut out = Encoder {
            out: magic.to_vec(),
        };
        {
            let Ok(map) = self.entries.lock() else {
                return Ok(());
            };
            out.u64(map.len() as u64);
            for (path, slot) in map.iter() {
                out.bytes(path.as_os_str().as_encoded_bytes());
                match slot {
                    // Entries never asked for are copied as they were read.
                    Slot::Stored(bytes, range) => out.bytes(&bytes[range.clone()]),
                    Slot::Ready(entry) => {
                        let at = out.out.len();
                        out.u64(0);
                        entry.encode(&mut out);
                        let len = (out.out.len() - at - 8) as u64;
                        out.out[at..at + 8].copy_from_slice(&len.to_le_bytes());
                    }
                }
            }
        }
        let sum = checksum(&out.out[magic.len()..]);
        out.u64(sum);
        write_private(dir, name, &out.out)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the entries of files in `folders` that are not among `listed`:
    /// those folders were just read whole, so their other files are gone (or
    /// were renamed). Entries of other folders wait for their own listing.
    pub fn retain_listed(&self, folders: &[&Path], listed: &[PathBuf]) {
        if folders.is_empty() {
            return;
        }
        let listed: foldhash::HashSet<&std::ffi::OsStr> =
            listed.iter().map(|p| p.as_os_str()).collect();
        let Ok(mut map) = self.entries.lock() else {
            return;
        };
        let before = map.len();
        map.retain(|path, _| {
            listed.contains(path.as_os_str())
                || !Path::new(path)
                    .parent()
                    .is_some_and(|parent| folders.contains(&parent))
        });
        if map.len() != before {
            self.dirty.store(true, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The generation of the cache if it holds exactly these versions (path,
    /// token) of files (ready, not stored), read under one lock with them:
    /// while the generation stays, so do those entries.
    pub fn versions_of<P: AsRef<Path>>(
        &self,
        files: impl IntoIterator<Item = (P, u64)>,
    ) -> Option<u64> {
        let map = self.entries.lock().ok()?;
        let mut files = files.into_iter();
        let all = files.all(|(path, token)| ready_at(&map, path.as_ref(), token).is_some());
        all.then(|| self.generation.load(Ordering::Relaxed))
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// The versions `(path, token)` the cache holds, under one lock (what is
    /// derived of them is then made or taken outside it).
    pub fn versions(&self, files: &[(PathBuf, u64)]) -> Vec<Option<Version<A>>> {
        let Ok(map) = self.entries.lock() else {
            return files.iter().map(|_| None).collect();
        };
        files
            .iter()
            .map(|(path, token)| ready_at(&map, path, *token).map(|e| Version(e.clone())))
            .collect()
    }

    fn get(&self, path: &Path) -> Option<Arc<CacheEntry<A>>> {
        let (bytes, range) = match self.entries.lock().ok()?.get(path.as_os_str())? {
            Slot::Ready(entry) => return Some(entry.clone()),
            Slot::Stored(bytes, range) => (bytes.clone(), range.clone()),
        };
        // Decoded outside the lock, so that the scan threads decode in parallel.
        let decoded = CacheEntry::decode(&mut Decoder::new(&bytes[range.clone()])).map(Arc::new);
        let mut map = self.entries.lock().ok()?;
        let slot = map.get_mut(path.as_os_str())?;
        match slot {
            // Another thread was first, or the file was read meanwhile.
            Slot::Ready(entry) => Some(entry.clone()),
            Slot::Stored(held, at) if Arc::ptr_eq(held, &bytes) && *at == range => match decoded {
                Some(entry) => {
                    *slot = Slot::Ready(entry.clone());
                    Some(entry)
                }
                None => {
                    map.remove(path.as_os_str());
                    self.generation.fetch_add(1, Ordering::Relaxed);
                    None
                }
            },
            Slot::Stored(..) => None,
        }
    }

    fn put(&self, path: &Path, entry: CacheEntry<A>) -> Arc<CacheEntry<A>> {
        let entry = Arc::new(entry);
        if let Ok(mut map) = self.entries.lock() {
            map.insert(path.as_os_str().to_owned(), Slot::Ready(entry.clone()));
            self.dirty.store(true, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        entry
    }

    /// Whether entries changed since the last call.
    pub fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::Relaxed)
    }
}

/// The entry of `path` if it is ready at version `token`: an entry still
/// stored has no token yet, so no caller holds its version.
fn ready_at<'m, A: Accumulator>(
    map: &'m foldhash::HashMap<std::ffi::OsString, Slot<A>>,
    path: &Path,
    token: u64,
) -> Option<&'m Arc<CacheEntry<A>>> {
    match map.get(path.as_os_str()) {
        Some(Slot::Ready(entry)) if entry.token == token => Some(entry),
        _ => None,
    }
}

/// What the scan needs of a file's status.
struct FileStat {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    mtime_ms: f64,
    is_file: bool,
}

impl FileStat {
    fn new(st: &crate::os::Stat) -> FileStat {
        FileStat {
            dev: st.dev,
            ino: st.ino,
            size: st.size,
            mtime_ns: st.mtime.as_ns(),
            ctime_ns: st.ctime.as_ns(),
            mtime_ms: st.mtime_ms(),
            is_file: st.is_file(),
        }
    }
}

/// Checksum of the file's first `HEAD_CHECK` bytes, at most up to `end`.
fn head_of(path: &Path, end: u64) -> Option<u64> {
    head_checksum(&File::open(path).ok()?, end).ok()
}

/// `head_of` an open file (recall indexes check their files' heads so too).
pub(crate) fn head_checksum(file: &File, end: u64) -> Result<u64, IoFailure> {
    store::read_at(file, 0, end.min(HEAD_CHECK) as usize).map(|b| checksum(&b))
}

/// What reading from `base` to `size` gave: the state after the last complete
/// line, where that line ended, the bytes before that end, and the summary
/// with the unterminated last line (if any) included.
struct Continued<A: Accumulator> {
    state: A,
    offset: u64,
    tail: Vec<u8>,
    result: Option<A::Summary>,
    /// Checksum of the first `HEAD_CHECK` bytes (at most up to `offset`), when
    /// the read saw them.
    head: Option<u64>,
}

/// How much of a file is read at a time.
const READ_CHUNK: usize = 256 << 10;
/// A thread keeps a read buffer up to this size for its next file.
const KEPT_BUFFER: usize = 2 << 20;

thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Streams `[base, size)` of the file into `state`, a block of whole lines at
/// a time, holding at most one read buffer plus the longest line in memory.
fn read_on<A: Accumulator>(
    path: &Path,
    mut state: A,
    base: u64,
    size: u64,
) -> Result<Continued<A>, IoFailure> {
    let mut file = File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    file.seek(SeekFrom::Start(base))
        .map_err(|e| IoFailure::new(&e, "read", None))?;
    let span = size - base;
    let mut limited = file.take(span);
    let mut offset = base;
    let mut tail = Vec::new();
    let mut last: Option<A> = None;
    // The first bytes of a read from the start, for the head checksum (without
    // opening the file again); only while the blocks are contiguous.
    let mut head = (base == 0).then(Vec::new);
    let visit = |off: u64, block: &[u8]| {
        if let Some(bytes) = &mut head {
            if off != bytes.len() as u64 && bytes.len() < HEAD_CHECK as usize {
                head = None;
            } else if bytes.len() < HEAD_CHECK as usize {
                let take = block.len().min(HEAD_CHECK as usize - bytes.len());
                bytes.extend_from_slice(&block[..take]);
            }
        }
        if block.last() != Some(&b'\n') {
            // The unterminated last line (it comes alone): it counts for this
            // result, but the state to continue from stops before it.
            let mut end_state = state.clone();
            end_state.feed_block(block);
            last = Some(end_state);
            return;
        }
        // Without its final `\n`, so that no empty piece follows it.
        state.feed_block(&block[..block.len() - 1]);
        offset = base + off + block.len() as u64;
        if block.len() >= TAIL_CHECK {
            tail.clear();
        }
        tail.extend_from_slice(&block[block.len().saturating_sub(TAIL_CHECK)..]);
        let excess = tail.len().saturating_sub(TAIL_CHECK);
        tail.drain(..excess);
    };
    // Read a chunk at a time into this thread's buffer, kept from file to
    // file: no fresh (zeroed, faulted-in) buffer per file, and a chunk small
    // enough to still be in the cache when the lines are read from it.
    let chunk = (span + 1).min(READ_CHUNK as u64) as usize;
    let unterminated = READ_BUFFER
        .with_borrow_mut(|buf| {
            let read = store::for_each_block_in(&mut limited, buf, chunk, visit);
            if buf.len() > KEPT_BUFFER {
                *buf = Vec::new();
            }
            read
        })?
        .1;
    let result = match last {
        Some(end_state) => end_state.finish(),
        None => state.finish(),
    };
    if unterminated {
        // The tail check covers the bytes before the last newline only.
        tail.clear();
    }
    let head_len = offset.min(HEAD_CHECK) as usize;
    let head = head
        .filter(|bytes| bytes.len() >= head_len)
        .map(|bytes| checksum(&bytes[..head_len]));
    Ok(Continued {
        state,
        offset,
        tail,
        result,
        head,
    })
}

/// A file's version, as it was or just read (with the summary computed).
pub enum Refreshed<A: Accumulator> {
    Cached(Version<A>),
    Read(Version<A>, Option<Box<A::Summary>>),
}

impl<A: Accumulator> Refreshed<A> {
    pub fn version(self) -> Version<A> {
        match self {
            Refreshed::Cached(v) | Refreshed::Read(v, _) => v,
        }
    }
}

/// A file as the scan found it.
pub struct Scanned<A: Accumulator> {
    /// `stats.mtime` in milliseconds.
    pub mtime_ms: f64,
    /// `None` for what is not a regular file (a directory, say).
    pub version: Option<Refreshed<A>>,
}

/// One file with the status `stat`, from the cache where the file only grew.
pub fn scan_file<A: Accumulator>(
    cache: &ScanCache<A>,
    path: &Path,
    stat: &crate::os::Stat,
) -> Result<Scanned<A>, IoFailure> {
    scan_file_gated(cache, path, stat, None)
}

/// `scan_file`, where `gate` may turn away a file the cache does not hold as it is.
fn scan_file_gated<A: Accumulator>(
    cache: &ScanCache<A>,
    path: &Path,
    stat: &crate::os::Stat,
    gate: Option<&Gate>,
) -> Result<Scanned<A>, IoFailure> {
    let stat = FileStat::new(stat);
    let version = match stat.is_file {
        true => refresh(cache, path, &stat, gate)?,
        false => None,
    };
    Ok(Scanned {
        mtime_ms: stat.mtime_ms,
        version,
    })
}

/// Says of a file the cache does not hold as it is whether to read it at all
/// (a look cheaper than the accumulator's); a file turned away is scanned as
/// nothing (`Scanned::version` `None`) and not cached.
pub type Gate<'a> = dyn Fn(&Path) -> bool + Sync + 'a;

/// The cache entry of a file: the cached one when the file is unchanged,
/// else read on from the cached end or from the start; `None` when `gate`
/// turns the file away.
fn refresh<A: Accumulator>(
    cache: &ScanCache<A>,
    path: &Path,
    stat: &FileStat,
    gate: Option<&Gate>,
) -> Result<Option<Refreshed<A>>, IoFailure> {
    let (dev, ino, size, mtime, ctime) =
        (stat.dev, stat.ino, stat.size, stat.mtime_ns, stat.ctime_ns);
    let cached = cache.get(path).filter(|c| c.dev == dev && c.ino == ino);
    if let Some(c) = &cached {
        if c.size == size && c.mtime_ns == mtime && c.ctime_ns == ctime {
            return Ok(Some(Refreshed::Cached(Version(c.clone()))));
        }
    }
    if gate.is_some_and(|passes| !passes(path)) {
        return Ok(None);
    }
    // Continue after the cached end if the file grew and the bytes before the
    // old end are unchanged; a file that changed without growing is read again.
    let resumable = cached.filter(|c| {
        size > c.size
            && c.offset >= c.tail.len() as u64
            && File::open(path)
                .ok()
                .and_then(|f| store::read_at(&f, c.offset - c.tail.len() as u64, c.tail.len()).ok())
                .is_some_and(|bytes| bytes == c.tail)
            && head_of(path, c.offset) == Some(c.head)
    });
    let read = match resumable {
        Some(c) => read_on(path, c.state.clone(), c.offset, size)?,
        None => read_on(path, cache.fresh.clone(), 0, size)?,
    };
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let result = read.result;
    let head = read
        .head
        .or_else(|| head_of(path, read.offset))
        .unwrap_or(0);
    let entry = cache.put(
        path,
        CacheEntry {
            dev,
            ino,
            size,
            mtime_ns: mtime,
            ctime_ns: ctime,
            head,
            state: read.state,
            offset: read.offset,
            tail: read.tail,
            unterminated: (read.offset < size).then(|| result.clone()),
            token,
            derived: OnceLock::new(),
        },
    );
    Ok(Some(Refreshed::Read(Version(entry), result.map(Box::new))))
}

/// How a scan gets the status of its `i`th file (following symlinks).
pub type StatOf<'a> = dyn Fn(usize) -> std::io::Result<crate::os::Stat> + Sync + 'a;

/// Scans `paths` on `threads` threads of our own, calling `done(index,
/// each(path, file))` as each file finishes. Stops early when `cancel` is
/// set. `stat_of` may stat a file relative to its folder (held open), or by
/// its path; `gate`, when given, may turn files away unread.
#[allow(clippy::too_many_arguments)]
pub fn scan<A: Accumulator, T>(
    cache: &ScanCache<A>,
    paths: &[PathBuf],
    stat_of: &StatOf,
    threads: usize,
    cancel: &AtomicBool,
    gate: Option<&Gate>,
    each: &(dyn Fn(Scanned<A>) -> T + Sync),
    done: &(dyn Fn(usize, Result<T, IoFailure>) + Sync),
) {
    let scan_one = |i: usize| {
        let path = &paths[i];
        let st = stat_of(i).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
        Ok(each(scan_file_gated(cache, path, &st, gate)?))
    };
    crate::parallel::for_each_index(paths.len(), threads, cancel, |i| done(i, scan_one(i)));
}

#[cfg(test)]
impl<A: Accumulator> ScanCache<A> {
    /// For tests of a cache: the version of `path`, decoded if it was stored.
    pub fn version_of(&self, path: &Path) -> Option<Version<A>> {
        self.get(path).map(Version)
    }

    /// Whether `path`'s entry is still stored as read, and from a mapping.
    pub fn stored(&self, path: &Path) -> Option<bool> {
        match self.entries.lock().unwrap().get(path.as_os_str())? {
            Slot::Stored(bytes, _) => Some(matches!(**bytes, CacheFileBytes::Mapped(_))),
            Slot::Ready(_) => None,
        }
    }

    /// Puts `bytes` in as the stored entry of `path`.
    pub fn store_raw(&self, path: &Path, bytes: Vec<u8>) {
        let len = bytes.len();
        let bytes = Arc::new(CacheFileBytes::Read(bytes));
        self.entries
            .lock()
            .unwrap()
            .insert(path.as_os_str().to_owned(), Slot::Stored(bytes, 0..len));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_tells_every_flipped_bit_and_the_length() {
        let data: Vec<u8> = (0..100u32).map(|i| (i * 37 % 251) as u8).collect();
        let sum = checksum(&data);
        for i in 0..data.len() {
            for bit in 0..8 {
                let mut changed = data.clone();
                changed[i] ^= 1 << bit;
                assert_ne!(checksum(&changed), sum, "byte {i} bit {bit}");
            }
        }
        assert_ne!(checksum(&data[..99]), sum);
        assert_ne!(checksum(&[0; 40]), checksum(&[0; 41]));
    }
}
