// The command line never deletes or overwrites what is not a pi session. Every command that
// removes or writes files (rm to the trash and with --force, repair, export -o) runs as a child
// process against a table of inputs: a text file, a JSONL file that is not a session, a folder,
// symlinks to a session and to a non-session, a FIFO, /dev/null, session files (whole, torn,
// damaged in pi's session folders) and files another process is appending to. Each case asserts
// the exit status, the one line on stderr and that every other file is byte for byte unchanged.
//
// The children run with a safety net preloaded (helpers/destruction-net.cjs): should the guard
// under test fail, the net stops the child (exit 99) before it removes or replaces a device or
// anything outside the test's temp folder. /dev/null itself is handed over only after the same
// command refused a symlink to it.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { fileNameFor, fixedSession, makeWorld, runCli, writeSession } from "./helpers/cli.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const ours = createRequire(import.meta.url)("../index.js");
const NET = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers", "destruction-net.cjs");
const NODE_DIR = path.dirname(process.execPath);
const ID = "0198f3a2-5b6c-7d8e-9f00-000000000001";
const START = "2026-01-02T03:04:05.000Z";

const hasMkfifo = spawnSync("mkfifo", ["--version"]).status === 0;
const NO_FIFO = hasMkfifo ? false : "mkfifo is not installed: the FIFO cases need it";
if (NO_FIFO && process.env.CI === "true") throw new Error(`CI: ${NO_FIFO}`);
const DEV_NULL_OK = fs.statSync("/dev/null").isCharacterDevice();
if (!DEV_NULL_OK) throw new Error("/dev/null is not a character device on this machine before the tests even ran");

// --- the world ---------------------------------------------------------------------------------

const lines = (entries) => entries.map((e) => JSON.stringify(e));

/**
 * A temp world with one file of each kind under files/ (plus pi's session folder), a fake
 * `trash` command and the safety net. `files` maps a case name to its path.
 */
function guardWorld() {
	const w = makeWorld("pi-cli-guard-");
	const support = path.join(w.root, "support");
	const bin = path.join(support, "bin");
	fs.mkdirSync(bin, { recursive: true });
	// The fake trash records what it was given and moves only regular files of the world.
	fs.writeFileSync(
		path.join(bin, "trash"),
		`#!/usr/bin/env node
const fs = require("fs"), path = require("path");
const files = process.argv.slice(2).filter((a) => a !== "--");
fs.appendFileSync(process.env.FAKE_TRASH_LOG, JSON.stringify(files) + "\\n");
fs.mkdirSync(process.env.FAKE_TRASH_DIR, { recursive: true });
for (const f of files) {
	if (!fs.lstatSync(f).isFile()) { console.error("fake trash: not a regular file: " + f); process.exit(1); }
	fs.renameSync(f, path.join(process.env.FAKE_TRASH_DIR, path.basename(f)));
}
`,
		{ mode: 0o755 },
	);
	const dir = path.join(w.root, "files");
	fs.mkdirSync(dir);
	const at = (name) => path.join(dir, name);
	const session = lines(fixedSession({ id: ID, cwd: w.project, name: "Listing files" }));
	const files = {};
	// The session exported, in pi's session folder (found by id).
	files.exported = writeSession(path.join(w.sessionDir, fileNameFor(START, ID)), fixedSession({ id: ID, cwd: w.project, name: "Listing files" }));
	files.text = at("notes.txt");
	fs.writeFileSync(files.text, "precious notes\n");
	files.jsonl = at("data.jsonl");
	fs.writeFileSync(files.jsonl, '{"a":1}\n{"b":2}\n{"c":');
	files.folder = at("folder.jsonl");
	fs.mkdirSync(files.folder);
	fs.writeFileSync(path.join(files.folder, "inside.txt"), "inside\n");
	files.session = at("session.jsonl");
	fs.writeFileSync(files.session, session.join("\n") + "\n");
	// A session whose last write was cut: the header is whole, so it is a session anywhere.
	files.tornTail = at("torn-tail.jsonl");
	fs.writeFileSync(files.tornTail, session.join("\n") + "\n" + session[1].slice(0, 25));
	// A session whose header was torn: a session only as the doctor knows one, in pi's folder.
	const tornHeader = [session[0].slice(0, 40), ...session.slice(1)].join("\n") + "\n";
	files.tornHeaderInFolder = path.join(w.sessionDir, fileNameFor("2026-01-05T00:00:00.000Z", "0198f3a2-5b6c-7d8e-9f00-0000000000aa"));
	fs.writeFileSync(files.tornHeaderInFolder, tornHeader);
	files.tornHeaderElsewhere = at(fileNameFor("2026-01-05T00:00:00.000Z", "0198f3a2-5b6c-7d8e-9f00-0000000000bb"));
	fs.writeFileSync(files.tornHeaderElsewhere, tornHeader);
	const linkedSession = at("linked-session.jsonl");
	fs.writeFileSync(linkedSession, session.join("\n") + "\n");
	files.linkToSession = at("link-to-session");
	fs.symlinkSync("linked-session.jsonl", files.linkToSession);
	files.linkToText = at("link-to-notes");
	fs.symlinkSync("notes.txt", files.linkToText);
	files.linkToDevNull = at("link-to-devnull");
	fs.symlinkSync("/dev/null", files.linkToDevNull);
	files.dangling = at("dangling");
	fs.symlinkSync("nowhere.jsonl", files.dangling);
	if (hasMkfifo) {
		files.fifo = at("pipe.jsonl");
		assert.equal(spawnSync("mkfifo", [files.fifo]).status, 0);
	}
	const env = {
		PATH: `${bin}:${NODE_DIR}`,
		NODE_OPTIONS: `--require ${JSON.stringify(NET)}`,
		PI_GUARD_TEST_ROOT: w.root,
		FAKE_TRASH_LOG: path.join(support, "trash.log"),
		FAKE_TRASH_DIR: path.join(support, "fake-trash"),
		XDG_DATA_HOME: path.join(support, "xdg"),
	};
	return { ...w, files, linkedSession, env, support, sessionLines: session };
}

