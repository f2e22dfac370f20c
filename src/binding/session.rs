//! `NativeSession`: one session file for `SessionManager` (lib/session-manager.js):
//! open, append, branch, fork, persist, the tree and context plans; and the
//! registry that frees a session's native memory when its object is collected.

use napi_derive::napi;

use super::*;
use crate::format::entry::{EntryMeta, Key, Kind, Role};
use crate::format::migrate::{self, FirstKept, V1Change};
use crate::session::index::{EntryIndex, LeafArg};
use crate::session::{self, HeaderScan, OpenOutcome, PersistPlan, Session};
use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;

/// Index fields of an entry object, computed by JavaScript (`lib/meta.js`) for
/// entries that exist only as objects.
#[napi(object)]
pub struct JsEntryMeta {
    pub kind: String,
    pub id: String,
    pub id_is_string: bool,
    pub parent: String,
    pub parent_truthy: bool,
    pub role: String,
    pub target: String,
    pub label_truthy: bool,
    pub first_kept: String,
    pub time: Option<f64>,
    pub version: f64,
    pub first_kept_index: Option<f64>,
}

/// The role `metaOf` (lib/keys.js) spells for an entry object.
fn js_role(is_message: bool, role: &str) -> Role {
    match (is_message, role) {
        (false, _) => Role::NotMessage,
        (true, "\0undefined") => Role::MessageUndefined,
        (true, "\0null") => Role::MessageNull,
        (true, "\0notstring") => Role::NotString,
        (true, r) => Role::parse(r),
    }
}

impl From<JsEntryMeta> for EntryMeta {
    fn from(m: JsEntryMeta) -> EntryMeta {
        let kind = Kind::from_type(&m.kind);
        let role = js_role(kind == Kind::Message, &m.role);
        let mut meta = EntryMeta::opaque();
        meta.kind = kind;
        meta.id = m.id.into();
        meta.id_is_string = m.id_is_string;
        meta.parent = m.parent.into();
        meta.parent_truthy = m.parent_truthy;
        meta.role = role;
        meta.label_truthy = m.label_truthy;
        meta.time = m.time.filter(|t| t.is_finite());
        meta.set_target(m.target.into());
        meta.set_first_kept(m.first_kept.into());
        meta.set_version(m.version);
        meta.set_first_kept_index(m.first_kept_index);
        meta
    }
}

#[napi(object)]
pub struct JsPersistPlan {
    /// 0 skip, 1 append, 2 first flush.
    pub mode: u32,
    pub pending: Vec<u32>,
}

#[napi(object)]
pub struct JsContextPlan {
    pub entries: Uint32Array,
    pub edits: Vec<i64>,
    pub thinking: i64,
    pub model: i64,
}

#[napi(object)]
pub struct JsTree {
    pub positions: Uint32Array,
    pub node_of: Uint32Array,
    pub roots: Uint32Array,
    pub child_start: Uint32Array,
    pub children: Uint32Array,
    pub js_sort: Uint32Array,
    /// Position of each node's label entry, or -1.
    pub label_of: Int32Array,
    /// Sort the `js_sort` nodes, then pass the forest to `treeFirstPlaces`.
    pub first_places_pending: bool,
}

#[napi(object)]
pub struct JsRecallBranch {
    pub positions: Uint32Array,
    /// Indexes into `positions` of the entries a page shows.
    pub readable: Uint32Array,
    /// Index into `positions` of the target entry, or -1.
    pub target: i64,
}

#[napi(object)]
pub struct JsForest {
    pub roots: Uint32Array,
    pub child_start: Uint32Array,
    pub children: Uint32Array,
}

/// `getTree()`'s forest made a tree (see `index::first_places`), for the plans
/// whose children JavaScript sorted itself.
#[napi(catch_unwind)]
pub fn tree_first_places(
    roots: Uint32Array,
    child_start: Uint32Array,
    children: Uint32Array,
) -> Result<JsForest> {
    let forest = crate::session::index::Forest {
        roots: roots.to_vec(),
        child_start: child_start.to_vec(),
        children: children.to_vec(),
    };
    if !forest.is_well_formed() {
        return Err(Error::new(
            Status::InvalidArg,
            "treeFirstPlaces: not a forest",
        ));
    }
    let forest = crate::session::index::tree_where_ids_repeat(forest);
    Ok(JsForest {
        roots: forest.roots.into(),
        child_start: forest.child_start.into(),
        children: forest.children.into(),
    })
}

