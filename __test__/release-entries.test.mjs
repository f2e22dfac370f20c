// A manager that lets go (configureEntries({ release: true }), pi's default through
// useNativeSessions): the heavy values of its entries (message content and details,
// summaries, custom data, a compaction's system message) stay the same objects while
// anything outside holds them, or an object inside them, and come back from the file,
// equal to their line, once nothing does. Entries and messages themselves are kept.
// Every test proves that what it says was let go really was (a WeakRef to it is empty
// after a full collection), so that none passes because nothing was collected.
//
// Needs --expose-gc (node __test__/run.mjs passes it); without it the file skips.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ours, oursModule } from "./helpers/ours.mjs";
import { reference, REPO_ROOT } from "./helpers/reference.mjs";
import { collectGarbage, GC_AVAILABLE } from "./helpers/collect.mjs";

const skip = GC_AVAILABLE ? false : "needs node --expose-gc";
const ISO = (i) => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
const big = (tag, n = 4000) => `${tag} ${"x".repeat(n)} é ${tag}`;
const { SessionManager } = ours;
const { configureEntries } = oursModule;

/** Runs fn with managers made by this package letting go (the switch as a library user sets it). */
async function letting(fn) {
	const before = configureEntries({}).release;
	configureEntries({ release: true });
	try {
		return await fn();
	} finally {
		configureEntries({ release: before });
	}
}

/** Runs fn(dir) in a temp folder, with managers letting go; removes the folder after. */
async function inDir(fn) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-release-"));
	try {
		return await letting(() => fn(dir));
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** A session file with heavy values in every place one may be; returns its path and its lines parsed. */
function writeSession(dir) {
	const lines = [{ type: "session", version: 3, id: "0193a0b1-0000-7000-8000-00000000cafe", timestamp: ISO(0), cwd: "/release/project" }];
	let parentId = null;
	let i = 0;
	const push = (entry) => {
		const id = `r${String(++i).padStart(7, "0")}`;
		lines.push({ type: entry.type, id, parentId, timestamp: ISO(i), ...entry });
		parentId = id;
		return id;
	};
	push({ type: "message", message: { role: "user", content: [{ type: "text", text: big("question") }], timestamp: 1 } });
	const assistant = push({
		type: "message",
		message: { role: "assistant", content: [{ type: "text", text: big("answer") }], provider: "p", model: "m", usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 },
	});
	push({ type: "message", message: { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: big("output") }], details: { diff: big("diff") }, isError: false, timestamp: 3 } });
	push({ type: "custom_message", customType: "ext", content: big("custom content"), display: true, details: { note: big("custom details") } });
	push({ type: "custom", customType: "state", data: { items: [big("data")] } });
	push({ type: "compaction", summary: big("summary"), firstKeptEntryId: assistant, tokensBefore: 1234, details: { readFiles: [big("file")] } });
	push({ type: "message", message: { role: "user", content: "a small one", timestamp: 4 } });
	const file = path.join(dir, "session.jsonl");
	fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
	return { file, lines };
}

const byId = (lines, id) => lines.find((l) => l.id === id);

test("a value nothing holds is let go and comes back equal to its line; one held stays the same object with its changes", { skip }, () =>
	inDir(async (dir) => {
		const { file, lines } = writeSession(dir);
		const sm = SessionManager.open(file);
		const [user, , tool] = sm.getEntries();
		// Read, changed, then dropped: gone after a collection, back as the file says.
		let content = user.message.content;
		content.push({ type: "text", text: "changed in memory" });
		const dropped = new WeakRef(content);
		content = undefined;
		// Read and held: the same object, with its change, however often collected.
		const held = tool.message.content;
		held.push({ type: "text", text: "kept while held" });
		await collectGarbage();
		await collectGarbage();
		assert.equal(dropped.deref(), undefined, "the value nothing held was collected");
		assert.deepStrictEqual(user.message.content, byId(lines, user.id).message.content, "made again from its line");
		assert.equal(tool.message.content, held, "the held value is the same object");
		assert.equal(held.at(-1).text, "kept while held");
		// Entries and messages are kept: the same objects on every read.
		assert.equal(sm.getEntries()[0], user);
		assert.equal(sm.getEntry(user.id).message, user.message);
		sm.close();
	}));

