// A session file changed by another program while pi has it open, with pi's own AgentSession
// driving the class (helpers/changed-file-scenario.mjs, a full collection before every step):
// another process appends a line, truncates the file, rewrites it in place, renames another
// file over it, deletes it; then pi reads the context, the entries and the tree, compacts and
// prompts. On pi's own class everything is in memory and keeps working. On ours, in both
// modes (letting go, pi's default, and keeping every value), pi must not crash: each step
// gives pi's answer or throws the clear error naming the file, and every line pi writes
// afterwards is whole (the one line a truncation cuts is the other program's).
//
// pi needs Node >= 22.19: the Node 20 pass of __test__/run.mjs skips this file.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip = major < 22 || (major === 22 && minor < 19) ? `pi's SDK needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it` : false;
const SCENARIO = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers", "changed-file-scenario.mjs");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-changed-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const CLEAR_ERROR = /^Session file (was changed on disk after it was opened \(truncated or rewritten\)|was deleted after it was opened|was replaced by another file after it was opened): /;

function run(side, change) {
	const dir = path.join(root, `${side}-${change}`);
	const child = spawnSync(process.execPath, ["--expose-gc", SCENARIO, side, change, dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
	assert.equal(child.status, 0, `${side}, ${change}: pi's process ended badly:\n${child.stderr}`);
	const result = JSON.parse(child.stdout);
	// Paths differ by side; errors are compared by their kind.
	for (const entry of result.log) if (entry.error) entry.error = entry.error.replace(dir, "<DIR>");
	return result;
}

for (const change of ["appended", "truncated", "rewritten", "renamed-over", "deleted"]) {
	test(`the session file ${change} under pi: pi's answers or the clear error, never a crash or a torn line of pi's`, { skip }, () => {
		const pi = run("pi", change);
		assert.deepEqual(
			pi.log.filter((l) => l.error).map((l) => l.step),
			[],
			"pi's own class keeps working from memory",
		);
		const failed = {};
		for (const side of ["native", "native-keep"]) {
			const ours = run(side, change);
			assert.deepEqual(ours.log.map((l) => l.step), pi.log.map((l) => l.step));
			failed[side] = [];
			for (let i = 0; i < pi.log.length; i++) {
				const [theirs, mine] = [pi.log[i], ours.log[i]];
				if (mine.error !== undefined) {
					assert.match(mine.error, CLEAR_ERROR, `${side}, step "${mine.step}": only the clear error`);
					failed[side].push(mine.step);
				} else if (!/^prompt/.test(mine.step)) {
					assert.deepEqual(mine.result, theirs.result, `${side}, step "${mine.step}"`);
				}
			}
			// A compaction that failed wrote nothing; every other step wrote what pi's class writes.
			const unwritten = failed[side].includes("compact") ? 1 : 0;
			assert.equal(ours.fileLines, pi.fileLines === null ? null : pi.fileLines - unwritten, `${side}: the lines pi's own class leaves, but for a failed compaction's`);
			assert.equal(ours.torn?.length ?? null, pi.torn?.length ?? null, `${side}: no line of pi's is torn`);
		}
		// Before the change nothing failed on any side (the first steps are the same turns).
		for (const side of Object.keys(failed)) assert.ok(!failed[side].some((s) => /^prompt \d|^switch/.test(s)), `${side}: ${failed[side]}`);
		if (change === "appended") assert.deepEqual(failed, { native: [], "native-keep": [] }, "a line appended by another process changes nothing that was read");
		if (change === "truncated" || change === "rewritten") {
			// What was let go cannot be read again from changed bytes: the clear error, where
			// the manager that kept every value still has it.
			assert.ok(failed.native.includes("context"), `letting go: the context needs values let go (${failed.native})`);
			assert.deepEqual(failed["native-keep"], [], "keeping every value: everything pi reads was read before the change");
		}
	});
}
