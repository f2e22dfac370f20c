//! `readSessionHeader`: a file's header, found without reading the whole file.

use std::path::Path;

use super::store::IoFailure;
use crate::format::entry::{read_line, Kind, LineRead};

pub const MAX_SESSION_HEADER_SCAN_BYTES: usize = 1024 * 1024;

pub enum HeaderScan {
    Found(Vec<u8>),
    NotFound,
    TooLong,
}

/// `readSessionHeader`: the first parsed entry within the first MiB, if it is a
/// header. Reads 4 KiB at a time, like the reference, so a header costs one read.
pub fn read_header(path: &Path) -> Result<HeaderScan, IoFailure> {
    use std::io::Read;
    const CHUNK: usize = 1024;
    let mut file = std::fs::File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let candidate = |line: &[u8]| -> Option<HeaderScan> {
        match read_line(line) {
            LineRead::Skipped => None,
            LineRead::Entry(meta) if meta.kind == Kind::Session && meta.id_is_string => {
                Some(HeaderScan::Found(line.to_vec()))
            }
            LineRead::Entry(_) => Some(HeaderScan::NotFound),
        }
    };
    let mut bytes: Vec<u8> = Vec::new();
    let mut line_start = 0;
    loop {
        let before = bytes.len();
        let want = (MAX_SESSION_HEADER_SCAN_BYTES + 1 - before).min(CHUNK);
        bytes.resize(before + want, 0);
        let n = loop {
            match file.read(&mut bytes[before..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoFailure::new(&e, "read", None)),
            }
        };
        bytes.truncate(before + n);
        let limit = bytes.len().min(MAX_SESSION_HEADER_SCAN_BYTES);
        for nl in memchr::memchr_iter(b'\n', &bytes[before.min(limit)..limit]) {
            let end = before + nl;
            if let Some(found) = candidate(&bytes[line_start..end]) {
                return Ok(found);
            }
            line_start = end + 1;
        }
        if bytes.len() > MAX_SESSION_HEADER_SCAN_BYTES {
            return Ok(HeaderScan::TooLong);
        }
        if n == 0 {
            return Ok(candidate(&bytes[line_start..]).unwrap_or(HeaderScan::NotFound));
        }
    }
}
