//! JSON text as `JSON.stringify` writes it: values written the way V8 writes
//! them (key order, escapes, JavaScript number formatting), and the check
//! that a line already is in that form, so that it can be copied or patched
//! as text instead of parsed and written again.

use std::borrow::Cow;

use crate::format::json::{
    decode_lossy, hex4, number_value, parse, unescape, Cursor, JsValue, SyntaxError,
};

/// Appends a string literal the way `JSON.stringify` writes it.
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1F => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xF) as usize]);
            }
            // A WTF-8 lone surrogate: JSON.stringify escapes it.
            0xED if s.get(i + 1).is_some_and(|&n| n >= 0xA0) && i + 2 < s.len() => {
                let cp = ((b as u32 & 0x0F) << 12)
                    | ((s[i + 1] as u32 & 0x3F) << 6)
                    | (s[i + 2] as u32 & 0x3F);
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((cp >> shift) & 0xF) as usize]);
                }
                i += 3;
                continue;
            }
            _ => out.push(b),
        }
        i += 1;
    }
    out.push(b'"');
}

pub fn write_number(out: &mut Vec<u8>, n: f64) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        // JSON.stringify(-0) is "0".
        out.push(b'0');
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.extend_from_slice(buf.format(n).as_bytes());
    }
}

/// `JSON.stringify(value)`, without recursion.
pub fn stringify(value: &JsValue) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(&mut out, value);
    out
}

