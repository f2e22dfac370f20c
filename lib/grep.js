'use strict';
// grepSessions: the messages that match a pattern, over the sessions of
// list() or listAll(), newest session first, entries in file order.
//
// Rust (src/grep.rs) reads the files on its own threads, walks each line once,
// finds the blocks the fields name and keeps those that may match (a prefilter
// with no false negatives); it hands over their texts. The match itself is
// JavaScript's own `text.matchAll(regexp)`, here in V8, so ranges, case
// folding and every regex feature are exactly JavaScript's.
const native = require('../binding.js');
const listing = require('./listing.js');

/** In the order of `grep::Field`. Frozen: both are public (GREP_FIELDS, DEFAULT_GREP_FIELDS). */
const FIELDS = Object.freeze(['text', 'toolResult', 'summary', 'thinking', 'toolCall', 'custom']);
const DEFAULT_FIELDS = Object.freeze(['text', 'toolResult', 'summary']);
const TOOL_CALL = FIELDS.indexOf('toolCall');
const REGEX_PREFIX = 're:';

/** MDN's escapeRegExp: the pattern as a literal. */
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The RegExp of a pattern's body: a regular expression's (a SyntaxError, as V8 words it, when bad) or a literal's. */
function patternRegExp(body, isRegex, caseSensitive) {
  return new RegExp(isRegex ? body : escapeRegExp(body), caseSensitive ? 'g' : 'gi');
}

/** `[start, end]` of each non-empty match of `regexp` in `text`. */
function matchRanges(text, regexp) {
  const ranges = [];
  for (const m of text.matchAll(regexp)) {
    if (m[0].length > 0) ranges.push([m.index, m.index + m[0].length]);
  }
  return ranges;
}

/** The searched text of a tool call block. */
function toolCallText(name, args) {
  return `${name} ${JSON.stringify(args ?? {})}`;
}

function optionDate(name, value) {
  if (value === undefined) return undefined;
  const time = value instanceof Date ? value.getTime() : typeof value === 'string' || typeof value === 'number' ? new Date(value).getTime() : NaN;
  if (Number.isNaN(time)) throw new TypeError(`options.${name} must be a date (a Date, a date string or a time in ms)`);
  return time;
}

/** The options checked, or a TypeError naming the bad one. */
function checkOptions(pattern, options, literal = false) {
  if (typeof pattern !== 'string') {
    throw new TypeError(`The grep pattern must be a string (got ${pattern === null ? 'null' : typeof pattern})`);
  }
  if (pattern === '' || (!literal && pattern === REGEX_PREFIX)) throw new TypeError('The grep pattern must not be empty');
  if (options === null || typeof options !== 'object') throw new TypeError('The grep options must be an object');
  const { cwd, sessionDir, fields = DEFAULT_FIELDS, caseSensitive = false, limit, onMatch, onProgress, signal, collect = true } = options;
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError('options.cwd must be a string');
  if (sessionDir !== undefined && typeof sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  if (!Array.isArray(fields) || fields.length === 0 || !fields.every((f) => FIELDS.includes(f))) {
    throw new TypeError(`options.fields must be a non-empty array of ${FIELDS.map((f) => JSON.stringify(f)).join(', ')}`);
  }
  if (typeof caseSensitive !== 'boolean') throw new TypeError('options.caseSensitive must be a boolean');
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new TypeError('options.limit must be a positive integer');
  if (onMatch !== undefined && typeof onMatch !== 'function') throw new TypeError('options.onMatch must be a function');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('options.onProgress must be a function');
  if (typeof collect !== 'boolean') throw new TypeError('options.collect must be a boolean');
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw new TypeError('options.signal must be an AbortSignal');
  }
  const since = optionDate('since', options.since);
  const until = optionDate('until', options.until);
  const fieldBits = fields.reduce((bits, f) => bits | (1 << FIELDS.indexOf(f)), 0);
  return { cwd, sessionDir, fieldBits, caseSensitive, limit, onMatch, onProgress, signal, since, until, collect };
}

