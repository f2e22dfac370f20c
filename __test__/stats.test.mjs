// Accounting compared with the reference: getSessionStats() against pi 1.6.0's
// AgentSession.getSessionStats() loop (agent-session.js, reproduced below over the
// reference SessionManager's getEntries(), with usage-totals.js's own functions),
// getUsageCostBreakdown() against usage-totals.js's getUsageCostBreakdown(), and
// usageReport() against the same rules applied in JavaScript to the files the
// reference's list()/listAll() return, grouped with Intl in the report's time zone.
//
// Sessions are seeded random files with usage in every kind of entry and odd usage
// fields (strings, null, booleans, arrays, objects, negative and fractional numbers,
// missing fields, missing cost, missing usage), appended to between calls.
//
//   SEED=123 node __test__/run.mjs __test__/stats.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REFERENCE_FILE, REPO_ROOT } from "./helpers/reference.mjs";
import { compareReports, expectedReport, localDate, ZONES } from "./helpers/usage-oracle.mjs";

const require = createRequire(import.meta.url);
const ours = require(path.join(REPO_ROOT, "index.js"));
const { SessionManager: RefSM } = await import(pathToFileURL(REFERENCE_FILE).href);
const usageTotals = await import(pathToFileURL(path.join(path.dirname(REFERENCE_FILE), "usage-totals.js")).href);

const SEED = baseSeed();
const SESSIONS = Number(process.env.SESSIONS ?? 60);

function withSeed(label, seed, fn) {
	try {
		return fn();
	} catch (error) {
		error.message = `${label} (SEED=${seed}): ${error.message}`;
		throw error;
	}
}

/** pi 1.6.0's AgentSession.getSessionStats() loop, without contextUsage. */
function referenceStats(sessionManager) {
	let userMessages = 0;
	let assistantMessages = 0;
	let toolResults = 0;
	let totalMessages = 0;
	let toolCalls = 0;
	const usageTotals_ = usageTotals.createUsageTotals();
	for (const entry of sessionManager.getEntries()) {
		if (entry.type === "usage") {
			usageTotals.addUsageToTotals(usageTotals_, entry.usage);
		} else if ((entry.type === "branch_summary" || entry.type === "compaction") && entry.usage) {
			usageTotals.addUsageToTotals(usageTotals_, entry.usage);
		}
		if (entry.type !== "message") continue;
		totalMessages++;
		const message = entry.message;
		if (message.role === "user") {
			userMessages++;
		} else if (message.role === "toolResult") {
			toolResults++;
			if (message.usage) usageTotals.addUsageToTotals(usageTotals_, message.usage);
		} else if (message.role === "assistant") {
			assistantMessages++;
			if (Array.isArray(message.content)) toolCalls += message.content.filter((c) => c.type === "toolCall").length;
			usageTotals.addUsageToTotals(usageTotals_, message.usage);
		}
	}
	return {
		sessionFile: sessionManager.getSessionFile(),
		sessionId: sessionManager.getSessionId(),
		userMessages,
		assistantMessages,
		toolCalls,
		toolResults,
		totalMessages,
		tokens: {
			input: usageTotals_.input,
			output: usageTotals_.output,
			cacheRead: usageTotals_.cacheRead,
			cacheWrite: usageTotals_.cacheWrite,
			total: usageTotals_.input + usageTotals_.output + usageTotals_.cacheRead + usageTotals_.cacheWrite,
		},
		cost: usageTotals_.cost,
	};
}

/** The value or what it threw, for comparison. */
function outcome(fn) {
	try {
		return { value: fn() };
	} catch (error) {
		return { thrown: `${error?.constructor?.name}: ${error?.message}` };
	}
}

// ===== random sessions =====

const PROVIDERS = ["anthropic", "openai", "google"];
const MODELS = ["claude-opus-4-5", "gpt-5.1", "gemini-2.5-pro", "m\u00e9lange-\u{1F600}"];

function oddNumber(rng) {
	return rng.weighted([
		[20, () => rng.int(5000)],
		[3, () => rng.float() * 100],
		[2, () => -rng.int(100)],
		[2, () => String(rng.int(50))],
		[1, () => "NaN"],
		[1, () => null],
		[1, () => undefined],
		[1, () => true],
		[1, () => [rng.int(3), [rng.int(3)]]],
		[1, () => ({ n: 1 })],
		[1, () => 1e308],
		[1, () => 0.1],
	])();
}

