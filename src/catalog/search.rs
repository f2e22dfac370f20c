//! Session search with the semantics of pi 1.6.0's `/resume`
//! (`filterAndSortSessions` in the reference's
//! `modes/interactive/components/session-selector-search.js`, with pi-tui's
//! `fuzzyMatch`), over texts lowercased once per file version.
//!
//! Every comparison is on what JavaScript compares: names, ids and cwds as
//! UTF-16 units (fuzzy positions, word boundaries and gaps count units), the
//! message text as WTF-8, which finds exactly what a search of its UTF-16
//! finds for a needle without lone surrogates (other needles are searched in
//! UTF-16). Scores are the reference's doubles, computed in the same order.
//! `re:` patterns are JavaScript regular expressions: the binding's caller
//! runs them in V8 and hands the tiers back to `Catalog::rank`.

use std::sync::{Arc, Mutex, OnceLock};

use crate::format::json::{self, JsValue};
use crate::format::jsstring::{self as js, is_js_whitespace_unit};

/// Match tiers, best first; a tier outweighs any fuzzy score.
const TIER_NAME: f64 = 0.0;
const TIER_TEXT: f64 = 1.0;
const TIER_FUZZY: f64 = 2.0;
const TIER_WEIGHT: f64 = 1_000_000.0;

fn tier_score(tier: f64, score: f64) -> f64 {
    tier * TIER_WEIGHT + score
}

/// `session.id`, which the reference lowercases: a header's id may be any
/// JSON value, and anything but a string makes `toLowerCase` throw.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionId {
    /// Lowercased.
    Str(Vec<u16>),
    Undefined,
    Null,
    Other,
}

/// What a search reads of one session, lowercased with JavaScript's
/// `toLowerCase()`.
#[derive(Debug)]
pub struct SessionText {
    /// `session.name?.toLowerCase()`.
    name: Option<Vec<u16>>,
    /// `normalizeWhitespaceLower(session.name ?? "")`.
    name_collapsed: Vec<u16>,
    /// `hasSessionName(session)`.
    named: bool,
    id: SessionId,
    /// `session.cwd.toLowerCase()`, and with its whitespace collapsed.
    cwd: Vec<u16>,
    cwd_collapsed: Vec<u16>,
    /// `session.allMessagesText.toLowerCase()`, as WTF-8.
    text: Vec<u8>,
    /// The text with its whitespace collapsed (for phrases), made on the
    /// first phrase search; `None` when it is the same as `text`.
    text_collapsed: OnceLock<Option<Vec<u8>>>,
    /// Which trigram buckets `text` holds, made for pickers (see
    /// `SessionFilter`); kept with the text, so a refresh reuses it.
    signature: OnceLock<Signature>,
}

/// Buckets of a trigram signature: a session's signature has the bucket of
/// each byte trigram of its text set (one hash, no false negatives). The
/// median listed session has ~1,200 distinct trigrams, ~7% of the buckets.
const SIG_BITS: usize = 1 << 14;
const SIG_WORDS: usize = SIG_BITS / 64;

fn trigram_key(w: &[u8]) -> u64 {
    (w[0] as u64 | (w[1] as u64) << 8 | (w[2] as u64) << 16).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn trigram_bucket(key: u64) -> usize {
    (key >> (64 - SIG_BITS.trailing_zeros())) as usize
}

/// Which trigram buckets a text holds.
#[derive(Debug)]
struct Signature(Box<[u64; SIG_WORDS]>);

impl Signature {
    fn of(text: &[u8]) -> Signature {
        let mut words = Box::new([0u64; SIG_WORDS]);
        for w in text.windows(3) {
            let b = trigram_bucket(trigram_key(w));
            words[b >> 6] |= 1 << (b & 63);
        }
        Signature(words)
    }

    /// The buckets set, in order.
    fn buckets(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &word)| {
            let mut w = word;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let bit = w.trailing_zeros() as usize;
                    w &= w - 1;
                    k * 64 + bit
                })
            })
        })
    }
}

/// The signatures of a catalog's sessions transposed: for each block of 64
/// sessions and each bucket, which of them hold it. A needle's trigrams then
/// give, with a few reads a block, the sessions whose text may hold it,
/// without touching each session's own memory.
struct SessionFilter {
    /// `blocks[j * SIG_BITS + b]`, bit `k`: session `64 j + k` has bucket `b`.
    blocks: Vec<u64>,
}

impl SessionFilter {
    fn of(texts: &[Option<Arc<SessionText>>]) -> SessionFilter {
        use rayon::prelude::*;
        let n_blocks = texts.len().div_ceil(64);
        let mut blocks = vec![0u64; n_blocks * SIG_BITS];
        blocks
            .par_chunks_mut(SIG_BITS)
            .enumerate()
            .for_each(|(j, block)| {
                for (k, text) in texts[j * 64..texts.len().min(j * 64 + 64)]
                    .iter()
                    .enumerate()
                {
                    let Some(text) = text else { continue };
                    let bit = 1u64 << k;
                    match text.signature() {
                        Some(sig) => sig.buckets().for_each(|b| block[b] |= bit),
                        // No signature: it may hold anything.
                        None => block.iter_mut().for_each(|w| *w |= bit),
                    }
                }
            });
        SessionFilter { blocks }
    }

