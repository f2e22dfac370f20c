// Real pi 1.6.0 (the devDependency's CLI on Node 22) under tmux, typed into with send-keys and
// read with capture-pane: /resume and Tab to All show the same rows, page by page, in pi as
// published, with this package as `pi -e <package dir>`, and installed with `pi install <dir>`,
// from this repository, from the tarballs in npm's layout and from a checkout whose
// devDependencies put a copy of pi of its own beside it; a copy of the package without its
// .node leaves pi working, with one notice; /usage renders, with usageReport's all-time total
// and the last 30 days' chart of daily cost.
//
// That the package answered is seen from outside: PI_SESSION_NATIVE_CACHE_DIR makes this
// package's listing (and nothing of pi's) write its cache file there.
//
// pi needs Node >= 22.19, so this file runs in the Node 22 pass of __test__/run.mjs only
// (the Node 20 pass skips it), and only where tmux is installed (.ci/run installs it; no npm
// package carries it): without tmux every test here is skipped, saying so, and with CI=true
// that is a failure.
//
//   node __test__/run.mjs __test__/pi-tui.test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createRequire } from "node:module";
import { encodeCwd, sessionText, writeCorpus } from "./helpers/pi-corpus.mjs";
import { layoutsUnavailable, packageIn as layoutFolder } from "./helpers/pi-layouts.mjs";
import { lastDays } from "../extension/usage.mjs";
import { formatCost, formatTokens } from "../extension/usage-view.mjs";
import { closePicker, NODE22, PI_CLI, PiWindow, readPicker, REPO_ROOT, tmuxUnavailable } from "./helpers/pi-tmux.mjs";
import { skipForMissingTool } from "./helpers/tools.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip =
	major < 22 || (major === 22 && minor < 19)
		? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it`
		: skipForMissingTool(tmuxUnavailable());

const { usageReport, checkSession } = createRequire(import.meta.url)("../index.js");

const FOLDERS = 3;
const PER_FOLDER = 40;
const NOTICE = "pi-session-native: its native addon did not load";
const CACHE_FILE = "pi-session-native-listing.v4.bin";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-"));
const windows = [];
after(() => {
	for (const w of windows) w.stop();
	fs.rmSync(root, { recursive: true, force: true });
});

/** A fresh world: the same corpus, its own agent dir, home and listing cache folder. */
function world(label) {
	const dir = path.join(root, label);
	const agentDir = path.join(dir, "agent");
	const home = path.join(dir, "home");
	const cacheDir = path.join(dir, "cache");
	const cwd = path.join(root, "project");
	for (const d of [home, cacheDir, cwd]) fs.mkdirSync(d, { recursive: true });
	writeCorpus(agentDir, fs.realpathSync(cwd), { folders: FOLDERS, perFolder: PER_FOLDER });
	return { agentDir, home, cacheDir, cwd: fs.realpathSync(cwd), env: { PI_SESSION_NATIVE_CACHE_DIR: cacheDir } };
}

async function startPi(w, args = []) {
	const win = await PiWindow.start({ cwd: w.cwd, agentDir: w.agentDir, home: w.home, args, env: w.env });
	windows.push(win);
	return win;
}

/** /resume, the current folder's rows page by page, Tab, All's rows, Escape. */
async function resumeRows(win) {
	await win.command("/resume");
	const current = await readPicker(win, "current");
	win.keys("Tab");
	const all = await readPicker(win, "all");
	await closePicker(win);
	return { current, all };
}

/** A copy of the package as it would be installed, without the compiled addon. */
function packageWithoutAddon() {
	const dir = path.join(root, "no-addon", "pi-session-native");
	fs.mkdirSync(dir, { recursive: true });
	const { files } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
	for (const name of ["package.json", ...files]) {
		const from = path.join(REPO_ROOT, name);
		if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, name), { recursive: true });
	}
	for (const name of fs.readdirSync(dir)) if (name.endsWith(".node")) fs.rmSync(path.join(dir, name));
	return dir;
}

/** `pi install <dir>` into the world's agent dir: the folder becomes an entry of its settings' packages. */
function piInstall(w, dir) {
	const install = spawnSync(NODE22, [PI_CLI, "install", dir], {
		cwd: w.cwd,
		env: { ...process.env, HOME: w.home, PI_CODING_AGENT_DIR: w.agentDir, PI_OFFLINE: "1" },
		encoding: "utf8",
		timeout: 120_000,
	});
	assert.equal(install.status, 0, `pi install failed:\n${install.stdout}\n${install.stderr}`);
	const settings = JSON.parse(fs.readFileSync(path.join(w.agentDir, "settings.json"), "utf8"));
	assert.equal(settings.packages?.length, 1, JSON.stringify(settings));
}

/** pi with the package at `dir` (given with -e, or installed): /resume shows pi's rows, listed by this package. */
async function assertAnswered(label, dir, how) {
	const w = world(label);
	if (how === "install") piInstall(w, dir);
	const win = await startPi(w, how === "-e" ? ["-e", dir] : []);
	assert.deepEqual(await resumeRows(win), baseline);
	assert.ok(fs.existsSync(path.join(w.cacheDir, CACHE_FILE)), "this package's listing answered pi's /resume");
	assert.ok(!win.screen().includes("pi-session-native:"), win.screen());
	win.stop();
}

/** Why the tarballs or the built addon are missing (an error where CI=true), or false. */
function packagesUnavailable() {
	const why = layoutsUnavailable();
	if (why && process.env.CI === "true") throw new Error(why);
	return why ?? false;
}

const layouts = new Map();
/** The package laid out as `layout` leaves it (made once): the folder to give pi. */
function packageIn(layout) {
	if (!layouts.has(layout)) layouts.set(layout, layoutFolder(layout, root));
	return layouts.get(layout);
}

let baseline;

test("pi as published: /resume and All list the generated sessions", { skip }, async () => {
	const w = world("published");
	const win = await startPi(w);
	baseline = await resumeRows(win);
	assert.equal(baseline.current.count, PER_FOLDER);
	assert.equal(baseline.all.count, FOLDERS * PER_FOLDER);
	assert.equal(baseline.all.pages.at(-1).position, FOLDERS * PER_FOLDER);
	assert.deepEqual(fs.readdirSync(w.cacheDir), [], "pi's own listing writes no cache of this package");
	win.stop();
});

test("pi -e <package dir>: the same rows, answered by this package, before and after /reload", { skip }, async () => {
	assert.ok(baseline, "needs the published run");
	const w = world("dash-e");
	const win = await startPi(w, ["-e", REPO_ROOT]);
	assert.deepEqual(await resumeRows(win), baseline, "first /resume");
	assert.ok(fs.existsSync(path.join(w.cacheDir, CACHE_FILE)), "this package's listing ran");
	assert.deepEqual(await resumeRows(win), baseline, "second /resume in the same process");
	await win.command("/reload");
	await win.waitFor((s) => /reloaded/i.test(s), { what: "the reload to finish" });
	// The listing saves its cache when a file changed: a new mtime (rows follow the
	// messages' times, not the mtime) makes the next native listing write the file again.
	fs.rmSync(path.join(w.cacheDir, CACHE_FILE));
	const folder = path.join(w.agentDir, "sessions", fs.readdirSync(path.join(w.agentDir, "sessions")).sort()[0]);
	const touched = path.join(folder, fs.readdirSync(folder).sort()[0]);
	const { mtimeMs } = fs.statSync(touched);
	fs.utimesSync(touched, (mtimeMs + 1000) / 1000, (mtimeMs + 1000) / 1000);
	assert.deepEqual(await resumeRows(win), baseline, "after /reload");
	assert.ok(fs.existsSync(path.join(w.cacheDir, CACHE_FILE)), "this package answers again after /reload");
	assert.ok(!win.screen().includes(NOTICE));
	win.stop();
});

test("pi install <package dir>: the same rows, answered by this package", { skip }, async () => {
	assert.ok(baseline, "needs the published run");
	await assertAnswered("installed", REPO_ROOT, "install");
});

// The ways pi loads a package, each with pi's own copy apart from anything the package holds
// (above, pi runs from this repository's node_modules, the very copy the package would find):
//   - npm's layout, from the tarballs: no copy of pi beside the package (pi install npm:...
//     and pi install git:... with npm, which leave devDependencies and peers out, give this);
//   - a checkout with its devDependencies installed: its own node_modules holds a copy of pi,
//     which `import ... from "@earendil-works/pi-coding-agent"` in a .mjs file finds first;
// each given with -e and installed as a local folder (pi install <dir>: a settings entry).
// /resume must be answered by this package in every one.
for (const layout of ["tarballs", "checkout"]) {
	for (const how of ["-e", "install"]) {
		const label = `${layout}, ${how === "-e" ? "pi -e <dir>" : "pi install <dir>"}`;
		test(`${label}: the same rows, answered by this package`, { skip: skip || packagesUnavailable() }, async () => {
			assert.ok(baseline, "needs the published run");
			await assertAnswered(`${layout}-${how}`, packageIn(layout), how);
		});
	}
}

test("without its native addon: pi lists as published, and says so once", { skip }, async () => {
	assert.ok(baseline, "needs the published run");
	const w = world("no-addon");
	const win = await startPi(w, ["-e", packageWithoutAddon()]);
	const notices = await win.waitFor((s) => s.split(NOTICE).length - 1, { what: "the notice" });
	assert.equal(notices, 1);
	assert.deepEqual(await resumeRows(win), baseline);
	assert.deepEqual(fs.readdirSync(w.cacheDir), [], "nothing of this package ran");
	await win.command("/reload");
	await win.waitFor((s) => /reloaded/i.test(s), { what: "the reload to finish" });
	assert.deepEqual(await resumeRows(win), baseline, "after /reload");
	// /reload redraws pi's screen from scratch: a notice now would be a second one.
	assert.equal(win.screen().split(NOTICE).length - 1, 0, "no second notice after /reload");
	await win.command("/usage");
	await win.waitFor((s) => s.includes("so /usage is not available"), { what: "/usage's notice" });
	win.stop();
});

/** `YYYY-MM-DD` of a time in the local zone (pi's, and /usage's). */
const localDate = (ms) => {
	const d = new Date(ms);
	return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

test("/usage: pi shows usage across sessions, the last 30 days as a chart of daily cost, today's bar marked; its all-time total is usageReport's", { skip }, async () => {
	const w = world("usage");
	// On top of the 2023 corpus (which cost nothing): sessions of the last 30 days that cost
	// $4 (3 days ago, the costliest), $1 (12 days ago) and $2 (today, in two replies).
	const now = Date.now();
	const today = localDate(now);
	const days = lastDays(today, 30);
	const folder = path.join(w.agentDir, "sessions", encodeCwd(w.cwd));
	const spent = [
		[26, 1, 4],
		[17, 1, 1],
		[29, 2, 1],
	];
	for (const [day, turns, cost] of spent) {
		const [y, m, d] = days[day].split("-").map(Number);
		// Local noon of the day; today, a minute ago (and after midnight).
		const startMs = day === 29 ? Math.max(new Date(y, m - 1, d, 0, 0, 1).getTime(), now - 60e3) : new Date(y, m - 1, d, 12).getTime();
		const id = `0199ffff-0000-7000-8000-${String(day).padStart(12, "0")}`;
		const file = path.join(folder, `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
		fs.writeFileSync(file, sessionText({ id, cwd: w.cwd, startMs, turns, title: `spent on ${days[day]}`, cost }));
	}
	const win = await startPi(w, ["-e", REPO_ROOT]);
	await win.command("/usage");
	const screen = await win.waitFor((s) => (/^all time\s/m.test(s) && /tab by model/.test(s) ? s : null), { what: "the /usage view" });
	// The chart, above the tables: 30 days of a gap and a two-column bar at pi's 200 columns,
	// six lines of eighths, scaled to the $4 day.
	const lines = screen.split("\n");
	const title = lines.indexOf("Daily cost, last 30 days");
	assert.ok(title !== -1 && title < lines.findIndex((l) => /^period\s/.test(l)), screen);
	assert.match(lines[title + 1], /^ \$4\.00 ┤/, screen);
	const axis = lines[title + 7];
	assert.match(axis, /^ +\$0 └─{90}$/, screen);
	const first = axis.indexOf("└") + 2;
	const eighths = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
	const heights = days.map((_, i) =>
		lines.slice(title + 1, title + 7).reduce((sum, line) => {
			const ch = line[first + 3 * i] ?? " ";
			return sum + (ch === " " ? 0 : eighths.indexOf(ch) + 1);
		}, 0),
	);
	const expected = days.map(() => 0);
	Object.assign(expected, { 26: 48, 17: 12, 29: 24 });
	assert.deepEqual(heights, expected, screen);
	// Today's bar, the last, marked under it with its cost.
	const under = lines[title + 8];
	assert.equal(under.indexOf("▲"), first + 3 * 29, screen);
	assert.match(under, /today \$2\.00 ▲$/);
	assert.equal(under.indexOf(days[0].slice(5)), first, "the first day's date under its bar");
	const saved = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = w.agentDir;
	let report;
	try {
		report = await usageReport({ groupBy: "model" });
	} finally {
		if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = saved;
	}
	assert.equal(report.totals.sessions, FOLDERS * PER_FOLDER + spent.length);
	const t = report.totals;
	assert.equal(t.cost, 4 + 1 + 2 * 1);
	const allTime = screen.split("\n").find((l) => /^all time\s/.test(l));
	assert.deepEqual(
		allTime.split(/\s{2,}/),
		["all time", ...[t.input, t.output, t.cacheRead, t.cacheWrite, t.totalTokens].map(formatTokens), formatCost(t.cost), formatTokens(t.sessions)],
		screen,
	);
	// By model: the corpus has one model, its row the same total.
	assert.match(screen, new RegExp(`^test-provider/test-model\\s+.*${formatTokens(t.totalTokens).replace(/[.$]/g, "\\$&")}`, "m"));
	win.keys("Escape");
	await win.waitFor((s) => !s.includes("tab by model"), { what: "the view to close" });
	win.stop();
});

test("/doctor: pi shows what checkSession finds in this project's session files", { skip }, async () => {
	const w = world("doctor");
	const folder = path.join(w.agentDir, "sessions", encodeCwd(w.cwd));
	const [first] = fs.readdirSync(folder).filter((n) => n.endsWith(".jsonl")).sort();
	// A crash in the middle of an append: the file's last line is torn.
	const torn = path.join(folder, first);
	fs.appendFileSync(torn, '{"type":"message","id":"torn","parentId":null,"timestamp":"2025-');
	const report = checkSession(torn);
	assert.equal(report.findings[0].problem, "torn-last-line");
	const win = await startPi(w, ["-e", REPO_ROOT]);
	await win.command("/doctor");
	const screen = await win.waitFor((s) => (/with problems/.test(s) ? s : null), { what: "/doctor's notice" });
	assert.match(screen, /1 with problems/);
	assert.match(screen, /torn-last-line/);
	assert.ok(screen.replace(/\s+/g, "").includes(first.replace(/\s+/g, "")), screen);
	win.stop();
});
