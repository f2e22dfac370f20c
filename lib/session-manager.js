'use strict';
// The SessionManager class: the reference's API over a native session. Rust holds
// the bytes, the index and the algorithms; this class keeps the entry objects it
// has handed out (each built once, by JSON.parse of its line) so that identity
// holds as in the reference, and the objects callers append are their own.
const fs = require('fs');
const path = require('path');
const native = require('./native.js');
const { call, translate } = require('./errors.js');
const { keyOf, valueOfKey, metaOf } = require('./keys.js');
const paths = require('./paths.js');
const context = require('./context.js');
const listing = require('./listing.js');
const lazy = require('./lazy.js');
const memory = require('./memory.js');

const CURRENT_SESSION_VERSION = 3;
// Lines parsed per JSON.parse when many entries are needed at once; bounded so a
// batch of large lines stays well below V8's maximum string length.
const PARSE_BATCH = 256;
const ID_BATCH = 64;

function assertValidSessionId(id) {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id)) {
    throw new Error(
      "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character",
    );
  }
}

function sessionFileName(timestamp, id) {
  return `${timestamp.replace(/[:.]/g, '-')}_${id}.jsonl`;
}

/** A native session, registered so its memory is freed as soon as it is collected. */
function newNative(persist) {
  const session = new native.NativeSession(persist);
  session.track();
  return session;
}

/** Stands in for the native session after close(): every use throws. */
function closedNative(file) {
  const fail = () => {
    throw new Error(`SessionManager is closed${file ? `: ${file}` : ''}`);
  };
  return new Proxy({}, { get: fail, set: fail });
}

/**
 * Whether new managers let go of the entry values nothing outside holds (lib/lazy.js):
 * PI_SESSION_NATIVE_RELEASE=1 or 0 decides for every manager; otherwise pi's own
 * managers (made through a class switched by useNativeSessions) let go unless that
 * switch said not to, and others as configureEntries() says (off until it is called).
 */
const RELEASE_ENV = process.env.PI_SESSION_NATIVE_RELEASE;
let libraryRelease = false;
/** Set while a switched pi class's static makes managers (see withRelease). */
let scopedRelease;

function releaseForNewManager() {
  if (RELEASE_ENV === '1' || RELEASE_ENV === 'on') return true;
  if (RELEASE_ENV === '0' || RELEASE_ENV === 'off') return false;
  return scopedRelease ?? libraryRelease;
}

/** Runs `make` with new managers letting go (or not) as `release` says. */
function withRelease(release, make) {
  const outer = scopedRelease;
  scopedRelease = release;
  try {
    return make();
  } finally {
    scopedRelease = outer;
  }
}

/**
 * The package's switch for managers made by its own statics (see README), and for
 * whether managers that let go ask V8 to hand memory back (every manager of the thread:
 * lib/memory.js).
 */
function configureEntries(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('configureEntries options must be an object');
  const { release, returnMemory } = options;
  if (release !== undefined && typeof release !== 'boolean') throw new TypeError('options.release must be a boolean');
  if (returnMemory !== undefined && typeof returnMemory !== 'boolean') throw new TypeError('options.returnMemory must be a boolean');
  if (release !== undefined) libraryRelease = release;
  if (returnMemory !== undefined) memory.configure(returnMemory);
  return { release: libraryRelease, returnMemory: memory.configured() };
}

function headerCwd(header) {
  return typeof header.cwd === 'string' ? header.cwd : undefined;
}

/**
 * `SessionManager.open(filePath, sessionDir, cwdOverride)`; with `checkLines`, the native
 * open also sees whether the doctor could fault the file (recallView's mayBeDamaged(); its
 * UTF-8 check costs 7-10% of a large file's open, which pi's own opens are spared).
 */
