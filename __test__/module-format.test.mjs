// The package loads both ways and exposes the same named exports:
//   require("pi-session-native")  -> index.js   (CommonJS)
//   import("pi-session-native")   -> index.mjs  (ESM), also as `import * as m` / `import { ... }`
// With PI_NATIVE_IMPL set, the module at that path stands in for both entry points.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { EXPORT_NAMES, INSTANCE_METHODS, STATIC_METHODS } from "./helpers/api.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const IMPL = process.env.PI_NATIVE_IMPL ? path.resolve(process.env.PI_NATIVE_IMPL) : undefined;
const PACKAGE_NAME = "pi-session-native";

// Entry points: [label, CommonJS specifier, ESM specifier]
const ENTRY_POINTS = IMPL
	? [["PI_NATIVE_IMPL", IMPL, pathToFileURL(IMPL).href]]
	: [
			["package name (exports map)", PACKAGE_NAME, PACKAGE_NAME],
			["file paths", path.join(REPO_ROOT, "index.js"), pathToFileURL(path.join(REPO_ROOT, "index.mjs")).href],
			["repo directory / index.mjs", REPO_ROOT, pathToFileURL(path.join(REPO_ROOT, "index.mjs")).href],
		];

function checkExports(m, how) {
	for (const name of EXPORT_NAMES) assert.ok(name in m, `${how}: missing export ${name}`);
	assert.equal(m.CURRENT_SESSION_VERSION, 3, `${how}: CURRENT_SESSION_VERSION`);
	for (const name of EXPORT_NAMES.filter((n) => n !== "CURRENT_SESSION_VERSION")) {
		assert.equal(typeof m[name], "function", `${how}: ${name} is a function`);
	}
	for (const name of STATIC_METHODS) assert.equal(typeof m.SessionManager[name], "function", `${how}: SessionManager.${name}`);
	for (const name of INSTANCE_METHODS) {
		assert.equal(typeof m.SessionManager.prototype[name], "function", `${how}: SessionManager.prototype.${name}`);
	}
}

for (const [label, cjs, esm] of ENTRY_POINTS) {
	test(`require (${label})`, () => {
		checkExports(require(cjs), `require(${cjs})`);
	});

	test(`import() (${label})`, async () => {
		const ns = await import(esm);
		checkExports(ns, `import(${esm})`);
		// Named exports, not only properties of a default export.
		for (const name of EXPORT_NAMES) assert.ok(Object.keys(ns).includes(name), `import(${esm}): ${name} is a named export`);
	});

	test(`require and import give the same objects (${label})`, async () => {
		const c = require(cjs);
		const e = await import(esm);
		for (const name of EXPORT_NAMES) assert.equal(e[name], c[name], `${name}: import and require disagree`);
	});

	test(`static "import * as m" and "import { ... }" (${label})`, () => {
		const source = [
			`import * as m from ${JSON.stringify(esm)};`,
			`import { ${EXPORT_NAMES.join(", ")} } from ${JSON.stringify(esm)};`,
			`const named = { ${EXPORT_NAMES.join(", ")} };`,
			"const out = {};",
			`for (const k of ${JSON.stringify(EXPORT_NAMES)}) out[k] = [typeof m[k], m[k] === named[k]];`,
			"out.version = m.CURRENT_SESSION_VERSION;",
			"console.log(JSON.stringify(out));",
		].join("\n");
		const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", source], {
			cwd: REPO_ROOT,
			encoding: "utf8",
			env: { ...process.env, NODE_NO_WARNINGS: "1" },
		});
		const out = JSON.parse(stdout.trim().split("\n").pop());
		for (const name of EXPORT_NAMES) {
			const expectedType = name === "CURRENT_SESSION_VERSION" ? "number" : "function";
			assert.deepEqual(out[name], [expectedType, true], `import * as m: ${name}`);
		}
		assert.equal(out.version, 3);
	});
}

test("a SessionManager works through both entry points", async () => {
	const [, cjs, esm] = ENTRY_POINTS[0];
	for (const m of [require(cjs), await import(esm)]) {
		const sm = m.SessionManager.inMemory("/tmp/module-format");
		const id = sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
		assert.equal(sm.getLeafId(), id);
		assert.equal(sm.buildSessionContext().messages.length, 1);
		assert.ok(sm instanceof m.SessionManager);
	}
});
