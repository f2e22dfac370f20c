// What every package carries, as npm publishes it: the LICENSE in each tarball, the
// CHANGELOG.md (and a section for the version, the one pi shows after an update), the
// keywords, and each platform package's os/cpu/libc and files against the target it holds.
//
// Statically, for all eight platform packages (a wrong npm/<platform>/package.json fails
// here without its cross build); then every package pack-all can write on this machine (the
// platform packages whose addon is at the root, and the main package) is packed into a temp
// folder with pack-all's own code and each tarball read entry by entry: LICENSE, no test,
// benchmark, build or session files, a platform package holding exactly its addon.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import zlib from "node:zlib";
import { changelogProblems } from "../scripts/check-changelog.mjs";
import { packAll } from "../scripts/pack-all.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const ROOT_JSON = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
const LICENSE = fs.readFileSync(path.join(REPO_ROOT, "LICENSE"));
const CHANGELOG = fs.readFileSync(path.join(REPO_ROOT, "CHANGELOG.md"));
const CHECK_CHANGELOG = path.join(REPO_ROOT, "scripts", "check-changelog.mjs");
// What pi users search npm for; every package.json carries them.
const KEYWORDS = ["pi", "pi-coding-agent", "session", "sessions", "jsonl", "napi"];
// Makes a package eligible for pi's package gallery: the main package (the pi package) only.
const GALLERY_KEYWORD = "pi-package";

/** The pages of docs/ the README links to: an installed package's README reaches them. */
function readmeDocs() {
	const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
	const linked = new Set([...readme.matchAll(/\]\((docs\/[\w.-]+\.md)/g)].map((m) => m[1]));
	assert.ok(linked.size > 0, "the README links to docs/");
	return [...linked];
}

