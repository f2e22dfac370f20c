//! What `SessionManager.list()` shows of one session file, computed without
//! building entry objects: message count, first message, all message text,
//! name and last activity.

use std::borrow::Cow;

use crate::catalog::usage::{self, UsageTally};
use crate::format::entry::{for_each_element, for_each_member};
use crate::format::json::{self, Cursor, SyntaxError};
use crate::format::json_text;
use crate::format::jsvalue::{
    join_string, string_at, string_here, text_literal, value_at, wtf8_trim, Throws,
};

/// Writes a summary for the persistent listing cache.
pub fn encode_summary(summary: &SessionSummary, out: &mut crate::catalog::codec::Encoder) {
    out.bytes(summary.header.as_bytes());
    out.u64(summary.message_count as u64);
    out.bytes(&summary.first_message);
    out.bytes(&summary.all_messages_text);
    out.opt_f64(summary.last_activity);
    out.strings(&summary.unparsed_times);
    out.opt_bytes(summary.name.as_deref().map(str::as_bytes));
    encode_tally(summary.usage.as_ref(), out);
}

fn encode_tally(tally: Option<&UsageTally>, out: &mut crate::catalog::codec::Encoder) {
    out.u64(tally.is_some() as u64);
    if let Some(t) = tally {
        t.encode(out);
    }
}

fn decode_tally(input: &mut crate::catalog::codec::Decoder) -> Option<Option<UsageTally>> {
    match input.u64()? {
        0 => Some(None),
        1 => Some(Some(UsageTally::decode(input)?)),
        _ => None,
    }
}

pub fn decode_summary(input: &mut crate::catalog::codec::Decoder) -> Option<SessionSummary> {
    Some(SessionSummary {
        header: input.string()?,
        message_count: input.u64()? as u32,
        first_message: input.bytes()?.to_vec(),
        all_messages_text: input.bytes()?.to_vec(),
        last_activity: input.opt_f64()?,
        unparsed_times: input.strings()?,
        name: input.opt_string()?,
        usage: decode_tally(input)?,
    })
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionSummary {
    /// The header line, for JavaScript to read id, cwd, parentSession, timestamp.
    pub header: String,
    pub message_count: u32,
    /// Texts as WTF-8: UTF-8 that may also hold lone surrogates (see
    /// `text_literal` for those).
    pub first_message: Vec<u8>,
    pub all_messages_text: Vec<u8>,
    /// Largest activity time known here (numeric message timestamps, ISO entry
    /// timestamps); `None` when there was none.
    pub last_activity: Option<f64>,
    /// Entry timestamps (as JSON text) only JavaScript's Date parser can read.
    pub unparsed_times: Vec<String>,
    /// As a JSON string literal, like the texts.
    pub name: Option<String>,
    /// The file's usage, in a summary made for accounting (texts left out).
    pub usage: Option<UsageTally>,
}

/// What a search reads of a summary: the header line, the name and the
/// message text (both WTF-8), borrowed.
pub struct SummaryText<'a> {
    pub header: &'a str,
    pub name: Option<Cow<'a, [u8]>>,
    pub all_messages_text: &'a [u8],
}

impl SessionSummary {
    pub fn text(&self) -> SummaryText<'_> {
        SummaryText {
            header: &self.header,
            // The name is kept as the literal `text_literal` made of it.
            name: self
                .name
                .as_deref()
                .and_then(|literal| string_at(literal.as_bytes()))
                .map(Cow::Owned),
            all_messages_text: &self.all_messages_text,
        }
    }
}

/// What the summary needs of one line, read without building the entry.
#[derive(Default)]
struct LineFacts<'a> {
    entry_type: Option<Cow<'a, [u8]>>,
    /// The entry's `id`, for accounting (what tells a fork's copies).
    id: Option<(usize, usize)>,
    entry_timestamp: Option<(usize, usize)>,
    message: MessageFacts,
    name: Option<(usize, usize)>,
    /// `usage`, `provider` and `model` of the entry, for accounting.
    fields: usage::EntrySpans,
}

/// `entry.message`, walked once. Spans are into the line.
#[derive(Default)]
enum MessageFacts {
    #[default]
    Missing,
    Null,
    NotObject,
    Object {
        role: Option<Vec<u8>>,
        content: Option<(usize, usize)>,
        /// The content's text, read where it stood when the role before it was
        /// one whose text counts (as pi writes messages): the span is then not
        /// read a second time.
        text: Option<Result<Vec<u8>, Throws>>,
        timestamp: Option<(usize, usize)>,
        account: usage::MessageFields,
    },
}

