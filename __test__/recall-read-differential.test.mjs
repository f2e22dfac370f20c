// recallRead, which reads a branch by position (only a page's entries built, the doctor run
// only when the open saw something wrong, the session kept open for the next page), against
// the page it showed before (helpers/recall-read-oracle.mjs: the whole branch built by pi's
// own SessionManager class, the doctor run for every page): text and details byte for byte,
// or the same error, for every option (around, from, last, limit, leaf, thinking,
// current with pi's leaf), over seeded random sessions pi's class wrote (branches and leaf
// moves, compactions, branch summaries, custom messages, system prompts, images, long tool
// output, a message larger than a page), damaged copies (a torn last line, a torn line, bytes
// that are no UTF-8, a line written twice) and a v1 file. Then: a file appended to between
// two reads is read afresh.
//
//   node __test__/run.mjs __test__/recall-read-differential.test.mjs     SEED=... reproduces a failure
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REFERENCE_FILE, REPO_ROOT, reference } from "./helpers/reference.mjs";
import { oracleReadPage } from "./helpers/recall-read-oracle.mjs";
import { fillSession, sessionIdOf, withFakeClock } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallRead, SessionManager } = require(path.join(REPO_ROOT, "index.js"));
const { loadEntriesFromFile } = await import(pathToFileURL(REFERENCE_FILE).href);

const SEED = baseSeed();
console.log(`# recall read differential seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/recall-read-differential.test.mjs)`);
process.env.PI_SESSION_NATIVE_CACHE_DIR = "";

const root = fs.realpathSync(tempDir("recall-read"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
process.env.PI_CODING_AGENT_DIR = path.join(root, "agent");
const cwd = path.join(root, "project");
fs.mkdirSync(cwd, { recursive: true });
const DAY_MS = 24 * 60 * 60 * 1000;
const rng = new Rng(SEED);

/** A few entries pi writes that fillSession does not: a system prompt, an image, long tool output, a message larger than a page. */
function extras(sm, r) {
	const ops = [
		() => sm.appendMessage({ role: "system", content: "You are pi.", timestamp: Date.now() }),
		() => sm.appendMessage({ role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: Date.now() }),
		() => {
			const output = Array.from({ length: 5 + r.int(40) }, (_, i) => `line ${i} ${"x".repeat(r.int(300))}`).join("\n");
			sm.appendMessage({ role: "toolResult", toolCallId: "call_x", toolName: "bash", content: [{ type: "text", text: output }], isError: false, timestamp: Date.now() });
		},
		() => sm.appendMessage({ role: "user", content: `huge ${"word ".repeat(12_000 + r.int(5_000))}`, timestamp: Date.now() }),
		() => sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "failed" }], api: "faux", provider: "faux", model: "faux-1", stopReason: "error", errorMessage: "overloaded", timestamp: Date.now() }),
	];
	for (let i = 0; i < 1 + r.int(4); i++) r.pick(ops)();
}

/** Sessions pi's class writes in one project, with leaf moves between its appends. */
function writeSessions() {
	const files = [];
	withFakeClock(Date.now() - 10 * DAY_MS, (clock) => {
		for (let s = 0; s < 5; s++) {
			clock.advance(DAY_MS / 8 + rng.int(DAY_MS));
			const sm = reference.SessionManager.create(cwd, undefined, { id: sessionIdOf(rng) });
			fillSession(sm, rng, clock, 10 + rng.int(50), cwd);
			if (rng.bool(0.7)) extras(sm, rng);
			fillSession(sm, rng, clock, rng.int(20), cwd);
			// A leaf moved back (/tree) without an append after it: the file's leaf is its last entry still.
			if (rng.bool(0.5)) {
				const branch = sm.getBranch();
				sm.branch(branch[rng.int(branch.length)].id);
				fillSession(sm, rng, clock, 1 + rng.int(4), cwd);
			}
			files.push(sm.getSessionFile());
		}
	});
	return files;
}

const clean = writeSessions();
const folder = path.dirname(clean[0]);

