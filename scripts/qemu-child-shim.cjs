'use strict';
// Preloaded (NODE_OPTIONS=--require) into arm64 Node under qemu by qemu-arm64-check.mjs.
// There is no binfmt registration here, so a test that starts process.execPath as a child
// would exec an arm64 binary directly and fail: this starts it through qemu-aarch64
// instead. A child started by a shell (sh -c "... node ...") is not covered.
const childProcess = require('node:child_process');

const QEMU = 'qemu-aarch64';
const SYSROOT = process.env.PI_QEMU_SYSROOT || '/usr/aarch64-linux-gnu';
const isNode = (file) => file === process.execPath;

for (const name of ['spawn', 'spawnSync', 'execFile', 'execFileSync']) {
  const original = childProcess[name];
  childProcess[name] = function (file, args, ...rest) {
    if (!isNode(file)) return original.call(this, file, args, ...rest);
    if (Array.isArray(args)) return original.call(this, QEMU, ['-L', SYSROOT, file, ...args], ...rest);
    return original.call(this, QEMU, ['-L', SYSROOT, file], ...(args === undefined ? rest : [args, ...rest]));
  };
}

const originalFork = childProcess.fork;
childProcess.fork = function (modulePath, args, options) {
  if (!Array.isArray(args) && args !== undefined && args !== null) [args, options] = [[], args];
  const opts = { ...options };
  if (opts.execPath === undefined || isNode(opts.execPath)) {
    opts.execArgv = ['-L', SYSROOT, process.execPath, ...(opts.execArgv ?? process.execArgv)];
    opts.execPath = QEMU;
  }
  return originalFork.call(this, modulePath, args ?? [], opts);
};
