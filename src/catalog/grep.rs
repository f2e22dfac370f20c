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

pub use super::prefilter::Prefilter;
use super::prefilter::{as_written, run_byte_escape, tool_call_escape};

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
