//! Accounting: one session's usage (`getUsage` and friends) and the usage
//! report across sessions (`usageReport`, lib/stats.js).

use napi_derive::napi;

use super::listing::LISTINGS;
use super::session::NativeSession;
use super::*;
use crate::catalog::usage_scan::{self, Event};
use crate::catalog::{usage, usage_report};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The process's accounting: its cache of usage summaries, read from and
/// saved to the listing's cache folder (`set_listing_cache_dir`).
static ACCOUNTS: std::sync::LazyLock<usage_scan::Accounts> =
    std::sync::LazyLock::new(usage_scan::Accounts::default);

/// A JavaScript value `+=` produced: a number or a string.
type JsSumValue = Either<f64, String>;

fn sum_js(sum: &usage::JsSum) -> JsSumValue {
    match sum {
        usage::JsSum::Num(n) => Either::A(*n),
        usage::JsSum::Str(s) => Either::B(lossy(s)),
    }
}

#[napi(object, object_from_js = false)]
pub struct JsBreakdownRow {
    pub key: String,
    /// input, output, cacheRead, cacheWrite, cost.
    pub values: Vec<JsSumValue>,
}

/// pi's two loops over a session's entries (see `usage::Accounting`).
#[napi(object, object_from_js = false)]
pub struct JsAccounting {
    /// The first kept line of a file read by path.
    pub header: Option<String>,
    pub user_messages: f64,
    pub assistant_messages: f64,
    pub tool_calls: f64,
    pub tool_results: f64,
    pub total_messages: f64,
    /// input, output, cacheRead, cacheWrite, total, cost.
    pub totals: Vec<JsSumValue>,
    /// What `getSessionStats` threw, and whether it was a RangeError.
    pub stats_error: Option<String>,
    pub stats_range_error: bool,
    pub breakdown: Vec<JsBreakdownRow>,
    pub breakdown_error: Option<String>,
    pub breakdown_range_error: bool,
}

fn accounting_js(a: usage::Accounting) -> JsAccounting {
    let s = &a.stats;
    let t = &s.totals;
    JsAccounting {
        header: a.header.as_deref().map(lossy),
        user_messages: s.user_messages as f64,
        assistant_messages: s.assistant_messages as f64,
        tool_calls: s.tool_calls as f64,
        tool_results: s.tool_results as f64,
        total_messages: s.total_messages as f64,
        totals: [
            &t.input,
            &t.output,
            &t.cache_read,
            &t.cache_write,
            &t.tokens(),
            &t.cost,
        ]
        .into_iter()
        .map(sum_js)
        .collect(),
        stats_error: a.stats_thrown.as_ref().map(|e| e.message.clone()),
        stats_range_error: a.stats_thrown.as_ref().is_some_and(|e| e.range_error),
        breakdown: a
            .breakdown
            .iter()
            .map(|row| {
                let t = &row.totals;
                JsBreakdownRow {
                    key: lossy(&row.key),
                    values: [&t.input, &t.output, &t.cache_read, &t.cache_write, &t.cost]
                        .into_iter()
                        .map(sum_js)
                        .collect(),
                }
            })
            .collect(),
        breakdown_error: a.breakdown_thrown.as_ref().map(|e| e.message.clone()),
        breakdown_range_error: a.breakdown_thrown.as_ref().is_some_and(|e| e.range_error),
    }
}

/// Accounting of a session file read by path (its first kept line is the
/// header; no entry object is built).
#[napi(catch_unwind)]
pub fn account_session_file(path: String) -> Result<JsAccounting> {
    let accounting = usage::account_file(std::path::Path::new(&path)).map_err(io_to_napi)?;
    Ok(accounting_js(accounting))
}

/// Accounting of entries given as JSON texts, one per line.
#[napi(catch_unwind)]
pub fn account_entry_lines(lines: String) -> JsAccounting {
    let mut accounting = usage::Accounting::default();
    for line in lines.as_bytes().split(|&b| b == b'\n') {
        accounting.feed_entry(line);
    }
    accounting_js(accounting)
}

#[napi]
impl NativeSession {
    /// Accounting of the entries at `positions`; those held only as
    /// JavaScript objects come as JSON texts in `pending` (in order).
    #[napi(catch_unwind)]
    pub fn account(&self, positions: Uint32Array, pending: Vec<String>) -> Result<JsAccounting> {
        let mut accounting = usage::Accounting::default();
        let mut pending = pending.into_iter();
        let mut i = 0;
        let session = self.inner();
        session
            .each_line(&positions, |line| {
                if session.has_line(positions[i]) {
                    accounting.feed_entry(line);
                } else if let Some(text) = pending.next() {
                    accounting.feed_entry(text.as_bytes());
                }
                i += 1;
            })
            .map_err(to_napi)?;
        Ok(accounting_js(accounting))
    }
}

#[napi(object)]
pub struct JsReportOptions {
    pub group_by: String,
    pub since: Option<String>,
    pub until: Option<String>,
    /// An IANA zone name; the system's zone when absent.
    pub timezone: Option<String>,
    /// Only sessions whose cwd is one of these (all when absent).
    pub cwds: Option<Vec<String>>,
}

