// The pi extension's listing module (extension/listing.mjs) without pi's TUI: the pacing of
// progress calls (on a clock the test moves), the list/listAll signatures passed through to
// this package, and installing on / restoring the reference's own SessionManager class (the
// one pi's interactive mode calls), and the data /usage shows against usageReport. pi
// itself, under tmux, is in pi-tui.test.mjs.
//
//   node __test__/run.mjs __test__/extension.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { installNativeListing, LIST_INTERVAL_MS, nativeListing, PROGRESS_INTERVAL_MS, pacedProgress } from "../extension/listing.mjs";
import { tempDir } from "./helpers/harness.mjs";
import { encodeCwd, sessionText, writeCorpus } from "./helpers/pi-corpus.mjs";
import { lastDays, periodStarts, usageData } from "../extension/usage.mjs";
import { checkFiles, doctorFiles, doctorNotice } from "../extension/doctor.mjs";
import { formatTokens } from "../extension/usage-view.mjs";
import { ours } from "./helpers/ours.mjs";
import { reference } from "./helpers/reference.mjs";

/** A clock and timers the test moves by hand. */
function manualClock() {
	let now = 0;
	const timers = new Map();
	let nextId = 1;
	return {
		now: () => now,
		setTimer: (fn, ms) => {
			const id = nextId++;
			timers.set(id, { fn, at: now + ms });
			return id;
		},
		clearTimer: (id) => timers.delete(id),
		advance(ms) {
			now += ms;
			for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
				if (t.at <= now && timers.has(id)) {
					timers.delete(id);
					t.fn();
				}
			}
		},
		pending: () => timers.size,
	};
}

test("pacing: first, first list and last at once; the rest merged, at most one call per interval", () => {
	const clock = manualClock();
	const calls = [];
	// Lists as often as calls here (their own interval: the next test).
	const pacer = pacedProgress((...args) => calls.push(args), { ...clock, listIntervalMs: PROGRESS_INTERVAL_MS });
	const listA = ["a"];
	const listB = ["a", "b"];
	pacer.callback(1, 50, undefined); // first: at once
	assert.deepEqual(calls, [[1, 50, undefined]]);
	pacer.callback(2, 50, listA); // first list: at once
	assert.deepEqual(calls.at(-1), [2, 50, listA]);
	clock.advance(10);
	pacer.callback(3, 50, undefined);
	pacer.callback(10, 50, listB);
	pacer.callback(11, 50, undefined);
	assert.equal(calls.length, 2, "calls inside the interval are held");
	clock.advance(PROGRESS_INTERVAL_MS - 10);
	// The timer hands over the newest state, with the newest list.
	assert.deepEqual(calls.at(-1), [11, 50, listB]);
	assert.equal(calls.length, 3);
	clock.advance(PROGRESS_INTERVAL_MS + 1);
	assert.equal(calls.length, 3, "nothing held, nothing handed");
	pacer.callback(12, 50, undefined); // a whole interval since the last: at once
	assert.deepEqual(calls.at(-1), [12, 50, undefined], "a list already handed over is not handed again");
	pacer.callback(13, 50, undefined);
	pacer.callback(50, 50, ["final"]); // last: at once, and nothing stays scheduled
	assert.deepEqual(calls.at(-1), [50, 50, undefined], "the last call without its list: the result follows");
	assert.equal(calls.length, 5);
	assert.equal(clock.pending(), 0);
	pacer.stop();
});