#[napi(object)]
pub struct JsBranchOutcome {
    pub kept: Uint32Array,
    pub parents: Vec<Option<String>>,
    pub first_kept: Vec<Option<String>>,
    pub label_sources: Uint32Array,
    pub label_ids: Vec<String>,
    pub label_parents: Vec<Option<String>>,
}

/// The lines JavaScript serialized for pending entries, by position.
fn pending_lines(
    positions: Option<Vec<u32>>,
    lines: Option<Vec<String>>,
) -> Option<Vec<(u32, Vec<u8>)>> {
    positions.map(|ps| {
        ps.into_iter()
            .zip(
                lines
                    .unwrap_or_default()
                    .into_iter()
                    .map(String::into_bytes),
            )
            .collect()
    })
}

/// A session's native state, shared by its JavaScript object and the registry
/// of live sessions (`LiveSessions`), so that it can be freed as soon as the
/// object is collected, before Node runs the object's finalizer (which it
/// defers to a later turn of the event loop: a synchronous loop never gets there).
struct SessionSlot {
    session: RefCell<Option<Session>>,
    /// Bytes told to V8 as external memory.
    reported: Cell<i64>,
}

impl SessionSlot {
    fn is_released(&self) -> bool {
        self.session.borrow().is_none()
    }

    /// Frees the session (its memory and its pooled descriptors) and tells V8.
    fn release(&self, env: &Env) {
        let session = self.session.borrow_mut().take();
        drop(session);
        let reported = self.reported.replace(0);
        if reported != 0 {
            let _ = env.adjust_external_memory(-reported);
        }
    }
}

/// V8 is told of a session's memory in steps of at least this much.
const ACCOUNTING_STEP: i64 = 64 << 10;
/// The live sessions are checked for collected ones after this much growth.
const SWEEP_AFTER_BYTES: i64 = 32 << 20;

/// Every session object of this thread's JavaScript environment, held weakly.
struct LiveSessions {
    tracked: Vec<(napi::sys::napi_ref, Rc<SessionSlot>)>,
    grown_since_sweep: i64,
    sweep_at_len: usize,
}

thread_local! {
    static LIVE: RefCell<LiveSessions> = const {
        RefCell::new(LiveSessions {
            tracked: Vec::new(),
            grown_since_sweep: 0,
            sweep_at_len: 64,
        })
    };
}

impl LiveSessions {
    fn track(&mut self, env: &Env, object: napi::sys::napi_value, slot: Rc<SessionSlot>) {
        let mut weak = std::ptr::null_mut();
        // A reference count of 0: weak, emptied by the collection itself.
        let status = unsafe { napi::sys::napi_create_reference(env.raw(), object, 0, &mut weak) };
        if status != napi::sys::Status::napi_ok {
            return;
        }
        self.tracked.push((weak, slot));
        if self.tracked.len() >= self.sweep_at_len {
            self.sweep(env);
        }
    }

    fn grew(&mut self, env: &Env, bytes: i64) {
        self.grown_since_sweep += bytes;
        if self.grown_since_sweep > SWEEP_AFTER_BYTES {
            self.sweep(env);
        }
    }

    /// Frees the sessions whose objects were collected (and forgets the closed).
    fn sweep(&mut self, env: &Env) {
        let raw = env.raw();
        let mut scope = std::ptr::null_mut();
        let opened = unsafe { napi::sys::napi_open_handle_scope(raw, &mut scope) };
        let before = self.tracked.len();
        self.tracked.retain(|(weak, slot)| {
            let mut value = std::ptr::null_mut();
            let alive = !slot.is_released()
                && unsafe { napi::sys::napi_get_reference_value(raw, *weak, &mut value) }
                    == napi::sys::Status::napi_ok
                && !value.is_null();
            if !alive {
                slot.release(env);
                unsafe { napi::sys::napi_delete_reference(raw, *weak) };
            }
            alive
        });
        if opened == napi::sys::Status::napi_ok {
            unsafe { napi::sys::napi_close_handle_scope(raw, scope) };
        }
        if self.tracked.len() < before {
            give_back_freed_memory();
        }
        self.grown_since_sweep = 0;
        self.sweep_at_len = (self.tracked.len() * 2).max(64);
    }
}