    /// Sessions whose text may hold every bucket of `keys` (one bit each);
    /// `None` when there are no keys (everything may match).
    fn may_hold(&self, keys: &[u64]) -> Option<Vec<u64>> {
        if keys.is_empty() {
            return None;
        }
        let mut buckets: Vec<usize> = keys.iter().map(|&k| trigram_bucket(k)).collect();
        buckets.sort_unstable();
        buckets.dedup();
        Some(
            self.blocks
                .chunks_exact(SIG_BITS)
                .map(|block| buckets.iter().fold(u64::MAX, |acc, &b| acc & block[b]))
                .collect(),
        )
    }
}

impl SessionText {
    /// From the session's strings as UTF-16 (`name` undefined as `None`; a
    /// string id as it is, not lowercased).
    pub fn from_utf16(name: Option<&[u16]>, id: SessionId, cwd: &[u16], text: &[u16]) -> Self {
        Self::build(
            name.map(js::utf16_to_wtf8).as_deref(),
            id,
            &js::utf16_to_wtf8(cwd),
            &js::utf16_to_wtf8(text),
        )
    }

    /// From a listing summary: the header line (which JavaScript parses for
    /// `id` and `cwd`), the name and the message text, both WTF-8. `None` if
    /// the header does not parse (the listing then has no such session).
    pub fn from_summary(header: &str, name: Option<&[u8]>, text: &[u8]) -> Option<Self> {
        let header = json::parse(header.as_bytes()).ok()?;
        let id = match header.get("id") {
            None => SessionId::Undefined,
            Some(JsValue::Null) => SessionId::Null,
            Some(JsValue::Str(id)) => SessionId::Str(js::wtf8_to_utf16(id)),
            Some(_) => SessionId::Other,
        };
        // `typeof header.cwd === 'string' ? header.cwd : ''`
        let cwd = match header.get("cwd") {
            Some(JsValue::Str(cwd)) => cwd.as_slice(),
            _ => b"",
        };
        Some(Self::build(name, id, cwd, text))
    }

    /// `id` as the session has it (a string id not lowercased yet).
    fn build(name: Option<&[u8]>, id: SessionId, cwd: &[u8], text: &[u8]) -> Self {
        let id = match id {
            SessionId::Str(id) => SessionId::Str(js::to_lowercase_utf16(&id)),
            other => other,
        };
        let name16 = name.map(js::wtf8_to_utf16);
        let named = name16
            .as_deref()
            .is_some_and(|n| !js::trim_utf16(n).is_empty());
        let name = name16.as_deref().map(js::to_lowercase_utf16);
        let name_collapsed = js::collapse_whitespace_utf16(name.as_deref().unwrap_or(&[]));
        let cwd = js::to_lowercase_utf16(&js::wtf8_to_utf16(cwd));
        let cwd_collapsed = js::collapse_whitespace_utf16(&cwd);
        SessionText {
            name,
            name_collapsed,
            named,
            id,
            cwd,
            cwd_collapsed,
            text: js::to_lowercase_wtf8(text),
            text_collapsed: OnceLock::new(),
            signature: OnceLock::new(),
        }
    }

    /// Bytes held, for the memory reported to V8.
    pub fn memory(&self) -> usize {
        let units = self.name.as_ref().map_or(0, Vec::len)
            + self.name_collapsed.len()
            + self.cwd.len()
            + self.cwd_collapsed.len()
            + match &self.id {
                SessionId::Str(id) => id.len(),
                _ => 0,
            };
        let collapsed = self
            .text_collapsed
            .get()
            .and_then(Option::as_ref)
            .map_or(0, Vec::len);
        let signature = self.signature.get().map_or(0, |_| SIG_WORDS * 8);
        std::mem::size_of::<Self>() + 2 * units + self.text.len() + collapsed + signature
    }

    /// Makes the trigram signature (for a picker's repeated searches).
    pub fn index_trigrams(&self) {
        self.signature.get_or_init(|| Signature::of(&self.text));
    }

    fn signature(&self) -> Option<&Signature> {
        self.signature.get()
    }

    fn text_collapsed(&self) -> &[u8] {
        self.text_collapsed
            .get_or_init(|| {
                let collapsed = js::collapse_whitespace_wtf8(&self.text);
                (collapsed != self.text).then_some(collapsed)
            })
            .as_deref()
            .unwrap_or(&self.text)
    }
}

/// A token of the query: a `"quoted phrase"` or a word.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub phrase: bool,
    pub value: Vec<u16>,
}

/// `parseSearchQuery`.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// Blank: every session the name filter keeps, in order.
    All,
    /// `re:` and a pattern, at these UTF-16 offsets of the query.
    Regex(usize, usize),
    /// `re:` and nothing else: no results.
    EmptyRegex,
    Tokens(Vec<Token>),
}

