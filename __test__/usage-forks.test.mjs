// Reports across sessions count a forked conversation's calls once: seeded random stores
// written by pi's own SessionManager (the reference), with forkFrom (pi --fork) and
// createBranchedSession (/fork, /tree) at random points, forks of forks, forks into
// another project, parents appended to after the fork, a deleted parent, a copy whose
// usage was changed, an unrelated entry that shares an id, and a cycle of parentSession.
// usageReport is compared with a JavaScript oracle of the rule (docs/library.md, usageReport):
// an entry of a fork that is a copy of an entry of its parent (same id, timestamp,
// model key and usage) counts where it was first written, found by walking up
// parentSession while the parent has it; in a cycle, the cycle's smallest path. Every
// groupBy, a cwd scope, since/until, cold and warm after appends, and a new process
// from the persistent cache.
//
//   SEED=123 node __test__/run.mjs __test__/usage-forks.test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { makeWorld, runCli } from "./helpers/cli.mjs";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REFERENCE_FILE, REPO_ROOT } from "./helpers/reference.mjs";
import { compareReports, expectedReport, localDate, record, ZONES } from "./helpers/usage-oracle.mjs";

const require = createRequire(import.meta.url);
const ours = require(path.join(REPO_ROOT, "index.js"));
const { SessionManager: RefSM } = await import(pathToFileURL(REFERENCE_FILE).href);

const SEED = baseSeed();
const PROJECTS = ["/home/user/alpha", "/home/user/beta", "/home/user/gamma"];
const MODELS = [
	["anthropic", "claude-opus-4-5"],
	["openai", "gpt-5.1"],
	["google", "gemini-2.5-pro"],
];
const GROUPS = ["day", "week", "month", "session", "model", "project"];
const CASES = [
	"createBranchedSession",
	"fork into another project",
	"fork of a fork",
	"parent appended to after a fork",
	"copy with changed usage",
	"unrelated entry sharing an id",
	"cycle of parentSession",
	"deleted parent",
];

// The reference stamps entries with `new Date()`; a clock of our own spreads them over
// weeks, so that days, weeks, months and since/until have something to tell apart.
const RealDate = Date;
let now = RealDate.UTC(2025, 9, 20, 8, 0, 0);
class StoreDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(now);
		else super(...args);
	}
	static now() {
		return now;
	}
}
function withClock(rng, fn) {
	globalThis.Date = StoreDate;
	try {
		return fn();
	} finally {
		globalThis.Date = RealDate;
	}
}

/** A store of sessions made by the reference, and what was done to it. */
class Store {
	constructor(rng, agentDir) {
		this.rng = rng;
		this.agentDir = agentDir;
		this.files = []; // every session file written, alive or not
		this.done = new Set();
	}

	tick() {
		now += 1 + this.rng.int(this.rng.bool(0.2) ? 3 * 86400000 : 3600000);
	}

