'use strict';
// Finding sessions as pi finds them: the session folder (--session-dir, then
// PI_CODING_AGENT_SESSION_DIR, then settings.json's sessionDir, else the
// current project's folder under PI_CODING_AGENT_DIR), and a <session>
// argument resolved as `pi --session` resolves it (dist/main.js).
const fs = require('fs');
const path = require('path');
const { SessionManager, listSessions, getAgentDir, resolvePath, findSessionFiles } = require('../../index.js');
const { kindOf } = require('./file-guard.js');
const { CliError, progress } = require('./output.js');

function readSettingsSessionDir(file) {
  try {
    const settings = JSON.parse(fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
    return typeof settings.sessionDir === 'string' && settings.sessionDir ? settings.sessionDir : undefined;
  } catch {
    return undefined;
  }
}

/** The session folder pi would use, or undefined for the project's default one. */
function sessionDirFor(cwd, option) {
  if (option) return resolvePath(option);
  const fromEnv = process.env.PI_CODING_AGENT_SESSION_DIR;
  if (fromEnv) return resolvePath(fromEnv);
  // Project settings override global ones, as pi merges them.
  const fromSettings =
    readSettingsSessionDir(path.join(cwd, '.pi', 'settings.json')) ??
    readSettingsSessionDir(path.join(getAgentDir(), 'settings.json'));
  return fromSettings ? resolvePath(fromSettings) : undefined;
}

/** What every command knows about where sessions are. */
function context(values) {
  const cwd = process.cwd();
  return { cwd, sessionDir: sessionDirFor(cwd, values['session-dir']) };
}

/**
 * `SessionManager.list(cwd, sessionDir)`; with `texts: false` the same
 * SessionInfo objects without `allMessagesText` (most of a listing's bytes).
 */
function listCurrent(ctx, { texts = true, label = 'Reading sessions' } = {}) {
  return listWithBar({ cwd: ctx.cwd, sessionDir: ctx.sessionDir, allMessagesText: texts }, label);
}

/** `SessionManager.listAll(sessionDir)`; `texts` as in listCurrent. */
function listEvery(ctx, { texts = true, label = 'Reading sessions' } = {}) {
  return listWithBar({ sessionDir: ctx.sessionDir, allMessagesText: texts }, label);
}

function listWithBar(options, label) {
  const bar = progress(label);
  const onProgress = bar.live ? (done, total) => bar.update(done, total) : undefined;
  return listSessions({ ...options, onProgress }).finally(() => bar.done());
}

function ambiguous(arg, matches, where) {
  const shown = matches
    .slice(0, 5)
    .map((s) => s.id)
    .join(', ');
  const more = matches.length > 5 ? ` and ${matches.length - 5} more` : '';
  return new CliError(`'${arg}' matches ${matches.length} sessions ${where}: ${shown}${more}; give more of the id`);
}

/**
 * A path, a full id or an id prefix, in pi's order: exact id in the current
 * project, then a prefix there, then an exact id in any project, then a
 * prefix. Several matches at one step are an error that names them.
 */
async function resolveSession(arg, ctx) {
  if (typeof arg !== 'string' || arg === '') throw new CliError('a session is required', 2);
  if (arg.includes('/') || arg.includes('\\') || arg.endsWith('.jsonl')) {
    const file = resolvePath(arg, ctx.cwd);
    if (!fs.existsSync(file)) throw new CliError(`no such file: ${file}`);
    return file;
  }
  const exact = SessionManager.findById(ctx.cwd, arg, ctx.sessionDir);
  if (exact) return exact;
  const local = (await listCurrent(ctx, { texts: false })).filter((s) => s.id.startsWith(arg));
  if (local.length === 1) return local[0].path;
  if (local.length > 1) throw ambiguous(arg, local, 'in this project');
  const all = await listEvery(ctx, { texts: false });
  const exactAll = all.filter((s) => s.id === arg);
  if (exactAll.length === 1) return exactAll[0].path;
  const prefixAll = exactAll.length > 1 ? exactAll : all.filter((s) => s.id.startsWith(arg));
  if (prefixAll.length === 1) return prefixAll[0].path;
  if (prefixAll.length > 1) throw ambiguous(arg, prefixAll, 'across projects');
  throw new CliError(`No session found matching '${arg}'`);
}

/** The stats of `file`, a regular file: a FIFO would block the read, a device may never end. */
function regularFile(file) {
  let stats;
  try {
    stats = fs.statSync(file);
  } catch (error) {
    throw new CliError(error.message);
  }
  if (stats.isDirectory()) throw new CliError(`${file} is a directory, not a session file`);
  if (!stats.isFile()) throw new CliError(`${file} is ${kindOf(stats)}, not a session file`);
  return stats;
}

/**
 * Opens a session the way pi does (`SessionManager.open`: a v1/v2 file is
 * migrated, a cut last line gets its newline). An empty file is refused
 * rather than given a header.
 */
function openSession(file, ctx) {
  const stats = regularFile(file);
  if (stats.size === 0) throw new CliError(`${file} is empty`);
  fs.accessSync(file, fs.constants.R_OK);
  return SessionManager.open(file, ctx.sessionDir);
}

/** The `.jsonl` files of the current project's folder, or of every project with `all`. */
function sessionFiles(ctx, all) {
  return findSessionFiles({ cwd: all ? undefined : ctx.cwd, sessionDir: ctx.sessionDir });
}

module.exports = { context, resolveSession, regularFile, openSession, sessionFiles, listCurrent, listEvery };
