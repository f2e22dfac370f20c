// Repeated ids and parent cycles through every walk, on both sides. The reference
// runs in a child process with a small heap and a time limit, because it loops on
// some of these inputs (getBranch round a cycle, getTree round a node that a
// repeated id hangs under its own descendant, or 2^n paths of a doubled file).
// Where it returns, ours must give the same (getTree's shared nodes included);
// where it does not, ours returns a tree with each node kept at its first place
// (README: "Differences from the reference"): JSON.stringify works, a recursive
// walk meets each entry once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ours } from "./helpers/ours.mjs";
import { Rng } from "./helpers/prng.mjs";
import { firstPlaces, isTree, opsFor, runOp, treeGraph } from "./helpers/walks.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(HERE, "helpers", "walks-child.mjs");
const SEED = Number(process.env.SEED ?? 1) >>> 0;
// Per operation; each of these inputs takes the reference a few ms where it returns.
const OP_TIME_LIMIT_MS = 50;

const HEADER = { type: "session", version: 3, id: "walks", timestamp: "2024-01-01T00:00:00.000Z", cwd: "/x" };
const ts = (s) => (typeof s === "string" ? s : `2024-01-01T00:00:${String(s).padStart(2, "0")}.000Z`);
const msg = (id, parentId, t = 1, role = "user") => ({
	type: "message",
	id,
	parentId,
	timestamp: ts(t),
	message:
		role === "assistant"
			? { role, content: [{ type: "text", text: `${id}@${t}` }], provider: "p", model: `m-${id}`, timestamp: 1 }
			: { role, content: `${id}@${t}`, timestamp: 1 },
});

function chain(n, prefix = "e") {
	return Array.from({ length: n }, (_, i) => msg(`${prefix}${i}`, i ? `${prefix}${i - 1}` : null, (i % 50) + 1));
}

const named = [
	["a plain tree with siblings out of time order", [msg("a", null, 1), msg("c", "a", 3), msg("b", "a", 2), msg("d", "b", 4)]],
	["a line written twice", [msg("x", null, 1), msg("y", "x", 2), msg("y", "x", 2)]],
	["the root line written twice", [msg("x", null, 1), msg("x", null, 1), msg("y", "x", 2)]],
	["a line written again later", [msg("x", null, 1), msg("y", "x", 2), msg("z", "y", 3), msg("y", "x", 2)]],
	["a small file doubled (the reference returns 2^3 paths)", [...chain(3), ...chain(3)]],
	["a file doubled by a sync tool (2^40 paths)", [...chain(40), ...chain(40)]],
	["a repeated id under its own descendant", [msg("x", null, 1), msg("y", "x", 2), msg("x", "y", 3)]],
	["a repeated id that closes a loop, written first", [msg("x", "y", 1), msg("y", "x", 2), msg("x", null, 3)]],
	["a parent cycle beside a root", [msg("r", null, 1), msg("a", "b", 2), msg("b", "a", 3)]],
	["a parent cycle and nothing else", [msg("a", "b", 1), msg("b", "a", 2)]],
	["a self-parent", [msg("s", "s", 1), msg("t", "s", 2)]],
	["a longer cycle the leaf sits on", [...chain(8, "c").map((e, i) => (i === 0 ? { ...e, parentId: "c7" } : e))]],
	[
		"labels on a repeated id",
		[
			msg("x", null, 1),
			msg("y", "x", 2),
			{ type: "label", id: "l1", parentId: "y", timestamp: ts(3), targetId: "y", label: "first" },
			msg("y", "l1", 4),
			msg("x", "y", 5),
		],
	],
	[
		"timestamps the Date parser reads in other forms, with repeated ids",
		[msg("x", null, "2024-01-01"), msg("b", "x", "Jan 2 2024"), msg("a", "x", "not a date"), msg("b", "x", 1), msg("x", "b", "2024")],
	],
	[
		"a compaction on a loop",
		[
			msg("a", null, 1),
			msg("b", "a", 2, "assistant"),
			{ type: "compaction", id: "c", parentId: "b", timestamp: ts(3), summary: "s", firstKeptEntryId: "b", tokensBefore: 1 },
			msg("d", "c", 4),
			msg("a", "d", 5),
		],
	],
];

