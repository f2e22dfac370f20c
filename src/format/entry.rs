//! What the index needs to know about one session entry, read from its JSON line
//! without building the entry: type, id, parentId, role and the few fields the
//! tree, label and context algorithms look at.

use std::borrow::Cow;

use crate::format::json::{self, Cursor, SyntaxError};
use crate::format::json_text;

/// A JavaScript value used as a Map key by the reference (`byId.get(entry.id)`).
/// Strings are themselves; anything else gets a NUL-prefixed spelling that no
/// real id uses, so `undefined === undefined` and `1 === 1` still match.
pub type Key = compact_str::CompactString;

pub const UNDEFINED_KEY: &str = "\0undefined";
pub const NULL_KEY: &str = "\0null";

pub fn key_of_number(n: f64) -> Key {
    let mut out = Vec::new();
    json_text::write_number(&mut out, n);
    let text = if n.is_nan() {
        "NaN".to_string()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        String::from_utf8(out).unwrap_or_default()
    };
    format!("\0{text}").into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Session,
    Message,
    ThinkingLevelChange,
    ModelChange,
    Usage,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    ContextEdit,
    Label,
    SessionInfo,
    Other,
}

impl Kind {
    pub fn from_type(t: &str) -> Kind {
        match t {
            "session" => Kind::Session,
            "message" => Kind::Message,
            "thinking_level_change" => Kind::ThinkingLevelChange,
            "model_change" => Kind::ModelChange,
            "usage" => Kind::Usage,
            "compaction" => Kind::Compaction,
            "branch_summary" => Kind::BranchSummary,
            "custom" => Kind::Custom,
            "custom_message" => Kind::CustomMessage,
            "context_edit" => Kind::ContextEdit,
            "label" => Kind::Label,
            "session_info" => Kind::SessionInfo,
            _ => Kind::Other,
        }
    }
}

/// `entry.message.role` for message entries. Reading the role of a missing or
/// null message throws in the reference, so those two are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    NotMessage,
    User,
    Assistant,
    ToolResult,
    System,
    Custom,
    HookMessage,
    BashExecution,
    /// A role that is a string, none of the above.
    Other,
    /// A message whose `role` is not a string (missing, a number ...), or a
    /// message that is no object (`entry.message?.role` is undefined).
    NotString,
    MessageUndefined,
    MessageNull,
}

impl Role {
    pub fn parse(r: &str) -> Role {
        match r {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "system" => Role::System,
            "custom" => Role::Custom,
            "hookMessage" => Role::HookMessage,
            "bashExecution" => Role::BashExecution,
            _ => Role::Other,
        }
    }

    pub fn is_nullish(self) -> bool {
        matches!(self, Role::MessageUndefined | Role::MessageNull)
    }

    pub fn is_conversation(self) -> bool {
        matches!(self, Role::User | Role::Assistant)
    }