/// Returns the pages of freed sessions to the system. glibc keeps what a
/// session freed in its arenas (a session's read buffers and index are freed
/// on other threads' arenas too), so without this the process keeps the high
/// water mark of every burst of opens.
fn give_back_freed_memory() {
    crate::os::trim_memory();
}

#[napi(custom_finalize)]
pub struct NativeSession {
    slot: Rc<SessionSlot>,
}

impl ObjectFinalize for NativeSession {
    fn finalize(self, env: Env) -> Result<()> {
        self.slot.release(&env);
        Ok(())
    }
}

impl NativeSession {
    fn with(session: Session) -> NativeSession {
        NativeSession {
            slot: Rc::new(SessionSlot {
                session: RefCell::new(Some(session)),
                reported: Cell::new(0),
            }),
        }
    }

    /// The session. After `close()` JavaScript no longer calls in (see
    /// lib/session-manager.js); an empty session stands in if it does.
    pub(super) fn inner(&self) -> RefMut<'_, Session> {
        RefMut::map(self.slot.session.borrow_mut(), |s| {
            s.get_or_insert_with(|| Session::new(false))
        })
    }

    /// Tells V8 how much native memory the session holds now, so that its
    /// collections see it (and collect dropped managers) without anyone calling gc().
    fn report_memory(&self, env: &Env) {
        let now = self
            .slot
            .session
            .borrow()
            .as_ref()
            .map_or(0, |s| s.heap_bytes() as i64);
        let delta = now - self.slot.reported.get();
        if delta.abs() < ACCOUNTING_STEP && (now != 0 || delta == 0) {
            return;
        }
        self.slot.reported.set(now);
        let _ = env.adjust_external_memory(delta);
        if delta > 0 {
            LIVE.with(|live| live.borrow_mut().grew(env, delta));
        }
    }
}

#[napi]
impl NativeSession {
    #[napi(constructor, catch_unwind)]
    pub fn new(persist: bool) -> Self {
        NativeSession::with(Session::new(persist))
    }

    /// Registers the object with the live sessions (called once, right after
    /// it is made), so its memory is freed as soon as it is collected.
    #[napi(catch_unwind)]
    pub fn track(&self, env: Env, this: This) {
        LIVE.with(|live| {
            live.borrow_mut()
                .track(&env, this.object.raw(), self.slot.clone())
        });
        self.report_memory(&env);
    }

    /// Frees the session now: memory, descriptors, accounting.
    #[napi(catch_unwind)]
    pub fn close(&self, env: Env) {
        self.slot.release(&env);
    }

    /// Descriptors the process-wide pool holds (for tests).
    #[napi(catch_unwind)]
    pub fn pooled_files() -> u32 {
        crate::session::file_pool::open_count() as u32
    }

    #[napi(catch_unwind)]
    pub fn start_new(&mut self, env: Env, header: JsEntryMeta) {
        self.inner().start_new(header.into());
        self.report_memory(&env);
    }

    #[napi(catch_unwind)]
    pub fn load_objects(&mut self, env: Env, metas: Vec<JsEntryMeta>) {
        self.inner()
            .load_objects(metas.into_iter().map(Into::into).collect());
        self.report_memory(&env);
    }

    #[napi(catch_unwind)]
    pub fn set_file(&mut self, path: Option<String>) {
        self.inner().set_file(path.map(Into::into));
    }

    #[napi(catch_unwind)]
    pub fn set_flushed(&mut self, flushed: bool) {
        self.inner().flushed = flushed;
    }

    /// "missing", "empty", "loaded" or "migrated". `check_lines`: see too
    /// whether the doctor could fault the file (`Session::open_checked`).
    #[napi(catch_unwind)]
    pub fn open(&mut self, env: Env, path: String, check_lines: Option<bool>) -> Result<String> {
        let path = std::path::Path::new(&path);
        let outcome = if check_lines == Some(true) {
            self.inner().open_checked(path)
        } else {
            self.inner().open(path)
        };
        self.report_memory(&env);
        let outcome = outcome.map_err(to_napi)?;
        Ok(match outcome {
            OpenOutcome::Missing => "missing",
            OpenOutcome::EmptyFile => "empty",
            OpenOutcome::Loaded { migrated: false } => "loaded",
            OpenOutcome::Loaded { migrated: true } => "migrated",
        }
        .to_string())
    }

