//! Usage across sessions: the per-file tallies of the scan (`usage::UsageTally`)
//! grouped by day, ISO week or month in a time zone, or by session, model or
//! project.
//!
//! Sums are added in one fixed order, so a report is the same double every
//! time: sessions in byte order of their paths, and within a session its
//! quarter-hour buckets in the order they first appear in the file (each
//! bucket adds its entries in file order).

use foldhash::{HashMap, HashMapExt};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::catalog::summaries::{CachedUsage, SummaryCache};
use crate::catalog::usage::{Amounts, Bucket, UsageTally, SLOT_MS};
use crate::catalog::usage_origin::Lineage;
use crate::session::store::IoFailure;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Day,
    Week,
    Month,
    Session,
    Model,
    Project,
}

impl GroupBy {
    pub fn parse(name: &str) -> Option<GroupBy> {
        Some(match name {
            "day" => GroupBy::Day,
            "week" => GroupBy::Week,
            "month" => GroupBy::Month,
            "session" => GroupBy::Session,
            "model" => GroupBy::Model,
            "project" => GroupBy::Project,
            _ => return None,
        })
    }

    fn is_time(self) -> bool {
        matches!(self, GroupBy::Day | GroupBy::Week | GroupBy::Month)
    }
}

/// One session file of a report.
pub struct ReportFile<'a> {
    pub path: &'a str,
    /// The header's `cwd` ("" when it is not a string, as in `SessionInfo`).
    pub cwd: &'a str,
    /// The model keys the buckets name.
    pub keys: &'a [Vec<u8>],
    /// What the file counts: all its tally's buckets, or a fork's own.
    pub buckets: &'a [Bucket],
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportRow {
    pub key: String,
    pub amounts: Amounts,
    pub sessions: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub rows: Vec<ReportRow>,
    /// All the rows together (`key` is empty).
    pub totals: ReportRow,
}

pub struct ReportOptions {
    pub group_by: GroupBy,
    /// First and last local dates counted (inclusive).
    pub since: Option<Date>,
    pub until: Option<Date>,
    pub zone: TimeZone,
}

/// A `YYYY-MM-DD` date; `None` for anything else.
pub fn parse_date(text: &str) -> Option<Date> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| text[r].parse::<i16>().ok())
            .flatten()
    };
    let (y, m, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    Date::new(y, m as i8, d as i8).ok()
}

/// Row keys of quarter hours in the report's zone, found once per slot.
struct LocalSlots<'z> {
    zone: &'z TimeZone,
    group_by: GroupBy,
    since: Option<Date>,
    until: Option<Date>,
    /// Slot to row key (`None`: outside since/until).
    seen: HashMap<i64, Option<u32>>,
}

impl LocalSlots<'_> {
    fn date(&self, slot: i64) -> Option<Date> {
        let ms = (slot as f64 * SLOT_MS) as i64;
        let time = Timestamp::from_millisecond(ms).ok()?;
        Some(self.zone.to_datetime(time).date())
    }

    fn key(&mut self, slot: i64, rows: &mut RowSet) -> Option<u32> {
        if let Some(&row) = self.seen.get(&slot) {
            return row;
        }
        let row = self.date(slot).and_then(|date| {
            if self.since.is_some_and(|s| date < s) || self.until.is_some_and(|u| date > u) {
                return None;
            }
            let key = match self.group_by {
                GroupBy::Day => {
                    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
                }
                GroupBy::Week => {
                    let week = date.iso_week_date();
                    format!("{:04}-W{:02}", week.year(), week.week())
                }
                _ => format!("{:04}-{:02}", date.year(), date.month()),
            };
            Some(rows.index(key))
        });
        self.seen.insert(slot, row);
        row
    }
}

/// The report's rows by key, in the order they were met.
#[derive(Default)]
struct RowSet {
    index: std::collections::HashMap<String, u32>,
    rows: Vec<ReportRow>,
}

impl RowSet {
    fn index(&mut self, key: String) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.rows.len() as u32;
        self.rows.push(ReportRow {
            key: key.clone(),
            ..ReportRow::default()
        });
        self.index.insert(key, i);
        i
    }
}

