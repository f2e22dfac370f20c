// The module-level helpers of the reference's dist/core/session-manager.js, which its
// package root does not re-export (tests and tools import them from the module):
// assertValidSessionId, projectContextEntry, getDefaultSessionDir, loadEntriesFromFile,
// findMostRecentSession. Code written against that module runs unchanged on ours: the
// same calls on both sides, in separate temp dirs, compare results, thrown messages
// and the files afterwards, over the bad files of helpers/bad-cases.mjs too.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { REFERENCE_FILE, REPO_ROOT } from "./helpers/reference.mjs";
import { BAD_CASES } from "./helpers/bad-cases.mjs";
import { toJsonl, v1Entries, v2Entries, v3Entries } from "./helpers/sessions.mjs";

const require = createRequire(import.meta.url);
const referenceModule = await import(pathToFileURL(REFERENCE_FILE).href);
const ours = process.env.PI_NATIVE_IMPL ? await import(pathToFileURL(path.resolve(process.env.PI_NATIVE_IMPL)).href) : require(REPO_ROOT);
const SIDES = [
	["reference", referenceModule],
	["ours", ours],
];

/** Runs `fn(module, dir)` on each side in a temp dir of its own; results with the dir replaced by <dir>. */
function both(fn) {
	return SIDES.map(([name, module]) => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pisn-helpers-${name}-`));
		const scrub = (v) => (typeof v === "string" ? v.split(dir).join("<dir>") : v);
		let outcome;
		try {
			outcome = { result: JSON.parse(JSON.stringify(fn(module, dir) ?? null, (_k, v) => scrub(v))) };
		} catch (error) {
			outcome = { error: `${error?.constructor?.name}: ${scrub(String(error?.message))}`, code: error?.code };
		}
		const files = {};
		const walk = (d) => {
			for (const e of fs.readdirSync(d, { withFileTypes: true })) {
				const p = path.join(d, e.name);
				if (e.isDirectory()) walk(p);
				else if (e.isSymbolicLink()) files[scrub(p)] = `-> ${scrub(fs.readlinkSync(p))}`;
				else files[scrub(p)] = fs.readFileSync(p).toString("base64");
			}
		};
		walk(dir);
		fs.rmSync(dir, { recursive: true, force: true });
		return { ...outcome, files };
	});
}

function same(title, fn) {
	const [theirs, mine] = both(fn);
	assert.deepEqual(mine, theirs, title);
	return theirs;
}

test("ours exports everything the reference's session-manager module exports", () => {
	const missing = Object.keys(referenceModule).filter((name) => !(name in ours));
	assert.deepEqual(missing, []);
	for (const name of Object.keys(referenceModule)) assert.equal(typeof ours[name], typeof referenceModule[name], name);
});

test("assertValidSessionId: the same ids pass and the same ones throw the same message", () => {
	const ids = ["a", "abc-DEF_1.2", "0", "a.b", "", "-a", "a-", ".a", "a b", "a/b", "é", "a\n", "a".repeat(500), 5, undefined, null, "a..b", "_"];
	for (const id of ids) same(`assertValidSessionId(${JSON.stringify(id)})`, (m) => m.assertValidSessionId(id));
});

test("projectContextEntry: entries of every kind, with and without edits", () => {
	const t = "2024-01-01T00:00:00.000Z";
	const entries = [
		{ type: "message", id: "a", parentId: null, timestamp: t, message: { role: "user", content: "hi", timestamp: 1 } },
		{ type: "message", id: "b", parentId: "a", timestamp: t, message: { role: "assistant", content: [{ type: "text", text: "yo" }], timestamp: 2 } },
		{ type: "message", id: "c", parentId: "b", timestamp: t, message: { role: "toolResult", content: null, toolCallId: "x", timestamp: 3 } },
		{ type: "message", id: "d", parentId: "c", timestamp: t, message: { role: "system", content: null, timestamp: 4 } },
		{ type: "custom_message", id: "e", parentId: "d", timestamp: t, customType: "note", content: "custom", display: true, details: { k: 1 } },
		{ type: "branch_summary", id: "f", parentId: "e", timestamp: t, fromId: "a", summary: "went elsewhere" },
		{ type: "branch_summary", id: "g", parentId: "f", timestamp: t, fromId: "a", summary: "" },
		{ type: "compaction", id: "h", parentId: "g", timestamp: t, summary: "short", firstKeptEntryId: "a", tokensBefore: 9 },
		{ type: "compaction", id: "i", parentId: "h", timestamp: t, summary: "s", firstKeptEntryId: "a", tokensBefore: 9, systemMessage: { role: "system", content: "sys", timestamp: 5 } },
		{ type: "custom", id: "j", parentId: "i", timestamp: t, customType: "state", data: {} },
		{ type: "label", id: "k", parentId: "j", timestamp: t, targetId: "a", label: "L" },
	];
	const edits = [
		undefined,
		{ type: "context_edit", id: "z", parentId: null, timestamp: t, targetId: "a", replacement: null },
		{ type: "context_edit", id: "z", parentId: null, timestamp: t, targetId: "a", replacement: { content: "replaced" } },
		{ type: "context_edit", id: "z", parentId: null, timestamp: t, targetId: "a", replacement: { content: [{ type: "text", text: "blocks" }] } },
	];
	for (const entry of entries) {
		for (const edit of edits) {
			same(`projectContextEntry(${entry.type} ${entry.id}, ${JSON.stringify(edit?.replacement)})`, (m) =>
				m.projectContextEntry(structuredClone(entry), edit && structuredClone(edit)),
			);
		}
	}
	same("projectContextEntry of a message without one throws alike", (m) => m.projectContextEntry({ type: "message", id: "x" }, undefined));
});

test("getDefaultSessionDir: the folder for a cwd, made on demand, under an agent dir or PI_CODING_AGENT_DIR", () => {
	for (const cwd of ["/home/u/project", "/", "/a/b:c\\d", "relative/dir"]) {
		same(`getDefaultSessionDir(${cwd}, <dir>/agent)`, (m, dir) => {
			const made = m.getDefaultSessionDir(cwd, path.join(dir, "agent"));
			return { made, exists: fs.statSync(made).isDirectory(), again: m.getDefaultSessionDir(cwd, path.join(dir, "agent")) === made };
		});
	}
	const saved = process.env.PI_CODING_AGENT_DIR;
	try {
		same("getDefaultSessionDir(cwd) with PI_CODING_AGENT_DIR", (m, dir) => {
			process.env.PI_CODING_AGENT_DIR = path.join(dir, "from-env");
			return m.getDefaultSessionDir("/home/user/x");
		});
		same("getDefaultSessionDir(cwd, undefined) with PI_CODING_AGENT_DIR", (m, dir) => {
			process.env.PI_CODING_AGENT_DIR = path.join(dir, "from-env");
			return m.getDefaultSessionDir("/home/user/x", undefined);
		});
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
});

const GOOD_FILES = [
	["v3 session", Buffer.from(toJsonl(v3Entries()))],
	["v2 session (not migrated by the loader)", Buffer.from(toJsonl(v2Entries()))],
	["v1 session (not migrated by the loader)", Buffer.from(toJsonl(v1Entries()))],
	["empty file", Buffer.alloc(0)],
	["a v1 entry that is a JSON array", Buffer.from('{"type":"session","id":"s","cwd":"/tmp"}\n{"type":"message","message":{"role":"user","content":"x"}}\n[1]')],
];

test("loadEntriesFromFile: entries, cut last lines ended, bad files, missing files and folders", () => {
	for (const [name, bytes] of [...GOOD_FILES, ...BAD_CASES]) {
		same(`loadEntriesFromFile(${name})`, (m, dir) => {
			const file = path.join(dir, "s.jsonl");
			fs.writeFileSync(file, bytes);
			return m.loadEntriesFromFile(file);
		});
	}
	same("loadEntriesFromFile(missing)", (m, dir) => m.loadEntriesFromFile(path.join(dir, "none.jsonl")));
	same("loadEntriesFromFile(a folder)", (m, dir) => m.loadEntriesFromFile(dir));
	same("loadEntriesFromFile(a dangling symlink)", (m, dir) => {
		fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "link.jsonl"));
		return m.loadEntriesFromFile(path.join(dir, "link.jsonl"));
	});
	same("loadEntriesFromFile(~/...) expands the home folder", (m) => m.loadEntriesFromFile("~/pisn-surely-not-there.jsonl"));
});

test("findMostRecentSession: newest by mtime, cwd filter, non-sessions skipped, missing folder", () => {
	const header = (id, cwd) => `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2024-01-01T00:00:00.000Z", cwd })}\n`;
	const setup = (dir) => {
		const files = [
			["a.jsonl", header("a", "/p"), 100],
			["b.jsonl", header("b", "/q"), 300],
			["c.jsonl", "not a session\n", 400],
			["d.txt", header("d", "/p"), 500],
			["e.jsonl", header("e", "/p/"), 200],
			["f.jsonl", "", 350],
		];
		for (const [name, text, mtime] of files) {
			fs.writeFileSync(path.join(dir, name), text);
			fs.utimesSync(path.join(dir, name), mtime, mtime);
		}
	};
	for (const cwd of [undefined, "/p", "/q", "/r", "", "/p/../q"]) {
		same(`findMostRecentSession(dir, ${cwd})`, (m, dir) => {
			setup(dir);
			return m.findMostRecentSession(dir, cwd);
		});
	}
	same("findMostRecentSession(missing folder)", (m, dir) => m.findMostRecentSession(path.join(dir, "none")));
	same("findMostRecentSession(empty folder)", (m, dir) => m.findMostRecentSession(dir));
	same("findMostRecentSession with a dangling symlink among the files", (m, dir) => {
		setup(dir);
		fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "z.jsonl"));
		return m.findMostRecentSession(dir);
	});
});

test("the helpers come by import too, the same functions as by require", async () => {
	const esm = await import(pathToFileURL(path.join(REPO_ROOT, "index.mjs")).href);
	const cjs = require(REPO_ROOT);
	for (const name of ["assertValidSessionId", "projectContextEntry", "getDefaultSessionDir", "loadEntriesFromFile", "findMostRecentSession"]) {
		assert.equal(typeof esm[name], "function", name);
		assert.equal(esm[name], cjs[name], name);
	}
	// A folder is no session file: both throw Node's EISDIR from the read.
	const [theirs] = both((m, dir) => m.loadEntriesFromFile(dir));
	assert.match(theirs.error, /^Error: EISDIR: illegal operation on a directory, read$/);
});