#[napi(object, object_from_js = false)]
pub struct JsReportRow {
    pub key: String,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total_tokens: f64,
    pub cost: f64,
    pub sessions: u32,
}

#[napi(object, object_from_js = false)]
pub struct JsReport {
    pub rows: Vec<JsReportRow>,
    pub totals: JsReportRow,
}

fn report_row_js(r: usage_report::ReportRow) -> JsReportRow {
    let a = r.amounts;
    JsReportRow {
        key: r.key,
        input: a.input,
        output: a.output,
        cache_read: a.cache_read,
        cache_write: a.cache_write,
        total_tokens: a.tokens(),
        cost: a.cost,
        sessions: r.sessions,
    }
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

/// Progress of an accounting scan (`done` set on the last one).
#[napi(object, object_from_js = false)]
pub struct JsUsageProgress {
    pub loaded: u32,
    pub total: u32,
    pub done: bool,
}

type UsageCallback = ThreadsafeFunction<JsUsageProgress, (), JsUsageProgress, Status, false>;

/// An accounting scan: runs on threads of its own; once it reports `done`,
/// `report()` answers from what it read.
#[napi]
pub struct UsageScan {
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    corpus: std::sync::Arc<std::sync::Mutex<Option<usage_report::Corpus>>>,
}

#[napi]
impl UsageScan {
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The distinct cwds of the sessions read.
    #[napi(catch_unwind)]
    pub fn cwds(&self) -> Vec<String> {
        self.corpus
            .lock()
            .ok()
            .and_then(|c| c.as_ref().map(usage_report::Corpus::cwds))
            .unwrap_or_default()
    }

    #[napi(catch_unwind)]
    pub fn report(&self, options: JsReportOptions) -> Result<JsReport> {
        let group_by = usage_report::GroupBy::parse(&options.group_by)
            .ok_or_else(|| invalid(format!("Unknown groupBy: {}", options.group_by)))?;
        let date = |d: &Option<String>, name: &str| -> Result<Option<jiff::civil::Date>> {
            d.as_deref()
                .map(|text| {
                    usage_report::parse_date(text).ok_or_else(|| {
                        invalid(format!("{name} must be a date as YYYY-MM-DD: {text}"))
                    })
                })
                .transpose()
        };
        let since = date(&options.since, "since")?;
        let until = date(&options.until, "until")?;
        let zone = match options.timezone.as_deref() {
            None => jiff::tz::TimeZone::system(),
            Some(name) => jiff::tz::TimeZone::get(name)
                .map_err(|_| invalid(format!("Unknown time zone: {name}")))?,
        };
        let guard = self
            .corpus
            .lock()
            .map_err(|_| invalid("The usage scan failed".into()))?;
        let corpus = guard
            .as_ref()
            .ok_or_else(|| invalid("The usage scan has not finished".into()))?;
        let report = corpus.report(
            &usage_report::ReportOptions {
                group_by,
                since,
                until,
                zone,
            },
            options.cwds.as_deref(),
        );
        Ok(JsReport {
            rows: report.rows.into_iter().map(report_row_js).collect(),
            totals: report_row_js(report.totals),
        })
    }
}

/// What a fork holds of copies of its parent's entries.
#[napi(object, object_from_js = false)]
pub struct JsInherited {
    pub parent_session: String,
    pub parent_found: bool,
    pub entries: u32,
    pub usage: JsReportRow,
}

/// `None` for a file that is no fork (or that reports leave out).
#[napi(catch_unwind)]
pub fn inherited_usage(path: String) -> Result<Option<JsInherited>> {
    let found = ACCOUNTS
        .inherited(std::path::Path::new(&path), LISTINGS.cache_dir())
        .map_err(io_to_napi)?;
    Ok(found.map(|found| JsInherited {
        parent_session: found.parent,
        parent_found: found.parent_found,
        entries: found.entries as u32,
        usage: report_row_js(usage_report::ReportRow {
            key: String::new(),
            amounts: found.amounts,
            sessions: 0,
        }),
    }))
}

/// Starts reading the `.jsonl` files of `dirs` for a usage report (see
/// `usage_scan::Accounts::scan`): progress if `progress`, then `done`.
#[napi(catch_unwind)]
pub fn scan_usage(dirs: Vec<String>, progress: bool, on_progress: UsageCallback) -> UsageScan {
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let corpus = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (flag, slot) = (cancel.clone(), corpus.clone());
    std::thread::spawn(move || {
        let send = |loaded: usize, total: usize, done: bool| {
            on_progress.call(
                JsUsageProgress {
                    loaded: loaded as u32,
                    total: total as u32,
                    done,
                },
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let dirs: Vec<std::path::PathBuf> = dirs.into_iter().map(Into::into).collect();
            ACCOUNTS.scan(
                &dirs,
                LISTINGS.cache_dir(),
                progress,
                &flag,
                &|event| match event {
                    Event::Progress { loaded, total } => send(loaded, total, false),
                    Event::Done(read) => {
                        if let Ok(mut s) = slot.lock() {
                            *s = Some(read);
                        }
                        send(0, 0, true);
                    }
                },
            );
        }))
        .inspect_err(|_| send(0, 0, true));
    });
    UsageScan { cancel, corpus }
}