fn read_message<'a>(cur: &mut Cursor<'a>, keep_text: bool) -> Result<MessageFacts, SyntaxError> {
    match cur.peek() {
        Some(b'{') => {
            let mut role: Option<Vec<u8>> = None;
            let mut content = None;
            let mut text = None;
            let mut timestamp = None;
            let mut account = usage::MessageFields::default();
            for_each_member(cur, |key, cur| {
                if account.visit(key, cur)? {
                    return Ok(());
                }
                cur.skip_ws();
                let start = cur.i;
                match key {
                    b"role" => {
                        role = if cur.peek() == Some(b'"') {
                            Some(json::parse_string(cur)?)
                        } else {
                            cur.skip_value()?;
                            None
                        }
                    }
                    b"content" => {
                        text = if role.as_deref().is_some_and(text_counts) {
                            Some(content_text(cur, keep_text)?)
                        } else {
                            cur.skip_value()?;
                            None
                        };
                        content = Some((start, cur.i));
                    }
                    b"timestamp" => {
                        cur.skip_value()?;
                        timestamp = Some((start, cur.i));
                    }
                    _ => cur.skip_value()?,
                }
                Ok(())
            })?;
            Ok(MessageFacts::Object {
                role,
                content,
                text,
                timestamp,
                account,
            })
        }
        Some(b'n') => {
            cur.skip_value()?;
            Ok(MessageFacts::Null)
        }
        _ => {
            cur.skip_value()?;
            Ok(MessageFacts::NotObject)
        }
    }
}

fn read_facts(line: &[u8], keep_text: bool) -> Result<Option<LineFacts<'_>>, SyntaxError> {
    let mut cur = Cursor::new(line);
    cur.skip_ws();
    if cur.peek() != Some(b'{') {
        // A primitive or an array: JSON.parse may accept it, and then every
        // property reads as undefined.
        let start = cur.i;
        cur.skip_value()?;
        cur.skip_ws();
        if cur.i != line.len() {
            return Err(SyntaxError);
        }
        let truthy = json::parse(&json::decode_lossy(&line[start..]))?.truthy();
        return Ok(truthy.then(LineFacts::default));
    }
    let mut facts = LineFacts::default();
    for_each_member(&mut cur, |key, cur| {
        if usage::visit_field(key, cur, &mut facts.fields)? {
            return Ok(());
        }
        cur.skip_ws();
        let start = cur.i;
        match key {
            b"type" => {
                if cur.peek() == Some(b'"') {
                    facts.entry_type = Some(json::parse_string_ref(cur)?);
                    return Ok(());
                }
                facts.entry_type = None;
                cur.skip_value()?;
            }
            b"timestamp" => {
                cur.skip_value()?;
                facts.entry_timestamp = Some((start, cur.i));
            }
            b"id" => {
                cur.skip_value()?;
                facts.id = Some((start, cur.i));
            }
            b"message" => facts.message = read_message(cur, keep_text)?,
            b"name" => {
                cur.skip_value()?;
                facts.name = Some((start, cur.i));
            }
            _ => cur.skip_value()?,
        }
        Ok(())
    })?;
    cur.skip_ws();
    if cur.i != line.len() {
        return Err(SyntaxError);
    }
    Ok(Some(facts))
}

/// Roles whose message text the summary keeps.
fn text_counts(role: &[u8]) -> bool {
    role == b"user" || role == b"assistant"
}

