//! Doctor: what is wrong with one session file, line by line, and the repairs
//! that are safe. A repair never drops a line that parses as an entry; it
//! recovers entries glued after a torn line, drops torn lines and NUL padding,
//! and rebuilds a lost header, so that pi opens the file again.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::format::entry::{read_line, Key, Kind, LineRead};
use crate::format::json::{self, Cursor};
use crate::format::json_text;
use crate::session::store::{self, IoFailure};
use crate::session::{read_header, HeaderScan, SessionError};

/// V8's longest string (`buffer.constants.MAX_STRING_LENGTH` on Node 20 and 22):
/// the reference keeps an unfinished line in one string and throws `RangeError:
/// Invalid string length` when a line does not fit.
pub const MAX_JS_STRING_LENGTH: u64 = (1 << 29) - 24;
/// The reference's read buffer: a line plus one more chunk must fit in a string.
const REFERENCE_READ_CHUNK: u64 = 1 << 20;
/// Findings of one kind listed one by one before a summary takes over.
const MAX_FINDINGS_PER_PROBLEM: usize = 100;
/// How much of a huge broken line is searched for an entry glued at its end.
const GLUED_TAIL_WINDOW: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Problem {
    TornLastLine,
    TornLine,
    GluedEntry,
    NulPadding,
    InvalidUtf8,
    NotJson,
    NotObject,
    MissingHeader,
    HeaderNotFirst,
    DuplicateId,
    ParentCycle,
    Orphan,
    Crlf,
    TooLarge,
}

impl Problem {
    pub fn name(self) -> &'static str {
        match self {
            Problem::TornLastLine => "torn-last-line",
            Problem::TornLine => "torn-line",
            Problem::GluedEntry => "glued-entry",
            Problem::NulPadding => "nul-padding",
            Problem::InvalidUtf8 => "invalid-utf8",
            Problem::NotJson => "not-json",
            Problem::NotObject => "not-object",
            Problem::MissingHeader => "missing-header",
            Problem::HeaderNotFirst => "header-not-first",
            Problem::DuplicateId => "duplicate-id",
            Problem::ParentCycle => "parent-cycle",
            Problem::Orphan => "orphan",
            Problem::Crlf => "crlf",
            Problem::TooLarge => "too-large",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub problem: Problem,
    /// 1-based line number; 0 for the file as a whole.
    pub line: u64,
    pub message: String,
    /// What `repair` does about it, or `None` when it is left as it is.
    pub repair: Option<String>,
}

/// One piece of the repaired file: a span of the original, or new bytes.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Span { offset: u64, len: u64 },
    Bytes(Vec<u8>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub size: u64,
    pub lines: u64,
    /// Lines that parse as entries (the header included), as the reference reads them.
    pub entries: u64,
    /// Whether the reference opens the file as it is.
    pub opens_in_reference: bool,
    pub findings: Vec<Finding>,
    /// The repaired file, when any finding has a repair.
    plan: Option<Vec<Piece>>,
    /// (size, mtime ns, inode) when read: a repair checks the file is unchanged.
    stamp: (u64, i128, u64),
}

impl Report {
    pub fn has_repairs(&self) -> bool {
        self.plan.is_some()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RepairOutcome {
    pub report: Report,
    pub applied: bool,
    pub backup: Option<PathBuf>,
    /// The file checked again after the repair.
    pub after: Option<Report>,
}

/// What a line holds, as far as a repair is concerned.
#[derive(Debug, Clone, PartialEq)]
enum LineKind {
    /// Kept as it is (blank, an entry, JSON that is no object, text that is no JSON).
    Keep,
    /// An entry; with its index fields.
    Entry(EntryFacts),
    /// Entries recovered from a broken line: their spans (absolute offsets).
    Recovered(Vec<(u64, u64, EntryFacts)>),
    /// Dropped: a torn line or NUL padding.
    Drop,
}

#[derive(Debug, Clone, PartialEq)]
struct EntryFacts {
    is_header: bool,
    id: Option<Key>,
    parent: Option<Key>,
    has_string_id: bool,
    /// Shaped like an entry pi writes (a string id, and a known type or a
    /// timestamp), not like a content block inside one (`{"type":"text",...}`).
    pi_shaped: bool,
}

struct LineFacts {
    number: u64,
    offset: u64,
    /// Bytes of the line without its `\n`, with a trailing `\r` cut when the line parses.
    len: u64,
    kind: LineKind,
}

struct Collector {
    findings: Vec<Finding>,
    counts: HashMap<Problem, usize>,
}

impl Collector {
    fn push(&mut self, problem: Problem, line: u64, message: String, repair: Option<&str>) {
        let count = self.counts.entry(problem).or_insert(0);
        *count += 1;
        if *count <= MAX_FINDINGS_PER_PROBLEM {
            self.findings.push(Finding {
                problem,
                line,
                message,
                repair: repair.map(str::to_string),
            });
        }
    }

    /// One summary finding per problem that had more than the listed ones.
    fn finish(mut self) -> Vec<Finding> {
        let mut extra: Vec<(Problem, usize)> = self
            .counts
            .iter()
            .filter(|(_, &n)| n > MAX_FINDINGS_PER_PROBLEM)
            .map(|(&p, &n)| (p, n - MAX_FINDINGS_PER_PROBLEM))
            .collect();
        extra.sort_by_key(|&(p, _)| p.name());
        for (problem, more) in extra {
            let repair = self
                .findings
                .iter()
                .find(|f| f.problem == problem)
                .and_then(|f| f.repair.clone());
            self.findings.push(Finding {
                problem,
                line: 0,
                message: format!("{more} more lines like the ones above"),
                repair,
            });
        }
        // File-wide findings first, then by line.
        self.findings.sort_by_key(|f| f.line);
        self.findings
    }
}

fn entry_facts(line: &[u8]) -> Option<EntryFacts> {
    match read_line(line) {
        LineRead::Entry(meta) => Some(EntryFacts {
            is_header: meta.kind == Kind::Session && meta.id_is_string,
            id: meta.id_is_string.then(|| meta.id.clone()),
            parent: (meta.parent_truthy).then(|| meta.parent.clone()),
            has_string_id: meta.id_is_string,
            pi_shaped: meta.id_is_string && (meta.kind != Kind::Other || meta.time.is_some()),
        }),
        LineRead::Skipped => None,
    }
}

/// Whether a line is one JSON value (any value, falsy ones included).
fn is_json(line: &[u8]) -> bool {
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    if cur.skip_value().is_err() {
        return false;
    }
    cur.skip_ws();
    cur.i == line.len()
}

fn is_object_json(line: &[u8]) -> bool {
    line.trim_ascii_start().first() == Some(&b'{') && is_json(line)
}

/// Whether the line is the start of a JSON text that stops early (a cut write).
fn is_cut_json(line: &[u8]) -> bool {
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    // pi writes objects; a cut one fails only near its end.
    cur.peek() == Some(b'{') && cur.skip_value().is_err() && cur.i + 16 >= line.len()
}

/// `line.trim()` is empty in JavaScript: ASCII blanks, NBSP, BOM and the other
/// Unicode spaces (the ones pi's files could hold are these).
fn is_blank(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    text.chars().all(|c| c.is_whitespace() || c == '\u{feff}')
}

/// Entries glued one after another from `from`: each a complete JSON object that
/// reads as an entry (as pi writes them when `only_pi_shaped`), NUL bytes or
/// blanks between them allowed.
fn entries_from(
    core: &[u8],
    from: usize,
    only_pi_shaped: bool,
) -> Option<Vec<(usize, usize, EntryFacts)>> {
    let mut out = Vec::new();
    let mut cur = Cursor::new(core);
    cur.i = from;
    loop {
        while cur.i < core.len() && matches!(core[cur.i], 0 | b' ' | b'\t' | b'\r') {
            cur.i += 1;
        }
        if cur.i == core.len() {
            return (!out.is_empty()).then_some(out);
        }
        if core[cur.i] != b'{' {
            return None;
        }
        let start = cur.i;
        cur.skip_value().ok()?;
        let facts = entry_facts(&core[start..cur.i]).filter(|f| f.pi_shaped || !only_pi_shaped)?;
        out.push((start, cur.i, facts));
    }
}

/// Entries at the end of a broken line: the earliest place from which the
/// rest of the line is whole entries, at the start of a pi entry (`{"type":`).
/// Inside a torn line only entries shaped as pi writes them count: a cut right
/// after a content block (`{"type":"text",...}`) must not turn it into an entry.
fn glued_entries(core: &[u8], search_from: usize) -> Option<Vec<(usize, usize, EntryFacts)>> {
    if search_from == 0 && core.first() == Some(&b'{') {
        if let Some(found) = entries_from(core, 0, false) {
            return Some(found);
        }
    }
    memchr::memmem::find_iter(&core[search_from..], b"{\"type\":")
        .map(|p| p + search_from)
        .filter(|&p| p > 0)
        .find_map(|p| entries_from(core, p, true))
}

/// UTF-16 code units the reference's decoder makes of these bytes (an estimate
/// for invalid UTF-8, which becomes one replacement character per bad sequence).
fn utf16_units(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0xBF => 0,
            0xF0..=0xFF => 2,
            _ => 1,
        })
        .sum()
}

struct Analyzer<'a> {
    file: &'a File,
    size: u64,
    out: Collector,
    lines: Vec<LineFacts>,
    too_large: bool,
    reference_first_entry: Option<bool>,
    reference_entries: u64,
}

