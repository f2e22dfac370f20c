// The declarations as a TypeScript user gets them: the tarballs `npm run pack-all` wrote to
// pack/ are installed (offline) into fresh projects outside the repository, and a consumer
// that imports "pi-session-native" by name is compiled, strict, in every setup a user may have:
// one tsconfig file per setup, each checked as `tsc -p <it>` checks it (helpers/tsc-projects.cjs,
// one process per compiler and project, so each file is parsed once, not per tsconfig):
//
//   TypeScript  5.0 (the typescript50 devDependency) and the current 5.x (typescript)
//   lib         es2020, es2022, esnext; and es2022 with dom where @types/node is not installed
//   @types/node installed (the version that TypeScript release supports) or not at all
//   skipLibCheck off and on
//   module      commonjs (node10 resolution), node16, nodenext, esnext with bundler
//
// The consumers also check that the types are real (a @ts-expect-error that fails if the
// package resolved to `any`), that `sm[Symbol.dispose]()` and `using` work wherever the
// program knows Symbol.dispose, and that a real AbortSignal is accepted where one exists
// (@types/node or dom).
//
// run.mjs leaves this file out of its per-Node runs: `npm test` runs it once, with the install
// test. Alone: npm run pack-all && node --test __test__/types-matrix.test.mjs
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { platformPackages } from "../scripts/pack-all.mjs";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MODULES = path.join(REPO_ROOT, "node_modules");
const PACK_DIR = path.join(REPO_ROOT, "pack");
const { rootJson, packages } = platformPackages(REPO_ROOT);
const HOST = packages.find((p) => p.dir === "linux-x64-gnu");
const TIMEOUT_MS = 120_000;
const CHECKER = path.join(REPO_ROOT, "__test__", "helpers", "tsc-projects.cjs");
// Two compilers at a time: this machine's two cores, without starving the other tests.
const PARALLEL = Math.max(1, Math.min(2, os.availableParallelism?.() ?? 2));

const COMPILERS = [
	// @types/node 20.17.28 is the last @types/node release that supports TypeScript 5.0.
	{ name: "TypeScript 5.0", dir: "typescript50", typesNode: "types-node20", major: 5, minor: 0 },
	{ name: "TypeScript 5 (current)", dir: "typescript", typesNode: path.join("@types", "node"), major: 5 },
];
const LIBS = [["es2020"], ["es2022"], ["esnext"]];
const BROWSER_LIB = ["es2022", "dom"]; // a bundler project without @types/node
const MODULE_KINDS = [
	{ module: "commonjs", moduleResolution: "node10", consumers: ["consumer.ts"] },
	{ module: "node16", moduleResolution: "node16", consumers: ["consumer.ts", "consumer.mts", "consumer.cts"] },
	{ module: "nodenext", moduleResolution: "nodenext", consumers: ["consumer.ts", "consumer.mts", "consumer.cts"] },
	{ module: "esnext", moduleResolution: "bundler", consumers: ["consumer.ts"] },
];

