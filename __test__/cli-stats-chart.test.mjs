// pi-sessions stats --by day|week|month on a terminal: a bar of each row's cost beside the
// table. The real bin as a child process, on a pseudo-terminal (util-linux `script`) and on
// a pipe: bar lengths proportional to cost (the costliest row full, a half-cost row half, to
// an eighth of a column), green as the CLI paints, uncoloured with NO_COLOR, dropped before
// the table is cut, none for a cost that is not a number, none with --json, on a pipe, or
// by model.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { BIN, fileNameFor, makeWorld, runCli, writeSession } from "./helpers/cli.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";
import { skipForMissingTool } from "./helpers/tools.mjs";

const require = createRequire(import.meta.url);
const { usageReport } = require(path.join(REPO_ROOT, "index.js"));
const out = require(path.join(REPO_ROOT, "bin", "cli", "output.js"));

const world = makeWorld("pi-cli-chart-");
after(() => world.cleanup());
process.env.PI_CODING_AGENT_DIR = world.agentDir;

/** One session on `day` (UTC noon) with one assistant reply per cost. */
function sessionOn(day, costs, n) {
	const start = Date.parse(`${day}T12:00:00.000Z`);
	const id = `0198f3a2-5b6c-7d8e-9f00-${String(n).padStart(12, "0")}`;
	const header = { type: "session", version: 3, id, timestamp: new Date(start).toISOString(), cwd: world.project };
	const replies = costs.map((total, i) => ({
		type: "message",
		id: `a000000${i}`,
		parentId: i === 0 ? null : `a000000${i - 1}`,
		timestamp: new Date(start + 1000 * (i + 1)).toISOString(),
		message: {
			role: "assistant",
			content: [{ type: "text", text: "ok" }],
			provider: "anthropic",
			model: "claude-test",
			usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total } },
			stopReason: "stop",
			timestamp: start + 1000 * (i + 1),
		},
	}));
	writeSession(path.join(world.sessionDir, fileNameFor(header.timestamp, id)), [header, ...replies]);
}

// Weeks: 2026-W01 (January 1-4) costs 2.5, half of 2026-W02 (January 5-11, 5).
// Months up to February 28: January 7.55001, February 3. March 1 costs more than a double holds.
const DAYS = [
	["2026-01-01", [0.5]],
	["2026-01-03", [2]],
	["2026-01-05", [1]],
	["2026-01-08", [0]],
	["2026-01-09", [4]],
	["2026-01-12", [0.05]],
	["2026-01-13", [0.00001]],
	["2026-02-02", [3]],
	["2026-03-01", [1e308, 1e308]],
];
DAYS.forEach(([day, costs], i) => sessionOn(day, costs, i + 1));
const FINITE = ["--all", "--tz", "UTC", "--until", "2026-02-28"];

