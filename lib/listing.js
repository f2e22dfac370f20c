'use strict';
// Finding and listing sessions. Each file is summarized in Rust off the main
// thread (src/catalog/listing.rs); this file walks folders, applies the reference's
// ordering, filtering and progress rules, and builds the SessionInfo objects.
const fs = require('fs');
const fsp = require('fs/promises');
const path = require('path');
const native = require('./native.js');
const paths = require('./paths.js');

// The reference loads session infos ten at a time (see loadInfos).
const REFERENCE_WORKERS = 10;
const CURRENT_SESSION_LIST_PUBLISH_INTERVAL = 10;
const ALL_SESSION_LIST_PUBLISH_INTERVAL = 100;
// Files handed to JavaScript callbacks per macrotask, at most, and time.
const PUMP_FILES = 256;
const PUMP_MS = 2;

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
function sessionInfo(file, summary, stats, texts = true) {
  const header = JSON.parse(summary.header);
  let lastActivity = summary.lastActivity ?? undefined;
  for (const raw of summary.unparsedTimes) {
    const t = new Date(JSON.parse(raw)).getTime();
    if (!Number.isNaN(t)) lastActivity = Math.max(lastActivity ?? 0, t);
  }
  const created = new Date(header.timestamp);
  const headerTime = typeof header.timestamp === 'string' ? created.getTime() : Number.NaN;
  const modified =
    typeof lastActivity === 'number' && lastActivity > 0
      ? new Date(lastActivity)
      : !Number.isNaN(headerTime)
        ? new Date(headerTime)
        : stats.mtime;
  return makeInfo(
    file,
    header.id,
    typeof header.cwd === 'string' ? header.cwd : '',
    summary.name == null ? undefined : JSON.parse(summary.name),
    header.parentSession,
    created,
    modified,
    summary.messageCount,
    (summary.firstMessage ?? JSON.parse(summary.firstMessageLiteral)) || '(no messages)',
    texts ? (summary.allMessagesText ?? JSON.parse(summary.allMessagesTextLiteral)) : undefined,
  );
}

/**
 * Every SessionInfo is made here, read or copied, so that all of a listing's
 * have one shape: V8 optimizes the partial lists' loops for the shape of the
 * first listing, and a second shape from the copies of a warm one undid that
 * (the second list() of a process took half as long again).
 */
function makeInfo(path, id, cwd, name, parentSessionPath, created, modified, messageCount, firstMessage, allMessagesText) {
  return allMessagesText === undefined
    ? { path, id, cwd, name, parentSessionPath, created, modified, messageCount, firstMessage }
    : { path, id, cwd, name, parentSessionPath, created, modified, messageCount, firstMessage, allMessagesText };
}

/**
 * Per folder, what its last complete listing built, by the native scanner's
 * token (a token names one version of one file): `{ info, header, name }`.
 * Files the scanner reports unchanged are answered from here with fresh
 * copies, without their texts crossing over again.
 */
const folderInfos = new Map();

/**
 * The scanner's token of the file version each SessionInfo of a folder's
 * last complete listing was built from, for the search (lib/search.js), which
 * finds its texts in the native listing cache by (path, token); an info of an
 * earlier listing has none (0) and hands its own texts over. By folder (as
 * path.dirname gives it): the infos handed out and their tokens, side by side,
 * and a map from info to place built on the first question. Not a WeakMap by
 * info: 5,000 new weak keys per listing cost the garbage collector more than
 * the listing's other work; and most listings are never searched.
 */
const handedTokens = new Map();
/** The same for listings without texts (`allMessagesText: false`). */
const handedTextlessTokens = new Map();

class HandedInfos {
  infos = [];
  tokens = [];
  #places = null;

  add(info, token) {
    this.infos.push(info);
    this.tokens.push(token);
  }

