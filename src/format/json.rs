//! JSON with the exact semantics of V8's `JSON.parse` and `JSON.stringify`.
//!
//! serde_json is stricter than `JSON.parse` in ways that matter for session files
//! (it rejects lone surrogate escapes and nests at most 128 deep) and it formats
//! numbers differently from `JSON.stringify`. A line that `JSON.parse` accepts must
//! be an entry here too, and a line we re-serialize must be byte-identical to what
//! the reference writes, so this module implements the small grammar itself:
//! iterative (no recursion, so any nesting depth works), strings kept as WTF-8 so
//! lone surrogates survive, numbers as f64 formatted with `ryu_js` like JavaScript.

use foldhash::HashMap;
use std::borrow::Cow;

/// A parsed JSON value, as `JSON.parse` would build it.
#[derive(Debug, Clone, PartialEq)]
pub enum JsValue {
    Null,
    Bool(bool),
    Num(f64),
    /// WTF-8: UTF-8 that may also hold lone surrogates (from `\uD800`-style escapes).
    Str(Vec<u8>),
    Arr(Vec<JsValue>),
    /// Keys in insertion order; a repeated key keeps its first position and last value.
    Obj(Vec<(Vec<u8>, JsValue)>),
}

impl JsValue {
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        match self {
            JsValue::Obj(members) => members
                .iter()
                .find(|(k, _)| k == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        match self {
            JsValue::Obj(members) => members
                .iter_mut()
                .find(|(k, _)| k == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// `obj[key] = value`: replaces in place, or appends a new key at the end.
    pub fn set(&mut self, key: &str, value: JsValue) {
        if let JsValue::Obj(members) = self {
            match members.iter_mut().find(|(k, _)| k == key.as_bytes()) {
                Some((_, v)) => *v = value,
                None => members.push((key.as_bytes().to_vec(), value)),
            }
        }
    }

    /// `delete obj[key]`.
    pub fn remove(&mut self, key: &str) {
        if let JsValue::Obj(members) = self {
            members.retain(|(k, _)| k != key.as_bytes());
        }
    }

    pub fn str(s: &str) -> JsValue {
        JsValue::Str(s.as_bytes().to_vec())
    }

    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            JsValue::Str(bytes) => Some(String::from_utf8_lossy(bytes)),
            _ => None,
        }
    }

    /// JavaScript truthiness of the value.
    pub fn truthy(&self) -> bool {
        match self {
            JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Num(n) => *n != 0.0 && !n.is_nan(),
            JsValue::Str(s) => !s.is_empty(),
            JsValue::Arr(_) | JsValue::Obj(_) => true,
        }
    }
}

// The derived drop would recurse once per nesting level and overflow the stack on
// deeply nested input; this one flattens the tree first.
impl Drop for JsValue {
    fn drop(&mut self) {
        let mut pending: Vec<JsValue> = match self {
            JsValue::Arr(items) if !items.is_empty() => std::mem::take(items),
            JsValue::Obj(members) if !members.is_empty() => std::mem::take(members)
                .into_iter()
                .map(|(_, v)| v)
                .collect(),
            _ => return,
        };
        while let Some(mut value) = pending.pop() {
            match &mut value {
                JsValue::Arr(items) => pending.append(items),
                JsValue::Obj(members) => pending.extend(members.drain(..).map(|(_, v)| v)),
                _ => {}
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxError;

/// Lines may hold invalid UTF-8: the reference decodes files with replacement
/// characters before parsing, so we do the same before looking at the grammar.
pub fn decode_lossy(line: &[u8]) -> Cow<'_, [u8]> {
    match String::from_utf8_lossy(line) {
        Cow::Borrowed(_) => Cow::Borrowed(line),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A cursor over one JSON text. All methods validate as they go.
pub struct Cursor<'a> {
    pub s: &'a [u8],
    pub i: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(s: &'a [u8]) -> Self {
        Cursor { s, i: 0 }
    }

    pub fn skip_ws(&mut self) {
        while self.i < self.s.len() && is_ws(self.s[self.i]) {
            self.i += 1;
        }
    }

    pub fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    pub(crate) fn literal(&mut self, word: &[u8]) -> Result<(), SyntaxError> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(SyntaxError)
        }
    }

    /// Skips a string starting at the opening quote; returns the raw span between
    /// the quotes and whether it holds escapes.
    #[inline]
    pub fn skip_string(&mut self) -> Result<(usize, usize, bool), SyntaxError> {
        self.expect(b'"')?;
        let start = self.i;
        match string_body(self.s, start) {
            Ok((end, escaped)) => {
                self.i = end + 1;
                Ok((start, end, escaped))
            }
            Err(at) => {
                // Where the reading stopped tells an unfinished text from a bad one.
                self.i = at;
                Err(SyntaxError)
            }
        }
    }

    /// Skips a number; returns its text.
    pub fn skip_number(&mut self) -> Result<&'a [u8], SyntaxError> {
        let s = self.s;
        let start = self.i;
        if s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while matches!(s.get(self.i), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return Err(SyntaxError),
        }
        if s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !matches!(s.get(self.i), Some(b'0'..=b'9')) {
                return Err(SyntaxError);
            }
            while matches!(s.get(self.i), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        if matches!(s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(s.get(self.i), Some(b'0'..=b'9')) {
                return Err(SyntaxError);
            }
            while matches!(s.get(self.i), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        Ok(&s[start..self.i])
    }

    /// Skips one complete value of any depth without recursion.
    pub fn skip_value(&mut self) -> Result<(), SyntaxError> {
        // Open containers: true for an object, false for an array.
        let mut stack = ContainerStack::default();
        'value: loop {
            self.skip_ws();
            match self.peek().ok_or(SyntaxError)? {
                b'{' => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                    } else {
                        self.skip_string()?;
                        self.skip_ws();
                        self.expect(b':')?;
                        stack.push(true);
                        continue 'value;
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                    } else {
                        stack.push(false);
                        continue 'value;
                    }
                }
                b'"' => {
                    self.skip_string()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => {
                    self.skip_number()?;
                }
            }
            // A value is complete: close containers or move to the next member.
            loop {
                let Some(is_object) = stack.last() else {
                    return Ok(());
                };
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        if is_object {
                            self.skip_ws();
                            self.skip_string()?;
                            self.skip_ws();
                            self.expect(b':')?;
                        }
                        continue 'value;
                    }
                    Some(b'}') if is_object => {
                        self.i += 1;
                        stack.pop();
                    }
                    Some(b']') if !is_object => {
                        self.i += 1;
                        stack.pop();
                    }
                    _ => return Err(SyntaxError),
                }
            }
        }
    }
}

/// The closing quote of the string body starting at `from`, and whether the body
/// holds escapes; for a raw control character, a bad escape or no end, the
/// position where the reading stopped.
#[inline(always)]
fn string_body(s: &[u8], from: usize) -> Result<(usize, bool), usize> {
    // Most strings are short (keys, ids, roles, types): their first 32 bytes
    // answer those inline, without a call or a feature check.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        if from + 32 <= s.len() {
            // SAFETY: SSE2 (x86_64) and NEON (aarch64) are part of the baseline;
            // the 32 bytes are in `s`.
            let specials = unsafe { string_specials_32(s.as_ptr().add(from)) };
            if specials != 0 {
                let at = from + specials.trailing_zeros() as usize;
                // SAFETY: `at` is one of the 32 bytes from `from`, all in `s`.
                if unsafe { *s.get_unchecked(at) } == b'"' {
                    return Ok((at, false));
                }
            }
            return string_body_long(s, from, specials);
        }
    }
    string_body_short(s, from)
}

