// Comparing two implementations modulo randomness.
//
// Each side of a comparison gets its own Normalizer. It rewrites, in order of first
// appearance (so that two correct runs give the same text):
//   - the side's temp directories (and their `--encoded--` default-session-dir form) -> <ROOT>, <ROOTENC>
//   - UUIDs (session ids, fallback entry ids)                                     -> <UUID1>, <UUID2> ...
//   - instants "from now": ISO timestamps, file-name timestamps (2026-01-02T03-04-05-678Z),
//     millisecond numbers; all three forms of one instant share one number        -> <T1>, <T1:file>, <T1:ms>
//   - 8-hex-char entry ids                                                        -> <ID1>, <ID2> ...
// Tokens listed as "kept" (found in the input data) are left as they are, as are
// timestamps outside the window [process start - 10 min, now + 10 min]; but an 8-hex value
// in an id field ("id", "parentId", ...) is always an entry id, even when the same digits
// occur elsewhere in the input (a random id "05366875" beside a cost of 0.05366875).
//
// render() turns any value into lines "path = value", one per leaf, with object kinds
// and an identity ordinal "#n" per object: ordinals persist across calls (per side), so
// comparing renders also compares object identity (same object returned twice, caller's
// own objects kept) and, since an object repeated in one render is printed as "#n" only
// the second time, sharing structure.

const WINDOW_START = Date.now() - 10 * 60 * 1000;
const WINDOW_SLACK = 10 * 60 * 1000;

const UUID_RE = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
const ISO_RE = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;
const FILE_TS_RE = /\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z/g;
const MS_RE = /(?<![0-9.])\d{13}(?![0-9.])/g;
const HEX8_RE = /(?<![0-9A-Za-z_])[0-9a-f]{8}(?![0-9A-Za-z_])/g;
const ID_KEYS = ["id", "parentId", "targetId", "firstKeptEntryId", "fromId", "leafId", "entryId"];
const ID_KEY_BEFORE_RE = new RegExp(`"(?:${ID_KEYS.join("|")})":\\s*"$`);
const ID_PATH_RE = new RegExp(`\\.(?:${ID_KEYS.join("|")})$`);
const HEX8_WHOLE_RE = /^[0-9a-f]{8}$/;
const TOKEN_RE = new RegExp(
	`(${UUID_RE.source})|(${ISO_RE.source})|(${FILE_TS_RE.source})|(${MS_RE.source})|${HEX8_RE.source}`,
	"g",
);

/** Tokens in a text that the normalizer would rewrite; pass them as `keep` when they come from input data. */
export function tokensIn(text) {
	const out = new Set();
	for (const re of [UUID_RE, HEX8_RE, ISO_RE, FILE_TS_RE, MS_RE]) for (const m of text.matchAll(re)) out.add(m[0]);
	return out;
}

export function encodeCwdForSessionDir(p) {
	return p.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
}

export class Normalizer {
	constructor({ roots = [], keep = [] } = {}) {
		this.literals = [];
		this.keep = new Set(keep);
		this.maps = { UUID: new Map(), ID: new Map(), T: new Map() };
		for (const root of roots) this.addRoot(root);
	}

	addRoot(root, label = "ROOT") {
		this.literals.push([root, `<${label}>`]);
		this.literals.push([encodeCwdForSessionDir(root), `<${label}ENC>`]);
		// Inside a JSON line a Windows path's backslashes are doubled.
		const escaped = JSON.stringify(root).slice(1, -1);
		if (escaped !== root) this.literals.push([escaped, `<${label}>`]);
		this.literals.sort((a, b) => b[0].length - a[0].length);
	}

	addKeep(tokens) {
		for (const t of tokens) this.keep.add(t);
	}

	_ord(kind, key) {
		const map = this.maps[kind];
		let n = map.get(key);
		if (n === undefined) {
			n = map.size + 1;
			map.set(key, n);
		}
		return n;
	}

	_inWindow(ms) {
		return Number.isFinite(ms) && ms >= WINDOW_START && ms <= Date.now() + WINDOW_SLACK;
	}

	instant(ms, suffix = "") {
		return `<T${this._ord("T", ms)}${suffix}>`;
	}