    /// `typeof entry.message?.role === "string"`.
    pub fn is_string(self) -> bool {
        !matches!(
            self,
            Role::NotMessage | Role::NotString | Role::MessageUndefined | Role::MessageNull
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct EntryMeta {
    pub kind: Kind,
    pub id: Key,
    pub id_is_string: bool,
    pub parent: Key,
    pub parent_truthy: bool,
    pub role: Role,
    /// A label entry whose `label` is truthy sets a label; otherwise it clears one.
    pub label_truthy: bool,
    /// `new Date(timestamp).getTime()` when the timestamp is in the exact form
    /// `toISOString()` writes; `None` when only JavaScript can say.
    pub time: Option<f64>,
    /// What only a few entries have (headers, labels, compactions), kept apart:
    /// a session holds one of these per entry, most of them messages.
    rare: Option<Box<RareFields>>,
}

#[derive(Debug, Clone, PartialEq)]
struct RareFields {
    target: Key,
    first_kept: Key,
    version: f64,
    first_kept_index: Option<f64>,
}

/// The rare fields of an entry that has none of them: each getter's answer
/// without a box, and a new box's start.
static NO_RARE: RareFields = RareFields {
    target: Key::const_new(UNDEFINED_KEY),
    first_kept: Key::const_new(UNDEFINED_KEY),
    version: 1.0,
    first_kept_index: None,
};

impl EntryMeta {
    fn rare(&self) -> &RareFields {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    /// `targetId` of label and context_edit entries.
    pub fn target(&self) -> &Key {
        &self.rare().target
    }

    /// `firstKeptEntryId` of compactions.
    pub fn first_kept(&self) -> &Key {
        &self.rare().first_kept
    }

    /// The header's `version` as a number (`?? 1` applied), for migration.
    pub fn version(&self) -> f64 {
        self.rare().version
    }

    /// `firstKeptEntryIndex` of v1 compactions when it is a number.
    pub fn first_kept_index(&self) -> Option<f64> {
        self.rare().first_kept_index
    }

    /// The box, made when a field first differs from `NO_RARE`'s (none for an
    /// entry whose every rare field is as `NO_RARE` has it).
    fn rare_mut(&mut self, differs: bool) -> Option<&mut RareFields> {
        if differs && self.rare.is_none() {
            self.rare = Some(Box::new(NO_RARE.clone()));
        }
        self.rare.as_deref_mut()
    }

    pub fn set_target(&mut self, target: Key) {
        if let Some(rare) = self.rare_mut(target != NO_RARE.target) {
            rare.target = target;
        }
    }

    pub fn set_first_kept(&mut self, first_kept: Key) {
        if let Some(rare) = self.rare_mut(first_kept != NO_RARE.first_kept) {
            rare.first_kept = first_kept;
        }
    }

    pub fn set_version(&mut self, version: f64) {
        // Compared bit for bit: NaN (a version that is not a number) is kept too.
        if let Some(rare) = self.rare_mut(version.to_bits() != NO_RARE.version.to_bits()) {
            rare.version = version;
        }
    }

    pub fn set_first_kept_index(&mut self, index: Option<f64>) {
        if let Some(rare) = self.rare_mut(index != NO_RARE.first_kept_index) {
            rare.first_kept_index = index;
        }
    }

    /// What the reference sees for a truthy JSON value that is not an object
    /// (a number, a string, an array, `true`): every property is undefined.
    pub fn opaque() -> EntryMeta {
        EntryMeta {
            kind: Kind::Other,
            id: UNDEFINED_KEY.into(),
            id_is_string: false,
            parent: UNDEFINED_KEY.into(),
            parent_truthy: false,
            role: Role::NotMessage,
            label_truthy: false,
            time: None,
            rare: None,
        }
    }
}

/// The outcome of reading one line the way `JSON.parse` + `if (entry)` does.
#[derive(Debug, PartialEq)]
pub enum LineRead {
    /// Not JSON, or a falsy value (`null`, `false`, `0`, `""`): skipped.
    Skipped,
    Entry(EntryMeta),
}

/// A member value we looked at: its JS truthiness and its key spelling.
struct Seen<'a> {
    /// The string's bytes (WTF-8, borrowed when it had no escapes).
    text: Option<Cow<'a, [u8]>>,
    /// The key for non-strings.
    other: Option<Key>,
    truthy: bool,
    number: Option<f64>,
}

impl Seen<'_> {
    fn key(&self) -> Key {
        match &self.text {
            Some(t) => String::from_utf8_lossy(t).into(),
            None => self.other.clone().unwrap_or_else(|| UNDEFINED_KEY.into()),
        }
    }

    fn text_str(&self) -> Option<Cow<'_, str>> {
        self.text.as_deref().map(String::from_utf8_lossy)
    }
}

fn read_value<'a>(cur: &mut Cursor<'a>, object_counter: &mut u32) -> Result<Seen<'a>, SyntaxError> {
    cur.skip_ws();
    let start = cur.i;
    match cur.peek() {
        Some(b'"') => {
            let raw = json::parse_string_ref(cur)?;
            Ok(Seen {
                truthy: !raw.is_empty(),
                text: Some(raw),
                other: None,
                number: None,
            })
        }
        Some(b'{' | b'[') => {
            cur.skip_value()?;
            // Two distinct objects are never the same Map key.
            *object_counter += 1;
            Ok(Seen {
                text: None,
                other: Some(format!("\0object#{object_counter}").into()),
                truthy: true,
                number: None,
            })
        }
        _ => {
            cur.skip_value()?;
            let raw = &cur.s[start..cur.i];
            let (key, truthy, number): (Key, bool, Option<f64>) = match raw {
                b"null" => (NULL_KEY.into(), false, None),
                b"true" => ("\0true".into(), true, None),
                b"false" => ("\0false".into(), false, None),
                _ => {
                    let n = json::number_value(raw);
                    (key_of_number(n), n != 0.0, Some(n))
                }
            };
            Ok(Seen {
                text: None,
                other: Some(key),
                truthy,
                number,
            })
        }
    }
}

