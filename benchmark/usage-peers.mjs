#!/usr/bin/env node
// usageReport() by day against ccusage (npm ccusage@20.0.24, a native binary), cold, each
// in a fresh process, sides alternating; times are whole processes (start to exit), so
// ours includes starting Node and loading the addon.
//
//   (cd benchmark/ccusage && npm install)      once: installs ccusage apart from the package
//   PI_BENCH_DATA=/path/to/data node benchmark/usage-peers.mjs [--samples 5] [--corpus listing-10k]
//
// ccusage reads the folder named by --pi-path (`ccusage pi daily --json --offline
// --timezone UTC --pi-path <corpus>/sessions`); ours reads the same folders through
// PI_CODING_AGENT_DIR=<corpus>. The two count different things (ccusage: assistant
// messages priced by its model table; ours: pi's usage rules), so only the days are
// compared.
//
// A third column is a floor, not a peer: the same files only read, on two threads of a
// Node process (readSync into one 1 MiB buffer per thread, nothing parsed): the page
// cache's copy into user memory on both cores, which any reader pays before it parses.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_DIR, DATA_DIR, REPO_ROOT } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const samples = Number(opt("--samples", 5));
const corpus = join(DATA_DIR, opt("--corpus", "listing-10k"));
const ccusage = join(BENCH_DIR, "ccusage", "node_modules", ".bin", "ccusage");
if (!existsSync(ccusage)) throw new Error("ccusage is not installed: (cd benchmark/ccusage && npm install)");
if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus}`);

const sessionFiles = () =>
  readdirSync(join(corpus, "sessions"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(corpus, "sessions", d.name)).filter((n) => n.endsWith(".jsonl")).map((n) => join(corpus, "sessions", d.name, n)));

const floorScript = `
const { Worker, isMainThread, workerData } = require("node:worker_threads");
const fs = require("node:fs");
if (isMainThread) {
  const files = JSON.parse(fs.readFileSync(0, "utf8"));
  for (let t = 0; t < 2; t++) new Worker(__filename, { workerData: files.filter((_, i) => i % 2 === t) });
} else {
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (const file of workerData) {
    const fd = fs.openSync(file, "r");
    while (fs.readSync(fd, buffer, 0, buffer.length, null) > 0);
    fs.closeSync(fd);
  }
}`;

const oursScript = `require(${JSON.stringify(REPO_ROOT)}).usageReport({ groupBy: "day", timezone: "UTC" }).then((r) => process.stdout.write(JSON.stringify(r.rows.map((x) => x.key))));`;
const sides = {
  ours: () => spawnSync(process.execPath, ["-e", oursScript], { env: { ...process.env, PI_CODING_AGENT_DIR: corpus }, encoding: "utf8", maxBuffer: 1 << 30 }),
  ccusage: () =>
    spawnSync(ccusage, ["pi", "daily", "--json", "--offline", "--timezone", "UTC", "--pi-path", join(corpus, "sessions")], {
      encoding: "utf8",
      maxBuffer: 1 << 30,
    }),
};
const floorFile = join(mkdtempSync(join(tmpdir(), "usage-floor-")), "floor.cjs");
writeFileSync(floorFile, floorScript);
// Listed once, outside the timed runs.
const floorInput = JSON.stringify(sessionFiles());
const floor = () => spawnSync(process.execPath, [floorFile], { input: floorInput, encoding: "utf8" });

const days = {
  ours: (out) => JSON.parse(out),
  ccusage: (out) => JSON.parse(out).daily.map((d) => d.date),
};

const times = { ours: [], ccusage: [], floor: [] };
const seen = {};
for (let i = 0; i < samples; i++) {
  const t0 = performance.now();
  const r = floor();
  if (r.status !== 0) throw new Error(`reading the files failed: ${r.stderr}`);
  times.floor.push(performance.now() - t0);
  for (const side of i % 2 ? ["ccusage", "ours"] : ["ours", "ccusage"]) {
    const t0 = performance.now();
    const r = sides[side]();
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${side} failed: ${r.stderr}`);
    times[side].push(ms);
    seen[side] = JSON.stringify(days[side](r.stdout));
    process.stdout.write(".");
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const [o, c, f] = [median(times.ours), median(times.ccusage), median(times.floor)];
const range = (xs) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))})`;
console.log(`\nusageReport() by day vs ccusage pi daily --json --offline, ${corpus}, ${samples} samples per side`);
console.log(`| ccusage median (min-max) | ours median (min-max) | ratio ours/ccusage | same days | reading the bytes alone (2 threads) | its ratio to ccusage |`);
console.log(`|---|---|---|---|---|---|`);
console.log(
  `| ${range(times.ccusage)} | ${range(times.ours)} | ${(o / c).toFixed(3)}x | ${seen.ours === seen.ccusage} | ${range(times.floor)} | ${(f / c).toFixed(3)}x |`,
);
