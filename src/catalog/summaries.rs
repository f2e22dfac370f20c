//! The listing's and the accounting's caches: the scan engine (`scanner`) fed
//! with the listing's `Summarizer`, and what they answer: a file's summary
//! (`list()`), its usage tally (`usageReport`), its search text.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::catalog::codec::{Decoder, Encoder};
use crate::catalog::listing::{self, SessionSummary, Summarizer, SummaryText};
use crate::catalog::scanner::{
    self, Accumulator, CacheFile, Held, Refreshed, ScanCache, Scanned, StatOf, Version,
};
use crate::catalog::search::SessionText;
use crate::catalog::usage::UsageTally;
use crate::session::store::IoFailure;

/// The persistent cache files (see `scanner::CacheFile`). v4 added the usage
/// tally to the summarizer state, v5 the entry lengths (usage v3: fork
/// fingerprints and records); the file names stay,
/// so that a file of an older format is replaced rather than left behind.
const CACHE_FILE: &str = "pi-session-native-listing.v4.bin";
const CACHE_MAGIC: &[u8; 16] = b"PISN-LISTING-v5\n";
const USAGE_CACHE_FILE: &str = "pi-session-native-usage.v1.bin";
const USAGE_CACHE_MAGIC: &[u8; 16] = b"PISN-USAGE-v3\n\n\n";

/// Summaries of files seen before, keyed by path.
pub type SummaryCache = ScanCache<Summarizer>;

impl Default for SummaryCache {
    /// A cache of listing summaries.
    fn default() -> SummaryCache {
        ScanCache::new(
            Summarizer::default(),
            CacheFile {
                name: CACHE_FILE,
                magic: CACHE_MAGIC,
            },
        )
    }
}

impl SummaryCache {
    /// A cache of accounting summaries (usage tallied, no texts), in a file of
    /// its own.
    pub fn for_accounting() -> SummaryCache {
        ScanCache::new(
            Summarizer::for_usage(),
            CacheFile {
                name: USAGE_CACHE_FILE,
                magic: USAGE_CACHE_MAGIC,
            },
        )
    }
}

impl Accumulator for Summarizer {
    type Summary = SessionSummary;
    type Derived = SessionText;

    fn feed_block(&mut self, block: &[u8]) {
        Summarizer::feed_block(self, block)
    }

    fn finish(&self) -> Option<SessionSummary> {
        Summarizer::finish(self)
    }

    fn encode(&self, out: &mut Encoder) {
        Summarizer::encode(self, out)
    }

    fn decode(input: &mut Decoder) -> Option<Summarizer> {
        Summarizer::decode(input)
    }

    fn encode_summary(summary: &SessionSummary, out: &mut Encoder) {
        listing::encode_summary(summary, out)
    }

    fn decode_summary(input: &mut Decoder) -> Option<SessionSummary> {
        listing::decode_summary(input)
    }
}

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

/// Tokens of the summaries the caller already holds.
pub type Known = foldhash::HashSet<u64>;

/// A cached file's accounting summary (see `SummaryCache::for_accounting`).
pub struct CachedUsage(Version<Summarizer>);

impl CachedUsage {
    /// Names this version of the file's summary (see `FileResult::token`).
    pub fn token(&self) -> u64 {
        self.0.token()
    }

    /// The header line and the usage tally; `None` for a file the listing
    /// leaves out.
    pub fn usage(&self) -> Option<(&str, &UsageTally)> {
        match self.0.held() {
            Held::Summary(Some(s)) => Some((s.header.as_str(), s.usage.as_ref()?)),
            Held::Summary(None) => None,
            Held::State(state) => state.usage(),
        }
    }
}

/// A cached version of a file, for its search text.
pub struct CachedText(pub Version<Summarizer>);

impl CachedText {
    /// What a search reads of this version, made once per version.
    pub fn search_text(&self) -> Option<Arc<SessionText>> {
        self.0.derived(|held| {
            let text = result_text(held)?;
            SessionText::from_summary(text.header, text.name.as_deref(), text.all_messages_text)
        })
    }
}

