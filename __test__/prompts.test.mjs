// listPrompts against an oracle over pi's own SessionManager, on a seeded store pi's own
// class wrote: two projects and a shared session folder (pi's --session-dir) holding both;
// prompts repeated within and across sessions (some differing only in the whitespace at
// their ends), as a string or as text blocks (with images between them, or an image alone),
// blank ones, branches left behind, forks by forkFrom and createBranchedSession, a torn
// line, a file that is no session; files whose last write is before their last prompt.
// Then the streaming (batches in order, the first while later files are unread), abort,
// options, and folders that do not exist.
//
// The oracle: pi lists the sessions (list/listAll), opens each one (getEntries: every
// branch), takes each user message's text blocks joined (as pi puts a message back in its
// editor), gives each prompt the time min(entry timestamp, file mtime), sorts newest first
// (ties: the newer file, then the later entry) and keeps the first of each trimmed text.
//
//   node __test__/run.mjs __test__/prompts.test.mjs        SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { withFakeClock } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { listPrompts } = require(path.join(REPO_ROOT, "index.js"));

const SEED = baseSeed();
console.log(`# prompts seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/prompts.test.mjs)`);

const Ref = reference.SessionManager;
const root = fs.realpathSync(tempDir("prompts"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const HOUR_MS = 3_600_000;

const PROMPTS = [
	"fix the failing tests",
	"fix the failing tests  ",
	"  deploy to staging",
	"deploy to staging",
	"why does login time out?",
	"rename the parser module",
	"explain this error:\n\nECONNREFUSED 127.0.0.1:5432",
	"ünïcode and 日本語 in a prompt",
	"(x) [y] .* regex characters",
	"rollback the migration",
	"add a test for the cache",
	"Add a test for the cache",
];

const hex = (rng, n) => Array.from({ length: n }, () => "0123456789abcdef"[rng.int(16)]).join("");
const sessionId = (rng) => `0198${hex(rng, 4)}-${hex(rng, 4)}-7${hex(rng, 3)}-8${hex(rng, 3)}-${hex(rng, 12)}`;

/** A user message's content: a string, text blocks, text split around an image, an image alone, or blank. */
function userContent(rng) {
	// Half from a few texts (repeats), half of their own (so that the order has much to show).
	const text = rng.bool(0.5) ? rng.pick(PROMPTS) : `prompt ${hex(rng, 6)}`;
	const image = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
	return rng.weighted([
		[5, () => text],
		[3, () => [{ type: "text", text }]],
		[1, () => [{ type: "text", text: text.slice(0, 5) }, image, { type: "text", text: text.slice(5) }]],
		[1, () => [image]],
		[1, () => "   \n"],
	])();
}

/** Turns of a session, a few minutes apart; now and then a branch back to an earlier prompt. */
function fill(sm, rng, clock, turns) {
	const users = [];
	for (let t = 0; t < turns; t++) {
		if (users.length > 1 && rng.bool(0.15)) sm.branch(rng.pick(users));
		clock.advance(60_000 + rng.int(10 * 60_000));
		users.push(sm.appendMessage({ role: "user", content: userContent(rng), timestamp: Date.now() }));
		clock.advance(30_000 + rng.int(60_000));
		// The assistant says prompts too: never a prompt of its own.
		const reply = rng.bool(0.3) ? rng.pick(PROMPTS) : `answer ${t}`;
		sm.appendMessage({ role: "assistant", content: [{ type: "text", text: reply }], api: "faux", provider: "faux", model: "faux-1", stopReason: "stop", timestamp: Date.now() });
		if (rng.bool(0.1)) sm.appendCustomMessageEntry("note", `a note that says ${rng.pick(PROMPTS)}`, true);
	}
}

/**
 * The store: `agent/sessions/<alpha>`, `<beta>` and a `shared` folder holding sessions of
 * both. Each file's mtime is set near its last entry (before it for some), all distinct.
 */
function writeStore(rng) {
	const agentDir = path.join(root, "agent");
	process.env.PI_CODING_AGENT_DIR = agentDir;
	const alpha = path.join(root, "alpha");
	const beta = path.join(root, "beta");
	const shared = path.join(root, "shared");
	for (const d of [alpha, beta, shared]) fs.mkdirSync(d, { recursive: true });
	const files = [];
	withFakeClock(Date.UTC(2025, 2, 1), (clock) => {
		const add = (sm) => {
			files.push({ file: sm.getSessionFile(), last: Date.now() });
			return sm.getSessionFile();
		};
		const create = (cwd, dir) => {
			clock.advance(HOUR_MS + rng.int(24 * HOUR_MS));
			const sm = Ref.create(cwd, dir, { id: sessionId(rng) });
			fill(sm, rng, clock, 2 + rng.int(8));
			return add(sm);
		};
		const made = [];
		for (let i = 0; i < 9 + rng.int(4); i++) made.push(create(i % 3 === 2 ? beta : alpha));
		for (let i = 0; i < 3 + rng.int(3); i++) create(rng.bool() ? alpha : beta, shared);
		// Forks carry copies of their parent's prompts, with the same times.
		for (let i = 0; i < 2; i++) {
			clock.advance(HOUR_MS);
			const sm = Ref.forkFrom(rng.pick(made), rng.bool() ? alpha : beta, undefined, { id: sessionId(rng) });
			fill(sm, rng, clock, rng.int(3));
			add(sm);
		}
		const opened = Ref.open(rng.pick(made));
		const branch = opened.getBranch();
		clock.advance(HOUR_MS);
		opened.createBranchedSession(branch[rng.int(branch.length)].id);
		fill(opened, rng, clock, 1 + rng.int(3));
		add(opened);
	});
	// Distinct mtimes, most just after each file's last entry; a third a day or two before it
	// (a copied file, a clock set back): their prompts' times are their mtime, among other
	// sessions' prompts.
	files.forEach(({ file, last }, i) => {
		const mtime = (rng.bool(0.35) ? last - rng.int(48 * HOUR_MS) : last + rng.int(2 * HOUR_MS)) + i;
		fs.utimesSync(file, mtime / 1000, mtime / 1000);
	});
	// A torn line in the middle of a file: pi reads around it.
	const damaged = rng.pick(files).file;
	const lines = fs.readFileSync(damaged, "utf8").split("\n");
	const torn = 1 + rng.int(Math.max(1, lines.length - 3));
	lines[torn] = lines[torn].slice(0, Math.floor(lines[torn].length / 2));
	const { mtimeMs } = fs.statSync(damaged);
	fs.writeFileSync(damaged, lines.join("\n"));
	fs.utimesSync(damaged, mtimeMs / 1000, mtimeMs / 1000);
	// A file that is no session, in a project folder: no prompt of it is listed.
	const notes = path.join(path.dirname(files[0].file), "notes.jsonl");
	fs.writeFileSync(notes, `${JSON.stringify({ type: "message", id: "n1", parentId: null, timestamp: new Date().toISOString(), message: { role: "user", content: "not a session" } })}\n`);
	return { agentDir, alpha, beta, shared, files: files.map((f) => f.file) };
}

const rng = new Rng(SEED);
const store = writeStore(rng);

/** pi's text of a user message as it puts one back in its editor: a string, or the text blocks joined. */
const textOf = (content) => (typeof content === "string" ? content : content.filter((b) => b.type === "text").map((b) => b.text).join(""));

/** The oracle: what listPrompts should give for the sessions pi lists in `dirs`. */
async function oracle(dirs, listed) {
	const paths = new Set(listed.map((s) => s.path));
	const files = dirs
		.flatMap((dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl")).map((n) => path.join(dir, n)) : []))
		.map((file) => ({ file, mtime: fs.statSync(file).mtimeMs }))
		.sort((a, b) => b.mtime - a.mtime);
	for (let i = 1; i < files.length; i++) assert.notEqual(files[i].mtime, files[i - 1].mtime, "the store's mtimes are distinct");
	const rows = [];
	files.forEach(({ file, mtime }, i) => {
		if (!paths.has(file)) return;
		const sm = Ref.open(file);
		sm.getEntries().forEach((entry, position) => {
			if (entry.type !== "message" || entry.message.role !== "user") return;
			const text = textOf(entry.message.content);
			if (text.trim() === "") return;
			const time = Date.parse(entry.timestamp);
			rows.push({
				prompt: { text, timestamp: entry.timestamp, sessionId: sm.getSessionId(), sessionFile: file, cwd: sm.getCwd(), entryId: entry.id },
				time: Number.isNaN(time) ? mtime : Math.min(time, mtime),
				i,
				position,
			});
		});
	});
	rows.sort((a, b) => b.time - a.time || a.i - b.i || b.position - a.position);
	const seen = new Set();
	return rows.filter(({ prompt }) => !seen.has(prompt.text.trim()) && seen.add(prompt.text.trim())).map((r) => r.prompt);
}

const projectDir = (cwd) => path.join(store.agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
const everyFolder = () => fs.readdirSync(path.join(store.agentDir, "sessions")).map((n) => path.join(store.agentDir, "sessions", n));

/** listPrompts with its batches and progress recorded. */
async function listed(options) {
	const batches = [];
	const progress = [];
	const result = await listPrompts({ ...options, onPrompts: (b) => batches.push({ prompts: b, after: progress.length }), onProgress: (loaded, total) => progress.push([loaded, total]) });
	return { result, batches, progress };
}

test("this project's prompts: pi's, newest first, each text once", async () => {
	for (const cwd of [store.alpha, store.beta]) {
		const want = await oracle([projectDir(cwd)], await Ref.list(cwd));
		const { result, batches } = await listed({ cwd });
		assert.ok(want.length > 3, `the seed gives ${cwd} a few prompts`);
		assert.deepEqual(result, want);
		assert.deepEqual(batches.flatMap((b) => b.prompts), result, "the batches, one after another, are the result");
		assert.ok(batches.every((b) => b.prompts.length > 0), "no empty batch");
	}
});

test("every project's prompts, and the texts that repeat across them once", async () => {
	const want = await oracle(everyFolder(), await Ref.listAll());
	const { result } = await listed({ cwd: store.alpha, scope: "all" });
	assert.deepEqual(result, want);
	const texts = result.map((p) => p.text.trim());
	assert.equal(new Set(texts).size, texts.length, "each trimmed text once");
	assert.ok(!texts.includes("not a session"), "a file without a header is no session");
	// Each project's texts, and no other (the shared folder is not one of pi's project folders).
	const each = [];
	for (const options of [{ cwd: store.alpha }, { cwd: store.beta }]) {
		each.push(...(await listed(options)).result.map((p) => p.text.trim()));
	}
	assert.deepEqual(new Set(texts), new Set(each));
});

test("a shared session folder (pi's --session-dir): the project's own sessions, or all of the folder's", async () => {
	for (const cwd of [store.alpha, store.beta]) {
		const want = await oracle([store.shared], await Ref.list(cwd, store.shared));
		assert.deepEqual((await listed({ cwd, sessionDir: store.shared })).result, want);
		assert.ok(want.every((p) => p.cwd === cwd));
	}
	const all = await oracle([store.shared], await Ref.listAll(store.shared));
	assert.deepEqual((await listed({ cwd: store.alpha, sessionDir: store.shared, scope: "all" })).result, all);
	// The project's own folder given as sessionDir is that project's folder, not a shared one.
	assert.deepEqual((await listed({ cwd: store.alpha, sessionDir: projectDir(store.alpha) })).result, (await listed({ cwd: store.alpha })).result);
});

test("streaming: the first batch comes while later files are unread, progress to the last file", async () => {
	// A project of its own: sessions one after another, each written after the last ended.
	const cwd = path.join(root, "stream");
	fs.mkdirSync(cwd);
	const files = [];
	withFakeClock(Date.UTC(2025, 5, 1), (clock) => {
		for (let i = 0; i < 40; i++) {
			clock.advance(HOUR_MS);
			const sm = Ref.create(cwd, undefined, { id: sessionId(rng) });
			fill(sm, rng, clock, 2 + rng.int(3));
			sm.appendMessage({ role: "user", content: `the last prompt of session ${i}`, timestamp: Date.now() });
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], api: "faux", provider: "faux", model: "faux-1", stopReason: "stop", timestamp: Date.now() });
			fs.utimesSync(sm.getSessionFile(), (Date.now() + 1000) / 1000, (Date.now() + 1000) / 1000);
			files.push(sm.getSessionFile());
		}
	});
	const { result, batches, progress } = await listed({ cwd });
	assert.deepEqual(result, await oracle([projectDir(cwd)], await Ref.list(cwd)));
	assert.equal(result[0].text, "the last prompt of session 39");
	assert.deepEqual(progress[0], [0, 40], "progress starts at 0 of every file");
	assert.deepEqual(progress.at(-1), [40, 40]);
	const first = batches[0];
	// Before the first batch, at most the first file was reported read: the newest session's
	// prompts come before the rest are read.
	assert.ok(progress.slice(0, first.after).every(([loaded]) => loaded <= 1), JSON.stringify(progress.slice(0, first.after)));
	assert.equal(first.prompts[0].text, "the last prompt of session 39");
	assert.ok(first.prompts.every((p) => p.sessionFile === files[39]), "the first batch is the newest session's");
	assert.ok(batches.length > 10, `batches as files are read (${batches.length})`);
});

test("abort: from onPrompts the reading stops and the call rejects with the reason; aborted before, at once", async () => {
	const controller = new AbortController();
	let calls = 0;
	const reading = listPrompts({
		cwd: store.alpha,
		scope: "all",
		signal: controller.signal,
		onPrompts: () => {
			calls++;
			controller.abort(new Error("closed"));
		},
	});
	await assert.rejects(reading, /closed/);
	assert.equal(calls, 1, "no batch after the abort");
	const aborted = new AbortController();
	aborted.abort();
	await assert.rejects(listPrompts({ cwd: store.alpha, signal: aborted.signal }), { name: "AbortError" });
});

test("options: a bad scope, callback or folder type is a TypeError naming it; no folder is no prompt", async () => {
	await assert.rejects(listPrompts({ scope: "everywhere" }), { name: "TypeError", message: /scope/ });
	await assert.rejects(listPrompts({ onPrompts: "yes" }), { name: "TypeError", message: /onPrompts/ });
	await assert.rejects(listPrompts({ sessionDir: 3 }), { name: "TypeError", message: /sessionDir/ });
	await assert.rejects(listPrompts(null), { name: "TypeError" });
	const { result, batches, progress } = await listed({ cwd: path.join(root, "nowhere") });
	assert.deepEqual(result, []);
	assert.deepEqual(batches, []);
	assert.deepEqual(progress, [[0, 0]]);
	assert.ok(!fs.existsSync(projectDir(path.join(root, "nowhere"))), "listing creates no folder");
});