/** pi-sessions in the world with the safety net; a hang (a FIFO opened) fails after 20 s. */
function run(w, args, { env = {}, ...opts } = {}) {
	const r = runCli(w, args, { env: { ...w.env, ...env }, timeout: 20_000, ...opts });
	assert.doesNotMatch(r.stderr, /SAFETY NET/, `the guard failed and the safety net stopped: pi-sessions ${args.join(" ")}`);
	assert.notEqual(r.status, null, `pi-sessions ${args.join(" ")} hung (killed after 20 s)`);
	return r;
}

/** Every file, folder, symlink and FIFO under `root` (the listing cache aside): kind, inode, mode and bytes. */
function snapshot(root, { ignore = [] } = {}) {
	const out = new Map();
	const walk = (dir) => {
		for (const name of fs.readdirSync(dir).sort()) {
			const full = path.join(dir, name);
			const rel = path.relative(root, full);
			if (rel === "cache" || ignore.includes(full)) continue;
			const st = fs.lstatSync(full);
			if (st.isDirectory()) {
				out.set(rel, `dir ${st.ino} ${st.mode}`);
				walk(full);
			} else if (st.isSymbolicLink()) out.set(rel, `link ${fs.readlinkSync(full)}`);
			else if (st.isFile()) out.set(rel, `file ${st.ino} ${st.mode} ${crypto.createHash("sha256").update(fs.readFileSync(full)).digest("hex")}`);
			else out.set(rel, `other ${st.ino} ${st.mode}`);
		}
	};
	walk(root);
	return out;
}

function diff(before, after) {
	const removed = [...before.keys()].filter((k) => !after.has(k));
	const added = [...after.keys()].filter((k) => !before.has(k));
	const changed = [...before.keys()].filter((k) => after.has(k) && after.get(k) !== before.get(k));
	return { removed, added, changed };
}

