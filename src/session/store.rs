//! Session files on disk: reading lines the way the reference does, appending one
//! whole line per write, and rewriting whole files through a temporary file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use memchr::memchr_iter;

/// An I/O failure, carried to JavaScript with what Node needs to build its usual
/// error (`ENOSPC: no space left on device, write`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoFailure {
    pub errno: i32,
    pub syscall: &'static str,
    pub path: Option<String>,
}

impl IoFailure {
    pub fn new(err: &io::Error, syscall: &'static str, path: Option<&Path>) -> IoFailure {
        IoFailure {
            errno: crate::os::node_errno(err),
            syscall,
            path: path.map(|p| p.to_string_lossy().into_owned()),
        }
    }
}

const READ_CHUNK: usize = 8 << 20;

/// Streams the lines of a file (split on `\n`, without it) to `visit(offset,
/// line)`, holding at most one chunk plus the longest line in memory. Returns
/// the file length and whether the last line had no `\n`.
pub fn for_each_line(
    file: &mut impl Read,
    size_hint: u64,
    mut visit: impl FnMut(u64, &[u8]),
) -> Result<(u64, bool), IoFailure> {
    for_each_block(file, size_hint, |offset, block| {
        let mut start = 0;
        for nl in memchr_iter(b'\n', block) {
            visit(offset + start as u64, &block[start..nl]);
            start = nl + 1;
        }
        if start < block.len() {
            visit(offset + start as u64, &block[start..]);
        }
    })
}

/// Streams a file as blocks of whole lines (each ending with its `\n`, except
/// an unterminated last line, which comes alone in the last block), so a
/// block's lines can be read in parallel. A line longer than the buffer whose
/// start cannot be JSON is dropped up to its newline instead of being held.
/// Returns the file length and whether the last line had no `\n`.
pub fn for_each_block(
    file: &mut impl Read,
    size_hint: u64,
    visit: impl FnMut(u64, &[u8]),
) -> Result<(u64, bool), IoFailure> {
    // A small file needs no 8 MiB buffer; one byte more than its size lets the
    // first read see the end.
    let chunk = (size_hint.saturating_add(1)).clamp(4096, READ_CHUNK as u64) as usize;
    for_each_block_in(file, &mut Vec::new(), chunk, visit)
}

/// `for_each_block` reading `chunk` bytes at a time into `buf`, which the
/// caller may keep from file to file (it grows only for a longer line).
pub fn for_each_block_in(
    file: &mut impl Read,
    buf: &mut Vec<u8>,
    chunk: usize,
    mut visit: impl FnMut(u64, &[u8]),
) -> Result<(u64, bool), IoFailure> {
    if buf.len() < chunk {
        buf.resize(chunk, 0);
    }
    // Bytes buf[..filled] are unprocessed; buf[0] sits at file offset `base`.
    let mut filled = 0usize;
    let mut base = 0u64;
    // Inside a line that cannot parse: its bytes are dropped up to its newline.
    let mut dropping = false;
    loop {
        if filled == buf.len() {
            if crate::format::json::prefix_is_invalid(&buf[..filled]) {
                dropping = true;
                base += filled as u64;
                filled = 0;
            } else {
                // One line longer than the buffer: grow to hold it.
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = loop {
            match file.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoFailure::new(&e, "read", None)),
            }
        };
        if n == 0 {
            let unterminated = filled > 0 || dropping;
            if filled > 0 && !dropping {
                visit(base, &buf[..filled]);
            }
            return Ok((base + filled as u64, unterminated));
        }
        let scan_from = filled;
        filled += n;
        let mut start = 0usize;
        if dropping {
            match memchr::memchr(b'\n', &buf[scan_from..filled]) {
                Some(nl) => {
                    start = scan_from + nl + 1;
                    dropping = false;
                }
                None => {
                    base += filled as u64;
                    filled = 0;
                    continue;
                }
            }
        }
        let scan_from = scan_from.max(start);
        if let Some(nl) = memchr::memrchr(b'\n', &buf[scan_from..filled]) {
            let end = scan_from + nl + 1;
            visit(base + start as u64, &buf[start..end]);
            start = end;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        base += start as u64;
    }
}

/// Reads a file from `pos` up to `end` (to its end with `None`) by positioned
/// reads, so several threads can each stream their own range of one descriptor.
pub struct RangeReader<'a> {
    pub file: &'a File,
    pub pos: u64,
    pub end: Option<u64>,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = match self.end {
            Some(end) => buf.len().min(end.saturating_sub(self.pos) as usize),
            None => buf.len(),
        };
        if room == 0 {
            return Ok(0);
        }
        let n = crate::os::read_at(self.file, &mut buf[..room], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Where the first line starting at or after `pos` starts: just past the first
/// `\n` at or after `pos - 1`. `None` when no line starts within `max_scan`
/// bytes (a huge line, or the end).
pub fn line_start_from(file: &File, pos: u64, max_scan: u64) -> Result<Option<u64>, IoFailure> {
    if pos == 0 {
        return Ok(Some(0));
    }
    let mut window = vec![0u8; 64 << 10];
    let mut at = pos - 1;
    while at - (pos - 1) < max_scan {
        let n = loop {
            match crate::os::read_at(file, &mut window, at) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoFailure::new(&e, "read", None)),
            }
        };
        if n == 0 {
            return Ok(None);
        }
        if let Some(nl) = memchr::memchr(b'\n', &window[..n]) {
            return Ok(Some(at + nl as u64 + 1));
        }
        at += n as u64;
    }
    Ok(None)
}