/// `string_body` past a first 32 bytes that hold no closing quote first
/// (`specials`: their quotes, backslashes and control characters).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn string_body_long(s: &[u8], from: usize, specials: u32) -> Result<(usize, bool), usize> {
    if is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        return unsafe {
            if specials == 0 {
                string_body_avx2(s, from + 32)
            } else {
                string_body_avx2(s, from)
            }
        };
    }
    string_body_from(s, from, false)
}

/// `string_body` past a first 32 bytes that hold no closing quote first.
#[cfg(target_arch = "aarch64")]
#[inline(never)]
fn string_body_long(s: &[u8], from: usize, specials: u32) -> Result<(usize, bool), usize> {
    string_body_from(s, if specials == 0 { from + 32 } else { from }, false)
}

/// `string_body` within 32 bytes of the end of `s`.
#[inline(never)]
fn string_body_short(s: &[u8], from: usize) -> Result<(usize, bool), usize> {
    if let Some(head) = s.get(from..from + 16) {
        let words = [&head[..8], &head[8..]];
        for (k, word) in words.into_iter().enumerate() {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            let specials = string_specials_8(word);
            if specials != 0 {
                let at = from + 8 * k + (specials.trailing_zeros() / 8) as usize;
                if s[at] == b'"' {
                    return Ok((at, false));
                }
                break;
            }
        }
    }
    string_body_from(s, from, false)
}

/// Bit i set when byte i of the 32 at `p` is a quote, a backslash or a control
/// character.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn string_specials_32(p: *const u8) -> u32 {
    use std::arch::x86_64::*;
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let control_max = _mm_set1_epi8(0x1f);
    let special = |v: __m128i| {
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v);
        let stop = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
        _mm_movemask_epi8(_mm_or_si128(stop, control)) as u32
    };
    let a = special(_mm_loadu_si128(p as *const __m128i));
    let b = special(_mm_loadu_si128(p.add(16) as *const __m128i));
    a | (b << 16)
}

/// Bit i set when byte i of the 32 at `p` is a quote, a backslash or a control
/// character: the x86 movemask, built by weighting each lane of the comparison
/// with its bit and adding neighbouring lanes (as simdjson does).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn string_specials_32(p: *const u8) -> u32 {
    use std::arch::aarch64::*;
    const BITS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
    let bits = vld1q_u8(BITS.as_ptr());
    let a = vandq_u8(string_specials_16(vld1q_u8(p)), bits);
    let b = vandq_u8(string_specials_16(vld1q_u8(p.add(16))), bits);
    // Three rounds of pairwise sums fold 32 weighted lanes into 4 bytes.
    let sum = vpaddq_u8(a, b);
    let sum = vpaddq_u8(sum, sum);
    let sum = vpaddq_u8(sum, sum);
    vgetq_lane_u32::<0>(vreinterpretq_u32_u8(sum))
}

