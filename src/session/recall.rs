//! What a page of `recallRead` (lib/recall.js) needs of one branch, found on the
//! index without building an entry: the branch's entries a page shows, where an
//! entry asked for is on it, and the newest leaf under an entry. A page then
//! builds only its own entries, not the 200,000 of a long session's branch.

use foldhash::{HashMap, HashSet};

use super::index::EntryIndex;
use crate::format::entry::{EntryMeta, Kind, Role, UNDEFINED_KEY};

/// Whether a page shows the entry (what a page showed when it built every
/// entry of the branch: __test__/helpers/recall-read-oracle.mjs): a message
/// whose role is a string other than "system"; a compaction, a branch summary
/// or a custom message.
pub fn is_readable(meta: &EntryMeta) -> bool {
    match meta.kind {
        Kind::Message => meta.role.is_string() && meta.role != Role::System,
        Kind::Compaction | Kind::BranchSummary | Kind::CustomMessage => true,
        _ => false,
    }
}

/// One branch as a page reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct RecallBranch {
    /// `getBranch(leaf)`: positions, root first.
    pub positions: Vec<u32>,
    /// Indexes into `positions` of the entries a page shows, in order.
    pub readable: Vec<u32>,
    /// Index into `positions` of the first entry whose id is the string
    /// `target` (`branch.findIndex((e) => e.id === target)`).
    pub target: Option<u32>,
}

impl EntryIndex {
    /// The branch to `leaf` (a key as `getBranch` makes it, `None` for a falsy
    /// leaf) and, when given, where the entry with the string id `target` is on it.
    pub fn recall_branch(&self, leaf: Option<&str>, target: Option<&str>) -> RecallBranch {
        let positions = self.branch(leaf);
        let readable = (0..positions.len() as u32)
            .filter(|&i| is_readable(self.meta(positions[i as usize])))
            .collect();
        let target = target.and_then(|t| {
            positions
                .iter()
                .position(|&p| {
                    let m = self.meta(p);
                    m.id_is_string && m.id == t
                })
                .map(|i| i as u32)
        });
        RecallBranch {
            positions,
            readable,
            target,
        }
    }

