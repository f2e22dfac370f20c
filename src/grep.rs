//! Finding messages: which blocks of a session file may match a pattern, found
//! without building the entries.
//!
//! The match itself is JavaScript's (`text.matchAll(regexp)` with flags `gi`
//! or `g`), so it runs in V8 and is exact by construction. This module owns
//! everything before it: it walks each line's JSON once, finds the searched
//! blocks by the field rules (see `Field`), and hands over only the raw JSON of
//! those whose text may match, so that JavaScript parses a few small strings
//! instead of every line.
//!
//! "May match" is a prefilter with no false negatives: the ASCII runs every
//! match must contain (`Prefilter`). Without the `u` flag, JavaScript's
//! case-insensitive canonicalisation never maps a non-ASCII unit to an ASCII
//! one or back, so an ASCII run matches only ASCII text, equal up to ASCII case.
//! A run of characters that JSON never escapes appears in the raw bytes of the
//! string unless one of them was written as `\uXXXX`: such strings are decoded
//! before looking.

use std::borrow::Cow;

use crate::json::{self, Cursor, SyntaxError};

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

/// The ASCII runs every match of a pattern contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefilter {
    /// Lowercased when `fold`.
    needles: Vec<Vec<u8>>,
    fold: bool,
}

impl Prefilter {
    /// For a literal pattern (`escapeRegExp(pattern)`): its maximal runs.
    pub fn literal(pattern: &str, fold: bool) -> Prefilter {
        let needles = pattern
            .as_bytes()
            .split(|&b| !is_run_byte(b))
            .filter(|run| !run.is_empty())
            .map(|run| run.to_vec())
            .collect();
        Prefilter::new(needles, fold)
    }

    /// For the body of a regular expression (no `u` flag): the literal runs of
    /// its top-level sequence, outside groups, classes and escapes, without a
    /// character a quantifier makes optional. A top-level alternative means no
    /// run is required. Anything unclear ends a run: fewer needles is only
    /// slower, never wrong.
    pub fn regex(body: &str, fold: bool) -> Prefilter {
        Prefilter::new(regex_runs(body.as_bytes()), fold)
    }

    fn new(mut needles: Vec<Vec<u8>>, fold: bool) -> Prefilter {
        if fold {
            needles.iter_mut().for_each(|n| n.make_ascii_lowercase());
        }
        // Longest first: the likeliest to reject.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        Prefilter { needles, fold }
    }

    /// Nothing to look for: every block is a candidate.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Whether text whose raw bytes (JSON text or decoded WTF-8) are `raw` may
    /// match; `scratch` holds its lowercase copy.
    fn holds_all(&self, raw: &[u8], scratch: &mut Vec<u8>) -> bool {
        let hay: &[u8] = if self.fold
            && self
                .needles
                .iter()
                .any(|n| n.iter().any(u8::is_ascii_alphabetic))
        {
            scratch.clear();
            scratch.extend(raw.iter().map(u8::to_ascii_lowercase));
            scratch
        } else {
            raw
        };
        self.needles
            .iter()
            .all(|n| memchr::memmem::find(hay, n).is_some())
    }

    /// Whether a JSON string body (between the quotes) may match.
    fn admits_string(&self, body: &[u8], escaped: bool, scratch: &mut Vec<u8>) -> bool {
        if self.needles.is_empty() {
            return true;
        }
        if escaped && memchr::memmem::find(body, b"\\u").is_some() {
            return self.holds_all(&json::unescape(body), scratch);
        }
        self.holds_all(body, scratch)
    }

    /// Whether a whole line may hold a matching string: a quick look before
    /// walking it (false positives are fine, false negatives are not).
    fn admits_line(&self, line: &[u8], scratch: &mut Vec<u8>) -> bool {
        self.needles.is_empty()
            || memchr::memmem::find(line, b"\\u").is_some()
            || self.holds_all(line, scratch)
    }
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
    /// A JSON string (or, for a tool call, its name).
    pub text: Span,
    /// A tool call's arguments (missing: `{}`).
    pub arguments: Span,
}

/// What JavaScript needs of a candidate's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySpans {
    /// Line number, from 0.
    pub line: u32,
    pub id: Span,
    pub timestamp: Span,
    /// The message's role, or the entry's type.
    pub role: Span,
}

/// The candidates of one file, in file order and content order.
#[derive(Debug, Default)]
pub struct FileCandidates {
    /// Raw JSON texts the spans point into.
    pub json: Vec<u8>,
    pub entries: Vec<EntrySpans>,
    pub candidates: Vec<Candidate>,
}

