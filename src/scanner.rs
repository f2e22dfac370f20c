//! Listing many session files at once: summaries computed on threads of our
//! own, and a per-process cache that lets the next listing read only what was
//! appended to each file since the last one (session files are append-only).

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::listing::{SessionSummary, Summarizer};
use crate::store::IoFailure;

/// Bytes before the cached end that must still be there for an append-only
/// continuation; anything else means the file was rewritten.
const TAIL_CHECK: usize = 64;

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

#[derive(Clone)]
struct CacheEntry {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    /// State after the last complete line (through the last `\n`).
    state: Summarizer,
    /// Offset just after that `\n`, and the bytes before it.
    offset: u64,
    tail: Vec<u8>,
    result: Option<SessionSummary>,
    token: u64,
}

/// Summaries of files seen before, keyed by path.
#[derive(Default)]
pub struct SummaryCache {
    entries: Mutex<HashMap<PathBuf, Arc<CacheEntry>>>,
}

impl SummaryCache {
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops files that no longer exist.
    pub fn prune(&self) {
        if let Ok(mut map) = self.entries.lock() {
            map.retain(|path, _| path.exists());
        }
    }

    fn get(&self, path: &Path) -> Option<Arc<CacheEntry>> {
        self.entries.lock().ok()?.get(path).cloned()
    }

    fn put(&self, path: &Path, entry: CacheEntry) {
        if let Ok(mut map) = self.entries.lock() {
            map.insert(path.to_path_buf(), Arc::new(entry));
        }
    }
}

fn mtime_ns(meta: &fs::Metadata) -> i128 {
    meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128
}

/// Feeds readline's lines (split on `\n`, `\r\n` and lone `\r`) of `bytes` to
/// the summarizer, up to the last `\n`; returns how many bytes that covered.
fn feed_complete_lines(state: &mut Summarizer, bytes: &[u8]) -> usize {
    let Some(last_nl) = memchr::memrchr(b'\n', bytes) else {
        return 0;
    };
    feed_pieces(state, &bytes[..last_nl]);
    last_nl + 1
}

/// Feeds the pieces of `bytes` between `\n` and `\r` bytes (an empty piece
/// from `\r\n` is skipped as a blank line would be).
fn feed_pieces(state: &mut Summarizer, bytes: &[u8]) {
    let mut start = 0;
    for end in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        state.feed(&bytes[start..end]);
        start = end + 1;
    }
    state.feed(&bytes[start..]);
}

fn finish_with_tail(state: &Summarizer, rest: &[u8]) -> Option<SessionSummary> {
    if rest.is_empty() {
        return state.finish();
    }
    let mut end = state.clone();
    feed_pieces(&mut end, rest);
    end.finish()
}

fn read_from(path: &Path, offset: u64) -> Result<Vec<u8>, IoFailure> {
    let mut file = File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| IoFailure::new(&e, "read", None))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| IoFailure::new(&e, "read", None))?;
    Ok(bytes)
}