/// The text of the content value at the cursor the way `extractTextContent`
/// gets it, read in one pass: a syntax error is the line's (it is then
/// skipped), a throw the summary's (it stands only if the rest of the line
/// parses).
///
/// Without `keep`, strings are only checked, not copied: accounting needs to
/// know whether the reference's summary throws, not the text.
fn content_text(cur: &mut Cursor, keep: bool) -> Result<Result<Vec<u8>, Throws>, SyntaxError> {
    match cur.peek() {
        Some(b'"') if !keep => cur.skip_value().map(|_| Ok(Vec::new())),
        Some(b'"') => string_here(cur).map(Ok),
        Some(b'[') => {
            let mut out = Vec::new();
            let mut first = true;
            let mut throws = false;
            for_each_element(cur, |cur| {
                match cur.peek() {
                    Some(b'n') => {
                        throws = true; // `null.type`
                        cur.skip_value()?;
                    }
                    Some(b'{') => {
                        let mut is_text = false;
                        // The last `text` member: its string, or where a value
                        // of another kind is (joined only if the block is text).
                        let mut text: Option<Result<Vec<u8>, (usize, usize)>> = None;
                        for_each_member(cur, |key, cur| {
                            cur.skip_ws();
                            let start = cur.i;
                            match key {
                                b"type" => {
                                    is_text = cur.peek() == Some(b'"')
                                        && json::parse_string_ref(cur)?.as_ref() == b"text";
                                    if !is_text && cur.i == start {
                                        cur.skip_value()?;
                                    }
                                }
                                b"text" if cur.peek() == Some(b'"') && !keep => {
                                    cur.skip_value()?;
                                    text = Some(Ok(Vec::new()));
                                }
                                b"text" if cur.peek() == Some(b'"') => {
                                    text = Some(Ok(string_here(cur)?));
                                }
                                b"text" => {
                                    cur.skip_value()?;
                                    text = Some(Err((start, cur.i)));
                                }
                                _ => cur.skip_value()?,
                            }
                            Ok(())
                        })?;
                        if is_text {
                            if !std::mem::replace(&mut first, false) {
                                out.push(b' ');
                            }
                            match text {
                                Some(Ok(text)) => out.extend_from_slice(&text),
                                Some(Err((s, e))) => {
                                    let value = value_at(&cur.s[s..e]);
                                    throws |= join_string(Some(&value), &mut out).is_err();
                                }
                                None => {}
                            }
                        }
                    }
                    _ => cur.skip_value()?,
                }
                Ok(())
            })?;
            Ok(if throws { Err(Throws) } else { Ok(out) })
        }
        _ => {
            cur.skip_value()?;
            Ok(Err(Throws))
        }
    }
}

/// The summary of a file fed line by line; it can stop at any line end and
/// continue later with what was appended.
#[derive(Debug, Clone, Default)]
pub struct Summarizer {
    header: Option<String>,
    rejected: bool,
    message_count: u32,
    first_message: Vec<u8>,
    all: Vec<u8>,
    last_activity: Option<f64>,
    unparsed_times: Vec<String>,
    name: Option<Vec<u8>>,
    /// Set for accounting: usage is tallied and texts are not kept.
    tally: Option<UsageTally>,
}

impl Summarizer {
    /// A summarizer for accounting: the same rules (a file the listing leaves
    /// out is left out of reports too), with the usage tallied and no texts.
    pub fn for_usage() -> Summarizer {
        Summarizer {
            tally: Some(UsageTally::default()),
            ..Summarizer::default()
        }
    }

    /// Writes the state for the persistent listing cache.
    pub fn encode(&self, out: &mut crate::catalog::codec::Encoder) {
        out.opt_bytes(self.header.as_deref().map(str::as_bytes));
        out.u64(self.rejected as u64);
        out.u64(self.message_count as u64);
        out.bytes(&self.first_message);
        out.bytes(&self.all);
        out.opt_f64(self.last_activity);
        out.strings(&self.unparsed_times);
        out.opt_bytes(self.name.as_deref());
        encode_tally(self.tally.as_ref(), out);
    }

    pub fn decode(input: &mut crate::catalog::codec::Decoder) -> Option<Summarizer> {
        Some(Summarizer {
            header: input.opt_string()?,
            rejected: input.u64()? != 0,
            message_count: input.u64()? as u32,
            first_message: input.bytes()?.to_vec(),
            all: input.bytes()?.to_vec(),
            last_activity: input.opt_f64()?,
            unparsed_times: input.strings()?,
            name: input.opt_bytes()?.map(<[u8]>::to_vec),
            tally: decode_tally(input)?,
        })
    }

    /// Feeds one line (without its line break).
    pub fn feed(&mut self, line: &[u8]) {
        self.feed_line(line);
    }

