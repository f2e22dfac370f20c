// The README's benchmark table is written by benchmark/readme-table.mjs from ONE run of
// benchmark/results.json (not appended, not a mix of runs), stamped with that run's command,
// date and machine; the README in the repository holds what the script writes.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { BEGIN, END, pickRun, replaceBlock, runsOf, tableBlock } from "../benchmark/readme-table.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SCRIPT = path.join(ROOT, "benchmark", "readme-table.mjs");
const machine = (cpu) => ({ cpu, cores: 2, memoryGb: 8, node: "v20.0.0", platform: "linux test x64" });
const row = (name, when, command, m, n = 3) => ({
  row: `| ${name} | 1 ms | 1 ms | 1.00x | 1 MB / 1 MB |`,
  when,
  command,
  ours: ".",
  reference: "ref",
  samples: { ref: Array(n).fill(1), ours: Array(n).fill(1) },
  ...(m ? { machine: m } : {}),
});
const FULL = "node benchmark/run.mjs";
const ONLY = "node benchmark/run.mjs --only open-100";
const saved = {
  machine: machine("newest host"),
  rows: {
    "open-100": row("open-100", "2026-02-01T00:00:00.000Z", ONLY, machine("host B")),
    "open-500": row("open-500", "2026-01-01T00:00:00.000Z", FULL, machine("host A")),
    "tree-100k": row("tree-100k", "2026-01-01T00:00:00.000Z", FULL, machine("host A")),
    "listall-10k": row("listall-10k", "2026-01-01T00:00:00.000Z", FULL, machine("host A"), 5),
  },
};

test("a run is the rows of one command at one time; largest, latest and a time prefix pick one", () => {
  const runs = runsOf(saved);
  assert.deepEqual(runs.map((r) => [r.command, r.rows.length]), [[FULL, 3], [ONLY, 1]]);
  assert.equal(pickRun(runs, "largest").command, FULL);
  assert.equal(pickRun(runs, "latest").command, ONLY);
  assert.equal(pickRun(runs, "2026-02").command, ONLY);
});

test("the block holds only the chosen run's rows, with its command, date, samples and machine", () => {
  const block = tableBlock(saved, pickRun(runsOf(saved), "largest"), "node benchmark/readme-table.mjs");
  assert.ok(block.startsWith(`${BEGIN}\n`) && block.endsWith(END));
  assert.match(block, /Measured by `node benchmark\/run\.mjs` on 2026-01-01 00:00 UTC, 3 samples per side \(5 for listall-10k\); machine: host A, 2 cores/);
  assert.match(block, /3 of the 4 workloads in `benchmark\/results\.json` come from this run/);
  assert.match(block, /\| open-500 \|/);
  assert.doesNotMatch(block, /\| open-100 \|/, "a row of another run");
  // rows in run.mjs's workload order, not the file's
  assert.ok(block.indexOf("| open-500 |") < block.indexOf("| tree-100k |") && block.indexOf("| tree-100k |") < block.indexOf("| listall-10k |"));
});

test("writing twice replaces the table instead of adding one", () => {
  const readme = `intro\n${BEGIN}\nold table\n${END}\noutro\n`;
  const block = tableBlock(saved, pickRun(runsOf(saved), "latest"), "node benchmark/readme-table.mjs");
  const once = replaceBlock(readme, block);
  assert.equal(replaceBlock(once, block), once);
  assert.equal(once.split(BEGIN).length, 2);
  assert.ok(once.startsWith("intro\n") && once.endsWith(`${END}\noutro\n`));
  assert.doesNotMatch(once, /old table/);
});

function runScript(args, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-table-"));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const r = spawnSync(process.execPath, [SCRIPT, "--results", path.join(dir, "results.json"), "--readme", path.join(dir, "README.md"), ...args], { encoding: "utf8" });
    return { ...r, readme: fs.readFileSync(path.join(dir, "README.md"), "utf8") };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("an older run without a recorded machine, or a README without its markers, is refused and nothing is written", () => {
  const noMachine = structuredClone(saved);
  for (const r of Object.values(noMachine.rows)) delete r.machine;
  const readme = `x\n${BEGIN}\n${END}\n`;
  const old = runScript([], { "results.json": JSON.stringify(noMachine), "README.md": readme });
  assert.equal(old.status, 2);
  assert.match(old.stderr, /no machine is recorded for the run of 2026-01-01/);
  assert.equal(old.readme, readme);
  // the newest run may use the file's machine: it is the one that wrote it
  const newest = runScript(["--run", "latest"], { "results.json": JSON.stringify(noMachine), "README.md": readme });
  assert.equal(newest.status, 0, newest.stderr);
  assert.match(newest.readme, /machine: newest host/);
  const unmarked = runScript([], { "results.json": JSON.stringify(saved), "README.md": "no markers\n" });
  assert.equal(unmarked.status, 2);
  assert.match(unmarked.stderr, /must hold each marker once/);
  assert.equal(unmarked.readme, "no markers\n");
});

test("README.md holds the table the script writes from benchmark/results.json", () => {
  const r = spawnSync(process.execPath, [SCRIPT, "--check"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, `${r.stderr}run: node benchmark/readme-table.mjs`);
});