function assertOneLine(r, status, pattern, what) {
	assert.equal(r.status, status, `${what}: exit ${r.status}, stderr: ${r.stderr}`);
	const errLines = r.stderr.split("\n").filter(Boolean);
	assert.equal(errLines.length, 1, `${what}: one line on stderr, got:\n${r.stderr}`);
	assert.match(errLines[0], pattern, what);
	assert.doesNotMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`);
}

function devNullIsIntact() {
	const st = fs.lstatSync("/dev/null");
	assert.ok(st.isCharacterDevice(), "/dev/null is still a character device");
	fs.writeFileSync("/dev/null", "still a sink");
	assert.equal(fs.statSync("/dev/null").size, 0, "/dev/null still swallows what is written to it");
}

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const PI_FILE = "not a pi session file";

/** What each refused input is called in the message (after its path). */
function refusals(w) {
	const f = w.files;
	const rows = [
		["a text file", f.text, new RegExp(`${esc(f.text)} is ${PI_FILE} \\(it does not begin with a session header\\)`)],
		["a JSONL file that is not a session", f.jsonl, new RegExp(`${esc(f.jsonl)} is ${PI_FILE} \\(it does not begin with a session header\\)`)],
		["a folder", f.folder, new RegExp(`${esc(f.folder)} is a folder, ${PI_FILE}`)],
		["a symlink to a text file", f.linkToText, new RegExp(`${esc(f.linkToText)} is a symlink to ${esc(f.text)}, which is ${PI_FILE} \\(it does not begin with a session header\\)`)],
		[
			"a torn session outside pi's session folders",
			f.tornHeaderElsewhere,
			new RegExp(`${esc(f.tornHeaderElsewhere)} is ${PI_FILE} \\(it does not begin with a session header, and it is outside pi's session folders\\)`),
		],
		["a symlink to /dev/null", f.linkToDevNull, new RegExp(`${esc(f.linkToDevNull)} is a symlink to /dev/null, which is a character device, ${PI_FILE}`)],
	];
	if (f.fifo) rows.push(["a FIFO", f.fifo, new RegExp(`${esc(f.fifo)} is a FIFO \\(named pipe\\), ${PI_FILE}`)]);
	// Last, once the same command has refused a symlink to it.
	rows.push(["/dev/null", "/dev/null", new RegExp(`/dev/null is a character device, ${PI_FILE}`)]);
	return rows;
}

// --- the net itself ----------------------------------------------------------------------------

test("the safety net stops a removal outside the test's folder (so a failing guard costs nothing)", () => {
	const w = guardWorld();
	const outside = fs.mkdtempSync(path.join(os.tmpdir(), "pi-cli-guard-outside-"));
	try {
		const victim = path.join(outside, "victim.txt");
		fs.writeFileSync(victim, "keep me\n");
		const r = spawnSync(process.execPath, ["-e", `require("fs").unlinkSync(${JSON.stringify(victim)})`], {
			env: { ...process.env, ...w.env },
			encoding: "utf8",
		});
		assert.equal(r.status, 99);
		assert.match(r.stderr, /SAFETY NET: pi-sessions tried unlinkSync/);
		assert.equal(fs.readFileSync(victim, "utf8"), "keep me\n");
	} finally {
		fs.rmSync(outside, { recursive: true, force: true });
		w.cleanup();
	}
});

// --- refusals: rm, rm --force, repair, repair --dry-run ------------------------------------------

const REMOVERS = [
	["rm (to the trash command)", (p) => ["rm", "--yes", p], "rm", "; nothing removed"],
	["rm (to the trash folder)", (p) => ["rm", "--yes", p], "rm", "; nothing removed", { PATH: NODE_DIR }],
	["rm --force", (p) => ["rm", "--force", "--yes", p], "rm", "; nothing removed"],
	["repair", (p) => ["repair", p], "", "; not repaired"],
	["repair --dry-run", (p) => ["repair", "--dry-run", p], "", "; not repaired"],
];

for (const [command, argsFor, prefix, tail, env] of REMOVERS) {
	test(`${command} refuses every input that is not a pi session: exit 2, one line, nothing changes`, () => {
		const w = guardWorld();
		try {
			for (const [what, file, reason] of refusals(w)) {
				const before = snapshot(w.root);
				const r = run(w, argsFor(file), { env });
				assertOneLine(r, 2, new RegExp(`^pi-sessions: ${prefix ? `${prefix}: ` : ""}${reason.source}${esc(tail)}$`), `${command} ${what}`);
				assert.equal(r.stdout, "", `${command} ${what}: nothing on stdout`);
				assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] }, `${command} ${what}: nothing on disk changed`);
			}
			devNullIsIntact();
		} finally {
			w.cleanup();
		}
	});
}

