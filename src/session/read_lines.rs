//! A file's lines read on several threads, each reading and reading through
//! its own range of whole lines, results in file order: `open`, forks and the
//! accounting read with it.

use std::fs::File;

use super::store::{self, IoFailure};
use crate::parallel;

/// Lines kept as (offset, length, value), the length read and whether the last
/// line had no `\n`.
pub(crate) type LinesRead<T> = (Vec<(u64, usize, T)>, u64, bool);

/// Every line of `file` that `f` keeps, as (offset, length, value) in file order,
/// and the file's length and whether its last line has no `\n`. Each thread
/// reads and reads through its own range of whole lines, so the copying out of
/// the page cache is shared too.
pub(super) fn read_lines_parallel<T: Send>(
    file: &File,
    f: impl Fn(&[u8]) -> Option<T> + Sync,
) -> Result<LinesRead<T>, IoFailure> {
    read_lines_parallel_in(file, None, f)
}

/// `read_lines_parallel` reading `chunk` bytes at a time (default: up to 8
/// MiB); a chunk that still fits in the CPU cache when its lines are parsed
/// pays where each line is only scanned once.
pub(crate) fn read_lines_parallel_in<T: Send>(
    file: &File,
    chunk: Option<usize>,
    f: impl Fn(&[u8]) -> Option<T> + Sync,
) -> Result<LinesRead<T>, IoFailure> {
    const PARALLEL_FROM: u64 = 4 << 20;
    let size = file.metadata().map_or(0, |m| m.len());
    let threads = parallel::threads();
    let mut starts = vec![0u64];
    if threads > 1 && size >= PARALLEL_FROM {
        for t in 1..threads as u64 {
            // A split inside a huge line is given up rather than read through twice.
            match store::line_start_from(file, size * t / threads as u64, 16 << 20)? {
                Some(at) if at > *starts.last().unwrap_or(&0) && at < size => starts.push(at),
                _ => {}
            }
        }
    }
    let read_range = |start: u64, end: Option<u64>| -> Result<LinesRead<T>, IoFailure> {
        let mut out = Vec::new();
        let mut reader = store::RangeReader {
            file,
            pos: start,
            end,
        };
        let hint = end.unwrap_or(size).saturating_sub(start);
        let mut visit = |offset: u64, line: &[u8]| {
            if let Some(v) = f(line) {
                out.push((start + offset, line.len(), v));
            }
        };
        let (len, unterminated) = match chunk {
            None => store::for_each_line(&mut reader, hint, visit)?,
            Some(chunk) => {
                let chunk = (hint as usize + 1).min(chunk);
                store::for_each_block_in(&mut reader, &mut Vec::new(), chunk, |offset, block| {
                    let mut from = 0;
                    for nl in memchr::memchr_iter(b'\n', block) {
                        visit(offset + from as u64, &block[from..nl]);
                        from = nl + 1;
                    }
                    if from < block.len() {
                        visit(offset + from as u64, &block[from..]);
                    }
                })?
            }
        };
        Ok((out, start + len, unterminated))
    };
    if starts.len() == 1 {
        return read_range(0, None);
    }
    let ends = starts[1..].iter().map(|&e| Some(e)).chain([None]);
    let ranges: Vec<(u64, Option<u64>)> = starts.iter().copied().zip(ends).collect();
    let parts = parallel::map_in_order(&ranges, |&(start, end)| read_range(start, end));
    let mut all = Vec::new();
    let mut last = (0, false);
    for part in parts {
        let (lines, end, unterminated) = part?;
        all.extend(lines);
        last = (end, unterminated);
    }
    Ok((all, last.0, last.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::temp_dir;

    #[test]
    fn parallel_line_reading_equals_one_pass() {
        let dir = temp_dir();
        let path = dir.join("lines.jsonl");
        // About 9 MiB: lines of many lengths, blank lines, a line of 3 MiB that a
        // split point lands in, and no newline at the end.
        let mut data = Vec::new();
        let mut n = 0u64;
        let mut big = false;
        while data.len() < 9 << 20 {
            n += 1;
            match n % 7 {
                0 => data.extend_from_slice(b"\n"),
                // From about 3 to 6 MiB: across the middle, where two threads split.
                _ if data.len() > 3 << 20 && !std::mem::replace(&mut big, true) => {
                    data.extend_from_slice(format!("\"{}\"", "y".repeat(3 << 20)).as_bytes())
                }
                _ => data.extend_from_slice(
                    format!("\"{}\"", "x".repeat((n * 37 % 5000) as usize)).as_bytes(),
                ),
            }
            data.extend_from_slice(b"\n");
        }
        data.extend_from_slice(b"\"last\"");
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let keep = |line: &[u8]| (!line.is_empty()).then_some(line.len());
        let (parallel, size, unterminated) = read_lines_parallel(&file, keep).unwrap();
        let mut one_pass = Vec::new();
        let (size1, unterminated1) = store::for_each_line(
            &mut std::fs::File::open(&path).unwrap(),
            data.len() as u64,
            |at, line| {
                if let Some(v) = keep(line) {
                    one_pass.push((at, line.len(), v));
                }
            },
        )
        .unwrap();
        assert!(parallel::threads() < 2 || parallel.len() > 1000);
        let first_difference = parallel.iter().zip(&one_pass).position(|(a, b)| a != b);
        assert_eq!(
            first_difference,
            None,
            "{:?}",
            first_difference.map(|i| (&parallel[i], &one_pass[i]))
        );
        assert_eq!(parallel.len(), one_pass.len());
        assert_eq!((size, unterminated), (size1, unterminated1));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
