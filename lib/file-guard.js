'use strict';
// Whether a path is a pi session file: what this package may repair, and
// (through the public judgeSessionFile) what the command line may delete or
// must not overwrite (bin/cli/file-guard.js). A mistyped or mis-completed path
// must never cost a file that is not a pi session.
const fs = require('fs');
const path = require('path');
const native = require('./native.js');
const { call } = require('./errors.js');
const paths = require('./paths.js');

const NOT_A_SESSION = 'ERR_NOT_A_SESSION_FILE';

/** `<timestamp>_<id>.jsonl` as pi names session files (src/catalog/doctor.rs `parse_file_name`). */
const SESSION_FILE_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_.+\.jsonl$/;

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

/**
 * Whether `file` (a real path) lies in one of pi's session folders: a project
 * folder of `<agent dir>/sessions`, or `sessionDir` (pi's --session-dir).
 */
function inSessionFolder(file, sessionDir) {
  const folder = path.dirname(file);
  const root = realpathOrNull(paths.getSessionsDir());
  if (root !== null && paths.pathsEqual(path.dirname(folder), root)) return true;
  const custom = sessionDir ? realpathOrNull(paths.resolvePath(sessionDir)) : null;
  return custom !== null && paths.pathsEqual(folder, custom);
}

/**
 * Whether the first entry of the regular file `file` is a session header, as
 * the reference's loader decides: blank and malformed lines are skipped.
 */
function firstEntryIsHeader(file) {
  const line = call(() => native.readSessionHeader(file));
  if (line !== '\0toolong') return line !== null;
  // Nothing parsed in the first MiB: the doctor reads the whole file instead.
  const report = call(() => native.checkSessionFile(file));
  return report.entries > 0 && !report.findings.some((f) => f.problem === 'missing-header' || f.problem === 'header-not-first');
}

/**
 * Judges `input` as a pi session file: a regular file whose first entry is a
 * session header (as the reference's loader reads it), or a damaged session
 * as the doctor knows one (a `<timestamp>_<id>.jsonl` file in pi's session
 * folders). A symlink is judged by its target, and the target is what a
 * caller acts on. Never opens anything but a regular file (a FIFO would block).
 *
 * Returns `{ ok: true, path, target, viaLink, damaged, identity }` or
 * `{ ok: false, path, target, viaLink, reason }` where `reason` completes
 * "<path> ...".
 */
function judgeSessionFile(input, { sessionDir } = {}) {
  const file = paths.resolvePath(input);
  const refuse = (reason, target = file, viaLink = false) => ({ ok: false, path: file, target, viaLink, reason });
  let linkStats;
  try {
    linkStats = fs.lstatSync(file);
  } catch (error) {
    return refuse(error.code === 'ENOENT' ? 'does not exist' : `cannot be examined (${error.code ?? error.message})`);
  }
  const viaLink = linkStats.isSymbolicLink();
  let target = file;
  let stats = linkStats;
  if (viaLink) {
    target = realpathOrNull(file);
    if (target === null) return refuse(`is a symlink to ${fs.readlinkSync(file)}, which does not exist`, file, true);
    stats = fs.statSync(target);
  }
  const what = viaLink ? `is a symlink to ${target}, which is` : 'is';
  const kind = kindOf(stats);
  if (kind) return refuse(`${what} ${kind}, not a pi session file`, target, viaLink);
  let header;
  try {
    header = firstEntryIsHeader(target);
  } catch (error) {
    return refuse(`cannot be read to check that it is a pi session (${error.code ?? error.message})`, target, viaLink);
  }
  const identity = { dev: stats.dev, ino: stats.ino };
  if (header === true) return { ok: true, path: file, target, viaLink, damaged: false, identity };
  const named = SESSION_FILE_NAME.test(path.basename(target));
  if (named && inSessionFolder(realpathOrNull(target) ?? target, sessionDir)) return { ok: true, path: file, target, viaLink, damaged: true, identity };
  const why = stats.size === 0 ? 'it is empty' : 'it does not begin with a session header';
  const where = named ? ", and it is outside pi's session folders" : '';
  const isNot = viaLink ? `is a symlink to ${target}, which is not` : 'is not';
  return refuse(`${isNot} a pi session file (${why}${where})`, target, viaLink);
}

/** An Error for a refused path: one line, `code` ERR_NOT_A_SESSION_FILE. */
function refusal(verdict, suffix = '') {
  const error = new Error(`${verdict.path} ${verdict.reason}${suffix}`);
  error.code = NOT_A_SESSION;
  error.path = verdict.path;
  return error;
}

/** judgeSessionFile for callers of the package: the path checked first. Public. */
function judgeSessionFilePublic(input, options = {}) {
  if (typeof input !== 'string') throw new TypeError('judgeSessionFile: path must be a string');
  if (options === null || typeof options !== 'object') throw new TypeError('judgeSessionFile: options must be an object');
  if (options.sessionDir !== undefined && typeof options.sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  return judgeSessionFile(input, { sessionDir: options.sessionDir });
}

module.exports = { NOT_A_SESSION, judgeSessionFile, judgeSessionFilePublic, refusal, inSessionFolder, realpathOrNull };