impl Analyzer<'_> {
    /// Reports a line too long for the reference; true when it is.
    fn too_large_for_reference(&mut self, number: u64, offset: u64, len: u64, units: u64) -> bool {
        // The reference adds the next 1 MiB read to the unfinished line before splitting it.
        let chunk_end = ((offset + len) / REFERENCE_READ_CHUNK + 1) * REFERENCE_READ_CHUNK;
        let after = chunk_end.min(self.size).saturating_sub(offset + len);
        if units + after > MAX_JS_STRING_LENGTH {
            self.too_large = true;
            self.out.push(
                Problem::TooLarge,
                number,
                format!(
                    "line of {len} bytes is longer than the longest string V8 can hold ({MAX_JS_STRING_LENGTH} characters): pi fails with RangeError: Invalid string length"
                ),
                None,
            );
            return true;
        }
        false
    }

    fn saw_reference_entry(&mut self, facts: &EntryFacts) {
        self.reference_entries += 1;
        if self.reference_first_entry.is_none() {
            self.reference_first_entry = Some(facts.is_header);
        }
    }

    /// A line held in memory (`line` without its `\n`).
    fn line(&mut self, number: u64, offset: u64, line: &[u8], last: bool) {
        if line.len() as u64 > MAX_JS_STRING_LENGTH - 2 * REFERENCE_READ_CHUNK {
            self.too_large_for_reference(number, offset, line.len() as u64, utf16_units(line));
        }
        let crlf = line.last() == Some(&b'\r');
        let body = if crlf { &line[..line.len() - 1] } else { line };
        if std::str::from_utf8(line).is_err() {
            self.out.push(
                Problem::InvalidUtf8,
                number,
                "invalid UTF-8: pi reads replacement characters (U+FFFD) in its place".into(),
                None,
            );
        }
        if is_blank(line) {
            self.keep(number, offset, line.len() as u64, LineKind::Keep);
            return;
        }
        if is_json(body) {
            if crlf {
                self.out.push(
                    Problem::Crlf,
                    number,
                    "line ends with CRLF (\\r\\n)".into(),
                    Some("end it with \\n alone"),
                );
            }
            match entry_facts(body) {
                Some(facts) => {
                    self.saw_reference_entry(&facts);
                    if !is_object_json(body) {
                        self.out.push(
                            Problem::NotObject,
                            number,
                            "JSON that is not an object: pi takes it for an entry without a type"
                                .into(),
                            None,
                        );
                        self.keep(number, offset, body.len() as u64, LineKind::Keep);
                    } else {
                        self.keep(number, offset, body.len() as u64, LineKind::Entry(facts));
                    }
                }
                None => {
                    self.out.push(
                        Problem::NotObject,
                        number,
                        "JSON that is not an object (a falsy value): pi skips it".into(),
                        None,
                    );
                    self.keep(number, offset, body.len() as u64, LineKind::Keep);
                }
            }
            return;
        }
        self.broken(number, offset, body, 0, last);
    }

    /// A line that does not parse; `body` starts at `offset` (it may be only
    /// the tail of a huge line, whose first `skipped` bytes were not read).
    fn broken(&mut self, number: u64, offset: u64, body: &[u8], skipped: u64, last: bool) {
        let lead = if skipped == 0 {
            body.iter().take_while(|&&b| b == 0).count()
        } else {
            0
        };
        let trail = body[lead..].iter().rev().take_while(|&&b| b == 0).count();
        let core = &body[lead..body.len() - trail];
        let whole = skipped + body.len() as u64;
        let nuls = lead + trail;
        if core.is_empty() {
            self.out.push(
                Problem::NulPadding,
                number,
                format!("{whole} NUL bytes (a zero-filled tail or padding after a crash)"),
                Some("drop the NUL bytes"),
            );
            self.keep(number, offset, 0, LineKind::Drop);
            return;
        }
        let core_offset = offset + lead as u64;
        let search_from = if skipped == 0 { 0 } else { 1 };
        if let Some(found) = glued_entries(core, search_from) {
            let first = found[0].0;
            let spans: Vec<(u64, u64, EntryFacts)> = found
                .into_iter()
                .map(|(s, e, f)| (core_offset + s as u64, (e - s) as u64, f))
                .collect();
            let count = spans.len();
            let cut = skipped + (lead + first) as u64;
            if cut == 0 && count == 1 {
                // Whole entry; only the NUL bytes after it are wrong (below).
            } else if cut == 0 {
                self.out.push(
                    Problem::GluedEntry,
                    number,
                    format!("{count} entries on one line (a newline is missing between them)"),
                    Some("put each entry on its own line"),
                );
            } else if core[..first].iter().all(|&b| b == 0) {
                self.out.push(
                    Problem::NulPadding,
                    number,
                    format!("{cut} NUL bytes before a complete entry: pi skips the whole line"),
                    Some("drop the NUL bytes and keep the entry"),
                );
            } else {
                self.out.push(
                    Problem::GluedEntry,
                    number,
                    format!(
                        "torn line ({cut} bytes) with {count} complete {} glued after it: pi skips the whole line",
                        if count == 1 { "entry" } else { "entries" }
                    ),
                    Some("keep the glued entry, drop the torn bytes before it"),
                );
            }
            if trail > 0 {
                self.out.push(
                    Problem::NulPadding,
                    number,
                    format!("{trail} NUL bytes after the line's entry"),
                    Some("drop the NUL bytes"),
                );
            }
            self.keep(number, offset, whole, LineKind::Recovered(spans));
            return;
        }
        if skipped == 0 && is_cut_json(core) {
            let (problem, what) = if last {
                (Problem::TornLastLine, "torn last line")
            } else {
                (Problem::TornLine, "torn line")
            };
            let nul_note = if nuls > 0 {
                format!(", then {nuls} NUL bytes")
            } else {
                String::new()
            };
            self.out.push(
                problem,
                number,
                format!(
                    "{what}: {} bytes of an entry that was never finished{nul_note}",
                    core.len()
                ),
                Some("drop it (pi skips it; nothing in it can be recovered)"),
            );
            self.keep(number, offset, 0, LineKind::Drop);
            return;
        }
        if nuls > 0 || core.contains(&0) {
            self.out.push(
                Problem::NulPadding,
                number,
                format!("{whole} bytes of NUL bytes and text that is not JSON"),
                Some("drop it (pi skips it)"),
            );
            self.keep(number, offset, 0, LineKind::Drop);
            return;
        }
        self.out.push(
            Problem::NotJson,
            number,
            "not JSON: pi skips this line".into(),
            None,
        );
        self.keep(number, offset, body.len() as u64, LineKind::Keep);
    }

    /// A line too long to hold that cannot be JSON (the line reader skipped it):
    /// read in chunks to see whether it is all NUL bytes, then its tail for glued entries.
    fn huge_line(
        &mut self,
        number: u64,
        offset: u64,
        len: u64,
        last: bool,
    ) -> Result<(), IoFailure> {
        let mut units = 0u64;
        let mut all_nul = true;
        let mut at = offset;
        let mut buf = Vec::new();
        while at < offset + len {
            let n = (offset + len - at).min(8 << 20) as usize;
            store::read_at_into(self.file, at, n, &mut buf)?;
            units += utf16_units(&buf);
            all_nul &= buf.iter().all(|&b| b == 0);
            at += n as u64;
        }
        let too_large = self.too_large_for_reference(number, offset, len, units);
        if all_nul {
            self.out.push(
                Problem::NulPadding,
                number,
                format!("{len} NUL bytes (a zero-filled tail or padding after a crash)"),
                Some("drop the NUL bytes"),
            );
            self.keep(number, offset, 0, LineKind::Drop);
            return Ok(());
        }
        let window = len.min(GLUED_TAIL_WINDOW);
        let tail = store::read_at(self.file, offset + len - window, window as usize)?;
        let tail = match tail.last() {
            Some(b'\r') => &tail[..tail.len() - 1],
            _ => &tail[..],
        };
        self.broken(number, offset + len - window, tail, len - window, last);
        // `broken` saw the tail only: the line starts earlier.
        if let Some(l) = self.lines.last_mut() {
            l.offset = offset;
            if l.kind == LineKind::Keep {
                l.len = len;
                if too_large {
                    // Text that is no entry and keeps pi from opening the file.
                    l.kind = LineKind::Drop;
                    let this_line =
                        |f: &&mut Finding| f.line == number && f.problem == Problem::NotJson;
                    if let Some(f) = self.out.findings.last_mut().filter(this_line) {
                        f.repair =
                            Some("drop it (it is no entry and pi cannot read past it)".into());
                    }
                }
            }
        }
        Ok(())
    }

    fn keep(&mut self, number: u64, offset: u64, len: u64, kind: LineKind) {
        self.lines.push(LineFacts {
            number,
            offset,
            len,
            kind,
        });
    }
}