/** A damaged copy of `source` named as pi names its files, in the same folder. */
function damagedCopy(source, label, change) {
	const lines = fs.readFileSync(source, "utf8").split("\n");
	if (lines.at(-1) === "") lines.pop();
	const file = path.join(folder, `2020-01-0${damagedCopy.count++}T00-00-00-000Z_${label}.jsonl`);
	fs.writeFileSync(file, change(lines, Buffer.from(`${lines.join("\n")}\n`)));
	return file;
}
damagedCopy.count = 1;
const middle = (lines) => 2 + rng.int(Math.max(1, lines.length - 3));
const damaged = [
	damagedCopy(rng.pick(clean), "torn-last", (lines) => `${lines.slice(0, -1).join("\n")}\n${lines.at(-1).slice(0, 20)}`),
	damagedCopy(rng.pick(clean), "torn-middle", (lines) => {
		const at = middle(lines);
		lines[at] = lines[at].slice(0, Math.floor(lines[at].length / 2));
		return `${lines.join("\n")}\n`;
	}),
	damagedCopy(rng.pick(clean), "not-utf8", (lines, bytes) => {
		const at = bytes.indexOf('"content":');
		bytes[at + 12] = 0xff;
		return bytes;
	}),
	damagedCopy(rng.pick(clean), "twice", (lines) => {
		const at = middle(lines);
		lines.splice(at, 0, lines[at]);
		return `${lines.join("\n")}\n`;
	}),
];
const FIXTURES = path.resolve(REPO_ROOT, "..", "shared", "fixtures");
const v1 = path.join(FIXTURES, "v1-before-compaction.jsonl");
const oldFile = fs.existsSync(v1) ? path.join(folder, "2019-01-01T00-00-00-000Z_v1.jsonl") : undefined;
if (oldFile) fs.copyFileSync(v1, oldFile);

/** What a call gives, or its error: `{ error: { message, code, name } }`. */
async function outcome(call) {
	try {
		return await call();
	} catch (error) {
		return { error: { message: error.message, code: error.code, name: error.name } };
	}
}

/** Random options over `ids` (the file's entry ids as pi's class reads them). */
function randomOptions(r, ids) {
	const o = {};
	const id = () => (r.bool(0.05) ? "nope1234" : r.pick(ids));
	const mode = r.pick(["none", "start", "from", "around", "around", "last"]);
	if (mode === "start") o.from = "start";
	if (mode === "from") o.from = id();
	if (mode === "around") o.around = id();
	if (mode === "last") o.last = 1 + r.int(r.bool(0.2) ? 500 : 30);
	if (r.bool(0.2)) o.leaf = id();
	if (r.bool(0.6)) o.limit = 1 + r.int(r.bool(0.2) ? 500 : 40);
	if (r.bool(0.3)) o.thinking = true;
	return o;
}

/** The oracle's page of `file` with pi's class (`manager`), as recallRead's options say. */
function oraclePage(manager, file, o) {
	const session = o.current === undefined ? file : "current";
	return oracleReadPage(manager, file, {
		session,
		around: o.around,
		from: o.from,
		last: o.last,
		limit: o.limit ?? 50,
		leaf: o.leaf,
		currentLeafId: o.current,
		thinking: o.thinking === true,
	});
}

/** recallRead of `file` with the options, the file by its path or as the current session. */
function ourPage(file, o) {
	const { current, ...rest } = o;
	if (current === undefined) return recallRead({ session: file, cwd, ...rest });
	return recallRead({ session: "current", currentSessionFile: file, currentLeafId: current, cwd, ...rest });
}

test("recallRead gives the old page's text and details for every option, on clean and damaged files", async () => {
	const r = new Rng(SEED ^ 0x7ead);
	let pages = 0;
	let errors = 0;
	let notes = 0;
	let offBranch = 0;
	let cut = 0;
	for (const file of [...clean, ...damaged]) {
		// Our first read ends a torn last line with its newline (as pi's reading does): the oracle reads after it.
		await recallRead({ session: file, cwd });
		const manager = reference.SessionManager.open(file);
		const ids = manager.getEntries().map((e) => e.id);
		for (let i = 0; i < 60; i++) {
			const o = randomOptions(r, ids);
			if (r.bool(0.15)) o.current = r.bool(0.8) ? r.pick(ids) : "notyet00";
			const where = `${path.basename(file)} ${JSON.stringify(o)}`;
			const ours = await outcome(() => ourPage(file, o));
			const expected = await outcome(() => oraclePage(manager, file, o));
			assert.deepEqual(ours, expected, where);
			if (ours.error) errors++;
			else pages++;
			if (ours.text?.includes("This file is damaged")) notes++;
			if (ours.text?.includes("is not on the branch to the session's leaf")) offBranch++;
			if (ours.truncated) cut++;
		}
	}
	assert.ok(pages > 200 && errors > 0, `pages ${pages}, errors ${errors}`);
	assert.ok(notes > 0, "a damaged file's page says so");
	assert.ok(offBranch > 0, "an entry off the leaf's branch was read on its own branch");
	console.log(`# ${pages} pages (${offBranch} off the leaf's branch, ${cut} cut at the output limit, ${notes} of damaged files), ${errors} errors`);
});