pub fn parse_query(query: &[u16]) -> Query {
    let trimmed = js::trim_utf16(query);
    if trimmed.is_empty() {
        return Query::All;
    }
    const RE: [u16; 3] = [b'r' as u16, b'e' as u16, b':' as u16];
    if trimmed.starts_with(&RE) {
        let rest = &trimmed[3..];
        let pattern = js::trim_utf16(rest);
        if pattern.is_empty() {
            return Query::EmptyRegex;
        }
        // Offsets of the pattern within `query` (all three are slices of it).
        let start = pattern.as_ptr() as usize - query.as_ptr() as usize;
        let start = start / std::mem::size_of::<u16>();
        return Query::Regex(start, start + pattern.len());
    }
    let mut tokens = Vec::new();
    let mut buf: Vec<u16> = Vec::new();
    let mut in_quote = false;
    let flush = |buf: &mut Vec<u16>, phrase: bool, tokens: &mut Vec<Token>| {
        let value = js::trim_utf16(buf).to_vec();
        buf.clear();
        if !value.is_empty() {
            tokens.push(Token { phrase, value });
        }
    };
    for &u in trimmed {
        if u == b'"' as u16 {
            flush(&mut buf, in_quote, &mut tokens);
            in_quote = !in_quote;
            continue;
        }
        if !in_quote && is_js_whitespace_unit(u) {
            flush(&mut buf, false, &mut tokens);
            continue;
        }
        buf.push(u);
    }
    if in_quote {
        // Unbalanced quotes: plain whitespace tokens, quotes and all.
        let tokens = trimmed
            .split(|&u| is_js_whitespace_unit(u))
            .filter(|t| !t.is_empty())
            .map(|t| Token {
                phrase: false,
                value: t.to_vec(),
            })
            .collect();
        return Query::Tokens(tokens);
    }
    flush(&mut buf, false, &mut tokens);
    Query::Tokens(tokens)
}

// ---------------------------------------------------------------------------
// pi-tui's fuzzyMatch, over lowercased UTF-16.

fn is_word_boundary(u: u16) -> bool {
    is_js_whitespace_unit(u) || matches!(u, 0x2d | 0x5f | 0x2e | 0x2f | 0x3a)
}

fn score_positions(text: &[u16], positions: &[usize]) -> f64 {
    let mut score = 0.0f64;
    let mut last: i64 = -1;
    let mut consecutive: i64 = 0;
    for &p in positions {
        let i = p as i64;
        if last == i - 1 {
            consecutive += 1;
            score -= (consecutive * 5) as f64;
        } else {
            consecutive = 0;
            if last >= 0 {
                score += ((i - last - 1) * 2) as f64;
            }
        }
        if i == 0 || is_word_boundary(text[p - 1]) {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = i;
    }
    score
}

fn find_units(haystack: &[u16], needle: &[u16], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return (from <= haystack.len()).then_some(from);
    }
    if from >= haystack.len() || needle.len() > haystack.len() - from {
        return None;
    }
    let first = needle[0];
    let last_start = haystack.len() - needle.len();
    (from..=last_start).find(|&i| haystack[i] == first && haystack[i..i + needle.len()] == *needle)
}

fn contains_units(haystack: &[u16], needle: &[u16]) -> bool {
    find_units(haystack, needle, 0).is_some()
}

