// pi-session-native/register (node --import, or a NODE_OPTIONS line) and the pi-native
// command: in pi's CLI (its bundle and its unbundled dist/cli.js, on Node 22) every session
// pi makes is native from the first one on, silently; in any other Node program the entry
// does nothing, says nothing and loads nothing of this package's; a pi it cannot switch (another
// version, no class found, another session API) runs on its own class with one line on
// stderr. Made-up pi packages (a package.json and a dist/cli.js) stand in for those.
//
// What the entry costs a Node program that is not pi: benchmark/register-cost.mjs.
//
//   node __test__/run.mjs __test__/register.test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { layoutsUnavailable, packageIn } from "./helpers/pi-layouts.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const { findPi } = require("../bin/pi-native");
const { handOver, piPackageOf } = require("../register.cjs");
const [major, minor] = process.versions.node.split(".").map(Number);
const piSkip = major < 22 || (major === 22 && minor < 19) ? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it` : false;

const REGISTER = pathToFileURL(path.join(REPO_ROOT, "register.mjs")).href;
const REGISTER_CJS = path.join(REPO_ROOT, "register.cjs");
const PI_ROOT = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "register-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function node(args, { env = {}, cwd = root } = {}) {
	const run = spawnSync(process.execPath, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
	assert.equal(run.error, undefined);
	return run;
}

/** A made-up pi package: package.json with `version`, and `files` under it (dist/cli.js ...). */
function fakePi(label, version, files) {
	const dir = path.join(root, label, "node_modules", "@earendil-works", "pi-coding-agent");
	fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
	fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "@earendil-works/pi-coding-agent", version, type: "module", bin: { pi: "dist/cli.js" } }));
	for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
	return dir;
}

// Anything of this package's but the register entry itself (the addon is loaded through index.js).
const PACKAGE_LOADED = "Object.keys(require.cache).some((f) => f.startsWith(process.env.REPO_ROOT) && !f.endsWith('register.cjs'))";

test("in a Node program that is not pi: nothing said, nothing of the package loaded", () => {
	// node -e: no main script at all
	const inline = node(["--import", REGISTER, "-e", `console.log(${PACKAGE_LOADED}, typeof globalThis[Symbol.for("pi-session-native.register.installed")])`], { env: { REPO_ROOT } });
	assert.equal(inline.status, 0, inline.stderr);
	assert.equal(inline.stdout, "false undefined\n");
	assert.equal(inline.stderr, "");
	// a script file, with the entry in NODE_OPTIONS (as a user's shell would put it), --import or --require
	const script = path.join(root, "script.cjs");
	fs.writeFileSync(script, `console.log(${PACKAGE_LOADED}, typeof globalThis[Symbol.for("pi-session-native.register.installed")]);\n`);
	// the README's line quotes the path, which may hold a space
	const spaced = path.join(root, "a folder");
	fs.symlinkSync(REPO_ROOT, spaced, "junction");
	const quoted = `--require="${path.join(spaced, "register.cjs").replaceAll("\\", "/")}"`;
	for (const option of [`--import=${REGISTER}`, `--require=${REGISTER_CJS}`, quoted]) {
		const file = node([script], { env: { REPO_ROOT, NODE_OPTIONS: option } });
		assert.equal(file.status, 0, file.stderr);
		assert.equal(file.stdout, "false undefined\n", option);
		assert.equal(file.stderr, "");
	}
});

test("piPackageOf: pi's CLI (also through a link) is pi; other files, and a folder named like pi that is not pi's package, are not", () => {
	if (fs.existsSync(PI_ROOT)) {
		const cli = path.join(PI_ROOT, "dist", "bundle", "cli.js");
		assert.equal(piPackageOf(cli)?.root, fs.realpathSync(PI_ROOT));
		const link = path.join(root, "pi-link");
		fs.symlinkSync(cli, link);
		assert.equal(piPackageOf(link)?.entry, fs.realpathSync(cli));
	}
	assert.equal(piPackageOf(path.join(REPO_ROOT, "index.js")), null);
	assert.equal(piPackageOf(path.join(root, "missing.js")), null);
	const impostor = path.join(root, "impostor", "pi-coding-agent");
	fs.mkdirSync(path.join(impostor, "dist"), { recursive: true });
	fs.writeFileSync(path.join(impostor, "package.json"), JSON.stringify({ name: "not-pi", version: "1.6.0" }));
	fs.writeFileSync(path.join(impostor, "dist", "cli.js"), "");
	assert.equal(piPackageOf(path.join(impostor, "dist", "cli.js")), null);
});

test("handOver: the class of pi's bundle and of its unbundled module is handed over; a file without one is left", () => {
	assert.match(handOver("x}var SessionManager=class _SessionManager{static create(){}}export{SessionManager};"), /\.\(SessionManager\);\n$/);
	assert.match(handOver("var Foo = class _SessionManager {};"), /\.\(Foo\);\n$/);
	assert.match(handOver("import x from 'y';\nexport class SessionManager {\n}\n"), /\.\(SessionManager\);\n$/);
	assert.equal(handOver("import { SessionManager } from './session-manager.js';\nSessionManager.create();"), null);
	assert.equal(handOver("const text = 'a class SessionManager { in a string';"), null);
});

test("pi of another version: one line on stderr, and pi runs on its own class", () => {
	const dir = fakePi("v17", "1.7.0", { "dist/cli.js": "export class SessionManager { static create() {} }\nconsole.log('pi ran', typeof SessionManager.create[Symbol.for('x')]);\n" });
	const run = node(["--import", REGISTER, path.join(dir, "dist", "cli.js")]);
	assert.equal(run.status, 0, run.stderr);
	assert.equal(run.stdout, "pi ran undefined\n");
	assert.equal(run.stderr, "pi-session-native: pi 1.7.0 is not the version whose sessions this package implements (1.6.x), so pi runs on its own sessions.\n");
});

test("pi 1.6 whose class is not found, or whose session API is another: one line, nothing switched", { skip: typeof (await import("node:module")).registerHooks !== "function" && "module.registerHooks needs Node 22.15" }, () => {
	const none = fakePi("none", "1.6.0", { "dist/cli.js": "console.log('pi ran');\n" });
	const run = node(["--import", REGISTER, path.join(none, "dist", "cli.js")]);
	assert.equal(run.stdout, "pi ran\n");
	assert.match(run.stderr, /^pi-session-native: pi's SessionManager class was not found in .*, so pi runs on its own sessions\.\n$/);

	const other = fakePi("other", "1.6.3", {
		"dist/session-manager.js": "export class SessionManager {\n static create() { return 'own'; }\n static open() {}\n static list() {}\n}\n",
		"dist/cli.js": "import { SessionManager } from './session-manager.js';\nconsole.log(SessionManager.create());\n",
	});
	const switched = node(["--import", REGISTER, path.join(other, "dist", "cli.js")]);
	assert.equal(switched.stdout, "own\n", "nothing half-switched");
	assert.equal(switched.stderr.split("\n").length, 2, switched.stderr);
	assert.match(switched.stderr, /^pi-session-native: this SessionManager cannot be switched to native sessions: it has no static continueRecent, inMemory, forkFrom, findById, listAll; pi runs on its own sessions\.\n$/);

	const methods = fakePi("methods", "1.6.3", {
		"dist/session-manager.js": `export class SessionManager {\n${["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"].map((n) => ` static ${n}() { return 'own'; }`).join("\n")}\n getEntries() {}\n appendSomethingNew() {}\n _privateHelper() {}\n}\n`,
		"dist/cli.js": "import { SessionManager } from './session-manager.js';\nconsole.log(SessionManager.create());\n",
	});
	const newer = node(["--import", REGISTER, path.join(methods, "dist", "cli.js")]);
	assert.equal(newer.stdout, "own\n");
	assert.match(newer.stderr, /^pi-session-native: .*its method appendSomethingNew is not implemented here; pi runs on its own sessions\.\n$/);
});

test("on a Node without module.registerHooks (before 22.15), pi 1.6 runs on its own class, with one line", { skip: typeof (await import("node:module")).registerHooks === "function" && "this Node has module.registerHooks" }, () => {
	const dir = fakePi("old-node", "1.6.0", { "dist/cli.js": "console.log('pi ran');\n" });
	const run = node(["--import", REGISTER, path.join(dir, "dist", "cli.js")]);
	assert.equal(run.stdout, "pi ran\n");
	assert.equal(run.stderr, `pi-session-native: Node ${process.version} has no module.registerHooks (Node 22.15 or later has), so pi runs on its own sessions.\n`);
});

/** An extension that tells, on stderr, whether the session pi started with is native. */
function probe() {
	const file = path.join(root, "probe.mjs");
	fs.writeFileSync(
		file,
		`export default function (pi) {\n  pi.on("session_start", (_e, ctx) => {\n    const cls = Object.getPrototypeOf(ctx.sessionManager).constructor;\n    process.stderr.write("PROBE native=" + Boolean(cls[Symbol.for("pi-session-native.nativeClass")]) + "\\n");\n  });\n}\n`,
	);
	return file;
}

function piWorld(label) {
	const dir = path.join(root, label);
	const agentDir = path.join(dir, "agent");
	const cwd = path.join(dir, "project");
	fs.mkdirSync(agentDir, { recursive: true });
	fs.mkdirSync(cwd, { recursive: true });
	return { cwd, env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", HOME: dir } };
}

for (const cli of ["dist/bundle/cli.js", "dist/cli.js"]) {
	test(`real pi (${cli}): the session pi starts with is native with the hook, pi's own without; nothing said`, { skip: piSkip }, () => {
		const w = piWorld(cli.replace(/\W/g, "-"));
		const args = [path.join(PI_ROOT, cli), "--no-session", "-e", probe(), "-p", "hello"];
		const withHook = node([...(cli.includes("bundle") ? ["--import", REGISTER] : ["--require", REGISTER_CJS]), ...args], { ...w });
		assert.match(withHook.stderr, /PROBE native=true\n/);
		assert.doesNotMatch(withHook.stderr, /pi-session-native:/);
		const without = node(args, { ...w });
		assert.match(without.stderr, /PROBE native=false\n/);
		// The same output otherwise (pi has no model here, and says so).
		assert.equal(withHook.stdout, without.stdout);
		assert.equal(withHook.stderr.replace("native=true", ""), without.stderr.replace("native=false", ""));
		assert.equal(withHook.status, without.status);
	});
}

