'use strict';
// Entries that cost what is read. An entry is built from its line's skeleton
// (src/format/lazy.rs: each heavy value cut and replaced by 0, in place), and
// each cut key becomes an accessor that, when first read, parses the value from
// the line's bytes and becomes a plain data property holding it. Key order,
// JSON.stringify, structuredClone, spread, Object.entries and deep equality all
// read through [[Get]], so they see the values; only a property descriptor (and
// util.inspect) shows the accessor of a value not read yet.
const { call } = require('./errors.js');

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

// Where a holder's lazy values come from (the entry, or its message), kept in a
// private field the holder gets (a base class constructor that returns the
// object lets a subclass add its field to any object): invisible to keys,
// JSON, clones and equality, and one small object per entry where closures per
// value would be garbage.
class ReturnsObject {
  constructor(object) {
    return object;
  }
}

class Origin extends ReturnsObject {
  #origin;

  constructor(holder, origin) {
    super(holder);
    this.#origin = origin;
  }

  static of(holder) {
    return #origin in holder ? holder.#origin : undefined;
  }
}

/** The object whose own property `key` is: `object`, or a prototype it inherits from. */
function ownerOf(object, key) {
  let owner = object;
  while (owner !== null && !Object.hasOwn(owner, key)) owner = Object.getPrototypeOf(owner);
  return owner;
}

/** The accessor of each slot, shared by every holder (the entry or its message). */
const ACCESSORS = SLOTS.map(([, key], slot) => ({
  get() {
    const holder = ownerOf(this, key);
    const values = stuck.get(holder);
    if (values !== undefined && values.has(key)) return values.get(key);
    const origin = Origin.of(holder);
    if (origin === undefined) {
      // Its descriptor was copied onto another object before the value was read.
      throw new TypeError(`The value of '${key}' was not read before its accessor was copied from a session entry`);
    }
    const value = origin.source.read(origin.position, slot);
    try {
      Object.defineProperty(holder, key, dataDescriptor(value));
    } catch {
      // Frozen or sealed: the value stays behind the accessor.
      stuckValues(holder).set(key, value);
    }
    return value;
  },
  set(value) {
    if (!Object.hasOwn(this, key)) {
      // An object inheriting from the holder gets its own property, as with a
      // writable data property on its prototype.
      Object.defineProperty(this, key, dataDescriptor(value));
      return;
    }
    try {
      Object.defineProperty(this, key, dataDescriptor(value));
    } catch {
      if (Object.isFrozen(this)) throw new TypeError(`Cannot assign to read only property '${key}' of object '#<Object>'`);
      stuckValues(this).set(key, value);
    }
  },
  enumerable: true,
  configurable: true,
}));

/**
 * `holder`'s keys in order, those of the cut slots (bit mask) as the shared
 * accessors, in a new object. Made anew rather than redefined in place: V8
 * turns an object whose data property becomes an accessor into a dictionary
 * (larger, slower to read); one built key by key keeps its fast shape.
 */
function withAccessors(holder, inMessage, cuts, origin, track) {
  const out = {};
  new Origin(out, origin);
  for (const key of Object.keys(holder)) {
    const slot = slotOf(key, inMessage);
    if (slot >= 0 && (cuts & (1 << slot)) !== 0) {
      Object.defineProperty(out, key, ACCESSORS[slot]);
      track?.push(out, key);
    } else if (key === '__proto__') {
      Object.defineProperty(out, key, dataDescriptor(holder[key]));
    } else {
      out[key] = holder[key];
    }
  }
  return out;
}

function slotOf(key, inMessage) {
  for (let slot = 0; slot < SLOTS.length; slot++) {
    if (SLOTS[slot][0] === inMessage && SLOTS[slot][1] === key) return slot;
  }
  return -1;
}

const MESSAGE_SLOTS = SLOTS.reduce((mask, [inMessage], slot) => (inMessage ? mask | (1 << slot) : mask), 0);

/**
 * The entry parsed from a skeleton with the keys cut from its line (bit mask of
 * slots) made lazy, each recorded in `track`.
 */
function makeLazy(entry, cuts, source, position, track) {
  const origin = { source, position };
  if ((cuts & MESSAGE_SLOTS) !== 0) entry.message = withAccessors(entry.message, true, cuts, origin, track);
  return (cuts & ~MESSAGE_SLOTS) !== 0 ? withAccessors(entry, false, cuts, origin, track) : entry;
}

/** Reads every lazy value in `track` ([holder, key, ...]) still unread. */
function forceAll(track) {
  for (let i = 0; i < track.length; i += 2) {
    const holder = track[i];
    const descriptor = Object.getOwnPropertyDescriptor(holder, track[i + 1]);
    if (descriptor?.get !== undefined) void holder[track[i + 1]];
  }
}

module.exports = { LazySource, makeLazy, forceAll, handed };
