// pi-sessions grep: the real bin as a child process. --json against grepSessions on the
// same files (in the project and with --all; each line the match with the recall tools' hit
// fields, recall-cli.test.mjs compares those with recallSearch's), the human output (grouped by session, the
// context around each match, colour only on a terminal, NO_COLOR), exit statuses as
// grep's (0 found, 1 nothing, 2 bad usage), and the scan reporting a file's matches
// while a later file is still being read.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { BIN, fileNameFor, fixedSession, makeWorld, runCli, writeSession } from "./helpers/cli.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const { grepSessions, SessionManager } = require(path.join(REPO_ROOT, "index.js"));
const native = require(path.join(REPO_ROOT, "binding.js"));

const world = makeWorld("pi-cli-grep-");
after(() => world.cleanup());
process.env.PI_CODING_AGENT_DIR = world.agentDir;

const other = path.join(world.root, "elsewhere");
fs.mkdirSync(other);
const ids = ["0198f3a2-5b6c-7d8e-9f00-000000000001", "0198f3a2-5b6c-7d8e-9f00-000000000002", "0198f3a2-5b6c-7d8e-9f00-000000000003"];
const starts = ["2026-01-02T03:04:05.000Z", "2026-01-03T03:04:05.000Z", "2026-01-04T03:04:05.000Z"];
for (let i = 0; i < ids.length; i++) {
	const cwd = i === 2 ? other : world.project;
	writeSession(
		path.join(world.sessionDirOf(cwd), fileNameFor(starts[i], ids[i])),
		fixedSession({ id: ids[i], cwd, start: Date.parse(starts[i]), name: i === 1 ? "Listing files" : undefined }),
	);
}

const jsonLines = (stdout) => stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
const roundTrip = (matches) => JSON.parse(JSON.stringify(matches));
const LINE_KEYS = ["sessionId", "sessionFile", "cwd", "sessionName", "entryId", "role", "toolName", "timestamp", "snippet", "field", "blockIndex", "text", "ranges"];

/** A grep --json line as docs/cli.md says it is made of grepSessions' match, but for its snippet. */
function expectedLine(match, names) {
	const { path: sessionFile, sessionId, cwd, entryId, timestamp, role, toolName, field, blockIndex, text, ranges } = match;
	return roundTrip({
		sessionId,
		sessionFile,
		cwd,
		sessionName: names.get(sessionFile) ?? null,
		entryId: entryId ?? null,
		role: field === "toolCall" ? "toolCall" : role,
		toolName,
		timestamp: timestamp ?? null,
		field,
		blockIndex,
		text,
		ranges,
	});
}

/** The lines, keys in order, each snippet marking its first match; without the snippets. */
function linesOf(stdout, where) {
	return jsonLines(stdout).map(({ snippet, ...line }) => {
		assert.deepEqual(Object.keys({ snippet, ...line }).sort(), [...LINE_KEYS].sort(), where);
		const [s, e] = line.ranges[0];
		assert.ok(snippet.includes(`«${line.text.slice(s, e).replace(/\s+/g, " ")}»`), `${where}: ${snippet}`);
		return line;
	});
}

test("grep --json streams grepSessions' matches, one per line with the tools' hit fields, in the project and with --all", async () => {
	const names = new Map((await SessionManager.listAll()).map((s) => [s.path, s.name]));
	assert.equal([...names.values()].filter(Boolean).length, 1, "one session is named");
	for (const [pattern, flags, options] of [
		["files", [], {}],
		["FILES", ["-s"], { caseSensitive: true }],
		["re:t(?=xt)", [], {}],
		["re:\\bls\\b", ["--in", "toolCall,text"], { fields: ["toolCall", "text"] }],
		["files", ["--since", "2026-01-03"], { since: "2026-01-03" }],
		["files", ["--limit", "2"], { limit: 2 }],
	]) {
		const here = runCli(world, ["grep", pattern, "--json", ...flags]);
		const expected = await grepSessions(pattern, { cwd: world.project, ...options });
		assert.equal(here.status, expected.length ? 0 : 1, here.stderr);
		assert.deepEqual(linesOf(here.stdout, `${pattern} ${flags}`), expected.map((m) => expectedLine(m, names)), `${pattern} ${flags}`);
		const all = runCli(world, ["grep", pattern, "--all", "--json", ...flags]);
		const everywhere = await grepSessions(pattern, options);
		assert.deepEqual(linesOf(all.stdout, `--all ${pattern} ${flags}`), everywhere.map((m) => expectedLine(m, names)), `--all ${pattern} ${flags}`);
	}
	// A tool call is a "toolCall" hit with its tool's name, a tool result has its tool's name, text none.
	const tools = jsonLines(runCli(world, ["grep", "re:ls|txt", "--in", "toolCall,toolResult,text", "--json"]).stdout);
	assert.deepEqual(
		[...new Set(tools.map((l) => `${l.field} ${l.role} ${l.toolName}`))].sort(),
		["text assistant null", "toolCall toolCall bash", "toolResult toolResult bash"],
	);
	assert.ok(tools.some((l) => l.sessionName === "Listing files"), "the listing's name");
	const all = jsonLines(runCli(world, ["grep", "files", "--all", "--json"]).stdout);
	assert.deepEqual(new Set(all.map((m) => m.sessionId)), new Set(ids), "--all reads every project");
	assert.equal(jsonLines(runCli(world, ["grep", "files", "--json"]).stdout).filter((m) => m.sessionId === ids[2]).length, 0);
});

