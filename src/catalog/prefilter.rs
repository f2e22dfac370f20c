//! The prefilter of a search: the ASCII runs every match of a pattern holds,
//! found in raw JSON text without decoding it (see `grep.rs` for why that has
//! no false negatives), and the escapes that can hide a run from it.

use crate::format::json;

/// Bytes JSON may write as themselves, and that JavaScript's canonicalisation
/// keeps ASCII: printable ASCII except `"`, `\` and `/` (which may come from
/// the escapes `\"`, `\\` and `\/`).
pub(super) fn is_run_byte(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\\' | b'/')
}

/// Finds one ASCII run in bytes, up to ASCII case when `fold`: without
/// copying the text, by a SIMD search for a part of the run (in every case
/// when `fold`), each hit checked in place.
#[derive(Debug, Clone)]
pub(super) struct RunFinder {
    /// Lowercased when `fold`.
    pub(super) run: Vec<u8>,
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
    /// Every case of a part of the run and, after them, the starts of the
    /// escapes that could put the run into a tool call's text
    /// (`tool_call_escapes`): one pass over a text for both. With how many of
    /// its patterns are cases of the run, and where the part starts in it.
    pub(super) cases_or_escapes: Option<CasesOrEscapes>,
}

#[derive(Debug, Clone)]
pub(super) struct CasesOrEscapes {
    searcher: aho_corasick::packed::Searcher,
    variants: usize,
    at: usize,
    /// Where an escape begins before its pattern's start: 1 when the
    /// patterns leave out the backslash.
    backslash: usize,
}

/// What `tool_call_escape` looks for begins so.
const ESCAPE_STARTS: [&[u8]; 3] = [b"\\u0", b"\\ud", b"\\uD"];

