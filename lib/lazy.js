'use strict';
// Entries that cost what is read. An entry is built from its line's skeleton
// (src/format/lazy.rs: each heavy value cut and replaced by 0, in place), and
// each cut key becomes an accessor that, when first read, parses the value from
// the line's bytes and becomes a plain data property holding it. Key order,
// JSON.stringify, structuredClone, spread, Object.entries and deep equality all
// read through [[Get]], so they see the values; only a property descriptor (and
// util.inspect) shows the accessor of a value not read yet.
//
// A manager that lets go (LazySource#release) keeps its accessors: the value read
// is held by a WeakRef in the entry's origin, so it stays the same object while
// anything outside holds it (or an object inside it: see `keepWhileInnerHeld`), and
// is read again from the line once nothing does. Entries written by the manager
// itself get the same accessors (`releaseWritten`), their first value being the
// caller's own.
const { call } = require('./errors.js');
const memory = require('./memory.js');

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
  constructor(native, release = false) {
    this.native = native;
    this.release = release;
    this.closed = undefined;
  }

  #assertOpen() {
    if (this.closed !== undefined) throw new Error(`SessionManager is closed${this.closed ? `: ${this.closed}` : ''}`);
  }

  read(position, slot) {
    this.#assertOpen();
    const text = call(() => this.native.cutValue(position, slot));
    handed.chars += text.length;
    if (this.release) memory.letGo(text.length);
    return JSON.parse(text);
  }

  /** The line's skeleton, unparsed, and its cuts (bit mask of slots). */
  #skeletonText(position) {
    this.#assertOpen();
    const [asciiText, otherText, isAscii, cuts] = call(() => this.native.skeletons(Uint32Array.of(position)));
    handed.chars += asciiText.length + otherText.length;
    return { text: isAscii[0] ? asciiText : otherText, cuts: cuts[0] };
  }

  /** The line's cuts (bit mask of slots), its skeleton left unparsed. */
  cuts(position) {
    return this.#skeletonText(position).cuts;
  }

  /** The line's skeleton, parsed, and its cuts. */
  skeleton(position) {
    const { text, cuts } = this.#skeletonText(position);
    return { entry: JSON.parse(text)[0], cuts };
  }
}

/**
 * Objects inside a value the manager holds weakly keep that value alive: holding
 * `content[0]` of a message keeps `content` (an ephemeron: the value does not keep
 * itself alive through its own parts).
 */
const keptBy = new WeakMap();

function keepWhileInnerHeld(value) {
  const stack = [value];
  const seen = new Set(stack);
  while (stack.length > 0) {
    const object = stack.pop();
    for (const key of Object.keys(object)) {
      const inner = Object.getOwnPropertyDescriptor(object, key)?.value;
      if (typeof inner !== 'object' || inner === null || seen.has(inner)) continue;
      seen.add(inner);
      keptBy.set(inner, value);
      stack.push(inner);
    }
  }
}

const isObject = (value) => typeof value === 'object' && value !== null;

/**
 * Where one entry's lazy values are: its line (`source`, `position`) and, when the
 * manager lets go, the values read or written, held weakly by slot. Shared by the
 * entry and its message (their slots differ), and by copies of the entry.
 */
class LazyOrigin {
  constructor(source, position) {
    this.source = source;
    this.position = position;
    /** WeakRefs by slot (release mode only). */
    this.refs = undefined;
    /** The caller's message of an entry written here, held weakly. */
    this.callerMessage = undefined;
    /** The message made from the line once the caller's is gone. */
    this.lineMessage = undefined;
  }

  /** The value of `slot`: the one held while anything holds it, else read from the line. */
  value(slot) {
    const held = this.refs?.[slot]?.deref();
    if (held !== undefined) return held;
    const value = this.source.read(this.position, slot);
    this.hold(slot, value);
    return value;
  }

  hold(slot, value) {
    // A string has no identity: it is read again when asked for, never held.
    if (!isObject(value)) return;
    (this.refs ??= [])[slot] = new WeakRef(value);
    keepWhileInnerHeld(value);
  }

  message() {
    const held = this.callerMessage?.deref();
    if (held !== undefined) return held;
    if (this.lineMessage === undefined) {
      const { entry, cuts } = this.source.skeleton(this.position);
      this.lineMessage = (cuts & MESSAGE_SLOTS) !== 0 ? withAccessors(entry.message, true, cuts, this) : entry.message;
      this.callerMessage = undefined;
    }
    return this.lineMessage;
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
    if (origin.source.release) return origin.value(slot);
    const value = origin.source.read(origin.position, slot);
    settle(holder, key, value);
    return value;
  },
  set(value) {
    assign(this, key, value);
  },
  enumerable: true,
  configurable: true,
}));

