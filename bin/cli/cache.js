'use strict';
// The listing cache of the command line. Each call is a new process, so
// without a persistent cache every call reads every session file again: the
// CLI keeps one by default (the library does not), in the user's cache folder
// (`${XDG_CACHE_HOME:-~/.cache}/pi-session-native` on Linux,
// `~/Library/Caches/pi-session-native` on macOS, `%LOCALAPPDATA%\pi-session-native\cache`
// on Windows, which only the user can read), or where PI_SESSION_NATIVE_CACHE_DIR says; that variable set empty, or --no-cache,
// turns it off. usageReport's accounting cache goes to the same folder.
const os = require('os');
const path = require('path');
const { configureListing } = require('../../index.js');

const ENV = 'PI_SESSION_NATIVE_CACHE_DIR';

/** The folder the CLI keeps its cache in, or null for none. */
function cacheDirFor(values, env = process.env, platform = process.platform) {
  if (values['no-cache']) return null;
  if (env[ENV] !== undefined) return env[ENV] === '' ? null : env[ENV];
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    const base = local && path.win32.isAbsolute(local) ? local : path.win32.join(os.homedir(), 'AppData', 'Local');
    return path.win32.join(base, 'pi-session-native', 'cache');
  }
  if (platform === 'darwin') return path.join(os.homedir(), 'Library', 'Caches', 'pi-session-native');
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
