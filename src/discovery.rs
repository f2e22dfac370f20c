//! Finding a session in a folder by its header (`findById`, `continueRecent`):
//! only the first line of each file is read, on several threads.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::session::{read_header, HeaderScan};

/// The `.jsonl` files of `dir` in directory order, as `readdirSync` lists them.
pub fn session_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.as_encoded_bytes().ends_with(b".jsonl") {
            files.push(dir.join(name));
        }
    }
    Ok(files)
}

/// Runs `f` over `items` on up to `threads` threads; results keep their order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { return };
                let r = f(item);
                if let Ok(mut slots) = results.lock() {
                    slots[i] = Some(r);
                }
            });
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

/// The files of `dir` (directory order) whose header id is `id`, with their
/// header lines; the caller applies its cwd filter and takes the first.
pub fn files_with_id(dir: &Path, id: &str) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let files = session_files(dir)?;
    let found = parallel_map(&files, threads(), |path| {
        let line = discovery_header(path)?;
        let header = match crate::entry::read_line(&line) {
            crate::entry::LineRead::Entry(meta) => meta,
            crate::entry::LineRead::Skipped => return None,
        };
        (header.id_is_string && &*header.id == id).then_some(line)
    });
    Ok(files
        .into_iter()
        .zip(found)
        .filter_map(|(path, line)| line.map(|l| (path, l)))
        .collect())
}

/// `findMostRecentSession`'s candidates: the `.jsonl` files of `dir`, newest
/// mtime first (ties in directory order). `None` where the reference gives up
/// (the folder or a stat fails). The caller reads headers until one fits.
pub fn recent_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let files = session_files(dir).ok()?;
    let stats = parallel_map(&files, threads(), |path| {
        fs::metadata(path)
            .ok()
            .map(|m| m.mtime() as f64 * 1e3 + m.mtime_nsec() as f64 / 1e6)
    });
    let mut dated: Vec<(PathBuf, f64)> = files
        .into_iter()
        .zip(stats)
        .map(|(p, m)| m.map(|m| (p, m)))
        .collect::<Option<_>>()?;
    dated.sort_by(|a, b| b.1.total_cmp(&a.1));
    Some(dated.into_iter().map(|(p, _)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_id_and_orders_by_mtime() {
        let dir = std::env::temp_dir().join(format!("pisn-disc-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        for (name, id, secs) in [
            ("a.jsonl", "one", 100),
            ("b.jsonl", "two", 300),
            ("c.jsonl", "one", 200),
        ] {
            let path = dir.join(name);
            fs::write(&path, format!("{{\"type\":\"session\",\"id\":\"{id}\"}}\n")).unwrap();
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        fs::write(dir.join("notes.txt"), "x").unwrap();
        let found = files_with_id(&dir, "one").unwrap();
        assert_eq!(found.len(), 2);
        let recent = recent_files(&dir).unwrap();
        let names: Vec<_> = recent
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["b.jsonl", "c.jsonl", "a.jsonl"]);
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("d.jsonl")).unwrap();
        assert!(recent_files(&dir).is_none());
        fs::remove_dir_all(&dir).unwrap();
    }
}
