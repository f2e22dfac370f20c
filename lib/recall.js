'use strict';
// Recall: what was said in past sessions, for a model (the pi package's session_search
// and session_read tools) and for a person (`pi-sessions recall` and `read`).
//
// recallSearch reads session files with grepSessions' scan (the query a case-insensitive
// literal, as /grep reads text), newest first and without a listing, until its limit's hits
// are certain (see searchHits); without a query it lists sessions. recallRead opens one
// session with this package's SessionManager and renders a page of one branch. Both answer
// with text kept within pi's tool-output limits (lib/recall-text.js) and with the data
// behind it.
//
// A fork starts with copies of its parent's entries. A copy is shown once, where it
// was first written, the rule usage reports count by (src/catalog/usage_origin.rs):
// walking up `parentSession` while the parent holds the same entry id.
const fs = require('fs');
const path = require('path');
const paths = require('./paths.js');
const listing = require('./listing.js');
const guard = require('./file-guard.js');
const native = require('./native.js');
const { grepListedSessions, grepListedFolders, scanParentHeaders } = require('./grep.js');
const { Heap } = require('./heap.js');
const source = require('./recall-source.js');
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
    scopes: new Map(),
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

/** pi's project folders as listAll() finds them: folders and links to them, in readdir's order. */
function everyProjectFolder() {
  const root = paths.getSessionsDir();
  try {
    return fs
      .readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => path.join(root, e.name));
  } catch {
    return [];
  }
}

/**
 * The session files of a scope, as listScope lists them but without reading them: its
 * folders, the cwd its sessions must have (a custom session folder's "project"), the
 * SessionInfo of a file (from the listing cache, read as asked for), and the files
 * themselves: by name, or stat'ed and newest first. Once per call and scope.
 */
class ScopeFiles {
  constructor(place, scope) {
    const { cwd, sessionDir } = place;
    this.cwd = undefined;
    if (scope === 'all') {
      this.dirs = usesDefaultFolder(place) ? everyProjectFolder() : [paths.normalizePath(sessionDir)];
    } else if (sessionDir === undefined) {
      this.dirs = [paths.getDefaultSessionDirPath(cwd)];
    } else {
      const dir = paths.normalizePath(sessionDir);
      this.dirs = [dir];
      if (!paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd))) this.cwd = cwd;
    }
    // Sessions last active at once: list() (one folder) orders them by name, listAll() by mtime first.
    this.byName = scope === 'project' || !usesDefaultFolder(place);
    // path.join(dir, name) for a name as readdir gives it, as the listing makes its paths.
    this.prefixes = this.dirs.map((dir) => path.join(dir, 'x').slice(0, -1));
    this.folders = new Map();
    this.infos = new Map();
    this.byMtime = undefined;
  }

  /** Which of the scope's folders holds `key` (a fileKey), or -1. */
  folderOf(key) {
    const dir = path.dirname(key);
    let folder = this.folders.get(dir);
    if (folder === undefined) {
      folder = this.dirs.findIndex((d) => paths.pathsEqual(d, dir));
      this.folders.set(dir, folder);
    }
    return folder;
  }

  /** `{ info, mtimeMs }` of `file`: the listing's SessionInfo if the scope lists it (else null), and its mtime. */
  summaryOf(file) {
    const key = fileKey(file);
    let known = this.infos.get(key);
    if (known === undefined) {
      known = { info: null, mtimeMs: Number.NaN };
      const folder = key.endsWith('.jsonl') ? this.folderOf(key) : -1;
      if (folder !== -1) {
        known = listing.fileSessionInfo(this.prefixes[folder] + path.basename(key));
        if (known.info !== null && this.cwd !== undefined && !listing.sessionCwdMatches(known.info.cwd, this.cwd)) known.info = null;
      }
      this.infos.set(key, known);
    }
    return known;
  }

  /** The listing's SessionInfo of `file` if the scope lists it, else null. */
  infoOf(file) {
    return this.summaryOf(file).info;
  }

  /** The SessionInfo of `key` if summaryOf made it already (nothing read). */
  knownInfo(key) {
    return this.infos.get(key)?.info ?? null;
  }

  /** A file of a grep of the folders (its folder's index, its name): `{ path, name }`. */
  fileOf(folder, name) {
    return { path: this.prefixes[folder] + name, name };
  }

  /**
   * Every `.jsonl` file of the folders, `{ path, name, mtimeMs }`, stat'ed, in listAll()'s
   * order of candidates (newest mtime first; ties by name, descending). Once.
   */
  newestFirst() {
    if (this.byMtime === undefined) {
      const found = native.sessionFileCandidates(this.dirs);
      const place = listing.referenceCandidateOrder(found.names, found.mtimeMs);
      this.byMtime = new Array(found.names.length);
      for (let i = 0; i < found.names.length; i++) {
        const name = found.names[i];
        this.byMtime[place[i]] = { path: this.prefixes[found.folders[i]] + name, name, mtimeMs: found.mtimeMs[i] };
      }
    }
    return this.byMtime;
  }
}

