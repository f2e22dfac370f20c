// Differential harness: run the same steps on the reference and on ours, each side in its
// own temp directory, and compare results, thrown errors, session state, identity and files.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { waitForNextMs } from "./clock.mjs";
import { collectGarbage } from "./collect.mjs";
import { capture, firstDifference, IdentityTracker, Normalizer, render, Thrown } from "./normalize.mjs";
import { ours, oursLoadedFrom } from "./ours.mjs";
import { reference, referenceLoadedFrom } from "./reference.mjs";


// Nothing in the test suite may touch ~/.pi: sides set their own agent dir before each step,
// and this fallback covers anything that runs outside a step.
const FALLBACK_AGENT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "pi-diff-agent-"));
process.env.PI_CODING_AGENT_DIR = FALLBACK_AGENT_DIR;
process.on("exit", () => fs.rmSync(FALLBACK_AGENT_DIR, { recursive: true, force: true }));

console.log(`# comparing ours (${oursLoadedFrom}) with the reference (${referenceLoadedFrom}) on Node ${process.version}`);

// --- Deliberate differences ------------------------------------------------------------
//
// README.md, "Differences from the reference": "A rejected `setSessionFile`/`open` leaves
// the manager as it was." The reference throws `Session file is not a valid pi session:
// <path>` but has already pointed its sessionFile at the rejected path (later appends go
// into that file); ours throws the same message and keeps its previous session. This is the
// only place where the harness expects ours to differ: Differential#expectRejectedSetSessionFile.
// (open's constructor path needs no exception: no manager escapes the throw on either side.)
//
// PI_DIFF_EXPECTED_DIFFERENCES=off  compare those steps exactly like every other step
//                                   (harness validation: the reference as ours, see ours.mjs)
// PI_DIFF_EXPECTED_DIFFERENCES=on   assert the deliberate difference even if ours is the reference
// unset                             on, unless ours is the reference module itself
const EXPECTED_DIFFERENCES_ENV = process.env.PI_DIFF_EXPECTED_DIFFERENCES;
if (![undefined, "", "on", "off"].includes(EXPECTED_DIFFERENCES_ENV)) {
	throw new Error(`PI_DIFF_EXPECTED_DIFFERENCES must be "on" or "off", not ${JSON.stringify(EXPECTED_DIFFERENCES_ENV)}`);
}
const OURS_IS_REFERENCE = ours.SessionManager === reference.SessionManager;
export const EXPECTED_DIFFERENCES =
	EXPECTED_DIFFERENCES_ENV === "on" ? true : EXPECTED_DIFFERENCES_ENV === "off" ? false : !OURS_IS_REFERENCE;
console.log(
	`# deliberate difference "rejected setSessionFile leaves the manager as it was": ${
		EXPECTED_DIFFERENCES ? "asserted" : "off, compared exactly like the reference"
	} (PI_DIFF_EXPECTED_DIFFERENCES=${EXPECTED_DIFFERENCES_ENV || `<unset>${OURS_IS_REFERENCE ? ", ours is the reference" : ""}`})`,
);

/** The reference's message for a file that is not a pi session (what makes a rejection "expected"). */
export const REJECTED_SESSION_FILE_MESSAGE = /^Session file is not a valid pi session: /;

export { apart, waitForNextMs } from "./clock.mjs";

export function tempDir(label) {
	return fs.mkdtempSync(path.join(os.tmpdir(), `pi-diff-${label}-`));
}

/** One implementation's world: module, temp root, normalizer, identity tracker, current manager. */
export class Side {
	constructor(name, impl, { keep = [] } = {}) {
		this.name = name;
		this.impl = impl;
		this.SM = impl.SessionManager;
		this.root = tempDir(name);
		this.cwd = path.join(this.root, "project");
		this.sessionDir = path.join(this.root, "sessions");
		this.agentDir = path.join(this.root, "agent");
		this.filesDir = path.join(this.root, "files");
		fs.mkdirSync(this.filesDir);
		this.norm = new Normalizer({ roots: [this.root, fs.realpathSync(this.root)], keep });
		this.ids = new IdentityTracker();
		this.sm = undefined;
		this.vars = {};
		this.watched = [];
		this.tracked = [];
	}

	/** Register a caller-owned object passed to the API: its identity is followed from now on. */
	track(obj) {
		this.tracked.push(obj);
		return obj;
	}

