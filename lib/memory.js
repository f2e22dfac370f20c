'use strict';
// Handing memory back. A manager that lets go (lib/lazy.js) leaves what it wrote
// and read to V8's collections, and V8 keeps the pages they empty resident (its
// pool) for its next allocations: only a memory-reducing collection hands them
// back, and V8's own memory reducer may not run for a long time in a busy
// process. So every THRESHOLD bytes that the managers
// of this thread let go of (they share its V8 heap: one count for all of them),
// V8 is told of moderate memory pressure (src/binding/memory.rs), from a timer
// after the current turn of the event loop: it starts an incremental,
// memory-reducing collection, whose end hands the emptied pages back. A process
// that goes idle (pi waiting for its user or its model) asks sooner: once
// IDLE_THRESHOLD bytes wait and nothing was let go for IDLE_MS. Managers that
// keep every value never ask.
const native = require('./native.js');

/**
 * Bytes let go (values written or read, held weakly from then on) per request. Measured
 * (benchmark/sdk-turns.mjs, 1,000 turns of 100 KB, benchmark/README.md): every 8, 16 or
 * 32 MB ends at about 160 MB of RSS against 270 unasked, at 64 MB near 200; each request
 * adds one or two full collections, which these back-to-back turns otherwise hardly run:
 * the run's wall time +16%, +8% and up to +5% (three requests) for 8, 16 and 32 MB.
 */
const THRESHOLD = 32 * 2 ** 20;

/**
 * Bytes let go that ask once the process has let go of nothing for IDLE_MS: a request
 * costs one or two collections, which an idle process does not feel.
 */
const IDLE_THRESHOLD = 4 * 2 ** 20;
const IDLE_MS = 1000;

/** What was asked of V8, for tests and benchmarks: requests made, answered, their time, bytes let go. */
const requests = { count: 0, answered: 0, ms: 0, letGo: 0 };

/**
 * Whether managers that let go ask V8 to hand memory back:
 * PI_SESSION_NATIVE_RETURN_MEMORY=0 or 1 decides; otherwise configureEntries()
 * (on until it says otherwise).
 */
const ENV = process.env.PI_SESSION_NATIVE_RETURN_MEMORY;
let configured = true;

function enabled() {
  if (ENV === '1' || ENV === 'on') return true;
  if (ENV === '0' || ENV === 'off') return false;
  return configured;
}

/** Bytes let go since the last request was scheduled. */
let pending = 0;
let scheduled = false;
/** When a value was last let go (performance.now()), and the idle timer if one waits. */
let lastLetGo = 0;
let idleTimer;

function request() {
  scheduled = false;
  const started = performance.now();
  requests.count++;
  // Moderate: an incremental collection; critical would be a full one now, and would clear
  // V8's compilation cache (measured: 80 ms a request on pi's heap, and slower turns after).
  if (native.requestMemoryBack(false)) requests.answered++;
  requests.ms += performance.now() - started;
}

/** Asks when nothing was let go for IDLE_MS, else waits for the rest of it. */
function whenIdle() {
  const quiet = performance.now() - lastLetGo;
  if (quiet < IDLE_MS) {
    idleTimer = setTimeout(whenIdle, IDLE_MS - quiet).unref?.();
    return;
  }
  idleTimer = undefined;
  if (scheduled || pending < IDLE_THRESHOLD || !enabled()) return;
  pending = 0;
  request();
}

/** A manager that lets go has made `bytes` of values collectable once nothing outside holds them. */
function letGo(bytes) {
  requests.letGo += bytes;
  pending += bytes;
  lastLetGo = performance.now();
  if (scheduled || !enabled()) return;
  if (pending >= THRESHOLD) {
    scheduled = true;
    pending = 0;
    // Not now: the value just written is still held by its caller, and the caller's turn
    // is not over. An unref'd timer keeps no process alive for it.
    setTimeout(request, 0).unref?.();
  } else if (pending >= IDLE_THRESHOLD && idleTimer === undefined) {
    // One timer, which moves itself on while values are let go (no timer per value).
    idleTimer = setTimeout(whenIdle, IDLE_MS).unref?.();
  }
}

module.exports = {
  letGo,
  requests,
  THRESHOLD,
  IDLE_THRESHOLD,
  IDLE_MS,
  configure(on) {
    configured = on;
  },
  configured: () => configured,
};
