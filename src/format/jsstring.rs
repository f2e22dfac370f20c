//! JavaScript string operations the search needs, with V8's exact results:
//! `toLowerCase()`, the whitespace of `\s` and `trim()`, and conversions
//! between UTF-16 (what a JavaScript string is) and WTF-8 (UTF-8 that may also
//! hold lone surrogates, as `json.rs` keeps strings).
//!
//! Rust's `str::to_lowercase` is ICU's root-locale lowercasing, Final_Sigma
//! included (both follow Unicode 17 here; `__test__/search.test.mjs` compares
//! every code point and every sigma context with V8). What it cannot take is
//! a lone surrogate: text is cut around those, which V8 leaves as they are and
//! which end a sigma's context (they are neither cased nor case-ignorable).

/// `\s` in a JavaScript regular expression, and what `trim()` removes: the
/// WhiteSpace and LineTerminator code points. All are in the BMP.
pub fn is_js_whitespace_unit(u: u16) -> bool {
    matches!(
        u,
        0x09..=0x0d
            | 0x20
            | 0xa0
            | 0x1680
            | 0x2000..=0x200a
            | 0x2028
            | 0x2029
            | 0x202f
            | 0x205f
            | 0x3000
            | 0xfeff
    )
}

/// The length of the JavaScript whitespace character at `t[i]` of WTF-8 text,
/// or 0 if there is none there.
pub fn whitespace_len_at(t: &[u8], i: usize) -> usize {
    match t[i] {
        0x09..=0x0d | 0x20 => 1,
        0xc2 if t.get(i + 1) == Some(&0xa0) => 2,
        0xe1 if t.get(i + 1..i + 3) == Some(&[0x9a, 0x80]) => 3,
        0xe2 => match (t.get(i + 1), t.get(i + 2)) {
            (Some(0x80), Some(0x80..=0x8a | 0xa8 | 0xa9 | 0xaf)) => 3,
            (Some(0x81), Some(0x9f)) => 3,
            _ => 0,
        },
        0xe3 if t.get(i + 1..i + 3) == Some(&[0x80, 0x80]) => 3,
        0xef if t.get(i + 1..i + 3) == Some(&[0xbb, 0xbf]) => 3,
        _ => 0,
    }
}

/// `s.trim()` of UTF-16 units.
pub fn trim_utf16(s: &[u16]) -> &[u16] {
    let start = s
        .iter()
        .position(|&u| !is_js_whitespace_unit(u))
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&u| !is_js_whitespace_unit(u))
        .map_or(start, |p| p + 1);
    &s[start..end]
}

/// `s.replace(/\s+/g, " ").trim()` of UTF-16 units.
pub fn collapse_whitespace_utf16(s: &[u16]) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    let mut gap = false;
    for &u in s {
        if is_js_whitespace_unit(u) {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(0x20);
        }
        gap = false;
        out.push(u);
    }
    out
}

/// Bytes that may start JavaScript whitespace (or are a space that may not
/// stay as it is); everything else is copied as it is.
fn may_be_whitespace(b: u8) -> bool {
    b <= 0x20 || matches!(b, 0xc2 | 0xe1 | 0xe2 | 0xe3 | 0xef)
}

/// `s.replace(/\s+/g, " ").trim()` of WTF-8 text.
pub fn collapse_whitespace_wtf8(t: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    let mut gap = false;
    let mut i = 0;
    while i < t.len() {
        // A run of bytes copied whole: nothing that may be whitespace, except
        // single spaces between two such bytes (they stay as they are).
        let mut end = i;
        while end < t.len() {
            let b = t[end];
            if !may_be_whitespace(b) {
                end += 1;
            } else if b == b' ' && end > i && t.get(end + 1).is_some_and(|&n| !may_be_whitespace(n))
            {
                end += 2;
            } else {
                break;
            }
        }
        if end > i {
            if gap && !out.is_empty() {
                out.push(b' ');
            }
            gap = false;
            out.extend_from_slice(&t[i..end]);
            i = end;
            continue;
        }
        let ws = whitespace_len_at(t, i);
        if ws > 0 {
            gap = true;
            i += ws;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(b' ');
        }
        gap = false;
        out.push(t[i]);
        i += 1;
    }
    out
}

