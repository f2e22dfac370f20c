// A session file changed by another process after open(): appended to, truncated
// and rewritten in place (as the reference's own migration does with
// writeFileSync), replaced by a rename, deleted. The reference holds every entry in
// memory and returns them as they were; ours reads lines again on demand, so it must
// return the same entries or throw an Error naming the file, never another entry's
// bytes or garbage. Each case runs on both sides, each on its own copy of one file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ours } from "./helpers/ours.mjs";
import { reference } from "./helpers/reference.mjs";

const ISO = (i) => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
// Same-length texts: swapping two lines keeps every offset on a line boundary, so a
// reader that trusted its old offsets would hand out the other entry, parsed fine.
const TEXTS = ["alpha", "bravo", "delta", "gamma", "kappa", "omega", "sigma", "theta"];

function sessionLines() {
	const lines = [{ type: "session", version: 3, id: "0193a0b1-0000-7000-8000-00000000c0de", timestamp: ISO(0), cwd: "/change/project" }];
	let parentId = null;
	TEXTS.forEach((text, i) => {
		const id = `c0000${String(i).padStart(3, "0")}`;
		const role = i % 2 === 0 ? "user" : "assistant";
		const message =
			role === "user"
				? { role, content: `question ${text}`, timestamp: 1000 + i }
				: { role, content: [{ type: "text", text: `answer ${text}` }], provider: "p", model: "m", usage: { input: 1, output: 1 }, stopReason: "stop", timestamp: 1000 + i };
		lines.push({ type: "message", id, parentId, timestamp: ISO(i + 1), message });
		parentId = id;
	});
	return lines.map((l) => JSON.stringify(l));
}

/** Runs `code` in another Node process (the other writer), with `file` as argv[1]. */
function otherProcess(code, file) {
	const result = spawnSync(process.execPath, ["-e", code, file], { encoding: "utf8" });
	assert.equal(result.status, 0, result.stderr);
}

const CHANGES = {
	appended: (file) =>
		otherProcess(
			`require('fs').appendFileSync(process.argv[1], JSON.stringify({type:'message',id:'ffff0001',parentId:'c0000007',timestamp:'2025-01-02T00:00:00.000Z',message:{role:'user',content:'from another process',timestamp:5}}) + '\\n')`,
			file,
		),
	// Lines 3 and 5 swapped (same lengths), written over the same inode.
	"rewritten in place": (file) =>
		otherProcess(
			`const fs = require('fs'); const l = fs.readFileSync(process.argv[1], 'utf8').split('\\n');
			 [l[3], l[5]] = [l[5], l[3]]; fs.writeFileSync(process.argv[1], l.join('\\n'));`,
			file,
		),
	truncated: (file) => otherProcess(`require('fs').truncateSync(process.argv[1], 200)`, file),
	"replaced by a rename": (file) =>
		otherProcess(
			`const fs = require('fs'); const l = fs.readFileSync(process.argv[1], 'utf8').split('\\n').reverse();
			 fs.writeFileSync(process.argv[1] + '.new', l.join('\\n')); fs.renameSync(process.argv[1] + '.new', process.argv[1]);`,
			file,
		),
	deleted: (file) => otherProcess(`require('fs').unlinkSync(process.argv[1])`, file),
};

function observe(sm) {
	return {
		branch: sm.getBranch(),
		context: sm.buildSessionContext(),
		entries: sm.getEntries(),
		tree: JSON.parse(JSON.stringify(sm.getTree())),
	};
}

/** Opens and reads enough other sessions that the pool no longer has `file` open. */
function pushOutOfThePool(api, dir) {
	const lines = sessionLines();
	for (let i = 0; i < 24; i++) {
		const other = path.join(dir, `other-${i}.jsonl`);
		fs.writeFileSync(other, lines.join("\n") + "\n");
		api.SessionManager.open(other).getBranch();
	}
}

function sideBySide(change, { evict }) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-change-"));
	try {
		const content = sessionLines().join("\n") + "\n";
		const files = { ours: path.join(dir, "ours.jsonl"), reference: path.join(dir, "reference.jsonl") };
		fs.writeFileSync(files.ours, content);
		fs.writeFileSync(files.reference, content);
		const mine = ours.SessionManager.open(files.ours);
		const theirs = reference.SessionManager.open(files.reference);
		CHANGES[change](files.ours);
		CHANGES[change](files.reference);
		if (evict) pushOutOfThePool(ours, dir);
		const expected = observe(theirs);
		let got;
		try {
			got = observe(mine);
		} catch (error) {
			assert.ok(error instanceof Error, `threw ${error}`);
			assert.ok(error.message.includes(files.ours), `the error names the file: ${error.message}`);
			return { threw: error.message };
		}
		assert.deepEqual(got, expected, "the entries as they were when open() read them");
		return { returned: true };
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

test("appended to by another process: the entries as they were, like the reference", () => {
	for (const evict of [false, true]) assert.deepEqual(sideBySide("appended", { evict }), { returned: true });
});

test("rewritten in place with another entry at each old offset: never another entry's bytes", () => {
	for (const evict of [false, true]) {
		const outcome = sideBySide("rewritten in place", { evict });
		assert.match(outcome.threw ?? "", /changed on disk after it was opened/);
	}
});

test("truncated: a clear error naming the file", () => {
	for (const evict of [false, true]) {
		const outcome = sideBySide("truncated", { evict });
		assert.match(outcome.threw ?? "", /changed on disk after it was opened/);
	}
});

test("replaced by a rename: the old file while it is open, then a clear error", () => {
	// Right after open() the pool still has the old file open: its bytes, as they were.
	assert.deepEqual(sideBySide("replaced by a rename", { evict: false }), { returned: true });
	const later = sideBySide("replaced by a rename", { evict: true });
	assert.match(later.threw ?? "", /replaced by another file after it was opened/);
});

test("deleted: the old file while it is open, then a clear error", () => {
	assert.deepEqual(sideBySide("deleted", { evict: false }), { returned: true });
	const later = sideBySide("deleted", { evict: true });
	assert.match(later.threw ?? "", /was deleted after it was opened/);
});

test("entries already handed out stay the same objects after the file changes", () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-change-"));
	try {
		const file = path.join(dir, "s.jsonl");
		fs.writeFileSync(file, sessionLines().join("\n") + "\n");
		const sm = ours.SessionManager.open(file);
		const before = sm.getEntries();
		CHANGES["rewritten in place"](file);
		const after = sm.getEntries();
		assert.equal(after.length, before.length);
		after.forEach((entry, i) => assert.equal(entry, before[i]));
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