/// `matchQuery` of a lowercased query and text: the score, or `None`.
fn match_query(query: &[u16], text: &[u16]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut positions = Vec::with_capacity(query.len());
    let mut from = 0;
    for &u in query {
        let i = from + text[from..].iter().position(|&t| t == u)?;
        positions.push(i);
        from = i + 1;
    }
    let mut score = score_positions(text, &positions);
    let mut start = find_units(text, query, 0);
    while let Some(s) = start {
        for (k, p) in positions.iter_mut().enumerate() {
            *p = s + k;
        }
        score = score.min(score_positions(text, &positions));
        start = find_units(text, query, s + 1);
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// The query with its letters and digits swapped (`abc12` and `12abc`), as
/// pi-tui tries when the query itself does not match.
fn swapped_query(query: &[u16]) -> Option<Vec<u16>> {
    let is_letter = |u: &u16| (b'a' as u16..=b'z' as u16).contains(u);
    let is_digit = |u: &u16| (b'0' as u16..=b'9' as u16).contains(u);
    let split = |first: &dyn Fn(&u16) -> bool, second: &dyn Fn(&u16) -> bool| {
        let n = query.iter().take_while(|u| first(u)).count();
        (n > 0 && n < query.len() && query[n..].iter().all(second)).then_some(n)
    };
    let n = split(&is_letter, &is_digit).or_else(|| split(&is_digit, &is_letter))?;
    Some([&query[n..], &query[..n]].concat())
}

/// `fuzzyMatch(query, text)` of a query and text already lowercased (every
/// caller in the reference passes such, or its lowercasing is idempotent),
/// with the swapped query precomputed.
fn fuzzy_match(query: &[u16], swapped: Option<&[u16]>, text: &[u16]) -> Option<f64> {
    if let Some(score) = match_query(query, text) {
        return Some(score);
    }
    match_query(swapped?, text).map(|score| score + 5.0)
}

// ---------------------------------------------------------------------------
// Matching sessions.

/// What an earlier search learnt of where a needle first occurs in one
/// session's text. A search leaves the exact first occurrence and the bytes
/// after it; a longer needle that starts with that one occurs no earlier, and
/// right there if the bytes after it are its rest: a picker's next keystroke
/// then needs no look at the text.
#[derive(Clone, Copy)]
struct Hint {
    /// The first occurrence is at or after this byte (`exact`: at it), or
    /// nowhere (`NOWHERE`).
    pos: u32,
    exact: bool,
    /// With `exact`: up to 8 bytes of the text after the occurrence, and
    /// whether the text ends after them.
    after: [u8; 8],
    after_len: u8,
    ends: bool,
}

const NOWHERE: u32 = u32::MAX;

impl Hint {
    const UNKNOWN: Hint = Hint {
        pos: 0,
        exact: false,
        after: [0; 8],
        after_len: 0,
        ends: false,
    };
    const NOWHERE: Hint = Hint {
        pos: NOWHERE,
        ..Hint::UNKNOWN
    };

    /// The first occurrence of `needle_len` bytes found at `pos` of `text`.
    fn found(text: &[u8], pos: usize, needle_len: usize) -> Hint {
        let Ok(at) = u32::try_from(pos) else {
            return Hint::UNKNOWN;
        };
        let rest = &text[pos + needle_len..];
        let n = rest.len().min(8);
        let mut after = [0; 8];
        after[..n].copy_from_slice(&rest[..n]);
        Hint {
            pos: at,
            exact: true,
            after,
            after_len: n as u8,
            ends: rest.len() <= 8,
        }
    }

    /// This hint of a needle, for the needle followed by `ext`.
    fn extended(self, ext: &[u8]) -> Hint {
        if ext.is_empty() || self.pos == NOWHERE || !self.exact {
            return self;
        }
        let n = self.after_len as usize;
        let lower = |pos: u32| Hint {
            pos,
            ..Hint::UNKNOWN
        };
        if ext.len() <= n && self.after[..ext.len()] == *ext {
            let mut after = [0; 8];
            after[..n - ext.len()].copy_from_slice(&self.after[ext.len()..n]);
            return Hint {
                after,
                after_len: (n - ext.len()) as u8,
                ..self
            };
        }
        let k = ext.len().min(n);
        if self.after[..k] != ext[..k] || self.ends {
            // Not at this occurrence: later, if anywhere.
            return lower(self.pos.saturating_add(1).min(NOWHERE - 1));
        }
        lower(self.pos)
    }
}

/// A lowercased needle, ready for the text (WTF-8) and the short fields (UTF-16).
struct Needle {
    units: Vec<u16>,
    /// The needle as WTF-8.
    bytes: Vec<u8>,
    /// Trigram keys of the WTF-8 needle without a space: those a text holds
    /// also with its whitespace collapsed (none when it has a lone surrogate).
    trigrams: Vec<u64>,
    /// A finder over WTF-8, when the needle has no lone surrogate.
    finder: Option<memchr::memmem::Finder<'static>>,
    swapped: Option<Vec<u16>>,
}

impl Needle {
    fn new(units: Vec<u16>) -> Needle {
        let well_formed = !js::has_lone_surrogate(&units);
        let bytes = js::utf16_to_wtf8(&units);
        let trigrams = if well_formed {
            bytes
                .windows(3)
                .filter(|w| !w.contains(&b' '))
                .map(trigram_key)
                .collect()
        } else {
            Vec::new()
        };
        let finder = well_formed.then(|| memchr::memmem::Finder::new(&bytes).into_owned());
        let swapped = swapped_query(&units);
        Needle {
            units,
            bytes,
            trigrams,
            finder,
            swapped,
        }
    }

    /// In `text` (the session's lowercased text, or that collapsed for a
    /// phrase); `maybe` is false when the text's trigrams rule it out. `hint`
    /// is read and updated.
    /// `text` is only read (or, for a phrase, made) when it must be.
    fn in_text<'t>(&self, text: impl FnOnce() -> &'t [u8], maybe: bool, hint: &mut Hint) -> bool {
        let Some(finder) = &self.finder else {
            // A lone surrogate may match half of a pair: compare UTF-16.
            return contains_units(&js::wtf8_to_utf16(text()), &self.units);
        };
        if !maybe || hint.pos == NOWHERE {
            *hint = Hint::NOWHERE;
            return false;
        }
        if hint.exact {
            return true;
        }
        let text = text();
        let from = text
            .get(hint.pos as usize..)
            .map_or(0, |_| hint.pos as usize);
        match finder.find(&text[from..]) {
            Some(p) => {
                *hint = Hint::found(text, from + p, self.bytes.len());
                true
            }
            None => {
                *hint = Hint::NOWHERE;
                false
            }
        }
    }
}

struct Prepared {
    phrase: bool,
    needle: Needle,
    /// Sessions whose text may hold the needle (a bit each), when known.
    maybe: Option<Vec<u64>>,
    /// Hints of every session for this needle, from an earlier search for
    /// a needle it starts with (or unknown).
    hints: Vec<Hint>,
}

impl Prepared {
    fn maybe(&self, session: usize) -> bool {
        self.maybe
            .as_ref()
            .is_none_or(|bits| bits[session >> 6] & (1 << (session & 63)) != 0)
    }
}

/// `session.id.toLowerCase()` threw.
struct Throws;

type TokenScore = Result<Option<f64>, Throws>;

/// One session's short fields (from the catalog's `ShortFields`, next to
/// the other sessions': a search walks them in order) and its text.
struct View<'a> {
    name: Option<&'a [u16]>,
    name_collapsed: &'a [u16],
    /// `None`: an id that is not a string (lowercasing it throws).
    id: Option<&'a [u16]>,
    cwd: &'a [u16],
    cwd_collapsed: &'a [u16],
    text: &'a SessionText,
}

impl View<'_> {
    fn id_contains(&self, needle: &[u16]) -> Result<bool, Throws> {
        self.id.map(|id| contains_units(id, needle)).ok_or(Throws)
    }
}

/// `matchLiteralToken`.
fn match_literal(s: &View, v: &Needle, maybe: bool, hint: &mut Hint) -> TokenScore {
    if let Some(name) = s.name {
        if contains_units(name, &v.units) {
            let score = fuzzy_match(&v.units, None, name).unwrap_or(0.0);
            return Ok(Some(tier_score(TIER_NAME, score)));
        }
    }
    if s.id_contains(&v.units)?
        || v.in_text(|| &s.text.text, maybe, hint)
        || contains_units(s.cwd, &v.units)
    {
        return Ok(Some(tier_score(TIER_TEXT, 0.0)));
    }
    Ok(None)
}