/// The starts of the escapes that could put `run` into a tool call's text
/// where its line lacks it, five bytes each, looked for without their
/// backslash (Teddy's fingerprint is at most four bytes): then none is
/// `u001`, as in the colour codes (`\u001b`) that fill tool output, where a
/// one-pass search for `\u0` stops by the million. `None` when the run needs
/// `\u0`, `\ud` and `\uD` (`ESCAPE_STARTS`).
///
/// `JSON.stringify` writes a tool call's arguments back as their line holds
/// them but for the escapes it writes otherwise (`written_otherwise`), so a
/// run the line lacks must hold bytes such an escape makes: a byte of the run
/// written as itself (`\u00XX`, XX from 20 to 7e: the start `\u00` and the
/// high digit), or the part after the backslash of what it writes for a
/// control or a lone surrogate: `\t` and the like, `\u001b` and the like
/// (`\` is no run byte, so the run starts there). Those are `\u000` for the
/// short forms (a run beginning with b, t, n, f or r), and `\u0`, `\ud`, `\uD`
/// for the hex forms (a run beginning with u or a hex digit: `None`).
fn tool_call_escapes(run: &[u8], fold: bool) -> Option<Vec<Vec<u8>>> {
    let first = if fold {
        run.first()?.to_ascii_lowercase()
    } else {
        *run.first()?
    };
    if first == b'u' || first.is_ascii_digit() || (b'a'..=b'f').contains(&first) {
        return None;
    }
    let mut escapes: Vec<Vec<u8>> = Vec::new();
    let mut add = |unit: u8| {
        // Hex digits in either case.
        for escape in [format!("\\u{unit:04x}"), format!("\\u{unit:04X}")] {
            let escape = escape.into_bytes();
            if !escapes.contains(&escape) {
                escapes.push(escape);
            }
        }
    };
    for &b in run {
        if fold {
            add(b.to_ascii_lowercase());
            add(b.to_ascii_uppercase());
        } else {
            add(b);
        }
    }
    if b"btnfr".contains(&first) {
        for unit in [0x08, 0x09, 0x0a, 0x0c, 0x0d] {
            add(unit);
        }
    }
    Some(escapes)
}

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
        // Four bytes of the run when its escapes' starts are four bytes too
        // (Teddy's fingerprint is as long as the shortest pattern, at most four).
        let escapes = tool_call_escapes(&run, fold);
        let cases_or_escapes = window.and_then(|(at, end)| {
            let (escapes, backslash) = match &escapes {
                // Their last three bytes, which `\u001b` has not.
                Some(escapes) => (escapes.iter().map(|e| &e[3..]).collect(), 3),
                None => (ESCAPE_STARTS.to_vec(), 0),
            };
            let (searcher, variants) = every_case(&run[at..end], &escapes)?;
            Some(CasesOrEscapes {
                searcher,
                variants,
                at,
                backslash,
            })
        });
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
    pub(super) fn find_from(&self, hay: &[u8], from: usize) -> Option<usize> {
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

    pub(super) fn is_in(&self, hay: &[u8]) -> bool {
        self.find_from(hay, 0).is_some()
    }

    fn fits(&self, hay: &[u8], start: usize) -> bool {
        let n = self.run.len();
        start + n <= hay.len() && hay[start..start + n].eq_ignore_ascii_case(&self.run)
    }

    /// Where, at or after `from`, the run starts or an escape starts that could
    /// put it into a tool call's text (`tool_call_escapes`), in one pass
    /// (`cases_or_escapes`, which the caller knows is there).
    pub(super) fn run_or_escape_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        let CasesOrEscapes {
            searcher,
            variants,
            at,
            backslash,
        } = self.cases_or_escapes.as_ref()?;
        let mut next = from;
        while next < hay.len() {
            let Some(found) = searcher.find_in(hay, aho_corasick::Span::from(next..hay.len()))
            else {
                break;
            };
            let s = found.start();
            if found.pattern().as_usize() < *variants {
                if s >= from + at && self.fits(hay, s - at) {
                    return Some(s - at);
                }
            } else {
                // Five-byte starts are looked for without their backslash.
                let escape = s
                    .checked_sub(*backslash)
                    .filter(|&e| e >= from && hay[e..].starts_with(&b"\\u0"[..*backslash.max(&1)]));
                if escape.is_some_and(|e| {
                    escape_at(hay, e)
                        .is_some_and(|(unit, capital)| written_otherwise(unit, capital))
                }) {
                    return escape;
                }
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
pub(super) fn run_byte_escape(raw: &[u8], from: usize) -> Option<usize> {
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
pub(super) fn tool_call_escape(raw: &[u8], from: usize) -> Option<usize> {
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
    pub(super) finders: Vec<RunFinder>,
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
    pub(super) fn holds_all(&self, raw: &[u8]) -> bool {
        self.finders.iter().all(|f| f.is_in(raw))
    }

    /// Whether a JSON string body (between the quotes) may match.
    pub(super) fn admits_string(&self, body: &[u8], escaped: bool) -> bool {
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
    pub(super) fn admits_line(&self, line: &[u8]) -> bool {
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
    pub(super) fn tool_calls_may_match(&self, line: &[u8]) -> bool {
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
pub(super) fn as_written(run: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::seeded_numbers as numbers;

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
    fn one_pass_finds_every_text_whose_tool_call_holds_the_run() {
        // Pieces of a JSON string, each with what `JSON.stringify` writes for
        // it once parsed (controls short or in small hex, lone surrogates in
        // small hex, the rest as itself).
        let pieces: [(&[u8], &[u8]); 20] = [
            (b"zeb", b"zeb"),
            (b"ZEBRA", b"ZEBRA"),
            (b"ra", b"ra"),
            (b"\\u001b", b"\\u001b"),
            (b"\\u001B", b"\\u001b"),
            (b"\\u001E", b"\\u001e"),
            (b"\\u0041", b"A"),
            (b"\\u0062", b"b"),
            (b"\\u0052", b"R"),
            (b"\\u007A", b"z"),
            (b"\\u0009", b"\\t"),
            (b"\\u0008", b"\\b"),
            (b"\\u000d", b"\\r"),
            (b"\\uD800", b"\\ud800"),
            (b"\\udBad", b"\\udbad"),
            (b"\\u0030", b"0"),
            (b"001", b"001"),
            (b"\\\"id\\\":", b"\\\"id\\\":"),
            (b"eBRaz", b"eBRaz"),
            (b"ad", b"ad"),
        ];
        let runs: [&[u8]; 9] = [
            b"zebra", b"ebraz", b"bra", b"raz", b"tzeb", b"u001e", b"dbadzeb", b"rabz", b"0zeb",
        ];
        let mut next = numbers(11);
        let mut told = [0usize; 2];
        for _ in 0..20_000 {
            let (mut raw, mut made) = (Vec::new(), Vec::new());
            let long = next(3) == 0;
            for _ in 0..1 + next(if long { 60 } else { 8 }) {
                let (r, m) = pieces[next(pieces.len() as u64) as usize];
                raw.extend_from_slice(r);
                made.extend_from_slice(m);
            }
            let run = runs[next(runs.len() as u64) as usize];
            let fold = next(4) != 0;
            let finder = RunFinder::new(run.to_vec(), fold);
            let Some(one_pass) = finder
                .cases_or_escapes
                .is_some()
                .then(|| finder.run_or_escape_from(&raw, 0))
            else {
                continue;
            };
            let holds = |text: &[u8]| {
                let (text, run) = if fold {
                    (text.to_ascii_lowercase(), run.to_ascii_lowercase())
                } else {
                    (text.to_vec(), run.to_vec())
                };
                memchr::memmem::find(&text, &run)
            };
            let what = || {
                format!(
                    "{} in {}",
                    String::from_utf8_lossy(run),
                    String::from_utf8_lossy(&raw)
                )
            };
            // Where the tool call's text holds the run, the one pass stops.
            if holds(&made).is_some() {
                assert!(one_pass.is_some(), "{} (fold {fold})", what());
                told[usize::from(holds(&raw).is_none())] += 1;
            }
            // Where the line holds it, the one pass stops there or before.
            if let Some(at) = finder.find_from(&raw, 0) {
                assert!(one_pass.is_some_and(|p| p <= at), "{}", what());
            }
        }
        // Both kinds were met: the run written, and the run only an escape makes.
        assert!(told[0] > 100 && told[1] > 100, "{told:?}");
    }

    #[test]
    fn only_runs_a_hex_form_could_begin_need_every_escape_start() {
        assert_eq!(tool_call_escapes(b"deploy", true), None);
        assert_eq!(tool_call_escapes(b"u001", false), None);
        assert_eq!(tool_call_escapes(b"7z", false), None);
        let escapes = |run: &[u8], fold| {
            let mut e: Vec<String> = tool_call_escapes(run, fold)
                .unwrap()
                .iter()
                .map(|e| String::from_utf8_lossy(e).into_owned())
                .collect();
            e.sort();
            e
        };
        assert_eq!(
            escapes(b"zeb", true),
            [
                "\\u0042", "\\u0045", "\\u005A", "\\u005a", "\\u0062", "\\u0065", "\\u007A",
                "\\u007a"
            ]
        );
        assert_eq!(
            escapes(b"zeb", false),
            ["\\u0062", "\\u0065", "\\u007A", "\\u007a"]
        );
        // A run a short form may begin (`\t`): those controls' escapes too.
        assert_eq!(
            escapes(b"t", false),
            [
                "\\u0008", "\\u0009", "\\u000A", "\\u000C", "\\u000D", "\\u000a", "\\u000c",
                "\\u000d", "\\u0074"
            ]
        );
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
        let mut next = numbers(7);
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
}
