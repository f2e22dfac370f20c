//! `loadEntriesFromFile(path)` of the reference: every line of a file that parses
//! to an entry, as it is (no migration), in file order; none unless the first of
//! them is a session header with a string id. The JavaScript side parses the
//! lines it gets; this side reads the file once and decides which lines count.

use std::fs::File;
use std::path::Path;

use crate::format::entry::{read_line, Kind, LineRead};
use crate::session::store::{self, IoFailure};

/// The lines `loadEntriesFromFile` parses into entries, decoded as the
/// reference's UTF-8 decoder reads them; empty when the file is not a session.
/// A session whose last line has no newline gets one, as the reference adds it
/// (only if the file still ends without one: see `store::end_last_line`).
pub fn load_entry_lines(path: &Path) -> Result<Vec<String>, IoFailure> {
    let mut file = File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let mut lines = Vec::new();
    let mut first_is_header = None;
    let (_, unterminated) = store::for_each_line(&mut file, size, |_, line| {
        if let LineRead::Entry(meta) = read_line(line) {
            first_is_header.get_or_insert(meta.kind == Kind::Session && meta.id_is_string);
            lines.push(String::from_utf8_lossy(line).into_owned());
        }
    })?;
    if first_is_header != Some(true) {
        return Ok(Vec::new());
    }
    if unterminated {
        store::end_last_line(path)?;
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn temp_file(name: &str, content: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-loader-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        fs::write(&path, content).unwrap();
        path
    }

    #[test]
    fn keeps_the_lines_that_parse_and_ends_a_cut_last_line() {
        let path = temp_file(
            "s.jsonl",
            b"\n{\"type\":\"session\",\"id\":\"s\",\"version\":1}\nnot json\n0\n  \n{\"type\":\"message\",\"x\":\"\xff\"}\n[1]",
        );
        let lines = load_entry_lines(&path).unwrap();
        assert_eq!(
            lines,
            vec![
                "{\"type\":\"session\",\"id\":\"s\",\"version\":1}".to_string(),
                "{\"type\":\"message\",\"x\":\"\u{fffd}\"}".to_string(),
                "[1]".to_string(),
            ]
        );
        assert!(fs::read(&path).unwrap().ends_with(b"[1]\n"));
        fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_file_whose_first_entry_is_no_header_gives_nothing_and_stays() {
        for content in [
            &b"{\"type\":\"message\"}\n{\"type\":\"session\",\"id\":\"s\"}"[..],
            b"{\"type\":\"session\",\"id\":7}",
            b"nothing here",
        ] {
            let path = temp_file("n.jsonl", content);
            assert!(load_entry_lines(&path).unwrap().is_empty());
            assert_eq!(fs::read(&path).unwrap(), content);
            fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
    }
}
