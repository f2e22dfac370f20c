'use strict';
// Token and cost accounting, computed in Rust (src/catalog/usage.rs, src/catalog/usage_report.rs)
// with pi's rules: getSessionStats() and getUsageCostBreakdown() as pi 1.6.0
// computes them (agent-session.js, usage-totals.js), and usageReport() across
// sessions on the incremental scan. No entry object is built for a file read
// by path.
const fs = require('fs');
const fsp = require('fs/promises');
const path = require('path');
const native = require('./native.js');
const paths = require('./paths.js');
const listing = require('./listing.js');
const { call } = require('./errors.js');
const { accountManager } = require('./session-manager.js');

function thrown(message, rangeError) {
  return rangeError ? new RangeError(message) : new TypeError(message);
}

function notASession(file) {
  return new Error(`Session file is not a valid pi session: ${file}`);
}

/** The header of a file read by path, as `loadEntriesFromFile` checks it. */
function headerOf(line, file) {
  let header;
  try {
    header = line === null ? null : JSON.parse(line);
  } catch {
    header = null;
  }
  if (header === null || typeof header !== 'object' || header.type !== 'session' || typeof header.id !== 'string') {
    throw notASession(file);
  }
  return header;
}

function entryLines(entries) {
  return entries.map((entry) => JSON.stringify(entry) ?? 'null').join('\n');
}

/** The native accounting of a path, a session manager or an array of entries. */
function accountingOf(source, { entries = false } = {}) {
  if (typeof source === 'string') {
    const file = paths.resolvePath(source);
    const accounting = call(() => native.accountSessionFile(file));
    return { accounting, sessionFile: file, sessionId: headerOf(accounting.header, file).id };
  }
  if (entries && Array.isArray(source)) {
    return { accounting: native.accountEntryLines(entryLines(source)) };
  }
  if (source === null || typeof source !== 'object' || typeof source.getEntries !== 'function') {
    throw new TypeError('Expected a session file path, a SessionManager or an object with getEntries()');
  }
  const accounting = accountManager(source) ?? native.accountEntryLines(entryLines(source.getEntries()));
  return {
    accounting,
    sessionFile: typeof source.getSessionFile === 'function' ? source.getSessionFile() : undefined,
    sessionId: typeof source.getSessionId === 'function' ? source.getSessionId() : undefined,
  };
}

/**
 * `AgentSession.getSessionStats()` without `contextUsage`: the same counts and
 * the same totals (the same doubles: usage added in entry order with `+=`).
 */
function getSessionStats(sessionOrPath) {
  const { accounting: a, sessionFile, sessionId } = accountingOf(sessionOrPath);
  if (a.statsError != null) throw thrown(a.statsError, a.statsRangeError);
  const [input, output, cacheRead, cacheWrite, total, cost] = a.totals;
  return {
    sessionFile,
    sessionId,
    userMessages: a.userMessages,
    assistantMessages: a.assistantMessages,
    toolCalls: a.toolCalls,
    toolResults: a.toolResults,
    totalMessages: a.totalMessages,
    tokens: { input, output, cacheRead, cacheWrite, total },
    cost,
  };
}

/**
 * pi's `getUsageCostBreakdown(entries)` of a session (path or manager) or of
 * an array of entries. The totals per key come from Rust; the last step is
 * pi's own map, filter and sort, so that odd values compare as they do there.
 */
function getUsageCostBreakdown(sessionOrPathOrEntries) {
  const { accounting: a } = accountingOf(sessionOrPathOrEntries, { entries: true });
  if (a.breakdownError != null) throw thrown(a.breakdownError, a.breakdownRangeError);
  return a.breakdown
    .map(({ key, values: [input, output, cacheRead, cacheWrite, cost] }) => ({
      key,
      cost,
      tokens: input + output + cacheRead + cacheWrite,
    }))
    .filter((entry) => entry.cost > 0 || entry.tokens > 0)
    .sort((x, y) => y.cost - x.cost);
}

