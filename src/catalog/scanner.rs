//! Listing many session files at once: summaries computed on threads of our
//! own, and a per-process cache that lets the next listing read only what was
//! appended to each file since the last one (session files are append-only).

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};

use crate::session::store;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::catalog::listing::{SessionSummary, Summarizer, SummaryText};
use crate::catalog::search::SessionText;
use crate::session::store::IoFailure;

/// Bytes before the cached end that must still be there for an append-only
/// continuation; anything else means the file was rewritten.
const TAIL_CHECK: usize = 64;
const HEAD_CHECK: u64 = 4096;

#[derive(Debug, Clone, PartialEq)]
pub struct FileResult {
    /// `None` where the reference's summary is null.
    pub summary: Option<SessionSummary>,
    /// `stats.mtime` in milliseconds, the last fallback for `modified`.
    pub mtime_ms: f64,
    /// Names this version of the file's summary; equal tokens, equal summaries.
    pub token: u64,
    /// The caller already holds the summary of this token: `summary` is left out.
    pub unchanged: bool,
}

static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Little-endian, length-prefixed fields for the persistent cache file.
#[derive(Default)]
pub struct Encoder {
    pub out: Vec<u8>,
}

impl Encoder {
    pub fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.out.extend_from_slice(b);
    }

    pub fn opt_bytes(&mut self, b: Option<&[u8]>) {
        self.u64(b.is_some() as u64);
        if let Some(b) = b {
            self.bytes(b);
        }
    }

    pub fn opt_f64(&mut self, v: Option<f64>) {
        self.u64(v.is_some() as u64);
        if let Some(v) = v {
            self.u64(v.to_bits());
        }
    }

    pub fn strings(&mut self, v: &[String]) {
        self.u64(v.len() as u64);
        for s in v {
            self.bytes(s.as_bytes());
        }
    }
}

/// Reads what `Encoder` wrote; every read fails cleanly on a short or bad file.
pub struct Decoder<'a> {
    input: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub fn new(input: &'a [u8]) -> Decoder<'a> {
        Decoder { input }
    }

    pub fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.input.split_first_chunk::<8>()?;
        self.input = rest;
        Some(u64::from_le_bytes(*head))
    }

    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.input.len() {
            return None;
        }
        let (b, rest) = self.input.split_at(len);
        self.input = rest;
        Some(b)
    }

    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    pub fn opt_bytes(&mut self) -> Option<Option<&'a [u8]>> {
        match self.u64()? {
            0 => Some(None),
            1 => Some(Some(self.bytes()?)),
            _ => None,
        }
    }

    pub fn opt_string(&mut self) -> Option<Option<String>> {
        match self.opt_bytes()? {
            None => Some(None),
            Some(b) => Some(Some(String::from_utf8(b.to_vec()).ok()?)),
        }
    }

    pub fn opt_f64(&mut self) -> Option<Option<f64>> {
        match self.u64()? {
            0 => Some(None),
            1 => Some(Some(f64::from_bits(self.u64()?))),
            _ => None,
        }
    }

    pub fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.u64()?;
        if n > self.input.len() as u64 {
            return None;
        }
        (0..n).map(|_| self.string()).collect()
    }
}

#[derive(Clone)]
struct CacheEntry {
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
    state: Summarizer,
    /// Offset just after that `\n`, and the bytes before it.
    offset: u64,
    tail: Vec<u8>,
    /// The summary with an unterminated last line counted, when the file has
    /// one; otherwise the summary is the state's own (not kept twice).
    unterminated: Option<Option<SessionSummary>>,
    token: u64,
    /// What a search reads of this version, made on the first search.
    search_text: OnceLock<Option<Arc<SessionText>>>,
}