/// `matchFuzzyToken`.
fn match_word(s: &View, v: &Needle, maybe: bool, hint: &mut Hint) -> TokenScore {
    if let Some(score) = match_literal(s, v, maybe, hint)? {
        return Ok(Some(score));
    }
    let mut best: Option<f64> = None;
    for field in [s.name.unwrap_or(&[]), s.cwd] {
        if let Some(score) = fuzzy_match(&v.units, v.swapped.as_deref(), field) {
            if best.is_none_or(|b| score < b) {
                best = Some(score);
            }
        }
    }
    Ok(best.map(|b| tier_score(TIER_FUZZY, b)))
}

/// `matchPhraseToken`.
fn match_phrase(s: &View, p: &Needle, maybe: bool, hint: &mut Hint) -> TokenScore {
    if contains_units(s.name_collapsed, &p.units) {
        let score = fuzzy_match(&p.units, None, s.name_collapsed).unwrap_or(0.0);
        return Ok(Some(tier_score(TIER_NAME, score)));
    }
    if s.id_contains(&p.units)?
        || p.in_text(|| s.text.text_collapsed(), maybe, hint)
        || contains_units(s.cwd_collapsed, &p.units)
    {
        return Ok(Some(tier_score(TIER_TEXT, 0.0)));
    }
    Ok(None)
}

enum Outcome {
    Miss,
    Hit(f64),
    Throws,
}

/// `matchSession` in token mode, of session `index`; `hints` has one per
/// token (tokens after a miss are not looked at: theirs stay as they are).
fn match_session(s: &View, index: usize, tokens: &[Prepared], hints: &mut [Hint]) -> Outcome {
    let mut total = 0.0;
    for (token, hint) in tokens.iter().zip(hints) {
        let maybe = token.maybe(index);
        let score = if token.phrase {
            match_phrase(s, &token.needle, maybe, hint)
        } else {
            match_word(s, &token.needle, maybe, hint)
        };
        match score {
            Ok(Some(score)) => total += score,
            Ok(None) => return Outcome::Miss,
            Err(Throws) => return Outcome::Throws,
        }
    }
    Outcome::Hit(total)
}

fn prepare(tokens: Vec<Token>) -> Vec<(bool, Needle)> {
    tokens
        .into_iter()
        .filter_map(|t| {
            let lower = js::to_lowercase_utf16(&t.value);
            if t.phrase {
                let phrase = js::collapse_whitespace_utf16(&lower);
                (!phrase.is_empty()).then(|| (true, Needle::new(phrase)))
            } else {
                Some((false, Needle::new(lower)))
            }
        })
        .collect()
}

/// The short fields of every session of a catalog, in one buffer in the
/// sessions' order (a search reads them all; scattered, each would cost a
/// cache miss).
#[derive(Default)]
struct ShortFields {
    units: Vec<u16>,
    sessions: Vec<Short>,
}

/// Where a session's fields are in `ShortFields::units`: name, collapsed
/// name, id, cwd, collapsed cwd, one after the other from `start`.
struct Short {
    start: usize,
    /// Lengths; `ABSENT` for an undefined name or an id that is not a
    /// string.
    lens: [u32; 5],
    named: bool,
}

const ABSENT: u32 = u32::MAX;

impl ShortFields {
    fn of(texts: &[Option<Arc<SessionText>>]) -> ShortFields {
        let mut fields = ShortFields::default();
        for text in texts {
            let start = fields.units.len();
            let mut lens = [0; 5];
            let mut named = false;
            if let Some(t) = text {
                let id = match &t.id {
                    SessionId::Str(id) => Some(id.as_slice()),
                    _ => None,
                };
                let parts = [
                    t.name.as_deref(),
                    Some(&t.name_collapsed),
                    id,
                    Some(&t.cwd),
                    Some(&t.cwd_collapsed),
                ];
                for (len, part) in lens.iter_mut().zip(parts) {
                    *len = part.map_or(ABSENT, |p| p.len() as u32);
                    fields.units.extend_from_slice(part.unwrap_or(&[]));
                }
                named = t.named;
            }
            fields.sessions.push(Short { start, lens, named });
        }
        fields
    }

    fn view<'a>(&'a self, index: usize, text: &'a SessionText) -> View<'a> {
        let short = &self.sessions[index];
        let mut at = short.start;
        let mut parts = short.lens.map(|len| {
            let n = if len == ABSENT { 0 } else { len as usize };
            let part = &self.units[at..at + n];
            at += n;
            (len != ABSENT).then_some(part)
        });
        let mut take = |k: usize| parts[k].take();
        View {
            name: take(0),
            name_collapsed: take(1).unwrap_or(&[]),
            id: take(2),
            cwd: take(3).unwrap_or(&[]),
            cwd_collapsed: take(4).unwrap_or(&[]),
            text,
        }
    }
}

/// The text hints of a needle searched before, per session.
struct Memo {
    phrase: bool,
    bytes: Vec<u8>,
    hints: Arc<Vec<Hint>>,
}

/// Needles whose hints are kept: the words of the last few keystrokes (so
/// that typing on, and deleting back, go on from what was found).
const MEMOS: usize = 16;

