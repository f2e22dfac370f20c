//! The id/parent index of one session and the algorithms that walk it: branch
//! paths, children, labels, the session tree and the compaction-aware context plan.
//!
//! Positions are indexes into the session's file entries (header included), the
//! same positions the JavaScript side caches entry objects under.

use foldhash::HashMap;

use crate::format::entry::{EntryMeta, Key, Kind, Role, NULL_KEY, UNDEFINED_KEY};

/// Reading `entry.message.role` of an entry whose message is missing or null: the
/// reference throws a TypeError there, and so do we.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NullishMessage {
    pub position: u32,
    pub is_null: bool,
}

/// A JavaScript `Map` from key to position that remembers first-insertion order,
/// because the reference iterates its Maps (`getChildren`, labels when branching).
/// The order holds positions only: a key is found again from its entry (its id,
/// or a label's target), so that each key is stored once.
#[derive(Default, Debug, Clone)]
pub struct OrderedMap {
    slot_of: HashMap<Key, usize>,
    slots: Vec<u32>,
}

/// A slot whose key was deleted.
const DELETED: u32 = u32::MAX;

impl OrderedMap {
    pub fn reserve(&mut self, additional: usize) {
        self.slot_of.reserve(additional);
        self.slots.reserve(additional);
    }

    pub fn get(&self, key: &str) -> Option<u32> {
        self.slot_of.get(key).map(|&s| self.slots[s])
    }

    pub fn set(&mut self, key: &Key, position: u32) {
        match self.slot_of.get(key) {
            Some(&slot) => self.slots[slot] = position,
            None => {
                self.slot_of.insert(key.clone(), self.slots.len());
                self.slots.push(position);
            }
        }
    }

    pub fn delete(&mut self, key: &str) {
        if let Some(slot) = self.slot_of.remove(key) {
            self.slots[slot] = DELETED;
        }
    }

    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    /// The positions, in the order their keys were first set.
    pub fn positions(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().copied().filter(|&p| p != DELETED)
    }

    pub fn clear(&mut self) {
        self.slot_of.clear();
        self.slots.clear();
    }
}

#[derive(Default, Debug, Clone)]
pub struct EntryIndex {
    pub metas: Vec<EntryMeta>,
    /// `byId`: id key -> position of the last entry with that id (headers excluded).
    pub by_id: OrderedMap,
    /// `labelsById`: target key -> position of the label entry that set it.
    pub labels: OrderedMap,
    /// `leafId`: `None` is null; `Some(key)` may be the undefined key.
    pub leaf: Option<Key>,
    /// Each entry's parent as `byId` resolves it now (`NO_PARENT` when its
    /// parentId is falsy or names no entry), so walks hop through an array.
    parents: Vec<u32>,
    /// Entries whose parentId names no entry yet, by that id.
    waiting: HashMap<Key, Vec<u32>>,
    /// For a prefix of the positions: the first of the run of positions before
    /// it that are each the parent of the next (a branch written in order), so a
    /// walk copies a run instead of hopping through it entry by entry.
    runs: Vec<u32>,
}

const NO_PARENT: u32 = u32::MAX;

/// The leaf argument of `buildSessionPath(entries, leafId, byId)`.
pub enum LeafArg<'a> {
    Null,
    /// `undefined`, or an id that is falsy or unknown: fall back to the last entry.
    Default,
    Id(&'a str),
}

pub struct TreePlan {
    /// For each non-header entry, in `getEntries()` order: its position.
    pub positions: Vec<u32>,
    /// Node of each of those entries (an index into `positions`; entries sharing an
    /// id share the node of the last one, as the reference's `nodeMap` does).
    pub node_of: Vec<u32>,
    pub roots: Vec<u32>,
    /// Children of node `i` are `children[child_start[i]..child_start[i + 1]]`.
    pub child_start: Vec<u32>,
    pub children: Vec<u32>,
    /// Nodes whose children JavaScript must sort itself (unparsed timestamps).
    pub js_sort: Vec<u32>,
    /// Position of the label entry labelling each node's entry, if any.
    pub label_of: Vec<Option<u32>>,
    /// An id repeats, so a node may hang at several places (or in a loop): once
    /// JavaScript has sorted the `js_sort` nodes, `first_places` must run. Only
    /// ever true with `js_sort` not empty; otherwise it has run already.
    pub first_places_pending: bool,
}

/// A forest as `TreePlan` holds it: roots, and the children of node `i` as
/// `children[child_start[i]..child_start[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forest {
    pub roots: Vec<u32>,
    pub child_start: Vec<u32>,
    pub children: Vec<u32>,
}

