//! What the reference's JavaScript makes of a value read from a line: strings
//! decoded the way it decodes a file (lossily), `String(value)` as
//! `Array.prototype.join` applies it, `trim()` and `JSON.stringify` of texts
//! kept as WTF-8. Shared by the listing summary and the usage accounting.

use crate::format::json::{self, Cursor, JsValue, SyntaxError};
use crate::format::json_text;

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

/// Nesting beyond which `Array.prototype.join` overflows V8's stack (about 3,100
/// to 3,200 levels depending on the Node version); the reference then leaves the
/// file out of the listing.
const MAX_JOIN_DEPTH: usize = 3000;

/// `String(value)` as `Array.prototype.join` applies it to each element (WTF-8),
/// without recursion.
pub fn join_string(value: Option<&JsValue>, out: &mut Vec<u8>) -> Result<(), Throws> {
    enum Step<'v> {
        Value(&'v JsValue, usize),
        Comma,
    }
    let Some(value) = value else { return Ok(()) };
    let mut todo = vec![Step::Value(value, 0)];
    while let Some(step) = todo.pop() {
        match step {
            Step::Comma => out.push(b','),
            Step::Value(v, depth) => match v {
                JsValue::Null => {}
                JsValue::Str(s) => out.extend_from_slice(s),
                JsValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
                JsValue::Num(n) => json_text::write_number(out, *n),
                JsValue::Obj(_) => out.extend_from_slice(b"[object Object]"),
                JsValue::Arr(items) => {
                    if depth >= MAX_JOIN_DEPTH {
                        return Err(Throws);
                    }
                    for (i, item) in items.iter().enumerate().rev() {
                        todo.push(Step::Value(item, depth + 1));
                        if i > 0 {
                            todo.push(Step::Comma);
                        }
                    }
                }
            },
        }
    }
    Ok(())
}

/// `JSON.stringify` of WTF-8 text. Runs of bytes that need no escape (nearly
/// all of a message text) are copied whole; the rest goes through
/// `json_text::write_string`.
pub fn text_literal(text: &[u8]) -> String {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16 + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        // 0xED may start a lone surrogate, which is escaped.
        if b >= 0x20 && b != b'"' && b != b'\\' && b != 0xED {
            i += 1;
            continue;
        }
        out.extend_from_slice(&text[start..i]);
        let len = if b == 0xED { 3.min(text.len() - i) } else { 1 };
        let mut escaped = Vec::with_capacity(8);
        json_text::write_string(&mut escaped, &text[i..i + len]);
        out.extend_from_slice(&escaped[1..escaped.len() - 1]);
        i += len;
        start = i;
    }
    out.extend_from_slice(&text[start..]);
    out.push(b'"');
    // Lone surrogates are escaped, so the literal is UTF-8 unless the text was
    // not WTF-8 to begin with.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A step of the reference that throws in JavaScript (a null message,
/// content that is not a string or an array, a null content block, a name that
/// is not a string): the whole file is then left out of the listing.
#[derive(Debug)]
pub struct Throws;

/// The string value at `text` (the span of a value), or `None` for another kind
/// of value.
pub fn string_at(text: &[u8]) -> Option<Vec<u8>> {
    string_here(&mut Cursor::new(text)).ok()
}

/// The string at the cursor, as the reference sees it: it decodes the line
/// with replacement characters before parsing. Only the strings kept are
/// checked, not whole lines: replacing bytes never moves a quote, backslash or
/// other ASCII byte, so the rest of the line parses the same either way.
pub fn string_here(cur: &mut Cursor) -> Result<Vec<u8>, SyntaxError> {
    let start = cur.i;
    let text = json::parse_string(cur)?;
    let raw = &cur.s[start..cur.i];
    if std::str::from_utf8(raw).is_ok() {
        return Ok(text);
    }
    json::parse_string(&mut Cursor::new(&json::decode_lossy(raw)))
}

pub fn value_at(text: &[u8]) -> JsValue {
    json::parse(&json::decode_lossy(text)).unwrap_or(JsValue::Null)
}
