// Entries that cost what is read (lib/lazy.js, src/format/lazy.rs): the heavy values of
// an entry (message content and details, custom message content and details, summaries,
// custom data, a compaction's system message) longer than 512 bytes of JSON are parsed from the file only when first
// read. Everything but a property descriptor must look as the reference's plain objects:
// JSON.stringify, structuredClone, spread, keys, deep equality, mutations, delete, frozen
// and sealed objects; a file changed under a lazy value throws as a changed line does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import util from "node:util";
import { ours } from "./helpers/ours.mjs";
import { reference, REPO_ROOT } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const ISO = (i) => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
const big = (tag, n = 2000) => `${tag} ${"x".repeat(n)} é ${tag}`;

/** A session with big and small values in every place one may be cut. */
function sessionLines() {
	const lines = [{ type: "session", version: 3, id: "0193a0b1-0000-7000-8000-00000000beef", timestamp: ISO(0), cwd: "/lazy/project" }];
	let parentId = null;
	let i = 0;
	const push = (entry) => {
		const id = `a${String(++i).padStart(7, "0")}`;
		lines.push({ type: entry.type, id, parentId, timestamp: ISO(i), ...entry });
		parentId = id;
		return id;
	};
	push({ type: "message", message: { role: "user", content: big("question"), timestamp: 1 } });
	push({ type: "message", message: { role: "user", content: "small question", timestamp: 2 } });
	const assistant = push({
		type: "message",
		message: {
			role: "assistant",
			content: [{ type: "text", text: big("answer") }, { type: "toolCall", id: "t1", name: "read", arguments: { path: "/a" } }],
			provider: "p",
			model: "m",
			usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "toolUse",
			timestamp: 3,
		},
	});
	push({
		type: "message",
		message: { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: big("output") }], details: { diff: big("diff") }, isError: false, timestamp: 4 },
	});
	push({ type: "custom_message", customType: "ext", content: big("custom content"), display: true, details: { note: big("custom details") } });
	push({ type: "custom", customType: "state", data: { items: [big("data")] } });
	push({ type: "custom", customType: "small", data: { n: 1 } });
	push({ type: "compaction", summary: big("summary"), firstKeptEntryId: assistant, tokensBefore: 1234, details: { readFiles: [big("file")] }, systemMessage: { role: "system", content: big("system prompt"), timestamp: 7 } });
	push({ type: "message", message: { role: "user", content: [{ type: "text", text: big("after compaction") }], timestamp: 5 } });
	push({ type: "branch_summary", fromId: assistant, summary: big("branch summary") });
	push({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "short" }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 6 } });
	return lines.map((l) => JSON.stringify(l));
}

