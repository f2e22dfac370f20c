//! A new file described as pieces: ranges of an existing file and bytes in hand.
//! Forking and branching keep most lines exactly as they are; describing them as
//! ranges lets the kernel copy them (`copy_file_range`) instead of reading them
//! into memory and writing them out again, and lets several threads write their
//! parts at known offsets.

use std::fs::File;
use std::io;

use crate::session::store::IoFailure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// `len` bytes of the source file from `offset`.
    Source { offset: u64, len: u64 },
    /// `len` bytes of `Assembly::bytes` from `start`.
    Bytes { start: usize, len: usize },
}

impl Piece {
    fn len(&self) -> u64 {
        match *self {
            Piece::Source { len, .. } => len,
            Piece::Bytes { len, .. } => len as u64,
        }
    }
}

#[derive(Debug, Default)]
pub struct Assembly {
    pieces: Vec<Piece>,
    bytes: Vec<u8>,
    len: u64,
}

impl Assembly {
    /// Bytes this assembly writes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Source bytes `offset..offset + len`, joined to the previous range when it
    /// ends where this one starts.
    pub fn copy(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        self.len += len;
        if let Some(Piece::Source { offset: o, len: l }) = self.pieces.last_mut() {
            if *o + *l == offset {
                *l += len;
                return;
            }
        }
        self.pieces.push(Piece::Source { offset, len });
    }

    /// Bytes written by `fill` into the assembly's own buffer.
    pub fn write_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) {
        let start = self.bytes.len();
        fill(&mut self.bytes);
        let len = self.bytes.len() - start;
        if len == 0 {
            return;
        }
        self.len += len as u64;
        if let Some(Piece::Bytes { start: s, len: l }) = self.pieces.last_mut() {
            if *s + *l == start {
                *l += len;
                return;
            }
        }
        self.pieces.push(Piece::Bytes { start, len });
    }

    pub fn write(&mut self, data: &[u8]) {
        self.write_with(|out| out.extend_from_slice(data));
    }
}

/// The bytes `parts` would write, in memory.
pub fn read_parts(source: Option<&File>, parts: &[Assembly]) -> Result<Vec<u8>, IoFailure> {
    let total: u64 = parts.iter().map(Assembly::len).sum();
    let mut out = Vec::with_capacity(total as usize);
    for assembly in parts {
        for piece in &assembly.pieces {
            match *piece {
                Piece::Bytes { start, len } => {
                    out.extend_from_slice(&assembly.bytes[start..start + len])
                }
                Piece::Source { offset, len } => {
                    let source = source.ok_or_else(|| {
                        IoFailure::new(&io::ErrorKind::NotFound.into(), "read", None)
                    })?;
                    let at = out.len();
                    out.resize(at + len as usize, 0);
                    crate::os::read_exact_at(source, &mut out[at..], offset)
                        .map_err(|e| IoFailure::new(&e, "read", None))?;
                }
            }
        }
    }
    Ok(out)
}

/// One thread's share of the writing: pieces of one assembly, from `out` on.
struct Job<'a> {
    assembly: &'a Assembly,
    pieces: Vec<Piece>,
    out: u64,
}

/// Writes `parts` one after another into `target` from offset 0, in parallel.
/// Source ranges come from `source`; a range it no longer has is an error, never
/// a silently shorter file.
pub fn write_parts(
    target: &File,
    source: Option<&File>,
    parts: &[Assembly],
) -> Result<(), IoFailure> {
    let total: u64 = parts.iter().map(Assembly::len).sum();
    let threads = crate::parallel::threads();
    // Jobs of about equal size; a long source range may be split between two.
    const MIN_JOB: u64 = 4 << 20;
    let job_size = (total / threads as u64).max(MIN_JOB);
    let mut jobs: Vec<Job> = Vec::new();
    let mut out = 0u64;
    for assembly in parts {
        let mut job = Job {
            assembly,
            pieces: Vec::new(),
            out,
        };
        let mut job_len = 0u64;
        for &piece in &assembly.pieces {
            let mut piece = piece;
            loop {
                let room = job_size.saturating_sub(job_len);
                match piece {
                    Piece::Source { offset, len } if len > room && room > 0 => {
                        job.pieces.push(Piece::Source { offset, len: room });
                        out += room;
                        piece = Piece::Source {
                            offset: offset + room,
                            len: len - room,
                        };
                        job_len = job_size;
                    }
                    _ => {
                        if job_len >= job_size {
                            let next = Job {
                                assembly,
                                pieces: Vec::new(),
                                out,
                            };
                            jobs.push(std::mem::replace(&mut job, next));
                            job_len = 0;
                            continue;
                        }
                        job.pieces.push(piece);
                        out += piece.len();
                        job_len += piece.len();
                        break;
                    }
                }
            }
        }
        jobs.push(job);
    }
    jobs.retain(|j| !j.pieces.is_empty());
    let run = |job: &Job| write_job(target, source, job);
    if jobs.len() < 2 || threads < 2 {
        return jobs.iter().try_for_each(run);
    }
    crate::parallel::map_in_order(&jobs, run)
        .into_iter()
        .collect()
}