impl FileCandidates {
    fn push_json(&mut self, text: &[u8]) -> Span {
        if text.is_empty() {
            return (0, 0);
        }
        let start = self.json.len() as u32;
        self.json.extend_from_slice(text);
        (start, self.json.len() as u32)
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
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        return Err(SyntaxError);
    }
    cur.i += 1;
    cur.skip_ws();
    if cur.peek() == Some(b'}') {
        cur.i += 1;
        return Ok(found);
    }
    loop {
        cur.skip_ws();
        if cur.peek() != Some(b'"') {
            return Err(SyntaxError);
        }
        let key = json::parse_string_ref(cur)?;
        cur.skip_ws();
        if cur.peek() != Some(b':') {
            return Err(SyntaxError);
        }
        cur.i += 1;
        let value = read_value(cur)?;
        if let Some(k) = keys.iter().position(|k| **k == *key) {
            found[k] = value;
        }
        cur.skip_ws();
        match cur.peek() {
            Some(b',') => cur.i += 1,
            Some(b'}') => {
                cur.i += 1;
                return Ok(found);
            }
            _ => return Err(SyntaxError),
        }
    }
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
        let mut scratch = Vec::new();
        for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if n % 1024 == 1023 && stop() {
                break;
            }
            if line.len() < 2 {
                continue;
            }
            let tool_calls = self.fields.has(Field::ToolCall)
                && memchr::memmem::find(line, b"toolCall").is_some();
            if !tool_calls && !self.filter.admits_line(line, &mut scratch) {
                continue;
            }
            let line = json::decode_lossy(line);
            self.scan_line(n as u32, &line, &mut out, &mut scratch);
        }
        out
    }

    fn scan_line(&self, n: u32, s: &[u8], out: &mut FileCandidates, scratch: &mut Vec<u8>) {
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
        let mut admit = |field: Field, index: u32, text: Value, found: &mut Found| {
            if let Some((a, b, escaped)) = text.string {
                if self.filter.admits_string(&s[a..b], escaped, scratch) {
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
            let [r, content, output] = members_of(s, &message, [b"role", b"content", b"output"]);
            role = r;
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
                                    if fields.has(Field::ToolCall) && name.string.is_some() =>
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
            line: n,
            id: out.push_json(id.raw(s)),
            timestamp: out.push_json(timestamp.raw(s)),
            role: out.push_json(role.raw(s)),
        };
        out.entries.push(spans);
        for (field, block_index, text, arguments) in found {
            let text = out.push_json(text.raw(s));
            let arguments = out.push_json(arguments.raw(s));
            out.candidates.push(Candidate {
                entry,
                field,
                block_index,
                text,
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
                let t = &out.json[c.text.0 as usize..c.text.1 as usize];
                (
                    e.line,
                    c.field,
                    c.block_index,
                    String::from_utf8_lossy(t).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn literal_runs_split_on_what_json_may_escape() {
        let p = Prefilter::literal("Say \"hi\"/now", true);
        assert_eq!(
            p.needles,
            vec![b"say ".to_vec(), b"now".to_vec(), b"hi".to_vec()]
        );
        assert!(Prefilter::literal("日本", true).is_empty());
    }

    #[test]
    fn regex_runs_are_only_what_every_match_holds() {
        let runs = |body: &str| Prefilter::regex(body, false).needles;
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
    fn blocks_follow_the_field_rules_in_content_order() {
        let file = concat!(
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/x"}"#,
            "\n",
            r#"{"type":"message","id":"a","message":{"role":"user","content":"find ME"}}"#,
            "\n",
            r#"{"type":"message","id":"b","message":{"role":"assistant","content":[{"type":"thinking","thinking":"me"},{"type":"text","text":"me too"},{"type":"toolCall","name":"bash","arguments":{"c":"x"}}]}}"#,
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
            (1, Field::Text, 0, r#""find ME""#.to_string()),
            (2, Field::Thinking, 0, r#""me""#.to_string()),
            (2, Field::Text, 1, r#""me too""#.to_string()),
            (2, Field::ToolCall, 2, r#""bash""#.to_string()),
            (3, Field::Summary, 0, r#""summary me""#.to_string()),
            (4, Field::ToolResult, 1, r#""m\u0045""#.to_string()),
            (5, Field::Custom, 0, r#""me out""#.to_string()),
            (6, Field::Custom, 0, r#""mE""#.to_string()),
        ];
        assert_eq!(got, want);
        let only_text = texts(&filter, FieldSet(1), file);
        assert_eq!(only_text.len(), 2);
        let case_sensitive = Prefilter::literal("ME", false);
        assert_eq!(texts(&case_sensitive, FieldSet(1), file).len(), 1);
    }

    #[test]
    fn the_last_duplicate_key_counts_as_in_json_parse() {
        let file = r#"{"type":"message","message":{"role":"user","content":"x"},"message":{"role":"user","content":"needle"}}"#;
        let got = texts(&Prefilter::literal("needle", true), ALL, file);
        assert_eq!(got, vec![(0, Field::Text, 0, r#""needle""#.to_string())]);
        let file = r#"{"type":"message","message":{"role":"user","content":"needle"},"message":{"role":"user","content":"x"}}"#;
        assert!(texts(&Prefilter::literal("needle", true), ALL, file).is_empty());
    }
}
