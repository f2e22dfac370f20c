#!/usr/bin/env node
// grepSessions against a JavaScript implementation of the same semantics (our listAll,
// then readFileSync + JSON.parse of each line + matchAll: __test__/helpers/grep-oracle.mjs)
// and against ripgrep (`rg --fixed-strings --ignore-case --count`, raw bytes on every
// core; different answers, it only sets the pace of reading), over a listing corpus, each
// sample a fresh process, sides alternating, page cache warm, no listing cache. Times are
// whole processes (start to exit: ours and the JS side include starting Node); the JS and
// ours sides also report the time inside the process, and their peak RSS. A last column is
// the CLI (`pi-sessions grep --all --json`) with its listing cache warm, as people run it.
// Also: the CLI's first line (`pi-sessions grep --all --json`) on the same folder for a
// word of the newest session's first message.
//
//   node benchmark/generate.mjs listing-10k               the corpus (2.2 GB; about a minute)
//   PI_BENCH_DATA=/path/to/data node benchmark/grep.mjs [--corpus listing-10k] [--samples 5]
//   node benchmark/generate.mjs listing-10k --listing-scale 0.02 && node benchmark/grep.mjs --samples 3
//                                                         a small stand-in, for a sanity ratio
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIR, DATA_DIR, REPO_ROOT } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : fallback;
};
const samples = Number(opt("--samples", 5));
const corpusName = opt("--corpus", "listing-10k");
const corpus = join(DATA_DIR, corpusName);
// A word in many blocks (their whole texts are returned: the cost grows with them) and
// one in none (the pace of reading alone).
const literals = opt("--literal", "keybinding,zebra").split(",");
const literal = literals[0];
// A regex in many blocks, and one in few (its literal part lets most files go unparsed).
const regexes = args.includes("--regex") ? [opt("--regex")] : ["re:compact(ion|ed) \\w+", "re:\\bzebras?\\b"];
if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus} (node benchmark/generate.mjs ${corpusName})`);
const hasRg = spawnSync("rg", ["--version"]).status === 0;

const sessionsRoot = join(corpus, "sessions");
const files = readdirSync(sessionsRoot, { withFileTypes: true })
	.filter((d) => d.isDirectory())
	.flatMap((d) => readdirSync(join(sessionsRoot, d.name)).filter((n) => n.endsWith(".jsonl")).map((n) => join(sessionsRoot, d.name, n)));
const bytes = files.reduce((sum, f) => sum + statSync(f).size, 0);

const env = { ...process.env, PI_CODING_AGENT_DIR: corpus, PI_SESSION_NATIVE_CACHE_DIR: "" };
// The CLI as people run it: its listing cache on (a folder of our own, primed by the warm-up run).
const cliEnv = { ...process.env, PI_CODING_AGENT_DIR: corpus, PI_SESSION_NATIVE_CACHE_DIR: mkdtempSync(join(tmpdir(), "grep-bench-cache-")) };
const oracleUrl = new URL("../__test__/helpers/grep-oracle.mjs", import.meta.url).href;
// Each prints { ms, matches, rss } as one JSON line.
const scripts = {
	ours: (pattern) => `
const t0 = performance.now();
require(${JSON.stringify(REPO_ROOT)}).grepSessions(${JSON.stringify(pattern)}).then((m) => {
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ ms, matches: m.length, ranges: m.reduce((a, x) => a + x.ranges.length, 0), rss: process.resourceUsage().maxRSS }));
});`,
	js: (pattern) => `