/// `f(0..n)` in order, on rayon's threads when `parallel`. Rayon's caller
/// runs the work nobody took: on a busy machine a search never waits for a
/// thread to be scheduled.
fn map_parallel<T: Send>(n: usize, parallel: bool, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    if !parallel || n < 2 {
        return (0..n).map(f).collect();
    }
    (0..n).into_par_iter().with_min_len(32).map(&f).collect()
}

/// `f(k, chunk k)` over `items` cut in chunks of `stride`, in order, as
/// `map_parallel`.
fn map_chunks<I: Send, T: Send>(
    items: &mut [I],
    stride: usize,
    parallel: bool,
    f: impl Fn(usize, &mut [I]) -> T + Sync,
) -> Vec<T> {
    use rayon::prelude::*;
    if !parallel || items.len() < 2 * stride {
        return items
            .chunks_mut(stride)
            .enumerate()
            .map(|(k, c)| f(k, c))
            .collect();
    }
    items
        .par_chunks_mut(stride)
        .enumerate()
        .with_min_len(32)
        .map(|(k, c)| f(k, c))
        .collect()
}

/// Text below which a search stays on the calling thread.
const PARALLEL_FROM_BYTES: usize = 4 << 20;

/// What a search gives.
#[derive(Debug, PartialEq)]
pub enum SearchResult {
    /// Session indices in the result's order. With `scores`, the matches in
    /// the sessions' order and their scores, which the caller must sort with
    /// the reference's comparator: a `modified` time among them is NaN, and
    /// the result then depends on how V8's sort proceeds.
    Ranked {
        order: Vec<u32>,
        scores: Option<Vec<f64>>,
    },
    /// A `re:` query: the pattern's UTF-16 range in the query, and the
    /// sessions the name filter keeps, in order, for the caller to test.
    Regex {
        start: usize,
        end: usize,
        candidates: Vec<u32>,
    },
    /// `session.id.toLowerCase()` throws in the reference first at this
    /// session (its id is not a string).
    Throws(u32),
}

/// The sessions of a listing, in the listing's order, with what a search
/// reads of each.
#[derive(Default)]
pub struct Catalog {
    texts: Vec<Option<Arc<SessionText>>>,
    modified: Vec<f64>,
    tokens: Vec<u64>,
    text_bytes: usize,
    /// A picker's catalog: trigram signatures and their `SessionFilter`.
    trigrams: bool,
    filter: OnceLock<SessionFilter>,
    short: OnceLock<ShortFields>,
    /// Hints of the needles searched last (see `NOWHERE`), newest first;
    /// cleared when the texts change.
    memos: Mutex<Vec<Memo>>,
}

impl Catalog {
    /// Sets the sessions: `(path, token)` of each (a listing's version of its
    /// file) and its `modified` time. `lookup` finds a version's text (it may
    /// compute it; it runs on several threads); texts this catalog already
    /// holds for a token are kept. Returns the indices nothing was found for:
    /// their texts must come through `set_text`.
    pub fn set_sessions<P: Sync>(
        &mut self,
        files: &[(P, u64)],
        modified: Vec<f64>,
        trigrams: bool,
        threads: usize,
        lookup: impl Fn(&P, u64) -> Option<Arc<SessionText>> + Sync,
    ) -> Vec<u32> {
        let unchanged = files.len() == self.tokens.len()
            && (self.trigrams || !trigrams)
            && files
                .iter()
                .zip(&self.tokens)
                .all(|((_, t), held)| t == held && *t != 0)
            && self.texts.iter().all(Option::is_some);
        if unchanged {
            // The same versions: texts, filter, short fields and hints stay.
            self.modified = modified;
            self.modified.resize(self.texts.len(), f64::NAN);
            return Vec::new();
        }
        let held: foldhash::HashMap<u64, Arc<SessionText>> = self
            .tokens
            .iter()
            .zip(&self.texts)
            .filter_map(|(&t, text)| Some((t, text.clone()?)))
            .filter(|(t, _)| *t != 0)
            .collect();
        let texts = map_parallel(files.len(), threads > 1, |i| {
            let (path, token) = &files[i];
            let text = held.get(token).cloned().or_else(|| lookup(path, *token));
            if let Some(text) = text.as_ref().filter(|_| trigrams) {
                text.index_trigrams();
            }
            text
        });
        self.tokens = files.iter().map(|(_, t)| *t).collect();
        self.trigrams = trigrams;
        self.texts_changed();
        self.modified = modified;
        self.texts = texts;
        self.modified.resize(self.texts.len(), f64::NAN);
        self.text_bytes = self.texts.iter().flatten().map(|t| t.text.len()).sum();
        (0..self.texts.len() as u32)
            .filter(|&i| self.texts[i as usize].is_none())
            .collect()
    }

    /// Indices of `tokens` whose texts this catalog does not hold (for
    /// `set_sessions`' lookup to find).
    pub fn unheld(&self, tokens: &[u64]) -> Vec<u32> {
        let held: foldhash::HashSet<u64> = self
            .tokens
            .iter()
            .zip(&self.texts)
            .filter(|(&t, text)| t != 0 && text.is_some())
            .map(|(&t, _)| t)
            .collect();
        (0..tokens.len() as u32)
            .filter(|&i| !held.contains(&tokens[i as usize]))
            .collect()
    }