impl Forest {
    /// Every node index in range and the child ranges in order.
    pub fn is_well_formed(&self) -> bool {
        let count = self.child_start.len().saturating_sub(1) as u32;
        !self.child_start.is_empty()
            && self.child_start[0] == 0
            && self.child_start.windows(2).all(|w| w[0] <= w[1])
            && self.child_start[count as usize] as usize == self.children.len()
            && self.roots.iter().chain(&self.children).all(|&n| n < count)
    }
}

/// Makes a tree of the reference's node graph: depth first from the roots, in
/// order, each node is kept at the first place it is met and left out wherever
/// it is met again. Where ids repeat, the reference hangs one node (the one of
/// the last entry with the id) under the parent of every entry with that id: a
/// line written twice shows twice, a file doubled by a sync tool gives 2^n
/// paths, and an id repeated under its own descendant loops forever. Where no
/// node is met twice (every file without repeated ids), nothing changes.
pub fn first_places(forest: &Forest) -> Forest {
    const NONE: u32 = u32::MAX;
    let count = forest.child_start.len().saturating_sub(1);
    let mut placed = vec![false; count];
    let mut parent_of = vec![NONE; count];
    let mut order = Vec::with_capacity(count);
    let mut roots = Vec::new();
    // (node, next index into `children`) for each node on the current path.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for &root in &forest.roots {
        if std::mem::replace(&mut placed[root as usize], true) {
            continue;
        }
        roots.push(root);
        stack.push((root, forest.child_start[root as usize]));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            if next == forest.child_start[node as usize + 1] {
                stack.pop();
                continue;
            }
            top.1 += 1;
            let child = forest.children[next as usize];
            if std::mem::replace(&mut placed[child as usize], true) {
                continue;
            }
            parent_of[child as usize] = node;
            order.push(child);
            stack.push((child, forest.child_start[child as usize]));
        }
    }
    // A node's kept children were placed in the order of its own list.
    let mut child_start = vec![0u32; count + 1];
    for &child in &order {
        child_start[parent_of[child as usize] as usize + 1] += 1;
    }
    for i in 0..count {
        child_start[i + 1] += child_start[i];
    }
    let mut fill = child_start.clone();
    let mut children = vec![0u32; order.len()];
    for &child in &order {
        let parent = parent_of[child as usize] as usize;
        children[fill[parent] as usize] = child;
        fill[parent] += 1;
    }
    Forest {
        roots,
        child_start,
        children,
    }
}

/// `getTree()`'s forest where ids repeat: where the reference's walk ends (no
/// cycle, a bounded number of paths) its graph is what it returns, shared nodes
/// and all, and a drop-in gives the same; elsewhere the `first_places` tree.
pub fn tree_where_ids_repeat(forest: Forest) -> Forest {
    if reference_walk_visits(&forest, REFERENCE_WALK_LIMIT).is_some() {
        forest
    } else {
        first_places(&forest)
    }
}

/// Node visits past which the reference's `getTree()` counts as not returning
/// (its sort walk visits every path from a root: 2^20 is about a second there).
pub const REFERENCE_WALK_LIMIT: u64 = 1 << 20;

/// How many nodes the reference's walk from the roots visits (one per path), or
/// `None` if a cycle makes it endless or the count passes `limit`.
pub fn reference_walk_visits(forest: &Forest, limit: u64) -> Option<u64> {
    let count = forest.child_start.len().saturating_sub(1);
    // 0: not seen, 1: on the current path, 2: done (paths below it known).
    let mut state = vec![0u8; count];
    let mut paths = vec![0u64; count];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut total: u64 = 0;
    for &root in &forest.roots {
        if state[root as usize] == 0 {
            state[root as usize] = 1;
            stack.push((root, forest.child_start[root as usize]));
            while let Some(top) = stack.last_mut() {
                let (node, next) = *top;
                if next == forest.child_start[node as usize + 1] {
                    stack.pop();
                    let below = forest.children[forest.child_start[node as usize] as usize
                        ..forest.child_start[node as usize + 1] as usize]
                        .iter()
                        .try_fold(1u64, |sum, &c| sum.checked_add(paths[c as usize]))?;
                    if below > limit {
                        return None;
                    }
                    paths[node as usize] = below;
                    state[node as usize] = 2;
                    continue;
                }
                top.1 += 1;
                let child = forest.children[next as usize];
                match state[child as usize] {
                    0 => {
                        state[child as usize] = 1;
                        stack.push((child, forest.child_start[child as usize]));
                    }
                    1 => return None,
                    _ => {}
                }
            }
        }
        total = total.checked_add(paths[root as usize])?;
        if total > limit {
            return None;
        }
    }
    Some(total)
}

