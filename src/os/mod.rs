//! What differs between operating systems, and nothing else: file status,
//! a folder held open to stat and open its files, positioned reads and
//! writes, copying a byte range between files, watching a folder, private
//! file modes, returning freed memory, and looking up a symbol of the host
//! process. The rest of the crate calls this layer and names no OS call.
//!
//! Two implementations of the parts with fast paths: `linux` (openat and
//! statat, inotify, copy_file_range) and `portable` (std only: path-based
//! stat, no watch, a read/write copy), used on every other target, and on
//! Linux too with the `portable-io` feature so that the code macOS and
//! Windows run is tested here.

use std::ffi::{c_void, OsString};
use std::fs::{self, File};
use std::io;
use std::path::Path;

#[cfg(all(target_os = "linux", not(feature = "portable-io")))]
mod linux;
#[cfg(all(target_os = "linux", not(feature = "portable-io")))]
use linux as imp;

#[cfg(not(all(target_os = "linux", not(feature = "portable-io"))))]
mod portable;
#[cfg(not(all(target_os = "linux", not(feature = "portable-io"))))]
use portable as imp;

pub use imp::{copy_range, fstat, lstat, stat, Folder, FolderEvent, Notifier, WatchId};

/// Which implementation this build uses, for tests and diagnostics.
pub const IMPLEMENTATION: &str = if cfg!(all(target_os = "linux", not(feature = "portable-io"))) {
    "linux"
} else {
    "portable"
};

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// Seconds and nanoseconds since the epoch, kept apart as the OS gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    pub sec: i64,
    pub nsec: i64,
}

impl Time {
    pub fn as_ns(self) -> i128 {
        self.sec as i128 * 1_000_000_000 + self.nsec as i128
    }

    /// Milliseconds as Node computes `stats.mtimeMs` (seconds and nanoseconds
    /// apart, so the float keeps its precision).
    pub fn as_ms(self) -> f64 {
        self.sec as f64 * 1e3 + self.nsec as f64 / 1e6
    }
}

/// The status of a file, as much of it as the crate uses.
///
/// `dev` and `ino` tell one file from another where the OS gives them. On
/// Windows std gives neither, and both are 0: a replaced file is then noticed
/// by its bytes (each line read again is checked against the hash taken when
/// it was read; a listing checks the bytes before the end it read to), not by
/// its identity. (The creation time looked like a stand-in, but under wine it
/// told one file from itself.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: Time,
    /// The last change of the file or of its status (on Windows, of its data).
    pub ctime: Time,
    pub kind: FileKind,
    pub nlink: u64,
}

impl Stat {
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }

    pub fn is_symlink(&self) -> bool {
        self.kind == FileKind::Symlink
    }

    /// `stats.mtimeMs`.
    pub fn mtime_ms(&self) -> f64 {
        self.mtime.as_ms()
    }

    /// The status std reports for `meta`.
    pub fn from_metadata(meta: &fs::Metadata) -> Stat {
        let file_type = meta.file_type();
        let kind = if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_file() {
            FileKind::File
        } else if file_type.is_dir() {
            FileKind::Dir
        } else {
            FileKind::Other
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stat {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime: Time {
                    sec: meta.mtime(),
                    nsec: meta.mtime_nsec(),
                },
                ctime: Time {
                    sec: meta.ctime(),
                    nsec: meta.ctime_nsec(),
                },
                kind,
                nlink: meta.nlink(),
            }
        }
        #[cfg(windows)]
        {
            use std::os::windows::fs::MetadataExt;
            let written = filetime(meta.last_write_time());
            Stat {
                dev: 0,
                ino: 0,
                size: meta.file_size(),
                mtime: written,
                ctime: written,
                kind,
                nlink: 1,
            }
        }
    }
}

/// A Windows FILETIME (100 ns ticks since 1601) as libuv converts it for Node.
#[cfg(any(windows, test))]
fn filetime(ticks: u64) -> Time {
    const TICKS_PER_SEC: i64 = 10_000_000;
    const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;
    let since_epoch = ticks as i64 - UNIX_EPOCH_TICKS;
    Time {
        sec: since_epoch.div_euclid(TICKS_PER_SEC),
        nsec: since_epoch.rem_euclid(TICKS_PER_SEC) * 100,
    }
}