/// 0xff in each lane of `v` that is a quote, a backslash or a control character.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn string_specials_16(v: std::arch::aarch64::uint8x16_t) -> std::arch::aarch64::uint8x16_t {
    use std::arch::aarch64::*;
    let quote = vceqq_u8(v, vdupq_n_u8(b'"'));
    let backslash = vceqq_u8(v, vdupq_n_u8(b'\\'));
    let control = vcltq_u8(v, vdupq_n_u8(0x20));
    vorrq_u8(vorrq_u8(quote, backslash), control)
}

/// The high bit of each byte of `word` (little-endian) that is a quote, a
/// backslash or a control character; exact for the lowest such byte (a borrow
/// may flag bytes above it).
#[inline(always)]
fn string_specials_8(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_byte(word ^ (ONES * b'"' as u64));
    let backslash = zero_byte(word ^ (ONES * b'\\' as u64));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

/// The length of the escape at `s[at]` (a backslash): 2, or 6 for `\uXXXX`.
#[inline(always)]
fn escape_len(s: &[u8], at: usize) -> Result<usize, SyntaxError> {
    match s.get(at + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(2),
        Some(b'u') => {
            let hex = s.get(at + 2..at + 6).ok_or(SyntaxError)?;
            if hex.iter().all(u8::is_ascii_hexdigit) {
                Ok(6)
            } else {
                Err(SyntaxError)
            }
        }
        _ => Err(SyntaxError),
    }
}

/// `string_body` one special character at a time.
fn string_body_from(s: &[u8], mut i: usize, mut escaped: bool) -> Result<(usize, bool), usize> {
    loop {
        // Long runs of plain text (base64 images, tool output) dominate: find the
        // next quote, backslash or control character many bytes at a time.
        i += find_string_special(&s[i..]);
        match s.get(i) {
            Some(b'"') => return Ok((i, escaped)),
            Some(b'\\') => {
                escaped = true;
                i += escape_len(s, i).map_err(|_| i)?;
            }
            _ => return Err(i),
        }
    }
}

/// `string_body` 64 bytes a step: every quote, backslash and control character
/// of a step is handled from one mask, so text with many escapes (code, tool
/// output) does not restart the scan at each one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn string_body_avx2(s: &[u8], from: usize) -> Result<(usize, bool), usize> {
    let mut escaped = false;
    let mut i = from;
    'step: while i + 64 <= s.len() {
        let mut mask = string_specials_64(s.as_ptr().add(i));
        while mask != 0 {
            let at = i + mask.trailing_zeros() as usize;
            match s[at] {
                b'"' => return Ok((at, escaped)),
                b'\\' => {
                    escaped = true;
                    let next = at + escape_len(s, at).map_err(|_| at)?;
                    let used = next - i;
                    if used >= 64 {
                        i = next;
                        continue 'step;
                    }
                    // Bits of the escape's own characters are not specials.
                    mask &= u64::MAX << used;
                }
                _ => return Err(at),
            }
        }
        i += 64;
    }
    string_body_from(s, i, escaped)
}

pub fn find_string_special(s: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // Short runs are the common case between escapes: not worth a wide loop.
        if s.len() >= 128 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present (checked above); loads stay within `s`.
            return unsafe { find_string_special_avx2(s) };
        }
        // SAFETY: SSE2 is part of the x86_64 baseline; loads stay within `s`.
        unsafe { find_string_special_sse2(s) }
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: NEON is part of the aarch64 baseline; loads stay within `s`.
        unsafe { find_string_special_neon(s) }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        find_string_special_scalar(s, 0)
    }
}

/// `find_string_special` 16 bytes a step. NEON has no movemask: narrowing the
/// comparison by a shift of 4 leaves one nibble per byte in a 64-bit word
/// (as memchr does), whose trailing zeros / 4 are the first special's index.
#[cfg(target_arch = "aarch64")]
#[inline]
unsafe fn find_string_special_neon(s: &[u8]) -> usize {
    use std::arch::aarch64::*;
    let mut i = 0;
    while i + 16 <= s.len() {
        let specials = string_specials_16(vld1q_u8(s.as_ptr().add(i)));
        let nibbles = vshrn_n_u16::<4>(vreinterpretq_u16_u8(specials));
        let mask = vget_lane_u64::<0>(vreinterpret_u64_u8(nibbles));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 4) as usize;
        }
        i += 16;
    }
    find_string_special_scalar(s, i)
}