/// A cache entry, or its bytes in the cache file as read, decoded on first
/// use: a process that lists one folder decodes that folder's entries only,
/// and the scan threads decode them in parallel.
#[derive(Clone)]
enum Slot {
    Ready(Arc<CacheEntry>),
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

/// Summaries of files seen before, keyed by path.
#[derive(Default)]
pub struct SummaryCache {
    /// Keyed by the path's bytes: hashing a `Path` walks its components,
    /// which costs more than the rest of a lookup.
    entries: Mutex<foldhash::HashMap<std::ffi::OsString, Slot>>,
    /// Set when an entry changed since the last save.
    dirty: AtomicBool,
    /// Bumped, under the lock, by every change of which entry a path has
    /// (see `versions_of`).
    generation: AtomicU64,
    /// Holds accounting summaries (usage tallied, no texts) instead of
    /// listing ones, in a file of its own.
    accounting: bool,
}

/// The persistent cache files: a magic line, then entries (each a path and
/// its entry's bytes, length-prefixed, so that loading only finds where each
/// is), then a checksum of everything before it. Anything else in such a
/// file is ignored. v4 added the usage tally to the summarizer state, v5 the
/// entry lengths; the file names stay, so that a file of an older format is
/// replaced rather than left behind.
const CACHE_FILE: &str = "pi-session-native-listing.v4.bin";
const CACHE_MAGIC: &[u8; 16] = b"PISN-LISTING-v5\n";
const USAGE_CACHE_FILE: &str = "pi-session-native-usage.v1.bin";
const USAGE_CACHE_MAGIC: &[u8; 16] = b"PISN-USAGE-v2\n\n\n";

/// A cached file's accounting summary (see `SummaryCache::accounting`).
pub struct CachedUsage(Arc<CacheEntry>);

impl CachedUsage {
    /// Names this version of the file's summary (see `FileResult::token`).
    pub fn token(&self) -> u64 {
        self.0.token
    }