function randomCase(rng) {
	const written = [];
	// Mostly an entry written before (as pi writes), some ids from anywhere (loops).
	const drawParent = () => {
		const r = rng.float();
		if (r < 0.15 || (r < 0.9 && written.length === 0)) return null;
		if (r < 0.9) return rng.pick(written);
		return r < 0.97 ? `e${rng.int(written.length + 2)}` : "missing";
	};
	const time = () => (rng.bool(0.05) ? "not a date" : 1 + rng.int(6));
	const entries = [];
	const n = 3 + rng.int(8);
	for (let i = 0; i < n; i++) {
		// Some ids written again (an entry written twice, a copy with another parent).
		const id = written.length && rng.bool(0.15) ? rng.pick(written) : `e${i}`;
		const parentOf = drawParent();
		const parent = () => parentOf;
		written.push(id);
		const r = rng.int(10);
		if (r === 0) {
			entries.push({ type: "label", id, parentId: parent(), timestamp: ts(time()), targetId: rng.pick([...written, 'missing']), label: `L${i}` });
		} else if (r === 1) {
			entries.push({
				type: "compaction",
				id,
				parentId: parent(),
				timestamp: ts(time()),
				summary: `S${i}`,
				firstKeptEntryId: rng.pick([...written, 'missing']),
				tokensBefore: i,
			});
		} else if (r === 2) {
			entries.push({ type: "model_change", id, parentId: parent(), timestamp: ts(time()), provider: "p", modelId: `m${i}` });
		} else {
			entries.push(msg(id, parent(), time(), rng.bool() ? "user" : "assistant"));
		}
	}
	// A sync tool's doing: some line written again further down.
	if (rng.bool(0.4)) entries.splice(1 + rng.int(entries.length), 0, { ...entries[rng.int(entries.length)] });
	return entries;
}

function writeCases(dir) {
	const rng = new Rng(SEED);
	const all = [...named, ...Array.from({ length: 70 }, (_, i) => [`random case ${i} (SEED=${SEED})`, randomCase(rng)])];
	return all.map(([title, entries], i) => {
		const file = path.join(dir, `case-${i}.jsonl`);
		fs.writeFileSync(file, [HEADER, ...entries].map((e) => `${JSON.stringify(e)}\n`).join(""));
		return { title, file };
	});
}

/** The reference's results, by case and op: { result } | { error } | "does not return". */
function referenceResults(cases, casesFile) {
	const opCounts = cases.map((c) => opsFor(ours.SessionManager.open(c.file).getEntries()).length);
	const next = ([c, k]) => (k + 1 < opCounts[c] ? [c, k + 1] : [c + 1, 0]);
	const results = cases.map(() => []);
	let start = [0, 0];
	while (start[0] < cases.length) {
		const run = spawnSync(process.execPath, ["--max-old-space-size=512", CHILD, casesFile, ...start.map(String), String(OP_TIME_LIMIT_MS)], {
			encoding: "utf8",
			timeout: 120_000,
			maxBuffer: 256 << 20,
		});
		let stuck = start;
		for (const line of run.stdout.split("\n")) {
			if (!line) continue;
			const { c, k, result, error, loops } = JSON.parse(line);
			results[c][k] = loops ? "does not return" : error !== undefined ? { error } : { result };
			stuck = next([c, k]);
		}
		if (run.status === 0) break;
		// That operation did not return (time limit or out of memory): the rest goes on.
		results[stuck[0]][stuck[1]] = "does not return";
		start = next(stuck);
	}
	return results;
}

/** Results as they come through JSON (undefined members dropped), as the child's do. */
const viaJson = (value) => JSON.parse(JSON.stringify(value));

