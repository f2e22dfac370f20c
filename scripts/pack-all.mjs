#!/usr/bin/env node
// `npm run pack-all`: the tarballs a release publishes, for the targets whose addon is
// built here, written to pack/ (and nothing else there):
//   - pi-session-native-<platform>-<version>.tgz for each npm/<platform> whose
//     pi-session-native.<platform>.node is at the repository root (the build writes the
//     host's; CI's artifacts would put the others there);
//   - pi-session-native-<version>.tgz, the main package: the files `npm publish` takes
//     from the root, with the optionalDependencies that `napi prepublish` writes into
//     package.json at publish time (every platform package of npm/, same version).
// Each package is packed from a staging copy, so the working tree is left as it was. Every
// tarball carries the root's LICENSE: the main package takes it from the root; a platform
// package's staging copy gets it here, as the release workflow copies it into npm/<platform>
// before `napi prepublish` (which refuses a package whose `files` names a missing file), so
// the one LICENSE at the root is the only copy kept in git.
//
//   node scripts/pack-all.mjs                build (release) every target this machine can,
//                                            then pack: this host's with `napi build`; the
//                                            other linux and darwin targets, and a type-check
//                                            of the win32 ones, with the cross toolchain of
//                                            scripts/platform-toolchain.sh when it is there
//                                            (without it: a note of what was skipped and why)
//   node scripts/pack-all.mjs --host-only    this host's target only (what `npm test` packs)
//   node scripts/pack-all.mjs --all-targets  every target, failing when the toolchain lacks
//                                            something (`npm run test:platforms`, CI)
//   node scripts/pack-all.mjs --no-build     pack what was built last
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildTarget, linkable, missingToolchain, platformOf } from "./build-target.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const PACK_DIR = path.join(ROOT, "pack");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

const run = (args, cwd) => execFileSync(NPM, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });

/** The platform packages under npm/, checked against the targets in package.json. */
export function platformPackages(root = ROOT) {
  const rootJson = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const dirs = fs.readdirSync(path.join(root, "npm")).sort();
  const packages = dirs.map((dir) => {
    const json = JSON.parse(fs.readFileSync(path.join(root, "npm", dir, "package.json"), "utf8"));
    const binary = `${rootJson.napi.binaryName}.${dir}.node`;
    if (json.name !== `${rootJson.name}-${dir}`) throw new Error(`npm/${dir}: package name ${json.name}, expected ${rootJson.name}-${dir}`);
    if (json.version !== rootJson.version) throw new Error(`npm/${dir}: version ${json.version}, expected ${rootJson.version} (napi version syncs them)`);
    if (json.main !== binary) throw new Error(`npm/${dir}: main ${json.main}, expected ${binary}`);
    return { dir, name: json.name, binary };
  });
  if (packages.length !== rootJson.napi.targets.length) {
    throw new Error(`npm/ has ${packages.length} platform packages for ${rootJson.napi.targets.length} targets: run napi create-npm-dirs`);
  }
  return { rootJson, packages };
}

/** Copies the files `npm pack` would take from `from` into a fresh staging folder. */
function stage(from, name) {
  const listing = JSON.parse(run(["pack", "--dry-run", "--json", "--ignore-scripts"], from));
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), `pack-${name}-`));
  for (const { path: file } of listing[0].files) {
    fs.mkdirSync(path.dirname(path.join(staging, file)), { recursive: true });
    fs.copyFileSync(path.join(from, file), path.join(staging, file));
  }
  return staging;
}

function pack(staging, packDir, log) {
  const [result] = JSON.parse(run(["pack", "--json", "--ignore-scripts", "--pack-destination", packDir], staging));
  fs.rmSync(staging, { recursive: true, force: true });
  log(`  ${packDir === PACK_DIR ? "pack" : packDir}/${result.filename}  ${result.entryCount} files, ${(result.size / 1024).toFixed(0)} KiB`);
  return path.join(packDir, result.filename);
}

// Targets that do not compile yet: tried, and a failure is reported, not fatal. They
// compile once every OS call of src/ is behind the portable os layer; empty this then.
const NOT_YET = new Set([]);

const HOST_TRIPLES = { "linux-x64": "x86_64-unknown-linux-gnu", "linux-arm64": "aarch64-unknown-linux-gnu", "darwin-x64": "x86_64-apple-darwin", "darwin-arm64": "aarch64-apple-darwin" };

