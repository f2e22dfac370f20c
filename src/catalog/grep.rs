//! Finding messages: which blocks of a session file may match a pattern, found
//! without building the entries.
//!
//! The match itself is JavaScript's (`text.matchAll(regexp)` with flags `gi`
//! or `g`), so it runs in V8 and is exact by construction. This module owns
//! everything before it: it walks each line's JSON once, finds the searched
//! blocks by the field rules (see `Field`), and hands over only those whose
//! text may match, decoded to UTF-16 as `JSON.parse` decodes them (ids,
//! timestamps and roles as raw JSON, which JavaScript parses), so that V8
//! sees a few strings instead of every line.
//!
//! "May match" is a prefilter with no false negatives: the ASCII runs every
//! match must contain (`Prefilter`). Without the `u` flag, JavaScript's
//! case-insensitive canonicalisation never maps a non-ASCII unit to an ASCII
//! one or back, so an ASCII run matches only ASCII text, equal up to ASCII case.
//! A run of characters that JSON never escapes appears in the raw bytes of the
//! string unless one of them was written as `\u00XX`: such strings are decoded
//! before looking.

use std::borrow::Cow;
use std::io::Read;

use crate::format::json::{self, Cursor, JsValue, SyntaxError};
use crate::format::json_text;

/// What is searched; the codes are those of `lib/grep.js`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// User and assistant message text: string content or `text` blocks.
    Text = 0,
    /// `text` blocks of toolResult messages.
    ToolResult = 1,
    /// `summary` of compaction and branch_summary entries.
    Summary = 2,
    /// `thinking` blocks of assistant messages.
    Thinking = 3,
    /// `name + " " + JSON.stringify(arguments)` of assistant tool calls
    /// (JavaScript makes the text: its `JSON.stringify` is the rule).
    ToolCall = 4,
    /// custom_message entries and custom (v2: hookMessage) messages: string
    /// content or `text` blocks; bashExecution messages: `output`.
    Custom = 5,
}

/// A set of fields, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSet(pub u32);

impl FieldSet {
    pub fn has(self, field: Field) -> bool {
        self.0 & (1 << field as u32) != 0
    }
}

/// Bytes JSON may write as themselves, and that JavaScript's canonicalisation
/// keeps ASCII: printable ASCII except `"`, `\` and `/` (which may come from
/// the escapes `\"`, `\\` and `\/`).
fn is_run_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\\' | b'/')
}

/// Finds one ASCII run in bytes, up to ASCII case when `fold`: without
/// copying the text, by a SIMD search for a part of the run (in every case
/// when `fold`), each hit checked in place.
#[derive(Debug, Clone)]
struct RunFinder {
    /// Lowercased when `fold`.
    run: Vec<u8>,
    fold: bool,
    /// Index in `run` of the byte looked for.
    rare: usize,
    exact: memchr::memmem::Finder<'static>,
    /// When `fold`: the run's longest part without letters (`2589` of
    /// `ts2589`), if it has two bytes or more, and where it starts: looked for
    /// as it is (SIMD, two bytes at once), where both cases of one byte are
    /// often everywhere (digits of timestamps and ids).
    caseless: Option<(usize, memchr::memmem::Finder<'static>)>,
    /// When `fold` and no `caseless` part: every case of three bytes of the
    /// run (from the rarest on), looked for at once (SIMD over the three, as
    /// ripgrep looks for a caseless word), and where they start in the run. A
    /// single byte in both cases stops too often: `Z` ends every timestamp.
    cases: Option<(usize, aho_corasick::packed::Searcher)>,
    /// `cases` and, after them, the starts of the escapes `tool_call_escape`
    /// looks for (`\u0`, `\ud`, `\uD`): one pass over a text for both.
    /// With how many of its patterns are cases of the run.
    cases_or_escapes: Option<(aho_corasick::packed::Searcher, usize)>,
}

/// What `tool_call_escape` looks for begins so.
const ESCAPE_STARTS: [&[u8]; 3] = [b"\\u0", b"\\ud", b"\\uD"];

/// How common a byte is in session files (higher: more common), for picking
/// the byte to look for: JSON punctuation, then English letters by frequency.
fn commonness(b: u8) -> u32 {
    const LETTERS: &[u8] = b"zqxjkvbpygfwmucldrhsnioate";
    match b.to_ascii_lowercase() {
        b'"' | b':' | b',' | b' ' => 100,
        b'{' | b'}' | b'.' | b'_' | b'-' => 60,
        c @ b'a'..=b'z' => 30 + LETTERS.iter().position(|&l| l == c).unwrap_or(0) as u32,
        b'0'..=b'9' => 25,
        _ => 10,
    }
}

impl RunFinder {
    fn new(run: Vec<u8>, fold: bool) -> RunFinder {
        let fold = fold && run.iter().any(u8::is_ascii_alphabetic);
        let rare = (0..run.len())
            .min_by_key(|&i| commonness(run[i]))
            .unwrap_or(0);
        let exact = memchr::memmem::Finder::new(&run).into_owned();
        let caseless = fold
            .then(|| {
                let mut best = (0, 0);
                let mut start = 0;
                for (i, b) in run.iter().enumerate() {
                    if b.is_ascii_alphabetic() {
                        start = i + 1;
                    } else if i + 1 - start > best.1 - best.0 {
                        best = (start, i + 1);
                    }
                }
                let (a, b) = best;
                (b - a >= 2).then(|| (a, memchr::memmem::Finder::new(&run[a..b]).into_owned()))
            })
            .flatten();
        let window = (fold && caseless.is_none() && run.len() >= 3).then(|| {
            let width = run.len().min(3);
            let at = rare.min(run.len() - width);
            (at, at + width)
        });
        let cases = window.and_then(|(at, end)| Some((at, every_case(&run[at..end], &[])?.0)));
        let cases_or_escapes =
            window.and_then(|(at, end)| every_case(&run[at..end], &ESCAPE_STARTS));
        RunFinder {
            run,
            fold,
            rare,
            exact,
            caseless,
            cases,
            cases_or_escapes,
        }
    }

    /// Where the run starts in `hay`, at or after `from`.
    fn find_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        if from > hay.len() {
            return None;
        }
        if !self.fold {
            return self.exact.find(&hay[from..]).map(|i| from + i);
        }
        let n = self.run.len();
        let fits = |start: usize| {
            start + n <= hay.len() && hay[start..start + n].eq_ignore_ascii_case(&self.run)
        };
        if let Some((at, part)) = &self.caseless {
            let skip = from + at;
            return part
                .find_iter(hay.get(skip..)?)
                .map(|i| skip + i - at)
                .find(|&start| fits(start));
        }
        if let Some((at, cases)) = &self.cases {
            // One match at a time, each search from the byte after the last:
            // a search's matches do not overlap, the run's may.
            let mut next = from + at;
            while next < hay.len() {
                let found = cases.find_in(hay, aho_corasick::Span::from(next..hay.len()))?;
                let start = found.start() - at;
                if fits(start) {
                    return Some(start);
                }
                next = found.start() + 1;
            }
            return None;
        }
        let b = self.run[self.rare];
        let (lo, up) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
        let skip = from + self.rare;
        if skip >= hay.len() {
            return None;
        }
        memchr::memchr2_iter(lo, up, &hay[skip..])
            .map(|i| skip + i - self.rare)
            .find(|&start| fits(start))
    }