test("holding an object inside a value keeps the whole value", { skip }, () =>
	inDir(async (dir) => {
		const { file } = writeSession(dir);
		const sm = SessionManager.open(file);
		const custom = sm.getEntries().find((e) => e.type === "custom");
		const inner = custom.data.items;
		const whole = new WeakRef(custom.data);
		await collectGarbage();
		assert.ok(whole.deref() !== undefined, "data stays while an array inside it is held");
		assert.equal(custom.data.items, inner);
		sm.close();
	}));

test("appended entries: the caller's message while it is held, then the message made from the line", { skip }, () =>
	inDir(async (dir) => {
		const sm = SessionManager.create("/release/project", dir);
		sm.appendMessage({ role: "user", content: "start", timestamp: 1 });
		sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 2 });
		let message = { role: "toolResult", toolCallId: "t", toolName: "bash", content: [{ type: "text", text: big("tool output") }], details: { exit: 0 }, isError: false, timestamp: 3 };
		const id = sm.appendMessage(message);
		const keptText = { role: "user", content: [{ type: "text", text: big("held part") }], timestamp: 4 };
		const part = keptText.content;
		const partId = sm.appendMessage(keptText);
		assert.equal(sm.getEntry(id).message, message, "the caller's own object while it holds it");
		const gone = new WeakRef(message);
		const heldOnlyThroughPart = new WeakRef(keptText);
		message = undefined;
		await collectGarbage();
		await collectGarbage();
		assert.equal(gone.deref(), undefined, "the caller's message was collected once nothing held it");
		const line = fs.readFileSync(sm.getSessionFile(), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.id === id);
		const again = sm.getEntry(id).message;
		assert.deepStrictEqual(again, line.message, "made from the line");
		assert.equal(sm.getEntry(id).message, again, "and then kept: the same message on every read");
		assert.equal(sm.getEntry(id).message.role, "toolResult");
		// A caller holding only the content of its message keeps the whole message.
		assert.ok(heldOnlyThroughPart.deref() !== undefined);
		assert.equal(sm.getEntry(partId).message.content, part);
		// What the file holds is what the reference writes: the same line as JSON.stringify of the entry.
		assert.equal(JSON.stringify(sm.getEntry(id)), JSON.stringify(line));
	}));

test("a long run of appends holds the skeletons, not what was written", { skip }, () =>
	inDir(async (dir) => {
		const measure = async (release) => {
			configureEntries({ release });
			const sm = SessionManager.create("/release/project", dir);
			sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 2 });
			await collectGarbage();
			const before = process.memoryUsage().heapUsed;
			const payload = "y".repeat(100_000);
			for (let i = 0; i < 400; i++) {
				// A new string each time, as a tool's output is.
				sm.appendMessage({ role: "toolResult", toolCallId: `t${i}`, toolName: "bash", content: [{ type: "text", text: `${i} ${payload}` }], isError: false, timestamp: 3 + i });
			}
			// pi's footer after every reply: every entry's type, every message's role and usage.
			for (const e of sm.getEntries()) if (e.type === "message") void e.message.role;
			await collectGarbage();
			await collectGarbage();
			const grown = process.memoryUsage().heapUsed - before;
			sm.close();
			return grown;
		};
		// PI_SESSION_NATIVE_RELEASE=1 (the release pass) makes every manager let go.
		const forced = process.env.PI_SESSION_NATIVE_RELEASE === "1";
		const kept = forced ? undefined : await measure(false);
		const letGo = await measure(true);
		console.log(`# heap grown by 400 appends of 100 KB: kept ${kept} bytes, let go ${letGo} bytes`);
		const written = 400 * 100_000;
		if (!forced) assert.ok(kept > written * 0.9, `keeping every value holds what was written (${kept} bytes for ${written})`);
		assert.ok(letGo < written * 0.05, `letting go holds a small part of it (${letGo} bytes for ${written})`);
	}));

