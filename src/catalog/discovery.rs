//! Finding a session in a folder by its header (`findById`, `continueRecent`):
//! only the first line of each file is read, on several threads.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use crate::format::entry::{Kind, LineRead};

use crate::session::{read_header, HeaderScan};

/// The `.jsonl` names of `dir` in the order `readdirSync` lists them: libuv
/// sorts names by their bytes (`strcmp`), whatever order the folder has.
fn session_names(dir: &Path) -> std::io::Result<Vec<OsString>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        if name.as_encoded_bytes().ends_with(b".jsonl") {
            names.push(name);
        }
    }
    names.sort_unstable();
    Ok(names)
}

/// The `.jsonl` names of `dir` in `readdirSync` order, decoded as Node decodes
/// them (invalid UTF-8 becomes replacement characters).
pub fn session_names_lossy(dir: &Path) -> std::io::Result<Vec<String>> {
    Ok(session_names(dir)?
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect())
}

/// A folder held open so that its files are opened and stat'ed relative to
/// it (where the OS can: see `crate::os::Folder`).
pub struct Folder<'a> {
    held: crate::os::Folder,
    path: &'a Path,
}

impl<'a> Folder<'a> {
    pub fn open(path: &'a Path) -> std::io::Result<Self> {
        Ok(Folder {
            held: crate::os::Folder::open(path)?,
            path,
        })
    }

    /// The status of a file in the folder, following symlinks like `statSync`.
    pub fn stat(&self, name: &OsStr) -> std::io::Result<crate::os::Stat> {
        self.held.stat(name)
    }

    /// `stats.mtimeMs` of a file.
    fn mtime_ms(&self, name: &OsStr) -> Option<f64> {
        self.stat(name).ok().map(|st| st.mtime_ms())
    }

    /// The header line of a file for discovery (as `discovery_header` gives
    /// it) if its id is `id`. Usually the header is the first line and ends
    /// within the first read; anything else is left to the full scan of
    /// `read_header`.
    fn header_with_id(&self, name: &OsStr, id: &str) -> Option<Vec<u8>> {
        self.header_where(name, id, |meta| meta_has_id(meta, id))
    }

    /// `header_with_id` of a header whose `accept`ed id holds `needle`.
    fn header_where(
        &self,
        name: &OsStr,
        needle: &str,
        accept: impl Fn(&crate::format::entry::EntryMeta) -> bool,
    ) -> Option<Vec<u8>> {
        let mut buf = [0u8; 1024];
        let read = self.held.read_start(name, &mut buf);
        if let Ok(n) = read {
            if let Some(end) = memchr::memchr(b'\n', &buf[..n]) {
                let line = &buf[..end];
                // Most headers hold another id: told from the bytes, with the
                // line only checked to parse (else the header may follow).
                if cannot_hold(line, needle) && !crate::format::entry::line_is_skipped(line) {
                    return None;
                }
                match crate::format::entry::read_line(line) {
                    LineRead::Entry(meta) => {
                        return (meta.kind == Kind::Session && accept(&meta))
                            .then(|| line.to_vec());
                    }
                    // A first line that does not parse: the header may follow.
                    LineRead::Skipped => {}
                }
            }
        }
        discovery_header(&self.path.join(name)).filter(
            |line| match crate::format::entry::read_line(line) {
                LineRead::Entry(header) => accept(&header),
                LineRead::Skipped => false,
            },
        )
    }
}

/// Whether `line` certainly holds no string whose value is `id`: the id's
/// bytes are not in it and nothing could spell them otherwise (an escape, or
/// invalid UTF-8 read as U+FFFD where the id has one).
fn cannot_hold(line: &[u8], id: &str) -> bool {
    !id.contains('\u{FFFD}')
        && memchr::memchr(b'\\', line).is_none()
        && memchr::memmem::find(line, id.as_bytes()).is_none()
}