const CONSUMER_BODY = `
const sm: SessionManager = SessionManager.inMemory("/home/user/project");
const id: string = sm.appendMessage({ role: "user", content: "hello", timestamp: 1 });
const entry: SessionEntry | undefined = sm.getEntry(id);
const context: SessionContext = buildSessionContext(sm.getEntries());
const listed: Promise<SessionInfo[]> = SessionManager.list("/home/user/project", "/home/user/sessions");
const version: 3 = CURRENT_SESSION_VERSION;
sm.close();
// @ts-expect-error: a message needs a role (fails if the package resolved to any)
sm.appendMessage({ content: "no role", timestamp: 1 });
`;
const NAMES = "SessionManager, buildSessionContext, CURRENT_SESSION_VERSION, type SessionContext, type SessionEntry, type SessionInfo";
const FILES = {
	"consumer.ts": `import { ${NAMES} } from "pi-session-native";\n${CONSUMER_BODY}export { entry, context, listed, version };\n`,
	"consumer.mts": `import { ${NAMES} } from "pi-session-native";\nimport * as pkg from "pi-session-native";\n${CONSUMER_BODY}export const viaNamespace: 3 = pkg.CURRENT_SESSION_VERSION;\nexport { entry, context, listed, version };\n`,
	"consumer.cts": `import pkg = require("pi-session-native");\nconst sm: pkg.SessionManager = pkg.SessionManager.inMemory("/home/user/project");\nconst version: 3 = pkg.CURRENT_SESSION_VERSION;\n// @ts-expect-error: getEntryCount returns a number\nconst wrong: string = sm.getEntryCount();\nexport = { sm, version, wrong };\n`,
	// where the program knows Symbol.dispose (lib esnext on TypeScript >= 5.2, or @types/node)
	"dispose.ts": `import { SessionManager } from "pi-session-native";\nconst sm = SessionManager.inMemory("/home/user/project");\nconst disposable: { [Symbol.dispose](): void } = sm;\ndisposable[Symbol.dispose]();\nsm[Symbol.dispose]();\nexport {};\n`,
	// the same, on TypeScript >= 5.2, which has the syntax
	"using.ts": `import { SessionManager } from "pi-session-native";\nexport function count(file: string): number {\n    using sm = SessionManager.open(file);\n    return sm.getEntryCount();\n}\n`,
	// where the program has a global AbortSignal (@types/node or dom)
	"signal.ts": `import { SessionManager, SessionSearch } from "pi-session-native";\nconst controller = new AbortController();\nexport const listed = SessionManager.list("/p", undefined, undefined, controller.signal);\nexport const all = SessionManager.listAll(undefined, controller.signal);\nexport const search = SessionSearch.open({ signal: controller.signal });\n// @ts-expect-error: a signal is not a string\nSessionManager.listAll(undefined, "stop");\n`,
};

let work;

function sh(bin, args, cwd) {
	const r = spawnSync(bin, args, { cwd, encoding: "utf8", timeout: TIMEOUT_MS });
	assert.equal(r.status, 0, `${bin} ${args.join(" ")} exited ${r.status} ${r.error?.message ?? ""}:\n${r.stdout}\n${r.stderr}`);
}

/** Compiles tsconfig files with one TypeScript, in one process (helpers/tsc-projects.cjs). */
const compile = (typescriptDir, configs, cwd) =>
	new Promise((resolve, reject) => {
		execFile(process.execPath, [CHECKER, typescriptDir, ...configs], { cwd, timeout: 10 * TIMEOUT_MS, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
			if (error) reject(new Error(`${CHECKER} with ${typescriptDir}: ${error.message}\n${stdout}${stderr}`));
			else resolve(JSON.parse(stdout));
		});
	});

/** Copies an installed package (and, flat beside it, the dependencies it resolves) into `modules` as `name`. */
function copyWithDependencies(dir, modules, name) {
	assert.ok(fs.existsSync(path.join(dir, "package.json")), `${dir} is missing (npm ci installs the devDependencies)`);
	fs.cpSync(dir, path.join(modules, name), { recursive: true });
	const { dependencies = {} } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
	const requireFrom = createRequire(path.join(dir, "package.json"));
	for (const dependency of Object.keys(dependencies)) {
		if (fs.existsSync(path.join(modules, name, "node_modules", dependency))) continue; // nested, copied with it
		copyWithDependencies(path.dirname(requireFrom.resolve(`${dependency}/package.json`)), modules, dependency);
	}
}

/** The tsconfig files of one project: every lib x module x skipLibCheck. */
function writeConfigs(dir, compiler, withNode) {
	const configs = [];
	const knowsUsing = compiler.minor === undefined || compiler.minor >= 2;
	for (const lib of withNode ? LIBS : [...LIBS, BROWSER_LIB]) {
		for (const kind of MODULE_KINDS) {
			for (const skipLibCheck of [false, true]) {
				const knowsDispose = withNode || (lib.includes("esnext") && knowsUsing);
				const files = [...kind.consumers];
				if (knowsDispose) files.push("dispose.ts");
				if (knowsDispose && knowsUsing) files.push("using.ts");
				if (withNode || lib.includes("dom")) files.push("signal.ts");
				const name = `tsconfig.${lib.join("+")}.${kind.module}.${skipLibCheck ? "skiplib" : "libcheck"}.json`;
				const compilerOptions = {
					strict: true,
					noEmit: true,
					target: lib[0] === "esnext" ? "es2022" : lib[0],
					lib,
					module: kind.module,
					moduleResolution: kind.moduleResolution,
					skipLibCheck,
				};
				fs.writeFileSync(path.join(dir, name), `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`);
				configs.push({ name, lib, module: kind.module, skipLibCheck, files });
			}
		}
	}
	return configs;
}