/// WTF-8 of UTF-16 units: pairs become one code point, lone surrogates stay.
pub fn utf16_to_wtf8(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len() + units.len() / 2);
    let mut i = 0;
    while i < units.len() {
        let u = units[i] as u32;
        i += 1;
        let cp = if (0xd800..0xdc00).contains(&u) && i < units.len() {
            let low = units[i] as u32;
            if (0xdc00..0xe000).contains(&low) {
                i += 1;
                0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00)
            } else {
                u
            }
        } else {
            u
        };
        push_code_point(&mut out, cp);
    }
    out
}

fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7f => out.push(cp as u8),
        0x80..=0x7ff => out.extend_from_slice(&[0xc0 | (cp >> 6) as u8, 0x80 | (cp & 0x3f) as u8]),
        0x800..=0xffff => out.extend_from_slice(&[
            0xe0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xf0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3f) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]),
    }
}

/// UTF-16 units of WTF-8 text (bytes that are not WTF-8 become U+FFFD, one
/// per byte, which the listing never hands over).
pub fn wtf8_to_utf16(t: &[u8]) -> Vec<u16> {
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        let b = t[i];
        if b < 0x80 {
            out.push(b as u16);
            i += 1;
            continue;
        }
        let (len, min) = match b {
            0xc2..=0xdf => (2, 0x80),
            0xe0..=0xef => (3, 0x800),
            0xf0..=0xf4 => (4, 0x10000),
            _ => (0, 0),
        };
        let cp = (len > 0 && i + len <= t.len())
            .then(|| {
                let mut cp = b as u32 & (0x7f >> len);
                for &c in &t[i + 1..i + len] {
                    if c & 0xc0 != 0x80 {
                        return None;
                    }
                    cp = (cp << 6) | (c as u32 & 0x3f);
                }
                (cp >= min && cp <= 0x10ffff).then_some(cp)
            })
            .flatten();
        match cp {
            Some(cp) if cp >= 0x10000 => {
                let v = cp - 0x10000;
                out.push(0xd800 | (v >> 10) as u16);
                out.push(0xdc00 | (v & 0x3ff) as u16);
                i += len;
            }
            Some(cp) => {
                out.push(cp as u16);
                i += len;
            }
            None => {
                out.push(0xfffd);
                i += 1;
            }
        }
    }
    out
}

/// Whether UTF-16 units hold a lone surrogate (`!s.isWellFormed()`).
pub fn has_lone_surrogate(units: &[u16]) -> bool {
    let mut i = 0;
    while i < units.len() {
        match units[i] {
            0xd800..=0xdbff
                if units
                    .get(i + 1)
                    .is_some_and(|l| (0xdc00..0xe000).contains(l)) =>
            {
                i += 2
            }
            0xd800..=0xdfff => return true,
            _ => i += 1,
        }
    }
    false
}

/// ASCII bytes that are neither cased nor case-ignorable. A Final_Sigma
/// context scan stops at one and finds nothing cased there, so text cut just
/// before one lowercases, piece by piece, as it does whole. (The ASCII
/// case-ignorables are `'`, `.`, `:`, `^` and `` ` ``.)
fn is_context_stop(b: u8) -> bool {
    b < 0x80 && !b.is_ascii_alphabetic() && !matches!(b, b'\'' | b'.' | b':' | b'^' | b'`')
}

/// `toLowerCase()` of WTF-8 text, as WTF-8.
pub fn to_lowercase_wtf8(t: &[u8]) -> Vec<u8> {
    lowercase_in_place(t).unwrap_or_else(|| lowercase_in_pieces(t))
}

/// The common case, fast: ASCII lowercased over the whole copy at once (no
/// other byte changes), then each other character whose lowercase has the
/// same length written over it. `None` for text with a capital sigma (whose
/// lowercase depends on its context) or a character whose lowercase is
/// longer or shorter.
fn lowercase_in_place(t: &[u8]) -> Option<Vec<u8>> {
    // Copied and lowercased in one pass.
    let mut out: Vec<u8> = t.iter().map(u8::to_ascii_lowercase).collect();
    let mut i = 0;
    let mut buf = [0; 4];
    loop {
        i += ascii_prefix_len(&out[i..]);
        if i >= out.len() {
            return Some(out);
        }
        let (cp, len) = wtf8_code_point(&out[i..]);
        let c = match cp.and_then(char::from_u32) {
            Some(c) => c,
            // A lone surrogate (or a stray byte): left as it is.
            None => {
                i += len;
                continue;
            }
        };
        if c == '\u{3a3}' {
            return None;
        }
        let mut lower = c.to_lowercase();
        let l = lower.next()?;
        if lower.next().is_some() {
            return None;
        }
        if l != c {
            let bytes = l.encode_utf8(&mut buf).as_bytes();
            if bytes.len() != len {
                return None;
            }
            out[i..i + len].copy_from_slice(bytes);
        }
        i += len;
    }
}