/**
 * Builds every target of package.json's napi.targets that `mode` asks for and this machine
 * can; returns the platforms to pack when that is not every binary at the root.
 */
function buildAll(rootJson, mode) {
  const started = Date.now();
  execFileSync(NPM, ["run", "build"], { cwd: ROOT, stdio: "inherit" });
  const host = HOST_TRIPLES[`${process.platform}-${process.arch}`];
  const others = rootJson.napi.targets.filter((t) => t !== host);
  console.log(`pack-all: ${host ?? `${process.platform}-${process.arch}`} built by napi build (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  if (mode === "host-only") {
    console.log(`pack-all: --host-only: skipped ${others.join(", ")}`);
    // Binaries of other targets left from an earlier build stay out of pack/.
    return host ? new Set([platformOf(host)]) : undefined;
  }
  const missing = missingToolchain();
  if (process.platform !== "linux" || process.arch !== "x64") missing.unshift("a linux-x64 machine (the toolchain script is for Debian x64)");
  if (missing.length) {
    const note = `the cross toolchain lacks ${missing.join("; ")} (scripts/platform-toolchain.sh installs it; npm run test:platforms runs it)`;
    if (mode === "all-targets") throw new Error(`pack-all --all-targets: ${note}`);
    console.log(`pack-all: skipped ${others.join(", ")}: ${note}`);
    return;
  }
  const failed = [];
  for (const triple of others) {
    // Stale binaries of a target that no longer builds must not be packed.
    fs.rmSync(path.join(ROOT, `${rootJson.napi.binaryName}.${platformOf(triple)}.node`), { force: true });
    try {
      buildTarget(triple, { check: !linkable(triple) });
      if (NOT_YET.has(triple)) console.log(`pack-all: ${triple} compiles now: take it out of NOT_YET in scripts/pack-all.mjs`);
    } catch (error) {
      if (!NOT_YET.has(triple)) throw error;
      failed.push(triple);
    }
  }
  if (failed.length) console.log(`pack-all: ${failed.join(", ")} do not compile yet (expected until src/ has its portable os layer)`);
  console.log(`pack-all: built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * Packs what is built at the root into `packDir` (emptied first): the platform packages whose
 * binary is there (those of `only`, a set of npm/ folder names, when given) and the main
 * package. Returns the tarballs written, `{ dir, name, file }` (`dir` undefined for the main).
 */
export function packAll({ packDir = PACK_DIR, only, log = console.log } = {}) {
  const { rootJson, packages } = platformPackages();
  const built = packages.filter((p) => fs.existsSync(path.join(ROOT, p.binary)) && (!only || only.has(p.dir)));
  if (built.length === 0) throw new Error(`no ${rootJson.napi.binaryName}.<platform>.node at ${ROOT}: build first`);

  fs.rmSync(packDir, { recursive: true, force: true });
  fs.mkdirSync(packDir, { recursive: true });
  log(`pack-all: ${built.length} of ${packages.length} platform packages built here (${built.map((p) => p.dir).join(", ")})`);

  const written = [];
  for (const p of built) {
    const source = path.join(ROOT, "npm", p.dir);
    const staging = stage(source, p.dir);
    fs.copyFileSync(path.join(ROOT, p.binary), path.join(staging, p.binary));
    fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(staging, "LICENSE"));
    written.push({ dir: p.dir, name: p.name, file: pack(staging, packDir, log) });
  }

  const staging = stage(ROOT, rootJson.name);
  const json = JSON.parse(fs.readFileSync(path.join(staging, "package.json"), "utf8"));
  json.optionalDependencies = Object.fromEntries(packages.map((p) => [p.name, rootJson.version]));
  fs.writeFileSync(path.join(staging, "package.json"), `${JSON.stringify(json, null, 2)}\n`);
  const staged = fs.readdirSync(staging, { recursive: true });
  const binaries = staged.filter((f) => f.endsWith(".node"));
  if (binaries.length) throw new Error(`the main package would ship binaries: ${binaries.join(", ")}`);
  written.push({ dir: undefined, name: rootJson.name, file: pack(staging, packDir, log) });
  return written;
}

function main() {
  const { rootJson } = platformPackages();
  let only;
  if (!process.argv.includes("--no-build")) {
    const mode = process.argv.includes("--all-targets") ? "all-targets" : process.argv.includes("--host-only") ? "host-only" : "available";
    only = buildAll(rootJson, mode);
  }
  packAll({ only });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
