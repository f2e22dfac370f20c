//! Session folders watched (by inotify on Linux; not elsewhere, see
//! `crate::os::Notifier`), so that a listing of a folder that nothing touched since an earlier one neither reads the folder again nor
//! stats its files: the kernel reports every write, truncate, chmod, utime,
//! create, delete and rename under a watched folder, by any process, before
//! the call that made it returns. A file's status is trusted only while no
//! event has named it since it was taken; a folder's names only while no
//! event has added or removed one. Anything this cannot vouch for is read as
//! before: files on filesystems whose changes may come from elsewhere (only
//! local ones are watched), symlinks and files with other links (written
//! through another folder), a queue overflow, a folder moved or replaced.
//! `PI_SESSION_NATIVE_WATCH=0` turns it off.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::os::{FolderEvent, Notifier, Stat, WatchId};

/// At most this many folders are watched by a process; others are read.
const MAX_WATCHED: usize = 1024;

/// One watched folder, shared by every path that names it.
struct Watched {
    dev: u64,
    ino: u64,
    known: RwLock<Known>,
}

#[derive(Default)]
struct Known {
    /// Bumped by every event that names the folder or one of its files: what
    /// a listing learned is kept only if no event came since it began.
    epoch: u64,
    /// The folder's session names in `readdir` order, while none came or went.
    names: Option<Arc<Vec<String>>>,
    /// Status of files no event named since it was taken; shared with the
    /// views open on the folder, copied only when it changes under one.
    stats: Arc<Stats>,
    /// The last complete listing of the folder, with the epoch it holds for.
    memo: Option<(u64, Arc<FolderMemo>)>,
}

/// What a complete listing of a watched folder found: each file's cache
/// token, by index in the order of `names`. It holds while no event comes
/// (its epoch) and the listing cache does not change (`generation`), so that
/// the next listing answers every file at once, without a lookup per file.
pub struct FolderMemo {
    pub tokens: Vec<u64>,
    pub generation: u64,
}

type Stats = foldhash::HashMap<String, Stat>;

impl Watched {
    fn forget_all(&self) {
        if let Ok(mut known) = self.known.write() {
            known.epoch += 1;
            known.names = None;
            known.stats = Arc::default();
        }
    }

    fn forget(&self, name: Option<&[u8]>, names_changed: bool) {
        if let Ok(mut known) = self.known.write() {
            known.epoch += 1;
            if names_changed {
                known.names = None;
            }
            match name.map(std::str::from_utf8) {
                Some(Ok(name)) if known.stats.contains_key(name) => {
                    Arc::make_mut(&mut known.stats).remove(name);
                }
                Some(Ok(_)) => {}
                // A name Node decodes with replacement characters: not worth matching.
                Some(Err(_)) => known.stats = Arc::default(),
                None => {}
            }
        }
    }
}

struct Watcher {
    notifier: Notifier,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    by_wd: HashMap<WatchId, Arc<Watched>>,
    paths: HashMap<PathBuf, WatchId>,
}

fn watcher() -> Option<&'static Watcher> {
    static WATCHER: OnceLock<Option<Watcher>> = OnceLock::new();
    WATCHER
        .get_or_init(|| {
            if std::env::var_os("PI_SESSION_NATIVE_WATCH").is_some_and(|v| v == "0") {
                return None;
            }
            Some(Watcher {
                notifier: Notifier::new()?,
                state: Mutex::new(State::default()),
            })
        })
        .as_ref()
}

impl Watcher {
    /// Applies every event the OS queued since the last call.
    fn drain(&self, state: &mut State) {
        self.notifier.drain(|event| match event {
            FolderEvent::Lost => state.by_wd.values().for_each(|w| w.forget_all()),
            FolderEvent::FolderGone { id, ended } => {
                if let Some(watched) = state.by_wd.get(&id) {
                    watched.forget_all();
                }
                if ended {
                    state.by_wd.remove(&id);
                    state.paths.retain(|_, w| *w != id);
                }
            }
            FolderEvent::Changed {
                id,
                name,
                names_changed,
            } => {
                if let Some(watched) = state.by_wd.get(&id) {
                    watched.forget(name, names_changed);
                }
            }
        });
    }

