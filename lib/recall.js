'use strict';
// Recall: what was said in past sessions, for a model (the pi package's session_search
// and session_read tools) and for a person (`pi-sessions recall` and `read`).
//
// recallSearch reads the sessions of a listing with grepSessions' scan (the query a
// case-insensitive literal, as /grep reads text); recallRead opens one session with this
// package's SessionManager and renders a page of one branch. Both answer with text kept
// within pi's tool-output limits (lib/recall-text.js) and with the data behind it.
//
// A fork starts with copies of its parent's entries. A copy is shown once, where it
// was first written, the rule usage reports count by (src/catalog/usage_origin.rs):
// walking up `parentSession` while the parent holds the same entry id.
const fs = require('fs');
const path = require('path');
const paths = require('./paths.js');
const listing = require('./listing.js');
const guard = require('./file-guard.js');
const { grepListedSessions } = require('./grep.js');
const { SessionManager, CURRENT_SESSION_VERSION } = require('./session-manager.js');
const { loadEntriesFromFile } = require('./loader.js');
const { checkSession } = require('./doctor.js');
const text = require('./recall-text.js');

/** The tools' own calls and results are never hits: they hold every query searched before. */
const RECALL_TOOLS = new Set(['session_search', 'session_read']);
const ROLES = ['user', 'assistant', 'toolCall', 'toolResult'];
const SCOPES = ['project', 'all'];
/** Searched without a role: all but thinking, which a page shows only when asked. */
const SEARCH_FIELDS = ['text', 'toolResult', 'summary', 'toolCall', 'custom'];
const ROLE_FIELDS = { user: ['text'], assistant: ['text'], toolCall: ['toolCall'], toolResult: ['toolResult'] };
/** Tool call arguments that name a file the tool read or wrote (`paths`: a list of them). */
const FILE_ARGUMENTS = ['path', 'file_path', 'filePath', 'file'];
const SEARCH_LIMIT = 20;
const READ_LIMIT = 50;
const MAX_LIMIT = 500;
const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAYS = /^\d+(\.\d+)?$/;

const ERR_NOT_FOUND = 'ERR_PI_SESSION_NOT_FOUND';
const ERR_AMBIGUOUS = 'ERR_PI_SESSION_AMBIGUOUS';
const ERR_OUTSIDE = 'ERR_PI_SESSION_OUTSIDE_FOLDERS';
const ERR_NO_ENTRY = 'ERR_PI_ENTRY_NOT_FOUND';

function recallError(message, code) {
  const error = new Error(message);
  error.code = code;
  return error;
}

// ===== options =====

/** A string option, trimmed; absent when undefined, null or blank (pi drops null optionals too). */
function stringOption(options, name) {
  const value = options[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function countOption(options, name, fallback) {
  const value = options[name];
  if (value === undefined || value === null) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT) throw new TypeError(`${name} must be a whole number from 1 to ${MAX_LIMIT}`);
  return value;
}

function choiceOption(options, name, choices, fallback) {
  const value = stringOption(options, name);
  if (value === undefined) return fallback;
  if (!choices.includes(value)) throw new TypeError(`${name} must be one of ${choices.map((c) => `"${c}"`).join(', ')} (got "${value}")`);
  return value;
}

/**
 * `after`/`before` as a time in ms: a number of days ago (a number, or a string of
 * digits), or a date; a bare date for `before` takes in its whole day (UTC).
 */
function timeOption(options, name, endOfDay) {
  const value = options[name];
  if (value === undefined || value === null || value === '') return undefined;
  const days = typeof value === 'number' ? value : typeof value === 'string' && DAYS.test(value.trim()) ? Number(value) : undefined;
  if (days !== undefined) {
    if (!(days >= 0) || !Number.isFinite(days)) throw new TypeError(`${name} must be a date or a number of days ago (got ${value})`);
    return Date.now() - days * DAY_MS;
  }
  if (typeof value === 'string') {
    const time = new Date(value.trim()).getTime();
    if (!Number.isNaN(time)) return endOfDay && DATE_ONLY.test(value.trim()) ? time + DAY_MS - 1 : time;
  }
  throw new TypeError(`${name} must be a date (2025-05-01, 2025-05-01T12:00Z) or a number of days ago (got ${JSON.stringify(value)})`);
}

function signalOption(options) {
  const { signal } = options;
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw new TypeError('signal must be an AbortSignal');
  }
  return signal;
}

