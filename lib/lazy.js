'use strict';
// Entries that cost what is read. An entry is built from its line's skeleton
// (src/format/lazy.rs: each heavy value cut and replaced by 0, in place), and
// each cut key becomes an accessor that, when first read, parses the value from
// the line's bytes and becomes a plain data property holding it. Key order,
// JSON.stringify, structuredClone, spread, Object.entries and deep equality all
// read through [[Get]], so they see the values; only a property descriptor (and
// util.inspect) shows the accessor of a value not read yet.
const { call } = require('./errors.js');

/** Values longer than this (bytes of JSON text) are cut; smaller ones stay inline. */
const THRESHOLD = 512;

/** Where a cut value is: [in `message`, key], by slot (src/format/lazy.rs SLOTS). */
const SLOTS = [
  [true, 'content'],
  [true, 'details'],
  [false, 'content'],
  [false, 'details'],
  [false, 'summary'],
  [false, 'data'],
  [false, 'systemMessage'],
];

/** Characters of entry text handed from Rust to JavaScript (for tests). */
const handed = { chars: 0 };

/** Values of accessors on frozen or sealed holders, which cannot become data properties. */
const stuck = new WeakMap();

/**
 * The native session a manager's lazy values are read from. `closed` is set
 * when the manager is closed; reading a value not read before then throws.
 */
class LazySource {
  constructor(native) {
    this.native = native;
    this.closed = undefined;
  }

  read(position, slot) {
    if (this.closed !== undefined) throw new Error(`SessionManager is closed${this.closed ? `: ${this.closed}` : ''}`);
    const text = call(() => this.native.cutValue(position, slot));
    handed.chars += text.length;
    return JSON.parse(text);
  }
}

function dataDescriptor(value) {
  return { value, writable: true, enumerable: true, configurable: true };
}

function stuckValues(holder) {
  let values = stuck.get(holder);
  if (values === undefined) stuck.set(holder, (values = new Map()));
  return values;
}

function defineLazy(holder, key, source, position, slot) {
  Object.defineProperty(holder, key, {
    get() {
      const values = stuck.get(holder);
      if (values !== undefined && values.has(key)) return values.get(key);
      const value = source.read(position, slot);
      if (Object.getOwnPropertyDescriptor(holder, key)?.configurable) {
        Object.defineProperty(holder, key, dataDescriptor(value));
      } else {
        stuckValues(holder).set(key, value);
      }
      return value;
    },
    set(value) {
      if (this !== holder) {
        // An object inheriting from the holder gets its own property, as with a
        // writable data property on its prototype.
        Object.defineProperty(this, key, dataDescriptor(value));
      } else if (Object.getOwnPropertyDescriptor(holder, key)?.configurable) {
        Object.defineProperty(holder, key, dataDescriptor(value));
      } else if (Object.isFrozen(holder)) {
        throw new TypeError(`Cannot assign to read only property '${key}' of object '#<Object>'`);
      } else {
        stuckValues(holder).set(key, value);
      }
    },
    enumerable: true,
    configurable: true,
  });
}

/** Makes the keys cut from `entry`'s line (bit mask of slots) lazy; records each in `track`. */
function makeLazy(entry, cuts, source, position, track) {
  const message = entry.message;
  for (let slot = 0; slot < SLOTS.length; slot++) {
    if ((cuts & (1 << slot)) === 0) continue;
    const [inMessage, key] = SLOTS[slot];
    const holder = inMessage ? message : entry;
    defineLazy(holder, key, source, position, slot);
    track?.push(holder, key);
  }
}

/** Reads every lazy value in `track` ([holder, key, ...]) still unread. */
function forceAll(track) {
  for (let i = 0; i < track.length; i += 2) {
    const holder = track[i];
    const descriptor = Object.getOwnPropertyDescriptor(holder, track[i + 1]);
    if (descriptor?.get !== undefined) void holder[track[i + 1]];
  }
}

module.exports = { THRESHOLD, LazySource, makeLazy, forceAll, handed };