pub struct ContextPlan {
    /// Positions of the context entries, in order.
    pub entries: Vec<u32>,
    /// For each context entry: the position of its latest context edit, or -1;
    /// -2 marks a retained older compaction that contributes no messages.
    pub edits: Vec<i64>,
    pub thinking: Option<u32>,
    pub model: Option<u32>,
}

impl EntryIndex {
    pub fn push(&mut self, meta: EntryMeta) -> u32 {
        let position = self.metas.len() as u32;
        self.parents.push(NO_PARENT);
        if meta.kind != Kind::Session {
            if meta.parent_truthy {
                match self.by_id.get(&meta.parent) {
                    Some(parent) => self.parents[position as usize] = parent,
                    None => self
                        .waiting
                        .entry(meta.parent.clone())
                        .or_default()
                        .push(position),
                }
            }
            let repeated = self.by_id.get(&meta.id).is_some();
            self.by_id.set(&meta.id, position);
            if repeated {
                // A repeated id moves every child of that id to the new entry.
                self.metas.push(meta);
                self.resolve_parents();
                let meta = self.metas.pop().expect("just pushed");
                self.finish_push(meta, position);
                return position;
            }
            if let Some(children) = self.waiting.remove(&meta.id) {
                // A waiting child gets a parent after it, never the position
                // before it, so the runs it belongs to stay as they are.
                for child in children {
                    self.parents[child as usize] = position;
                }
            }
        }
        if self.runs.len() == position as usize {
            self.push_run(position);
        }
        self.finish_push(meta, position);
        position
    }

    fn push_run(&mut self, position: u32) {
        let p = position as usize;
        let run = if p > 0 && self.parents[p] == position - 1 {
            self.runs[p - 1]
        } else {
            position
        };
        self.runs.push(run);
    }

    /// Runs for every position (after parents changed behind the prefix).
    fn refresh_runs(&mut self) {
        for p in self.runs.len()..self.parents.len() {
            self.push_run(p as u32);
        }
    }

    /// Resolves every entry's parent through `byId` again.
    pub fn resolve_parents(&mut self) {
        self.waiting.clear();
        self.parents.clear();
        for (p, meta) in self.metas.iter().enumerate() {
            let parent = if meta.parent_truthy {
                self.by_id.get(&meta.parent)
            } else {
                None
            };
            if parent.is_none() && meta.parent_truthy {
                self.waiting
                    .entry(meta.parent.clone())
                    .or_default()
                    .push(p as u32);
            }
            self.parents.push(parent.unwrap_or(NO_PARENT));
        }
        self.runs.clear();
        self.refresh_runs();
    }

    fn finish_push(&mut self, meta: EntryMeta, position: u32) {
        if meta.kind != Kind::Session {
            self.leaf = Some(meta.id.clone());
            if meta.kind == Kind::Label {
                if meta.label_truthy {
                    self.labels.set(meta.target(), position);
                } else {
                    self.labels.delete(meta.target());
                }
            }
        }
        self.metas.push(meta);
    }

    pub fn from_metas(metas: Vec<EntryMeta>) -> EntryIndex {
        let mut index = EntryIndex::default();
        index.metas.reserve(metas.len());
        index.parents.reserve(metas.len());
        index.by_id.reserve(metas.len());
        for meta in metas {
            index.push(meta);
        }
        index.refresh_runs();
        index
    }

    /// The index the free functions build over entries the caller holds: their
    /// `byId` map (`keys` given) or one built from every entry's id, headers
    /// included.
    pub fn from_map(metas: Vec<EntryMeta>, keys: Option<Vec<Key>>) -> EntryIndex {
        let mut index = EntryIndex {
            metas,
            ..Default::default()
        };
        match keys {
            Some(keys) => {
                for (p, key) in keys.iter().enumerate() {
                    index.by_id.set(key, p as u32);
                }
            }
            None => {
                for p in 0..index.metas.len() {
                    let id = index.metas[p].id.clone();
                    index.by_id.set(&id, p as u32);
                }
            }
        }
        index.resolve_parents();
        index
    }

    pub fn get(&self, key: &str) -> Option<u32> {
        self.by_id.get(key)
    }

    pub fn meta(&self, position: u32) -> &EntryMeta {
        &self.metas[position as usize]
    }

    pub fn header(&self) -> Option<u32> {
        self.metas
            .iter()
            .position(|m| m.kind == Kind::Session)
            .map(|p| p as u32)
    }

