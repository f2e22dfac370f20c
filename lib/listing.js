'use strict';
// Finding and listing sessions. Each file is summarized in Rust off the main
// thread (src/listing.rs); this file walks folders, applies the reference's
// ordering, filtering and progress rules, and builds the SessionInfo objects.
const fs = require('fs');
const fsp = require('fs/promises');
const path = require('path');
const native = require('../binding.js');
const paths = require('./paths.js');

const MAX_CONCURRENT_SESSION_DISCOVERY_LOADS = 64;
// The reference loads session infos ten at a time (see loadInfos).
const REFERENCE_WORKERS = 10;
const CURRENT_SESSION_LIST_PUBLISH_INTERVAL = 10;
const ALL_SESSION_LIST_PUBLISH_INTERVAL = 100;

// String#localeCompare with no locale or options compares as a default
// Intl.Collator does; one collator is far cheaper than a call per comparison.
const collator = new Intl.Collator();

const CACHE_ENV = 'PI_SESSION_NATIVE_CACHE_DIR';
// undefined: not configured by the caller, so the environment decides.
let configuredCacheDir;
let appliedCacheDir = null;

function isInside(parent, child) {
  const relative = path.relative(path.resolve(parent), path.resolve(child));
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function checkCacheDir(dir) {
  const resolved = paths.resolvePath(dir);
  if (isInside(paths.getSessionsDir(), resolved) || isInside(resolved, paths.getSessionsDir())) {
    throw new Error(`The listing cache folder must not be inside pi's session folders (or hold them): ${resolved}`);
  }
  return resolved;
}

/**
 * Keeps listing summaries across processes in `cacheDir` (or, with `null`,
 * only in memory). Without a call, the folder named by the environment variable
 * PI_SESSION_NATIVE_CACHE_DIR is used, if any.
 */
function configureListing({ cacheDir } = {}) {
  configuredCacheDir = cacheDir == null ? null : checkCacheDir(cacheDir);
  applyCacheDir();
}

function applyCacheDir() {
  let dir = configuredCacheDir;
  if (dir === undefined) {
    const fromEnv = process.env[CACHE_ENV];
    dir = null;
    if (fromEnv) {
      try {
        dir = checkCacheDir(fromEnv);
      } catch (error) {
        process.emitWarning(`${CACHE_ENV} ignored: ${error.message}`);
      }
    }
  }
  if (dir !== appliedCacheDir) {
    native.setListingCacheDir(dir ?? undefined);
    appliedCacheDir = dir;
  }
}

/** The header of a file, or null; discovery never throws. */
function headerForDiscovery(file) {
  try {
    const line = native.readSessionHeader(file);
    return line === null || line === '\0toolong' ? null : JSON.parse(line);
  } catch {
    return null;
  }
}

function sessionCwdMatches(cwd, resolvedCwd) {
  return typeof cwd === 'string' && cwd !== '' && paths.pathsEqual(paths.resolvePath(cwd), resolvedCwd);
}

function findMostRecentSession(sessionDir, cwd) {
  const dir = paths.normalizePath(sessionDir);
  const resolvedCwd = cwd ? paths.resolvePath(cwd) : undefined;
  try {
    // Newest first, stats taken in Rust on several threads.
    const names = native.recentSessionFiles(dir);
    if (names === null) return null;
    for (const name of names) {
      const file = path.join(dir, name);
      const header = headerForDiscovery(file);
      if (header && (!resolvedCwd || sessionCwdMatches(header.cwd, resolvedCwd))) return file;
    }
    return null;
  } catch {
    return null;
  }
}

function findById(cwd, id, sessionDir) {
  const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
  const resolvedCwd = paths.resolvePath(cwd);
  // Headers hold string ids only, so no other id can match.
  if (typeof id !== 'string') return undefined;
  try {
    // First up to the file named for the id; only if the cwd filter turns down
    // every file found there, the whole folder.
    for (const whole of [false, true]) {
      const found = native.findSessionsWithId(dir, id, whole);
      if (found === null) break;
      for (const [name, line] of found.files) {
        if (filterCwd && !sessionCwdMatches(JSON.parse(line).cwd, resolvedCwd)) continue;
        return path.join(dir, name);
      }
      if (found.complete) break;
    }
  } catch {
    // Best-effort, as in the reference.
  }
  return undefined;
}

/** Turns a native summary into the reference's SessionInfo. */
function sessionInfo(file, summary, stats) {
  const header = JSON.parse(summary.header);
  let lastActivity = summary.lastActivity ?? undefined;
  for (const raw of summary.unparsedTimes) {
    const t = new Date(JSON.parse(raw)).getTime();
    if (!Number.isNaN(t)) lastActivity = Math.max(lastActivity ?? 0, t);
  }
  const headerTime = typeof header.timestamp === 'string' ? new Date(header.timestamp).getTime() : Number.NaN;
  const modified =
    typeof lastActivity === 'number' && lastActivity > 0
      ? new Date(lastActivity)
      : !Number.isNaN(headerTime)
        ? new Date(headerTime)
        : stats.mtime;
  return {
    path: file,
    id: header.id,
    cwd: typeof header.cwd === 'string' ? header.cwd : '',
    name: summary.name == null ? undefined : JSON.parse(summary.name),
    parentSessionPath: header.parentSession,
    created: new Date(header.timestamp),
    modified,
    messageCount: summary.messageCount,
    firstMessage: (summary.firstMessage ?? JSON.parse(summary.firstMessageLiteral)) || '(no messages)',
    allMessagesText: summary.allMessagesText ?? JSON.parse(summary.allMessagesTextLiteral),
  };
}

/**
 * The SessionInfo last built for each path, under the native cache's token for
 * that version of the file: an unchanged file is answered with a fresh copy
 * without moving its texts across again.
 */
const infoCache = new Map();

/** A fresh SessionInfo equal to a cached one (strings are shared; they are immutable). */
function copyInfo({ info, header }) {
  const copy = {
    ...info,
    created: new Date(info.created.getTime()),
    modified: new Date(info.modified.getTime()),
  };
  // A header id or parentSession that is an object must be a new object too.
  if ((typeof info.id === 'object' && info.id !== null) || (typeof info.parentSessionPath === 'object' && info.parentSessionPath !== null)) {
    const fresh = JSON.parse(header);
    copy.id = fresh.id;
    copy.parentSessionPath = fresh.parentSession;
  }
  return copy;
}

/** The reference's buildSessionInfo returns null where building the info throws. */
function tryInfo(file, summary, stats) {
  try {
    return sessionInfo(file, summary, stats);
  } catch {
    return null;
  }
}

/**
 * Summarizes files in Rust on threads of its own: `source.files` (`{ path,
 * stats? }` objects), or every `.jsonl` file of `source.dir` (listed in Rust). `onLoaded(info, index)` is called on
 * this thread as each file finishes, in completion order like the reference's
 * concurrent loads; `onStart(total)` first. Resolves to `{ results, names }`
 * (`names` for a folder: the names in readdir order, `null` if the folder
 * cannot be read). Rejects with the signal's reason on abort, or with what
 * `onLoaded` throws.
 */
function loadInfos(source, onLoaded, signal, onStart) {
  const files = source.files;
  if (files?.length === 0) return Promise.resolve({ results: [], names: null });
  signal?.throwIfAborted();
  applyCacheDir();
  return new Promise((resolve, reject) => {
    let settled = false;
    let failed = false;
    let throwsSeen = 0;
    let handle;
    let results;
    let names = null;
    const rejectOnly = (error) => reject(error);
    // What this listing told the scanner it holds; answers "unchanged" results.
    const known = files ? files.map((f) => infoCache.get(f.path)) : [];
    const settle = (error) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) {
        resolve({ results, names });
      } else {
        handle?.cancel();
        reject(error);
      }
    };
    const onAbort = () => settle(signal.reason);
    const onResult = (result) => {
      if (settled) return;
      if (result.index < 0) {
        if (failed) settled = true;
        else settle();
        return;
      }
      let file;
      if (files) {
        file = files[result.index];
      } else {
        names[result.index] = result.name;
        // path.join as the later listings build it: the same string for the
        // infoCache key (a concatenation makes a rope that is slower to look up).
        file = { path: path.join(source.dir, result.name) };
      }
      let info = null;
      const cached = result.unchanged ? known[result.index] : undefined;
      if (cached) {
        info = cached.info && copyInfo(cached);
      } else if (result.summary && !result.failed) {
        // `stats.mtime` rounds `mtimeMs` to the millisecond.
        const stats = file.stats ?? { mtime: new Date(Math.round(result.mtimeMs)) };
        info = tryInfo(file.path, result.summary, stats);
        const header = result.summary.header;
        infoCache.set(file.path, { token: result.token, header, info: info && copyInfo({ info, header }) });
      } else {
        infoCache.delete(file.path);
      }
      results[result.index] = info;
      try {
        onLoaded(info, result.index);
      } catch (error) {
        // As in the reference, whose loads run on ten workers: the first
        // callback error rejects the listing, each error stops one worker,
        // and the others keep loading (and reporting) until none is left.
        throwsSeen++;
        if (!failed) {
          failed = true;
          rejectOnly(error);
        }
        if (throwsSeen >= Math.min(REFERENCE_WORKERS, results.length)) {
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          handle.cancel();
        }
      }
    };
    if (files) {
      handle = native.scanSessions(
        files.map((f) => f.path),
        known.map((k) => k?.token ?? 0),
        onResult,
      );
    } else {
      handle = native.scanSessionFolder(source.dir, onResult);
      if (handle === null) {
        settled = true;
        resolve({ results: [], names: null });
        return;
      }
    }
    results = new Array(handle.files).fill(null);
    if (!files) names = new Array(handle.files);
    onStart?.(handle.files);
    if (handle.files === 0) {
      settle();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function mapWithConcurrency(items, limit, map, signal) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next++;
      results[index] = await map(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, () => worker()));
  return results;
}

function sortSessionInfos(sessions) {
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** Folders listed before in this process: their files' infos are cached. */
const listedDirs = new Set();

async function listSessionsFromDir(dir, onProgress, signal) {
  signal?.throwIfAborted();
  if (!fs.existsSync(dir)) return [];
  try {
    let total = 0;
    const partial = [];
    let loaded = 0;
    const onLoaded = (info) => {
      loaded++;
      if (info) partial.push(info);
      const publish = loaded === 1 || loaded % CURRENT_SESSION_LIST_PUBLISH_INTERVAL === 0 || loaded === total;
      onProgress?.(loaded, total, publish ? sortSessionInfos([...partial]) : undefined);
    };
    if (listedDirs.has(dir)) {
      // Seen before: tell the scanner which summaries this process holds.
      const files = (await fsp.readdir(dir))
        .filter((f) => f.endsWith('.jsonl'))
        .sort((a, b) => collator.compare(b, a))
        .map((f) => ({ path: path.join(dir, f) }));
      total = files.length;
      const { results } = await loadInfos({ files }, onLoaded, signal);
      return results.filter((info) => info !== null);
    }
    // First time: Rust lists the folder and reads it newest name first, and
    // nothing is built here for a file before its result arrives. The
    // reference's order (localeCompare, descending) decides only the order of
    // the results (ties of `modified` keep it); progress lists follow
    // completion order. Sorting indices in readdir order with the reference's
    // comparator gives its permutation, ties included.
    listedDirs.add(dir);
    const { results, names } = await loadInfos({ dir }, onLoaded, signal, (n) => {
      total = n;
    });
    if (names === null) return [];
    return names
      .map((_, i) => i)
      .sort((i, j) => collator.compare(names[j], names[i]))
      .map((i) => results[i])
      .filter((info) => info !== null);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

async function list(cwd, sessionDir, onProgress, signal) {
  const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
  const resolvedCwd = paths.resolvePath(cwd);
  const include = (s) => !filterCwd || sessionCwdMatches(s.cwd, resolvedCwd);
  const progress = onProgress ? (loaded, total, partial) => onProgress(loaded, total, partial?.filter(include)) : undefined;
  const sessions = (await listSessionsFromDir(dir, progress, signal)).filter(include);
  return sortSessionInfos(sessions);
}

async function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
  const customDir =
    typeof sessionDirOrOnProgress === 'string' ? paths.normalizePath(sessionDirOrOnProgress) : undefined;
  const progress =
    typeof sessionDirOrOnProgress === 'function'
      ? sessionDirOrOnProgress
      : typeof onProgressOrSignal === 'function'
        ? onProgressOrSignal
        : undefined;
  const abortSignal =
    typeof sessionDirOrOnProgress === 'string' || typeof onProgressOrSignal === 'function'
      ? signal
      : (onProgressOrSignal ?? signal);
  abortSignal?.throwIfAborted();
  if (customDir) return sortSessionInfos(await listSessionsFromDir(customDir, progress, abortSignal));
  const sessionsDir = paths.getSessionsDir();
  try {
    if (!fs.existsSync(sessionsDir)) return [];
    const entries = await fsp.readdir(sessionsDir, { withFileTypes: true });
    const dirs = entries
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => path.join(sessionsDir, e.name));
    const dirFiles = await mapWithConcurrency(
      dirs,
      MAX_CONCURRENT_SESSION_DISCOVERY_LOADS,
      async (dir) => {
        try {
          return (await fsp.readdir(dir)).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dir, f));
        } catch {
          return [];
        }
      },
      abortSignal,
    );
    const candidates = await mapWithConcurrency(
      dirFiles.flat(),
      MAX_CONCURRENT_SESSION_DISCOVERY_LOADS,
      async (file) => {
        try {
          return { path: file, stats: await fsp.stat(file) };
        } catch {
          return { path: file };
        }
      },
      abortSignal,
    );
    candidates.sort(
      (a, b) =>
        (b.stats?.mtimeMs ?? Number.NEGATIVE_INFINITY) - (a.stats?.mtimeMs ?? Number.NEGATIVE_INFINITY) ||
        collator.compare(path.basename(b.path), path.basename(a.path)),
    );
    const total = candidates.length;
    let loaded = 0;
    let firstLoaded = false;
    const partial = [];
    const { results } = await loadInfos(
      { files: candidates },
      (info, index) => {
        loaded++;
        if (index === 0) firstLoaded = true;
        if (info) partial.push(info);
        const publish = firstLoaded && (index === 0 || loaded % ALL_SESSION_LIST_PUBLISH_INTERVAL === 0 || loaded === total);
        progress?.(loaded, total, publish ? sortSessionInfos([...partial]) : undefined);
      },
      abortSignal,
    );
    return sortSessionInfos(results.filter((info) => info !== null));
  } catch {
    abortSignal?.throwIfAborted();
    return [];
  }
}

module.exports = { findMostRecentSession, findById, list, listAll, configureListing };