/// Runs `f` over `items` on up to `threads` threads; results keep their order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    let never = std::sync::atomic::AtomicBool::new(false);
    crate::parallel::for_each_index(items.len(), threads, &never, |i| {
        let r = f(&items[i]);
        if let Ok(mut slots) = results.lock() {
            slots[i] = Some(r);
        }
    });
    slots.into_iter().flatten().collect()
}

/// Header reads are mostly open/close system calls: twice the cores keeps
/// the cores busy while some threads wait.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 2)
}

/// The header line of `path` for discovery: `None` for files that are not
/// sessions, unreadable, or whose header lies beyond the scan limit.
fn discovery_header(path: &Path) -> Option<Vec<u8>> {
    match read_header(path) {
        Ok(HeaderScan::Found(line)) => Some(line),
        _ => None,
    }
}

fn meta_has_id(meta: &crate::format::entry::EntryMeta, id: &str) -> bool {
    meta.id_is_string && &*meta.id == id
}

/// Files of a folder whose header id is the one asked for, in `readdirSync` order.
#[derive(Debug, PartialEq)]
pub struct WithId {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// Whether every file of the folder was examined; if not, only the files up
    /// to the first one named for the id were, and later files may match too.
    pub complete: bool,
}

/// The files of `dir` (in `readdirSync` order) whose header id is `id`, with their
/// header lines; the caller applies its cwd filter and takes the first. Unless
/// `whole`, the scan stops at the first file that is named for the id (pi
/// names files `<time>_<id>.jsonl`) and has it in its header: a file before it
/// in that order (renamed or copied) still comes first, as in the
/// reference, but the files after it cannot.
pub fn files_with_id(dir: &Path, id: &str, whole: bool) -> std::io::Result<WithId> {
    let folder = Folder::open(dir)?;
    let suffix = format!("_{id}.jsonl");
    let (send, receive) = std::sync::mpsc::channel::<OsString>();
    let receive = std::sync::Mutex::new(receive);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads())
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let next = receive.lock().ok().and_then(|r| r.recv().ok());
                        let Some(name) = next else { return found };
                        if let Some(line) = folder.header_with_id(&name, id) {
                            found.push((name, line));
                        }
                    }
                })
            })
            .collect();
        // The folder is listed here while the workers read: every name at
        // once for the whole folder; else, once the first file (in name
        // order) named for the id and holding it is known, the names before
        // it. Names seen before that wait; names after it are not read.
        let mut named: Option<(OsString, Vec<u8>)> = None;
        let mut waiting: Vec<OsString> = Vec::new();
        // The last name in name order: whether any file came after the named one.
        let mut last: Option<OsString> = None;
        for entry in fs::read_dir(dir)? {
            let name = entry?.file_name();
            if !name.as_encoded_bytes().ends_with(b".jsonl") {
                continue;
            }
            if last.as_ref().is_none_or(|l| name > *l) {
                last = Some(name.clone());
            }
            if whole {
                let _ = send.send(name);
                continue;
            }
            let before_named = named.as_ref().is_none_or(|(n, _)| name < *n);
            if before_named && name.as_encoded_bytes().ends_with(suffix.as_bytes()) {
                if let Some(line) = folder.header_with_id(&name, id) {
                    waiting.retain(|w| {
                        if *w < name {
                            let _ = send.send(w.clone());
                        }
                        false
                    });
                    named = Some((name, line));
                    continue;
                }
            }
            match &named {
                None => waiting.push(name),
                Some((n, _)) if name < *n => {
                    let _ = send.send(name);
                }
                Some(_) => {}
            }
        }
        for name in waiting {
            let _ = send.send(name);
        }
        drop(send);
        let mut files: Vec<(OsString, Vec<u8>)> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        let complete = named.as_ref().is_none_or(|(n, _)| last.as_ref() == Some(n));
        if let Some((n, line)) = named {
            // A name read before a smaller one named for the id turned up.
            files.retain(|(name, _)| *name < n);
            files.push((n, line));
        }
        // `readdirSync` order: libuv sorts the names by their bytes.
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(WithId {
            files: files
                .into_iter()
                .map(|(name, line)| (dir.join(name), line))
                .collect(),
            complete,
        })
    })
}

