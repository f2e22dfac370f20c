// The JavaScript layers (ARCHITECTURE.md): bin/ and extension/ are built on the package's
// public entry only, what `require("pi-session-native")` or `import` gives a user
// (index.js, index.mjs), the register entry (register.mjs, .cjs) and package.json, plus their
// own files; lib/ never reaches up into them; and no module of lib/, bin/ or extension/ takes part in an import circle. Every
// require(), import, export ... from, import() and createRequire(...)(...) is found with
// TypeScript's parser, in whatever form, and resolved as Node resolves it.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const ts = require("typescript");

const PUBLIC = new Set(["index.js", "index.mjs", "register.mjs", "register.cjs", "package.json"]);
const LAYERS = ["lib", "bin", "extension"];
const BUILTINS = new Set(builtinModules);
const PACKAGE_NAME = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).name;

/** The JavaScript files of a folder: .js, .mjs, .cjs, and scripts with a node shebang (bin/pi-sessions). */
function jsFiles(dir) {
	if (!fs.existsSync(dir)) return [];
	return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((d) => {
		if (!d.isFile()) return [];
		const file = path.join(d.parentPath ?? d.path, d.name);
		if (/\.[cm]?js$/.test(d.name)) return [file];
		return path.extname(d.name) === "" && fs.readFileSync(file, "utf8").startsWith("#!/usr/bin/env node") ? [file] : [];
	});
}

/**
 * The specifier of an argument: a string literal, or a template whose substitutions only
 * name a file in a fixed folder (`./commands/${name}.js`: `{ pattern }`, what it can name);
 * else null.
 */
function literal(node) {
	if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
	if (node && ts.isTemplateExpression(node) && node.head.text.startsWith(".") && node.head.text.endsWith("/")) {
		const escape = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
		const rest = node.templateSpans.map((span) => `[^/\\\\]+${escape(span.literal.text)}`).join("");
		if (node.templateSpans.every((span) => !/[/\\]/.test(span.literal.text))) return { folder: node.head.text, pattern: new RegExp(`^${rest}$`) };
	}
	return null;
}

const isCreateRequire = (node) => ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "createRequire";

/**
 * Every module specifier of `file`: import/export declarations, import(), and calls of a
 * require: `require`, `require<Something>` (requireNode), any name bound to
 * `createRequire(...)`, or `createRequire(...)(...)` on the spot. `spec` is null where the
 * argument is not a string literal: such an import could go anywhere.
 */
function specifiers(root, file) {
	const text = fs.readFileSync(file, "utf8").replace(/^#!.*/, "");
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
	const requires = new Set(["require"]);
	const bind = (node) => {
		if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isCreateRequire(node.initializer)) requires.add(node.name.text);
		ts.forEachChild(node, bind);
	};
	bind(source);
	const found = [];
	const at = (node) => `${path.relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
	const visit = (node) => {
		if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
			found.push({ spec: literal(node.moduleSpecifier), where: at(node), esm: true });
		} else if (ts.isCallExpression(node)) {
			const callee = node.expression;
			const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
			const isRequire = (ts.isIdentifier(callee) && (requires.has(callee.text) || /^require[A-Z0-9_]/.test(callee.text))) || isCreateRequire(callee);
			if (isImport || isRequire) found.push({ spec: literal(node.arguments[0]), where: at(node), esm: isImport });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

/** The file `spec` names from `file`, or null outside the package (a builtin, another package). */
function resolve(root, spec, file, esm) {
	if (spec.startsWith("node:") || BUILTINS.has(spec)) return null;
	if (spec === PACKAGE_NAME) return path.join(root, esm ? "index.mjs" : "index.js");
	if (spec === `${PACKAGE_NAME}/register`) return path.join(root, esm ? "register.mjs" : "register.cjs");
	if (spec.startsWith(`${PACKAGE_NAME}/`)) return path.join(root, spec.slice(PACKAGE_NAME.length + 1));
	if (!spec.startsWith(".") && !path.isAbsolute(spec)) return null;
	const target = path.resolve(path.dirname(file), spec);
	try {
		return createRequire(file).resolve(target);
	} catch {
		return target;
	}
}

/** `target` relative to `root` with / separators, or null outside the package (node_modules too). */
function inPackage(root, target) {
	const rel = path.relative(root, target);
	if (rel.startsWith("..") || path.isAbsolute(rel) || rel.split(path.sep)[0] === "node_modules") return null;
	return rel.split(path.sep).join("/");
}

/** Every module of the layers and the entry points of `root`, with what each imports (a template: each file it can name). */
function graph(root) {
	const files = [...LAYERS.flatMap((dir) => jsFiles(path.join(root, dir))), ...["index.js", "index.mjs"].map((f) => path.join(root, f)).filter((f) => fs.existsSync(f))];
	const targets = (s, file) => {
		if (s.spec === null) return [s];
		if (typeof s.spec === "string") return [{ ...s, target: resolve(root, s.spec, file, s.esm) }];
		const folder = path.resolve(path.dirname(file), s.spec.folder);
		const names = fs.existsSync(folder) ? fs.readdirSync(folder).filter((n) => s.spec.pattern.test(n)) : [];
		return names.map((n) => ({ ...s, spec: `${s.spec.folder}${n}`, target: path.join(folder, n) }));
	};
	return new Map(files.map((file) => [file, specifiers(root, file).flatMap((s) => targets(s, file))]));
}

/** What breaks the layering, one line each. */
function violations(root, edges) {
	const bad = [];
	for (const [file, list] of edges) {
		const layer = path.relative(root, file).split(path.sep)[0];
		for (const { spec, where, target } of list) {
			if (spec === null) {
				bad.push(`${where}: an import or require of something other than a string literal`);
				continue;
			}
			const rel = target === null ? null : inPackage(root, target);
			if (rel === null) continue;
			if (layer === "bin" || layer === "extension") {
				if (!rel.startsWith(`${layer}/`) && !PUBLIC.has(rel)) bad.push(`${where}: '${spec}' is ${rel}, not the package's public entry (index.js, index.mjs) nor a file of ${layer}/`);
			} else if (layer === "lib" && (rel.startsWith("bin/") || rel.startsWith("extension/"))) {
				bad.push(`${where}: '${spec}': lib/ must not import ${rel}`);
			}
		}
	}
	return bad;
}

