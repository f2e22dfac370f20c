// checkSession / repairSession through the API: seeded random damage (every line that
// parses as an entry survives a repair, and the reference opens the result), and a
// repair racing another process's appends (refused, or nothing appended is lost).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { fileNameFor, fixedSession, makeWorld } from "./helpers/cli.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { reference } from "./helpers/reference.mjs";

const ours = createRequire(import.meta.url)("../index.js");
const RefSM = reference.SessionManager;
const ID = "0198f3a2-5b6c-7d8e-9f00-000000000001";
const START = "2026-01-02T03:04:05.000Z";

const world = makeWorld("pi-doctor-");
after(() => world.cleanup());
process.env.PI_CODING_AGENT_DIR = world.agentDir;

/** Damages a list of lines the ways disks and crashes do; returns the file's bytes. */
function damage(rng, lines) {
	const parts = [];
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i];
		const kind = i === 0 ? "none" : rng.weighted([[6, "none"], [1, "cut"], [1, "glue"], [1, "nul"], [1, "crlf"], [1, "nulglue"]]);
		switch (kind) {
			case "cut":
				parts.push(line.slice(0, 1 + rng.int(line.length - 1)) + "\n");
				break;
			case "glue":
				// Cut, then the next entry glued right after it.
				parts.push(line.slice(0, 1 + rng.int(line.length - 1)));
				break;
			case "nul":
				parts.push(line + "\n" + "\0".repeat(1 + rng.int(5000)));
				break;
			case "nulglue":
				parts.push("\0".repeat(1 + rng.int(300)) + line + "\n");
				break;
			case "crlf":
				parts.push(line + "\r\n");
				break;
			default:
				parts.push(line + "\n");
		}
	}
	if (rng.bool(0.3)) parts.push(lines.at(-1).slice(0, 10));
	return parts.join("");
}

const SEED = baseSeed();

test(`seeded damage (SEED=${SEED}): repair keeps every line that parses, and the reference opens it`, () => {
	const rng = new Rng(SEED);
	const dir = path.join(world.root, "random");
	for (let round = 0; round < 60; round++) {
		const entries = fixedSession({ id: ID, cwd: world.project, name: `round ${round}` });
		const lines = entries.map((e) => JSON.stringify(e));
		const bytes = damage(rng, lines);
		fs.rmSync(dir, { recursive: true, force: true });
		fs.mkdirSync(dir, { recursive: true });
		const file = path.join(dir, fileNameFor(START, ID));
		fs.writeFileSync(file, bytes);
		const where = `round ${round} (SEED=${SEED})`;
		const parsedBefore = bytes
			.split("\n")
			.filter((l) => {
				try {
					return JSON.parse(l) && true;
				} catch {
					return false;
				}
			})
			.map((l) => l.replace(/\r$/, ""));
		const result = ours.repairSession(file);
		const after = fs.readFileSync(file, "utf8");
		const afterLines = after.split("\n");
		for (const l of parsedBefore) assert.ok(afterLines.includes(l), `${where}: lost ${l.slice(0, 80)}`);
		// Every complete entry, glued or padded or not, is back.
		for (const l of lines) {
			if (bytes.includes(l)) assert.ok(afterLines.includes(l), `${where}: not recovered: ${l.slice(0, 80)}`);
		}
		if (result.applied) {
			assert.equal(result.after.opensInReference, true, where);
			const ref = RefSM.open(file);
			const got = [ref.getHeader(), ...ref.getEntries()].map((e) => JSON.stringify(e));
			assert.deepEqual(got, lines.filter((l) => bytes.includes(l)), where);
			assert.deepEqual(result.after.findings.filter((f) => f.repair), [], where);
		}
	}
});

test("a repair racing another process's appends is refused or loses nothing", async () => {
	const dir = path.join(world.root, "race");
	fs.mkdirSync(dir, { recursive: true });
	const file = path.join(dir, fileNameFor(START, ID));
	const entries = fixedSession({ id: ID, cwd: world.project });
	const lines = entries.map((e) => JSON.stringify(e));
	// Every line ends with CRLF, the appended ones too: each repair has work to do.
	const crlf = () => fs.writeFileSync(file, lines.join("\r\n") + "\r\n");
	crlf();
	const COUNT = 400;
	const appender = spawn(
		process.execPath,
		[
			"-e",
			`const fs = require("fs");
			for (let i = 0; i < ${COUNT}; i++) {
				fs.appendFileSync(process.argv[1], JSON.stringify({ type: "custom", id: "x" + i, parentId: null, timestamp: "${START}", customType: "race" }) + "\\r\\n");
				const until = Date.now() + 2; while (Date.now() < until) {}
			}`,
			file,
		],
		{ stdio: "inherit" },
	);
	const exited = new Promise((resolve) => appender.on("exit", resolve));
	let refused = 0;
	let applied = 0;
	let running = true;
	exited.then(() => (running = false));
	while (running) {
		try {
			if (ours.repairSession(file).applied) applied++;
		} catch (error) {
			assert.match(error.message, /changed while it was being repaired/);
			refused++;
		}
		await new Promise((r) => setImmediate(r));
	}
	assert.equal(await exited, 0);
	console.log(`# ${applied} repairs applied, ${refused} refused during the appends`);
	const text = fs.readFileSync(file, "utf8");
	for (let i = 0; i < COUNT; i++) {
		const n = text.split(`"id":"x${i}"`).length - 1;
		assert.equal(n, 1, `appended entry x${i} is in the file ${n} times`);
	}
	for (const l of lines) assert.ok(text.includes(l));
	// The file is whole: the reference reads every entry.
	assert.equal(RefSM.open(file).getEntries().length, lines.length - 1 + COUNT);
	for (const name of fs.readdirSync(dir)) assert.ok(!name.endsWith(".tmp"), name);
});