	converse(sm, turns) {
		withClock(this.rng, () => {
			for (let i = 0; i < turns; i++) {
				this.tick();
				sm.appendMessage({ role: "user", content: `question ${i}`, timestamp: now });
				this.tick();
				const [provider, model] = this.rng.pick(MODELS);
				const input = 1 + this.rng.int(5000);
				const output = this.rng.int(2000);
				const cacheRead = this.rng.bool(0.5) ? this.rng.int(10000) : 0;
				const cost = Math.round(this.rng.float() * 3_000_000) / 1_000_000;
				sm.appendMessage({
					role: "assistant",
					content: [{ type: "text", text: `answer ${i}` }],
					provider,
					model,
					api: "faux",
					stopReason: "stop",
					timestamp: now,
					usage: { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost } },
				});
			}
		});
	}

	alive() {
		return this.files.filter((f) => fs.existsSync(f));
	}

	header(file) {
		return JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]);
	}

	newSession() {
		const sm = withClock(this.rng, () => RefSM.create(this.rng.pick(PROJECTS)));
		this.converse(sm, 1 + this.rng.int(4));
		this.files.push(sm.getSessionFile());
	}

	append() {
		const file = this.rng.pick(this.alive());
		this.converse(RefSM.open(file), 1 + this.rng.int(3));
		if (this.files.some((f) => fs.existsSync(f) && this.header(f).parentSession === file)) this.done.add("parent appended to after a fork");
	}

	forkFrom() {
		const source = this.rng.pick(this.alive());
		const cwd = this.rng.pick(PROJECTS);
		const sm = withClock(this.rng, () => {
			this.tick();
			return RefSM.forkFrom(source, cwd);
		});
		if (cwd !== this.header(source).cwd) this.done.add("fork into another project");
		if (this.header(source).parentSession) this.done.add("fork of a fork");
		this.files.push(sm.getSessionFile());
		if (this.rng.bool(0.5)) this.converse(sm, 1 + this.rng.int(2));
	}

	branch() {
		const source = this.rng.pick(this.alive());
		const sm = RefSM.open(source);
		const entries = sm.getEntries();
		const at = this.rng.pick(entries).id;
		withClock(this.rng, () => {
			this.tick();
			sm.createBranchedSession(at);
		});
		// A branch at a point with no assistant reply is written with its first one.
		this.converse(sm, this.rng.int(2) + (fs.existsSync(sm.getSessionFile()) ? 0 : 1));
		this.files.push(sm.getSessionFile());
		this.done.add("createBranchedSession");
	}

	/** A fork's copied assistant line gets other usage: another call, so it counts. */
	changeCopy() {
		const candidates = [];
		for (const file of this.alive()) {
			const parent = this.header(file).parentSession;
			if (!parent || !fs.existsSync(parent)) continue;
			const parentText = fs.readFileSync(parent, "utf8");
			const lines = fs.readFileSync(file, "utf8").split("\n");
			lines.forEach((l, at) => {
				if (at > 0 && l.includes('"role":"assistant"') && parentText.includes(l)) candidates.push({ file, lines, at });
			});
		}
		if (candidates.length === 0) return;
		const { file, lines, at } = this.rng.pick(candidates);
		const entry = JSON.parse(lines[at]);
		const usage = entry.message.usage;
		entry.message.usage = { ...usage, input: usage.input + 7, cost: { ...usage.cost, total: usage.cost.total + 0.5 } };
		lines[at] = JSON.stringify(entry);
		fs.writeFileSync(file, lines.join("\n"));
		this.done.add("copy with changed usage");
	}

	/** An entry of another session gets the id of an assistant entry here (8 hex digits collide). */
	shareId() {
		const alive = this.alive();
		if (alive.length < 2) return;
		const [a, b] = [this.rng.pick(alive), this.rng.pick(alive)];
		if (a === b) return;
		const donor = fs
			.readFileSync(a, "utf8")
			.split("\n")
			.filter((l) => l.includes('"role":"assistant"'))
			.map((l) => JSON.parse(l));
		if (donor.length === 0) return;
		const id = this.rng.pick(donor).id;
		this.converse(RefSM.open(b), 1);
		const lines = fs.readFileSync(b, "utf8").trimEnd().split("\n");
		const last = JSON.parse(lines[lines.length - 1]);
		if (lines.some((l) => l.includes(`"id":"${id}"`))) return;
		last.id = id;
		lines[lines.length - 1] = JSON.stringify(last);
		fs.writeFileSync(b, `${lines.join("\n")}\n`);
		this.done.add("unrelated entry sharing an id");
	}

	appendToParent() {
		const parents = this.alive().map((f) => this.header(f).parentSession).filter((p) => p && fs.existsSync(p));
		if (parents.length === 0) return;
		this.converse(RefSM.open(this.rng.pick(parents)), 1);
		this.done.add("parent appended to after a fork");
	}

	forkOfFork() {
		const forks = this.alive().filter((f) => this.header(f).parentSession);
		if (forks.length === 0) return;
		const sm = withClock(this.rng, () => RefSM.forkFrom(this.rng.pick(forks), this.rng.pick(PROJECTS)));
		this.files.push(sm.getSessionFile());
		this.done.add("fork of a fork");
	}

	forkElsewhere() {
		const source = this.rng.pick(this.alive());
		const cwd = PROJECTS.find((p) => p !== this.header(source).cwd);
		this.files.push(withClock(this.rng, () => RefSM.forkFrom(source, cwd)).getSessionFile());
		this.done.add("fork into another project");
	}

	deleteParent() {
		const parents = new Set(this.alive().map((f) => this.header(f).parentSession).filter(Boolean));
		const alive = [...parents].filter((p) => fs.existsSync(p));
		if (alive.length === 0) return;
		fs.rmSync(this.rng.pick(alive));
		this.done.add("deleted parent");
	}

	/** A session's header names one of its forks as its parent. */
	cycle() {
		const forks = this.alive().filter((f) => {
			const parent = this.header(f).parentSession;
			return parent && fs.existsSync(parent) && !this.header(parent).parentSession;
		});
		if (forks.length === 0) return;
		const fork = this.rng.pick(forks);
		const parent = this.header(fork).parentSession;
		const lines = fs.readFileSync(parent, "utf8").split("\n");
		lines[0] = JSON.stringify({ ...JSON.parse(lines[0]), parentSession: fork });
		fs.writeFileSync(parent, lines.join("\n"));
		this.done.add("cycle of parentSession");
	}

	step() {
		const op = this.rng.weighted([
			[3, "newSession"],
			[3, "append"],
			[3, "forkFrom"],
			[3, "branch"],
			[0.5, "changeCopy"],
			[0.5, "shareId"],
			[0.2, "deleteParent"],
			[0.15, "cycle"],
		]);
		this[op]();
	}
}