test("pacing: partial lists at most every LIST_INTERVAL_MS, counts every PROGRESS_INTERVAL_MS; a list not due follows by a timer", () => {
	const clock = manualClock();
	const calls = [];
	const pacer = pacedProgress((...args) => calls.push(args), clock);
	const lists = [1, 2, 3, 4].map((n) => [`list ${n}`]);
	pacer.callback(1, 1000, undefined);
	pacer.callback(10, 1000, lists[0]); // the first list: at once
	assert.deepEqual(calls.at(-1), [10, 1000, lists[0]]);
	clock.advance(PROGRESS_INTERVAL_MS);
	pacer.callback(20, 1000, lists[1]);
	assert.deepEqual(calls.at(-1), [20, 1000, undefined], "the count goes on; the list is not due");
	clock.advance(PROGRESS_INTERVAL_MS / 2);
	pacer.callback(25, 1000, undefined);
	assert.equal(calls.length, 3, "inside the count's interval: held");
	clock.advance(PROGRESS_INTERVAL_MS / 2);
	assert.deepEqual(calls.at(-1), [25, 1000, undefined], "a held count keeps its own time while a list waits");
	pacer.callback(30, 1000, lists[2]);
	assert.equal(calls.length, 4);
	clock.advance(PROGRESS_INTERVAL_MS);
	assert.deepEqual(calls.at(-1), [30, 1000, undefined], "the held count by its timer, without the list");
	clock.advance(LIST_INTERVAL_MS - 3 * PROGRESS_INTERVAL_MS - 1);
	assert.equal(calls.length, 5, "nothing before the list's interval");
	clock.advance(1);
	assert.deepEqual(calls.at(-1), [30, 1000, lists[2]], "the newest list, when due, with the newest count");
	assert.equal(clock.pending(), 0);
	clock.advance(PROGRESS_INTERVAL_MS / 2);
	pacer.callback(40, 1000, lists[3]);
	assert.equal(calls.length, 6, "inside the count's interval: held");
	clock.advance(PROGRESS_INTERVAL_MS / 2);
	assert.deepEqual(calls.at(-1), [40, 1000, undefined], "the count by its timer, the list still not due");
	assert.equal(clock.pending(), 1, "the list waits for its own time");
	pacer.callback(1000, 1000, ["final"]);
	assert.deepEqual(calls.at(-1), [1000, 1000, undefined], "the last call at once, without a list");
	assert.equal(clock.pending(), 0, "a list held back is dropped with the last call");
	pacer.stop();
});

test("pacing: after a costly call the next one waits four times as long (the picker keeps to a fifth)", () => {
	const clock = manualClock();
	const calls = [];
	// Each call costs the picker 50 ms (the clock moves while it runs).
	const pacer = pacedProgress((...args) => {
		calls.push(args);
		clock.advance(50);
	}, clock);
	pacer.callback(1, 99, ["a"]);
	assert.equal(calls.length, 1);
	clock.advance(150);
	pacer.callback(2, 99, undefined);
	assert.equal(calls.length, 1, "150 ms after a 50 ms call: held (PROGRESS_INTERVAL_MS alone would pass it)");
	clock.advance(49);
	assert.equal(calls.length, 1);
	clock.advance(1);
	assert.deepEqual(calls.at(-1), [2, 99, undefined], "200 ms after: handed over by the timer");
	pacer.callback(99, 99, ["a", "b"]);
	assert.deepEqual(calls.at(-1), [99, 99, undefined], "the last call still at once");
	pacer.stop();
});

test("pacing: stop() drops what is held; a throwing callback from the timer does not escape", () => {
	const clock = manualClock();
	const calls = [];
	const pacer = pacedProgress((...args) => calls.push(args), clock);
	pacer.callback(1, 9, ["x"]);
	pacer.callback(2, 9, undefined);
	assert.equal(clock.pending(), 1);
	pacer.stop();
	assert.equal(clock.pending(), 0);
	clock.advance(1000);
	pacer.callback(3, 9, undefined);
	assert.equal(calls.length, 1);

	const throwing = pacedProgress(() => {
		throw new Error("picker gone");
	}, clock);
	assert.throws(() => throwing.callback(1, 9, undefined), /picker gone/, "a direct call reports the error to the listing");
	throwing.callback(2, 9, undefined);
	assert.doesNotThrow(() => clock.advance(PROGRESS_INTERVAL_MS));
});