/// Where the file ends right after a write to it through an append-mode
/// descriptor: the end of what that write put there, whatever was appended
/// since. On unix the descriptor's offset (one `lseek`, cheaper than a stat);
/// on Windows an append-only handle's cursor is not kept, so the size.
pub fn end_after_append(file: &File) -> io::Result<u64> {
    #[cfg(unix)]
    {
        use std::io::Seek;
        let mut cursor = file;
        cursor.stream_position()
    }
    #[cfg(not(unix))]
    {
        file.metadata().map(|m| m.len())
    }
}

// ---- positioned reads and writes: several threads read one descriptor ----

/// Reads into `buf` at `offset`; fewer bytes only at the end of the file.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        // Moves the file's cursor, which nothing here relies on.
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// Fills `buf` from `offset`, or fails with `UnexpectedEof`.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` at `offset`.
pub fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        #[cfg(unix)]
        let written = std::os::unix::fs::FileExt::write_at(file, buf, offset);
        #[cfg(windows)]
        let written = std::os::windows::fs::FileExt::seek_write(file, buf, offset);
        match written {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Copies `len` bytes through a buffer: what `copy_range` does where the
/// kernel cannot copy the range itself.
pub fn copy_range_buffered(
    source: &File,
    mut from: u64,
    target: &File,
    mut to: u64,
    len: u64,
) -> io::Result<()> {
    let mut buffer = vec![0u8; len.min(1 << 20) as usize];
    let mut left = len;
    while left > 0 {
        let n = left.min(buffer.len() as u64) as usize;
        read_exact_at(source, &mut buffer[..n], from)?;
        write_all_at(target, &buffer[..n], to)?;
        from += n as u64;
        to += n as u64;
        left -= n as u64;
    }
    Ok(())
}

// ---- private files: what the package keeps besides sessions is the user's alone ----

/// Creates `dir` and its missing parents, each private to the user (0700 on
/// Unix, set after creation so that no umask widens it; on Windows a folder
/// under the user's profile is already theirs). Folders that exist are left
/// as their owner made them.
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut current = Some(dir);
    while let Some(d) = current.filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        missing.push(d);
        current = d.parent();
    }
    for d in missing.into_iter().rev() {
        match private_dir_builder().create(d) {
            Ok(()) => set_private(d, true)?,
            // Made by another process meanwhile: not ours to change.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn private_dir_builder() -> fs::DirBuilder {
    #[cfg(unix)]
    {
        let mut builder = fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
    }
    #[cfg(not(unix))]
    {
        fs::DirBuilder::new()
    }
}

fn set_private(path: &Path, dir: bool) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if dir { 0o700 } else { 0o600 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(windows)]
    {
        let _ = (path, dir);
        Ok(())
    }
}

/// Creates a new file (failing if one is there) that only the user can read:
/// 0600 on Unix whatever the umask.
pub fn create_new_private(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Narrows an open file the package wrote to 0600 if an earlier version left
/// it wider (Unix; nothing to do on Windows).
pub fn narrow_to_private(file: &File, meta: &fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o777 != 0o600 {
            let _ = file.set_permissions(fs::Permissions::from_mode(0o600));
        }
    }
    #[cfg(windows)]
    let _ = (file, meta);
}

/// Whether sessions' files stay open between calls (the file pool). On Windows a
/// file held open keeps its name after another process deletes it, and cannot be
/// renamed over, even with delete sharing: there every call opens what it needs
/// and closes it after, so that pi's own deletes and rewrites never meet our handle.
pub const KEEP_FILES_OPEN: bool = !cfg!(windows);

/// Whether the cache files are mapped rather than read. Windows refuses to
/// replace a file that a process has mapped, and the cache is replaced by
/// renames, so there it is read.
pub const MAP_CACHE_FILES: bool = cfg!(unix);