function withFiles(fn) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-lazy-"));
	try {
		const content = sessionLines().join("\n") + "\n";
		const files = { ours: path.join(dir, "ours.jsonl"), reference: path.join(dir, "reference.jsonl") };
		fs.writeFileSync(files.ours, content);
		fs.writeFileSync(files.reference, content);
		return fn(files, dir);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** Opens both sides anew (nothing read yet on ours). */
function openBoth(files) {
	return { mine: ours.SessionManager.open(files.ours), theirs: reference.SessionManager.open(files.reference) };
}

const isLazy = (holder, key) => typeof Object.getOwnPropertyDescriptor(holder, key)?.get === "function";

/** The lazy keys of an entry, as paths. */
function lazyPaths(entry) {
	const out = [];
	for (const key of Object.keys(entry)) if (isLazy(entry, key)) out.push(key);
	const message = Object.getOwnPropertyDescriptor(entry, "message")?.value;
	if (message && typeof message === "object") for (const key of Object.keys(message)) if (isLazy(message, key)) out.push(`message.${key}`);
	return out;
}

test("big values are lazy, small ones are not", () =>
	withFiles((files) => {
		const { mine } = openBoth(files);
		const lazy = mine.getEntries().map(lazyPaths);
		assert.deepEqual(lazy, [
			["message.content"],
			[],
			["message.content"],
			["message.content", "message.details"],
			["content", "details"],
			["data"],
			[],
			["summary", "details", "systemMessage"],
			["message.content"],
			["summary"],
			[],
		]);
	}));

test("before any read: stringify, structuredClone, spread, keys, entries and deep equality are the reference's", () =>
	withFiles((files) => {
		const views = {
			stringify: (e) => JSON.stringify(e),
			structuredClone: (e) => structuredClone(e),
			spread: (e) => ({ ...e, message: e.message && { ...e.message } }),
			keys: (e) => [Object.keys(e), e.message ? Object.keys(e.message) : null],
			entries: (e) => Object.entries(e),
			itself: (e) => e,
			assign: (e) => Object.assign({}, e),
		};
		for (const [name, view] of Object.entries(views)) {
			const { mine, theirs } = openBoth(files);
			const a = mine.getEntries();
			const b = theirs.getEntries();
			assert.ok(a.some((e) => lazyPaths(e).length > 0), "some entries are lazy before the view");
			assert.deepStrictEqual(a.map(view), b.map(view), name);
			assert.equal(JSON.stringify(a), JSON.stringify(b), `${name}: then stringify`);
		}
		for (const read of ["getBranch", "buildContextEntries", "buildSessionContext", "getTree"]) {
			const { mine, theirs } = openBoth(files);
			assert.deepStrictEqual(mine[read](), theirs[read](), read);
		}
		const { mine, theirs } = openBoth(files);
		for (const e of theirs.getEntries()) assert.deepStrictEqual(mine.getEntry(e.id), e, e.id);
	}));

test("reading one field makes only that one; later reads return the same value", () =>
	withFiles((files) => {
		const { mine, theirs } = openBoth(files);
		const tool = mine.getEntries()[3];
		const theirTool = theirs.getEntries()[3];
		assert.deepEqual(lazyPaths(tool), ["message.content", "message.details"]);
		const content = tool.message.content;
		assert.deepStrictEqual(content, theirTool.message.content);
		assert.deepEqual(lazyPaths(tool), ["message.details"]);
		assert.equal(tool.message.content, content, "the same array on every read");
		assert.deepStrictEqual(Object.getOwnPropertyDescriptor(tool.message, "content"), {
			value: content,
			writable: true,
			enumerable: true,
			configurable: true,
		});
		assert.equal(mine.getEntries()[3], tool, "the same entry object");
		assert.deepStrictEqual(tool, theirTool);
		assert.deepEqual(lazyPaths(tool), [], "deep equality read the rest");
	}));

test("where a lazy value comes from is invisible: own keys, symbols, inspect; a copied accessor says it was copied", () =>
	withFiles((files) => {
		const { mine, theirs } = openBoth(files);
		const tool = mine.getEntries()[3];
		const theirTool = theirs.getEntries()[3];
		assert.deepEqual(Reflect.ownKeys(tool), Reflect.ownKeys(theirTool));
		assert.deepEqual(Reflect.ownKeys(tool.message), Reflect.ownKeys(theirTool.message));
		assert.deepEqual(Object.getOwnPropertySymbols(tool.message), []);
		const shown = util.inspect(tool, { depth: 0, showHidden: true });
		assert.ok(!/origin|#/i.test(shown), shown);
		// Another object with the accessor's descriptor, the value not read yet.
		const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(tool.message));
		assert.throws(() => copy.content, { name: "TypeError", message: "The value of 'content' was not read before its accessor was copied from a session entry" });
		// An object inheriting from the entry's message reads the value, and the message keeps it.
		const child = Object.create(tool.message);
		assert.deepStrictEqual(child.details, theirTool.message.details);
		assert.deepEqual(lazyPaths(tool), ["message.content"]);
		assert.deepStrictEqual(tool, theirTool);
	}));

test("a mutation through a lazy value persists, and buildSessionContext sees it as the reference's does", () =>
	withFiles((files) => {
		const { mine, theirs } = openBoth(files);
		for (const sm of [mine, theirs]) {
			const entries = sm.getEntries();
			entries[8].message.content.push({ type: "text", text: "appended by the caller" });
			entries[7].summary += " edited";
			entries[4].content = "replaced before it was read";
		}
		assert.deepStrictEqual(mine.buildSessionContext(), theirs.buildSessionContext());
		assert.deepStrictEqual(mine.getEntries(), theirs.getEntries());
		assert.ok(JSON.stringify(mine.buildSessionContext()).includes("appended by the caller"));
	}));

test("assigning and deleting a lazy value before reading it", () =>
	withFiles((files) => {
		const { mine, theirs } = openBoth(files);
		const [a, b] = [mine.getEntries(), theirs.getEntries()];
		for (const entries of [a, b]) {
			entries[0].message.content = "new text";
			delete entries[3].message.details;
			delete entries[5].data;
			entries[5].data = 7;
		}
		assert.equal(a[0].message.content, "new text");
		assert.equal("details" in a[3].message, false);
		assert.deepEqual(Object.keys(a[5]), Object.keys(b[5]), "a deleted key comes back at the end");
		assert.equal(JSON.stringify(a), JSON.stringify(b));
		assert.deepStrictEqual(a, b);
		// An object inheriting from an entry reads its values and writes its own.
		const child = Object.create(mine.getEntries()[7]);
		assert.equal(child.details.readFiles.length, 1);
		child.summary = "own";
		assert.equal(Object.hasOwn(child, "summary"), true);
		assert.deepStrictEqual(mine.getEntries()[7].summary, b[7].summary);
	}));

test("frozen and sealed entries read their values; a frozen one refuses writes as the reference's does", () =>
	withFiles((files) => {
		const { mine, theirs } = openBoth(files);
		const [a, b] = [mine.getEntries(), theirs.getEntries()];
		for (const entries of [a, b]) {
			Object.freeze(entries[7]);
			Object.freeze(entries[3].message);
			Object.seal(entries[4]);
		}
		assert.deepStrictEqual(a[7], b[7]);
		assert.equal(a[7].details, a[7].details, "the same value on every read");
		assert.deepStrictEqual(structuredClone(a[3]), structuredClone(b[3]));
		for (const entries of [a, b]) {
			assert.throws(() => {
				entries[7].summary = "x";
			}, TypeError);
			assert.throws(() => {
				entries[3].message.content = "x";
			}, TypeError);
			entries[4].details = { sealed: "but writable" };
			assert.throws(() => delete entries[4].content, TypeError);
		}
		assert.deepStrictEqual(a, b);
		assert.deepStrictEqual(a[4].details, { sealed: "but writable" });
	}));

test("the file changed by another process before a lazy read: the error a changed line gives", () =>
	withFiles((files) => {
		const mine = ours.SessionManager.open(files.ours);
		const entries = mine.getEntries();
		// Rewritten in place, same length, only inside one big text.
		const other = `const fs = require('fs'); const t = fs.readFileSync(process.argv[1], 'utf8'); fs.writeFileSync(process.argv[1], t.replace('x é answer', 'y é answer'));`;
		const result = spawnSync(process.execPath, ["-e", other, files.ours], { encoding: "utf8" });
		assert.equal(result.status, 0, result.stderr);
		assert.throws(
			() => entries[2].message.content,
			(error) => error instanceof Error && /changed on disk after it was opened/.test(error.message) && error.message.includes(files.ours),
		);
		// A line not built yet throws the same error.
		const fresh = ours.SessionManager.open(files.reference);
		fs.writeFileSync(files.reference, fs.readFileSync(files.reference, "utf8").replace("x é answer", "y é answer"));
		assert.throws(() => fresh.getEntries(), /changed on disk after it was opened/);
		// Values of lines that did not change are still read.
		assert.equal(entries[0].message.content.slice(0, 8), "question");
	}));

test("close(): values read before stay; a value not read throws the closed error", () =>
	withFiles((files) => {
		const mine = ours.SessionManager.open(files.ours);
		const entries = mine.getEntries();
		const read = entries[0].message.content;
		mine.close();
		assert.equal(entries[0].message.content, read);
		assert.throws(() => entries[2].message.content, { message: `SessionManager is closed: ${files.ours}` });
	}));

test("after newSession(), setSessionFile() and createBranchedSession() old entries still read their values", () =>
	withFiles((files, dir) => {
		const { mine, theirs } = openBoth(files);
		const [a, b] = [mine.getEntries(), theirs.getEntries()];
		mine.newSession();
		theirs.newSession();
		mine.appendMessage({ role: "user", content: "new session", timestamp: 9 });
		assert.deepStrictEqual(a, b);

		const again = openBoth(files);
		const [c, d] = [again.mine.getEntries(), again.theirs.getEntries()];
		again.mine.setSessionFile(path.join(dir, "elsewhere.jsonl"));
		assert.deepStrictEqual(c, d);

		const branched = openBoth(files);
		const [e, f] = [branched.mine.getEntries(), branched.theirs.getEntries()];
		const leaf = e[8].id;
		branched.mine.createBranchedSession(leaf);
		branched.theirs.createBranchedSession(leaf);
		assert.deepStrictEqual(e, f);
		assert.deepStrictEqual(branched.mine.getEntries(), branched.theirs.getEntries());
		assert.deepStrictEqual(branched.mine.buildSessionContext(), branched.theirs.buildSessionContext());
	}));

test("appended entries are the caller's own objects, never lazy", () =>
	withFiles((files) => {
		const mine = ours.SessionManager.open(files.ours);
		const message = { role: "user", content: big("appended"), timestamp: 10 };
		const id = mine.appendMessage(message);
		assert.equal(mine.getEntry(id).message, message);
		assert.deepEqual(lazyPaths(mine.getEntry(id)), []);
		const reopened = ours.SessionManager.open(files.ours);
		assert.deepEqual(lazyPaths(reopened.getEntry(id)), ["message.content"]);
		assert.deepStrictEqual(reopened.getEntry(id).message, message);
	}));

test("a migrated v1 file's entries are lazy too and equal the reference's", () =>
	withFiles((files, dir) => {
		const v1 = [
			{ type: "session", id: "v1-lazy", timestamp: ISO(0), cwd: "/lazy" },
			{ type: "message", timestamp: ISO(1), message: { role: "user", content: big("v1 question"), timestamp: 1 } },
			{ type: "compaction", timestamp: ISO(2), summary: big("v1 summary"), firstKeptEntryIndex: 1, tokensBefore: 5 },
		]
			.map((l) => JSON.stringify(l))
			.join("\n");
		const [x, y] = [path.join(dir, "v1-ours.jsonl"), path.join(dir, "v1-ref.jsonl")];
		fs.writeFileSync(x, v1 + "\n");
		fs.writeFileSync(y, v1 + "\n");
		const mine = ours.SessionManager.open(x);
		const theirs = reference.SessionManager.open(y);
		const a = mine.getEntries();
		assert.deepEqual(a.map(lazyPaths), [["message.content"], ["summary"]]);
		// v1 entries get random ids: compare with ids named by place.
		const named = (entries) => {
			const ids = new Map(entries.map((e, i) => [e.id, `#${i}`]));
			return JSON.stringify(entries).replace(/"[0-9a-f]{8}"/g, (m) => (ids.has(m.slice(1, -1)) ? `"${ids.get(m.slice(1, -1))}"` : m));
		};
		assert.equal(named(a), named(theirs.getEntries()));
		assert.equal(a[1].summary, theirs.getEntries()[1].summary);
	}));

test("walking the branch's types of a 50 MB session hands JavaScript a small fraction of its bytes", (t) => {
	if (process.env.PI_NATIVE_IMPL) return t.skip("counts this package's own reads");
	const { handed } = require(path.join(REPO_ROOT, "lib", "lazy.js"));
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-lazy-big-"));
	try {
		const file = path.join(dir, "big.jsonl");
		const fd = fs.openSync(file, "w");
		fs.writeSync(fd, JSON.stringify({ type: "session", version: 3, id: "0193a0b1-0000-7000-8000-0000000b1600", timestamp: ISO(0), cwd: "/big" }) + "\n");
		let parentId = null;
		const text = "y".repeat(100_000);
		for (let i = 0; i < 500; i++) {
			const id = `b${String(i).padStart(7, "0")}`;
			const message =
				i % 2 === 0
					? { role: "user", content: [{ type: "text", text }], timestamp: i }
					: { role: "toolResult", toolCallId: "t", toolName: "bash", content: [{ type: "text", text }], details: { out: "z".repeat(1000) }, isError: false, timestamp: i };
			fs.writeSync(fd, JSON.stringify({ type: "message", id, parentId, timestamp: ISO(i + 1), message }) + "\n");
			parentId = id;
		}
		fs.closeSync(fd);
		const size = fs.statSync(file).size;
		assert.ok(size > 50e6, `the file has ${size} bytes`);
		const before = handed.chars;
		const sm = ours.SessionManager.open(file);
		const branch = sm.getBranch();
		const roles = branch.map((e) => `${e.type}/${e.message.role}`);
		assert.equal(roles.length, 500);
		assert.equal(roles[1], "message/toolResult");
		const walked = handed.chars - before;
		assert.ok(walked < size / 100, `${walked} characters handed to JavaScript for a ${size}-byte file`);
		// Reading one content hands over that content only.
		const one = handed.chars;
		assert.equal(branch[7].message.content[0].text.length, 100_000);
		assert.ok(handed.chars - one < 100_100, `${handed.chars - one} characters for one content`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("lazy values with invalid UTF-8, lone surrogates, Latin-1 and other scripts read as the reference reads them", () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-lazy-bytes-"));
	try {
		const header = JSON.stringify({ type: "session", version: 3, id: "0193a0b1-0000-7000-8000-0000000b7e55", timestamp: ISO(0), cwd: "/bytes" });
		const texts = [`${"a".repeat(600)} é ü`, `${"日本語".repeat(300)} ok`, `${"b".repeat(600)} \\ud800 lone`, `${"c".repeat(600)} 😀 \\"q\\"`];
		const parts = [Buffer.from(header + "\n")];
		let parentId = null;
		texts.forEach((text, i) => {
			const id = `e000000${i}`;
			const line = `{"type":"message","id":"${id}","parentId":${JSON.stringify(parentId)},"timestamp":"${ISO(i + 1)}","message":{"role":"user","content":"${text}","timestamp":${i}}}`;
			parts.push(Buffer.from(line + "\n"));
			parentId = id;
		});
		// Invalid UTF-8 inside a big content: the reference decodes it lossily.
		const bad = Buffer.concat([
			Buffer.from(`{"type":"message","id":"e0000009","parentId":"e0000003","timestamp":"${ISO(9)}","message":{"role":"user","content":"${"d".repeat(600)} `),
			Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
			Buffer.from(` end","timestamp":9}}\n`),
		]);
		parts.push(bad);
		const content = Buffer.concat(parts);
		const [x, y] = [path.join(dir, "ours.jsonl"), path.join(dir, "ref.jsonl")];
		fs.writeFileSync(x, content);
		fs.writeFileSync(y, content);
		const a = ours.SessionManager.open(x).getEntries();
		const b = reference.SessionManager.open(y).getEntries();
		assert.deepEqual(a.map(lazyPaths), a.map(() => ["message.content"]));
		assert.equal(JSON.stringify(a), JSON.stringify(b));
		assert.deepStrictEqual(a, b);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