    /// The watch of `dir`, added now if it has none; `None` where it cannot
    /// be watched.
    fn folder(&self, dir: &Path) -> Option<Arc<Watched>> {
        let mut state = self.state.lock().ok()?;
        self.drain(&mut state);
        let st = crate::os::stat(dir).ok()?;
        if let Some(wd) = state.paths.get(dir).copied() {
            match state.by_wd.get(&wd) {
                Some(w) if w.dev == st.dev && w.ino == st.ino => return Some(w.clone()),
                // The path names another folder now.
                _ => {
                    state.paths.remove(dir);
                }
            }
        }
        if state.by_wd.len() >= MAX_WATCHED || !Notifier::can_watch(dir) {
            return None;
        }
        let wd = self.notifier.add(dir)?;
        let is_stated = |dev: u64, ino: u64| dev == st.dev && ino == st.ino;
        // The folder watched must be the one stat'ed (and one watched
        // already under this descriptor, through another path, that one).
        let existing = state.by_wd.get(&wd).cloned();
        let same = crate::os::stat(dir).is_ok_and(|after| is_stated(after.dev, after.ino))
            && existing.as_ref().is_none_or(|w| is_stated(w.dev, w.ino));
        if !same {
            if existing.is_none() {
                self.notifier.remove(wd);
            }
            return None;
        }
        let watched = existing.unwrap_or_else(|| {
            let w = Arc::new(Watched {
                dev: st.dev,
                ino: st.ino,
                known: RwLock::new(Known::default()),
            });
            state.by_wd.insert(wd, w.clone());
            w
        });
        state.paths.insert(dir.to_path_buf(), wd);
        Some(watched)
    }
}

/// One listing's view of a folder: what it may take as known (as it was
/// when the view opened, read without locks by the scan's threads), and what
/// it learns: answered again within the listing (`listAll()` stats a file in
/// discovery and in the scan), kept when it closes if no event came meanwhile.
#[derive(Default)]
pub struct View {
    watched: Option<Arc<Watched>>,
    epoch: u64,
    stats: Arc<Stats>,
    learned: Mutex<Stats>,
    /// Set when a file was stat'ed that the watch cannot vouch for.
    untrusted: AtomicBool,
}

impl View {
    /// The view of `dir` now (events so far applied); without a watch where
    /// the folder cannot be watched.
    pub fn open(dir: &Path) -> View {
        let Some(watched) = watcher().and_then(|w| w.folder(dir)) else {
            return View::default();
        };
        let Ok((epoch, stats)) = watched.known.read().map(|k| (k.epoch, k.stats.clone())) else {
            return View::default();
        };
        View {
            watched: Some(watched),
            epoch,
            stats,
            learned: Mutex::default(),
            untrusted: AtomicBool::new(false),
        }
    }

    /// The folder's session names in `readdir` order: known, or from `read`.
    pub fn names(
        &self,
        read: impl FnOnce() -> std::io::Result<Vec<String>>,
    ) -> std::io::Result<Vec<String>> {
        let Some(watched) = &self.watched else {
            return read();
        };
        if let Some(names) = watched.known.read().ok().and_then(|k| k.names.clone()) {
            return Ok(names.as_ref().clone());
        }
        let names = read()?;
        if let Ok(mut known) = watched.known.write() {
            if known.epoch == self.epoch {
                known.names = Some(Arc::new(names.clone()));
            }
        }
        Ok(names)
    }

    /// A file's status if no event named it since it was noted, or if this
    /// listing took it already.
    pub fn known_stat(&self, name: &str) -> Option<Stat> {
        self.watched.as_ref()?;
        if let Some(st) = self.stats.get(name) {
            return Some(*st);
        }
        self.learned.lock().ok()?.get(name).copied()
    }

    /// Whether what is learned through this view is kept.
    pub fn is_watched(&self) -> bool {
        self.watched.is_some()
    }

    /// Notes a file's status, taken after this view opened.
    pub fn note_stat(&self, name: &str, stat: Stat) {
        if self.watched.is_some() {
            if let Ok(mut learned) = self.learned.lock() {
                learned.insert(name.to_owned(), stat);
            }
        }
    }

    /// Notes that a file was stat'ed that changes without an event here (a
    /// symlink's target, a file with other links, a failed stat): no memo is
    /// kept from this listing.
    pub fn distrust(&self) {
        self.untrusted.store(true, Ordering::Relaxed);
    }

    /// The memo of the folder's last complete listing, if no event came
    /// between its making and this view's opening.
    pub fn memo(&self) -> Option<Arc<FolderMemo>> {
        let known = self.watched.as_ref()?.known.read().ok()?;
        match &known.memo {
            Some((epoch, memo)) if *epoch == self.epoch => Some(memo.clone()),
            _ => None,
        }
    }

    /// Keeps `memo` for the next listings, if every file was stat'ed through
    /// this view's watch and no event came since the view opened.
    pub fn keep_memo(&self, memo: FolderMemo) {
        let Some(watched) = &self.watched else { return };
        if self.untrusted.load(Ordering::Relaxed) {
            return;
        }
        if let Ok(mut known) = watched.known.write() {
            if known.epoch == self.epoch {
                known.memo = Some((self.epoch, Arc::new(memo)));
            }
        }
    }

