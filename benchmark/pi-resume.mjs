#!/usr/bin/env node
// pi's own /resume, timed in real pi 1.6.0 under tmux, as published and with this package
// (`pi -e <package dir>`), side by side: from Enter on /resume to the whole list on screen.
// A benchmark, not a test (no timing is asserted anywhere).
//
//   PI_BENCH_DATA=/path/to/bench-data node benchmark/pi-resume.mjs            listing-10k, 3 samples
//   node benchmark/pi-resume.mjs --samples 5 --data listing-5k
//   node benchmark/pi-resume.mjs --quick                                    1,000 generated sessions
//   options: --sides published,package,cached   --no-second-all   --published-second-all
//   more sides: tarballs (the package from pack/'s tarballs in npm's layout) and checkout (a
//   checkout with its devDependencies, a copy of pi of its own among them), each with -e
//
// "package" is this repository with -e, whose node_modules holds the very pi that runs;
// "tarballs" and "checkout" are the package as users get it, apart from that pi.
//
// Each sample is a fresh pi process, the sides alternating. In one process: /resume (the
// current folder), Tab (All, the first in the process), Escape, /resume again (current, then
// All again; pi as published reads everything again, so its second All, minutes long on
// 10,000 files, is timed only with --published-second-all, and the row compares with its
// first). "cached" is the package with its persistent listing cache
// (PI_SESSION_NATIVE_CACHE_DIR), written by one untimed pi process before the samples: the
// first /resume of a new pi process then reads it.
//
// The data's files are hard-linked (or, across file systems, its folders symlinked) into a
// temp agent dir, the first folder under the name of a temp cwd, so that it is pi's current
// folder; the data itself is never written.
// Times are read by polling capture-pane every 20 ms (their resolution); the machine is
// shared, so read medians and ratios.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeCwd, writeCorpus } from "../__test__/helpers/pi-corpus.mjs";
import { layoutsUnavailable, packageIn } from "../__test__/helpers/pi-layouts.mjs";
import { closePicker, PiWindow, pickerState, REPO_ROOT, tmuxUnavailable } from "../__test__/helpers/pi-tmux.mjs";
import { listingPath } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
	const i = args.indexOf(name);
	return i === -1 ? fallback : args[i + 1];
};
const quick = args.includes("--quick");
const dataName = option("--data", "listing-10k");
const samples = Number(option("--samples", quick ? 3 : 3));
const sides = option("--sides", "published,package,cached").split(",");
const secondAll = !args.includes("--no-second-all");
const publishedSecondAll = args.includes("--published-second-all");
const TIMEOUT_MS = 15 * 60 * 1000;
const POLL_MS = 20;

