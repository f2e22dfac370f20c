// pi-sessions, the command line: the real bin run as a child process. --json of every
// command against the reference (and the API) on the same files, human output against
// golden files, damaged files repaired and opened by the reference, and bad input.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { fileNameFor, fixedSession, golden, makeWorld, normalizeRoot, runCli, writeSession } from "./helpers/cli.mjs";
import { createRequire } from "node:module";
import { reference } from "./helpers/reference.mjs";

const RefSM = reference.SessionManager;
// The package as users require it (checkSession and repairSession are beyond the reference).
const ours = createRequire(import.meta.url)("../index.js");
const ID = "0198f3a2-5b6c-7d8e-9f00-000000000001";
const ID2 = "0198f3a2-5b6c-7d8e-9f00-100000000002";
const OTHER = "01990000-aaaa-7bbb-8ccc-000000000003";

const world = makeWorld();
after(() => world.cleanup());
// The reference reads the agent dir from the environment at each call.
process.env.PI_CODING_AGENT_DIR = world.agentDir;

const START = "2026-01-02T03:04:05.000Z";
const fixedFile = writeSession(
	path.join(world.sessionDir, fileNameFor(START, ID)),
	fixedSession({ id: ID, cwd: world.project, name: "Listing files" }),
);
// A second session in the project, and one in another project, for resolution.
const otherProject = path.join(world.root, "other");
fs.mkdirSync(otherProject);
const secondFile = writeSession(
	path.join(world.sessionDir, fileNameFor("2026-01-03T00:00:00.000Z", ID2)),
	fixedSession({ id: ID2, cwd: world.project, start: Date.parse("2026-01-03T00:00:00.000Z"), extra: false }),
);
const otherFile = writeSession(
	path.join(world.sessionDirOf(otherProject), fileNameFor("2026-01-04T00:00:00.000Z", OTHER)),
	fixedSession({ id: OTHER, cwd: otherProject, start: Date.parse("2026-01-04T00:00:00.000Z"), extra: false }),
);

const json = (value) => JSON.parse(JSON.stringify(value));

function ok(args, opts) {
	const r = runCli(world, args, opts);
	assert.equal(r.status, 0, `pi-sessions ${args.join(" ")}: exit ${r.status}\n${r.stderr}`);
	return r;
}

function oneLineError(r, status, pattern) {
	assert.equal(r.status, status, `exit ${r.status}, stderr: ${r.stderr}`);
	const lines = r.stderr.split("\n").filter(Boolean);
	assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
	assert.match(lines[0], /^pi-sessions: /);
	assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
	if (pattern) assert.match(lines[0], pattern);
}

// --- --json against the reference --------------------------------------------------

test("ls --json is SessionManager.list of the reference; ls --all --json is listAll", async () => {
	const local = JSON.parse(ok(["ls", "--json"]).stdout);
	assert.deepEqual(local, json(await RefSM.list(world.project)));
	assert.equal(local.length, 2);
	const all = JSON.parse(ok(["ls", "--all", "--json"]).stdout);
	assert.deepEqual(all, json(await RefSM.listAll()));
	assert.equal(all.length, 3);
	const limited = JSON.parse(ok(["ls", "--all", "--json", "--limit", "1"]).stdout);
	assert.deepEqual(limited, json((await RefSM.listAll()).slice(0, 1)));
	// --session-dir names the folder, as pi's option does.
	const dir = JSON.parse(ok(["ls", "--json", "--session-dir", world.sessionDirOf(otherProject)], { cwd: otherProject }).stdout);
	assert.deepEqual(dir, json(await RefSM.list(otherProject, world.sessionDirOf(otherProject))));
});

test("show, tree, context and info --json are the reference's getBranch, getEntries, getTree, buildSessionContext, header", () => {
	const ref = RefSM.open(fixedFile);
	assert.deepEqual(JSON.parse(ok(["show", "--json", ID]).stdout), json(ref.getBranch()));
	assert.deepEqual(JSON.parse(ok(["show", "--json", "--all-branches", ID]).stdout), json(ref.getEntries()));
	assert.deepEqual(JSON.parse(ok(["tree", "--json", ID]).stdout), json(ref.getTree()));
	assert.deepEqual(JSON.parse(ok(["context", "--json", ID]).stdout), json(ref.buildSessionContext()));
	const info = JSON.parse(ok(["info", "--json", ID]).stdout);
	for (const [k, v] of Object.entries(ref.getHeader())) assert.deepEqual(info[k], v, k);
	assert.equal(info.file, fixedFile);
	assert.equal(info.size, fs.statSync(fixedFile).size);
	assert.equal(info.entries, ref.getEntries().length);
	assert.equal(info.name, ref.getSessionName());
	assert.equal(info.leafId, ref.getLeafId());
	assert.deepEqual(info.parentChain, []);
});

