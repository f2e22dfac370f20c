//! The heavy parts of an entry's line, found without building it: a message's
//! `content` and `details`, a custom message's `content` and `details`, a
//! summary's `summary` and `details`, custom `data`, a compaction's
//! `systemMessage`. A line's *skeleton* is the
//! line with each heavy value longer than a threshold replaced by `0`, in place,
//! so `JSON.parse` of the skeleton has the line's keys in the line's order; the
//! values cut are read from the line later, one at a time, when first asked for.

use super::entry::for_each_member;
use super::json::{Cursor, SyntaxError};

/// The places a heavy value may be: `message`'s keys, then top-level keys.
/// A cut's slot is its index here; a line's cuts are a bit mask of slots
/// (`lib/lazy.js` holds the same list).
pub const SLOTS: [(bool, &str); 7] = [
    (true, "content"),
    (true, "details"),
    (false, "content"),
    (false, "details"),
    (false, "summary"),
    (false, "data"),
    (false, "systemMessage"),
];

/// One heavy value of a line: its slot and its span in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub slot: u8,
    pub start: usize,
    pub end: usize,
}

/// The members of the object at the cursor: (decoded key, value span).
fn members(cur: &mut Cursor, mut each: impl FnMut(&[u8], usize, usize)) -> Result<(), SyntaxError> {
    for_each_member(cur, |key, cur| {
        cur.skip_ws();
        let start = cur.i;
        cur.skip_value()?;
        each(key, start, cur.i);
        Ok(())
    })
}

/// Every heavy value of `line` whose JSON text is longer than `threshold`
/// bytes, in line order. A line whose candidate keys repeat (where `JSON.parse`
/// keeps the last value at the first key's place), or that is not an object,
/// has none: it is handed out whole.
pub fn cuts(line: &[u8], threshold: usize) -> Vec<Cut> {
    let mut out = Vec::new();
    let mut seen = 0u32;
    let mut repeated = false;
    let mut message: Option<(usize, usize)> = None;
    let mut cur = Cursor::new(line);
    let top = members(&mut cur, |key, start, end| {
        if key == b"message" {
            repeated |= seen & (1 << 7) != 0;
            seen |= 1 << 7;
            message = Some((start, end));
            return;
        }
        for (slot, &(in_message, name)) in SLOTS.iter().enumerate() {
            if !in_message && key == name.as_bytes() {
                repeated |= seen & (1 << slot) != 0;
                seen |= 1 << slot;
                if end - start > threshold {
                    out.push(Cut {
                        slot: slot as u8,
                        start,
                        end,
                    });
                }
            }
        }
    });
    if top.is_err() || repeated {
        return Vec::new();
    }
    if let Some((start, end)) = message {
        if line[start] == b'{' {
            let mut cur = Cursor::new(&line[..end]);
            cur.i = start;
            let mut inner = Vec::new();
            let walked = members(&mut cur, |key, s, e| {
                for (slot, &(in_message, name)) in SLOTS.iter().enumerate() {
                    if in_message && key == name.as_bytes() {
                        repeated |= seen & (1 << slot) != 0;
                        seen |= 1 << slot;
                        if e - s > threshold {
                            inner.push(Cut {
                                slot: slot as u8,
                                start: s,
                                end: e,
                            });
                        }
                    }
                }
            });
            if walked.is_err() || repeated {
                return Vec::new();
            }
            out.extend(inner);
            out.sort_by_key(|c| c.start);
        }
    }
    out
}

/// The bit mask of the slots in `cuts`.
pub fn mask(cuts: &[Cut]) -> u8 {
    cuts.iter().fold(0, |m, c| m | 1 << c.slot)
}

/// Appends `line` with each cut replaced by `0`.
pub fn write_skeleton(line: &[u8], cuts: &[Cut], out: &mut Vec<u8>) {
    let mut at = 0;
    for cut in cuts {
        out.extend_from_slice(&line[at..cut.start]);
        out.push(b'0');
        at = cut.end;
    }
    out.extend_from_slice(&line[at..]);
}

/// The JSON text of the value at `slot` of `line`, if it is a value `cuts`
/// finds there (at any length).
pub fn cut_text(line: &[u8], slot: u8) -> Option<&[u8]> {
    cuts(line, 0)
        .into_iter()
        .find(|c| c.slot == slot)
        .map(|c| &line[c.start..c.end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(line: &str, threshold: usize) -> (String, u8) {
        let cuts = cuts(line.as_bytes(), threshold);
        let mut out = Vec::new();
        write_skeleton(line.as_bytes(), &cuts, &mut out);
        (String::from_utf8(out).unwrap(), mask(&cuts))
    }

    #[test]
    fn cuts_heavy_values_in_place() {
        let line = r#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hello"}],"details":{"x":1}},"content":"top"}"#;
        assert_eq!(
            skeleton(line, 4),
            (
                r#"{"type":"message","id":"a","message":{"role":"user","content":0,"details":0},"content":0}"#.to_string(),
                0b111
            )
        );
        assert_eq!(skeleton(line, 1000), (line.to_string(), 0));
        assert_eq!(cut_text(line.as_bytes(), 1), Some(&br#"{"x":1}"#[..]));
        assert_eq!(cut_text(line.as_bytes(), 2), Some(&br#""top""#[..]));
        assert_eq!(cut_text(line.as_bytes(), 4), None);
    }

    #[test]
    fn all_top_level_slots_and_escaped_keys() {
        let line = r#" { "summary" : "long summary" , "details":[1,2,3,4], "d\u0061ta": {"k":"vvvvvv"} } "#;
        let (text, m) = skeleton(line, 5);
        assert_eq!(text, r#" { "summary" : 0 , "details":0, "d\u0061ta": 0 } "#);
        assert_eq!(m, 0b111000);
        assert_eq!(
            cut_text(line.as_bytes(), 5),
            Some(&br#"{"k":"vvvvvv"}"#[..])
        );
    }

    #[test]
    fn repeated_keys_and_odd_lines_are_whole() {
        for line in [
            r#"{"summary":"long summary","summary":"other long one"}"#,
            r#"{"message":{"content":"long content"},"message":{"content":"long content"}}"#,
            r#"{"message":{"content":"long content","content":"long content"}}"#,
            r#"{"message":{"content":"long content"},"content":"long content","content":"x"}"#,
            r#"[1,2,3]"#,
            r#"{"summary":"long summary""#,
        ] {
            assert_eq!(skeleton(line, 3), (line.to_string(), 0), "{line}");
        }
        // A message that is not an object has nothing cut inside.
        let line = r#"{"message":"long message text","summary":"long summary"}"#;
        assert_eq!(skeleton(line, 3).1, 1 << 4);
    }
}