fn stamp_of(meta: &fs::Metadata) -> (u64, i128, u64) {
    let st = crate::os::Stat::from_metadata(meta);
    (st.size, st.mtime.as_ns(), st.ino)
}

/// `<timestamp>_<id>.jsonl` as pi names files: the ISO timestamp and the id.
pub fn parse_file_name(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".jsonl")?;
    let (time, id) = stem.split_once('_')?;
    let b = time.as_bytes();
    let digits = [0..4, 5..7, 8..10, 11..13, 14..16, 17..19, 20..23];
    let shape = b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b'-'
        && b[16] == b'-'
        && b[19] == b'-'
        && b[23] == b'Z'
        && digits
            .iter()
            .all(|r| b[r.clone()].iter().all(u8::is_ascii_digit));
    if !shape || id.is_empty() {
        return None;
    }
    let iso = format!(
        "{}T{}:{}:{}.{}Z",
        &time[..10],
        &time[11..13],
        &time[14..16],
        &time[17..19],
        &time[20..23]
    );
    Some((iso, id.to_string()))
}

/// The cwd of a session folder: the one most of its other sessions name, else
/// the folder name decoded (`--home-me-project--` is `/home/me/project`; a dash
/// in a folder's name cannot be told from a separator).
fn folder_cwd(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    let mut counts: HashMap<String, usize> = HashMap::new();
    if let Ok(read) = fs::read_dir(dir) {
        for item in read.flatten() {
            let other = item.path();
            if other == path || other.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            if let Ok(HeaderScan::Found(line)) = read_header(&other) {
                if let Some(cwd) = json::parse(&line).ok().and_then(|v| {
                    v.get("cwd")
                        .and_then(|c| c.as_str().map(|s| s.into_owned()))
                }) {
                    *counts.entry(cwd).or_insert(0) += 1;
                }
            }
        }
    }
    if let Some((cwd, _)) = counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    {
        return Some(cwd);
    }
    let name = dir.file_name()?.to_str()?;
    let inner = name.strip_prefix("--")?.strip_suffix("--")?;
    Some(format!("/{}", inner.replace('-', "/")))
}

