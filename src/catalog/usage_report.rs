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
use crate::catalog::usage::{Amounts, UsageTally, SLOT_MS};
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
    pub tally: &'a UsageTally,
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
        key_rows.resize(file.tally.keys.len(), None);
        let mut file_total = Amounts::default();
        let mut counted = false;
        for bucket in &file.tally.buckets {
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
                            let name = String::from_utf8_lossy(&file.tally.keys[k]).into_owned();
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
#[derive(Default)]
pub struct Corpus {
    files: Vec<(Arc<str>, CachedUsage)>,
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
    Corpus { files }
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
    tokens: Vec<u64>,
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
        let files: Vec<ReportFile> = self
            .files
            .iter()
            .filter_map(|(path, usage)| {
                let tally = usage.usage()?.1;
                cwds.is_none_or(|c| c.contains(&tally.cwd))
                    .then_some(ReportFile {
                        path,
                        cwd: &tally.cwd,
                        tally,
                    })
            })
            .collect();
        let key = ReportKey {
            group_by: options.group_by,
            since: options.since,
            until: options.until,
            zone: options.zone.clone(),
            cwds: cwds.map(<[String]>::to_vec),
            tokens: self.files.iter().map(|f| f.1.token()).collect(),
        };
        if let Ok(last) = LAST_REPORT.lock() {
            if let Some((_, report)) = last.as_ref().filter(|(k, _)| *k == key) {
                return report.clone();
            }
        }
        let made = report(&files, options);
        if let Ok(mut last) = LAST_REPORT.lock() {
            *last = Some((key, made.clone()));
        }
        made
    }
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
            tally: &t,
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
