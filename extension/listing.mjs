// pi's SessionManager class as pi's session picker uses it, found from an extension's
// ctx.sessionManager; the paced listing itself is paced-listing.cjs. Nothing here imports
// pi: the class to patch and the package to list with are passed in, so that this module
// also runs in plain Node (the tests do).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
export const { PROGRESS_INTERVAL_MS, LIST_INTERVAL_MS, pacedProgress, nativeListing, installNativeListing } = require("./paced-listing.cjs");

// Set by the package's useNativeSessions: on its own class (every copy), and on globalThis
// the pi class it switched last.
const NATIVE_CLASS = Symbol.for("pi-session-native.nativeClass");
const PI_CLASS = Symbol.for("pi-session-native.piSessionManager");

/**
 * The class whose statics list/listAll pi's /resume calls, from `sessionManager`, pi's own
 * instance (an extension's ctx.sessionManager): its class, or the nearest base class that
 * defines them; undefined if none defines both.
 */
export function piSessionManagerClass(sessionManager) {
  let candidate = sessionManager == null ? undefined : Object.getPrototypeOf(sessionManager)?.constructor;
  // A manager of this package's class (any copy of it): pi's statics were switched (by the
  // register hook, or at an earlier session_start), and pi's class is the one switched last.
  if (candidate?.[NATIVE_CLASS]) candidate = globalThis[PI_CLASS];
  while (typeof candidate === "function" && candidate !== Function.prototype) {
    if (Object.hasOwn(candidate, "list") || Object.hasOwn(candidate, "listAll")) {
      return typeof candidate.list === "function" && typeof candidate.listAll === "function" ? candidate : undefined;
    }
    candidate = Object.getPrototypeOf(candidate);
  }
  return undefined;
}