/// Flushes a folder's entries (a rename in it) to disk, where a folder can be
/// opened for that; elsewhere the rename is as durable as the OS makes it.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A path from the bytes `OsStr::as_encoded_bytes` gave in this process or an
/// earlier one on the same OS; `None` for bytes no path of this OS has.
pub fn os_string_from_bytes(bytes: Vec<u8>) -> Option<OsString> {
    #[cfg(unix)]
    {
        Some(std::os::unix::ffi::OsStringExt::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        // Paths that are not Unicode are rare here, and are read again.
        String::from_utf8(bytes).ok().map(OsString::from)
    }
}

// ---- memory and the host process ----

/// Returns freed pages to the system where the allocator keeps them: glibc
/// keeps what a session freed in its arenas (a session's buffers are freed on
/// other threads' arenas too), so without this a process keeps the high water
/// mark of every burst of opens. Other allocators give pages back themselves.
pub fn trim_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The errno Node's fs would report for `err`, positive (JavaScript negates it and looks
/// it up in `util.getSystemErrorMap()`). On Unix that is the OS's errno; on Windows Node
/// reports libuv's codes (ENOENT is -4058 there), so the Windows error is translated the
/// way libuv's `uv_translate_sys_error` does. An error without an OS code is EIO.
pub fn node_errno(err: &io::Error) -> i32 {
    #[cfg(unix)]
    {
        err.raw_os_error().unwrap_or(libc::EIO)
    }
    #[cfg(windows)]
    {
        err.raw_os_error().map_or(UV_EIO, libuv_errno)
    }
}

#[cfg(windows)]
const UV_EIO: i32 = 4070;

/// libuv's code (positive) for a Windows error code, for the file errors Node's fs reports.
#[cfg(any(windows, test))]
fn libuv_errno(windows_error: i32) -> i32 {
    match windows_error {
        2 | 3 | 15 | 123 | 161 => 4058, // FILE/PATH_NOT_FOUND, INVALID_DRIVE, INVALID_NAME, BAD_PATHNAME: ENOENT
        5 => 4048,                      // ACCESS_DENIED: EPERM (as libuv maps it)
        4 => 4066,                      // TOO_MANY_OPEN_FILES: EMFILE
        6 => 4083,                      // INVALID_HANDLE: EBADF
        8 | 14 => 4057,                 // NOT_ENOUGH_MEMORY, OUTOFMEMORY: ENOMEM
        17 => 4037,                     // NOT_SAME_DEVICE: EXDEV
        19 => 4043,                     // WRITE_PROTECT: EROFS
        32 | 33 | 170 => 4082,          // SHARING/LOCK_VIOLATION, BUSY: EBUSY
        39 | 112 => 4055,               // HANDLE_DISK_FULL, DISK_FULL: ENOSPC
        80 | 183 => 4075,               // FILE_EXISTS, ALREADY_EXISTS: EEXIST
        87 => 4071,                     // INVALID_PARAMETER: EINVAL
        145 => 4051,                    // DIR_NOT_EMPTY: ENOTEMPTY
        206 => 4064,                    // FILENAME_EXCED_RANGE: ENAMETOOLONG
        267 => 4052,                    // DIRECTORY: ENOTDIR
        1921 => 4067,                   // CANT_RESOLVE_FILENAME: ELOOP
        _ => 4070,                      // EIO
    }
}

/// The address of an exported function of the host process (node), or `None`.
pub fn host_symbol(name: &std::ffi::CStr) -> Option<*mut c_void> {
    #[cfg(unix)]
    // SAFETY: dlsym with a NUL-terminated name.
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    #[cfg(windows)]
    // SAFETY: the module handle of the process's executable, and a
    // NUL-terminated name.
    let symbol = unsafe {
        windows::GetProcAddress(windows::GetModuleHandleW(std::ptr::null()), name.as_ptr())
    };
    (!symbol.is_null()).then_some(symbol)
}

/// The address of an exported C++ function of the host process, by its
/// mangled names: Itanium's (Linux, macOS: what `dlsym` finds) or MSVC's
/// (Windows: node.exe is built by MSVC, whichever compiler built this addon).
pub fn host_cxx_symbol(itanium: &std::ffi::CStr, msvc: &std::ffi::CStr) -> Option<*mut c_void> {
    host_symbol(if cfg!(windows) { msvc } else { itanium })
}

#[cfg(windows)]
mod windows {
    use std::ffi::{c_char, c_void};
    #[link(name = "kernel32")]
    extern "system" {
        pub fn GetModuleHandleW(name: *const u16) -> *mut c_void;
        pub fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
    }
}

/// For tests: Unix file modes, where there are any.
#[cfg(test)]
pub mod test_modes {
    use std::path::Path;

    /// A path's permission bits; `None` where files have no modes.
    pub fn mode_of(path: &Path) -> Option<u32> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            Some(std::fs::metadata(path).unwrap().permissions().mode() & 0o777)
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }

    pub fn set(path: &Path, mode: u32) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        #[cfg(not(unix))]
        let _ = (path, mode);
    }
}