function openFile(filePath, sessionDir, cwdOverride, checkLines) {
  const resolved = paths.resolvePath(filePath);
  // A file loaded now, or undefined: the constructor opens it (or starts a new session).
  const load = () => {
    const loaded = newNative(true);
    const outcome = call(() => loaded.open(resolved, checkLines));
    return outcome === 'loaded' || outcome === 'migrated' ? loaded : undefined;
  };
  let header = null;
  let opened;
  if (cwdOverride === undefined && fs.existsSync(resolved)) {
    const line = call(() => native.readSessionHeader(resolved));
    if (line === '\0toolong') {
      // The bounded header scan is only a shortcut; a full load decides.
      opened = load();
      if (opened) header = JSON.parse(opened.line(opened.headerPosition()));
    } else if (line !== null) {
      header = JSON.parse(line);
    }
  }
  if (checkLines && opened === undefined && fs.existsSync(resolved)) opened = load();
  const cwd = cwdOverride ?? (header ? headerCwd(header) : undefined) ?? process.cwd();
  const dir = sessionDir ? paths.normalizePath(sessionDir) : path.resolve(resolved, '..');
  return new SessionManager(cwd, dir, resolved, true, undefined, undefined, opened);
}

/** Set by SessionManager's static block (it reads private state). */
let accountManager;
let recallViewOf;

class SessionManager {
  #native;
  /** Entry objects by position; a hole is an entry not built yet. */
  #objects = [];
  #sessionId = '';
  /** Mirrors native `appendsLines()`: persisted and flushed, so appends write now. */
  #appendsLines = false;
  /** Unused fresh ids; emptied whenever the session's entries are replaced. */
  #idPool = [];
  /**
   * The leaf's id when the last change of the leaf was an append here (the
   * appended entry), else undefined: consecutive appends need not ask Rust.
   */
  #appendedLeaf;
  #cwd;
  #sessionDir;
  #persist;
  /** Reused by getBranch(): positions of the path, root first. */
  #pathBuffer = new Uint32Array(64);
  #closed = false;
  /** Where the lazy values of this native session's entries are read (see lib/lazy.js). */
  #source;
  /** [holder, key, ...] of the lazy values made from the current native session. */
  #lazy = [];
  /** Whether this manager lets go of entry values nothing outside holds. */
  #release = releaseForNewManager();
  /** When letting go: each entry's origin (lib/lazy.js) by position, for entries that have one. */
  #origins = [];

  constructor(cwd, sessionDir, sessionFile, persist, newSessionOptions, preloadedFileEntries, openedNative) {
    this.#cwd = paths.resolvePath(cwd);
    this.#sessionDir = paths.normalizePath(sessionDir);
    this.#persist = persist;
    this.#native = newNative(persist);
    if (persist && this.#sessionDir && !fs.existsSync(this.#sessionDir)) {
      fs.mkdirSync(this.#sessionDir, { recursive: true });
    }
    if (sessionFile) {
      this.#setSessionFile(sessionFile, openedNative);
    } else if (preloadedFileEntries?.length) {
      this.#loadObjects(preloadedFileEntries, newSessionOptions);
    } else {
      this.newSession(newSessionOptions);
    }
    this.#syncAppendMode();
  }

  /** Called after every change of file, flush state or native session. */
  #syncAppendMode() {
    this.#appendsLines = this.#native.appendsLines();
    this.#idPool = [];
    this.#appendedLeaf = undefined;
  }

  // ===== entry objects =====

