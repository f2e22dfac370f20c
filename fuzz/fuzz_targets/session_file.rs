//! A whole session file, as arbitrary bytes, through everything that reads one.
//!
//! The bytes go to a file in a scratch directory of this process (under
//! `std::env::temp_dir()`, made anew and removed for each input). Then:
//! - `Session::open` with persist on and off: it loads exactly when the first
//!   entry is a header with a string id, its index holds what `read_line`
//!   reads from each line, and what it keeps for each entry reads back as it;
//! - on a loaded session: `leaf_path`, `branch` and `children` for some ids
//!   (checked against the parent links `byId` gives), `context_plan`, `tree`;
//! - a migrated file rewritten to disk opens again to the same index;
//! - `fork_file` of it gives a session with the source's entries, whose lines
//!   read back as its index and whose file opens again to the same index;
//! - `branch_session` runs, its patched lines read back as the index it built,
//!   and the branched file it writes opens again to that index;
//! - `read_header`, and `listing::summarize_bytes` (the same on the bytes and on
//!   their lossy decoding, as the reference reads files as UTF-8 text).
//!
//! An input that nests is also read, once by each reader, as a much deeper
//! copy (`shared/deep.rs`), for stack overflows in recursive code.
#![no_main]

#[path = "shared/deep.rs"]
mod deep;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pi_session_native::catalog::listing;
use pi_session_native::format::entry::{self, EntryMeta, Kind, LineRead};
use pi_session_native::format::json;
use pi_session_native::session::index::{is_truthy_key, EntryIndex};
use pi_session_native::session::{self, HeaderScan, OpenOutcome, Session, SessionError};

const HEADER: &[u8] =
    br#"{"type":"session","version":3,"id":"fuzz-header","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/tmp"}"#;

