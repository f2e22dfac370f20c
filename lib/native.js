'use strict';
// The native addon, through napi-rs's generated loader (binding.js): it takes a
// pi-session-native.<platform>.node next to it (a local build) if there is one, else
// the platform package pi-session-native-<platform> (an optional dependency), or the
// file named by NAPI_RS_NATIVE_LIBRARY_PATH. When none loads, users get an error
// that says what was looked for and what to do, not napi's generic one.
const path = require('node:path');
const packageJson = require('../package.json');

const PACKAGE_DIR = path.dirname(__dirname);

function libc() {
  if (process.platform !== 'linux') return undefined;
  try {
    const header = process.report && process.report.getReport().header;
    if (header && header.glibcVersionRuntime) return 'glibc';
    if (header) return 'musl';
  } catch {
    // process.report is missing in some runtimes: fall through to unknown
  }
  return 'unknown libc';
}

/** napi-rs's name for this platform: linux-x64-gnu, darwin-arm64, win32-x64-msvc ... */
function platformArchAbi(libcName) {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') return `${base}-${libcName === 'musl' ? 'musl' : 'gnu'}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

function noNativeBindingError(cause) {
  const libcName = libc();
  const target = platformArchAbi(libcName);
  const platformPackage = `${packageJson.name}-${target}`;
  const localFile = `${packageJson.napi.binaryName}.${target}.node`;
  const prebuilt = Object.keys(packageJson.optionalDependencies ?? {}).map((name) => name.slice(packageJson.name.length + 1));
  const where = `${process.platform} ${process.arch}${libcName ? ` (${libcName})` : ''}`;
  const lines = [
    `${packageJson.name}: no native addon could be loaded for ${where}.`,
    `Tried: the package ${platformPackage}${process.env.NAPI_RS_NATIVE_LIBRARY_PATH ? `, NAPI_RS_NATIVE_LIBRARY_PATH=${process.env.NAPI_RS_NATIVE_LIBRARY_PATH}` : ''} and the file ${localFile} in ${PACKAGE_DIR}.`,
    prebuilt.includes(target)
      ? `${platformPackage} is published as an optional dependency of ${packageJson.name} ${packageJson.version} but is not installed: install again without --omit=optional / --no-optional (and with the same ${packageJson.name} version).`
      : `There is no prebuilt binary for ${target}; prebuilt: ${prebuilt.length ? prebuilt.join(', ') : 'none in this copy of the package'}.`,
    'To build from source (needs Rust stable, https://rustup.rs, and Node >= 20): clone the repository of this package, run `npm ci && npm run build`,',
    `then set NAPI_RS_NATIVE_LIBRARY_PATH to the ${localFile} it wrote, or copy that file into ${PACKAGE_DIR}.`,
  ];
  const error = new Error(lines.join('\n'));
  error.code = 'ERR_PI_SESSION_NATIVE_NO_BINDING';
  error.cause = cause;
  return error;
}

let binding;
try {
  binding = require('../binding.js');
} catch (error) {
  throw noNativeBindingError(error);
}
module.exports = binding;