test("createBranchedSession: old and new entries read the right values, held ones shared as a spread shares them", { skip }, () =>
	inDir(async (dir) => {
		const { file, lines } = writeSession(dir);
		const copy = path.join(dir, "reference.jsonl");
		fs.copyFileSync(file, copy);
		const sm = SessionManager.open(file);
		const ref = reference.SessionManager.open(copy);
		const entries = sm.getEntries();
		const tool = entries[2];
		const heldDetails = tool.message.details;
		const leaf = entries[4].id; // the custom entry: the branch keeps the first five
		sm.appendMessage({ role: "user", content: [{ type: "text", text: big("appended after") }], timestamp: 9 });
		ref.appendMessage({ role: "user", content: [{ type: "text", text: big("appended after") }], timestamp: 9 });
		const off = sm.getEntries().at(-1);
		sm.createBranchedSession(leaf);
		ref.createBranchedSession(leaf);
		await collectGarbage();
		assert.deepStrictEqual(sm.getEntries(), ref.getEntries());
		assert.deepStrictEqual(sm.buildSessionContext(), ref.buildSessionContext());
		const newTool = sm.getEntries()[2];
		assert.notEqual(newTool, tool, "a new entry, as the reference's spread makes");
		assert.equal(newTool.message, tool.message, "sharing the message, as a spread does");
		assert.equal(newTool.message.details, heldDetails);
		// Entries of the old session still read their own lines' values.
		for (const e of entries) if (e.type !== "message" || typeof e.message.content !== "string") assert.deepStrictEqual(JSON.parse(JSON.stringify(e)), byId(lines, e.id));
		assert.equal(off.message.content[0].text, big("appended after"));
		// After another collection, the new session's values come back from its own file.
		await collectGarbage();
		assert.deepStrictEqual(JSON.parse(JSON.stringify(sm.getEntries())), JSON.parse(JSON.stringify(ref.getEntries())));
		sm.close();
	}));

test("close(): a held value stays; a value let go throws the closed error", { skip }, () =>
	inDir(async (dir) => {
		const { file } = writeSession(dir);
		const sm = SessionManager.open(file);
		const [user, , tool] = sm.getEntries();
		const held = tool.message.content;
		sm.close();
		await collectGarbage();
		assert.equal(tool.message.content, held);
		assert.throws(() => user.message.content, { message: `SessionManager is closed: ${file}` });
	}));

test("the file truncated or rewritten under an open session: a value let go throws the clear error, a held one stays, nothing is written", { skip }, () =>
	inDir(async (dir) => {
		const { file } = writeSession(dir);
		const sm = SessionManager.open(file);
		const [user, , tool] = sm.getEntries();
		const held = tool.message.content;
		void user.message.content;
		const original = fs.readFileSync(file);
		// Rewritten in place by another program: same size, other bytes.
		fs.writeFileSync(file, Buffer.from(original.toString("latin1").replaceAll("question", "QUESTION"), "latin1"));
		await collectGarbage();
		assert.throws(() => user.message.content, /changed|no longer/i);
		assert.equal(tool.message.content, held);
		fs.truncateSync(file, 100);
		await collectGarbage();
		assert.throws(() => user.message.content, /changed|no longer/i);
		assert.equal(fs.statSync(file).size, 100, "nothing written to the file");
		sm.close();
	}));