test("info --json follows the parentSession chain, a missing parent marked", () => {
	const dir = path.join(world.root, "chain");
	const child = writeSession(path.join(dir, fileNameFor("2026-03-01T00:00:00.000Z", "c1")), [
		{ type: "session", version: 3, id: "c1", timestamp: "2026-03-01T00:00:00.000Z", cwd: world.project, parentSession: path.join(dir, "mid.jsonl") },
	]);
	writeSession(path.join(dir, "mid.jsonl"), [
		{ type: "session", version: 3, id: "mid", timestamp: "2026-02-01T00:00:00.000Z", cwd: world.project, parentSession: fixedFile },
	]);
	const info = JSON.parse(ok(["info", "--json", child]).stdout);
	assert.deepEqual(
		info.parentChain.map((p) => [p.path, p.exists, p.id]),
		[
			[path.join(dir, "mid.jsonl"), true, "mid"],
			[fixedFile, true, ID],
		],
	);
	assert.equal(info.parentSession, RefSM.open(child).getHeader().parentSession);
	const orphan = writeSession(path.join(dir, "orphan.jsonl"), [
		{ type: "session", version: 3, id: "o1", timestamp: "2026-03-01T00:00:00.000Z", cwd: world.project, parentSession: path.join(dir, "gone.jsonl") },
	]);
	assert.deepEqual(JSON.parse(ok(["info", "--json", orphan]).stdout).parentChain, [{ path: path.join(dir, "gone.jsonl"), exists: false }]);
});

test("path resolves as pi --session: exact id, prefix here, then other projects", async () => {
	assert.equal(ok(["path", ID]).stdout, `${fixedFile}\n`);
	assert.equal(ok(["path", ID]).stdout.trim(), RefSM.findById(world.project, ID));
	assert.equal(ok(["path", ID.slice(0, 25)]).stdout.trim(), fixedFile);
	assert.equal(ok(["path", ID2.slice(0, 25)]).stdout.trim(), secondFile);
	// Only in the other project: found by listAll, exact and by prefix.
	assert.equal(ok(["path", OTHER]).stdout.trim(), otherFile);
	assert.equal(ok(["path", "0199"]).stdout.trim(), otherFile);
	assert.equal(ok(["path", fixedFile]).stdout.trim(), fixedFile);
	assert.equal(ok(["path", path.relative(world.project, fixedFile)]).stdout.trim(), fixedFile);
	// Two local sessions share this prefix: an error naming both, where pi takes the first.
	const r = runCli(world, ["path", "0198f3a2"]);
	oneLineError(r, 1, /'0198f3a2' matches 2 sessions in this project: .*0198f3a2-5b6c-7d8e-9f00-[01]0000000000[12]/);
	oneLineError(runCli(world, ["path", "ffff"]), 1, /No session found matching 'ffff'/);
});

test("export --format jsonl is the branch as a session file the reference opens; md to -o", () => {
	const out = path.join(world.root, "export", fileNameFor("2026-02-01T00:00:00.000Z", ID));
	fs.mkdirSync(path.dirname(out), { recursive: true });
	ok(["export", ID, "--format", "jsonl", "-o", out]);
	const ref = RefSM.open(fixedFile);
	const exported = RefSM.open(out);
	assert.deepEqual(exported.getHeader(), ref.getHeader());
	assert.deepEqual(exported.getEntries(), ref.getBranch());
	assert.deepEqual(exported.buildSessionContext(), ref.buildSessionContext());
	const md = path.join(world.root, "export", "s.md");
	ok(["export", ID, "-o", md]);
	assert.equal(fs.readFileSync(md, "utf8"), ok(["export", ID]).stdout);
	oneLineError(runCli(world, ["export", ID, "--format", "pdf"]), 2, /--format is md or jsonl/);
});

