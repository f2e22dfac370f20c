'use strict';
// Native errors arrive as tagged messages (see src/binding/mod.rs `to_napi`); this
// turns them into the errors the reference throws: Node's own fs errors, the
// TypeErrors JavaScript raises on malformed entries, and plain Errors.
const util = require('util');

const systemErrors = util.getSystemErrorMap();

/** The error `fs.*Sync` throws for this errno, with Node's message and fields. */
function nodeSystemError(errno, syscall, path) {
  const [code, description] = systemErrors.get(-errno) ?? ['UNKNOWN', 'unknown error'];
  const message = `${code}: ${description}, ${syscall}${path ? ` '${path}'` : ''}`;
  const error = new Error(message);
  error.errno = -errno;
  error.code = code;
  error.syscall = syscall;
  if (path) error.path = path;
  return error;
}

/** Rethrows a native error as the JavaScript error it stands for. */
function translate(error, notFoundMessage) {
  const message = error && typeof error.message === 'string' ? error.message : '';
  if (message.charCodeAt(0) !== 0) return error instanceof Error ? plainError(message) : error;
  const [, tag, ...fields] = message.split('\0');
  switch (tag) {
    case 'io':
      return nodeSystemError(Number(fields[0]), fields[1], fields[2]);
    case 'type':
      return new TypeError(fields.join('\0'));
    case 'notfound':
      return new Error(notFoundMessage);
    default:
      return plainError(message);
  }
}

// napi errors carry a `code` of "GenericFailure"; the reference's are plain.
function plainError(message) {
  return new Error(message);
}

/** Calls `fn` and rethrows native errors translated. */
function call(fn, notFoundMessage) {
  try {
    return fn();
  } catch (error) {
    throw translate(error, notFoundMessage);
  }
}

module.exports = { call, translate, nodeSystemError };
