#!/usr/bin/env node
// What building the entries pi reads at start cannot avoid, next to what it costs us.
//
//   node benchmark/entries-floor.mjs [--data session-500mb] [--rounds 3]
//
// pi reads, as it starts on a session, the type of every entry of the branch and the
// role of every message (AgentSession restores its tools from the system messages), and
// the usage of every assistant message of the whole file (the footer's totals). So every
// entry object and every message object is built, with all its small fields; only the
// heavy values (src/format/lazy.rs) can wait. In a fresh process per line, per round:
//   parse skeletons   JSON.parse of the skeletons of every entry (the text made and
//                     handed over untimed): the least any implementation building
//                     those objects in V8 pays; the heap they hold after a gc()
//   ours              open() + getEntries() with this package (skeletons made, handed
//                     over, parsed, heavy values made lazy)
//   reference         open() + getEntries() with the reference (JSON.parse of every line)
// Medians over the rounds. A benchmark, not a test.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ensureSessions } from "./generate.mjs";
import { REFERENCE_MODULE, REPO_ROOT } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
	const i = args.indexOf(name);
	return i === -1 ? fallback : args[i + 1];
};
const data = option("--data", "session-500mb");
const rounds = Number(option("--rounds", "3"));

const WORKER = `
const [mode, file, repo, referenceModule] = process.argv.slice(1);
const mb = (x) => x / 2 ** 20;
let ms;
let entries;
if (mode === "parse") {
  const binding = require(repo + "/binding.js");
  const native = new binding.NativeSession(true);
  native.open(file);
  const n = native.entryCount();
  const texts = [];
  for (let start = 0; start < n; start += 256) {
    const positions = Uint32Array.from({ length: Math.min(256, n - start) }, (_, i) => start + i);
    const [ascii, other] = native.skeletons(positions);
    texts.push(ascii);
    if (other.length > 2) texts.push(other);
  }
  global.gc();
  const t = performance.now();
  entries = texts.map((text) => JSON.parse(text));
  ms = performance.now() - t;
  texts.length = 0;
} else {
  const load = mode === "ours" ? () => require(repo + "/index.js") : () => import(referenceModule);
  Promise.resolve(load()).then(({ SessionManager }) => {
    global.gc();
    const t = performance.now();
    entries = SessionManager.open(file).getEntries();
    ms = performance.now() - t;
    report();
  });
}
function report() {
  global.gc();
  const heap = process.memoryUsage().heapUsed;
  process.stdout.write(JSON.stringify({ ms, heapMB: mb(heap), count: entries.flat().length }));
}
if (mode === "parse") report();
`;

const file = (await ensureSessions([data]))[data];
const modes = ["parse", "ours", "reference"];
const results = Object.fromEntries(modes.map((m) => [m, []]));
for (let r = 0; r < rounds; r++) {
	for (const mode of r % 2 ? [...modes].reverse() : modes) {
		const run = spawnSync(process.execPath, ["--expose-gc", "-e", WORKER, mode, file, REPO_ROOT, REFERENCE_MODULE], { encoding: "utf8", maxBuffer: 1 << 20 });
		if (run.status !== 0) throw new Error(`${mode}: ${run.stderr}`);
		results[mode].push(JSON.parse(run.stdout));
	}
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${data} (${path.basename(file)}), ${rounds} rounds, Node ${process.version}`);
const reference = median(results.reference.map((r) => r.ms));
for (const mode of modes) {
	const ms = median(results[mode].map((r) => r.ms));
	const heap = median(results[mode].map((r) => r.heapMB));
	const label = { parse: "parse skeletons", ours: "ours", reference: "reference" }[mode];
	console.log(`${label.padEnd(16)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / reference).toFixed(2)}x the reference  heap ${heap.toFixed(0)} MB  (${results[mode][0].count} entries)`);
}