    /// Down from the entry with id `key`, the last of its children each time
    /// (`getChildren`'s order) until an entry without children, an id met
    /// before, or a child without an id: the position of the last child
    /// taken, `None` when the entry itself is the leaf.
    pub fn newest_leaf_under(&self, key: &str) -> Option<u32> {
        // `getChildren(id)`: the entries of `byId` whose parentId is the key; the last one wins.
        let mut last_child: HashMap<&str, u32> = HashMap::default();
        for p in self.by_id.positions() {
            last_child.insert(&self.meta(p).parent, p);
        }
        let mut seen: HashSet<&str> = HashSet::default();
        seen.insert(key);
        let mut here = None;
        let mut key = key;
        while let Some(&child) = last_child.get(key) {
            let id = &self.meta(child).id;
            if &**id == UNDEFINED_KEY || !seen.insert(id) {
                break;
            }
            here = Some(child);
            if id.starts_with("\0object#") {
                // An object id is a key of no other entry in JavaScript.
                break;
            }
            key = id;
        }
        here
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::entry::{read_line, LineRead};
    use crate::session::index::index_of_lines as index;

    fn entry(kind: &str, id: &str, parent: Option<&str>, message: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let message = if message.is_empty() {
            String::new()
        } else {
            format!(r#","message":{message}"#)
        };
        format!(r#"{{"type":"{kind}","id":"{id}","parentId":{parent}{message}}}"#)
    }

    fn header() -> String {
        r#"{"type":"session","id":"s","version":3}"#.to_string()
    }

    #[test]
    fn readable_is_what_a_page_shows() {
        let readable = |line: &str| match read_line(line.as_bytes()) {
            LineRead::Entry(m) => is_readable(&m),
            LineRead::Skipped => panic!(),
        };
        for shown in [
            r#"{"type":"message","message":{"role":"user"}}"#,
            r#"{"type":"message","message":{"role":"toolResult"}}"#,
            r#"{"type":"message","message":{"role":"bashExecution"}}"#,
            r#"{"type":"message","message":{"role":"hookMessage"}}"#,
            r#"{"type":"message","message":{"role":""}}"#,
            r#"{"type":"message","message":{"role":"Système"}}"#,
            r#"{"type":"message","message":{"role":7,"role":"user"}}"#,
            r#"{"type":"compaction"}"#,
            r#"{"type":"branch_summary"}"#,
            r#"{"type":"custom_message"}"#,
        ] {
            assert!(readable(shown), "{shown}");
        }
        for hidden in [
            r#"{"type":"message","message":{"role":"system"}}"#,
            r#"{"type":"message","message":{"role":"s\u0079stem"}}"#,
            r#"{"type":"message","message":{"role":"user","role":7}}"#,
            r#"{"type":"message","message":{"content":"x"}}"#,
            r#"{"type":"message","message":null}"#,
            r#"{"type":"message","message":"user"}"#,
            r#"{"type":"message"}"#,
            r#"{"type":"custom","message":{"role":"user"}}"#,
            r#"{"type":"label"}"#,
            r#"{"type":"model_change"}"#,
            r#"{"type":"session"}"#,
            r#"[{"type":"message"}]"#,
            r#""message""#,
        ] {
            assert!(!readable(hidden), "{hidden}");
        }
    }

    #[test]
    fn a_branch_with_its_readable_entries_and_the_target() {
        let lines = vec![
            header(),
            entry("message", "a", None, r#"{"role":"user"}"#),
            entry("model_change", "m", Some("a"), ""),
            entry("message", "b", Some("m"), r#"{"role":"system"}"#),
            entry("message", "c", Some("b"), r#"{"role":"assistant"}"#),
            entry("message", "x", Some("a"), r#"{"role":"user"}"#),
            entry("compaction", "d", Some("c"), ""),
        ];
        let idx = index(&lines);
        let branch = idx.recall_branch(Some("d"), Some("b"));
        assert_eq!(branch.positions, vec![1, 2, 3, 4, 6]);
        assert_eq!(branch.readable, vec![0, 3, 4]);
        assert_eq!(branch.target, Some(2));
        assert_eq!(idx.recall_branch(Some("d"), Some("x")).target, None);
        assert_eq!(idx.recall_branch(Some("d"), None).target, None);
        let none = idx.recall_branch(None, Some("a"));
        assert!(none.positions.is_empty() && none.readable.is_empty());
        assert_eq!(none.target, None);
    }

    #[test]
    fn a_repeated_id_is_found_where_it_first_is_on_the_branch() {
        // The second "a" takes over b's parent: a parent cycle, walked once.
        let lines = vec![
            header(),
            entry("message", "x", None, r#"{"role":"user"}"#),
            entry("message", "a", Some("x"), r#"{"role":"user"}"#),
            entry("message", "b", Some("a"), r#"{"role":"user"}"#),
            entry("message", "a", Some("b"), r#"{"role":"user"}"#),
        ];
        let idx = index(&lines);
        for leaf in ["x", "a", "b"] {
            let branch = idx.recall_branch(Some(leaf), Some("a"));
            assert_eq!(branch.positions, idx.branch(Some(leaf)));
            let first = branch
                .positions
                .iter()
                .position(|&p| &*idx.meta(p).id == "a");
            assert_eq!(branch.target, first.map(|i| i as u32), "{leaf}");
        }
        assert!(idx.recall_branch(Some("b"), Some("a")).target.is_some());
    }

    #[test]
    fn newest_leaf_follows_the_last_child_and_stops_at_a_loop() {
        let lines = vec![
            header(),
            entry("message", "a", None, r#"{"role":"user"}"#),
            entry("message", "b", Some("a"), r#"{"role":"user"}"#),
            entry("message", "c", Some("a"), r#"{"role":"user"}"#),
            entry("message", "d", Some("b"), r#"{"role":"user"}"#),
            entry("message", "e", Some("c"), r#"{"role":"user"}"#),
        ];
        let idx = index(&lines);
        assert_eq!(idx.newest_leaf_under("a"), Some(5));
        assert_eq!(idx.newest_leaf_under("b"), Some(4));
        assert_eq!(idx.newest_leaf_under("e"), None);
        // A child without an id ends the walk where it is; so does an id met before.
        let lines = vec![
            header(),
            entry("message", "a", None, r#"{"role":"user"}"#),
            r#"{"type":"message","parentId":"a"}"#.to_string(),
            entry("message", "p", Some("q"), r#"{"role":"user"}"#),
            entry("message", "q", Some("p"), r#"{"role":"user"}"#),
        ];
        let idx = index(&lines);
        assert_eq!(idx.newest_leaf_under("a"), None);
        assert_eq!(idx.newest_leaf_under("p"), Some(4));
    }
}