    /// Feeds a run of whole lines split the way readline splits them (`\n`,
    /// `\r\n`, lone `\r`); the last piece may be an unterminated line.
    pub fn feed_block(&mut self, block: &[u8]) {
        if self.rejected {
            return;
        }
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', block) {
            // `\r\n` leaves an empty piece: a blank line, skipped by both.
            self.feed_line(&block[start..end]);
            start = end + 1;
        }
        self.feed_line(&block[start..]);
    }

    /// Whether a step threw: nothing fed later can change the (null) summary.
    pub fn is_rejected(&self) -> bool {
        self.rejected
    }

    fn feed_line(&mut self, line: &[u8]) {
        if self.rejected || line.is_empty() {
            return;
        }
        // Not checked for UTF-8 here: see `string_here`.
        let Ok(Some(facts)) = read_facts(line, self.tally.is_none()) else {
            return;
        };
        if let Err(Throws) = self.take(line, facts) {
            self.rejected = true;
        }
    }

    fn take(&mut self, line: &[u8], facts: LineFacts) -> Result<(), Throws> {
        let entry_type = facts.entry_type.as_deref();
        if self.header.is_none() {
            if entry_type != Some(b"session") {
                return Err(Throws);
            }
            self.header = Some(String::from_utf8_lossy(line).into_owned());
            if let Some(tally) = &mut self.tally {
                tally.set_header(line);
            }
            return Ok(());
        }
        if let Some(tally) = &mut self.tally {
            tally_line(tally, line, &facts);
        }
        if entry_type == Some(b"session_info") {
            self.name = match facts.name.map(|(s, e)| &line[s..e]) {
                None | Some(b"null") => None,
                Some(text) => {
                    let name = string_at(text).ok_or(Throws)?;
                    let trimmed = wtf8_trim(&name);
                    (!trimmed.is_empty()).then(|| trimmed.to_vec())
                }
            };
        }
        if entry_type != Some(b"message") {
            return Ok(());
        }
        self.message_count += 1;
        let (role, content, text, timestamp) = match facts.message {
            MessageFacts::Missing | MessageFacts::Null => return Err(Throws),
            MessageFacts::NotObject => return Ok(()),
            MessageFacts::Object {
                role,
                content,
                text,
                timestamp,
                ..
            } => (role, content, text, timestamp),
        };
        let (Some(role), Some((cs, ce))) = (role, content) else {
            return Ok(());
        };
        if !text_counts(&role) {
            return Ok(());
        }
        let message = line;
        match timestamp.map(|(s, e)| &message[s..e]) {
            Some(t) if matches!(t.first(), Some(b'-' | b'0'..=b'9')) => {
                self.activity(json::number_value(t))
            }
            _ => {
                if let Some(t) = facts.entry_timestamp.map(|(s, e)| &line[s..e]) {
                    match string_at(t)
                        .and_then(|s| crate::format::entry::iso_time(&String::from_utf8_lossy(&s)))
                    {
                        Some(time) => self.activity(time),
                        None => self.unparsed_times.push(
                            String::from_utf8_lossy(&json_text::stringify(&value_at(t)))
                                .into_owned(),
                        ),
                    }
                }
            }
        }
        let text = match text {
            Some(text) => text?,
            // The content came before the role: read its span now.
            None => content_text(&mut Cursor::new(&message[cs..ce]), self.tally.is_none())
                .unwrap_or(Err(Throws))?,
        };
        if text.is_empty() || self.tally.is_some() {
            return Ok(());
        }
        if self.first_message.is_empty() && role == b"user" {
            self.first_message = text.clone();
        }
        if !self.all.is_empty() {
            self.all.push(b' ');
        }
        self.all.extend_from_slice(&text);
        Ok(())
    }

    fn activity(&mut self, time: f64) {
        self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(time));
    }

    /// What `finish()` would give a search, without copying it.
    pub fn text(&self) -> Option<SummaryText<'_>> {
        if self.rejected {
            return None;
        }
        Some(SummaryText {
            header: self.header.as_deref()?,
            name: self.name.as_deref().map(Cow::Borrowed),
            all_messages_text: &self.all,
        })
    }

    /// `None` where the reference's `buildSessionInfo` returns null.
    pub fn finish(&self) -> Option<SessionSummary> {
        self.finish_texts(true)
    }

    /// `finish()`, with `all_messages_text` left empty unless `texts`.
    pub fn finish_texts(&self, texts: bool) -> Option<SessionSummary> {
        if self.rejected {
            return None;
        }
        Some(SessionSummary {
            header: self.header.clone()?,
            message_count: self.message_count,
            first_message: self.first_message.clone(),
            all_messages_text: if texts { self.all.clone() } else { Vec::new() },
            last_activity: self.last_activity,
            unparsed_times: self.unparsed_times.clone(),
            name: self.name.as_deref().map(text_literal),
            usage: self.tally.clone(),
        })
    }

    /// The header line and usage of an accounting summarizer's file; `None`
    /// for a file the listing leaves out (or a listing summarizer).
    pub fn usage(&self) -> Option<(&str, &UsageTally)> {
        if self.rejected {
            return None;
        }
        Some((self.header.as_deref()?, self.tally.as_ref()?))
    }
}