const roots = [];
after(() => {
	for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function corpus(label) {
	const root = tempDir(label);
	roots.push(root);
	const agentDir = path.join(root, "agent");
	const cwd = path.join(root, "project");
	fs.mkdirSync(cwd, { recursive: true });
	writeCorpus(agentDir, cwd, { folders: 3, perFolder: 25 });
	return { root, agentDir, cwd: fs.realpathSync(cwd) };
}

/** Runs fn with PI_CODING_AGENT_DIR set (both packages read it at call time). */
async function withAgentDir(agentDir, fn) {
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		return await fn();
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
}

const rows = (infos) => infos.map((s) => `${s.path} ${s.modified.toISOString()} ${s.name ?? ""} ${s.firstMessage}`);

test("nativeListing: every signature of list/listAll gives this package's result; progress ends with the result", async () => {
	const { agentDir, cwd } = corpus("ext-listing");
	const listing = nativeListing(ours.SessionManager);
	const folder = path.join(agentDir, "sessions", fs.readdirSync(path.join(agentDir, "sessions")).sort()[0]);
	await withAgentDir(agentDir, async () => {
		const direct = {
			list: rows(await ours.SessionManager.list(cwd)),
			listDir: rows(await ours.SessionManager.list(cwd, folder)),
			all: rows(await ours.SessionManager.listAll()),
			allDir: rows(await ours.SessionManager.listAll(folder)),
		};
		assert.equal(direct.all.length, 75);
		assert.deepEqual(direct.all, rows(await reference.SessionManager.listAll()), "this package lists as the reference");
		const progressOf = () => {
			const calls = [];
			return { calls, fn: (...args) => calls.push(args) };
		};
		const p1 = progressOf();
		const p2 = progressOf();
		const p3 = progressOf();
		const signal = new AbortController().signal;
		const got = {
			list: rows(await listing.list(cwd, undefined, p1.fn, signal)),
			listDir: rows(await listing.list(cwd, folder)),
			all: rows(await listing.listAll(p2.fn, signal)),
			allSignal: rows(await listing.listAll(signal)),
			allDir: rows(await listing.listAll(folder, p3.fn, signal)),
		};
		assert.deepEqual(got, { ...direct, allSignal: direct.all });
		for (const [calls, expected] of [
			[p1.calls, direct.list],
			[p2.calls, direct.all],
			[p3.calls, direct.allDir],
		]) {
			assert.ok(calls.length >= 2, "at least the first and the last call");
			const [loaded, total, partial] = calls.at(-1);
			assert.equal(loaded, total);
			assert.equal(partial, undefined, "the last call leaves the whole list to the result");
			const lists = calls.filter((call) => call[2] !== undefined);
			assert.ok(lists.length >= 1, "a partial list was handed over");
			const all = new Set(expected);
			for (const [, , list] of lists) assert.ok(rows(list).every((row) => all.has(row)), "partial lists hold rows of the result");
		}
		// An aborted signal still rejects, as in the reference.
		const aborted = AbortSignal.abort();
		await assert.rejects(listing.listAll(() => {}, aborted));
		await assert.rejects(listing.list(cwd, undefined, () => {}, aborted));
	});
});

test("installNativeListing on the reference's class: pi's statics answered here, restored exactly, once", async () => {
	const { agentDir, cwd } = corpus("ext-install");
	const PiSessionManager = reference.SessionManager;
	const original = {
		list: Object.getOwnPropertyDescriptor(PiSessionManager, "list"),
		listAll: Object.getOwnPropertyDescriptor(PiSessionManager, "listAll"),
	};
	// A package whose listing is this package's, counted, to see who answers.
	let answered = 0;
	const counting = {
		list: (...a) => (answered++, ours.SessionManager.list(...a)),
		listAll: (...a) => (answered++, ours.SessionManager.listAll(...a)),
	};
	const restore = installNativeListing(PiSessionManager, counting);
	assert.equal(typeof restore, "function");
	try {
		assert.equal(installNativeListing(PiSessionManager, counting), null, "a second copy of the extension leaves the first one's");
		await withAgentDir(agentDir, async () => {
			const viaPi = rows(await PiSessionManager.listAll(() => {}));
			const current = rows(await PiSessionManager.list(cwd, undefined, () => {}));
			assert.equal(answered, 2);
			assert.deepEqual(viaPi, rows(await ours.SessionManager.listAll()));
			assert.deepEqual(current, rows(await ours.SessionManager.list(cwd)));
		});
	} finally {
		restore();
	}
	assert.deepEqual(Object.getOwnPropertyDescriptor(PiSessionManager, "list"), original.list);
	assert.deepEqual(Object.getOwnPropertyDescriptor(PiSessionManager, "listAll"), original.listAll);
	restore();
	assert.deepEqual(Object.getOwnPropertyDescriptor(PiSessionManager, "list"), original.list, "restore() twice changes nothing");
	await withAgentDir(agentDir, async () => {
		await PiSessionManager.listAll();
	});
	assert.equal(answered, 2, "after restore, pi's own listing answers");
	// Installed again after a restore (what /reload does).
	const again = installNativeListing(PiSessionManager, counting);
	assert.notEqual(again, null);
	again();
	assert.deepEqual(Object.getOwnPropertyDescriptor(PiSessionManager, "listAll"), original.listAll);
});

/** A stand-in for pi's class (the reference's methods, statics of its own): switching it leaves the reference's class as it is. */
function piLikeClass() {
	class PiSessionManager extends reference.SessionManager {}
	for (const name of ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"]) {
		Object.defineProperty(PiSessionManager, name, { value: reference.SessionManager[name], writable: true, configurable: true });
	}
	return PiSessionManager;
}

test("the extension switches the class of pi's own session manager and lists for it; without one it says so, once", async () => {
	const { default: piSessionNative } = await import("../extension/index.mjs");
	const handlers = new Map();
	piSessionNative({ on: (event, handler) => handlers.set(event, handler), registerCommand() {}, registerTool() {}, registerShortcut() {} });
	const notices = [];
	const start = (sessionManager) =>
		handlers.get("session_start")({ type: "session_start", reason: "startup" }, { mode: "tui", hasUI: true, ui: { notify: (message) => notices.push(message) }, sessionManager });
	const shutdown = () => handlers.get("session_shutdown")({ type: "session_shutdown" }, {});
	const paced = (fn) => fn[Symbol.for("pi-session-native.listing")] === true;
	const isNative = (sm) => sm instanceof ours.SessionManager;
	const PiSessionManager = piLikeClass();
	const original = { list: PiSessionManager.list, listAll: PiSessionManager.listAll };
	delete globalThis[Symbol.for("pi-session-native.classNotFoundNoticeShown")];

	// pi's session manager (an instance of pi's class): that class is switched, and lists paced.
	// (its statics make instances of the reference's class: an instance of its own is made by hand)
	assert.ok(!isNative(PiSessionManager.inMemory("/tmp/project")));
	start(Object.create(PiSessionManager.prototype));
	assert.ok(paced(PiSessionManager.list) && paced(PiSessionManager.listAll));
	assert.ok(isNative(PiSessionManager.inMemory("/tmp/project")) && isNative(PiSessionManager.create("/tmp/project", tempDir())));
	assert.ok(PiSessionManager.inMemory("/tmp/project") instanceof PiSessionManager, "instanceof pi's class holds for the native managers");
	shutdown();
	// The listing's pacing goes at session_shutdown; the switch stays: the next session is made between the two.
	assert.ok(!paced(PiSessionManager.list) && PiSessionManager.list !== original.list);
	assert.ok(isNative(PiSessionManager.inMemory("/tmp/project")));
	const switched = { create: PiSessionManager.create, list: PiSessionManager.list };

	// The next session_start gets one of our managers: pi's class is found all the same, and switched once, not twice.
	start(PiSessionManager.create("/tmp/project", tempDir()));
	assert.ok(paced(PiSessionManager.list));
	assert.equal(PiSessionManager.create, switched.create, "switched once");
	shutdown();
	assert.equal(PiSessionManager.list, switched.list);
	assert.ok(!paced(ours.SessionManager.list) && !paced(ours.SessionManager.listAll), "this package's own class is never patched");

	// An instance of a subclass (an embedder's): the class that defines the statics, which pi calls.
	const Other = piLikeClass();
	class Embedded extends Other {}
	start(Object.create(Embedded.prototype));
	assert.ok(paced(Other.listAll) && isNative(Other.inMemory("/tmp/project")));
	assert.ok(!Object.hasOwn(Embedded, "listAll") && !Object.hasOwn(Embedded, "create"), "nothing defined on the subclass");
	shutdown();
	assert.deepEqual(notices, []);

	// No class with list and listAll behind it: nothing patched, and one notice however often.
	const Untouched = piLikeClass();
	const before = { list: Untouched.list, listAll: Untouched.listAll, create: Untouched.create };
	start({ getSessionDir: () => "/tmp" });
	start(Object.create(null));
	assert.deepEqual({ list: Untouched.list, listAll: Untouched.listAll, create: Untouched.create }, before);
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0], /pi's SessionManager class was not found .* so pi's sessions and \/resume run on pi's own code/);
	shutdown();
	assert.ok(!isNative(reference.SessionManager.inMemory("/tmp/project")), "the reference's own class was never switched");
});

// --- /usage ----------------------------------------------------------------------------

test("usage periods: today, the ISO week's Monday and the month's first day, in the given zone", () => {
	// 2026-01-01 is a Thursday: the week began in the year before.
	assert.deepEqual(periodStarts(new Date("2026-01-01T12:00:00Z"), "UTC"), { today: "2026-01-01", week: "2025-12-29", month: "2026-01-01" });
	// A Sunday ends its week.
	assert.deepEqual(periodStarts(new Date("2026-03-08T12:00:00Z"), "UTC"), { today: "2026-03-08", week: "2026-03-02", month: "2026-03-01" });
	// 03:00 UTC on March 1 is still Saturday, February 28 in Los Angeles.
	assert.deepEqual(periodStarts(new Date("2026-03-01T03:00:00Z"), "America/Los_Angeles"), { today: "2026-02-28", week: "2026-02-23", month: "2026-02-01" });
	assert.deepEqual(periodStarts(new Date("2026-03-01T03:00:00Z"), "Asia/Tokyo"), { today: "2026-03-01", week: "2026-02-23", month: "2026-03-01" });
});

test("usage chart days: the last 30 local dates to today, oldest first, across months, years and clock changes", () => {
	const days = lastDays("2026-03-10", 30);
	assert.equal(days.length, 30);
	assert.equal(days[0], "2026-02-09");
	assert.equal(days.at(-1), "2026-03-10");
	assert.ok(days.includes("2026-02-28") && !days.includes("2026-02-29"));
	assert.deepEqual(lastDays("2026-01-02", 4), ["2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02"]);
	assert.deepEqual(lastDays("2024-03-01", 2), ["2024-02-29", "2024-03-01"]);
	// A clock change (March 29 in Europe, 23 hours long) is one date like any other.
	assert.deepEqual(lastDays("2026-03-30", 3), ["2026-03-28", "2026-03-29", "2026-03-30"]);
});

test("usage data: the daily chart's report is one more usageReport by day over the 30 days to today, in the same zone; days without usage are zeros", async () => {
	const calls = [];
	const fake = async (options) => {
		calls.push(options);
		const rows = options.groupBy === "day" && options.since === "2026-01-30" ? [{ key: "2026-02-28", input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: 1.5, sessions: 2 }] : [];
		return { rows, totals: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: rows.length ? 1.5 : 0, sessions: rows.length ? 2 : 0 } };
	};
	// 03:00 UTC on March 1 is still February 28 in Los Angeles.
	const data = await usageData(fake, { now: new Date("2026-03-01T03:00:00Z"), timezone: "America/Los_Angeles", sessionDir: "/sessions" });
	const daily = calls.filter((c) => c.since === "2026-01-30");
	assert.equal(daily.length, 1, JSON.stringify(calls));
	// Today, this week, this month: each up to today, so an entry dated later counts in "all time" only.
	const periods = calls.filter((c) => c.groupBy === "day" && c.since !== "2026-01-30");
	assert.deepEqual(
		periods.map((c) => [c.since, c.until]),
		[
			["2026-02-28", "2026-02-28"],
			["2026-02-23", "2026-02-28"],
			["2026-02-01", "2026-02-28"],
		],
	);
	assert.deepEqual(
		{ ...daily[0], signal: undefined, onProgress: undefined },
		{ sessionDir: "/sessions", timezone: "America/Los_Angeles", groupBy: "day", since: "2026-01-30", until: "2026-02-28", signal: undefined, onProgress: undefined },
	);
	assert.ok(calls.every((c) => c.timezone === "America/Los_Angeles"), "every report in the same zone");
	assert.equal(data.daily.today, "2026-02-28");
	assert.deepEqual(data.daily.rows.map((r) => r.key), lastDays("2026-02-28", 30));
	assert.equal(data.daily.rows.at(-1).cost, 1.5, "today's row is the report's");
	assert.deepEqual(data.daily.rows[0], { key: "2026-01-30", input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, sessions: 0 });
	assert.deepEqual(data.daily.totals, { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: 1.5, sessions: 2 });
});