test("doctor and the reading commands do not open a FIFO or a device (it would block or never end)", { skip: NO_FIFO }, () => {
	const w = guardWorld();
	try {
		const r = run(w, ["doctor", w.files.fifo]);
		assert.equal(r.status, 1, r.stderr);
		assert.match(r.stderr, /is a FIFO \(named pipe\), not a pi session file/);
		for (const command of ["info", "show", "tree", "context", "stats", "export"]) {
			assertOneLine(run(w, [command, w.files.fifo]), 1, new RegExp(`^pi-sessions: ${esc(w.files.fifo)} is a FIFO \\(named pipe\\), not a session file$`), `${command} on a FIFO`);
			assertOneLine(run(w, [command, w.files.linkToDevNull]), 1, /is a character device, not a session file$/, `${command} on a symlink to /dev/null`);
		}
		const api = spawnSync(
			process.execPath,
			["-e", `try { require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))}).checkSession(process.argv[1]) } catch (e) { console.log(e.code) }`, w.files.fifo],
			{ encoding: "utf8", timeout: 20_000 },
		);
		assert.equal(api.stdout.trim(), "ERR_NOT_A_SESSION_FILE", api.stderr);
	} finally {
		w.cleanup();
	}
});

test("rm with several paths removes nothing when one is refused, and says so", () => {
	const w = guardWorld();
	try {
		const before = snapshot(w.root);
		const one = run(w, ["rm", "--force", "--yes", w.files.session, w.files.text]);
		assertOneLine(one, 2, new RegExp(`^pi-sessions: rm: ${esc(w.files.text)} is ${PI_FILE} .*; none of the 2 given is removed$`), "one refused");
		const two = run(w, ["rm", "--yes", w.files.folder, w.files.session, w.files.jsonl]);
		assertOneLine(two, 2, new RegExp(`^pi-sessions: rm: ${esc(w.files.folder)} is a folder, ${PI_FILE} \\(and 1 more refused\\); none of the 3 given is removed$`), "two refused");
		const missing = run(w, ["rm", "--force", "--yes", w.files.session, path.join(w.root, "files", "missing.jsonl")]);
		assertOneLine(missing, 1, /^pi-sessions: rm: no such file: .*missing\.jsonl; none of the 2 given is removed$/, "a missing file");
		const dangling = run(w, ["rm", "--force", "--yes", w.files.dangling]);
		assertOneLine(dangling, 1, /no such file: .*dangling; nothing removed$/, "a dangling symlink");
		assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] });
		assert.ok(!fs.existsSync(w.env.FAKE_TRASH_LOG), "the trash command was never run");
	} finally {
		w.cleanup();
	}
});

// --- what rm does remove -----------------------------------------------------------------------

/** The sessions rm accepts: [what, path given, the file that goes, what the message names]. */
function sessionsToRemove(w) {
	const f = w.files;
	return [
		["a session file outside pi's folders", f.session, f.session, esc(f.session)],
		["a session with a torn last line", f.tornTail, f.tornTail, esc(f.tornTail)],
		["a torn session in pi's session folder", f.tornHeaderInFolder, f.tornHeaderInFolder, esc(f.tornHeaderInFolder)],
		[
			"a symlink to a session (the target goes, the link stays)",
			f.linkToSession,
			w.linkedSession,
			`${esc(w.linkedSession)} \\(the file the symlink ${esc(f.linkToSession)} points to; the link stays\\)`,
		],
	];
}

const rel = (w, p) => path.relative(w.root, p);

test("rm --force deletes a session (torn, damaged or through a symlink) and nothing else", () => {
	const w = guardWorld();
	try {
		for (const [what, given, goes, named] of sessionsToRemove(w)) {
			const before = snapshot(w.root);
			const r = run(w, ["rm", "--force", "--yes", given]);
			assert.equal(r.status, 0, `${what}: ${r.stderr}`);
			assert.equal(r.stderr, "");
			assert.match(r.stdout, new RegExp(`^deleted ${named}\\n$`), what);
			assert.deepEqual(diff(before, snapshot(w.root)), { removed: [rel(w, goes)], added: [], changed: [] }, what);
		}
		devNullIsIntact();
	} finally {
		w.cleanup();
	}
});