const t0 = performance.now();
const { SessionManager } = require(${JSON.stringify(REPO_ROOT)});
import(${JSON.stringify(oracleUrl)}).then(async ({ oracleGrep }) => {
  const m = oracleGrep(await SessionManager.listAll(), ${JSON.stringify(pattern)});
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ ms, matches: m.length, ranges: m.reduce((a, x) => a + x.ranges.length, 0), rss: process.resourceUsage().maxRSS }));
});`,
};

function timed(command, argv, options = {}) {
	const t0 = performance.now();
	const r = spawnSync(command, argv, { encoding: "utf8", maxBuffer: 1 << 30, ...options });
	const ms = performance.now() - t0;
	// rg and the CLI exit 1 when nothing matches, as grep does.
	if (r.status !== 0 && !(r.status === 1 && (command === "rg" || argv.includes("grep")))) throw new Error(`${command} failed (${r.status}): ${r.stderr}`);
	return { ms, stdout: r.stdout };
}

const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

/** Sides alternating (and which goes first) for `samples` rounds. */
function compare(pattern) {
	const sides = {
		ours: () => timed(process.execPath, ["-e", scripts.ours(pattern)], { env }),
		js: () => timed(process.execPath, ["-e", scripts.js(pattern)], { env }),
	};
	// Into a pipe whose reader counts the lines (the output may be larger than a string can be).
	sides.cli = () =>
		timed("sh", ["-c", '"$0" "$1" grep --all --json "$2" | wc -l', process.execPath, join(REPO_ROOT, "bin", "pi-sessions"), pattern], { env: cliEnv });
	if (hasRg && !pattern.startsWith("re:")) sides.rg = () => timed("rg", ["--fixed-strings", "--ignore-case", "--count", "--no-config", pattern, sessionsRoot]);
	const names = Object.keys(sides);
	const runs = Object.fromEntries(names.map((n) => [n, []]));
	for (const n of names) sides[n](); // page cache warm
	for (let s = 0; s < samples; s++) {
		const order = s % 2 ? [...names].reverse() : names;
		for (const n of order) runs[n].push(sides[n]());
	}
	const inner = (n) => runs[n].map((r) => JSON.parse(r.stdout));
	const [ours, js] = [inner("ours"), inner("js")];
	const cliMatches = Number(runs.cli[0].stdout.trim());
	if (ours[0].matches !== js[0].matches || ours[0].ranges !== js[0].ranges || cliMatches !== ours[0].matches) {
		throw new Error(`ours and the JS implementation disagree on ${pattern}: ${JSON.stringify(ours[0])} vs ${JSON.stringify(js[0])}`);
	}
	const ratio = (a, b) => median(runs[a].map((r, i) => r.ms / runs[b][i].ms));
	return {
		pattern,
		matches: ours[0].matches,
		ours: median(runs.ours.map((r) => r.ms)),
		oursInner: median(ours.map((r) => r.ms)),
		oursRss: median(ours.map((r) => r.rss)) / 1024,
		js: median(runs.js.map((r) => r.ms)),
		jsInner: median(js.map((r) => r.ms)),
		jsRss: median(js.map((r) => r.rss)) / 1024,
		vsJs: ratio("ours", "js"),
		cli: median(runs.cli.map((r) => r.ms)),
		cliVsRg: runs.rg ? ratio("cli", "rg") : undefined,
		rg: runs.rg ? median(runs.rg.map((r) => r.ms)) : undefined,
		rgLines: runs.rg ? runs.rg[0].stdout.split("\n").filter(Boolean).reduce((a, l) => a + Number(l.split(":").pop()), 0) : undefined,
		vsRg: runs.rg ? ratio("ours", "rg") : undefined,
	};
}

/** Milliseconds from spawning the CLI to its first line of output, and to its exit. */
function firstLine(pattern) {
	return new Promise((resolve, reject) => {
		const t0 = performance.now();
		const child = spawn(process.execPath, [join(REPO_ROOT, "bin", "pi-sessions"), "grep", "--all", "--json", pattern], { env: cliEnv });
		let first;
		child.stdout.on("data", () => {
			first ??= performance.now() - t0;
		});
		child.on("error", reject);
		child.on("close", () => resolve({ first, total: performance.now() - t0 }));
	});
}

const rows = [...literals, ...regexes].map(compare);
// A word of the newest session's first message: the newest file is read first.
const newest = JSON.parse(
	spawnSync(process.execPath, ["-e", `require(${JSON.stringify(REPO_ROOT)}).SessionManager.listAll().then((s) => process.stdout.write(JSON.stringify(s[0].firstMessage)))`], { env, encoding: "utf8" })
		.stdout,
);
const word = newest.split(/\W+/).filter((w) => w.length >= 6).sort((a, b) => b.length - a.length)[0] ?? literal;
const cli = [];
for (let s = 0; s < samples; s++) cli.push(await firstLine(word));

const mb = (bytes / 1024 / 1024).toFixed(0);
const lines = [
	`## grepSessions vs a JavaScript implementation and ripgrep (${files.length.toLocaleString("en-US")} files, ${mb} MB, ${samples} samples)`,
	"",
	`\`node benchmark/grep.mjs --corpus ${corpusName} --samples ${samples}\`, ${new Date().toISOString().slice(0, 16)}Z, ${(await import("node:os")).cpus().length} cores. Medians of whole processes; in brackets the time inside the process and the peak RSS.`,
	"",
	"| pattern | matching blocks | ours | JavaScript (read, JSON.parse, matchAll) | ours / JS | rg -F -i --count | ours / rg | CLI --json into a pipe, listing cache warm | CLI / rg |",
	"|---|---|---|---|---|---|---|---|---|",
	...rows.map(
		(r) =>
			`| \`${r.pattern}\` | ${r.matches.toLocaleString("en-US")} | ${fmt(r.ours)} (${fmt(r.oursInner)}, ${r.oursRss.toFixed(0)} MB) | ${fmt(r.js)} (${fmt(r.jsInner)}, ${r.jsRss.toFixed(0)} MB) | ${r.vsJs.toFixed(3)} | ${r.rg === undefined ? "-" : `${fmt(r.rg)} (${r.rgLines.toLocaleString("en-US")} lines)`} | ${r.vsRg === undefined ? "-" : r.vsRg.toFixed(2)} | ${fmt(r.cli)} | ${r.cliVsRg === undefined ? "-" : r.cliVsRg.toFixed(2)} |`,
	),
	"",
	`CLI, \`pi-sessions grep --all --json ${word}\` (a word of the newest session, listing cache warm): first line after ${fmt(median(cli.map((c) => c.first ?? NaN)))}, exit after ${fmt(median(cli.map((c) => c.total)))} (medians, whole process).`,
	...(hasRg ? [] : ["", "ripgrep (`rg`) is not installed: no rg column."]),
	"",
];
const text = lines.join("\n");
process.stdout.write(text);
rmSync(cliEnv.PI_SESSION_NATIVE_CACHE_DIR, { recursive: true, force: true });
// A scaled-down stand-in (generate.mjs --listing-scale) writes apart from the real run.
writeFileSync(join(BENCH_DIR, files.length >= 10_000 ? "results-grep.md" : "results-grep-quick.md"), text);
