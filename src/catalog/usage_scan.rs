//! A usage report's scan of session folders (`usageReport`, lib/stats.js):
//! the process's accounting cache and its persistent copy, the scan with its
//! progress (at most every `PROGRESS_WAIT`), and what it leaves behind (the
//! cache file saved). Results come out as `Event`s; how they reach
//! JavaScript is the binding's concern.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::catalog::summaries::SummaryCache;
use crate::catalog::usage_report::{self, Corpus};

/// How often, at most, a scan reports progress (the last file always is).
pub const PROGRESS_WAIT: Duration = Duration::from_millis(10);

/// What a usage scan reports, in this order: progress as files finish (from
/// the scan's threads), then what it read.
pub enum Event {
    /// `loaded` of `total` files are read.
    Progress { loaded: usize, total: usize },
    /// The sessions read (those read before a cancel); the cache file is
    /// saved after this.
    Done(Corpus),
}

/// Receives a scan's events, from any of its threads.
pub type OnEvent<'a> = dyn Fn(Event) + Sync + 'a;

/// The process's accounting: its cache of usage summaries (a file of its
/// own in the listing's cache folder), and the folder whose file it read.
pub struct Accounts {
    cache: SummaryCache,
    loaded: Mutex<Option<PathBuf>>,
}

impl Default for Accounts {
    fn default() -> Accounts {
        Accounts {
            cache: SummaryCache::for_accounting(),
            loaded: Mutex::new(None),
        }
    }
}

impl Accounts {
    /// The cache folder `dir`, reading its accounting file the first time
    /// (again after another folder was used).
    fn cache_dir_loaded(&self, dir: Option<PathBuf>) -> Option<PathBuf> {
        let dir = dir?;
        let mut loaded = self.loaded.lock().ok()?;
        if loaded.as_ref() != Some(&dir) {
            self.cache.load_from(&dir);
            *loaded = Some(dir.clone());
        }
        Some(dir)
    }

    /// Reads the `.jsonl` files of `dirs` (see `usage_report::scan_corpus`)
    /// after loading the persistent cache of `cache_dir` (once per folder),
    /// reporting progress if `progress` and then `Event::Done`; afterwards
    /// saves the cache to `cache_dir` if it changed (a failure only costs the
    /// next process a cold scan). Stops early on `cancel`.
    pub fn scan(
        &self,
        dirs: &[PathBuf],
        cache_dir: Option<PathBuf>,
        progress: bool,
        cancel: &AtomicBool,
        on: &OnEvent,
    ) {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let persistent = self.cache_dir_loaded(cache_dir);
        let last = Mutex::new(Instant::now());
        let read = usage_report::scan_corpus(&self.cache, dirs, threads, cancel, &|n, total| {
            if !progress {
                return;
            }
            let due = last.lock().ok().is_some_and(|mut at| {
                let due = n == total || at.elapsed() >= PROGRESS_WAIT;
                if due {
                    *at = Instant::now();
                }
                due
            });
            if due {
                on(Event::Progress { loaded: n, total });
            }
        });
        on(Event::Done(read));
        if let Some(dir) = persistent {
            if self.cache.take_dirty() {
                let _ = self.cache.save_to(&dir);
            }
        }
    }
}