pub fn report(files: &[ReportFile], options: &ReportOptions) -> Report {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files[a].path.cmp(files[b].path));
    let mut rows = RowSet::default();
    let mut slots = LocalSlots {
        zone: &options.zone,
        group_by: options.group_by,
        since: options.since,
        until: options.until,
        seen: HashMap::new(),
    };
    let filtered = options.since.is_some() || options.until.is_some();
    let mut totals = ReportRow::default();
    // This file's subtotals by row, in the order met.
    let mut subtotals: Vec<(u32, Amounts)> = Vec::new();
    let mut key_rows: Vec<Option<u32>> = Vec::new();
    for &i in &order {
        let file = &files[i];
        subtotals.clear();
        key_rows.clear();
        key_rows.resize(file.keys.len(), None);
        let mut file_total = Amounts::default();
        let mut counted = false;
        for bucket in file.buckets {
            let time_row = if options.group_by.is_time() || filtered {
                match slots.key(bucket.slot, &mut rows) {
                    Some(row) => Some(row),
                    None => continue,
                }
            } else {
                None
            };
            let row = match options.group_by {
                GroupBy::Day | GroupBy::Week | GroupBy::Month => time_row.unwrap_or(0),
                GroupBy::Session => rows.index(file.path.to_string()),
                GroupBy::Project => rows.index(file.cwd.to_string()),
                GroupBy::Model => {
                    let k = bucket.key as usize;
                    match key_rows[k] {
                        Some(row) => row,
                        None => {
                            let name = String::from_utf8_lossy(&file.keys[k]).into_owned();
                            let row = rows.index(name);
                            key_rows[k] = Some(row);
                            row
                        }
                    }
                }
            };
            counted = true;
            file_total.add(&bucket.amounts);
            match subtotals.iter_mut().find(|(r, _)| *r == row) {
                Some((_, sum)) => sum.add(&bucket.amounts),
                None => subtotals.push((row, bucket.amounts)),
            }
        }
        for (row, sum) in &subtotals {
            let r = &mut rows.rows[*row as usize];
            r.amounts.add(sum);
            r.sessions += 1;
        }
        if counted {
            totals.amounts.add(&file_total);
            totals.sessions += 1;
        }
    }
    let mut out: Vec<ReportRow> = rows
        .rows
        .into_iter()
        .filter(|r| r.sessions > 0 && (r.amounts.cost != 0.0 || r.amounts.tokens() != 0.0))
        .collect();
    if options.group_by.is_time() {
        out.sort_by(|a, b| a.key.cmp(&b.key));
    } else {
        out.sort_by(|a, b| {
            b.amounts
                .cost
                .partial_cmp(&a.amounts.cost)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.key.cmp(&b.key))
        });
    }
    Report { rows: out, totals }
}

/// The session files of a report, each with its accounting summary, in
/// byte order of their paths (the order sums are added in).
/// Session files with their accounting summaries.
type Files = Vec<(Arc<str>, CachedUsage)>;

#[derive(Default)]
pub struct Corpus {
    files: Files,
    /// Parents of forks that are not among `files` (another project's, or
    /// outside every folder read): they only tell where copies came from.
    extras: Files,
    /// For `files` then `extras`: the index of the file's parent there.
    parents: Vec<Option<usize>>,
}

/// The tally of a file the accounting keeps (not one the listing leaves out).
fn tally_of(usage: &CachedUsage) -> Option<&UsageTally> {
    usage.usage().map(|(_, tally)| tally)
}

/// The paths and tallies of `files` then `extras`, as a `Lineage` takes them.
fn paths_and_tallies<'a>(
    files: &'a Files,
    extras: &'a Files,
) -> (Vec<&'a str>, Vec<&'a UsageTally>) {
    static EMPTY: std::sync::LazyLock<UsageTally> = std::sync::LazyLock::new(UsageTally::default);
    files
        .iter()
        .chain(extras)
        .map(|f| (&*f.0, tally_of(&f.1).unwrap_or(&EMPTY)))
        .unzip()
}

