//! The open files of every session in the process, in one small pool.
//!
//! A program may keep thousands of sessions alive (or waiting for a collection),
//! so no session owns a descriptor: a session names its file, and the pool
//! keeps the most recently used few open, reopening on demand. A reopened file
//! must be the same file (device and inode) as the one the session read; the
//! bytes of each line are checked against the hash taken when it was read (see
//! `session::Session`), so a file rewritten in place is noticed too.

use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::session::store::IoFailure;

/// Files kept open for reading lines, and for appending, across all sessions.
pub const READ_SLOTS: usize = 8;
pub const APPEND_SLOTS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Read,
    Append,
}

struct Slot {
    owner: u64,
    kind: Use,
    path: PathBuf,
    file: Arc<File>,
    last_used: u64,
}

struct Pool {
    slots: Vec<Slot>,
    clock: u64,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    slots: Vec::new(),
    clock: 0,
});

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

fn pool() -> MutexGuard<'static, Pool> {
    // A panic while holding the lock leaves the pool consistent (a Vec of slots).
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pool {
    fn find(&mut self, owner: u64, kind: Use, path: &Path) -> Option<Arc<File>> {
        self.clock += 1;
        let now = self.clock;
        let slot = self
            .slots
            .iter_mut()
            .find(|s| s.owner == owner && s.kind == kind && s.path == path)?;
        slot.last_used = now;
        Some(slot.file.clone())
    }

    /// Keeps `file` for `owner`, closing the least recently used file of that
    /// use when the pool is full. Returns the file closed, to be dropped after
    /// the lock is released.
    fn insert(&mut self, owner: u64, kind: Use, path: &Path, file: Arc<File>) -> Vec<Slot> {
        let mut closed = self.remove(|s| s.owner == owner && s.kind == kind);
        if !crate::os::KEEP_FILES_OPEN {
            // Closed when the caller is done with it.
            return closed;
        }
        let capacity = match kind {
            Use::Read => READ_SLOTS,
            Use::Append => APPEND_SLOTS,
        };
        let in_use = self.slots.iter().filter(|s| s.kind == kind).count();
        if in_use >= capacity {
            let oldest = self
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.kind == kind)
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i);
            if let Some(i) = oldest {
                closed.push(self.slots.swap_remove(i));
            }
        }
        self.clock += 1;
        self.slots.push(Slot {
            owner,
            kind,
            path: path.to_path_buf(),
            file,
            last_used: self.clock,
        });
        closed
    }

    fn remove(&mut self, matches: impl Fn(&Slot) -> bool) -> Vec<Slot> {
        let mut removed = Vec::new();
        let mut i = 0;
        while i < self.slots.len() {
            if matches(&self.slots[i]) {
                removed.push(self.slots.swap_remove(i));
            } else {
                i += 1;
            }
        }
        removed
    }
}

/// A session's claim on the pool; dropping it closes the session's files.
#[derive(Debug)]
pub struct PoolOwner(u64);

impl PoolOwner {
    pub fn new() -> PoolOwner {
        PoolOwner(NEXT_OWNER.fetch_add(1, Ordering::Relaxed))
    }

    /// Closes the files this owner has open for reading.
    pub fn forget_reads(&self) {
        let closed = pool().remove(|s| s.owner == self.0 && s.kind == Use::Read);
        drop(closed);
    }

    /// Closes the file this owner has open for appending.
    pub fn forget_appends(&self) {
        let closed = pool().remove(|s| s.owner == self.0 && s.kind == Use::Append);
        drop(closed);
    }
}

impl Default for PoolOwner {
    fn default() -> Self {
        PoolOwner::new()
    }
}

impl Drop for PoolOwner {
    fn drop(&mut self) {
        let closed = pool().remove(|s| s.owner == self.0);
        drop(closed);
    }
}

/// The file a session read its lines from, as it was then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    pub dev: u64,
    pub ino: u64,
}

impl FileIdentity {
    pub fn of(file: &File) -> Result<FileIdentity, IoFailure> {
        let st = crate::os::fstat(file).map_err(|e| IoFailure::new(&e, "fstat", None))?;
        Ok(FileIdentity {
            dev: st.dev,
            ino: st.ino,
        })
    }
}