  #at(position) {
    let entry = this.#objects[position];
    if (entry === undefined) {
      this.#build([position]);
      entry = this.#objects[position];
    }
    return entry;
  }

  /** Builds the entries at `positions` (none built yet) from their lines' skeletons. */
  #build(batch) {
    const objects = this.#objects;
    const [asciiText, otherText, isAscii, cuts] = call(() =>
      this.#native.skeletons(Uint32Array.from(batch)),
    );
    lazy.handed.chars += asciiText.length + otherText.length;
    const ascii = JSON.parse(asciiText);
    const other = otherText.length > 2 ? JSON.parse(otherText) : undefined;
    let a = 0;
    let o = 0;
    let source;
    for (let i = 0; i < batch.length; i++) {
      let entry = isAscii[i] ? ascii[a++] : other[o++];
      if (cuts[i] !== 0) {
        source ??= this.#lazySource();
        entry = lazy.makeLazy(entry, cuts[i], source, batch[i], this.#release ? this.#origins : this.#lazy);
      }
      objects[batch[i]] = entry;
    }
  }

  #lazySource() {
    if (this.#source?.native !== this.#native) this.#source = new lazy.LazySource(this.#native, this.#release);
    return this.#source;
  }

  #allAt(positions, count = positions.length) {
    const objects = this.#objects;
    const out = new Array(count);
    let missing;
    for (let i = 0; i < count; i++) {
      const entry = objects[positions[i]];
      if (entry === undefined) (missing ??= []).push(positions[i]);
      else out[i] = entry;
    }
    if (missing === undefined) return out;
    for (let start = 0; start < missing.length; start += PARSE_BATCH) {
      this.#build(missing.slice(start, start + PARSE_BATCH));
    }
    for (let i = 0; i < count; i++) out[i] = objects[positions[i]];
    return out;
  }

  #entryAt(position) {
    return position < 0 ? undefined : this.#at(position);
  }

  // ===== loading =====

  /** Switch to a different session file (used for resume and branching). */
  setSessionFile(sessionFile) {
    this.#setSessionFile(sessionFile);
    this.#syncAppendMode();
  }

  #setSessionFile(sessionFile, openedNative) {
    const resolved = paths.resolvePath(sessionFile);
    // A rejected file leaves this manager as it was (see README: differences).
    const loaded = openedNative ?? newNative(this.#persist);
    const outcome = openedNative ? 'loaded' : call(() => loaded.open(resolved));
    if (outcome === 'missing') {
      this.newSession();
      this.#native.setFile(resolved);
      return;
    }
    if (outcome === 'empty') {
      this.newSession();
      this.#native.setFile(resolved);
      this.#rewriteFile();
      this.#native.setFlushed(true);
      return;
    }
    this.#native = loaded;
    this.#objects = [];
    this.#lazy = [];
    this.#origins = [];
    this.#sessionId = this.#at(loaded.headerPosition()).id;
  }

  #loadObjects(entries, options) {
    const header = entries.find((e) => e.type === 'session');
    if (header) {
      // Like the reference, the caller's array becomes the session's entries.
      this.#objects = entries;
      this.#sessionId = header.id;
      context.migrateEntries(entries);
    } else {
      this.newSession(options);
      this.#objects = this.#objects.concat(entries);
    }
    this.#native.loadObjects(this.#objects.map(metaOf));
  }

  newSession(options) {
    if (options?.id !== undefined) assertValidSessionId(options.id);
    this.#sessionId = options?.id ?? native.newSessionId();
    if (this.#lazy.length > 0 || this.#origins.length > 0) {
      // Entries handed out still read their lazy values from this native
      // session: the new session gets a native session of its own.
      this.#native = newNative(this.#persist);
      this.#lazy = [];
      this.#origins = [];
    }
    const timestamp = new Date().toISOString();
    const header = {
      type: 'session',
      version: CURRENT_SESSION_VERSION,
      id: this.#sessionId,
      timestamp,
      cwd: this.#cwd,
      parentSession: options?.parentSession,
    };
    this.#native.startNew(metaOf(header));
    this.#objects = [header];
    if (this.#persist) {
      this.#native.setFile(path.join(this.getSessionDir(), sessionFileName(timestamp, this.#sessionId)));
    }
    this.#syncAppendMode();
    return this.getSessionFile();
  }

  #rewriteFile() {
    const pending = this.#native.pendingPositions();
    const lines = pending.map((p) => JSON.stringify(this.#objects[p]));
    call(() => this.#native.rewrite(pending, lines));
  }

  // ===== state =====

  isPersisted() {
    return this.#persist;
  }

  getCwd() {
    return this.#cwd;
  }

  getSessionDir() {
    return this.#sessionDir;
  }

  usesDefaultSessionDir() {
    return paths.pathsEqual(this.#sessionDir, paths.getDefaultSessionDirPath(this.#cwd));
  }

  getSessionId() {
    return this.#sessionId;
  }

  getSessionFile() {
    return this.#native.file() ?? undefined;
  }

  getHeader() {
    const position = this.#native.headerPosition();
    return position < 0 ? null : this.#at(position);
  }

  getEntryCount() {
    return this.#native.entryCount();
  }

  /** All entries but the header, as a new array; the entries are shared. */
  getEntries() {
    return this.#allAt(this.#native.entryPositions());
  }

  getSessionName() {
    const position = this.#native.lastOfKind('session_info');
    if (position < 0) return undefined;
    // Named `entry` so a TypeError on a non-string name reads as the reference's.
    const entry = this.#at(position);
    return entry.name?.trim() || undefined;
  }

  // ===== appending =====

  /** Entry ids are drawn from a batch that Rust checked against the index. */
  #newId() {
    if (this.#idPool.length === 0) this.#idPool = this.#native.newIds(ID_BATCH);
    return this.#idPool.pop();
  }

  #leaf() {
    return this.#appendedLeaf ?? valueOfKey(this.#native.leaf());
  }

  #setLeaf(key) {
    this.#appendedLeaf = undefined;
    this.#native.setLeaf(key);
  }

  /** Writes an entry the way `_persist` does, without adding it to the session. */
  _persist(entry) {
    const n = this.#native;
    const plan = call(() => n.persistPlan('', false));
    if (plan.mode === 0) return;
    const flushPositions = plan.mode === 2 ? plan.pending : undefined;
    const flushLines = flushPositions?.map((p) => JSON.stringify(this.#objects[p]));
    const line = plan.mode === 1 ? JSON.stringify(entry) : '';
    call(() => n.persistDetached(line, flushPositions, flushLines));
    this.#syncAppendMode();
  }

  /** Writes the entry if the session is persisted (lazily: see `persistPlan`), then indexes it. */
  #appendEntry(entry) {
    const n = this.#native;
    this.#appendedLeaf = undefined;
    if (this.#appendsLines) {
      const line = JSON.stringify(entry);
      let position;
      try {
        position = n.appendLine(line);
      } catch (error) {
        throw translate(error);
      }
      this.#objects[position] = this.#release ? this.#letGo(entry, line, position) : entry;
      this.#appendedLeaf = entry.id;
      return;
    }
    const meta = metaOf(entry);
    const plan = call(() => n.persistPlan(meta.role, meta.kind === 'message'));
    let line;
    let flushPositions;
    let flushLines;
    if (plan.mode !== 0) {
      if (plan.mode === 2) {
        flushPositions = plan.pending;
        flushLines = flushPositions.map((p) => JSON.stringify(this.#objects[p]));
      }
      line = JSON.stringify(entry);
    }
    const position = call(() => n.append(meta, line, flushPositions, flushLines));
    this.#objects[position] = this.#release && line !== undefined ? this.#letGo(entry, line, position) : entry;
    if (plan.mode === 2) this.#syncAppendMode();
    this.#appendedLeaf = entry.id;
  }

  /**
   * The entry just written at `position`, made to let go of its heavy values once
   * nothing outside holds them (the entry itself is ours: nobody has it yet).
   */
  #letGo(entry, line, position) {
    // A line this short has no value long enough to be cut (lazy.THRESHOLD bytes).
    if (line.length * 3 <= lazy.THRESHOLD) return entry;
    const source = this.#lazySource();
    const cuts = source.cuts(position);
    if (cuts === 0) return entry;
    memory.letGo(line.length);
    return lazy.releaseWritten(entry, cuts, source, position, this.#origins);
  }

  appendMessage(message) {
    const entry = {
      type: 'message',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      message,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendThinkingLevelChange(thinkingLevel) {
    const entry = {
      type: 'thinking_level_change',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      thinkingLevel,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendModelChange(provider, modelId) {
    const entry = {
      type: 'model_change',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      provider, modelId,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendUsage(kind, provider, model, usage, note) {
    const entry = {
      type: 'usage',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      kind, provider, model, usage, ...(note ? { note } : {}),
    };
    this.#appendEntry(entry);
    return entry;
  }

  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook, usage) {
    const timestamp = new Date().toISOString();
    const systemMessage = context.currentSystemMessage(this.buildSessionProjection().messages);
    const id = this.#newId();
    const entry = {
      type: 'compaction',
      id,
      parentId: this.#leaf(),
      timestamp,
      summary,
      firstKeptEntryId: firstKeptEntryId ?? id,
      tokensBefore,
      details,
      usage,
      fromHook,
      ...(systemMessage ? { systemMessage: { ...systemMessage, timestamp: new Date(timestamp).getTime() } } : {}),
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendCustomEntry(customType, data) {
    const entry = {
      type: 'custom',
      customType,
      data,
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendSessionInfo(name) {
    const entry = {
      type: 'session_info',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      name: name.replace(/[\r\n]+/g, ' ').trim(),
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendCustomMessageEntry(customType, content, display, details) {
    const entry = {
      type: 'custom_message',
      customType,
      content,
      display,
      details,
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendContextEdit(targetId, replacement) {
    if (
      replacement !== null &&
      (typeof replacement !== 'object' ||
        !('content' in replacement) ||
        (typeof replacement.content !== 'string' && !Array.isArray(replacement.content)))
    ) {
      throw new Error('Context edit replacement must be null or contain string/array content');
    }
    const target = this.getEntry(targetId);
    if (!target) throw new Error(`Entry ${targetId} not found`);
    if (!this.#native.onBranch(keyOf(targetId))) {
      throw new Error(`Entry ${targetId} is not on the active branch`);
    }
    const role = target.type === 'message' ? target.message.role : 'custom';
    const editable =
      target.type === 'custom_message' ||
      (target.type === 'message' && (role === 'user' || role === 'assistant' || role === 'toolResult'));
    if (!editable) throw new Error(`Entry ${targetId} does not contribute editable model content`);
    const normalized =
      replacement !== null && (role === 'assistant' || role === 'toolResult') && typeof replacement.content === 'string'
        ? { content: [{ type: 'text', text: replacement.content }] }
        : replacement;
    const entry = {
      type: 'context_edit',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      targetId, replacement: normalized,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  appendLabelChange(targetId, label) {
    if (this.#native.get(keyOf(targetId)) < 0) throw new Error(`Entry ${targetId} not found`);
    const entry = {
      type: 'label',
      id: this.#newId(),
      parentId: this.#leaf(),
      timestamp: new Date().toISOString(),
      targetId, label,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  // ===== tree =====

  getLeafId() {
    return this.#leaf();
  }

  getLeafEntry() {
    const leaf = this.#leaf();
    return leaf ? this.#entryAt(this.#native.get(keyOf(leaf))) : undefined;
  }

  getEntry(id) {
    return this.#entryAt(this.#native.get(keyOf(id)));
  }

  getChildren(parentId) {
    return this.#allAt(this.#native.children(keyOf(parentId)));
  }

  getLabel(id) {
    const position = this.#native.label(keyOf(id));
    return position < 0 ? undefined : this.#at(position).label;
  }

  getBranch(fromId) {
    const start = fromId ?? this.#leaf();
    const key = start ? keyOf(start) : undefined;
    const count = this.#native.branchInto(key, this.#pathBuffer);
    if (count >= 0) return this.#allAt(this.#pathBuffer, count);
    // A path never has more entries than the session: this size fits from now on.
    this.#pathBuffer = new Uint32Array(this.#native.entryCount() + 64);
    return this.#allAt(this.#native.branch(key));
  }

  buildContextEntries() {
    return this.#allAt(call(() => this.#native.contextEntries()));
  }

  buildSessionProjection() {
    const plan = call(() => this.#native.contextPlan());
    this.#allAt(plan.entries);
    return context.assembleProjection(plan, (p) => this.#at(p));
  }

  buildSessionContext() {
    const { messages, thinkingLevel, model } = this.buildSessionProjection();
    return { messages, thinkingLevel, model };
  }

  getTree() {
    const plan = this.#native.tree();
    const entries = this.#allAt(plan.positions);
    let { roots, childStart, children } = plan;
    // Timestamps Rust could not read: those siblings are sorted the reference's
    // way, as node indexes (the same comparisons as sorting the nodes).
    for (const n of plan.jsSort) {
      const siblings = Array.from(children.subarray(childStart[n], childStart[n + 1]));
      siblings.sort(
        (a, b) => new Date(entries[a].timestamp).getTime() - new Date(entries[b].timestamp).getTime(),
      );
      children.set(siblings, childStart[n]);
    }
    // Repeated ids: each node kept at its first place only (see README: differences).
    if (plan.firstPlacesPending) ({ roots, childStart, children } = native.treeFirstPlaces(roots, childStart, children));
    const count = entries.length;
    const nodes = new Array(count);
    for (let i = 0; i < count; i++) {
      if (plan.nodeOf[i] !== i) continue;
      const labelPosition = plan.labelOf[i];
      const labelEntry = labelPosition < 0 ? undefined : this.#at(labelPosition);
      nodes[i] = {
        entry: entries[i],
        children: [],
        label: labelEntry?.label,
        labelTimestamp: labelEntry?.timestamp,
      };
    }
    for (let i = 0; i < count; i++) {
      const node = nodes[i];
      if (node === undefined) continue;
      for (let c = childStart[i]; c < childStart[i + 1]; c++) node.children.push(nodes[children[c]]);
    }
    return Array.from(roots, (r) => nodes[r]);
  }

  // ===== branching =====

  branch(branchFromId) {
    if (this.#native.get(keyOf(branchFromId)) < 0) throw new Error(`Entry ${branchFromId} not found`);
    this.#setLeaf(keyOf(branchFromId));
  }

  resetLeaf() {
    this.#setLeaf(undefined);
  }

  branchWithSummary(branchFromId, summary, details, fromHook, usage) {
    if (branchFromId !== null && this.#native.get(keyOf(branchFromId)) < 0) {
      throw new Error(`Entry ${branchFromId} not found`);
    }
    const fromId = this.#leaf() ?? 'root';
    this.#setLeaf(branchFromId === null ? undefined : keyOf(branchFromId));
    const entry = {
      type: 'branch_summary',
      id: this.#newId(),
      parentId: branchFromId,
      timestamp: new Date().toISOString(),
      fromId,
      summary,
      details,
      usage,
      fromHook,
    };
    this.#appendEntry(entry);
    return entry.id;
  }

  createBranchedSession(leafId) {
    const previousSessionFile = this.getSessionFile();
    const start = leafId ?? this.#leaf();
    const newSessionId = native.newSessionId();
    const timestamp = new Date().toISOString();
    const newSessionFile = path.join(this.getSessionDir(), sessionFileName(timestamp, newSessionId));
    const header = {
      type: 'session',
      version: CURRENT_SESSION_VERSION,
      id: newSessionId,
      timestamp,
      cwd: this.#cwd,
      parentSession: this.#persist ? previousSessionFile : undefined,
    };
    const old = this.#objects;
    const oldOrigins = this.#origins;
    // The native session's positions change: entries handed out read their
    // lazy values now, while their lines are where they were (when letting go,
    // only those of entries the new session leaves out: the others follow
    // their lines to their new places).
    lazy.forceAll(this.#lazy);
    if (oldOrigins.length > 0) {
      const onPath = new Set(this.#native.branch(start ? keyOf(start) : undefined));
      oldOrigins.forEach((origin, p) => {
        if (!onPath.has(p)) lazy.pin(old[p]);
      });
    }
    const outcome = call(
      () =>
        this.#native.branchSession(
          start ? keyOf(start) : undefined,
          metaOf(header),
          JSON.stringify(header),
          this.#persist ? newSessionFile : undefined,
        ),
      `Entry ${leafId} not found`,
    );
    const objects = [header];
    const origins = [];
    const { kept, parents, firstKept } = outcome;
    for (let i = 0; i < kept.length; i++) {
      const entry = old[kept[i]];
      if (entry === undefined) {
        objects.length += 1;
        continue;
      }
      const parentId = parents[i] === null ? null : valueOfKey(parents[i]);
      const origin = oldOrigins[kept[i]];
      if (origin !== undefined) {
        origin.position = objects.length;
        origins[objects.length] = origin;
      }
      objects.push(
        lazy.copyEntry(entry, entry.type === 'compaction' ? { parentId, firstKeptEntryId: valueOfKey(firstKept[i]) } : { parentId }),
      );
    }
    for (let i = 0; i < outcome.labelIds.length; i++) {
      const source = old[outcome.labelSources[i]];
      if (source === undefined) {
        objects.length += 1;
        continue;
      }
      const parent = outcome.labelParents[i];
      objects.push({
        type: 'label',
        id: outcome.labelIds[i],
        parentId: parent === null ? null : valueOfKey(parent),
        timestamp: source.timestamp,
        targetId: source.targetId,
        label: source.label,
      });
    }
    this.#objects = objects;
    this.#lazy = [];
    this.#origins = origins;
    this.#sessionId = newSessionId;
    this.#syncAppendMode();
    return this.#persist ? newSessionFile : undefined;
  }

  // ===== resources (beyond the reference) =====

  /**
   * Frees the native state (memory and pooled file descriptors) now; later calls
   * that need it throw. Calling it again does nothing.
   */
  close() {
    if (this.#closed) return;
    const file = this.#native.file() ?? undefined;
    this.#native.close();
    if (this.#source?.native === this.#native) this.#source.closed = file ?? '';
    this.#native = closedNative(file);
    this.#objects = [];
    this.#lazy = [];
    this.#origins = [];
    this.#idPool = [];
    this.#appendsLines = false;
    this.#appendedLeaf = undefined;
    this.#closed = true;
  }

  [Symbol.dispose]() {
    this.close();
  }

  // ===== factories =====

  static create(cwd, sessionDir, options) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
    return new SessionManager(cwd, dir, undefined, true, options);
  }

  static open(filePath, sessionDir, cwdOverride) {
    return openFile(filePath, sessionDir, cwdOverride, false);
  }

  static continueRecent(cwd, sessionDir) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
    const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
    const mostRecent = listing.findMostRecentSession(dir, filterCwd ? cwd : undefined);
    return new SessionManager(cwd, dir, mostRecent ?? undefined, true);
  }

  static inMemory(cwd = process.cwd(), options, entries) {
    return new SessionManager(cwd, '', undefined, false, options, entries);
  }

  static forkFrom(sourcePath, targetCwd, sessionDir, options) {
    const source = paths.resolvePath(sourcePath);
    const cwd = paths.resolvePath(targetCwd);
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDirPath(cwd);
    const invalidSource = () => new Error(`Cannot fork: source session file is empty or invalid: ${source}`);
    let idError;
    if (options?.id !== undefined) {
      try {
        assertValidSessionId(options.id);
      } catch (error) {
        idError = error;
      }
    }
    if (idError) {
      // The reference checks the source before the id.
      if (!call(() => native.forkSessionFile(source, dir, undefined, ''))) throw invalidSource();
      if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true });
      throw idError;
    }
    const id = options?.id ?? native.newSessionId();
    const timestamp = new Date().toISOString();
    const file = path.join(dir, sessionFileName(timestamp, id));
    const header = {
      type: 'session',
      version: CURRENT_SESSION_VERSION,
      id,
      timestamp,
      cwd,
      parentSession: source,
    };
    const forked = call(() => native.forkSessionFile(source, dir, file, JSON.stringify(header)));
    if (!forked) throw invalidSource();
    forked.track();
    return new SessionManager(cwd, dir, file, true, undefined, undefined, forked);
  }

  static findById(cwd, id, sessionDir) {
    return listing.findById(cwd, id, sessionDir);
  }

  static list(cwd, sessionDir, onProgress, signal) {
    return listing.list(cwd, sessionDir, onProgress, signal);
  }

  static listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
    return listing.listAll(sessionDirOrOnProgress, onProgressOrSignal, signal);
  }

  // For lib/stats.js: the accounting of a manager's entries, in Rust over the
  // lines it holds; entries that exist only as objects go as their JSON text.
  static {
    accountManager = (manager) => {
      if (!(#native in manager)) return undefined;
      const n = manager.#native;
      const positions = n.entryPositions();
      const held = n.pendingPositions();
      const pending = [];
      if (held.length > 0) {
        const onlyObjects = new Set(held);
        for (const p of positions) if (onlyObjects.has(p)) pending.push(JSON.stringify(manager.#objects[p]) ?? 'null');
      }
      return call(() => n.account(positions, pending));
    };
    // For lib/recall.js: a page of a branch without building the branch's
    // entries (positions from Rust, only the page's entries built).
    recallViewOf = (manager) => ({
      /** getBranch(leafId)'s path as `{ positions, readable, target }` (see NativeSession.recallBranch). */
      branch(leafId, target) {
        const start = leafId ?? manager.#leaf();
        return manager.#native.recallBranch(start ? keyOf(start) : undefined, target);
      },
      /** The entries at `positions`, each built once. */
      entries: (positions) => manager.#allAt(positions),
      /** The id of the newest leaf under entry `id` (down its last child each time). */
      newestLeafUnder(id) {
        const position = manager.#native.newestLeafUnder(keyOf(id));
        return position < 0 ? id : manager.#at(position).id;
      },
      /** Whether the file opened may be damaged: false, true, or null when not known. */
      mayBeDamaged: () => manager.#native.mayBeDamaged(),
    });
  }
}

module.exports = {
  SessionManager,
  CURRENT_SESSION_VERSION,
  assertValidSessionId,
  configureEntries,
  withRelease,
  accountManager: (m) => accountManager(m),
  recallView: (m) => recallViewOf(m),
  /** SessionManager.open(file) whose open sees whether the doctor could fault the file (recallView's mayBeDamaged()). */
  openChecked: (file) => openFile(file, undefined, undefined, true),
  headerCwd,
};