    #[napi(catch_unwind)]
    pub fn rewrite(&mut self, env: Env, positions: Vec<u32>, lines: Vec<String>) -> Result<()> {
        let pending = positions
            .into_iter()
            .zip(lines.into_iter().map(String::into_bytes))
            .collect();
        let written = self.inner().rewrite(pending);
        self.report_memory(&env);
        written.map_err(to_napi)
    }

    #[napi(catch_unwind)]
    pub fn persist_plan(&self, role: String, is_message: bool) -> Result<JsPersistPlan> {
        let role = js_role(is_message, &role);
        Ok(match self.inner().persist_plan(role).map_err(to_napi)? {
            PersistPlan::Skip => JsPersistPlan {
                mode: 0,
                pending: vec![],
            },
            PersistPlan::Append => JsPersistPlan {
                mode: 1,
                pending: vec![],
            },
            PersistPlan::Flush(pending) => JsPersistPlan { mode: 2, pending },
        })
    }

    #[napi(catch_unwind)]
    pub fn append(
        &mut self,
        env: Env,
        meta: JsEntryMeta,
        line: Option<String>,
        flush_positions: Option<Vec<u32>>,
        flush_lines: Option<Vec<String>>,
    ) -> Result<u32> {
        let flush = pending_lines(flush_positions, flush_lines);
        let appended = self
            .inner()
            .append(meta.into(), line.map(String::into_bytes), flush);
        self.report_memory(&env);
        appended.map_err(to_napi)
    }

    #[napi(catch_unwind)]
    pub fn persist_detached(
        &mut self,
        env: Env,
        line: String,
        flush_positions: Option<Vec<u32>>,
        flush_lines: Option<Vec<String>>,
    ) -> Result<()> {
        let flush = pending_lines(flush_positions, flush_lines);
        let written = self.inner().persist_detached(line.as_bytes(), flush);
        self.report_memory(&env);
        written.map_err(to_napi)
    }

    #[napi(catch_unwind)]
    pub fn appends_lines(&self) -> bool {
        self.inner().appends_lines()
    }

    /// Appends the entry whose JSON line JavaScript serialized.
    #[napi(catch_unwind)]
    pub fn append_line(&mut self, env: Env, line: napi::JsString) -> Result<u32> {
        let bytes = text::utf8_of(&line)?;
        let appended = self.inner().append_line(bytes);
        self.report_memory(&env);
        appended.map_err(to_napi)
    }

    /// `count` fresh entry ids, unique among the entries and each other.
    #[napi(catch_unwind)]
    pub fn new_ids(&self, count: u32) -> Vec<String> {
        self.inner().new_entry_ids(count as usize)
    }

    #[napi(catch_unwind)]
    pub fn file(&self) -> Option<String> {
        self.inner()
            .file()
            .map(|p| p.to_string_lossy().into_owned())
    }

    #[napi(catch_unwind)]
    pub fn pending_positions(&self) -> Vec<u32> {
        self.inner().pending_positions()
    }

    #[napi(catch_unwind)]
    pub fn on_branch(&self, key: String) -> bool {
        self.inner().index.on_branch(&key)
    }

    #[napi(catch_unwind)]
    pub fn line(&self, position: u32) -> Result<Option<String>> {
        Ok(self
            .inner()
            .line(position)
            .map_err(to_napi)?
            .map(|l| lossy(&l)))
    }