/// Reads `len` bytes at `offset`: lines of a loaded session are read again on
/// demand instead of being kept in memory.
pub fn read_at(file: &File, offset: u64, len: usize) -> Result<Vec<u8>, IoFailure> {
    let mut out = Vec::new();
    read_at_into(file, offset, len, &mut out)?;
    Ok(out)
}

/// Like `read_at`, into a buffer reused across reads.
pub fn read_at_into(
    file: &File,
    offset: u64,
    len: usize,
    buffer: &mut Vec<u8>,
) -> Result<(), IoFailure> {
    buffer.resize(len, 0);
    crate::os::read_exact_at(file, &mut buffer[..len], offset)
        .map_err(|e| IoFailure::new(&e, "read", None))
}

pub fn open_read(path: &Path) -> Result<File, IoFailure> {
    File::open(path).map_err(|e| IoFailure::new(&e, "open", Some(path)))
}

/// Ends a file's cut last line with a newline, as the reference does after reading
/// it, unless the file already ends with one by now: a line seen unfinished may
/// have been another process's append still being written.
pub fn end_last_line(path: &Path) -> Result<(), IoFailure> {
    let file = OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let size = file
        .metadata()
        .map_err(|e| IoFailure::new(&e, "fstat", None))?
        .len();
    let mut last = [0u8; 1];
    if size == 0
        || (crate::os::read_exact_at(&file, &mut last, size - 1).is_ok() && last[0] == b'\n')
    {
        return Ok(());
    }
    append(path, b"\n")
}

/// Appends `data` in one write, opening the file for this one append. A failed
/// or short write is cut back so the file never keeps half a line.
pub fn append(path: &Path, data: &[u8]) -> Result<(), IoFailure> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    append_to(&file, data)
}

/// Appends `data` to a file opened with `O_APPEND`, in one write; a failed or
/// short write is cut back.
pub fn append_to(file: &File, data: &[u8]) -> Result<(), IoFailure> {
    let mut written = 0;
    let mut out = file;
    while written < data.len() {
        match out.write(&data[written..]) {
            Ok(0) => {
                let e = io::Error::new(io::ErrorKind::WriteZero, "short write");
                return Err(cut_back(file, written, &e));
            }
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(cut_back(file, written, &e)),
        }
    }
    Ok(())
}

fn cut_back(file: &File, written: usize, err: &io::Error) -> IoFailure {
    if written > 0 {
        if let Ok(meta) = file.metadata() {
            let _ = file.set_len(meta.len().saturating_sub(written as u64));
        }
    }
    IoFailure::new(err, "write", None)
}

/// Creates a new file that must not exist yet (`wx`), with all of `data`.
pub fn create_new(path: &Path, data: &[u8]) -> Result<(), IoFailure> {
    create_new_with(path, writing(data))
}