/// Finds the file each fork's `parentSession` names: among `files` (sorted
/// by path) by its text, else by its real path, else read now (through
/// `cache`) and added to the extras, whose own parents are then found the
/// same way.
fn find_parents(
    cache: &SummaryCache,
    files: &[(Arc<str>, CachedUsage)],
) -> (Files, Vec<Option<usize>>) {
    let mut extras: Files = Vec::new();
    // Made on the first parent not found by its text: a folder given through
    // a symbolic link, say.
    let mut by_real: Option<std::collections::HashMap<PathBuf, usize>> = None;
    let mut parents: Vec<Option<usize>> = Vec::with_capacity(files.len());
    let mut i = 0;
    while i < files.len() + extras.len() {
        let usage = if i < files.len() {
            &files[i].1
        } else {
            &extras[i - files.len()].1
        };
        let parent = tally_of(usage).and_then(|t| t.parent.clone());
        let found = parent.and_then(|parent| {
            // The sessions are in path order; the extras are a fork's few parents.
            let by_text = files
                .binary_search_by(|f| (*f.0).cmp(parent.as_str()))
                .ok()
                .or_else(|| {
                    let j = extras.iter().position(|e| *e.0 == *parent)?;
                    Some(files.len() + j)
                });
            if by_text.is_some() {
                return by_text;
            }
            let real = std::fs::canonicalize(&parent).ok()?;
            let known = by_real.get_or_insert_with(|| {
                let mut folders: std::collections::HashMap<PathBuf, Option<PathBuf>> =
                    std::collections::HashMap::new();
                let mut map = std::collections::HashMap::new();
                for (j, (text, _)) in files.iter().chain(&extras).enumerate() {
                    let path = std::path::Path::new(&**text);
                    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
                        continue;
                    };
                    let real_dir = folders
                        .entry(dir.to_path_buf())
                        .or_insert_with(|| std::fs::canonicalize(dir).ok());
                    if let Some(real_dir) = real_dir {
                        map.insert(real_dir.join(name), j);
                    }
                }
                map
            });
            if let Some(&j) = known.get(&real) {
                return Some(j);
            }
            let stat = crate::os::stat(&real).ok()?;
            let usage = crate::catalog::summaries::usage_stat(cache, &real, &stat)
                .ok()
                .flatten()
                .filter(|u| u.usage().is_some())?;
            let j = files.len() + extras.len();
            extras.push((Arc::from(parent.as_str()), usage));
            known.insert(real, j);
            Some(j)
        });
        parents.push(found);
        i += 1;
    }
    (extras, parents)
}

/// What identifies a folder's list of names: creating, removing or renaming
/// a file in it changes its mtime and ctime.
#[derive(Clone, Copy, PartialEq)]
struct FolderStamp {
    dev: u64,
    ino: u64,
    mtime: crate::os::Time,
    ctime: crate::os::Time,
}

/// A folder's `.jsonl` files as last read.
struct Listing {
    /// `None` when the folder changed too recently to tell a later change
    /// by its times (they tick coarsely): it is read again next time.
    stamp: Option<FolderStamp>,
    names: Vec<String>,
    paths: Vec<PathBuf>,
    texts: Vec<Arc<str>>,
}

/// A folder changed this recently (seconds) is listed again on each scan.
const RACY_SECONDS: i64 = 2;

/// The folders of earlier scans in this process: a folder whose stamp did not
/// change is not read again.
static LISTINGS: Mutex<Option<foldhash::HashMap<PathBuf, Arc<Listing>>>> = Mutex::new(None);

/// The listing of `dir` (`None` if it cannot be read) and whether it was
/// read now (rather than known from an earlier scan).
fn folder_listing(dir: &std::path::Path) -> (Option<Arc<Listing>>, bool) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let stamp = crate::os::stat(dir).ok().map(|st| FolderStamp {
        dev: st.dev,
        ino: st.ino,
        mtime: st.mtime,
        ctime: st.ctime,
    });
    let known = LISTINGS
        .lock()
        .ok()
        .and_then(|m| m.as_ref()?.get(dir).cloned());
    if let Some(known) = known.filter(|l| l.stamp.is_some() && l.stamp == stamp) {
        return (Some(known), false);
    }
    let Ok(names) = crate::catalog::discovery::session_names_lossy(dir) else {
        return (None, true);
    };
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    let texts = paths
        .iter()
        .map(|p| Arc::from(p.to_string_lossy()))
        .collect();
    let settled = |st: &FolderStamp| st.mtime.sec.max(st.ctime.sec) < now - RACY_SECONDS;
    (
        Some(Arc::new(Listing {
            stamp: stamp.filter(settled),
            names,
            paths,
            texts,
        })),
        true,
    )
}