    fn is_in(&self, hay: &[u8]) -> bool {
        self.find_from(hay, 0).is_some()
    }

    fn fits(&self, hay: &[u8], start: usize) -> bool {
        let n = self.run.len();
        start + n <= hay.len() && hay[start..start + n].eq_ignore_ascii_case(&self.run)
    }

    /// Where, at or after `from`, the run starts or an escape `tool_call_escape`
    /// finds does, in one pass (`cases_or_escapes`, which the caller knows is there).
    fn run_or_escape_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        let (searcher, variants) = self.cases_or_escapes.as_ref()?;
        let (at, _) = self.cases.as_ref()?;
        let mut next = from;
        while next < hay.len() {
            let Some(found) = searcher.find_in(hay, aho_corasick::Span::from(next..hay.len()))
            else {
                break;
            };
            let s = found.start();
            let hit = if found.pattern().as_usize() < *variants {
                s >= from + at && self.fits(hay, s - at)
            } else {
                escape_at(hay, s).is_some_and(|(unit, capital)| written_otherwise(unit, capital))
            };
            if hit {
                return Some(if found.pattern().as_usize() < *variants {
                    s - at
                } else {
                    s
                });
            }
            next = s + 1;
        }
        None
    }
}

/// A searcher for `part` in every ASCII case, then for each of `more`, where
/// the CPU has one (SIMD), and how many cases it has.
fn every_case(part: &[u8], more: &[&[u8]]) -> Option<(aho_corasick::packed::Searcher, usize)> {
    let letters: Vec<usize> = (0..part.len())
        .filter(|&i| part[i].is_ascii_alphabetic())
        .collect();
    let mut builder = aho_corasick::packed::Config::new().builder();
    for mask in 0..1u32 << letters.len() {
        let mut case = part.to_vec();
        for (bit, &i) in letters.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                case[i] = case[i].to_ascii_uppercase();
            }
        }
        builder.add(case);
    }
    for pattern in more {
        builder.add(pattern);
    }
    Some((builder.build()?, 1 << letters.len()))
}

/// The escapes `\uXXXX` in `raw` at or after `from`: where each starts, and
/// the code unit it writes, with whether its hex digits hold a capital.
fn unicode_escapes(raw: &[u8], from: usize) -> impl Iterator<Item = (usize, u16, bool)> + '_ {
    // Built once: a search is often short (a tool output full of `\u001b`).
    static ESCAPE: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let escape = ESCAPE.get_or_init(|| memchr::memmem::Finder::new(b"\\u"));
    let hay = raw.get(from..).unwrap_or_default();
    escape.find_iter(hay).filter_map(move |i| {
        let (unit, capital) = escape_at(raw, from + i)?;
        Some((from + i, unit, capital))
    })
}

/// The code unit that the `\uXXXX` at `at` in `raw` writes, and whether its
/// hex digits hold a capital.
fn escape_at(raw: &[u8], at: usize) -> Option<(u16, bool)> {
    let digits = raw.get(at + 2..at + 6)?;
    let hex = |b: &u8| (*b as char).to_digit(16);
    let unit = digits
        .iter()
        .try_fold(0u16, |n, b| Some(n * 16 + hex(b)? as u16))?;
    Some((unit, digits.iter().any(u8::is_ascii_uppercase)))
}

/// Where, at or after `from`, `raw` JSON text has a `\u00XX` escape of a run
/// byte: only such an escape can hide part of a run (any other escape decodes
/// to a character no run holds, as the raw bytes around it do not either).
/// JSON.stringify writes none, so real files rarely need decoding.
fn run_byte_escape(raw: &[u8], from: usize) -> Option<usize> {
    unicode_escapes(raw, from)
        .find(|&(_, unit, _)| unit < 0x80 && is_run_byte(unit as u8))
        .map(|(at, _, _)| at)
}

/// Where, at or after `from`, `raw` JSON text has an escape that
/// `JSON.stringify` writes otherwise, so that a tool call's text (made, not
/// written) may hold a run its line lacks: a run byte's (written as itself),
/// a control's that it writes short (`\t` for `\u0009`: a letter after the
/// backslash), and a control's or lone surrogate's in capital hex digits (it
/// writes them in small ones). Escapes it writes back byte for byte (`\u001b`,
/// by far the commonest: colours in tool output) or as bytes no run holds
/// (`\u00e9`, `\u0022`) cannot.
fn tool_call_escape(raw: &[u8], from: usize) -> Option<usize> {
    unicode_escapes(raw, from)
        .find(|&(_, unit, capital)| written_otherwise(unit, capital))
        .map(|(at, _, _)| at)
}

/// Whether `JSON.stringify` writes the code unit an escape wrote otherwise,
/// in a way that may make a run (see `tool_call_escape`).
fn written_otherwise(unit: u16, capital: bool) -> bool {
    let control = unit < 0x20;
    let surrogate = (0xd800..0xe000).contains(&unit);
    (unit < 0x80 && is_run_byte(unit as u8))
        || matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)
        || ((control || surrogate) && capital)
}

/// The ASCII runs every match of a pattern contains.
#[derive(Debug, Clone)]
pub struct Prefilter {
    /// Longest first.
    finders: Vec<RunFinder>,
}

impl Prefilter {
    /// For a literal pattern (`escapeRegExp(pattern)`): its maximal runs.
    pub fn literal(pattern: &str, fold: bool) -> Prefilter {
        let runs = pattern
            .as_bytes()
            .split(|&b| !is_run_byte(b))
            .filter(|run| !run.is_empty())
            .map(|run| run.to_vec())
            .collect();
        Prefilter::new(runs, fold)
    }

    /// For the body of a regular expression (no `u` flag): the literal runs of
    /// its top-level sequence, outside groups, classes and escapes, without a
    /// character a quantifier makes optional. A top-level alternative means no
    /// run is required. Anything unclear ends a run: fewer runs is only
    /// slower, never wrong.
    pub fn regex(body: &str, fold: bool) -> Prefilter {
        Prefilter::new(regex_runs(body.as_bytes()), fold)
    }

    fn new(mut runs: Vec<Vec<u8>>, fold: bool) -> Prefilter {
        if fold {
            runs.iter_mut().for_each(|n| n.make_ascii_lowercase());
        }
        // Longest first: the likeliest to reject.
        runs.sort_by_key(|n| std::cmp::Reverse(n.len()));
        runs.dedup();
        Prefilter {
            finders: runs.into_iter().map(|r| RunFinder::new(r, fold)).collect(),
        }
    }

    #[cfg(test)]
    fn runs(&self) -> Vec<Vec<u8>> {
        self.finders.iter().map(|f| f.run.clone()).collect()
    }

