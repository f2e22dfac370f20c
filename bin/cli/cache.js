'use strict';
// The listing cache of the command line. Each call is a new process, so
// without a persistent cache every call reads every session file again: the
// CLI keeps one by default (the library does not), in
// `${XDG_CACHE_HOME:-~/.cache}/pi-session-native`, or where
// PI_SESSION_NATIVE_CACHE_DIR says; that variable set empty, or --no-cache,
// turns it off. usageReport's accounting cache goes to the same folder.
const os = require('os');
const path = require('path');
const { configureListing } = require('../../index.js');

const ENV = 'PI_SESSION_NATIVE_CACHE_DIR';

/** The folder the CLI keeps its cache in, or null for none. */
function cacheDirFor(values, env = process.env) {
  if (values['no-cache']) return null;
  if (env[ENV] !== undefined) return env[ENV] === '' ? null : env[ENV];
  // XDG: a relative XDG_CACHE_HOME is to be ignored.
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'pi-session-native');
}

function configureCache(values) {
  const dir = cacheDirFor(values);
  try {
    configureListing({ cacheDir: dir });
  } catch (error) {
    // A folder inside pi's session folders is refused: list without it.
    process.stderr.write(`pi-sessions: no listing cache: ${error.message}\n`);
    configureListing({ cacheDir: null });
  }
}

module.exports = { cacheDirFor, configureCache };
