'use strict';
// The index fields of an entry object, for entries that exist only in
// JavaScript. Ids are Map keys in the reference, so non-string ids get the same
// NUL-prefixed spelling the Rust side gives them (src/format/entry.rs `Key`).

let objectKeys = 0;

function keyOf(value) {
  if (typeof value === 'string') return value;
  if (value === undefined) return '\0undefined';
  if (value === null) return '\0null';
  if (typeof value === 'number') return `\0${Object.is(value, -0) ? 0 : value}`;
  if (typeof value === 'boolean') return `\0${value}`;
  // Objects are distinct Map keys unless identical; identical ones are not
  // produced by JSON, so each gets a key of its own.
  objectKeys += 1;
  return `\0jsobject#${objectKeys}`;
}

function valueOfKey(key) {
  if (key === null || key === undefined) return null;
  if (key.charCodeAt(0) !== 0) return key;
  const rest = key.slice(1);
  switch (rest) {
    case 'undefined':
      return undefined;
    case 'null':
      return null;
    case 'true':
      return true;
    case 'false':
      return false;
    default:
      return Number(rest);
  }
}

function timeOf(timestamp) {
  const time = new Date(timestamp).getTime();
  return Number.isFinite(time) ? time : undefined;
}

function versionOf(version) {
  const v = version ?? 1;
  return typeof v === 'object' ? Number.NaN : Number(v);
}

const OPAQUE = Object.freeze({
  kind: '',
  id: '\0undefined',
  idIsString: false,
  parent: '\0undefined',
  parentTruthy: false,
  role: '',
  target: '\0undefined',
  labelTruthy: false,
  firstKept: '\0undefined',
  time: undefined,
  version: 1,
  firstKeptIndex: undefined,
});

/** What the index needs of one entry object (see `JsEntryMeta`). */
function metaOf(entry) {
  if (entry === null || typeof entry !== 'object') return OPAQUE;
  const type = entry.type;
  const kind = typeof type === 'string' ? type : '';
  let role = '';
  if (kind === 'message') {
    const message = entry.message;
    if (message === undefined) role = '\0undefined';
    else if (message === null) role = '\0null';
    else role = typeof message.role === 'string' ? message.role : '\0notstring';
  }
  return {
    kind,
    id: keyOf(entry.id),
    idIsString: typeof entry.id === 'string',
    parent: keyOf(entry.parentId),
    parentTruthy: !!entry.parentId,
    role,
    target: keyOf(entry.targetId),
    labelTruthy: !!entry.label,
    firstKept: keyOf(entry.firstKeptEntryId),
    time: timeOf(entry.timestamp),
    version: versionOf(entry.version),
    firstKeptIndex: typeof entry.firstKeptEntryIndex === 'number' ? entry.firstKeptEntryIndex : undefined,
  };
}

module.exports = { keyOf, valueOfKey, metaOf };