/** The files of a scope (see ScopeFiles), once per call. */
function scopeFiles(place, scope) {
  let files = place.scopes.get(scope);
  if (files === undefined) {
    files = new ScopeFiles(place, scope);
    place.scopes.set(scope, files);
  }
  return files;
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
 * id or a unique id prefix; ids are looked for in this project first, then in all: a file
 * named for the id, else by the sessions' headers (the listing only names the sessions a
 * prefix matches when it is not unique).
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
    // A file named for the id, as pi names them and as its findById takes them.
    const named = sessionsNamedFor(place, scope, arg);
    if (named.length === 1) return named[0];
    // By their headers: no file is read further.
    const byHeader = sessionsWithIdPrefix(place, scope, arg);
    const exactHeader = byHeader.filter((s) => s.id === arg);
    const foundHeader = exactHeader.length > 0 ? exactHeader : byHeader;
    if (foundHeader.length === 1) return foundHeader[0].path;
    if (foundHeader.length === 0) continue;
    // Two or more: the listing names them (newest first) in the message.
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

/** The files of a scope named `<time>_<id>.jsonl` whose header has that id, in the scope's cwd if it has one. */
function sessionsNamedFor(place, scope, id) {
  const files = scopeFiles(place, scope);
  const suffix = `_${id}.jsonl`;
  const found = [];
  files.dirs.forEach((dir, folder) => {
    let names;
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith(suffix)) continue;
      const file = files.fileOf(folder, name).path;
      const header = readHeader(file);
      if (header?.id !== id) continue;
      if (files.cwd !== undefined && !listing.sessionCwdMatches(typeof header.cwd === 'string' ? header.cwd : '', files.cwd)) continue;
      found.push(file);
    }
  });
  return found;
}

/**
 * `{ path, id }` of the sessions of a scope whose header id starts with `prefix` (only their
 * headers read), in the scope's cwd if it has one.
 */
function sessionsWithIdPrefix(place, scope, prefix) {
  const files = scopeFiles(place, scope);
  const found = [];
  files.dirs.forEach((dir, folder) => {
    for (const [name, line] of native.findSessionsWithIdPrefix(dir, prefix) ?? []) {
      let header;
      try {
        header = JSON.parse(line);
      } catch {
        continue;
      }
      if (files.cwd !== undefined && !listing.sessionCwdMatches(typeof header.cwd === 'string' ? header.cwd : '', files.cwd)) continue;
      found.push({ path: files.fileOf(folder, name).path, id: header.id });
    }
  });
  return found;
}

