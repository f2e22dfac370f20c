#!/usr/bin/env node
// `node scripts/check-changelog.mjs`: CHANGELOG.md says what the version being released
// brings. The release workflow runs it before publishing, and the test suite runs it on
// the repository's changelog, so a version is never published without its own section.
//
// It fails (exit status 1, one line per problem on stderr) unless the changelog has
//   - an `## [Unreleased]` section, where every user-visible change adds a line until the
//     next release, and
//   - an `## [<version>]` section for package.json's version (a date or anything else may
//     follow the brackets), with at least one `- ` entry before the next `## ` heading:
//     the heading pi looks for when it shows a pi package's changes after an update.
//
//   node scripts/check-changelog.mjs [--changelog FILE] [--version X.Y.Z]
//                                    defaults: CHANGELOG.md and package.json's version
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The problems of a changelog's text for `version`: none when it is ready to publish. */
export function changelogProblems(text, version) {
	const lines = text.split(/\r?\n/);
	const headings = lines.flatMap((line, index) => (line.startsWith("## ") ? [index] : []));
	const problems = [];
	if (!headings.some((i) => /^## \[Unreleased\]\s*$/i.test(lines[i]))) {
		problems.push("no `## [Unreleased]` section (where the next changes go)");
	}
	const heading = new RegExp(`^## \\[${escape(version)}\\](?:\\s|$)`);
	const own = headings.filter((i) => heading.test(lines[i]));
	if (own.length === 0) {
		problems.push(`no \`## [${version}]\` section for version ${version}: move the Unreleased lines under a heading of their own`);
	} else if (own.length > 1) {
		problems.push(`${own.length} \`## [${version}]\` sections: one per version`);
	} else {
		const end = headings.find((i) => i > own[0]) ?? lines.length;
		if (!lines.slice(own[0] + 1, end).some((line) => /^\s*[-*] \S/.test(line))) {
			problems.push(`the \`## [${version}]\` section lists no change (no \`- \` line)`);
		}
	}
	return problems;
}

function main(argv) {
	const option = (name) => {
		const at = argv.indexOf(name);
		return at === -1 ? undefined : argv[at + 1];
	};
	const file = path.resolve(option("--changelog") ?? path.join(ROOT, "CHANGELOG.md"));
	const version = option("--version") ?? JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version;
	let text;
	try {
		text = fs.readFileSync(file, "utf8");
	} catch (error) {
		console.error(`check-changelog: cannot read ${file}: ${error.message}`);
		return 1;
	}
	const problems = changelogProblems(text, version);
	for (const problem of problems) console.error(`check-changelog: ${path.basename(file)}: ${problem}`);
	if (problems.length === 0) console.log(`check-changelog: ${path.basename(file)} has a section for ${version}`);
	return problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