	text(s) {
		let out = s;
		for (const [from, to] of this.literals) if (out.includes(from)) out = out.split(from).join(to);
		// One pass; at each position the alternatives are tried in order (UUID before its 8-hex prefix).
		return out.replace(TOKEN_RE, (m, uuid, iso, fileTs, ms, offset, whole) => {
			const inIdField = !uuid && !iso && !fileTs && !ms && ID_KEY_BEFORE_RE.test(whole.slice(Math.max(0, offset - 24), offset));
			if (this.keep.has(m) && !inIdField) return m;
			if (uuid) return `<UUID${this._ord("UUID", m)}>`;
			if (iso) {
				const t = Date.parse(m);
				return this._inWindow(t) ? this.instant(t) : m;
			}
			if (fileTs) {
				const t = Date.parse(`${m.slice(0, 13)}:${m.slice(14, 16)}:${m.slice(17, 19)}.${m.slice(20)}`);
				return this._inWindow(t) ? this.instant(t, ":file") : m;
			}
			if (ms) return this._inWindow(Number(m)) ? this.instant(Number(m), ":ms") : m;
			return `<ID${this._ord("ID", m)}>`;
		});
	}

	/** A string at `path`: an 8-hex value in an id field is an entry id whatever `keep` says. */
	field(s, path) {
		if (HEX8_WHOLE_RE.test(s) && ID_PATH_RE.test(path)) return `<ID${this._ord("ID", s)}>`;
		return this.text(s);
	}

	number(n) {
		if (Object.is(n, -0)) return "-0";
		if (Number.isInteger(n) && this._inWindow(n) && !this.keep.has(String(n))) return this.instant(n, ":ms");
		return String(n);
	}
}

/** A thrown value, captured so that it can be compared like a result. */
export class Thrown {
	constructor(error) {
		this.isError = error instanceof Error;
		this.message = this.isError ? String(error.message) : String(error);
	}
}

export function capture(fn) {
	try {
		return fn();
	} catch (error) {
		return new Thrown(error);
	}
}

