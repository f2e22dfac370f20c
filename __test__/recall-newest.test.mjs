// recallSearch without a listing: it reads session files newest first and stops once its
// limit's hits are certain. On a seeded store pi's own class wrote, each file's mtime its
// last write (as pi leaves it), one parent continued after it was forked (its fork is then
// older, past where a search stops) and older sessions full of the words searched: random
// searches give what the oracle over pi's own class gives (order, forks counted over files
// the search did not read, filters), and the reading stops early (the binding's deliveries
// are counted). Then a fork past the stop, counted from its header, and one session's hits
// past the limit; a session whose messages are dated after its file's last change, which
// counts as last active a second after that change; a file last changed by an entry that
// is no message; and a session begun before others but active after them, which the
// reading by name passes and the reading by file time finds.
//
//   node __test__/run.mjs __test__/recall-newest.test.mjs   SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { oracleSearch, PiView, QUERIES, WORDS, withFakeClock, writeRecallStore } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallSearch } = require(path.join(REPO_ROOT, "index.js"));

const SEED = baseSeed();
console.log(`# recall newest seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/recall-newest.test.mjs)`);
process.env.PI_SESSION_NATIVE_CACHE_DIR = "";
const DAY_MS = 24 * 60 * 60 * 1000;
const SM = reference.SessionManager;

// Every scan the search starts, through the binding the library loads: the files asked
// for (a scan of folders finds its own), the fields (0: a pass over headers), how far
// the deliveries went, whether it ended.
const binding = require(path.join(REPO_ROOT, "binding.js"));
const scans = [];
const native = { grepSessionFiles: binding.grepSessionFiles, grepSessionFolders: binding.grepSessionFolders };
for (const name of Object.keys(native)) {
	binding[name] = (paths, pattern, regex, caseSensitive, fields, onFile) => {
		const scan = { files: name === "grepSessionFiles" ? paths.length : Infinity, fields, delivered: 0, ended: false };
		scans.push(scan);
		return native[name](paths, pattern, regex, caseSensitive, fields, (message) => {
			if (message.file === -1) scan.ended = true;
			else scan.delivered = Math.max(scan.delivered, message.done);
			onFile(message);
		});
	};
}
after(() => Object.assign(binding, native));
/** The scans of `run`: what it read for the query, and its passes over headers. */
async function scansOf(run) {
	const first = scans.length;
	const result = await run();
	return { result, scans: scans.slice(first) };
}
const stoppedEarly = (scan) => !scan.ended && scan.delivered < scan.files;

/** Each file's mtime set to the time of its last entry, as a file pi appends to has it. */
function timeFilesByLastEntry(files) {
	for (const file of files) {
		const times = fs
			.readFileSync(file, "utf8")
			.split("\n")
			.flatMap((line) => {
				try {
					const t = Date.parse(JSON.parse(line).timestamp);
					return Number.isNaN(t) ? [] : [t];
				} catch {
					return [];
				}
			});
		const last = Math.max(...times) / 1000;
		fs.utimesSync(file, last, last);
	}
}

/** `count` sessions in `cwd`, one after another from `startMs`, each a few messages of the store's words. */
function olderSessions(rng, cwd, count, startMs) {
	return withFakeClock(startMs, (clock) =>
		Array.from({ length: count }, () => {
			clock.advance(DAY_MS / 8);
			const sm = SM.create(cwd);
			for (let t = 0; t < 2 + rng.int(3); t++) {
				clock.advance(60_000);
				const text = Array.from({ length: 3 + rng.int(6) }, () => rng.pick(WORDS)).join(" ");
				sm.appendMessage({ role: "user", content: `${text} deploy`, timestamp: Date.now() });
				clock.advance(60_000);
				sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `deploy ${rng.pick(WORDS)} done` }], timestamp: Date.now() });
			}
			return sm.getSessionFile();
		}),
	);
}

