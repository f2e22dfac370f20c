// The command line's own timings: each `pi-sessions` call is a fresh process,
// so what counts is a whole call, start to exit, with and without the
// persistent listing cache. A benchmark, never a test: nothing here asserts a
// duration.
//
//   PI_BENCH_DATA=/path/to/data node benchmark/cli.mjs [--data listing-10k] [--samples 5]
//     [--query keybinding] [--bin bin/pi-sessions[,other/bin/pi-sessions]] [--out FILE]
//
// Per command and mode, N samples of a child process: `cold` starts with no
// cache file (the OS page cache is warm: one untimed run first), `warm` with the
// cache primed by one untimed run. Several --bin are run interleaved, sample by
// sample (A/B in the same minute). Peak RSS and CPU time (user + system, all
// threads: less moved by the machine's load than the wall time) are the
// child's own, read at its exit by a preloaded module (lib/cli-rss.cjs). Every run's stdout must be
// the same for a command, whatever the mode or bin (else the run fails); of a
// table, its last column (the ids), as relative times move on.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(HERE);
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const DATA_DIR = process.env.PI_BENCH_DATA ?? path.join(HERE, "data");
const dataName = option("--data", "listing-10k");
const samples = Number(option("--samples", "5"));
const query = option("--query", "keybinding");
const bins = option("--bin", path.join(REPO, "bin", "pi-sessions"))
  .split(",")
  .map((b) => path.resolve(b));
const outFile = option("--out", path.join(HERE, "results-cli.md"));
const agentDir = path.join(DATA_DIR, dataName);
const sessionsDir = path.join(agentDir, "sessions");
if (!fs.existsSync(sessionsDir)) {
  console.error(`no ${sessionsDir}: generate it first (node benchmark/generate.mjs --listing)`);
  process.exit(2);
}