/// The code point of the WTF-8 sequence at `t[0]` (a non-ASCII lead byte) and
/// its length; `None` and 1 for a byte that starts no sequence.
fn wtf8_code_point(t: &[u8]) -> (Option<u32>, usize) {
    let (len, min) = match t[0] {
        0xc2..=0xdf => (2, 0x80),
        0xe0..=0xef => (3, 0x800),
        0xf0..=0xf4 => (4, 0x10000),
        _ => return (None, 1),
    };
    let Some(seq) = t.get(..len) else {
        return (None, 1);
    };
    let mut cp = seq[0] as u32 & (0x7f >> len);
    for &c in &seq[1..] {
        if c & 0xc0 != 0x80 {
            return (None, 1);
        }
        cp = (cp << 6) | (c as u32 & 0x3f);
    }
    if cp < min || cp > 0x10ffff {
        return (None, 1);
    }
    (Some(cp), len)
}

/// Any text: cut into pieces at safe points (see `is_context_stop`), those
/// with non-ASCII characters lowercased by `str::to_lowercase`.
fn lowercase_in_pieces(t: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    // `t[..done]` is in `out`, and `done` is the start or just before a stop.
    let mut done = 0;
    while done < t.len() {
        let k = done + ascii_prefix_len(&t[done..]);
        if k == t.len() {
            push_ascii_lowercase(&mut out, &t[done..]);
            break;
        }
        // The piece around the non-ASCII text at `k` runs from the last stop
        // before it to the first stop after it.
        let start = t[done..k]
            .iter()
            .rposition(|&b| is_context_stop(b))
            .map_or(done, |p| done + p);
        push_ascii_lowercase(&mut out, &t[done..start]);
        let end = t[k..]
            .iter()
            .position(|&b| is_context_stop(b))
            .map_or(t.len(), |p| k + p);
        lowercase_piece(&t[start..end], &mut out);
        done = end;
    }
    out
}

/// How many bytes at the start of `t` are ASCII (16 checked at a time).
fn ascii_prefix_len(t: &[u8]) -> usize {
    const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
    let mut i = 0;
    while let Some(chunk) = t.get(i..i + 16) {
        let word = u128::from_ne_bytes(chunk.try_into().unwrap_or([0x80; 16]));
        if word & HIGH != 0 {
            break;
        }
        i += 16;
    }
    i + t[i..].iter().take_while(|b| b.is_ascii()).count()
}

fn push_ascii_lowercase(out: &mut Vec<u8>, ascii: &[u8]) {
    let start = out.len();
    out.extend_from_slice(ascii);
    out[start..].make_ascii_lowercase();
}