const temps = [];
const tempDir = (name) => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), `package-contents-${name}-`));
	temps.push(dir);
	return dir;
};
after(() => {
	for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * What npm's os, cpu and libc say for a Rust target triple, and napi's folder name for it,
 * worked out from the triple alone (not from napi's tables, which wrote the package.json).
 */
function npmPlatformOf(triple) {
	const [arch, , system, abi] = triple.split("-");
	const cpu = { x86_64: "x64", aarch64: "arm64" }[arch];
	const os_ = { linux: "linux", darwin: "darwin", windows: "win32" }[system];
	assert.ok(cpu && os_, `a target this test knows: ${triple}`);
	const libc = os_ === "linux" ? { gnu: "glibc", musl: "musl" }[abi] : undefined;
	if (os_ === "linux") assert.ok(libc, `a Linux target names its libc: ${triple}`);
	return { dir: [os_, cpu, abi].filter(Boolean).join("-"), os: os_, cpu, libc };
}

/** The entries of a .tgz as npm writes it (ustar, pax headers for long names): name -> bytes. */
function readTarball(file) {
	const tar = zlib.gunzipSync(fs.readFileSync(file));
	const entries = new Map();
	const field = (block, start, length) => block.subarray(start, start + length).toString("utf8").replace(/\0.*$/s, "");
	let paxPath;
	for (let at = 0; at + 512 <= tar.length; ) {
		const header = tar.subarray(at, at + 512);
		if (header.every((b) => b === 0)) break;
		const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
		const type = String.fromCharCode(header[156] || 0x30);
		const body = tar.subarray(at + 512, at + 512 + size);
		at += 512 + Math.ceil(size / 512) * 512;
		if (type === "x") {
			paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString("utf8"))?.[1];
			continue;
		}
		if (type === "g") continue;
		const prefix = field(header, 345, 155);
		const name = paxPath ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
		paxPath = undefined;
		assert.ok(type === "0" || type === "5", `${path.basename(file)}: ${name} is a file or folder (type ${type})`);
		if (type === "0") {
			assert.ok(name.startsWith("package/"), `${path.basename(file)}: ${name} under package/`);
			entries.set(name.slice("package/".length), Buffer.from(body));
		}
	}
	return entries;
}

/** The object file format and CPU of an addon, from its header: { os, cpu }. */
function addonPlatform(bytes) {
	if (bytes.readUInt32BE(0) === 0x7f454c46) {
		return { os: "linux", cpu: { 62: "x64", 183: "arm64" }[bytes.readUInt16LE(18)] ?? `ELF machine ${bytes.readUInt16LE(18)}` };
	}
	if (bytes.readUInt32LE(0) === 0xfeedfacf) {
		return { os: "darwin", cpu: { 0x01000007: "x64", 0x0100000c: "arm64" }[bytes.readUInt32LE(4)] ?? `Mach-O CPU ${bytes.readUInt32LE(4)}` };
	}
	if (bytes.toString("latin1", 0, 2) === "MZ") {
		const pe = bytes.readUInt32LE(0x3c);
		assert.equal(bytes.toString("latin1", pe, pe + 4), "PE\0\0", "a PE header where the DOS header points");
		return { os: "win32", cpu: { 0x8664: "x64", 0xaa64: "arm64" }[bytes.readUInt16LE(pe + 4)] ?? `PE machine ${bytes.readUInt16LE(pe + 4)}` };
	}
	return { os: "unknown", cpu: "unknown" };
}

// Paths no published package may hold: tests, benchmarks, fuzzing, examples, sources and
// build files, scripts and CI, sessions, tarballs, the package folders themselves.
const NOT_PUBLISHED = [
	[/(^|\/)(__test__|__tests__|tests?|benchmark|fuzz|examples|scripts|src|target|npm|pack|node_modules|\.github|\.ci)\//, "a test, benchmark, example, source, build or CI folder"],
	[/\.(test|spec)\.[cm]?[jt]s$/, "a test file"],
	[/(^|\/)(Cargo\.toml|Cargo\.lock|build\.rs|rust-toolchain(\.toml)?|tsconfig[^/]*\.json)$|\.rs$/, "a build file"],
	[/\.jsonl$|\.jsonl\.bak-|\.bin$/, "a session or cache file"],
	[/\.tgz$|(^|\/)\.(git|gitignore|npmrc|env)$/, "a tarball, git or environment file"],
];

function assertPublishable(label, names) {
	for (const name of names) {
		for (const [pattern, what] of NOT_PUBLISHED) assert.doesNotMatch(name, pattern, `${label}: ${name} is ${what}`);
	}
}

test("LICENSE at the root is MIT's, with the project's copyright line, and every manifest says MIT", () => {
	const text = LICENSE.toString("utf8");
	assert.match(text, /^MIT License\n\nCopyright \(c\) 2026 the pi-session-native authors\n\n/);
	assert.match(text, /The above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software\./);
	assert.equal(ROOT_JSON.license, "MIT");
	assert.match(fs.readFileSync(path.join(REPO_ROOT, "Cargo.toml"), "utf8"), /^license = "MIT"$/m);
});

test("the main package.json: the keywords pi users search for, LICENSE and CHANGELOG.md in its files", () => {
	for (const keyword of [...KEYWORDS, GALLERY_KEYWORD]) assert.ok(ROOT_JSON.keywords.includes(keyword), `package.json keywords include ${keyword}`);
	for (const file of ["LICENSE", "CHANGELOG.md"]) assert.ok(ROOT_JSON.files.includes(file), `package.json files include ${file}`);
});

test("each npm/<platform>/package.json matches the target it holds: name, os, cpu, libc, files with LICENSE, keywords", () => {
	const dirs = fs.readdirSync(path.join(REPO_ROOT, "npm")).sort();
	const expected = ROOT_JSON.napi.targets.map(npmPlatformOf);
	assert.deepEqual(dirs, expected.map((p) => p.dir).sort(), "one npm/ folder per target of package.json's napi.targets");
	for (const { dir, os: os_, cpu, libc } of expected) {
		const json = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "npm", dir, "package.json"), "utf8"));
		const binary = `${ROOT_JSON.napi.binaryName}.${dir}.node`;
		const label = `npm/${dir}/package.json`;
		assert.equal(json.name, `${ROOT_JSON.name}-${dir}`, `${label}: name`);
		assert.equal(json.version, ROOT_JSON.version, `${label}: version`);
		assert.equal(json.main, binary, `${label}: main`);
		assert.deepEqual(json.os, [os_], `${label}: os`);
		assert.deepEqual(json.cpu, [cpu], `${label}: cpu`);
		assert.deepEqual(json.libc, libc && [libc], `${label}: libc`);
		assert.deepEqual([...json.files].sort(), [binary, "LICENSE"].sort(), `${label}: files are its addon and LICENSE`);
		assert.equal(json.license, ROOT_JSON.license, `${label}: license`);
		assert.deepEqual(json.engines, ROOT_JSON.engines, `${label}: engines`);
		for (const keyword of KEYWORDS) assert.ok(json.keywords?.includes(keyword), `${label}: keywords include ${keyword}`);
		assert.ok(!json.keywords.includes(GALLERY_KEYWORD), `${label}: no ${GALLERY_KEYWORD} (it is not a pi package)`);
		// pack-all and the release workflow copy the root's LICENSE in; none is kept here
		assert.equal(isTracked(`npm/${dir}/LICENSE`), false, `npm/${dir}/LICENSE: not kept in git (one LICENSE, the root's)`);
	}
});

