//! The only module that knows about napi: it translates between JavaScript values
//! and the core types, and nothing else.

use napi::bindgen_prelude::*;
use napi::JsString;
use napi_derive::napi;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::listing;
use crate::catalog::search;
use crate::catalog::summaries;
use crate::catalog::{usage, usage_report};
use crate::format::entry::{EntryMeta, Key, Kind, Role};
use crate::format::migrate::{self, FirstKept, V1Change};
use crate::session::index::{EntryIndex, LeafArg};
use crate::session::store::IoFailure;
use crate::session::{self, HeaderScan, OpenOutcome, PersistPlan, Session, SessionError};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;

/// Errors cross as a message the JavaScript layer turns into the error the
/// reference would throw (`lib/errors.js`): a tag, then NUL-separated fields.
fn to_napi(err: SessionError) -> Error {
    let reason = match err {
        SessionError::Io(IoFailure {
            errno,
            syscall,
            path,
        }) => format!("\0io\0{errno}\0{syscall}\0{}", path.unwrap_or_default()),
        SessionError::Type(m) => format!("\0type\0{m}"),
        SessionError::EntryNotFound => "\0notfound".to_string(),
        SessionError::Message(m) => m,
    };
    Error::new(Status::GenericFailure, reason)
}

fn io_to_napi(err: IoFailure) -> Error {
    to_napi(SessionError::Io(err))
}

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