/** Ours is a tree: each node object once, stringifiable, each entry met once by a recursive walk. */
function assertIsTree(roots, entries, where) {
	const nodes = new Set();
	const met = new Set();
	const visit = (node) => {
		assert.ok(!nodes.has(node), `${where}: a node met twice`);
		nodes.add(node);
		assert.ok(!met.has(node.entry), `${where}: an entry met twice`);
		met.add(node.entry);
		assert.ok(entries.includes(node.entry), `${where}: a node of an entry the session does not hold`);
		node.children.forEach(visit);
	};
	roots.forEach(visit);
	assert.doesNotThrow(() => JSON.stringify(roots), where);
}

test("repeated ids and parent cycles: every walk as the reference where it returns, finite and each entry once always", () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-walks-"));
	const cases = writeCases(dir);
	const casesFile = path.join(dir, "cases.json");
	fs.writeFileSync(casesFile, JSON.stringify(cases));
	const reference = referenceResults(cases, casesFile);
	const tally = { same: 0, sharedNodes: 0, referenceLoops: 0 };
	for (let c = 0; c < cases.length; c++) {
		const sm = ours.SessionManager.open(cases[c].file);
		const entries = sm.getEntries();
		const ops = opsFor(entries);
		for (let k = 0; k < ops.length; k++) {
			const where = `${cases[c].title}, ${ops[k]}`;
			let mine;
			try {
				mine = viaJson({ result: runOp(ours, sm, ops[k]) });
			} catch (error) {
				mine = { error: String(error?.message ?? error) };
			}
			if (Array.isArray(mine.result) && ops[k] !== "tree") {
				assert.equal(new Set(mine.result).size, mine.result.length, `${where}: an entry twice`);
			}
			const theirs = reference[c][k];
			assert.ok(theirs !== undefined, `${where}: no reference result`);
			if (theirs === "does not return") {
				tally.referenceLoops++;
				if (ops[k] === "tree") assertIsTree(sm.getTree(), entries, where);
				assert.ok(!("error" in mine), `${where}: ${mine.error}`);
				continue;
			}
			if (ops[k] === "tree" && "result" in theirs && !isTree(theirs.result)) tally.sharedNodes++;
			else tally.same++;
			assert.deepEqual(mine, theirs, where);
		}
	}
	console.log(`walks: ${tally.same} as the reference, ${tally.sharedNodes} trees with shared nodes as the reference, ${tally.referenceLoops} where the reference does not return`);
	// The inputs reach every kind of outcome.
	assert.ok(tally.sharedNodes > 0 && tally.referenceLoops > 0);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("getTree of a doubled file is the tree of one copy, at its second copy's entries", () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-doubled-"));
	const file = path.join(dir, "s.jsonl");
	const once = chain(2000);
	fs.writeFileSync(file, [HEADER, ...once, ...once].map((e) => `${JSON.stringify(e)}\n`).join(""));
	const sm = ours.SessionManager.open(file);
	const entries = sm.getEntries();
	const tree = sm.getTree();
	assertIsTree(tree, entries, "doubled");
	let node = tree[0];
	for (let i = 0; i < 2000; i++) {
		assert.equal(node.entry, entries[2000 + i]);
		node = node.children[0];
	}
	assert.equal(node, undefined);
	assert.equal(tree.length, 1);
	assert.equal(sm.getBranch().length, 2000);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("treeGraph numbers a shared node once (the helper the comparison rests on)", () => {
	const leaf = { entry: 1, children: [] };
	const graph = treeGraph([{ entry: 0, children: [leaf, leaf] }], (e) => e);
	assert.equal(graph.nodes.length, 2);
	assert.deepEqual(graph.nodes[0].children, [1, 1]);
	assert.equal(isTree(graph), false);
	assert.deepEqual(firstPlaces(graph), [{ entry: 0, label: undefined, labelTimestamp: undefined, children: [{ entry: 1, label: undefined, labelTimestamp: undefined, children: [] }] }]);
});
