#!/usr/bin/env node
// Deterministic benchmark data, written through the reference SessionManager's own API so
// the files are exactly pi's format (current version: opening them never rewrites them).
//
//   node benchmark/generate.mjs                 the full-benchmark sessions (10/100/500 MB, 100k entries)
//   node benchmark/generate.mjs --quick         the small stand-ins used by run.mjs --quick
//   node benchmark/generate.mjs --listing       also the listing corpora (~3.3 GB, slow)
//   node benchmark/generate.mjs session-100mb   only the named data sets
//   options: --force (regenerate), --listing-scale 0.01 (fewer listing files, for trying it out)
//
// Content depends only on the seed; entry ids and entry timestamps come from the reference
// (random ids, wall clock), which is fine: every benchmark side reads the same file.
// A data set is skipped when its file exists and its marker (<file>.meta.json) records the
// same spec and the same size.

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { Corpus, Rng } from "./lib/content.mjs";
import { DATA_DIR, GENERATOR_VERSION, LISTINGS, REFERENCE_MODULE, SESSIONS, listingPath, markerPath, sessionPath } from "./lib/datasets.mjs";
import { SessionWriter } from "./lib/session-writer.mjs";

const MB = 1024 * 1024;
const START_TIME = Date.UTC(2025, 0, 6, 9, 0, 0);

function specKey(spec) {
  return JSON.stringify({ v: GENERATOR_VERSION, ...spec });
}

function readMarker(file) {
  try {
    return JSON.parse(readFileSync(markerPath(file), "utf8"));
  } catch {
    return null;
  }
}

/** true when `file` exists, has a marker for this spec and the size the marker records */
export function isFresh(file, spec) {
  const marker = readMarker(file);
  if (!marker || marker.key !== specKey(spec)) return false;
  const st = statSync(file, { throwIfNoEntry: false });
  return !!st && st.size === marker.size;
}

let refModule;
async function reference() {
  refModule ??= await import(pathToFileURL(REFERENCE_MODULE).href);
  return refModule;
}

// one text corpus for every data set (building it costs ~0.5 s); each data set's own Rng
// decides which pieces of it go where
let corpus;
function sharedCorpus() {
  corpus ??= new Corpus("pi-session-bench");
  return corpus;
}

async function generateSession(name, { force = false, log = console.log } = {}) {
  const spec = SESSIONS[name];
  if (!spec) throw new Error(`unknown data set ${name}`);
  const file = sessionPath(name);
  if (!force && isFresh(file, spec)) {
    log(`  ${name}: up to date (${(statSync(file).size / MB).toFixed(1)} MB)`);
    return file;
  }
  const { SessionManager } = await reference();
  mkdirSync(DATA_DIR, { recursive: true });
  const staging = join(DATA_DIR, `.staging-${name}`);
  rmSync(staging, { recursive: true, force: true });
  rmSync(markerPath(file), { force: true });
  rmSync(file, { force: true });
  const t0 = performance.now();
  const rng = new Rng(spec.seed);
  const sm = SessionManager.create(`/home/dev/${name}`, staging);
  const writer = new SessionWriter(sm, rng, sharedCorpus(), {
    profile: spec.profile,
    targetBytes: spec.targetBytes,
    targetEntries: spec.targetEntries,
    granularity: spec.targetEntries !== undefined ? "entry" : "turn",
    startTime: START_TIME,
  });
  const stats = writer.run();
  renameSync(sm.getSessionFile(), file);
  rmSync(staging, { recursive: true, force: true });
  const size = statSync(file).size;
  const marker = {
    key: specKey(spec),
    name,
    spec,
    size,
    entries: sm.getEntryCount(),
    leafId: sm.getLeafId(),
    sessionId: sm.getSessionId(),
    stats,
    generatedAt: new Date().toISOString(),
    seconds: +((performance.now() - t0) / 1000).toFixed(1),
  };
  writeFileSync(markerPath(file), `${JSON.stringify(marker, null, 2)}\n`);
  log(`  ${name}: ${(size / MB).toFixed(1)} MB, ${marker.entries} entries, ${JSON.stringify(stats)} in ${marker.seconds} s`);
  return file;
}