test("doctor --json and repair --dry-run --json are checkSession and repairSession", () => {
	const damaged = path.join(world.root, "doctor", "d.jsonl");
	const lines = fixedSession({ id: ID, cwd: world.project }).map((e) => JSON.stringify(e));
	fs.mkdirSync(path.dirname(damaged), { recursive: true });
	fs.writeFileSync(damaged, lines.join("\n") + "\n" + lines[3].slice(0, 20));
	const before = fs.readFileSync(damaged);
	const doctor = runCli(world, ["doctor", "--json", damaged]);
	assert.equal(doctor.status, 1, "doctor exits 1 when it finds a problem");
	assert.deepEqual(JSON.parse(doctor.stdout), json(ours.checkSession(damaged)));
	const plan = JSON.parse(ok(["repair", "--dry-run", "--json", damaged]).stdout);
	const api = json(ours.repairSession(damaged, { dryRun: true }));
	assert.deepEqual(plan, api);
	assert.equal(plan.applied, false);
	assert.deepEqual(plan.actions.map((a) => [a.problem, a.line]), [["torn-last-line", lines.length + 1]]);
	assert.deepEqual(fs.readFileSync(damaged), before, "a dry run writes nothing");
	assert.equal(ok(["doctor", "--json", fixedFile]).stdout.includes('"findings": []'), true);
});

test("stats --json is getSessionStats of the session; without one, usageReport", async () => {
	assert.deepEqual(JSON.parse(ok(["stats", ID, "--json"]).stdout), json(ours.getSessionStats(fixedFile)));
	// Default: this project, by model.
	assert.deepEqual(JSON.parse(ok(["stats", "--json"]).stdout), json(await ours.usageReport({ cwd: world.project, groupBy: "model" })));
	const all = JSON.parse(ok(["stats", "--all", "--json"]).stdout);
	assert.deepEqual(all, json(await ours.usageReport({ groupBy: "model" })));
	assert.equal(all.totals.sessions, 3, "the three sessions of both projects");
	for (const by of ["day", "week", "month", "project", "session"]) {
		const r = ok(["stats", "--all", "--by", by, "--tz", "UTC", "--since", "2026-01-03", "--until", "2026-01-04", "--json"]);
		const expected = await ours.usageReport({ groupBy: by, timezone: "UTC", since: "2026-01-03", until: "2026-01-04" });
		assert.deepEqual(JSON.parse(r.stdout), json(expected), `--by ${by}`);
		assert.equal(expected.totals.sessions, 2, "--since leaves out the first session");
	}
});

test("stats: human output has the session's totals, and a report's rows and total", async () => {
	const stats = ours.getSessionStats(fixedFile);
	const one = ok(["stats", ID]).stdout;
	assert.match(one, new RegExp(`^total tokens\\s+${stats.tokens.total}$`, "m"));
	assert.match(one, new RegExp(`^messages\\s+${stats.totalMessages} \\(${stats.userMessages} user, ${stats.assistantMessages} assistant`, "m"));
	assert.match(one, /^anthropic\/claude-test\s+\d+\s+\$0\.0000$/m);
	const report = await ours.usageReport({ groupBy: "project", timezone: "UTC" });
	const lines = ok(["stats", "--all", "--by", "project", "--tz", "UTC"]).stdout.trimEnd().split("\n");
	assert.match(lines[0], /^PROJECT\s+INPUT\s+OUTPUT\s+CACHE READ\s+CACHE WRITE\s+TOTAL\s+COST\s+SESSIONS$/);
	assert.equal(lines.length, report.rows.length + 2);
	report.rows.forEach((row, i) => {
		const cells = lines[i + 1].split(/\s{2,}/);
		assert.deepEqual(cells, [row.key, ...[row.input, row.output, row.cacheRead, row.cacheWrite, row.totalTokens].map((n) => n.toLocaleString("en-US")), `$${row.cost.toFixed(4)}`, String(row.sessions)]);
	});
	const t = report.totals;
	assert.deepEqual(lines.at(-1).split(/\s{2,}/), ["total", ...[t.input, t.output, t.cacheRead, t.cacheWrite, t.totalTokens].map((n) => n.toLocaleString("en-US")), `$${t.cost.toFixed(4)}`, String(t.sessions)]);
	// Columns line up: every line's SESSIONS column ends at the same place.
	assert.equal(new Set(lines.map((l) => l.length)).size, 1, lines.join("\n"));
});