/// For tests: a symbolic link at `link` to `target`.
#[cfg(test)]
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::symlink_file(target, link)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_errors_become_the_codes_node_reports_on_windows() {
        // The values of util.getSystemErrorMap() in Node 22 for Windows.
        assert_eq!(super::libuv_errno(2), 4058); // ENOENT
        assert_eq!(super::libuv_errno(5), 4048); // EPERM
        assert_eq!(super::libuv_errno(32), 4082); // EBUSY
        assert_eq!(super::libuv_errno(145), 4051); // ENOTEMPTY
        assert_eq!(super::libuv_errno(999_999), 4070); // EIO
    }

    use super::*;

    #[test]
    fn filetimes_convert_as_libuv_does() {
        // 2024-01-02T03:04:05.1234567Z
        let t = filetime(133_486_382_451_234_567);
        assert_eq!(
            t,
            Time {
                sec: 1_704_164_645,
                nsec: 123_456_700
            }
        );
        assert_eq!(filetime(116_444_736_000_000_000), Time::default());
        // Before 1970 the nanoseconds stay positive, as libuv gives them.
        assert_eq!(
            filetime(116_444_735_999_999_999),
            Time {
                sec: -1,
                nsec: 999_999_900
            }
        );
    }

    #[test]
    fn positioned_io_and_buffered_copies_stay_in_their_range() {
        let dir = std::env::temp_dir().join(format!("pi-os-{}", uuid::Uuid::new_v4().simple()));
        fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a");
        let b = dir.join("b");
        fs::write(&a, b"0123456789").unwrap();
        fs::write(&b, b"abcdefghij").unwrap();
        let source = File::open(&a).unwrap();
        let target = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&b)
            .unwrap();
        let mut buf = [0u8; 4];
        read_exact_at(&source, &mut buf, 3).unwrap();
        assert_eq!(&buf, b"3456");
        assert_eq!(
            read_exact_at(&source, &mut buf, 8).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        copy_range_buffered(&source, 2, &target, 5, 3).unwrap();
        copy_range(&source, 0, &target, 0, 2).unwrap();
        write_all_at(&target, b"Z", 9).unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"01cde234iZ");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stats_agree_between_a_path_a_folder_and_an_open_file() {
        let dir = std::env::temp_dir().join(format!("pi-os-{}", uuid::Uuid::new_v4().simple()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("f.jsonl"), b"hello\n").unwrap();
        symlink(&dir.join("f.jsonl"), &dir.join("l.jsonl")).unwrap();
        let by_path = stat(&dir.join("f.jsonl")).unwrap();
        let folder = Folder::open(&dir).unwrap();
        assert_eq!(folder.stat("f.jsonl".as_ref()).unwrap(), by_path);
        assert_eq!(folder.stat("l.jsonl".as_ref()).unwrap(), by_path);
        assert!(folder.lstat("l.jsonl".as_ref()).unwrap().is_symlink());
        assert!(lstat(&dir.join("l.jsonl")).unwrap().is_symlink());
        let open = fstat(&File::open(dir.join("f.jsonl")).unwrap()).unwrap();
        assert_eq!(
            (open.dev, open.ino, open.size, open.mtime),
            (by_path.dev, by_path.ino, 6, by_path.mtime)
        );
        assert!(by_path.is_file() && by_path.nlink == 1);
        assert_eq!(stat(&dir).unwrap().kind, FileKind::Dir);
        let mut head = [0u8; 16];
        let n = folder.read_start("f.jsonl".as_ref(), &mut head).unwrap();
        assert_eq!(&head[..n], b"hello\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_module_outside_this_layer_names_an_os_call() {
        let forbidden = [
            "std::os::unix",
            "std::os::windows",
            "std::os::fd",
            "rustix::",
            "libc::",
            "cfg(unix",
            "cfg(windows",
            "cfg(target_os",
            "cfg(not(unix",
        ];
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut checked = 0;
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path == src.join("os") {
                    continue;
                }
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = fs::read_to_string(&path).unwrap();
                    for word in forbidden {
                        assert!(
                            !text.contains(word),
                            "{} names `{word}`: it belongs in src/os",
                            path.display()
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 10, "only {checked} files checked");
    }
}
