//! What `SessionManager.list()` shows of one session file, computed without
//! building entry objects: message count, first message, all message text,
//! name and last activity.

use std::path::Path;

use crate::json::{self, JsValue};
use crate::store::{self, IoFailure};

#[derive(Debug, Default, PartialEq)]
pub struct SessionSummary {
    /// The header line, for JavaScript to read id, cwd, parentSession, timestamp.
    pub header: String,
    pub message_count: u32,
    /// Texts as JSON string literals: they may hold lone surrogates, which only
    /// JSON escapes carry to JavaScript intact.
    pub first_message: String,
    pub all_messages_text: String,
    /// Largest activity time known here (numeric message timestamps, ISO entry
    /// timestamps); `None` when there was none.
    pub last_activity: Option<f64>,
    /// Entry timestamps (as JSON text) only JavaScript's Date parser can read.
    pub unparsed_times: Vec<String>,
    /// As a JSON string literal, like the texts.
    pub name: Option<String>,
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
            c,
            '\u{9}'..='\u{d}'
                | ' '
                | '\u{a0}'
                | '\u{1680}'
                | '\u{2000}'..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `String.prototype.trim`: JavaScript's whitespace, not Rust's.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// The code point starting at `bytes[0]` of WTF-8 text and its length.
fn wtf8_char(bytes: &[u8]) -> (u32, usize) {
    let lead = bytes[0] as u32;
    let len = match lead {
        0..=0x7f => return (lead, 1),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
    .min(bytes.len());
    let mut cp = lead & (0x7f >> len);
    for &b in &bytes[1..len] {
        cp = (cp << 6) | (b as u32 & 0x3f);
    }
    (cp, len)
}

fn is_ws_cp(cp: u32) -> bool {
    char::from_u32(cp).is_some_and(is_js_whitespace)
}

/// `trim()` of WTF-8 text (which may hold lone surrogates).
pub fn wtf8_trim(mut s: &[u8]) -> &[u8] {
    while !s.is_empty() {
        let (cp, len) = wtf8_char(s);
        if !is_ws_cp(cp) {
            break;
        }
        s = &s[len..];
    }
    while !s.is_empty() {
        let mut start = s.len() - 1;
        while start > 0 && s[start] & 0xc0 == 0x80 {
            start -= 1;
        }
        let (cp, _) = wtf8_char(&s[start..]);
        if !is_ws_cp(cp) {
            break;
        }
        s = &s[..start];
    }
    s
}

/// `String(value)` as `Array.prototype.join` applies it to each element (WTF-8).
fn join_string(value: Option<&JsValue>, out: &mut Vec<u8>) {
    match value {
        None | Some(JsValue::Null) => {}
        Some(JsValue::Str(s)) => out.extend_from_slice(s),
        Some(JsValue::Bool(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Some(JsValue::Num(n)) => json::write_number(out, *n),
        Some(JsValue::Arr(items)) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                join_string(Some(item), out);
            }
        }
        Some(JsValue::Obj(_)) => out.extend_from_slice(b"[object Object]"),
    }
}

fn literal(text: &[u8]) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    json::write_string(&mut out, text);
    // write_string escapes lone surrogates, so the literal is valid UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

/// A step of the reference's summary that throws in JavaScript: the whole file
/// is then left out of the listing.
struct Throws;

fn text_content(message: &JsValue) -> Result<Vec<u8>, Throws> {
    match message.get("content") {
        Some(JsValue::Str(s)) => Ok(s.clone()),
        Some(JsValue::Arr(blocks)) => {
            let mut out = Vec::new();
            let mut first = true;
            for block in blocks {
                if matches!(block, JsValue::Null) {
                    return Err(Throws);
                }
                if block.get("type").and_then(|t| t.as_str()).as_deref() == Some("text") {
                    if !first {
                        out.push(b' ');
                    }
                    first = false;
                    join_string(block.get("text"), &mut out);
                }
            }
            Ok(out)
        }
        _ => Err(Throws),
    }
}

/// Splits like readline with `crlfDelay: Infinity`: `\n`, `\r\n` and lone `\r`.
fn readline_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
            Some(off) => {
                let end = start + off;
                let line = &bytes[start..end];
                start = if bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n') {
                    end + 2
                } else {
                    end + 1
                };
                Some(line)
            }
            None => {
                done = true;
                (start < bytes.len()).then(|| &bytes[start..])
            }
        }
    })
}

