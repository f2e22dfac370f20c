// The benchmark data sets. Shared by generate.mjs (which writes them) and run.mjs (which
// asks for the ones its workloads need).

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DATA_DIR = process.env.PI_BENCH_DATA ? resolve(process.env.PI_BENCH_DATA) : join(BENCH_DIR, "data");
export const REPO_ROOT = resolve(BENCH_DIR, "..");
export const REFERENCE_MODULE = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");

/** Bump when the generator changes in a way that changes the files. */
export const GENERATOR_VERSION = 3;

const MB = 1024 * 1024;

/** Single-session data sets: name -> spec */
export const SESSIONS = {
  // full benchmark
  "session-10mb": { profile: "large", targetBytes: 10 * MB, seed: "s10" },
  "session-100mb": { profile: "large", targetBytes: 100 * MB, seed: "s100" },
  "session-500mb": { profile: "large", targetBytes: 500 * MB, seed: "s500" },
  "entries-100k": { profile: "small", targetEntries: 100_000, seed: "e100k" },
  // --quick stand-ins
  "quick-3mb": { profile: "large", targetBytes: 3 * MB, seed: "q3" },
  "quick-12mb": { profile: "large", targetBytes: 12 * MB, seed: "q12" },
  "quick-10k": { profile: "small", targetEntries: 10_000, seed: "q10k" },
};

/** Listing corpora (optional, big): name -> spec */
export const LISTINGS = {
  // 5,000 sessions in one folder, about 1.1 GB
  // (fit: files come out ~7% over their target sizes, since a session only stops after
  // a whole entry and never below header + system prompt + first prompt)
  "listing-5k": { folders: 1, filesPerFolder: 5000, totalBytes: 1100 * MB, fit: 0.93, seed: "l5k" },
  // 10,000 sessions in 20 folders (one per project cwd), about 2.2 GB
  "listing-10k": { folders: 20, filesPerFolder: 500, totalBytes: 2200 * MB, fit: 0.93, seed: "l10k" },
};

export function sessionPath(name) {
  return join(DATA_DIR, `${name}.jsonl`);
}

export function markerPath(file) {
  return `${file}.meta.json`;
}

export function listingPath(name) {
  return join(DATA_DIR, name);
}