/** `value` as a plain data property of `holder`; frozen or sealed, it stays behind the accessor. */
function settle(holder, key, value) {
  try {
    Object.defineProperty(holder, key, dataDescriptor(value));
  } catch {
    stuckValues(holder).set(key, value);
  }
}

/** What assigning `value` to a lazy key of `object` does: it becomes a plain value. */
function assign(object, key, value) {
  if (!Object.hasOwn(object, key)) {
    // An object inheriting from the holder gets its own property, as with a
    // writable data property on its prototype.
    Object.defineProperty(object, key, dataDescriptor(value));
    return;
  }
  try {
    Object.defineProperty(object, key, dataDescriptor(value));
  } catch {
    if (Object.isFrozen(object)) throw new TypeError(`Cannot assign to read only property '${key}' of object '#<Object>'`);
    stuckValues(object).set(key, value);
  }
}

/** An entry's `message` when the manager wrote the entry and lets go of it. */
const MESSAGE_ACCESSOR = {
  get() {
    const holder = ownerOf(this, 'message');
    const values = stuck.get(holder);
    if (values !== undefined && values.has('message')) return values.get('message');
    const origin = Origin.of(holder);
    if (origin === undefined) {
      throw new TypeError("The value of 'message' was not read before its accessor was copied from a session entry");
    }
    return origin.message();
  },
  set(value) {
    assign(this, 'message', value);
  },
  enumerable: true,
  configurable: true,
};

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
      if (!origin.source.release) track?.push(out, key);
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
  const origin = new LazyOrigin(source, position);
  if (source.release) track[position] = origin;
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

/**
 * An entry the manager has just written (nothing outside has it yet), made to let
 * go of its cut values (bit mask of slots): the same keys in the same order, each
 * cut value behind its accessor with the caller's value as the one held, and a
 * message with cut values behind an accessor that answers the caller's message
 * while anything holds it, then the message made from the line.
 */
function releaseWritten(entry, cuts, source, position, origins) {
  const origin = new LazyOrigin(source, position);
  origins[position] = origin;
  const out = {};
  new Origin(out, origin);
  for (const key of Object.keys(entry)) {
    const value = entry[key];
    const slot = slotOf(key, false);
    if (key === 'message' && (cuts & MESSAGE_SLOTS) !== 0 && isObject(value)) {
      origin.callerMessage = new WeakRef(value);
      keepWhileInnerHeld(value);
      Object.defineProperty(out, key, MESSAGE_ACCESSOR);
    } else if (slot >= 0 && (cuts & (1 << slot)) !== 0) {
      origin.hold(slot, value);
      Object.defineProperty(out, key, ACCESSORS[slot]);
    } else if (key === '__proto__') {
      Object.defineProperty(out, key, dataDescriptor(value));
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Whether `descriptor` is one of the accessors here. */
function isOurs(descriptor) {
  return descriptor?.get !== undefined && (descriptor.get === MESSAGE_ACCESSOR.get || ACCESSORS.some((a) => a.get === descriptor.get));
}

/**
 * `{ ...entry, ...changes }` for an entry that lets go: the accessors are copied as
 * accessors with the entry's origin (so the copy shares its values, as a spread
 * shares them, and reads them from the same line), the rest as values.
 */
function copyEntry(entry, changes) {
  const origin = Origin.of(entry);
  if (origin === undefined || !origin.source.release) return { ...entry, ...changes };
  const out = {};
  new Origin(out, origin);
  for (const key of Object.keys(entry)) {
    if (Object.hasOwn(changes, key)) {
      out[key] = changes[key];
      continue;
    }
    const descriptor = Object.getOwnPropertyDescriptor(entry, key);
    if (isOurs(descriptor)) Object.defineProperty(out, key, descriptor);
    else if (key === '__proto__') Object.defineProperty(out, key, dataDescriptor(entry[key]));
    else out[key] = entry[key];
  }
  for (const key of Object.keys(changes)) if (!Object.hasOwn(out, key)) out[key] = changes[key];
  return out;
}

/**
 * Makes the values of `entry` (and of its message) plain data again, read now:
 * for entries whose line is about to stop being where their origin says.
 */
function pin(entry) {
  if (!isObject(entry)) return;
  for (const holder of [entry, Object.getOwnPropertyDescriptor(entry, 'message') && entry.message]) {
    if (!isObject(holder)) continue;
    for (const key of Object.keys(holder)) {
      const descriptor = Object.getOwnPropertyDescriptor(holder, key);
      if (isOurs(descriptor)) settle(holder, key, holder[key]);
    }
  }
}

module.exports = { LazySource, makeLazy, forceAll, releaseWritten, copyEntry, pin, handed, THRESHOLD: 512 };