// ---- the oracle of the rule ----

function readSession(file) {
	let text;
	try {
		text = fs.readFileSync(file, "utf8");
	} catch {
		return null;
	}
	const lines = text.split("\n").filter((l) => l.trim() !== "");
	let header;
	try {
		header = JSON.parse(lines[0]);
	} catch {
		return null;
	}
	if (header?.type !== "session") return null;
	const entries = [];
	for (const line of lines.slice(1)) {
		try {
			const entry = JSON.parse(line);
			if (entry && typeof entry === "object" && entry.type !== "session") entries.push(entry);
		} catch {
			// a torn line counts nowhere
		}
	}
	return { header, entries };
}

function fingerprint(entry, r) {
	return typeof entry.id === "string" ? JSON.stringify([entry.id, entry.timestamp, r.key, r.input, r.output, r.cacheRead, r.cacheWrite, r.cost]) : null;
}

function forkOracle() {
	const sessions = new Map();
	const session = (file) => {
		if (!sessions.has(file)) {
			const s = readSession(file);
			if (s) {
				s.fingerprints = new Set();
				for (const e of s.entries) {
					const r = record(e);
					const fp = r && fingerprint(e, r);
					if (fp) s.fingerprints.add(fp);
				}
			}
			sessions.set(file, s);
		}
		return sessions.get(file);
	};
	const parentOf = (file) => {
		const p = session(file)?.header.parentSession;
		return typeof p === "string" && p !== "" && session(p) ? p : null;
	};
	const origin = (file, fp) => {
		const walked = [file];
		let here = file;
		for (;;) {
			const parent = parentOf(here);
			if (!parent || !session(parent).fingerprints.has(fp)) return here;
			const at = walked.indexOf(parent);
			if (at !== -1) return walked.slice(at).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))[0];
			walked.push(parent);
			here = parent;
		}
	};
	return {
		entriesOf: (file) => session(file)?.entries ?? [],
		counts: (file, entry, r) => {
			const fp = fingerprint(entry, r);
			return fp === null || origin(file, fp) === file;
		},
	};
}