function isTracked(file) {
	const r = spawnSync("git", ["ls-files", "--error-unmatch", file], { cwd: REPO_ROOT, encoding: "utf8" });
	return r.status === 0;
}

test("CHANGELOG.md has an Unreleased section and one for package.json's version, which pi finds", async () => {
	assert.deepEqual(changelogProblems(CHANGELOG.toString("utf8"), ROOT_JSON.version), []);
	const r = spawnSync(process.execPath, [CHECK_CHANGELOG], { encoding: "utf8" });
	assert.equal(r.status, 0, r.stderr);
	// pi 1.6.0's own reading of a pi package's changelog (what it shows after an update)
	const piDist = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist");
	const { parseChangelog } = await import(path.join(piDist, "utils", "changelog.js"));
	const dir = tempDir("pi");
	fs.writeFileSync(path.join(dir, "CHANGELOG.md"), CHANGELOG);
	const entries = parseChangelog(path.join(dir, "CHANGELOG.md"));
	const [major, minor, patch] = ROOT_JSON.version.split(/[.-]/).map(Number);
	const own = entries.filter((e) => e.major === major && e.minor === minor && e.patch === patch);
	assert.equal(own.length, 1, `pi reads one section for ${ROOT_JSON.version}`);
	assert.match(own[0].content, /\n- /, "pi's section lists changes");
});

test("check-changelog.mjs refuses a changelog without a section for the version", () => {
	const dir = tempDir("changelog");
	const check = (text, version = "1.2.3") => {
		const file = path.join(dir, `CHANGELOG-${crypto.randomUUID()}.md`);
		fs.writeFileSync(file, text);
		const r = spawnSync(process.execPath, [CHECK_CHANGELOG, "--changelog", file, "--version", version], { encoding: "utf8" });
		return { status: r.status, stderr: r.stderr };
	};
	const good = "# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.2.3] - 2026-12-06\n\n### Added\n\n- this\n\n## [1.2.2]\n\n- that\n";
	assert.deepEqual(check(good), { status: 0, stderr: "" });
	assert.equal(check(good.replace("\n- next\n", "")).status, 0, "an empty Unreleased section is fine");
	assert.equal(check(good.replaceAll("\n", "\r\n")).status, 0, "CRLF line ends");
	assert.equal(check("## [Unreleased]\n\n## [0.1.0-beta.1]\n\n- first\n", "0.1.0-beta.1").status, 0, "a prerelease version");

	const refused = [
		["no section for the version", good.replace("## [1.2.3] - 2026-12-06", "## [1.2.4] - 2026-12-06"), /no `## \[1\.2\.3\]` section/],
		["the changes only under Unreleased", "## [Unreleased]\n\n- this\n\n## [1.2.2]\n\n- that\n", /no `## \[1\.2\.3\]` section/],
		["a heading of another level", good.replace("## [1.2.3]", "### [1.2.3]"), /no `## \[1\.2\.3\]` section/],
		["a longer version", good.replace("## [1.2.3]", "## [1.2.3.4]"), /no `## \[1\.2\.3\]` section/],
		["a version that only ends the same", good.replace("## [1.2.3]", "## [11.2.3]"), /no `## \[1\.2\.3\]` section/],
		["no entry in the section", good.replace("- this\n", ""), /lists no change/],
		["the section twice", `${good}\n## [1.2.3]\n\n- again\n`, /2 `## \[1\.2\.3\]` sections/],
		["no Unreleased section", good.replace("## [Unreleased]\n\n- next\n\n", ""), /no `## \[Unreleased\]` section/],
		["an empty file", "", /no `## \[Unreleased\]` section[\s\S]*no `## \[1\.2\.3\]` section/],
	];
	for (const [what, text, message] of refused) {
		const r = check(text);
		assert.equal(r.status, 1, `refused: ${what}`);
		assert.match(r.stderr, message, `the reason for ${what}`);
	}
	const missing = spawnSync(process.execPath, [CHECK_CHANGELOG, "--changelog", path.join(dir, "none.md")], { encoding: "utf8" });
	assert.equal(missing.status, 1, "a missing changelog is refused");
	assert.match(missing.stderr, /cannot read/);
});