/// The summary of one file, from the cache where the file only grew. With the
/// `known` token of an unchanged file, the summary itself is not copied out.
pub fn summarize_cached(
    cache: &SummaryCache,
    path: &Path,
    known: u64,
) -> Result<FileResult, IoFailure> {
    let meta = fs::metadata(path).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
    let mtime_ms = mtime_ns(&meta) as f64 / 1e6;
    if !meta.is_file() {
        // Reading a directory fails in the reference, which then returns null.
        return Ok(FileResult {
            summary: None,
            mtime_ms,
            token: 0,
            unchanged: false,
        });
    }
    let (dev, ino, size, mtime) = (meta.dev(), meta.ino(), meta.len(), mtime_ns(&meta));
    let cached = cache.get(path).filter(|c| c.dev == dev && c.ino == ino);
    if let Some(c) = &cached {
        if c.size == size && c.mtime_ns == mtime {
            let unchanged = known == c.token;
            return Ok(FileResult {
                summary: if unchanged { None } else { c.result.clone() },
                mtime_ms,
                token: c.token,
                unchanged,
            });
        }
    }
    // Continue after the cached end if the file grew and the bytes before the
    // old end are unchanged; a file that changed without growing is read again.
    let continued = match cached {
        Some(c) if size > c.size && size >= c.offset => {
            let from = c.offset - c.tail.len() as u64;
            let bytes = read_from(path, from)?;
            if bytes.starts_with(&c.tail) {
                Some((c.state.clone(), c.offset, bytes[c.tail.len()..].to_vec()))
            } else {
                None
            }
        }
        _ => None,
    };
    let (mut state, base, bytes) = match continued {
        Some(c) => c,
        None => (Summarizer::default(), 0, read_from(path, 0)?),
    };
    let used = feed_complete_lines(&mut state, &bytes);
    let result = finish_with_tail(&state, &bytes[used..]);
    let offset = base + used as u64;
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let tail_start = used.saturating_sub(TAIL_CHECK);
    let tail = if used > 0 {
        bytes[tail_start..used].to_vec()
    } else {
        Vec::new()
    };
    cache.put(
        path,
        CacheEntry {
            dev,
            ino,
            size: base + bytes.len() as u64,
            mtime_ns: mtime,
            state,
            offset,
            // A continuation with nothing new keeps the old tail check.
            tail: if used == 0 && base > 0 {
                Vec::new()
            } else {
                tail
            },
            result: result.clone(),
            token,
        },
    );
    Ok(FileResult {
        summary: result,
        mtime_ms,
        token,
        unchanged: false,
    })
}

/// Summarizes `paths` on `threads` threads of our own, calling `done(index,
/// result)` as each file finishes. Stops early when `cancel` is set.
pub fn scan(
    cache: &SummaryCache,
    paths: &[PathBuf],
    known: &[u64],
    threads: usize,
    cancel: &AtomicBool,
    done: &(dyn Fn(usize, Result<FileResult, IoFailure>) + Sync),
) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, paths.len().max(1)) {
            scope.spawn(|| loop {
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else {
                    return;
                };
                done(
                    i,
                    summarize_cached(cache, path, known.get(i).copied().unwrap_or(0)),
                );
            });
        }
    });
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
    fn appends_are_read_incrementally_and_rewrites_from_scratch() {
        let dir = temp_dir();
        let path = dir.join("a.jsonl");
        fs::write(&path, format!("{HEADER}{}", user("one"))).unwrap();
        let cache = SummaryCache::default();
        let first = summarize_cached(&cache, &path, 0).unwrap().summary.unwrap();
        assert_eq!(first.message_count, 1);
        // Append a line and half of another.
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        write!(
            f,
            "{}{{\"type\":\"message\",\"message\":{{\"role\":\"user\",",
            user("two")
        )
        .unwrap();
        let second = summarize_cached(&cache, &path, 0).unwrap().summary.unwrap();
        assert_eq!(second.message_count, 2);
        assert_eq!(second.all_messages_text, "\"one two\"");
        writeln!(f, "\"content\":\"three\"}}}}").unwrap();
        let third = summarize_cached(&cache, &path, 0).unwrap().summary.unwrap();
        assert_eq!(third.all_messages_text, "\"one two three\"");
        // The same as reading it cold.
        let cold = summarize_cached(&SummaryCache::default(), &path, 0).unwrap();
        assert_eq!(cold.summary.unwrap(), third);
        // Asking again with the token of what we hold copies nothing.
        let again = summarize_cached(&cache, &path, 0).unwrap();
        let known = summarize_cached(&cache, &path, again.token).unwrap();
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
        let rewritten = summarize_cached(&cache, &path, 0).unwrap().summary.unwrap();
        assert_eq!(rewritten.first_message, "\"uno\"");
        // A rewrite that grew but changed the bytes before the old end too.
        fs::write(&path, format!("{HEADER}{}{}", user("eins"), user("zwei"))).unwrap();
        let regrown = summarize_cached(&cache, &path, 0).unwrap().summary.unwrap();
        assert_eq!(regrown.all_messages_text, "\"eins zwei\"");
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
        scan(&cache, &paths, &[], 3, &AtomicBool::new(false), &|i, r| {
            seen.lock().unwrap()[i] += 1;
            assert_eq!(r.is_err(), i == 20);
        });
        assert!(seen.into_inner().unwrap().iter().all(|&n| n == 1));
        assert_eq!(cache.len(), 20);
        fs::remove_dir_all(&dir).unwrap();
    }
}
