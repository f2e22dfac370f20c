#!/usr/bin/env node
// Rewrites the benchmark table of README.md from benchmark/results.json: the rows of ONE run of
// run.mjs (one command at one time), stamped with that command, its date and its machine.
//
//   node benchmark/readme-table.mjs                 the run with the most rows in results.json
//   node benchmark/readme-table.mjs --run latest    the newest run
//   node benchmark/readme-table.mjs --run 2026-12-02T07:00   the run that started at that time (prefix)
//   node benchmark/readme-table.mjs --check         exit 1 if README.md differs from what it would write
//   options: --results <file.json>, --readme <file.md>
//
// results.json keeps, per workload, the row of the last run that measured it (`run.mjs --only x`
// updates one row), so after targeted runs it holds rows of several runs; the README shows one
// of them whole rather than a mix. The table goes between the two markers below, which must
// each appear once in the README; everything outside them is left as it is.

import { readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_DIR, REPO_ROOT } from "./lib/datasets.mjs";
import { WORKLOADS, describeMachine } from "./run.mjs";

export const BEGIN = "<!-- benchmark-table:begin (written by node benchmark/readme-table.mjs; edits here are lost) -->";
export const END = "<!-- benchmark-table:end -->";
const HEADER = "| workload | reference median (min-max) | ours median (min-max) | ratio ours/ref | peak RSS ref / ours |\n|---|---|---|---|---|";

function parseArgs(argv) {
  const opts = { results: join(BENCH_DIR, "results.json"), readme: join(REPO_ROOT, "README.md"), run: "largest", check: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    if (a === "--results") opts.results = resolve(val());
    else if (a === "--readme") opts.readme = resolve(val());
    else if (a === "--run") opts.run = val();
    else if (a === "--check") opts.check = true;
    else if (a === "--help" || a === "-h") {
      console.log(readFileSync(new URL(import.meta.url), "utf8").split("\n").filter((l) => l.startsWith("//")).map((l) => l.slice(3)).join("\n"));
      process.exit(0);
    } else fail(`unknown argument ${a}; see --help`);
  }
  return opts;
}

/** The runs in a results file: rows grouped by (when, command), oldest first. */
export function runsOf(saved) {
  const runs = new Map();
  for (const [name, row] of Object.entries(saved.rows ?? {})) {
    const key = `${row.when}\n${row.command}`;
    if (!runs.has(key)) runs.set(key, { when: row.when, command: row.command, rows: [] });
    runs.get(key).rows.push({ name, ...row });
  }
  return [...runs.values()].sort((a, b) => a.when.localeCompare(b.when));
}

export function pickRun(runs, which) {
  if (runs.length === 0) fail("no rows in the results file; run node benchmark/run.mjs first");
  if (which === "latest") return runs.at(-1);
  if (which === "largest") return runs.reduce((best, r) => (r.rows.length > best.rows.length || (r.rows.length === best.rows.length && r.when > best.when) ? r : best));
  const matching = runs.filter((r) => r.when.startsWith(which));
  if (matching.length !== 1) fail(`--run ${which}: ${matching.length} runs start at that time; the runs are:\n${runs.map((r) => `  ${r.when}  ${r.command}`).join("\n")}`);
  return matching[0];
}

/** "5 samples per side (3 for listall-10k)" */
function samplesText(rows) {
  const perRow = rows.map((r) => ({ name: r.name, n: Math.max(r.samples?.ref?.length ?? 0, r.samples?.ours?.length ?? 0) }));
  const counts = new Map();
  for (const { n } of perRow) counts.set(n, (counts.get(n) ?? 0) + 1);
  const usual = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0][0];
  const others = perRow.filter((r) => r.n !== usual).map((r) => `${r.n} for ${r.name}`);
  return `${usual} sample${usual === 1 ? "" : "s"} per side${others.length ? ` (${others.join(", ")})` : ""}`;
}

export function tableBlock(saved, run, generatorCommand) {
  const newest = runsOf(saved).at(-1);
  // rows written before run.mjs recorded a machine per row: the file's machine is the newest run's
  const machine = run.rows.find((r) => r.machine)?.machine ?? (run === newest || run.when === newest.when ? saved.machine : undefined);
  if (!machine) fail(`no machine is recorded for the run of ${run.when}; run it again (node benchmark/run.mjs) or pick another with --run`);
  const order = WORKLOADS.map((w) => w.name);
  const rank = (name) => (order.includes(name) ? order.indexOf(name) : order.length);
  const rows = [...run.rows].sort((a, b) => rank(a.name) - rank(b.name));
  const total = Object.keys(saved.rows).length;
  const when = `${run.when.slice(0, 16).replace("T", " ")} UTC`;
  const others =
    rows.length < total
      ? ` ${rows.length} of the ${total} workloads in \`benchmark/results.json\` come from this run; the others were measured by other runs, listed in \`benchmark/results.md\`.`
      : "";
  return [
    BEGIN,
    `Measured by \`${run.command}\` on ${when}, ${samplesText(rows)}; machine: ${describeMachine(machine)}.${others} This table was written by \`${generatorCommand}\`.`,
    "",
    HEADER,
    ...rows.map((r) => r.row),
    END,
  ].join("\n");
}

export function replaceBlock(readme, block) {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin || readme.indexOf(BEGIN, begin + 1) >= 0 || readme.indexOf(END, end + 1) >= 0) {
    fail(`the README must hold each marker once, in order:\n  ${BEGIN}\n  ${END}`);
  }
  return readme.slice(0, begin) + block + readme.slice(end + END.length);
}

function fail(msg) {
  console.error(msg);
  process.exit(2);
}

function main() {
  const args = process.argv.slice(2);
  const opts = parseArgs(args);
  let saved;
  try {
    saved = JSON.parse(readFileSync(opts.results, "utf8"));
  } catch (e) {
    fail(`cannot read ${relative(process.cwd(), opts.results)}: ${e.message}`);
  }
  const run = pickRun(runsOf(saved), opts.run);
  const generatorCommand = ["node benchmark/readme-table.mjs", ...args.filter((a) => a !== "--check")].join(" ");
  const readme = readFileSync(opts.readme, "utf8");
  const next = replaceBlock(readme, tableBlock(saved, run, generatorCommand));
  const where = relative(process.cwd(), opts.readme);
  if (opts.check) {
    if (next !== readme) fail(`${where}: its benchmark table is not what ${generatorCommand} writes; run that`);
    console.error(`${where}: the benchmark table is current`);
    return;
  }
  if (next !== readme) writeFileSync(opts.readme, next);
  console.error(`${where}: ${run.rows.length} rows of \`${run.command}\` (${run.when})`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