test("a v1 file reads as before: migrated in memory (ids made anew each open), not rewritten", { skip: oldFile ? false : `no fixtures at ${FIXTURES}` }, async () => {
	// Migration makes random ids: they are compared by the order they first appear in.
	const normalized = (page) => {
		const names = new Map();
		return JSON.stringify(page).replace(/\b[0-9a-f]{8}\b/g, (id) => {
			if (!names.has(id)) names.set(id, `#${names.size}`);
			return names.get(id);
		});
	};
	const before = fs.readFileSync(oldFile);
	const headerCwd = JSON.parse(before.toString("utf8").split("\n")[0]).cwd;
	const r = new Rng(SEED ^ 0x01d);
	for (let i = 0; i < 20; i++) {
		const o = randomOptions(r, []);
		delete o.leaf;
		if (o.around !== undefined || (o.from !== undefined && o.from !== "start")) continue;
		const manager = reference.SessionManager.inMemory(headerCwd, undefined, loadEntriesFromFile(oldFile));
		const ours = await recallRead({ session: oldFile, cwd, ...o });
		assert.equal(normalized(ours), normalized(oraclePage(manager, oldFile, o)), JSON.stringify(o));
	}
	assert.deepEqual(fs.readFileSync(oldFile), before);
});

test("a file appended to between two reads is read afresh; one unchanged is read from the session kept open", async () => {
	const sm = SessionManager.create(cwd);
	sm.appendMessage({ role: "user", content: "first question", timestamp: Date.now() });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "first answer" }], api: "faux", provider: "faux", model: "faux-1", stopReason: "stop", timestamp: Date.now() });
	const file = sm.getSessionFile();
	const one = await recallRead({ session: file, cwd, last: 50 });
	assert.equal(one.entries.length, 2);
	const again = await recallRead({ session: file, cwd, last: 50 });
	assert.deepEqual(again, one);
	const added = sm.appendMessage({ role: "user", content: "second question", timestamp: Date.now() });
	const two = await recallRead({ session: file, cwd, last: 50 });
	assert.deepEqual(two.entries.map((e) => e.id).slice(0, 2), one.entries.map((e) => e.id));
	assert.equal(two.entries.at(-1).id, added);
	assert.match(two.text, /second question/);
	// Damage written between two reads shows in the next one.
	fs.appendFileSync(file, '{"type":"message","id":"torn');
	const three = await recallRead({ session: file, cwd, last: 50 });
	assert.match(three.text, /^This file is damaged \(1 problem: line 5: torn line: /m);
	// A session file replaced by another under the same name is that other session.
	const other = SessionManager.create(cwd);
	other.appendMessage({ role: "user", content: "another session", timestamp: Date.now() });
	fs.renameSync(other.getSessionFile(), file);
	const four = await recallRead({ session: file, cwd, last: 50 });
	assert.equal(four.sessionId, other.getSessionId());
	assert.match(four.text, /another session/);
});

/**
 * In a new process with the cache folder `cacheDir`: how the recall index of `file` is come
 * by ("stored", "extended", "built", or null for a file read by a manager), then recallRead
 * of `file` with each of `options` (outcomes as `outcome` gives them).
 */
function readInNewProcess(file, cacheDir, options) {
	const script = `
		const { recallRead } = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
		const native = require(${JSON.stringify(path.join(REPO_ROOT, "lib", "native.js"))});
		require(${JSON.stringify(path.join(REPO_ROOT, "lib", "listing.js"))}).applyCacheDir();
		(async () => {
			const origin = native.openRecallIndex(${JSON.stringify(file)})?.origin() ?? null;
			const pages = [];
			for (const o of ${JSON.stringify(options)}) {
				try {
					pages.push(await recallRead({ session: ${JSON.stringify(file)}, cwd: ${JSON.stringify(cwd)}, ...o }));
				} catch (error) {
					pages.push({ error: { message: error.message, code: error.code, name: error.name } });
				}
			}
			process.stdout.write(JSON.stringify({ origin, pages }));
		})();`;
	const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, PI_SESSION_NATIVE_CACHE_DIR: cacheDir }, maxBuffer: 1 << 28 });
	assert.equal(run.status, 0, run.stderr);
	return JSON.parse(run.stdout);
}