before(() => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), "pi-session-native-types-"));
});

after(() => {
	if (work) fs.rmSync(work, { recursive: true, force: true });
});

test("the packed package installs offline into a fresh project", () => {
	const main = path.join(PACK_DIR, `${rootJson.name}-${rootJson.version}.tgz`);
	const platform = path.join(PACK_DIR, `${HOST.name}-${rootJson.version}.tgz`);
	for (const tgz of [main, platform]) assert.ok(fs.existsSync(tgz), `${tgz} is missing: run npm run pack-all first`);
	const installed = path.join(work, "installed");
	fs.mkdirSync(installed);
	fs.writeFileSync(path.join(installed, "package.json"), `${JSON.stringify({ name: "types-check", version: "1.0.0", private: true })}\n`);
	sh("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", main, platform], installed);
	assert.ok(fs.existsSync(path.join(installed, "node_modules", rootJson.name, "index.d.ts")));
	// binding.d.ts, the generated loader's types, is internal (not in "exports") and not shipped
	assert.ok(!fs.existsSync(path.join(installed, "node_modules", rootJson.name, "binding.d.ts")), "binding.d.ts is not shipped");
});

// The four projects, two compilers at a time (this machine's two cores).
describe("tsc -p, strict, every setup", { concurrency: PARALLEL }, () => {
	for (const compiler of COMPILERS) {
		for (const withNode of [true, false]) {
			const label = `${compiler.name}, ${withNode ? "with" : "without"} @types/node`;
			test(`${label}: lib ${[...LIBS, ...(withNode ? [] : [BROWSER_LIB])].map((l) => l.join("+")).join(", ")}; module ${MODULE_KINDS.map((k) => k.module).join(", ")}; skipLibCheck off and on`, { timeout: 10 * TIMEOUT_MS }, async (t) => {
				const typescriptDir = path.join(MODULES, compiler.dir);
				assert.ok(fs.existsSync(path.join(typescriptDir, "package.json")), `${typescriptDir} is missing (npm ci installs the devDependencies)`);
				const version = JSON.parse(fs.readFileSync(path.join(typescriptDir, "package.json"), "utf8")).version;
				assert.match(version, new RegExp(`^${compiler.major}\\.${compiler.minor ?? ""}`), `${compiler.dir} is TypeScript ${version}`);
				t.diagnostic(`TypeScript ${version}`);
				const installed = path.join(work, "installed");
				assert.ok(fs.existsSync(installed), "needs the installed package");
				const project = path.join(work, `${compiler.dir}-${withNode ? "node" : "bare"}`);
				// node_modules as npm left it, plus @types/node where the user has it
				fs.cpSync(installed, project, { recursive: true, verbatimSymlinks: true });
				if (withNode) copyWithDependencies(path.join(MODULES, compiler.typesNode), path.join(project, "node_modules"), path.join("@types", "node"));
				for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(project, name), text);
				const configs = writeConfigs(project, compiler, withNode);

				const results = await compile(typescriptDir, configs.map((c) => c.name), project);
				assert.equal(results.length, configs.length);
				const failed = configs.map((config, i) => ({ config, diagnostics: results[i].diagnostics })).filter((r) => r.diagnostics.length > 0);
				t.diagnostic(`${configs.length - failed.length} of ${configs.length} tsconfig files compile`);
				assert.deepEqual(
					failed.map((f) => `${f.config.name} (${f.config.files.join(" ")}):\n${f.diagnostics.join("\n")}`),
					[],
					`${label}: these setups do not compile`,
				);
			});
		}
	}
});