    /// Hands what this view learned to the watch now (as when it closes), if
    /// no event came since it opened.
    pub fn commit(&mut self) {
        let learned = std::mem::take(self.learned.get_mut().unwrap_or_else(|e| e.into_inner()));
        let Some(watched) = &self.watched else { return };
        if learned.is_empty() {
            return;
        }
        // This view's share of the known stats, let go so that they are not copied.
        self.stats = Arc::default();
        if let Ok(mut known) = watched.known.write() {
            if known.epoch == self.epoch {
                Arc::make_mut(&mut known.stats).extend(learned);
            }
        }
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pisn-watch-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn read_names(dir: &Path) -> std::io::Result<Vec<String>> {
        crate::catalog::discovery::session_names_lossy(dir)
    }

    /// Opens a view and stats every name through it, as a listing does;
    /// returns the names and the view (closing it keeps what it learned).
    fn listed_view(dir: &Path) -> (Vec<String>, View) {
        let view = View::open(dir);
        let names = view.names(|| read_names(dir)).unwrap();
        let dirs = [dir.to_path_buf()];
        let folders =
            crate::catalog::discovery::HeldFolders::open(&dirs, &[true]).with_views(vec![view]);
        for name in &names {
            folders.stat(0, name).unwrap();
        }
        let view = folders.into_views().pop().unwrap();
        (names, view)
    }

    fn listing(dir: &Path) -> Vec<String> {
        listed_view(dir).0
    }

    #[test]
    fn every_change_forgets_what_it_touched() {
        if watcher().is_none() || !Notifier::can_watch(&std::env::temp_dir()) {
            eprintln!("skipped: no folder watch here ({} I/O), or not on the temporary folder's filesystem", crate::os::IMPLEMENTATION);
            return;
        }
        let dir = temp_dir();
        for n in ["a", "b", "c"] {
            fs::write(dir.join(format!("{n}.jsonl")), "{}\n").unwrap();
        }
        let names = listing(&dir);
        assert_eq!(names, ["a.jsonl", "b.jsonl", "c.jsonl"]);
        let view = View::open(&dir);
        assert!(view.is_watched());
        assert!(names.iter().all(|n| view.known_stat(n).is_some()));

        // An append (by another handle), a utime, nothing.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(dir.join("a.jsonl"))
            .unwrap();
        f.write_all(b"{}\n").unwrap();
        fs::File::open(dir.join("b.jsonl"))
            .unwrap()
            .set_modified(std::time::SystemTime::UNIX_EPOCH)
            .unwrap();
        let view = View::open(&dir);
        assert!(view.known_stat("a.jsonl").is_none());
        assert!(view.known_stat("b.jsonl").is_none());
        assert!(view.known_stat("c.jsonl").is_some());
        assert_eq!(view.names(|| panic!("names are known")).unwrap(), names);
        drop(view);
        listing(&dir);

        // A write through a descriptor opened before the last listing.
        f.write_all(b"{}\n").unwrap();
        assert!(View::open(&dir).known_stat("a.jsonl").is_none());
        listing(&dir);

        // A new file, a rename over another, a delete: names are read again.
        fs::write(dir.join("d.jsonl"), "{}\n").unwrap();
        let names = listing(&dir);
        assert_eq!(names, ["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"]);
        fs::write(dir.join("tmp"), "{}\n{}\n").unwrap();
        fs::rename(dir.join("tmp"), dir.join("c.jsonl")).unwrap();
        fs::remove_file(dir.join("d.jsonl")).unwrap();
        let view = View::open(&dir);
        assert!(view.known_stat("c.jsonl").is_none());
        assert!(view.known_stat("d.jsonl").is_none());
        assert!(view.known_stat("b.jsonl").is_some());
        let names = view.names(|| read_names(&dir)).unwrap();
        assert_eq!(names, ["a.jsonl", "b.jsonl", "c.jsonl"]);

        // What a listing learned after an event it has not seen is not kept.
        let stale = View::open(&dir);
        fs::write(dir.join("b.jsonl"), "{}\n{}\n{}\n").unwrap();
        let _ = View::open(&dir); // another listing applies the event
        stale.note_stat("b.jsonl", crate::os::stat(&dir.join("b.jsonl")).unwrap());
        assert!(
            stale.known_stat("b.jsonl").is_some(),
            "answered again within its listing"
        );
        drop(stale);
        assert!(View::open(&dir).known_stat("b.jsonl").is_none());

        // The folder replaced by another of the same name.
        listing(&dir);
        let moved = dir.with_extension("old");
        fs::rename(&dir, &moved).unwrap();
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("z.jsonl"), "{}\n").unwrap();
        let view = View::open(&dir);
        assert!(view.known_stat("a.jsonl").is_none());
        assert_eq!(view.names(|| read_names(&dir)).unwrap(), ["z.jsonl"]);
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&moved).unwrap();
    }

    /// A listing as `listing` does it, keeping a memo of `tokens` at the end.
    fn listing_with_memo(dir: &Path, tokens: &[u64]) {
        listed_view(dir).1.keep_memo(FolderMemo {
            tokens: tokens.to_vec(),
            generation: 7,
        });
    }

    fn memo_tokens(dir: &Path) -> Option<Vec<u64>> {
        View::open(dir).memo().map(|m| m.tokens.clone())
    }

    #[test]
    fn a_memo_holds_until_an_event_and_only_for_files_the_watch_vouches_for() {
        if watcher().is_none() || !Notifier::can_watch(&std::env::temp_dir()) {
            eprintln!("skipped: no folder watch here ({} I/O), or not on the temporary folder's filesystem", crate::os::IMPLEMENTATION);
            return;
        }
        let dir = temp_dir();
        for n in ["a", "b"] {
            fs::write(dir.join(format!("{n}.jsonl")), "{}\n").unwrap();
        }
        assert_eq!(memo_tokens(&dir), None);
        listing_with_memo(&dir, &[1, 2]);
        assert_eq!(memo_tokens(&dir), Some(vec![1, 2]));
        assert_eq!(memo_tokens(&dir), Some(vec![1, 2]), "reading it keeps it");

        // Any change under the folder drops it: an append, a utime, a new
        // file (not a session), a delete.
        let changes: [&dyn Fn(); 4] = [
            &|| {
                let mut f = fs::OpenOptions::new()
                    .append(true)
                    .open(dir.join("a.jsonl"))
                    .unwrap();
                f.write_all(b"{}\n").unwrap();
            },
            &|| {
                fs::File::open(dir.join("b.jsonl"))
                    .unwrap()
                    .set_modified(std::time::SystemTime::UNIX_EPOCH)
                    .unwrap()
            },
            &|| fs::write(dir.join("notes.txt"), "x").unwrap(),
            &|| fs::remove_file(dir.join("notes.txt")).unwrap(),
        ];
        for change in changes {
            listing_with_memo(&dir, &[3, 4]);
            assert!(memo_tokens(&dir).is_some());
            change();
            assert_eq!(memo_tokens(&dir), None);
        }

        // Not kept by a listing that saw an event after it began.
        let stale = View::open(&dir);
        fs::write(dir.join("a.jsonl"), "{}\n{}\n").unwrap();
        let _ = View::open(&dir); // another listing applies the event
        stale.keep_memo(FolderMemo {
            tokens: vec![5, 6],
            generation: 7,
        });
        assert_eq!(memo_tokens(&dir), None);

        // Nor where a file is a symlink or has another link: a change to it
        // may come without an event here.
        let elsewhere = temp_dir();
        fs::write(elsewhere.join("target"), "{}\n").unwrap();
        crate::os::symlink(&elsewhere.join("target"), &dir.join("link.jsonl")).unwrap();
        listing_with_memo(&dir, &[1, 2, 3]);
        assert_eq!(memo_tokens(&dir), None);
        fs::remove_file(dir.join("link.jsonl")).unwrap();
        fs::hard_link(elsewhere.join("target"), dir.join("hard.jsonl")).unwrap();
        listing_with_memo(&dir, &[1, 2, 3]);
        assert_eq!(memo_tokens(&dir), None);
        fs::remove_file(dir.join("hard.jsonl")).unwrap();
        listing_with_memo(&dir, &[1, 2]);
        assert_eq!(memo_tokens(&dir), Some(vec![1, 2]));
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&elsewhere).unwrap();
    }

    #[test]
    fn symlinks_and_linked_files_are_always_stat_ed() {
        if watcher().is_none() || !Notifier::can_watch(&std::env::temp_dir()) {
            eprintln!("skipped: no folder watch here ({} I/O), or not on the temporary folder's filesystem", crate::os::IMPLEMENTATION);
            return;
        }
        let dir = temp_dir();
        let elsewhere = temp_dir();
        fs::write(elsewhere.join("target"), "{}\n").unwrap();
        crate::os::symlink(&elsewhere.join("target"), &dir.join("link.jsonl")).unwrap();
        fs::write(elsewhere.join("hard"), "{}\n").unwrap();
        fs::hard_link(elsewhere.join("hard"), dir.join("hard.jsonl")).unwrap();
        fs::write(dir.join("plain.jsonl"), "{}\n").unwrap();
        listing(&dir);
        let view = View::open(&dir);
        assert!(view.known_stat("link.jsonl").is_none());
        assert!(view.known_stat("hard.jsonl").is_none());
        assert!(view.known_stat("plain.jsonl").is_some());
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&elsewhere).unwrap();
    }
}