test("a big session's recall index is kept in the cache folder: a new process reads pages from it, an append extends it, a rewrite makes it anew", async () => {
	const cacheDir = fs.realpathSync(tempDir("recall-index-cache"));
	after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
	const r = new Rng(SEED ^ 0x1dec);
	// Over the 8 MB from which an index is kept: a few large tool outputs among pi's entries.
	const sm = reference.SessionManager.create(cwd, undefined, { id: sessionIdOf(r) });
	withFakeClock(Date.now() - DAY_MS, (clock) => {
		for (let i = 0; i < 5; i++) {
			fillSession(sm, r, clock, 10 + r.int(30), cwd);
			const output = Array.from({ length: 20_000 }, (_, k) => `${k} ${"y".repeat(80 + r.int(40))}`).join("\n");
			sm.appendMessage({ role: "toolResult", toolCallId: "call_big", toolName: "bash", content: [{ type: "text", text: output }], isError: false, timestamp: Date.now() });
		}
		extras(sm, r);
	});
	const file = sm.getSessionFile();
	assert.ok(fs.statSync(file).size > 8 << 20, "the session is over 8 MB");
	const check = (expectedOrigin, label) => {
		const manager = reference.SessionManager.open(file);
		const ids = manager.getEntries().map((e) => e.id);
		const options = Array.from({ length: 25 }, () => randomOptions(r, ids));
		const { origin, pages } = readInNewProcess(file, cacheDir, options);
		assert.equal(origin, expectedOrigin, label);
		options.forEach((o, k) => {
			let expected;
			try {
				expected = oraclePage(manager, file, o);
			} catch (error) {
				expected = { error: { message: error.message, code: error.code, name: error.name } };
			}
			assert.deepEqual(pages[k], expected, `${label} ${JSON.stringify(o)}`);
		});
	};
	check("built", "no index yet");
	const [stored] = fs.readdirSync(path.join(cacheDir, "recall"));
	if (process.platform !== "win32") assert.equal(fs.statSync(path.join(cacheDir, "recall", stored)).mode & 0o777, 0o600);
	check("stored", "the index kept by the process before");
	withFakeClock(Date.now(), (clock) => fillSession(sm, r, clock, 5 + r.int(20), cwd));
	check("extended", "lines appended");
	check("stored", "the extended index kept");
	// Rewritten by another program to the same size (one id changed): made anew.
	const bytes = fs.readFileSync(file);
	const lastId = reference.SessionManager.open(file).getLeafId();
	fs.writeFileSync(file, bytes.toString("utf8").replace(`"id":"${lastId}"`, `"id":"${lastId.split("").reverse().join("")}"`));
	assert.equal(fs.statSync(file).size, bytes.length);
	check("built", "rewritten in place");
	// Spoiled by an append (a torn line): read by a manager, its damage told.
	fs.appendFileSync(file, '{"type":"message","id":"torn');
	check(null, "a torn line appended");
	assert.deepEqual(fs.readdirSync(path.join(cacheDir, "recall")), [stored]);
});

test("a file rewritten between its index and the page's read: the page is read again from a new index", async () => {
	const native = require(path.join(REPO_ROOT, "lib", "native.js"));
	const sm = SessionManager.create(cwd);
	for (let i = 0; i < 6; i++) sm.appendMessage({ role: "user", content: `question ${i}`, timestamp: Date.now() });
	const file = sm.getSessionFile();
	const stale = native.openRecallIndex(file);
	assert.notEqual(stale, null);
	// Rewritten by another program: every line after the header says something else.
	fs.writeFileSync(file, fs.readFileSync(file, "utf8").replaceAll("question", "answer!!"));
	const open = native.openRecallIndex;
	let calls = 0;
	const fresh = [];
	native.openRecallIndex = (target, isFresh) => {
		fresh.push(isFresh === true);
		return calls++ === 0 ? stale : open(target, isFresh);
	};
	try {
		const page = await recallRead({ session: file, cwd, last: 10 });
		assert.equal(calls, 2, "opened again after the stale index found its lines changed");
		assert.deepEqual(fresh, [false, true], "the second open is made from the file, not from what is kept");
		assert.match(page.text, /answer!! 5/);
		assert.doesNotMatch(page.text, /question/);
		assert.equal(page.entries.length, 6);
	} finally {
		native.openRecallIndex = open;
	}
});