/** The extension's factory run against a recording stand-in for pi's ExtensionAPI. */
async function loadExtension() {
	const { default: piSessionNative } = await import("../extension/index.mjs");
	const commands = new Map();
	piSessionNative({ on() {}, registerCommand: (name, options) => commands.set(name, options), registerTool() {}, registerShortcut() {} });
	return commands;
}

/** Runs /usage with a ctx like pi's interactive one; resolves to what it showed. */
async function runUsage(command) {
	const notices = [];
	let component;
	let closed = false;
	let renders = 0;
	const ctx = {
		mode: "tui",
		hasUI: true,
		ui: {
			notify: (message, type) => notices.push({ message, type }),
			custom: (factory) =>
				new Promise((resolve) => {
					component = factory({ requestRender: () => renders++ }, null, null, (value) => {
						closed = true;
						resolve(value);
					});
					openedBeforeData = component.data === null;
					// The user waits for the figures, switches to by project, and closes.
					const look = () => {
						if (component.data === null && !component.error) {
							setTimeout(look, 5);
							return;
						}
						renders = 0;
						component.handleInput("\t");
						component.handleInput("\x1b");
					};
					look();
				}),
		},
	};
	let openedBeforeData = false;
	await command.handler("", ctx);
	return { notices, component, closed, renders, openedBeforeData };
}