test("rm moves a session to the trash: the trash command on PATH, else the trash folder; nothing else moves", () => {
	const w = guardWorld();
	try {
		const cases = sessionsToRemove(w);
		// With the fake `trash` command on PATH: it is handed the file that goes.
		for (const [what, given, goes, named] of cases.slice(0, 2)) {
			const bytes = fs.readFileSync(goes);
			const before = snapshot(w.root);
			const r = run(w, ["rm", "-y", given]);
			assert.equal(r.status, 0, `${what}: ${r.stderr}`);
			assert.match(r.stdout, new RegExp(`^moved to the trash: ${named}\\n$`), what);
			assert.deepEqual(JSON.parse(fs.readFileSync(w.env.FAKE_TRASH_LOG, "utf8").trim().split("\n").at(-1)), [goes]);
			assert.deepEqual(fs.readFileSync(path.join(w.env.FAKE_TRASH_DIR, path.basename(goes))), bytes);
			const d = diff(before, snapshot(w.root));
			assert.deepEqual(d.removed, [rel(w, goes)], what);
			assert.deepEqual(d.changed.filter((k) => !k.startsWith("support")), [], what);
			assert.ok(d.added.every((k) => k.startsWith("support")), `${what}: only the trash gained files: ${d.added}`);
		}
		// Without one: the freedesktop trash folder, a name already there is not replaced.
		const trashFiles = path.join(w.env.XDG_DATA_HOME, "Trash", "files");
		fs.mkdirSync(trashFiles, { recursive: true });
		const [, , goesLink] = cases[3];
		const stale = path.join(trashFiles, path.basename(goesLink));
		fs.writeFileSync(stale, "an older file in the trash\n");
		for (const [what, given, goes, named] of cases.slice(2)) {
			const bytes = fs.readFileSync(goes);
			const before = snapshot(w.root);
			const r = run(w, ["rm", "-y", given], { env: { PATH: NODE_DIR } });
			assert.equal(r.status, 0, `${what}: ${r.stderr}`);
			assert.match(r.stdout, new RegExp(`^moved to the trash folder: ${named}\\n$`), what);
			const d = diff(before, snapshot(w.root));
			assert.deepEqual(d.removed, [rel(w, goes)], what);
			assert.deepEqual(d.changed.filter((k) => !k.startsWith("support")), [], what);
			const trashed = d.added.filter((k) => k.startsWith(path.join("support", "xdg", "Trash", "files")));
			assert.equal(trashed.length, 1, `${what}: ${d.added}`);
			assert.deepEqual(fs.readFileSync(path.join(w.root, trashed[0])), bytes, what);
			const info = fs.readFileSync(path.join(w.env.XDG_DATA_HOME, "Trash", "info", `${path.basename(trashed[0])}.trashinfo`), "utf8");
			assert.match(info, new RegExp(`^\\[Trash Info\\]\\nPath=${esc(goes)}\\nDeletionDate=`));
		}
		assert.equal(fs.readFileSync(stale, "utf8"), "an older file in the trash\n", "a file already in the trash is not replaced");
		assert.ok(fs.existsSync(path.join(trashFiles, "linked-session.2.jsonl")));
	} finally {
		w.cleanup();
	}
});

// --- files being appended to by another process --------------------------------------------------