/// The file's summary, with `all_messages_text` left empty unless `texts`.
fn result_texts(held: Held<'_, Summarizer>, texts: bool) -> Option<SessionSummary> {
    match held {
        Held::Summary(Some(r)) if !texts => Some(SessionSummary {
            header: r.header.clone(),
            message_count: r.message_count,
            first_message: r.first_message.clone(),
            all_messages_text: Vec::new(),
            last_activity: r.last_activity,
            unparsed_times: r.unparsed_times.clone(),
            name: r.name.clone(),
            usage: r.usage.clone(),
        }),
        Held::Summary(result) => result.cloned(),
        Held::State(state) => state.finish_texts(texts),
    }
}

/// `result_texts()`'s texts, borrowed.
fn result_text(held: Held<'_, Summarizer>) -> Option<SummaryText<'_>> {
    match held {
        Held::Summary(result) => result.map(SessionSummary::text),
        Held::State(state) => state.text(),
    }
}

/// The summary of one file without its texts, from the cache where the file
/// only grew (and kept there for the next listing): a search that reads a
/// few files' summaries instead of a listing of every file.
pub fn summarize_file(cache: &SummaryCache, path: &Path) -> Result<FileResult, IoFailure> {
    let st = crate::os::stat(path).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
    Ok(file_result(
        scanner::scan_file(cache, path, &st)?,
        &Known::default(),
        false,
    ))
}

/// The summary of one file, from the cache where the file only grew. For a
/// token in `known` (an unchanged file), the summary itself is not copied out.
/// (Scans stat relative to a held folder and call `scan`.)
#[cfg(test)]
fn summarize_cached(
    cache: &SummaryCache,
    path: &Path,
    known: &Known,
) -> Result<FileResult, IoFailure> {
    let st = crate::os::stat(path).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
    Ok(file_result(
        scanner::scan_file(cache, path, &st)?,
        known,
        true,
    ))
}

/// With `texts` false, summaries come without `all_messages_text`.
fn file_result(file: Scanned<Summarizer>, known: &Known, texts: bool) -> FileResult {
    let mtime_ms = file.mtime_ms;
    match file.version {
        // Reading a directory fails in the reference, which then returns null.
        None => FileResult {
            summary: None,
            mtime_ms,
            token: 0,
            unchanged: false,
        },
        Some(Refreshed::Cached(c)) => {
            let unchanged = known.contains(&c.token());
            FileResult {
                summary: if unchanged {
                    None
                } else {
                    result_texts(c.held(), texts)
                },
                mtime_ms,
                token: c.token(),
                unchanged,
            }
        }
        Some(Refreshed::Read(c, result)) => FileResult {
            summary: result.map(|s| SessionSummary {
                all_messages_text: if texts {
                    s.all_messages_text
                } else {
                    Vec::new()
                },
                ..*s
            }),
            mtime_ms,
            token: c.token(),
            unchanged: false,
        },
    }
}

/// The accounting summary of one file (`None` for what is not a file), from
/// the cache where the file only grew.
pub fn usage_stat(
    cache: &SummaryCache,
    path: &Path,
    stat: &crate::os::Stat,
) -> Result<Option<CachedUsage>, IoFailure> {
    let file = scanner::scan_file(cache, path, stat)?;
    Ok(file.version.map(|v| CachedUsage(v.version())))
}

/// Summarizes `paths` on `threads` threads of our own, calling `done(index,
/// result)` as each file finishes. Stops early when `cancel` is set. `stat_of`
/// may stat a file relative to its folder (held open), or by its path.
/// Without `texts`, summaries leave out `all_messages_text` (the cache keeps it).
/// A file `gate` turns away (see `scanner::Gate`) has no summary.
#[allow(clippy::too_many_arguments)]
pub fn scan(
    cache: &SummaryCache,
    paths: &[PathBuf],
    stat_of: &StatOf,
    known: &Known,
    texts: bool,
    gate: Option<&scanner::Gate>,
    threads: usize,
    cancel: &AtomicBool,
    done: &(dyn Fn(usize, Result<FileResult, IoFailure>) + Sync),
) {
    let each = |file| file_result(file, known, texts);
    scanner::scan(cache, paths, stat_of, threads, cancel, gate, &each, done);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};
    use std::io::Write;
    use std::sync::Mutex;

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

    /// A temp folder with a one-message session file per name.
    fn sessions(names: &[&str]) -> (PathBuf, Vec<PathBuf>) {
        let dir = temp_dir();
        let paths: Vec<PathBuf> = names
            .iter()
            .map(|n| dir.join(format!("{n}.jsonl")))
            .collect();
        for path in &paths {
            fs::write(path, format!("{HEADER}{}", user("one"))).unwrap();
        }
        (dir, paths)
    }

    /// `scan` of every path on two threads, `pick` of each file's result.
    fn scan_all<T: Clone + Send>(
        cache: &SummaryCache,
        paths: &[PathBuf],
        texts: bool,
        gate: Option<&scanner::Gate>,
        pick: impl Fn(FileResult) -> Option<T> + Sync,
    ) -> Vec<Option<T>> {
        let out = Mutex::new(vec![None; paths.len()]);
        scan(
            cache,
            paths,
            &|i| crate::os::stat(&paths[i]),
            &Known::default(),
            texts,
            gate,
            2,
            &AtomicBool::new(false),
            &|i, r| out.lock().unwrap()[i] = pick(r.unwrap()),
        );
        out.into_inner().unwrap()
    }

    #[test]
    fn a_file_summarized_alone_is_the_listing_s_summary_without_texts() {
        let (dir, paths) = sessions(&["a"]);
        let cache = SummaryCache::default();
        let alone = summarize_file(&cache, &paths[0]).unwrap();
        let listed = summarize_cached(&cache, &paths[0], &Known::default()).unwrap();
        assert_eq!(alone.token, listed.token, "one version, cached once");
        let (alone, listed) = (alone.summary.unwrap(), listed.summary.unwrap());
        assert!(alone.all_messages_text.is_empty());
        assert_eq!(listed.all_messages_text, b"one");
        assert_eq!(
            SessionSummary {
                all_messages_text: Vec::new(),
                ..listed
            },
            alone
        );
        fs::write(dir.join("notes.jsonl"), "{\"not\":\"a session\"}\n").unwrap();
        assert_eq!(
            summarize_file(&cache, &dir.join("notes.jsonl"))
                .unwrap()
                .summary,
            None
        );
        assert!(summarize_file(&cache, &dir.join("gone.jsonl")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn versions_of_holds_while_the_generation_stays() {
        let (dir, paths) = sessions(&["a", "b"]);
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
        assert_eq!(loaded.stored(&a), Some(true));
        // Another process saves its own cache over the file (a rename), with
        // another summary of a: the loaded entry is the one that was read.
        fs::write(&a, format!("{HEADER}{}{}", user("first"), user("second"))).unwrap();
        let other = SummaryCache::default();
        summarize_cached(&other, &a, &Known::default()).unwrap();
        other.save_to(&store_dir).unwrap();
        fs::write(&a, format!("{HEADER}{}", user("first"))).unwrap();
        let entry = loaded.version_of(&a).unwrap();
        assert_eq!(result_texts(entry.held(), true), first.summary);
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
        assert!(middle.stored(&b).is_some());
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
        broken.store_raw(&a, vec![1u8, 2, 3]);
        assert!(broken.version_of(&a).is_none());
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
            None,
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
            None,
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
            None,
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
        assert!(cache.version_of(&paths[4]).is_none() && cache.version_of(&paths[5]).is_some());
        assert!(cache.version_of(&elsewhere).is_some());
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(elsewhere.parent().unwrap()).unwrap();
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
        let run = |texts: bool| scan_all(&cache, &paths, texts, None, |r| r.summary);
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

    #[test]
    fn a_gate_turns_files_away_unread_and_uncached() {
        let (dir, paths) = sessions(&["keep", "skip"]);
        let cache = SummaryCache::default();
        let run = |gate: Option<&scanner::Gate>| {
            scan_all(&cache, &paths, false, gate, |r| {
                Some((r.summary.is_some(), r.token != 0))
            })
        };
        let refuse_skip = |p: &Path| !p.ends_with("skip.jsonl");
        assert_eq!(
            run(Some(&refuse_skip)),
            vec![Some((true, true)), Some((false, false))]
        );
        assert!(cache.version_of(&paths[1]).is_none(), "not cached");
        // A file the cache holds as it is passes without asking the gate.
        let refuse_all = |_: &Path| false;
        assert_eq!(
            run(Some(&refuse_all)),
            vec![Some((true, true)), Some((false, false))]
        );
        assert_eq!(run(None), vec![Some((true, true)), Some((true, true))]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