fn find_string_special_scalar(s: &[u8], from: usize) -> usize {
    s[from..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map_or(s.len(), |o| from + o)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn find_string_special_sse2(s: &[u8]) -> usize {
    let mut i = 0;
    while i + 32 <= s.len() {
        let mask = string_specials_32(s.as_ptr().add(i));
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 32;
    }
    find_string_special_scalar(s, i)
}

/// Bit i set when byte i of the 64 at `p` is a quote, a backslash or a control
/// character.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn string_specials_64(p: *const u8) -> u64 {
    use std::arch::x86_64::*;
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let control_max = _mm256_set1_epi8(0x1f);
    let special = |v: __m256i| {
        let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, control_max), v);
        let stop = _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash));
        _mm256_movemask_epi8(_mm256_or_si256(stop, control)) as u32 as u64
    };
    let a = special(_mm256_loadu_si256(p as *const __m256i));
    let b = special(_mm256_loadu_si256(p.add(32) as *const __m256i));
    a | (b << 32)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn find_string_special_avx2(s: &[u8]) -> usize {
    let mut i = 0;
    while i + 64 <= s.len() {
        let mask = string_specials_64(s.as_ptr().add(i));
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 64;
    }
    i + find_string_special_sse2(&s[i..])
}

/// The open containers of `skip_value`: the first 64 levels as bits (no
/// allocation for the usual shallow line), deeper ones in a vector.
#[derive(Default)]
struct ContainerStack {
    bits: u64,
    len: usize,
    deeper: Vec<bool>,
}

impl ContainerStack {
    #[inline]
    fn push(&mut self, is_object: bool) {
        if self.len < 64 {
            self.bits = (self.bits & !(1 << self.len)) | (is_object as u64) << self.len;
        } else {
            self.deeper.push(is_object);
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= 64 {
            self.deeper.pop();
        }
    }

    #[inline]
    fn last(&self) -> Option<bool> {
        match self.len {
            0 => None,
            n if n <= 64 => Some(self.bits >> (n - 1) & 1 == 1),
            _ => self.deeper.last().copied(),
        }
    }
}

/// Whether no continuation of `prefix` can be a JSON text: a syntax error well
/// before the end (not just input that stops early). Lets a reader drop a huge
/// line that cannot parse (a sparse file of NUL bytes) instead of holding it.
pub fn prefix_is_invalid(prefix: &[u8]) -> bool {
    const SLACK: usize = 16;
    let mut cur = Cursor::new(prefix);
    cur.skip_ws();
    match cur.skip_value() {
        Ok(()) => {
            cur.skip_ws();
            cur.i < prefix.len()
        }
        Err(SyntaxError) => cur.i + SLACK < prefix.len(),
    }
}

pub(crate) fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |acc, &c| {
        acc * 16 + (c as char).to_digit(16).unwrap_or(0)
    })
}

fn push_wtf8(out: &mut Vec<u8>, cp: u32) {
    // Like UTF-8, but also encodes lone surrogates (0xD800..=0xDFFF) in three bytes.
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.push(0xC0 | (cp >> 6) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else if cp < 0x10000 {
        out.push(0xE0 | (cp >> 12) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else {
        out.push(0xF0 | (cp >> 18) as u8);
        out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    }
}

/// Decodes the raw text between the quotes of a validated string into WTF-8.
pub fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        // The text between escapes is copied a run at a time.
        let run = memchr::memchr(b'\\', &raw[i..]).unwrap_or(raw.len() - i);
        out.extend_from_slice(&raw[i..i + run]);
        i += run;
        if i == raw.len() {
            break;
        }
        let c = raw[i + 1];
        i += 2;
        match c {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let mut cp = hex4(&raw[i..i + 4]);
                i += 4;
                if (0xD800..0xDC00).contains(&cp)
                    && raw.get(i) == Some(&b'\\')
                    && raw.get(i + 1) == Some(&b'u')
                {
                    let low = hex4(&raw[i + 2..i + 6]);
                    if (0xDC00..0xE000).contains(&low) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    }
                }
                push_wtf8(&mut out, cp);
            }
            other => out.push(other),
        }
    }
    out
}

/// Parses the string at the cursor into WTF-8 bytes.
pub fn parse_string(cur: &mut Cursor) -> Result<Vec<u8>, SyntaxError> {
    Ok(parse_string_ref(cur)?.into_owned())
}

/// Like `parse_string`, borrowing the text when it holds no escapes.
pub fn parse_string_ref<'a>(cur: &mut Cursor<'a>) -> Result<Cow<'a, [u8]>, SyntaxError> {
    let (start, end, escaped) = cur.skip_string()?;
    let raw = &cur.s[start..end];
    Ok(if escaped {
        Cow::Owned(unescape(raw))
    } else {
        Cow::Borrowed(raw)
    })
}

/// Number text to the f64 `JSON.parse` produces (correctly rounded, overflow to infinity).
pub fn number_value(text: &[u8]) -> f64 {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

enum Frame {
    Arr(Vec<JsValue>),
    Obj {
        members: Vec<(Vec<u8>, JsValue)>,
        key: Vec<u8>,
        // Built once objects get large, so repeated keys stay linear to find.
        positions: Option<HashMap<Vec<u8>, usize>>,
    },
}

const LINEAR_KEY_SEARCH: usize = 32;

fn add_member(
    members: &mut Vec<(Vec<u8>, JsValue)>,
    positions: &mut Option<HashMap<Vec<u8>, usize>>,
    key: Vec<u8>,
    value: JsValue,
) {
    if positions.is_none() && members.len() >= LINEAR_KEY_SEARCH {
        let map = members
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (k.clone(), i))
            .collect();
        *positions = Some(map);
    }
    let existing = match positions {
        Some(map) => map.get(&key).copied(),
        None => members.iter().position(|(k, _)| *k == key),
    };
    match existing {
        Some(at) => members[at].1 = value,
        None => {
            if let Some(map) = positions {
                map.insert(key.clone(), members.len());
            }
            members.push((key, value));
        }
    }
}