test("the switches: configureEntries and useNativeSessions' option, overridden by PI_SESSION_NATIVE_RELEASE", () => {
	assert.throws(() => configureEntries(null), /must be an object/);
	assert.throws(() => configureEntries({ release: "yes" }), /options.release must be a boolean/);
	assert.equal(typeof configureEntries({}).release, "boolean");
	// In a process of its own (the variable is read as the package loads): whether a written
	// entry with a heavy message answers it through an accessor (it lets go) or not.
	const probe = `
		const { configureEntries, useNativeSessions, SessionManager: Ours } = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
		const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-switch-"));
		class Pi { static create() {} static open() {} static continueRecent() {} static inMemory() {} static forkFrom() {} static findById() {} static list() {} static listAll() {} }
		const letsGo = (sm) => {
			sm.appendMessage({ role: "user", content: "x", timestamp: 1 });
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "y" }], usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 2 });
			const id = sm.appendMessage({ role: "user", content: [{ type: "text", text: "z".repeat(4000) }], timestamp: 3 });
			return typeof Object.getOwnPropertyDescriptor(sm.getEntry(id), "message").get === "function";
		};
		const mode = process.argv[1];
		if (mode === "library-on") configureEntries({ release: true });
		if (mode.startsWith("pi")) useNativeSessions(Pi, mode === "pi-keep" ? { releaseEntries: false } : undefined);
		const make = mode.startsWith("pi") ? Pi : Ours;
		process.stdout.write(String(letsGo(make.create(dir, dir))));
		fs.rmSync(dir, { recursive: true, force: true });
	`;
	const run = (mode, env) => {
		const child = spawnSync(process.execPath, ["-e", probe, mode], { encoding: "utf8", env: { ...process.env, PI_SESSION_NATIVE_RELEASE: env } });
		assert.equal(child.status, 0, child.stderr);
		return child.stdout === "true";
	};
	assert.equal(run("library", ""), false, "the library keeps every value by default");
	assert.equal(run("library-on", ""), true, "configureEntries({ release: true })");
	assert.equal(run("pi", ""), true, "pi's managers let go by default");
	assert.equal(run("pi-keep", ""), false, "useNativeSessions(…, { releaseEntries: false })");
	assert.equal(run("pi", "0"), false, "PI_SESSION_NATIVE_RELEASE=0 keeps every value, pi's too");
	assert.equal(run("library", "1"), true, "PI_SESSION_NATIVE_RELEASE=1 lets go everywhere");
	assert.equal(run("pi-keep", "1"), true, "over useNativeSessions' option");
});

// Handing memory back (lib/memory.js): every THRESHOLD bytes that managers letting go have
// let go of, V8 is told of memory pressure once, from a timer after the current turn.
const memory = createRequire(import.meta.url)(path.join(REPO_ROOT, "lib", "memory.js"));
const nextTimer = () => new Promise((resolve) => setTimeout(resolve, 1));

/** Appends 100 KB tool results to a new manager until `bytes` more have been let go (or that much written). */
function appendHeavy(dir, bytes) {
	const sm = SessionManager.create("/release/project", dir);
	sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
	sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 2 });
	const start = memory.requests.letGo;
	for (let i = 0, written = 0; memory.requests.letGo - start < bytes && written < bytes; i++) {
		const text = `${i} ${"z".repeat(100_000)}`;
		sm.appendMessage({ role: "toolResult", toolCallId: `t${i}`, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: 3 + i });
		written += text.length;
	}
	sm.close();
}

