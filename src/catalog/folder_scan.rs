//! A listing's scan of session folders (`list()`, `listAll()`): which files
//! it reads, which folders a memo answers for, the scan itself, and what it
//! leaves behind (the watches' stats and memos, the cache without the files
//! that left, the persistent cache file). Results come out as `Event`s; how
//! they reach JavaScript is the binding's concern.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::catalog::discovery::{self, Candidate, HeldFolders};
use crate::catalog::listing::SessionSummary;
use crate::catalog::scanner::Gate;
use crate::catalog::summaries::{self, FileResult, Known, SummaryCache};
use crate::catalog::watch::{FolderMemo, View};
use crate::session::store::IoFailure;

/// What a listing scans.
pub enum Source {
    /// A folder and its names in `readdir` order: read last name first,
    /// results reported by name and index in that order.
    Folder(PathBuf, Vec<String>, View),
    /// `listAll()`'s folders; candidates are found on the scan's thread.
    Folders(Vec<PathBuf>),
}

impl Source {
    /// `list()`'s folder, its names read now or known from its watch; an
    /// error if it cannot be read.
    pub fn folder(dir: PathBuf) -> std::io::Result<Source> {
        let (names, view) = discovery::watched_session_names(&dir)?;
        Ok(Source::Folder(dir, names, view))
    }

    /// How many files a scan of one folder reports; 0 for `listAll()`'s
    /// folders, whose count comes with `Event::Candidates`.
    pub fn files(&self) -> u32 {
        match self {
            Source::Folder(_, names, _) => names.len() as u32,
            Source::Folders(_) => 0,
        }
    }
}

/// What a listing scan reports, in this order: `listAll()`'s candidates
/// (first, before any file), files as they finish (any order, from the scan's
/// threads), then the end.
// An event is made and handed on at once, never stored: boxing its summary
// would only cost an allocation per file.
#[allow(clippy::large_enum_variant)]
pub enum Event<'a> {
    /// `listAll()`'s files in the order they are reported by index.
    Candidates(&'a [Candidate]),
    /// A file whose summary the caller holds: its token was in `known`.
    Unchanged { index: usize, token: u64 },
    /// A file read (or taken from the cache); `summary` is `None` where the
    /// reference's is null. `name` is the file's name in a scan of one folder.
    Read {
        index: usize,
        name: Option<String>,
        summary: Option<SessionSummary>,
        mtime_ms: f64,
        token: u64,
    },
    /// A file that could not be read.
    Failed { index: usize, name: Option<String> },
    /// Every file is reported; the scan's clean-up follows.
    End,
}

/// Receives a scan's events, from any of its threads.
pub type OnEvent<'a> = dyn Fn(Event) + Sync + 'a;

/// The process's listing: the cache of summaries, and the folder of its
/// persistent copy.
#[derive(Default)]
pub struct Listings {
    cache: SummaryCache,
    /// The folder of the persistent cache, if one is configured, and whether
    /// its file was read into `cache` yet.
    cache_dir: Mutex<Option<(PathBuf, bool)>>,
}

/// What a scan reads: folders, and each file as (folder, name) in scan order.
struct Plan {
    dirs: Vec<PathBuf>,
    files: Vec<(u32, String)>,
    /// The folders read whole (their other cached files are gone).
    read: Vec<bool>,
    /// Results are reported by `last - i` with the file's name (one folder).
    reversed: bool,
    /// Per folder, what its watch vouches for.
    views: Vec<View>,
    /// Each file's place among its folder's names, and each folder's count
    /// of names: a folder's memo keeps tokens in that order.
    places: Vec<u32>,
    sizes: Vec<u32>,
}

impl Plan {
    /// The path of the file at plan position `p`.
    fn path_of(&self, p: usize) -> PathBuf {
        let (folder, name) = &self.files[p];
        self.dirs[*folder as usize].join(name)
    }
}

impl Source {
    /// Works out the files to read; `listAll()`'s candidates are reported first.
    fn plan(self, on: &OnEvent) -> Plan {
        match self {
            Source::Folder(dir, names, view) => Plan {
                dirs: vec![dir],
                places: (0..names.len() as u32).rev().collect(),
                sizes: vec![names.len() as u32],
                files: names.into_iter().rev().map(|n| (0, n)).collect(),
                read: vec![true],
                reversed: true,
                views: vec![view],
            },
            Source::Folders(dirs) => {
                let (candidates, read, views) = discovery::folder_candidates(&dirs);
                on(Event::Candidates(&candidates));
                let mut sizes = vec![0u32; dirs.len()];
                candidates
                    .iter()
                    .for_each(|c| sizes[c.folder as usize] += 1);
                Plan {
                    dirs,
                    places: candidates.iter().map(|c| c.index).collect(),
                    sizes,
                    files: candidates.into_iter().map(|c| (c.folder, c.name)).collect(),
                    read,
                    reversed: false,
                    views,
                }
            }
        }
    }
}