/** A child appending a line to `file` every few ms through one open handle, until killed. */
function appender(file, line) {
	const child = spawn(
		process.execPath,
		[
			"-e",
			`const fs = require("fs"); const fd = fs.openSync(process.argv[1], "a"); process.stdout.write("ready\\n");
			setInterval(() => fs.writeSync(fd, process.argv[2] + "\\n"), 3);`,
			file,
			line,
		],
		{ stdio: ["ignore", "pipe", "inherit"] },
	);
	const ready = new Promise((resolve) => child.stdout.once("data", resolve));
	return { child, ready, stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", resolve), child.kill()))) };
}

test("a file another process is appending to: refused when not a session (and left growing), removed when one", async () => {
	const w = guardWorld();
	const log = path.join(w.root, "files", "growing.log");
	fs.writeFileSync(log, "started\n");
	const growingSession = path.join(w.root, "files", "growing-session.jsonl");
	fs.writeFileSync(growingSession, w.sessionLines.join("\n") + "\n");
	const entry = JSON.stringify({ type: "custom", id: "c0000001", parentId: null, timestamp: START, customType: "tick" });
	const logWriter = appender(log, "another log line");
	const sessionWriter = appender(growingSession, entry);
	try {
		await Promise.all([logWriter.ready, sessionWriter.ready]);
		const ino = fs.statSync(log).ino;
		const ignore = [log, growingSession];
		for (const args of [["rm", "--yes"], ["rm", "--force", "--yes"], ["repair"], ["export", ID, "-o"]]) {
			const before = snapshot(w.root, { ignore });
			const r = run(w, [...args, log]);
			const what = `${args.join(" ")} on a log being written`;
			assert.equal(r.status, 2, `${what}: ${r.stderr}`);
			if (args[0] !== "export") assert.match(r.stderr, new RegExp(`${esc(log)} is ${PI_FILE} \\(it does not begin with a session header\\)`), what);
			assert.deepEqual(diff(before, snapshot(w.root, { ignore })), { removed: [], added: [], changed: [] }, what);
			assert.equal(fs.statSync(log).ino, ino, `${what}: the same file`);
			assert.ok(fs.readFileSync(log, "utf8").startsWith("started\n"), what);
		}
		const before = snapshot(w.root, { ignore });
		const r = run(w, ["rm", "--yes", growingSession]);
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stdout, `moved to the trash: ${growingSession}\n`);
		assert.ok(!fs.existsSync(growingSession));
		const trashed = fs.readFileSync(path.join(w.env.FAKE_TRASH_DIR, path.basename(growingSession)), "utf8");
		assert.ok(trashed.startsWith(w.sessionLines.join("\n") + "\n"), "the trashed file is the session, appends and all");
		assert.deepEqual(diff(before, snapshot(w.root, { ignore })).removed, []);
	} finally {
		await Promise.all([logWriter.stop(), sessionWriter.stop()]);
		w.cleanup();
	}
});

// --- repair: only sessions are repaired ----------------------------------------------------------

test("repair repairs a damaged session in pi's folder, through a symlink the target, and nothing else", () => {
	const w = guardWorld();
	try {
		const before = snapshot(w.root);
		const r = run(w, ["repair", "--json", w.files.tornHeaderInFolder]);
		assert.equal(r.status, 0, r.stderr);
		const result = JSON.parse(r.stdout);
		assert.equal(result.applied, true);
		const d = diff(before, snapshot(w.root));
		assert.deepEqual(d.removed, []);
		assert.deepEqual(d.changed, [rel(w, w.files.tornHeaderInFolder)]);
		assert.deepEqual(d.added, [rel(w, result.backup)]);
		// A symlink to a session with a torn tail: the target is repaired, its backup beside it.
		fs.appendFileSync(w.linkedSession, w.sessionLines[2].slice(0, 20));
		const before2 = snapshot(w.root);
		const linked = JSON.parse(run(w, ["repair", "--json", w.files.linkToSession]).stdout);
		assert.equal(linked.applied, true);
		const d2 = diff(before2, snapshot(w.root));
		assert.deepEqual(d2.changed, [rel(w, w.linkedSession)]);
		assert.ok(linked.backup.startsWith(`${w.linkedSession}.bak-`), linked.backup);
		assert.deepEqual(d2.added, [rel(w, linked.backup)]);
	} finally {
		w.cleanup();
	}
});

test("repairSession (the API) refuses what is not a session with ERR_NOT_A_SESSION_FILE, dry run or not", () => {
	const w = guardWorld();
	try {
		const before = snapshot(w.root);
		for (const file of [w.files.jsonl, w.files.text, w.files.folder, w.files.linkToText, w.files.tornHeaderElsewhere, w.files.linkToDevNull]) {
			for (const dryRun of [false, true]) {
				assert.throws(
					() => ours.repairSession(file, { dryRun }),
					(error) => error.code === "ERR_NOT_A_SESSION_FILE" && error.message.startsWith(`${file} `) && /; not repaired$/.test(error.message),
					file,
				);
			}
		}
		assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] });
		// The damaged file counts as a session in the folder given as sessionDir.
		const custom = path.join(w.root, "custom-sessions");
		fs.mkdirSync(custom);
		const moved = path.join(custom, path.basename(w.files.tornHeaderElsewhere));
		fs.copyFileSync(w.files.tornHeaderElsewhere, moved);
		assert.throws(() => ours.repairSession(moved, { dryRun: true }), { code: "ERR_NOT_A_SESSION_FILE" });
		assert.equal(ours.repairSession(moved, { dryRun: true, sessionDir: custom }).dryRun, true);
	} finally {
		w.cleanup();
	}
});

