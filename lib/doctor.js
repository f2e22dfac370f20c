'use strict';
// checkSession / repairSession: the doctor of src/catalog/doctor.rs, reading one
// session file (never writing) or repairing what is safe to repair.
const fs = require('fs');
const native = require('./native.js');
const { call } = require('./errors.js');
const guard = require('./file-guard.js');
const paths = require('./paths.js');

/** What is wrong with the session file at `filePath`, with line numbers. */
function checkSession(filePath) {
  if (typeof filePath !== 'string') throw new TypeError('checkSession: path must be a string');
  const file = paths.resolvePath(filePath);
  // A FIFO would block the read and a device may never end: only files (and folders, EISDIR) go on.
  const stats = fs.statSync(file, { throwIfNoEntry: false });
  if (stats && !stats.isFile() && !stats.isDirectory()) {
    const verdict = guard.judgeSessionFile(file);
    if (!verdict.ok) throw guard.refusal(verdict);
  }
  return { path: file, ...call(() => native.checkSessionFile(file)) };
}

/** A time stamp for `<target>.bak-<stamp>` that names no existing file (the copy would replace it). */
function backupStamp(target) {
  let time = Date.now();
  for (;;) {
    const stamp = new Date(time).toISOString().replace(/[:.]/g, '-');
    if (!fs.lstatSync(`${target}.bak-${stamp}`, { throwIfNoEntry: false })) return stamp;
    time += 1;
  }
}

/**
 * Repairs what is safe to repair: the original is kept as
 * `<name>.bak-<UTC timestamp>`; with `dryRun` only the plan is returned.
 * Only a pi session file is repaired (judgeSessionFile): anything else is
 * refused with an error of code ERR_NOT_A_SESSION_FILE, dry run or not.
 * `sessionDir` is the session folder in use (pi's --session-dir), where a
 * damaged `<timestamp>_<id>.jsonl` file counts as a session.
 */
function repairSession(filePath, options = {}) {
  if (typeof filePath !== 'string') throw new TypeError('repairSession: path must be a string');
  const file = paths.resolvePath(filePath);
  const dryRun = Boolean(options && options.dryRun);
  const verdict = guard.judgeSessionFile(file, { sessionDir: options?.sessionDir });
  if (!verdict.ok) throw guard.refusal(verdict, '; not repaired');
  const stamp = backupStamp(verdict.target);
  const outcome = call(() => native.repairSessionFile(file, dryRun, stamp));
  const actions = outcome.report.findings.filter((f) => f.repair).map((f) => ({
    problem: f.problem,
    line: f.line,
    action: f.repair,
  }));
  return {
    path: file,
    dryRun,
    findings: outcome.report.findings,
    actions,
    applied: outcome.applied,
    backup: outcome.backup ?? undefined,
    after: outcome.after ? { path: file, ...outcome.after } : undefined,
  };
}

module.exports = { checkSession, repairSession };