fn write_job(target: &File, source: Option<&File>, job: &Job) -> Result<(), IoFailure> {
    let write_err = |e: io::Error| IoFailure::new(&e, "write", None);
    let mut out = job.out;
    for piece in &job.pieces {
        match *piece {
            Piece::Bytes { start, len } => {
                crate::os::write_all_at(target, &job.assembly.bytes[start..start + len], out)
                    .map_err(write_err)?;
            }
            Piece::Source { offset, len } => {
                let source = source.ok_or_else(|| write_err(io::ErrorKind::NotFound.into()))?;
                copy_range(source, offset, target, out, len)?;
            }
        }
        out += piece.len();
    }
    Ok(())
}

/// Copies `len` bytes of `source` at `from` to `target` at `to` (in the
/// kernel where the OS can); a source shorter than that fails as a read.
fn copy_range(source: &File, from: u64, target: &File, to: u64, len: u64) -> Result<(), IoFailure> {
    crate::os::copy_range(source, from, target, to, len).map_err(|e| {
        let syscall = if e.kind() == io::ErrorKind::UnexpectedEof {
            "read"
        } else {
            "write"
        };
        IoFailure::new(&e, syscall, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-asm-{tag}-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn joins_neighbouring_pieces() {
        let mut a = Assembly::default();
        a.copy(0, 5);
        a.copy(5, 3);
        a.write(b"x");
        a.write(b"yz");
        a.copy(100, 2);
        assert_eq!(a.len(), 13);
        assert_eq!(
            a.pieces,
            vec![
                Piece::Source { offset: 0, len: 8 },
                Piece::Bytes { start: 0, len: 3 },
                Piece::Source {
                    offset: 100,
                    len: 2
                },
            ]
        );
    }

    #[test]
    fn writes_parts_in_order_with_split_ranges() {
        let dir = temp_dir("parts");
        let src_path = dir.join("src");
        // Big enough that the ranges are split between jobs.
        let data: Vec<u8> = (0..(12u32 << 20)).map(|i| (i % 251) as u8).collect();
        fs::write(&src_path, &data).unwrap();
        let source = File::open(&src_path).unwrap();
        let mut head = Assembly::default();
        head.write(b"HEAD\n");
        let mut body = Assembly::default();
        body.copy(10, 9 << 20);
        body.write(b"--");
        body.copy(3, 4);
        let mut tail = Assembly::default();
        tail.copy((10 << 20) + 7, (2 << 20) - 7);
        let target_path = dir.join("out");
        let target = File::create(&target_path).unwrap();
        write_parts(&target, Some(&source), &[head, body, tail]).unwrap();
        let mut expected = b"HEAD\n".to_vec();
        expected.extend_from_slice(&data[10..10 + (9 << 20)]);
        expected.extend_from_slice(b"--");
        expected.extend_from_slice(&data[3..7]);
        expected.extend_from_slice(&data[(10 << 20) + 7..]);
        assert_eq!(fs::read(&target_path).unwrap(), expected);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_range_past_the_end_of_the_source_is_an_error() {
        let dir = temp_dir("short");
        fs::write(dir.join("src"), b"0123456789").unwrap();
        let source = File::open(dir.join("src")).unwrap();
        let target = File::create(dir.join("out")).unwrap();
        let mut a = Assembly::default();
        a.copy(5, 10);
        let err = write_parts(&target, Some(&source), &[a]).unwrap_err();
        assert_eq!(err.syscall, "read");
        fs::remove_dir_all(dir).unwrap();
    }
}
