'use strict';
// listPrompts: every prompt the user typed (the text of user messages) in the sessions of
// this project or of every project, newest first, each text once, handed over in batches
// as the sessions are read: the pi package's prompt picker shows the first screen while
// older sessions are still being read.
//
// Files are found and stat'ed in Rust (sessionFileCandidates: newest mtime first) and
// read by grepSessions' scan, which hands over the text blocks of user and assistant
// messages; only user messages' texts are decoded here.
//
// Order: a prompt's time is its entry's timestamp, but never later than its file's last
// write (`mtime`), so that once the files down to mtime T are read, no file still to be
// read holds a prompt later than T: every prompt at T or later is final and handed over,
// in order. Ties: the newer file first, then the later entry of a file.
const fs = require('fs');
const path = require('path');
const native = require('./native.js');
const paths = require('./paths.js');
const listing = require('./listing.js');
const { scanSessions, deliveredEntries, GREP_FIELDS } = require('./grep.js');
const { Heap } = require('./heap.js');

const SCOPES = ['project', 'all'];
const TEXT_FIELD = 1 << GREP_FIELDS.indexOf('text');
// The scan's pattern: a regular expression with no literal run, so every text block is a candidate.
const EVERY_BLOCK = { body: '', isRegex: true, caseSensitive: true, fieldBits: TEXT_FIELD };
const isUser = (role) => role === 'user';

function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('listPrompts: options must be an object');
  const { cwd, sessionDir, scope = 'project', onPrompts, onProgress, signal } = options;
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError('options.cwd must be a string');
  if (sessionDir !== undefined && typeof sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  if (!SCOPES.includes(scope)) throw new TypeError(`options.scope must be "project" or "all" (got ${JSON.stringify(scope)})`);
  if (onPrompts !== undefined && typeof onPrompts !== 'function') throw new TypeError('options.onPrompts must be a function');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('options.onProgress must be a function');
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw new TypeError('options.signal must be an AbortSignal');
  }
  return { cwd: paths.resolvePath(cwd ?? process.cwd()), sessionDir: sessionDir || undefined, scope, onPrompts, onProgress, signal };
}

/** pi's project folders, as listAll() finds them (folders and links to them), sorted. */
function everyProjectFolder() {
  let entries;
  try {
    entries = fs.readdirSync(paths.getSessionsDir(), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() || e.isSymbolicLink())
    .map((e) => path.join(paths.getSessionsDir(), e.name))
    .sort();
}

/**
 * The folders to read, and the cwd a session must have (as list() filters a session folder
 * that is not the project's own: pi's --session-dir holds every project's sessions).
 */
function foldersOf({ cwd, sessionDir, scope }) {
  const own = paths.getDefaultSessionDirPath(cwd);
  const custom = sessionDir !== undefined && !paths.pathsEqual(paths.resolvePath(sessionDir), own);
  if (scope === 'all') return { dirs: custom ? [paths.normalizePath(sessionDir)] : everyProjectFolder(), cwd: undefined };
  return custom ? { dirs: [paths.normalizePath(sessionDir)], cwd } : { dirs: [own], cwd: undefined };
}

/** Newest first; ties: the file read first, then the later entry. */
const newer = (a, b) => a.time > b.time || (a.time === b.time && (a.file < b.file || (a.file === b.file && a.seq > b.seq)));

function entryTime(timestamp) {
  if (typeof timestamp !== 'string' && typeof timestamp !== 'number') return NaN;
  return new Date(timestamp).getTime();
}

/**
 * Every prompt of a scope's sessions, newest first, each text once (compared with its
 * ends trimmed; the newest one is kept). See index.d.ts `listPrompts` and docs/recall.md.
 */
async function listPrompts(options = {}) {
  const opts = checkOptions(options);
  const { onPrompts, onProgress, signal } = opts;
  signal?.throwIfAborted();
  const { dirs, cwd: sessionCwd } = foldersOf(opts);
  const found = native.sessionFileCandidates(dirs);
  const total = found.names.length;
  // path.join(dir, name) for a name as readdir gives it, without path.join's cost per file.
  const prefixes = dirs.map((dir) => path.join(dir, 'x').slice(0, -1));
  const files = found.names.map((name, i) => ({ path: prefixes[found.folders[i]] + name, index: i }));
  // The latest time a prompt of file i may have: the least mtime of the files up to it
  // (a file without a stat comes last, and counts as oldest).
  const latest = new Float64Array(total);
  for (let i = 0, least = Infinity; i < total; i++) {
    const mtime = found.mtimeMs[i];
    least = Math.min(least, Number.isNaN(mtime) ? -Infinity : mtime);
    latest[i] = least;
  }

  const pending = new Heap(newer);
  const handed = new Set();
  const all = [];
  /** Hands over what no file still to be read can come before: prompts at `latest[done]` or later. */
  const release = (done) => {
    const bound = done < total ? latest[done] : -Infinity;
    const batch = [];
    while (pending.size > 0 && pending.peek().time >= bound) {
      const { prompt, key } = pending.pop();
      if (handed.has(key)) continue;
      handed.add(key);
      batch.push(prompt);
      all.push(prompt);
    }
    if (batch.length > 0) onPrompts?.(batch);
  };

  onProgress?.(0, total);
  if (total > 0) {
    let seq = 0;
    await scanSessions(
      files,
      EVERY_BLOCK,
      {
        signal,
        matches: (_file, message) => deliveredEntries(message, isUser),
        onProgress: (done) => {
          release(done);
          onProgress?.(done, total);
        },
      },
      (file, entries) => {
        let header;
        for (const entry of entries) {
          // As pi puts a user message back in its editor: the text blocks, joined.
          const text = entry.texts.join('');
          const key = text.trim();
          if (key === '') continue;
          if (header === undefined) {
            header = listing.headerForDiscovery(file.path);
            // Not a session pi lists, or (a shared session folder) another project's.
            if (header === null || header.type !== 'session') return false;
            if (sessionCwd !== undefined && !(typeof header.cwd === 'string' && paths.pathsEqual(paths.resolvePath(header.cwd), sessionCwd))) return false;
          }
          const time = entryTime(entry.timestamp);
          const prompt = {
            text,
            timestamp: typeof entry.timestamp === 'string' ? entry.timestamp : null,
            sessionId: typeof header.id === 'string' ? header.id : null,
            sessionFile: file.path,
            cwd: typeof header.cwd === 'string' ? header.cwd : '',
            entryId: typeof entry.id === 'string' ? entry.id : null,
          };
          pending.push({ prompt, key, time: Number.isNaN(time) ? latest[file.index] : Math.min(time, latest[file.index]), file: file.index, seq: seq++ });
        }
        return false;
      },
    );
  }
  signal?.throwIfAborted();
  release(total);
  return all;
}

module.exports = { listPrompts };