test("judgeSessionFile (the API) is the judgment rm and repairSession make, and touches nothing", () => {
	const w = guardWorld();
	try {
		const before = snapshot(w.root);
		for (const file of [w.files.session, w.files.tornTail]) {
			const v = ours.judgeSessionFile(file);
			assert.deepEqual([v.ok, v.damaged, v.viaLink, v.target], [true, false, false, fs.realpathSync(file)], file);
			assert.deepEqual(v.identity, { dev: fs.statSync(file).dev, ino: fs.statSync(file).ino }, file);
		}
		const link = ours.judgeSessionFile(w.files.linkToSession);
		assert.deepEqual([link.ok, link.viaLink, link.path, link.target], [true, true, w.files.linkToSession, fs.realpathSync(w.files.linkToSession)]);
		const damaged = ours.judgeSessionFile(w.files.tornHeaderInFolder, { sessionDir: w.sessionDir });
		assert.deepEqual([damaged.ok, damaged.damaged], [true, true]);
		for (const file of [w.files.jsonl, w.files.text, w.files.folder, w.files.linkToText, w.files.tornHeaderElsewhere, w.files.linkToDevNull, w.files.dangling]) {
			const v = ours.judgeSessionFile(file);
			assert.equal(v.ok, false, file);
			// The same words as repairSession's refusal.
			assert.throws(() => ours.repairSession(file, { dryRun: true }), { message: `${v.path} ${v.reason}; not repaired` }, file);
		}
		assert.throws(() => ours.judgeSessionFile(5), TypeError);
		assert.throws(() => ours.judgeSessionFile(w.files.session, { sessionDir: 5 }), TypeError);
		assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] });
	} finally {
		w.cleanup();
	}
});

// --- export -o ---------------------------------------------------------------------------------

test("export -o never replaces a pi session nor the session exported, even with --force", () => {
	const w = guardWorld();
	try {
		const f = w.files;
		const rows = [
			["the session exported", f.exported, new RegExp(`${esc(f.exported)} is the session being exported`)],
			["another session", f.session, new RegExp(`${esc(f.session)} is a pi session file, never replaced`)],
			["a torn session", f.tornTail, new RegExp(`${esc(f.tornTail)} is a pi session file, never replaced`)],
			["a damaged session in pi's folder", f.tornHeaderInFolder, new RegExp(`${esc(f.tornHeaderInFolder)} is a pi session file, never replaced`)],
			["a symlink to a session", f.linkToSession, new RegExp(`${esc(f.linkToSession)} is a symlink to ${esc(w.linkedSession)}, which is a pi session file, never replaced`)],
			["a folder", f.folder, new RegExp(`${esc(f.folder)} is a folder`)],
			["a dangling symlink", f.dangling, new RegExp(`${esc(f.dangling)} is a symlink to nowhere\\.jsonl, which does not exist`)],
		];
		for (const [what, out, reason] of rows) {
			for (const force of [[], ["--force"]]) {
				const before = snapshot(w.root);
				const r = run(w, ["export", ID, "--format", "jsonl", ...force, "-o", out]);
				assertOneLine(r, 2, new RegExp(`^pi-sessions: export: ${reason.source}; nothing written$`), `export -o ${what} ${force}`);
				assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] }, `export -o ${what} ${force}`);
			}
		}
	} finally {
		w.cleanup();
	}
});