    /// Nothing to look for: every block is a candidate.
    pub fn is_empty(&self) -> bool {
        self.finders.is_empty()
    }

    /// Whether text whose raw bytes (JSON text or decoded WTF-8) are `raw`
    /// holds every run.
    fn holds_all(&self, raw: &[u8]) -> bool {
        self.finders.iter().all(|f| f.is_in(raw))
    }

    /// Whether a JSON string body (between the quotes) may match.
    fn admits_string(&self, body: &[u8], escaped: bool) -> bool {
        if self.finders.is_empty() {
            return true;
        }
        if escaped && run_byte_escape(body, 0).is_some() {
            return self.holds_all(&json::unescape(body));
        }
        self.holds_all(body)
    }

    /// Whether a whole line may hold a matching string: a quick look before
    /// walking it (false positives are fine, false negatives are not).
    fn admits_line(&self, line: &[u8]) -> bool {
        self.finders.is_empty() || self.holds_all(line) || run_byte_escape(line, 0).is_some()
    }

    /// Whether the tool calls of a line `admits_line` turns away may still
    /// match, their text being made (`name + " " + JSON.stringify(arguments)`),
    /// not written. They may not when a run the line lacks is one such a text
    /// can hold only where the line holds it too: a run without JSON's
    /// punctuation or the space (which the text adds or leaves out between
    /// values), not all of it number characters (a number is written anew:
    /// `1e2` as `100`), in a line without an escape the text writes otherwise
    /// (`tool_call_escape`). Most tool calls hold no word searched, and walking
    /// each of their lines costs more than the rest.
    fn tool_calls_may_match(&self, line: &[u8]) -> bool {
        tool_call_escape(line, 0).is_some()
            || !self
                .finders
                .iter()
                .any(|f| as_written(&f.run) && !f.is_in(line))
    }
}

/// Whether a tool call's text (`name + " " + JSON.stringify(arguments)`) can
/// hold `run` only where its line holds it too, in a line without an escape
/// it writes otherwise (see `Prefilter::tool_calls_may_match`): no JSON punctuation or
/// space, and not only number characters.
fn as_written(run: &[u8]) -> bool {
    !run.iter().any(|b| b" {}[]:,".contains(b))
        && run.iter().any(|b| !b"0123456789.eE+-".contains(b))
}

/// See `Prefilter::regex`.
fn regex_runs(p: &[u8]) -> Vec<Vec<u8>> {
    let mut runs = Vec::new();
    let mut run: Vec<u8> = Vec::new();
    let end_run = |run: &mut Vec<u8>, runs: &mut Vec<Vec<u8>>| {
        if !run.is_empty() {
            runs.push(std::mem::take(run));
        }
    };
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        match c {
            b'|' => return Vec::new(),
            b'\\' => {
                end_run(&mut run, &mut runs);
                i = skip_escape(p, i);
                continue;
            }
            b'(' => {
                end_run(&mut run, &mut runs);
                i = skip_group(p, i);
                continue;
            }
            b'[' => {
                end_run(&mut run, &mut runs);
                i = skip_class(p, i);
                continue;
            }
            b'?' | b'*' => {
                // The atom before is optional.
                run.pop();
                end_run(&mut run, &mut runs);
            }
            b'+' => end_run(&mut run, &mut runs),
            b'{' => {
                // A quantifier (maybe of zero) or a literal brace: either way
                // the atom before may be missing or repeated.
                run.pop();
                end_run(&mut run, &mut runs);
                i = skip_quantifier(p, i);
                continue;
            }
            _ if is_run_byte(c) && !matches!(c, b'.' | b'^' | b'$' | b')' | b']' | b'}') => {
                run.push(c)
            }
            _ => end_run(&mut run, &mut runs),
        }
        i += 1;
    }
    end_run(&mut run, &mut runs);
    runs
}

/// The index after the escape starting at `p[i] == '\\'` (with its payload:
/// `\x41`, `\u0041`, `\u{41}`, `\cJ`, `\k<n>`, `\p{L}`, `\12`).
fn skip_escape(p: &[u8], i: usize) -> usize {
    let Some(&c) = p.get(i + 1) else {
        return p.len();
    };
    let mut j = i + 2;
    let hex_run = |mut j: usize, max: usize| {
        let start = j;
        while j < p.len() && j - start < max && p[j].is_ascii_hexdigit() {
            j += 1;
        }
        j
    };
    let until = |j: usize, open: u8, close: u8| {
        if p.get(j) == Some(&open) {
            p[j..]
                .iter()
                .position(|&b| b == close)
                .map_or(p.len(), |k| j + k + 1)
        } else {
            j
        }
    };
    match c {
        b'x' => j = hex_run(j, 2),
        b'u' => {
            j = if p.get(j) == Some(&b'{') {
                until(j, b'{', b'}')
            } else {
                hex_run(j, 4)
            }
        }
        b'c' => j += usize::from(p.get(j).is_some_and(u8::is_ascii_alphabetic)),
        b'k' => j = until(j, b'<', b'>'),
        b'p' | b'P' => j = until(j, b'{', b'}'),
        b'0'..=b'9' => {
            while j < p.len() && p[j].is_ascii_digit() {
                j += 1;
            }
        }
        _ => {}
    }
    j.min(p.len())
}

/// The index after `{n}`, `{n,}` or `{n,m}` at `p[i] == '{'`, or after the
/// brace alone when it is none of those (a literal brace).
fn skip_quantifier(p: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let digits = |mut j: usize| {
        let start = j;
        while j < p.len() && p[j].is_ascii_digit() {
            j += 1;
        }
        (j, j > start)
    };
    let (after, any) = digits(j);
    if !any {
        return i + 1;
    }
    j = after;
    if p.get(j) == Some(&b',') {
        j = digits(j + 1).0;
    }
    if p.get(j) == Some(&b'}') {
        j + 1
    } else {
        i + 1
    }
}

/// The index after the class starting at `p[i] == '['` (in JavaScript the
/// first `]` closes it, even right after `[`).
fn skip_class(p: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < p.len() {
        match p[i] {
            b'\\' => i += 2,
            b']' => return i + 1,
            _ => i += 1,
        }
    }
    p.len()
}