/** A usage value: mostly well-formed, sometimes odd in one field, rarely fatal. */
function randomUsage(rng, { odd, fatal }) {
	if (fatal && rng.bool(0.3)) return rng.pick([undefined, null, "text", 0, false, [1]]);
	const field = () => (odd && rng.bool(0.15) ? oddNumber(rng) : rng.int(20000));
	const usage = {
		input: field(),
		output: field(),
		cacheRead: field(),
		cacheWrite: field(),
		totalTokens: rng.int(100000),
	};
	if (rng.bool(0.3)) usage.reasoning = rng.int(1000);
	if (rng.bool(0.3)) usage.cacheWrite1h = rng.int(1000);
	const total = odd && rng.bool(0.1) ? oddNumber(rng) : Math.round(rng.float() * 1e6) / 1e6;
	usage.cost = { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total };
	if (fatal && rng.bool(0.3)) usage.cost = rng.pick([undefined, null, 5, "x", [0.5]]);
	for (const key of Object.keys(usage)) if (usage[key] === undefined) delete usage[key];
	return usage;
}

/** Timestamps around DST changes in several zones, and a few unreadable ones. */
const EDGES = [
	"2024-03-10T07:00:00.000Z", // New York spring forward
	"2024-11-03T06:00:00.000Z", // New York fall back
	"2024-03-31T01:00:00.000Z", // London
	"2024-04-06T15:00:00.000Z", // Lord Howe (half-hour DST)
	"2024-09-29T14:00:00.000Z", // Chatham
	"2024-12-31T10:45:00.000Z", // year and ISO week edge in Kathmandu
].map((s) => Date.parse(s));

function randomTime(rng) {
	return new Date(rng.pick(EDGES) + Math.round((rng.float() - 0.5) * 3 * 86400000)).toISOString();
}

function randomTimestamp(rng, odd) {
	if (odd && rng.bool(0.05)) return rng.pick([undefined, "yesterday", 1700000000000, null, "2024-03-10T07:00:00+02:00"]);
	return randomTime(rng);
}

function randomEntry(rng, { odd, fatal, id, parentId }) {
	const base = { id, parentId, timestamp: randomTimestamp(rng, odd) };
	if (base.timestamp === undefined) delete base.timestamp;
	const model = rng.pick(MODELS);
	const provider = odd && rng.bool(0.05) ? rng.pick([undefined, null, 7]) : rng.pick(PROVIDERS);
	return rng.weighted([
		[4, () => ({ type: "message", ...base, message: { role: "user", content: "hello", timestamp: 1 } })],
		[
			8,
			() => {
				const content = [{ type: "text", text: "hi" }];
				for (let i = rng.int(3); i > 0; i--) content.push({ type: "toolCall", id: "c", name: "bash", arguments: {} });
				if (odd && rng.bool(0.1)) content.push(rng.pick([5, "s", [], { type: 1 }, { type: "toolCall", type2: 1 }]));
				if (fatal && rng.bool(0.1)) content.push(null);
				const message = { role: "assistant", content, api: "x", provider, model, usage: randomUsage(rng, { odd, fatal }), stopReason: "stop", timestamp: 1 };
				if (rng.bool(0.2)) message.responseModel = rng.pick([`${model}-2025`, null]);
				if (message.usage === undefined) delete message.usage;
				return { type: "message", ...base, message };
			},
		],
		[
			4,
			() => {
				const message = { role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 1 };
				if (rng.bool(0.4)) message.usage = randomUsage(rng, { odd, fatal: false });
				if (odd && rng.bool(0.05)) message.usage = rng.pick([0, "", null, "x"]);
				return { type: "message", ...base, message };
			},
		],
		[
			2,
			() => {
				const entry = { type: "usage", ...base, provider, model, usage: randomUsage(rng, { odd, fatal }) };
				if (entry.usage === undefined) delete entry.usage;
				return entry;
			},
		],
		[
			1,
			() => {
				const entry = { type: "compaction", ...base, summary: "s", firstKeptEntryId: id, tokensBefore: 10 };
				if (rng.bool(0.6)) entry.usage = randomUsage(rng, { odd, fatal });
				return entry;
			},
		],
		[
			1,
			() => {
				const entry = { type: "branch_summary", ...base, fromId: id, summary: "s" };
				if (rng.bool(0.6)) entry.usage = randomUsage(rng, { odd, fatal });
				return entry;
			},
		],
		[1, () => ({ type: "model_change", ...base, provider, modelId: model })],
		[1, () => ({ type: "custom_message", ...base, customType: "x", content: "c", display: true })],
		[odd ? 1 : 0, () => ({ type: "message", ...base, message: { role: "custom", content: "c" } })],
	])();
}