/** The import circles, each as `a -> b -> a`. */
function circles(root, edges) {
	const next = new Map([...edges].map(([file, list]) => [file, [...new Set(list.map((e) => e.target).filter((t) => t && edges.has(t)))]]));
	const found = [];
	const state = new Map(); // 1: on the current path, 2: done
	const stack = [];
	const visit = (file) => {
		state.set(file, 1);
		stack.push(file);
		for (const to of next.get(file)) {
			if (state.get(to) === 1) found.push([...stack.slice(stack.indexOf(to)), to].map((f) => path.relative(root, f).split(path.sep).join("/")).join(" -> "));
			else if (!state.has(to)) visit(to);
		}
		stack.pop();
		state.set(file, 2);
	};
	for (const file of next.keys()) if (!state.has(file)) visit(file);
	return found;
}

test("bin/ and extension/ import only the package's public entry (and their own files); lib/ imports neither", () => {
	const edges = graph(REPO_ROOT);
	const count = [...edges.values()].reduce((n, list) => n + list.length, 0);
	assert.ok(count > 50, `only ${count} imports found: the parser missed them`);
	assert.ok([...edges.keys()].some((f) => f.endsWith(path.join("bin", "pi-sessions"))), "bin/pi-sessions (no extension) is checked too");
	assert.deepEqual(violations(REPO_ROOT, edges), []);
});

test("no import circles among the modules of lib/, bin/, extension/ and the entry points", () => {
	assert.deepEqual(circles(REPO_ROOT, graph(REPO_ROOT)), []);
});

test("the checks catch each form of a reach into lib/, and a circle (on a made-up package)", () => {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "layers-js-"));
	const write = (rel, text) => {
		fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
		fs.writeFileSync(path.join(root, rel), text);
	};
	try {
		write("package.json", JSON.stringify({ name: PACKAGE_NAME }));
		write("index.js", "module.exports = require('./lib/x.js');\n");
		write("index.mjs", "export * from './index.js';\n");
		write("lib/x.js", "module.exports = {};\n");
		write("lib/up.js", "require('../bin/cli/a.js');\n");
		write("bin/cli/a.js", "require('../../index.js');\nrequire('./b.js');\nrequire('../../lib/x.js');\nconst load = (n) => require(`./cmd/${n}.js`);\n");
		write("bin/cli/cmd/c.js", "require('../a.js');\n");
		write("bin/cli/b.js", "require('./a.js');\n");
		write("bin/tool", "#!/usr/bin/env node\nrequire(`../lib/x.js`);\nconst lib = (n) => require(`../lib/${n}.js`);\n");
		write(
			"extension/e.mjs",
			[
				"import { createRequire } from 'node:module';",
				"import pi from '@earendil-works/pi-coding-agent';",
				"import own from './f.mjs';",
				"import pkg from 'pi-session-native';",
				"export { y } from '../lib/x.js';",
				"const requireNode = createRequire(import.meta.url);",
				"const req = createRequire(import.meta.url);",
				"requireNode('../lib/x.js');",
				"req('../lib/x.js');",
				"createRequire(import.meta.url)('../lib/x.js');",
				"await import('../lib/x.js');",
				"require(someName);",
				"",
			].join("\n"),
		);
		write("extension/f.mjs", "export default 1;\n");
		const edges = graph(root);
		const bad = violations(root, edges).map((line) => line.replace(/:.*?: /, ": ").split(",")[0]);
		const lines = (rel) => bad.filter((l) => l.startsWith(`${rel}:`)).length;
		assert.equal(lines("bin/cli/a.js"), 1, bad.join("\n"));
		// A template literal, and a template that can name lib/x.js (lib/up.js too).
		assert.equal(lines("bin/tool"), 3, bad.join("\n"));
		assert.equal(lines("lib/up.js"), 1, bad.join("\n"));
		// export from, requireNode, a name bound to createRequire, createRequire()() on the spot, import(), a non-literal.
		assert.equal(lines("extension/e.mjs"), 6, bad.join("\n"));
		// One through a command loaded by name.
		assert.deepEqual(circles(root, edges).sort(), ["bin/cli/a.js -> bin/cli/b.js -> bin/cli/a.js", "bin/cli/a.js -> bin/cli/cmd/c.js -> bin/cli/a.js"]);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});