/** Whether an entry's timestamp is within `since`/`until` (when given). */
function inTime(timestamp, since, until) {
  if (since === undefined && until === undefined) return true;
  const time = typeof timestamp === 'string' || typeof timestamp === 'number' ? new Date(timestamp).getTime() : NaN;
  return (since === undefined || time >= since) && (until === undefined || time <= until);
}

/** Numbers per entry and per candidate in a `JsGrepFile` (src/binding/grep.rs). */
const ENTRY_STRIDE = 8;
const CANDIDATE_STRIDE = 8;

/**
 * The matches of one file's candidates (see `JsGrepFile` in src/binding/grep.rs), in order.
 * With `tools`, a tool call's match also has its `arguments` (for lib/recall.js).
 */
function* fileMatches(session, message, regexp, since, until, tools) {
  const { json, entries, candidates } = message;
  const parse = (start, end) => (end === 0 ? undefined : JSON.parse(json.toString('utf8', start, end)));
  // Texts come decoded: ASCII ones as bytes (V8 keeps them one byte a character),
  // others as UTF-16 units ('utf16le' keeps lone surrogates).
  const units = Buffer.from(message.texts.buffer, message.texts.byteOffset, message.texts.byteLength);
  const textAt = (start, end, ascii) => (ascii ? json.toString('latin1', start, end) : units.toString('utf16le', 2 * start, 2 * end));
  const parsed = new Map();
  const entryOf = (k) => {
    let entry = parsed.get(k);
    if (entry === undefined) {
      const e = k * ENTRY_STRIDE;
      const timestamp = parse(entries[e + 2], entries[e + 3]);
      entry = {
        id: parse(entries[e], entries[e + 1]),
        timestamp,
        role: parse(entries[e + 4], entries[e + 5]),
        // A tool result's tool (the scan gives any message's toolName: only theirs is one).
        toolName: parse(entries[e + 6], entries[e + 7]),
        inTime: inTime(timestamp, since, until),
      };
      parsed.set(k, entry);
    }
    return entry;
  };
  for (let c = 0; c < candidates.length; c += CANDIDATE_STRIDE) {
    const entry = entryOf(candidates[c]);
    if (!entry.inTime) continue;
    const field = candidates[c + 1];
    let text = textAt(candidates[c + 3], candidates[c + 4], candidates[c + 5] === 1);
    let toolName;
    let args;
    if (field === TOOL_CALL) {
      toolName = text;
      args = parse(candidates[c + 6], candidates[c + 7]);
      text = toolCallText(text, args);
    }
    const ranges = matchRanges(text, regexp);
    if (ranges.length === 0) continue;
    const match = {
      path: session.path,
      sessionId: session.id,
      cwd: session.cwd,
      entryId: entry.id,
      timestamp: entry.timestamp,
      role: entry.role,
      toolName: field === TOOL_CALL ? toolName : entry.role === 'toolResult' && typeof entry.toolName === 'string' ? entry.toolName : null,
      field: FIELDS[field],
      blockIndex: candidates[c + 2],
      text,
      ranges,
    };
    if (tools && field === TOOL_CALL) match.arguments = args ?? {};
    yield match;
  }
}

/**
 * The entries of one file's delivery (see `JsGrepFile`) that have candidates, in file
 * order: `{ id, timestamp, role, texts }`, `texts` the decoded texts of its candidate
 * blocks in block order. `wanted(role)` is asked first, so that the texts of entries
 * left out are never decoded. Internal: lib/prompts.js.
 */
function* deliveredEntries(message, wanted) {
  const { json, entries, candidates } = message;
  const parse = (start, end) => (end === 0 ? undefined : JSON.parse(json.toString('utf8', start, end)));
  const units = Buffer.from(message.texts.buffer, message.texts.byteOffset, message.texts.byteLength);
  for (let c = 0; c < candidates.length; ) {
    const k = candidates[c];
    const e = k * ENTRY_STRIDE;
    const role = parse(entries[e + 4], entries[e + 5]);
    let end = c;
    while (end < candidates.length && candidates[end] === k) end += CANDIDATE_STRIDE;
    if (wanted(role)) {
      const texts = [];
      for (let d = c; d < end; d += CANDIDATE_STRIDE) {
        const [start, stop, ascii] = [candidates[d + 3], candidates[d + 4], candidates[d + 5] === 1];
        texts.push(ascii ? json.toString('latin1', start, stop) : units.toString('utf16le', 2 * start, 2 * stop));
      }
      yield { id: parse(entries[e], entries[e + 1]), timestamp: parse(entries[e + 2], entries[e + 3]), role, texts };
    }
    c = end;
  }
}