impl From<JsEntryMeta> for EntryMeta {
    fn from(m: JsEntryMeta) -> EntryMeta {
        let kind = Kind::from_type(&m.kind);
        let role = match (kind, m.role.as_str()) {
            (Kind::Message, "\0undefined") => Role::MessageUndefined,
            (Kind::Message, "\0null") => Role::MessageNull,
            (Kind::Message, r) => Role::parse(r),
            _ => Role::NotMessage,
        };
        EntryMeta {
            kind,
            id: m.id.into(),
            id_is_string: m.id_is_string,
            parent: m.parent.into(),
            parent_truthy: m.parent_truthy,
            role,
            target: m.target.into(),
            label_truthy: m.label_truthy,
            first_kept: m.first_kept.into(),
            time: m.time.filter(|t| t.is_finite()),
            version: m.version,
            first_kept_index: m.first_kept_index,
        }
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

fn opt_pos(p: Option<u32>) -> i64 {
    p.map_or(-1, |p| p as i64)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A JS string from bytes that are mostly ASCII JSON: an ASCII text becomes a
/// one-byte string without decoding; anything else is decoded as UTF-8, with
/// invalid bytes replaced as the reference's decoder does.
fn js_string(env: &Env, bytes: Vec<u8>) -> Result<JsString<'_>> {
    if bytes.is_ascii() {
        return env.create_string_latin1(&bytes);
    }
    match String::from_utf8(bytes) {
        Ok(text) => env.create_string_from_std(text),
        Err(e) => env.create_string_from_std(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
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
    fn inner(&self) -> RefMut<'_, Session> {
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

    /// "missing", "empty", "loaded" or "migrated".
    #[napi(catch_unwind)]
    pub fn open(&mut self, env: Env, path: String) -> Result<String> {
        let outcome = self.inner().open(std::path::Path::new(&path));
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
        let role = if !is_message {
            Role::NotMessage
        } else {
            match role.as_str() {
                "\0undefined" => Role::MessageUndefined,
                "\0null" => Role::MessageNull,
                r => Role::parse(r),
            }
        };
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

    #[napi(catch_unwind)]
    pub fn append_line(&mut self, env: Env, line: String) -> Result<u32> {
        let appended = self.inner().append_line(line.into_bytes());
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

    /// `[asciiLines, otherLines, mask]`: see `Session::lines_split`.
    #[napi(catch_unwind)]
    pub fn lines_split<'env>(&self, env: &'env Env, positions: Uint32Array) -> Result<Array<'env>> {
        let split = self.inner().lines_split(&positions).map_err(to_napi)?;
        let mut parts = env.create_array(3)?;
        parts.set(0, env.create_string_latin1(&split.ascii)?)?;
        parts.set(1, js_string(env, split.other)?)?;
        parts.set(2, Uint8Array::from(split.mask))?;
        Ok(parts)
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

/// Texts come as strings when they are UTF-8 (nearly always), or else as
/// JSON literals (`...Literal`): only JSON escapes carry lone surrogates to
/// JavaScript intact.
#[napi(object, object_from_js = false)]
pub struct JsSessionSummary {
    pub header: String,
    pub message_count: u32,
    #[napi(ts_type = "string")]
    pub first_message: Option<Text>,
    pub first_message_literal: Option<String>,
    #[napi(ts_type = "string")]
    pub all_messages_text: Option<Text>,
    pub all_messages_text_literal: Option<String>,
    pub last_activity: Option<f64>,
    pub unparsed_times: Vec<String>,
    /// A JSON literal.
    pub name: Option<String>,
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

/// Panics on purpose, so the tests can check that a Rust panic reaches
/// JavaScript as an Error instead of aborting the process.
#[napi(catch_unwind)]
pub fn panic_for_test(message: String) {
    panic!("{message}");
}

static SUMMARY_CACHE: std::sync::LazyLock<summaries::SummaryCache> =
    std::sync::LazyLock::new(summaries::SummaryCache::default);

/// The folder of the persistent listing cache, if one is configured, and
/// whether its file was read into this process yet.
static CACHE_DIR: std::sync::Mutex<Option<(std::path::PathBuf, bool)>> =
    std::sync::Mutex::new(None);

/// Which implementation of the OS layer this build has: "linux" (inotify,
/// openat, copy_file_range) or "portable" (std only, as macOS and Windows).
#[napi]
pub fn io_implementation() -> &'static str {
    crate::os::IMPLEMENTATION
}

/// Sets (or with `null`, clears) the folder of the persistent listing cache.
/// The JavaScript layer checks that it is not inside pi's session folders.
#[napi(catch_unwind)]
pub fn set_listing_cache_dir(dir: Option<String>) {
    if let Ok(mut slot) = CACHE_DIR.lock() {
        *slot = dir.map(|d| (d.into(), false));
    }
}

/// The configured cache folder, reading its file the first time.
fn cache_dir_loaded() -> Option<std::path::PathBuf> {
    let mut slot = CACHE_DIR.lock().ok()?;
    let (dir, loaded) = slot.as_mut()?;
    if !*loaded {
        SUMMARY_CACHE.load_from(dir);
        *loaded = true;
    }
    Some(dir.clone())
}

/// One file's listing result, a batch of unchanged files (`index` -2),
/// `listAll()`'s candidates (`index` -3, before any result), or the end of the
/// scan (`index` -1).
#[napi(object, object_from_js = false)]
pub struct JsScanResult {
    pub index: i64,
    /// The file's name, in a scan of one folder.
    pub name: Option<String>,
    pub summary: Option<JsSessionSummary>,
    pub mtime_ms: Option<f64>,
    /// The file could not be read (the reference's summary is then null).
    pub failed: bool,
    /// See `summaries::FileResult`.
    pub token: f64,
    pub unchanged: Option<JsUnchanged>,
    pub candidates: Option<JsCandidates>,
    pub read: Option<JsReadBatch>,
}

/// Files whose summaries the caller holds (their tokens were in `known`):
/// reported together, one call into JavaScript for many files.
#[napi(object)]
pub struct JsUnchanged {
    pub indices: Uint32Array,
    pub tokens: Float64Array,
}

/// Files read (or taken from the listing cache) whose summaries hold nothing
/// unusual: reported together, a column per field, so that JavaScript gets a
/// few arrays per batch instead of two objects of ten properties per file.
/// Files that failed, are not sessions, or have a text that is not UTF-8 or a
/// time only JavaScript can parse come one at a time, as before.
#[napi(object, object_from_js = false)]
pub struct JsReadBatch {
    pub indices: Uint32Array,
    /// Each file's name, in a scan of one folder.
    pub names: Option<Vec<String>>,
    pub tokens: Float64Array,
    pub mtime_ms: Float64Array,
    pub headers: Vec<String>,
    pub message_counts: Uint32Array,
    #[napi(ts_type = "string[]")]
    pub first_messages: Vec<Text>,
    /// Left out of a listing without texts.
    #[napi(ts_type = "string[] | undefined")]
    pub all_messages_texts: Option<Vec<Text>>,
    /// NaN where there was none.
    pub last_activity: Float64Array,
    /// JSON literals, null where the session has no name.
    pub session_names: Vec<Option<String>>,
}

/// `listAll()`'s files in the order they are scanned and reported (see
/// `discovery::folder_candidates`).
#[napi(object)]
pub struct JsCandidates {
    /// Index of each file's folder in the folders asked for.
    pub folders: Uint32Array,
    pub names: Vec<String>,
    /// `stats.mtimeMs`, NaN where the stat failed.
    pub mtime_ms: Float64Array,
}

impl JsScanResult {
    fn end() -> JsScanResult {
        JsScanResult {
            index: -1,
            name: None,
            summary: None,
            mtime_ms: None,
            failed: false,
            token: 0.0,
            unchanged: None,
            candidates: None,
            read: None,
        }
    }
}

/// A text as a string, or else as a JSON literal.
fn text_js(text: Vec<u8>) -> (Option<Text>, Option<String>) {
    match String::from_utf8(text) {
        Ok(text) => (Some(Text::new(text)), None),
        Err(e) => (
            None,
            Some(crate::format::jsvalue::text_literal(e.as_bytes())),
        ),
    }
}

/// A listing text for JavaScript. Long texts (a listing's message texts run to
/// tens of MB) become external strings, encoded here on the scan thread as V8
/// stores them (Latin-1 where every character fits, else UTF-16): V8 then
/// neither decodes and copies them on the main thread nor moves them in each
/// garbage collection while the listing runs.
pub enum Text {
    Plain(String),
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

/// From this length on, an external string costs less than a copy.
const EXTERNAL_TEXT_FROM: usize = 1024;

impl Text {
    fn new(text: String) -> Text {
        use encoding_rs::mem;
        // V8 strings stop short of 2^29 characters.
        if text.len() < EXTERNAL_TEXT_FROM || text.len() >= 1 << 28 || external_strings().is_none()
        {
            return Text::Plain(text);
        }
        if mem::is_ascii(text.as_bytes()) {
            let len = text.len();
            return Text::Latin1(fitted(text.into_bytes(), len));
        }
        // Both conversions write at most one unit per byte of UTF-8.
        if mem::is_str_latin1(&text) {
            let mut latin1 = vec![0; text.len()];
            let written = mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut latin1);
            return Text::Latin1(fitted(latin1, written));
        }
        let mut utf16 = vec![0; text.len()];
        let written = mem::convert_str_to_utf16(&text, &mut utf16);
        Text::Utf16(fitted(utf16, written))
    }
}

/// `units` cut to its first `len`, its memory given back where much is left
/// over (a text grown by doubling; text in scripts of three UTF-8 bytes a
/// character).
fn fitted<T>(mut units: Vec<T>, len: usize) -> Vec<T> {
    units.truncate(len);
    if units.capacity() - len > len / 4 {
        units.shrink_to_fit();
    }
    units
}

/// `node_api_create_external_string_latin1` and `_utf16`.
type CreateExternal<T> = unsafe extern "C" fn(
    sys::napi_env,
    *mut T,
    usize,
    sys::napi_finalize,
    *mut std::ffi::c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

struct ExternalStrings {
    /// Takes `char*`; `u8` here, the same pointer.
    latin1: CreateExternal<u8>,
    utf16: CreateExternal<u16>,
}

/// Node-API's external strings (Node-API 10; experimental from Node 20.4),
/// looked up at run time: a link to them would keep the addon from loading in
/// a Node without them.
fn external_strings() -> Option<&'static ExternalStrings> {
    static FOUND: std::sync::OnceLock<Option<ExternalStrings>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let find = crate::os::host_symbol;
            let latin1 = find(c"node_api_create_external_string_latin1")?;
            let utf16 = find(c"node_api_create_external_string_utf16")?;
            // SAFETY: the symbols have the signatures Node-API documents.
            unsafe {
                Some(ExternalStrings {
                    latin1: std::mem::transmute::<*mut std::ffi::c_void, CreateExternal<u8>>(
                        latin1,
                    ),
                    utf16: std::mem::transmute::<*mut std::ffi::c_void, CreateExternal<u16>>(utf16),
                })
            }
        })
        .as_ref()
}

/// Frees an external text's characters once V8 no longer needs them.
unsafe extern "C" fn free_text<T>(
    _env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the box `external_text` leaked, given back once.
    drop(unsafe { Box::from_raw(hint as *mut Vec<T>) });
}

/// A string over `chars`, which Node frees with `free_text` when the string
/// is collected (or at once, if it copied them).
unsafe fn external_text<T>(
    env: sys::napi_env,
    create: CreateExternal<T>,
    mut chars: Vec<T>,
    copy: impl FnOnce(*const T, usize, *mut sys::napi_value) -> sys::napi_status,
) -> Result<sys::napi_value> {
    let (ptr, len) = (chars.as_mut_ptr(), chars.len());
    let hint = Box::into_raw(Box::new(chars));
    let mut result = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: the characters live until `free_text` runs.
    let status = unsafe {
        create(
            env,
            ptr,
            len,
            Some(free_text::<T>),
            hint.cast(),
            &mut result,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        return Ok(result);
    }
    // On failure Node may still hold the characters (it frees them when the
    // environment ends): copy them rather than take them back.
    // SAFETY: nothing freed them.
    copied_text(unsafe { std::slice::from_raw_parts(ptr, len) }, copy)
}

/// A string copied from `chars` by `copy`.
fn copied_text<T>(
    chars: &[T],
    copy: impl FnOnce(*const T, usize, *mut sys::napi_value) -> sys::napi_status,
) -> Result<sys::napi_value> {
    let mut result = std::ptr::null_mut();
    check_status!(
        copy(chars.as_ptr(), chars.len(), &mut result),
        "Failed to create a listing text"
    )?;
    Ok(result)
}

impl ToNapiValue for Text {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let latin1 = |p: *const u8, n: usize, r: *mut sys::napi_value| {
            // SAFETY: `p` points to `n` valid bytes (nothing freed them).
            unsafe { sys::napi_create_string_latin1(env, p.cast(), n as isize, r) }
        };
        let utf16 = |p: *const u16, n: usize, r: *mut sys::napi_value| {
            // SAFETY: as above, `n` UTF-16 units.
            unsafe { sys::napi_create_string_utf16(env, p, n as isize, r) }
        };
        // `Text::new` chose an external form only where the functions exist;
        // without them (not reached) the characters are copied.
        let api = external_strings();
        // SAFETY: napi calls on the caller's env.
        unsafe {
            match val {
                Text::Plain(text) => String::to_napi_value(env, text),
                Text::Latin1(chars) => match api {
                    Some(api) => external_text(env, api.latin1, chars, latin1),
                    None => copied_text(&chars, latin1),
                },
                Text::Utf16(chars) => match api {
                    Some(api) => external_text(env, api.utf16, chars, utf16),
                    None => copied_text(&chars, utf16),
                },
            }
        }
    }
}

fn summary_js(s: listing::SessionSummary) -> JsSessionSummary {
    let (first_message, first_message_literal) = text_js(s.first_message);
    let (all_messages_text, all_messages_text_literal) = text_js(s.all_messages_text);
    JsSessionSummary {
        header: s.header,
        message_count: s.message_count,
        first_message,
        first_message_literal,
        all_messages_text,
        all_messages_text_literal,
        last_activity: s.last_activity,
        unparsed_times: s.unparsed_times,
        name: s.name,
    }
}

/// Cancels a running scan.
#[napi]
pub struct ScanHandle {
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    files: u32,
}

#[napi]
impl ScanHandle {
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many files the scan reports (before the end mark).
    #[napi(getter)]
    pub fn files(&self) -> u32 {
        self.files
    }
}

type ScanCallback = ThreadsafeFunction<JsScanResult, (), JsScanResult, Status, false>;

fn known_tokens(known: &[f64]) -> summaries::Known {
    known.iter().map(|&t| t as u64).collect()
}

/// `listAll()`'s scan: the `.jsonl` files of `dirs`, found, stat'ed and
/// ordered on the scan's own thread (see `discovery::folder_candidates`) and
/// reported first as one message of candidates (index -3); then results by
/// index in that order as files finish, unchanged ones (their token in
/// `known`) in batches; then index -1. With `texts` false, summaries come
/// without `allMessagesText` (for callers that never show it).
#[napi(catch_unwind)]
pub fn scan_session_folders(
    dirs: Vec<String>,
    known: Float64Array,
    on_result: ScanCallback,
    texts: Option<bool>,
) -> ScanHandle {
    let dirs = dirs.into_iter().map(Into::into).collect();
    let texts = texts.unwrap_or(true);
    spawn_scan(
        ScanSource::Folders(dirs),
        known_tokens(&known),
        texts,
        on_result,
    )
}

/// `list()`'s scan of a whole folder: the `.jsonl` names of `dir` in the order
/// `readdir` gives them (sorted by bytes), read newest name first. Each result
/// carries its file's name and its index in that order (batches of unchanged
/// files carry indices only); `null` if the folder cannot be read. JavaScript
/// then holds no name or path before the first result arrives. `texts` as
/// in `scan_session_folders`.
#[napi(catch_unwind)]
pub fn scan_session_folder(
    dir: String,
    known: Float64Array,
    on_result: ScanCallback,
    texts: Option<bool>,
) -> Option<ScanHandle> {
    let dir = std::path::PathBuf::from(dir);
    let (names, view) = crate::catalog::discovery::watched_session_names(&dir).ok()?;
    let known = known_tokens(&known);
    let texts = texts.unwrap_or(true);
    Some(spawn_scan(
        ScanSource::Folder(dir, names, view),
        known,
        texts,
        on_result,
    ))
}

/// How many unchanged files, or how long, a batch collects before it is sent.
const BATCH_FILES: usize = 2048;
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(4);
/// The first batch is sent sooner: JavaScript is idle until it arrives.
const FIRST_BATCH_FILES: usize = 128;

#[derive(Default)]
struct UnchangedBatch {
    indices: Vec<u32>,
    tokens: Vec<f64>,
    since: Option<std::time::Instant>,
    sent: bool,
}

impl UnchangedBatch {
    /// Adds a file; returns the batch to send when it is due.
    fn add(&mut self, index: usize, token: u64) -> Option<JsScanResult> {
        self.indices.push(index as u32);
        self.tokens.push(token as f64);
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        let files = if self.sent {
            BATCH_FILES
        } else {
            FIRST_BATCH_FILES
        };
        // The clock read every 16 files: a file costs less than reading it.
        let due = self.indices.len() >= files
            || (self.indices.len().is_multiple_of(16) && since.elapsed() >= BATCH_WAIT);
        due.then(|| self.take()).flatten()
    }

    fn take(&mut self) -> Option<JsScanResult> {
        if self.indices.is_empty() {
            return None;
        }
        self.since = None;
        self.sent = true;
        Some(JsScanResult {
            index: -2,
            unchanged: Some(JsUnchanged {
                indices: std::mem::take(&mut self.indices).into(),
                tokens: std::mem::take(&mut self.tokens).into(),
            }),
            ..JsScanResult::end()
        })
    }
}

/// Read results for one `JsReadBatch`, sent on the same terms as unchanged
/// files, except that the first is sent alone at once (the first progress
/// call waits for it) and the clock is read at every file (reads are slow).
#[derive(Default)]
struct ReadBatch {
    indices: Vec<u32>,
    names: Vec<String>,
    tokens: Vec<f64>,
    mtime_ms: Vec<f64>,
    headers: Vec<String>,
    message_counts: Vec<u32>,
    first_messages: Vec<Text>,
    all_messages_texts: Vec<Text>,
    last_activity: Vec<f64>,
    session_names: Vec<Option<String>>,
    since: Option<std::time::Instant>,
    sent: bool,
    /// The listing hands over message texts (see `scan_session_folders`).
    texts: bool,
}

/// One file's plain summary in the forms JavaScript gets, made on the scan
/// thread before the batch's lock is taken (encoding a long text is the
/// costly part, and the scan threads do it side by side).
struct ReadRow {
    index: u32,
    name: Option<String>,
    token: f64,
    mtime_ms: f64,
    header: String,
    message_count: u32,
    first_message: Text,
    all_messages_text: Option<Text>,
    last_activity: f64,
    session_name: Option<String>,
}

impl ReadRow {
    /// Whether a summary holds nothing unusual: texts in UTF-8 (a JSON
    /// literal otherwise), no times only JavaScript can parse.
    fn plain(summary: &listing::SessionSummary, texts: bool) -> bool {
        summary.unparsed_times.is_empty()
            && std::str::from_utf8(&summary.first_message).is_ok()
            && (!texts || std::str::from_utf8(&summary.all_messages_text).is_ok())
    }

    /// The row of a summary that is `plain`.
    fn new(
        index: usize,
        name: Option<String>,
        summary: listing::SessionSummary,
        mtime_ms: f64,
        token: u64,
        texts: bool,
    ) -> ReadRow {
        let text = |bytes: Vec<u8>| Text::new(String::from_utf8(bytes).unwrap_or_default());
        ReadRow {
            index: index as u32,
            name,
            token: token as f64,
            mtime_ms,
            header: summary.header,
            message_count: summary.message_count,
            first_message: text(summary.first_message),
            all_messages_text: texts.then(|| text(summary.all_messages_text)),
            last_activity: summary.last_activity.unwrap_or(f64::NAN),
            session_name: summary.name,
        }
    }
}

impl ReadBatch {
    /// Adds a file; returns the batch to send when it is due.
    fn add(&mut self, row: ReadRow) -> Option<JsScanResult> {
        self.indices.push(row.index);
        self.names.extend(row.name);
        self.tokens.push(row.token);
        self.mtime_ms.push(row.mtime_ms);
        self.headers.push(row.header);
        self.message_counts.push(row.message_count);
        self.first_messages.push(row.first_message);
        self.all_messages_texts.extend(row.all_messages_text);
        self.last_activity.push(row.last_activity);
        self.session_names.push(row.session_name);
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        let due = !self.sent || self.indices.len() >= BATCH_FILES || since.elapsed() >= BATCH_WAIT;
        due.then(|| self.take()).flatten()
    }

    fn take(&mut self) -> Option<JsScanResult> {
        if self.indices.is_empty() {
            return None;
        }
        self.since = None;
        self.sent = true;
        let names = std::mem::take(&mut self.names);
        Some(JsScanResult {
            index: -4,
            read: Some(JsReadBatch {
                names: (!names.is_empty()).then_some(names),
                indices: std::mem::take(&mut self.indices).into(),
                tokens: std::mem::take(&mut self.tokens).into(),
                mtime_ms: std::mem::take(&mut self.mtime_ms).into(),
                headers: std::mem::take(&mut self.headers),
                message_counts: std::mem::take(&mut self.message_counts).into(),
                first_messages: std::mem::take(&mut self.first_messages),
                all_messages_texts: self
                    .texts
                    .then(|| std::mem::take(&mut self.all_messages_texts)),
                last_activity: std::mem::take(&mut self.last_activity).into(),
                session_names: std::mem::take(&mut self.session_names),
            }),
            ..JsScanResult::end()
        })
    }
}

enum ScanSource {
    /// A folder and its names in `readdir` order: read last name first,
    /// results reported by name and index in that order.
    Folder(std::path::PathBuf, Vec<String>, crate::catalog::watch::View),
    /// `listAll()`'s folders; candidates are found on the scan's thread.
    Folders(Vec<std::path::PathBuf>),
}

/// What a scan reads: folders, and each file as (folder, name) in scan order.
struct ScanPlan {
    dirs: Vec<std::path::PathBuf>,
    files: Vec<(u32, String)>,
    /// The folders read whole (their other cached files are gone).
    read: Vec<bool>,
    /// Results are reported by `last - i` with the file's name (one folder).
    reversed: bool,
    /// Per folder, what its watch vouches for.
    views: Vec<crate::catalog::watch::View>,
    /// Each file's place among its folder's names, and each folder's count
    /// of names: a folder's memo keeps tokens in that order.
    places: Vec<u32>,
    sizes: Vec<u32>,
}

impl ScanPlan {
    /// The path of the file at plan position `p`.
    fn path_of(&self, p: usize) -> std::path::PathBuf {
        let (folder, name) = &self.files[p];
        self.dirs[*folder as usize].join(name)
    }
}

impl ScanSource {
    /// Works out the files to read; `listAll()`'s candidates are sent first.
    fn plan(self, send: &dyn Fn(JsScanResult)) -> ScanPlan {
        match self {
            ScanSource::Folder(dir, names, view) => ScanPlan {
                dirs: vec![dir],
                places: (0..names.len() as u32).rev().collect(),
                sizes: vec![names.len() as u32],
                files: names.into_iter().rev().map(|n| (0, n)).collect(),
                read: vec![true],
                reversed: true,
                views: vec![view],
            },
            ScanSource::Folders(dirs) => {
                let (candidates, read, views) = crate::catalog::discovery::folder_candidates(&dirs);
                send(JsScanResult {
                    index: -3,
                    candidates: Some(JsCandidates {
                        folders: candidates
                            .iter()
                            .map(|c| c.folder)
                            .collect::<Vec<_>>()
                            .into(),
                        names: candidates.iter().map(|c| c.name.clone()).collect(),
                        mtime_ms: candidates
                            .iter()
                            .map(|c| c.mtime_ms.unwrap_or(f64::NAN))
                            .collect::<Vec<_>>()
                            .into(),
                    }),
                    ..JsScanResult::end()
                });
                let mut sizes = vec![0u32; dirs.len()];
                candidates
                    .iter()
                    .for_each(|c| sizes[c.folder as usize] += 1);
                ScanPlan {
                    dirs,
                    places: candidates.iter().map(|c| c.index).collect(),
                    sizes,
                    files: candidates.into_iter().map(|c| (c.folder, c.name)).collect(),
                    read,
                    reversed: false,
                    views,
                }
            }
        }
    }
}

fn spawn_scan(
    source: ScanSource,
    known: summaries::Known,
    texts: bool,
    on_result: ScanCallback,
) -> ScanHandle {
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let files = match &source {
        ScanSource::Folder(_, names, _) => names.len() as u32,
        ScanSource::Folders(_) => 0,
    };
    std::thread::spawn(move || {
        let send = |message| {
            on_result.call(message, ThreadsafeFunctionCallMode::NonBlocking);
        };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let ScanSource::Folder(_, names, view) = &source {
                let _ = cache_dir_loaded();
                if let Some(memo) = unchanged_folder(view, names.len(), &known) {
                    send_unchanged(&send, &memo.tokens);
                    send(JsScanResult::end());
                    return;
                }
            }
            // The persistent cache loads while listAll()'s folders are read.
            let (persistent, mut plan) = std::thread::scope(|scope| {
                let loading = scope.spawn(cache_dir_loaded);
                let plan = source.plan(&send);
                (loading.join().ok().flatten(), plan)
            });
            // listAll()'s folders a memo answers for (list()'s was asked above).
            let memos: Vec<Option<std::sync::Arc<crate::catalog::watch::FolderMemo>>> = plan
                .views
                .iter()
                .zip(&plan.sizes)
                .map(|(view, &size)| {
                    (!plan.reversed)
                        .then(|| unchanged_folder(view, size as usize, &known))
                        .flatten()
                })
                .collect();
            let memo_of = |p: usize| memos[plan.files[p].0 as usize].as_ref();
            // The plan's files that are read: those of folders without a memo.
            let scanned: Vec<usize> = (0..plan.files.len())
                .filter(|&p| memo_of(p).is_none())
                .collect();
            let paths: Vec<std::path::PathBuf> = scanned.iter().map(|&p| plan.path_of(p)).collect();
            // Files are stat'ed relative to their folder, held open.
            let views = std::mem::take(&mut plan.views);
            let folders = crate::catalog::discovery::HeldFolders::open(&plan.dirs, &plan.read)
                .with_views(views);
            let stat_of = |i: usize| {
                let (folder, name) = &plan.files[scanned[i]];
                folders.stat(*folder, name)
            };
            let last = plan.files.len().saturating_sub(1);
            let index_of = |p: usize| if plan.reversed { last - p } else { p };
            // Every file's token, for its folder's memo (watch::FolderMemo).
            let tokens: Vec<AtomicU64> = plan.files.iter().map(|_| AtomicU64::new(0)).collect();
            let batch = std::sync::Mutex::new(UnchangedBatch::default());
            for (p, slot) in tokens.iter().enumerate() {
                if let Some(memo) = memo_of(p) {
                    let token = memo.tokens[plan.places[p] as usize];
                    slot.store(token, Ordering::Relaxed);
                    let due = batch
                        .lock()
                        .ok()
                        .and_then(|mut b| b.add(index_of(p), token));
                    if let Some(message) = due {
                        send(message);
                    }
                }
            }
            let reads = std::sync::Mutex::new(ReadBatch {
                texts,
                ..ReadBatch::default()
            });
            summaries::scan(
                &SUMMARY_CACHE,
                &paths,
                &stat_of,
                &known,
                texts,
                threads,
                &flag,
                &|i, mut result| {
                    let p = scanned[i];
                    let index = index_of(p);
                    if let Ok(r) = &result {
                        tokens[p].store(r.token, Ordering::Relaxed);
                        if r.unchanged {
                            let due = batch.lock().ok().and_then(|mut b| b.add(index, r.token));
                            if let Some(message) = due {
                                send(message);
                            }
                            return;
                        }
                    }
                    let name = plan.reversed.then(|| plan.files[p].1.clone());
                    if let Ok(r) = &mut result {
                        if r.summary.as_ref().is_some_and(|s| ReadRow::plain(s, texts)) {
                            if let Some(summary) = r.summary.take() {
                                let row =
                                    ReadRow::new(index, name, summary, r.mtime_ms, r.token, texts);
                                let due = reads.lock().ok().and_then(|mut b| b.add(row));
                                if let Some(message) = due {
                                    send(message);
                                }
                            }
                            return;
                        }
                    }
                    send(match result {
                        Ok(r) => JsScanResult {
                            index: index as i64,
                            name,
                            summary: r.summary.map(summary_js),
                            mtime_ms: Some(r.mtime_ms),
                            token: r.token as f64,
                            ..JsScanResult::end()
                        },
                        Err(_) => JsScanResult {
                            index: index as i64,
                            name,
                            failed: true,
                            ..JsScanResult::end()
                        },
                    });
                },
            );
            // The watches get the stats this scan learned before the caller
            // has its answer, so that a listing it starts next finds them
            // (else it stats every file again).
            let mut views = folders.into_views();
            views
                .iter_mut()
                .for_each(crate::catalog::watch::View::commit);
            if let Some(message) = batch.lock().ok().and_then(|mut b| b.take()) {
                send(message);
            }
            if let Some(message) = reads.lock().ok().and_then(|mut b| b.take()) {
                send(message);
            }
            send(JsScanResult::end());
            // The folders' memos, kept before the clean-up below so that a
            // listing the caller starts next mostly finds them. Nothing read,
            // nothing changed: the memos used still hold.
            if !scanned.is_empty() {
                let tokens: Vec<u64> = tokens.into_iter().map(AtomicU64::into_inner).collect();
                keep_memos(&plan, &views, &tokens, &scanned, &paths);
            }
            // Files no longer in the folders just read drop out of the cache,
            // after the caller has its answer; then the persistent copy is
            // brought up to date. A failure to write it only costs the next
            // process a cold listing.
            // A folder a memo answered for had no event: it lost no file.
            let listed: Vec<&std::path::Path> = plan
                .dirs
                .iter()
                .zip(&plan.read)
                .zip(&memos)
                .filter(|((_, &read), memo)| read && memo.is_none())
                .map(|((dir, _), _)| dir.as_path())
                .collect();
            SUMMARY_CACHE.retain_listed(&listed, &paths);
            drop(views);
            if let Some(dir) = persistent {
                if SUMMARY_CACHE.take_dirty() {
                    let _ = SUMMARY_CACHE.save_to(&dir);
                }
            }
        }))
        .inspect_err(|_| send(JsScanResult::end()));
    });
    ScanHandle { cancel, files }
}

/// The memo of a folder no event touched since its last complete listing,
/// where the listing cache is as that listing left it and the caller holds
/// every file's summary: the listing's answer is then known without a look
/// at any file.
fn unchanged_folder(
    view: &crate::catalog::watch::View,
    files: usize,
    known: &summaries::Known,
) -> Option<std::sync::Arc<crate::catalog::watch::FolderMemo>> {
    let memo = view.memo()?;
    (memo.tokens.len() == files
        && memo.generation == SUMMARY_CACHE.generation()
        && memo.tokens.iter().all(|token| known.contains(token)))
    .then_some(memo)
}

/// Each folder's memo from a complete scan: its files' tokens in name order,
/// if the listing cache holds exactly those versions. `paths` are those of
/// the `scanned` files (ascending plan positions); the others are joined here.
fn keep_memos(
    plan: &ScanPlan,
    views: &[crate::catalog::watch::View],
    tokens: &[u64],
    scanned: &[usize],
    paths: &[std::path::PathBuf],
) {
    use std::borrow::Cow;
    let mut names_order: Vec<Vec<u64>> = plan.sizes.iter().map(|&n| vec![0; n as usize]).collect();
    let mut versions: Vec<Vec<(Cow<std::path::Path>, u64)>> = plan
        .sizes
        .iter()
        .map(|&n| Vec::with_capacity(n as usize))
        .collect();
    let mut read = scanned.iter().zip(paths).peekable();
    for (p, &token) in tokens.iter().enumerate() {
        let folder = plan.files[p].0 as usize;
        names_order[folder][plan.places[p] as usize] = token;
        let path = match read.next_if(|(&s, _)| s == p) {
            Some((_, path)) => Cow::Borrowed(path.as_path()),
            None => Cow::Owned(plan.path_of(p)),
        };
        versions[folder].push((path, token));
    }
    for ((view, tokens), versions) in views.iter().zip(names_order).zip(versions) {
        if tokens.is_empty() {
            continue;
        }
        if let Some(generation) = SUMMARY_CACHE.versions_of(versions) {
            view.keep_memo(crate::catalog::watch::FolderMemo { tokens, generation });
        }
    }
}

/// Every file of a folder as unchanged, last name first as a scan reads them.
fn send_unchanged(send: &dyn Fn(JsScanResult), tokens: &[u64]) {
    let mut batch = UnchangedBatch::default();
    for (index, &token) in tokens.iter().enumerate().rev() {
        if let Some(message) = batch.add(index, token) {
            send(message);
        }
    }
    if let Some(message) = batch.take() {
        send(message);
    }
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `findById`'s candidates (see `discovery::files_with_id`).
#[napi(object)]
pub struct JsSessionsWithId {
    /// `[fileName, headerLine]`, in `readdirSync` order.
    pub files: Vec<Vec<String>>,
    /// False when files after the last one listed were not examined.
    pub complete: bool,
}

/// `findById`'s candidates in `dir` (`readdirSync` order) whose header id is `id`,
/// up to the first file named for the id unless `whole`; `null` if the folder
/// cannot be read.
#[napi(catch_unwind)]
pub fn find_sessions_with_id(dir: String, id: String, whole: bool) -> Option<JsSessionsWithId> {
    let found =
        crate::catalog::discovery::files_with_id(std::path::Path::new(&dir), &id, whole).ok()?;
    Some(JsSessionsWithId {
        files: found
            .files
            .into_iter()
            .map(|(path, line)| vec![file_name(&path), lossy(&line)])
            .collect(),
        complete: found.complete,
    })
}

/// `findMostRecentSession`'s order: the `.jsonl` file names of `dir`, newest
/// first; `null` where the reference gives up.
#[napi(catch_unwind)]
pub fn recent_session_files(dir: String) -> Option<Vec<String>> {
    crate::catalog::discovery::recent_files(std::path::Path::new(&dir))
        .map(|paths| paths.iter().map(|p| file_name(p)).collect())
}

// ===== accounting =====

static USAGE_CACHE: std::sync::LazyLock<summaries::SummaryCache> =
    std::sync::LazyLock::new(summaries::SummaryCache::for_accounting);

/// The folder whose accounting cache file this process has read.
static USAGE_CACHE_LOADED: std::sync::Mutex<Option<std::path::PathBuf>> =
    std::sync::Mutex::new(None);

/// The configured cache folder, reading its accounting file the first time.
fn usage_cache_dir_loaded() -> Option<std::path::PathBuf> {
    let dir = CACHE_DIR.lock().ok()?.as_ref()?.0.clone();
    let mut loaded = USAGE_CACHE_LOADED.lock().ok()?;
    if loaded.as_ref() != Some(&dir) {
        USAGE_CACHE.load_from(&dir);
        *loaded = Some(dir.clone());
    }
    Some(dir)
}

/// A JavaScript value `+=` produced: a number or a string.
type JsSumValue = Either<f64, String>;

fn sum_js(sum: &usage::JsSum) -> JsSumValue {
    match sum {
        usage::JsSum::Num(n) => Either::A(*n),
        usage::JsSum::Str(s) => Either::B(lossy(s)),
    }
}

#[napi(object, object_from_js = false)]
pub struct JsBreakdownRow {
    pub key: String,
    /// input, output, cacheRead, cacheWrite, cost.
    pub values: Vec<JsSumValue>,
}

/// pi's two loops over a session's entries (see `usage::Accounting`).
#[napi(object, object_from_js = false)]
pub struct JsAccounting {
    /// The first kept line of a file read by path.
    pub header: Option<String>,
    pub user_messages: f64,
    pub assistant_messages: f64,
    pub tool_calls: f64,
    pub tool_results: f64,
    pub total_messages: f64,
    /// input, output, cacheRead, cacheWrite, total, cost.
    pub totals: Vec<JsSumValue>,
    /// What `getSessionStats` threw, and whether it was a RangeError.
    pub stats_error: Option<String>,
    pub stats_range_error: bool,
    pub breakdown: Vec<JsBreakdownRow>,
    pub breakdown_error: Option<String>,
    pub breakdown_range_error: bool,
}

fn accounting_js(a: usage::Accounting) -> JsAccounting {
    let s = &a.stats;
    let t = &s.totals;
    JsAccounting {
        header: a.header.as_deref().map(lossy),
        user_messages: s.user_messages as f64,
        assistant_messages: s.assistant_messages as f64,
        tool_calls: s.tool_calls as f64,
        tool_results: s.tool_results as f64,
        total_messages: s.total_messages as f64,
        totals: [
            &t.input,
            &t.output,
            &t.cache_read,
            &t.cache_write,
            &t.tokens(),
            &t.cost,
        ]
        .into_iter()
        .map(sum_js)
        .collect(),
        stats_error: a.stats_thrown.as_ref().map(|e| e.message.clone()),
        stats_range_error: a.stats_thrown.as_ref().is_some_and(|e| e.range_error),
        breakdown: a
            .breakdown
            .iter()
            .map(|row| {
                let t = &row.totals;
                JsBreakdownRow {
                    key: lossy(&row.key),
                    values: [&t.input, &t.output, &t.cache_read, &t.cache_write, &t.cost]
                        .into_iter()
                        .map(sum_js)
                        .collect(),
                }
            })
            .collect(),
        breakdown_error: a.breakdown_thrown.as_ref().map(|e| e.message.clone()),
        breakdown_range_error: a.breakdown_thrown.as_ref().is_some_and(|e| e.range_error),
    }
}

/// Accounting of a session file read by path (its first kept line is the
/// header; no entry object is built).
#[napi(catch_unwind)]
pub fn account_session_file(path: String) -> Result<JsAccounting> {
    let accounting = usage::account_file(std::path::Path::new(&path)).map_err(io_to_napi)?;
    Ok(accounting_js(accounting))
}

/// Accounting of entries given as JSON texts, one per line.
#[napi(catch_unwind)]
pub fn account_entry_lines(lines: String) -> JsAccounting {
    let mut accounting = usage::Accounting::default();
    for line in lines.as_bytes().split(|&b| b == b'\n') {
        accounting.feed_entry(line);
    }
    accounting_js(accounting)
}

#[napi]
impl NativeSession {
    /// Accounting of the entries at `positions`; those held only as
    /// JavaScript objects come as JSON texts in `pending` (in order).
    #[napi(catch_unwind)]
    pub fn account(&self, positions: Uint32Array, pending: Vec<String>) -> Result<JsAccounting> {
        let mut accounting = usage::Accounting::default();
        let mut pending = pending.into_iter();
        let mut i = 0;
        let session = self.inner();
        session
            .each_line(&positions, |line| {
                if session.has_line(positions[i]) {
                    accounting.feed_entry(line);
                } else if let Some(text) = pending.next() {
                    accounting.feed_entry(text.as_bytes());
                }
                i += 1;
            })
            .map_err(to_napi)?;
        Ok(accounting_js(accounting))
    }
}

#[napi(object)]
pub struct JsReportOptions {
    pub group_by: String,
    pub since: Option<String>,
    pub until: Option<String>,
    /// An IANA zone name; the system's zone when absent.
    pub timezone: Option<String>,
    /// Only sessions whose cwd is one of these (all when absent).
    pub cwds: Option<Vec<String>>,
}

#[napi(object, object_from_js = false)]
pub struct JsReportRow {
    pub key: String,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total_tokens: f64,
    pub cost: f64,
    pub sessions: u32,
}

#[napi(object, object_from_js = false)]
pub struct JsReport {
    pub rows: Vec<JsReportRow>,
    pub totals: JsReportRow,
}

fn report_row_js(r: usage_report::ReportRow) -> JsReportRow {
    let a = r.amounts;
    JsReportRow {
        key: r.key,
        input: a.input,
        output: a.output,
        cache_read: a.cache_read,
        cache_write: a.cache_write,
        total_tokens: a.tokens(),
        cost: a.cost,
        sessions: r.sessions,
    }
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

/// Progress of an accounting scan (`done` set on the last one).
#[napi(object, object_from_js = false)]
pub struct JsUsageProgress {
    pub loaded: u32,
    pub total: u32,
    pub done: bool,
}

type UsageCallback = ThreadsafeFunction<JsUsageProgress, (), JsUsageProgress, Status, false>;

/// An accounting scan: runs on threads of its own; once it reports `done`,
/// `report()` answers from what it read.
#[napi]
pub struct UsageScan {
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    corpus: std::sync::Arc<std::sync::Mutex<Option<usage_report::Corpus>>>,
}

#[napi]
impl UsageScan {
    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The distinct cwds of the sessions read.
    #[napi(catch_unwind)]
    pub fn cwds(&self) -> Vec<String> {
        self.corpus
            .lock()
            .ok()
            .and_then(|c| c.as_ref().map(usage_report::Corpus::cwds))
            .unwrap_or_default()
    }

    #[napi(catch_unwind)]
    pub fn report(&self, options: JsReportOptions) -> Result<JsReport> {
        let group_by = usage_report::GroupBy::parse(&options.group_by)
            .ok_or_else(|| invalid(format!("Unknown groupBy: {}", options.group_by)))?;
        let date = |d: &Option<String>, name: &str| -> Result<Option<jiff::civil::Date>> {
            d.as_deref()
                .map(|text| {
                    usage_report::parse_date(text).ok_or_else(|| {
                        invalid(format!("{name} must be a date as YYYY-MM-DD: {text}"))
                    })
                })
                .transpose()
        };
        let since = date(&options.since, "since")?;
        let until = date(&options.until, "until")?;
        let zone = match options.timezone.as_deref() {
            None => jiff::tz::TimeZone::system(),
            Some(name) => jiff::tz::TimeZone::get(name)
                .map_err(|_| invalid(format!("Unknown time zone: {name}")))?,
        };
        let guard = self
            .corpus
            .lock()
            .map_err(|_| invalid("The usage scan failed".into()))?;
        let corpus = guard
            .as_ref()
            .ok_or_else(|| invalid("The usage scan has not finished".into()))?;
        let report = corpus.report(
            &usage_report::ReportOptions {
                group_by,
                since,
                until,
                zone,
            },
            options.cwds.as_deref(),
        );
        Ok(JsReport {
            rows: report.rows.into_iter().map(report_row_js).collect(),
            totals: report_row_js(report.totals),
        })
    }
}

/// How often, at most, a scan reports progress.
const PROGRESS_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// Starts reading the `.jsonl` files of `dirs` for a usage report.
#[napi(catch_unwind)]
pub fn scan_usage(dirs: Vec<String>, progress: bool, on_progress: UsageCallback) -> UsageScan {
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let corpus = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (flag, slot) = (cancel.clone(), corpus.clone());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    std::thread::spawn(move || {
        let send = |loaded: usize, total: usize, done: bool| {
            on_progress.call(
                JsUsageProgress {
                    loaded: loaded as u32,
                    total: total as u32,
                    done,
                },
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let persistent = usage_cache_dir_loaded();
            let dirs: Vec<std::path::PathBuf> = dirs.into_iter().map(Into::into).collect();
            let last = std::sync::Mutex::new(std::time::Instant::now());
            let read =
                usage_report::scan_corpus(&USAGE_CACHE, &dirs, threads, &flag, &|n, total| {
                    if !progress {
                        return;
                    }
                    let due = last.lock().ok().is_some_and(|mut at| {
                        let due = n == total || at.elapsed() >= PROGRESS_WAIT;
                        if due {
                            *at = std::time::Instant::now();
                        }
                        due
                    });
                    if due {
                        send(n, total, false);
                    }
                });
            if let Ok(mut s) = slot.lock() {
                *s = Some(read);
            }
            send(0, 0, true);
            if let Some(dir) = persistent {
                if USAGE_CACHE.take_dirty() {
                    let _ = USAGE_CACHE.save_to(&dir);
                }
            }
        }))
        .inspect_err(|_| send(0, 0, true));
    });
    UsageScan { cancel, corpus }
}

// Doctor: `checkSession` and `repairSession` (lib/doctor.js).

#[napi(object, object_from_js = false)]
pub struct JsDoctorFinding {
    pub problem: String,
    pub line: f64,
    pub message: String,
    pub repair: Option<String>,
}

#[napi(object, object_from_js = false)]
pub struct JsDoctorReport {
    pub size: f64,
    pub lines: f64,
    pub entries: f64,
    pub opens_in_reference: bool,
    pub findings: Vec<JsDoctorFinding>,
    pub repairable: bool,
}

#[napi(object, object_from_js = false)]
pub struct JsRepairOutcome {
    pub report: JsDoctorReport,
    pub applied: bool,
    pub backup: Option<String>,
    pub after: Option<JsDoctorReport>,
}

impl From<crate::catalog::doctor::Report> for JsDoctorReport {
    fn from(r: crate::catalog::doctor::Report) -> Self {
        JsDoctorReport {
            size: r.size as f64,
            lines: r.lines as f64,
            entries: r.entries as f64,
            opens_in_reference: r.opens_in_reference,
            repairable: r.has_repairs(),
            findings: r
                .findings
                .into_iter()
                .map(|f| JsDoctorFinding {
                    problem: f.problem.name().to_string(),
                    line: f.line as f64,
                    message: f.message,
                    repair: f.repair,
                })
                .collect(),
        }
    }
}

#[napi(catch_unwind)]
pub fn check_session_file(path: String) -> Result<JsDoctorReport> {
    crate::catalog::doctor::check(std::path::Path::new(&path))
        .map(Into::into)
        .map_err(to_napi)
}

#[napi(catch_unwind)]
pub fn repair_session_file(
    path: String,
    dry_run: bool,
    backup_stamp: String,
) -> Result<JsRepairOutcome> {
    let outcome =
        crate::catalog::doctor::repair(std::path::Path::new(&path), dry_run, &backup_stamp)
            .map_err(to_napi)?;
    Ok(JsRepairOutcome {
        report: outcome.report.into(),
        applied: outcome.applied,
        backup: outcome.backup.map(|b| b.to_string_lossy().into_owned()),
        after: outcome.after.map(Into::into),
    })
}

/// A search's answer (see `search::SearchResult`).
#[napi(object, object_from_js = false)]
pub struct JsSearchResult {
    /// Session indices in the result's order; with `scores`, the matches in
    /// the sessions' order, for JavaScript to sort with the reference's
    /// comparator; with `regex`, the sessions to test.
    pub indices: Uint32Array,
    pub scores: Option<Float64Array>,
    /// A `re:` query: `[start, end)` of its pattern in the query.
    pub regex: Option<Vec<u32>>,
    /// The reference's `session.id.toLowerCase()` throws at this session.
    pub throws_at: Option<u32>,
}

impl From<search::SearchResult> for JsSearchResult {
    fn from(result: search::SearchResult) -> Self {
        let empty = JsSearchResult {
            indices: Vec::new().into(),
            scores: None,
            regex: None,
            throws_at: None,
        };
        match result {
            search::SearchResult::Ranked { order, scores } => JsSearchResult {
                indices: order.into(),
                scores: scores.map(Into::into),
                ..empty
            },
            search::SearchResult::Regex {
                start,
                end,
                candidates,
            } => JsSearchResult {
                indices: candidates.into(),
                regex: Some(vec![start as u32, end as u32]),
                ..empty
            },
            search::SearchResult::Throws(index) => JsSearchResult {
                throws_at: Some(index),
                ..empty
            },
        }
    }
}

/// The sessions of a listing, searchable: texts lowercased once per file
/// version (shared with the listing cache), matched and ranked here.
#[napi(custom_finalize)]
pub struct SessionSearchIndex {
    catalog: search::Catalog,
    /// Make the trigram filters that spare repeated searches most full
    /// scans (a picker's index; not worth it for one search).
    trigrams: bool,
    /// Memory reported to V8 for the texts held.
    reported: i64,
}

impl SessionSearchIndex {
    fn report_memory(&mut self, env: &Env) {
        let now = self.catalog.memory() as i64;
        if env.adjust_external_memory(now - self.reported).is_ok() {
            self.reported = now;
        }
    }
}

impl ObjectFinalize for SessionSearchIndex {
    fn finalize(self, env: Env) -> Result<()> {
        env.adjust_external_memory(-self.reported)?;
        Ok(())
    }
}

#[napi]
impl SessionSearchIndex {
    #[napi(constructor, catch_unwind)]
    pub fn new(trigrams: bool) -> Self {
        SessionSearchIndex {
            catalog: search::Catalog::default(),
            trigrams,
            reported: 0,
        }
    }

    /// Of the listing tokens given, the indices whose texts this index does
    /// not hold: `setSessions` needs their paths.
    #[napi(catch_unwind)]
    pub fn unheld(&self, tokens: Float64Array) -> Uint32Array {
        let tokens: Vec<u64> = tokens.iter().map(|&t| t as u64).collect();
        self.catalog.unheld(&tokens).into()
    }

    /// Sets the sessions in the listing's order: each one's listing token
    /// and `modified.getTime()`, and the paths of those at `path_indices`
    /// (see `unheld`). Returns the indices whose texts the listing cache
    /// does not hold either (JavaScript then sets them from strings).
    #[napi(catch_unwind)]
    pub fn set_sessions(
        &mut self,
        env: &Env,
        paths: Vec<String>,
        path_indices: Uint32Array,
        tokens: Float64Array,
        modified: Float64Array,
    ) -> Uint32Array {
        let files: Vec<(std::path::PathBuf, u64)> = paths
            .into_iter()
            .zip(path_indices.iter())
            .map(|(path, &i)| (path.into(), tokens.get(i as usize).map_or(0, |&t| t as u64)))
            .collect();
        // One lock for all; the texts are made on the catalog's threads.
        let mut versions: Vec<Option<summaries::CachedText>> =
            tokens.iter().map(|_| None).collect();
        for (&i, version) in path_indices.iter().zip(SUMMARY_CACHE.versions(&files)) {
            if let Some(slot) = versions.get_mut(i as usize) {
                *slot = version.map(summaries::CachedText);
            }
        }
        let indexed: Vec<(usize, u64)> = tokens.iter().map(|&t| t as u64).enumerate().collect();
        let missing = self.catalog.set_sessions(
            &indexed,
            modified.to_vec(),
            self.trigrams,
            crate::parallel::threads(),
            |&i, _| versions[i].as_ref()?.search_text(),
        );
        self.report_memory(env);
        missing.into()
    }

    /// The text of session `index` from its strings; `id` is the session's
    /// string id, or 1 for an undefined one, 2 for null, 3 for anything else.
    #[napi(catch_unwind)]
    pub fn set_session_text(
        &mut self,
        env: &Env,
        index: u32,
        name: Option<Utf16String>,
        id: Either<Utf16String, u32>,
        cwd: Utf16String,
        text: Utf16String,
    ) {
        let id = match id {
            Either::A(id) => search::SessionId::Str(id.to_vec()),
            Either::B(1) => search::SessionId::Undefined,
            Either::B(2) => search::SessionId::Null,
            Either::B(_) => search::SessionId::Other,
        };
        let text = search::SessionText::from_utf16(name.as_deref(), id, &cwd, &text);
        self.catalog.set_text(index as usize, text, self.trigrams);
        self.report_memory(env);
    }

    /// `filterAndSortSessions` over the sessions set, `query` as UTF-16;
    /// `scored` leaves a token query's matches unsorted, with their scores.
    #[napi(catch_unwind)]
    pub fn search(
        &self,
        query: Utf16String,
        recent: bool,
        named: bool,
        scored: bool,
    ) -> JsSearchResult {
        self.catalog
            .search(&query, recent, named, scored, crate::parallel::threads())
            .into()
    }

    /// The reference's order of matches given in the sessions' order, with
    /// their scores (a `re:` query's tiers).
    #[napi(catch_unwind)]
    pub fn rank(&self, indices: Uint32Array, scores: Float64Array, recent: bool) -> JsSearchResult {
        self.catalog
            .rank(indices.to_vec(), scores.to_vec(), recent)
            .into()
    }

    /// Lets go of the texts (and of the memory reported for them).
    #[napi(catch_unwind)]
    pub fn close(&mut self, env: &Env) {
        self.catalog = search::Catalog::default();
        self.report_memory(env);
    }
}

/// The search's `toLowerCase()`, and with `collapse` its
/// `normalizeWhitespaceLower()`, of a string through the UTF-16 path (names,
/// cwds, queries) or the WTF-8 one (message texts): the tests compare them
/// with V8's on every code point.
#[napi(catch_unwind)]
pub fn search_lowercase_for_test(text: Utf16String, wtf8: bool, collapse: bool) -> Utf16String {
    use crate::format::jsstring as js;
    if wtf8 {
        let lower = js::to_lowercase_wtf8(&js::utf16_to_wtf8(&text));
        let out = if collapse {
            js::collapse_whitespace_wtf8(&lower)
        } else {
            lower
        };
        return js::wtf8_to_utf16(&out).into();
    }
    let lower = js::to_lowercase_utf16(&text);
    if collapse {
        js::collapse_whitespace_utf16(&lower).into()
    } else {
        lower.into()
    }
}