/// The files of `dir` (in `readdirSync` order) whose header id is a string
/// that starts with `prefix`, with their header lines: the sessions an id
/// prefix may name, found without reading more of each file than its header.
pub fn files_with_id_prefix(dir: &Path, prefix: &str) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let names = session_names(dir)?;
    let folder = Folder::open(dir)?;
    let headers = parallel_map(&names, threads(), |name| {
        folder.header_where(name, prefix, |meta| {
            meta.id_is_string && meta.id.starts_with(prefix)
        })
    });
    Ok(names
        .iter()
        .zip(headers)
        .filter_map(|(name, line)| Some((dir.join(name), line?)))
        .collect())
}

/// `findMostRecentSession`'s candidates: the `.jsonl` files of `dir`, newest
/// mtime first (ties in `readdirSync` order). `None` where the reference gives up
/// (the folder or a stat fails). The caller reads headers until one fits.
pub fn recent_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let names = session_names(dir).ok()?;
    let folder = Folder::open(dir).ok()?;
    let stats = parallel_map(&names, threads(), |name| folder.mtime_ms(name));
    let mut dated: Vec<(PathBuf, f64)> = names
        .iter()
        .zip(stats)
        .map(|(name, m)| m.map(|m| (dir.join(name), m)))
        .collect::<Option<_>>()?;
    dated.sort_by(|a, b| b.1.total_cmp(&a.1));
    Some(dated.into_iter().map(|(p, _)| p).collect())
}

/// Folders held open so that their files are stat'ed by name; by full path
/// where a folder could not be opened (or was not read).
pub struct HeldFolders<'a> {
    dirs: &'a [PathBuf],
    held: Vec<Option<Folder<'a>>>,
    /// Per folder, what its watch vouches for (crate::catalog::watch).
    views: Vec<crate::catalog::watch::View>,
}

impl<'a> HeldFolders<'a> {
    pub fn open(dirs: &'a [PathBuf], read: &[bool]) -> Self {
        let held = dirs
            .iter()
            .zip(read)
            .map(|(dir, &read)| read.then(|| Folder::open(dir).ok()).flatten())
            .collect();
        HeldFolders {
            dirs,
            held,
            views: Vec::new(),
        }
    }

    /// The views, for a later pass over the same folders.
    pub fn into_views(self) -> Vec<crate::catalog::watch::View> {
        self.views
    }

    /// Stats files through their folders' watches (one view per folder).
    pub fn with_views(mut self, views: Vec<crate::catalog::watch::View>) -> Self {
        self.views = views;
        self
    }

    /// The status of file `name` of folder `folder`, following symlinks.
    pub fn stat(&self, folder: u32, name: &str) -> std::io::Result<crate::os::Stat> {
        let view = self.views.get(folder as usize);
        if let Some(known) = view.and_then(|v| v.known_stat(name)) {
            return Ok(known);
        }
        let Some(view) = view.filter(|v| v.is_watched()) else {
            return self.stat_now(folder, name, true);
        };
        // One lstat answers for anything but a symlink (stat would give the
        // same); a symlink's target is stat'ed, and never vouched for.
        let st = self
            .stat_now(folder, name, false)
            .inspect_err(|_| view.distrust())?;
        if st.is_symlink() {
            view.distrust();
            return self.stat_now(folder, name, true);
        }
        // Only a regular file with one link changes under this folder's name
        // alone; another link does not.
        if st.is_file() && st.nlink == 1 {
            view.note_stat(name, st);
        } else {
            view.distrust();
        }
        Ok(st)
    }