/** Where sessions are and which of them may be read: what both calls share. */
function placeOf(options, caller) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller}: options must be an object`);
  const cwd = paths.resolvePath(stringOption(options, 'cwd') ?? process.cwd());
  const sessionDir = stringOption(options, 'sessionDir');
  const file = (name) => {
    const value = stringOption(options, name);
    return value === undefined ? undefined : paths.resolvePath(value, cwd);
  };
  return {
    cwd,
    sessionDir,
    currentSessionFile: file('currentSessionFile'),
    parentSessionFile: file('parentSessionFile'),
    sessionFoldersOnly: options.sessionFoldersOnly === true,
    signal: signalOption(options),
    listings: new Map(),
  };
}

// ===== sessions =====

/** Whether `sessionDir` is the project's own folder under the agent dir (or not given). */
function usesDefaultFolder(place) {
  return place.sessionDir === undefined || paths.pathsEqual(paths.resolvePath(place.sessionDir), paths.getDefaultSessionDirPath(place.cwd));
}

/**
 * The sessions of a scope, newest first, without texts: `list(cwd, sessionDir)` for
 * "project"; for "all", every project's folder, or a custom `sessionDir` (which holds
 * every project's sessions). Once per call.
 */
function listScope(place, scope) {
  let listed = place.listings.get(scope);
  if (listed === undefined) {
    const { cwd, sessionDir, signal } = place;
    listed =
      scope === 'project'
        ? listing.listSessions({ cwd, sessionDir, allMessagesText: false, signal })
        : listing.listSessions({ sessionDir: usesDefaultFolder(place) ? undefined : sessionDir, allMessagesText: false, signal });
    place.listings.set(scope, listed);
  }
  return listed;
}

/** Whether `file` is in one of pi's session folders (a project folder of the agent dir, or `sessionDir`). */
function inSessionFolders(file, place) {
  return guard.inSessionFolder(guard.realpathOrNull(file) ?? file, place.sessionDir);
}

/** A session file's header, or null when its first line is not one. */
const readHeader = listing.headerForDiscovery;

const looksLikePath = (arg) => arg.includes('/') || arg.includes('\\') || arg.endsWith('.jsonl');

function describeSession(s) {
  return `${s.id} (${s.name ? `"${text.oneLine(s.name, 40)}", ` : ''}${s.cwd || 'no cwd'}, ${text.shortTime(s.modified?.getTime?.())})`;
}

/**
 * The file of `arg`: "current" or "parent" (the files the caller named), a path, a full
 * id or a unique id prefix; ids are looked for in this project first, then in all.
 */
async function resolveSession(arg, place) {
  if (arg === 'current' || arg === 'parent') {
    const file = arg === 'current' ? place.currentSessionFile : place.parentSessionFile;
    if (file !== undefined) return file;
    throw recallError(
      arg === 'current'
        ? 'There is no current session file: this session is not saved to a file'
        : "The current session has no parent: its header names no parentSession (it is not a fork)",
      ERR_NOT_FOUND,
    );
  }
  if (looksLikePath(arg)) {
    const file = paths.resolvePath(arg, place.cwd);
    if (!fs.existsSync(file)) throw recallError(`No session file at ${file}`, ERR_NOT_FOUND);
    if (place.sessionFoldersOnly && !inSessionFolders(file, place)) {
      throw recallError(`${file} is outside pi's session folders: only pi's sessions are read`, ERR_OUTSIDE);
    }
    return file;
  }
  for (const scope of SCOPES) {
    const sessions = await listScope(place, scope);
    const exact = sessions.filter((s) => s.id === arg);
    const found = exact.length > 0 ? exact : sessions.filter((s) => s.id.startsWith(arg));
    if (found.length === 1) return found[0].path;
    if (found.length > 1) {
      const named = found.slice(0, 5).map(describeSession).join(', ');
      const more = found.length > 5 ? ` and ${found.length - 5} more` : '';
      throw recallError(
        `'${arg}' matches ${found.length} sessions${scope === 'project' ? ' in this project' : ''}: ${named}${more}; give more of the id`,
        ERR_AMBIGUOUS,
      );
    }
  }
  throw recallError(`No session found with the id or id prefix '${arg}', in this project or any other`, ERR_NOT_FOUND);
}

/** What the listing knows of `file`, else what its header says. */
async function sessionInfoOf(file, place) {
  for (const scope of SCOPES) {
    const found = (await listScope(place, scope)).find((s) => paths.pathsEqual(s.path, file));
    if (found) return found;
  }
  const header = readHeader(file) ?? {};
  return { path: file, id: String(header.id ?? ''), cwd: typeof header.cwd === 'string' ? header.cwd : '', parentSessionPath: header.parentSession };
}

/** `file` checked to be a session pi can read: a refusal or a damaged header throws. */
function readableSessionFile(file, place) {
  const verdict = guard.judgeSessionFile(file, { sessionDir: place.sessionDir });
  if (!verdict.ok) throw guard.refusal(verdict);
  if (verdict.damaged) {
    throw recallError(
      `${file} is a damaged session: it does not begin with a session header, so pi cannot read it (pi-sessions doctor says what is wrong, pi-sessions repair may mend it)`,
      guard.NOT_A_SESSION,
    );
  }
  return verdict.target;
}

/**
 * A SessionManager of `file` (`{ manager, target }`, the file a symlink names) that writes
 * nothing pi would not: a file of an older version is migrated in memory
 * (SessionManager.open would write it back migrated).
 */
function openSession(file, place) {
  const target = readableSessionFile(file, place);
  const header = readHeader(target);
  if (header?.version === CURRENT_SESSION_VERSION) return { manager: SessionManager.open(target), target };
  const cwd = typeof header?.cwd === 'string' && header.cwd !== '' ? header.cwd : place.cwd;
  return { manager: SessionManager.inMemory(cwd, undefined, loadEntriesFromFile(target)), target };
}

/** The doctor's findings of the files read lately, by file version. */
const damageNotes = new Map();
const DAMAGE_NOTES_KEPT = 64;

/** A sentence saying that `file` is damaged (what pi-sessions doctor finds), or null. */
function damageNote(file) {
  let stats;
  try {
    stats = fs.statSync(file);
  } catch {
    return null;
  }
  const known = damageNotes.get(file);
  if (known && known.size === stats.size && known.mtimeMs === stats.mtimeMs) return known.note;
  let note = null;
  try {
    // CRLF line ends are read as pi writes lines: no damage.
    const problems = checkSession(file).findings.filter((f) => f.problem !== 'crlf');
    if (problems.length > 0) {
      const first = problems
        .slice(0, 3)
        .map((f) => `${f.line > 0 ? `line ${f.line}: ` : ''}${text.oneLine(f.message, 120)}`)
        .join('; ');
      const more = problems.length > 3 ? '; …' : '';
      note = `This file is damaged (${problems.length} problem${problems.length === 1 ? '' : 's'}: ${first}${more}); shown is what pi reads of it.`;
    }
  } catch {
    note = null;
  }
  damageNotes.delete(file);
  damageNotes.set(file, { size: stats.size, mtimeMs: stats.mtimeMs, note });
  if (damageNotes.size > DAMAGE_NOTES_KEPT) damageNotes.delete(damageNotes.keys().next().value);
  return note;
}

// ===== forks =====

const fileKey = (file) => path.resolve(file);

/**
 * Which session shows an entry copied into forks. `listed` are the sessions of the
 * scope (their `parentSessionPath`s make the forks' tree), `searched` those read.
 * Sessions are opened (read only) as the walk needs them, and closed by close().
 */
class Lineage {
  constructor(listed, searched, place) {
    this.place = place;
    this.infos = new Map(listed.map((s) => [fileKey(s.path), s]));
    for (const s of searched) this.infos.set(fileKey(s.path), s);
    this.searched = new Set(searched.map((s) => fileKey(s.path)));
    this.listed = new Set(listed.map((s) => fileKey(s.path)));
    // The forks' tree: each listed fork up to its root, through parents that are not listed
    // (another project's) too, so that a fork of such a fork is counted.
    this.children = new Map();
    const linked = new Set();
    for (const s of this.infos.values()) {
      for (let file = fileKey(s.path); !linked.has(file); ) {
        linked.add(file);
        const parent = this.parentOf(file);
        if (parent === undefined) break;
        if (!this.children.has(parent)) this.children.set(parent, []);
        this.children.get(parent).push(file);
        file = parent;
      }
    }
    this.managers = new Map();
  }

  parentOf(file) {
    const info = this.infos.get(file);
    const parent = info ? info.parentSessionPath : readHeader(file)?.parentSession;
    return typeof parent === 'string' && parent !== '' ? fileKey(paths.resolvePath(parent)) : undefined;
  }

  /** Whether `file` holds an entry `id`: a file that cannot be read (or may not be) holds none. */
  holds(file, id) {
    let manager = this.managers.get(file);
    if (manager === undefined) {
      manager = null;
      try {
        if (!this.place.sessionFoldersOnly || inSessionFolders(file, this.place)) manager = openSession(file, this.place).manager;
      } catch {
        manager = null;
      }
      this.managers.set(file, manager);
    }
    return manager !== null && manager.getEntry(id) !== undefined;
  }

  /**
   * The searched session that shows entry `id` of `file`: up `parentSession` while the
   * parent holds it, the last searched file of that walk (in a cycle of files that all
   * hold it, the searched one with the smallest path, whichever file the walk began at).
   */
  shownIn(file, id) {
    const walk = [file];
    let cycle = -1;
    for (let here = file; ; ) {
      const parent = this.parentOf(here);
      if (parent === undefined || !this.holds(parent, id)) break;
      cycle = walk.indexOf(parent);
      if (cycle !== -1) break;
      walk.push(parent);
      here = parent;
    }
    if (cycle !== -1) {
      const searchedInCycle = walk.slice(cycle).filter((f) => this.searched.has(f)).sort();
      if (searchedInCycle.length > 0) return searchedInCycle[0];
    }
    for (let i = walk.length - 1; i >= 0; i--) if (this.searched.has(walk[i])) return walk[i];
    return file;
  }

  /** How many listed forks of `file` (and forks of its forks, listed or not) carry entry `id`. */
  forks(file, id, seen = new Set([file])) {
    let count = 0;
    for (const child of this.children.get(file) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      if (this.holds(child, id)) count += (this.listed.has(child) ? 1 : 0) + this.forks(child, id, seen);
    }
    return count;
  }

  close() {
    for (const manager of this.managers.values()) manager?.close();
    this.managers.clear();
  }
}

// ===== search =====

function argumentPaths(args) {
  if (args === null || typeof args !== 'object') return [];
  const found = FILE_ARGUMENTS.map((k) => args[k]).filter((v) => typeof v === 'string' && v !== '');
  if (Array.isArray(args.paths)) found.push(...args.paths.filter((v) => typeof v === 'string' && v !== ''));
  return found;
}

/**
 * The sessions whose tool calls name `file`: its absolute path, or for a relative
 * one any path ending with it; a call's path is taken relative to its session's cwd
 * (a leading `@`, as some models write paths, dropped).
 */
async function sessionsTouching(sessions, file, place) {
  const wanted = file.replace(/^@/, '');
  const absolute = path.isAbsolute(wanted) ? path.resolve(wanted) : undefined;
  const relative = absolute === undefined ? path.normalize(wanted) : undefined;
  const needle = path.basename(wanted);
  if (needle === '' || relative === '.' || relative === '..') throw new TypeError(`file must name a file (got "${file}")`);
  const names = (p, cwd) => {
    const resolved = path.resolve(cwd, p.replace(/^@/, ''));
    if (absolute !== undefined) return paths.pathsEqual(resolved, absolute);
    return resolved.endsWith(path.sep + relative) || paths.pathsEqual(resolved, path.resolve(place.cwd, relative));
  };
  const touching = new Set();
  await grepListedSessions(sessions, needle, { fields: ['toolCall'], signal: place.signal }, (session, matches) => {
    const cwd = session.cwd || place.cwd;
    for (const match of matches) {
      if (RECALL_TOOLS.has(match.toolName)) continue;
      if (argumentPaths(match.arguments).some((p) => names(p, cwd))) {
        touching.add(session.path);
        break;
      }
    }
  });
  return sessions.filter((s) => touching.has(s.path));
}

/** The hits of `query` in `sessions`, newest first, at most `limit` (one more read to tell `truncated`). */
async function searchHits(sessions, listed, query, { role, after, before, limit, place }) {
  const lineage = new Lineage(listed, sessions, place);
  const hits = [];
  try {
    const fields = role === undefined ? SEARCH_FIELDS : ROLE_FIELDS[role];
    await grepListedSessions(sessions, query, { fields, since: after, until: before, signal: place.signal }, (session, matches) => {
      // One hit per message and kind (a tool call counts apart, by tool name), from its first matching block.
      const inFile = new Map();
      for (const match of matches) {
        const kind = match.field === 'toolCall' ? 'toolCall' : String(match.role);
        const toolName = kind === 'toolCall' || kind === 'toolResult' ? (typeof match.toolName === 'string' ? match.toolName : null) : null;
        if (toolName !== null && RECALL_TOOLS.has(toolName)) continue;
        if (role !== undefined && kind !== role) continue;
        const key = typeof match.entryId === 'string' ? `${match.entryId}\0${kind}\0${toolName}` : Symbol('no id');
        if (!inFile.has(key)) inFile.set(key, { match, kind, toolName });
      }
      const file = fileKey(session.path);
      for (const { match, kind, toolName } of [...inFile.values()].reverse()) {
        const entryId = typeof match.entryId === 'string' ? match.entryId : null;
        if (entryId !== null && lineage.shownIn(file, entryId) !== file) continue;
        hits.push({
          sessionId: session.id,
          sessionFile: session.path,
          cwd: session.cwd,
          sessionName: session.name ?? null,
          entryId,
          role: kind,
          toolName,
          timestamp: typeof match.timestamp === 'string' ? match.timestamp : null,
          snippet: text.snippet(match.text, match.ranges),
          forks: entryId === null ? 0 : lineage.forks(file, entryId),
        });
        if (hits.length > limit) return true;
      }
      return false;
    });
  } finally {
    lineage.close();
  }
  return { hits: hits.slice(0, limit), truncated: hits.length > limit };
}

function fileSize(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

const isoOrNull = (date) => (date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : null);

/** The sessions active between `after` and `before` (created before it ended, modified after it began). */
function sessionsBetween(sessions, after, before) {
  if (after === undefined && before === undefined) return sessions;
  return sessions.filter((s) => {
    const created = s.created?.getTime?.() ?? NaN;
    const modified = s.modified?.getTime?.() ?? NaN;
    return (after === undefined || modified >= after) && (before === undefined || created <= before);
  });
}

function listedSessions(sessions, limit) {
  return {
    sessions: sessions.slice(0, limit).map((s) => ({
      sessionId: s.id,
      sessionFile: s.path,
      cwd: s.cwd,
      name: s.name ?? null,
      firstMessage: s.firstMessage ?? '',
      modified: isoOrNull(s.modified),
      size: fileSize(s.path),
    })),
    truncated: sessions.length > limit,
  };
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function searchText(result, { query, where, limit }) {
  const budget = new text.OutputBudget();
  const notes = [];
  if (result.sessions !== undefined) {
    const list = result.sessions;
    budget.add([list.length === 0 ? `No sessions ${where}.` : `${plural(list.length, 'session')} ${where}, newest first:`]);
    let shown = 0;
    for (const s of list) {
      const size = s.size === null ? '' : ` · ${text.formatSize(s.size)}`;
      const lines = [
        `${s.sessionId} · ${text.shortTime(s.modified)} · ${s.name ? `"${text.oneLine(s.name, 80)}" · ` : ''}${s.cwd || 'no cwd'}${size}`,
        `  first message: ${text.oneLine(s.firstMessage || '(none)', 160)}`,
      ];
      if (!budget.add(lines)) break;
      shown++;
    }
    if (shown < list.length) notes.push(`Output limit reached: ${shown} of ${list.length} sessions shown.`);
    if (result.truncated) notes.push(`More sessions than the limit (${limit}): raise limit, or narrow with after, before or file.`);
    return budget.text(notes);
  }
  const hits = result.hits;
  const quoted = `"${text.oneLine(query, 200)}"`;
  budget.add([hits.length === 0 ? `No messages match ${quoted} ${where}.` : `${plural(hits.length, 'hit')} for ${quoted} ${where}, newest first:`]);
  let shown = 0;
  let lastFile;
  for (const hit of hits) {
    const lines = [];
    if (hit.sessionFile !== lastFile) {
      lines.push(`Session ${hit.sessionId}${hit.sessionName ? ` "${text.oneLine(hit.sessionName, 80)}"` : ''} · ${hit.cwd || 'no cwd'}`);
    }
    const kind = hit.toolName === null ? hit.role : `${hit.role} ${hit.toolName}`;
    const forks = hit.forks > 0 ? ` · also in ${plural(hit.forks, 'fork')}` : '';
    lines.push(`  ${hit.entryId ?? '-'} · ${text.shortTime(hit.timestamp)} · ${kind}: ${hit.snippet}${forks}`);
    if (!budget.add(lines)) break;
    lastFile = hit.sessionFile;
    shown++;
  }
  if (shown < hits.length) notes.push(`Output limit reached: ${shown} of ${hits.length} hits shown.`);
  if (result.truncated) notes.push(`More hits than the limit (${limit}): raise limit, or narrow with role, after, before, file or session.`);
  if (hits.length > 0) notes.push("To read around a hit, read its session with around set to the hit's entry id.");
  return budget.text(notes);
}

/**
 * Finds messages across sessions (with `query`), or lists sessions (without). See
 * index.d.ts `recallSearch` and docs/recall.md.
 */
async function recallSearch(options = {}) {
  const place = placeOf(options, 'recallSearch');
  const query = stringOption(options, 'query');
  const scope = choiceOption(options, 'scope', SCOPES, 'project');
  const role = choiceOption(options, 'role', ROLES, undefined);
  const after = timeOption(options, 'after', false);
  const before = timeOption(options, 'before', true);
  const file = stringOption(options, 'file');
  const session = stringOption(options, 'session');
  const limit = countOption(options, 'limit', SEARCH_LIMIT);
  place.signal?.throwIfAborted();

  const listed = await listScope(place, scope);
  let sessions = listed;
  let where = scope === 'project' ? 'in this project' : 'in every project';
  if (session !== undefined) {
    const sessionFile = await resolveSession(session, place);
    readableSessionFile(sessionFile, place);
    const info = await sessionInfoOf(sessionFile, place);
    sessions = [info];
    where = `in session ${info.id || sessionFile}`;
  }
  if (file !== undefined) {
    sessions = await sessionsTouching(sessions, file, place);
    where += ` whose tools read or wrote ${file}`;
  }
  if (role !== undefined && query !== undefined) where += ` (${role} messages)`;
  place.signal?.throwIfAborted();

  if (query === undefined) {
    const found = listedSessions(sessionsBetween(sessions, after, before), limit);
    const result = { hits: [], sessions: found.sessions, truncated: found.truncated };
    return { ...result, text: searchText(result, { where, limit }) };
  }
  const result = await searchHits(sessions, listed, query, { role, after, before, limit, place });
  return { ...result, text: searchText(result, { query, where, limit }) };
}

// ===== read =====

/** The newest leaf under entry `id`: down its last child each time. */
function newestLeafUnder(manager, id) {
  const seen = new Set([id]);
  for (let here = id; ; ) {
    const children = manager.getChildren(here);
    const next = children.length > 0 ? children[children.length - 1].id : undefined;
    if (next === undefined || seen.has(next)) return here;
    seen.add(next);
    here = next;
  }
}

const roleOf = (entry) => (entry.type === 'message' ? (entry.message?.role ?? null) : null);

/** What a page leaves out, in words; '' for nothing. */
function leftOutNote(counts, skipped) {
  const parts = [];
  if (counts.thinking > 0) parts.push(`${plural(counts.thinking, 'thinking block')} (thinking: true shows them)`);
  if (counts.images > 0) parts.push(plural(counts.images, 'image'));
  if (counts.cutResults > 0) parts.push(`the rest of ${plural(counts.cutResults, 'tool output')} (cut to their first lines)`);
  const kinds = [...skipped.entries()].map(([kind, n]) => `${n} ${kind}`);
  if (kinds.length > 0) parts.push(`entries that are not messages (${kinds.join(', ')})`);
  if (parts.length === 0) return '';
  return `Left out: ${parts.join('; ')}.`;
}

function readPage(manager, file, o) {
  const sessionId = manager.getSessionId();
  const has = (id) => manager.getEntry(id) !== undefined;
  const noEntry = (id) => recallError(`No entry '${id}' in session ${sessionId}`, ERR_NO_ENTRY);
  let leafId;
  if (o.leaf !== undefined) {
    if (!has(o.leaf)) throw noEntry(o.leaf);
    leafId = o.leaf;
  } else if (o.session === 'current' && o.currentLeafId !== undefined && has(o.currentLeafId)) {
    // pi's leaf, which /tree may have moved off the file's last entry.
    leafId = o.currentLeafId;
  } else {
    leafId = manager.getLeafId();
  }
  const target = o.around ?? (o.from !== undefined && o.from !== 'start' ? o.from : undefined);
  if (target !== undefined && !has(target)) throw noEntry(target);
  let branch = leafId === null || leafId === undefined ? [] : manager.getBranch(leafId);
  const headNotes = [];
  if (target !== undefined && !branch.some((e) => e.id === target)) {
    if (o.leaf !== undefined) throw recallError(`Entry '${target}' is not on the branch to leaf '${o.leaf}'`, ERR_NO_ENTRY);
    const newLeaf = newestLeafUnder(manager, target);
    headNotes.push(`Entry ${target} is not on the branch to the session's leaf ${leafId}: shown is the branch through it, to its newest leaf ${newLeaf}.`);
    leafId = newLeaf;
    branch = manager.getBranch(newLeaf);
  }
  const readable = [];
  const onBranch = [];
  branch.forEach((entry, i) => {
    if (text.isReadable(entry)) {
      readable.push(entry);
      onBranch.push(i);
    }
  });

  const size = o.last ?? o.limit;
  let start = 0;
  if (o.last !== undefined) start = Math.max(0, readable.length - o.last);
  else if (target !== undefined) {
    const at = branch.findIndex((e) => e.id === target);
    let k = onBranch.findIndex((i) => i >= at);
    if (k === -1) k = readable.length;
    start = o.around !== undefined ? Math.max(0, Math.min(k - Math.floor((size - 1) / 2), readable.length - size)) : k;
  }

  // The heading first, within the budget: a page is cut after it, never it.
  const name = manager.getSessionName();
  const budget = new text.OutputBudget();
  budget.add([text.oneLine(`Session ${sessionId}${name ? ` "${text.oneLine(name, 80)}"` : ''} · cwd ${manager.getCwd() || '-'} · ${file}`, 2000)]);
  const damaged = damageNote(file);
  if (damaged) budget.add([damaged]);
  budget.add(headNotes);
  if (readable.length === 0) budget.add([leafId ? `The branch to leaf ${leafId} has no messages.` : 'The session has no entries.']);
  else if (start >= readable.length) budget.add([`Branch to leaf ${leafId}: ${plural(readable.length, 'message')} and summaries; none after that point.`]);
  else budget.add([`Branch to leaf ${leafId}: ${plural(readable.length, 'message')} and summaries; this page starts at ${start + 1}.`]);
  budget.add(['']);

  const counts = { thinking: 0, images: 0, cutResults: 0 };
  let shown = 0;
  let cut = false;
  for (let k = start; k < readable.length && shown < size; k++) {
    const entryCounts = { thinking: 0, images: 0, cutResults: 0 };
    const lines = [...text.entryLines(readable[k], { thinking: o.thinking, counts: entryCounts }), ''];
    if (!budget.add(lines)) {
      cut = true;
      // An entry larger than a whole page is shown in part rather than never.
      if (shown > 0) break;
      budget.add(text.cutToRoom(lines, budget.room(), 'entry'));
    }
    for (const key of Object.keys(counts)) counts[key] += entryCounts[key];
    shown++;
    if (cut) break;
  }
  const page = readable.slice(start, start + shown);
  const skipped = new Map();
  if (shown > 0) {
    for (let i = onBranch[start]; i <= onBranch[start + shown - 1]; i++) {
      const entry = branch[i];
      if (text.isReadable(entry)) continue;
      const kind = entry.type === 'message' ? `${entry.message?.role} message` : entry.type;
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
    }
  }
  const next = start + shown < readable.length ? (readable[start + shown].id ?? null) : null;

  const notes = [];
  if (cut) notes.push('This page stops early at the output limit (50 KB or 2,000 lines); the next page goes on from there.');
  const leftOut = leftOutNote(counts, skipped);
  if (leftOut) notes.push(leftOut);
  if (shown > 0) notes.push(`This page: ${start + 1}-${start + shown} of ${readable.length}.`);
  if (start > 0) notes.push(`Before this page: ${plural(Math.min(start, readable.length), 'earlier message')} on this branch (from "start" reads from the first).`);
  if (next !== null) notes.push(`Next page: from "${next}" (${readable.length - start - shown} more).`);
  else if (readable.length > 0) notes.push('End of the branch.');

  return {
    text: budget.text(notes),
    sessionId,
    sessionFile: file,
    entries: page.map((e) => ({ id: e.id ?? null, type: e.type, role: roleOf(e) })),
    truncated: cut,
    next,
  };
}