/// `buildSessionInfo()` without the parts that need JavaScript: `Ok(None)` where
/// the reference returns null (not a session, or a step that throws).
pub fn summarize(path: &Path) -> Result<Option<SessionSummary>, IoFailure> {
    let bytes = store::read_file(path)?;
    Ok(summarize_bytes(&bytes))
}

pub fn summarize_bytes(bytes: &[u8]) -> Option<SessionSummary> {
    let mut summary = SessionSummary::default();
    let mut have_header = false;
    let mut all: Vec<u8> = Vec::new();
    let mut first_message: Vec<u8> = Vec::new();
    for line in readline_lines(bytes) {
        let text = json::decode_lossy(line);
        let Ok(entry) = json::parse(&text) else {
            continue;
        };
        if !entry.truthy() {
            continue;
        }
        let entry_type = entry
            .get("type")
            .and_then(|t| t.as_str())
            .map(|t| t.into_owned());
        if !have_header {
            if entry_type.as_deref() != Some("session") {
                return None;
            }
            have_header = true;
            summary.header = String::from_utf8_lossy(&json::stringify(&entry)).into_owned();
            continue;
        }
        if entry_type.as_deref() == Some("session_info") {
            summary.name = match entry.get("name") {
                None | Some(JsValue::Null) => None,
                Some(JsValue::Str(s)) => {
                    let trimmed = wtf8_trim(s);
                    (!trimmed.is_empty()).then(|| literal(trimmed))
                }
                Some(_) => return None,
            };
        }
        if entry_type.as_deref() != Some("message") {
            continue;
        }
        summary.message_count += 1;
        let message = match entry.get("message") {
            None | Some(JsValue::Null) => return None,
            Some(m) => m,
        };
        let role = message
            .get("role")
            .and_then(|r| r.as_str())
            .map(|r| r.into_owned());
        let with_content = matches!(message, JsValue::Obj(_))
            && role.is_some()
            && message.get("content").is_some();
        if !with_content {
            continue;
        }
        let role = role.unwrap_or_default();
        if role != "user" && role != "assistant" {
            continue;
        }
        match message.get("timestamp") {
            Some(JsValue::Num(n)) => {
                summary.last_activity = Some(summary.last_activity.unwrap_or(0.0).max(*n))
            }
            _ => match entry.get("timestamp") {
                Some(JsValue::Str(s)) => {
                    match crate::entry::iso_time(&String::from_utf8_lossy(s)) {
                        Some(t) => {
                            summary.last_activity =
                                Some(summary.last_activity.unwrap_or(0.0).max(t))
                        }
                        None => summary.unparsed_times.push(
                            String::from_utf8_lossy(&json::stringify(&JsValue::Str(s.clone())))
                                .into_owned(),
                        ),
                    }
                }
                Some(other) => summary
                    .unparsed_times
                    .push(String::from_utf8_lossy(&json::stringify(other)).into_owned()),
                None => {}
            },
        }
        let Ok(text) = text_content(message) else {
            return None;
        };
        if text.is_empty() {
            continue;
        }
        if first_message.is_empty() && role == "user" {
            first_message = text.clone();
        }
        if !all.is_empty() {
            all.push(b' ');
        }
        all.extend_from_slice(&text);
    }
    if !have_header {
        return None;
    }
    summary.all_messages_text = literal(&all);
    summary.first_message = literal(&first_message);
    Some(summary)
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
        assert_eq!(s.first_message, "\"first\"");
        assert_eq!(s.all_messages_text, "\"hi there first\"");
        assert_eq!(s.name.as_deref(), Some("\"named\""));
        assert_eq!(s.last_activity, Some(1704153600000.0));
    }

    #[test]
    fn lone_surrogates_survive_as_escapes() {
        let file = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\ud800b\"}}\n";
        let s = summarize_bytes(file.as_bytes()).unwrap();
        assert_eq!(s.first_message, "\"a\\ud800b\"");
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
    fn trims_like_javascript() {
        assert_eq!(js_trim("\u{feff} a \u{a0}"), "a");
        assert_eq!(js_trim("\u{85}a"), "\u{85}a");
        assert_eq!(wtf8_trim("\u{3000} x\u{2029}".as_bytes()), b"x");
        assert_eq!(wtf8_trim(b" \xed\xa0\x80 "), b"\xed\xa0\x80");
    }
}
