//! The heavy parts of an entry's line, found without building it: longer than
//! a threshold, a message's `content` and `details`, and the top-level
//! `content`, `details`, `summary`, `data` and `systemMessage` (of custom
//! messages, summaries, custom entries, compactions). A line's *skeleton* is
//! the line with each of them (its *cuts*) replaced by `0`, in place, so
//! `JSON.parse` of the skeleton has the line's keys in the line's order; the
//! values cut are read from the line later, one at a time, when first asked
//! for. The rest of a message stays: pi reads every message's role and usage
//! as it starts.

use super::entry::{read_line_with, LineRead, MemberSpans};

/// Values longer than this (bytes of JSON text) are cut; smaller ones stay inline.
pub const THRESHOLD: usize = 512;

/// The places a heavy value may be: (in `message`, key). A cut's slot is its
/// index here; a skeleton's cuts are a bit mask of slots (`lib/lazy.js` holds
/// the same list).
pub const SLOTS: [(bool, &str); 7] = [
    (true, "content"),
    (true, "details"),
    (false, "content"),
    (false, "details"),
    (false, "summary"),
    (false, "data"),
    (false, "systemMessage"),
];

/// One cut of a line: its slot and its span in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub slot: u8,
    pub start: usize,
    pub end: usize,
}

/// Finds a line's cuts from the spans of its members as `read_line_with`
/// walks them (when a session is opened, each line is read so anyway).
pub struct CutFinder {
    threshold: usize,
    out: Vec<Cut>,
    seen: u32,
    repeated: bool,
    /// Whether `message` was seen (a repeated one makes the line whole).
    message: bool,
}

impl CutFinder {
    pub fn new(threshold: usize) -> CutFinder {
        CutFinder {
            threshold,
            out: Vec::new(),
            seen: 0,
            repeated: false,
            message: false,
        }
    }

    fn note(&mut self, in_message: bool, key: &[u8], start: usize, end: usize) {
        for (slot, &(inside, name)) in SLOTS.iter().enumerate() {
            if inside != in_message || key != name.as_bytes() {
                continue;
            }
            self.repeated |= self.seen & (1 << slot) != 0;
            self.seen |= 1 << slot;
            if end - start > self.threshold {
                self.out.push(Cut {
                    slot: slot as u8,
                    start,
                    end,
                });
            }
        }
    }

    /// The cuts, by start. A line whose candidate keys repeat (where
    /// `JSON.parse` keeps the last value at the first key's place), or that
    /// `read_line_with` skips, has none: it is handed out whole.
    pub fn finish(mut self, read: &LineRead) -> Vec<Cut> {
        if self.repeated || matches!(read, LineRead::Skipped) {
            return Vec::new();
        }
        self.out.sort_by_key(|c| c.start);
        self.out
    }
}

impl MemberSpans for CutFinder {
    fn top(&mut self, key: &[u8], start: usize, end: usize) {
        if key == b"message" {
            self.repeated |= self.message;
            self.message = true;
        }
        self.note(false, key, start, end);
    }

    fn inner(&mut self, key: &[u8], start: usize, end: usize) {
        self.note(true, key, start, end);
    }
}

/// The cuts of `line` (heavy values longer than `threshold`), in line order;
/// none for a line that is not a JSON object.
pub fn cuts(line: &[u8], threshold: usize) -> Vec<Cut> {
    let mut finder = CutFinder::new(threshold);
    let read = read_line_with(line, &mut finder);
    finder.finish(&read)
}

/// The bit mask of the slots of `cuts`.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON text of the value at `slot` of `line`, if it is a value `cuts`
    /// finds there (at any length).
    fn cut_text(line: &[u8], slot: u8) -> Option<&[u8]> {
        cuts(line, 0)
            .into_iter()
            .find(|c| c.slot == slot)
            .map(|c| &line[c.start..c.end])
    }

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
            r#"{"message":{"content":"long content"},"message":1}"#,
            r#"{"message":{"content":"long content","content":"long content"}}"#,
            r#"{"message":{"content":"long content"},"content":"long content","content":"x"}"#,
            r#"[1,2,3]"#,
            r#"{"summary":"long summary""#,
            r#"{"message":{"content":"long content""#,
        ] {
            assert_eq!(skeleton(line, 3), (line.to_string(), 0), "{line}");
        }
        // A message that is not an object has nothing cut inside.
        let line = r#"{"message":"long message text","summary":"long summary"}"#;
        assert_eq!(skeleton(line, 3).1, 1 << 4);
    }
}