/// Reads the `.jsonl` files of `dirs` on `threads` threads through `cache`
/// (only what was appended since the cache last saw a file), reporting
/// `progress(done, total)` as files finish. Files the listing leaves out are
/// left out. Cached files of the folders that are no longer there drop out
/// of the cache.
pub fn scan_corpus(
    cache: &SummaryCache,
    dirs: &[PathBuf],
    threads: usize,
    cancel: &AtomicBool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Corpus {
    // Opened before anything is stat'ed: what the watches vouch for.
    let views: Vec<crate::catalog::watch::View> = dirs
        .iter()
        .map(|d| crate::catalog::watch::View::open(d))
        .collect();
    let listings: Vec<(Option<Arc<Listing>>, bool)> =
        dirs.iter().map(|d| folder_listing(d)).collect();
    let read: Vec<bool> = listings.iter().map(|(l, _)| l.is_some()).collect();
    let files: Vec<(u32, u32)> = listings
        .iter()
        .enumerate()
        .flat_map(|(i, (listing, _))| {
            let n = listing.as_ref().map_or(0, |l| l.names.len());
            (0..n as u32).map(move |j| (i as u32, j))
        })
        .collect();
    let listing = |folder: u32| listings[folder as usize].0.as_deref();
    let folders = crate::catalog::discovery::HeldFolders::open(dirs, &read).with_views(views);
    let found: Mutex<Vec<(u32, u32, CachedUsage)>> = Mutex::new(Vec::with_capacity(files.len()));
    let done = AtomicUsize::new(0);
    crate::parallel::for_each_index_with(
        files.len(),
        threads,
        cancel,
        Vec::new,
        |mine: &mut Vec<(u32, u32, CachedUsage)>, i| {
            let (folder, j) = files[i];
            let Some(l) = listing(folder) else { return };
            let usage = folders
                .stat(folder, &l.names[j as usize])
                .ok()
                .and_then(|st| {
                    crate::catalog::summaries::usage_stat(cache, &l.paths[j as usize], &st)
                        .ok()
                        .flatten()
                });
            if let Some(u) = usage.filter(|u| u.usage().is_some()) {
                mine.push((folder, j, u));
            }
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, files.len());
        },
        // One lock per thread, not one per file.
        |mut mine| {
            if let Ok(mut found) = found.lock() {
                found.append(&mut mine);
            }
        },
    );
    if !cancel.load(Ordering::Relaxed) {
        // Only folders read now can have lost files since the last scan.
        let fresh: Vec<&std::path::Path> = dirs
            .iter()
            .zip(&listings)
            .filter(|(_, (l, fresh))| *fresh && l.is_some())
            .map(|(d, _)| d.as_path())
            .collect();
        if !fresh.is_empty() {
            let paths: Vec<PathBuf> = listings
                .iter()
                .filter_map(|(l, _)| l.as_ref())
                .flat_map(|l| l.paths.iter().cloned())
                .collect();
            cache.retain_listed(&fresh, &paths);
        }
        if let Ok(mut memo) = LISTINGS.lock() {
            let memo = memo.get_or_insert_with(Default::default);
            for (dir, (l, fresh)) in dirs.iter().zip(&listings) {
                match l {
                    Some(l) if *fresh => {
                        memo.insert(dir.clone(), l.clone());
                    }
                    Some(_) => {}
                    None => {
                        memo.remove(dir);
                    }
                }
            }
        }
    }
    let mut files: Vec<(Arc<str>, CachedUsage)> = found
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(folder, j, usage)| Some((listing(folder)?.texts[j as usize].clone(), usage)))
        .collect();
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let (extras, parents) = if cancel.load(Ordering::Relaxed) {
        (Vec::new(), vec![None; files.len()])
    } else {
        find_parents(cache, &files)
    };
    Corpus {
        files,
        extras,
        parents,
    }
}

/// What a report was computed from: the same options over the same file
/// versions (tokens, in path order) give the same report.
#[derive(PartialEq)]
struct ReportKey {
    group_by: GroupBy,
    since: Option<Date>,
    until: Option<Date>,
    zone: TimeZone,
    cwds: Option<Vec<String>>,
    /// The tokens of the sessions, then those of the extras (their parents
    /// read only to tell copies), split at `sessions`.
    tokens: Vec<u64>,
    sessions: usize,
}

/// The last report of this process: a report asked again over files that
/// did not change is answered without adding anything up.
static LAST_REPORT: Mutex<Option<(ReportKey, Report)>> = Mutex::new(None);