function randomLines(rng, count, { odd, fatal, idStart = 0 }) {
	const out = [];
	let parentId = null;
	for (let i = 0; i < count; i++) {
		const id = `e${idStart + i}`.padStart(8, "0");
		const entry = randomEntry(rng, { odd, fatal, id, parentId });
		parentId = id;
		out.push(JSON.stringify(entry));
		if (odd && rng.bool(0.03)) out.push(rng.pick(["", "{not json", "5", "[1,2]", '"str"', "null", "  "]));
	}
	return out;
}

function headerLine(id, cwd) {
	return JSON.stringify({ type: "session", version: 3, id, timestamp: "2024-03-01T00:00:00.000Z", cwd });
}

function writeSession(file, rng, { odd, fatal, count, cwd }) {
	const id = `0190${rng.int(1e8)}`.padEnd(12, "0");
	const lines = [headerLine(id, cwd), ...randomLines(rng, count, { odd, fatal })];
	fs.writeFileSync(file, `${lines.join(rng.bool(0.1) ? "\r\n" : "\n")}\n`);
}

// ===== getSessionStats and getUsageCostBreakdown =====

test("getSessionStats and getUsageCostBreakdown equal pi's loops over getEntries()", () => {
	const dir = tempDir("stats");
	let compared = 0;
	let threw = 0;
	for (let s = 0; s < SESSIONS; s++) {
		const seed = (SEED + s) >>> 0;
		withSeed(`session ${s}`, seed, () => {
			const rng = new Rng(seed);
			const odd = rng.bool(0.6);
			const fatal = rng.bool(0.2);
			const file = path.join(dir, `s${s}.jsonl`);
			writeSession(file, rng, { odd, fatal, count: 1 + rng.int(60), cwd: "/home/user/p" });
			const ref = RefSM.open(file);
			const expectedStats = outcome(() => referenceStats(ref));
			const expectedBreakdown = outcome(() => usageTotals.getUsageCostBreakdown(ref.getEntries()));
			if (expectedStats.thrown) threw++;
			assert.deepStrictEqual(outcome(() => ours.getSessionStats(file)), expectedStats, "by path");
			const mine = ours.SessionManager.open(file);
			assert.deepStrictEqual(outcome(() => ours.getSessionStats(mine)), expectedStats, "our SessionManager");
			assert.deepStrictEqual(outcome(() => ours.getSessionStats(ref)), expectedStats, "the reference's SessionManager");
			assert.deepStrictEqual(outcome(() => ours.getUsageCostBreakdown(file)), expectedBreakdown, "breakdown by path");
			assert.deepStrictEqual(outcome(() => ours.getUsageCostBreakdown(mine)), expectedBreakdown, "breakdown of a manager");
			assert.deepStrictEqual(
				outcome(() => ours.getUsageCostBreakdown(ref.getEntries())),
				expectedBreakdown,
				"breakdown of entries",
			);
			// Entries appended to the open manager count (persisted lines and objects alike).
			const more = randomLines(rng, 3, { odd, fatal: false, idStart: 1000 })
				.map((l) => outcome(() => JSON.parse(l)).value)
				.filter((e) => e !== null && typeof e === "object");
			for (const entry of more) {
				if (entry.type === "message") {
					const appended = outcome(() => mine.appendMessage(entry.message));
					assert.deepStrictEqual(Object.keys(appended), Object.keys(outcome(() => ref.appendMessage(entry.message))), "append");
				}
			}
			assert.deepStrictEqual(
				outcome(() => ours.getSessionStats(mine)),
				{ ...outcome(() => referenceStats(ref)) },
				"after appends",
			);
			compared++;
		});
	}
	assert.equal(compared, SESSIONS);
	// The seeds must reach the throwing paths too (over 60 sessions they do).
	if (SESSIONS >= 60) assert.ok(threw > 0, "no session threw");
	fs.rmSync(dir, { recursive: true, force: true });
});

