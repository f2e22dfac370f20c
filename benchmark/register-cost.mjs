#!/usr/bin/env node
// What the register entry costs a Node program that is not pi (a NODE_OPTIONS line reaches
// every one): `node -e ''` without it, with `--require <register.cjs>` and with
// `--import <register.mjs>`, and, to tell the entry from the option, with `--import` of an
// empty module; and a script file with and without --require. Sides in turn, each sample a fresh process; medians and the median of the
// per-round differences against no option.
//
//   node benchmark/register-cost.mjs [rounds=20] [node binary]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const rounds = Number(process.argv[2] ?? 20);
const nodeBin = process.argv[3] ?? process.execPath;
const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const empty = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "register-cost-")), "empty.mjs");
fs.writeFileSync(empty, "");
const script = path.join(path.dirname(empty), "script.cjs");
fs.writeFileSync(script, "");

const sides = {
	"node -e ''": ["-e", ""],
	"--require register.cjs": ["--require", path.join(repo, "register.cjs"), "-e", ""],
	"--import register.mjs": ["--import", pathToFileURL(path.join(repo, "register.mjs")).href, "-e", ""],
	"--import of an empty module": ["--import", pathToFileURL(empty).href, "-e", ""],
	// a script file: the entry looks at its real path
	"node script.cjs": [script],
	"--require register.cjs script.cjs": ["--require", path.join(repo, "register.cjs"), script],
};

function sample(args) {
	const start = process.hrtime.bigint();
	const run = spawnSync(nodeBin, args, { stdio: ["ignore", "ignore", "pipe"] });
	const ms = Number(process.hrtime.bigint() - start) / 1e6;
	if (run.status !== 0 || run.stderr.length > 0) throw new Error(`${args.join(" ")}: ${run.status} ${run.stderr}`);
	return ms;
}
const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const names = Object.keys(sides);
for (const name of names) sample(sides[name]); // warm the file cache
const times = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < rounds; i++) {
	const order = i % 2 === 0 ? names : [...names].reverse();
	for (const name of order) times[name].push(sample(sides[name]));
}
const version = spawnSync(nodeBin, ["--version"], { encoding: "utf8" }).stdout.trim();
console.log(`Node ${version}, ${rounds} rounds`);
const base = times[names[0]];
for (const name of names) {
	const against = name.includes("script") ? times["node script.cjs"] : base;
	const diff = median(times[name].map((t, i) => t - against[i]));
	const compared = name === names[0] || name === "node script.cjs" ? "" : `, ${diff >= 0 ? "+" : ""}${diff.toFixed(1)} ms per round (median) against ${name.includes("script") ? "node script.cjs" : "node -e ''"}`;
	console.log(`  ${name.padEnd(36)} median ${median(times[name]).toFixed(1)} ms${compared}`);
}
fs.rmSync(path.dirname(empty), { recursive: true, force: true });
