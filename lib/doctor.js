'use strict';
// checkSession / repairSession: the doctor of src/doctor.rs, reading one
// session file (never writing) or repairing what is safe to repair.
const native = require('./native.js');
const { call } = require('./errors.js');
const paths = require('./paths.js');

/** What is wrong with the session file at `filePath`, with line numbers. */
function checkSession(filePath) {
  if (typeof filePath !== 'string') throw new TypeError('checkSession: path must be a string');
  const file = paths.resolvePath(filePath);
  return { path: file, ...call(() => native.checkSessionFile(file)) };
}

/**
 * Repairs what is safe to repair: the original is kept as
 * `<name>.bak-<UTC timestamp>`; with `dryRun` only the plan is returned.
 */
function repairSession(filePath, options = {}) {
  if (typeof filePath !== 'string') throw new TypeError('repairSession: path must be a string');
  const file = paths.resolvePath(filePath);
  const dryRun = Boolean(options && options.dryRun);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
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