test("export -o replaces another existing file only with --force; a new file is created; a FIFO or /dev/null is written into", async () => {
	const w = guardWorld();
	try {
		const f = w.files;
		const expected = run(w, ["export", ID, "--format", "jsonl"]).stdout;
		assert.ok(expected.length > 0);
		// Once replaced, a file holds a session: the symlink gets a text file of its own.
		const other = path.join(w.root, "files", "other.txt");
		fs.writeFileSync(other, "other notes\n");
		const linkToOther = path.join(w.root, "files", "link-to-other");
		fs.symlinkSync("other.txt", linkToOther);
		for (const [what, out, target] of [
			["a text file", f.text, f.text],
			["a JSONL file that is not a session", f.jsonl, f.jsonl],
			["a symlink to a text file", linkToOther, other],
		]) {
			const before = snapshot(w.root);
			const refused = run(w, ["export", ID, "--format", "jsonl", "-o", out]);
			assertOneLine(
				refused,
				2,
				new RegExp(`^pi-sessions: export: ${esc(out)} exists \\(not a pi session file\\); add --force to replace it; nothing written$`),
				`export -o ${what} without --force (not on a terminal)`,
			);
			assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [] }, what);
			const ino = fs.statSync(target).ino;
			const forced = run(w, ["export", ID, "--format", "jsonl", "--force", "-o", out]);
			assert.equal(forced.status, 0, forced.stderr);
			assert.equal(fs.readFileSync(target, "utf8"), expected, `${what}: replaced with the export`);
			assert.equal(fs.statSync(target).ino, ino, `${what}: written in place`);
			assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [], changed: [rel(w, target)] }, `${what}: only it changed`);
		}
		// A new file: created, nothing else touched.
		const fresh = path.join(w.root, "files", "export.jsonl");
		const before = snapshot(w.root);
		assert.equal(run(w, ["export", ID, "--format", "jsonl", "-o", fresh]).status, 0);
		assert.equal(fs.readFileSync(fresh, "utf8"), expected);
		assert.deepEqual(diff(before, snapshot(w.root)), { removed: [], added: [rel(w, fresh)], changed: [] });
		// The export is a session now: never replaced again.
		assert.equal(run(w, ["export", ID, "--force", "-o", fresh]).status, 2);
		assertOneLine(run(w, ["export", ID, "--force"]), 2, /--force is for -o FILE/, "--force without -o");
		// /dev/null (through a symlink first) and a FIFO are streams: written into, nothing replaced.
		for (const out of [f.linkToDevNull, "/dev/null"]) {
			const s = snapshot(w.root);
			const r = run(w, ["export", ID, "-o", out]);
			assert.equal(r.status, 0, r.stderr);
			devNullIsIntact();
			assert.deepEqual(diff(s, snapshot(w.root)), { removed: [], added: [], changed: [] });
		}
		if (f.fifo) {
			const reader = spawn(process.execPath, ["-e", `process.stdout.write(require("fs").readFileSync(process.argv[1]))`, f.fifo], { stdio: ["ignore", "pipe", "inherit"] });
			const chunks = [];
			reader.stdout.on("data", (c) => chunks.push(c));
			// 'close', not 'exit': the output may still be arriving when the process exits.
			const done = new Promise((resolve) => reader.on("close", resolve));
			const r = run(w, ["export", ID, "--format", "jsonl", "-o", f.fifo]);
			assert.equal(r.status, 0, r.stderr);
			assert.equal(await done, 0);
			assert.equal(Buffer.concat(chunks).toString("utf8"), expected);
			assert.ok(fs.lstatSync(f.fifo).isFIFO(), "the FIFO is still a FIFO");
		}
	} finally {
		w.cleanup();
	}
});

test("repairSession never replaces a file already named like its backup", () => {
	const w = guardWorld();
	const realNow = Date.now;
	try {
		const now = Date.parse("2026-03-04T05:06:07.089Z");
		Date.now = () => now;
		const taken = `${w.files.tornTail}.bak-2026-03-04T05-06-07-089Z`;
		fs.writeFileSync(taken, "not a backup of ours\n");
		const result = ours.repairSession(w.files.tornTail);
		assert.equal(result.applied, true);
		assert.equal(result.backup, `${w.files.tornTail}.bak-2026-03-04T05-06-07-090Z`);
		assert.equal(fs.readFileSync(taken, "utf8"), "not a backup of ours\n");
	} finally {
		Date.now = realNow;
		w.cleanup();
	}
});
