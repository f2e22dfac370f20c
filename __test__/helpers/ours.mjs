// The implementation under test ("ours").
//
// PI_NATIVE_IMPL=/path/to/module selects any module with the same exports (use the
// reference's session-manager.js to validate the harness: reference vs reference; the one
// deliberate difference is then compared exactly too, see PI_DIFF_EXPECTED_DIFFERENCES in harness.mjs).
// Without it, ours is the package at the repo root, loaded the CommonJS way (index.js).
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { EXPORT_NAMES } from "./api.mjs";
import { REPO_ROOT } from "./reference.mjs";

const require = createRequire(import.meta.url);

async function loadOurs() {
	const target = process.env.PI_NATIVE_IMPL;
	if (target) {
		const resolved = path.resolve(target);
		const ns = await import(pathToFileURL(resolved).href);
		return { module: "SessionManager" in ns ? ns : ns.default, loadedFrom: resolved };
	}
	const file = path.join(REPO_ROOT, "index.js");
	return { module: require(file), loadedFrom: file };
}

const loaded = await loadOurs();
const missing = EXPORT_NAMES.filter((n) => loaded.module?.[n] === undefined);
if (missing.length) throw new Error(`implementation under test (${loaded.loadedFrom}) does not export: ${missing.join(", ")}`);

/** Ours, restricted to the public contract (EXPORT_NAMES). */
export const ours = Object.freeze(Object.fromEntries(EXPORT_NAMES.map((n) => [n, loaded.module[n]])));
export const oursLoadedFrom = loaded.loadedFrom;
/** Ours with everything it exports beyond the reference's contract (configureEntries ...). */
export const oursModule = loaded.module;