    /// `getEntries()`: every entry but headers, in file order.
    pub fn entry_positions(&self) -> Vec<u32> {
        (0..self.metas.len() as u32)
            .filter(|&p| self.metas[p as usize].kind != Kind::Session)
            .collect()
    }

    pub fn last_entry(&self) -> Option<u32> {
        self.metas
            .iter()
            .rposition(|m| m.kind != Kind::Session)
            .map(|p| p as u32)
    }

    /// Walks parent links from `start` to the root; stops at the first entry seen
    /// twice, where the reference would loop forever.
    fn walk_to_root(&self, start: Option<u32>) -> Vec<u32> {
        let mut path = Vec::new();
        let whole = self.walk_runs(start, self.metas.len(), |run, last| {
            path.extend((run..=last).rev().map(|p| p as u32))
        });
        if !whole {
            return self.walk_to_root_checked(start);
        }
        path.reverse();
        path
    }

    /// Walks from `start` to the root a run at a time, calling `emit(first, last)`
    /// for the positions `last` down to `first`. False, having stopped, when the
    /// path would pass `limit` entries: a parent cycle (a run ends in a parent
    /// jump, so a cycle keeps growing the path), or more than the caller has room for.
    fn walk_runs(
        &self,
        start: Option<u32>,
        limit: usize,
        mut emit: impl FnMut(usize, usize),
    ) -> bool {
        let mut len = 0;
        let mut current = start.unwrap_or(NO_PARENT);
        while current != NO_PARENT {
            let last = current as usize;
            let first = self.runs.get(last).map_or(last, |&r| r as usize);
            len += last - first + 1;
            if len > limit {
                return false;
            }
            emit(first, last);
            current = self.parents[first];
        }
        true
    }

    /// The walk for a parent cycle: it ends before the first entry seen twice.
    fn walk_to_root_checked(&self, start: Option<u32>) -> Vec<u32> {
        let mut path = Vec::new();
        let mut seen = vec![false; self.metas.len()];
        let mut current = start.unwrap_or(NO_PARENT);
        while current != NO_PARENT && !std::mem::replace(&mut seen[current as usize], true) {
            path.push(current);
            current = self.parents[current as usize];
        }
        path.reverse();
        path
    }

    /// `getBranch(fromId)`; `from` is the key of `fromId ?? leafId`, `None` when
    /// that value is falsy.
    pub fn branch(&self, from: Option<&str>) -> Vec<u32> {
        self.walk_to_root(from.and_then(|k| self.get(k)))
    }

    /// `branch` written into `out`, root first; the path's length, or `None` when
    /// `out` is too short for it. A buffer the caller keeps spares an allocation
    /// per call on paths of many thousand entries.
    pub fn branch_into(&self, from: Option<&str>, out: &mut [u32]) -> Option<usize> {
        let start = from.and_then(|k| self.get(k));
        let mut len = 0;
        let room = out.len();
        let whole = self.walk_runs(start, room, |first, last| {
            for (slot, p) in out[len..].iter_mut().zip((first..=last).rev()) {
                *slot = p as u32;
            }
            len += last - first + 1;
        });
        if !whole {
            // Too short, or a parent cycle: the checked walk decides.
            let path = self.walk_to_root_checked(start);
            out.get_mut(..path.len())?.copy_from_slice(&path);
            return Some(path.len());
        }
        out[..len].reverse();
        Some(len)
    }

    /// The path of the manager's own leaf over `getEntries()`.
    pub fn leaf_path(&self) -> Vec<u32> {
        self.session_path(self.leaf_arg(), self.last_entry())
    }