/// Writes all of `data` to the file it is given: the content of `create_new`
/// and `replace`.
fn writing(data: &[u8]) -> impl FnOnce(&File) -> Result<(), IoFailure> + '_ {
    move |mut file| {
        file.write_all(data)
            .map_err(|e| IoFailure::new(&e, "write", None))
    }
}

/// `create_new` with the content written by `write`; a failed write removes the file.
pub fn create_new_with(
    path: &Path,
    write: impl FnOnce(&File) -> Result<(), IoFailure>,
) -> Result<(), IoFailure> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    if let Err(e) = write(&file) {
        drop(file);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(())
}

/// Replaces the file's content as a whole: written to a temporary file in the
/// same folder, flushed, then renamed over the original. The reference truncates
/// first, so a failure half-way destroys the session; here the old file survives.
pub fn replace(path: &Path, data: &[u8]) -> Result<(), IoFailure> {
    replace_with(path, writing(data))
}

/// `replace` with the content written by `write`.
pub fn replace_with(
    path: &Path,
    write: impl FnOnce(&File) -> Result<(), IoFailure>,
) -> Result<(), IoFailure> {
    // Write through a symlink to its target, as truncating in place would.
    let target: PathBuf = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let existing = fs::metadata(&target).ok();
    let result = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
        write(&file)?;
        // Replacing a session: its new content must be on disk before the rename
        // drops the old one. A brand-new file (a branched session) replaces
        // nothing, so a crash can only lose the new file itself.
        if existing.is_some() {
            file.sync_data()
                .map_err(|e| IoFailure::new(&e, "fsync", None))?;
        }
        if let Some(meta) = &existing {
            let _ = fs::set_permissions(&temp, meta.permissions());
        }
        fs::rename(&temp, &target).map_err(|e| IoFailure::new(&e, "rename", Some(path)))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_last_line_is_ended_once() {
        let dir = std::env::temp_dir().join(format!("pisn-end-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        for (before, after) in [("a", "a\n"), ("a\nb", "a\nb\n"), ("a\n", "a\n"), ("", "")] {
            let path = dir.join("f.jsonl");
            fs::write(&path, before).unwrap();
            end_last_line(&path).unwrap();
            // Seen unfinished but finished by now (another writer): left alone.
            end_last_line(&path).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), after, "{before:?}");
        }
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn streams_lines_across_chunks_and_long_lines() {
        let dir = std::env::temp_dir().join(format!("pisn-lines-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l.jsonl");
        // A valid JSON string longer than the read buffer is kept whole.
        let long = format!("\"{}\"", "x".repeat(READ_CHUNK * 2 + 3));
        fs::write(&path, format!("a\n{long}\n\nb")).unwrap();
        let mut seen = Vec::new();
        let (len, unterminated) = for_each_line(&mut File::open(&path).unwrap(), 0, |off, l| {
            seen.push((off, l.len()))
        })
        .unwrap();
        assert!(unterminated);
        assert_eq!(len, long.len() as u64 + 5);
        let l = long.len() as u64;
        assert_eq!(seen, vec![(0, 1), (2, long.len()), (l + 3, 0), (l + 4, 1)]);
        let file = File::open(&path).unwrap();
        assert_eq!(read_at(&file, l + 4, 1).unwrap(), b"b");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_huge_line_that_cannot_parse_is_dropped_without_holding_it() {
        let dir = std::env::temp_dir().join(format!("pisn-huge-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse.jsonl");
        let file = File::create(&path).unwrap();
        file.set_len(READ_CHUNK as u64 * 5).unwrap();
        drop(file);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"\n{\"ok\":1}\n").unwrap();
        let mut seen = Vec::new();
        let (_, unterminated) = for_each_line(&mut File::open(&path).unwrap(), 0, |off, l| {
            seen.push((off, l.to_vec()))
        })
        .unwrap();
        assert!(!unterminated);
        assert_eq!(
            seen,
            vec![(READ_CHUNK as u64 * 5 + 1, b"{\"ok\":1}".to_vec())]
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn replace_keeps_the_old_file_until_the_new_one_is_complete() {
        let dir = std::env::temp_dir().join(format!("pisn-store-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.jsonl");
        fs::write(&file, b"old\n").unwrap();
        replace(&file, b"new\n").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        append(&file, b"more\n").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new\nmore\n");
        assert!(create_new(&file, b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