impl Accounts {
    /// What the session file `path` holds of copies of its parent's
    /// entries (`usage_report::inherited`), read through the same caches.
    pub fn inherited(
        &self,
        path: &std::path::Path,
        cache_dir: Option<PathBuf>,
    ) -> Result<Option<usage_report::Inherited>, crate::session::store::IoFailure> {
        let persistent = self.cache_dir_loaded(cache_dir);
        let found = usage_report::inherited(&self.cache, path);
        if let Some(dir) = persistent {
            if self.cache.take_dirty() {
                let _ = self.cache.save_to(&dir);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::usage_report::{GroupBy, ReportOptions};
    use std::fs;
    use std::path::Path;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-accounts-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn session(dir: &Path, name: &str, cost: f64) {
        let header = r#"{"type":"session","id":"s","cwd":"/p"}"#;
        let usage = format!(
            r#"{{"type":"usage","timestamp":"2024-01-01T10:00:00.000Z","provider":"a","model":"m","usage":{{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"cost":{{"total":{cost}}}}}}}"#
        );
        fs::write(dir.join(name), format!("{header}\n{usage}\n")).unwrap();
    }

    /// A scan's events as text, in order ("progress 1 3", "done <cost>").
    fn events(
        accounts: &Accounts,
        dirs: &[PathBuf],
        cache_dir: Option<&Path>,
        progress: bool,
        cancel: bool,
    ) -> Vec<String> {
        let seen = Mutex::new(Vec::new());
        accounts.scan(
            dirs,
            cache_dir.map(Path::to_path_buf),
            progress,
            &AtomicBool::new(cancel),
            &|event| {
                let line = match event {
                    Event::Progress { loaded, total } => format!("progress {loaded} {total}"),
                    Event::Done(corpus) => {
                        let options = ReportOptions {
                            group_by: GroupBy::Day,
                            since: None,
                            until: None,
                            zone: jiff::tz::TimeZone::UTC,
                        };
                        let report = corpus.report(&options, None);
                        format!(
                            "done {} {}",
                            report.totals.sessions, report.totals.amounts.cost
                        )
                    }
                };
                seen.lock().unwrap().push(line);
            },
        );
        seen.into_inner().unwrap()
    }

    #[test]
    fn progress_counts_every_file_and_comes_before_the_result() {
        let dir = temp_dir();
        for (name, cost) in [("a.jsonl", 1.0), ("b.jsonl", 2.0), ("c.jsonl", 4.0)] {
            session(&dir, name, cost);
        }
        let accounts = Accounts::default();
        let seen = events(&accounts, std::slice::from_ref(&dir), None, true, false);
        assert_eq!(seen.last().unwrap(), "done 3 7");
        let progress = &seen[..seen.len() - 1];
        assert!(progress
            .iter()
            .all(|e| e.starts_with("progress ") && e.ends_with(" 3")));
        assert!(progress.iter().any(|e| e == "progress 3 3"), "{seen:?}");

        // Without progress, only the result (from the cache now).
        let quiet = events(&accounts, std::slice::from_ref(&dir), None, false, false);
        assert_eq!(quiet, ["done 3 7"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cancelled_scan_reads_nothing_and_still_answers() {
        let dir = temp_dir();
        session(&dir, "a.jsonl", 1.0);
        let accounts = Accounts::default();
        let seen = events(&accounts, std::slice::from_ref(&dir), None, true, true);
        assert_eq!(seen, ["done 0 0"]);
        assert!(accounts.cache.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cache_file_is_saved_after_a_change_and_loaded_once_per_folder() {
        let (one, two, empty) = (temp_dir(), temp_dir(), temp_dir());
        let (cache, other) = (temp_dir(), temp_dir());
        session(&one, "a.jsonl", 1.0);
        session(&one, "b.jsonl", 2.0);
        session(&two, "c.jsonl", 4.0);
        let writer = Accounts::default();
        let seen = events(
            &writer,
            std::slice::from_ref(&one),
            Some(&cache),
            false,
            false,
        );
        assert_eq!(seen, ["done 2 3"]);
        assert!(
            fs::read_dir(&cache).unwrap().next().is_some(),
            "cache saved"
        );

        // A second process's accounts read the file on their first scan.
        let reader = Accounts::default();
        events(
            &reader,
            std::slice::from_ref(&empty),
            Some(&cache),
            false,
            false,
        );
        assert_eq!(reader.cache.len(), 2);
        // The file grows; the folder's file was read already.
        events(
            &writer,
            std::slice::from_ref(&two),
            Some(&cache),
            false,
            false,
        );
        events(
            &reader,
            std::slice::from_ref(&empty),
            Some(&cache),
            false,
            false,
        );
        assert_eq!(reader.cache.len(), 2);
        // Another folder, then this one again: read again.
        events(
            &reader,
            std::slice::from_ref(&empty),
            Some(&other),
            false,
            false,
        );
        assert!(
            fs::read_dir(&other).unwrap().next().is_none(),
            "nothing changed, nothing saved"
        );
        events(
            &reader,
            std::slice::from_ref(&empty),
            Some(&cache),
            false,
            false,
        );
        assert_eq!(reader.cache.len(), 3);
        for dir in [one, two, empty, cache, other] {
            fs::remove_dir_all(dir).unwrap();
        }
    }
}