    /// The status of a file now, following a symlink or not.
    fn stat_now(&self, folder: u32, name: &str, follow: bool) -> std::io::Result<crate::os::Stat> {
        match (&self.held[folder as usize], follow) {
            (Some(held), true) => held.held.stat(OsStr::new(name)),
            (Some(held), false) => held.held.lstat(OsStr::new(name)),
            (None, true) => crate::os::stat(&self.dirs[folder as usize].join(name)),
            (None, false) => crate::os::lstat(&self.dirs[folder as usize].join(name)),
        }
    }
}

/// The `.jsonl` names of `dir` as `session_names_lossy` gives them, with the
/// view its files are to be stat'ed through: names read now, or known from
/// an earlier listing where the folder's watch saw none come or go.
pub fn watched_session_names(
    dir: &Path,
) -> std::io::Result<(Vec<String>, crate::catalog::watch::View)> {
    let view = crate::catalog::watch::View::open(dir);
    let names = view.names(|| session_names_lossy(dir))?;
    Ok((names, view))
}

/// The `.jsonl` names of `dirs` (a folder that cannot be read has none) as
/// (folder, name), last name first, ties in the order of `dirs`: pi names a
/// session file for the time its session began, so this is about newest
/// first, without a stat.
pub fn names_newest_first(dirs: &[PathBuf]) -> Vec<(u32, String)> {
    // Not through the folders' watches: setting one up costs more than the readdir.
    let listed = parallel_map(dirs, threads(), |dir| session_names_lossy(dir).ok());
    let mut files: Vec<(u32, String)> = listed
        .into_iter()
        .enumerate()
        .flat_map(|(i, names)| {
            names
                .unwrap_or_default()
                .into_iter()
                .map(move |n| (i as u32, n))
        })
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    files
}

/// `stats.mtimeMs` of each of `files` ((folder, name) of `dirs`), stat'ed by
/// name relative to its folder held open, on threads of our own; NaN where
/// the stat fails.
pub fn mtimes_of(dirs: &[PathBuf], files: &[(u32, String)]) -> Vec<f64> {
    let folders = HeldFolders::open(dirs, &vec![true; dirs.len()]);
    parallel_map(files, threads(), |(folder, name)| {
        folders
            .stat(*folder, name)
            .map_or(f64::NAN, |st| st.mtime_ms())
    })
}

/// A `.jsonl` file found by `listAll()`'s discovery.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Index of its folder in the folders asked for.
    pub folder: u32,
    /// Its name, decoded as Node decodes it.
    pub name: String,
    /// Its place among its folder's names (`readdir`'s order).
    pub index: u32,
    /// `stats.mtimeMs`, or `None` where the stat failed.
    pub mtime_ms: Option<f64>,
}