/** What the listing makes of `file` in this project or in all, else what its header says. */
async function sessionInfoOf(file, place) {
  for (const scope of SCOPES) {
    const info = scopeFiles(place, scope).infoOf(file);
    if (info) return info;
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

/** A manager of the session file `target` (see recall-source.js openManager). */
function openManager(target, place) {
  return source.openManager(target, readHeader(target), place.cwd);
}

/** The doctor's findings of the files read lately, by file version. */
const damageNotes = new Map();
const DAMAGE_NOTES_KEPT = 64;

/**
 * A sentence saying that `file` is damaged (what pi-sessions doctor finds), or null.
 * `mayBeDamaged` is what the open saw: false spares the doctor's pass over the file.
 */
function damageNote(file, mayBeDamaged) {
  if (mayBeDamaged === false) return null;
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
 * Which session shows an entry copied into forks, and how many forks carry it, over the
 * scope's files (`scope`, a ScopeFiles) without a listing: sessions are opened (read only)
 * and summarized as the walks need them, and closed by close(). `searched(key)` says which
 * files the search reads.
 */
class Lineage {
  constructor(place, scope, searched) {
    this.place = place;
    this.scope = scope;
    this.searched = searched;
    this.parents = new Map();
    this.children = new Map();
    this.linked = new Set();
    this.managers = new Map();
  }

  /** The parent `file`'s header names (as the listing reads it, for a file it summarized). */
  parentOf(file) {
    if (!this.parents.has(file)) {
      const info = this.scope.knownInfo(file);
      this.setParent(file, info ? info.parentSessionPath : readHeader(file)?.parentSession);
    }
    return this.parents.get(file) ?? undefined;
  }

  /** `file`'s parent is the one `named` (a header's `parentSession`), if that is a path. */
  setParent(file, named) {
    this.parents.set(file, typeof named === 'string' && named !== '' ? fileKey(paths.resolvePath(named)) : null);
  }

  /** `file`'s parent as its header line names it (a header pass read it). */
  setParentFromHeader(file, line) {
    let header;
    try {
      header = JSON.parse(line);
    } catch {
      header = null;
    }
    this.setParent(file, header?.parentSession);
  }

  /** Adds `file` to the forks' tree: it and its parents, up to a root, through files of any folder. */
  link(file) {
    for (let here = file; !this.linked.has(here); ) {
      this.linked.add(here);
      const parent = this.parentOf(here);
      if (parent === undefined) break;
      if (!this.children.has(parent)) this.children.set(parent, []);
      this.children.get(parent).push(here);
      here = parent;
    }
  }

  /** Whether `file` holds an entry `id`: a file that cannot be read (or may not be) holds none. */
  holds(file, id) {
    let manager = this.managers.get(file);
    if (manager === undefined) {
      manager = null;
      try {
        if (!this.place.sessionFoldersOnly || inSessionFolders(file, this.place)) manager = openManager(readableSessionFile(file, this.place), this.place);
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
      const searchedInCycle = walk
        .slice(cycle)
        .filter((f) => this.searched(f))
        .sort();
      if (searchedInCycle.length > 0) return searchedInCycle[0];
    }
    for (let i = walk.length - 1; i > 0; i--) if (this.searched(walk[i])) return walk[i];
    return file;
  }

  /**
   * How many forks of `file` the scope lists (and forks of its forks, listed or not) carry
   * entry `id`, each file last changed no earlier than a second before `since` (the
   * entry's time: see searchHits), over the files link() added.
   */
  forks(file, id, since, seen = new Set([file])) {
    let count = 0;
    for (const child of this.children.get(file) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      if (!this.holds(child, id)) continue;
      const { info, mtimeMs } = this.scope.summaryOf(child);
      if (info !== null && latestTime(mtimeMs) >= since) count++;
      count += this.forks(child, id, since, seen);
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
 * The files of `files` (`{ path }`; a ScopeFiles: its folders' files, by name) whose
 * sessions' tool calls name `file`: its absolute path, or for a relative one any path
 * ending with it; a call's path is taken relative to its session's cwd (a leading `@`, as
 * some models write paths, dropped). `infoOf(file)` is the session of a file, null for one
 * that is not searched. In the order read.
 */
async function filesTouching(files, file, infoOf, place) {
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
  const touching = [];
  const options = { fields: ['toolCall'], signal: place.signal };
  const onFile = (session, matches) => {
    let cwd;
    for (const match of matches) {
      if (RECALL_TOOLS.has(match.toolName)) continue;
      if (cwd === undefined) {
        const info = infoOf(session);
        if (info === null) return false;
        cwd = info.cwd || place.cwd;
      }
      if (argumentPaths(match.arguments).some((p) => names(p, cwd))) {
        touching.push(session);
        break;
      }
    }
    return false;
  };
  if (Array.isArray(files)) await grepListedSessions(files, needle, options, onFile);
  else await grepListedFolders(files.dirs, needle, options, (folder, name) => files.fileOf(folder, name), onFile);
  return touching;
}

/**
 * A session counts as last active no later than this after its file's last change: its
 * messages' times are the clock of the process that wrote them, the file's the kernel's
 * (coarser, and a few ms behind).
 */
const CLOCK_SLACK_MS = 1000;

/** The latest time a session in a file of mtime `mtimeMs` counts as last active (see sessionTime). */
const latestTime = (mtimeMs) => (Number.isNaN(mtimeMs) ? Infinity : Math.round(mtimeMs) + CLOCK_SLACK_MS);

/**
 * The time a session is ordered by: its last activity (the listing's `modified`), but
 * never later than latestTime of its file, so that once the files changed down to some
 * time are read, no file still unread can hold a session ordered before them.
 */
function sessionTime(info, mtimeMs) {
  const modified = info.modified?.getTime?.() ?? Number.NaN;
  const latest = latestTime(mtimeMs);
  if (Number.isNaN(modified)) return latest === Infinity ? -Infinity : latest;
  return Math.min(modified, latest);
}

const collator = new Intl.Collator();

/** An entry's time in ms, or -Infinity where it has none. */
function entryTime(timestamp) {
  const time = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  return Number.isNaN(time) ? -Infinity : time;
}

/** A match's role as a hit has it: "toolCall" for a tool call block, else the message's role (or the entry's type). */
const hitRole = (match) => (match.field === 'toolCall' ? 'toolCall' : String(match.role));

/**
 * A grepSessions match as session_search reports a hit, but for `forks`: `session` (a
 * SessionInfo) is its session, by default the match's own (`path`, `sessionId`, `cwd`,
 * no name). Also `pi-sessions grep --json`'s. See index.d.ts `recallHitOf`.
 */
function recallHitOf(match, session = { id: match.sessionId, path: match.path, cwd: match.cwd }) {
  return {
    sessionId: session.id,
    sessionFile: session.path,
    cwd: session.cwd,
    sessionName: session.name ?? null,
    entryId: typeof match.entryId === 'string' ? match.entryId : null,
    role: hitRole(match),
    toolName: match.toolName,
    timestamp: typeof match.timestamp === 'string' ? match.timestamp : null,
    snippet: text.snippet(match.text, match.ranges),
  };
}

/**
 * The hits of `query` in `files` (`{ path, name }`, or a ScopeFiles: every file
 * of its folders), newest session first, at most `limit` (and whether there were more),
 * each with the count of forks carrying it. Not a listing: each file with hits is
 * summarized as the listing summarizes it (its session, whether the scope lists it, its
 * last activity). Files are read by name (about newest first) until more hits are found
 * than the limit; then the files still unread are stat'ed and read newest first, until
 * `limit` hits (and one more) are certain: none in a file still unread can come before
 * them (see sessionTime). So a word in few files costs one read of each file, as grep's,
 * and no stat. `infoOf(file)` is `{ info, mtimeMs }` of a file the search reads (info
 * null: none), `newestFirst()` the files searched, stat'ed and newest first,
 * `unsearched()` the scope's files (stat'ed) the search does not read (their headers
 * tell forks), `lineage` the Lineage of the search.
 */
async function searchHits(files, query, { scope, infoOf, newestFirst, unsearched, lineage, role, after, before, limit, place }) {
  // As the listing orders sessions: by time, ties as list() (by name) or listAll() (by mtime, then name).
  const byMtime = scope.byName ? () => 0 : (a, b) => (b.mtimeMs > a.mtimeMs ? 1 : b.mtimeMs < a.mtimeMs ? -1 : 0);
  const sessionBefore = (a, b) => a.time > b.time || (a.time === b.time && (byMtime(a, b) || collator.compare(b.name, a.name) || a.seq - b.seq) < 0);
  const pending = new Heap(sessionBefore);
  const certain = [];
  let certainHits = 0;
  let found = 0;
  let sessions = 0;
  // The files read with hits: the only ones read that can carry a hit's entry (see forks below).
  const carriers = [];
  const fields = role === undefined ? SEARCH_FIELDS : ROLE_FIELDS[role];
  const onFile = (file, matches) => {
    // One hit per message and kind (a tool call counts apart, by tool name), from its first matching block.
    const inFile = new Map();
    for (const match of matches) {
      const kind = hitRole(match);
      const { toolName } = match;
      if (toolName !== null && RECALL_TOOLS.has(toolName)) continue;
      if (role !== undefined && kind !== role) continue;
      const key = typeof match.entryId === 'string' ? `${match.entryId}\0${kind}\0${toolName}` : Symbol('no id');
      if (!inFile.has(key)) inFile.set(key, match);
    }
    const summary = inFile.size > 0 ? infoOf(file) : null;
    if (summary === null || summary.info === null) return false;
    const { info, mtimeMs } = summary;
    const key = fileKey(info.path);
    carriers.push(key);
    const hits = [];
    for (const match of [...inFile.values()].reverse()) {
      if (typeof match.entryId === 'string' && lineage.shownIn(key, match.entryId) !== key) continue;
      const hit = recallHitOf(match, info);
      hit.forks = 0;
      hits.push(hit);
    }
    if (hits.length === 0) return false;
    pending.push({ time: sessionTime(info, mtimeMs), mtimeMs, name: path.basename(info.path), seq: sessions++, hits });
    found += hits.length;
    return false;
  };
  const grep = (list, enough) => grepListedSessions(list, query, { fields, since: after, until: before, signal: place.signal, enough }, onFile);

  // By name, until there are more hits than the limit (or every file is read).
  let done = -1;
  const enoughFound = (upTo) => {
    if (found <= limit) return false;
    done = upTo;
    return true;
  };
  // Then the files not read yet, newest first (`{ path, name, mtimeMs }`; in a grep of
  // folders `{ place, mtimeMs }` until named, as most never are).
  let rest;
  let named = (list) => list;
  if (Array.isArray(files)) {
    await grep(files, enoughFound);
    if (done !== -1) {
      const read = new Set(files.slice(0, done).map((f) => f.path));
      rest = newestFirst().filter((f) => !read.has(f.path));
    }
  } else {
    const options = { fields, since: after, until: before, signal: place.signal, enough: enoughFound };
    const scan = await grepListedFolders(files.dirs, query, options, (folder, name) => files.fileOf(folder, name), onFile);
    if (done !== -1) {
      const mtimes = scan.mtimes();
      rest = [];
      for (let i = done; i < mtimes.length; i++) rest.push({ place: i, mtimeMs: mtimes[i] });
      // Newest first; a file that could not be stat'ed last.
      rest.sort((a, b) => (Number.isNaN(a.mtimeMs) ? 1 : 0) - (Number.isNaN(b.mtimeMs) ? 1 : 0) || b.mtimeMs - a.mtimeMs || a.place - b.place);
      named = (list) => {
        const unnamed = list.filter((f) => f.path === undefined);
        const { folders, names } = scan.files(Uint32Array.from(unnamed.map((f) => f.place)));
        unnamed.forEach((f, k) => Object.assign(f, files.fileOf(folders[k], names[k])));
        return list;
      };
    }
  }
  let unread = [];
  if (rest !== undefined) {
    // Each session is certain once no unread file can come before it.
    const unstated = rest.some((f) => Number.isNaN(f.mtimeMs));
    done = rest.length;
    const settle = (upTo) => {
      const bound = upTo >= rest.length ? -Infinity : unstated ? Infinity : latestTime(rest[upTo].mtimeMs);
      while (pending.size > 0 && pending.peek().time > bound) {
        const session = pending.pop();
        certain.push(session);
        certainHits += session.hits.length;
      }
      if (certainHits <= limit) return false;
      done = upTo;
      return true;
    };
    if (!settle(0)) await grep(named(rest), settle);
    unread = rest.slice(done);
  }
  const stopped = certainHits > limit;
  while (!stopped && pending.size > 0) certain.push(pending.pop());
  const all = certain.flatMap((session) => session.hits);
  const hits = all.slice(0, limit);

  // Forks: a fork carrying an entry holds a copy of its line, which a search reads as it
  // reads the entry's; so among the files the search read, only those with hits can carry
  // one. Of the rest of the scope (unread, or not searched), the files changed since a
  // second before the earliest hit's entry was written are looked at by their headers:
  // a fork is written after what it copies (see Lineage.forks).
  const counted = hits.filter((h) => h.entryId !== null);
  if (counted.length > 0) {
    for (const key of carriers) lineage.link(key);
    const since = Math.min(...counted.map((h) => entryTime(h.timestamp)));
    const recent = (f) => latestTime(f.mtimeMs) >= since;
    const rest = [...unsearched().filter(recent), ...named(unread.filter(recent))];
    if (rest.length > 0) {
      await scanParentHeaders(rest, { signal: place.signal }, (file, line) => {
        const key = fileKey(file.path);
        lineage.setParentFromHeader(key, line);
        lineage.link(key);
      });
    }
    for (const hit of counted) hit.forks = lineage.forks(fileKey(hit.sessionFile), hit.entryId, entryTime(hit.timestamp));
  }
  return { hits, truncated: all.length > limit };
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

/**
 * A listing's SessionInfo as session_search lists a session. Also `pi-sessions search
 * --json`'s. See index.d.ts `recallSessionOf`.
 */
function recallSessionOf(info) {
  return {
    sessionId: info.id,
    sessionFile: info.path,
    cwd: info.cwd,
    name: info.name ?? null,
    firstMessage: info.firstMessage ?? '',
    modified: isoOrNull(info.modified),
    size: fileSize(info.path),
  };
}

function listedSessions(sessions, limit) {
  return { sessions: sessions.slice(0, limit).map(recallSessionOf), truncated: sessions.length > limit };
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

/** The sessions of a scope without a query (a listing), as `{ result, where }`. */
async function sessionsFound(place, { scope, session, file, after, before, limit }) {
  let sessions = await listScope(place, scope);
  let where = scope === 'project' ? 'in this project' : 'in every project';
  if (session !== undefined) {
    const sessionFile = await resolveSession(session, place);
    readableSessionFile(sessionFile, place);
    const info = await sessionInfoOf(sessionFile, place);
    sessions = [info];
    where = `in session ${info.id || sessionFile}`;
  }
  if (file !== undefined) {
    sessions = await filesTouching(sessions, file, (s) => s, place);
    where += ` whose tools read or wrote ${file}`;
  }
  place.signal?.throwIfAborted();
  const found = listedSessions(sessionsBetween(sessions, after, before), limit);
  return { result: { hits: [], sessions: found.sessions, truncated: found.truncated }, where };
}

/** The hits of `query` (see searchHits), as `{ result, where }`. */
async function hitsFound(place, query, { scope, role, session, file, after, before, limit }) {
  const files = scopeFiles(place, scope);
  let where = scope === 'project' ? 'in this project' : 'in every project';
  let searched;
  let infoOf = (f) => files.summaryOf(f.path);
  let isSearched = (key) => files.infoOf(key) !== null;
  let newestFirst = () => files.newestFirst();
  let unsearched = () => [];
  let only;
  if (session !== undefined) {
    const sessionFile = await resolveSession(session, place);
    readableSessionFile(sessionFile, place);
    const info = await sessionInfoOf(sessionFile, place);
    only = { key: fileKey(info.path), info };
    searched = [{ path: info.path, name: path.basename(info.path) }];
    infoOf = () => ({ info, mtimeMs: Number.NaN });
    isSearched = (key) => key === only.key;
    newestFirst = () => [];
    unsearched = () => files.newestFirst().filter((f) => fileKey(f.path) !== only.key);
    where = `in session ${info.id || sessionFile}`;
  } else {
    searched = files;
  }
  if (file !== undefined) {
    const touching = await filesTouching(searched, file, (f) => infoOf(f).info, place);
    const touched = new Set(touching.map((f) => f.path));
    const keys = new Set(touching.map((f) => fileKey(f.path)));
    const inSearch = isSearched;
    searched = touching;
    isSearched = (key) => keys.has(key) && inSearch(key);
    newestFirst = () => files.newestFirst().filter((f) => touched.has(f.path));
    unsearched = () => files.newestFirst().filter((f) => !keys.has(fileKey(f.path)));
    where += ` whose tools read or wrote ${file}`;
  }
  if (role !== undefined) where += ` (${role} messages)`;
  place.signal?.throwIfAborted();
  const lineage = new Lineage(place, files, isSearched);
  if (only !== undefined) lineage.setParent(only.key, only.info.parentSessionPath);
  try {
    const result = await searchHits(searched, query, { scope: files, infoOf, newestFirst, unsearched, lineage, role, after, before, limit, place });
    return { result, where };
  } finally {
    lineage.close();
  }
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

  const { result, where } =
    query === undefined
      ? await sessionsFound(place, { scope, session, file, after, before, limit })
      : await hitsFound(place, query, { scope, role, session, file, after, before, limit });
  return { ...result, text: searchText(result, { query, where, limit }) };
}

// ===== read =====

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

/**
 * A page of a branch read through `view` (lib/recall-source.js). The branch is positions: only the
 * page's entries are built, and those between them that it counts as left out.
 */
function readPage(view, file, o) {
  const sessionId = view.sessionId();
  const has = (id) => view.has(id);
  const noEntry = (id) => recallError(`No entry '${id}' in session ${sessionId}`, ERR_NO_ENTRY);
  let leafId;
  if (o.leaf !== undefined) {
    if (!has(o.leaf)) throw noEntry(o.leaf);
    leafId = o.leaf;
  } else if (o.session === 'current' && o.currentLeafId !== undefined && has(o.currentLeafId)) {
    // pi's leaf, which /tree may have moved off the file's last entry.
    leafId = o.currentLeafId;
  } else {
    leafId = view.leafId();
  }
  const target = o.around ?? (o.from !== undefined && o.from !== 'start' ? o.from : undefined);
  if (target !== undefined && !has(target)) throw noEntry(target);
  const none = { positions: new Uint32Array(0), readable: new Uint32Array(0), target: -1 };
  let branch = leafId === null || leafId === undefined ? none : view.branch(leafId, target);
  const headNotes = [];
  if (target !== undefined && branch.target < 0) {
    if (o.leaf !== undefined) throw recallError(`Entry '${target}' is not on the branch to leaf '${o.leaf}'`, ERR_NO_ENTRY);
    const newLeaf = view.newestLeafUnder(target);
    headNotes.push(`Entry ${target} is not on the branch to the session's leaf ${leafId}: shown is the branch through it, to its newest leaf ${newLeaf}.`);
    leafId = newLeaf;
    branch = view.branch(newLeaf, target);
  }
  // onBranch[k]: where the k-th readable entry is on the branch.
  const { positions, readable: onBranch } = branch;
  const total = onBranch.length;

  const size = o.last ?? o.limit;
  let start = 0;
  if (o.last !== undefined) start = Math.max(0, total - o.last);
  else if (target !== undefined) {
    const at = branch.target;
    let k = onBranch.findIndex((i) => i >= at);
    if (k === -1) k = total;
    start = o.around !== undefined ? Math.max(0, Math.min(k - Math.floor((size - 1) / 2), total - size)) : k;
  }
  // The readable entries a page may show, and the one after them (the next page's first).
  const end = Math.min(total, start + size + 1);
  const readable = start < end ? view.entries(Array.from(onBranch.subarray(start, end), (i) => positions[i])) : [];

  // The heading first, within the budget: a page is cut after it, never it.
  const name = view.name();
  const budget = new text.OutputBudget();
  budget.add([text.oneLine(`Session ${sessionId}${name ? ` "${text.oneLine(name, 80)}"` : ''} · cwd ${view.cwd() || '-'} · ${file}`, 2000)]);
  const damaged = damageNote(file, view.mayBeDamaged());
  if (damaged) budget.add([damaged]);
  budget.add(headNotes);
  if (total === 0) budget.add([leafId ? `The branch to leaf ${leafId} has no messages.` : 'The session has no entries.']);
  else if (start >= total) budget.add([`Branch to leaf ${leafId}: ${plural(total, 'message')} and summaries; none after that point.`]);
  else budget.add([`Branch to leaf ${leafId}: ${plural(total, 'message')} and summaries; this page starts at ${start + 1}.`]);
  budget.add(['']);

  const counts = { thinking: 0, images: 0, cutResults: 0 };
  let shown = 0;
  let cut = false;
  for (let k = start; k < total && shown < size; k++) {
    const entryCounts = { thinking: 0, images: 0, cutResults: 0 };
    const lines = [...text.entryLines(readable[k - start], { thinking: o.thinking, counts: entryCounts }), ''];
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
  const page = readable.slice(0, shown);
  const skipped = new Map();
  if (shown > 0) {
    // The entries between the page's first and last that it does not show.
    const between = [];
    for (let k = start, i = onBranch[start]; i <= onBranch[start + shown - 1]; i++) {
      if (i === onBranch[k]) k++;
      else between.push(positions[i]);
    }
    for (const entry of view.entries(between)) {
      const kind = entry.type === 'message' ? `${entry.message?.role} message` : entry.type;
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
    }
  }
  const next = start + shown < total ? (readable[shown].id ?? null) : null;

  const notes = [];
  if (cut) notes.push('This page stops early at the output limit (50 KB or 2,000 lines); the next page goes on from there.');
  const leftOut = leftOutNote(counts, skipped);
  if (leftOut) notes.push(leftOut);
  if (shown > 0) notes.push(`This page: ${start + 1}-${start + shown} of ${total}.`);
  if (start > 0) notes.push(`Before this page: ${plural(Math.min(start, total), 'earlier message')} on this branch (from "start" reads from the first).`);
  if (next !== null) notes.push(`Next page: from "${next}" (${total - start - shown} more).`);
  else if (total > 0) notes.push('End of the branch.');

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
  const target = readableSessionFile(file, place);
  for (let attempt = 0; ; attempt++) {
    const opened = source.takeSource(target, readHeader(target), place.cwd, attempt > 0);
    try {
      return readPage(opened.source, target, { session, around, from, last, limit, leaf, currentLeafId, thinking });
    } catch (error) {
      // Rewritten since its index was made: the next open indexes it again.
      if (!(error instanceof source.ChangedWhileRead) || attempt > 0) throw error;
      source.dropSource(opened);
    } finally {
      source.keepOpen(opened);
    }
  }
}

module.exports = { recallSearch, recallRead, recallHitOf, recallSessionOf };
