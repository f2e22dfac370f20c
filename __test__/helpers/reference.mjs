// The reference implementation (the specification): @earendil-works/pi-coding-agent@1.6.0.
//
// On Node >= 22 the package root loads, so we import it the way users do. The root does
// not re-export buildContextEntries, so that one comes from the module file (the very
// module the root re-exports: same SessionManager class).
// On Node 20 the package root cannot load (it needs Node >= 22.19); we import the
// session-manager module by file path instead.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { EXPORT_NAMES } from "./api.mjs";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const REFERENCE_PACKAGE = "@earendil-works/pi-coding-agent";
export const REFERENCE_FILE = path.join(
	REPO_ROOT,
	"node_modules",
	"@earendil-works",
	"pi-coding-agent",
	"dist",
	"core",
	"session-manager.js",
);

const nodeMajor = Number(process.versions.node.split(".")[0]);

async function loadReference() {
	const file = await import(pathToFileURL(REFERENCE_FILE).href);
	if (nodeMajor < 22) return { module: file, loadedFrom: REFERENCE_FILE };
	const root = await import(REFERENCE_PACKAGE);
	if (root.SessionManager !== file.SessionManager) {
		throw new Error("reference package root and session-manager.js disagree on SessionManager");
	}
	const module = {};
	for (const name of EXPORT_NAMES) module[name] = name in root ? root[name] : file[name];
	return { module, loadedFrom: `${REFERENCE_PACKAGE} (package root)` };
}

const loaded = await loadReference();
for (const name of EXPORT_NAMES) {
	if (loaded.module[name] === undefined) throw new Error(`reference does not export ${name}`);
}

/** The reference's exports, restricted to the public contract (EXPORT_NAMES). */
export const reference = Object.freeze(Object.fromEntries(EXPORT_NAMES.map((n) => [n, loaded.module[n]])));
export const referenceLoadedFrom = loaded.loadedFrom;