/// `listAll()`'s candidates: the `.jsonl` files of `dirs` (a folder that
/// cannot be read has none), newest mtime first and files without a stat
/// last; ties keep the order of `dirs`, then of names (`readdir`'s). Also,
/// for each folder, whether it was read.
pub fn folder_candidates(
    dirs: &[PathBuf],
) -> (Vec<Candidate>, Vec<bool>, Vec<crate::catalog::watch::View>) {
    let listed = parallel_map(dirs, threads(), |dir| watched_session_names(dir).ok());
    let read: Vec<bool> = listed.iter().map(Option::is_some).collect();
    let (listed, views): (Vec<Option<Vec<String>>>, Vec<crate::catalog::watch::View>) = listed
        .into_iter()
        .map(|l| match l {
            Some((names, view)) => (Some(names), view),
            None => (None, crate::catalog::watch::View::default()),
        })
        .unzip();
    let folders = HeldFolders::open(dirs, &read).with_views(views);
    let files: Vec<(u32, u32, String)> = listed
        .into_iter()
        .enumerate()
        .flat_map(|(i, names)| {
            names
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(move |(j, n)| (i as u32, j as u32, n))
        })
        .collect();
    let stats = parallel_map(&files, threads(), |(folder, _, name)| {
        folders.stat(*folder, name).ok().map(|st| st.mtime_ms())
    });
    let mut candidates: Vec<Candidate> = files
        .into_iter()
        .zip(stats)
        .map(|((folder, index, name), mtime_ms)| Candidate {
            folder,
            name,
            index,
            mtime_ms,
        })
        .collect();
    // Stable: ties keep the discovery order.
    candidates.sort_by(|a, b| match (a.mtime_ms, b.mtime_ms) {
        (Some(a), Some(b)) => b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal),
        (a, b) => b.is_some().cmp(&a.is_some()),
    });
    (candidates, read, folders.into_views())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` at `path` and sets its modification time to `secs` after the epoch.
    fn write_modified_at(path: &Path, text: &str, secs: u64) {
        fs::write(path, text).unwrap();
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn files_with_id_agrees_with_reading_in_name_order() {
        // Random names, some named for the id, some holding it: whatever order
        // the folder lists them in (a hash order on ext4, unrelated to the
        // names' order), the result is the sorted names up to the first file
        // named for the id and holding it, those whose header has the id; all
        // of them where no named file holds it.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40 {
            let dir = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
            fs::create_dir_all(&dir).unwrap();
            let mut files: Vec<(String, bool)> = Vec::new();
            for k in 0..(5 + next() % 20) {
                let named = next() % 3 == 0;
                let name = format!(
                    "{:04x}-{k}{}.jsonl",
                    next() % 0x1_0000,
                    if named { "_one" } else { "" }
                );
                let holds = next() % 5 < 3;
                let header = format!(
                    "{{\"type\":\"session\",\"id\":\"{}\"}}\n",
                    if holds { "one" } else { "two" }
                );
                fs::write(dir.join(&name), header).unwrap();
                files.push((name, holds));
            }
            fs::write(
                dir.join("notes.txt"),
                "{\"type\":\"session\",\"id\":\"one\"}\n",
            )
            .unwrap();
            files.sort_unstable();
            let stop = files
                .iter()
                .position(|(n, holds)| *holds && n.ends_with("_one.jsonl"));
            let upto = stop.map_or(files.len(), |s| s + 1);
            let expected: Vec<&str> = files[..upto]
                .iter()
                .filter(|f| f.1)
                .map(|f| f.0.as_str())
                .collect();
            let found = files_with_id(&dir, "one", false).unwrap();
            let got: Vec<String> = found
                .files
                .iter()
                .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            assert_eq!(got, expected, "round {round}: {files:?}");
            assert_eq!(found.complete, upto == files.len(), "round {round}");
            let whole = files_with_id(&dir, "one", true).unwrap();
            assert_eq!(whole.files.len(), files.iter().filter(|f| f.1).count());
            assert!(whole.complete);
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn files_with_an_id_prefix_are_found_by_their_headers_whatever_their_names() {
        let dir = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let files: [(&str, &[u8]); 6] = [
            (
                "2026_abc1.jsonl",
                b"{\"type\":\"session\",\"id\":\"abc1\"}\n",
            ),
            (
                "renamed.jsonl",
                b"{\"type\":\"session\",\"id\":\"abc2\"}\n{}\n",
            ),
            (
                "escaped.jsonl",
                b"{\"type\":\"session\",\"id\":\"\\u0061bc3\"}\n",
            ),
            (
                "after-garbage.jsonl",
                b"not json\n{\"type\":\"session\",\"id\":\"abc4\"}\n",
            ),
            ("other.jsonl", b"{\"type\":\"session\",\"id\":\"xabc\"}\n"),
            ("number.jsonl", b"{\"type\":\"session\",\"id\":5}\n"),
        ];
        for (name, content) in files {
            fs::write(dir.join(name), content).unwrap();
        }
        fs::write(
            dir.join("abc5.txt"),
            b"{\"type\":\"session\",\"id\":\"abc5\"}\n",
        )
        .unwrap();
        let found: Vec<String> = files_with_id_prefix(&dir, "abc")
            .unwrap()
            .iter()
            .map(|(path, _)| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            found,
            [
                "2026_abc1.jsonl",
                "after-garbage.jsonl",
                "escaped.jsonl",
                "renamed.jsonl"
            ]
        );
        assert_eq!(files_with_id_prefix(&dir, "abc1").unwrap().len(), 1);
        assert!(files_with_id_prefix(&dir, "zz").unwrap().is_empty());
        assert!(files_with_id_prefix(&dir.join("missing"), "a").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn header_with_id_reads_ids_however_spelled() {
        let dir = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        let cases: [(&str, &[u8], &str, bool); 9] = [
            (
                "plain",
                b"{\"type\":\"session\",\"id\":\"one\"}\n",
                "one",
                true,
            ),
            (
                "other",
                b"{\"type\":\"session\",\"id\":\"two\",\"cwd\":\"one\"}\n",
                "one",
                false,
            ),
            (
                "escaped",
                b"{\"type\":\"session\",\"id\":\"\\u006fne\"}\n",
                "one",
                true,
            ),
            (
                "invalid",
                b"{\"type\":\"session\",\"id\":\"a\xffb\"}\n",
                "a\u{FFFD}b",
                true,
            ),
            (
                "garbage-first",
                b"not json\n{\"type\":\"session\",\"id\":\"one\"}\n",
                "one",
                true,
            ),
            (
                "falsy-first",
                b"0\n{\"type\":\"session\",\"id\":\"one\"}\n",
                "one",
                true,
            ),
            (
                "truthy-first",
                b"1\n{\"type\":\"session\",\"id\":\"one\"}\n",
                "one",
                false,
            ),
            (
                "entry-first",
                b"{\"type\":\"message\"}\n{\"type\":\"session\",\"id\":\"one\"}\n",
                "one",
                false,
            ),
            (
                "not-header",
                b"{\"type\":\"message\",\"id\":\"one\"}\n",
                "one",
                false,
            ),
        ];
        for (name, data, _, _) in &cases {
            fs::write(dir.join(name), data).unwrap();
        }
        let folder = Folder::open(&dir).unwrap();
        for (name, data, id, found) in cases {
            assert_eq!(
                folder.header_with_id(OsStr::new(name), id).is_some(),
                found,
                "{name}"
            );
            // The same as reading the header whole and comparing.
            let whole = discovery_header(&dir.join(name)).is_some_and(|l| {
                matches!(crate::format::entry::read_line(&l), LineRead::Entry(h) if meta_has_id(&h, id))
            });
            assert_eq!(whole, found, "{name}: {:?}", String::from_utf8_lossy(data));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_newest_first_and_their_mtimes() {
        let root = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
        let dirs: Vec<PathBuf> = ["p1", "p2", "missing"]
            .iter()
            .map(|d| root.join(d))
            .collect();
        fs::create_dir_all(&dirs[0]).unwrap();
        fs::create_dir_all(&dirs[1]).unwrap();
        for (dir, name, secs) in [
            (0, "2025-01-02_a.jsonl", 300),
            (1, "2025-01-03_b.jsonl", 100),
            (0, "2025-01-01_c.jsonl", 200),
            (1, "2025-01-02_a.jsonl", 400),
        ] {
            write_modified_at(&dirs[dir].join(name), "{}\n", secs);
        }
        fs::write(dirs[0].join("notes.txt"), "x").unwrap();
        let files = names_newest_first(&dirs);
        let named = |f: &[(u32, String)]| -> Vec<(u32, String)> { f.to_vec() };
        assert_eq!(
            named(&files),
            [
                (1, "2025-01-03_b.jsonl".to_string()),
                (0, "2025-01-02_a.jsonl".to_string()),
                (1, "2025-01-02_a.jsonl".to_string()),
                (0, "2025-01-01_c.jsonl".to_string()),
            ],
            "last name first, a tie in the folders' order, the missing folder and notes.txt left out"
        );
        let mut asked = files.clone();
        asked.push((0, "gone.jsonl".to_string()));
        let mtimes = mtimes_of(&dirs, &asked);
        assert_eq!(&mtimes[..4], [100_000.0, 300_000.0, 400_000.0, 200_000.0]);
        assert!(mtimes[4].is_nan(), "a file that cannot be stat'ed");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn finds_by_id_and_orders_by_mtime() {
        let dir = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        for (name, id, secs) in [
            ("a.jsonl", "one", 100),
            ("b.jsonl", "two", 300),
            ("c.jsonl", "one", 200),
        ] {
            let header = format!("{{\"type\":\"session\",\"id\":\"{id}\"}}\n");
            write_modified_at(&dir.join(name), &header, secs);
        }
        fs::write(dir.join("notes.txt"), "x").unwrap();
        let found = files_with_id(&dir, "one", true).unwrap();
        assert_eq!(found.files.len(), 2);
        assert!(found.complete);
        let recent = recent_files(&dir).unwrap();
        let names: Vec<_> = recent
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["b.jsonl", "c.jsonl", "a.jsonl"]);
        // Named for "two" but holding "one": the fast scan stops there, and the
        // files before it in name order still come first.
        fs::write(
            dir.join("b_two.jsonl"),
            "{\"type\":\"session\",\"id\":\"one\"}\n",
        )
        .unwrap();
        fs::write(
            dir.join("c_one.jsonl"),
            "{\"type\":\"session\",\"id\":\"one\"}\n",
        )
        .unwrap();
        let fast = files_with_id(&dir, "one", false).unwrap();
        let names: Vec<_> = fast
            .files
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a.jsonl", "b_two.jsonl", "c.jsonl", "c_one.jsonl"]);
        // c_one.jsonl is the last file: nothing was left out.
        assert!(fast.complete);
        fs::write(
            dir.join("d.jsonl"),
            "{\"type\":\"session\",\"id\":\"one\"}\n",
        )
        .unwrap();
        let fast = files_with_id(&dir, "one", false).unwrap();
        assert!(!fast.complete);
        assert_eq!(fast.files.len(), 4);
        assert_eq!(files_with_id(&dir, "one", true).unwrap().files.len(), 5);
        fs::remove_file(dir.join("d.jsonl")).unwrap();
        fs::remove_file(dir.join("b_two.jsonl")).unwrap();
        fs::remove_file(dir.join("c_one.jsonl")).unwrap();
        crate::os::symlink(&dir.join("nowhere"), &dir.join("d.jsonl")).unwrap();
        assert!(recent_files(&dir).is_none());
        // listAll()'s candidates over this folder, a second one and one that
        // cannot be read: newest first, ties in folder then name order, the
        // dangling link (no stat) last.
        let second = dir.join("second");
        fs::create_dir(&second).unwrap();
        for name in ["b.jsonl", "a.jsonl"] {
            write_modified_at(&second.join(name), "{}\n", 200);
        }
        let (candidates, read, _) =
            folder_candidates(&[dir.clone(), dir.join("missing"), second.clone()]);
        assert_eq!(read, [true, false, true]);
        let order: Vec<(u32, &str, Option<f64>)> = candidates
            .iter()
            .map(|c| (c.folder, c.name.as_str(), c.mtime_ms))
            .collect();
        assert_eq!(
            order,
            [
                (0, "b.jsonl", Some(300_000.0)),
                (0, "c.jsonl", Some(200_000.0)),
                (2, "a.jsonl", Some(200_000.0)),
                (2, "b.jsonl", Some(200_000.0)),
                (0, "a.jsonl", Some(100_000.0)),
                (0, "d.jsonl", None),
            ]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
