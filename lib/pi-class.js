'use strict';
// pi's own SessionManager class made to answer every static that makes or lists managers
// with this package's class, so that whatever pi does later (its runtime's newSession,
// switchSession, fork, importFromJsonl, the CLI's -c/-r/--session/--fork, /resume) runs on
// the native core while pi keeps its own class object (and its types).
//
// One shared marker (a Symbol.for on pi's class) makes the switch happen once per class
// however many copies of this package try (the register hook, the pi package, an SDK call).
const { SessionManager, withRelease } = require('./session-manager.js');

/** The statics that make or find managers; all of them are switched, or none. */
const STATICS = ['create', 'open', 'continueRecent', 'inMemory', 'forkFrom', 'findById', 'list', 'listAll'];
/** On a switched pi class: { native, originals }. */
const SWITCHED = Symbol.for('pi-session-native.switched');
/** On this package's class (every copy of it): which class a manager of ours is. */
const NATIVE_CLASS = Symbol.for('pi-session-native.nativeClass');
/** On globalThis: the pi class switched last, for code that only holds one of our managers. */
const PI_CLASS = Symbol.for('pi-session-native.piSessionManager');

Object.defineProperty(SessionManager, NATIVE_CLASS, { value: true });

/**
 * Why `PiSessionManager` cannot be switched (its session API is not the one this package
 * implements), or null.
 */
function unsupportedReason(PiSessionManager) {
  if (typeof PiSessionManager !== 'function' || typeof PiSessionManager.prototype !== 'object') {
    return 'it is not a class';
  }
  const missingStatics = STATICS.filter((name) => typeof PiSessionManager[name] !== 'function');
  if (missingStatics.length > 0) return `it has no static ${missingStatics.join(', ')}`;
  // Its public methods (TypeScript's private ones start with "_", all but _persist, which
  // is public) must all be ours; a method we lack means another session API.
  const methods = Object.getOwnPropertyNames(PiSessionManager.prototype).filter(
    (name) => name !== 'constructor' && (!name.startsWith('_') || name === '_persist'),
  );
  const missing = methods.filter((name) => typeof SessionManager.prototype[name] !== 'function');
  if (missing.length > 0) return `its method${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not implemented here`;
  return null;
}

/**
 * Makes pi's `SessionManager` class answer `create`, `open`, `continueRecent`, `inMemory`,
 * `forkFrom`, `findById`, `list` and `listAll` with this package's class, and
 * `instanceof` true for this package's managers. Returns the class. Idempotent: a class
 * already switched (by any copy of this package) is left as it is. Throws a TypeError
 * (code ERR_PI_SESSION_NATIVE_UNSUPPORTED) and changes nothing if the class's session API
 * is not the one this package implements.
 */
function useNativeSessions(PiSessionManager, options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError('useNativeSessions options must be an object');
  }
  const releaseEntries = options?.releaseEntries ?? true;
  if (typeof releaseEntries !== 'boolean') throw new TypeError('options.releaseEntries must be a boolean');
  if (PiSessionManager?.[NATIVE_CLASS]) return PiSessionManager; // already ours
  if (PiSessionManager?.[SWITCHED]) {
    // Switched already (by any copy of this package): the latest word on letting go counts.
    if (options?.releaseEntries !== undefined) PiSessionManager[SWITCHED].releaseEntries = releaseEntries;
    return PiSessionManager;
  }
  const reason = unsupportedReason(PiSessionManager);
  if (reason) {
    const error = new TypeError(`pi-session-native: this SessionManager cannot be switched to native sessions: ${reason}`);
    error.code = 'ERR_PI_SESSION_NATIVE_UNSUPPORTED';
    throw error;
  }
  const originals = {};
  // pi's own managers let go of entry values nothing holds, unless asked not to.
  const state = { native: SessionManager, originals, ownHasInstance: undefined, releaseEntries };
  for (const name of STATICS) {
    originals[name] = Object.getOwnPropertyDescriptor(PiSessionManager, name);
    const nativeStatic = SessionManager[name];
    // Named and sized as pi's own, so that stack traces and .length read the same.
    const answer = {
      [name](...args) {
        return withRelease(state.releaseEntries, () => nativeStatic.apply(SessionManager, args));
      },
    }[name];
    Object.defineProperty(answer, 'length', { value: originals[name]?.value?.length ?? nativeStatic.length });
    Object.defineProperty(PiSessionManager, name, {
      value: answer,
      writable: true,
      enumerable: originals[name]?.enumerable ?? false,
      configurable: true,
    });
  }
  // Code that checks `manager instanceof SessionManager` against pi's class (pi's own
  // does not, in 1.6) still says yes for the managers pi now gets.
  const ownHasInstance = Object.getOwnPropertyDescriptor(PiSessionManager, Symbol.hasInstance);
  Object.defineProperty(PiSessionManager, Symbol.hasInstance, {
    value: function hasInstance(value) {
      if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
      return this === PiSessionManager && value instanceof SessionManager;
    },
    configurable: true,
  });
  state.ownHasInstance = ownHasInstance;
  Object.defineProperty(PiSessionManager, SWITCHED, {
    value: state,
    configurable: true,
  });
  globalThis[PI_CLASS] = PiSessionManager;
  return PiSessionManager;
}

/** Whether `PiSessionManager` answers with native managers (switched by any copy of this package). */
function usesNativeSessions(PiSessionManager) {
  return Boolean(PiSessionManager?.[SWITCHED] || PiSessionManager?.[NATIVE_CLASS]);
}

module.exports = { useNativeSessions, usesNativeSessions, unsupportedReason, STATICS };
