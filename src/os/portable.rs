//! Every other OS (and Linux with the `portable-io` feature): std only.
//! Files are stat'ed by path, ranges copied through a buffer, and no folder
//! is watched, so a listing stats every file: slower, the same answers.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::Stat;

/// The status of an open file.
pub fn fstat(file: &File) -> io::Result<Stat> {
    file.metadata().map(|m| Stat::from_metadata(&m))
}

/// The status of `path`, following symlinks (`statSync`).
pub fn stat(path: &Path) -> io::Result<Stat> {
    fs::metadata(path).map(|m| Stat::from_metadata(&m))
}

/// The status of `path` itself, not following a symlink (`lstatSync`).
pub fn lstat(path: &Path) -> io::Result<Stat> {
    fs::symlink_metadata(path).map(|m| Stat::from_metadata(&m))
}

/// A folder whose files are stat'ed and opened by their whole path.
pub struct Folder {
    path: PathBuf,
}

impl Folder {
    pub fn open(path: &Path) -> io::Result<Folder> {
        // As opening a folder would: fails for what is not one.
        if !fs::metadata(path)?.is_dir() {
            return Err(io::Error::other("not a directory"));
        }
        Ok(Folder {
            path: path.to_path_buf(),
        })
    }

    pub fn stat(&self, name: &OsStr) -> io::Result<Stat> {
        stat(&self.path.join(name))
    }

    pub fn lstat(&self, name: &OsStr) -> io::Result<Stat> {
        lstat(&self.path.join(name))
    }

    /// Reads the start of a file in the folder into `buf` (one read).
    pub fn read_start(&self, name: &OsStr, buf: &mut [u8]) -> io::Result<usize> {
        let mut file = File::open(self.path.join(name))?;
        loop {
            match file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                read => return read,
            }
        }
    }
}

/// Copies `len` bytes from `source` at `from` to `target` at `to`.
pub fn copy_range(source: &File, from: u64, target: &File, to: u64, len: u64) -> io::Result<()> {
    super::copy_range_buffered(source, from, target, to, len)
}

/// Never made: there is no notifier here.
pub type WatchId = i32;

/// Never made: there is no notifier here.
#[derive(Debug)]
pub enum FolderEvent<'a> {
    Lost,
    FolderGone {
        id: WatchId,
        ended: bool,
    },
    Changed {
        id: WatchId,
        name: Option<&'a [u8]>,
        names_changed: bool,
    },
}

/// No folder is watched: `new` gives none.
pub enum Notifier {}

impl Notifier {
    pub fn new() -> Option<Notifier> {
        None
    }

    pub fn can_watch(_dir: &Path) -> bool {
        false
    }

    pub fn add(&self, _dir: &Path) -> Option<WatchId> {
        match *self {}
    }

    pub fn remove(&self, _id: WatchId) {
        match *self {}
    }

    pub fn drain(&self, _apply: impl FnMut(FolderEvent)) {
        match *self {}
    }
}
