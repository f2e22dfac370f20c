#!/usr/bin/env node
// Side-by-side benchmark: the reference SessionManager (pi-coding-agent 1.6.0) and ours.
//
//   node benchmark/run.mjs                      full run (generates missing data first, ~4 GB)
//   node benchmark/run.mjs --quick              small data, 3 samples per side (< 1 minute)
//   node benchmark/run.mjs --only open-100,tree-100k
//   node benchmark/run.mjs --list               workload names
//   options: --samples N, --ours <module path>, --reference <module path>, --out <file.md>
//
// "ours" is the package root (this repository) unless PI_NATIVE_IMPL or --ours names another
// module; PI_REFERENCE_IMPL / --reference override the reference (pointing both at the
// reference validates the harness: every ratio should be ~1.0).
//
// Every sample runs in a fresh child process (worker.mjs); the sides alternate, and which
// side goes first alternates from pair to pair. The worker times only the operation and
// returns a check summary; a workload fails when ours disagrees with the reference.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_DIR, DATA_DIR, REFERENCE_MODULE, REPO_ROOT, listingPath, sessionPath } from "./lib/datasets.mjs";

const WORKER = join(BENCH_DIR, "worker.mjs");
const GENERATE = join(BENCH_DIR, "generate.mjs");

// data: [full, quick]; params get `file` (and `tmp` for workloads that write) added
export const WORKLOADS = [
  { name: "open-100", title: "open() {100}", op: "open", data: ["session-100mb", "quick-3mb"] },
  { name: "open-500", title: "open() {500}", op: "open", data: ["session-500mb", "quick-12mb"] },
  { name: "context-500", title: "open() + buildSessionContext() {500}, compacted + branched", op: "open-context", data: ["session-500mb", "quick-12mb"] },
  { name: "entries-100", title: "open() + getEntries() {100}", op: "open-entries", data: ["session-100mb", "quick-3mb"] },
  { name: "context-call-100", title: "buildSessionContext() per call, open {100}", op: "context-calls", data: ["session-100mb", "quick-3mb"], params: [{ calls: 50 }, { calls: 20 }] },
  { name: "footer-walk-100", title: "pi's footer walk after a reply (getEntries(), types, roles, usage) per call, open {100}", op: "footer-walks", data: ["session-100mb", "quick-3mb"], params: [{ calls: 50 }, { calls: 50 }] },
  { name: "footer-walk-100-release", title: "the same, ours letting go of what nothing holds (pi's default)", op: "footer-walks", data: ["session-100mb", "quick-3mb"], params: [{ calls: 50, release: true }, { calls: 50, release: true }] },
  { name: "branch-call-100", title: "getBranch() per call, open {100}", op: "branch-calls", data: ["session-100mb", "quick-3mb"], params: [{ calls: 400 }, { calls: 1000 }] },
  { name: "tree-100k", title: "getTree() first call after open() {tree}", op: "tree", data: ["entries-100k", "quick-10k"] },
  { name: "tree-call-100k", title: "getTree() per call, open {tree}", op: "tree-calls", data: ["entries-100k", "quick-10k"], params: [{ calls: 5 }, { calls: 10 }] },
  { name: "open-tree-100k", title: "open() + getTree() {tree}", op: "open-tree", data: ["entries-100k", "quick-10k"] },
  // entries that cost what is read
  { name: "first-branch-types-100", title: "open() + first getBranch() + each entry's type and role {100}", op: "open-branch-types", data: ["session-100mb", "quick-3mb"] },
  { name: "first-tree-types-100k", title: "open() + first getTree() + each entry's type {tree}", op: "open-tree-types", data: ["entries-100k", "quick-10k"] },
  { name: "context-100", title: "open() + buildSessionContext() {100}", op: "open-context", data: ["session-100mb", "quick-3mb"] },
  { name: "touch-all-100", title: "open() + getEntries() + every field of every entry read {100}", op: "open-touch-all", data: ["session-100mb", "quick-3mb"] },
  { name: "append-10k", title: "10,000 appendMessage() to a persisted {10} session", op: "append", data: ["session-10mb", "quick-3mb"], params: [{ count: 10_000 }, { count: 10_000 }], tmp: true },
  { name: "fork-100", title: "forkFrom() {100}", op: "fork", data: ["session-100mb", "quick-3mb"], tmp: true },
  { name: "branched-100", title: "createBranchedSession() on an open {100} session", op: "branched", data: ["session-100mb", "quick-3mb"], tmp: true },
  // listing: corpora made by `node benchmark/generate.mjs --listing`; no quick stand-in
  { name: "list-5k", title: "list() over 5,000 files (1.1 GB), first call in the process", op: "list-cold", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  { name: "list-5k-again", title: "list() over 5,000 files, second call in the same process", op: "list-warm", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  { name: "list-5k-again-progress", title: "second list() of 5,000 files with onProgress", op: "list-warm-progress", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  { name: "listall-5k-again-progress", title: "second listAll() of 5,000 files with onProgress", op: "listall-warm-progress", listing: true, data: ["listing-5k", null], params: [{}] },
  { name: "listall-10k", title: "listAll() over 10,000 files in 20 folders (2.2 GB), first call", op: "listall-cold", listing: true, data: ["listing-10k", null], params: [{}], samples: [3, 0] },
  { name: "list-first-progress", title: "list() over 5,000 files: time to the first onProgress with a partial list", op: "list-first-progress", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  { name: "find-by-id-5k", title: "findById() in a folder of 5,000", op: "find-by-id", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  { name: "continue-recent-5k", title: "continueRecent() in a folder of 5,000", op: "continue-recent", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project" }] },
  // accounting: ours calls getSessionStats/usageReport; the reference side runs
  // pi's own loop (agent-session.js) over open() / listAll() + open() per file
  { name: "stats-100", title: "getSessionStats() {100} (reference: open() + pi's loop)", op: "session-stats", data: ["session-100mb", "quick-3mb"] },
  { name: "report-day-10k", title: "usageReport() by day over 10,000 files in 20 folders, first call (reference: listAll() + open() + pi's loop per file)", op: "usage-report-cold", listing: true, data: ["listing-10k", null], params: [{ groupBy: "day" }], samples: [3, 0] },
  { name: "report-day-10k-again", title: "usageReport() by day over 10,000 files, second call in the same process", op: "usage-report-warm", listing: true, data: ["listing-10k", null], params: [{ groupBy: "day" }], samples: [3, 0] },
  { name: "report-day-10k-persisted", title: "usageReport() by day over 10,000 files, first call of a new process with the persistent cache", op: "usage-report-persisted", listing: true, data: ["listing-10k", null], params: [{ groupBy: "day" }], samples: [3, 0] },
  // resources: many managers in one long-lived process
  {
    name: "open-context-2k",
    title: "open() + buildSessionContext() of 2,000 distinct sessions in one process (descriptors open at the end)",
    op: "open-context-many",
    listing: true,
    data: ["listing-5k", null],
    params: [{ count: 2000 }],
    samples: [3, 0],
    describe: (e) => `${e.fds} fds`,
  },
  {
    name: "reopen-10-1500",
    title: "1,500 open() of the {10} session, each dropped (RSS growth at the end of the loop)",
    op: "open-repeat",
    data: ["session-10mb", "quick-3mb"],
    params: [{ count: 1500 }, { count: 100 }],
    samples: [2, 1],
    describe: (e) => `+${e.rssGrowthMb.toFixed(0)} MB RSS, ${e.fds} fds`,
  },
  // search: typed a key at a time, relevance order as in pi's /resume
  { name: "search-keys-5k", title: "search per keystroke over 5,000 sessions, steady state (words, a phrase, an id, a cwd part)", op: "search-keystrokes", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project", sort: "threaded", rounds: 1, queries: ["compaction", '"tool result"', "{id}", "big-proj", "keybinding render", "zebra"] }] },
  { name: "search-regex-keys-5k", title: "search per keystroke over 5,000 sessions, steady state, re: patterns (run in V8)", op: "search-keystrokes", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project", sort: "relevance", rounds: 1, queries: ["re:compact(ion|ed)", "re:(?<=the )tool"] }] },
  { name: "search-warm-5k", title: "searchSessions() over 5,000 files, warm process (second search)", op: "search-warm", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project", sort: "relevance", warmup: "session", query: "keybinding render" }] },
  { name: "search-cold-5k", title: "searchSessions() over 5,000 files (1.1 GB), first call in the process", op: "search-cold", listing: true, data: ["listing-5k", null], params: [{ cwd: "/home/dev/big-project", sort: "relevance", query: "keybinding render" }] },
  {
    name: "lowmem-500",
    title: "open() + buildSessionContext() {500} under {heap}",
    op: "open-context",
    data: ["session-500mb", "quick-12mb"],
    nodeArgs: [["--max-old-space-size=256"], ["--max-old-space-size=16"]],
    passFail: true,
    sameAs: "context-500",
    samples: [2, 1],
  },
];

const DATA_LABELS = {
  "session-10mb": "10 MB",
  "session-100mb": "100 MB",
  "session-500mb": "500 MB",
  "entries-100k": "100,000 entries",
  "quick-3mb": "3 MB",
  "quick-12mb": "12 MB",
  "quick-10k": "10,000 entries",
};

function titleOf(w, q) {
  return w.title.replace(/\{(10|100|500|tree)\}/g, DATA_LABELS[w.data[q]]).replace("{heap}", (w.nodeArgs?.[q] ?? []).join(" "));
}

function parseArgs(argv) {
  const opts = { quick: false, only: null, samples: null, ours: null, reference: null, out: null, list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--quick") opts.quick = true;
    else if (a === "--only") opts.only = val().split(",").filter(Boolean);
    else if (a === "--samples") opts.samples = Number(val());
    else if (a === "--ours") opts.ours = val();
    else if (a === "--reference") opts.reference = val();
    else if (a === "--out") opts.out = val();
    else if (a === "--list") opts.list = true;
    else if (a === "--help" || a === "-h") {
      console.log(readFileSync(new URL(import.meta.url), "utf8").split("\n").filter((l) => l.startsWith("//")).map((l) => l.slice(3)).join("\n"));
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function fmtMs(ms) {
  if (ms === undefined || Number.isNaN(ms)) return "-";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms >= 0.1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(1)} µs`;
}
const fmtMb = (kb) => (kb === undefined ? "-" : `${(kb / 1024).toFixed(0)} MB`);

function stableStringify(v) {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

function diffChecks(a, b) {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].filter((k) => stableStringify(a?.[k]) !== stableStringify(b?.[k])).map((k) => `${k}: ref ${stableStringify(a?.[k])} vs ours ${stableStringify(b?.[k])}`);
}

function runSample(side, impl, w, params, nodeArgs, dataFile) {
  const before = statSync(dataFile);
  const tmp = w.tmp ? join(DATA_DIR, "tmp", `${w.name}-${side}-${process.pid}-${Date.now()}`) : undefined;
  const p = { ...params, file: dataFile, ...(tmp ? { tmp } : {}) };
  const r = spawnSync(process.execPath, [...nodeArgs, WORKER, impl, w.op, JSON.stringify(p)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 15 * 60 * 1000,
    env: { ...process.env, PI_BENCH_SIDE: side },
  });
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  const after = statSync(dataFile);
  const sample = { side, status: r.status, signal: r.signal };
  if (before.size !== after.size || before.mtimeMs !== after.mtimeMs) {
    sample.error = `the data file ${relative(REPO_ROOT, dataFile)} was modified`;
  }
  const line = (r.stdout ?? "").split("\n").find((l) => l.startsWith("@@RESULT ") || l.startsWith("@@ERROR "));
  if (line?.startsWith("@@RESULT ")) Object.assign(sample, JSON.parse(line.slice(9)));
  else {
    const err = line ? JSON.parse(line.slice(8)).message : `exit ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ""}`;
    const stderr = (r.stderr ?? "").trim();
    const oom = /heap out of memory|Allocation failed/i.test(stderr);
    sample.error ??= oom ? "out of memory" : `${err}${stderr ? `\n${stderr.split("\n").slice(-6).join("\n")}` : ""}`;
    sample.oom = oom;
  }
  return sample;
}

function summarize(samples) {
  const ok = samples.filter((s) => !s.error);
  if (ok.length === 0) return null;
  const ms = ok.map((s) => s.ms);
  const extras = ok.map((s) => s.extra).filter(Boolean);
  const extra = extras.length ? Object.fromEntries(Object.keys(extras[0]).map((k) => [k, median(extras.map((e) => e[k]))])) : undefined;
  return { median: median(ms), min: Math.min(...ms), max: Math.max(...ms), rssKb: median(ok.map((s) => s.rssKb)), n: ok.length, extra };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGb: +(os.totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}

export function describeMachine(m) {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM, ${m.platform}, Node ${m.node}`;
}

function rowFor(r) {
  const { w, ref, ours, verdict } = r;
  const cell = (s, side) => {
    if (w.passFail) {
      const samples = side === "ref" ? r.refSamples : r.oursSamples;
      const pass = samples.filter((x) => !x.error).length;
      const failWhy = samples.find((x) => x.error)?.oom ? " (OOM)" : "";
      return pass === samples.length ? `pass, ${fmtMs(s.median)}` : pass === 0 ? `fail${failWhy}` : `${pass}/${samples.length} pass${failWhy}`;
    }
    if (!s) return "error";
    const time = s.min === s.max ? fmtMs(s.median) : `${fmtMs(s.median)} (${fmtMs(s.min)}-${fmtMs(s.max)})`;
    return w.describe && s.extra ? `${time}; ${w.describe(s.extra)}` : time;
  };
  const ratio = verdict ?? (r.ratio === undefined ? "-" : `${r.ratio < 0.01 ? r.ratio.toFixed(4) : r.ratio.toFixed(2)}x`);
  return `| ${r.title} | ${cell(ref, "ref")} | ${cell(ours, "ours")} | ${ratio} | ${fmtMb(ref?.rssKb)} / ${fmtMb(ours?.rssKb)} |`;
}

const HEADER = "| workload | reference median (min-max) | ours median (min-max) | ratio ours/ref | peak RSS ref / ours |\n|---|---|---|---|---|";

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.list) {
    for (const w of WORKLOADS) console.log(`${w.name.padEnd(18)} ${titleOf(w, 0)}`);
    return;
  }
  const q = opts.quick ? 1 : 0;
  const refImpl = resolve(opts.reference ?? process.env.PI_REFERENCE_IMPL ?? REFERENCE_MODULE);
  const oursImpl = resolve(opts.ours ?? process.env.PI_NATIVE_IMPL ?? REPO_ROOT);
  const chosen = opts.only ? opts.only.map((n) => WORKLOADS.find((w) => w.name === n) ?? fail(`unknown workload ${n}; see --list`)) : WORKLOADS;
  const workloads = chosen.filter((w) => w.data[q] !== null);
  const defaultSamples = opts.samples ?? (opts.quick ? 3 : 5);

  // data first (in a child process: the generator wants a big heap)
  const names = [...new Set(workloads.filter((w) => !w.listing).map((w) => w.data[q]))];
  // (none named would make the generator write every data set)
  if (names.length > 0) {
    console.error(`data: ${names.join(", ")}`);
    const g = spawnSync(process.execPath, [GENERATE, ...names], { stdio: ["ignore", "inherit", "inherit"] });
    if (g.status !== 0) fail("data generation failed");
  }
  if (workloads.some((w) => w.listing && !existsSync(listingPath(w.data[q])))) {
    const gl = spawnSync(process.execPath, [GENERATE, "--listing"], { stdio: ["ignore", "inherit", "inherit"] });
    if (gl.status !== 0) fail("listing data generation failed");
  }

  console.error(`reference: ${relative(REPO_ROOT, refImpl) || "."}\nours:      ${relative(REPO_ROOT, oursImpl) || "."}`);
  const out = resolve(opts.out ?? join(BENCH_DIR, opts.quick ? "results-quick.md" : "results.md"));
  const results = [];
  let failed = false;
  for (const w of workloads) {
    const dataFile = w.listing ? listingPath(w.data[q]) : sessionPath(w.data[q]);
    const params = { ...(w.params?.[q] ?? {}), ...(w.listing ? { dir: dataFile } : {}) };
    const nodeArgs = w.nodeArgs?.[q] ?? [];
    const n = opts.samples ?? w.samples?.[q] ?? defaultSamples;
    const refSamples = [];
    const oursSamples = [];
    process.stderr.write(`${w.name} (${w.data[q]}, ${n} samples per side) `);
    for (let i = 0; i < n; i++) {
      const order = i % 2 === 0 ? ["ref", "ours"] : ["ours", "ref"];
      for (const side of order) {
        const s = runSample(side, side === "ref" ? refImpl : oursImpl, w, params, nodeArgs, dataFile);
        (side === "ref" ? refSamples : oursSamples).push(s);
        process.stderr.write(s.error ? "x" : ".");
      }
    }
    process.stderr.write("\n");
    const r = { w, title: titleOf(w, q), refSamples, oursSamples, ref: summarize(refSamples), ours: summarize(oursSamples), problems: [] };

    // correctness: every sample's check must equal the reference's
    const refOk = refSamples.filter((s) => !s.error);
    const oursOk = oursSamples.filter((s) => !s.error);
    const expected = w.sameAs ? (results.find((x) => x.w.name === w.sameAs)?.expected ?? refOk[0]?.check ?? savedExpected(out, w.sameAs)) : refOk[0]?.check;
    r.expected = expected;
    for (const s of [...refOk, ...oursOk]) {
      if (!expected) break;
      const d = diffChecks(expected, s.check);
      if (d.length) r.problems.push(`${s.side} result differs from the reference: ${d.join("; ")}`);
    }
    for (const s of [...refSamples, ...oursSamples]) {
      if (s.error && !(w.passFail && s.oom)) r.problems.push(`${s.side}: ${s.error}`);
      if (s.error?.includes("was modified")) r.problems.push(`${s.side}: ${s.error}`);
    }
    if (!w.passFail && (refOk.length === 0 || oursOk.length === 0)) r.problems.push("no successful samples on one side");

    // ratio: median of the ratios of each pair (pair i = ref sample i, ours sample i)
    const ratios = [];
    for (let i = 0; i < n; i++) {
      const a = refSamples[i];
      const b = oursSamples[i];
      if (a && b && !a.error && !b.error) ratios.push(b.ms / a.ms);
    }
    if (ratios.length) r.ratio = median(ratios);
    if (r.problems.length) {
      failed = true;
      r.verdict = "**FAIL**";
      const unique = [...new Set(r.problems)];
      console.error(`  FAIL ${w.name}:\n    ${unique.slice(0, 6).join("\n    ")}`);
    } else if (w.passFail && !r.ref) r.verdict = r.ours ? "ours only" : "both fail";
    results.push(r);
    console.error(`  ${rowFor(r)}`);
  }

  const command = `node benchmark/run.mjs ${process.argv.slice(2).join(" ")}`.trim();
  const m = machine();
  const table = [HEADER, ...results.map(rowFor)].join("\n");
  console.log(`\n${table}\n`);

  // results file: rows from earlier runs of the same kind (full / quick) are kept for
  // workloads not run this time, so `--only x` updates one row
  const store = out.replace(/\.md$/, "") + ".json";
  let saved = { rows: {} };
  try {
    saved = JSON.parse(readFileSync(store, "utf8"));
  } catch {}
  const when = new Date().toISOString();
  for (const r of results) {
    saved.rows[r.w.name] = {
      row: rowFor(r),
      when,
      command,
      ours: relative(REPO_ROOT, oursImpl) || ".",
      reference: relative(REPO_ROOT, refImpl) || ".",
      ref: r.ref,
      oursStats: r.ours,
      ratio: r.ratio,
      machine: m,
      problems: [...new Set(r.problems)],
      expected: r.expected,
      samples: { ref: r.refSamples.map((s) => s.ms ?? null), ours: r.oursSamples.map((s) => s.ms ?? null) },
    };
  }
  saved.machine = m;
  writeFileSync(store, `${JSON.stringify(saved, null, 2)}\n`);
  const order = WORKLOADS.map((w) => w.name).filter((n) => saved.rows[n]);
  // each run with the machine it ran on: this one moves between hosts from day to day
  const runLine = (r) =>
    `\`${r.command}\` (${r.when.slice(0, 16).replace("T", " ")} UTC; ${r.machine ? describeMachine(r.machine) : "machine not recorded"}; ` +
    `ours = \`${r.ours}\`, reference = \`${r.reference}\`)`;
  const commands = [...new Set(order.map((n) => runLine(saved.rows[n])))];
  const problems = order.flatMap((n) => saved.rows[n].problems.map((p) => `- ${n}: ${p}`));
  const md = [
    `# Benchmark: pi-session-native vs the reference SessionManager`,
    "",
    "Commands:",
    ...commands.map((c) => `- ${c}`),
    "",
    `Times are for the operation only, in a fresh process per sample, sides alternating; ` +
      `ratio = median over sample pairs of ours/reference (below 1 = ours faster); peak RSS = ` +
      `median of the process's maxRSS right after the timed operation. ` +
      (opts.quick ? "Quick mode: small stand-in data (3 MB / 12 MB / 10,000 entries) for a smoke test; run without --quick for the real sizes." : ""),
    "",
    [HEADER, ...order.map((n) => saved.rows[n].row)].join("\n"),
    "",
    ...(problems.length ? ["Problems:", ...problems, ""] : []),
  ].join("\n");
  writeFileSync(out, md);
  console.error(`wrote ${relative(process.cwd(), out)}`);
  if (failed) process.exit(1);
}

/** the reference's check from an earlier run (for --only lowmem-500 without context-500) */
function savedExpected(out, name) {
  try {
    return JSON.parse(readFileSync(out.replace(/\.md$/, "") + ".json", "utf8")).rows[name]?.expected;
  } catch {
    return undefined;
  }
}

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

// readme-table.mjs imports the workload list; only a run from the command line benchmarks
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
