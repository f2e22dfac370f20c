// recallSearch and recallRead against an oracle over pi's own SessionManager
// (helpers/recall-store.mjs), on a seeded random store that pi's own class wrote: several
// sessions in two projects, forks by forkFrom (a fork of a fork, one into the other
// project) and createBranchedSession, compactions, branches, the recall tools' own calls
// and results, one file with a torn line. Then the errors (clear sentences with codes),
// dates as days ago, abort, the current session read whole, and an old file read without
// being rewritten.
//
//   node __test__/run.mjs __test__/recall.test.mjs        SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { oracleRead, oracleSearch, PiView, QUERIES, withFakeClock, writeRecallStore } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallSearch, recallRead, grepSessions, SessionManager } = require(path.join(REPO_ROOT, "index.js"));

const SEED = baseSeed();
console.log(`# recall seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/recall.test.mjs)`);
process.env.PI_SESSION_NATIVE_CACHE_DIR = "";

const root = fs.realpathSync(tempDir("recall"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const rng = new Rng(SEED);
const store = writeRecallStore(reference.SessionManager, root, rng);
const [alpha, beta] = store.projects;
const view = new PiView(reference.SessionManager);
const DAY_MS = 24 * 60 * 60 * 1000;

/** The hit fields the oracle knows (the snippet is checked against the matched text instead). */
const comparable = ({ snippet: _snippet, text: _text, ...rest }) => rest;

/** A snippet is a piece of the matched text, whitespace made single spaces, its matches marked «…». */
function assertSnippet(snippet, text, query, where) {
	const flat = text.replace(/\s+/g, " ");
	const bare = snippet.replace(/^…/, "").replace(/…$/, "").replaceAll("«", "").replaceAll("»", "");
	assert.ok(flat.includes(bare), `${where}: snippet ${JSON.stringify(snippet)} is not a piece of ${JSON.stringify(flat)}`);
	const marked = [...snippet.matchAll(/«([^»]*)»/g)].map((m) => m[1]);
	assert.ok(marked.length > 0, `${where}: no match marked in ${JSON.stringify(snippet)}`);
	for (const m of marked) assert.equal(m.toLowerCase(), query.toLowerCase(), `${where}: marked ${JSON.stringify(m)}`);
}

/** Random search options over the store, with the oracle's form of them. */
function randomSearch(r, entryTimes) {
	const options = { cwd: r.bool(0.8) ? alpha : beta };
	if (r.bool(0.3)) options.scope = "all";
	if (r.bool(0.85)) options.query = r.pick(QUERIES);
	if (r.bool(0.3)) options.role = r.pick(["user", "assistant", "toolCall", "toolResult"]);
	const oracle = { ...options };
	if (r.bool(0.25)) {
		// An entry's own time: at and after/before it are inclusive.
		const at = r.pick(entryTimes);
		if (r.bool()) options.after = oracle.after = at;
		else options.before = oracle.before = at;
		if (options.after) oracle.after = Date.parse(at);
		if (options.before) oracle.before = Date.parse(at);
	}
	if (r.bool(0.1)) {
		// A bare date before: to the end of that day (UTC).
		const day = r.pick(entryTimes).slice(0, 10);
		options.before = day;
		oracle.before = Date.parse(day) + DAY_MS - 1;
	}
	if (r.bool(0.2)) options.file = oracle.file = r.pick(["app.ts", "src/app.ts", "schema.sql", "README.md", path.join(alpha, "lib", "auth.js"), "nowhere.txt"]);
	if (r.bool(0.15)) {
		const file = r.pick(store.files);
		options.session = r.bool() ? file : path.basename(file).split("_")[1].replace(/\.jsonl$/, "");
		oracle.sessionFile = file;
	}
	if (r.bool(0.4)) options.limit = oracle.limit = 1 + r.int(25);
	return { options, oracle };
}

const entryTimes = store.files.flatMap((f) => (view.open(f)?.getEntries() ?? []).map((e) => e.timestamp)).filter(Boolean);

test("recallSearch finds what the oracle over pi's own class finds: order, roles, forks shown once, the recall tools left out", async () => {
	const r = new Rng(SEED ^ 0x5eed);
	let withForks = 0;
	let hitCount = 0;
	for (let i = 0; i < 60; i++) {
		const { options, oracle } = randomSearch(r, entryTimes);
		const where = `search ${i} ${JSON.stringify(options)}`;
		const ours = await recallSearch(options);
		const expected = await oracleSearch(view, oracle);
		assert.equal(ours.truncated, expected.truncated, `${where}: truncated`);
		if (options.query === undefined) {
			assert.deepEqual(ours.sessions, expected.sessions, `${where}: sessions`);
			assert.deepEqual(ours.hits, [], where);
			continue;
		}
		assert.equal(ours.sessions, undefined, where);
		assert.deepEqual(ours.hits.map(comparable), expected.hits.map(comparable), where);
		ours.hits.forEach((hit, k) => assertSnippet(hit.snippet, expected.hits[k].text, options.query, `${where} hit ${k}`));
		for (const hit of ours.hits) assert.ok(!["session_search", "session_read"].includes(hit.toolName), where);
		withForks += ours.hits.filter((h) => h.forks > 0).length;
		hitCount += ours.hits.length;
		// The text names every hit it shows (all of them: these are small).
		for (const hit of ours.hits) assert.ok(ours.text.includes(`${hit.entryId} ·`), `${where}: ${hit.entryId} in the text`);
	}
	assert.ok(hitCount > 0, "the searches found something");
	// Whether a random store has a fork whose copy matches varies; the whole store says.
	const everything = await recallSearch({ cwd: alpha, scope: "all", query: "e", limit: 500 });
	const expected = await oracleSearch(view, { cwd: alpha, scope: "all", query: "e", limit: 500 });
	assert.deepEqual(everything.hits.map(comparable), expected.hits.map(comparable));
	assert.ok(everything.hits.some((h) => h.forks > 0) || withForks > 0, "a copied entry was shown once with its forks counted");
});

test("the recall tools' calls and results, which hold the words searched, are never hits", async () => {
	// grepSessions, which knows no tools, finds their results and calls; recall does not.
	assert.ok((await grepSessions("hit for", { fields: ["toolResult"] })).length > 0, "the store holds session_search results");
	const results = await recallSearch({ cwd: alpha, scope: "all", query: "hit for", limit: 500 });
	assert.deepEqual(results.hits.filter((h) => h.role === "toolResult"), []);
	assert.ok((await grepSessions("session_search", { fields: ["toolCall"] })).length > 0, "the store holds session_search calls");
	assert.deepEqual((await recallSearch({ cwd: alpha, scope: "all", query: "session_search", role: "toolCall", limit: 500 })).hits, []);
});

test("recallRead shows the oracle's page of the branch: from, around, last, leaf, the next page", async () => {
	const r = new Rng(SEED ^ 0x4ead);
	for (let i = 0; i < 60; i++) {
		const file = r.pick(store.files);
		const sm = view.open(file);
		const ids = sm.getEntries().map((e) => e.id);
		const options = {};
		const mode = r.pick(["none", "from", "start", "around", "last", "leaf"]);
		if (mode === "from") options.from = r.pick(ids);
		if (mode === "start") options.from = "start";
		if (mode === "around") options.around = r.pick(ids);
		if (mode === "last") options.last = 1 + r.int(30);
		if (mode === "leaf") options.leaf = r.pick(ids);
		if (r.bool(0.5)) options.limit = 1 + r.int(40);
		if (r.bool(0.3)) options.thinking = true;
		const session = r.pick([file, sm.getSessionId(), sm.getSessionId().slice(0, 16)]);
		const where = `read ${i} ${path.basename(file)} ${JSON.stringify(options)}`;
		const ours = await recallRead({ session, cwd: r.bool() ? alpha : beta, ...options });
		const expected = oracleRead(view, file, options);
		assert.deepEqual(ours.entries, expected.entries, where);
		assert.equal(ours.next, expected.next, where);
		assert.equal(ours.truncated, false, where);
		assert.equal(ours.sessionId, sm.getSessionId(), where);
		assert.equal(ours.sessionFile, file, where);
		for (const e of ours.entries) assert.ok(ours.text.includes(`[${e.id}] `), `${where}: ${e.id} in the text`);
		const pageHasThinking = ours.entries.some((e) =>
			(sm.getEntry(e.id)?.message?.content ?? []).some?.((b) => b?.type === "thinking"),
		);
		if (pageHasThinking) {
			if (options.thinking) assert.match(ours.text, /\(thinking\) /, where);
			else assert.match(ours.text, /thinking blocks? \(thinking: true shows them\)/, where);
		}
		if (ours.next !== null) assert.ok(ours.text.includes(`Next page: from "${ours.next}"`), where);
		if (file === store.damaged) assert.match(ours.text, /This file is damaged \(/, where);
		else assert.doesNotMatch(ours.text, /This file is damaged/, where);
		if (expected.leafId !== (options.leaf ?? sm.getLeafId())) assert.match(ours.text, /is not on the branch to the session's leaf/, where);
	}
});

test("a damaged file is read as far as pi reads it, and the text says so", async () => {
	const ours = await recallRead({ session: store.damaged, cwd: alpha, last: 500 });
	assert.deepEqual(ours.entries, oracleRead(view, store.damaged, { last: 500 }).entries);
	assert.match(ours.text, /^This file is damaged \(\d+ problems?: line \d+: torn line: .*\); shown is what pi reads of it\.$/m);
	const clean = await recallRead({ session: store.files.find((f) => f !== store.damaged), cwd: alpha });
	assert.doesNotMatch(clean.text, /damaged/);
});

test("errors are one clear sentence with a code", async () => {
	const reject = (promise, code, message) => assert.rejects(promise, (error) => error.code === code && message.test(error.message) && !error.message.includes("\n"));
	await reject(recallRead({ session: "zzzz", cwd: alpha }), "ERR_PI_SESSION_NOT_FOUND", /^No session found with the id or id prefix 'zzzz'/);
	// Every id of the store begins with 0198: the prefix names several, each by id.
	await reject(recallRead({ session: "0198", cwd: alpha }), "ERR_PI_SESSION_AMBIGUOUS", /^'0198' matches \d+ sessions in this project: 0198\S+ \(.*; give more of the id$/);
	await reject(recallSearch({ query: "x", session: "0198", cwd: alpha }), "ERR_PI_SESSION_AMBIGUOUS", /matches/);
	const notes = path.join(path.dirname(store.files[0]), "notes.jsonl");
	await reject(recallRead({ session: notes, cwd: alpha }), "ERR_NOT_A_SESSION_FILE", /notes\.jsonl is not a pi session file \(it does not begin with a session header\)$/);
	await reject(recallRead({ session: path.join(root, "missing.jsonl"), cwd: alpha }), "ERR_PI_SESSION_NOT_FOUND", /^No session file at /);
	// A session file whose header is lost: named as pi names them, in pi's folder.
	const headless = path.join(path.dirname(store.files[0]), "2020-01-01T00-00-00-000Z_0198dead-0000-7000-8000-000000000000.jsonl");
	fs.writeFileSync(headless, fs.readFileSync(store.files[0], "utf8").split("\n").slice(1).join("\n"));
	await reject(recallRead({ session: headless, cwd: alpha }), "ERR_NOT_A_SESSION_FILE", /is a damaged session: it does not begin with a session header, so pi cannot read it/);
	fs.rmSync(headless);
	const outside = path.join(root, "outside.jsonl");
	fs.copyFileSync(store.files[0], outside);
	await reject(recallRead({ session: outside, cwd: alpha, sessionFoldersOnly: true }), "ERR_PI_SESSION_OUTSIDE_FOLDERS", /outside pi's session folders/);
	assert.equal((await recallRead({ session: outside, cwd: alpha })).sessionFile, outside, "without sessionFoldersOnly a path anywhere is read");
	await reject(recallRead({ session: "current", cwd: alpha }), "ERR_PI_SESSION_NOT_FOUND", /^There is no current session file/);
	await reject(recallRead({ session: "parent", cwd: alpha, currentSessionFile: store.files[0] }), "ERR_PI_SESSION_NOT_FOUND", /has no parent/);
	await reject(recallRead({ session: store.files[0], around: "nope1234", cwd: alpha }), "ERR_PI_ENTRY_NOT_FOUND", /^No entry 'nope1234' in session /);
	await assert.rejects(recallRead({ session: store.files[0], around: "a", from: "b" }), { name: "TypeError", message: "Give at most one of around, from and last" });
	await assert.rejects(recallSearch({ role: "system" }), { name: "TypeError", message: /^role must be one of "user", "assistant", "toolCall", "toolResult"/ });
	await assert.rejects(recallSearch({ after: "yesterday-ish" }), { name: "TypeError", message: /^after must be a date/ });
	await assert.rejects(recallSearch({ limit: 0 }), { name: "TypeError", message: "limit must be a whole number from 1 to 500" });
	await assert.rejects(recallRead({}), { name: "TypeError", message: /^session is required/ });
});

test("a leaf not holding the entry asked for is refused; an entry off the current branch reads its own branch", async () => {
	const branched = store.files.map((f) => view.open(f)).find((sm) => sm.getEntries().some((e) => !sm.getBranch().some((b) => b.id === e.id) && e.type === "message"));
	if (!branched) return; // a store without branches off the leaf (rare): the random reads cover the rest
	const off = branched.getEntries().find((e) => e.type === "message" && !branched.getBranch().some((b) => b.id === e.id));
	const file = branched.getSessionFile();
	await assert.rejects(recallRead({ session: file, around: off.id, leaf: branched.getLeafId() }), { code: "ERR_PI_ENTRY_NOT_FOUND", message: /is not on the branch to leaf/ });
	const read = await recallRead({ session: file, around: off.id });
	assert.ok(read.entries.some((e) => e.id === off.id));
	assert.match(read.text, new RegExp(`Entry ${off.id} is not on the branch to the session's leaf`));
});

test("after and before as days ago; without a query, the sessions active then", async () => {
	const dir = fs.realpathSync(tempDir("recall-days"));
	try {
		process.env.PI_CODING_AGENT_DIR = path.join(dir, "agent");
		const cwd = path.join(dir, "p");
		fs.mkdirSync(cwd);
		const write = (daysAgo, text) =>
			withFakeClock(Date.now() - daysAgo * DAY_MS, () => {
				const sm = reference.SessionManager.create(cwd);
				sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
				sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
				return sm.getSessionId();
			});
		const old = write(10, "needle old");
		const recent = write(1, "needle recent");
		const hitsAfter = (after) => recallSearch({ cwd, query: "needle", after }).then((r) => r.hits.map((h) => h.sessionId));
		assert.deepEqual(await hitsAfter(3), [recent]);
		assert.deepEqual(await hitsAfter("3"), [recent]);
		assert.deepEqual(await hitsAfter(30), [recent, old]);
		assert.deepEqual((await recallSearch({ cwd, query: "needle", before: 3 })).hits.map((h) => h.sessionId), [old]);
		assert.deepEqual((await recallSearch({ cwd, after: 3 })).sessions.map((s) => s.sessionId), [recent]);
		assert.deepEqual((await recallSearch({ cwd, before: 3 })).sessions.map((s) => s.sessionId), [old]);
	} finally {
		process.env.PI_CODING_AGENT_DIR = store.agentDir;
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("a query is always a literal, one that begins with re: too", async () => {
	const sm = SessionManager.create(beta);
	sm.appendMessage({ role: "user", content: "grep for re:dep.oy, then for re:", timestamp: Date.now() });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "deploy" }], timestamp: Date.now() });
	const only = { cwd: beta, session: sm.getSessionFile() };
	assert.deepEqual((await recallSearch({ ...only, query: "re:dep.oy" })).hits.map((h) => h.snippet), ["grep for «re:dep.oy», then for re:"]);
	assert.deepEqual((await recallSearch({ ...only, query: "re:" })).hits.map((h) => h.snippet), ["grep for «re:»dep.oy, then for «re:»"]);
	assert.deepEqual((await recallSearch({ ...only, query: "dep.oy" })).hits.map((h) => h.role), ["user"], "the dot is a dot");
});

test("a cycle of parentSession headers ends: a shared entry is shown once, in the file of the cycle with the smallest path", async () => {
	const dir = fs.realpathSync(tempDir("recall-cycle"));
	try {
		process.env.PI_CODING_AGENT_DIR = path.join(dir, "agent");
		const cwd = path.join(dir, "p");
		const folder = path.join(dir, "agent", "sessions", `--${cwd.replace(/^\//, "").replace(/\//g, "-")}--`);
		fs.mkdirSync(folder, { recursive: true });
		const file = (k) => path.join(folder, `2025-01-0${k}T00-00-00-000Z_0198cafe-0000-7000-8000-00000000000${k}.jsonl`);
		const write = (k, parent, extra) => {
			const header = { type: "session", version: 3, id: `0198cafe-0000-7000-8000-00000000000${k}`, timestamp: `2025-01-0${k}T00:00:00.000Z`, cwd, parentSession: parent };
			const shared = { type: "message", id: "shared01", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "the cyclic needle", timestamp: 1 } };
			const own = { type: "message", id: `own0000${k}`, parentId: "shared01", timestamp: `2025-01-0${k}T00:00:02.000Z`, message: { role: "user", content: `needle ${extra}`, timestamp: 2 } };
			fs.writeFileSync(file(k), `${[header, shared, own].map((l) => JSON.stringify(l)).join("\n")}\n`);
		};
		write(1, file(2), "one");
		write(2, file(1), "two");
		const { hits } = await recallSearch({ cwd, query: "needle" });
		const shared = hits.filter((h) => h.entryId === "shared01");
		assert.deepEqual(shared.map((h) => [h.sessionFile, h.forks]), [[file(1), 1]]);
		assert.deepEqual(hits.filter((h) => h.entryId !== "shared01").map((h) => h.entryId).sort(), ["own00001", "own00002"]);
	} finally {
		process.env.PI_CODING_AGENT_DIR = store.agentDir;
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("an aborted signal rejects with its reason", async () => {
	const controller = new AbortController();
	controller.abort(new Error("stop"));
	await assert.rejects(recallSearch({ cwd: alpha, query: "deploy", signal: controller.signal }), { message: "stop" });
	await assert.rejects(recallRead({ cwd: alpha, session: store.files[0], signal: controller.signal }), { message: "stop" });
	// Aborted while reading: the scan stops and the promise rejects.
	const during = new AbortController();
	const pending = recallSearch({ cwd: alpha, scope: "all", query: "e", limit: 500, signal: during.signal });
	during.abort(new Error("later"));
	await assert.rejects(pending, { message: "later" });
});

test("the current session is read whole from its file, before its compaction too, at pi's leaf", async () => {
	const cwd = alpha;
	const sm = SessionManager.create(cwd);
	const first = sm.appendMessage({ role: "user", content: "before the compaction: deploy plan", timestamp: Date.now() });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "noted" }], timestamp: Date.now() });
	const kept = sm.appendMessage({ role: "user", content: "kept", timestamp: Date.now() });
	sm.appendCompaction("summary of the plan", kept, 500);
	const last = sm.appendMessage({ role: "user", content: "after the compaction", timestamp: Date.now() });
	const context = sm.buildSessionContext().messages.map((m) => m.content);
	assert.ok(!JSON.stringify(context).includes("before the compaction"), "the model's context no longer holds it");
	const read = await recallRead({ session: "current", cwd, currentSessionFile: sm.getSessionFile(), currentLeafId: first, from: "start" });
	assert.deepEqual(read.entries.map((e) => e.id), [first], "pi's leaf (moved back by /tree) decides the branch");
	const whole = await recallRead({ session: "current", cwd, currentSessionFile: sm.getSessionFile(), currentLeafId: last });
	assert.equal(whole.entries[0].id, first);
	assert.ok(whole.entries.some((e) => e.type === "compaction"));
	assert.match(whole.text, /before the compaction: deploy plan/);
	assert.match(whole.text, /\] compaction summary \(of what came before entry /);
	// A leaf pi has not written yet is not the file's: the file's leaf is read.
	const unwritten = await recallRead({ session: "current", cwd, currentSessionFile: sm.getSessionFile(), currentLeafId: "notyet00" });
	assert.equal(unwritten.entries.at(-1).id, last);
	const fork = SessionManager.forkFrom(sm.getSessionFile(), cwd);
	const parent = await recallRead({ session: "parent", cwd, currentSessionFile: fork.getSessionFile(), parentSessionFile: fork.getHeader().parentSession });
	assert.equal(parent.sessionId, sm.getSessionId());
});

const FIXTURES = path.resolve(REPO_ROOT, "..", "shared", "fixtures");
test("an old session file is read without being rewritten (migrated in memory)", { skip: fs.existsSync(FIXTURES) ? false : `no fixtures at ${FIXTURES}` }, async () => {
	const source = path.join(FIXTURES, "v1-before-compaction.jsonl");
	const folder = path.join(store.agentDir, "sessions", "--old--");
	fs.mkdirSync(folder, { recursive: true });
	const file = path.join(folder, "2024-01-01T00-00-00-000Z_old.jsonl");
	fs.copyFileSync(source, file);
	const before = fs.readFileSync(file);
	const read = await recallRead({ session: file, cwd: alpha, last: 5 });
	assert.ok(read.entries.length > 0);
	assert.ok(read.entries.every((e) => typeof e.id === "string"), "ids as migration gives them");
	assert.deepEqual(fs.readFileSync(file), before, "the file is as it was");
	fs.rmSync(folder, { recursive: true });
});

test("a session named by id or id prefix is the one pi's listing names (this project first, then all), found by headers", async () => {
	// The rule, on pi's own listing: an exact id first, else the sessions the prefix begins.
	const oracleFile = async (arg, cwd) => {
		for (const sessions of [await reference.SessionManager.list(cwd), await reference.SessionManager.listAll()]) {
			const exact = sessions.filter((s) => s.id === arg);
			const found = exact.length > 0 ? exact : sessions.filter((s) => s.id.startsWith(arg));
			if (found.length === 1) return found[0].path;
			if (found.length > 1) return { ambiguous: found.length };
		}
		return null;
	};
	// A session file not named for its id (copied by hand): found by its header all the same.
	const source = store.files.find((f) => f !== store.damaged);
	const renamed = path.join(path.dirname(source), "copied-by-hand.jsonl");
	const sameId = path.join(path.dirname(source), "same-id-copy.jsonl");
	const header = JSON.parse(fs.readFileSync(source, "utf8").split("\n")[0]);
	const copiedId = `${header.id.slice(0, 9)}c0ffee-0000-7000-8000-000000000000`.slice(0, header.id.length);
	fs.writeFileSync(renamed, fs.readFileSync(source, "utf8").replace(header.id, copiedId));
	try {
		const ids = (await reference.SessionManager.listAll()).map((s) => s.id);
		const r = new Rng(SEED ^ 0x1d5);
		let unique = 0;
		let ambiguous = 0;
		for (const id of ids) {
			for (const arg of [id, id.slice(0, 8 + r.int(id.length - 8)), id.slice(0, 4 + r.int(6))]) {
				const cwd = r.bool() ? alpha : beta;
				const expected = await oracleFile(arg, cwd);
				let ours;
				try {
					ours = (await recallRead({ session: arg, cwd, last: 1 })).sessionFile;
				} catch (error) {
					ours = error.code === "ERR_PI_SESSION_AMBIGUOUS" ? { ambiguous: Number(/matches (\d+) sessions/.exec(error.message)[1]) } : error.code;
				}
				assert.deepEqual(ours, expected === null ? "ERR_PI_SESSION_NOT_FOUND" : expected, `${arg} from ${cwd}`);
				if (typeof expected === "string") unique++;
				else ambiguous++;
			}
		}
		assert.ok(unique > 10 && ambiguous > 0, `unique ${unique}, ambiguous ${ambiguous}`);
		assert.equal((await recallRead({ session: copiedId, cwd: alpha, last: 1 })).sessionFile, renamed);
		// A copy under another name with the same id: the file named for the id is the one, as in pi's findById.
		fs.copyFileSync(source, sameId);
		const cwdOfSource = header.cwd;
		assert.equal((await recallRead({ session: header.id, cwd: cwdOfSource, last: 1 })).sessionFile, source);
	} finally {
		fs.rmSync(renamed);
		fs.rmSync(sameId, { force: true });
	}
});