/// Adds what the report counts of one entry to the file's tally: entries
/// without a readable timestamp count nowhere.
fn tally_line(tally: &mut UsageTally, line: &[u8], facts: &LineFacts) {
    let message = match &facts.message {
        MessageFacts::Object { role, account, .. } => Some((role.as_deref(), account)),
        _ => None,
    };
    let Some((key, amounts)) =
        usage::report_record(line, facts.entry_type.as_deref(), &facts.fields, message)
    else {
        return;
    };
    let Some((timestamp, time)) = facts.entry_timestamp.and_then(|(s, e)| {
        let text = &line[s..e];
        Some((text, usage::entry_time(text)?))
    }) else {
        return;
    };
    // A time was read, so the timestamp is a string.
    let fingerprint = facts
        .id
        .and_then(|(s, e)| string_at(&line[s..e]))
        .zip(string_at(timestamp))
        .map(|(id, timestamp)| usage::fingerprint(&id, &timestamp, &key, &amounts));
    tally.add(
        (time / usage::SLOT_MS).floor() as i64,
        &key,
        &amounts,
        fingerprint,
    );
}

/// `buildSessionInfo()` without the parts that need JavaScript, over a whole
/// file's bytes: `None` where the reference returns null (not a session, or a
/// step that throws).
pub fn summarize_bytes(bytes: &[u8]) -> Option<SessionSummary> {
    let mut summarizer = Summarizer::default();
    summarizer.feed_block(bytes);
    summarizer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_follows_the_reference_rules() {
        let file = concat!(
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00.000Z\"}\n",
            "{\"type\":\"message\",\"timestamp\":\"2024-01-02T00:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"there\"}]}}\r\n",
            "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"first\",\"timestamp\":5}}\r",
            "{\"type\":\"session_info\",\"name\":\"  named \"}\n",
            "{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"content\":\"x\"}}",
        );
        let s = summarize_bytes(file.as_bytes()).unwrap();
        assert_eq!(s.message_count, 3);
        assert_eq!(s.first_message, b"first");
        assert_eq!(s.all_messages_text, b"hi there first");
        assert_eq!(s.name.as_deref(), Some("\"named\""));
        assert_eq!(s.last_activity, Some(1704153600000.0));
    }

    #[test]
    fn content_read_in_place_equals_content_read_after_the_role() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let contents: Vec<Vec<u8>> = [
            r#""plain""#.to_string(),
            r#""esc \\ \" \n \u00e9 \ud800 \ud83d\ude00""#.into(),
            r#""""#.into(),
            "[]".into(),
            r#"[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]"#.into(),
            r#"[{"type":"text"},{"type":"text","text":"after empty"}]"#.into(),
            r#"[{"text":"before type","type":"text"}]"#.into(),
            r#"[{"type":"text","text":"first","text":"last"}]"#.into(),
            r#"[{"type":"text","text":"x","type":"other"}]"#.into(),
            r#"[{"type":"\u0074ext","text":"escaped type"}]"#.into(),
            r#"[{"type":"text","text":[1,[2,3],null,{"a":1},true]}]"#.into(),
            r#"[{"type":"text","text":12.50}]"#.into(),
            r#"[{"type":"text","text":{"a":1}}]"#.into(),
            format!(r#"[{{"type":"text","text":{}}}]"#, deep(2999)),
            format!(r#"[{{"type":"text","text":{}}}]"#, deep(3001)),
            format!(r#"[{{"type":"image","text":{}}}]"#, deep(3001)),
            format!(r#"[{{"type":"text","text":{},"text":"wins"}}]"#, deep(3001)),
            r#"[{"type":"text","text":"a"},null,{"type":"text","text":"b"}]"#.into(),
            r#"[1,"s",[],true,{"type":"text","text":"c"}]"#.into(),
            "null".into(),
            "12".into(),
            r#"{"type":"text","text":"object"}"#.into(),
            r#"[{"type":"text","text":"a"},]"#.into(),
            r#"[{"type":"text","text":"a"} {"type":"text"}]"#.into(),
            r#"[{"type":"text","text":"bad \x escape"}]"#.into(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .chain([
            b"\"bytes \xff\xfe invalid\"".to_vec(),
            b"[{\"type\":\"text\",\"text\":\"<\xed\xa0\x80>\"}]".to_vec(),
        ])
        .collect();
        let header = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        let role = &b"\"role\":\"assistant\""[..];
        for content in &contents {
            let mut field = b"\"content\":".to_vec();
            field.extend_from_slice(content);
            for tail in [&b""[..], b",\"x\":1", b",\"x\":"] {
                let file = |first: &[u8], second: &[u8]| {
                    let mut l = header.clone();
                    l.extend_from_slice(b"{\"type\":\"message\",\"message\":{");
                    l.extend_from_slice(first);
                    l.push(b',');
                    l.extend_from_slice(second);
                    l.extend_from_slice(tail);
                    l.extend_from_slice(b"}}\n");
                    l
                };
                // With the role first, the content is read where it stands.
                let in_place = summarize_bytes(&file(role, &field));
                let after = summarize_bytes(&file(&field, role));
                // Accounting checks the same content without copying its text,
                // and leaves out the same files.
                for bytes in [file(role, &field), file(&field, role)] {
                    let mut usage = Summarizer::for_usage();
                    usage.feed_block(&bytes);
                    assert_eq!(
                        usage.finish().is_some(),
                        in_place.is_some(),
                        "{}",
                        String::from_utf8_lossy(content)
                    );
                }
                assert_eq!(
                    format!("{in_place:?}"),
                    format!("{after:?}"),
                    "{}{}",
                    String::from_utf8_lossy(content),
                    String::from_utf8_lossy(tail)
                );
            }
        }
    }

    #[test]
    fn lone_surrogates_survive_as_escapes() {
        let file = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\ud800b\"}}\n";
        let s = summarize_bytes(file.as_bytes()).unwrap();
        assert_eq!(s.first_message, b"a\xed\xa0\x80b");
        assert_eq!(text_literal(&s.first_message), "\"a\\ud800b\"");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let file = b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"<\xed\xa0A>\"}}\n";
        let s = summarize_bytes(file).unwrap();
        assert_eq!(s.first_message, "<\u{fffd}\u{fffd}A>".as_bytes());
        // In a text block, next to an escaped lone surrogate (kept as WTF-8),
        // and in a name.
        let file = b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\\ud800\xff\"}]}}\n{\"type\":\"session_info\",\"name\":\"n\xc3\"}\n";
        let s = summarize_bytes(file).unwrap();
        assert_eq!(s.first_message, b"\xed\xa0\x80\xef\xbf\xbd");
        assert_eq!(s.name.as_deref(), Some("\"n\u{fffd}\""));
    }

    #[test]
    fn text_nested_beyond_join_depth_leaves_the_file_out() {
        let deep = |n: usize| {
            format!(
                "{{\"type\":\"session\",\"id\":\"s\"}}\n{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}1{}}}]}}}}\n",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        assert_eq!(
            summarize_bytes(deep(100).as_bytes()).unwrap().first_message,
            b"1"
        );
        assert_eq!(summarize_bytes(deep(100_000).as_bytes()), None);
    }

    #[test]
    fn files_the_reference_rejects() {
        assert_eq!(summarize_bytes(b"{\"type\":\"message\"}\n"), None);
        assert_eq!(summarize_bytes(b""), None);
        let null_message =
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":null}\n";
        assert_eq!(summarize_bytes(null_message), None);
        let numeric_name =
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"session_info\",\"name\":5}\n";
        assert_eq!(summarize_bytes(numeric_name), None);
    }

    #[test]
    fn literals_match_write_string() {
        let texts: [&[u8]; 8] = [
            b"",
            b"plain text",
            b"quote \" backslash \\ newline \n tab \t nul \x00 del \x7f",
            "caf\u{e9} \u{65e5}\u{672c} \u{1f600}".as_bytes(),
            b"lone \xed\xa0\x80 high and \xed\xbf\xbf low",
            "\u{d7ff} \u{e000} edge of the surrogates".as_bytes(),
            b"cut at the end \xed\xa0",
            b"\xed",
        ];
        for text in texts {
            let mut expected = Vec::new();
            json_text::write_string(&mut expected, text);
            assert_eq!(
                text_literal(text),
                String::from_utf8_lossy(&expected),
                "{text:?}"
            );
        }
    }

    #[test]
    fn trims_like_javascript() {
        assert_eq!(wtf8_trim("\u{feff} a \u{a0}".as_bytes()), b"a");
        assert_eq!(wtf8_trim("\u{85}a".as_bytes()), "\u{85}a".as_bytes());
        assert_eq!(wtf8_trim("\u{3000} x\u{2029}".as_bytes()), b"x");
        assert_eq!(wtf8_trim(b" \xed\xa0\x80 "), b"\xed\xa0\x80");
    }
}