const BAR_CHARS = /[█▏▎▍▌▋▊▉]/;
const EIGHTHS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
const ANSI = /\x1b\[[0-9;]*m/g;

/** How long a bar is, in eighths of a column (and that it is made of full blocks, then one eighth at most). */
function eighths(bar) {
	const m = bar.match(/^(█*)([▏▎▍▌▋▊▉]?)$/);
	assert.ok(m, `a bar of full blocks and one part: ${JSON.stringify(bar)}`);
	return 8 * m[1].length + EIGHTHS.indexOf(m[2]);
}

/** The table's lines and the bar beside each (uncoloured; "" where none), from a report's output. */
function parse(stdout) {
	const lines = stdout.replace(/\r/g, "").trimEnd().split("\n");
	return lines.map((line) => {
		const plain = line.replace(ANSI, "");
		const m = plain.match(/^(.*?\S)  ([█▏▎▍▌▋▊▉]+)$/);
		return m ? { table: m[1], bar: m[2], raw: line } : { table: plain, bar: "", raw: line };
	});
}

const scriptMissing = () => {
	const r = spawnSync("script", ["--version"], { encoding: "utf8" });
	return r.error || r.status !== 0 ? "no `script` command (util-linux) to give the CLI a terminal" : null;
};
const skip = skipForMissingTool(scriptMissing());

/** pi-sessions with stdout on a pseudo-terminal (stderr, and so the progress line, to /dev/null). */
function onPty(args, env = {}) {
	const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
	const command = `${[process.execPath, BIN, ...args].map(quote).join(" ")} 2>/dev/null`;
	const base = { ...process.env };
	for (const k of ["FORCE_COLOR", "NO_COLOR", "COLUMNS"]) delete base[k];
	const r = spawnSync("script", ["-qec", command, "/dev/null"], {
		cwd: world.project,
		env: { ...base, PI_CODING_AGENT_DIR: world.agentDir, HOME: world.root, XDG_CACHE_HOME: path.join(world.root, "cache"), ...env },
		encoding: "utf8",
	});
	assert.equal(r.status, 0, `pi-sessions ${args.join(" ")} on a terminal: exit ${r.status}\n${r.stdout}${r.stderr}`);
	return r.stdout;
}

test("hbar: eighths of a column, at least one for any positive fraction, none for zero, negative or not a number", () => {
	assert.equal(out.hbar(1, 10), "█".repeat(10));
	assert.equal(out.hbar(0.5, 10), "█".repeat(5));
	assert.equal(out.hbar(0.05, 10), "▌");
	assert.equal(out.hbar(1 / 16, 10), "▋");
	assert.equal(out.hbar(1e-9, 10), "▏");
	assert.equal(out.hbar(2, 10), "█".repeat(10), "never past the width");
	for (const f of [0, -1, NaN, Infinity, -Infinity]) assert.equal(out.hbar(f, 10), "", String(f));
	assert.equal(out.hbar(1, 0), "");
});

test("stats --by day on a terminal: a green bar per row, proportional to cost, the costliest row full", { skip }, async () => {
	const report = await usageReport({ groupBy: "day", timezone: "UTC", until: "2026-02-28" });
	const lines = parse(onPty(["stats", "--by", "day", ...FINITE], { COLUMNS: "200" }));
	assert.equal(lines.length, report.rows.length + 2, lines.map((l) => l.raw).join("\n"));
	assert.equal(lines[0].bar, "", "no bar on the header");
	assert.equal(lines.at(-1).bar, "", "no bar on the total");
	assert.match(lines.at(-1).table, /^total\s/);
	// The table beside the bars is the one a pipe gets, uncoloured.
	const piped = runCli(world, ["stats", "--by", "day", ...FINITE], { env: { COLUMNS: "200" } }).stdout.trimEnd().split("\n");
	assert.deepEqual(lines.map((l) => l.table), piped);
	const most = Math.max(...report.rows.map((r) => r.cost));
	report.rows.forEach((row, i) => {
		const { bar, raw, table } = lines[i + 1];
		assert.ok(table.startsWith(row.key), table);
		assert.equal(eighths(bar), row.cost > 0 ? Math.max(1, Math.round((row.cost / most) * 40 * 8)) : 0, `${row.key}: ${row.cost}`);
		if (bar) assert.ok(raw.endsWith(`\x1b[32m${bar}\x1b[39m`), `green: ${JSON.stringify(raw)}`);
	});
	const barOf = (key) => lines[report.rows.findIndex((r) => r.key === key) + 1].bar;
	assert.equal(barOf("2026-01-09"), "█".repeat(40), "the costliest row: the whole bar");
	assert.equal(barOf("2026-01-03"), "█".repeat(20), "half the cost: half the bar");
	assert.equal(barOf("2026-01-01"), "█".repeat(5));
	assert.equal(barOf("2026-01-12"), "▌", "half a column");
	assert.equal(barOf("2026-01-13"), "▏", "a cost too small for an eighth still shows one");
	assert.equal(barOf("2026-01-08"), "", "no cost, no bar");
	// All lines of the table end at the same column: the bars start together.
	assert.equal(new Set(lines.map((l) => out.displayWidth(l.table))).size, 1);
});

test("stats --by week and --by month draw bars too; --by model, project and session do not", { skip }, () => {
	const weeks = parse(onPty(["stats", "--by", "week", ...FINITE], { COLUMNS: "200" }));
	assert.deepEqual(
		weeks.map((l) => [l.table.split(/\s+/)[0], l.bar.length]),
		[["WEEK", 0], ["2026-W01", 20], ["2026-W02", 40], ["2026-W03", 1], ["2026-W06", 24], ["total", 0]],
	);
	const months = parse(onPty(["stats", "--by", "month", ...FINITE], { COLUMNS: "200" }));
	assert.equal(months[1].bar, "█".repeat(40), "January, the costlier month");
	assert.equal(eighths(months[2].bar), Math.round((3 / 7.55001) * 320), "February in proportion");
	for (const by of ["model", "project", "session"]) {
		const text = onPty(["stats", "--by", by, ...FINITE], { COLUMNS: "200" });
		assert.match(text.replace(ANSI, ""), /^total\s/m, by);
		assert.doesNotMatch(text, BAR_CHARS, `--by ${by}`);
	}
});

test("stats bars: NO_COLOR draws them uncoloured; a cost that is not a number has none", { skip }, () => {
	const text = onPty(["stats", "--by", "day", ...FINITE], { COLUMNS: "200", NO_COLOR: "1" });
	assert.doesNotMatch(text, /\x1b/, "no escape codes at all");
	assert.equal(parse(text).find((l) => l.table.startsWith("2026-01-09")).bar, "█".repeat(40));
	// March 1 sums past what a double holds: its cost is Infinity, and every other row keeps its bar.
	const all = parse(onPty(["stats", "--by", "day", "--all", "--tz", "UTC"], { COLUMNS: "200", NO_COLOR: "1" }));
	const march = all.find((l) => l.table.startsWith("2026-03-01"));
	assert.match(march.table, /Infinity/);
	assert.equal(march.bar, "");
	assert.equal(all.find((l) => l.table.startsWith("2026-01-09")).bar, "█".repeat(40), "scaled to the costliest finite row");
});

test("stats bars fit the terminal: narrower bars, then none, before the table is cut", { skip }, () => {
	const piped = runCli(world, ["stats", "--by", "day", ...FINITE]).stdout.trimEnd().split("\n");
	const tableWidth = out.displayWidth(piped[0]);
	const at = (columns) => parse(onPty(["stats", "--by", "day", ...FINITE], { COLUMNS: String(columns), NO_COLOR: "1" }));
	const narrow = at(tableWidth + 2 + 25);
	assert.equal(narrow.find((l) => l.table.startsWith("2026-01-09")).bar, "█".repeat(25));
	assert.equal(narrow.find((l) => l.table.startsWith("2026-01-03")).bar, "█".repeat(12) + "▌");
	for (const l of narrow) assert.ok(out.displayWidth(l.raw) <= tableWidth + 2 + 25, l.raw);
	// Room for fewer than 10 columns: the whole table, without bars.
	assert.deepEqual(at(tableWidth + 2 + 9).map((l) => [l.table, l.bar]), piped.map((t) => [t, ""]));
	// Narrower than the table: the table as a pipe gets it at that width, no bars.
	const piped60 = runCli(world, ["stats", "--by", "day", ...FINITE], { env: { COLUMNS: "60" } }).stdout.trimEnd().split("\n");
	assert.deepEqual(at(60).map((l) => [l.table, l.bar]), piped60.map((t) => [t, ""]));
});

test("stats: no bars with --json or on a pipe (even with FORCE_COLOR)", { skip }, async () => {
	const json = onPty(["stats", "--by", "day", "--json", ...FINITE], { COLUMNS: "200" });
	assert.doesNotMatch(json, BAR_CHARS);
	assert.deepEqual(JSON.parse(json.replace(/\r/g, "")), JSON.parse(JSON.stringify(await usageReport({ groupBy: "day", timezone: "UTC", until: "2026-02-28" }))));
	for (const by of ["day", "week", "month"]) {
		const piped = runCli(world, ["stats", "--by", by, ...FINITE], { env: { COLUMNS: "200", FORCE_COLOR: "1" } });
		assert.equal(piped.status, 0, piped.stderr);
		assert.match(piped.stdout, /\x1b\[1m/, "coloured, as forced");
		assert.doesNotMatch(piped.stdout, BAR_CHARS, `--by ${by} on a pipe`);
	}
});