    /// `[asciiSkeletons, otherSkeletons, mask, cuts]`: see `Session::skeletons`.
    #[napi(catch_unwind)]
    pub fn skeletons<'env>(&self, env: &'env Env, positions: Uint32Array) -> Result<Array<'env>> {
        let split = self.inner().skeletons(&positions).map_err(to_napi)?;
        let mut parts = env.create_array(4)?;
        parts.set(0, env.create_string_latin1(&split.ascii)?)?;
        parts.set(1, utf8_text(split.other))?;
        parts.set(2, Uint8Array::from(split.mask))?;
        parts.set(3, Uint8Array::from(split.cuts))?;
        Ok(parts)
    }

    /// The JSON text of one value `skeletons` cut: see `Session::cut_value`.
    #[napi(catch_unwind)]
    pub fn cut_value(&self, position: u32, slot: u32) -> Result<super::text::Copied> {
        let text = self
            .inner()
            .cut_value(position, slot as u8)
            .map_err(to_napi)?;
        Ok(utf8_text(text))
    }

    #[napi(catch_unwind)]
    pub fn header_position(&self) -> i64 {
        opt_pos(self.inner().index.header())
    }

    #[napi(catch_unwind)]
    pub fn entry_positions(&self) -> Uint32Array {
        self.inner().index.entry_positions().into()
    }

    #[napi(catch_unwind)]
    pub fn entry_count(&self) -> u32 {
        self.inner().index.by_id.len() as u32
    }

    /// The key of `leafId`; `null` for null.
    #[napi(catch_unwind)]
    pub fn leaf(&self) -> Option<String> {
        self.inner().index.leaf.as_deref().map(str::to_string)
    }

    #[napi(catch_unwind)]
    pub fn set_leaf(&mut self, key: Option<String>) {
        self.inner().index.leaf = key.map(Key::from);
    }

    #[napi(catch_unwind)]
    pub fn get(&self, key: String) -> i64 {
        opt_pos(self.inner().index.get(&key))
    }

    #[napi(catch_unwind)]
    pub fn branch(&self, from: Option<String>) -> Uint32Array {
        self.inner().index.branch(from.as_deref()).into()
    }

    /// `branch` into `out`: the path's length, or -1 when `out` is too short.
    #[napi(catch_unwind)]
    pub fn branch_into(&self, from: Option<String>, mut out: Uint32Array) -> i64 {
        // Safety: JavaScript cannot run while this synchronous call holds the slice.
        let out = unsafe { out.as_mut() };
        match self.inner().index.branch_into(from.as_deref(), out) {
            Some(len) => len as i64,
            None => -1,
        }
    }

    /// A branch as a page of `recallRead` reads it (`session::recall`).
    #[napi(catch_unwind)]
    pub fn recall_branch(&self, leaf: Option<String>, target: Option<String>) -> JsRecallBranch {
        let branch = self
            .inner()
            .index
            .recall_branch(leaf.as_deref(), target.as_deref());
        JsRecallBranch {
            positions: branch.positions.into(),
            readable: branch.readable.into(),
            target: branch.target.map_or(-1, i64::from),
        }
    }

    /// The position of the newest leaf under the entry with id `key`, or -1
    /// when that entry is its own leaf.
    #[napi(catch_unwind)]
    pub fn newest_leaf_under(&self, key: String) -> i64 {
        opt_pos(self.inner().index.newest_leaf_under(&key))
    }

    /// Whether the file opened may be damaged (`Session::may_be_damaged`).
    #[napi(catch_unwind)]
    pub fn may_be_damaged(&self) -> Option<bool> {
        self.inner().may_be_damaged()
    }

    #[napi(catch_unwind)]
    pub fn children(&self, parent: String) -> Uint32Array {
        self.inner().index.children(&parent).into()
    }

    #[napi(catch_unwind)]
    pub fn label(&self, key: String) -> i64 {
        opt_pos(self.inner().index.labels.get(&key))
    }

    /// Position of the latest session_info entry.
    #[napi(catch_unwind)]
    pub fn last_of_kind(&self, kind: String) -> i64 {
        let kind = Kind::from_type(&kind);
        opt_pos(
            self.inner()
                .index
                .metas
                .iter()
                .rposition(|m| m.kind == kind)
                .map(|p| p as u32),
        )
    }

    #[napi(catch_unwind)]
    pub fn context_entries(&self) -> Result<Uint32Array> {
        let index = &self.inner().index;
        let path = index.leaf_path();
        let entries = index
            .context_entries(&path)
            .map_err(|e| to_napi(e.into()))?;
        Ok(entries.into())
    }

    #[napi(catch_unwind)]
    pub fn context_plan(&self) -> Result<JsContextPlan> {
        let index = &self.inner().index;
        context_plan_js(index, index.leaf_arg(), index.last_entry())
    }

    #[napi(catch_unwind)]
    pub fn tree(&self) -> JsTree {
        tree_js(&self.inner().index)
    }

    #[napi(catch_unwind)]
    pub fn branch_session(
        &mut self,
        env: Env,
        leaf: Option<String>,
        header: JsEntryMeta,
        header_line: Option<String>,
        new_file: Option<String>,
    ) -> Result<JsBranchOutcome> {
        let outcome = self.inner().branch_session(
            leaf.as_deref(),
            header.into(),
            header_line.map(String::into_bytes),
            new_file.map(Into::into),
        );
        self.report_memory(&env);
        let outcome = outcome.map_err(to_napi)?;
        let (sources, ids): (Vec<u32>, Vec<String>) = outcome.labels.into_iter().unzip();
        Ok(JsBranchOutcome {
            kept: outcome.kept.into(),
            parents: outcome
                .parents
                .into_iter()
                .map(|k| k.map(String::from))
                .collect(),
            first_kept: outcome
                .first_kept
                .into_iter()
                .map(|k| k.map(String::from))
                .collect(),
            label_sources: sources.into(),
            label_ids: ids,
            label_parents: outcome
                .label_parents
                .into_iter()
                .map(|k| k.map(String::from))
                .collect(),
        })
    }
}

