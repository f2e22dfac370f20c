// Resources in one long-lived process: file descriptors bounded however many managers
// are alive or waiting for a collection, native memory freed when a manager becomes
// garbage (without anyone calling gc()), and close() / [Symbol.dispose]() releasing
// everything now. Each loop runs in a child process, as a program would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { SessionManager } = require(root);

// The package's own descriptors at any moment: the pool's 16 plus a few in flight.
const DESCRIPTOR_BOUND = 32;

function tempDir(name) {
	return fs.mkdtempSync(path.join(os.tmpdir(), `pisn-${name}-`));
}

/** Runs `script` (CommonJS, the package as `pkg`) in a child under `ulimit -n 256`. */
function child(script, args = [], nodeFlags = []) {
	const program = `const pkg = require(${JSON.stringify(root)});\n${script}`;
	const quoted = [process.execPath, ...nodeFlags, "-e", program, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`);
	const result = spawnSync("bash", ["-c", `ulimit -n 256; exec ${quoted.join(" ")}`], {
		encoding: "utf8",
		maxBuffer: 64 << 20,
	});
	assert.equal(result.status, 0, `child failed:\n${result.stderr}`);
	return JSON.parse(result.stdout.trim().split("\n").pop());
}

const COUNT_FDS = `
const fs = require('fs');
const fds = () => fs.readdirSync('/proc/self/fd').length;
const base = fds();
let most = base;
`;

test("2,000 sessions created one after another under ulimit -n 256: descriptors stay bounded", () => {
	const dir = tempDir("create-many");
	try {
		const report = child(
			`${COUNT_FDS}
			const { SessionManager } = pkg;
			for (let i = 0; i < 2000; i++) {
				const sm = SessionManager.create('/home/dev/project', process.argv[1]);
				sm.appendMessage({ role: 'user', content: 'question ' + i, timestamp: i });
				sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'answer ' + i }], provider: 'p', model: 'm', usage: {}, stopReason: 'stop', timestamp: i });
				most = Math.max(most, fds());
			}
			console.log(JSON.stringify({ base, most, end: fds(), files: fs.readdirSync(process.argv[1]).length }));`,
			[dir],
		);
		assert.equal(report.files, 2000);
		assert.ok(report.most - report.base <= DESCRIPTOR_BOUND, `at most ${report.most - report.base} more descriptors`);
		assert.ok(report.end - report.base <= DESCRIPTOR_BOUND);
		// Every file holds its header and both messages.
		for (const name of fs.readdirSync(dir).slice(0, 50)) {
			assert.equal(fs.readFileSync(path.join(dir, name), "utf8").trim().split("\n").length, 3);
		}
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

function writeSessions(dir, count, entriesPer = 4) {
	const files = [];
	for (let i = 0; i < count; i++) {
		const lines = [{ type: "session", version: 3, id: `0193a0b1-0000-7000-8000-${String(i).padStart(12, "0")}`, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/home/dev/project" }];
		let parentId = null;
		for (let e = 0; e < entriesPer; e++) {
			const id = `${i.toString(16).padStart(4, "0")}${e.toString(16).padStart(4, "0")}`;
			const message = e % 2 === 0 ? { role: "user", content: `question ${i}.${e}`, timestamp: e } : { role: "assistant", content: [{ type: "text", text: `answer ${i}.${e}` }], provider: "p", model: "m", usage: {}, stopReason: "stop", timestamp: e };
			lines.push({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", message });
			parentId = id;
		}
		const file = path.join(dir, `session-${i}.jsonl`);
		fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
		files.push(file);
	}
	return files;
}

test("2,000 existing sessions opened one after another under ulimit -n 256: descriptors stay bounded", () => {
	const dir = tempDir("open-many");
	try {
		writeSessions(dir, 2000);
		const report = child(
			`${COUNT_FDS}
			const { SessionManager } = pkg;
			let messages = 0;
			for (const name of fs.readdirSync(process.argv[1])) {
				const sm = SessionManager.open(require('path').join(process.argv[1], name));
				sm.getBranch();
				messages += sm.buildSessionContext().messages.length;
				most = Math.max(most, fds());
			}
			console.log(JSON.stringify({ base, most, end: fds(), messages }));`,
			[dir],
		);
		assert.equal(report.messages, 2000 * 4);
		assert.ok(report.most - report.base <= DESCRIPTOR_BOUND, `at most ${report.most - report.base} more descriptors`);
		assert.ok(report.end - report.base <= DESCRIPTOR_BOUND);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("2,000 open/drop cycles without gc(): native memory is freed as managers become garbage", () => {
	const dir = tempDir("rss");
	try {
		// About 1 MB and 5,000 entries: some 1.3 MB of native index per open manager,
		// so 2,000 managers that nobody frees would hold about 2.6 GB.
		const [file] = writeSessions(dir, 1, 5000);
		const report = child(
			`const { SessionManager } = pkg;
			const mb = () => process.memoryUsage().rss / 1048576;
			SessionManager.open(process.argv[1]).getBranch();
			global.gc();
			const base = mb();
			let most = base;
			for (let i = 0; i < 2000; i++) {
				const sm = SessionManager.open(process.argv[1]);
				if (sm.getEntryCount() !== 5000) throw new Error('wrong count');
				if (i % 20 === 0) most = Math.max(most, mb());
			}
			console.log(JSON.stringify({ base, most, end: mb() }));`,
			[file],
			["--expose-gc"],
		);
		assert.ok(report.most - report.base < 300, `peak RSS grew by ${Math.round(report.most - report.base)} MB`);
		assert.ok(report.end - report.base < 300, `RSS grew by ${Math.round(report.end - report.base)} MB`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("close() releases the manager now; later calls that need it throw a clear error", () => {
	const dir = tempDir("close");
	try {
		const [file] = writeSessions(dir, 1, 6);
		const fdsOn = () => fs.readdirSync("/proc/self/fd").filter((fd) => {
			try {
				return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
			} catch {
				return false;
			}
		}).length;
		const sm = SessionManager.open(file);
		sm.appendMessage({ role: "user", content: "one more", timestamp: 9 });
		assert.ok(fdsOn() > 0, "the pool keeps the file open after use");
		sm.close();
		assert.equal(fdsOn(), 0, "close() closes the manager's descriptors");
		assert.equal(sm.getCwd(), "/home/dev/project");
		for (const use of [() => sm.getBranch(), () => sm.getEntries(), () => sm.appendMessage({ role: "user", content: "x", timestamp: 1 }), () => sm.buildSessionContext(), () => sm.getSessionFile()]) {
			assert.throws(use, (e) => e instanceof Error && e.message === `SessionManager is closed: ${file}`);
		}
		sm.close(); // twice is fine
		// The file holds what was written before close().
		assert.equal(SessionManager.open(file).getEntryCount(), 7);

		const disposed = SessionManager.inMemory("/x");
		assert.equal(typeof disposed[Symbol.dispose], "function");
		disposed[Symbol.dispose]();
		assert.throws(() => disposed.getLeafId(), /SessionManager is closed/);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("`using sm = SessionManager.open(file)` disposes at the end of the block", (t) => {
	const flag = "--js-explicit-resource-management";
	// Node 22 parses `using` behind the flag, but V8 then calls its own dispose symbol,
	// not Node's Symbol.dispose: even a plain object is not disposed there.
	const probe = "let d = false; { using x = { [Symbol.dispose]() { d = true; } }; } process.exit(d ? 0 : 1);";
	if (spawnSync(process.execPath, [flag, "-e", probe]).status !== 0) {
		t.skip(`this Node's 'using' does not call Symbol.dispose (${process.version})`);
		return;
	}
	const dir = tempDir("using");
	try {
		const [file] = writeSessions(dir, 1, 2);
		const report = child(
			`let outside;
			{
				using sm = pkg.SessionManager.open(process.argv[1]);
				outside = sm;
				if (sm.getEntryCount() !== 2) throw new Error('not open');
			}
			let message = '';
			try { outside.getBranch(); } catch (e) { message = e.message; }
			console.log(JSON.stringify({ message }));`,
			[file],
			[flag],
		);
		assert.equal(report.message, `SessionManager is closed: ${file}`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