/**
 * Reads `sessions` (`{ path, id, cwd }`, in this order) for `search` and hands each
 * file's matches to `onFile(session, matches)` (an iterable, read as it is walked),
 * one file at a time; the next waits while a promise it returns is pending, and a
 * result of `true` stops the reading, as does `true` from `enough(done)` (asked as
 * the files up to `done` are read, matches or not).
 * Resolves when done or stopped; rejects with the signal's reason on abort, or with
 * what `onFile` threw. `matches(session, message)`, when given, makes a file's
 * iterable from its delivery instead of the pattern's matches (lib/prompts.js reads
 * entries with deliveredEntries). A search of no fields reads headers only (see
 * scanParentHeaders).
 */
function scanSessions(sessions, search, options, onFile) {
  const paths = sessions.map((s) => s.path);
  const start = (onMessage) => native.grepSessionFiles(paths, search.body, search.isRegex, search.caseSensitive, search.fieldBits, onMessage);
  return runScan(start, (message) => sessions[message.file], sessions.length, search, options, onFile);
}

/**
 * scanSessions over the `.jsonl` files of `dirs`, last name first (about newest first,
 * without a stat: pi names a file for the time its session began), found in Rust;
 * `sessionOf(folder, name, index)` makes the session of a file with matches, `index` its
 * place in that order. Resolves to the scan, whose `filesRead(n)` names the first files
 * read (`{ folders, names }`).
 */
function scanFolders(dirs, search, options, sessionOf, onFile) {
  const start = (onMessage) => native.grepSessionFolders(dirs, search.body, search.isRegex, search.caseSensitive, search.fieldBits, onMessage);
  return runScan(start, (message) => sessionOf(message.folder, message.name, message.file), undefined, search, options, onFile);
}

/**
 * The reading of scanSessions: `start(onMessage)` starts the native scan, `sessionAt(message)`
 * is the session of a file with candidates, `total` the count of files if known. Resolves
 * to the native scan.
 */
function runScan(start, sessionAt, total, search, { signal, onProgress, enough, tools = false, matches }, onFile) {
  const { regexp, since, until } = search;
  const matchesOf = matches ?? ((session, message) => fileMatches(session, message, regexp, since, until, tools));
  return new Promise((resolve, reject) => {
    let settled = false;
    let scan;
    const settle = (error) => {
      if (settled) return;
      settled = true;
      scan?.cancel();
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) reject(error);
      else resolve(scan);
    };
    const onAbort = () => settle(signal.reason);
    // Files wait here while an onFile promise is pending; Rust sends a few
    // ahead of what is taken, no more.
    const queue = [];
    let running = false;
    const take = async () => {
      running = true;
      while (queue.length > 0 && !settled) {
        const message = queue.shift();
        try {
          if (message.file >= 0 && (message.candidates.length > 0 || message.header != null)) {
            const session = sessionAt(message);
            let stop = onFile(session, matchesOf(session, message));
            if (typeof stop?.then === 'function') stop = await stop;
            if (stop === true) settle();
          }
          if (settled) break;
          onProgress?.(message.done, total);
          if (message.file === -1 || enough?.(message.done) === true) settle();
          else scan.taken();
        } catch (error) {
          settle(error);
        }
      }
      running = false;
    };
    const onMessage = (message) => {
      if (settled) return;
      queue.push(message);
      if (!running) take();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    scan = start(onMessage);
    if (settled) scan.cancel();
  });
}