// A project of the corpus as the current project, without writing into the
// corpus: an agent dir of links to its folders, one named for a temp project.
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-cli-")));
const project = path.join(root, "project");
const linkedAgent = path.join(root, "agent");
fs.mkdirSync(project);
fs.mkdirSync(path.join(linkedAgent, "sessions"), { recursive: true });
const folders = fs.readdirSync(sessionsDir).filter((n) => fs.statSync(path.join(sessionsDir, n)).isDirectory()).sort();
const projectFolder = `--${project.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
folders.forEach((name, i) => fs.symlinkSync(path.join(sessionsDir, name), path.join(linkedAgent, "sessions", i === 0 ? projectFolder : name)));
const filesIn = (dir) => fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl")).length;
const totalFiles = folders.reduce((n, f) => n + filesIn(path.join(sessionsDir, f)), 0);

// `--all` runs on the corpus itself; one folder through the links.
const COMMANDS = [
  { name: "ls --all", args: ["ls", "--all"], agent: agentDir, table: true },
  { name: `search ${query} --all`, args: ["search", query, "--all"], agent: agentDir, table: true },
  { name: "stats --all", args: ["stats", "--all"], agent: agentDir },
  { name: "ls", args: ["ls"], agent: linkedAgent, table: true },
  { name: `search ${query}`, args: ["search", query], agent: linkedAgent, table: true },
  { name: "ls --all --json", args: ["ls", "--all", "--json"], agent: agentDir },
];

// NODE_EXTRA_CA_CERTS makes every Node start parse a certificate bundle
// (~45 ms a process on the machines this was written on, which set it for
// their own network); users' shells rarely have it, and no command here goes
// online. Left out of the children's environment, and said so in the results.
const { NODE_EXTRA_CA_CERTS: droppedCaCerts, ...childEnv } = process.env;

const rssFile = path.join(root, "rss");
const outPath = path.join(root, "stdout");
const cacheDir = (bin) => path.join(root, `cache-${bins.indexOf(bin)}`);

function run(bin, command) {
  const out = fs.openSync(outPath, "w");
  const started = performance.now();
  const r = spawnSync(process.execPath, ["--require", path.join(HERE, "lib", "cli-rss.cjs"), bin, ...command.args], {
    cwd: project,
    env: {
      ...childEnv,
      PI_CODING_AGENT_DIR: command.agent,
      PI_SESSION_NATIVE_CACHE_DIR: cacheDir(bin),
      PI_BENCH_RSS_FILE: rssFile,
      COLUMNS: "120",
    },
    stdio: ["ignore", out, "pipe"],
    encoding: "utf8",
  });
  const ms = performance.now() - started;
  fs.closeSync(out);
  if (r.status !== 0) throw new Error(`${bin} ${command.args.join(" ")}: exit ${r.status}\n${r.stderr}`);
  const stdout = fs.readFileSync(outPath);
  const checked = command.table
    ? stdout
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => line.trimEnd().split(" ").at(-1))
        .join("\n")
    : stdout;
  const [rssKB, cpuUs] = fs.readFileSync(rssFile, "utf8").split(" ").map(Number);
  return { ms, rssMB: rssKB / 1024, cpuMs: cpuUs / 1000, hash: createHash("sha256").update(checked).digest("hex"), bytes: stdout.length };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const loadBefore = os.loadavg();
const startedAt = new Date();
const rows = [];
for (const command of COMMANDS) {
  const hashes = new Set();
  const results = new Map(bins.map((b) => [b, { cold: [], warm: [], bytes: 0 }]));
  // The page cache warm for every mode alike.
  run(bins[0], command);
  for (let i = 0; i < samples; i++) {
    for (const bin of i % 2 ? [...bins].reverse() : bins) {
      fs.rmSync(cacheDir(bin), { recursive: true, force: true });
      const cold = run(bin, command);
      results.get(bin).cold.push(cold);
      hashes.add(cold.hash);
    }
  }
  for (const bin of bins) run(bin, command); // primes (the cache exists after the cold runs; once more, untimed)
  for (let i = 0; i < samples; i++) {
    for (const bin of i % 2 ? [...bins].reverse() : bins) {
      const warm = run(bin, command);
      results.get(bin).warm.push(warm);
      hashes.add(warm.hash);
    }
  }
  if (hashes.size !== 1) throw new Error(`${command.name}: the output differs between runs`);
  for (const bin of bins) {
    for (const mode of ["cold", "warm"]) {
      const xs = results.get(bin)[mode];
      const ms = xs.map((x) => x.ms);
      rows.push({
        command: command.name,
        mode,
        bin: path.relative(process.cwd(), bin) || bin,
        median: median(ms),
        min: Math.min(...ms),
        max: Math.max(...ms),
        rss: median(xs.map((x) => x.rssMB)),
        cpu: median(xs.map((x) => x.cpuMs)),
        bytes: xs[0].bytes,
      });
      const r = rows.at(-1);
      console.log(`${r.command.padEnd(28)} ${mode} ${r.bin}: ${r.median.toFixed(0)} ms (${r.min.toFixed(0)}-${r.max.toFixed(0)}), CPU ${r.cpu.toFixed(0)} ms, RSS ${r.rss.toFixed(0)} MB`);
    }
  }
}
const loadAfter = os.loadavg();
fs.rmSync(root, { recursive: true, force: true });

const lines = [
  "# pi-sessions on " + dataName,
  "",
  `Written by \`node benchmark/cli.mjs\` on ${startedAt.toISOString()}: ${totalFiles} sessions in ${folders.length} folders,`,
  `${samples} samples per row, each a fresh process (stdout to a file, COLUMNS=120); load average`,
  `${loadBefore.map((l) => l.toFixed(2)).join(" ")} before, ${loadAfter.map((l) => l.toFixed(2)).join(" ")} after; ${os.cpus().length} CPUs, Node ${process.version}.`,
  "cold: no cache file (page cache warm); warm: the persistent listing cache primed.",
  ...(droppedCaCerts !== undefined ? ["NODE_EXTRA_CA_CERTS was set here and left out of the children's environment (each Node start parses that bundle)."] : []),
  "",
  "| command | mode | bin | median ms | min-max ms | CPU ms (median) | peak RSS MB | stdout bytes |",
  "|---|---|---|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) => `| \`${r.command}\` | ${r.mode} | ${r.bin} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)}-${r.max.toFixed(0)} | ${r.cpu.toFixed(0)} | ${r.rss.toFixed(0)} | ${r.bytes} |`,
  ),
  "",
];
fs.writeFileSync(outFile, lines.join("\n"));
console.log(`wrote ${outFile}`);