test("with the hook alone, the listing pi's /resume calls has its progress paced for pi's picker", { skip: piSkip }, () => {
	const w = piWorld("paced");
	const sessions = path.join(root, "paced", "many");
	fs.mkdirSync(sessions, { recursive: true });
	const FILES = 400;
	for (let i = 0; i < FILES; i++) {
		const id = `0190e0a0-0000-7000-8000-${String(i).padStart(12, "0")}`;
		const header = { type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: w.cwd };
		const message = { type: "message", id: "aaaa0001", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `hello ${i}`, timestamp: 1 } };
		fs.writeFileSync(path.join(sessions, `2026-01-01T00-00-00-000Z_${id}.jsonl`), `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`);
	}
	const file = path.join(root, "paced-probe.mjs");
	fs.writeFileSync(
		file,
		`import { createRequire } from "node:module";
const ours = createRequire(import.meta.url)(${JSON.stringify(path.join(REPO_ROOT, "index.js"))}).SessionManager;
export default function (pi) {
  pi.on("session_start", async () => {
    const count = async (list) => {
      let calls = 0;
      let last;
      const found = await list((loaded, total) => { calls++; last = loaded + "/" + total; });
      return calls + " calls, last " + last + ", " + found.length + " sessions";
    };
    const piClass = globalThis[Symbol.for("pi-session-native.piSessionManager")];
    const dir = ${JSON.stringify(sessions)};
    process.stderr.write("PACED pi " + await count((p) => piClass.list(process.cwd(), dir, p)) + "\\n");
    process.stderr.write("PACED raw " + await count((p) => ours.list(process.cwd(), dir, p)) + "\\n");
  });
}
`,
	);
	const run = node(["--import", REGISTER, path.join(PI_ROOT, "dist", "bundle", "cli.js"), "--no-session", "-e", file, "-p", "hello"], { ...w });
	const pi = /PACED pi (\d+) calls, last (\S+), (\d+) sessions/.exec(run.stderr);
	const raw = /PACED raw (\d+) calls, last (\S+), (\d+) sessions/.exec(run.stderr);
	assert.ok(pi && raw, run.stderr);
	// Every file listed either way, and the last call says so.
	assert.equal(Number(pi[3]), FILES);
	assert.equal(Number(raw[3]), FILES);
	assert.equal(pi[2], `${FILES}/${FILES}`);
	// The listing itself reports each file; pi's class hands its picker a few of them.
	assert.ok(Number(raw[1]) >= FILES, raw[0]);
	assert.ok(Number(pi[1]) < 20, pi[0]);
});