/// Why a session's file can no longer give the lines the session read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gone {
    Deleted,
    Replaced,
    Io(IoFailure),
}

/// Puts a file just read into the pool, so the calls that follow find it open.
pub fn keep_for_reading(owner: &PoolOwner, path: &Path, file: File) {
    let closed = pool().insert(owner.0, Use::Read, path, Arc::new(file));
    drop(closed);
}

/// The file `owner` reads its lines from: the pooled descriptor, or the path
/// opened again if it is still the file the session read.
pub fn for_reading(
    owner: &PoolOwner,
    path: &Path,
    identity: FileIdentity,
) -> Result<Arc<File>, Gone> {
    if let Some(file) = pool().find(owner.0, Use::Read, path) {
        return Ok(file);
    }
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Gone::Deleted),
        Err(e) => return Err(Gone::Io(IoFailure::new(&e, "open", Some(path)))),
    };
    if FileIdentity::of(&file).map_err(Gone::Io)? != identity {
        return Err(Gone::Replaced);
    }
    let file = Arc::new(file);
    let closed = pool().insert(owner.0, Use::Read, path, file.clone());
    drop(closed);
    Ok(file)
}

/// The file `owner` appends to at `path`, opened (and created) with `O_APPEND`
/// if the pool has none, and its status before the append (`None` if that
/// could not be read). A pooled file that lost its last link (deleted or
/// replaced behind our back) is opened again by path, as a fresh open would.
pub fn for_appending(
    owner: &PoolOwner,
    path: &Path,
) -> Result<(Arc<File>, Option<crate::os::Stat>), IoFailure> {
    if let Some(file) = pool().find(owner.0, Use::Append, path) {
        match crate::os::fstat(&file) {
            Ok(st) if st.nlink > 0 => return Ok((file, Some(st))),
            _ => {}
        }
    }
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| IoFailure::new(&e, "open", Some(path)))?;
    let file = Arc::new(file);
    let closed = pool().insert(owner.0, Use::Append, path, file.clone());
    drop(closed);
    let st = crate::os::fstat(&file).ok();
    Ok((file, st))
}

/// Descriptors the pool holds now.
pub fn open_count() -> usize {
    pool().slots.len()
}

/// The hash of a line kept to check it when it is read again.
pub fn line_hash(line: &[u8]) -> u64 {
    let mut hasher = foldhash::fast::FixedState::with_seed(0x9e37_79b9_7f4a_7c15).build_hasher();
    hasher.write(line);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_stays_bounded_and_reopens_only_the_same_file() {
        let dir = std::env::temp_dir().join(format!("pisn-pool-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let owners: Vec<PoolOwner> = (0..40).map(|_| PoolOwner::new()).collect();
        let mut identities = Vec::new();
        for (i, owner) in owners.iter().enumerate() {
            let path = dir.join(format!("{i}.jsonl"));
            std::fs::write(&path, format!("{i}\n")).unwrap();
            let file = File::open(&path).unwrap();
            identities.push(FileIdentity::of(&file).unwrap());
            keep_for_reading(owner, &path, file);
            for_appending(owner, &path).unwrap();
            let mine = pool().slots.iter().filter(|s| s.owner == owner.0).count();
            assert!(mine <= 2);
        }
        // Other tests share the pool: it never holds more than its slots.
        assert!(open_count() <= READ_SLOTS + APPEND_SLOTS);
        let first = dir.join("0.jsonl");
        assert!(for_reading(&owners[0], &first, identities[0]).is_ok());
        std::fs::remove_file(&first).unwrap();
        // Still pooled: the open descriptor reads the file as it was.
        assert!(for_reading(&owners[0], &first, identities[0]).is_ok());
        owners[0].forget_reads();
        assert_eq!(
            for_reading(&owners[0], &first, identities[0]).err(),
            Some(Gone::Deleted)
        );
        let second = dir.join("1.jsonl");
        std::fs::write(dir.join("new"), "x\n").unwrap();
        std::fs::rename(dir.join("new"), &second).unwrap();
        owners[1].forget_reads();
        assert_eq!(
            for_reading(&owners[1], &second, identities[1]).err(),
            Some(Gone::Replaced)
        );
        drop(owners);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