const GROUPS = new Set(['day', 'week', 'month', 'session', 'model', 'project']);
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function localTimeZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** The folders a report reads, and the cwd filter of `list(cwd, sessionDir)`. */
async function reportSource(cwd, sessionDir) {
  if (cwd !== undefined) {
    const dir = sessionDir ? paths.normalizePath(sessionDir) : paths.getDefaultSessionDirPath(cwd);
    const filterCwd = sessionDir !== undefined && !paths.pathsEqual(dir, paths.getDefaultSessionDirPath(cwd));
    return { dirs: [dir], resolvedCwd: filterCwd ? paths.resolvePath(cwd) : undefined };
  }
  if (sessionDir) return { dirs: [paths.normalizePath(sessionDir)] };
  const sessionsDir = paths.getSessionsDir();
  if (!fs.existsSync(sessionsDir)) return { dirs: [] };
  const entries = await fsp.readdir(sessionsDir, { withFileTypes: true });
  return {
    dirs: entries.filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => path.join(sessionsDir, e.name)),
  };
}

function scan(dirs, onProgress, signal) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      handle.cancel();
      reject(signal.reason);
    };
    const handle = native.scanUsage(dirs, typeof onProgress === 'function', (event) => {
      if (settled) return;
      if (!event.done) {
        try {
          onProgress(event.loaded, event.total);
        } catch (thrownError) {
          settled = true;
          handle.cancel();
          signal?.removeEventListener('abort', onAbort);
          reject(thrownError);
        }
        return;
      }
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(handle);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function row(r) {
  return {
    key: r.key,
    input: r.input,
    output: r.output,
    cacheRead: r.cacheRead,
    cacheWrite: r.cacheWrite,
    totalTokens: r.totalTokens,
    cost: r.cost,
    sessions: r.sessions,
  };
}

/**
 * Token and cost totals across sessions, grouped by `day`, `week` (ISO),
 * `month`, `session` (file path), `model` (pi's breakdown key) or `project`
 * (the session's cwd). A fork's copies of its parent's entries count where they
 * were first written, once. See docs/library.md, usageReport, for the rules.
 */
async function usageReport(options = {}) {
  const { cwd, sessionDir, groupBy, since, until, timezone, onProgress, signal } = options ?? {};
  if (!GROUPS.has(groupBy)) {
    throw new TypeError(`groupBy must be one of ${[...GROUPS].map((g) => `"${g}"`).join(', ')}; got ${String(groupBy)}`);
  }
  for (const [name, value] of [
    ['since', since],
    ['until', until],
  ]) {
    if (value !== undefined && (typeof value !== 'string' || !DATE.test(value))) {
      throw new TypeError(`${name} must be a date as YYYY-MM-DD; got ${String(value)}`);
    }
  }
  if (timezone !== undefined && typeof timezone !== 'string') throw new TypeError('timezone must be an IANA time zone name');
  signal?.throwIfAborted();
  // The accounting cache persists where the listing's does, configured or named
  // by PI_SESSION_NATIVE_CACHE_DIR.
  listing.applyCacheDir();
  const { dirs, resolvedCwd } = await reportSource(cwd, sessionDir);
  const handle = await scan(dirs, onProgress, signal);
  const cwds =
    resolvedCwd === undefined
      ? undefined
      : handle.cwds().filter((c) => c !== '' && paths.pathsEqual(paths.resolvePath(c), resolvedCwd));
  let report;
  try {
    report = handle.report({ groupBy, since, until, timezone: timezone ?? localTimeZone(), cwds });
  } catch (error) {
    throw new RangeError(error.message);
  }
  const { key: _key, ...totals } = row(report.totals);
  return { rows: report.rows.map(row), totals };
}

/**
 * What the session file `sessionPath` holds of copies of its parent's entries
 * (a fork's: `parentSession` in its header), which reports across sessions count
 * where they were first written; `null` for a session that is no fork.
 */
function getInheritedUsage(sessionPath) {
  const file = paths.resolvePath(sessionPath);
  listing.applyCacheDir();
  // A path that cannot be read throws Node's error, as for getSessionStats, not "no fork".
  const found = call(() => native.inheritedUsage(file));
  if (found === null) return null;
  const { key: _key, sessions: _sessions, ...usage } = row(found.usage);
  return { parentSession: found.parentSession, parentFound: found.parentFound, entries: found.entries, ...usage };
}

module.exports = { getSessionStats, getUsageCostBreakdown, usageReport, getInheritedUsage };