	/** Keep rendering this caller-owned object after every step (to see later mutations). */
	watch(obj) {
		this.watched.push(obj);
		return obj;
	}

	/** Path inside this side's root. */
	p(...parts) {
		return path.join(this.root, ...parts);
	}

	enter() {
		process.env.PI_CODING_AGENT_DIR = this.agentDir;
	}

	/** Current manager's entries (for picking ids by position, the same on both sides). */
	entries() {
		return this.sm ? this.sm.getEntries() : [];
	}

	idAt(fraction) {
		const entries = this.entries();
		if (entries.length === 0) return undefined;
		return entries[Math.min(entries.length - 1, Math.floor(fraction * entries.length))]?.id;
	}

	renderOptions() {
		return {
			norm: this.norm,
			ids: this.ids,
			opaque: (v) => (v instanceof this.SM ? "<SessionManager instance>" : undefined),
		};
	}
}

/** All of a manager's observable state. Each getter is captured separately (a throw is a value). */
export function sessionState(sm, { tree = true, context = true, children = true } = {}) {
	const state = {};
	const get = (name, fn) => {
		state[name] = capture(fn);
		return state[name];
	};
	get("sessionId", () => sm.getSessionId());
	const file = get("sessionFile", () => sm.getSessionFile());
	const dir = get("sessionDir", () => sm.getSessionDir());
	// An in-memory manager's sessionDir is "": relative to the process cwd the path
	// would name each side's temp dir, so it is only compared for a real dir.
	state.sessionFileRelativeToDir =
		typeof file === "string" && typeof dir === "string" && dir !== "" ? path.relative(dir, file) : null;
	get("cwd", () => sm.getCwd());
	get("isPersisted", () => sm.isPersisted());
	get("usesDefaultSessionDir", () => sm.usesDefaultSessionDir());
	get("header", () => sm.getHeader());
	get("leafId", () => sm.getLeafId());
	get("leafEntry", () => sm.getLeafEntry());
	get("entryCount", () => sm.getEntryCount());
	const entries = get("entries", () => sm.getEntries());
	get("entriesAgain", () => sm.getEntries());
	const ids = Array.isArray(entries) ? entries.map((e) => (e === null || e === undefined ? e : e.id)) : [];
	state.getEntry = ids.map((id) => capture(() => sm.getEntry(id)));
	get("getEntryMissing", () => sm.getEntry("no-such-id"));
	state.getLabel = ids.map((id) => capture(() => sm.getLabel(id)));
	if (children) state.getChildren = ids.map((id) => capture(() => sm.getChildren(id)));
	get("sessionName", () => sm.getSessionName());
	if (context) {
		get("branch", () => sm.getBranch());
		if (ids.length) {
			get("branchFromFirst", () => sm.getBranch(ids[0]));
			get("branchFromMiddle", () => sm.getBranch(ids[Math.floor(ids.length / 2)]));
		}
		get("branchFromMissing", () => sm.getBranch("no-such-id"));
		get("contextEntries", () => sm.buildContextEntries());
		get("projection", () => sm.buildSessionProjection());
		get("context", () => sm.buildSessionContext());
	}
	if (tree) get("tree", () => sm.getTree());
	return state;
}