async function compareAll(rng, label) {
	const oracle = forkOracle();
	const all = await RefSM.listAll();
	const project = rng.pick(PROJECTS);
	const inProject = await RefSM.list(project);
	for (const groupBy of GROUPS) {
		const timezone = rng.pick(ZONES);
		const since = rng.bool(0.3) ? localDate(now - rng.int(30) * 86400000, timezone) : undefined;
		const until = rng.bool(0.3) ? localDate(now - rng.int(20) * 86400000, timezone) : undefined;
		const options = { groupBy, timezone, since, until };
		const what = `${label} ${JSON.stringify(options)} (SEED=${SEED})`;
		compareReports(await ours.usageReport(options), expectedReport(all, options, oracle), `all: ${what}`);
		compareReports(await ours.usageReport({ ...options, cwd: project }), expectedReport(inProject, options, oracle), `cwd ${project}: ${what}`);
	}
}

test("usageReport counts each call of a forked conversation once, where it was first written", async () => {
	console.log(`# usage-forks SEED=${SEED}`);
	const agentDir = tempDir("usage-forks");
	const cacheDir = path.join(agentDir, "cache");
	const saved = { agent: process.env.PI_CODING_AGENT_DIR, cache: process.env.PI_SESSION_NATIVE_CACHE_DIR };
	process.env.PI_CODING_AGENT_DIR = agentDir;
	process.env.PI_SESSION_NATIVE_CACHE_DIR = cacheDir;
	const rng = new Rng(SEED ^ 0xf02c);
	const store = new Store(rng, agentDir);
	try {
		for (let i = 0; i < 4; i++) store.newSession();
		for (let round = 0; round < 4; round++) {
			for (let i = 0; i < 14; i++) store.step();
			// The first round is read cold (nothing cached); the others read what was appended.
			await compareAll(rng, `round ${round}`);
		}
		// The cases the rule names that this seed did not make by chance are made now.
		if (!store.done.has("parent appended to after a fork")) store.appendToParent();
		if (!store.done.has("fork of a fork")) store.forkOfFork();
		if (!store.done.has("fork into another project")) store.forkElsewhere();
		if (!store.done.has("copy with changed usage")) store.changeCopy();
		if (!store.done.has("copy with changed usage")) {
			store.forkElsewhere();
			store.changeCopy();
		}
		for (let i = 0; i < 50 && !store.done.has("unrelated entry sharing an id"); i++) store.shareId();
		if (!store.done.has("cycle of parentSession")) store.cycle();
		if (!store.done.has("deleted parent")) store.deleteParent();
		for (const must of CASES) assert.ok(store.done.has(must), `SEED=${SEED}: the store has no ${must}`);
		await compareAll(rng, "after the rare cases");
		// A new process answers the same from the persistent cache (fingerprints included).
		const script = `const m = require(${JSON.stringify(path.join(REPO_ROOT, "index.js"))});
m.usageReport({ groupBy: "session", timezone: "UTC" }).then((r) => console.log(JSON.stringify(r)));`;
		const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: process.env });
		assert.equal(child.status, 0, child.stderr);
		assert.ok(fs.readdirSync(cacheDir).some((n) => n.includes("usage")), "the accounting cache was saved");
		compareReports(JSON.parse(child.stdout), expectedReport(await RefSM.listAll(), { groupBy: "session", timezone: "UTC" }, forkOracle()), `new process (SEED=${SEED})`);
	} finally {
		for (const [name, value] of [
			["PI_CODING_AGENT_DIR", saved.agent],
			["PI_SESSION_NATIVE_CACHE_DIR", saved.cache],
		]) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
	}
	fs.rmSync(agentDir, { recursive: true, force: true });
});