impl Listings {
    /// The cache of summaries (search reads its texts).
    pub fn cache(&self) -> &SummaryCache {
        &self.cache
    }

    /// One file's summary without its texts (`summaries::summarize_file`),
    /// the persistent cache read first as a scan reads it.
    pub fn summary_of(&self, path: &Path) -> Result<FileResult, IoFailure> {
        let _ = self.cache_dir_loaded();
        summaries::summarize_file(&self.cache, path)
    }

    /// Sets (or with `None`, clears) the folder of the persistent cache; its
    /// file is read by the next scan.
    pub fn set_cache_dir(&self, dir: Option<PathBuf>) {
        if let Ok(mut slot) = self.cache_dir.lock() {
            *slot = dir.map(|d| (d, false));
        }
    }

    /// The configured folder of the persistent cache.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        Some(self.cache_dir.lock().ok()?.as_ref()?.0.clone())
    }

    /// The configured cache folder, reading its file the first time.
    fn cache_dir_loaded(&self) -> Option<PathBuf> {
        let mut slot = self.cache_dir.lock().ok()?;
        let (dir, loaded) = slot.as_mut()?;
        if !*loaded {
            self.cache.load_from(dir);
            *loaded = true;
        }
        Some(dir.clone())
    }

    /// Scans `source`, reporting to `on` (see `Event`). If the folder's
    /// watch vouches that nothing changed since its last complete listing,
    /// that listing's tokens answer at once. Otherwise files are read on
    /// threads of their own (`summaries::scan`), files whose token is in
    /// `known` reported as unchanged; with `texts` false, summaries come
    /// without `all_messages_text`. A file `gate` turns away has no summary,
    /// and a gated scan keeps no memo. After the end, the memos of the
    /// folders read are kept, files that left them drop out of the cache and
    /// the persistent cache is saved if it changed. Stops early on `cancel`.
    pub fn scan(
        &self,
        source: Source,
        known: &Known,
        texts: bool,
        gate: Option<&Gate>,
        cancel: &AtomicBool,
        on: &OnEvent,
    ) {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        if let Source::Folder(_, names, view) = &source {
            let _ = self.cache_dir_loaded();
            if let Some(memo) = self.unchanged_folder(view, names.len(), known) {
                // Every file as unchanged, last name first as a scan reads them.
                for (index, &token) in memo.tokens.iter().enumerate().rev() {
                    on(Event::Unchanged { index, token });
                }
                on(Event::End);
                return;
            }
        }
        // The persistent cache loads while listAll()'s folders are read.
        let (persistent, mut plan) = std::thread::scope(|scope| {
            let loading = scope.spawn(|| self.cache_dir_loaded());
            let plan = source.plan(on);
            (loading.join().ok().flatten(), plan)
        });
        // listAll()'s folders a memo answers for (list()'s was asked above).
        let memos: Vec<Option<Arc<FolderMemo>>> = plan
            .views
            .iter()
            .zip(&plan.sizes)
            .map(|(view, &size)| {
                (!plan.reversed)
                    .then(|| self.unchanged_folder(view, size as usize, known))
                    .flatten()
            })
            .collect();
        let memo_of = |p: usize| memos[plan.files[p].0 as usize].as_ref();
        // The plan's files that are read: those of folders without a memo.
        let scanned: Vec<usize> = (0..plan.files.len())
            .filter(|&p| memo_of(p).is_none())
            .collect();
        let paths: Vec<PathBuf> = scanned.iter().map(|&p| plan.path_of(p)).collect();
        // Files are stat'ed relative to their folder, held open.
        let views = std::mem::take(&mut plan.views);
        let folders = HeldFolders::open(&plan.dirs, &plan.read).with_views(views);
        let stat_of = |i: usize| {
            let (folder, name) = &plan.files[scanned[i]];
            folders.stat(*folder, name)
        };
        let last = plan.files.len().saturating_sub(1);
        let index_of = |p: usize| if plan.reversed { last - p } else { p };
        // Every file's token, for its folder's memo (watch::FolderMemo).
        let tokens: Vec<AtomicU64> = plan.files.iter().map(|_| AtomicU64::new(0)).collect();
        for (p, slot) in tokens.iter().enumerate() {
            if let Some(memo) = memo_of(p) {
                let token = memo.tokens[plan.places[p] as usize];
                slot.store(token, Ordering::Relaxed);
                on(Event::Unchanged {
                    index: index_of(p),
                    token,
                });
            }
        }
        summaries::scan(
            &self.cache,
            &paths,
            &stat_of,
            known,
            texts,
            gate,
            threads,
            cancel,
            &|i, result| {
                let p = scanned[i];
                let index = index_of(p);
                if let Ok(r) = &result {
                    tokens[p].store(r.token, Ordering::Relaxed);
                    if r.unchanged {
                        on(Event::Unchanged {
                            index,
                            token: r.token,
                        });
                        return;
                    }
                }
                let name = plan.reversed.then(|| plan.files[p].1.clone());
                on(match result {
                    Ok(r) => Event::Read {
                        index,
                        name,
                        summary: r.summary,
                        mtime_ms: r.mtime_ms,
                        token: r.token,
                    },
                    Err(_) => Event::Failed { index, name },
                });
            },
        );
        // The watches get the stats this scan learned before the caller
        // has its answer, so that a listing it starts next finds them
        // (else it stats every file again).
        let mut views = folders.into_views();
        views.iter_mut().for_each(View::commit);
        on(Event::End);
        // The folders' memos, kept before the clean-up below so that a
        // listing the caller starts next mostly finds them. Nothing read,
        // nothing changed: the memos used still hold. A gated scan left
        // files unread: it records none.
        if !scanned.is_empty() && gate.is_none() {
            let tokens: Vec<u64> = tokens.into_iter().map(AtomicU64::into_inner).collect();
            self.keep_memos(&plan, &views, &tokens, &scanned, &paths);
        }
        // Files no longer in the folders just read drop out of the cache,
        // after the caller has its answer; then the persistent copy is
        // brought up to date. A failure to write it only costs the next
        // process a cold listing.
        // A folder a memo answered for had no event: it lost no file.
        let listed: Vec<&Path> = plan
            .dirs
            .iter()
            .zip(&plan.read)
            .zip(&memos)
            .filter(|((_, &read), memo)| read && memo.is_none())
            .map(|((dir, _), _)| dir.as_path())
            .collect();
        self.cache.retain_listed(&listed, &paths);
        drop(views);
        if let Some(dir) = persistent {
            if self.cache.take_dirty() {
                let _ = self.cache.save_to(&dir);
            }
        }
    }

    /// The memo of a folder no event touched since its last complete listing,
    /// where the listing cache is as that listing left it and the caller holds
    /// every file's summary: the listing's answer is then known without a look
    /// at any file.
    fn unchanged_folder(
        &self,
        view: &View,
        files: usize,
        known: &Known,
    ) -> Option<Arc<FolderMemo>> {
        let memo = view.memo()?;
        (memo.tokens.len() == files
            && memo.generation == self.cache.generation()
            && memo.tokens.iter().all(|token| known.contains(token)))
        .then_some(memo)
    }

    /// Each folder's memo from a complete scan: its files' tokens in name order,
    /// if the listing cache holds exactly those versions. `paths` are those of
    /// the `scanned` files (ascending plan positions); the others are joined here.
    fn keep_memos(
        &self,
        plan: &Plan,
        views: &[View],
        tokens: &[u64],
        scanned: &[usize],
        paths: &[PathBuf],
    ) {
        let mut names_order: Vec<Vec<u64>> =
            plan.sizes.iter().map(|&n| vec![0; n as usize]).collect();
        let mut versions: Vec<Vec<(Cow<Path>, u64)>> = plan
            .sizes
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .collect();
        let mut read = scanned.iter().zip(paths).peekable();
        for (p, &token) in tokens.iter().enumerate() {
            let folder = plan.files[p].0 as usize;
            names_order[folder][plan.places[p] as usize] = token;
            let path = match read.next_if(|(&s, _)| s == p) {
                Some((_, path)) => Cow::Borrowed(path.as_path()),
                None => Cow::Owned(plan.path_of(p)),
            };
            versions[folder].push((path, token));
        }
        for ((view, tokens), versions) in views.iter().zip(names_order).zip(versions) {
            if tokens.is_empty() {
                continue;
            }
            if let Some(generation) = self.cache.versions_of(versions) {
                view.keep_memo(FolderMemo { tokens, generation });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-folder-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn session(dir: &Path, name: &str, text: &str) {
        let header = r#"{"type":"session","id":"s","timestamp":"2024-01-01T00:00:00.000Z"}"#;
        let user =
            format!(r#"{{"type":"message","message":{{"role":"user","content":"{text}"}}}}"#);
        fs::write(dir.join(name), format!("{header}\n{user}\n")).unwrap();
    }

    /// What a scan reported, as text: one line per event, in order.
    fn events(
        listings: &Listings,
        source: Source,
        known: &Known,
        gate: Option<&Gate>,
    ) -> Vec<String> {
        let seen = Mutex::new(Vec::new());
        listings.scan(
            source,
            known,
            true,
            gate,
            &AtomicBool::new(false),
            &|event| {
                let line = match event {
                    Event::Candidates(c) => format!("candidates {}", c.len()),
                    Event::Unchanged { index, token } => format!("unchanged {index} {token}"),
                    Event::Read {
                        index,
                        name,
                        summary,
                        token,
                        ..
                    } => format!(
                        "read {index} {} {} {token}",
                        name.unwrap_or_default(),
                        summary.map_or(0, |s| s.message_count)
                    ),
                    Event::Failed { index, .. } => format!("failed {index}"),
                    Event::End => "end".to_string(),
                };
                seen.lock().unwrap().push(line);
            },
        );
        seen.into_inner().unwrap()
    }

    fn tokens(events: &[String]) -> Known {
        events
            .iter()
            .filter_map(|e| e.split(' ').next_back()?.parse().ok())
            .collect()
    }

    #[test]
    fn a_folder_is_read_then_answered_unchanged_by_index() {
        let dir = temp_dir();
        for name in ["a.jsonl", "b.jsonl", "c.jsonl"] {
            session(&dir, name, name);
        }
        let listings = Listings::default();
        let first = events(
            &listings,
            Source::folder(dir.clone()).unwrap(),
            &Known::default(),
            None,
        );
        assert_eq!(first.last().unwrap(), "end");
        let mut read: Vec<&str> = first[..3].iter().map(|e| &e[..16]).collect();
        read.sort();
        assert_eq!(
            read,
            ["read 0 a.jsonl 1", "read 1 b.jsonl 1", "read 2 c.jsonl 1"]
        );

        // Known tokens: every file unchanged (from the folder's memo where
        // it is watched), the last name first, then the end.
        let known = tokens(&first);
        let second = events(
            &listings,
            Source::folder(dir.clone()).unwrap(),
            &known,
            None,
        );
        assert_eq!(second.len(), 4);
        assert!(second[..3].iter().all(|e| e.starts_with("unchanged ")));
        assert_eq!(second[3], "end");
        assert_eq!(tokens(&second), known);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn folders_report_their_candidates_first_and_saves_the_cache() {
        let (dir, cache) = (temp_dir(), temp_dir());
        session(&dir, "a.jsonl", "one");
        fs::write(dir.join("b.jsonl"), "not a session\n").unwrap();
        let listings = Listings::default();
        listings.set_cache_dir(Some(cache.clone()));
        assert_eq!(listings.cache_dir(), Some(cache.clone()));
        let seen = events(
            &listings,
            Source::Folders(vec![dir.clone()]),
            &Known::default(),
            None,
        );
        assert_eq!(seen[0], "candidates 2");
        assert_eq!(seen.last().unwrap(), "end");
        let mut read: Vec<&str> = seen[1..3].iter().map(|e| &e[..7]).collect();
        read.sort();
        assert_eq!(read, ["read 0 ", "read 1 "]);
        assert!(
            fs::read_dir(&cache).unwrap().next().is_some(),
            "cache saved"
        );
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&cache).unwrap();
    }

    #[test]
    fn a_gated_scan_reads_only_what_passes_and_keeps_no_memo() {
        let dir = temp_dir();
        session(&dir, "a.jsonl", "one");
        session(&dir, "b.jsonl", "two");
        let listings = Listings::default();
        let only_a = |path: &Path| path.ends_with("a.jsonl");
        let gated = events(
            &listings,
            Source::folder(dir.clone()).unwrap(),
            &Known::default(),
            Some(&only_a),
        );
        let mut read: Vec<&str> = gated[..2].iter().map(|e| &e[..16]).collect();
        read.sort();
        assert_eq!(read, ["read 0 a.jsonl 1", "read 1 b.jsonl 0"]);
        let (_, view) = discovery::watched_session_names(&dir).unwrap();
        assert!(view.memo().is_none(), "a gated scan records no memo");

        let whole = events(
            &listings,
            Source::folder(dir.clone()).unwrap(),
            &Known::default(),
            None,
        );
        assert_eq!(whole.last().unwrap(), "end");
        let (_, view) = discovery::watched_session_names(&dir).unwrap();
        assert_eq!(view.memo().is_some(), view.is_watched());
        fs::remove_dir_all(&dir).unwrap();
    }
}