fn header_line(id: &str, timestamp: &str, cwd: &str, version: u32) -> Vec<u8> {
    let mut out = b"{\"type\":\"session\",\"version\":".to_vec();
    out.extend_from_slice(version.to_string().as_bytes());
    out.extend_from_slice(b",\"id\":");
    json_text::write_string(&mut out, id.as_bytes());
    out.extend_from_slice(b",\"timestamp\":");
    json_text::write_string(&mut out, timestamp.as_bytes());
    out.extend_from_slice(b",\"cwd\":");
    json_text::write_string(&mut out, cwd.as_bytes());
    out.push(b'}');
    out
}

/// Reads `path` and reports what is wrong with it. Never writes.
pub fn check(path: &Path) -> Result<Report, SessionError> {
    let file = store::open_read(path)?;
    let meta = file
        .metadata()
        .map_err(|e| IoFailure::new(&e, "fstat", Some(path)))?;
    if meta.is_dir() {
        return Err(SessionError::Io(IoFailure {
            errno: 21,
            syscall: "read",
            path: Some(path.to_string_lossy().into_owned()),
        }));
    }
    let stamp = stamp_of(&meta);
    let size = meta.len();
    let mut analyzer = Analyzer {
        file: &file,
        size,
        out: Collector {
            findings: Vec::new(),
            counts: HashMap::new(),
        },
        lines: Vec::new(),
        too_large: false,
        reference_first_entry: None,
        reference_entries: 0,
    };
    // Lines are analyzed one behind, so the last one is known as the last.
    let mut number = 0u64;
    let mut expected = 0u64;
    let mut pending: Option<(u64, u64, Vec<u8>)> = None;
    let mut failed: Option<IoFailure> = None;
    let reader = file
        .try_clone()
        .map_err(|e| IoFailure::new(&e, "open", Some(path)));
    let mut reader = reader?;
    let (len, unterminated) = store::for_each_line(&mut reader, size, |offset, line| {
        if failed.is_some() {
            return;
        }
        if let Some((n, off, bytes)) = pending.take() {
            analyzer.line(n, off, &bytes, false);
        }
        if offset > expected {
            // The line reader skipped a line too long to hold that cannot be JSON.
            number += 1;
            if let Err(e) = analyzer.huge_line(number, expected, offset - expected - 1, false) {
                failed = Some(e);
            }
        }
        number += 1;
        expected = offset + line.len() as u64 + 1;
        pending = Some((number, offset, line.to_vec()));
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    // The last line was one the line reader skipped.
    let skipped_tail = len > expected;
    if let Some((n, off, bytes)) = pending.take() {
        let last = !skipped_tail;
        analyzer.line(n, off, &bytes, last && unterminated);
    }
    if skipped_tail {
        number += 1;
        let tail_len = if unterminated {
            len - expected
        } else {
            len - expected - 1
        };
        analyzer.huge_line(number, expected, tail_len, unterminated)?;
    }
    let Analyzer {
        out: mut collector,
        lines,
        too_large,
        reference_first_entry,
        reference_entries,
        ..
    } = analyzer;
    let opens_in_reference = !too_large && (size == 0 || reference_first_entry == Some(true));

    // The entries as they stand after a repair, in order, with their line numbers.
    let mut entries: Vec<(u64, &EntryFacts)> = Vec::new();
    for l in &lines {
        match &l.kind {
            LineKind::Entry(f) => entries.push((l.number, f)),
            LineKind::Recovered(spans) => {
                entries.extend(spans.iter().map(|(_, _, f)| (l.number, f)))
            }
            _ => {}
        }
    }
    let mut header_plan: Option<HeaderPlan> = None;
    match entries.iter().position(|(_, f)| f.is_header) {
        Some(0) => {}
        Some(i) => {
            let line = entries[i].0;
            collector.push(
                Problem::HeaderNotFirst,
                line,
                format!(
                    "the session header is on line {line}, after {i} {}: pi refuses the file",
                    if i == 1 { "entry" } else { "entries" }
                ),
                Some("move the header to the top"),
            );
            header_plan = Some(HeaderPlan::Move(line));
        }
        None if !entries.is_empty() => {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let rebuilt = parse_file_name(name).and_then(|(timestamp, id)| {
                let cwd = folder_cwd(path)?;
                let version = if entries.iter().any(|(_, f)| f.has_string_id) {
                    3
                } else {
                    1
                };
                Some((header_line(&id, &timestamp, &cwd, version), cwd))
            });
            match rebuilt {
                Some((line, cwd)) => {
                    collector.push(
                        Problem::MissingHeader,
                        0,
                        "no session header: pi refuses the file".into(),
                        Some(&format!(
                            "write a header from the file name (id, timestamp) with cwd {cwd}"
                        )),
                    );
                    header_plan = Some(HeaderPlan::Insert(line));
                }
                None => collector.push(
                    Problem::MissingHeader,
                    0,
                    "no session header: pi refuses the file (its name is not <timestamp>_<id>.jsonl or its cwd is unknown, so none can be rebuilt)".into(),
                    None,
                ),
            }
        }
        None => {}
    }
    tree_findings(&entries, &mut collector);

    let repairs = collector.findings.iter().any(|f| f.repair.is_some());
    let plan = repairs.then(|| build_plan(&lines, header_plan.as_ref()));
    Ok(Report {
        size,
        lines: number,
        entries: reference_entries,
        opens_in_reference,
        findings: collector.finish(),
        plan,
        stamp,
    })
}

enum HeaderPlan {
    Insert(Vec<u8>),
    /// Move the header found on this line to the top.
    Move(u64),
}

fn tree_findings(entries: &[(u64, &EntryFacts)], out: &mut Collector) {
    let mut first_line: HashMap<&str, u64> = HashMap::new();
    // The reference's byId keeps the last entry of an id.
    let mut parent_of: HashMap<&str, (Option<&str>, u64)> = HashMap::new();
    for &(line, f) in entries.iter().filter(|(_, f)| !f.is_header) {
        let Some(id) = f.id.as_deref() else { continue };
        match first_line.get(id) {
            Some(&first) => out.push(
                Problem::DuplicateId,
                line,
                format!("id {} was already used on line {first}", quoted(id)),
                None,
            ),
            None => {
                first_line.insert(id, line);
            }
        }
        parent_of.insert(id, (f.parent.as_deref(), line));
    }
    for &(line, f) in entries.iter().filter(|(_, f)| !f.is_header) {
        if let Some(parent) = f.parent.as_deref() {
            if !parent_of.contains_key(parent) {
                out.push(
                    Problem::Orphan,
                    line,
                    format!("parent {} is not in the file", quoted(parent)),
                    None,
                );
            }
        }
    }
    // Each cycle once: walk from every id, marking what was walked.
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut ids: Vec<(&str, u64)> = parent_of.iter().map(|(&id, &(_, l))| (id, l)).collect();
    ids.sort_by_key(|&(_, l)| l);
    for (start, _) in ids {
        let mut path: Vec<&str> = Vec::new();
        let mut at = Some(start);
        while let Some(id) = at {
            match state.get(id) {
                Some(2) => break,
                Some(1) => {
                    let from = path.iter().position(|&p| p == id).unwrap_or(0);
                    let cycle = &path[from..];
                    let mut lines: Vec<u64> = cycle.iter().map(|id| parent_of[id].1).collect();
                    lines.sort_unstable();
                    let names: Vec<String> = cycle.iter().map(|id| quoted(id)).collect();
                    out.push(
                        Problem::ParentCycle,
                        lines[0],
                        format!(
                            "parentId cycle through {} (lines {}): pi's reference loops on it",
                            names.join(" -> "),
                            lines
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None,
                    );
                    break;
                }
                _ => {}
            }
            let Some(&(parent, _)) = parent_of.get(id) else {
                break;
            };
            state.insert(id, 1);
            path.push(id);
            at = parent;
        }
        for id in path {
            state.insert(id, 2);
        }
    }
}

fn quoted(id: &str) -> String {
    let mut out = Vec::new();
    json_text::write_string(&mut out, id.as_bytes());
    String::from_utf8_lossy(&out).into_owned()
}

fn build_plan(lines: &[LineFacts], header: Option<&HeaderPlan>) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let push_span = |pieces: &mut Vec<Piece>, offset: u64, len: u64| {
        pieces.push(Piece::Span { offset, len });
        pieces.push(Piece::Bytes(b"\n".to_vec()));
    };
    let moved = match header {
        Some(HeaderPlan::Insert(line)) => {
            let mut l = line.clone();
            l.push(b'\n');
            pieces.push(Piece::Bytes(l));
            None
        }
        Some(HeaderPlan::Move(n)) => {
            if let Some(l) = lines.iter().find(|l| l.number == *n) {
                match &l.kind {
                    LineKind::Recovered(spans) => {
                        if let Some((o, len, _)) = spans.iter().find(|(_, _, f)| f.is_header) {
                            push_span(&mut pieces, *o, *len);
                            Some((*n, *o))
                        } else {
                            None
                        }
                    }
                    _ => {
                        push_span(&mut pieces, l.offset, l.len);
                        Some((*n, l.offset))
                    }
                }
            } else {
                None
            }
        }
        None => None,
    };
    for l in lines {
        match &l.kind {
            LineKind::Drop => {}
            LineKind::Keep | LineKind::Entry(_) => {
                if moved == Some((l.number, l.offset)) {
                    continue;
                }
                push_span(&mut pieces, l.offset, l.len);
            }
            LineKind::Recovered(spans) => {
                for (o, len, _) in spans {
                    if moved == Some((l.number, *o)) {
                        continue;
                    }
                    push_span(&mut pieces, *o, *len);
                }
            }
        }
    }
    // Adjacent pieces merged: one read and write for a run of kept lines.
    let mut merged: Vec<Piece> = Vec::new();
    for piece in pieces {
        match (merged.last_mut(), piece) {
            (Some(Piece::Bytes(a)), Piece::Bytes(b)) => a.extend_from_slice(&b),
            (_, p) => merged.push(p),
        }
    }
    let mut out: Vec<Piece> = Vec::new();
    let mut i = 0;
    // A span, "\n", and the next span right after that newline in the file: one span.
    while i < merged.len() {
        if let (
            Some(Piece::Span { offset, len }),
            Some(Piece::Bytes(nl)),
            Some(Piece::Span {
                offset: o2,
                len: l2,
            }),
        ) = (out.last_mut(), merged.get(i), merged.get(i + 1))
        {
            if nl.as_slice() == b"\n" && *o2 == *offset + *len + 1 {
                *len += 1 + l2;
                i += 2;
                continue;
            }
        }
        out.push(merged[i].clone());
        i += 1;
    }
    out
}

/// `checkSession`'s repair: the plan, and unless `dry_run` the repaired file in
/// place of the original, which is kept as `<name>.bak-<UTC timestamp>`.
pub fn repair(
    path: &Path,
    dry_run: bool,
    backup_stamp: &str,
) -> Result<RepairOutcome, SessionError> {
    let report = check(path)?;
    let Some(plan) = report.plan.clone().filter(|_| !dry_run) else {
        return Ok(RepairOutcome {
            report,
            applied: false,
            backup: None,
            after: None,
        });
    };
    let target = fs::canonicalize(path).map_err(|e| IoFailure::new(&e, "realpath", Some(path)))?;
    let dir = target.parent().unwrap_or(Path::new(".")).to_path_buf();
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let backup = dir.join(format!("{name}.bak-{backup_stamp}"));
    let temp = dir.join(format!(
        ".{name}.{}.repair.tmp",
        uuid::Uuid::new_v4().simple()
    ));
    let source = store::open_read(&target)?;
    let original = source
        .metadata()
        .map_err(|e| IoFailure::new(&e, "fstat", Some(path)))?;
    let changed = || {
        SessionError::Message(format!(
            "{} changed while it was being repaired (another process is writing to it?); left as it is",
            path.display()
        ))
    };
    if stamp_of(&original) != report.stamp {
        return Err(changed());
    }
    let result = (|| -> Result<(), SessionError> {
        let mut out = crate::os::create_new_private(&temp)
            .map_err(|e| IoFailure::new(&e, "open", Some(&temp)))?;
        let mut buf = Vec::new();
        for piece in &plan {
            match piece {
                Piece::Bytes(b) => write_all(&mut out, b)?,
                Piece::Span { offset, len } => {
                    let mut at = *offset;
                    while at < offset + len {
                        let n = (offset + len - at).min(8 << 20) as usize;
                        store::read_at_into(&source, at, n, &mut buf)?;
                        write_all(&mut out, &buf)?;
                        at += n as u64;
                    }
                }
            }
        }
        out.sync_all()
            .map_err(|e| IoFailure::new(&e, "fsync", None))?;
        fs::set_permissions(&temp, original.permissions())
            .map_err(|e| IoFailure::new(&e, "chmod", Some(&temp)))?;
        // The original stays beside it, under a name listings ignore. A copy, not
        // a hard link: the old file must have no links left after the rename, so
        // that an append handle kept open on it (this package's) sees it replaced.
        fs::copy(&target, &backup).map_err(|e| IoFailure::new(&e, "copyfile", Some(&backup)))?;
        let now = fs::metadata(&target).map_err(|e| IoFailure::new(&e, "stat", Some(path)))?;
        if stamp_of(&now) != report.stamp {
            let _ = fs::remove_file(&backup);
            return Err(changed());
        }
        fs::rename(&temp, &target).map_err(|e| IoFailure::new(&e, "rename", Some(path)))?;
        crate::os::sync_dir(&dir);
        carry_over_late_appends(&source, report.stamp.0, &target)?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    let after = check(path)?;
    Ok(RepairOutcome {
        report,
        applied: true,
        backup: Some(backup),
        after: Some(after),
    })
}

/// How long appends to the replaced file are watched for after the rename.
const SETTLE_ROUNDS: u32 = 20;
const SETTLE_STEP: std::time::Duration = std::time::Duration::from_millis(5);

/// A writer that opened the file before the rename writes into the old file
/// (no longer linked): what arrives there during a short settle time is
/// appended to the new file, so such an append is not lost. A writer that
/// waits longer than that between its open and its write is not seen.
fn carry_over_late_appends(old: &File, checked_len: u64, target: &Path) -> Result<(), IoFailure> {
    let mut carried = checked_len;
    for round in 0..SETTLE_ROUNDS {
        let now = old
            .metadata()
            .map_err(|e| IoFailure::new(&e, "fstat", None))?
            .len();
        if now > carried {
            let late = store::read_at(old, carried, (now - carried) as usize)?;
            store::append(target, &late)?;
            carried = now;
        }
        if round + 1 < SETTLE_ROUNDS {
            std::thread::sleep(SETTLE_STEP);
        }
    }
    Ok(())
}

fn write_all(out: &mut File, bytes: &[u8]) -> Result<(), IoFailure> {
    out.write_all(bytes)
        .map_err(|e: io::Error| IoFailure::new(&e, "write", None))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0198f3a2-0000-7000-8000-000000000001";

    fn header() -> String {
        format!(
            r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
        )
    }

    fn entry(id: &str, parent: Option<&str>) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"x"}}}}"#
        )
    }

    fn in_folder(content: &[u8]) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir()
            .join(format!("pisn-doctor-{}", uuid::Uuid::new_v4()))
            .join("--w--");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl"));
        fs::write(&file, content).unwrap();
        (dir, file)
    }

    fn problems(report: &Report) -> Vec<(&'static str, u64)> {
        report
            .findings
            .iter()
            .map(|f| (f.problem.name(), f.line))
            .collect()
    }

    #[test]
    fn a_clean_file_has_no_findings_and_no_plan() {
        let text = format!(
            "{}\n{}\n{}\n",
            header(),
            entry("a", None),
            entry("b", Some("a"))
        );
        let (dir, file) = in_folder(text.as_bytes());
        let report = check(&file).unwrap();
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert!(report.opens_in_reference && !report.has_repairs());
        assert_eq!((report.lines, report.entries), (3, 3));
        let outcome = repair(&file, false, "t").unwrap();
        assert!(!outcome.applied);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn glued_entries_torn_tails_and_nul_padding_are_repaired() {
        let b = entry("b", Some("a"));
        let c = entry("c", Some("b"));
        let text = format!(
            "{}\r\n{}\n{}{}\n{}\0\0\0\n{}",
            header(),
            entry("a", None),
            &b[..40],
            b,
            c,
            &c[..30]
        );
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(&[0u8; 100]);
        let (dir, file) = in_folder(&bytes);
        let report = check(&file).unwrap();
        assert_eq!(
            problems(&report),
            vec![
                ("crlf", 1),
                ("glued-entry", 3),
                ("nul-padding", 4),
                ("torn-last-line", 5)
            ]
        );
        let outcome = repair(&file, false, "stamp").unwrap();
        assert!(outcome.applied);
        let repaired = fs::read_to_string(&file).unwrap();
        assert_eq!(
            repaired,
            format!("{}\n{}\n{}\n{}\n", header(), entry("a", None), b, c)
        );
        assert_eq!(
            fs::read(dir.join(format!("2026-01-01T00-00-00-000Z_{ID}.jsonl.bak-stamp"))).unwrap(),
            bytes
        );
        assert!(outcome.after.unwrap().findings.is_empty());
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_line_torn_right_after_a_content_block_keeps_only_the_entry_glued_to_it() {
        // Cut right after a block of an assistant message: the blocks read as
        // JSON objects with a "type" (a toolCall even has an id), but are not entries.
        let torn = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Sure"},{"type":"toolCall","id":"call1","name":"bash","arguments":{}}"#;
        let c = entry("c", Some("a"));
        let text = format!("{}\n{}\n{torn}{c}\n", header(), entry("a", None));
        let (dir, file) = in_folder(text.as_bytes());
        let report = check(&file).unwrap();
        assert_eq!(problems(&report), vec![("glued-entry", 3)]);
        assert!(repair(&file, false, "s").unwrap().applied);
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            format!("{}\n{}\n{c}\n", header(), entry("a", None))
        );
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_lost_header_is_rebuilt_from_the_file_name_and_folder() {
        let text = format!("{}\n{}\n", entry("a", None), entry("b", Some("a")));
        let (dir, file) = in_folder(text.as_bytes());
        let report = check(&file).unwrap();
        assert!(!report.opens_in_reference);
        assert_eq!(problems(&report), vec![("missing-header", 0)]);
        repair(&file, false, "s").unwrap();
        let first = fs::read_to_string(&file).unwrap();
        assert_eq!(
            first.lines().next().unwrap(),
            format!(
                r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
            )
        );
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn tree_problems_are_reported_and_left_alone() {
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n",
            header(),
            entry("a", None),
            entry("a", None),
            entry("x", Some("y")),
            entry("y", Some("x")),
            entry("o", Some("gone"))
        );
        let (dir, file) = in_folder(text.as_bytes());
        let report = check(&file).unwrap();
        assert_eq!(
            problems(&report),
            vec![("duplicate-id", 3), ("parent-cycle", 4), ("orphan", 6)]
        );
        assert!(!report.has_repairs());
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_misplaced_header_moves_to_the_top_and_other_lines_stay() {
        let mut bytes = format!("{}\nnotes, not JSON\n[1]\n", entry("a", None)).into_bytes();
        bytes.extend_from_slice(
            b"{\"type\":\"custom\",\"id\":\"b\",\"parentId\":\"a\",\"x\":\"\xff\"}\n",
        );
        bytes.extend_from_slice(format!("{}\n", header()).as_bytes());
        let (dir, file) = in_folder(&bytes);
        let report = check(&file).unwrap();
        assert!(!report.opens_in_reference);
        assert_eq!(
            problems(&report),
            vec![
                ("not-json", 2),
                ("not-object", 3),
                ("invalid-utf8", 4),
                ("header-not-first", 5)
            ]
        );
        repair(&file, false, "s").unwrap();
        let text = fs::read(&file).unwrap();
        let mut expected =
            format!("{}\n{}\nnotes, not JSON\n[1]\n", header(), entry("a", None)).into_bytes();
        expected.extend_from_slice(
            b"{\"type\":\"custom\",\"id\":\"b\",\"parentId\":\"a\",\"x\":\"\xff\"}\n",
        );
        assert_eq!(text, expected);
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn file_names_give_the_header_timestamp() {
        assert_eq!(
            parse_file_name("2026-12-01T20-26-04-123Z_abc.jsonl"),
            Some(("2026-12-01T20:26:04.123Z".into(), "abc".into()))
        );
        assert_eq!(parse_file_name("notes.jsonl"), None);
    }

    /// What `Session::open` says of a file (`may_be_damaged`), beside the
    /// doctor's findings but CRLF's: a file the doctor faults is always one
    /// open flags (lib/recall.js runs the doctor only then), and a file pi
    /// wrote whole is not. Seeded random damage to random small sessions.
    #[test]
    fn open_flags_every_file_the_doctor_faults() {
        let mut seed: u64 = 0x5eed_d0c7_0123_4567;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut flagged_clean = 0;
        for round in 0..400 {
            let count = 1 + next(8);
            let mut lines = vec![header()];
            for i in 0..count {
                let parent = (i > 0).then(|| format!("e{}", next(i)));
                lines.push(entry(&format!("e{i}"), parent.as_deref()));
            }
            let damage = next(16);
            let at = 1 + next(lines.len() as u64 - 1) as usize;
            let mut tail = "\n";
            match damage {
                0 => {
                    let half = lines[at].len() / 2;
                    lines[at].truncate(half);
                }
                1 => tail = "",
                2 => lines.insert(at, String::new()),
                3 => lines.insert(at, "[1]".into()),
                4 => lines.insert(at, "null".into()),
                5 => lines[at] = format!("{}\u{0}\u{0}", lines[at]),
                6 => lines[at] = lines[at].replace("\"x\"", "\"\u{fffd}\""),
                7 => lines.push(lines[at].clone()),
                8 => lines.push(entry("late", Some("missing"))),
                9 => lines
                    .push(r#"{"type":"message","parentId":"e0","message":{"role":"user"}}"#.into()),
                10 => lines.insert(at, header()),
                11 => lines[at] = format!(" {}", lines[at]),
                12 => lines[at] = format!("{}\r", lines[at]),
                13 => {
                    let last = lines.len();
                    lines.push(entry("p", Some("q")));
                    lines.push(entry("q", Some("p")));
                    lines.swap(last, last + 1);
                }
                _ => {}
            }
            let mut content = lines.join("\n").into_bytes();
            content.extend_from_slice(tail.as_bytes());
            if damage == 6 {
                // Bytes that are no UTF-8 where the text was.
                let text = "\u{fffd}".as_bytes();
                if let Some(i) = content.windows(text.len()).position(|w| w == text) {
                    content.splice(i..i + text.len(), [0xff, 0xfe, b'x']);
                }
            }
            let (dir, file) = in_folder(&content);
            let report = check(&file).unwrap();
            let faults: Vec<_> = report
                .findings
                .iter()
                .filter(|f| f.problem != Problem::Crlf)
                .collect();
            let mut session = crate::session::Session::new(false);
            let opened = session.open_checked(&file).is_ok();
            let flag = session.may_be_damaged();
            // pi's own open does not look.
            let mut unchecked = crate::session::Session::new(false);
            if unchecked.open(&file).is_ok() {
                assert_eq!(unchecked.may_be_damaged(), None, "round {round}");
            }
            if opened && !faults.is_empty() {
                assert_eq!(
                    flag,
                    Some(true),
                    "round {round}, damage {damage}: {faults:?}"
                );
            }
            if opened && faults.is_empty() && flag == Some(true) {
                flagged_clean += 1;
            }
            if damage >= 14 {
                assert_eq!(flag, Some(false), "round {round}: a whole file");
            }
            fs::remove_dir_all(dir.parent().unwrap()).unwrap();
        }
        // Blank lines, leading blanks and CRLF are flagged though the doctor is silent.
        assert!(flagged_clean < 200, "{flagged_clean}");
    }
}