    /// The header line and the usage tally; `None` for a file the listing
    /// leaves out.
    pub fn usage(&self) -> Option<(&str, &crate::catalog::usage::UsageTally)> {
        match &self.0.unterminated {
            Some(Some(s)) => Some((s.header.as_str(), s.usage.as_ref()?)),
            Some(None) => None,
            None => self.0.state.usage(),
        }
    }
}

/// A cached version of a file, for its search text.
pub struct CachedText(Arc<CacheEntry>);

impl CachedText {
    /// What a search reads of this version, made once per version.
    pub fn search_text(&self) -> Option<Arc<SessionText>> {
        self.0.search_text()
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    // Enough to tell a torn or foreign file from ours, at memory speed (the
    // listing cache is about 5% of the sessions' bytes; FNV-1a took 0.2 s for
    // 100 MB).
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x243f_6a88_85a3_08d3).hash_one(bytes)
}

impl CacheEntry {
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
                crate::catalog::listing::encode_summary(r, out);
            }
            _ => out.u64(0),
        }
    }

    fn decode(input: &mut Decoder) -> Option<CacheEntry> {
        let dev = input.u64()?;
        let ino = input.u64()?;
        let size = input.u64()?;
        let low = input.u64()? as i128;
        let high = input.u64()? as i128;
        let ctime_low = input.u64()? as i128;
        let ctime_high = input.u64()? as i128;
        let head = input.u64()?;
        let state = Summarizer::decode(input)?;
        let offset = input.u64()?;
        let tail = input.bytes()?.to_vec();
        let unterminated = match input.u64()? {
            0 if offset < size => Some(None),
            0 => None,
            1 => Some(Some(crate::catalog::listing::decode_summary(input)?)),
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
            search_text: OnceLock::new(),
        })
    }

    /// The file's summary, with `all_messages_text` left empty unless `texts`.
    fn result_texts(&self, texts: bool) -> Option<SessionSummary> {
        match &self.unterminated {
            Some(Some(r)) if !texts => Some(SessionSummary {
                header: r.header.clone(),
                message_count: r.message_count,
                first_message: r.first_message.clone(),
                all_messages_text: Vec::new(),
                last_activity: r.last_activity,
                unparsed_times: r.unparsed_times.clone(),
                name: r.name.clone(),
                usage: r.usage.clone(),
            }),
            Some(result) => result.clone(),
            None => self.state.finish_texts(texts),
        }
    }

    /// `result()`'s texts, borrowed.
    fn result_text(&self) -> Option<SummaryText<'_>> {
        match &self.unterminated {
            Some(result) => result.as_ref().map(SessionSummary::text),
            None => self.state.text(),
        }
    }

    fn search_text(&self) -> Option<Arc<SessionText>> {
        self.search_text
            .get_or_init(|| {
                let text = self.result_text()?;
                SessionText::from_summary(text.header, text.name.as_deref(), text.all_messages_text)
                    .map(Arc::new)
            })
            .clone()
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
fn write_private(dir: &Path, name: &str, data: &[u8]) -> Result<(), IoFailure> {
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
fn read_private(path: &Path) -> std::io::Result<CacheFileBytes> {
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

impl SummaryCache {
    /// A cache of accounting summaries.
    pub fn for_accounting() -> SummaryCache {
        SummaryCache {
            accounting: true,
            ..SummaryCache::default()
        }
    }

    fn file_name(&self) -> (&'static str, &'static [u8; 16]) {
        if self.accounting {
            (USAGE_CACHE_FILE, USAGE_CACHE_MAGIC)
        } else {
            (CACHE_FILE, CACHE_MAGIC)
        }
    }

    fn fresh_state(&self) -> Summarizer {
        if self.accounting {
            Summarizer::for_usage()
        } else {
            Summarizer::default()
        }
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
        let mut input = Decoder { input: body };
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

    /// The versions `(path, token)` the cache holds, under one lock (the
    /// search texts are then made or taken outside it, see `CachedText`).
    pub fn versions(&self, files: &[(PathBuf, u64)]) -> Vec<Option<CachedText>> {
        let Ok(map) = self.entries.lock() else {
            return files.iter().map(|_| None).collect();
        };
        files
            .iter()
            .map(|(path, token)| ready_at(&map, path, *token).map(|e| CachedText(e.clone())))
            .collect()
    }

    fn get(&self, path: &Path) -> Option<Arc<CacheEntry>> {
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

    fn put(&self, path: &Path, entry: CacheEntry) -> Arc<CacheEntry> {
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
fn ready_at<'m>(
    map: &'m foldhash::HashMap<std::ffi::OsString, Slot>,
    path: &Path,
    token: u64,
) -> Option<&'m Arc<CacheEntry>> {
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

/// Tokens of the summaries the caller already holds.
pub type Known = foldhash::HashSet<u64>;

/// Checksum of the file's first `HEAD_CHECK` bytes, at most up to `end`.
fn head_of(path: &Path, end: u64) -> Option<u64> {
    let file = File::open(path).ok()?;
    store::read_at(&file, 0, end.min(HEAD_CHECK) as usize)
        .ok()
        .map(|b| checksum(&b))
}

/// What reading from `base` to `size` gave: the state after the last complete
/// line, where that line ended, the bytes before that end, and the summary
/// with the unterminated last line (if any) included.
struct Continued {
    state: Summarizer,
    offset: u64,
    tail: Vec<u8>,
    result: Option<SessionSummary>,
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
fn read_on(
    path: &Path,
    mut state: Summarizer,
    base: u64,
    size: u64,
) -> Result<Continued, IoFailure> {
    let mut file = File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    file.seek(SeekFrom::Start(base))
        .map_err(|e| IoFailure::new(&e, "read", None))?;
    let span = size - base;
    let mut limited = file.take(span);
    let mut offset = base;
    let mut tail = Vec::new();
    let mut last: Option<Summarizer> = None;
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

/// The summary of one file, from the cache where the file only grew. For a
/// token in `known` (an unchanged file), the summary itself is not copied out.
/// (Scans stat relative to a held folder and call `summarize_stat`.)
#[cfg(test)]
fn summarize_cached(
    cache: &SummaryCache,
    path: &Path,
    known: &Known,
) -> Result<FileResult, IoFailure> {
    let st = crate::os::stat(path).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
    summarize_stat(cache, path, &FileStat::new(&st), known, true)
}

/// With `texts` false, summaries come without `all_messages_text`.
fn summarize_stat(
    cache: &SummaryCache,
    path: &Path,
    stat: &FileStat,
    known: &Known,
    texts: bool,
) -> Result<FileResult, IoFailure> {
    let mtime_ms = stat.mtime_ms;
    if !stat.is_file {
        // Reading a directory fails in the reference, which then returns null.
        return Ok(FileResult {
            summary: None,
            mtime_ms,
            token: 0,
            unchanged: false,
        });
    }
    match refresh(cache, path, stat)? {
        Refreshed::Cached(c) => {
            let unchanged = known.contains(&c.token);
            Ok(FileResult {
                summary: if unchanged {
                    None
                } else {
                    c.result_texts(texts)
                },
                mtime_ms,
                token: c.token,
                unchanged,
            })
        }
        Refreshed::Read(c, result) => Ok(FileResult {
            summary: result.map(|s| SessionSummary {
                all_messages_text: if texts {
                    s.all_messages_text
                } else {
                    Vec::new()
                },
                ..*s
            }),
            mtime_ms,
            token: c.token,
            unchanged: false,
        }),
    }
}

/// A file's cache entry, as it was or just read (with the summary computed).
enum Refreshed {
    Cached(Arc<CacheEntry>),
    Read(Arc<CacheEntry>, Option<Box<SessionSummary>>),
}

/// The accounting summary of one file (`None` for what is not a file), from
/// the cache where the file only grew.
pub fn usage_stat(
    cache: &SummaryCache,
    path: &Path,
    stat: &crate::os::Stat,
) -> Result<Option<CachedUsage>, IoFailure> {
    let stat = FileStat::new(stat);
    if !stat.is_file {
        return Ok(None);
    }
    Ok(Some(CachedUsage(match refresh(cache, path, &stat)? {
        Refreshed::Cached(c) | Refreshed::Read(c, _) => c,
    })))
}

/// The cache entry of a file: the cached one when the file is unchanged,
/// else read on from the cached end or from the start.
fn refresh(cache: &SummaryCache, path: &Path, stat: &FileStat) -> Result<Refreshed, IoFailure> {
    let (dev, ino, size, mtime, ctime) =
        (stat.dev, stat.ino, stat.size, stat.mtime_ns, stat.ctime_ns);
    let cached = cache.get(path).filter(|c| c.dev == dev && c.ino == ino);
    if let Some(c) = &cached {
        if c.size == size && c.mtime_ns == mtime && c.ctime_ns == ctime {
            return Ok(Refreshed::Cached(c.clone()));
        }
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
        None => read_on(path, cache.fresh_state(), 0, size)?,
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
            search_text: OnceLock::new(),
        },
    );
    Ok(Refreshed::Read(entry, result.map(Box::new)))
}

/// How a scan gets the status of its `i`th file (following symlinks).
pub type StatOf<'a> = dyn Fn(usize) -> std::io::Result<crate::os::Stat> + Sync + 'a;

/// Summarizes `paths` on `threads` threads of our own, calling `done(index,
/// result)` as each file finishes. Stops early when `cancel` is set. `stat_of`
/// may stat a file relative to its folder (held open), or by its path.
/// Without `texts`, summaries leave out `all_messages_text` (the cache keeps it).
#[allow(clippy::too_many_arguments)]
pub fn scan(
    cache: &SummaryCache,
    paths: &[PathBuf],
    stat_of: &StatOf,
    known: &Known,
    texts: bool,
    threads: usize,
    cancel: &AtomicBool,
    done: &(dyn Fn(usize, Result<FileResult, IoFailure>) + Sync),
) {
    let summarize = |i: usize| {
        let path = &paths[i];
        let st = stat_of(i).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
        summarize_stat(cache, path, &FileStat::new(&st), known, texts)
    };
    crate::parallel::for_each_index(paths.len(), threads, cancel, |i| done(i, summarize(i)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-scan-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    const HEADER: &str =
        "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\"}\n";

    fn user(text: &str) -> String {
        format!(
            "{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        )
    }

    #[test]
    fn versions_of_holds_while_the_generation_stays() {
        let dir = temp_dir();
        let paths: Vec<PathBuf> = ["a", "b"]
            .iter()
            .map(|n| dir.join(format!("{n}.jsonl")))
            .collect();
        for path in &paths {
            fs::write(path, format!("{HEADER}{}", user("one"))).unwrap();
        }
        let cache = SummaryCache::default();
        let tokens = |cache: &SummaryCache| -> Vec<u64> {
            paths
                .iter()
                .map(|p| summarize_cached(cache, p, &Known::default()).unwrap().token)
                .collect()
        };
        let held = |cache: &SummaryCache, tokens: &[u64]| {
            cache.versions_of(paths.iter().zip(tokens.iter().copied()))
        };
        let first = tokens(&cache);
        let generation = held(&cache, &first).expect("both held");
        assert_eq!(generation, cache.generation());
        assert_eq!(tokens(&cache), first, "unchanged files keep their versions");
        assert_eq!(
            cache.generation(),
            generation,
            "and the cache its generation"
        );
        assert_eq!(held(&cache, &[first[0], first[1] + 1]), None);

        // A file read again is another version, in another generation.
        fs::write(&paths[1], format!("{HEADER}{}{}", user("one"), user("two"))).unwrap();
        let second = tokens(&cache);
        assert_eq!(second[0], first[0]);
        assert_ne!(second[1], first[1]);
        assert!(cache.generation() > generation);
        assert_eq!(held(&cache, &first), None);
        let generation = held(&cache, &second).unwrap();

        // A file dropped from the cache changes the generation too.
        cache.retain_listed(&[dir.as_path()], &paths[..1]);
        assert!(cache.generation() > generation);
        assert_eq!(held(&cache, &second), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn appends_are_read_incrementally_and_rewrites_from_scratch() {
        let dir = temp_dir();
        let path = dir.join("a.jsonl");
        fs::write(&path, format!("{HEADER}{}", user("one"))).unwrap();
        let cache = SummaryCache::default();
        let first = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(first.message_count, 1);
        // Append a line and half of another.
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        write!(
            f,
            "{}{{\"type\":\"message\",\"message\":{{\"role\":\"user\",",
            user("two")
        )
        .unwrap();
        let second = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(second.message_count, 2);
        assert_eq!(second.all_messages_text, b"one two");
        writeln!(f, "\"content\":\"three\"}}}}").unwrap();
        let third = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(third.all_messages_text, b"one two three");
        // The same as reading it cold.
        let cold = summarize_cached(&SummaryCache::default(), &path, &Known::default()).unwrap();
        assert_eq!(cold.summary.unwrap(), third);
        // Asking again with the token of what we hold copies nothing.
        let again = summarize_cached(&cache, &path, &Known::default()).unwrap();
        let known = summarize_cached(&cache, &path, &Known::from_iter([again.token])).unwrap();
        assert!(known.unchanged && known.summary.is_none());
        // A rewrite with the same length (and a new mtime) is read again.
        let content = fs::read_to_string(&path).unwrap().replace("one", "uno");
        fs::write(&path, &content).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let rewritten = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(rewritten.first_message, b"uno");
        // A rewrite that grew and kept the old end, but changed the start.
        let before = fs::read_to_string(&path).unwrap();
        fs::write(
            &path,
            format!("{}{}", before.replacen("uno", "one", 1), user("four")),
        )
        .unwrap();
        let changed_head = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(changed_head.first_message, b"one");
        // A rewrite that grew but changed the bytes before the old end too.
        fs::write(&path, format!("{HEADER}{}{}", user("eins"), user("zwei"))).unwrap();
        let regrown = summarize_cached(&cache, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(regrown.all_messages_text, b"eins zwei");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cache_file_and_the_folders_made_for_it_are_private() {
        let set_mode = crate::os::test_modes::set;
        let mode = |p: &Path| crate::os::test_modes::mode_of(p).unwrap();
        let dir = temp_dir();
        if crate::os::test_modes::mode_of(&dir).is_none() {
            eprintln!("skipped: no Unix file modes here");
            return;
        }
        set_mode(&dir, 0o751);
        let path = dir.join("a.jsonl");
        fs::write(&path, format!("{HEADER}{}", user("secret"))).unwrap();
        let cache = SummaryCache::default();
        summarize_cached(&cache, &path, &Known::default()).unwrap();
        let store_dir = dir.join("made").join("for").join("cache");
        cache.save_to(&store_dir).unwrap();
        let file = store_dir.join(CACHE_FILE);
        assert_eq!(mode(&file), 0o600);
        for made in [&dir.join("made"), &dir.join("made/for"), &store_dir] {
            assert_eq!(mode(made), 0o700, "{made:?}");
        }
        // The folder that was there already keeps its mode.
        assert_eq!(mode(&dir), 0o751);
        // Only the cache file is left: the temporary file was renamed.
        assert_eq!(fs::read_dir(&store_dir).unwrap().count(), 1);
        // A file left readable by others is narrowed when read and when replaced.
        set_mode(&file, 0o644);
        assert_eq!(SummaryCache::default().load_from(&store_dir), 1);
        assert_eq!(mode(&file), 0o600);
        set_mode(&file, 0o666);
        cache.save_to(&store_dir).unwrap();
        assert_eq!(mode(&file), 0o600);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cache_survives_a_round_trip_through_its_file_and_ignores_junk() {
        let dir = temp_dir();
        let path = dir.join("a.jsonl");
        fs::write(&path, format!("{HEADER}{}", user("persisted"))).unwrap();
        let cache = SummaryCache::default();
        let first = summarize_cached(&cache, &path, &Known::default()).unwrap();
        let store_dir = dir.join("cache");
        cache.save_to(&store_dir).unwrap();
        let fresh = SummaryCache::default();
        assert_eq!(fresh.load_from(&store_dir), 1);
        // Served from the loaded entry: same summary without reading the file.
        assert_eq!(
            summarize_cached(&fresh, &path, &Known::default())
                .unwrap()
                .summary,
            first.summary
        );
        // Appends continue from the loaded state.
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(user("more").as_bytes())
            .unwrap();
        let grown = summarize_cached(&fresh, &path, &Known::default())
            .unwrap()
            .summary
            .unwrap();
        assert_eq!(grown.all_messages_text, b"persisted more");
        // A torn file and a foreign file are ignored.
        let file = store_dir.join(CACHE_FILE);
        let bytes = fs::read(&file).unwrap();
        fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(SummaryCache::default().load_from(&store_dir), 0);
        fs::write(&file, b"something else entirely").unwrap();
        assert_eq!(SummaryCache::default().load_from(&store_dir), 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_mapped_cache_file_replaced_by_another_process_still_decodes_as_loaded() {
        let dir = temp_dir();
        let a = dir.join("a.jsonl");
        fs::write(&a, format!("{HEADER}{}", user("first"))).unwrap();
        let store_dir = dir.join("cache");
        let writer = SummaryCache::default();
        let first = summarize_cached(&writer, &a, &Known::default()).unwrap();
        writer.save_to(&store_dir).unwrap();
        let loaded = SummaryCache::default();
        assert_eq!(loaded.load_from(&store_dir), 1);
        assert!(matches!(
            loaded.entries.lock().unwrap().get(a.as_os_str()),
            Some(Slot::Stored(bytes, _)) if matches!(**bytes, CacheFileBytes::Mapped(_))
        ));
        // Another process saves its own cache over the file (a rename), with
        // another summary of a: the loaded entry is the one that was read.
        fs::write(&a, format!("{HEADER}{}{}", user("first"), user("second"))).unwrap();
        let other = SummaryCache::default();
        summarize_cached(&other, &a, &Known::default()).unwrap();
        other.save_to(&store_dir).unwrap();
        fs::write(&a, format!("{HEADER}{}", user("first"))).unwrap();
        let entry = loaded.get(&a).unwrap();
        assert_eq!(entry.result_texts(true), first.summary);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loaded_entries_are_decoded_on_use_and_saved_back_unread() {
        let dir = temp_dir();
        let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
        fs::write(&a, format!("{HEADER}{}", user("alpha"))).unwrap();
        fs::write(&b, format!("{HEADER}{}", user("beta"))).unwrap();
        let cache = SummaryCache::default();
        let first_b = summarize_cached(&cache, &b, &Known::default()).unwrap();
        summarize_cached(&cache, &a, &Known::default()).unwrap();
        let store_dir = dir.join("cache");
        cache.save_to(&store_dir).unwrap();
        // Only a is asked for; b goes back to the file as it was read.
        let middle = SummaryCache::default();
        assert_eq!(middle.load_from(&store_dir), 2);
        let a_summary = summarize_cached(&middle, &a, &Known::default()).unwrap();
        assert!(matches!(
            middle.entries.lock().unwrap().get(b.as_os_str()),
            Some(Slot::Stored(..))
        ));
        middle.save_to(&store_dir).unwrap();
        let last = SummaryCache::default();
        assert_eq!(last.load_from(&store_dir), 2);
        fs::remove_file(&b).unwrap();
        fs::write(
            &b,
            b"not read: the cached entry answers while the stat matches",
        )
        .unwrap();
        // The stat changed, so b is read again; a still comes from the cache.
        assert_ne!(
            summarize_cached(&last, &b, &Known::default())
                .unwrap()
                .summary,
            first_b.summary
        );
        assert_eq!(
            summarize_cached(&last, &a, &Known::default())
                .unwrap()
                .summary,
            a_summary.summary
        );
        // An entry whose bytes do not decode (checksum intact) is a miss, not an error.
        let broken = SummaryCache::default();
        let bytes = Arc::new(CacheFileBytes::Read(vec![1u8, 2, 3]));
        broken
            .entries
            .lock()
            .unwrap()
            .insert(a.clone().into_os_string(), Slot::Stored(bytes, 0..3));
        assert!(broken.get(&a).is_none());
        assert_eq!(broken.len(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn scan_reports_every_file_once() {
        let dir = temp_dir();
        let mut paths = Vec::new();
        for i in 0..20 {
            let path = dir.join(format!("{i}.jsonl"));
            fs::write(&path, format!("{HEADER}{}", user(&format!("m{i}")))).unwrap();
            paths.push(path);
        }
        paths.push(dir.join("missing.jsonl"));
        let cache = SummaryCache::default();
        let seen = Mutex::new(vec![0; paths.len()]);
        scan(
            &cache,
            &paths,
            &|i| crate::os::stat(&paths[i]),
            &Known::default(),
            true,
            3,
            &AtomicBool::new(false),
            &|i, r| {
                seen.lock().unwrap()[i] += 1;
                assert_eq!(r.is_err(), i == 20);
            },
        );
        assert!(seen.into_inner().unwrap().iter().all(|&n| n == 1));
        assert_eq!(cache.len(), 20);
        // Files stat'ed relative to the folder give the same results, and the
        // tokens the caller holds come back as unchanged, without summaries.
        let folder = crate::catalog::discovery::Folder::open(&dir).unwrap();
        let stat_in_folder = |i: usize| folder.stat(paths[i].file_name().unwrap());
        let tokens = Mutex::new(vec![0u64; paths.len()]);
        scan(
            &cache,
            &paths,
            &stat_in_folder,
            &Known::default(),
            true,
            2,
            &AtomicBool::new(false),
            &|i, r| {
                if let Ok(r) = r {
                    assert!(!r.unchanged && r.summary.is_some());
                    tokens.lock().unwrap()[i] = r.token;
                }
            },
        );
        let tokens = tokens.into_inner().unwrap();
        let known: Known = tokens[..10].iter().copied().collect();
        scan(
            &cache,
            &paths,
            &stat_in_folder,
            &known,
            true,
            2,
            &AtomicBool::new(false),
            &|i, r| {
                if let Ok(r) = r {
                    assert_eq!(r.token, tokens[i]);
                    assert_eq!(r.unchanged, i < 10);
                    assert_eq!(r.summary.is_none(), i < 10);
                }
            },
        );
        // Files of a folder read whole that were not listed drop out; files of
        // other folders stay.
        let elsewhere = temp_dir().join("x.jsonl");
        fs::write(&elsewhere, format!("{HEADER}{}", user("x"))).unwrap();
        summarize_cached(&cache, &elsewhere, &Known::default()).unwrap();
        cache.take_dirty();
        cache.retain_listed(&[dir.as_path()], &paths[5..]);
        assert_eq!(cache.len(), 16);
        assert!(cache.take_dirty());
        assert!(cache.get(&paths[4]).is_none() && cache.get(&paths[5]).is_some());
        assert!(cache.get(&elsewhere).is_some());
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(elsewhere.parent().unwrap()).unwrap();
    }

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

    #[test]
    fn scan_without_texts_leaves_out_the_message_text_only() {
        let dir = temp_dir();
        // One file ends its last line, one does not (its summary is kept apart).
        let ended = dir.join("a.jsonl");
        fs::write(&ended, format!("{HEADER}{}{}", user("one"), user("two"))).unwrap();
        let cut = dir.join("b.jsonl");
        let cut_line = user("three");
        fs::write(&cut, format!("{HEADER}{}", cut_line.trim_end())).unwrap();
        let paths = vec![ended, cut];
        let cache = SummaryCache::default();
        let run = |texts: bool| {
            let out = Mutex::new(vec![None; paths.len()]);
            scan(
                &cache,
                &paths,
                &|i| crate::os::stat(&paths[i]),
                &Known::default(),
                texts,
                2,
                &AtomicBool::new(false),
                &|i, r| out.lock().unwrap()[i] = r.unwrap().summary,
            );
            out.into_inner().unwrap()
        };
        // Read without texts, then from the cache with and without them.
        let read = run(false);
        let full = run(true);
        let cached = run(false);
        for i in 0..paths.len() {
            let full = full[i].clone().unwrap();
            assert!(!full.all_messages_text.is_empty());
            let expected = SessionSummary {
                all_messages_text: Vec::new(),
                ..full
            };
            assert_eq!(read[i].as_ref(), Some(&expected));
            assert_eq!(cached[i].as_ref(), Some(&expected));
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