const unavailable = tmuxUnavailable();
if (unavailable) {
	console.error(`cannot run pi here: ${unavailable}`);
	process.exit(1);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-resume-bench-"));
const running = new Set();
process.on("exit", () => {
	for (const win of running) win.stop();
	fs.rmSync(root, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));
const cwd = path.join(root, "project");
fs.mkdirSync(cwd);

/** The agent dir every pi of this run uses (pi writes its settings there, never in the data). */
function agentDir() {
	const dir = path.join(root, "agent");
	const sessions = path.join(dir, "sessions");
	fs.mkdirSync(sessions, { recursive: true });
	if (quick) {
		writeCorpus(dir, fs.realpathSync(cwd), { folders: 20, perFolder: 50 });
		return { dir, label: "1,000 generated sessions in 20 folders (--quick)" };
	}
	const source = path.join(listingPath(dataName), "sessions");
	if (!fs.existsSync(source)) {
		console.error(`${source} is missing: node benchmark/generate.mjs --listing (or set PI_BENCH_DATA), or --quick`);
		process.exit(1);
	}
	const folders = fs.readdirSync(source).sort();
	let how = "hard links";
	folders.forEach((name, i) => {
		const from = path.join(source, name);
		const to = path.join(sessions, i === 0 ? encodeCwd(fs.realpathSync(cwd)) : name);
		// Hard links: pi's picker calls realpathSync on every session, and a symlinked folder
		// would make that dearer than in a real agent dir. Another file system: symlinks.
		if (how === "hard links") {
			try {
				fs.mkdirSync(to);
				for (const file of fs.readdirSync(from)) fs.linkSync(path.join(from, file), path.join(to, file));
				return;
			} catch {
				how = "symlinked folders";
				fs.rmSync(sessions, { recursive: true, force: true });
				fs.mkdirSync(sessions);
				folders.slice(0, i).forEach((earlier, j) =>
					fs.symlinkSync(path.join(source, earlier), path.join(sessions, j === 0 ? encodeCwd(fs.realpathSync(cwd)) : earlier)),
				);
			}
		}
		fs.symlinkSync(from, to);
	});
	const files = folders.reduce((n, f) => n + fs.readdirSync(path.join(source, f)).filter((x) => x.endsWith(".jsonl")).length, 0);
	return { dir, label: `${dataName}: ${files.toLocaleString("en-US")} files in ${folders.length} folders (${process.env.PI_BENCH_DATA ? "PI_BENCH_DATA" : "benchmark/data"}, ${how})` };
}

const agent = agentDir();
const home = path.join(root, "home");
fs.mkdirSync(home);
const cacheDir = path.join(root, "cache");
fs.mkdirSync(cacheDir);

const layouts = new Map();
function layoutFolder(layout) {
	if (!layouts.has(layout)) {
		const why = layoutsUnavailable();
		if (why) {
			console.error(`cannot lay out the package: ${why}`);
			process.exit(1);
		}
		layouts.set(layout, packageIn(layout, path.join(root, "layouts")));
	}
	return layouts.get(layout);
}

function sideOptions(side) {
	if (side === "published") return { args: [], env: {} };
	if (side === "tarballs" || side === "checkout") return { args: ["-e", layoutFolder(side)], env: {} };
	if (side === "package") return { args: ["-e", REPO_ROOT], env: {} };
	if (side === "cached") return { args: ["-e", REPO_ROOT], env: { PI_SESSION_NATIVE_CACHE_DIR: cacheDir } };
	throw new Error(`unknown side ${side}`);
}

async function timed(win, action, scope) {
	const t0 = performance.now();
	action();
	const state = await win.waitFor((s) => pickerState(s, scope), { timeoutMs: TIMEOUT_MS, intervalMs: POLL_MS, what: `the ${scope} list` });
	return { ms: performance.now() - t0, count: state.count, rows: state.rows };
}

async function openResume(win) {
	win.type("/resume");
	await win.waitFor((s) => s.includes("/resume"), { what: "/resume typed" });
}

/** One pi process: the four timings. */
async function sample(side) {
	const { args: piArgs, env } = sideOptions(side);
	const win = await PiWindow.start({ cwd: fs.realpathSync(cwd), agentDir: agent.dir, home, args: piArgs, env, timeoutMs: TIMEOUT_MS });
	running.add(win);
	try {
		const out = {};
		await openResume(win);
		out.current = await timed(win, () => win.keys("Enter"), "current");
		out.all = await timed(win, () => win.keys("Tab"), "all");
		await closePicker(win);
		await openResume(win);
		out.current2 = await timed(win, () => win.keys("Enter"), "current");
		if (secondAll && (side !== "published" || publishedSecondAll)) out.all2 = await timed(win, () => win.keys("Tab"), "all");
		await closePicker(win);
		return out;
	} finally {
		win.stop();
		running.delete(win);
	}
}

const MEASURES = [
	["current", "/resume, current folder (first in the process)"],
	["all", "Tab to All (first in the process)"],
	["current2", "second /resume, current folder"],
	...(secondAll ? [["all2", "second /resume, Tab to All"]] : []),
];

console.log(`pi /resume benchmark: ${agent.label}; ${samples} samples per side; Node 22 (${process.version} drives tmux)`);
if (sides.includes("cached")) {
	process.stdout.write("priming the persistent listing cache (one untimed pi process) ... ");
	await sample("cached");
	const size = fs.readdirSync(cacheDir).reduce((n, f) => n + fs.statSync(path.join(cacheDir, f)).size, 0);
	console.log(`${(size / 1024 / 1024).toFixed(0)} MB`);
}

const results = Object.fromEntries(sides.map((s) => [s, []]));
for (let i = 0; i < samples; i++) {
	// Alternate which side goes first.
	const order = i % 2 === 0 ? sides : [...sides].reverse();
	for (const side of order) {
		const r = await sample(side);
		results[side].push(r);
		const shown = MEASURES.filter(([k]) => r[k]);
		console.log(`  sample ${i + 1} ${side.padEnd(9)} ${shown.map(([k]) => `${k} ${(r[k].ms / 1000).toFixed(2)} s (${r[k].count})`).join("  ")}`);
	}
}

// Every side must have shown the same lists (counts and first rows). A row's last column is
// its age ("59m", "1y"), which moves on between samples for files written minutes ago (the
// data's broken files have only their mtime): it is left out of the comparison.
const problems = [];
const withoutAge = (rows) => JSON.stringify(rows.map((row) => row.replace(/\s+\S+$/, "")));
// A measurement a side did not time (published's second All) is compared with its first All.
const timedOr = (r, key) => r[key] ?? (key === "all2" ? r.all : undefined);
for (const [key] of MEASURES) {
	const ref = timedOr(results[sides[0]][0], key);
	for (const side of sides) {
		for (const result of results[side]) {
			const r = { [key]: timedOr(result, key) };
			if (r[key].count !== ref.count || withoutAge(r[key].rows) !== withoutAge(ref.rows)) {
				problems.push(`${side} ${key}: ${r[key].count} rows (${sides[0]}: ${ref.count}), first page ${withoutAge(r[key].rows) === withoutAge(ref.rows) ? "same" : "different"}`);
			}
		}
	}
}

const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);
const cell = (xs) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))})`;

const header = ["measurement", ...sides.flatMap((s) => (s === sides[0] ? [`${s} median (min-max)`] : [`${s} median (min-max)`, `${s}/${sides[0]}`]))];
const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
const notes = [];
for (const [key, label] of MEASURES) {
	const baseTimed = results[sides[0]].every((r) => r[key]);
	const base = results[sides[0]].map((r) => timedOr(r, key).ms);
	const count = timedOr(results[sides[0]][0], key).count.toLocaleString("en-US");
	const row = [`${label}, ${count} rows`, baseTimed ? cell(base) : `not timed; first All ${fmt(median(base))}`];
	if (!baseTimed) notes.push(`${sides[0]}'s second All was not timed (--published-second-all times it): pi as published reads every file again, so its ratios are against its first All.`);
	for (const side of sides.slice(1)) {
		const xs = results[side].map((r) => r[key].ms);
		// The ratio of medians: the sides run in different processes, not in pairs.
		row.push(cell(xs), `${(median(xs) / median(base)).toFixed(3)}x`);
	}
	lines.push(`| ${row.join(" | ")} |`);
}
const table = [...lines, ...(notes.length ? ["", ...notes] : [])].join("\n");
console.log(`\n${table}\n`);
if (problems.length) {
	console.log(`the sides showed different lists:\n  ${problems.join("\n  ")}`);
	process.exitCode = 1;
} else {
	console.log("every side showed the same row counts and the same first page of rows (ages aside)");
}
if (!quick) {
	const file = path.join(path.dirname(new URL(import.meta.url).pathname), "results-pi.md");
	const stamp = new Date().toISOString().slice(0, 16).replace("T", " ");
	fs.writeFileSync(
		file,
		`# pi /resume, published vs with pi-session-native\n\n\`node benchmark/pi-resume.mjs\`, ${stamp} UTC, ${agent.label}, ${samples} samples per side, ${os.cpus().length} cores.\n\n${table}\n`,
	);
	console.log(`written to ${path.relative(REPO_ROOT, file)}`);
}
