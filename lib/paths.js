'use strict';
// Path rules of the reference (`utils/paths.js`, `config.js`), reproduced on
// Node's own path module so session folders and files get the same names.
const os = require('os');
const path = require('path');
const fs = require('fs');
const { fileURLToPath } = require('url');

const APP_NAME = 'pi';
const ENV_AGENT_DIR = 'PI_CODING_AGENT_DIR';

function windowsShellPath(p) {
  if (!p.startsWith('/') || p.startsWith('//') || p.includes('\\')) return p;
  const match = p.match(/^\/(?:mnt\/|cygdrive\/)?([a-z])(?:\/(.*))?$/i);
  if (!match) return p;
  return `${match[1].toUpperCase()}:\\${match[2]?.replaceAll('/', '\\') ?? ''}`;
}

/** `~` expansion, `file://` URLs and Windows shell paths, as the reference reads paths. */
function normalizePath(input) {
  let p = input;
  if (process.platform === 'win32') p = windowsShellPath(p);
  const home = os.homedir();
  if (p === '~') return home;
  if (p.startsWith('~/') || (process.platform === 'win32' && p.startsWith('~\\'))) {
    return path.join(home, p.slice(2));
  }
  if (/^file:\/\//.test(p)) return fileURLToPath(p);
  return p;
}

function resolvePath(input, baseDir = process.cwd()) {
  const p = normalizePath(input);
  return path.isAbsolute(p) ? path.resolve(p) : path.resolve(normalizePath(baseDir), p);
}

function comparisonKey(p) {
  const api = process.platform === 'win32' ? path.win32 : path.posix;
  const resolved = api.resolve(p);
  return api === path.win32 ? resolved.toLowerCase() : resolved;
}

function pathsEqual(a, b) {
  return comparisonKey(a) === comparisonKey(b);
}

function getAgentDir() {
  const fromEnv = process.env[ENV_AGENT_DIR];
  if (fromEnv) return normalizePath(fromEnv);
  return path.join(os.homedir(), '.pi', 'agent');
}

function getSessionsDir() {
  return path.join(getAgentDir(), 'sessions');
}

/** `~/.pi/agent/sessions/--<cwd with separators as dashes>--`. */
function getDefaultSessionDirPath(cwd, agentDir = getAgentDir()) {
  const resolvedCwd = resolvePath(cwd);
  const safe = `--${resolvedCwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
  return path.join(resolvePath(agentDir), 'sessions', safe);
}

function getDefaultSessionDir(cwd, agentDir) {
  const dir = getDefaultSessionDirPath(cwd, agentDir);
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** The folders of `root` (pi's sessions folder: one per project), sorted; none if it cannot be read. */
function projectSessionDirs(root) {
  let entries;
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((d) => d.isDirectory())
    .map((d) => path.join(root, d.name))
    .sort();
}

/** The `.jsonl` files of `dirs`, folder after folder, each in name order; a folder that cannot be read has none. */
function sessionFilesIn(dirs) {
  const files = [];
  for (const dir of dirs) {
    let names;
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.sort()) if (name.endsWith('.jsonl')) files.push(path.join(dir, name));
  }
  return files;
}

/**
 * The `.jsonl` files of pi's session folders, damaged ones too (no file is
 * read): those of `sessionDir` when given, else of the project folder of
 * `cwd`, else of every project folder of `<agent dir>/sessions`. Public.
 */
function findSessionFiles(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('findSessionFiles: options must be an object');
  const { cwd, sessionDir } = options;
  if (cwd !== undefined && typeof cwd !== 'string') throw new TypeError('options.cwd must be a string');
  if (sessionDir !== undefined && typeof sessionDir !== 'string') throw new TypeError('options.sessionDir must be a string');
  if (sessionDir !== undefined) return sessionFilesIn([resolvePath(sessionDir)]);
  if (cwd !== undefined) return sessionFilesIn([getDefaultSessionDirPath(cwd)]);
  return sessionFilesIn(projectSessionDirs(getSessionsDir()));
}

module.exports = {
  APP_NAME,
  normalizePath,
  resolvePath,
  pathsEqual,
  getAgentDir,
  getSessionsDir,
  getDefaultSessionDirPath,
  getDefaultSessionDir,
  projectSessionDirs,
  sessionFilesIn,
  findSessionFiles,
};