test("pi-native runs the pi found on PATH, with the hook; without a pi it says how to get one", { skip: piSkip }, () => {
	const w = piWorld("pi-native");
	const bin = path.join(root, "path-bin");
	fs.mkdirSync(bin, { recursive: true });
	fs.symlinkSync(path.join(PI_ROOT, "dist", "bundle", "cli.js"), path.join(bin, "pi"));
	const env = { ...w.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
	assert.equal(findPi(env).file, fs.realpathSync(path.join(PI_ROOT, "dist", "bundle", "cli.js")));
	const run = node([path.join(REPO_ROOT, "bin", "pi-native"), "--no-session", "-e", probe(), "-p", "hello"], { cwd: w.cwd, env });
	assert.match(run.stderr, /PROBE native=true\n/);
	assert.doesNotMatch(run.stderr, /pi-session-native:/);
	const version = node([path.join(REPO_ROOT, "bin", "pi-native"), "--version"], { env });
	assert.equal(version.stdout.trim(), JSON.parse(fs.readFileSync(path.join(PI_ROOT, "package.json"), "utf8")).version);
	// PI_NATIVE_PI names pi's package folder or CLI
	assert.equal(findPi({ PATH: "", PI_NATIVE_PI: PI_ROOT }).file, fs.realpathSync(path.join(PI_ROOT, "dist", "bundle", "cli.js")));
	assert.match(findPi({ PATH: "", PI_NATIVE_PI: REPO_ROOT }).error, /is not pi's CLI/);
	const empty = path.join(root, "empty-prefix");
	fs.mkdirSync(empty, { recursive: true });
	const none = node([path.join(REPO_ROOT, "bin", "pi-native"), "--version"], { env: { PATH: path.dirname(process.execPath), npm_config_prefix: empty } });
	assert.equal(none.status, 1);
	assert.match(none.stderr, /^pi-native: pi was not found .*npm install -g @earendil-works\/pi-coding-agent/);
});

test("a class pi loads only after its main module ran stays pi's own, after the one line", { skip: typeof (await import("node:module")).registerHooks !== "function" && "module.registerHooks needs Node 22.15" }, () => {
	const statics = ["create", "open", "continueRecent", "inMemory", "forkFrom", "findById", "list", "listAll"];
	const late = fakePi("late", "1.6.0", {
		"dist/session-manager.js": `export class SessionManager {\n${statics.map((n) => ` static ${n}() { return 'own'; }`).join("\n")}\n}\n`,
		"dist/cli.js": "setTimeout(async () => {\n  const { SessionManager } = await import('./session-manager.js');\n  console.log(SessionManager.create());\n}, 10);\n",
	});
	const run = node(["--import", REGISTER, path.join(late, "dist", "cli.js")]);
	assert.equal(run.stdout, "own\n");
	assert.match(run.stderr, /^pi-session-native: pi's SessionManager class was not found in .*, so pi runs on its own sessions\.\n$/);
});

test("as npm installs the package (the tarballs): pi-native and the NODE_OPTIONS line, by path or by name in its project", { skip: piSkip || layoutsUnavailable() || false }, () => {
	const dir = packageIn("tarballs", root);
	const project = path.dirname(path.dirname(dir));
	const w = piWorld("tarballs-pi");
	const piArgs = ["--no-session", "-e", probe(), "-p", "hello"];
	const piCli = path.join(PI_ROOT, "dist", "bundle", "cli.js");
	const viaBin = node([path.join(project, "node_modules", ".bin", "pi-native"), ...piArgs], { cwd: project, env: { ...w.env, PI_NATIVE_PI: PI_ROOT } });
	assert.match(viaBin.stderr, /PROBE native=true\n/, viaBin.stderr);
	for (const option of [`--require=${path.join(dir, "register.cjs")}`, "--require=pi-session-native/register", "--import=pi-session-native/register"]) {
		const run = node([piCli, ...piArgs], { cwd: project, env: { ...w.env, NODE_OPTIONS: option } });
		assert.match(run.stderr, /PROBE native=true\n/, `${option}: ${run.stderr}`);
		assert.doesNotMatch(run.stderr, /pi-session-native:/);
	}
});