/// `JSON.parse` of a whole text (already lossily decoded).
pub fn parse(text: &[u8]) -> Result<JsValue, SyntaxError> {
    let mut cur = Cursor::new(text);
    let mut stack: Vec<Frame> = Vec::new();
    let result = 'value: loop {
        cur.skip_ws();
        let mut done = match cur.peek().ok_or(SyntaxError)? {
            b'{' => {
                cur.i += 1;
                cur.skip_ws();
                if cur.peek() == Some(b'}') {
                    cur.i += 1;
                    JsValue::Obj(Vec::new())
                } else {
                    let key = parse_string(&mut cur)?;
                    cur.skip_ws();
                    cur.expect(b':')?;
                    stack.push(Frame::Obj {
                        members: Vec::new(),
                        key,
                        positions: None,
                    });
                    continue 'value;
                }
            }
            b'[' => {
                cur.i += 1;
                cur.skip_ws();
                if cur.peek() == Some(b']') {
                    cur.i += 1;
                    JsValue::Arr(Vec::new())
                } else {
                    stack.push(Frame::Arr(Vec::new()));
                    continue 'value;
                }
            }
            b'"' => JsValue::Str(parse_string(&mut cur)?),
            b't' => {
                cur.literal(b"true")?;
                JsValue::Bool(true)
            }
            b'f' => {
                cur.literal(b"false")?;
                JsValue::Bool(false)
            }
            b'n' => {
                cur.literal(b"null")?;
                JsValue::Null
            }
            _ => JsValue::Num(number_value(cur.skip_number()?)),
        };
        loop {
            let Some(frame) = stack.last_mut() else {
                break 'value done;
            };
            cur.skip_ws();
            let next = cur.peek();
            match frame {
                Frame::Arr(items) => {
                    items.push(done);
                    match next {
                        Some(b',') => {
                            cur.i += 1;
                            continue 'value;
                        }
                        Some(b']') => {
                            cur.i += 1;
                            let Some(Frame::Arr(items)) = stack.pop() else {
                                unreachable!()
                            };
                            done = JsValue::Arr(items);
                        }
                        _ => return Err(SyntaxError),
                    }
                }
                Frame::Obj {
                    members,
                    key,
                    positions,
                } => {
                    add_member(members, positions, std::mem::take(key), done);
                    match next {
                        Some(b',') => {
                            cur.i += 1;
                            cur.skip_ws();
                            *key = parse_string(&mut cur)?;
                            cur.skip_ws();
                            cur.expect(b':')?;
                            continue 'value;
                        }
                        Some(b'}') => {
                            cur.i += 1;
                            let Some(Frame::Obj { members, .. }) = stack.pop() else {
                                unreachable!()
                            };
                            done = JsValue::Obj(members);
                        }
                        _ => return Err(SyntaxError),
                    }
                }
            }
        }
    };
    cur.skip_ws();
    if cur.i != text.len() {
        return Err(SyntaxError);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json_text::*;

    #[test]
    fn skip_value_tracks_containers_beyond_64_levels() {
        for depth in [1, 63, 64, 65, 200] {
            let open = "[{\"a\":".repeat(depth);
            let close = "}]".repeat(depth);
            let good = format!("{open}1{close}");
            let mut cur = Cursor::new(good.as_bytes());
            assert_eq!(cur.skip_value(), Ok(()), "{depth}");
            assert_eq!(cur.i, good.len());
            // The innermost object closed as an array, and the outermost array
            // closed as an object: both are errors at any depth.
            let inner = format!("{open}1]{}", &close[1..]);
            assert_eq!(Cursor::new(inner.as_bytes()).skip_value(), Err(SyntaxError));
            let outer = format!("{open}1{}}}", &close[..close.len() - 1]);
            assert_eq!(Cursor::new(outer.as_bytes()).skip_value(), Err(SyntaxError));
        }
    }

    /// The string at the start of `s`, one byte at a time: span between the
    /// quotes and whether it holds escapes.
    fn bytewise_string(s: &[u8]) -> Result<(usize, usize, bool), SyntaxError> {
        let mut i = 1;
        let mut escaped = false;
        loop {
            match s.get(i) {
                Some(b'"') => return Ok((1, i, escaped)),
                Some(b'\\') => {
                    escaped = true;
                    match s.get(i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        Some(b'u') => {
                            let hex = s.get(i + 2..i + 6).ok_or(SyntaxError)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(SyntaxError);
                            }
                            i += 6;
                        }
                        _ => return Err(SyntaxError),
                    }
                }
                Some(&b) if b >= 0x20 => i += 1,
                _ => return Err(SyntaxError),
            }
        }
    }

    fn roundtrip(s: &str) -> String {
        String::from_utf8(stringify(&parse(s.as_bytes()).unwrap())).unwrap()
    }

    #[test]
    fn stringify_matches_javascript() {
        assert_eq!(
            roundtrip(r#" { "a" : 1.50 , "b":[ ] } "#),
            r#"{"a":1.5,"b":[]}"#
        );
        assert_eq!(
            roundtrip("[1e21,1e-7,-0,0.1,100,12345678901234567890]"),
            "[1e+21,1e-7,0,0.1,100,12345678901234567000]"
        );
        assert_eq!(roundtrip(r#""\u00e9\/\u001F\n""#), "\"é/\\u001f\\n\"");
        assert_eq!(roundtrip(r#""\ud800x\ud83d\ude00""#), "\"\\ud800x😀\"");
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(roundtrip("[1e400]"), "[null]");
    }

    #[test]
    fn grammar_is_strict_like_json_parse() {
        for bad in [
            "", "{", "[1,]", "{\"a\":}", "01", "1.", "-", "\"\t\"", "tru", "{}x", "'a'", "[1 2]",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} must fail");
        }
        for good in [
            "0",
            " -0.5e+3 ",
            "\"\\u0041\"",
            "[[[]]]",
            "{\"\":null}",
            "true\r",
        ] {
            assert!(parse(good.as_bytes()).is_ok(), "{good:?} must parse");
        }
    }

    #[test]
    // Up to 200 bytes: past the 128 where the AVX2 loop takes over.
    fn string_specials_are_found_in_any_position() {
        for len in 0..200 {
            assert_eq!(find_string_special(&vec![b'a'; len]), len);
            for at in 0..len {
                for (special, found) in [
                    (b'"', true),
                    (b'\\', true),
                    (0x1f, true),
                    (0x00, true),
                    (0x20, false),
                    (0xff, false),
                    (0x80, false),
                ] {
                    let mut bytes = vec![0xc3; len];
                    bytes[at] = special;
                    let expect = if found { at } else { len };
                    assert_eq!(find_string_special(&bytes), expect, "{len} {at} {special}");
                }
            }
        }
    }

    #[test]
    fn strings_match_a_byte_by_byte_reading() {
        // Strings built two ways, across the 16-byte word path and the 64-byte
        // steps: escape-heavy pieces, some broken; and bodies drawn from an
        // alphabet of plain bytes, escapes and bytes one bit away from a quote,
        // a backslash or a control character. `skip_string` (from the quote)
        // and `string_body` (after it) must agree with `bytewise_string` on the
        // span, the escape flag and whether the string is valid.
        let pieces: [&[u8]; 14] = [
            b"a",
            b"abcdefghij",
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\u001b",
            b"\\uD83D\\uDE00",
            b"\\",
            b"\\x",
            b"\\u12",
            b"\x01",
            b"\"",
            "\u{e9}\u{65e5}".as_bytes(),
            b"\\/",
        ];
        let mut alphabet = vec![b'a'; 200];
        alphabet.extend_from_slice(b"\\\\\\\\\\\\\\\\nnnnu0fF/\x01\xc3\xa9 \"");
        alphabet.extend_from_slice(b"\xa2\xdc\x9f\x7f\x20\x21\x1f\x02");
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40_000 {
            let mut text = b"\"".to_vec();
            if round % 2 == 0 {
                for _ in 0..next() % 80 {
                    let r = next() as usize;
                    // Mostly well-formed pieces; the broken ones now and then.
                    let piece = if r.is_multiple_of(13) {
                        r / 13 % 14
                    } else {
                        r / 13 % 7
                    };
                    text.extend_from_slice(pieces[piece]);
                }
            } else {
                for _ in 0..next() % 400 {
                    text.push(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
            }
            // Mostly strings that end, some that run off the end.
            if !next().is_multiple_of(6) {
                text.extend_from_slice(b"\"}");
            }
            let expected = bytewise_string(&text);
            let shown = String::from_utf8_lossy(&text);
            let mut cur = Cursor::new(&text);
            assert_eq!(cur.skip_string(), expected, "{shown}");
            if let Ok((_, end, _)) = expected {
                assert_eq!(cur.i, end + 1);
            }
            let body = string_body(&text, 1).map(|(end, escaped)| (1, end, escaped));
            assert_eq!(body.map_err(|_| SyntaxError), expected, "{shown}");
        }
    }

    /// The first quote, backslash or control character of `s`, one byte at a time.
    fn bytewise_special(s: &[u8]) -> usize {
        s.iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(s.len())
    }

    /// `string_body` one byte at a time, with the same stop position on errors:
    /// the raw control character, the backslash of a bad or cut escape, or the end.
    fn bytewise_body(s: &[u8], from: usize) -> Result<(usize, bool), usize> {
        let mut i = from;
        let mut escaped = false;
        loop {
            match s.get(i) {
                None => return Err(i),
                Some(b'"') => return Ok((i, escaped)),
                Some(b'\\') => {
                    escaped = true;
                    match s.get(i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        Some(b'u') => match s.get(i + 2..i + 6) {
                            Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => i += 6,
                            _ => return Err(i),
                        },
                        _ => return Err(i),
                    }
                }
                Some(&b) if b < 0x20 => return Err(i),
                Some(_) => i += 1,
            }
        }
    }

    /// Random text of `len` bytes, rich in what the scanners stop at (quotes,
    /// backslashes, escapes whole, cut and bad, control bytes) and in bytes
    /// next to them (0x20, 0x7f, UTF-8 lead and continuation bytes); `density`
    /// in 1/256ths of a piece being one of those rather than plain ASCII, so
    /// some texts stop early and some run past 32, 64 and 128 bytes.
    fn scan_text(next: &mut impl FnMut() -> u64, len: usize, density: u64) -> Vec<u8> {
        const PIECES: [&[u8]; 22] = [
            b"\"",
            b"\\",
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            b"\\u12",
            b"\\x",
            b"\\u00g0",
            b"\x00",
            b"\x1f",
            b"\x01",
            b"\t",
            b"\x20",
            b"\x7f",
            b"\x21\x5b\x5d",
            "\u{e9}".as_bytes(),
            "\u{65e5}".as_bytes(),
            "\u{1f600}".as_bytes(),
            b"\xff\x80\xc3",
        ];
        let mut text = Vec::with_capacity(len + 16);
        while text.len() < len {
            let r = next();
            if r % 256 < density {
                text.extend_from_slice(PIECES[(r >> 8) as usize % PIECES.len()]);
            } else {
                text.push(b'a' + (r >> 8) as u8 % 26);
            }
        }
        // Cutting the last piece leaves escapes and UTF-8 unfinished at the end.
        text.truncate(len);
        text
    }

    #[test]
    // Every SIMD path of the string scanning (SSE2, AVX2 where the CPU has it,
    // NEON on aarch64) and the scalar ones, each called directly, against a
    // byte-by-byte reading: at every length below 200 and every start offset.
    // Seeded; JSON_SCAN_SEED=<seed> repeats a run.
    fn string_scanning_paths_match_a_bytewise_reading() {
        let seed = std::env::var("JSON_SCAN_SEED")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                now.map_or(1, |d| d.as_nanos() as u64) | 1
            });
        eprintln!("string_scanning_paths_match_a_bytewise_reading: JSON_SCAN_SEED={seed}");
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut checked = 0u64;
        for len in 0..200 {
            for density in [0, 2, 8, 40, 128, 256] {
                let text = scan_text(&mut next, len, density);
                let fail = |path: &str, from: usize| {
                    format!(
                        "{path} differs from the bytewise reading: JSON_SCAN_SEED={seed} \
                         len {len} from {from} text {:?}",
                        String::from_utf8_lossy(&text)
                    )
                };
                for from in 0..=len {
                    let rest = &text[from..];
                    let special = bytewise_special(rest);
                    let mut finds = vec![
                        ("find_string_special", find_string_special(rest)),
                        ("scalar", find_string_special_scalar(rest, 0)),
                    ];
                    #[cfg(target_arch = "x86_64")]
                    {
                        // SAFETY: SSE2 is baseline; AVX2 is checked.
                        finds.push(("sse2", unsafe { find_string_special_sse2(rest) }));
                        if is_x86_feature_detected!("avx2") {
                            finds.push(("avx2", unsafe { find_string_special_avx2(rest) }));
                        }
                    }
                    #[cfg(target_arch = "aarch64")]
                    // SAFETY: NEON is baseline on aarch64.
                    finds.push(("neon", unsafe { find_string_special_neon(rest) }));
                    for (path, found) in finds {
                        assert_eq!(found, special, "{}", fail(path, from));
                    }

                    if rest.len() >= 8 {
                        let word = u64::from_le_bytes(rest[..8].try_into().unwrap());
                        let lowest = (string_specials_8(word).trailing_zeros() / 8) as usize;
                        assert_eq!(
                            lowest,
                            special.min(8),
                            "{}",
                            fail("string_specials_8", from)
                        );
                    }
                    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
                    if rest.len() >= 32 {
                        let expected = (0..32)
                            .filter(|&k| bytewise_special(&rest[k..k + 1]) == 0)
                            .fold(0u32, |mask, k| mask | 1 << k);
                        // SAFETY: baseline SIMD; the 32 bytes are in `rest`.
                        let mask = unsafe { string_specials_32(rest.as_ptr()) };
                        assert_eq!(mask, expected, "{}", fail("string_specials_32", from));
                    }
                    #[cfg(target_arch = "x86_64")]
                    if rest.len() >= 64 && is_x86_feature_detected!("avx2") {
                        let expected = (0..64)
                            .filter(|&k| bytewise_special(&rest[k..k + 1]) == 0)
                            .fold(0u64, |mask, k| mask | 1 << k);
                        // SAFETY: AVX2 is checked; the 64 bytes are in `rest`.
                        let mask = unsafe { string_specials_64(rest.as_ptr()) };
                        assert_eq!(mask, expected, "{}", fail("string_specials_64", from));
                    }

                    let body = bytewise_body(&text, from);
                    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
                    let mut bodies = vec![
                        ("string_body", string_body(&text, from)),
                        ("string_body_short", string_body_short(&text, from)),
                        ("string_body_from", string_body_from(&text, from, false)),
                    ];
                    #[cfg(target_arch = "x86_64")]
                    if is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 is checked.
                        bodies.push(("string_body_avx2", unsafe { string_body_avx2(&text, from) }));
                    }
                    for (path, found) in bodies {
                        assert_eq!(found, body, "{}", fail(path, from));
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 6 * (1..=200).sum::<u64>());
    }

    #[test]
    fn array_index_keys_come_first_as_in_javascript() {
        let text = br#"{"b":1,"10":2,"9":3,"01":4,"4294967295":5,"4294967294":6,"":7}"#;
        assert_eq!(
            stringify(&parse(text).unwrap()),
            br#"{"9":3,"10":2,"4294967294":6,"b":1,"01":4,"4294967295":5,"":7}"#.to_vec()
        );
        for (line, canonical) in [
            (r#"{"1":2,"b":1}"#, true),
            (r#"{"b":1,"1":2}"#, false),
            (r#"{"1":1,"2":2,"x":{"3":1,"a":2}}"#, true),
            (r#"{"2":1,"1":2}"#, false),
            (r#"{"a":{"b":1,"0":2}}"#, false),
            (r#"{"a":{"0":1},"1":2}"#, false),
            (r#"{"a":1,"01":2,"4294967295":3}"#, true),
        ] {
            assert_eq!(
                canonical_members(line.as_bytes()).is_some(),
                canonical,
                "{line}"
            );
        }
    }

    #[test]
    fn deep_nesting_needs_no_stack() {
        let deep = "[".repeat(200_000) + &"]".repeat(200_000);
        let v = parse(deep.as_bytes()).unwrap();
        assert_eq!(stringify(&v), deep.as_bytes());
        let mut c = Cursor::new(deep.as_bytes());
        c.skip_value().unwrap();
        assert_eq!(c.i, deep.len());
        drop(v);
    }

    #[test]
    fn canonical_lines_are_recognised() {
        for good in [
            r#"{"a":1,"b":[true,null,{"c":"x\"\n\u001f\ud800"}],"d":1.5,"e":1e+21}"#,
            "{}",
            r#"{"é":"😀"}"#,
        ] {
            assert!(canonical_members(good.as_bytes()).is_some(), "{good}");
        }
        for bad in [
            r#"{ "a":1}"#,
            r#"{"a":1.0}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\u001F"}"#,
            "{\"a\":1}\r",
            r#"{"a":-0}"#,
            r#"{"a":"\ud83d\ude00"}"#,
        ] {
            assert!(canonical_members(bad.as_bytes()).is_none(), "{bad}");
        }
        let members = canonical_members(br#"{"a":1,"b":{"c":2},"d":"x"}"#).unwrap();
        let spans: Vec<_> = members.iter().map(|(k, s, e)| (*k, *s, *e)).collect();
        assert_eq!(
            spans,
            vec![(&b"a"[..], 5, 6), (&b"b"[..], 11, 18), (&b"d"[..], 23, 26)]
        );
    }

    #[test]
    fn patches_match_a_full_rewrite() {
        let lines = [
            r#"{"a\"b":1,"parentId":"a"}"#,
            r#"{"type":"m","parentId":"a","id":"b"}"#,
            r#"{"type":"m","id":"b"}"#,
            r#"{"parentId":"a"}"#,
            r#"{"x":1,"parentId":"a","firstKeptEntryId":"q"}"#,
            r#"{ "type" : "m", "parentId":"a" }"#,
            "{}",
        ];
        let change_sets: [Vec<Change>; 4] = [
            vec![("a\"b", Some(b"2".to_vec()))],
            vec![("parentId", Some(b"null".to_vec()))],
            vec![
                ("parentId", Some(br#""z""#.to_vec())),
                ("firstKeptEntryId", Some(br#""k""#.to_vec())),
            ],
            vec![("parentId", None), ("firstKeptEntryId", None)],
        ];
        for line in lines {
            for changes in &change_sets {
                let fast = patch_line(line.as_bytes(), changes).unwrap();
                let slow = rewrite_line(line.as_bytes(), |v| {
                    for (key, to) in changes {
                        match to {
                            Some(text) => v.set(key, parse(text).unwrap()),
                            None => v.remove(key),
                        }
                    }
                })
                .unwrap();
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(slow).unwrap(),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn invalid_prefixes_are_told_from_unfinished_ones() {
        let nul = vec![0u8; 1000];
        assert!(prefix_is_invalid(&nul));
        let mut object = b"{".to_vec();
        object.extend_from_slice(&nul);
        assert!(prefix_is_invalid(&object));
        let mut long_string = br#"{"message":{"content":""#.to_vec();
        long_string.extend(std::iter::repeat_n(b'x', 1000));
        assert!(!prefix_is_invalid(&long_string));
        assert!(!prefix_is_invalid(b"{\"a\":[1,2,3"));
        assert!(prefix_is_invalid(
            b"{\"a\":1}                    garbage after the value"
        ));
    }

    #[test]
    fn rewrite_keeps_key_order() {
        let out = rewrite_line(br#"{"type":"x","parentId":"a","id":"b"}"#, |v| {
            v.set("parentId", JsValue::Null);
            v.set("extra", JsValue::Bool(true));
        })
        .unwrap();
        assert_eq!(
            out,
            br#"{"type":"x","parentId":null,"id":"b","extra":true}"#
        );
    }
}