fn context_plan_js(
    index: &EntryIndex,
    leaf: LeafArg,
    fallback: Option<u32>,
) -> Result<JsContextPlan> {
    let path = index.session_path(leaf, fallback);
    let plan = index.context_plan(&path).map_err(|e| to_napi(e.into()))?;
    Ok(JsContextPlan {
        entries: plan.entries.into(),
        edits: plan.edits,
        thinking: opt_pos(plan.thinking),
        model: opt_pos(plan.model),
    })
}

fn tree_js(index: &EntryIndex) -> JsTree {
    let t = index.tree();
    JsTree {
        positions: t.positions.into(),
        node_of: t.node_of.into(),
        roots: t.roots.into(),
        child_start: t.child_start.into(),
        children: t.children.into(),
        js_sort: t.js_sort.into(),
        label_of: t
            .label_of
            .into_iter()
            .map(|p| p.map_or(-1, |p| p as i32))
            .collect::<Vec<i32>>()
            .into(),
        first_places_pending: t.first_places_pending,
    }
}

/// The context algorithms over entries held by JavaScript (the free functions
/// `buildContextEntries(entries, leafId, byId)` and friends). `metas` are the
/// map's values (or the entries), `keys` the map's keys; `fallback` is the
/// position of `entries[entries.length - 1]` among `metas`.
#[napi(object)]
pub struct JsPlanInput {
    pub metas: Vec<JsEntryMeta>,
    pub keys: Option<Vec<String>>,
    /// 0: leafId null, 1: undefined or falsy, 2: the key in `leaf_key`.
    pub leaf_mode: u32,
    pub leaf_key: Option<String>,
    pub fallback: i64,
}

enum LeafArgOwned {
    Null,
    Default,
    Id(String),
}

struct PlanIndex {
    index: EntryIndex,
    leaf: LeafArgOwned,
    fallback: Option<u32>,
}

impl PlanIndex {
    fn leaf(&self) -> LeafArg<'_> {
        match &self.leaf {
            LeafArgOwned::Null => LeafArg::Null,
            LeafArgOwned::Default => LeafArg::Default,
            LeafArgOwned::Id(k) => LeafArg::Id(k),
        }
    }
}

fn index_for(input: JsPlanInput) -> PlanIndex {
    let metas: Vec<EntryMeta> = input.metas.into_iter().map(Into::into).collect();
    let keys = input
        .keys
        .map(|keys| keys.into_iter().map(Key::from).collect());
    let index = EntryIndex::from_map(metas, keys);
    let leaf = match input.leaf_mode {
        0 => LeafArgOwned::Null,
        2 => LeafArgOwned::Id(input.leaf_key.unwrap_or_default()),
        _ => LeafArgOwned::Default,
    };
    PlanIndex {
        index,
        leaf,
        fallback: (input.fallback >= 0).then_some(input.fallback as u32),
    }
}