// --- human output: golden files ------------------------------------------------------

// The same session with a fixed cwd, outside the agent dir: its bytes (and size) do not
// depend on where the temp dir is.
const goldenFile = writeSession(
	path.join(world.root, "golden", fileNameFor(START, ID)),
	fixedSession({ id: ID, cwd: "/home/user/project", name: "Listing files" }),
);
const GOLDEN_COMMANDS = [
	["info", ["info", goldenFile]],
	["show", ["show", goldenFile]],
	["show-tail", ["show", goldenFile, "--tail", "2"]],
	["show-all-branches", ["show", goldenFile, "--all-branches"]],
	["tree", ["tree", goldenFile]],
	["context", ["context", goldenFile]],
	["export-md", ["export", goldenFile]],
	["doctor-clean", ["doctor", goldenFile]],
	["stats", ["stats", goldenFile]],
	["help", ["--help"]],
];

for (const [name, args] of GOLDEN_COMMANDS) {
	test(`human output of pi-sessions ${args[0]} ${args.slice(2).join(" ")} (golden ${name}.txt)`, () => {
		const r = ok(args, { env: { COLUMNS: "80" } });
		const text = normalizeRoot(r.stdout, world);
		assert.equal(text, golden(`${name}.txt`, text));
		assert.doesNotMatch(r.stdout, /\x1b\[/, "no colour in a pipe");
	});
}

test("ls: aligned columns fitted to COLUMNS, newest first (golden ls.txt)", () => {
	const w = makeWorld("pi-cli-ls-");
	try {
		const now = Date.now();
		// Timestamps a fixed distance before now, so the relative times are fixed.
		writeSession(
			path.join(w.sessionDir, fileNameFor("2026-01-01T00:00:00.000Z", ID)),
			fixedSession({ id: ID, cwd: w.project, start: now - 3 * 3600e3 - 60e3, name: "Listing files" }),
		);
		writeSession(
			path.join(w.sessionDir, fileNameFor("2026-01-01T00:00:01.000Z", ID2)),
			fixedSession({ id: ID2, cwd: w.project, start: now - 2 * 86400e3, extra: false }),
		);
		const r = runCli(w, ["ls"], { env: { COLUMNS: "60" } });
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stdout, golden("ls.txt", r.stdout));
		for (const line of r.stdout.trimEnd().split("\n")) assert.ok(line.length <= 60, line);
	} finally {
		w.cleanup();
	}
});

test("listing cache: $XDG_CACHE_HOME/pi-session-native by default (0700, file 0600), moved by PI_SESSION_NATIVE_CACHE_DIR, off when it is empty or with --no-cache", () => {
	const w = makeWorld("pi-cli-cache-");
	try {
		writeSession(path.join(w.sessionDir, fileNameFor(START, ID)), fixedSession({ id: ID, cwd: w.project, name: "Listing files" }));
		writeSession(
			path.join(w.sessionDirOf(otherProject), fileNameFor("2026-01-04T00:00:00.000Z", OTHER)),
			fixedSession({ id: OTHER, cwd: otherProject, extra: false }),
		);
		const cacheFiles = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".bin")).sort() : []);
		const mode = (p) => fs.statSync(p).mode & 0o777;
		const run = (args, env) => {
			const r = runCli(w, args, { env });
			assert.equal(r.status, 0, r.stderr);
			assert.equal(r.stderr, "");
			return r.stdout;
		};
		const byDefault = path.join(w.root, "cache", "pi-session-native");
		const commands = [["ls", "--all"], ["ls", "--all", "--json"], ["ls"], ["search", "files", "--all"], ["stats", "--all"], ["stats", "--all", "--json"]];
		const first = commands.map((args) => run(args));
		assert.equal(mode(byDefault), 0o700);
		assert.deepEqual(cacheFiles(byDefault), ["pi-session-native-listing.v4.bin", "pi-session-native-usage.v1.bin"]);
		for (const name of cacheFiles(byDefault)) assert.equal(mode(path.join(byDefault, name)), 0o600, name);
		// A second run answers from the cache, with the same output.
		assert.deepEqual(commands.map((args) => run(args)), first);
		// Without XDG_CACHE_HOME: ~/.cache.
		run(["ls", "--all"], { XDG_CACHE_HOME: "" });
		assert.deepEqual(cacheFiles(path.join(w.root, ".cache", "pi-session-native")), ["pi-session-native-listing.v4.bin"]);
		const moved = path.join(w.root, "elsewhere");
		assert.deepEqual(commands.map((args) => run(args, { PI_SESSION_NATIVE_CACHE_DIR: moved })), first);
		assert.deepEqual(cacheFiles(moved), ["pi-session-native-listing.v4.bin", "pi-session-native-usage.v1.bin"]);
		// Off: nothing written anywhere.
		const off = path.join(w.root, "off");
		assert.deepEqual(commands.map((args) => run(args, { PI_SESSION_NATIVE_CACHE_DIR: "", XDG_CACHE_HOME: off })), first);
		assert.deepEqual(commands.map((args) => run([...args, "--no-cache"], { XDG_CACHE_HOME: off })), first);
		assert.equal(fs.existsSync(off), false);
		// A folder inside pi's session folders is refused with a warning; the listing still answers.
		const inside = runCli(w, ["ls", "--all"], { env: { PI_SESSION_NATIVE_CACHE_DIR: path.join(w.agentDir, "sessions", "cache") } });
		assert.equal(inside.status, 0);
		assert.equal(inside.stdout, first[0]);
		assert.match(inside.stderr, /^pi-sessions: no listing cache: .*must not be inside/);
		assert.equal(fs.existsSync(path.join(w.agentDir, "sessions", "cache")), false);
	} finally {
		w.cleanup();
	}
});