/**
 * What `scanSessions` looks for: the checked options' pattern, fields and times. With
 * `literal`, a pattern beginning with `re:` is a literal too.
 */
function searchOf(pattern, opts, literal = false) {
  const isRegex = !literal && pattern.startsWith(REGEX_PREFIX);
  const body = isRegex ? pattern.slice(REGEX_PREFIX.length) : pattern;
  return {
    regexp: patternRegExp(body, isRegex, opts.caseSensitive),
    body,
    isRegex,
    caseSensitive: opts.caseSensitive,
    fieldBits: opts.fieldBits,
    since: opts.since,
    until: opts.until,
  };
}

/**
 * The blocks of messages that match `pattern` (a literal, or `re:` and a
 * JavaScript regular expression), one SessionMatch each, in listing order.
 */
async function grepSessions(pattern, options = {}) {
  const opts = checkOptions(pattern, options);
  const search = searchOf(pattern, opts);
  opts.signal?.throwIfAborted();
  // `list(cwd, sessionDir)` with a cwd, else `listAll(sessionDir)`, of the
  // sessions that may match (the rest cannot add a match: leaving them out
  // keeps the others' order).
  const gate = { pattern: search.body, regex: search.isRegex, caseSensitive: search.caseSensitive, fields: search.fieldBits };
  const sessions = await listing.listMaybeMatching(opts, gate);
  opts.signal?.throwIfAborted();
  const { limit, onMatch, collect } = opts;
  const matches = [];
  let found = 0;
  await scanSessions(sessions, search, opts, async (_session, fileMatches) => {
    for (const match of fileMatches) {
      found++;
      if (collect) matches.push(match);
      const waited = onMatch?.(match);
      if (typeof waited?.then === 'function') await waited;
      // An abort while onMatch's promise was pending has settled the grep already.
      if (opts.signal?.aborted || (limit !== undefined && found >= limit)) return true;
    }
    return false;
  });
  return matches;
}

/**
 * grepSessions over `sessions` (`{ path, id, cwd }` in the order to read them) instead of
 * a listing, for a literal `text` (`re:` included), one file's matches at a time to
 * `onFile(session, matches)` (see scanSessions); tool calls' matches also carry their
 * `arguments`. `options` as grepSessions' (its `limit`, `onMatch` and `collect` unused),
 * and `enough` (see scanSessions). Internal: lib/recall.js.
 */
async function grepListedSessions(sessions, text, options, onFile) {
  const opts = checkOptions(text, options, true);
  opts.signal?.throwIfAborted();
  await scanSessions(sessions, searchOf(text, opts, true), { ...opts, enough: options.enough, tools: true }, onFile);
}

/**
 * grepListedSessions over the `.jsonl` files of `dirs`, last name first (see
 * scanFolders, whose scan it resolves to). Internal: lib/recall.js.
 */
async function grepListedFolders(dirs, text, options, sessionOf, onFile) {
  const opts = checkOptions(text, options, true);
  opts.signal?.throwIfAborted();
  return scanFolders(dirs, searchOf(text, opts, true), { ...opts, enough: options.enough, tools: true }, sessionOf, onFile);
}

/** A search for headers: no fields, so no block is read. */
const HEADERS = { body: '', isRegex: false, caseSensitive: false, fieldBits: 0 };

/**
 * The header lines of `sessions` (`{ path }`) that may name a parent session (those that
 * hold `parentSession`, or an escape), each to `onHeader(session, line)` in order: Rust
 * reads each file's header only, on threads of its own. Internal: lib/recall.js.
 */
function scanParentHeaders(sessions, { signal }, onHeader) {
  signal?.throwIfAborted();
  return scanSessions(sessions, HEADERS, { signal, matches: (_session, message) => message.header }, (session, line) => {
    onHeader(session, line);
    return false;
  });
}

module.exports = { grepSessions, grepListedSessions, grepListedFolders, scanParentHeaders, scanSessions, deliveredEntries, GREP_FIELDS: FIELDS, DEFAULT_GREP_FIELDS: DEFAULT_FIELDS, escapeRegExp };
