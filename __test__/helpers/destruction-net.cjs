'use strict';
// Test-only safety net, preloaded (NODE_OPTIONS=--require) into the pi-sessions
// processes of cli-guard.test.mjs, which hand the command line /dev/null, FIFOs and
// other files it must refuse. Should the guard under test ever fail, this stops the
// process (exit 99, "SAFETY NET" on stderr) before it deletes, renames or replaces
// a device or anything outside the test's temp folder (PI_GUARD_TEST_ROOT), so a
// failing test never costs the machine a file.
const fs = require('fs');
const path = require('path');
const Module = require('module');
const childProcess = require('child_process');

const ROOT = process.env.PI_GUARD_TEST_ROOT;
if (!ROOT || !path.isAbsolute(ROOT)) throw new Error('destruction-net: PI_GUARD_TEST_ROOT must be an absolute path');

const inside = (p) => p === ROOT || p.startsWith(ROOT + path.sep);

function isDevice(p) {
  try {
    const stats = fs.statSync(p);
    return stats.isCharacterDevice() || stats.isBlockDevice();
  } catch {
    return false;
  }
}

/** Whether removing, renaming or replacing `p` could hurt anything but the test's own files. */
function endangered(p) {
  if (typeof p === 'number') return false; // a file descriptor
  const abs = path.resolve(String(p));
  let real = abs;
  try {
    real = fs.realpathSync(abs);
  } catch {
    // not there (yet): judged by its path
  }
  return isDevice(abs) || !inside(abs) || !inside(real);
}

function stop(op, p) {
  fs.writeSync(2, `SAFETY NET: pi-sessions tried ${op} on ${p}\n`);
  process.exit(99);
}

function guardPaths(name, which) {
  const original = fs[name];
  fs[name] = function (...args) {
    for (const i of which) if (args[i] !== undefined && endangered(args[i])) stop(name, args[i]);
    return original.apply(this, args);
  };
}

guardPaths('unlinkSync', [0]);
guardPaths('rmSync', [0]);
guardPaths('rmdirSync', [0]);
guardPaths('renameSync', [0, 1]);
guardPaths('linkSync', [1]);
guardPaths('copyFileSync', [1]);
guardPaths('truncateSync', [0]);
guardPaths('writeFileSync', [0]);
guardPaths('appendFileSync', [0]);

// Opening to create or truncate outside the temp folder (writing into a device is harmless).
const { O_CREAT, O_TRUNC } = fs.constants;
const openSync = fs.openSync;
fs.openSync = function (p, flags, ...rest) {
  const creates = typeof flags === 'string' ? /[wa]/.test(flags) : typeof flags === 'number' && (flags & (O_CREAT | O_TRUNC)) !== 0;
  if (creates && typeof p !== 'number' && !isDevice(p) && endangered(p)) stop('openSync', p);
  return openSync.call(this, p, flags, ...rest);
};

// The trash command is handed only the test's own files.
const spawnSync = childProcess.spawnSync;
childProcess.spawnSync = function (command, args, ...rest) {
  if (command === 'trash') for (const a of args ?? []) if (a !== '--' && endangered(a)) stop('trash', a);
  return spawnSync.call(this, command, args, ...rest);
};

// The native repair writes from Rust, out of reach of the fs module: it is checked here.
const load = Module._load;
Module._load = function (...args) {
  const exported = load.apply(this, args);
  if (exported && typeof exported.repairSessionFile === 'function' && !exported.repairSessionFile.netted) {
    const repair = exported.repairSessionFile;
    exported.repairSessionFile = function (p, dryRun, ...rest) {
      if (!dryRun && endangered(p)) stop('repairSessionFile', p);
      return repair.call(this, p, dryRun, ...rest);
    };
    exported.repairSessionFile.netted = true;
  }
  return exported;
};
