//! Entries for JavaScript built lazily: lines as skeletons (each heavy value
//! cut out, `format::lazy`), in an ASCII and a non-ASCII batch, and the values
//! cut read one at a time.

use super::error::SessionError;
use super::state::{Line, Session};
use crate::format::lazy;

/// See `Session::skeletons`.
pub struct SplitLines {
    pub ascii: Vec<u8>,
    pub other: Vec<u8>,
    /// 1 where the line went to `ascii`.
    pub mask: Vec<u8>,
    /// Per line, the slots (`format::lazy::SLOTS`) of the values cut from it.
    pub cuts: Vec<u8>,
}

impl Session {
    /// The skeletons of the lines at `positions` (each heavy value
    /// `format::lazy` finds replaced by `0`, its slot in `cuts`) as two JSON
    /// array texts, the pure-ASCII ones and the others, with a mask saying
    /// which array each position went to: V8 parses a one-byte (ASCII) string
    /// faster than a two-byte one, and one non-ASCII line would otherwise make
    /// a whole batch two-byte. The values cut are read later, one at a time,
    /// by `cut_value`.
    pub fn skeletons(&self, positions: &[u32]) -> Result<SplitLines, SessionError> {
        let mut ascii = vec![b'['];
        let mut other = vec![b'['];
        let mut mask = Vec::with_capacity(positions.len());
        let mut slots = Vec::with_capacity(positions.len());
        let mut skeleton = Vec::new();
        let mut at = 0;
        self.each_line(positions, |line| {
            let cuts = self.cuts_of(positions[at], line);
            at += 1;
            let text: &[u8] = if cuts.is_empty() {
                line
            } else {
                skeleton.clear();
                lazy::write_skeleton(line, &cuts, &mut skeleton);
                &skeleton
            };
            let is_ascii = text.is_ascii();
            let out = if is_ascii { &mut ascii } else { &mut other };
            if out.len() > 1 {
                out.push(b',');
            }
            out.extend_from_slice(text);
            mask.push(is_ascii as u8);
            slots.push(lazy::mask(&cuts));
        })?;
        ascii.push(b']');
        other.push(b']');
        Ok(SplitLines {
            ascii,
            other,
            mask,
            cuts: slots,
        })
    }

    /// The cuts of the line at `position`, whose bytes are `line`: those found
    /// when `open` read it, else found again.
    fn cuts_of(&self, position: u32, line: &[u8]) -> Vec<lazy::Cut> {
        let recorded = match self.lines.get(position as usize) {
            Some(Line::File { .. }) => self.recorded.of(position),
            _ => None,
        };
        recorded.unwrap_or_else(|| lazy::cuts(line, lazy::THRESHOLD))
    }

    /// The JSON text of the value `skeletons` cut from the line at `position`
    /// at `slot`, read from the line again (and checked, as `line` checks it).
    pub fn cut_value(&self, position: u32, slot: u8) -> Result<Vec<u8>, SessionError> {
        let line = self.line(position)?.ok_or_else(|| {
            SessionError::Message("Session entry has no line to read a value from".into())
        })?;
        self.cuts_of(position, &line)
            .into_iter()
            .find(|c| c.slot == slot)
            .map(|c| line[c.start..c.end].to_vec())
            .ok_or_else(|| SessionError::Message("Session entry has no such value".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::temp_dir;

    #[test]
    fn skeletons_from_the_cuts_found_at_open_equal_those_found_again() {
        let dir = temp_dir();
        let file = dir.join("heavy.jsonl");
        let big = "x".repeat(lazy::THRESHOLD + 1);
        let mut lines = vec![r#"{"type":"session","id":"s","version":3}"#.to_string()];
        lines.push(format!(r#"{{"type":"message","id":"a","parentId":null,"message":{{"role":"user","content":"{big}","details":{{"d":"{big}"}}}}}}"#));
        lines.push(format!(r#"{{"type":"compaction","id":"b","parentId":"a","summary":"{big}","details":{{}},"systemMessage":{{"content":"é{big}"}}}}"#));
        lines.push(format!(
            r#"{{"type":"custom","id":"c","parentId":"b","data":["{big}"],"summary":"small"}}"#
        ));
        lines.push(format!(r#"{{"type":"message","id":"d","parentId":"c","message":{{"content":"{big}"}},"message":{{"role":"user"}}}}"#));
        lines.push(r#"{"type":"label","id":"e","parentId":"d"}"#.to_string());
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let mut opened = Session::new(true);
        assert!(opened.open(&file).is_ok());
        let positions: Vec<u32> = (0..lines.len() as u32).collect();
        let from_open = opened.skeletons(&positions).unwrap();
        // The same lines held in memory: their cuts are found again.
        let mut owned = Session::new(false);
        owned.lines = lines
            .iter()
            .map(|l| Line::Owned(l.as_bytes().into()))
            .collect();
        let found = owned.skeletons(&positions).unwrap();
        assert_eq!(from_open.ascii, found.ascii);
        assert_eq!(from_open.other, found.other);
        assert_eq!(from_open.cuts, found.cuts);
        assert_eq!(from_open.cuts, vec![0, 0b11, 1 << 4 | 1 << 6, 1 << 5, 0, 0]);
        let text = String::from_utf8(from_open.ascii).unwrap();
        assert!(text.contains(r#""message":{"role":"user","content":0,"details":0}"#));
        assert!(text.contains(r#""data":0,"summary":"small""#));
        assert_eq!(
            opened.cut_value(2, 6).unwrap(),
            format!(r#"{{"content":"é{big}"}}"#).into_bytes()
        );
        assert_eq!(
            opened.cut_value(3, 5).unwrap(),
            owned.cut_value(3, 5).unwrap()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
