// `npm test` needs Node, npm and Rust, and installs the rest from the npm registry as
// devDependencies. A few checks need a tool that no npm package carries (shellcheck, tmux,
// Rust's rustfmt and clippy where Rust comes from the distribution): where it is missing,
// the check says it was skipped and why, and `npm test` goes on. With CI=true a missing tool
// is a failure (.ci/run installs them all), so CI never passes by skipping.
import fs from "node:fs";
import path from "node:path";

/** CI=true (or 1, yes): a missing tool fails the check instead of skipping it. */
export const STRICT = /^(1|true|yes)$/i.test(process.env.CI ?? "");

/** The full path of `command` on PATH, or null. */
export function onPath(command, PATH = process.env.PATH ?? "") {
	for (const dir of PATH.split(path.delimiter)) {
		if (!dir) continue;
		const file = path.join(dir, command);
		try {
			fs.accessSync(file, fs.constants.X_OK);
			if (fs.statSync(file).isFile()) return file;
		} catch {
			// not here
		}
	}
	return null;
}

/**
 * Reports a check that cannot run here: "skipped: <check>: <why>" on stderr, and exit code 0;
 * with CI=true, "failed: ..." and 1.
 */
export function skipped(check, why) {
	const verdict = STRICT ? "failed (CI=true: a missing tool is a failure)" : "skipped";
	console.error(`${verdict}: ${check}: ${why}`);
	return STRICT ? 1 : 0;
}