/// The index after the group starting at `p[i] == '('`.
fn skip_group(p: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < p.len() {
        match p[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' => {
                i = skip_class(p, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    p.len()
}

/// A span of `FileCandidates::json`: raw JSON text of a value, which
/// `JSON.parse` turns into exactly the value the line's `JSON.parse` holds.
/// `(0, 0)` is a missing value (`undefined`).
pub type Span = (u32, u32);

/// One block that may match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Index of its entry in `FileCandidates::entries`.
    pub entry: u32,
    pub field: Field,
    pub block_index: u32,
    /// The block's text (for a tool call, its name): in `json` when
    /// `ascii`, else in `texts`.
    pub text: Span,
    pub ascii: bool,
    /// A tool call's arguments (missing: `{}`).
    pub arguments: Span,
}

/// What JavaScript needs of a candidate's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySpans {
    /// Where its line starts in the file.
    pub offset: u64,
    pub id: Span,
    pub timestamp: Span,
    /// The message's role, or the entry's type.
    pub role: Span,
    /// The message's `toolName` (raw JSON; toolResult messages have one, other entries none).
    pub tool_name: Span,
}

/// The candidates of one file, in file order and content order.
#[derive(Debug, Default)]
pub struct FileCandidates {
    /// Raw JSON texts the entries' spans and tool call arguments point into.
    pub json: Vec<u8>,
    /// The candidates' texts, decoded (as `JSON.parse` decodes them) to UTF-16.
    pub texts: Vec<u16>,
    pub entries: Vec<EntrySpans>,
    pub candidates: Vec<Candidate>,
    /// In a pass for headers (no fields), the file's header line when it may
    /// name a parent session (see `grep_scan::parent_header`).
    pub header: Option<Vec<u8>>,
}

impl FileCandidates {
    /// A string's value (WTF-8): ASCII as it is, in `json` (JavaScript makes
    /// a one-byte string of it, half the memory), anything else as UTF-16 in
    /// `texts`, lone surrogates and all. Returns the span and whether ASCII.
    fn push_text(&mut self, text: &[u8]) -> (Span, bool) {
        if text.is_ascii() {
            let start = self.json.len() as u32;
            self.json.extend_from_slice(text);
            return ((start, self.json.len() as u32), true);
        }
        let start = self.texts.len() as u32;
        push_utf16(&mut self.texts, text);
        ((start, self.texts.len() as u32), false)
    }

    fn push_json(&mut self, text: &[u8]) -> Span {
        if text.is_empty() {
            return (0, 0);
        }
        let start = self.json.len() as u32;
        self.json.extend_from_slice(text);
        (start, self.json.len() as u32)
    }
}

/// Appends WTF-8 text as UTF-16: valid UTF-8 (nearly every text) by runs,
/// ASCII widened a run at a time; text with lone surrogates by `jsstring`.
fn push_utf16(out: &mut Vec<u16>, text: &[u8]) {
    let Ok(s) = std::str::from_utf8(text) else {
        out.extend(crate::format::jsstring::wtf8_to_utf16(text));
        return;
    };
    out.reserve(text.len());
    let mut i = 0;
    while i < text.len() {
        let run = text[i..]
            .iter()
            .position(|&b| b >= 0x80)
            .unwrap_or(text.len() - i);
        out.extend(text[i..i + run].iter().map(|&b| u16::from(b)));
        i += run;
        if let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) {
            out.extend_from_slice(c.encode_utf16(&mut [0u16; 2]));
            i += c.len_utf8();
        }
    }
}

/// A value of the line: its raw span, whether it is a string, its string
/// body's span and whether that holds escapes.
#[derive(Debug, Clone, Copy, Default)]
struct Value {
    start: usize,
    end: usize,
    string: Option<(usize, usize, bool)>,
}

impl Value {
    fn raw<'a>(&self, s: &'a [u8]) -> &'a [u8] {
        &s[self.start..self.end]
    }

    fn is_set(&self) -> bool {
        self.end > self.start
    }

    /// The string's value (WTF-8), if it is one.
    fn text<'a>(&self, s: &'a [u8]) -> Option<Cow<'a, [u8]>> {
        let (a, b, escaped) = self.string?;
        Some(if escaped {
            Cow::Owned(json::unescape(&s[a..b]))
        } else {
            Cow::Borrowed(&s[a..b])
        })
    }

    fn is_str(&self, s: &[u8], want: &[u8]) -> bool {
        self.text(s).is_some_and(|t| *t == *want)
    }

    fn is_object(&self, s: &[u8]) -> bool {
        self.is_set() && s[self.start] == b'{'
    }

    fn is_array(&self, s: &[u8]) -> bool {
        self.is_set() && s[self.start] == b'['
    }
}

/// Reads one value at the cursor (after whitespace).
fn read_value(cur: &mut Cursor) -> Result<Value, SyntaxError> {
    cur.skip_ws();
    let start = cur.i;
    let string = if cur.peek() == Some(b'"') {
        Some(cur.skip_string()?)
    } else {
        cur.skip_value()?;
        None
    };
    Ok(Value {
        start,
        end: cur.i,
        string,
    })
}

/// The members of the object at the cursor whose keys are in `keys` (the last
/// of each, as `JSON.parse` keeps), validating the whole object.
fn read_members<const N: usize>(
    cur: &mut Cursor,
    keys: [&[u8]; N],
) -> Result<[Value; N], SyntaxError> {
    let mut found = [Value::default(); N];
    crate::format::entry::for_each_member(cur, |key, cur| {
        let value = read_value(cur)?;
        if let Some(k) = keys.iter().position(|k| **k == *key) {
            found[k] = value;
        }
        Ok(())
    })?;
    Ok(found)
}

/// The members of an object value already validated.
fn members_of<const N: usize>(s: &[u8], value: &Value, keys: [&[u8]; N]) -> [Value; N] {
    let mut cur = Cursor::new(&s[..value.end]);
    cur.i = value.start;
    read_members(&mut cur, keys).unwrap_or([Value::default(); N])
}

/// The elements of an array value already validated.
fn elements_of(s: &[u8], value: &Value) -> Vec<Value> {
    let mut cur = Cursor::new(&s[..value.end]);
    cur.i = value.start + 1;
    let mut out = Vec::new();
    cur.skip_ws();
    if cur.peek() == Some(b']') {
        return out;
    }
    while let Ok(v) = read_value(&mut cur) {
        out.push(v);
        cur.skip_ws();
        if cur.peek() != Some(b',') {
            break;
        }
        cur.i += 1;
    }
    out
}

/// A line's blocks found so far: field, block index, text, tool call arguments.
type Found = Vec<(Field, u32, Value, Value)>;
/// Keeps a block whose text may match.
type Admit<'a> = dyn FnMut(Field, u32, Value, &mut Found) + 'a;

/// Reads a session file's candidates; `stop` is asked between lines.
pub struct FileGrep<'a> {
    pub filter: &'a Prefilter,
    pub fields: FieldSet,
}