// ---------------------------------------------------------------------------------------
// Listing corpora: <name>/sessions/--home-dev-<project>--/<timestamp>_<id>.jsonl, so that
// PI_CODING_AGENT_DIR=<name> makes listAll() see them and list(cwd, folder) sees one folder.

function encodeCwd(cwd) {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** lognormal file sizes (median ~100 KB, a few MB at the top) scaled to the folder's share */
function fileSizes(rng, n, totalBytes) {
  const sizes = [];
  for (let i = 0; i < n; i++) {
    // Box-Muller
    const z = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
    sizes.push(Math.min(12 * MB, Math.max(6_000, Math.exp(11.5 + 1.3 * z))));
  }
  const scale = totalBytes / sizes.reduce((a, b) => a + b, 0);
  return sizes.map((s) => Math.max(6_000, Math.round(s * scale)));
}

async function generateListing(name, { force = false, scale = 1, log = console.log } = {}) {
  const spec = { ...LISTINGS[name] };
  if (scale !== 1) {
    spec.filesPerFolder = Math.max(1, Math.round(spec.filesPerFolder * scale));
    spec.totalBytes = Math.round(spec.totalBytes * scale);
    spec.scale = scale;
  }
  const { SessionManager } = await reference();
  const root = listingPath(name);
  const markers = join(root, "markers");
  mkdirSync(markers, { recursive: true });
  const rng = new Rng(spec.seed);
  const perFolderBytes = (spec.totalBytes * (spec.fit ?? 1)) / spec.folders;
  let total = 0;
  for (let f = 0; f < spec.folders; f++) {
    const frng = rng.fork(`folder-${f}`);
    const cwd = spec.folders === 1 ? "/home/dev/big-project" : `/home/dev/project-${String(f).padStart(2, "0")}`;
    const dir = join(root, "sessions", encodeCwd(cwd));
    const folderSpec = { ...spec, folder: f };
    const marker = join(markers, `${f}.json`);
    const done = (() => {
      try {
        const m = JSON.parse(readFileSync(marker, "utf8"));
        if (m.key !== specKey(folderSpec)) return null;
        const files = readdirSync(dir).filter((x) => x.endsWith(".jsonl"));
        const bytes = files.reduce((a, x) => a + statSync(join(dir, x)).size, 0);
        return files.length === m.files && bytes === m.bytes ? m : null;
      } catch {
        return null;
      }
    })();
    if (done && !force) {
      total += done.bytes;
      log(`  ${name}/${f}: up to date (${done.files} files, ${(done.bytes / MB).toFixed(0)} MB)`);
      continue;
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(marker, { force: true });
    mkdirSync(dir, { recursive: true });
    const t0 = performance.now();
    const sizes = fileSizes(frng, spec.filesPerFolder, perFolderBytes);
    const written = [];
    let bytes = 0;
    for (let i = 0; i < sizes.length; i++) {
      const srng = frng.fork(`session-${i}`);
      const start = START_TIME + i * 3_600_000 + srng.int(0, 3_000_000) + f * 86_400_000;
      const otherCwd = srng.chance(0.05);
      const options = written.length > 0 && srng.chance(0.1) ? { parentSession: srng.pick(written) } : undefined;
      const sm = SessionManager.create(otherCwd ? `${cwd}/packages/sub-${srng.int(1, 3)}` : cwd, dir, options);
      const writer = new SessionWriter(sm, srng, sharedCorpus(), {
        profile: "large",
        targetBytes: sizes[i],
        granularity: "entry",
        startTime: start,
        nameP: 0.3,
      });
      writer.run();
      let file = sm.getSessionFile();
      // a few broken files, as a real sessions folder has them
      const broken = srng.next();
      if (broken < 0.002) writeFileSync(file, "");
      else if (broken < 0.004) writeFileSync(file, `{"type":"message","id":"x"}\n${readFileSync(file, "utf8")}`);
      else if (broken < 0.008) truncateSync(file, statSync(file).size - srng.int(2, 40)); // last line cut
      const mtime = new Date(writer.t + srng.int(0, 600_000));
      utimesSync(file, mtime, mtime);
      written.push(file);
      bytes += statSync(file).size;
    }
    writeFileSync(marker, `${JSON.stringify({ key: specKey(folderSpec), files: written.length, bytes, dir })}\n`);
    total += bytes;
    log(`  ${name}/${f}: ${written.length} files, ${(bytes / MB).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  log(`  ${name}: ${(total / MB).toFixed(0)} MB total`);
  return root;
}

/** Make sure the named data sets exist; generates missing ones (used by run.mjs). */
export async function ensureSessions(names, opts = {}) {
  const out = {};
  for (const name of names) out[name] = await generateSession(name, opts);
  return out;
}

function diskCheck(needBytes) {
  const r = spawnSync("df", ["-Pk", DATA_DIR], { encoding: "utf8" });
  const line = r.stdout?.trim().split("\n")[1];
  const avail = line ? Number(line.split(/\s+/)[3]) * 1024 : Infinity;
  if (avail < needBytes * 1.2) {
    throw new Error(`not enough disk for the benchmark data: need ~${(needBytes / 2 ** 30).toFixed(1)} GB, have ${(avail / 2 ** 30).toFixed(1)} GB`);
  }
}

async function main() {
  const args = process.argv.slice(2);
  const force = args.includes("--force");
  const quick = args.includes("--quick");
  const listing = args.includes("--listing");
  const scaleIdx = args.indexOf("--listing-scale");
  const scale = scaleIdx >= 0 ? Number(args[scaleIdx + 1]) : 1;
  const named = args.filter((a, i) => !a.startsWith("--") && !(scaleIdx >= 0 && i === scaleIdx + 1));

  // the 500 MB session is held in memory by the reference while it is written
  if (getHeapStatistics().heap_size_limit < 3.5 * 2 ** 30 && !process.env.PI_BENCH_REEXEC) {
    const r = spawnSync(process.execPath, ["--max-old-space-size=6144", ...process.argv.slice(1)], { stdio: "inherit", env: { ...process.env, PI_BENCH_REEXEC: "1" } });
    process.exit(r.status ?? 1);
  }

  let sessions = named.filter((n) => SESSIONS[n]);
  let listings = named.filter((n) => LISTINGS[n]);
  const unknown = named.filter((n) => !SESSIONS[n] && !LISTINGS[n]);
  if (unknown.length) throw new Error(`unknown data set(s): ${unknown.join(", ")}; known: ${[...Object.keys(SESSIONS), ...Object.keys(LISTINGS)].join(", ")}`);
  if (named.length === 0) {
    sessions = quick ? Object.keys(SESSIONS).filter((n) => n.startsWith("quick-")) : Object.keys(SESSIONS).filter((n) => !n.startsWith("quick-"));
    if (listing) listings = Object.keys(LISTINGS);
  }
  const need =
    sessions.reduce((a, n) => a + (isFresh(sessionPath(n), SESSIONS[n]) ? 0 : (SESSIONS[n].targetBytes ?? 60 * MB)), 0) +
    listings.reduce((a, n) => a + LISTINGS[n].totalBytes * scale, 0);
  mkdirSync(DATA_DIR, { recursive: true });
  diskCheck(need);
  console.log(`data directory: ${DATA_DIR}`);
  for (const n of sessions) await generateSession(n, { force });
  for (const n of listings) await generateListing(n, { force, scale });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