test("getSessionStats of an in-memory manager and of files that are not sessions", () => {
	const mine = ours.SessionManager.inMemory("/home/user/p");
	const ref = RefSM.inMemory("/home/user/p");
	const usage = { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.25 } };
	for (const sm of [mine, ref]) {
		sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
		sm.appendMessage({ role: "assistant", content: [{ type: "toolCall", id: "a", name: "b", arguments: {} }], usage, provider: "p", model: "m", api: "x", stopReason: "stop", timestamp: 2 });
	}
	const expected = referenceStats(ref);
	assert.deepStrictEqual({ ...ours.getSessionStats(mine), sessionId: expected.sessionId }, expected);
	assert.deepStrictEqual(ours.getUsageCostBreakdown(mine), usageTotals.getUsageCostBreakdown(ref.getEntries()));
	const dir = tempDir("stats-bad");
	const notSession = path.join(dir, "x.jsonl");
	fs.writeFileSync(notSession, '{"type":"message"}\n');
	assert.throws(() => ours.getSessionStats(notSession), { message: `Session file is not a valid pi session: ${notSession}` });
	assert.throws(() => ours.getSessionStats(path.join(dir, "missing.jsonl")), { code: "ENOENT" });
	assert.throws(() => ours.getSessionStats(42), TypeError);
	// Reading by path never writes: the bytes stay as they were.
	const v1 = path.join(dir, "v1.jsonl");
	fs.writeFileSync(v1, '{"type":"session","id":"old","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/x"}\n{"type":"message","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"a"}}\n');
	const before = fs.readFileSync(v1, "utf8");
	assert.equal(ours.getSessionStats(v1).userMessages, 1);
	assert.equal(fs.readFileSync(v1, "utf8"), before);
	fs.rmSync(dir, { recursive: true, force: true });
});

// ===== usageReport =====

const byReference = { entriesOf: (file) => RefSM.open(file).getEntries() };

test("usageReport groups pi's usage by day, week, month, session, model and project in any zone", async () => {
	const rng = new Rng(SEED ^ 0x5eed);
	const agentDir = tempDir("report");
	const sessionsDir = path.join(agentDir, "sessions");
	const folders = ["--work-a--", "--work-b--"].map((f) => path.join(sessionsDir, f));
	const files = [];
	for (const folder of folders) {
		fs.mkdirSync(folder, { recursive: true });
		for (let i = 0; i < 12; i++) {
			const file = path.join(folder, `2024-03-0${1 + (i % 9)}T00-00-00-000Z_${i}.jsonl`);
			writeSession(file, rng, { odd: rng.bool(0.5), fatal: false, count: 1 + rng.int(40), cwd: rng.pick(["/home/user/a", "/home/user/b", "/home/user/c"]) });
			files.push(file);
		}
	}
	// A file the listing leaves out (a null message) is left out of reports too.
	fs.appendFileSync(files[0], `${JSON.stringify({ type: "message", timestamp: EDGES[0] ? new Date(EDGES[0]).toISOString() : "", message: null })}\n`);
	const previous = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		for (let round = 0; round < 3; round++) {
			await withSeed(`round ${round}`, SEED, async () => {
				const all = await RefSM.listAll();
				assert.ok(all.length >= 20);
				for (const groupBy of ["day", "week", "month", "session", "model", "project"]) {
					const timezone = rng.pick(ZONES);
					const since = rng.bool(0.3) ? localDate(rng.pick(EDGES) - 86400000, timezone) : undefined;
					const until = rng.bool(0.3) ? localDate(rng.pick(EDGES) + 86400000, timezone) : undefined;
					const options = { groupBy, timezone, since, until };
					const label = `${JSON.stringify(options)} round ${round}`;
					compareReports(await ours.usageReport(options), expectedReport(all, options, byReference), `listAll ${label}`);
					const one = await RefSM.list("/home/user/a", folders[1]);
					compareReports(
						await ours.usageReport({ ...options, cwd: "/home/user/a", sessionDir: folders[1] }),
						expectedReport(one, options, byReference),
						`list(cwd, dir) ${label}`,
					);
				}
			});
			// Append to some files (whole lines and a cut last line), add a file, remove one.
			for (const file of files.slice(round * 4, round * 4 + 4)) {
				const appended = randomLines(rng, 5, { odd: false, fatal: false, idStart: 500 + round * 10 });
				fs.appendFileSync(file, `${appended.join("\n")}\n${round === 1 ? appended[0].slice(0, 20) : ""}`);
			}
			const added = path.join(folders[0], `2024-04-0${round}T00-00-00-000Z_new.jsonl`);
			writeSession(added, rng, { odd: false, fatal: false, count: 10, cwd: "/home/user/a" });
			fs.rmSync(files[files.length - 1 - round]);
		}
	} finally {
		if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previous;
	}
	fs.rmSync(agentDir, { recursive: true, force: true });
});