pub fn write_value(out: &mut Vec<u8>, value: &JsValue) {
    enum Step<'v> {
        Value(&'v JsValue),
        Raw(&'static [u8]),
        Key(&'v [u8]),
    }
    let mut todo = vec![Step::Value(value)];
    while let Some(step) = todo.pop() {
        match step {
            Step::Raw(bytes) => out.extend_from_slice(bytes),
            Step::Key(key) => {
                write_string(out, key);
                out.push(b':');
            }
            Step::Value(v) => match v {
                JsValue::Null => out.extend_from_slice(b"null"),
                JsValue::Bool(true) => out.extend_from_slice(b"true"),
                JsValue::Bool(false) => out.extend_from_slice(b"false"),
                JsValue::Num(n) => write_number(out, *n),
                JsValue::Str(s) => write_string(out, s),
                JsValue::Arr(items) => {
                    out.push(b'[');
                    todo.push(Step::Raw(b"]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        todo.push(Step::Value(item));
                        if i > 0 {
                            todo.push(Step::Raw(b","));
                        }
                    }
                }
                JsValue::Obj(members) => {
                    out.push(b'{');
                    todo.push(Step::Raw(b"}"));
                    let ordered = property_order(members);
                    for (i, &m) in ordered.iter().enumerate().rev() {
                        let (k, item) = &members[m];
                        todo.push(Step::Value(item));
                        todo.push(Step::Key(k));
                        if i > 0 {
                            todo.push(Step::Raw(b","));
                        }
                    }
                }
            },
        }
    }
}

/// The value of a key that is an array index ("0" to "4294967294", no leading
/// zero). JavaScript objects list such keys first, in ascending order, before
/// the others in insertion order, so `JSON.stringify` writes them that way.
pub fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key[0] == b'0' && key.len() > 1) {
        return None;
    }
    let mut value: u64 = 0;
    for &b in key {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    (value < u64::from(u32::MAX)).then_some(value as u32)
}

/// The order in which a JavaScript object built with these members lists them.
fn property_order(members: &[(Vec<u8>, JsValue)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    if members.iter().any(|(k, _)| array_index(k).is_some()) {
        // Stable: the non-index keys keep their insertion order.
        order.sort_by_key(|&m| array_index(&members[m].0).map_or((1, 0), |i| (0, i)));
    }
    order
}

/// Whether the escapes of a string body (between quotes, valid UTF-8) are
/// exactly the ones `JSON.stringify` writes for its value.
fn canonical_escapes(raw: &[u8]) -> bool {
    let mut i = 0;
    while i < raw.len() {
        let run_end = memchr::memchr(b'\\', &raw[i..]).map_or(raw.len(), |o| i + o);
        if run_end == raw.len() {
            return true;
        }
        match raw.get(run_end + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i = run_end + 2,
            Some(b'u') => {
                let hex = &raw[run_end + 2..run_end + 6];
                let cp = hex4(hex);
                let lowercase = hex.iter().all(|c| !c.is_ascii_uppercase());
                let needed = match cp {
                    0x08 | 0x0C | 0x0A | 0x0D | 0x09 => false,
                    0..=0x1F => true,
                    // Only a lone surrogate stays escaped.
                    0xD800..=0xDBFF => {
                        let next_is_low = raw.get(run_end + 6) == Some(&b'\\')
                            && raw.get(run_end + 7) == Some(&b'u')
                            && raw
                                .get(run_end + 8..run_end + 12)
                                .is_some_and(|h| (0xDC00..0xE000).contains(&hex4(h)));
                        !next_is_low
                    }
                    0xDC00..=0xDFFF => true,
                    _ => false,
                };
                if !needed || !lowercase {
                    return false;
                }
                i = run_end + 6;
            }
            _ => return false,
        }
    }
    true
}

fn canonical_number(text: &[u8]) -> bool {
    // Integers below 2^53 without a leading zero are written as they are.
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if digits.len() <= 15
        && digits.first().is_some_and(|&d| d != b'0')
        && digits.iter().all(u8::is_ascii_digit)
    {
        return true;
    }
    let n = number_value(text);
    if !n.is_finite() {
        return false;
    }
    let mut out = Vec::new();
    write_number(&mut out, n);
    out == text
}

/// The top-level members (key, value start, value end) of a line that is
/// byte for byte what `JSON.stringify(JSON.parse(line))` gives, or `None` when
/// it is not (whitespace, other escapes, number spellings, repeated keys, ...).
/// Lines pi wrote pass, and can then be copied or patched as text.
pub fn canonical_members(line: &[u8]) -> Option<Vec<(&[u8], usize, usize)>> {
    let mut cur = Cursor::new(line);
    // Invalid UTF-8 would come back as replacement characters.
    if cur.peek() != Some(b'{') || std::str::from_utf8(line).is_err() {
        return None;
    }
    // Open containers: `Some(start)` for an object whose keys are keys[start..].
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut top: Vec<(&[u8], usize, usize)> = Vec::new();
    let mut pending_top_key: Option<(&[u8], usize)> = None;
    let s = line;
    let string_at = |cur: &mut Cursor| -> Option<(usize, usize)> {
        let (start, end, escaped) = cur.skip_string().ok()?;
        if escaped && !canonical_escapes(&s[start..end]) {
            return None;
        }
        Some((start, end))
    };
    'value: loop {
        let value_start = cur.i;
        match cur.peek()? {
            b'{' => {
                cur.i += 1;
                if cur.peek() == Some(b'}') {
                    cur.i += 1;
                } else {
                    let (ks, ke) = string_at(&mut cur)?;
                    if cur.peek() != Some(b':') {
                        return None;
                    }
                    cur.i += 1;
                    if stack.is_empty() {
                        pending_top_key = Some((&s[ks..ke], cur.i));
                    }
                    stack.push(Some(keys.len()));
                    keys.push(&s[ks..ke]);
                    continue 'value;
                }
            }
            b'[' => {
                cur.i += 1;
                if cur.peek() == Some(b']') {
                    cur.i += 1;
                } else {
                    stack.push(None);
                    continue 'value;
                }
            }
            b'"' => {
                string_at(&mut cur)?;
            }
            b't' => cur.literal(b"true").ok()?,
            b'f' => cur.literal(b"false").ok()?,
            b'n' => cur.literal(b"null").ok()?,
            _ => {
                let text = cur.skip_number().ok()?;
                if !canonical_number(text) {
                    return None;
                }
            }
        }
        let _ = value_start;
        loop {
            if stack.len() == 1 {
                if let Some((key, start)) = pending_top_key.take() {
                    top.push((key, start, cur.i));
                }
            }
            let Some(frame) = stack.last_mut() else {
                return (cur.i == s.len()).then_some(top);
            };
            match (cur.peek(), *frame) {
                (Some(b','), Some(first_key)) => {
                    cur.i += 1;
                    let (ks, ke) = string_at(&mut cur)?;
                    let key = &s[ks..ke];
                    if keys[first_key..].contains(&key) {
                        return None;
                    }
                    // Array-index keys come first and ascending (see `array_index`).
                    if let Some(index) = array_index(key) {
                        let previous = keys.last().and_then(|k| array_index(k));
                        if previous.is_none_or(|p| p >= index) {
                            return None;
                        }
                    }
                    keys.push(key);
                    if cur.peek() != Some(b':') {
                        return None;
                    }
                    cur.i += 1;
                    if stack.len() == 1 {
                        pending_top_key = Some((key, cur.i));
                    }
                    continue 'value;
                }
                (Some(b','), None) => {
                    cur.i += 1;
                    continue 'value;
                }
                (Some(b'}'), Some(first_key)) => {
                    cur.i += 1;
                    keys.truncate(first_key);
                    stack.pop();
                }
                (Some(b']'), None) => {
                    cur.i += 1;
                    stack.pop();
                }
                _ => return None,
            }
        }
    }
}

/// A top-level change to an entry line: set `key` to this JSON text, or remove it.
pub type Change<'a> = (&'a str, Option<Vec<u8>>);

/// `JSON.stringify({ ...JSON.parse(line), ...changes })`: a splice of the text
/// when the line is canonical, a parse and re-serialization otherwise.
pub fn patch_line(line: &[u8], changes: &[Change]) -> Result<Vec<u8>, SyntaxError> {
    let Some(members) = canonical_members(line) else {
        return rewrite_line(line, |v| {
            for (key, to) in changes {
                match to {
                    Some(text) => v.set(key, parse(text).unwrap_or(JsValue::Null)),
                    None => v.remove(key),
                }
            }
        });
    };
    // Rebuild the object from the members' own text: kept members as they are
    // (or with their new value), then new keys in the order given.
    let mut out = Vec::with_capacity(line.len() + 64);
    out.push(b'{');
    // Members' keys as their values (a key may be spelled with escapes).
    let decoded: Vec<Cow<[u8]>> = members
        .iter()
        .map(|(k, _, _)| {
            if k.contains(&b'\\') {
                Cow::Owned(unescape(k))
            } else {
                Cow::Borrowed(*k)
            }
        })
        .collect();
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    for ((key, start, end), name) in members.iter().zip(&decoded) {
        let change = changes.iter().find(|(k, _)| k.as_bytes() == name.as_ref());
        let key_start = start - key.len() - 3;
        match change {
            None => {
                sep(&mut out);
                out.extend_from_slice(&line[key_start..*end]);
            }
            Some((_, Some(text))) => {
                sep(&mut out);
                out.extend_from_slice(&line[key_start..*start]);
                out.extend_from_slice(text);
            }
            Some((_, None)) => {}
        }
    }
    for (key, to) in changes {
        if let Some(text) = to {
            if !decoded.iter().any(|k| k.as_ref() == key.as_bytes()) {
                sep(&mut out);
                write_string(&mut out, key.as_bytes());
                out.push(b':');
                out.extend_from_slice(text);
            }
        }
    }
    out.push(b'}');
    Ok(out)
}

/// `JSON.stringify(JSON.parse(line))` with top-level changes applied in between:
/// the shape of `{ ...entry, key: value }` written by the reference.
pub fn rewrite_line(
    line: &[u8],
    change: impl FnOnce(&mut JsValue),
) -> Result<Vec<u8>, SyntaxError> {
    let text = decode_lossy(line);
    let mut value = parse(&text)?;
    change(&mut value);
    Ok(stringify(&value))
}