test("grep groups matches by session under a header, with the context around each match", () => {
	const r = runCli(world, ["grep", "files", "-C", "8"], { env: { COLUMNS: "200" } });
	assert.equal(r.status, 0, r.stderr);
	assert.doesNotMatch(r.stdout, /\x1b\[/, "no colour in a pipe");
	const groups = r.stdout.trimEnd().split("\n\n");
	assert.equal(groups.length, 2, r.stdout);
	// Newest first: the named session, then the other one (its first message as title).
	assert.match(groups[0].split("\n")[0], /^0198f3a2  \S.* ago  Listing files$/);
	assert.match(groups[1].split("\n")[0], /^0198f3a2  \S.* ago  Hello, can you list the files\? In this folder\.$/);
	for (const group of groups) {
		const lines = group.split("\n").slice(1);
		assert.deepEqual(
			lines.map((l) => l.replace(/  \d{4}-\d\d-\d\d \d\d:\d\d  /, "  <time>  ")),
			[
				// Whitespace (the newline) shows as a space; cut text has an ellipsis.
				"  u0000001  <time>  user  …ist the files? In thi…",
				"  a0000002  <time>  assistant  …are two files: a.txt …",
			],
		);
	}
});

test("grep paints matches on a terminal only; NO_COLOR turns it off", () => {
	const forced = runCli(world, ["grep", "two files"], { env: { FORCE_COLOR: "1" } });
	assert.match(forced.stdout, /\x1b\[31m\x1b\[1mtwo files\x1b\[22m\x1b\[39m/);
	// On a real terminal (util-linux `script` gives the child a pty).
	const script = spawnSync("script", ["--version"], { encoding: "utf8" });
	if (script.error) {
		assert.notEqual(process.env.CI, "true", "CI needs `script` (util-linux) for the pty check");
		console.log("# skipped the pty check: no `script` command (util-linux)");
		return;
	}
	const onPty = (env) => {
		const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO_ROOT, "bin", "pi-sessions"))} grep "two files"`;
		const base = { ...process.env };
		for (const k of ["FORCE_COLOR", "NO_COLOR"]) delete base[k];
		return spawnSync("script", ["-qec", command, "/dev/null"], {
			cwd: world.project,
			env: { ...base, PI_CODING_AGENT_DIR: world.agentDir, XDG_CACHE_HOME: path.join(world.root, "cache"), ...env },
			encoding: "utf8",
		});
	};
	const coloured = onPty({});
	assert.equal(coloured.status, 0, coloured.stdout);
	assert.match(coloured.stdout, /\x1b\[31m\x1b\[1mtwo files/);
	const plain = onPty({ NO_COLOR: "1" });
	assert.equal(plain.status, 0, plain.stdout);
	assert.match(plain.stdout, /two files/);
	assert.doesNotMatch(plain.stdout, /\x1b\[3\dm/);
});

test("grep exits 0 when it finds, 1 when it does not, 2 on bad usage with one line on stderr", () => {
	assert.equal(runCli(world, ["grep", "files"]).status, 0);
	const none = runCli(world, ["grep", "nothing-matches-this"]);
	assert.equal(none.status, 1);
	assert.equal(none.stdout, "");
	for (const [args, message] of [
		[["grep"], /^pi-sessions: grep: missing <pattern>/],
		[["grep", "re:("], /^pi-sessions: grep: Invalid regular expression: \/\(\/gi: Unterminated group$/],
		[["grep", "x", "--in", "text,nope"], /^pi-sessions: grep: --in takes fields among .*not 'nope'$/],
		[["grep", "x", "--since", "yesterday-ish"], /^pi-sessions: grep: --since takes a date/],
		[["grep", "x", "-C", "x"], /^pi-sessions: --context takes a whole number/],
		[["grep", "x", "--bogus"], /^pi-sessions: grep: Unknown option '--bogus'/],
	]) {
		const r = runCli(world, args);
		assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
		assert.equal(r.stdout, "");
		assert.match(r.stderr.trimEnd(), message);
		assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
	}
});

test("the scan reports a file's matches while a later file is still being read", { skip: process.platform === "win32" }, async () => {
	const dir = fs.mkdtempSync(path.join(world.root, "fifo-"));
	const first = writeSession(path.join(dir, "a.jsonl"), fixedSession({ id: ids[0], cwd: world.project }));
	const fifo = path.join(dir, "b.jsonl");
	spawnSync("mkfifo", [fifo]);
	assert.ok(fs.statSync(fifo).isFIFO(), "mkfifo made a FIFO");
	// Reading the FIFO blocks until a writer opens it: the first file's matches must come before.
	const messages = [];
	let scan;
	const firstFile = new Promise((resolve) => {
		scan = native.grepSessionFiles([first, fifo], "files", false, false, 1, (m) => {
			messages.push(m.file);
			if (m.file === 0) resolve();
			if (m.file === -1) messages.ended = true;
		});
	});
	await firstFile;
	assert.deepEqual(messages, [0]);
	assert.ok(!messages.ended);
	// Now let the FIFO's reader finish (a writer that closes at once: an empty file).
	fs.closeSync(fs.openSync(fifo, "w"));
	while (!messages.ended) await new Promise((r) => setTimeout(r, 10));
	assert.equal(messages.at(-1), -1);
	scan.cancel();
});

// Without backpressure a scan far ahead of its reader queues all of its output (here
// 120 MB) in the process; with it, the scan waits while stdout is full.
test("a reader that does not read holds the scan back: the CLI queues no output", { skip: process.platform !== "linux" && "reads the peak memory from /proc" }, async () => {
	const dir = fs.mkdtempSync(path.join(world.root, "slow-"));
	const text = "needle ".repeat(150_000);
	const files = 120;
	for (let i = 0; i < files; i++) {
		const lines = [
			{ type: "session", version: 3, id: `slow-${i}`, timestamp: "2024-05-01T00:00:00.000Z", cwd: "/p" },
			{ type: "message", id: "m", parentId: null, timestamp: "2024-05-01T00:00:01.000Z", message: { role: "toolResult", toolCallId: "t", toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: 1 } },
		];
		fs.writeFileSync(path.join(dir, `2024-05-01T00-00-${String(i).padStart(2, "0")}-000Z_slow-${i}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	}
	const child = spawn(process.execPath, [BIN, "grep", "needle", "--json", "--all", "--session-dir", dir, "--no-cache"], {
		env: { ...process.env, PI_CODING_AGENT_DIR: world.agentDir },
		stdio: ["ignore", "pipe", "pipe"],
	});
	const peakKb = () => {
		try {
			return Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]);
		} catch {
			return 0;
		}
	};
	// Not reading for a while: the scan would be done, its output queued.
	child.stdout.pause();
	await new Promise((r) => setTimeout(r, 1500));
	const peakWhilePaused = peakKb();
	let lines = 0;
	let rest = "";
	child.stdout.setEncoding("utf8");
	child.stdout.on("data", (chunk) => {
		const parts = (rest + chunk).split("\n");
		rest = parts.pop();
		lines += parts.length;
	});
	child.stdout.resume();
	let stderr = "";
	child.stderr.on("data", (d) => (stderr += d));
	const status = await new Promise((resolve) => child.on("close", resolve));
	assert.equal(status, 0, stderr);
	assert.equal(lines, files, "every match arrives");
	assert.ok(peakWhilePaused > 0, "the peak was read");
	assert.ok(peakWhilePaused < 100 * 1024 + 60 * 1024, `peak ${peakWhilePaused} KB while nothing was read: output queued`);
	fs.rmSync(dir, { recursive: true, force: true });
});