    pub fn leaf_arg(&self) -> LeafArg<'_> {
        match &self.leaf {
            None => LeafArg::Null,
            Some(k) if is_truthy_key(k) => LeafArg::Id(k),
            Some(_) => LeafArg::Default,
        }
    }

    /// `buildSessionPath(entries, leafId, byId)`; `fallback` is the position of
    /// `entries[entries.length - 1]`.
    pub fn session_path(&self, leaf: LeafArg, fallback: Option<u32>) -> Vec<u32> {
        let start = match leaf {
            LeafArg::Null => return Vec::new(),
            LeafArg::Id(k) => self.get(k).or(fallback),
            LeafArg::Default => fallback,
        };
        self.walk_to_root(start)
    }

    /// Whether `pi-sessions doctor` could find something wrong with the tree:
    /// false only when every entry after the header has a string id of its
    /// own, no entry is a second header, and every truthy parentId names an
    /// entry before it (no repeated id, no parent missing, no parent cycle).
    pub fn tree_may_be_damaged(&self) -> bool {
        let mut entries = 0usize;
        for (p, meta) in self.metas.iter().enumerate() {
            if meta.kind == Kind::Session {
                if p > 0 {
                    return true;
                }
                continue;
            }
            entries += 1;
            if !meta.id_is_string {
                return true;
            }
            if meta.parent_truthy {
                let parent = self.parents[p];
                if parent == NO_PARENT || parent as usize >= p {
                    return true;
                }
            }
        }
        entries != self.by_id.len()
    }

    /// Whether an entry with this id is on the branch ending at the leaf.
    pub fn on_branch(&self, key: &str) -> bool {
        let leaf = self.leaf.as_deref().filter(|k| is_truthy_key(k));
        self.branch(leaf).iter().any(|&p| &*self.meta(p).id == key)
    }

    /// `getChildren(parentId)`: entries of `byId` whose parentId is strictly the key.
    pub fn children(&self, parent: &str) -> Vec<u32> {
        self.by_id
            .positions()
            .filter(|&p| &*self.meta(p).parent == parent)
            .collect()
    }

    pub fn has_conversation(&self) -> Result<bool, NullishMessage> {
        for (p, meta) in self.metas.iter().enumerate() {
            if meta.kind != Kind::Message {
                continue;
            }
            check_role(meta, p as u32)?;
            if meta.role.is_conversation() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `buildContextEntries`: the latest compaction on the path, the kept entries
    /// from its `firstKeptEntryId`, then everything after it.
    pub fn context_entries(&self, path: &[u32]) -> Result<Vec<u32>, NullishMessage> {
        let Some(compaction) = path
            .iter()
            .rposition(|&p| self.meta(p).kind == Kind::Compaction)
        else {
            return Ok(path.to_vec());
        };
        let compaction_meta = self.meta(path[compaction]);
        // The reference looks the compaction up again by id: with repeated ids
        // the first path entry carrying that id is where the cut happens.
        let cut = path
            .iter()
            .position(|&p| self.meta(p).id == compaction_meta.id)
            .unwrap_or(compaction);
        let mut out = vec![path[compaction]];
        let mut found_first_kept = false;
        for &p in &path[..cut] {
            let meta = self.meta(p);
            if meta.id == *compaction_meta.first_kept() {
                found_first_kept = true;
            }
            if found_first_kept {
                if meta.kind == Kind::Message {
                    check_role(meta, p)?;
                    if meta.role == Role::System {
                        continue;
                    }
                }
                out.push(p);
            }
        }
        out.extend_from_slice(&path[cut + 1..]);
        Ok(out)
    }

    /// `buildSessionProjection`: context entries plus which entry each one's edit,
    /// the thinking level and the model come from.
    pub fn context_plan(&self, path: &[u32]) -> Result<ContextPlan, NullishMessage> {
        let mut thinking = None;
        let mut model = None;
        for &p in path {
            let meta = self.meta(p);
            match meta.kind {
                Kind::ThinkingLevelChange => thinking = Some(p),
                Kind::ModelChange => model = Some(p),
                Kind::Message => {
                    check_role(meta, p)?;
                    if meta.role == Role::Assistant {
                        model = Some(p);
                    }
                }
                _ => {}
            }
        }
        let entries = self.context_entries(path)?;
        let mut edit_of: HashMap<&str, u32> = HashMap::default();
        for &p in &entries {
            let meta = self.meta(p);
            if meta.kind == Kind::ContextEdit {
                edit_of.insert(meta.target(), p);
            }
        }
        let edits = entries
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let meta = self.meta(p);
                if meta.kind == Kind::Compaction && i > 0 {
                    -2
                } else {
                    edit_of.get(&*meta.id).map_or(-1, |&e| e as i64)
                }
            })
            .collect();
        Ok(ContextPlan {
            entries,
            edits,
            thinking,
            model,
        })
    }

    /// `getTree()` as positions: nodes, roots and children sorted by timestamp.
    pub fn tree(&self) -> TreePlan {
        const NONE: u32 = u32::MAX;
        let positions = self.entry_positions();
        let count = positions.len();
        // Index in `positions` of each file position.
        let mut index_of = vec![NONE; self.metas.len()];
        for (i, &p) in positions.iter().enumerate() {
            index_of[p as usize] = i as u32;
        }
        // `nodeMap` is keyed by id, so entries sharing an id share the node of
        // the last one, which is the entry `byId` holds.
        let repeated = self.by_id.len() != count;
        let node_of: Vec<u32> = if !repeated {
            (0..count as u32).collect()
        } else {
            positions
                .iter()
                .map(|&p| {
                    self.get(&self.meta(p).id)
                        .map_or(NONE, |q| index_of[q as usize])
                })
                .collect()
        };
        let mut roots = Vec::new();
        let mut parent_of = vec![NONE; count];
        for (i, &p) in positions.iter().enumerate() {
            let meta = self.meta(p);
            let node = node_of[i];
            if &*meta.parent == NULL_KEY || meta.parent == meta.id {
                roots.push(node);
                continue;
            }
            // `nodeMap.get(parentId)`: the walk's resolved parent when parentId is
            // truthy; a falsy one (undefined, "", 0) is looked up as a key.
            let parent = if meta.parent_truthy {
                self.parents[p as usize]
            } else {
                self.get(&meta.parent).unwrap_or(NO_PARENT)
            };
            match parent {
                NO_PARENT => roots.push(node),
                q => parent_of[i] = node_of[index_of[q as usize] as usize],
            }
        }
        // Children in entry order, as one array with a start per node.
        let mut child_start = vec![0u32; count + 1];
        for &parent in &parent_of {
            if parent != NONE {
                child_start[parent as usize + 1] += 1;
            }
        }
        for i in 0..count {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut children = vec![0u32; child_start[count] as usize];
        for (i, &parent) in parent_of.iter().enumerate() {
            if parent != NONE {
                children[fill[parent as usize] as usize] = node_of[i];
                fill[parent as usize] += 1;
            }
        }
        // Oldest first; where a timestamp is not in toISOString form, the
        // reference's own comparator decides, in JavaScript.
        let mut js_sort = Vec::new();
        let time_of = |c: u32| self.meta(positions[c as usize]).time;
        for node in 0..count {
            let list = &mut children[child_start[node] as usize..child_start[node + 1] as usize];
            if list.len() < 2 {
                continue;
            }
            if list.iter().all(|&c| time_of(c).is_some()) {
                list.sort_by(|&a, &b| {
                    let (ta, tb) = (time_of(a).unwrap_or(0.0), time_of(b).unwrap_or(0.0));
                    ta.total_cmp(&tb)
                });
            } else {
                js_sort.push(node as u32);
            }
        }
        let mut label_of = vec![None; count];
        for label in self.labels.positions() {
            if let Some(q) = self.get(self.meta(label).target()) {
                let i = index_of[q as usize];
                if i != NONE {
                    label_of[i as usize] = Some(label);
                }
            }
        }
        // Without repeated ids every node hangs at one place already: a parent
        // cycle has no way in from a root, and the reference leaves it out too.
        let mut forest = Forest {
            roots,
            child_start,
            children,
        };
        let first_places_pending = repeated && !js_sort.is_empty();
        if repeated && js_sort.is_empty() {
            forest = tree_where_ids_repeat(forest);
        }
        TreePlan {
            label_of,
            positions,
            node_of,
            roots: forest.roots,
            child_start: forest.child_start,
            children: forest.children,
            js_sort,
            first_places_pending,
        }
    }
}