/// JavaScript's `Number(value)` for the header version, restricted to the forms
/// a session header can realistically hold.
fn version_number(seen: &Seen, raw_is_bool: Option<bool>) -> f64 {
    if let Some(n) = seen.number {
        return n;
    }
    if let Some(b) = raw_is_bool {
        return if b { 1.0 } else { 0.0 };
    }
    if let Some(t) = seen.text_str() {
        let t = t.trim();
        if t.is_empty() {
            return 0.0;
        }
        if t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return t.parse().unwrap_or(f64::NAN);
        }
    }
    f64::NAN
}

fn read_role(
    cur: &mut Cursor,
    counter: &mut u32,
    spans: &mut impl MemberSpans,
) -> Result<Role, SyntaxError> {
    cur.skip_ws();
    match cur.peek() {
        Some(b'{') => {
            let mut role = Role::NotString;
            for_each_member(cur, |key, cur| {
                cur.skip_ws();
                let start = cur.i;
                if key == b"role" {
                    let seen = read_value(cur, counter)?;
                    role = match seen.text_str() {
                        Some(t) => Role::parse(&t),
                        None => Role::NotString,
                    };
                } else {
                    cur.skip_value()?;
                }
                spans.inner(key, start, cur.i);
                Ok(())
            })?;
            Ok(role)
        }
        Some(b'n') => {
            cur.skip_value()?;
            Ok(Role::MessageNull)
        }
        _ => {
            cur.skip_value()?;
            Ok(Role::NotString)
        }
    }
}

/// Told the span of each member of a line's object and of its `message`
/// object as `read_line_with` walks them (`format::lazy` finds cuts so, while
/// the line is read anyway).
pub trait MemberSpans {
    /// A top-level member: its decoded key and its value's span in the line.
    fn top(&mut self, key: &[u8], start: usize, end: usize);
    /// A member of the top-level `message` object.
    fn inner(&mut self, key: &[u8], start: usize, end: usize);
}

impl MemberSpans for () {
    fn top(&mut self, _: &[u8], _: usize, _: usize) {}
    fn inner(&mut self, _: &[u8], _: usize, _: usize) {}
}

/// Calls `visit(key, cursor)` for each member of the object at the cursor; the
/// visitor must consume the member's value.
pub fn for_each_member<'a>(
    cur: &mut Cursor<'a>,
    mut visit: impl FnMut(&[u8], &mut Cursor<'a>) -> Result<(), SyntaxError>,
) -> Result<(), SyntaxError> {
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        return Err(SyntaxError);
    }
    cur.i += 1;
    cur.skip_ws();
    if cur.peek() == Some(b'}') {
        cur.i += 1;
        return Ok(());
    }
    loop {
        cur.skip_ws();
        let key = json::parse_string_ref(cur)?;
        cur.skip_ws();
        if cur.peek() != Some(b':') {
            return Err(SyntaxError);
        }
        cur.i += 1;
        visit(&key, cur)?;
        cur.skip_ws();
        match cur.peek() {
            Some(b',') => cur.i += 1,
            Some(b'}') => {
                cur.i += 1;
                return Ok(());
            }
            _ => return Err(SyntaxError),
        }
    }
}

/// Calls `visit(cursor)` for each element of the array at the cursor; the
/// visitor must consume the element.
pub fn for_each_element<'a>(
    cur: &mut Cursor<'a>,
    mut visit: impl FnMut(&mut Cursor<'a>) -> Result<(), SyntaxError>,
) -> Result<(), SyntaxError> {
    cur.skip_ws();
    if cur.peek() != Some(b'[') {
        return Err(SyntaxError);
    }
    cur.i += 1;
    cur.skip_ws();
    if cur.peek() == Some(b']') {
        cur.i += 1;
        return Ok(());
    }
    loop {
        cur.skip_ws();
        visit(cur)?;
        cur.skip_ws();
        match cur.peek() {
            Some(b',') => cur.i += 1,
            Some(b']') => {
                cur.i += 1;
                return Ok(());
            }
            _ => return Err(SyntaxError),
        }
    }
}

