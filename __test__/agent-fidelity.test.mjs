// pi's own code drives both classes: pi's AgentSession (its SDK runtime, replies scripted by
// pi-ai's faux provider) runs one scenario (helpers/agent-scenario.mjs: prompts, tool calls,
// a model and a thinking-level change, a name, labels, a manual and an automatic compaction,
// /tree navigation with a branch summary, forks, a new session and a switch back, an import,
// errors, every file reopened) on pi's SessionManager class and on the same class switched
// with useNativeSessions. What pi saw after every step (contexts, entries, trees, the agent's
// messages, stats, thrown errors) and every session file must be the same, byte for byte once
// ids and times are normalized.
//
// Each side runs in a child process of its own, one after the other in the same folder, so
// that prompts (which hold the cwd) and with them the faux provider's token counts are equal.
// pi needs Node >= 22.19: the Node 20 pass of __test__/run.mjs skips this file.
//
//   node __test__/run.mjs __test__/agent-fidelity.test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Normalizer } from "./helpers/normalize.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip = major < 22 || (major === 22 && minor < 19) ? `pi's SDK needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it` : false;

const SCENARIO = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers", "agent-scenario.mjs");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-fidelity-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Ids and uuids numbered by first appearance; every instant the same token (two appends may share a millisecond on one side only). */
class Flat extends Normalizer {
	instant(_ms, suffix = "") {
		return `<T${suffix}>`;
	}
}

function run(side) {
	const dir = path.join(root, "run");
	fs.rmSync(dir, { recursive: true, force: true });
	// --expose-gc: a full collection before every step (helpers/collect.mjs), on every side.
	const child = spawnSync(process.execPath, ["--expose-gc", SCENARIO, side, dir], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, timeout: 300_000 });
	assert.equal(child.status, 0, `${side} side failed:\n${child.stderr}`);
	const raw = JSON.parse(child.stdout);
	const norm = new Flat({ roots: [dir] });
	// How long a tool ran is the one number of pi's that is not the same twice.
	const durations = (s) => s.replace(/"durationMs":\s?\d+/g, '"durationMs":<D>');
	const text = (value) => durations(norm.text(JSON.stringify(value, null, 1)));
	return {
		raw,
		log: raw.log.map((entry) => ({ step: entry.step, text: text({ ...entry, native: undefined, letGo: undefined }) })),
		reopened: text(raw.reopened),
		listed: text(raw.listed),
		files: raw.files.map((f) => ({ file: norm.text(f.file), text: f.text === null ? null : durations(norm.text(f.text)) })),
	};
}

let pi;
let native;

test("the scenario does on pi's own class what it is meant to do", { skip }, () => {
	pi = run("pi");
	const types = new Set(pi.raw.files.flatMap((f) => (f.text ?? "").split("\n").filter(Boolean).map((l) => JSON.parse(l).type)));
	for (const type of ["session", "message", "model_change", "thinking_level_change", "session_info", "label", "compaction", "branch_summary", "context_edit", "custom_message"]) {
		assert.ok(types.has(type), `no ${type} entry was written`);
	}
	const main = pi.raw.files[0].text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
	assert.equal(main.filter((e) => e.type === "compaction").length, 2, "a manual and an automatic compaction");
	assert.ok(main.some((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "read"), "a read tool result");
	assert.ok(main.some((e) => e.type === "message" && e.message.role === "bashExecution" && e.message.output === "bash out"), "a bash execution");
	assert.ok(pi.raw.files.length >= 5, "the main session, a fork, a new session, an import, a fork of it");
	const errors = pi.raw.log.filter((l) => l.error).map((l) => l.step);
	assert.deepEqual(errors, ["label missing", "navigate missing", "fork missing", "import missing", "forkFrom missing"]);
	assert.ok(pi.raw.log.every((l) => l.native !== true), "pi's side ran on pi's class");
});

for (const [side, title, letsGo] of [
	["native", "letting go of what nothing holds (pi's default)", true],
	["native-keep", "keeping every value (releaseEntries: false)", false],
]) test(`pi's AgentSession on the native class, ${title}: the same steps, contexts, errors and files`, { skip }, () => {
	assert.ok(pi, "needs pi's run");
	native = run(side);
	const snapshots = native.raw.log.filter((l) => l.native !== undefined);
	assert.ok(snapshots.length > 10 && snapshots.every((l) => l.native), "every session pi made (start, fork, new, switch, import) was native");
	const letGo = Math.max(...snapshots.map((l) => l.letGo));
	if (letsGo) assert.ok(letGo > 0, "entries pi wrote with heavy values are held only until nothing else holds them");
	else assert.equal(letGo, 0, "every entry pi wrote is kept as it was given");
	assert.deepEqual(
		native.log.map((l) => l.step),
		pi.log.map((l) => l.step),
	);
	for (let i = 0; i < pi.log.length; i++) assert.equal(native.log[i].text, pi.log[i].text, `after step "${pi.log[i].step}"`);
	assert.equal(native.files.length, pi.files.length);
	for (let i = 0; i < pi.files.length; i++) {
		assert.equal(native.files[i].file, pi.files[i].file, `file ${i}`);
		assert.equal(native.files[i].text, pi.files[i].text, `the text of ${pi.files[i].file}`);
	}
	assert.equal(native.reopened, pi.reopened, "every file reopened");
	assert.equal(native.listed, pi.listed, "SessionManager.list");
});