impl Corpus {
    /// The distinct `cwd`s of the sessions, for a caller's filter.
    pub fn cwds(&self) -> Vec<String> {
        let mut seen: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| Some(f.1.usage()?.1.cwd.clone()))
            .collect();
        seen.sort();
        seen.dedup();
        seen
    }

    /// The report over the sessions whose cwd is in `cwds` (all with `None`).
    pub fn report(&self, options: &ReportOptions, cwds: Option<&[String]>) -> Report {
        let key = ReportKey {
            group_by: options.group_by,
            since: options.since,
            until: options.until,
            zone: options.zone.clone(),
            cwds: cwds.map(<[String]>::to_vec),
            tokens: self
                .files
                .iter()
                .chain(&self.extras)
                .map(|f| f.1.token())
                .collect(),
            sessions: self.files.len(),
        };
        if let Ok(last) = LAST_REPORT.lock() {
            if let Some((_, report)) = last.as_ref().filter(|(k, _)| *k == key) {
                return report.clone();
            }
        }
        let (paths, tallies) = paths_and_tallies(&self.files, &self.extras);
        let mut lineage = Lineage::new(&paths, &tallies, &self.parents);
        let in_scope: Vec<usize> = (0..self.files.len())
            .filter(|&i| cwds.is_none_or(|c| c.contains(&tallies[i].cwd)))
            .collect();
        let own: Vec<Option<Vec<Bucket>>> =
            in_scope.iter().map(|&i| lineage.own_buckets(i)).collect();
        let files: Vec<ReportFile> = in_scope
            .iter()
            .zip(&own)
            .map(|(&i, own)| ReportFile {
                path: paths[i],
                cwd: &tallies[i].cwd,
                keys: &tallies[i].keys,
                buckets: own.as_deref().unwrap_or(&tallies[i].buckets),
            })
            .collect();
        let made = report(&files, options);
        if let Ok(mut last) = LAST_REPORT.lock() {
            *last = Some((key, made.clone()));
        }
        made
    }
}

/// What a fork holds of copies of its parent's entries (see `inherited`).
#[derive(Debug, Clone, PartialEq)]
pub struct Inherited {
    /// The header's `parentSession`.
    pub parent: String,
    /// Whether that file was read (else nothing is known to be a copy).
    pub parent_found: bool,
    pub amounts: Amounts,
    pub entries: usize,
}