/// Reads one physical line (without its `\n`) as the reference's loader does.
///
/// The reference decodes UTF-8 with replacement characters before parsing. A
/// decoder never swallows an ASCII byte, and bytes >= 0x80 are only valid
/// inside strings either way, so the grammar can be checked on the raw bytes;
/// only the string values we keep are decoded.
pub fn read_line(line: &[u8]) -> LineRead {
    read_line_with(line, &mut ())
}

/// The meta of a line `appendMessage` wrote, read from its start only:
/// `JSON.stringify({ type: 'message', id, parentId, timestamp, message })`,
/// whose `message` is the last member, so once the message's `role` (its first
/// member, as pi's messages have it) is read nothing after it can change the
/// meta, and the content need not be walked. `None` for any other shape: read
/// the line whole. Only for lines this package stringified (no whitespace, no
/// repeated keys).
pub fn read_appended_message(line: &[u8]) -> Option<EntryMeta> {
    let mut cur = Cursor::new(line);
    let mut counter = 0u32;
    let mut meta = EntryMeta::opaque();
    cur.literal(br#"{"type":"message","id":"#).ok()?;
    let id = read_value(&mut cur, &mut counter).ok()?;
    meta.id = id.key();
    meta.id_is_string = id.text.is_some();
    cur.literal(br#","parentId":"#).ok()?;
    let parent = read_value(&mut cur, &mut counter).ok()?;
    meta.parent = parent.key();
    meta.parent_truthy = parent.truthy;
    cur.literal(br#","timestamp":"#).ok()?;
    let timestamp = read_value(&mut cur, &mut counter).ok()?;
    meta.time = timestamp.text_str().as_deref().and_then(iso_time);
    cur.literal(br#","message":{"role":"#).ok()?;
    if cur.peek() != Some(b'"') || !line.ends_with(b"}}") {
        return None;
    }
    let role = read_value(&mut cur, &mut counter).ok()?;
    meta.role = Role::parse(&role.text_str()?);
    meta.kind = Kind::Message;
    Some(meta)
}

/// `read_line`, telling `spans` where the members of an object line are (told
/// for a line it skips too).
pub fn read_line_with(line: &[u8], spans: &mut impl MemberSpans) -> LineRead {
    read_text(line, spans).unwrap_or(LineRead::Skipped)
}

fn read_text(text: &[u8], spans: &mut impl MemberSpans) -> Result<LineRead, SyntaxError> {
    let mut cur = Cursor::new(text);
    cur.skip_ws();
    let entry = match cur.peek() {
        Some(b'{') => {
            let mut meta = EntryMeta::opaque();
            let mut counter = 0u32;
            let mut kind = Kind::Other;
            let mut role = Role::MessageUndefined;
            let mut version: Option<f64> = None;
            for_each_member(&mut cur, |key, cur| {
                cur.skip_ws();
                let start = cur.i;
                match key {
                    b"type" => {
                        kind = read_value(cur, &mut counter)?
                            .text_str()
                            .map_or(Kind::Other, |t| Kind::from_type(&t))
                    }
                    b"id" => {
                        let seen = read_value(cur, &mut counter)?;
                        meta.id = seen.key();
                        meta.id_is_string = seen.text.is_some();
                    }
                    b"parentId" => {
                        let seen = read_value(cur, &mut counter)?;
                        meta.parent = seen.key();
                        meta.parent_truthy = seen.truthy;
                    }
                    b"timestamp" => {
                        let seen = read_value(cur, &mut counter)?;
                        meta.time = seen.text_str().as_deref().and_then(iso_time);
                    }
                    b"targetId" => meta.set_target(read_value(cur, &mut counter)?.key()),
                    b"label" => meta.label_truthy = read_value(cur, &mut counter)?.truthy,
                    b"firstKeptEntryId" => {
                        meta.set_first_kept(read_value(cur, &mut counter)?.key())
                    }
                    b"firstKeptEntryIndex" => {
                        meta.set_first_kept_index(read_value(cur, &mut counter)?.number)
                    }
                    b"version" => {
                        let start = cur.i;
                        let seen = read_value(cur, &mut counter)?;
                        let raw = &cur.s[start..cur.i];
                        let trimmed = raw.trim_ascii_start();
                        version = if trimmed == b"null" {
                            None
                        } else {
                            let as_bool = match trimmed {
                                b"true" => Some(true),
                                b"false" => Some(false),
                                _ => None,
                            };
                            Some(version_number(&seen, as_bool))
                        };
                    }
                    b"message" => role = read_role(cur, &mut counter, spans)?,
                    _ => cur.skip_value()?,
                }
                spans.top(key, start, cur.i);
                Ok(())
            })?;
            meta.kind = kind;
            meta.role = if meta.kind == Kind::Message {
                role
            } else {
                Role::NotMessage
            };
            meta.set_version(version.unwrap_or(1.0));
            LineRead::Entry(meta)
        }
        _ => {
            let start = cur.i;
            cur.skip_value()?;
            if primitive_truthy(&text[start..cur.i]) {
                LineRead::Entry(EntryMeta::opaque())
            } else {
                LineRead::Skipped
            }
        }
    };
    cur.skip_ws();
    if cur.i != text.len() {
        return Err(SyntaxError);
    }
    Ok(entry)
}

/// Whether a JSON value that is not an object (its valid text) is truthy.
fn primitive_truthy(raw: &[u8]) -> bool {
    match raw {
        b"null" | b"false" | b"\"\"" => false,
        b"true" => true,
        [b'"', ..] | [b'[', ..] => true,
        _ => json::number_value(raw) != 0.0,
    }
}

/// Whether `read_line` skips `line`, found without building the entry.
pub fn line_is_skipped(line: &[u8]) -> bool {
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    let start = cur.i;
    let object = cur.peek() == Some(b'{');
    if cur.skip_value().is_err() {
        return true;
    }
    let value = &line[start..cur.i];
    cur.skip_ws();
    cur.i != line.len() || (!object && !primitive_truthy(value))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Milliseconds since the epoch for `YYYY-MM-DDTHH:mm:ss.sssZ`, the only form
/// pi writes. Anything else is left to JavaScript's own date parser.
pub fn iso_time(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = &b[r];
        if part.iter().all(u8::is_ascii_digit) {
            Some(part.iter().fold(0i64, |a, &c| a * 10 + (c - b'0') as i64))
        } else {
            None
        }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59
    {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((((days * 24 + h) * 60 + mi) * 60 + sec) as f64 * 1000.0 + ms as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_skipped_agrees_with_read_line() {
        for line in [
            &b"{}"[..],
            b" {\"a\":[1,{\"b\":null}]} ",
            b"{\"a\":1,}",
            b"{\"a\" 1}",
            b"{",
            b"",
            b"   ",
            b"0",
            b"-0",
            b"0.0e5",
            b"1",
            b"\"\"",
            b"\" \"",
            b"[]",
            b"null",
            b"false",
            b"true",
            b"{} x",
            b"\"\\x\"",
            b"\"a\xffb\"",
            b"{\"type\":\"session\",\"id\":\"x\"}",
            b"01",
            b"1e999",
            b"-",
            b"[1,]",
        ] {
            assert_eq!(
                line_is_skipped(line),
                matches!(read_line(line), LineRead::Skipped),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    fn meta(line: &str) -> EntryMeta {
        match read_line(line.as_bytes()) {
            LineRead::Entry(m) => m,
            LineRead::Skipped => panic!("skipped {line}"),
        }
    }

    #[test]
    fn reads_index_fields_and_skips_bodies() {
        let m = meta(
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"2024-01-02T03:04:05.678Z","message":{"content":[{"type":"text","text":"x\"y"}],"role":"assistant"}}"#,
        );
        assert_eq!(m.kind, Kind::Message);
        assert_eq!(&*m.id, "ab12cd34");
        assert!(m.id_is_string);
        assert_eq!(&*m.parent, NULL_KEY);
        assert!(!m.parent_truthy);
        assert_eq!(m.role, Role::Assistant);
        assert_eq!(m.time, Some(1704164645678.0));
    }

    #[test]
    fn an_appended_message_read_from_its_start_has_the_meta_of_the_whole_line() {
        let whole = |line: &str| match read_line(line.as_bytes()) {
            LineRead::Entry(m) => m,
            LineRead::Skipped => panic!("skipped {line}"),
        };
        let fast = [
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"2024-01-02T03:04:05.678Z","message":{"role":"assistant","content":[{"type":"text","text":"}\"}"}],"usage":{"input":1}}}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":"0f0f0f0f","timestamp":"2024-01-02T03:04:05.678Z","message":{"role":"toolResult","content":"é→✓"}}"#,
            r#"{"type":"message","id":"a\"b\u0041","parentId":7,"timestamp":"not a date","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":"","timestamp":"2024-01-02T03:04:05.678Z","message":{"role":"bashExecution","command":"ls"}}"#,
        ];
        for line in fast {
            let m = read_appended_message(line.as_bytes()).expect(line);
            assert_eq!(format!("{m:?}"), format!("{:?}", whole(line)), "{line}");
        }
        // Any other shape is read whole.
        for line in [
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":{"content":[],"role":"user"}}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":{"role":7}}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":null}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t"}"#,
            r#"{"type":"custom_message","id":"ab12cd34","parentId":null,"timestamp":"t","content":"x"}"#,
            r#"{"type":"message","id":"ab12cd34","timestamp":"t","parentId":null,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":{"role":"user"}"#,
        ] {
            assert!(read_appended_message(line.as_bytes()).is_none(), "{line}");
        }
    }

    #[test]
    fn skips_what_json_parse_rejects_or_finds_falsy() {
        for line in [
            "",
            "   ",
            "{",
            "null",
            "false",
            "0",
            "-0.0",
            "\"\"",
            "{\"a\":1}x",
            "\u{feff}{}",
        ] {
            assert_eq!(read_line(line.as_bytes()), LineRead::Skipped, "{line:?}");
        }
        for line in ["1", "\"s\"", "[]", "true", "{}", "{}\r", " {\"type\":5} "] {
            assert!(
                matches!(read_line(line.as_bytes()), LineRead::Entry(_)),
                "{line:?}"
            );
        }
    }

    #[test]
    fn invalid_utf8_inside_strings_is_replaced_not_rejected() {
        let line = b"{\"type\":\"message\",\"id\":\"a\xff\",\"message\":{\"role\":\"user\"}}";
        let LineRead::Entry(m) = read_line(line) else {
            panic!("skipped")
        };
        assert_eq!(&*m.id, "a\u{fffd}");
        assert_eq!(m.role, Role::User);
        // A cut multi-byte character before the closing quote does not hide it.
        assert!(matches!(
            read_line(b"{\"id\":\"\xe2\x82\"}"),
            LineRead::Entry(_)
        ));
        assert_eq!(read_line(b"{\"a\":1}\xff"), LineRead::Skipped);
    }

    #[test]
    fn repeated_keys_take_the_last_value() {
        let m = meta(r#"{"id":"a","type":"label","id":"b","label":"x","label":""}"#);
        assert_eq!(&*m.id, "b");
        assert!(!m.label_truthy);
    }

    #[test]
    fn nullish_messages_are_marked() {
        assert_eq!(meta(r#"{"type":"message"}"#).role, Role::MessageUndefined);
        assert_eq!(
            meta(r#"{"type":"message","message":null}"#).role,
            Role::MessageNull
        );
        assert_eq!(
            meta(r#"{"type":"message","message":"x"}"#).role,
            Role::NotString
        );
        assert_eq!(
            meta(r#"{"type":"message","message":{"role":7}}"#).role,
            Role::NotString
        );
        assert_eq!(
            meta(r#"{"type":"message","message":{"content":"x"}}"#).role,
            Role::NotString
        );
        let other = meta(r#"{"type":"message","message":{"role":""}}"#).role;
        assert_eq!(other, Role::Other);
        assert!(other.is_string());
    }

    #[test]
    fn iso_times_only_in_the_exact_form() {
        assert_eq!(iso_time("1970-01-01T00:00:00.000Z"), Some(0.0));
        assert_eq!(iso_time("2024-02-29T23:59:59.999Z"), Some(1709251199999.0));
        assert_eq!(iso_time("2023-02-29T00:00:00.000Z"), None);
        assert_eq!(iso_time("2024-01-01T00:00:00Z"), None);
    }

    #[test]
    fn version_follows_number_coercion() {
        assert_eq!(meta(r#"{"type":"session","id":"x"}"#).version(), 1.0);
        assert_eq!(meta(r#"{"type":"session","version":null}"#).version(), 1.0);
        assert_eq!(meta(r#"{"type":"session","version":"2"}"#).version(), 2.0);
        assert_eq!(meta(r#"{"type":"session","version":3}"#).version(), 3.0);
    }
}