    /// The text of session `index`, from its strings.
    pub fn set_text(&mut self, index: usize, text: SessionText, trigrams: bool) {
        if trigrams {
            text.index_trigrams();
        }
        if let Some(slot) = self.texts.get_mut(index) {
            self.text_bytes += text.text.len();
            *slot = Some(Arc::new(text));
        }
        self.texts_changed();
    }

    fn texts_changed(&mut self) {
        self.filter = OnceLock::new();
        self.short = OnceLock::new();
        self.memos = Mutex::default();
    }

    /// Filters and hints for the needles of a query.
    fn prepared(&self, needles: Vec<(bool, Needle)>) -> Vec<Prepared> {
        let filter = self
            .trigrams
            .then(|| self.filter.get_or_init(|| SessionFilter::of(&self.texts)));
        let memos = self.memos.lock().unwrap_or_else(|e| e.into_inner());
        needles
            .into_iter()
            .map(|(phrase, needle)| {
                let parent = memos
                    .iter()
                    .filter(|m| {
                        needle.finder.is_some()
                            && m.phrase == phrase
                            && needle.bytes.starts_with(&m.bytes)
                    })
                    .max_by_key(|m| m.bytes.len());
                let hints = match parent {
                    Some(m) => {
                        let ext = &needle.bytes[m.bytes.len()..];
                        m.hints.iter().map(|h| h.extended(ext)).collect()
                    }
                    None => vec![Hint::UNKNOWN; self.texts.len()],
                };
                Prepared {
                    phrase,
                    maybe: filter.and_then(|f| f.may_hold(&needle.trigrams)),
                    hints,
                    needle,
                }
            })
            .collect()
    }

