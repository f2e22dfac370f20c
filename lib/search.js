'use strict';
// Searching sessions as pi's /resume does: `filterAndSortSessions` of the
// reference (modes/interactive/components/session-selector-search.js) with
// pi-tui's `fuzzyMatch`, over the sessions of `list()` or `listAll()`.
// Parsing, matching and ranking run in Rust (src/catalog/search.rs) over texts
// lowercased once per file version and kept with the listing cache; this file
// lists, hands Rust the listing's order, and maps indices back to SessionInfo
// objects. `re:` patterns are JavaScript regular expressions, so they run
// here, in V8, and Rust ranks what they matched.
const native = require('../binding.js');
const listing = require('./listing.js');

const SORTS = ['threaded', 'recent', 'relevance'];
const NAME_FILTERS = ['all', 'named'];
// A regex's tiers (name, then id, text or cwd): only their order counts.
const REGEX_TIER_NAME = 0;
const REGEX_TIER_TEXT = 1;

function checkQuery(query) {
  if (typeof query !== 'string') {
    throw new TypeError(`The search query must be a string (got ${query === null ? 'null' : typeof query})`);
  }
}

function checkChoice(what, value, choices) {
  if (!choices.includes(value)) {
    throw new TypeError(`${what} must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')} (got ${String(value)})`);
  }
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('The search options must be an object');
  const { cwd, sessionDir, onProgress } = options;
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError('options.cwd must be a string');
  if (sessionDir !== undefined && typeof sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('options.onProgress must be a function');
  if (options.allMessagesText !== undefined && typeof options.allMessagesText !== 'boolean') {
    throw new TypeError('options.allMessagesText must be a boolean');
  }
}

/** A SessionInfo without its texts. */
function withoutText({ allMessagesText, ...info }) {
  return info;
}

/** `list(cwd, sessionDir)` with a cwd, else `listAll(sessionDir)`; without `allMessagesText` unless `texts`. */
function listSessions({ cwd, sessionDir }, onProgress, signal, texts = true) {
  return listing.listSessions({ cwd, sessionDir, onProgress, signal, allMessagesText: texts });
}

/** The id for the native side: a string as it is, else its kind. */
function idForNative(id) {
  if (typeof id === 'string') return id;
  if (id === undefined) return 1;
  return id === null ? 2 : 3;
}

/**
 * Gives the native index the sessions in order. Their texts come from the
 * listing cache by (path, token); the few it does not hold (another listing
 * replaced that version meanwhile) go over as strings.
 */
function indexSessions(index, sessions, texts = true) {
  const tokens = listing.listingTokens(sessions);
  const modified = Float64Array.from(sessions, (s) => s.modified.getTime());
  // Paths only for the versions the index does not hold already.
  const unheld = index.unheld(tokens);
  const paths = Array.from(unheld, (i) => sessions[i].path);
  const missing = index.setSessions(paths, unheld, tokens, modified);
  // Infos without texts have none to hand over.
  if (!texts) return missing.length === 0;
  for (const i of missing) {
    const s = sessions[i];
    index.setSessionText(i, s.name ?? undefined, idForNative(s.id), s.cwd, s.allMessagesText);
  }
  return true;
}

/**
 * Where the reference lowercases an id that is not a string, it throws; this
 * is the same expression on the same session, so the error is the same.
 */
function throwAsReference(session) {
  session.id.toLowerCase();
  throw new Error('pi-session-native: the search expected the id of this session to throw');
}

/** The sessions of a native result, sorted here when Rust asks to. */
function ordered(sessions, { indices, scores }) {
  if (!scores) return Array.from(indices, (i) => sessions[i]);
  // A `modified` time among the matches is invalid: the reference's
  // comparator is then inconsistent (NaN), and only V8's sort, fed the same
  // input, gives its order.
  const scored = Array.from(indices, (i, k) => ({ session: sessions[i], score: scores[k] }));
  scored.sort((a, b) => {
    if (a.score !== b.score) return a.score - b.score;
    return b.session.modified.getTime() - a.session.modified.getTime();
  });
  return scored.map((r) => r.session);
}

/** A `re:` query: the reference's `matchRegex` on each candidate, in order. */
function regexSearch(index, sessions, query, result, recent) {
  let regex;
  try {
    regex = new RegExp(query.slice(result.regex[0], result.regex[1]), 'i');
  } catch {
    return [];
  }
  const matched = [];
  const tiers = [];
  for (const i of result.indices) {
    const session = sessions[i];
    if (session.name && regex.test(session.name)) {
      matched.push(i);
      tiers.push(REGEX_TIER_NAME);
    } else if (regex.test(session.id) || regex.test(session.allMessagesText) || regex.test(session.cwd)) {
      matched.push(i);
      tiers.push(REGEX_TIER_TEXT);
    }
  }
  return ordered(sessions, index.rank(Uint32Array.from(matched), Float64Array.from(tiers), recent));
}

/** `undefined` for a `re:` query over sessions without texts (it runs on them, in V8). */
function runSearch(index, sessions, query, sort, nameFilter, texts = true) {
  const recent = sort === 'recent';
  const result = index.search(query, recent, nameFilter === 'named', false);
  if (result.throwsAt != null) throwAsReference(sessions[result.throwsAt]);
  if (result.regex) return texts ? regexSearch(index, sessions, query, result, recent) : undefined;
  return ordered(sessions, result);
}

const CONSTRUCT = Symbol('SessionSearch');
/** For the tests: `matchSession`'s scores of a token query (see scoresOf). */
const SCORES = Symbol('SessionSearch scores');

/**
 * The sessions of a folder (or of every folder), searchable on every
 * keystroke: `search()` is synchronous, `refresh()` lists again (reading only
 * what was appended, through the listing cache).
 */
class SessionSearch {
  #index;
  #sessions = [];
  #source;
  #closed = false;
  // Refreshes may finish out of order: only a newer one replaces the sessions.
  #started = 0;
  #applied = 0;

  constructor(key, source) {
    if (key !== CONSTRUCT) throw new TypeError('Use SessionSearch.open()');
    this.#source = source;
    this.#index = new native.SessionSearchIndex(true);
  }

  /** Lists `cwd`'s sessions (`list(cwd, sessionDir)`), or all (`listAll(sessionDir)`). */
  static async open(options = {}) {
    checkOptions(options);
    const source = { cwd: options.cwd, sessionDir: options.sessionDir };
    const search = new SessionSearch(CONSTRUCT, source);
    await search.refresh({ onProgress: options.onProgress, signal: options.signal });
    return search;
  }

  #check() {
    if (this.#closed) throw new Error('This SessionSearch is closed');
  }

  /** The sessions searched, in the listing's order. */
  get sessions() {
    this.#check();
    return this.#sessions.slice();
  }

  /** `filterAndSortSessions(sessions, query, sort, nameFilter)`. */
  search(query, sort = 'relevance', nameFilter = 'all') {
    this.#check();
    checkQuery(query);
    checkChoice('sort', sort, SORTS);
    checkChoice('nameFilter', nameFilter, NAME_FILTERS);
    return runSearch(this.#index, this.#sessions, query, sort, nameFilter);
  }

  /** Lists again: appended, new and deleted files. */
  async refresh({ onProgress, signal } = {}) {
    this.#check();
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('onProgress must be a function');
    const generation = ++this.#started;
    const sessions = await listSessions(this.#source, onProgress, signal);
    signal?.throwIfAborted();
    if (this.#closed || generation < this.#applied) return;
    indexSessions(this.#index, sessions);
    this.#sessions = sessions;
    this.#applied = generation;
  }

  /**
   * For the tests: the sessions a token query matches, in order, with the
   * scores `matchSession` gives them (or `{ throwsAt }`).
   */
  [SCORES](query, nameFilter = 'all') {
    this.#check();
    const result = this.#index.search(query, false, nameFilter === 'named', true);
    if (result.throwsAt != null) return { throwsAt: result.throwsAt };
    return { sessions: Array.from(result.indices, (i) => this.#sessions[i]), scores: result.scores && Array.from(result.scores) };
  }

  /** Lets go of the sessions and their native texts; later calls throw. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#sessions = [];
    this.#index.close();
  }
}

/**
 * What pi's /resume shows for `query`: `filterAndSortSessions` over
 * `list(cwd, sessionDir)` when `cwd` is given, else over `listAll(sessionDir)`.
 * With `allMessagesText: false`, the infos come without it: the listing
 * leaves the texts in the listing cache and the index reads them there, so
 * they never cross over. Where that cannot answer (a `re:` query runs in V8,
 * on the texts; or the cache no longer holds a text) the texts are listed
 * and searched here, and the answer's infos left without them.
 */
async function searchSessions(query, options = {}) {
  if (options?.allMessagesText !== false) return oneShotSearch(query, options, true);
  const found = await oneShotSearch(query, options, false);
  return found ?? (await oneShotSearch(query, options, true)).map(withoutText);
}

/**
 * searchSessions; with `texts` false over infos without `allMessagesText`,
 * or `undefined` where that cannot answer (see searchSessions).
 */
async function oneShotSearch(query, options, texts) {
  checkQuery(query);
  checkOptions(options);
  const { sort = 'relevance', nameFilter = 'all', signal } = options;
  checkChoice('sort', sort, SORTS);
  checkChoice('nameFilter', nameFilter, NAME_FILTERS);
  const sessions = await listSessions(options, options.onProgress, signal, texts);
  signal?.throwIfAborted();
  // One index for every one-shot search of the process: a listing like the
  // last one (most files unchanged) is indexed again from the texts it holds.
  oneShotIndex ??= new native.SessionSearchIndex(false);
  if (!indexSessions(oneShotIndex, sessions, texts)) return undefined;
  return runSearch(oneShotIndex, sessions, query, sort, nameFilter, texts);
}

/** The index of one-shot searches: no trigram filters (making them costs more than they save once). */
let oneShotIndex;

module.exports = { SessionSearch, searchSessions, SCORES };