test("colour: FORCE_COLOR forces it, NO_COLOR and pipes have none", () => {
	assert.match(ok(["tree", ID], { env: { FORCE_COLOR: "1" } }).stdout, /\x1b\[36m/);
	assert.doesNotMatch(ok(["tree", ID], { env: { NO_COLOR: "1" } }).stdout, /\x1b\[/);
	assert.doesNotMatch(ok(["tree", ID]).stdout, /\x1b\[/);
	// A progress line only goes to a terminal: none in a pipe.
	assert.equal(ok(["ls", "--all"]).stderr, "");
});

test("--help on every command", () => {
	for (const c of ["ls", "info", "show", "tree", "context", "path", "export", "rm", "doctor", "repair"]) {
		const r = ok([c, "--help"]);
		assert.match(r.stdout, new RegExp(`^Usage: pi-sessions ${c}`));
		assert.match(r.stdout, /--session-dir DIR/);
		assert.equal(ok(["help", c]).stdout, r.stdout);
	}
});

// --- damaged files -------------------------------------------------------------------

function damagedWorld() {
	const w = makeWorld("pi-cli-damage-");
	const entries = fixedSession({ id: ID, cwd: w.project, name: "Listing files" });
	const lines = entries.map((e) => JSON.stringify(e));
	const file = path.join(w.sessionDir, fileNameFor(START, ID));
	return { w, entries, lines, file };
}

/** Repairs with the CLI, then the reference opens the file and holds `expected` (the header first). */
function repairAndOpen({ w, file }, expected, { findings, remaining = [] }) {
	const doctor = runCli(w, ["doctor", "--json", file]);
	assert.equal(doctor.status, 1, doctor.stderr);
	assert.deepEqual(JSON.parse(doctor.stdout).findings.map((f) => f.problem), findings);
	const before = fs.readFileSync(file);
	const mode = fs.statSync(file).mode;
	const r = runCli(w, ["repair", "--json", file]);
	assert.equal(r.status, 0, r.stderr);
	const result = JSON.parse(r.stdout);
	assert.equal(result.applied, true);
	assert.match(path.basename(result.backup), /\.jsonl\.bak-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
	assert.deepEqual(fs.readFileSync(result.backup), before, "the original is kept beside the file");
	assert.equal(fs.statSync(file).mode, mode, "the repaired file keeps the original's mode");
	assert.deepEqual(fs.readdirSync(path.dirname(file)).filter((n) => n.endsWith(".tmp")), []);
	const ref = RefSM.open(file);
	assert.deepEqual([ref.getHeader(), ...ref.getEntries()], expected);
	assert.deepEqual(result.after.findings.map((f) => f.problem), remaining);
	assert.equal(runCli(w, ["doctor", file]).status, remaining.length ? 1 : 0, "doctor after the repair");
	return result;
}

test("damage: a write cut mid-line (truncate) loses only the cut entry", () => {
	const d = damagedWorld();
	try {
		const text = d.lines.join("\n") + "\n";
		fs.writeFileSync(d.file, text);
		fs.truncateSync(d.file, text.length - 1 - Math.floor(d.lines.at(-1).length / 2));
		fs.chmodSync(d.file, 0o640);
		repairAndOpen(d, d.entries.slice(0, -1), { findings: ["torn-last-line"] });
	} finally {
		d.w.cleanup();
	}
});

test("damage: the next append glued onto a torn line is recovered", () => {
	const d = damagedWorld();
	try {
		const cut = d.lines.slice(0, 6).join("\n") + "\n" + d.lines[6].slice(0, 50);
		// The next entry landed right after the torn bytes, then the rest as usual.
		fs.writeFileSync(d.file, cut + d.lines.slice(7).join("\n") + "\n");
		const refBefore = RefSM.open(d.file);
		assert.equal(refBefore.getEntries().length, d.entries.length - 3, "the reference loses the glued entry");
		fs.writeFileSync(d.file, cut + d.lines.slice(7).join("\n") + "\n");
		const expected = [...d.entries.slice(0, 6), ...d.entries.slice(7)];
		// The torn entry is lost for good: its child is an orphan now.
		repairAndOpen(d, expected, { findings: ["glued-entry", "orphan"], remaining: ["orphan"] });
	} finally {
		d.w.cleanup();
	}
});

test("damage: a NUL-filled tail (ftruncate extension), then an append after the NULs", () => {
	const d = damagedWorld();
	try {
		fs.writeFileSync(d.file, d.lines.slice(0, -1).join("\n") + "\n");
		const fd = fs.openSync(d.file, "r+");
		fs.ftruncateSync(fd, fs.fstatSync(fd).size + 8192);
		fs.closeSync(fd);
		fs.appendFileSync(d.file, d.lines.at(-1) + "\n");
		repairAndOpen(d, d.entries, { findings: ["nul-padding"] });
		// A zero tail alone (nothing after it): dropped.
		const fd2 = fs.openSync(d.file, "r+");
		fs.ftruncateSync(fd2, fs.fstatSync(fd2).size + 3000);
		fs.closeSync(fd2);
		repairAndOpen(d, d.entries, { findings: ["nul-padding"] });
	} finally {
		d.w.cleanup();
	}
});

test("damage: a lost header is rebuilt from the file name and the folder's cwd", () => {
	const d = damagedWorld();
	try {
		// Another session in the folder tells the cwd.
		writeSession(path.join(d.w.sessionDir, fileNameFor("2026-01-03T00:00:00.000Z", ID2)), fixedSession({ id: ID2, cwd: d.w.project, extra: false }));
		fs.writeFileSync(d.file, d.lines.slice(1).join("\n") + "\n");
		assert.throws(() => RefSM.open(d.file), /not a valid pi session/);
		repairAndOpen(d, d.entries, { findings: ["missing-header"] });
		// Alone in its folder, the folder's name gives the cwd (its dashes read as separators).
		const alone = path.join(d.w.agentDir, "sessions", "--tmp-work--", fileNameFor(START, ID));
		writeSession(alone, d.entries.slice(1));
		const r = runCli(d.w, ["repair", "--json", alone]);
		assert.equal(r.status, 0, r.stderr);
		assert.equal(RefSM.open(alone).getHeader().cwd, "/tmp/work");
		assert.deepEqual(RefSM.open(alone).getEntries(), d.entries.slice(1));
	} finally {
		d.w.cleanup();
	}
});

test("damage: CRLF line ends are reported and made LF; pi reads the same entries", () => {
	const d = damagedWorld();
	try {
		fs.writeFileSync(d.file, d.lines.join("\r\n") + "\r\n");
		const r = runCli(d.w, ["doctor", "--json", d.file]);
		assert.equal(JSON.parse(r.stdout).findings.length, d.lines.length);
		repairAndOpen(d, d.entries, { findings: Array(d.lines.length).fill("crlf") });
		assert.equal(fs.readFileSync(d.file, "utf8"), d.lines.join("\n") + "\n");
	} finally {
		d.w.cleanup();
	}
});

test("damage: a file the reference cannot read (a NUL run longer than V8's strings) opens after repair", () => {
	const d = damagedWorld();
	try {
		fs.writeFileSync(d.file, d.lines.join("\n") + "\n");
		const fd = fs.openSync(d.file, "r+");
		fs.ftruncateSync(fd, fs.fstatSync(fd).size + (1 << 29));
		fs.closeSync(fd);
		if (process.env.PI_CLI_SLOW_TESTS === "1") {
			// Minutes here: the reference searches its growing line for "\n" after every 1 MiB read.
			assert.throws(() => RefSM.open(d.file), (e) => e instanceof RangeError && /Invalid string length/.test(e.message));
		}
		const report = JSON.parse(runCli(d.w, ["doctor", "--json", d.file]).stdout);
		assert.equal(report.opensInReference, false);
		assert.deepEqual(report.findings.map((f) => f.problem).sort(), ["nul-padding", "too-large"]);
		repairAndOpen(d, d.entries, { findings: report.findings.map((f) => f.problem) });
		assert.equal(fs.statSync(d.file).size, Buffer.byteLength(d.lines.join("\n") + "\n"));
	} finally {
		d.w.cleanup();
	}
});

test("damage: problems without a safe repair (repeated ids, orphans, cycles) are left as they are", () => {
	const d = damagedWorld();
	try {
		const extra = [
			{ type: "custom", id: "u0000001", parentId: "a0000002", timestamp: START, customType: "x" },
			{ type: "custom", id: "o0000001", parentId: "gone0001", timestamp: START, customType: "x" },
			{ type: "custom", id: "c0000001", parentId: "c0000002", timestamp: START, customType: "x" },
			{ type: "custom", id: "c0000002", parentId: "c0000001", timestamp: START, customType: "x" },
		];
		fs.writeFileSync(d.file, [...d.lines, ...extra.map((e) => JSON.stringify(e))].join("\n") + "\n");
		const before = fs.readFileSync(d.file);
		const problems = JSON.parse(runCli(d.w, ["doctor", "--json", d.file]).stdout).findings.map((f) => f.problem);
		// The repeated u0000001 (parent a0000002) closes a loop too: the reference's byId keeps the last.
		assert.deepEqual(problems.sort(), ["duplicate-id", "orphan", "parent-cycle", "parent-cycle"]);
		const r = runCli(d.w, ["repair", d.file]);
		assert.equal(r.status, 0, r.stderr);
		assert.match(r.stdout, /no safe repair for these: the file is left as it is/);
		assert.deepEqual(fs.readFileSync(d.file), before);
		assert.equal(fs.readdirSync(d.w.sessionDir).length, 1, "no backup when nothing changes");
	} finally {
		d.w.cleanup();
	}
});

test("doctor without a session checks the project's files; exit 1 when one has a problem", () => {
	const d = damagedWorld();
	try {
		fs.writeFileSync(d.file, d.lines.join("\n") + "\n");
		assert.equal(runCli(d.w, ["doctor"]).status, 0);
		const broken = path.join(d.w.sessionDir, fileNameFor("2026-01-05T00:00:00.000Z", ID2));
		fs.writeFileSync(broken, d.lines.slice(1).join("\n") + "\n");
		const r = runCli(d.w, ["doctor"]);
		assert.equal(r.status, 1);
		assert.match(r.stdout, /2 files checked, 1 with problems/);
		assert.match(r.stdout, /missing-header/);
		assert.equal(JSON.parse(runCli(d.w, ["doctor", "--all", "--json"]).stdout).length, 2);
	} finally {
		d.w.cleanup();
	}
});

// --- rm --------------------------------------------------------------------------------

test("rm: the freedesktop trash without a trash command, the trash command where present, --force deletes", () => {
	const d = damagedWorld();
	try {
		const node = path.dirname(process.execPath);
		const noTrash = { PATH: node };
		fs.writeFileSync(d.file, d.lines.join("\n") + "\n");
		oneLineError(runCli(d.w, ["rm", ID], { env: noTrash }), 2, /add --yes/);
		assert.ok(fs.existsSync(d.file));
		const r = runCli(d.w, ["rm", "--yes", ID], { env: noTrash });
		assert.equal(r.status, 0, r.stderr);
		assert.ok(!fs.existsSync(d.file));
		const trash = path.join(d.w.root, "xdg", "Trash");
		assert.deepEqual(fs.readdirSync(path.join(trash, "files")), [path.basename(d.file)]);
		const info = fs.readFileSync(path.join(trash, "info", `${path.basename(d.file)}.trashinfo`), "utf8");
		assert.match(info, /^\[Trash Info\]\nPath=\/.*\.jsonl\nDeletionDate=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\n$/);
		// A `trash` command on PATH is used instead.
		const bin = path.join(d.w.root, "bin");
		fs.mkdirSync(bin);
		fs.writeFileSync(path.join(bin, "trash"), `#!/bin/sh\nmv "$1" "${d.w.root}/trashed-by-command"\n`, { mode: 0o755 });
		fs.writeFileSync(d.file, d.lines.join("\n") + "\n");
		assert.equal(runCli(d.w, ["rm", "-y", d.file], { env: { PATH: `${bin}:${node}:/usr/bin:/bin` } }).status, 0);
		assert.ok(fs.existsSync(path.join(d.w.root, "trashed-by-command")));
		fs.writeFileSync(d.file, d.lines.join("\n") + "\n");
		assert.equal(runCli(d.w, ["rm", "--force", "--yes", ID]).status, 0);
		assert.ok(!fs.existsSync(d.file));
		assert.deepEqual(fs.readdirSync(path.join(trash, "files")).length, 1);
	} finally {
		d.w.cleanup();
	}
});

// --- bad input -------------------------------------------------------------------------

test("bad input: exit code and one line, no stack trace", () => {
	oneLineError(runCli(world, ["frobnicate"]), 2, /unknown command 'frobnicate'/);
	oneLineError(runCli(world, ["ls", "--frob"]), 2, /Unknown option '--frob'/);
	oneLineError(runCli(world, ["info"]), 2, /missing <session>/);
	oneLineError(runCli(world, ["info", "a", "b"]), 2, /unexpected argument 'b'/);
	oneLineError(runCli(world, ["show", ID, "--tail", "x"]), 2, /--tail takes a whole number/);
	oneLineError(runCli(world, ["stats", "--by", "nonsense"]), 2, /--by takes day, week, month, model, project, session, not 'nonsense'/);
	oneLineError(runCli(world, ["stats", "--since", "yesterday"]), 2, /--since takes a date as YYYY-MM-DD/);
	oneLineError(runCli(world, ["stats", "--all", "--until", "2024-02-30"]), 2, /until/);
	oneLineError(runCli(world, ["stats", "--all", "--tz", "Mars/Olympus"]), 2, /time zone/i);
	oneLineError(runCli(world, ["stats", ID, "--by", "day"]), 2, /--by is for a report across sessions/);
	oneLineError(runCli(world, ["info", "nosuchid"]), 1, /No session found matching 'nosuchid'/);
	oneLineError(runCli(world, ["info", "0198f3a2"]), 1, /matches 2 sessions/);
	oneLineError(runCli(world, ["info", path.join(world.root, "missing.jsonl")]), 1, /no such file/);
	const dir = path.join(world.root, "adir.jsonl");
	fs.mkdirSync(dir, { recursive: true });
	oneLineError(runCli(world, ["info", dir]), 1, /is a directory/);
	oneLineError(runCli(world, ["doctor", dir]), 1, /EISDIR/);
	oneLineError(runCli(world, ["repair", dir]), 2, /adir\.jsonl is a folder, not a pi session file; not repaired$/);
	const garbage = path.join(world.root, "garbage.jsonl");
	fs.writeFileSync(garbage, "not a session\n");
	oneLineError(runCli(world, ["show", garbage]), 1, /not a valid pi session/);
	// PI_SESSIONS_DEBUG=1 adds the stack.
	const debug = runCli(world, ["show", garbage], { env: { PI_SESSIONS_DEBUG: "1" } });
	assert.equal(debug.status, 1);
	assert.match(debug.stderr, /\n\s+at /);
});

test("bad input: an unreadable file", { skip: process.getuid?.() === 0 ? "running as root: every file is readable" : false }, () => {
	const file = path.join(world.root, "unreadable.jsonl");
	fs.copyFileSync(fixedFile, file);
	fs.chmodSync(file, 0);
	oneLineError(runCli(world, ["info", file]), 1, /EACCES/);
	oneLineError(runCli(world, ["doctor", file]), 1, /EACCES/);
});
