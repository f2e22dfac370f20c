// pi-session-native/register: `node --require pi-session-native/register` or `--import`
// (or either in NODE_OPTIONS) makes pi run every session on the native core, the one it
// starts with included (`pi -c`, `pi -r`, `pi --session`, `pi --fork`). This is the
// CommonJS file (`--require` loads it without starting Node's ESM loader, so it costs a
// program nothing measurable); register.mjs, for `--import`, loads it.
//
// In any Node program but pi's CLI it does nothing and says nothing: the one check is the
// real path of the main script (pi's `dist/.../cli.js` inside @earendil-works/pi-coding-agent).
// In pi, a module load hook (module.registerHooks, Node 22.15+) adds one line to the module
// of pi's that defines its SessionManager class, handing the class over as the module
// finishes, before pi's main runs; useNativeSessions then makes its statics answer with this
// package's class. The native addon is loaded only then. A pi whose version is not 1.6.x,
// whose class is not found, or whose session API differs runs on its own class, with one
// line on stderr saying so.
"use strict";
// Only what the check of the main script needs is loaded at once (both are in Node's startup
// snapshot); the rest when the program is pi.
const fs = require("node:fs");
const path = require("node:path");
const lazy = (id) => () => require(id);
const nodeModule = lazy("node:module");
const pathToFileURL = (file) => require("node:url").pathToFileURL(file);

const PI_PACKAGE = "@earendil-works/pi-coding-agent";
/** The pi versions whose session API this package implements. */
const SUPPORTED = /^1\.6\.\d+$/;
const FOUND = Symbol.for("pi-session-native.register.found");
const LOADED = Symbol.for("pi-session-native.register.loaded");
const INSTALLED = Symbol.for("pi-session-native.register.installed");

const say = (text) => process.stderr.write(`pi-session-native: ${text}\n`);

/**
 * The folder of the pi package whose CLI `file` is, or null: a file under
 * `<pi>/dist/` where `<pi>/package.json` names pi.
 */
function piPackageOf(file) {
	let real;
	try {
		real = fs.realpathSync(file);
	} catch {
		return null;
	}
	const marker = `${path.sep}dist${path.sep}`;
	const at = real.lastIndexOf(marker);
	if (at === -1 || !real.slice(0, at).endsWith(`${path.sep}pi-coding-agent`)) return null;
	const root = real.slice(0, at);
	try {
		const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
		if (pkg.name !== PI_PACKAGE) return null;
		return { root, version: String(pkg.version), entry: real };
	} catch {
		return null;
	}
}

/**
 * The source text with the class handed to the register hook as the module ends, or null
 * if it defines no SessionManager class: pi's bundle (`var SessionManager=class
 * _SessionManager{`) or its unbundled `dist/core/session-manager.js` (`export class
 * SessionManager {`).
 */
function handOver(source) {
	for (const name of ["class _SessionManager", "class SessionManager"]) {
		for (let at = source.indexOf(name); at !== -1; at = source.indexOf(name, at + 1)) {
			if (!/^\s*\{/.test(source.slice(at + name.length, at + name.length + 8))) continue;
			const before = source.slice(Math.max(0, at - 200), at);
			const assigned = /(?<![\w$.])(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*$/.exec(before);
			const declared = name === "class SessionManager" && /(?:^|[\n;}])\s*(?:export\s+)?$/.test(before);
			const binding = assigned?.[1] ?? (declared ? "SessionManager" : null);
			if (binding) return `${source}\n;globalThis[Symbol.for("pi-session-native.register.found")]?.(${binding});\n`;
		}
	}
	return null;
}

const CLASS_MARK = Buffer.from("SessionManager");

/**
 * Switches the pi at `pi` ({ root, version, entry }) to native sessions: version check,
 * then the load hook. Returns whether the hook is in place. Used by this entry for the
 * process's main script, and by the pi-native command for the pi it runs.
 */
function switchPi(pi) {
	if (globalThis[INSTALLED]) return true;
	if (!SUPPORTED.test(pi.version)) {
		say(`pi ${pi.version} is not the version whose sessions this package implements (1.6.x), so pi runs on its own sessions.`);
		return false;
	}
	if (typeof nodeModule().registerHooks !== "function") {
		say(`Node ${process.version} has no module.registerHooks (Node 22.15 or later has), so pi runs on its own sessions.`);
		return false;
	}
	globalThis[INSTALLED] = true;
	const rootUrl = `${pathToFileURL(pi.root).href}/dist/`;
	const entryUrl = pathToFileURL(pi.entry).href;
	let found = false;
	let failed = false;
	globalThis[FOUND] = (PiSessionManager) => {
		if (failed) return;
		try {
			// The addon is loaded only now, in pi, once pi's class is there.
			const { useNativeSessions, SessionManager } = require("./index.js");
			useNativeSessions(PiSessionManager);
			// /resume's listing with its progress paced for pi's picker, as the pi package
			// does from session_start (whichever comes first installs it).
			require("./extension/paced-listing.cjs").installNativeListing(PiSessionManager, SessionManager);
			found = true;
		} catch (error) {
			failed = true;
			say(`${String(error?.message ?? error).split("\n")[0].replace(/^pi-session-native: /, "")}; pi runs on its own sessions.`);
		}
	};
	globalThis[LOADED] = () => {
		if (found || failed) return;
		// A class that turned up later (a module pi imports on demand) stays pi's own: the
		// sessions made so far were.
		failed = true;
		say(`pi's SessionManager class was not found in ${pi.root}, so pi runs on its own sessions.`);
	};
	nodeModule().registerHooks({
		load(url, context, nextLoad) {
			const result = nextLoad(url, context);
			if (!url.startsWith(rootUrl) || result.format !== "module" || result.source == null) return result;
			let source = result.source;
			if (typeof source !== "string") {
				// Most of pi's modules never name the class: look at the bytes before decoding.
				if (Buffer.from(source.buffer, source.byteOffset, source.byteLength).indexOf(CLASS_MARK) === -1 && url !== entryUrl) return result;
				source = Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString("utf8");
			}
			let changed = handOver(source);
			if (url === entryUrl) changed = `${changed ?? source}\n;globalThis[Symbol.for("pi-session-native.register.loaded")]?.();\n`;
			return changed === null ? result : { ...result, source: changed };
		},
	});
	return true;
}

// Not pi (node -e, npm, any other program a NODE_OPTIONS line reaches): nothing else runs.
const main = process.argv[1];
if (main && !globalThis[INSTALLED]) {
	const pi = piPackageOf(main);
	if (pi) switchPi(pi);
}

/**
 * Runs pi's CLI `file` in this process as `node <file>` would, switched (for the pi-native
 * command). Resolves when pi's main module has loaded; pi exits the process itself.
 */
function runPi(file) {
	process.argv[1] = file;
	const pi = piPackageOf(file);
	if (pi) switchPi(pi);
	return import(pathToFileURL(file).href);
}

module.exports = { piPackageOf, handOver, switchPi, runPi };