#[napi(catch_unwind)]
pub fn plan_context_entries(input: JsPlanInput) -> Result<Uint32Array> {
    let plan = index_for(input);
    let path = plan.index.session_path(plan.leaf(), plan.fallback);
    Ok(plan
        .index
        .context_entries(&path)
        .map_err(|e| to_napi(e.into()))?
        .into())
}

#[napi(catch_unwind)]
pub fn plan_projection(input: JsPlanInput) -> Result<JsContextPlan> {
    let plan = index_for(input);
    context_plan_js(&plan.index, plan.leaf(), plan.fallback)
}

/// `readSessionHeader(path)`: the header line, `null` when the first entry is
/// not a header, or `undefined`-like "too long" as the string "\0toolong".
#[napi(catch_unwind)]
pub fn read_session_header(path: String) -> Result<Option<String>> {
    match session::read_header(std::path::Path::new(&path)).map_err(io_to_napi)? {
        HeaderScan::Found(line) => Ok(Some(lossy(&line))),
        HeaderScan::NotFound => Ok(None),
        HeaderScan::TooLong => Ok(Some("\0toolong".to_string())),
    }
}

/// `loadEntriesFromFile(path)`: the lines to parse into entries (see `loader`).
#[napi(catch_unwind)]
pub fn load_entry_lines(path: String) -> Result<Vec<String>> {
    crate::session::loader::load_entry_lines(std::path::Path::new(&path)).map_err(io_to_napi)
}

#[napi(object)]
pub struct JsMigrationStep {
    /// "header" or "entry".
    pub kind: String,
    pub new_id: Option<String>,
    pub parent: Option<String>,
    /// "", "delete", "set", "undefined".
    pub first_kept: String,
    pub first_kept_id: Option<String>,
}

#[napi(object)]
pub struct JsMigrationPlan {
    pub v1: Option<Vec<JsMigrationStep>>,
    pub v2: bool,
}

/// The migration plan for entries held by JavaScript; `null` when current.
#[napi(catch_unwind)]
pub fn plan_migration(metas: Vec<JsEntryMeta>) -> Option<JsMigrationPlan> {
    let metas: Vec<EntryMeta> = metas.into_iter().map(Into::into).collect();
    let plan = migrate::plan(&metas)?;
    Some(JsMigrationPlan {
        v1: plan.v1.map(|changes| {
            changes
                .into_iter()
                .map(|c| match c {
                    V1Change::Header => JsMigrationStep {
                        kind: "header".into(),
                        new_id: None,
                        parent: None,
                        first_kept: String::new(),
                        first_kept_id: None,
                    },
                    V1Change::Entry {
                        new_id,
                        parent,
                        first_kept,
                    } => {
                        let (mode, id) = match first_kept {
                            None => ("", None),
                            Some(FirstKept::DeleteIndex) => ("delete", None),
                            Some(FirstKept::SetId(id)) => ("set", Some(id)),
                            Some(FirstKept::SetUndefined) => ("undefined", None),
                        };
                        JsMigrationStep {
                            kind: "entry".into(),
                            new_id: Some(new_id),
                            parent,
                            first_kept: mode.into(),
                            first_kept_id: id,
                        }
                    }
                })
                .collect()
        }),
        v2: plan.v2,
    })
}

#[napi(catch_unwind)]
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().hyphenated().to_string()
}

/// `loadEntriesFromFile` + the fork's copy: writes `header_line` and every entry
/// of `source` (as `JSON.stringify` would write it) to the new file `target`,
/// and returns the session loaded from it (`null` when the source holds no
/// session). Without a target, only checks the source.
#[napi(catch_unwind)]
pub fn fork_session_file(
    source: String,
    dir: String,
    target: Option<String>,
    header_line: String,
) -> Result<Option<NativeSession>> {
    let forked = session::fork_file(
        std::path::Path::new(&source),
        std::path::Path::new(&dir),
        target.as_deref().map(std::path::Path::new),
        header_line.as_bytes(),
    )
    .map_err(to_napi)?;
    Ok(forked.map(NativeSession::with))
}

/// Bytes of lines (UTF-8, or lossily decoded as the reference decodes a file) as
/// a text V8 copies without decoding it on the main thread: parsed at once, then
/// garbage.
fn utf8_text(bytes: Vec<u8>) -> super::text::Copied {
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    super::text::Copied::new(text)
}