/** A page of one session's branch as text for a model. See index.d.ts `recallRead` and docs/recall.md. */
async function recallRead(options = {}) {
  const place = placeOf(options, 'recallRead');
  const session = stringOption(options, 'session');
  if (session === undefined) throw new TypeError('session is required: a session id, a unique id prefix, a path, "current" or "parent"');
  const around = stringOption(options, 'around');
  const from = stringOption(options, 'from');
  const last = countOption(options, 'last', undefined);
  const limit = countOption(options, 'limit', READ_LIMIT);
  const leaf = stringOption(options, 'leaf');
  const currentLeafId = stringOption(options, 'currentLeafId');
  if (options.thinking !== undefined && options.thinking !== null && typeof options.thinking !== 'boolean') throw new TypeError('thinking must be a boolean');
  const thinking = options.thinking === true;
  if ([around, from, last].filter((v) => v !== undefined).length > 1) throw new TypeError('Give at most one of around, from and last');
  place.signal?.throwIfAborted();
  const file = await resolveSession(session, place);
  place.signal?.throwIfAborted();
  const { manager, target } = openSession(file, place);
  try {
    return readPage(manager, target, { session, around, from, last, limit, leaf, currentLeafId, thinking });
  } finally {
    manager.close();
  }
}

module.exports = { recallSearch, recallRead };