test("usageReport rejects bad options and honours onProgress and AbortSignal", async () => {
	const dir = tempDir("report-opts");
	for (let i = 0; i < 30; i++) writeSession(path.join(dir, `${i}.jsonl`), new Rng(i), { odd: false, fatal: false, count: 5, cwd: "/x" });
	await assert.rejects(ours.usageReport({ sessionDir: dir, groupBy: "year" }), TypeError);
	await assert.rejects(ours.usageReport({ sessionDir: dir, groupBy: "day", since: "2024-1-1" }), TypeError);
	await assert.rejects(ours.usageReport({ sessionDir: dir, groupBy: "day", until: "2024-02-30" }), RangeError);
	await assert.rejects(ours.usageReport({ sessionDir: dir, groupBy: "day", timezone: "Mars/Olympus" }), RangeError);
	const calls = [];
	const report = await ours.usageReport({ sessionDir: dir, groupBy: "session", onProgress: (loaded, total) => calls.push([loaded, total]) });
	assert.equal(report.rows.length, 30);
	assert.ok(calls.length > 0 && calls.at(-1)[0] === 30 && calls.every(([, total]) => total === 30));
	const controller = new AbortController();
	controller.abort(new Error("stop"));
	await assert.rejects(ours.usageReport({ sessionDir: dir, groupBy: "day", signal: controller.signal }), { message: "stop" });
	await assert.rejects(
		ours.usageReport({
			sessionDir: dir,
			groupBy: "day",
			onProgress: () => {
				throw new Error("from progress");
			},
		}),
		{ message: "from progress" },
	);
	// A missing folder is an empty report.
	assert.deepStrictEqual((await ours.usageReport({ sessionDir: path.join(dir, "none"), groupBy: "day" })).rows, []);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("usageReport with a persistent cache answers a new process the same", async () => {
	const { spawnSync } = await import("node:child_process");
	const dir = tempDir("report-cache");
	const cacheDir = tempDir("report-cache-store");
	for (let i = 0; i < 20; i++) writeSession(path.join(dir, `${i}.jsonl`), new Rng(SEED + i), { odd: true, fatal: false, count: 20, cwd: "/x" });
	const script = `const m = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
m.configureListing({ cacheDir: ${JSON.stringify(cacheDir)} });
m.usageReport({ sessionDir: ${JSON.stringify(dir)}, groupBy: "model", timezone: "UTC" }).then((r) => console.log(JSON.stringify(r)));`;
	const run = () => {
		const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
		assert.equal(r.status, 0, r.stderr);
		return JSON.parse(r.stdout);
	};
	const first = run();
	assert.ok(fs.readdirSync(cacheDir).some((f) => f.startsWith("pi-session-native-usage")));
	assert.deepStrictEqual(run(), first);
	fs.appendFileSync(path.join(dir, "0.jsonl"), `${randomLines(new Rng(1), 5, { odd: false, fatal: false, idStart: 900 }).join("\n")}\n`);
	const grown = run();
	const fresh = await ours.usageReport({ sessionDir: dir, groupBy: "model", timezone: "UTC" });
	assert.deepStrictEqual(grown, JSON.parse(JSON.stringify(fresh)));
	fs.rmSync(dir, { recursive: true, force: true });
	fs.rmSync(cacheDir, { recursive: true, force: true });
});

test("usageReport between calls in one process: appended, rewritten, deleted and new files in folders left alone for a while", async () => {
	const rng = new Rng(SEED ^ 0xa11);
	const agentDir = tempDir("report-calls");
	const folders = ["--calls-a--", "--calls-b--"].map((f) => path.join(agentDir, "sessions", f));
	const files = [];
	for (const folder of folders) {
		fs.mkdirSync(folder, { recursive: true });
		for (let i = 0; i < 6; i++) {
			const file = path.join(folder, `2024-05-0${1 + i}T00-00-00-000Z_${i}.jsonl`);
			writeSession(file, rng, { odd: rng.bool(0.5), fatal: false, count: 1 + rng.int(30), cwd: "/home/user/calls" });
			files.push(file);
		}
	}
	// Folders whose times are a few seconds old: their listings are kept
	// between calls and only their files are stat'ed again.
	await new Promise((resolve) => setTimeout(resolve, 3000));
	const previous = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	const check = async (label) => {
		const expected = expectedReport(await RefSM.listAll(), { groupBy: "session", timezone: "UTC" }, byReference);
		compareReports(await ours.usageReport({ groupBy: "session", timezone: "UTC" }), expected, label);
		// Asked again with nothing changed: the same answer.
		compareReports(await ours.usageReport({ groupBy: "session", timezone: "UTC" }), expected, `${label}, again`);
	};
	try {
		await check("first");
		fs.appendFileSync(files[0], `${randomLines(rng, 6, { odd: false, fatal: false, idStart: 700 }).join("\n")}\n`);
		await check("appended");
		// The same length, other content, the mtime set back: told by the ctime.
		const before = fs.statSync(files[1]);
		const text = fs.readFileSync(files[1], "utf8");
		const lines = text.split("\n");
		const other = lines.map((l) => l.replace(/"input":(\d)/g, (_, d) => `"input":${(Number(d) + 1) % 10}`)).join("\n");
		fs.writeFileSync(files[1], other);
		fs.utimesSync(files[1], before.atime, before.mtime);
		await check("rewritten");
		fs.rmSync(files[2]);
		await check("deleted");
		writeSession(path.join(folders[1], "2024-06-01T00-00-00-000Z_new.jsonl"), rng, { odd: false, fatal: false, count: 12, cwd: "/home/user/calls" });
		await check("new file");
	} finally {
		if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previous;
	}
	fs.rmSync(agentDir, { recursive: true, force: true });
});

test("usageReport ignores a corrupt persistent cache file", async () => {
	const { spawnSync } = await import("node:child_process");
	const dir = tempDir("report-corrupt");
	const cacheDir = tempDir("report-corrupt-store");
	for (let i = 0; i < 8; i++) writeSession(path.join(dir, `${i}.jsonl`), new Rng(SEED + 40 + i), { odd: false, fatal: false, count: 15, cwd: "/x" });
	const script = `const m = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
m.configureListing({ cacheDir: ${JSON.stringify(cacheDir)} });
m.usageReport({ sessionDir: ${JSON.stringify(dir)}, groupBy: "session", timezone: "UTC" }).then((r) => console.log(JSON.stringify(r)));`;
	const run = () => {
		const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
		assert.equal(r.status, 0, r.stderr);
		return JSON.parse(r.stdout);
	};
	const first = run();
	const [file] = fs.readdirSync(cacheDir).filter((f) => f.startsWith("pi-session-native-usage"));
	assert.ok(file);
	const bytes = fs.readFileSync(path.join(cacheDir, file));
	// A flipped byte in the body, then a cut file: each is read as no cache.
	bytes[bytes.length >> 1] ^= 0xff;
	fs.writeFileSync(path.join(cacheDir, file), bytes);
	assert.deepStrictEqual(run(), first);
	fs.writeFileSync(path.join(cacheDir, file), bytes.subarray(0, bytes.length - 5));
	assert.deepStrictEqual(run(), first);
	const fresh = await ours.usageReport({ sessionDir: dir, groupBy: "session", timezone: "UTC" });
	assert.deepStrictEqual(first, JSON.parse(JSON.stringify(fresh)));
	fs.rmSync(dir, { recursive: true, force: true });
	fs.rmSync(cacheDir, { recursive: true, force: true });
});

test("usageReport keeps its accounting cache where PI_SESSION_NATIVE_CACHE_DIR says, with no listing before it", async () => {
	const { execFileSync } = await import("node:child_process");
	const root = tempDir("usage-env-cache");
	const agentDir = path.join(root, "agent");
	const cacheDir = path.join(root, "cache");
	const folder = path.join(agentDir, "sessions", "--home-user-p--");
	const sm = RefSM.create("/home/user/p", folder);
	sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
	sm.appendMessage({
		role: "assistant",
		content: [{ type: "text", text: "hello" }],
		provider: "anthropic",
		model: "m",
		usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } },
		stopReason: "stop",
		timestamp: 2,
	});
	const script = `require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))}).usageReport({ groupBy: "model" }).then((r) => process.stdout.write(JSON.stringify(r.totals)))`;
	const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_SESSION_NATIVE_CACHE_DIR: cacheDir };
	const first = JSON.parse(execFileSync(process.execPath, ["-e", script], { env, encoding: "utf8" }));
	assert.equal(first.totalTokens, 7);
	assert.deepEqual(fs.readdirSync(cacheDir), ["pi-session-native-usage.v1.bin"], "the accounting cache file, and no listing one");
	const second = JSON.parse(execFileSync(process.execPath, ["-e", script], { env, encoding: "utf8" }));
	assert.deepEqual(second, first);
});