/** Object identity ordinals, persistent for one side of one comparison. */
export class IdentityTracker {
	constructor() {
		this.map = new WeakMap();
		this.count = 0;
	}
	ordinal(obj) {
		let n = this.map.get(obj);
		if (n === undefined) {
			n = ++this.count;
			this.map.set(obj, n);
		}
		return n;
	}
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function kindOf(v) {
	const proto = Object.getPrototypeOf(v);
	if (proto === null) return "Object[null-prototype]";
	if (proto === Object.prototype) return "Object";
	if (proto === Array.prototype) return "Array";
	return proto?.constructor?.name || "Object[unknown-prototype]";
}

/**
 * With PI_SESSION_NATIVE_RELEASE=1 (the release pass of __test__/run.mjs), ours lets go of
 * the heavy values of entries nothing holds (and of a message it wrote, once the caller's
 * object is gone) and makes them again from their lines: equal, but not the same objects
 * from one step to the next (the documented difference, asserted on purpose in
 * release-entries.test.mjs). Then only entries (kept by every manager) carry identity from
 * step to step; every other object is numbered within its render (#rN), on both sides
 * alike, so that sharing inside one result is still compared, except inside the values a
 * manager lets go (LET_GO_KEYS: what two entries' values shared when written, such as one
 * tool object in two system messages, comes back as two equal objects; those are rendered
 * as JSON sees them, without identity). And a value made again from
 * its line has what JSON keeps: in other objects than entries, keys holding `undefined`, a
 * function or a symbol are left out, a number JSON cannot write is null and an object with
 * toJSON (a Date) is what toJSON gives, on both sides alike.
 */
const PER_RENDER_IDENTITY = process.env.PI_SESSION_NATIVE_RELEASE === "1";
/** The values a manager lets go (lib/lazy.js SLOTS): an entry's, and its message's. */
const LET_GO_KEYS = { entry: new Set(["content", "details", "summary", "data", "systemMessage"]), message: new Set(["content", "details"]) };
const isLetGo = (holder, key) =>
	PER_RENDER_IDENTITY && (isEntry(holder) ? LET_GO_KEYS.entry.has(key) : typeof holder.role === "string" && LET_GO_KEYS.message.has(key));
const isEntry = (v) => typeof v.type === "string" && typeof v.id === "string" && ("parentId" in v || v.type === "session");

/**
 * Render a value as lines "path = value".
 * options: norm (Normalizer), ids (IdentityTracker), opaque(v) -> string|undefined to print a
 * value without descending into it (e.g. a SessionManager instance).
 */
export function render(value, { norm, ids, opaque = () => undefined }, rootPath = "$") {
	const lines = [];
	const seen = new Set();
	const local = new Map();
	const ordinal = (v) => {
		if (!PER_RENDER_IDENTITY || isEntry(v)) return `#${ids.ordinal(v)}`;
		if (!local.has(v)) local.set(v, local.size + 1);
		return `#r${local.get(v)}`;
	};
	const walk = (v, path, asJson = false) => {
		switch (typeof v) {
			case "undefined":
				lines.push(`${path} = undefined`);
				return;
			case "boolean":
				lines.push(`${path} = ${v}`);
				return;
			case "number":
				lines.push(`${path} = ${norm.number(v)}`);
				return;
			case "bigint":
				lines.push(`${path} = ${v}n`);
				return;
			case "string":
				lines.push(`${path} = ${JSON.stringify(norm.field(v, path))}`);
				return;
			case "symbol":
				lines.push(`${path} = ${v.toString()}`);
				return;
			case "function":
				lines.push(`${path} = [Function ${v.name}]`);
				return;
		}
		if (v === null) {
			lines.push(`${path} = null`);
			return;
		}
		if (v instanceof Thrown) {
			lines.push(`${path} = throws ${v.isError ? "Error" : "non-Error"}: ${JSON.stringify(norm.text(v.message))}`);
			return;
		}
		const op = opaque(v);
		if (op !== undefined) {
			lines.push(`${path} = ${op}`);
			return;
		}
		const id = asJson ? "" : ordinal(v);
		if (!asJson && seen.has(v)) {
			lines.push(`${path} = ${id} (again)`);
			return;
		}
		if (!asJson) seen.add(v);
		const kind = kindOf(v);
		if (v instanceof Date) {
			const t = v.getTime();
			lines.push(`${path} = Date ${id} ${Number.isNaN(t) ? "Invalid" : norm.text(v.toISOString())}`);
			return;
		}
		if (v instanceof Error) {
			lines.push(`${path} = ${kind} ${id} ${JSON.stringify(norm.text(String(v.message)))}`);
			return;
		}
		if (Array.isArray(v)) {
			lines.push(`${path} = ${kind}(${v.length}) ${id}`);
			for (let i = 0; i < v.length; i++) {
				if (i in v) walk(v[i], `${path}[${i}]`, asJson);
				else lines.push(`${path}[${i}] = <hole>`);
			}
			return;
		}
		if (v instanceof Map || v instanceof Set) {
			lines.push(`${path} = ${kind}(${v.size}) ${id}`);
			let i = 0;
			for (const item of v) {
				if (v instanceof Map) {
					walk(item[0], `${path}.<key ${i}>`, asJson);
					walk(item[1], `${path}.<value ${i}>`, asJson);
				} else walk(item, `${path}.<item ${i}>`, asJson);
				i++;
			}
			return;
		}
		lines.push(`${path} = ${kind} ${id}`);
		const entry = isEntry(v);
		for (const key of Object.keys(v)) {
			if (PER_RENDER_IDENTITY && !entry) {
				const value = v[key];
				if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
				if (typeof value === "number" && !Number.isFinite(value)) {
					lines.push(`${path}.${key} = null`);
					continue;
				}
				if (typeof value?.toJSON === "function") {
					walk(value.toJSON(key), IDENT.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, asJson);
					continue;
				}
			}
			const k = norm.text(key);
			walk(v[key], IDENT.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, asJson || isLetGo(v, key));
		}
	};
	walk(value, rootPath);
	return lines;
}

/** Null if equal, else a readable description of the first differing line, with context. */
export function firstDifference(refLines, oursLines, context = 4) {
	const n = Math.max(refLines.length, oursLines.length);
	for (let i = 0; i < n; i++) {
		if (refLines[i] === oursLines[i]) continue;
		const from = Math.max(0, i - context);
		const show = (lines) =>
			lines
				.slice(from, i + context + 1)
				.map((l, k) => `${from + k === i ? ">" : " "} ${truncate(l)}`)
				.join("\n");
		return [
			`first difference at line ${i + 1} of ${refLines.length} (ref) / ${oursLines.length} (ours):`,
			`  ref : ${truncate(refLines[i] ?? "<end>")}`,
			`  ours: ${truncate(oursLines[i] ?? "<end>")}`,
			"--- ref context ---",
			show(refLines),
			"--- ours context ---",
			show(oursLines),
		].join("\n");
	}
	return null;
}

function truncate(s, max = 400) {
	return s.length > max ? `${s.slice(0, max)}... (${s.length} chars)` : s;
}