    /// Keeps the hints a search left, per session (`hints` per candidate and
    /// token; sessions not searched keep those it started from).
    fn remember(&self, tokens: Vec<Prepared>, candidates: &[u32], hints: &[Hint]) {
        let stride = tokens.len().max(1);
        let mut memos = self.memos.lock().unwrap_or_else(|e| e.into_inner());
        for (t, token) in tokens.into_iter().enumerate() {
            if token.needle.finder.is_none() {
                continue;
            }
            let mut all = token.hints;
            for (k, &i) in candidates.iter().enumerate() {
                all[i as usize] = hints[k * stride + t];
            }
            memos.retain(|m| m.phrase != token.phrase || m.bytes != token.needle.bytes);
            memos.insert(
                0,
                Memo {
                    phrase: token.phrase,
                    bytes: token.needle.bytes,
                    hints: Arc::new(all),
                },
            );
        }
        memos.truncate(MEMOS);
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Bytes of the texts held (shared with the listing cache while it holds
    /// the same versions).
    pub fn memory(&self) -> usize {
        self.texts.iter().flatten().map(|t| t.memory()).sum()
    }

    fn short(&self) -> &ShortFields {
        self.short.get_or_init(|| ShortFields::of(&self.texts))
    }

    fn candidates(&self, named: bool) -> Vec<u32> {
        if !named {
            return (0..self.texts.len() as u32).collect();
        }
        let short = self.short();
        (0..self.texts.len() as u32)
            .filter(|&i| short.sessions[i as usize].named)
            .collect()
    }

    /// `filterAndSortSessions(sessions, query, recent ? "recent" : "relevance",
    /// named ? "named" : "all")`, `query` as UTF-16. With `scored`, the
    /// matches of a token query stay in the sessions' order, with their
    /// scores (`matchSession`'s), as when the caller must sort them.
    pub fn search(
        &self,
        query: &[u16],
        recent: bool,
        named: bool,
        scored: bool,
        threads: usize,
    ) -> SearchResult {
        let candidates = self.candidates(named);
        let tokens = match parse_query(query) {
            Query::All => {
                return SearchResult::Ranked {
                    order: candidates,
                    scores: None,
                }
            }
            Query::EmptyRegex => {
                return SearchResult::Ranked {
                    order: Vec::new(),
                    scores: None,
                }
            }
            Query::Regex(start, end) => {
                return SearchResult::Regex {
                    start,
                    end,
                    candidates,
                }
            }
            Query::Tokens(tokens) => self.prepared(prepare(tokens)),
        };
        let parallel = threads > 1 && self.text_bytes >= PARALLEL_FROM_BYTES;
        let stride = tokens.len().max(1);
        let mut hints = vec![Hint::UNKNOWN; candidates.len() * stride];
        for (t, token) in tokens.iter().enumerate() {
            for (k, &i) in candidates.iter().enumerate() {
                hints[k * stride + t] = token.hints[i as usize];
            }
        }
        let short = self.short();
        let outcomes = map_chunks(&mut hints, stride, parallel, |k, hints| {
            let i = candidates[k] as usize;
            match &self.texts[i] {
                Some(text) => match_session(&short.view(i, text), i, &tokens, hints),
                None => Outcome::Miss,
            }
        });
        self.remember(tokens, &candidates, &hints);
        let mut matched = Vec::new();
        let mut scores = Vec::new();
        for (k, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Outcome::Miss => {}
                Outcome::Hit(score) => {
                    matched.push(candidates[k]);
                    scores.push(score);
                }
                Outcome::Throws => return SearchResult::Throws(candidates[k]),
            }
        }
        if scored {
            return SearchResult::Ranked {
                order: matched,
                scores: Some(scores),
            };
        }
        self.rank(matched, scores, recent)
    }

    /// The reference's order of matches given in the sessions' order:
    /// unchanged for `recent`, else by score, then `modified` newest first
    /// (a stable sort).
    pub fn rank(&self, matched: Vec<u32>, scores: Vec<f64>, recent: bool) -> SearchResult {
        if recent {
            return SearchResult::Ranked {
                order: matched,
                scores: None,
            };
        }
        let modified = |i: u32| self.modified.get(i as usize).copied().unwrap_or(f64::NAN);
        if matched.iter().any(|&i| modified(i).is_nan()) {
            return SearchResult::Ranked {
                order: matched,
                scores: Some(scores),
            };
        }
        let mut order: Vec<(u32, f64)> = matched.into_iter().zip(scores).collect();
        order.sort_by(|a, b| {
            a.1.total_cmp(&b.1)
                .then_with(|| modified(b.0).total_cmp(&modified(a.0)))
        });
        SearchResult::Ranked {
            order: order.into_iter().map(|(i, _)| i).collect(),
            scores: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn text(name: Option<&str>, id: &str, cwd: &str, messages: &str) -> SessionText {
        SessionText::from_utf16(
            name.map(u).as_deref(),
            SessionId::Str(u(id)),
            &u(cwd),
            &u(messages),
        )
    }

    #[test]
    fn fuzzy_scores_match_pi_tui() {
        // Values printed by pi-tui's fuzzyMatch on Node.
        let cases: [(&str, &str, Option<f64>); 6] = [
            ("ab", "xaxb", Some(2.4000000000000004)),
            ("abc", "abc", Some(-139.7)),
            (
                "opus",
                "openrouter openrouter/anthropic/claude-opus",
                Some(-23.8),
            ),
            ("zz", "abc", None),
            ("ab12", "x12ab", Some(-24.0)),
            ("", "x", Some(0.0)),
        ];
        for (q, t, expected) in cases {
            let q = u(q);
            let swapped = swapped_query(&q);
            assert_eq!(fuzzy_match(&q, swapped.as_deref(), &u(t)), expected, "{t}");
        }
    }

    #[test]
    fn parses_queries_like_the_reference() {
        let tokens = |q: &str| match parse_query(&u(q)) {
            Query::Tokens(t) => t
                .into_iter()
                .map(|t| (t.phrase, String::from_utf16(&t.value).unwrap()))
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            tokens(r#" foo "node  cve" bar"#),
            [
                (false, "foo".into()),
                (true, "node  cve".into()),
                (false, "bar".into())
            ]
        );
        assert_eq!(
            tokens(r#"a"b c"d"#),
            [
                (false, "a".into()),
                (true, "b c".into()),
                (false, "d".into())
            ]
        );
        assert_eq!(
            tokens(r#"foo "bar"#),
            [(false, "foo".into()), (false, "\"bar".into())]
        );
        assert_eq!(tokens(r#""""#), []);
        assert_eq!(parse_query(&u("  ")), Query::All);
        assert_eq!(parse_query(&u(" re:  ")), Query::EmptyRegex);
        assert_eq!(parse_query(&u(" re: a+ ")), Query::Regex(5, 7));
    }

    #[test]
    fn tiers_and_ties() {
        let mut catalog = Catalog::default();
        let texts = [
            text(Some("Deploy script"), "aaa", "/w/x", "nothing here"),
            text(None, "bbb", "/w/deploy", "talk"),
            text(None, "ccc", "/w/y", "we deploy today"),
            text(None, "ddd", "/d/e/p", "x"),
        ];
        let files: Vec<(usize, u64)> = (0..texts.len()).map(|i| (i, i as u64 + 1)).collect();
        let texts: Vec<Arc<SessionText>> = texts.into_iter().map(Arc::new).collect();
        let missing = catalog.set_sessions(&files, vec![1.0, 2.0, 3.0, 4.0], true, 1, |&i, _| {
            Some(texts[i].clone())
        });
        assert!(missing.is_empty());
        match catalog.search(&u("deploy"), false, false, false, 1) {
            // Name first; the two text hits tie and go newest first.
            SearchResult::Ranked {
                order,
                scores: None,
            } => assert_eq!(order, [0, 2, 1]),
            other => panic!("{other:?}"),
        }
        match catalog.search(&u("dep"), true, false, false, 1) {
            SearchResult::Ranked { order, .. } => assert_eq!(order, [0, 1, 2, 3]),
            other => panic!("{other:?}"),
        }
        match catalog.search(&u("deploy"), false, true, false, 1) {
            SearchResult::Ranked { order, .. } => assert_eq!(order, [0]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_non_string_id_throws_where_the_reference_lowercases_it() {
        let mut catalog = Catalog::default();
        let texts = [
            Arc::new(text(Some("alpha"), "a", "/", "")),
            Arc::new(SessionText::from_utf16(
                None,
                SessionId::Other,
                &u("/"),
                &u("alpha"),
            )),
        ];
        let files = [(0usize, 1u64), (1, 2)];
        catalog.set_sessions(&files, vec![1.0, 2.0], false, 1, |&i, _| {
            Some(texts[i].clone())
        });
        assert_eq!(
            catalog.search(&u("alpha"), false, false, false, 1),
            SearchResult::Throws(1)
        );
        // The name filter leaves it out; a regex does not lowercase.
        assert!(matches!(
            catalog.search(&u("alpha"), false, true, false, 1),
            SearchResult::Ranked { .. }
        ));
        assert!(matches!(
            catalog.search(&u("re:alpha"), false, false, false, 1),
            SearchResult::Regex { .. }
        ));
    }
}