test("every tarball pack-all writes here, read as npm publishes it: LICENSE, nothing unpublishable, a platform package with exactly its addon", () => {
	const packDir = tempDir("pack");
	const written = packAll({ packDir, log: () => {} });
	const binaries = fs.readdirSync(REPO_ROOT).filter((f) => f.startsWith(`${ROOT_JSON.napi.binaryName}.`) && f.endsWith(".node"));
	assert.deepEqual(
		written.filter((w) => w.dir).map((w) => `${ROOT_JSON.napi.binaryName}.${w.dir}.node`).sort(),
		binaries.sort(),
		"a platform tarball for every addon at the root",
	);
	assert.deepEqual(fs.readdirSync(packDir).sort(), written.map((w) => path.basename(w.file)).sort());
	const targets = new Map(ROOT_JSON.napi.targets.map((t) => [npmPlatformOf(t).dir, npmPlatformOf(t)]));

	for (const { dir, name, file } of written) {
		const label = path.basename(file);
		assert.equal(label, `${name}-${ROOT_JSON.version}.tgz`);
		const entries = readTarball(file);
		const names = [...entries.keys()];
		assertPublishable(label, names);
		assert.ok(entries.get("LICENSE")?.equals(LICENSE), `${label}: LICENSE, the root's`);
		const json = JSON.parse(entries.get("package.json").toString("utf8"));
		assert.equal(json.name, name);
		assert.equal(json.version, ROOT_JSON.version);
		assert.equal(json.license, "MIT");
		for (const keyword of KEYWORDS) assert.ok(json.keywords.includes(keyword), `${label}: keywords include ${keyword}`);

		if (dir === undefined) {
			assert.ok(entries.get("CHANGELOG.md")?.equals(CHANGELOG), `${label}: CHANGELOG.md, the root's (pi reads it from the package)`);
			for (const f of ["README.md", "index.js", "index.mjs", "index.d.ts", "binding.js", "extension/index.mjs", "bin/pi-sessions", ...readmeDocs()]) {
				assert.ok(entries.has(f), `${label}: ${f}`);
			}
			assert.deepEqual(names.filter((f) => f.endsWith(".node")), [], `${label}: no addon in the main package`);
			assert.deepEqual(changelogProblems(entries.get("CHANGELOG.md").toString("utf8"), json.version), []);
			continue;
		}
		const target = targets.get(dir);
		const binary = `${ROOT_JSON.napi.binaryName}.${dir}.node`;
		assert.deepEqual(names.sort(), ["LICENSE", "README.md", binary, "package.json"].sort(), `${label}: its addon, LICENSE, README.md and package.json, nothing else`);
		assert.ok(entries.get(binary).equals(fs.readFileSync(path.join(REPO_ROOT, binary))), `${label}: the addon built at the root`);
		assert.deepEqual(addonPlatform(entries.get(binary)), { os: target.os, cpu: target.cpu }, `${label}: an addon for ${target.os} ${target.cpu}`);
		if (target.libc) {
			// glibc's addons name the versions of its symbols they need; musl's name none
			assert.equal(entries.get(binary).includes("GLIBC_"), target.libc === "glibc", `${label}: an addon linked against ${target.libc}`);
		}
		assert.deepEqual(json.os, [target.os]);
		assert.deepEqual(json.cpu, [target.cpu]);
		assert.deepEqual(json.libc, target.libc && [target.libc]);
	}
});