/** A cheap view of a manager: what changes after each op, without materializing every entry. */
export function lightState(sm) {
	const state = {};
	for (const [name, fn] of Object.entries({
		sessionId: () => sm.getSessionId(),
		sessionFile: () => sm.getSessionFile(),
		leafId: () => sm.getLeafId(),
		entryCount: () => sm.getEntryCount(),
		sessionName: () => sm.getSessionName(),
	})) {
		state[name] = capture(fn);
	}
	return state;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Rendered file contents by side and content hash (the normalizer's mapping only grows, so this is exact). */
const fileRenderCache = new WeakMap();

/** Every directory and file under root, files line by line (bytes exact, modulo normalization). */
export function renderFiles(root, norm) {
	const lines = [];
	const visit = (dir) => {
		const names = fs.readdirSync(dir).sort();
		for (const name of names) {
			const full = path.join(dir, name);
			const rel = norm.text(path.relative(root, full));
			const st = fs.lstatSync(full);
			if (st.isDirectory()) {
				lines.push(`files[${JSON.stringify(rel)}] = dir`);
				visit(full);
				continue;
			}
			const bytes = fs.readFileSync(full);
			let cache = fileRenderCache.get(norm);
			if (!cache) fileRenderCache.set(norm, (cache = new Map()));
			const key = `${rel}\0${createHash("sha1").update(bytes).digest("hex")}`;
			const cached = cache.get(key);
			if (cached) {
				lines.push(...cached);
				continue;
			}
			const start = lines.length;
			let text;
			let encoding = "utf8";
			try {
				text = utf8.decode(bytes);
			} catch {
				text = bytes.toString("latin1");
				encoding = "latin1 (invalid utf-8)";
			}
			const fileLines = text.split("\n");
			lines.push(`files[${JSON.stringify(rel)}] = file ${encoding}, ${fileLines.length} newline-separated parts`);
			// Runs of identical lines are printed once, with their range.
			for (let i = 0; i < fileLines.length; ) {
				let j = i + 1;
				while (j < fileLines.length && fileLines[j] === fileLines[i]) j++;
				const range = j - i > 1 ? `${i + 1}..${j}` : `${i + 1}`;
				lines.push(`files[${JSON.stringify(rel)}][${range}] = ${JSON.stringify(norm.text(fileLines[i]))}`);
				i = j;
			}
			cache.set(key, lines.slice(start));
		}
	};
	visit(root);
	return lines;
}

/**
 * Identity for comparing two views of one side (before and after a call): an object the
 * base tracker knew before this view keeps its base ordinal ("#g5"), an object first seen in
 * this view is numbered by its first appearance in it ("#n1"). Fresh results of getters
 * (arrays, tree nodes, contexts) thus render the same from one view to the next, while the
 * objects a manager retains (entries, header) must be the very same objects.
 * Every object seen is added to base when the view is done (call done()).
 */
class ViewIdentity {
	constructor(base) {
		this.base = base;
		this.local = new Map();
	}
	ordinal(obj) {
		let label = this.local.get(obj);
		if (label === undefined) {
			const known = this.base.map.get(obj);
			label = known === undefined ? `n${this.local.size + 1}` : `g${known}`;
			this.local.set(obj, label);
		}
		return label;
	}
	done() {
		for (const obj of this.local.keys()) this.base.ordinal(obj);
	}
}

/** What a rejected setSessionFile must not change (and what the resync reloads), taken just before the call. */
function sessionSnapshot(sm) {
	return {
		persisted: sm.isPersisted(),
		sessionFile: sm.getSessionFile(),
		sessionDir: sm.getSessionDir(),
		cwd: sm.getCwd(),
		header: sm.getHeader(),
		entries: sm.getEntries(),
	};
}

function readBytesOrNull(file) {
	return fs.existsSync(file) ? fs.readFileSync(file) : null;
}

/**
 * A differential comparison: a sequence of steps, each run on the reference and on ours.
 *
 *   const d = new Differential("title");
 *   await d.step("create", (s) => s.SM.create(s.cwd, s.sessionDir));
 *   await d.step("append", (s) => s.sm.appendMessage(s.track(user("hi"))));
 *   d.cleanup();
 *
 * A step returning a SessionManager makes it the side's current manager (s.sm). After a step,
 * the result (or thrown error), the tracked arguments, the current manager's state and all
 * files under the side's root are rendered and compared.
 */
export class Differential {
	constructor(title, { keep = [], info = () => "" } = {}) {
		this.title = title;
		this.info = info;
		this.ref = new Side("ref", reference, { keep });
		this.ours = new Side("ours", ours, { keep });
		this.sides = [this.ref, this.ours];
		this.history = [];
	}

	/** Run fn on both sides without comparing (setup: writing input files, ...). */
	async setup(fn) {
		for (const side of this.sides) {
			side.enter();
			await fn(side);
		}
	}

	/**
	 * options.state: "full" (default), "light", "none"; options.stateOptions: for sessionState;
	 * options.files: compare files (default true); options.chdir: run with cwd = side root.
	 */
	async step(name, fn, options = {}) {
		const { state = "full", stateOptions, files = true, chdir = false } = options;
		this.history.push(name);
		// With --expose-gc: what the managers let go of since the last step is gone.
		await collectGarbage();
		const renders = [];
		const results = [];
		for (const side of this.sides) {
			side.enter();
			side.tracked = [];
			waitForNextMs();
			const previousCwd = process.cwd();
			if (chdir) process.chdir(side.root);
			let result;
			try {
				result = await fn(side);
			} catch (error) {
				result = new Thrown(error);
			} finally {
				if (chdir) process.chdir(previousCwd);
			}
			if (result instanceof side.SM) side.sm = result;
			results.push(result);
			const doc = { args: side.tracked, result };
			if (side.watched.length) doc.watched = side.watched;
			if (side.sm && state === "full") doc.state = sessionState(side.sm, stateOptions);
			if (side.sm && state === "light") doc.state = lightState(side.sm);
			const lines = render(doc, side.renderOptions());
			if (files) lines.push(...renderFiles(side.root, side.norm));
			renders.push(lines);
		}
		this.compare(name, renders[0], renders[1]);
		return { ref: results[0], ours: results[1] };
	}

	/** Compare two renders; fail with the first difference, the step history and any extra info. */
	compare(name, refLines, oursLines, what = "differs from the reference") {
		const diff = firstDifference(refLines, oursLines);
		if (diff === null) return;
		this.fail(name, what, diff);
	}

	fail(name, what, diff) {
		const recent = this.history.slice(-12).map((h, i, a) => `  ${this.history.length - a.length + i + 1}. ${h}`);
		assert.fail(
			[
				`${this.title}: step ${this.history.length} "${name}" ${what}`,
				this.info(),
				diff,
				"(legend: #n = object identity ordinal; '#n (again)' = the same object as earlier in this render;",
				" <IDn>/<UUIDn>/<Tn> = nth distinct entry id / uuid / instant; <ROOT> = the side's temp dir;",
				" in before/after views of a rejected setSessionFile: #gn = an object held before the view, #nn = new in it)",
				"--- recent steps ---",
				...recent,
			]
				.filter(Boolean)
				.join("\n"),
		);
	}

	/**
	 * The one deliberate difference the harness expects (README.md, "Differences from the
	 * reference": "A rejected `setSessionFile`/`open` leaves the manager as it was"): call
	 * s.sm.setSessionFile(fileOf(s)) on a file the reference rejects, and assert
	 *   - the reference throws `Session file is not a valid pi session: <path>` and ours throws
	 *     the same (rendered and normalized like any thrown error, compared between the sides);
	 *   - both sides were in the same state and had the same files just before the call;
	 *   - ours afterwards: the full state (entries and header by identity, leaf, session id,
	 *     session file ...) and every file under its root exactly as just before the call, and
	 *     the rejected file's bytes unchanged;
	 *   - the reference afterwards: the same, except that its session file is now the rejected
	 *     path (exactly the documented difference, nothing else).
	 * fileOf(s) may write the file (it is called once per side before anything is observed).
	 * The sides have diverged afterwards: follow with resyncAfterRejectedSetSessionFile() before
	 * comparing anything that depends on the current manager.
	 * With EXPECTED_DIFFERENCES off this is an ordinary step (compared exactly).
	 */
	async expectRejectedSetSessionFile(name, fileOf, { chdir = false } = {}) {
		if (!EXPECTED_DIFFERENCES) {
			return this.step(name, (s) => {
				const file = fileOf(s);
				s.beforeRejection = sessionSnapshot(s.sm);
				return s.sm.setSessionFile(file);
			}, { chdir });
		}
		const label = `${name} [expected difference: rejected setSessionFile leaves ours as it was]`;
		this.history.push(label);
		const runs = {};
		for (const side of this.sides) {
			side.enter();
			side.tracked = [];
			const file = fileOf(side);
			const rejectedPath = path.resolve(chdir ? side.root : process.cwd(), file);
			// Views with a private identity tracker and without side.ids, so that the ordinals of
			// later compared steps are unaffected; both sides render the same things in the same
			// order, so their normalizers stay in step too.
			const base = new IdentityTracker();
			const view = (omitSessionFile = false) => {
				const ids = new ViewIdentity(base);
				const state = sessionState(side.sm);
				if (omitSessionFile) {
					delete state.sessionFile;
					delete state.sessionFileRelativeToDir;
				}
				const lines = render({ state }, { ...side.renderOptions(), ids });
				ids.done();
				lines.push(...renderFiles(side.root, side.norm));
				return lines;
			};
			view(); // prime: everything the manager holds is known to base from here on
			const before = view();
			const beforeOmitted = view(true);
			const bytesBefore = readBytesOrNull(rejectedPath);
			side.beforeRejection = sessionSnapshot(side.sm);
			waitForNextMs();
			const previousCwd = process.cwd();
			if (chdir) process.chdir(side.root);
			let result;
			try {
				result = side.sm.setSessionFile(file);
			} catch (error) {
				result = new Thrown(error);
			} finally {
				if (chdir) process.chdir(previousCwd);
			}
			const thrown = render({ result }, side.renderOptions());
			runs[side.name] = {
				result,
				thrown,
				rejectedPath,
				before,
				beforeOmitted,
				after: view(),
				afterOmitted: view(true),
				bytesBefore,
				bytesAfter: readBytesOrNull(rejectedPath),
				sessionFileAfter: capture(() => side.sm.getSessionFile()),
			};
		}
		const { ref, ours: our } = runs;
		const expectation = (text) => `${text} (expected difference, README "Differences from the reference")`;
		this.compare(label, ref.before, our.before, "was not reached in the same state on both sides (before the call)");
		if (!(ref.result instanceof Thrown) || !REJECTED_SESSION_FILE_MESSAGE.test(ref.result.message)) {
			this.fail(label, "is not rejected by the reference", `reference: ${ref.thrown.join("\n")}\nexpected it to throw ${REJECTED_SESSION_FILE_MESSAGE}: fix the test, not the exception`);
		}
		this.compare(label, ref.thrown, our.thrown, "throws differently from the reference");
		this.compare(label, our.before, our.after, expectation("changed ours (in the diff: 'ref' = ours before the call, 'ours' = ours after)"));
		const bytesKept = our.bytesBefore === null ? our.bytesAfter === null : our.bytesAfter !== null && our.bytesBefore.equals(our.bytesAfter);
		if (!bytesKept) {
			this.fail(label, expectation("changed the rejected file on ours"), `${our.rejectedPath}: ${our.bytesBefore?.length ?? "absent"} bytes before, ${our.bytesAfter?.length ?? "absent"} after`);
		}
		// The reference: only its session file moved (to the rejected path).
		this.compare(label, ref.beforeOmitted, ref.afterOmitted, "changed the reference beyond its session file (in the diff: 'ref' = before the call, 'ours' = the reference after)");
		if (ref.sessionFileAfter !== ref.rejectedPath) {
			this.fail(label, "did not move the reference to the rejected file", `reference session file after the call: ${ref.sessionFileAfter}, rejected: ${ref.rejectedPath}`);
		}
		return { ref: ref.result, ours: our.result };
	}

	/**
	 * After expectRejectedSetSessionFile: the sides have diverged (the reference points at the
	 * rejected file, ours is unchanged). Reload on both sides the session that was current
	 * before the rejected call, from what was current then (the same on both sides): a
	 * persisted one is opened again from its file, with the same sessionDir and cwd (a session
	 * not yet flushed to disk comes back as a new session at that path); one in memory is
	 * rebuilt with inMemory(cwd, undefined, [header, ...entries]). The reference's diverged
	 * manager is dropped. An ordinary, exactly compared step; options as for step().
	 */
	async resyncAfterRejectedSetSessionFile(options = {}) {
		return this.step(
			"resync: reload the session from before the rejected setSessionFile",
			(s) => {
				const b = s.beforeRejection;
				if (!b) throw new Error("resyncAfterRejectedSetSessionFile without expectRejectedSetSessionFile");
				s.beforeRejection = undefined;
				return b.persisted
					? s.SM.open(b.sessionFile, b.sessionDir, b.cwd)
					: s.SM.inMemory(b.cwd, undefined, [b.header, ...b.entries]);
			},
			options,
		);
	}

	cleanup() {
		for (const side of this.sides) fs.rmSync(side.root, { recursive: true, force: true });
	}
}

/** Run body(d) with a fresh Differential, always cleaning up. */
export async function differential(title, body, options) {
	const d = new Differential(title, options);
	try {
		await body(d);
	} finally {
		d.cleanup();
	}
}

/** Set the same modification time (ms since epoch) on a path on both sides. */
export function setMtime(file, ms) {
	const t = new Date(ms);
	fs.utimesSync(file, t, t);
}
