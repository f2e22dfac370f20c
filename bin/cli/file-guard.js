'use strict';
// What the command line may delete or replace, beyond what the package judges
// (judgeSessionFile: is it a pi session file?). `rm` re-checks that the file it
// judged is still there just before it acts; `export -o` never replaces a
// session, the session exported, or another file unless told to.
const fs = require('fs');
const path = require('path');
const { judgeSessionFile, resolvePath } = require('../../index.js');

/** The code of the package's refusals (judgeSessionFile, repairSession), and of ours. */
const NOT_A_SESSION = 'ERR_NOT_A_SESSION_FILE';

/** What a file that is not a regular one is, for messages; undefined for a regular file. */
function kindOf(stats) {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function realpathOrNull(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/** Whether two paths name the same place (case-folded on Windows), as pi compares them. */
function samePath(a, b) {
  const api = process.platform === 'win32' ? path.win32 : path.posix;
  const key = (p) => (api === path.win32 ? api.resolve(p).toLowerCase() : api.resolve(p));
  return key(a) === key(b);
}

/**
 * Throws unless the judged target is still the same regular file (same
 * device and inode, not replaced by a link): called right before acting.
 */
function assertUnchanged(verdict) {
  let now;
  try {
    now = fs.lstatSync(verdict.target);
  } catch (error) {
    throw changed(verdict, error.code === 'ENOENT' ? 'is gone' : `cannot be examined (${error.code})`);
  }
  if (!now.isFile() || now.dev !== verdict.identity.dev || now.ino !== verdict.identity.ino) {
    throw changed(verdict, 'was replaced by another file');
  }
}

function changed(verdict, how) {
  const error = new Error(`${verdict.target} ${how} since it was checked; left as it is`);
  error.code = NOT_A_SESSION;
  error.path = verdict.target;
  return error;
}

/**
 * What writing to `output` would do: `create` (nothing there), `stream` (a
 * FIFO or a character device such as /dev/stdout: written into, nothing
 * replaced), `replace` (a regular file that is not a session; only when the
 * user says so), or `refuse` with a reason (a pi session file, `protect`ed
 * files such as the session being exported, a folder, anything else).
 */
function judgeOutput(output, { protect = [], sessionDir } = {}) {
  const file = resolvePath(output);
  let stats;
  try {
    stats = fs.statSync(file);
  } catch (error) {
    if (error.code !== 'ENOENT') return { action: 'refuse', path: file, reason: `cannot be examined (${error.code ?? error.message})` };
    // A dangling symlink: writing would create its target, somewhere else.
    const dangling = fs.lstatSync(file, { throwIfNoEntry: false });
    if (dangling) return { action: 'refuse', path: file, reason: `is a symlink to ${fs.readlinkSync(file)}, which does not exist` };
    return { action: 'create', path: file };
  }
  // /dev/stdout on a pipe "resolves" to /proc/<pid>/fd/pipe:[...], no path: a stream opens the path given.
  const target = realpathOrNull(file) ?? file;
  const what = target !== file ? `is a symlink to ${target}, which is` : 'is';
  for (const p of protect) {
    const real = realpathOrNull(p);
    if (real !== null && samePath(real, target)) {
      return { action: 'refuse', path: file, reason: `${what} the session being exported` };
    }
  }
  if (stats.isFIFO() || stats.isCharacterDevice()) return { action: 'stream', path: file, target };
  const kind = kindOf(stats);
  if (kind) return { action: 'refuse', path: file, reason: `${what} ${kind}` };
  const verdict = judgeSessionFile(target, { sessionDir });
  if (verdict.ok) return { action: 'refuse', path: file, reason: `${what} a pi session file, never replaced` };
  return { action: 'replace', path: file, target, identity: { dev: stats.dev, ino: stats.ino } };
}

/**
 * Writes `text` as `judgeOutput` decided: a new file is created exclusively
 * (something appearing meanwhile is not overwritten), a replaced file must
 * still be the one judged, a stream is written into without truncating.
 */
function writeOutput(decision, text) {
  const { O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
  let fd;
  switch (decision.action) {
    case 'create':
      fd = fs.openSync(decision.path, O_WRONLY | O_CREAT | O_EXCL, 0o666);
      break;
    case 'stream':
      fd = fs.openSync(decision.path, O_WRONLY);
      break;
    case 'replace': {
      fd = fs.openSync(decision.target, O_WRONLY);
      const now = fs.fstatSync(fd);
      if (!now.isFile() || now.dev !== decision.identity.dev || now.ino !== decision.identity.ino) {
        fs.closeSync(fd);
        const error = new Error(`${decision.path} was replaced by another file since it was checked; left as it is`);
        error.code = NOT_A_SESSION;
        throw error;
      }
      fs.ftruncateSync(fd, 0);
      break;
    }
    default:
      throw new Error(`writeOutput: nothing to write for '${decision.action}'`);
  }
  try {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at);
  } finally {
    fs.closeSync(fd);
  }
}

module.exports = { NOT_A_SESSION, kindOf, assertUnchanged, judgeOutput, writeOutput };
