'use strict';
// pi's SessionManager.list/listAll answered by this package, with the progress pi's
// session picker gets paced: the pi package installs it from session_start, the register
// hook as it switches pi's class (so /resume is paced with the hook alone).

/** Progress reaches pi's picker at most this often (first and last at once). */
const PROGRESS_INTERVAL_MS = 100;
/** ... and a partial list at most this often (the first at once). */
const LIST_INTERVAL_MS = 500;
// ... and after a call that took d ms, not before COST_FACTOR * d ms: the picker rebuilds
// its tree of every session on each list (two realpathSync per session), so that on a
// busy machine it keeps to a fifth of the main thread and the listing gets the rest.
const COST_FACTOR = 4;

// Marks the functions installed here, so that a second copy (the hook and the pi package,
// or the package installed and also given with -e) leaves the first one's in place.
const INSTALLED = Symbol.for('pi-session-native.listing');

/**
 * Wraps a listing's `onProgress(loaded, total, partialSessions?)`. pi's picker
 * re-renders on every call (a call per file, a sorted partial list every 10
 * or 100 files), and rebuilds its tree of every session on each list, which
 * costs far more than a native listing; so calls are passed on at most every
 * `intervalMs` and lists at most every `listIntervalMs`: the first call, the
 * first one that carries a list and the last one (`loaded === total`,
 * without its list: the listing's result follows) at once, the others merged
 * into the next, the newest partial list with the first call after its
 * interval (or alone, by a timer, if none comes). After a call that took d
 * ms, the next waits at least `costFactor * d` ms, and a list after a list
 * the same. `stop()` drops what is held.
 */
function pacedProgress(onProgress, options = {}) {
  const intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  const listIntervalMs = options.listIntervalMs ?? LIST_INTERVAL_MS;
  const costFactor = options.costFactor ?? COST_FACTOR;
  const now = options.now ?? (() => performance.now());
  const setTimer = options.setTimer ?? setTimeout;
  const clearTimer = options.clearTimer ?? clearTimeout;
  let handedAt = null;
  let wait = intervalMs;
  let listHandedAt = null;
  let listWait = listIntervalMs;
  let sawList = false;
  let latestList;
  let held = null;
  let timer = null;
  let timerAt = 0;
  let stopped = false;
  // The timer fires at the earliest time something held is due.
  const schedule = (at) => {
    if (timer !== null) {
      if (timerAt <= at) return;
      clearTimer(timer);
    }
    timerAt = at;
    timer = setTimer(fromTimer, Math.max(0, at - now()));
  };
  const hand = (loaded, total) => {
    const started = now();
    // The last call's list is the listing's result, which follows at once: handed
    // here too, the picker would build its tree of every session twice in a row.
    const listDue = loaded < total && (listHandedAt === null || started - listHandedAt >= listWait);
    const list = listDue ? latestList : undefined;
    if (listDue || loaded >= total) latestList = undefined;
    held = null;
    if (timer !== null) {
      clearTimer(timer);
      timer = null;
    }
    try {
      onProgress(loaded, total, list);
    } finally {
      handedAt = now();
      const cost = handedAt - started;
      wait = Math.max(intervalMs, costFactor * cost);
      if (list !== undefined) {
        listHandedAt = handedAt;
        listWait = Math.max(listIntervalMs, costFactor * cost);
      }
      // A list not due yet goes with a later call, or on its own when it is.
      if (latestList !== undefined && !stopped) {
        held = { loaded, total };
        schedule(Math.max(handedAt + wait, listHandedAt + listWait));
      }
    }
  };
  const fromTimer = () => {
    timer = null;
    if (stopped || held === null) return;
    try {
      hand(held.loaded, held.total);
    } catch {
      // Nobody could catch it here; the listing's own calls still report errors.
    }
  };
  const callback = (loaded, total, partialSessions) => {
    if (stopped) return;
    const firstList = partialSessions !== undefined && !sawList;
    if (partialSessions !== undefined) {
      latestList = partialSessions;
      sawList = true;
    }
    if (handedAt === null || firstList || loaded >= total || now() - handedAt >= wait) {
      hand(loaded, total);
      return;
    }
    held = { loaded, total };
    schedule(handedAt + wait);
  };
  const stop = () => {
    stopped = true;
    held = null;
    latestList = undefined;
    if (timer !== null) clearTimer(timer);
    timer = null;
  };
  return { callback, stop };
}

/** Runs `run(progress)` with `onProgress` paced, if there is one. */
async function withPacedProgress(onProgress, run, options) {
  if (typeof onProgress !== 'function') return run(onProgress);
  const pacer = pacedProgress(onProgress, options);
  try {
    return await run(pacer.callback);
  } finally {
    pacer.stop();
  }
}

/** `list` and `listAll` with the reference's signatures, answered by `nativeManager`. */
function nativeListing(nativeManager, options) {
  const list = function list(cwd, sessionDir, onProgress, signal) {
    return withPacedProgress(onProgress, (progress) => nativeManager.list(cwd, sessionDir, progress, signal), options);
  };
  // listAll(onProgress?, signal?) or listAll(sessionDir, onProgress?, signal?):
  // the progress callback is the first of the first two arguments that is a function.
  const listAll = function listAll(sessionDirOrOnProgress, onProgressOrSignal, signal) {
    const args = [sessionDirOrOnProgress, onProgressOrSignal, signal];
    const at = typeof args[0] === 'function' ? 0 : typeof args[1] === 'function' ? 1 : -1;
    if (at === -1) return nativeManager.listAll(...args);
    return withPacedProgress(
      args[at],
      (progress) => {
        args[at] = progress;
        return nativeManager.listAll(...args);
      },
      options,
    );
  };
  list[INSTALLED] = true;
  listAll[INSTALLED] = true;
  return { list, listAll };
}

/**
 * Makes `PiSessionManager.list`/`listAll` (the statics pi's /resume calls)
 * those of `nativeManager`. Returns `restore()`, which puts pi's own back
 * (once; later calls do nothing), or null if a copy of this extension has
 * already installed its own.
 */
function installNativeListing(PiSessionManager, nativeManager, options) {
  if (PiSessionManager.list?.[INSTALLED] || PiSessionManager.listAll?.[INSTALLED]) return null;
  const saved = {
    list: Object.getOwnPropertyDescriptor(PiSessionManager, 'list'),
    listAll: Object.getOwnPropertyDescriptor(PiSessionManager, 'listAll'),
  };
  const replacement = nativeListing(nativeManager, options);
  for (const name of ['list', 'listAll']) {
    Object.defineProperty(PiSessionManager, name, {
      value: replacement[name],
      writable: true,
      enumerable: saved[name]?.enumerable ?? false,
      configurable: true,
    });
  }
  let restored = false;
  return function restore() {
    if (restored) return;
    restored = true;
    for (const name of ['list', 'listAll']) {
      // Someone who wrapped ours keeps their wrapper; restoring under it would drop it.
      if (PiSessionManager[name] !== replacement[name]) continue;
      if (saved[name]) Object.defineProperty(PiSessionManager, name, saved[name]);
      else delete PiSessionManager[name];
    }
  };
}

module.exports = { PROGRESS_INTERVAL_MS, LIST_INTERVAL_MS, pacedProgress, nativeListing, installNativeListing };