test("a fork's own figures stay pi's; getInheritedUsage says what was copied", async () => {
	const agentDir = tempDir("usage-inherited");
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		const rng = new Rng(SEED ^ 0x1a4e);
		const store = new Store(rng, agentDir);
		store.newSession();
		const parent = store.files[0];
		const fork = withClock(rng, () => RefSM.forkFrom(parent, PROJECTS[1]));
		store.converse(fork, 2);
		const parentStats = ours.getSessionStats(parent);
		const forkStats = ours.getSessionStats(fork.getSessionFile());
		const inherited = ours.getInheritedUsage(fork.getSessionFile());
		assert.equal(inherited.parentSession, parent);
		assert.equal(inherited.parentFound, true);
		assert.equal(inherited.entries, parentStats.assistantMessages);
		assert.equal(inherited.cost, parentStats.cost);
		assert.equal(inherited.totalTokens, parentStats.tokens.total);
		// getSessionStats is everything in the file, copies included, as pi's /session shows.
		assert.ok(forkStats.cost > inherited.cost);
		const report = await ours.usageReport({ groupBy: "session", timezone: "UTC" });
		const row = (file) => report.rows.find((r) => r.key === file);
		assert.ok(Math.abs(row(fork.getSessionFile()).cost - (forkStats.cost - inherited.cost)) < 1e-9);
		assert.ok(Math.abs(row(parent).cost - parentStats.cost) < 1e-9);
		assert.equal(ours.getInheritedUsage(parent), null, "a session that is no fork");
		assert.throws(() => ours.getInheritedUsage(path.join(agentDir, "missing.jsonl")), { code: "ENOENT" });
		fs.rmSync(parent);
		const orphan = ours.getInheritedUsage(fork.getSessionFile());
		assert.deepEqual([orphan.parentFound, orphan.entries, orphan.cost], [false, 0, 0]);
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
	fs.rmSync(agentDir, { recursive: true, force: true });
});

test("pi-sessions stats: a fork's line says what it inherited; --all --json totals are the API's", async () => {
	const world = makeWorld("pi-cli-forks-");
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = world.agentDir;
	try {
		const rng = new Rng(SEED ^ 0xc11);
		const store = new Store(rng, world.agentDir);
		store.newSession();
		for (let i = 0; i < 8; i++) store.step();
		store.newSession();
		const parent = store.files.at(-1);
		const fork = withClock(rng, () => RefSM.forkFrom(parent, world.project)).getSessionFile();
		const inherited = ours.getInheritedUsage(fork);
		const one = runCli(world, ["stats", fork]);
		assert.equal(one.status, 0, one.stderr);
		assert.match(one.stdout, new RegExp(`^inherited\\s+\\$${inherited.cost.toFixed(4).replace(".", "\\.")}, [\\d,]+ tokens in ${inherited.entries} calls? copied from its parent`, "m"));
		assert.doesNotMatch(runCli(world, ["stats", parent]).stdout, /^inherited/m);
		const json = runCli(world, ["stats", fork, "--json"]);
		assert.deepEqual(JSON.parse(json.stdout).cost, ours.getSessionStats(fork).cost, "one session's figures stay pi's");
		// The CLI's accounting cache is its own (inside the world); the totals are the same.
		const all = runCli(world, ["stats", "--all", "--json", "--by", "session", "--tz", "UTC"]);
		assert.equal(all.status, 0, all.stderr);
		const api = await ours.usageReport({ groupBy: "session", timezone: "UTC" });
		compareReports(JSON.parse(all.stdout), api, `CLI --all --json (SEED=${SEED})`);
		compareReports(api, expectedReport(await RefSM.listAll(), { groupBy: "session", timezone: "UTC" }, forkOracle()), `API (SEED=${SEED})`);
		fs.rmSync(parent);
		assert.match(runCli(world, ["stats", fork]).stdout, /^inherited\s+unknown: its parent session is gone/m);
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
		world.cleanup();
	}
});