impl FileGrep<'_> {
    /// The candidates of a file's bytes (lines split on `\n`, each decoded as
    /// the reference reads files: invalid UTF-8 replaced; lines `JSON.parse`
    /// rejects skipped).
    pub fn scan(&self, bytes: &[u8], stop: &dyn Fn() -> bool) -> FileCandidates {
        let mut out = FileCandidates::default();
        self.scan_into(bytes, 0, stop, &mut out);
        out
    }

    /// `scan` of a file read from `file` a block of whole lines at a time
    /// (`buf`, scratch kept from file to file, grows only for a line longer
    /// than it): memory is that of the longest line, not of the file.
    pub fn scan_reader(
        &self,
        file: &mut impl Read,
        buf: &mut Vec<u8>,
        stop: &dyn Fn() -> bool,
    ) -> std::io::Result<FileCandidates> {
        const BLOCK: usize = 1 << 20;
        let mut out = FileCandidates::default();
        if buf.len() < BLOCK {
            buf.resize(BLOCK, 0);
        }
        // buf[..filled] is unread by the scan; buf[0] is at `base` in the file.
        let mut filled = 0;
        let mut base = 0u64;
        loop {
            if filled == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            let n = match file.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            filled += n;
            let whole = if n == 0 {
                filled
            } else {
                match memchr::memrchr(b'\n', &buf[filled - n..filled]) {
                    Some(i) => filled - n + i + 1,
                    None => continue,
                }
            };
            self.scan_into(&buf[..whole], base, stop, &mut out);
            buf.copy_within(whole..filled, 0);
            filled -= whole;
            base += whole as u64;
            if n == 0 || stop() {
                return Ok(out);
            }
        }
    }

    /// Adds the candidates of whole lines `bytes`, found at `base` in the file.
    fn scan_into(
        &self,
        bytes: &[u8],
        base: u64,
        stop: &dyn Fn() -> bool,
        out: &mut FileCandidates,
    ) {
        let tool_calls = self.fields.has(Field::ToolCall);
        for (k, (start, end)) in self.candidate_lines(bytes).into_iter().enumerate() {
            if k % 1024 == 1023 && stop() {
                break;
            }
            let line = &bytes[start..end];
            if line.len() < 2 {
                continue;
            }
            let tool_calls_may_match = || {
                tool_calls
                    && memchr::memmem::find(line, b"toolCall").is_some()
                    && self.filter.tool_calls_may_match(line)
            };
            if !self.filter.admits_line(line) && !tool_calls_may_match() {
                continue;
            }
            // Valid UTF-8 (nearly every line) is checked much faster than it is repaired.
            let line = match std::str::from_utf8(line) {
                Ok(_) => Cow::Borrowed(line),
                Err(_) => json::decode_lossy(line),
            };
            self.scan_line(base + start as u64, &line, out);
        }
    }

    /// Whether the file read from `file` may hold a candidate at all: the
    /// look `candidate_lines` starts with, over the whole file a chunk at a
    /// time, stopping at the first sign (a word in many files is found in
    /// their first chunk). `buf` is scratch, kept from file to file.
    pub fn may_match(&self, file: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        const CHUNK: usize = 256 << 10;
        let Some(first) = self.filter.finders.first() else {
            return Ok(true);
        };
        let tool_calls = self.fields.has(Field::ToolCall);
        // A sign may straddle two reads: the end of one read is looked at
        // again with the next (a `\u00XX` escape is 6 bytes, `toolCall` 8).
        let overlap = first.run.len().max(8) - 1;
        buf.resize(CHUNK + overlap, 0);
        let mut kept = 0;
        loop {
            let n = match file.read(&mut buf[kept..]) {
                Ok(0) => return Ok(false),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let hay = &buf[..kept + n];
            if first.is_in(hay)
                || run_byte_escape(hay, 0).is_some()
                || (tool_calls && memchr::memmem::find(hay, b"toolCall").is_some())
            {
                return Ok(true);
            }
            let keep = overlap.min(hay.len());
            let end = hay.len();
            buf.copy_within(end - keep..end, 0);
            kept = keep;
        }
    }

    /// The lines (byte ranges, without their `\n`) that may hold a candidate,
    /// in order: found by searching the whole text for the longest run, for
    /// `\u` escapes that may hide one (`run_byte_escape`) and, when tool calls are searched, for
    /// `toolCall` (their text is made, not written); every line when there is
    /// no run.
    fn candidate_lines(&self, bytes: &[u8]) -> Vec<(usize, usize)> {
        let line_end =
            |at: usize| memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let mut lines = Vec::new();
        let Some(first) = self.filter.finders.first() else {
            let mut start = 0;
            while start < bytes.len() {
                let end = line_end(start);
                lines.push((start, end));
                start = end + 1;
            }
            return lines;
        };
        let mut lines_holding = |find: &dyn Fn(usize) -> Option<usize>| {
            let mut from = 0;
            while let Some(at) = find(from) {
                let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
                let end = line_end(at);
                lines.push((start, end));
                from = end + 1;
            }
        };
        if self.fields.has(Field::ToolCall) && as_written(&first.run) {
            // A tool call that may match holds the run as its line does, or
            // the line has an escape its text writes otherwise (see
            // `tool_calls_may_match`), of which those of run bytes are some:
            // both in one pass where the finder has one.
            if first.cases_or_escapes.is_some() {
                lines_holding(&|from| first.run_or_escape_from(bytes, from));
            } else {
                lines_holding(&|from| first.find_from(bytes, from));
                lines_holding(&|from| tool_call_escape(bytes, from));
            }
        } else {
            lines_holding(&|from| first.find_from(bytes, from));
            lines_holding(&|from| run_byte_escape(bytes, from));
            if self.fields.has(Field::ToolCall) {
                let calls = memchr::memmem::Finder::new(b"toolCall");
                lines_holding(&|from| calls.find(bytes.get(from..)?).map(|i| from + i));
            }
        }
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// Whether a tool call may match: its text made here as JavaScript makes it
    /// (`name + " " + JSON.stringify(arguments ?? {})`), so that the many calls
    /// that cannot match are not handed over to be parsed and written again.
    fn admits_tool_call(&self, s: &[u8], name: Value, arguments: Value) -> bool {
        if self.filter.is_empty() {
            return true;
        }
        let mut text = name.text(s).unwrap_or_default().into_owned();
        text.push(b' ');
        match arguments.is_set().then(|| json::parse(arguments.raw(s))) {
            None | Some(Ok(JsValue::Null)) => text.extend_from_slice(b"{}"),
            Some(Ok(value)) => json_text::write_value(&mut text, &value),
            // What JavaScript cannot parse is its to report, as before.
            Some(Err(_)) => return true,
        }
        self.filter.holds_all(&text)
    }

    fn scan_line(&self, offset: u64, s: &[u8], out: &mut FileCandidates) {
        let mut cur = Cursor::new(s);
        let Ok([kind, id, timestamp, message, summary, content]) = read_members(
            &mut cur,
            [
                b"type",
                b"id",
                b"timestamp",
                b"message",
                b"summary",
                b"content",
            ],
        ) else {
            return;
        };
        cur.skip_ws();
        if cur.i != s.len() {
            return; // JSON.parse rejects what follows the object
        }
        let fields = self.fields;
        // Blocks found: (field, block index, text, arguments).
        let mut found: Found = Vec::new();
        let mut role = kind;
        let mut tool_name = Value::default();
        let mut admit = |field: Field, index: u32, text: Value, found: &mut Found| {
            if let Some((a, b, escaped)) = text.string {
                if self.filter.admits_string(&s[a..b], escaped) {
                    found.push((field, index, text, Value::default()));
                }
            }
        };
        // String content or each text block, as one field.
        let text_blocks = |field: Field, content: Value, found: &mut Found, admit: &mut Admit| {
            if content.string.is_some() {
                admit(field, 0, content, found);
            } else if content.is_array(s) {
                for (k, block) in elements_of(s, &content).iter().enumerate() {
                    if !block.is_object(s) {
                        continue;
                    }
                    let [t, text] = members_of(s, block, [b"type", b"text"]);
                    if t.is_str(s, b"text") {
                        admit(field, k as u32, text, found);
                    }
                }
            }
        };
        if kind.is_str(s, b"message") {
            if !message.is_object(s) {
                return;
            }
            let [r, content, output, name] =
                members_of(s, &message, [b"role", b"content", b"output", b"toolName"]);
            role = r;
            tool_name = name;
            let Some(name) = r.text(s) else { return };
            match &*name {
                b"user" if fields.has(Field::Text) => {
                    text_blocks(Field::Text, content, &mut found, &mut admit)
                }
                b"toolResult" if fields.has(Field::ToolResult) => {
                    text_blocks(Field::ToolResult, content, &mut found, &mut admit)
                }
                b"custom" | b"hookMessage" if fields.has(Field::Custom) => {
                    text_blocks(Field::Custom, content, &mut found, &mut admit)
                }
                b"bashExecution" if fields.has(Field::Custom) => {
                    admit(Field::Custom, 0, output, &mut found)
                }
                b"assistant" => {
                    if content.string.is_some() {
                        if fields.has(Field::Text) {
                            admit(Field::Text, 0, content, &mut found);
                        }
                    } else if content.is_array(s) {
                        for (k, block) in elements_of(s, &content).iter().enumerate() {
                            if !block.is_object(s) {
                                continue;
                            }
                            let [t, text, thinking, name, arguments] = members_of(
                                s,
                                block,
                                [b"type", b"text", b"thinking", b"name", b"arguments"],
                            );
                            let Some(t) = t.text(s) else { continue };
                            let k = k as u32;
                            match &*t {
                                b"text" if fields.has(Field::Text) => {
                                    admit(Field::Text, k, text, &mut found)
                                }
                                b"thinking" if fields.has(Field::Thinking) => {
                                    admit(Field::Thinking, k, thinking, &mut found)
                                }
                                b"toolCall"
                                    if fields.has(Field::ToolCall)
                                        && name.string.is_some()
                                        && self.admits_tool_call(s, name, arguments) =>
                                {
                                    found.push((Field::ToolCall, k, name, arguments))
                                }
                                _ => {}
                            }
                        }
                    }
                }
                _ => {}
            }
        } else if kind.is_str(s, b"compaction") || kind.is_str(s, b"branch_summary") {
            if fields.has(Field::Summary) {
                admit(Field::Summary, 0, summary, &mut found);
            }
        } else if kind.is_str(s, b"custom_message") && fields.has(Field::Custom) {
            text_blocks(Field::Custom, content, &mut found, &mut admit);
        }
        if found.is_empty() {
            return;
        }
        let entry = out.entries.len() as u32;
        let spans = EntrySpans {
            offset,
            id: out.push_json(id.raw(s)),
            timestamp: out.push_json(timestamp.raw(s)),
            role: out.push_json(role.raw(s)),
            tool_name: out.push_json(tool_name.raw(s)),
        };
        out.entries.push(spans);
        for (field, block_index, text, arguments) in found {
            let (text, ascii) = out.push_text(&text.text(s).unwrap_or_default());
            let arguments = out.push_json(arguments.raw(s));
            out.candidates.push(Candidate {
                entry,
                field,
                block_index,
                text,
                ascii,
                arguments,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: FieldSet = FieldSet(0b11_1111);

    fn texts(filter: &Prefilter, fields: FieldSet, file: &str) -> Vec<(u32, Field, u32, String)> {
        let out = FileGrep { filter, fields }.scan(file.as_bytes(), &|| false);
        out.candidates
            .iter()
            .map(|c| {
                let e = &out.entries[c.entry as usize];
                let (a, b) = (c.text.0 as usize, c.text.1 as usize);
                let t = if c.ascii {
                    String::from_utf8_lossy(&out.json[a..b]).into_owned()
                } else {
                    String::from_utf16_lossy(&out.texts[a..b])
                };
                let line = file.as_bytes()[..e.offset as usize]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count() as u32;
                (line, c.field, c.block_index, t)
            })
            .collect()
    }

    #[test]
    fn literal_runs_split_on_what_json_may_escape() {
        let p = Prefilter::literal("Say \"hi\"/now", true);
        assert_eq!(
            p.runs(),
            vec![b"say ".to_vec(), b"now".to_vec(), b"hi".to_vec()]
        );
        assert!(Prefilter::literal("日本", true).is_empty());
    }

    #[test]
    fn a_caseless_run_is_found_where_its_parts_overlap() {
        // `bab` (the part from the rarest byte) is found at 1, its run `abab`
        // does not fit there; found again at 3, inside the first, where it does.
        let filler = "q".repeat(100);
        for hay in ["qBaBaB", "qbabab", "ABABABX", "zzzzzZ"] {
            let hay = format!("{filler}{hay}{filler}");
            for run in ["abab", "ababx", "zzzzzz"] {
                let want =
                    memchr::memmem::find(hay.to_ascii_lowercase().as_bytes(), run.as_bytes());
                let finder = RunFinder::new(run.as_bytes().to_vec(), true);
                assert_eq!(finder.find_from(hay.as_bytes(), 0), want, "{run} in {hay}");
            }
        }
    }

    #[test]
    fn one_pass_for_a_run_and_escapes_finds_the_first_of_either() {
        let mut seed = 11u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let pieces: [&[u8]; 12] = [
            b"zeb", b"ZEBRA", b"zebra", b"\\u001b", b"\\u0041", b"\\u0009", b"\\uD800", b"\\ud800",
            b"\\u00", b"raz", b"\"id\":", b"eBRaz",
        ];
        for _ in 0..4000 {
            let mut hay = Vec::new();
            let long = next(3) == 0;
            for _ in 0..next(if long { 80 } else { 8 }) {
                hay.extend_from_slice(pieces[next(pieces.len() as u64) as usize]);
            }
            // The part looked for is the run's start, or its end (`raz`).
            let run = [&b"zebra"[..], b"ebraz"][next(2) as usize];
            let finder = RunFinder::new(run.to_vec(), true);
            assert!(finder.cases_or_escapes.is_some());
            let from = next(hay.len() as u64 + 1) as usize;
            let run = finder.find_from(&hay, from);
            let escape = tool_call_escape(&hay, from);
            let want = match (run, escape) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            assert_eq!(
                finder.run_or_escape_from(&hay, from),
                want,
                "{} from {from}",
                String::from_utf8_lossy(&hay)
            );
        }
    }

    #[test]
    fn run_finder_finds_what_a_lowercased_search_finds() {
        let naive = |hay: &[u8], run: &[u8], fold: bool| {
            let hay: Vec<u8> = if fold {
                hay.to_ascii_lowercase()
            } else {
                hay.to_vec()
            };
            memchr::memmem::find(&hay, run)
        };
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        // Runs of letters, of other bytes (found by their caseless part), and of both.
        let alphabet = b"aAbBzZ 1-_\"\xc3\x9f";
        for _ in 0..6000 {
            // Some long enough for the SIMD searches' own loops.
            let len = if next(4) == 0 {
                64 + next(300)
            } else {
                next(40)
            };
            let hay: Vec<u8> = (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect();
            let run: Vec<u8> = (0..1 + next(5))
                .map(|_| alphabet[next(10) as usize])
                .collect();
            for fold in [false, true] {
                let run = if fold {
                    run.to_ascii_lowercase()
                } else {
                    run.clone()
                };
                let finder = RunFinder::new(run.clone(), fold);
                assert_eq!(
                    finder.find_from(&hay, 0),
                    naive(&hay, &run, fold),
                    "{hay:?} {run:?} {fold}"
                );
                let from = next(hay.len() as u64 + 2) as usize;
                let after = hay.get(from..).and_then(|rest| naive(rest, &run, fold));
                assert_eq!(
                    finder.find_from(&hay, from),
                    after.map(|i| from + i),
                    "{hay:?} {run:?} {fold} from {from}"
                );
            }
        }
    }

    #[test]
    fn only_escapes_of_run_bytes_need_decoding() {
        assert_eq!(run_byte_escape(br#"a\u0041b"#, 0), Some(1));
        assert_eq!(
            run_byte_escape(br#"\u001b[0m \u00e9 \u2028 \u0022 \u005C \u002f"#, 0),
            None
        );
        assert_eq!(run_byte_escape(br#"\u001b \u007E"#, 0), Some(7));
        assert_eq!(run_byte_escape(br#"\u0041"#, 1), None);
        // A run written with an escape is still found, only by decoding.
        let filter = Prefilter::literal("deploy", true);
        let file = r#"{"type":"message","message":{"role":"user","content":"d\u0065ploy \u001b"}}"#;
        assert_eq!(
            texts(&filter, ALL, file),
            vec![(0, Field::Text, 0, "deploy \u{1b}".to_string())]
        );
        let file = r#"{"type":"message","message":{"role":"user","content":"dep\u00e9loy"}}"#;
        assert!(texts(&filter, ALL, file).is_empty());
    }

    #[test]
    fn only_escapes_json_stringify_writes_otherwise_can_hide_a_tool_calls_run() {
        // Written back byte for byte, or as bytes no run holds.
        for kept in [
            r"\u001b[0m",
            r"\u00e9",
            r"\u0022",
            r"\u002f",
            r"\u2028",
            r"\ud83d\ude00",
        ] {
            assert_eq!(tool_call_escape(kept.as_bytes(), 0), None, "{kept}");
        }
        // A run byte, a short escape (\t), capital hex of a control or a lone surrogate.
        for changed in [
            r"\u0041", r"\u0009", r"\u000A", r"\u001B", r"\uD800", r"\u005A",
        ] {
            assert_eq!(
                tool_call_escape(changed.as_bytes(), 0),
                Some(0),
                "{changed}"
            );
        }
        assert_eq!(tool_call_escape(br"x\u001b \u000d", 0), Some(8));
        assert_eq!(tool_call_escape(br"\u00", 0), None, "cut short");
        // The text a call's `\u001B` makes holds `u001b`, which its line lacks.
        let file = r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","name":"run","arguments":{"c":"\u001B"}}]}}"#;
        let filter = Prefilter::literal("u001b", false);
        assert_eq!(texts(&filter, ALL, file).len(), 1);
        let file = file.replace(r"\u001B", r"\u001b[0m");
        assert_eq!(
            texts(&Prefilter::literal("zebra", true), ALL, &file).len(),
            0
        );
    }

    #[test]
    fn texts_become_the_utf16_javascript_has() {
        for text in [
            "",
            "ascii only",
            "naïve 😀 日本 ẞ",
            "a\u{10FFFF}b",
            "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}",
        ] {
            let mut out = Vec::new();
            push_utf16(&mut out, text.as_bytes());
            assert_eq!(out, text.encode_utf16().collect::<Vec<_>>());
        }
        // A lone surrogate (WTF-8 from a \ud800 escape) stays one unit.
        let mut out = vec![1];
        push_utf16(&mut out, &json::unescape(br"x\ud800y"));
        assert_eq!(out, vec![1, 0x78, 0xd800, 0x79]);
    }

    #[test]
    fn regex_runs_are_only_what_every_match_holds() {
        let runs = |body: &str| Prefilter::regex(body, false).runs();
        assert_eq!(runs("foo|bar"), Vec::<Vec<u8>>::new());
        assert_eq!(runs("abc?d"), vec![b"ab".to_vec(), b"d".to_vec()]);
        assert_eq!(
            runs("\\bfoo\\d{2,3}bar"),
            vec![b"foo".to_vec(), b"bar".to_vec()]
        );
        assert_eq!(
            runs("(a|b)xy[z]+\\x41q"),
            vec![b"xy".to_vec(), b"q".to_vec()]
        );
        assert_eq!(runs("(?<=ab)cd\\1e"), vec![b"cd".to_vec(), b"e".to_vec()]);
        assert_eq!(
            runs("a.b^c$"),
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
        );
        assert_eq!(
            runs("\\u0041bc\\u{42}d\\cJe\\k<n>f\\p{L}g"),
            vec![
                b"bc".to_vec(),
                b"d".to_vec(),
                b"e".to_vec(),
                b"f".to_vec(),
                b"g".to_vec()
            ]
        );
        assert_eq!(runs("ab*"), vec![b"a".to_vec()]);
    }

    #[test]
    fn a_tool_results_entry_carries_its_tool_name() {
        let file = concat!(
            r#"{"type":"message","id":"r","message":{"role":"toolResult","toolName":"session_search","content":[{"type":"text","text":"me"}]}}"#,
            "\n",
            r#"{"type":"message","id":"u","message":{"role":"user","content":"me"}}"#,
            "\n",
        );
        let filter = Prefilter::literal("me", true);
        let out = FileGrep {
            filter: &filter,
            fields: ALL,
        }
        .scan(file.as_bytes(), &|| false);
        let names: Vec<&[u8]> = out
            .entries
            .iter()
            .map(|e| &out.json[e.tool_name.0 as usize..e.tool_name.1 as usize])
            .collect();
        assert_eq!(names, vec![&b"\"session_search\""[..], &b""[..]]);
    }

    #[test]
    fn blocks_follow_the_field_rules_in_content_order() {
        let file = concat!(
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/x"}"#,
            "\n",
            r#"{"type":"message","id":"a","message":{"role":"user","content":"find ME"}}"#,
            "\n",
            r#"{"type":"message","id":"b","message":{"role":"assistant","content":[{"type":"thinking","thinking":"me"},{"type":"text","text":"me too"},{"type":"toolCall","name":"bash","arguments":{"c":"mE"}}]}}"#,
            "\n",
            r#"{"type":"compaction","summary":"summary me","id":"c"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"image"},{"type":"text","text":"m\u0045"}]}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"bashExecution","output":"me out"}}"#,
            "\n",
            r#"{"type":"custom_message","content":[{"type":"text","text":"mE"}]}"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":"me"}} x"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":"no"}}"#,
            "\n",
        );
        let filter = Prefilter::literal("me", true);
        let got = texts(&filter, ALL, file);
        let want = vec![
            (1, Field::Text, 0, "find ME".to_string()),
            (2, Field::Thinking, 0, "me".to_string()),
            (2, Field::Text, 1, "me too".to_string()),
            (2, Field::ToolCall, 2, "bash".to_string()),
            (3, Field::Summary, 0, "summary me".to_string()),
            (4, Field::ToolResult, 1, "mE".to_string()),
            (5, Field::Custom, 0, "me out".to_string()),
            (6, Field::Custom, 0, "mE".to_string()),
        ];
        assert_eq!(got, want);
        let only_text = texts(&filter, FieldSet(1), file);
        assert_eq!(only_text.len(), 2);
        let case_sensitive = Prefilter::literal("ME", false);
        assert_eq!(texts(&case_sensitive, FieldSet(1), file).len(), 1);
    }

    #[test]
    fn a_tool_call_is_a_candidate_when_its_javascript_text_may_match() {
        // name + " " + JSON.stringify(arguments ?? {}): numbers and escapes as JavaScript
        // writes them, no whitespace, a missing or null `arguments` as {}.
        let call = |id: &str, arguments: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","message":{{"role":"assistant","content":[{{"type":"toolCall","name":"run","arguments":{arguments}}}]}}}}"#
            ) + "\n"
        };
        let file = [
            call("a", r#"{"n": 1e2 }"#),
            call("b", r#"{"n":2}"#),
            call("c", r#"{"p":"\u0041BC"}"#),
            call("d", "null"),
            call("e", r#"{"n":"not json""#),
            call("f", r#"{"c":"\u0009S3220"}"#),
        ]
        .concat();
        let ids = |pattern: &str| -> Vec<String> {
            let filter = Prefilter::literal(pattern, true);
            let out = FileGrep {
                filter: &filter,
                fields: ALL,
            }
            .scan(file.as_bytes(), &|| false);
            out.candidates
                .iter()
                .map(|c| {
                    let (a, b) = out.entries[c.entry as usize].id;
                    String::from_utf8_lossy(&out.json[a as usize + 1..b as usize - 1]).into_owned()
                })
                .collect()
        };
        assert_eq!(
            ids(":100}"),
            ["a"],
            "1e2 is written 100, its space left out"
        );
        assert_eq!(
            ids("run {\"p\":\"abc"),
            ["c"],
            "the escape decoded, case folded"
        );
        assert_eq!(ids("run {}"), ["d"], "null arguments are {{}}");
        assert_eq!(ids("zebra"), Vec::<String>::new(), "no call holds it");
        assert_eq!(
            ids("TS3220"),
            ["f"],
            "a tab written \\t: the text's, not the line's"
        );
        assert_eq!(ids("S3220"), ["f"]);
        assert_eq!(ids("100"), ["a"], "digits alone: a number written anew");
        assert_eq!(
            ids("run"),
            ["a", "b", "c", "d", "f"],
            "every call holds its name (a line JSON.parse rejects has none)"
        );
    }

    #[test]
    fn the_last_duplicate_key_counts_as_in_json_parse() {
        let file = r#"{"type":"message","message":{"role":"user","content":"x"},"message":{"role":"user","content":"needle"}}"#;
        let got = texts(&Prefilter::literal("needle", true), ALL, file);
        assert_eq!(got, vec![(0, Field::Text, 0, "needle".to_string())]);
        let file = r#"{"type":"message","message":{"role":"user","content":"needle"},"message":{"role":"user","content":"x"}}"#;
        assert!(texts(&Prefilter::literal("needle", true), ALL, file).is_empty());
    }

    /// A reader that returns at most `.1` bytes a read, as a pipe or a slow file may.
    struct Steps<'a>(&'a [u8], usize);

    impl Read for Steps<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(out.len()).min(self.1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn may_match_finds_a_sign_across_reads() {
        let filter = Prefilter::literal("Needle", true);
        let grep = |fields: FieldSet| FileGrep {
            filter: &filter,
            fields,
        };
        let mut buf = Vec::new();
        let chunk = 256 << 10;
        for at in [0, 1, chunk - 3, chunk - 1, chunk, 3 * chunk + 5] {
            for sign in [&b"nEEDLE"[..], b"\\u004eeedle", b"toolCall"] {
                let mut bytes = vec![b'x'; at];
                bytes.extend_from_slice(sign);
                bytes.extend_from_slice(&[b'y'; 100]);
                let want = sign != b"toolCall";
                for step in [usize::MAX, 7, chunk - 1] {
                    let got = grep(FieldSet(1)).may_match(&mut Steps(&bytes, step), &mut buf);
                    assert_eq!(got.unwrap(), want, "at {at}, step {step}");
                    let with_calls = grep(ALL).may_match(&mut Steps(&bytes, step), &mut buf);
                    assert!(with_calls.unwrap(), "tool calls, at {at}, step {step}");
                }
            }
        }
        let none = vec![b'n'; 2 * chunk + 11];
        assert!(!grep(ALL).may_match(&mut &none[..], &mut buf).unwrap());
        let empty = Prefilter::literal("日本", true);
        let all = FileGrep {
            filter: &empty,
            fields: FieldSet(1),
        };
        assert!(all.may_match(&mut &none[..], &mut buf).unwrap());
    }

    #[test]
    fn scan_reader_finds_what_scan_finds_whatever_the_reads() {
        let line = |id: usize, text: &str| {
            format!(
                "{{\"type\":\"message\",\"id\":\"e{id}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}"
            )
        };
        let mut file = Vec::new();
        for i in 0..3000 {
            let text = match i % 7 {
                _ if i % 1000 == 1 => format!("{} needle at the end", "x".repeat(3 << 20)),
                0 => "a needle here".to_string(),
                2 => "n\\u0065edle escaped".to_string(),
                _ => "hay".repeat(i % 50),
            };
            file.extend_from_slice(line(i, &text).as_bytes());
            file.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
        }
        file.extend_from_slice(line(9999, "needle, unterminated").as_bytes());
        let filter = Prefilter::literal("needle", true);
        let grep = FileGrep {
            filter: &filter,
            fields: FieldSet(1),
        };
        let whole = grep.scan(&file, &|| false);
        assert!(whole.candidates.len() > 800);
        let mut buf = Vec::new();
        for step in [usize::MAX, 4096, 1_000_003] {
            let read = grep
                .scan_reader(&mut Steps(&file, step), &mut buf, &|| false)
                .unwrap();
            assert_eq!(read.entries, whole.entries, "step {step}");
            assert_eq!(read.candidates, whole.candidates, "step {step}");
            assert_eq!(read.json, whole.json, "step {step}");
            assert_eq!(read.texts, whole.texts, "step {step}");
        }
    }
}