/// How much of the usage of the session file `path` is copies of its
/// parent's entries; `None` for a file that is no fork, or that the
/// accounting leaves out; the failure of a file that cannot be read.
pub fn inherited(
    cache: &SummaryCache,
    path: &std::path::Path,
) -> Result<Option<Inherited>, IoFailure> {
    let stat = crate::os::stat(path).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
    let Some(usage) = crate::catalog::summaries::usage_stat(cache, path, &stat)? else {
        return Ok(None);
    };
    let Some(parent) = tally_of(&usage).and_then(|t| t.parent.clone()) else {
        return Ok(None);
    };
    let files = vec![(Arc::from(path.to_string_lossy()), usage)];
    let (extras, parents) = find_parents(cache, &files);
    let (paths, tallies) = paths_and_tallies(&files, &extras);
    let found = Lineage::new(&paths, &tallies, &parents).inherited(0);
    Ok(Some(Inherited {
        parent,
        parent_found: found.is_some(),
        amounts: found.map_or(Amounts::default(), |f| f.0),
        entries: found.map_or(0, |f| f.1),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(entries: &[(&str, &str, f64)]) -> UsageTally {
        let mut t = UsageTally::default();
        for (time, key, cost) in entries {
            let ms = time.parse::<Timestamp>().unwrap().as_millisecond() as f64;
            t.add(
                (ms / SLOT_MS).floor() as i64,
                key.as_bytes(),
                &Amounts {
                    input: 1.0,
                    cost: *cost,
                    ..Amounts::default()
                },
                None,
            );
        }
        t
    }

    #[test]
    fn days_follow_the_zone_across_dst() {
        // New York: 2024-03-10 02:00 EST -> 03:00 EDT.
        let t = tally(&[
            ("2024-03-10T04:59:00Z", "a/m", 1.0), // 23:59 EST on the 9th
            ("2024-03-10T05:00:00Z", "a/m", 2.0), // 00:00 EST on the 10th
            ("2024-03-11T03:59:00Z", "a/m", 4.0), // 23:59 EDT on the 10th
            ("2024-03-11T04:00:00Z", "b/m", 8.0), // 00:00 EDT on the 11th
        ]);
        let files = [ReportFile {
            path: "/x.jsonl",
            cwd: "/p",
            keys: &t.keys,
            buckets: &t.buckets,
        }];
        let zone = TimeZone::get("America/New_York").unwrap();
        let options = |group_by, since, until| ReportOptions {
            group_by,
            since,
            until,
            zone: zone.clone(),
        };
        let r = report(&files, &options(GroupBy::Day, None, None));
        let keys: Vec<(&str, f64)> = r
            .rows
            .iter()
            .map(|r| (r.key.as_str(), r.amounts.cost))
            .collect();
        assert_eq!(
            keys,
            [
                ("2024-03-09", 1.0),
                ("2024-03-10", 6.0),
                ("2024-03-11", 8.0)
            ]
        );
        assert_eq!(r.totals.amounts.cost, 15.0);
        assert_eq!(r.totals.sessions, 1);
        let r = report(
            &files,
            &options(
                GroupBy::Model,
                parse_date("2024-03-10"),
                parse_date("2024-03-10"),
            ),
        );
        assert_eq!(r.rows.len(), 1);
        assert_eq!(
            (r.rows[0].key.as_str(), r.rows[0].amounts.cost),
            ("a/m", 6.0)
        );
        let r = report(&files, &options(GroupBy::Week, None, None));
        let keys: Vec<&str> = r.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["2024-W10", "2024-W11"]);
    }

    #[test]
    fn the_accounting_scan_reads_appends_and_survives_its_cache_file() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("pisn-usage-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = "{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/p\"}\n";
        let usage = |cost: f64, time: &str| {
            format!("{{\"type\":\"usage\",\"timestamp\":\"{time}\",\"provider\":\"a\",\"model\":\"m\",\"usage\":{{\"input\":1,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{{\"total\":{cost}}}}}}}\n")
        };
        let file = dir.join("a.jsonl");
        std::fs::write(
            &file,
            format!("{header}{}", usage(0.5, "2024-01-01T10:00:00.000Z")),
        )
        .unwrap();
        // Left out, as the listing leaves it out: a null message.
        std::fs::write(
            dir.join("b.jsonl"),
            format!(
                "{header}{{\"type\":\"message\",\"message\":null}}\n{}",
                usage(9.0, "2024-01-01T10:00:00.000Z")
            ),
        )
        .unwrap();
        let options = ReportOptions {
            group_by: GroupBy::Day,
            since: None,
            until: None,
            zone: TimeZone::UTC,
        };
        let cache = SummaryCache::for_accounting();
        let cancel = AtomicBool::new(false);
        let scan = |cache: &SummaryCache| {
            scan_corpus(cache, std::slice::from_ref(&dir), 2, &cancel, &|_, _| {})
                .report(&options, None)
        };
        let first = scan(&cache);
        assert_eq!(first.rows.len(), 1);
        assert_eq!((first.totals.amounts.cost, first.totals.sessions), (0.5, 1));
        // An append, and a cut last line that counts once it is whole.
        let line = usage(0.25, "2024-01-02T10:00:00.000Z");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        write!(
            f,
            "{}{}",
            usage(1.0, "2024-01-01T11:00:00.000Z"),
            &line[..30]
        )
        .unwrap();
        let grown = scan(&cache);
        assert_eq!(grown.totals.amounts.cost, 1.5);
        write!(f, "{}", &line[30..]).unwrap();
        let whole = scan(&cache);
        assert_eq!(
            whole
                .rows
                .iter()
                .map(|r| r.key.as_str())
                .collect::<Vec<_>>(),
            ["2024-01-01", "2024-01-02"]
        );
        assert_eq!(whole, scan(&SummaryCache::for_accounting()));
        // Through the cache file into a fresh cache, then an append read on from there.
        let store = dir.join("store");
        cache.save_to(&store).unwrap();
        let loaded = SummaryCache::for_accounting();
        assert_eq!(loaded.load_from(&store), 2);
        assert_eq!(SummaryCache::default().load_from(&store), 0);
        assert_eq!(scan(&loaded), whole);
        write!(f, "{}", usage(2.0, "2024-01-03T00:00:00.000Z")).unwrap();
        assert_eq!(scan(&loaded).totals.amounts.cost, 3.75);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fork_counts_only_its_own_calls_wherever_its_parent_is() {
        let root = std::env::temp_dir().join(format!("pisn-forks-{}", uuid::Uuid::new_v4()));
        let (here, there) = (root.join("here"), root.join("there"));
        for dir in [&here, &there] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let header = |cwd: &str, parent: Option<&std::path::Path>| {
            let parent = parent.map_or(String::new(), |p| {
                format!(",\"parentSession\":{:?}", p.to_string_lossy())
            });
            format!("{{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"{cwd}\"{parent}}}\n")
        };
        let call = |id: &str, minute: u32, cost: f64| {
            format!("{{\"type\":\"usage\",\"id\":\"{id}\",\"timestamp\":\"2024-01-01T10:{minute:02}:00.000Z\",\"provider\":\"a\",\"model\":\"m\",\"usage\":{{\"input\":1,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{{\"total\":{cost}}}}}}}\n")
        };
        // The parent is in a folder the report does not read; the fork copies its
        // two calls, one of them with other usage (another call), and adds one.
        let parent = there.join("p.jsonl");
        std::fs::write(
            &parent,
            format!(
                "{}{}{}",
                header("/t", None),
                call("aa", 1, 1.0),
                call("bb", 2, 2.0)
            ),
        )
        .unwrap();
        let fork = here.join("f.jsonl");
        std::fs::write(
            &fork,
            format!(
                "{}{}{}{}",
                header("/h", Some(&parent)),
                call("aa", 1, 1.0),
                call("bb", 2, 2.5),
                call("cc", 3, 4.0)
            ),
        )
        .unwrap();
        // A fork of the fork, naming it through a link to its folder.
        let link = root.join("link");
        crate::os::symlink(&here, &link).unwrap();
        std::fs::write(
            here.join("g.jsonl"),
            format!(
                "{}{}{}{}",
                header("/h", Some(&link.join("f.jsonl"))),
                call("aa", 1, 1.0),
                call("cc", 3, 4.0),
                call("dd", 4, 8.0)
            ),
        )
        .unwrap();
        let options = ReportOptions {
            group_by: GroupBy::Session,
            since: None,
            until: None,
            zone: TimeZone::UTC,
        };
        let cache = SummaryCache::for_accounting();
        let cancel = AtomicBool::new(false);
        let scan = |dirs: &[PathBuf]| {
            scan_corpus(&cache, dirs, 2, &cancel, &|_, _| {}).report(&options, None)
        };
        let costs = |r: &Report| -> Vec<(String, f64, u32)> {
            r.rows
                .iter()
                .map(|r| {
                    let name = std::path::Path::new(&r.key).file_name().unwrap();
                    (
                        name.to_string_lossy().into_owned(),
                        r.amounts.cost,
                        r.sessions,
                    )
                })
                .collect()
        };
        let only_here = scan(std::slice::from_ref(&here));
        assert_eq!(
            costs(&only_here),
            [("g.jsonl".into(), 8.0, 1), ("f.jsonl".into(), 6.5, 1)]
        );
        assert_eq!(only_here.totals.sessions, 2);
        let both = scan(&[here.clone(), there.clone()]);
        assert_eq!(
            both.totals.amounts.cost,
            1.0 + 2.0 + 2.5 + 4.0 + 8.0,
            "{:?}",
            costs(&both)
        );
        assert_eq!(both.totals.sessions, 3);
        let inherited = inherited(&cache, &here.join("g.jsonl")).unwrap().unwrap();
        assert_eq!((inherited.entries, inherited.amounts.cost), (2, 5.0));
        // The parent gone: its copies are the fork's.
        std::fs::remove_file(&parent).unwrap();
        let orphan = scan(std::slice::from_ref(&here));
        assert_eq!(orphan.totals.amounts.cost, 1.0 + 2.5 + 4.0 + 8.0);
        assert!(!inherited_found(&cache, &fork));
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn inherited_found(cache: &SummaryCache, path: &std::path::Path) -> bool {
        inherited(cache, path)
            .unwrap()
            .is_some_and(|i| i.parent_found)
    }

    #[test]
    fn dates_are_strict() {
        assert!(parse_date("2024-02-29").is_some());
        for bad in [
            "2023-02-29",
            "2024-2-01",
            "2024-13-01",
            "20240101",
            "2024-01-01T",
        ] {
            assert!(parse_date(bad).is_none(), "{bad}");
        }
    }
}