fuzz_target!(|data: &[u8]| {
    // One directory per process: parallel jobs share the temp dir.
    let dir = std::env::temp_dir().join(format!("pisn-fuzz-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    check_file(&dir, data);
    deep::with_deep_copy(data, |deep| check_deep_file(&dir, deep));
    std::fs::remove_dir_all(&dir).expect("scratch directory removed");
});

fn check_file(dir: &Path, data: &[u8]) {
    let decoded = json::decode_lossy(data);
    assert_eq!(
        format!("{:?}", listing::summarize_bytes(data)),
        format!("{:?}", listing::summarize_bytes(&decoded)),
        "summary differs on the lossily decoded file"
    );

    let path = dir.join("session.jsonl");
    std::fs::write(&path, data).unwrap();
    match session::read_header(&path).expect("read_header") {
        HeaderScan::Found(line) => {
            assert!(data.split(|&b| b == b'\n').any(|l| l == line.as_slice()));
            let LineRead::Entry(meta) = entry::read_line(&line) else {
                panic!("read_header found a line read_line skips")
            };
            assert!(meta.kind == Kind::Session && meta.id_is_string);
        }
        HeaderScan::NotFound | HeaderScan::TooLong => {}
    }

    // What the file holds, line by line, as the loader should read it.
    let expected: Vec<EntryMeta> = data
        .split(|&b| b == b'\n')
        .filter_map(|line| match entry::read_line(line) {
            LineRead::Entry(meta) => Some(meta),
            LineRead::Skipped => None,
        })
        .collect();
    let valid = expected
        .first()
        .is_some_and(|m| m.kind == Kind::Session && m.id_is_string);

    for persist in [false, true] {
        std::fs::write(&path, data).unwrap();
        let mut s = Session::new(persist);
        match s.open(&path) {
            Ok(OpenOutcome::Missing) => panic!("the file exists"),
            Ok(OpenOutcome::EmptyFile) => {
                assert!(data.is_empty(), "EmptyFile for a non-empty file")
            }
            Err(SessionError::Message(_)) => {
                assert!(!valid, "a valid session was refused");
                assert!(s.is_empty(), "a failed open changed the session");
            }
            Err(SessionError::Type(_)) => {
                // A v1 migration of a primitive entry throws, as the reference does.
                assert!(valid);
                assert!(s.is_empty(), "a failed open changed the session");
            }
            Err(e) => panic!("open failed: {e:?}"),
            Ok(OpenOutcome::Loaded { migrated }) => {
                assert!(valid, "loaded a file whose first entry is no header");
                check_loaded(dir, &path, &mut s, &expected, migrated, persist);
            }
        }
    }
}

/// Each reader once on a deeply nested file.
fn check_deep_file(dir: &Path, data: &[u8]) {
    let _ = listing::summarize_bytes(data);
    let path = dir.join("deep.jsonl");
    std::fs::write(&path, data).unwrap();
    let _ = session::read_header(&path).expect("read_header");
    let mut s = Session::new(true);
    if let Ok(OpenOutcome::Loaded { .. }) = s.open(&path) {
        let _ = all_lines(&s);
        let path_ = s.index.leaf_path();
        let _ = s.index.context_plan(&path_);
        let fork = dir.join("deep-fork.jsonl");
        let _ = session::fork_file(&path, dir, Some(&fork), HEADER).expect("fork_file");
        let leaf = s.index.leaf.clone().filter(|k| is_truthy_key(k));
        let LineRead::Entry(header) = entry::read_line(HEADER) else {
            unreachable!()
        };
        let target = dir.join("deep-branch.jsonl");
        let _ = s.branch_session(leaf.as_deref(), header, Some(HEADER.to_vec()), Some(target));
    }
}

/// A key with the object counter dropped: re-serialised lines renumber them.
fn norm_key(key: &str) -> String {
    if key.starts_with("\0object#") {
        "\0object".to_string()
    } else {
        key.to_string()
    }
}

fn norm(meta: &EntryMeta) -> String {
    let mut m = meta.clone();
    m.id = norm_key(&m.id).into();
    m.parent = norm_key(&m.parent).into();
    let target = norm_key(m.target()).into();
    m.set_target(target);
    let first_kept = norm_key(m.first_kept()).into();
    m.set_first_kept(first_kept);
    format!("{m:?}")
}

fn norm_all(metas: &[EntryMeta]) -> Vec<String> {
    metas.iter().map(norm).collect()
}

fn all_lines(s: &Session) -> Vec<Vec<u8>> {
    let positions: Vec<u32> = (0..s.len() as u32).collect();
    let mut lines = Vec::new();
    s.each_line(&positions, |l| lines.push(l.to_vec()))
        .expect("each_line");
    lines
}

/// Every entry's kept line reads back as its index entry (up to the numbering
/// of object keys with `normalized`, for lines rewritten in canonical form).
fn check_lines(s: &Session, normalized: bool) {
    let lines = all_lines(s);
    assert_eq!(lines.len(), s.len());
    for (p, line) in lines.iter().enumerate() {
        let LineRead::Entry(meta) = entry::read_line(line) else {
            panic!("line {p} of a loaded session is skipped: {line:?}")
        };
        let (read, indexed) = if normalized {
            (norm(&meta), norm(&s.index.metas[p]))
        } else {
            (format!("{meta:?}"), format!("{:?}", s.index.metas[p]))
        };
        assert_eq!(
            read, indexed,
            "line {p} reads differently from its index entry"
        );
    }
}

fn reopen(path: &Path) -> Session {
    let mut again = Session::new(false);
    match again.open(path) {
        Ok(OpenOutcome::Loaded { .. }) => again,
        Ok(_) => panic!("{} did not load", path.display()),
        Err(e) => panic!("{} did not load: {e:?}", path.display()),
    }
}

fn check_loaded(
    dir: &Path,
    path: &Path,
    s: &mut Session,
    expected: &[EntryMeta],
    migrated: bool,
    persist: bool,
) {
    let metas = &s.index.metas;
    assert_eq!(metas.len(), expected.len(), "entry count differs");
    if !migrated {
        assert_eq!(
            metas.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>(),
            expected
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>(),
            "index differs from the file's lines"
        );
    }
    check_lines(s, false);
    check_index(&s.index);

    // The file a persisted migration wrote opens to the same entries.
    if migrated && persist {
        let again = reopen(path);
        assert_eq!(norm_all(&again.index.metas), norm_all(&s.index.metas));
    }

    // A fork (done once, for the persisted pass) opens with the same entries.
    if persist {
        let fork = dir.join("fork.jsonl");
        match session::fork_file(path, dir, Some(&fork), HEADER) {
            Ok(Some(forked)) => {
                let source: Vec<EntryMeta> = std::fs::read(path)
                    .unwrap()
                    .split(|&b| b == b'\n')
                    .filter_map(|line| match entry::read_line(line) {
                        LineRead::Entry(m) if m.kind != Kind::Session => Some(m),
                        _ => None,
                    })
                    .collect();
                assert_eq!(
                    norm_all(&forked.index.metas[1..]),
                    norm_all(&source),
                    "forked entries differ from the source's"
                );
                check_lines(&forked, true);
                check_index(&forked.index);
                let again = reopen(&fork);
                assert_eq!(
                    norm_all(&again.index.metas),
                    norm_all(&forked.index.metas),
                    "the forked file reads differently from the fork's index"
                );
            }
            Ok(None) => panic!("fork_file refused a session that loads"),
            Err(e) => panic!("fork_file failed: {e:?}"),
        }
    }

    // Branch from the leaf into a new file. JavaScript passes no leaf when the
    // leaf id is falsy (`start ? keyOf(start) : undefined`).
    let leaf = s.index.leaf.clone().filter(|k| is_truthy_key(k));
    let LineRead::Entry(header) = entry::read_line(HEADER) else {
        unreachable!()
    };
    let target = dir.join("branch.jsonl");
    match s.branch_session(
        leaf.as_deref(),
        header,
        Some(HEADER.to_vec()),
        Some(target.clone()),
    ) {
        Ok(_) => {
            check_index(&s.index);
            check_lines(s, true);
            if persist && target.exists() {
                let again = reopen(&target);
                assert_eq!(
                    norm_all(&again.index.metas),
                    norm_all(&s.index.metas),
                    "the branched file reads differently from the branched index"
                );
            }
        }
        Err(SessionError::EntryNotFound | SessionError::Type(_)) => {}
        Err(e) => panic!("branch_session failed: {e:?}"),
    }
}

/// The index walks, checked against the parent links `byId` gives now.
fn check_index(index: &EntryIndex) {
    let n = index.metas.len() as u32;
    let parent_of = |p: u32| -> Option<u32> {
        let meta = index.meta(p);
        (meta.kind != Kind::Session && meta.parent_truthy)
            .then(|| index.get(&meta.parent))
            .flatten()
    };
    let check_path = |path: &[u32]| {
        let mut seen = std::collections::HashSet::new();
        for (i, &p) in path.iter().enumerate() {
            assert!(p < n);
            assert!(seen.insert(p), "an entry twice on one path");
            if i > 0 {
                assert_eq!(
                    parent_of(p),
                    Some(path[i - 1]),
                    "path link is no parent link"
                );
            }
        }
        if let Some(&first) = path.first() {
            // The root has no parent, or the walk stopped at a cycle.
            assert!(parent_of(first).is_none_or(|q| path.contains(&q)));
        }
    };

    let path = index.leaf_path();
    check_path(&path);
    if let Ok(plan) = index.context_plan(&path) {
        assert_eq!(plan.entries.len(), plan.edits.len());
        assert!(plan.entries.iter().all(|p| path.contains(p)));
        assert!(plan.thinking.is_none_or(|p| path.contains(&p)));
        assert!(plan.model.is_none_or(|p| path.contains(&p)));
    }

    let mut ids: Vec<String> = Vec::new();
    for p in (0..n).take(3).chain(n.saturating_sub(3)..n) {
        ids.push(index.meta(p).id.to_string());
        ids.push(index.meta(p).parent.to_string());
    }
    ids.extend(index.leaf.as_deref().map(str::to_string));
    ids.push(entry::UNDEFINED_KEY.to_string());
    ids.push("no-such-entry".to_string());
    assert!(index.branch(None).is_empty());
    for id in &ids {
        let branch = index.branch(Some(id));
        check_path(&branch);
        if let Some(&last) = branch.last() {
            assert_eq!(Some(last), index.get(id));
        }
        for child in index.children(id) {
            let meta = index.meta(child);
            assert_eq!(&*meta.parent, id.as_str());
            assert_eq!(index.get(&meta.id), Some(child));
        }
    }

    let tree = index.tree();
    let count = tree.positions.len();
    assert_eq!(tree.positions, index.entry_positions());
    assert_eq!(tree.node_of.len(), count);
    assert_eq!(tree.label_of.len(), count);
    assert_eq!(tree.child_start.len(), count + 1);
    assert!(tree.child_start.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(
        *tree.child_start.last().unwrap() as usize,
        tree.children.len()
    );
    assert!(tree
        .roots
        .iter()
        .chain(&tree.children)
        .all(|&c| (c as usize) < count));
    assert!(tree.js_sort.iter().all(|&c| (c as usize) < count));
    // A tree (each node at one place at most) once the pending first places are
    // taken, unless the reference's walk ends on it.
    let forest = pi_session_native::session::index::Forest {
        roots: tree.roots.clone(),
        child_start: tree.child_start.clone(),
        children: tree.children.clone(),
    };
    let forest = if tree.first_places_pending {
        pi_session_native::session::index::tree_where_ids_repeat(forest)
    } else {
        forest
    };
    // Shared nodes stay only where the reference's own walk ends.
    let bounded = pi_session_native::session::index::reference_walk_visits(
        &forest,
        pi_session_native::session::index::REFERENCE_WALK_LIMIT,
    )
    .is_some();
    let mut placed = vec![false; count];
    for &n in forest.roots.iter().chain(&forest.children) {
        if bounded {
            break;
        }
        assert!(
            !std::mem::replace(&mut placed[n as usize], true),
            "node {n} twice"
        );
    }
}
