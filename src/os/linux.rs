//! Linux: files stat'ed and opened relative to a folder held open (the
//! kernel resolves one name instead of the whole path), ranges copied in the
//! kernel, folders watched with inotify.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::{FileKind, Stat, Time};

fn from_rustix(st: &rustix::fs::Stat) -> Stat {
    let kind = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::RegularFile => FileKind::File,
        rustix::fs::FileType::Directory => FileKind::Dir,
        rustix::fs::FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    };
    // Field widths differ between targets.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    Stat {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        size: st.st_size as u64,
        mtime: Time {
            sec: st.st_mtime as i64,
            nsec: st.st_mtime_nsec as i64,
        },
        ctime: Time {
            sec: st.st_ctime as i64,
            nsec: st.st_ctime_nsec as i64,
        },
        kind,
        nlink: st.st_nlink as u64,
    }
}

/// The status of `path`, following symlinks (`statSync`).
pub fn stat(path: &Path) -> io::Result<Stat> {
    Ok(from_rustix(&rustix::fs::stat(path)?))
}

/// The status of `path` itself, not following a symlink (`lstatSync`).
pub fn lstat(path: &Path) -> io::Result<Stat> {
    Ok(from_rustix(&rustix::fs::lstat(path)?))
}

/// The status of an open file: `fstat` itself (std asks `statx` with an empty
/// path, which the kernel resolves first; appends stat their file every time).
pub fn fstat(file: &File) -> io::Result<Stat> {
    Ok(from_rustix(&rustix::fs::fstat(file)?))
}

/// A folder held open so that its files are opened and stat'ed relative to it.
pub struct Folder {
    fd: OwnedFd,
}

impl Folder {
    pub fn open(path: &Path) -> io::Result<Folder> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Folder {
            fd: rustix::fs::open(path, flags, Mode::empty())?,
        })
    }

    /// The status of a file in the folder, following symlinks.
    pub fn stat(&self, name: &OsStr) -> io::Result<Stat> {
        Ok(from_rustix(&rustix::fs::statat(
            &self.fd,
            name,
            AtFlags::empty(),
        )?))
    }

    /// The status of a file in the folder, not following a symlink.
    pub fn lstat(&self, name: &OsStr) -> io::Result<Stat> {
        Ok(from_rustix(&rustix::fs::statat(
            &self.fd,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?))
    }

    /// Reads the start of a file in the folder into `buf` (one read).
    pub fn read_start(&self, name: &OsStr, buf: &mut [u8]) -> io::Result<usize> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(rustix::io::retry_on_intr(|| {
            rustix::io::read(&fd, &mut *buf)
        })?)
    }
}

/// Copies `len` bytes from `source` at `from` to `target` at `to`, in the
/// kernel where it can, through a buffer where it cannot (another filesystem
/// on an old kernel, a filesystem without the call).
pub fn copy_range(
    source: &File,
    mut from: u64,
    target: &File,
    mut to: u64,
    len: u64,
) -> io::Result<()> {
    use rustix::io::Errno;
    let mut left = len;
    while left > 0 {
        let mut off_in = from;
        let mut off_out = to;
        let chunk = left.min(1 << 30) as usize;
        let copied = match rustix::fs::copy_file_range(
            source,
            Some(&mut off_in),
            target,
            Some(&mut off_out),
            chunk,
        ) {
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(Errno::NOSYS | Errno::XDEV | Errno::INVAL | Errno::OPNOTSUPP | Errno::PERM) => {
                return super::copy_range_buffered(source, from, target, to, left);
            }
            Err(e) => return Err(e.into()),
        };
        if copied == 0 {
            // The source is shorter than it was.
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        from += copied as u64;
        to += copied as u64;
        left -= copied as u64;
    }
    Ok(())
}

/// A folder watch of the notifier.
pub type WatchId = i32;

/// What the kernel reported about watched folders.
#[derive(Debug)]
pub enum FolderEvent<'a> {
    /// Events may have been lost: nothing learned is to be trusted.
    Lost,
    /// The folder itself was deleted, moved or unmounted; `ended` when the
    /// watch is gone too.
    FolderGone { id: WatchId, ended: bool },
    /// A file in the folder (or the folder, `name` none) changed; with
    /// `names_changed` when a name came or went.
    Changed {
        id: WatchId,
        name: Option<&'a [u8]>,
        names_changed: bool,
    },
}

/// One inotify instance for the process: reports every write, truncate,
/// chmod, utime, create, delete and rename under a watched folder, by any
/// process, before the call that made it returns.
pub struct Notifier {
    fd: OwnedFd,
}

impl Notifier {
    pub fn new() -> Option<Notifier> {
        use rustix::fs::inotify::CreateFlags;
        let fd = rustix::fs::inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Notifier { fd })
    }

    /// Whether every change of `dir` passes through this kernel (network and
    /// FUSE filesystems can change without an event).
    pub fn can_watch(dir: &Path) -> bool {
        const EXT4: i64 = 0xEF53;
        const XFS: i64 = 0x5846_5342;
        const BTRFS: i64 = 0x9123_683E;
        const TMPFS: i64 = 0x0102_1994;
        const F2FS: i64 = 0xF2F5_2010;
        // `f_type`'s width differs between targets.
        #[allow(clippy::unnecessary_cast)]
        rustix::fs::statfs(dir)
            .is_ok_and(|fs| [EXT4, XFS, BTRFS, TMPFS, F2FS].contains(&(fs.f_type as i64)))
    }

    /// Watches `dir` (the same id for a folder watched already).
    pub fn add(&self, dir: &Path) -> Option<WatchId> {
        use rustix::fs::inotify::WatchFlags;
        let mask = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR;
        rustix::fs::inotify::add_watch(&self.fd, dir, mask).ok()
    }

    pub fn remove(&self, id: WatchId) {
        let _ = rustix::fs::inotify::remove_watch(&self.fd, id);
    }

    /// Hands every event queued since the last call to `apply`.
    pub fn drain(&self, mut apply: impl FnMut(FolderEvent)) {
        use rustix::fs::inotify::{ReadFlags, Reader};
        let mut buf = [std::mem::MaybeUninit::uninit(); 16384];
        let mut reader = Reader::new(&self.fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => return,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return apply(FolderEvent::Lost),
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                apply(FolderEvent::Lost);
                continue;
            }
            let id = event.wd();
            if flags.intersects(
                ReadFlags::IGNORED
                    | ReadFlags::DELETE_SELF
                    | ReadFlags::MOVE_SELF
                    | ReadFlags::UNMOUNT,
            ) {
                let ended = flags.contains(ReadFlags::IGNORED);
                apply(FolderEvent::FolderGone { id, ended });
                continue;
            }
            let names_changed = flags.intersects(
                ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO,
            );
            apply(FolderEvent::Changed {
                id,
                name: event.file_name().map(|n| n.to_bytes()),
                names_changed,
            });
        }
    }
}