/** A fresh agent dir for one test, restored after it. */
async function withAgentDir(label, fn) {
	const dir = fs.realpathSync(tempDir(label));
	const before = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = path.join(dir, "agent");
	try {
		return await fn(dir);
	} finally {
		process.env.PI_CODING_AGENT_DIR = before;
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

const comparable = ({ snippet: _snippet, text: _text, ...rest }) => rest;

test("random searches over files timed as pi leaves them give the oracle's hits, and stop reading early", async () => {
	await withAgentDir("recall-newest", async (root) => {
		const rng = new Rng(SEED);
		const store = writeRecallStore(SM, root, rng);
		const [alpha, beta] = store.projects;
		// A parent continued after its forks: its fork is older now, and the forks' copies are hits of the parent.
		const forked = [...new Set(store.forks.map((f) => SM.open(f).getHeader().parentSession).filter((p) => p && !store.forks.includes(p)))];
		withFakeClock(Date.now() - DAY_MS, () => {
			for (const parent of forked) SM.open(parent).appendMessage({ role: "user", content: "continued: deploy the postgres release", timestamp: Date.now() });
		});
		const older = [...olderSessions(rng, alpha, 24, Date.now() - 60 * DAY_MS), ...olderSessions(rng, beta, 12, Date.now() - 50 * DAY_MS)];
		timeFilesByLastEntry([...store.files, ...older]);
		const view = new PiView(SM);
		const entryTimes = store.files.flatMap((f) => (view.open(f)?.getEntries() ?? []).map((e) => e.timestamp)).filter(Boolean);

		const r = new Rng(SEED ^ 0x0e5d);
		let early = 0;
		let forksPastTheStop = 0;
		let hitCount = 0;
		for (let i = 0; i < 80; i++) {
			const options = { cwd: r.bool(0.7) ? alpha : beta, query: r.pick([...QUERIES, "deploy", "postgres", "continued"]), limit: 1 + r.int(r.bool(0.7) ? 6 : 30) };
			const oracle = { ...options };
			if (r.bool(0.5)) options.scope = oracle.scope = "all";
			if (r.bool(0.2)) options.role = oracle.role = r.pick(["user", "assistant", "toolCall", "toolResult"]);
			if (r.bool(0.15)) {
				const at = r.pick(entryTimes);
				if (r.bool()) [options.after, oracle.after] = [at, Date.parse(at)];
				else [options.before, oracle.before] = [at, Date.parse(at)];
			}
			if (r.bool(0.15)) options.file = oracle.file = r.pick(["app.ts", "src/app.ts", "schema.sql", "README.md", "nowhere.txt"]);
			if (r.bool(0.1)) {
				const file = r.pick(store.files);
				options.session = file;
				oracle.sessionFile = file;
			}
			const where = `search ${i} ${JSON.stringify(options)}`;
			const { result: ours, scans: read } = await scansOf(() => recallSearch(options));
			const expected = await oracleSearch(view, oracle);
			assert.deepEqual(ours.hits.map(comparable), expected.hits.map(comparable), where);
			assert.equal(ours.truncated, expected.truncated, `${where}: truncated`);
			hitCount += ours.hits.length;
			const query = read.filter((s) => s.fields !== 0).at(-1);
			if (query && stoppedEarly(query)) {
				early++;
				assert.ok(ours.truncated, `${where}: it stops early only past its limit`);
				if (ours.hits.some((h) => h.forks > 0) && read.some((s) => s.fields === 0)) forksPastTheStop++;
			}
		}
		assert.ok(hitCount > 0, "the searches found something");
		assert.ok(early >= 10, `searches that stopped before the older sessions: ${early} of 80`);
		const everything = await scansOf(() => recallSearch({ cwd: alpha, scope: "all", query: "deploy", limit: 500 }));
		assert.deepEqual(everything.result.hits.map(comparable), (await oracleSearch(view, { cwd: alpha, scope: "all", query: "deploy", limit: 500 })).hits.map(comparable));
		assert.ok(!stoppedEarly(everything.scans.find((s) => s.fields !== 0)), "a search of fewer hits than its limit reads every file");
		console.log(`# ${early} of 80 searches stopped early, ${forksPastTheStop} of them counting forks by the headers of files they did not read`);
	});
});

test("a fork older than where the search stops is counted from its header, and its copy is not a hit of its own", async () => {
	await withAgentDir("recall-newest-fork", async (dir) => {
		const cwd = path.join(dir, "p");
		fs.mkdirSync(cwd);
		const start = Date.now() - 30 * DAY_MS;
		const { parent, fork, many, fillers } = withFakeClock(start, (clock) => {
			const p = SM.create(cwd);
			p.appendMessage({ role: "user", content: "the first needle", timestamp: Date.now() });
			clock.advance(60_000);
			p.appendMessage({ role: "assistant", content: [{ type: "text", text: "noted" }], timestamp: Date.now() });
			clock.advance(1_800_000);
			const m = SM.create(cwd);
			for (const word of ["one", "two", "three"]) m.appendMessage({ role: "user", content: `needle ${word}`, timestamp: Date.now() });
			m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
			clock.advance(1_800_000);
			const f = SM.forkFrom(p.getSessionFile(), cwd);
			f.appendMessage({ role: "user", content: "talk in the fork", timestamp: Date.now() });
			const others = [];
			for (let i = 0; i < 30; i++) {
				clock.advance(3_600_000);
				const s = SM.create(cwd);
				s.appendMessage({ role: "user", content: `needle ${i}`, timestamp: Date.now() });
				s.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
				others.push(s.getSessionFile());
			}
			clock.advance(3_600_000);
			p.appendMessage({ role: "user", content: "the parent goes on: needle again", timestamp: Date.now() });
			return { parent: p.getSessionFile(), fork: f.getSessionFile(), many: m.getSessionFile(), fillers: others };
		});
		timeFilesByLastEntry([parent, fork, many, ...fillers]);
		const { result, scans: read } = await scansOf(() => recallSearch({ cwd, query: "needle", limit: 3 }));
		assert.deepEqual(
			result.hits.map((h) => [path.basename(h.sessionFile), h.snippet, h.forks]),
			[
				[path.basename(parent), "the parent goes on: «needle» again", 0],
				[path.basename(parent), "the first «needle»", 1],
				[path.basename(fillers.at(-1)), "«needle» 29", 0],
			],
		);
		assert.equal(result.truncated, true);
		const expected = await oracleSearch(new PiView(SM), { cwd, query: "needle", limit: 3 });
		assert.deepEqual(result.hits.map(comparable), expected.hits.map(comparable));
		const query = read.filter((s) => s.fields !== 0).at(-1);
		assert.ok(stoppedEarly(query), `the fork (the oldest file) was not read for the query: ${JSON.stringify(read)}`);
		assert.equal(read.at(-1).fields, 0, "the files not read were looked at for their headers");
		// One session's hits past the limit: only that session is read, newer ones are not.
		for (const limit of [1, 2, 3]) {
			const { result: one, scans: reads } = await scansOf(() => recallSearch({ cwd, query: "needle", session: many, limit }));
			assert.deepEqual(reads.filter((r) => r.fields !== 0).map((r) => r.files), [1], `limit ${limit}: one file read`);
			assert.deepEqual(one.hits.map((h) => h.snippet), ["«needle» three", "«needle» two", "«needle» one"].slice(0, limit), `limit ${limit}`);
			assert.equal(one.truncated, limit < 3);
		}
		// With every file read, the fork's copy is still shown once, in the parent.
		const all = await recallSearch({ cwd, query: "first needle", limit: 50 });
		assert.deepEqual(all.hits.map((h) => [path.basename(h.sessionFile), h.forks]), [[path.basename(parent), 1]]);
	});
});

test("a session whose messages are dated after its file's last change counts as last active a second after it", async () => {
	await withAgentDir("recall-newest-clock", async (dir) => {
		const cwd = path.join(dir, "p");
		fs.mkdirSync(cwd);
		const now = Date.now();
		const session = (atMs, text) =>
			withFakeClock(atMs, () => {
				const sm = SM.create(cwd);
				sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
				sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
				return sm.getSessionFile();
			});
		// Written under a clock an hour ahead: its messages are later than its file.
		const ahead = session(now, "needle ahead");
		fs.utimesSync(ahead, (now - 3_600_000) / 1000, (now - 3_600_000) / 1000);
		const between = session(now - 1_800_000, "needle between");
		fs.utimesSync(between, (now - 1_800_000) / 1000, (now - 1_800_000) / 1000);
		const behind = session(now - 7_200_000, "needle behind");
		fs.utimesSync(behind, (now - 7_200_000) / 1000, (now - 7_200_000) / 1000);
		const order = (r) => r.hits.map((h) => path.basename(h.sessionFile));
		const names = (...files) => files.map((f) => path.basename(f));
		assert.deepEqual(order(await recallSearch({ cwd, query: "needle" })), names(between, ahead, behind), "at its file's time and a second, not at its messages'");
		// Limited, the search stops at the same place in that order: nothing is missed or moved.
		for (let limit = 1; limit <= 3; limit++) {
			const limited = await recallSearch({ cwd, query: "needle", limit });
			assert.deepEqual(order(limited), names(between, ahead, behind).slice(0, limit), `limit ${limit}`);
			assert.equal(limited.truncated, limit < 3);
		}
		// A file's time and a second covers a clock a moment ahead (the kernel's is coarser
		// than a process's): then the order is the listing's, by the messages' times.
		const close = session(now - 200, "needle close behind");
		fs.utimesSync(close, (now - 200) / 1000, (now - 200) / 1000);
		fs.utimesSync(ahead, (now - 500) / 1000, (now - 500) / 1000);
		assert.deepEqual(order(await recallSearch({ cwd, query: "needle" })), names(ahead, close, between, behind));
		assert.deepEqual((await SM.list(cwd)).map((s) => path.basename(s.path)), names(ahead, close, between, behind));
	});
});

test("a file last changed by an entry that is no message is ordered by its messages, where the search stops too", async () => {
	await withAgentDir("recall-newest-named", async (dir) => {
		const cwd = path.join(dir, "p");
		fs.mkdirSync(cwd);
		const now = Date.now();
		const at = (ms, fill) =>
			withFakeClock(ms, (clock) => {
				const sm = SM.create(cwd);
				fill(sm, clock);
				return sm.getSessionFile();
			});
		const talk = (text) => (sm) => {
			sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
		};
		// Named seven seconds after its last message: its file is the newest, its session is not.
		const named = at(now - 7_000, (sm, clock) => {
			talk("needle named later")(sm);
			clock.advance(7_000);
			sm.appendSessionInfo("named later");
		});
		const newer = at(now - 5_000, talk("needle newer"));
		const older = at(now - 9_000, talk("needle older"));
		timeFilesByLastEntry([named, newer, older]);
		const order = async (limit) => (await recallSearch({ cwd, query: "needle", limit })).hits.map((h) => path.basename(h.sessionFile));
		const names = [newer, named, older].map((f) => path.basename(f));
		assert.deepEqual((await SM.list(cwd)).map((s) => path.basename(s.path)), names);
		for (let limit = 1; limit <= 3; limit++) assert.deepEqual(await order(limit), names.slice(0, limit), `limit ${limit}`);
	});
});

test("a session begun before others but active after them comes first: names only start the reading, file times end it", async () => {
	await withAgentDir("recall-newest-begun", async (dir) => {
		const cwd = path.join(dir, "p");
		fs.mkdirSync(cwd);
		const now = Date.now();
		// pi names a file for its session's start: `early` began first (its name is the oldest), but was active last.
		const begun = (startMs, activeMs, text) =>
			withFakeClock(startMs, (clock) => {
				const sm = SM.create(cwd);
				clock.advance(activeMs - startMs);
				sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
				sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: Date.now() });
				return sm.getSessionFile();
			});
		const early = begun(now - 20_000, now - 4_000, "needle early");
		const second = begun(now - 5_000, now - 5_000, "needle second");
		const third = begun(now - 6_000, now - 6_000, "needle third");
		timeFilesByLastEntry([early, second, third]);
		const names = [early, second, third].map((f) => path.basename(f));
		assert.deepEqual((await SM.list(cwd)).map((s) => path.basename(s.path)), names);
		for (let limit = 1; limit <= 3; limit++) {
			const { result, scans: read } = await scansOf(() => recallSearch({ cwd, query: "needle", limit }));
			assert.deepEqual(result.hits.map((h) => path.basename(h.sessionFile)), names.slice(0, limit), `limit ${limit}`);
			assert.equal(result.truncated, limit < 3, `limit ${limit}`);
			// Read by name first (the newest names), then what is left newest first.
			if (limit === 1) assert.equal(read.filter((s) => s.fields !== 0).length, 2, "a second reading, by file time");
		}
	});
});