pub fn is_truthy_key(key: &str) -> bool {
    !(key.is_empty()
        || key == UNDEFINED_KEY
        || key == NULL_KEY
        || key == "\0false"
        || key == "\u{0}0"
        || key == "\0NaN")
}

impl EntryIndex {
    /// About how many bytes of native memory the index holds (told to V8).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        // A hash map slot holds its key and value plus a control byte.
        let map = |m: &OrderedMap| {
            m.slot_of.capacity() * (size_of::<(Key, usize)>() + 1)
                + m.slots.capacity() * size_of::<u32>()
        };
        self.metas.capacity() * size_of::<EntryMeta>()
            + map(&self.by_id)
            + map(&self.labels)
            + (self.parents.capacity() + self.runs.capacity()) * size_of::<u32>()
            + self.waiting.capacity() * size_of::<(Key, Vec<u32>)>()
    }
}

fn check_role(meta: &EntryMeta, position: u32) -> Result<(), NullishMessage> {
    if meta.role.is_nullish() {
        Err(NullishMessage {
            position,
            is_null: meta.role == Role::MessageNull,
        })
    } else {
        Ok(())
    }
}

/// For tests: the index of these lines, each an entry.
#[cfg(test)]
pub(crate) fn index_of_lines<S: AsRef<str>>(lines: &[S]) -> EntryIndex {
    use crate::format::entry::{read_line, LineRead};
    EntryIndex::from_metas(
        lines
            .iter()
            .map(|l| match read_line(l.as_ref().as_bytes()) {
                LineRead::Entry(m) => m,
                LineRead::Skipped => panic!("{}", l.as_ref()),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::entry::{read_line, LineRead};

    fn index(lines: &[&str]) -> EntryIndex {
        index_of_lines(lines)
    }

    fn msg(id: &str, parent: Option<&str>, role: &str, ts: &str) -> String {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"{role}"}}}}"#
        )
    }

    const T1: &str = "2024-01-01T00:00:01.000Z";
    const T2: &str = "2024-01-01T00:00:02.000Z";

    #[test]
    fn branch_stops_on_cycles() {
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("a", Some("b"), "user", T1),
            &msg("b", Some("a"), "user", T1),
        ]);
        assert_eq!(idx.branch(Some("b")), vec![1, 2]);
        assert_eq!(idx.leaf_path(), vec![1, 2]);
    }

    #[test]
    fn branch_into_matches_branch_or_says_too_short() {
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("a", None, "user", T1),
            &msg("b", Some("a"), "user", T1),
            &msg("c", Some("b"), "user", T1),
        ]);
        let mut out = [0u32; 8];
        assert_eq!(idx.branch_into(Some("c"), &mut out), Some(3));
        assert_eq!(out[..3], idx.branch(Some("c"))[..]);
        assert_eq!(idx.branch_into(Some("nope"), &mut out), Some(0));
        assert_eq!(idx.branch_into(Some("c"), &mut out[..2]), None);
        let cyclic = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("a", Some("b"), "user", T1),
            &msg("b", Some("a"), "user", T1),
        ]);
        assert_eq!(cyclic.branch_into(Some("b"), &mut out), Some(2));
        assert_eq!(out[..2], [1, 2]);
    }

    #[test]
    fn branch_into_follows_runs_through_late_repeated_and_cyclic_parents() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..200 {
            let mut idx = index(&[r#"{"type":"session","id":"s"}"#]);
            let mut out = vec![0u32; 64];
            for i in 1..40u64 {
                // Mostly each entry the child of the one before, some jumps, some
                // parents that come later or never, some ids used twice.
                let id = if next(8) == 0 { next(i) } else { i };
                let parent = match next(10) {
                    0 => None,
                    1 => Some(i + 1 + next(3)),
                    2 => Some(next(i)),
                    _ => Some(i - 1),
                };
                let parent = parent.map(|p| format!("e{p}"));
                let line = msg(&format!("e{id}"), parent.as_deref(), "user", T1);
                let LineRead::Entry(m) = read_line(line.as_bytes()) else {
                    panic!()
                };
                idx.push(m);
                for k in 0..=i {
                    let key = format!("e{k}");
                    let n = idx.branch_into(Some(&key), &mut out).expect("fits");
                    // Against the hop-by-hop walk, which knows nothing of runs.
                    let plain = idx.walk_to_root_checked(idx.get(&key));
                    assert_eq!(out[..n], plain[..], "from {key} after {i}");
                    assert_eq!(idx.branch(Some(&key)), plain, "from {key} after {i}");
                }
            }
        }
    }

    #[test]
    fn parents_follow_late_and_repeated_ids() {
        let mut idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("b", Some("a"), "user", T1),
            &msg("a", None, "user", T1),
        ]);
        assert_eq!(idx.branch(Some("b")), vec![2, 1]);
        // A second "a" becomes the parent `byId` resolves to.
        let LineRead::Entry(again) = read_line(msg("a", Some("z"), "user", T1).as_bytes()) else {
            panic!()
        };
        idx.push(again);
        assert_eq!(idx.branch(Some("b")), vec![3, 1]);
        let LineRead::Entry(z) = read_line(msg("z", None, "user", T1).as_bytes()) else {
            panic!()
        };
        idx.push(z);
        assert_eq!(idx.branch(Some("b")), vec![4, 3, 1]);
    }

    #[test]
    fn compaction_keeps_from_first_kept_and_drops_system() {
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("a", None, "user", T1),
            &msg("b", Some("a"), "system", T1),
            &msg("c", Some("b"), "assistant", T1),
            r#"{"type":"compaction","id":"d","parentId":"c","firstKeptEntryId":"b"}"#,
            &msg("e", Some("d"), "user", T1),
        ]);
        let path = idx.leaf_path();
        assert_eq!(idx.context_entries(&path).unwrap(), vec![4, 3, 5]);
        let plan = idx.context_plan(&path).unwrap();
        assert_eq!(plan.model, Some(3));
    }

    #[test]
    fn tree_sorts_children_by_time_and_roots_orphans() {
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("a", None, "user", T1),
            &msg("c", Some("a"), "user", T2),
            &msg("b", Some("a"), "user", T1),
            &msg("o", Some("zz"), "user", T1),
        ]);
        let tree = idx.tree();
        assert_eq!(tree.roots, vec![0, 3]);
        let kids = &tree.children[tree.child_start[0] as usize..tree.child_start[1] as usize];
        assert_eq!(kids, &[2, 1]);
    }

    /// Every node of the tree, depth first, as (index, depth); panics on a node
    /// met twice.
    fn walk(tree: &TreePlan) -> Vec<(u32, usize)> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut stack: Vec<(u32, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            assert!(seen.insert(node), "node {node} twice");
            out.push((node, depth));
            let kids = &tree.children[tree.child_start[node as usize] as usize
                ..tree.child_start[node as usize + 1] as usize];
            stack.extend(kids.iter().rev().map(|&c| (c, depth + 1)));
        }
        out
    }

    #[test]
    fn tree_shares_a_repeated_node_where_the_reference_returns() {
        // A line written twice: the reference hangs the one node of "y" twice
        // under "x" and returns; so does this.
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            &msg("x", None, "user", T1),
            &msg("y", Some("x"), "user", T1),
            &msg("y", Some("x"), "user", T1),
        ]);
        let tree = idx.tree();
        assert!(!tree.first_places_pending);
        assert_eq!(tree.roots, vec![0]);
        let kids = &tree.children[tree.child_start[0] as usize..tree.child_start[1] as usize];
        assert_eq!(kids, &[2, 2]);
    }

    #[test]
    fn reference_walk_visits_counts_paths_and_sees_cycles() {
        let shared = Forest {
            roots: vec![0, 0],
            child_start: vec![0, 2, 2],
            children: vec![1, 1],
        };
        assert_eq!(reference_walk_visits(&shared, 100), Some(6));
        assert_eq!(reference_walk_visits(&shared, 5), None);
        let cycle = Forest {
            roots: vec![0],
            child_start: vec![0, 1, 2],
            children: vec![1, 0],
        };
        assert_eq!(reference_walk_visits(&cycle, 100), None);
    }

    #[test]
    fn tree_of_a_doubled_file_is_the_single_file_tree() {
        let mut lines = vec![r#"{"type":"session","id":"s"}"#.to_string()];
        for _copy in 0..2 {
            for i in 0..40 {
                let parent = (i > 0).then(|| format!("e{}", i - 1));
                lines.push(msg(&format!("e{i}"), parent.as_deref(), "user", T1));
            }
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let tree = index(&refs).tree();
        // One chain of the 40 nodes of the second copy, not 2^40 paths.
        let walked = walk(&tree);
        assert_eq!(walked.len(), 40);
        assert!(walked
            .iter()
            .enumerate()
            .all(|(d, &(n, depth))| depth == d && n == 40 + d as u32));
    }

    #[test]
    fn tree_cuts_a_loop_that_a_repeated_id_closes() {
        // x, y under x, then x again under y: x -> y -> x -> ... in the reference.
        for lines in [
            [
                &msg("x", None, "user", T1),
                &msg("y", Some("x"), "user", T1),
                &msg("x", Some("y"), "user", T1),
            ],
            [
                &msg("x", Some("y"), "user", T1),
                &msg("y", Some("x"), "user", T1),
                &msg("x", None, "user", T1),
            ],
        ] {
            let mut all = vec![r#"{"type":"session","id":"s"}"#];
            all.extend(lines.iter().map(|l| l.as_str()));
            let tree = index(&all).tree();
            // The node of x (its last entry, index 2) is the root; y under it.
            assert_eq!(walk(&tree), vec![(2, 0), (1, 1)]);
        }
    }

    #[test]
    fn first_places_leave_a_tree_alone_and_follow_depth_first_order() {
        let tree = Forest {
            roots: vec![0, 3],
            child_start: vec![0, 2, 3, 3, 3],
            children: vec![1, 2, 3],
        };
        // 3 is met first under 1 (depth first), then again as a root.
        let made = first_places(&tree);
        assert_eq!(made.roots, vec![0]);
        assert_eq!(made.children, vec![1, 2, 3]);
        assert_eq!(made.child_start, vec![0, 2, 3, 3, 3]);
        let plain = Forest {
            roots: vec![0],
            child_start: vec![0, 2, 2, 2],
            children: vec![2, 1],
        };
        assert_eq!(first_places(&plain), plain);
        assert!(plain.is_well_formed());
        let bad = Forest {
            roots: vec![5],
            ..plain
        };
        assert!(!bad.is_well_formed());
    }

    #[test]
    fn nullish_message_is_reported() {
        let idx = index(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":null}"#,
        ]);
        let path = idx.leaf_path();
        assert_eq!(
            idx.context_plan(&path).err(),
            Some(NullishMessage {
                position: 1,
                is_null: true
            })
        );
    }
}