/// Where the next lone surrogate (three bytes, `ED A0..BF xx`) starts.
fn next_lone_surrogate(t: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = memchr::memchr(0xed, &t[from..]) {
        let i = from + p;
        if t.get(i + 1).is_some_and(|b| (0xa0..=0xbf).contains(b)) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// Lowercases a piece of text whose ends are safe cuts (see `is_context_stop`).
fn lowercase_piece(mut piece: &[u8], out: &mut Vec<u8>) {
    loop {
        let valid_end = next_lone_surrogate(piece).unwrap_or(piece.len());
        lowercase_valid(&piece[..valid_end], out);
        if valid_end == piece.len() {
            return;
        }
        let end = (valid_end + 3).min(piece.len());
        out.extend_from_slice(&piece[valid_end..end]);
        piece = &piece[end..];
    }
}

fn lowercase_valid(bytes: &[u8], out: &mut Vec<u8>) {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    // Only a capital sigma depends on its neighbours: the rest maps a
    // character at a time.
    if text.contains('\u{3a3}') {
        out.extend_from_slice(text.to_lowercase().as_bytes());
        return;
    }
    let mut buf = [0; 4];
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase() as u8);
        } else {
            for l in c.to_lowercase() {
                out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// `toLowerCase()` of UTF-16 units.
pub fn to_lowercase_utf16(units: &[u16]) -> Vec<u16> {
    if units.iter().all(|&u| u < 0x80) {
        return units
            .iter()
            .map(|&u| (u as u8).to_ascii_lowercase() as u16)
            .collect();
    }
    wtf8_to_utf16(&to_lowercase_wtf8(&utf16_to_wtf8(units)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn lowercases_like_javascript() {
        let cases = [
            ("Hello WORLD", "hello world"),
            ("İstanbul", "i\u{307}stanbul"),
            ("ẞ STRASSE", "ß strasse"),
            ("ΟΔΥΣΣΕΥΣ", "οδυσσευς"),
            ("ΑΣ.Β", "ασ.β"),
            ("Α.Σ Β", "α.ς β"),
            ("ΑΣ'Β", "ασ'β"),
            ("Σ", "σ"),
            ("AΣ", "aς"),
            ("1Σ", "1σ"),
            ("ABC 𐐀 DEF", "abc 𐐨 def"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                String::from_utf8(to_lowercase_wtf8(input.as_bytes())).unwrap(),
                expected,
                "{input}"
            );
            assert_eq!(to_lowercase_utf16(&u(input)), u(expected), "{input}");
        }
    }

    #[test]
    fn lone_surrogates_stay_and_end_a_sigma_context() {
        // "AΣ\uD800" : the surrogate follows, so the sigma is final.
        let mut units = u("AΣ");
        units.push(0xd800);
        let mut expected = u("aς");
        expected.push(0xd800);
        assert_eq!(to_lowercase_utf16(&units), expected);
        // "A\uDC00ΣB": the surrogate before it is not cased: not final.
        let units = [0x41, 0xdc00, 0x3a3, 0x42];
        assert_eq!(to_lowercase_utf16(&units), [0x61, 0xdc00, 0x3c3, 0x62]);
        // A pair split across the conversion stays a pair.
        let pair = u("X😀Y");
        assert_eq!(to_lowercase_utf16(&pair), u("x😀y"));
    }

    #[test]
    fn conversions_round_trip() {
        let units: Vec<u16> = vec![0x61, 0xd800, 0x62, 0xdc00, 0xd83d, 0xde00, 0xdbff];
        assert_eq!(wtf8_to_utf16(&utf16_to_wtf8(&units)), units);
        assert!(has_lone_surrogate(&units));
        assert!(!has_lone_surrogate(&u("a😀b")));
    }

    #[test]
    fn whitespace_like_javascript() {
        let text = "\u{feff} a\t\n b\u{3000}c\u{2028}\u{a0}d \u{85}e ";
        let expected = "a b c d \u{85}e";
        assert_eq!(
            String::from_utf8(collapse_whitespace_wtf8(text.as_bytes())).unwrap(),
            expected
        );
        assert_eq!(collapse_whitespace_utf16(&u(text)), u(expected));
        assert_eq!(trim_utf16(&u("\u{2029} x y\u{205f}")), u("x y").as_slice());
        assert_eq!(trim_utf16(&u(" \t ")), &[] as &[u16]);
    }
}

#[cfg(test)]
mod speed {
    #[test]
    #[ignore]
    fn lowercase_speed() {
        let mut text = String::new();
        let odd = ["→", "✓", "é", "Привет", "日本語", "🙂", "ΑΒΓ"];
        let mut i = 0;
        while text.len() < 50 << 20 {
            text.push_str("The Quick brown fox jumps over the lazy dog; config = Value(42) ");
            if i % 3 == 0 {
                text.push_str(odd[i % odd.len()]);
            }
            i += 1;
        }
        let bytes = text.as_bytes();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let mut base = bytes.to_vec();
            base.make_ascii_lowercase();
            let t1 = t.elapsed();
            let t = std::time::Instant::now();
            let ours = super::to_lowercase_wtf8(bytes);
            let t2 = t.elapsed();
            let t = std::time::Instant::now();
            let std_lower = text.to_lowercase();
            let t3 = t.elapsed();
            let t = std::time::Instant::now();
            let c = super::collapse_whitespace_wtf8(&ours);
            let t4 = t.elapsed();
            assert_eq!(ours, std_lower.as_bytes());
            eprintln!(
                "{} MB: ascii map {t1:?}, ours {t2:?}, std {t3:?}, collapse {t4:?} {}",
                bytes.len() >> 20,
                base.len() + c.len()
            );
        }
    }
}