  /** 0 for an info this listing did not hand out. */
  tokenOf(info) {
    if (this.#places === null) {
      // Keyed by the objects themselves: a path built by concatenation would
      // be flattened and hashed first.
      this.#places = new Map();
      this.infos.forEach((handed, place) => this.#places.set(handed, place));
    }
    const place = this.#places.get(info);
    return place === undefined ? 0 : this.tokens[place];
  }
}

/** The listings that may have handed out `info` (path.dirname of its path). */
function handedFor(info) {
  const file = info?.path;
  if (typeof file !== 'string') return [];
  const folder = path.dirname(file);
  return [handedTokens.get(folder), handedTextlessTokens.get(folder)].filter((h) => h !== undefined);
}

/**
 * The token of each session (0 for one no last listing handed out): the
 * listing that answered the one before is asked first, so that a list()'s
 * sessions cost no path.dirname each.
 */
function listingTokens(sessions) {
  const tokens = new Float64Array(sessions.length);
  let last;
  for (let i = 0; i < sessions.length; i++) {
    const info = sessions[i];
    let token = last?.tokenOf(info) ?? 0;
    if (!token) {
      for (const handed of handedFor(info)) {
        token = handed.tokenOf(info);
        if (token) {
          last = handed;
          break;
        }
      }
    }
    tokens[i] = token;
  }
  return tokens;
}

/** A fresh SessionInfo equal to a cached one (strings are shared; they are immutable). */
function copyInfo({ info, header }) {
  const copy = makeInfo(
    info.path,
    info.id,
    info.cwd,
    info.name,
    info.parentSessionPath,
    new Date(info.created.getTime()),
    new Date(info.modified.getTime()),
    info.messageCount,
    info.firstMessage,
    info.allMessagesText,
  );
  // A header id or parentSession that is an object must be a new object too.
  if ((typeof info.id === 'object' && info.id !== null) || (typeof info.parentSessionPath === 'object' && info.parentSessionPath !== null)) {
    const fresh = JSON.parse(header);
    copy.id = fresh.id;
    copy.parentSessionPath = fresh.parentSession;
  }
  return copy;
}

/** The reference's buildSessionInfo returns null where building the info throws. */
function tryInfo(file, summary, stats, texts) {
  try {
    return sessionInfo(file, summary, stats, texts);
  } catch {
    return null;
  }
}

/**
 * listAll()'s candidate order from the native one (newest mtime first, files
 * without a stat last, ties in discovery order): the reference breaks ties of
 * mtime with localeCompare (descending) on the names, in a stable sort. Returns
 * each candidate's place in the reference's order.
 */
function referenceCandidateOrder(names, mtimeMs) {
  const order = Array.from({ length: names.length }, (_, i) => i);
  const same = (a, b) => a === b || (Number.isNaN(a) && Number.isNaN(b));
  for (let start = 0; start < order.length; ) {
    let end = start + 1;
    while (end < order.length && same(mtimeMs[end], mtimeMs[start])) end++;
    if (end - start > 1) {
      const run = order.slice(start, end).sort((i, j) => collator.compare(names[j], names[i]) || i - j);
      order.splice(start, run.length, ...run);
    }
    start = end;
  }
  const placeOf = new Uint32Array(order.length);
  order.forEach((candidate, place) => {
    placeOf[candidate] = place;
  });
  return placeOf;
}

/**
 * Summarizes files in Rust on threads of its own: every `.jsonl` file of
 * `source.dir` (list()), or of each of `source.dirs` (listAll(); found,
 * stat'ed and ordered in Rust). `onLoaded(info, index)` is called on this
 * thread as each file finishes, in completion order like the reference's
 * concurrent loads, with the file's index in the reference's order of files
 * (for one folder: readdir order, which the caller sorts); `onStart(total)`
 * first. Resolves to `{ results, names }` (`names`: for one folder, the names
 * in readdir order; `null` if the folder cannot be read). Rejects with the
 * signal's reason on abort, or with what `onLoaded` throws.
 */
function loadInfos(source, onLoaded, signal, onStart) {
  signal?.throwIfAborted();
  applyCacheDir();
  const dirs = source.dirs ?? [source.dir];
  // Without texts (`source.texts === false`), infos are neither answered from
  // nor kept for the full listings.
  const texts = source.texts !== false;
  // What this listing holds from the last ones, and what it builds for the
  // next: the held records it answered from (stamped with this listing), and
  // the ones it adds. A warm listing answers every file from its folder's
  // records and keeps that map as it is.
  const held = dirs.map((dir) => (texts && folderInfos.get(dir)) || new Map());
  const stamp = ++listingStamp;
  const reused = dirs.map(() => 0);
  const added = dirs.map(() => new Map());
  const handed = dirs.map(() => new HandedInfos());
  const noteToken = (folder, info, token) => handed[folder].add(info, token);
  let knownCount = 0;
  for (const map of held) knownCount += map.size;
  const known = new Float64Array(knownCount);
  let k = 0;
  for (const map of held) for (const token of map.keys()) known[k++] = token;
  // path.join(dir, name) for a name as readdir gives it (no separator, never
  // "." or ".."): the folder's normalized path, a separator, the name.
  const prefixes = dirs.map((dir) => path.join(dir, 'x').slice(0, -1));
  return new Promise((resolve, reject) => {
    let settled = false;
    let failed = false;
    let throwsSeen = 0;
    let handle;
    let results;
    let names = null;
    // listAll(): the native candidates, and each one's place in the reference's order.
    let candidates = null;
    let placeOf = null;
    const rejectOnly = (error) => reject(error);
    const settle = (error) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) {
        dirs.forEach((dir, i) => {
          const folder = path.dirname(path.join(dir, 'x'));
          if (texts) {
            folderInfos.set(dir, nextRecords(held[i], reused[i], added[i], stamp));
            handedTokens.set(folder, handed[i]);
          } else {
            handedTextlessTokens.set(folder, handed[i]);
          }
        });
        resolve({ results, names });
      } else {
        handle?.cancel();
        reject(error);
      }
    };
    const onAbort = () => settle(signal.reason);
    const start = (total) => {
      results = new Array(total).fill(null);
      onStart?.(total);
    };
    // Deliveries wait here (Rust sends batches) and are taken a file at a
    // time: right away while this macrotask has handed over fewer than 256
    // files in 2 ms (Node hands many results over in one go), else from
    // setImmediate. A callback that threw also ends the turn, so that the
    // rejection is seen before the next file, as with the reference's
    // separate loads; and an abort from a later macrotask lands while files
    // are still coming.
    const pending = [];
    let pumping = false;
    // Files handed over in this macrotask, and since when.
    let turn = null;
    const enqueue = (count, run) => {
      pending.push({ count, next: 0, run });
      if (!pumping) pump();
    };
    const pump = () => {
      pumping = true;
      if (turn === null) {
        turn = { began: performance.now(), files: 0 };
        setImmediate(() => {
          turn = null;
        });
      }
      while (pending.length > 0 && !settled) {
        const work = pending[0];
        if (work.next === work.count) {
          pending.shift();
          continue;
        }
        const threw = work.run(work.next++);
        turn.files++;
        // The clock read every 16 files: reading it costs more than a file.
        if (threw || turn.files >= PUMP_FILES || ((turn.files & 15) === 0 && performance.now() - turn.began >= PUMP_MS)) {
          // After the turn's end (scheduled before this).
          setImmediate(pump);
          return;
        }
      }
      pumping = false;
    };
    /** Hands one file's info to `onLoaded`; true if that threw. */
    const deliver = (info, index) => {
      results[index] = info;
      try {
        onLoaded(info, index);
        return false;
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
        return true;
      }
    };
    const folderOf = (index) => (candidates ? candidates.folders[index] : 0);
    const placeOfIndex = (index) => (candidates ? placeOf[index] : index);
    const heldAnywhere = (token) => held.find((map) => map.has(token))?.get(token);
    /**
     * Files the scanner reports unchanged, answered from what this listing
     * holds: their fresh infos, all built before any is handed over, so that
     * they lie together in memory (the partial lists read every info's date
     * at every publish). `null` where a file is not a session; `undefined`
     * from the first file whose record is missing (a bug).
     */
    const answerUnchanged = (indices, tokens) => {
      const infos = new Array(indices.length);
      for (let k = 0; k < indices.length; k++) {
        const index = indices[k];
        const token = tokens[k];
        const folder = folderOf(index);
        // Every token in `known` came from one of the held maps.
        let cached = held[folder].get(token);
        if (cached !== undefined && cached.stamp !== stamp) {
          cached.stamp = stamp;
          reused[folder]++;
        } else {
          cached ??= heldAnywhere(token);
          if (cached === undefined) break;
          added[folder].set(token, cached);
        }
        if (names) names[index] = cached.name;
        const info = cached.info && copyInfo(cached);
        if (info) noteToken(folder, info, token);
        infos[k] = info;
      }
      return infos;
    };
    const onUnchanged = (index, info) => {
      if (info === undefined) {
        settle(new Error('pi-session-native: the listing scanner reported a summary this process does not hold'));
        return false;
      }
      return deliver(info, placeOfIndex(index));
    };
    const onResult = (result) => {
      if (settled) return;
      if (result.index === -1) {
        enqueue(1, () => {
          if (failed) settled = true;
          else settle();
          return false;
        });
      } else if (result.candidates) {
        candidates = result.candidates;
        placeOf = referenceCandidateOrder(candidates.names, candidates.mtimeMs);
        start(candidates.names.length);
      } else if (result.unchanged) {
        const { indices, tokens } = result.unchanged;
        const infos = answerUnchanged(indices, tokens);
        enqueue(indices.length, (k) => onUnchanged(indices[k], infos[k]));
      } else if (result.read) {
        const batch = result.read;
        enqueue(batch.indices.length, (k) =>
          onRead(batch.indices[k], batch.names?.[k], batchSummary(batch, k), batch.mtimeMs[k], batch.tokens[k], false),
        );
      } else {
        enqueue(1, () => onRead(result.index, result.name, result.summary, result.mtimeMs, result.token, result.failed));
      }
    };
    /** A file read, or from the native cache (but not held here). */
    const onRead = (index, resultName, summary, resultMtimeMs, token, readFailed) => {
      const folder = folderOf(index);
      const name = candidates ? candidates.names[index] : resultName;
      if (names) names[index] = name;
      const file = prefixes[folder] + name;
      let info = null;
      if (summary && !readFailed) {
        // `stats.mtime` rounds `mtimeMs` to the millisecond; without a stat
        // from discovery, the one taken while reading counts.
        const discovered = candidates ? candidates.mtimeMs[index] : Number.NaN;
        const mtimeMs = Number.isNaN(discovered) ? resultMtimeMs : discovered;
        info = tryInfo(file, summary, { mtime: new Date(Math.round(mtimeMs)) }, texts);
        if (info) noteToken(folder, info, token);
        const header = summary.header;
        if (texts) added[folder].set(token, { info: info && copyInfo({ info, header }), header, name, stamp: 0 });
      } else if (token) {
        // Not a session as the reference reads it: known to be null until it changes.
        added[folder].set(token, { info: null, header: null, name, stamp: 0 });
      }
      return deliver(info, placeOfIndex(index));
    };
    if (source.dirs) {
      handle = native.scanSessionFolders(dirs, known, onResult, texts, source.gate);
    } else {
      handle = native.scanSessionFolder(source.dir, known, onResult, texts, source.gate);
      if (handle === null) {
        settled = true;
        resolve({ results: [], names: null });
        return;
      }
      names = new Array(handle.files);
      start(handle.files);
      if (handle.files === 0) {
        settle();
        return;
      }
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const NO_TIMES = Object.freeze([]);

/** File `k` of a batch of plain read results, as the summary of one result. */
function batchSummary(batch, k) {
  const lastActivity = batch.lastActivity[k];
  return {
    header: batch.headers[k],
    messageCount: batch.messageCounts[k],
    firstMessage: batch.firstMessages[k],
    allMessagesText: batch.allMessagesTexts?.[k],
    lastActivity: Number.isNaN(lastActivity) ? undefined : lastActivity,
    unparsedTimes: NO_TIMES,
    name: batch.sessionNames[k],
  };
}

/**
 * What the listing makes of one file: `{ info, mtimeMs }`, its SessionInfo without texts
 * (null where it lists none: not a session, not readable) from its summary in the
 * listing cache, read as needed, and the file's mtime. Internal: lib/recall.js, which
 * reads the infos of the files it finds hits in instead of a listing.
 */
function fileSessionInfo(file) {
  const found = native.sessionFileSummary(file);
  const info = found.summary ? tryInfo(file, found.summary, { mtime: new Date(Math.round(found.mtimeMs)) }, false) : null;
  return { info, mtimeMs: found.mtimeMs };
}

/** Stamps listings, so that each knows which held records it answered from. */
let listingStamp = 0;

/**
 * A folder's records for the next listing: the held ones this listing
 * answered from (`reused` of them, stamped `stamp`) and the ones it `added`.
 */
function nextRecords(held, reused, added, stamp) {
  if (reused === held.size && added.size === 0) return held;
  const next = new Map();
  if (reused > 0) for (const [token, record] of held) if (record.stamp === stamp) next.set(token, record);
  for (const [token, record] of added) next.set(token, record);
  return next;
}

function sortSessionInfos(sessions) {
  // A listing's result is mostly newest first already, which a stable sort
  // leaves as it is: one pass tells, where the sort calls its comparator per pair.
  if (isNewestFirst(sessions)) return sessions;
  return sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

/** False for anything else, an invalid date or a date that throws included. */
function isNewestFirst(sessions) {
  try {
    let previous = Infinity;
    for (let i = 0; i < sessions.length; i++) {
      const time = sessions[i].modified.getTime();
      if (!(time <= previous)) return false;
      previous = time;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The partial lists of onProgress: what the reference's
 * `sortSessionInfos([...partial])` gives for the infos loaded so far, kept in
 * that order as they arrive instead of sorted anew at every publish (which made
 * a warm listing of 5,000 files quadratic). A stable sort by a consistent key
 * has one result: newest first, ties in arrival order, so each info goes in
 * after every one at least as new. An invalid date (NaN) makes the reference's
 * comparator inconsistent, and the result depends on the sort's input: from the
 * first one on, lists are sorted as the reference sorts them.
 */
class PartialList {
  #arrived = [];
  #sorted = [];
  #times = [];
  #exact = true;
  #include;

  /** `include`: list()'s cwd filter, applied to each list after sorting. */
  constructor(include) {
    this.#include = include;
  }

  add(info) {
    this.#arrived.push(info);
    if (!this.#exact) return;
    const time = info.modified.getTime();
    // Even one the filter drops: the reference sorts before it filters.
    if (Number.isNaN(time)) {
      this.#exact = false;
      return;
    }
    // The filter keeps the sorted order, so it can be applied on arrival.
    if (this.#include && !this.#include(info)) return;
    const times = this.#times;
    let low = 0;
    let high = times.length;
    // Results arrive mostly newest name first, so mostly at the end.
    if (high > 0 && times[high - 1] >= time) {
      low = high;
    } else {
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (times[middle] >= time) low = middle + 1;
        else high = middle;
      }
    }
    if (low === times.length) {
      times.push(time);
      this.#sorted.push(info);
    } else {
      times.splice(low, 0, time);
      this.#sorted.splice(low, 0, info);
    }
  }

  /** A new array each time, as the reference's copy. */
  snapshot() {
    if (this.#exact) {
      const copy = this.#sorted.slice();
      const times = this.#times;
      const count = copy.length;
      let i = 0;
      while (i < count && copy[i].modified.getTime() === times[i]) i++;
      if (i === count) return copy;
      // A caller changed a date in a list it was handed; the reference sorts
      // by the dates as they are now: so do we, from now on.
      this.#exact = false;
    }
    const sorted = sortSessionInfos([...this.#arrived]);
    return this.#include ? sorted.filter(this.#include) : sorted;
  }
}

/**
 * A folder's infos in an order the callers' stable sort by `modified` (newest
 * first) takes to the reference's result. The reference hands its callers the
 * infos in name order (localeCompare, descending); sorted by `modified`, that
 * is one sort by (modified, name, readdir index), which needs the collator
 * only for ties of `modified` and leaves the callers' sort nothing to move.
 * An invalid date makes the comparator inconsistent (NaN), so that the
 * result depends on the sort's input: then the callers get name order, as
 * from the reference.
 */
function referenceOrder(results, names, dir) {
  const kept = [];
  for (let i = 0; i < results.length; i++) if (results[i] !== null) kept.push(i);
  const time = kept.map((i) => results[i].modified.getTime());
  const last = lastOrders.get(dir);
  if (last !== undefined && sameOrderInputs(last, names, kept, time)) return last.order.map((i) => results[i]);
  let order;
  if (time.some(Number.isNaN)) {
    order = [...kept].sort((i, j) => collator.compare(names[j], names[i]));
  } else {
    const places = kept.map((_, k) => k);
    places.sort((a, b) => time[b] - time[a] || collator.compare(names[kept[b]], names[kept[a]]) || kept[a] - kept[b]);
    order = places.map((k) => kept[k]);
  }
  lastOrders.set(dir, { names, kept, time, order });
  return order.map((i) => results[i]);
}

/**
 * Per folder, the inputs and result of its last referenceOrder: a listing of
 * a folder nothing changed in has the same names, the same files that are
 * sessions and the same dates, so the same order, without the sort.
 */
const lastOrders = new Map();

function sameOrderInputs(last, names, kept, time) {
  if (last.names.length !== names.length || last.kept.length !== kept.length) return false;
  for (let i = 0; i < names.length; i++) if (last.names[i] !== names[i]) return false;
  for (let k = 0; k < kept.length; k++) {
    // Object.is: NaN (an invalid date) is the same as NaN.
    if (last.kept[k] !== kept[k] || !Object.is(last.time[k], time[k])) return false;
  }
  return true;
}

async function listSessionsFromDir(dir, onProgress, signal, include, texts, gate) {
  signal?.throwIfAborted();
  if (!fs.existsSync(dir)) return [];
  try {
    let total = 0;
    const partial = onProgress ? new PartialList(include) : undefined;
    let loaded = 0;
    const onLoaded = (info) => {
      loaded++;
      if (!onProgress) return;
      if (info) partial.add(info);
      const publish = loaded === 1 || loaded % CURRENT_SESSION_LIST_PUBLISH_INTERVAL === 0 || loaded === total;
      onProgress(loaded, total, publish ? partial.snapshot() : undefined);
    };
    // Rust lists the folder and reads it newest name first, and nothing is
    // built here for a file before its result arrives. The reference's order
    // (localeCompare, descending) decides only the order of the results (ties
    // of `modified` keep it); progress lists follow completion order.
    const { results, names } = await loadInfos({ dir, texts, gate }, onLoaded, signal, (n) => {
      total = n;
    });
    if (names === null) return [];
    return referenceOrder(results, names, dir);
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}

async function list(cwd, sessionDir, onProgress, signal) {
  return listFolder(cwd, sessionDir, onProgress, signal, true);
}

async function listFolder(cwd, sessionDir, onProgress, signal, texts, gate) {
  const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDir(cwd);
  const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
  const resolvedCwd = paths.resolvePath(cwd);
  // Sessions of a folder mostly share a few cwds: each absolute one (which
  // resolves the same whatever the process's cwd) is resolved once per call.
  const matches = new Map();
  const include = filterCwd
    ? (s) => {
        if (typeof s.cwd !== 'string' || !path.isAbsolute(s.cwd)) return sessionCwdMatches(s.cwd, resolvedCwd);
        let match = matches.get(s.cwd);
        if (match === undefined) {
          match = sessionCwdMatches(s.cwd, resolvedCwd);
          matches.set(s.cwd, match);
        }
        return match;
      }
    : undefined;
  const sessions = await listSessionsFromDir(dir, onProgress, signal, include, texts, gate);
  return sortSessionInfos(include ? sessions.filter(include) : sessions);
}

async function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
  return listEvery(sessionDirOrOnProgress, onProgressOrSignal, signal, true);
}

async function listEvery(sessionDirOrOnProgress, onProgressOrSignal, signal, texts, gate) {
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
  if (customDir) return sortSessionInfos(await listSessionsFromDir(customDir, progress, abortSignal, undefined, texts, gate));
  const sessionsDir = paths.getSessionsDir();
  try {
    if (!fs.existsSync(sessionsDir)) return [];
    const entries = await fsp.readdir(sessionsDir, { withFileTypes: true });
    const dirs = entries
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => path.join(sessionsDir, e.name));
    // The files of every folder are found, stat'ed and ordered in Rust (the
    // reference does it here, a promise per file) and then read there.
    let total = 0;
    let loaded = 0;
    let firstLoaded = false;
    const partial = progress ? new PartialList() : undefined;
    const { results } = await loadInfos(
      { dirs, texts, gate },
      (info, index) => {
        loaded++;
        if (index === 0) firstLoaded = true;
        if (!progress) return;
        if (info) partial.add(info);
        const publish = firstLoaded && (index === 0 || loaded % ALL_SESSION_LIST_PUBLISH_INTERVAL === 0 || loaded === total);
        progress(loaded, total, publish ? partial.snapshot() : undefined);
      },
      abortSignal,
      (n) => {
        total = n;
      },
    );
    return sortSessionInfos(results.filter((info) => info !== null));
  } catch {
    abortSignal?.throwIfAborted();
    return [];
  }
}

/**
 * `list(cwd, sessionDir)` with a cwd, else `listAll(sessionDir)`, from one
 * options object. `allMessagesText: false` leaves that field out of every
 * SessionInfo (partial lists too): it is most of a listing's bytes, and then
 * never crosses over from Rust. Public (index.js).
 */
async function listSessions(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('The listing options must be an object');
  const { cwd, sessionDir, onProgress, signal, allMessagesText = true } = options;
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError('options.cwd must be a string');
  if (sessionDir !== undefined && typeof sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('options.onProgress must be a function');
  if (typeof allMessagesText !== 'boolean') throw new TypeError('options.allMessagesText must be a boolean');
  return cwd !== undefined
    ? listFolder(cwd, sessionDir, onProgress, signal, allMessagesText)
    : listEvery(sessionDir, onProgress, signal, allMessagesText);
}

/**
 * The sessions (without texts) that may hold a grep's
 * pattern: `gate` is `{ pattern, regex, caseSensitive, fields }` (the
 * arguments of `grepSessionFiles`), and a file the listing cache does not
 * hold as it is is read first for the pattern's words and left out, unread
 * by the listing, when it has none. Those kept are in the order they have in
 * the whole listing (a subset of a stable sort), so grepSessions' order is
 * the listing's; nothing it leaves out is remembered for later listings.
 */
function listMaybeMatching({ cwd, sessionDir, signal }, gate) {
  return cwd !== undefined
    ? listFolder(cwd, sessionDir, undefined, signal, false, gate)
    : listEvery(sessionDir, undefined, signal, false, gate);
}

module.exports = {
  headerForDiscovery,
  fileSessionInfo,
  referenceCandidateOrder,
  sessionCwdMatches,
  findMostRecentSession,
  findById,
  list,
  listAll,
  listSessions,
  listMaybeMatching,
  configureListing,
  applyCacheDir,
  listingTokens,
  PartialList,
  sortSessionInfos,
};