test("managers letting go ask V8 for memory back once they have let go of enough; keeping managers and the switch off never ask", async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-return-"));
	const before = configureEntries({});
	const env = process.env.PI_SESSION_NATIVE_RETURN_MEMORY;
	const asks = env === "0" ? false : env === "1" ? true : undefined;
	try {
		assert.throws(() => configureEntries({ returnMemory: "no" }), /options.returnMemory must be a boolean/);
		assert.equal(before.returnMemory, true, "on by default");
		const requested = async (options) => {
			configureEntries(options);
			await nextTimer(); // a request scheduled before runs now
			const { count, answered } = memory.requests;
			appendHeavy(dir, memory.THRESHOLD);
			assert.equal(memory.requests.count, count, "not during the turn that let go");
			await nextTimer();
			assert.equal(memory.requests.answered - answered, memory.requests.count - count, "Node's V8 answers every request");
			return memory.requests.count - count;
		};
		assert.equal(await requested({ release: true, returnMemory: true }), asks === false ? 0 : 1, "one request for THRESHOLD bytes let go");
		assert.equal(await requested({ release: true, returnMemory: false }), asks === true ? 1 : 0, "configureEntries({ returnMemory: false })");
		// PI_SESSION_NATIVE_RELEASE=1 (the release pass) makes every manager let go.
		if (process.env.PI_SESSION_NATIVE_RELEASE !== "1") {
			const letGo = memory.requests.letGo;
			assert.equal(await requested({ release: false, returnMemory: true }), 0, "a manager keeping every value never asks");
			assert.equal(memory.requests.letGo, letGo, "nor counts what it wrote");
		}
	} finally {
		configureEntries(before);
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("an idle process asks once IDLE_THRESHOLD bytes wait, when nothing was let go for IDLE_MS", { skip: process.env.PI_SESSION_NATIVE_RETURN_MEMORY === "0" && "PI_SESSION_NATIVE_RETURN_MEMORY=0" }, async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-idle-"));
	const before = configureEntries({ release: true, returnMemory: true });
	const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
	try {
		await sleep(memory.IDLE_MS + 100); // whatever an earlier test left waits no more
		const { count } = memory.requests;
		appendHeavy(dir, memory.IDLE_THRESHOLD);
		await nextTimer();
		assert.equal(memory.requests.count, count, "below THRESHOLD: not at once");
		// Busy: a little more let go every half IDLE_MS puts the request off.
		for (let i = 0; i < 3; i++) {
			await sleep(memory.IDLE_MS / 2);
			appendHeavy(dir, 1);
		}
		assert.equal(memory.requests.count, count, "not while values are being let go");
		await sleep(memory.IDLE_MS + 200);
		assert.equal(memory.requests.count, count + 1, "once idle for IDLE_MS");
		await sleep(memory.IDLE_MS + 200);
		assert.equal(memory.requests.count, count + 1, "once: nothing waits any more");
	} finally {
		configureEntries(before);
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("a process appending many large values: its RSS drops back after the request, and stays up without it", () => {
	// In a process of its own: pi's pattern (the values of the turns since the last
	// compaction held by its agent, then dropped) with 100 KB values, one event loop turn per
	// append, until three requests' worth is let go; then half a second idle, and the RSS
	// (what it grew by since the start). V8 keeps the pages its collections emptied until a
	// memory-reducing collection: without the request they stay resident.
	const probe = `
		const { SessionManager, configureEntries } = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
		const memory = require(${JSON.stringify(path.join(REPO_ROOT, "lib", "memory.js"))});
		const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
		configureEntries({ release: true });
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-rss-"));
		const sm = SessionManager.create(dir, dir);
		sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
		sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 2 });
		(async () => {
			const start = process.memoryUsage.rss();
			let held = [];
			for (let i = 0; memory.requests.letGo < 3 * memory.THRESHOLD; i++) {
				if (held.length === 8) held = [];
				const message = { role: "toolResult", toolCallId: "t" + i, toolName: "bash", content: [{ type: "text", text: (i + " ").padEnd(100000, String.fromCharCode(97 + (i % 26))) }], isError: false, timestamp: 3 + i };
				held.push(message);
				sm.appendMessage(message);
				await new Promise((resolve) => setImmediate(resolve));
			}
			await new Promise((resolve) => setTimeout(resolve, 500));
			process.stdout.write(JSON.stringify({ grown: process.memoryUsage.rss() - start, requests: memory.requests.count }));
			sm.close();
			fs.rmSync(dir, { recursive: true, force: true });
		})();
	`;
	const run = (returnMemory) => {
		const child = spawnSync(process.execPath, ["-e", probe], { encoding: "utf8", env: { ...process.env, PI_SESSION_NATIVE_RETURN_MEMORY: returnMemory } });
		assert.equal(child.status, 0, child.stderr);
		return JSON.parse(child.stdout);
	};
	const MB = 2 ** 20;
	const asked = run("1");
	const unasked = run("0");
	console.log(`# RSS grown by ${(3 * memory.THRESHOLD) / MB} MB of appends let go: ${(asked.grown / MB).toFixed(0)} MB asking V8 for memory back (${asked.requests} requests), ${(unasked.grown / MB).toFixed(0)} MB without`);
	assert.equal(asked.requests, 3);
	assert.equal(unasked.requests, 0, "PI_SESSION_NATIVE_RETURN_MEMORY=0");
	// Measured: about 3 MB against 40 to 50 MB.
	assert.ok(asked.grown < unasked.grown - 16 * MB, `the RSS dropped back: grown ${asked.grown} bytes asking, ${unasked.grown} without`);
});
