'use strict';
// What a page of recallRead (lib/recall.js) reads a session through: its id, cwd, name and
// leaf, whether it has an entry, its branches as positions, and the entries at positions.
//
// A clean session file of the current version (see src/catalog/recall_index.rs) is read
// through its recall index, kept in the listing's cache folder when one is set: a page of
// a 500 MB session then reads only its own lines. Any other file is read by a
// SessionManager, as pi would read it (an older version migrated in memory, never written).
//
// The sources read lately stay open for the next page (the model pages with `from`, or
// reads around another hit): at most OPEN_KEPT, each closed when its file changes or after
// OPEN_IDLE_MS unused. An open manager holds its index (about 60 MB for a 500 MB file of
// 250,000 lines), a recall index about a fifth of that.
const fs = require('fs');
const native = require('./native.js');
const listing = require('./listing.js');
const { SessionManager, CURRENT_SESSION_VERSION, recallView, openChecked, headerCwd } = require('./session-manager.js');
const { loadEntriesFromFile } = require('./loader.js');

const OPEN_KEPT = 2;
const OPEN_IDLE_MS = 30_000;

/** A page source over a SessionManager of the file. */
function managerSource(manager) {
  const view = recallView(manager);
  return {
    sessionId: () => manager.getSessionId(),
    cwd: () => manager.getCwd(),
    name: () => manager.getSessionName(),
    leafId: () => manager.getLeafId(),
    has: (id) => manager.getEntry(id) !== undefined,
    branch: (leafId, target) => view.branch(leafId, target),
    entries: (positions) => view.entries(positions),
    newestLeafUnder: (id) => view.newestLeafUnder(id),
    mayBeDamaged: () => view.mayBeDamaged(),
    close: () => manager.close(),
  };
}

/** The file changed between its index and a page's read of its lines. */
class ChangedWhileRead extends Error {}

/** A page source over a recall index (`NativeRecallIndex`): entries parsed from their lines. */
function indexSource(index) {
  const entriesAt = (positions) => {
    const lines = index.lines(Uint32Array.from(positions));
    if (lines === null) throw new ChangedWhileRead('the session file changed while it was read');
    return lines.map((line) => JSON.parse(line));
  };
  // Read when a page first asks: a file changed since it was indexed throws in the page.
  let header;
  const headerEntry = () => (header ??= entriesAt([0])[0]);
  return {
    sessionId: () => headerEntry().id,
    // SessionManager.open's cwd.
    cwd: () => headerCwd(headerEntry()) ?? process.cwd(),
    name() {
      const position = index.lastInfo();
      if (position < 0) return undefined;
      // Named `entry` so a TypeError on a non-string name reads as the manager's.
      const [entry] = entriesAt([position]);
      return entry.name?.trim() || undefined;
    },
    leafId: () => index.leaf(),
    has: (id) => index.has(id),
    branch: (leafId, target) => {
      const start = leafId ?? index.leaf();
      return index.branch(start || undefined, target);
    },
    entries: entriesAt,
    newestLeafUnder(id) {
      const position = index.newestLeafUnder(id);
      return position < 0 ? id : index.idAt(position);
    },
    mayBeDamaged: () => false,
    close() {},
  };
}

/**
 * A SessionManager of `target` (a session file, symlinks followed; `header` its header or
 * null) that writes nothing pi would not: a file of an older version is migrated in memory
 * (SessionManager.open would write it back migrated).
 */
function openManager(target, header, fallbackCwd) {
  // Its lines checked as they are read: a whole file needs no doctor.
  if (header?.version === CURRENT_SESSION_VERSION) return openChecked(target);
  const cwd = typeof header?.cwd === 'string' && header.cwd !== '' ? header.cwd : fallbackCwd;
  return SessionManager.inMemory(cwd, undefined, loadEntriesFromFile(target));
}

/**
 * A page source of `target`: its recall index when there is one (with `fresh`, made from
 * the file whatever is kept), else a manager.
 */
function openSource(target, header, fallbackCwd, fresh) {
  if (header?.version === CURRENT_SESSION_VERSION) {
    // The index is kept in the listing's cache folder, as configured or by the environment.
    listing.applyCacheDir();
    const index = native.openRecallIndex(target, fresh);
    if (index !== null) return indexSource(index);
  }
  return managerSource(openManager(target, header, fallbackCwd));
}

const openSources = new Map();

/** A file's version as a stat tells it: a kept source is used while this is unchanged. */
function versionOf(file) {
  try {
    const s = fs.statSync(file, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}

function closeKept(target) {
  const kept = openSources.get(target);
  if (kept === undefined) return;
  openSources.delete(target);
  clearTimeout(kept.timer);
  kept.source.close();
}

/**
 * `{ source, target, version }`: the source kept from an earlier read while `target` is
 * unchanged, else opened now (see openSource; `fresh`: neither kept nor stored). Taken out of the kept ones until keepOpen
 * gives it back.
 */
function takeSource(target, header, fallbackCwd, fresh = false) {
  const version = versionOf(target);
  const kept = openSources.get(target);
  if (kept !== undefined && fresh) closeKept(target);
  else if (kept !== undefined) {
    if (version !== null && kept.version === version) {
      openSources.delete(target);
      clearTimeout(kept.timer);
      return { source: kept.source, target, version };
    }
    closeKept(target);
  }
  const source = openSource(target, header, fallbackCwd, fresh);
  // Changed while it was read (or given its missing last newline): not kept.
  return { source, target, version: versionOf(target) === version ? version : null };
}

/** Keeps `source` open for the next read of `target` (see openSources), or closes it. */
function keepOpen({ source, target, version }) {
  if (version === null) {
    source.close();
    return;
  }
  closeKept(target);
  const timer = setTimeout(() => {
    if (openSources.get(target)?.source === source) closeKept(target);
  }, OPEN_IDLE_MS);
  timer.unref?.();
  openSources.set(target, { source, version, timer });
  if (openSources.size > OPEN_KEPT) closeKept(openSources.keys().next().value);
}

/** Forgets `target`'s kept source (its file changed under a page). */
function dropSource(opened) {
  opened.source.close();
  opened.version = null;
}

module.exports = { openManager, takeSource, keepOpen, dropSource, ChangedWhileRead };