// usageReport is beyond the reference's contract (helpers/ours.mjs): the package itself.
const { usageReport, checkSession, findSessionFiles } = createRequire(import.meta.url)("../index.js");

// pi 1.6.0 itself (which extension/index.mjs imports) needs Node 22 (fs.globSync).
const piLoads = typeof fs.globSync === "function" ? false : "pi 1.6.0 needs Node 22; run.mjs runs this file there too";

test("/usage: registered, and shows usageReport's today, this week, this month, all time, by model and by project", { skip: piLoads }, async () => {
	const { agentDir, cwd } = corpus("ext-usage");
	// Sessions from now on top of the 2023 corpus, so the periods are not all empty.
	const now = Date.now();
	const folder = path.join(agentDir, "sessions", encodeCwd(cwd));
	for (const [i, ago] of [60e3, 120e3].entries()) {
		const id = `0199ffff-0000-7000-8000-${String(i).padStart(12, "0")}`;
		const startMs = now - ago;
		const file = path.join(folder, `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
		fs.writeFileSync(file, sessionText({ id, cwd, startMs, turns: 2 + i, title: `recent ${i}` }));
	}
	const commands = await loadExtension();
	assert.ok(commands.has("usage"), "/usage is registered");
	assert.match(commands.get("usage").description, /usage|tokens/i);
	await withAgentDir(agentDir, async () => {
		const shown = await runUsage(commands.get("usage"));
		assert.deepEqual(shown.notices, []);
		assert.ok(shown.closed, "Escape closes the view through done()");
		assert.ok(shown.openedBeforeData, "the view opens before the reports are in");
		assert.ok(shown.renders >= 1, "Tab asks pi to render again");
		const data = shown.component.data;
		// What usageReport gives for the same periods (the day cannot have turned since:
		// the sessions written above are minutes old and counted today).
		const starts = periodStarts(new Date(), Intl.DateTimeFormat().resolvedOptions().timeZone);
		const expected = {
			periods: [
				{ label: "today", totals: (await usageReport({ groupBy: "day", since: starts.today })).totals },
				{ label: "this week", totals: (await usageReport({ groupBy: "day", since: starts.week })).totals },
				{ label: "this month", totals: (await usageReport({ groupBy: "day", since: starts.month })).totals },
				{ label: "all time", totals: (await usageReport({ groupBy: "model" })).totals },
			],
			byModel: await usageReport({ groupBy: "model" }),
			byProject: await usageReport({ groupBy: "project" }),
		};
		const { daily, ...rest } = data;
		assert.deepEqual(rest, expected);
		// The chart's 30 days to today: the report's rows where there was usage, zeros elsewhere.
		assert.equal(daily.today, starts.today);
		assert.deepEqual(daily.rows.map((r) => r.key), lastDays(starts.today, 30));
		const recent = await usageReport({ groupBy: "day", since: daily.rows[0].key, until: starts.today });
		assert.deepEqual(daily.rows.filter((r) => r.sessions > 0), recent.rows);
		assert.deepEqual(daily.totals, recent.totals);
		for (const r of daily.rows.filter((r) => r.sessions === 0)) assert.equal(r.totalTokens + r.cost, 0, r.key);
		assert.ok(daily.rows.at(-1).sessions >= 2, "today has the two recent sessions");
		assert.equal(data.periods[3].totals.sessions, 77, "all 75 + 2 sessions");
		assert.ok(data.periods[0].totals.sessions >= 2, "today has the two recent sessions");
		assert.equal(data.byProject.rows.length, 3);
		// And the screen shows the all-time total.
		const lines = shown.component.render(120);
		const allTime = lines.find((l) => l.startsWith("all time"));
		assert.ok(allTime?.includes(formatTokens(expected.periods[3].totals.totalTokens)), lines.join("\n"));
	});
});

/** A project folder with a good session, one with a torn last line and one without its header. */
function damagedFolder(root, name) {
	const cwd = `/home/user/${name}`;
	const folder = path.join(root, "sessions", encodeCwd(cwd));
	fs.mkdirSync(folder, { recursive: true });
	const file = (n, i) => path.join(folder, `2025-0${i}-01T00-00-00-000Z_0199aaaa-0000-7000-8000-00000000000${i}.jsonl`);
	const text = (i) => sessionText({ id: `0199aaaa-0000-7000-8000-00000000000${i}`, cwd, startMs: Date.UTC(2025, i - 1, 1), turns: 2, title: `${name} ${i}` });
	const good = file("good", 1);
	fs.writeFileSync(good, text(1));
	const torn = file("torn", 2);
	fs.writeFileSync(torn, `${text(2)}{"type":"message","id":"cut","parentId":null,"timestamp":"2025-02-01T00:0`);
	const headless = file("headless", 3);
	fs.writeFileSync(headless, text(3).split("\n").slice(1).join("\n"));
	return { folder, good, torn, headless };
}

test("/doctor's parts: the project's files or every project's, checkSession's findings, one notice", async () => {
	const root = tempDir("ext-doctor");
	roots.push(root);
	const a = damagedFolder(root, "alpha");
	const b = damagedFolder(root, "beta");
	const here = doctorFiles(findSessionFiles, { sessionDir: a.folder, all: false });
	assert.deepEqual(new Set(here), new Set([a.good, a.torn, a.headless]));
	// pi's sessions folder is <agent dir>/sessions.
	const everywhere = await withAgentDir(root, () => doctorFiles(findSessionFiles, { sessionDir: a.folder, all: true }));
	assert.deepEqual(new Set(everywhere), new Set([a.good, a.torn, a.headless, b.good, b.torn, b.headless]));
	const result = await checkFiles(checkSession, here, { sliceMs: 0 });
	assert.equal(result.checked, 3);
	assert.deepEqual(result.problems.map((p) => p.path).sort(), [a.torn, a.headless].sort(), "the good file has no findings");
	for (const p of result.problems) assert.deepEqual(p.report, checkSession(p.path), "checkSession's report as it is");
	const notice = doctorNotice(result);
	assert.equal(notice.type, "warning");
	assert.match(notice.message, /^3 session files checked, 2 with problems:/);
	for (const p of result.problems) {
		assert.ok(notice.message.includes(p.path), "names each file");
		for (const f of p.report.findings.slice(0, 3)) assert.ok(notice.message.includes(`${f.line ? `line ${f.line}` : "file"}: ${f.problem}: ${f.message}`), notice.message);
	}
	assert.match(notice.message, /pi cannot open it/, "the file without a header");
	assert.match(notice.message, /pi-sessions repair/);
	const clean = doctorNotice(await checkFiles(checkSession, [a.good, b.good]));
	assert.deepEqual(clean, { message: "2 session files checked: no problems found.", type: "info" });
	const aborted = new AbortController();
	aborted.abort();
	assert.equal((await checkFiles(checkSession, everywhere, { signal: aborted.signal })).checked, 0);
	// A file that vanished between the listing and the check is reported, not thrown.
	const gone = await checkFiles(checkSession, [path.join(a.folder, "gone.jsonl")]);
	assert.equal(gone.problems.length, 1);
	assert.ok(gone.problems[0].error);
	assert.match(doctorNotice(gone).message, /cannot be read/);
});

test("/doctor: registered; this project's files, every project's with `all`, a usage notice otherwise", { skip: piLoads }, async () => {
	const root = tempDir("ext-doctor-pi");
	roots.push(root);
	const a = damagedFolder(root, "alpha");
	damagedFolder(root, "beta");
	const commands = await loadExtension();
	assert.ok(commands.has("doctor"), "/doctor is registered");
	const run = async (args) => {
		const notices = [];
		const ctx = { mode: "tui", hasUI: true, sessionManager: { getSessionDir: () => a.folder }, ui: { notify: (message, type) => notices.push({ message, type }) } };
		await withAgentDir(root, () => commands.get("doctor").handler(args, ctx));
		return notices;
	};
	const [here] = await run("");
	assert.equal(here.type, "warning");
	assert.match(here.message, /^3 session files checked, 2 with problems:/);
	assert.ok(here.message.includes(a.torn) && here.message.includes(a.headless) && !here.message.includes(a.good));
	const [all] = await run("all");
	assert.match(all.message, /^6 session files checked, 4 with problems:/);
	assert.deepEqual(await run("everything"), [{ message: "Usage: /doctor [all]", type: "error" }]);
});
