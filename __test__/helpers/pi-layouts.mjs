// This package laid out as pi meets it, apart from the pi that runs (the devDependency of
// this repository): npm's layout from the tarballs of pack/, and a checkout with its
// devDependencies installed. Used by __test__/pi-tui.test.mjs and benchmark/pi-resume.mjs.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { NODE22, REPO_ROOT } from "./pi-tmux.mjs";

const PACK_DIR = path.join(REPO_ROOT, "pack");
// What `npm run build` adds to a checkout (the host's addon and napi's loader).
const ADDON_FILES = ["pi-session-native.linux-x64-gnu.node", "binding.js", "binding.d.ts"];
const { version, files: PACKAGE_FILES } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
const TARBALLS = [`pi-session-native-${version}.tgz`, `pi-session-native-linux-x64-gnu-${version}.tgz`];

/** Why the tarballs or the built addon are missing, or null. */
export function layoutsUnavailable() {
	const missing = [...TARBALLS.map((f) => `pack/${f}`), ...ADDON_FILES].filter((f) => !fs.existsSync(path.join(REPO_ROOT, f)));
	return missing.length ? `${missing.join(", ")} missing (npm run build, then node scripts/pack-all.mjs --no-build)` : null;
}

/** The folder to give pi for `layout` ("tarballs" or "checkout"), made under `root`. */
export function packageIn(layout, root) {
	if (layout === "tarballs") return installedFromTarballs(path.join(root, "tarballs"));
	if (layout === "checkout") return checkoutWithDevDependencies(path.join(root, "checkout", "pi-session-native"));
	throw new Error(`unknown layout ${layout}`);
}

/** The tarballs of pack/ installed into a fresh project `project`, offline: <project>/node_modules/pi-session-native. */
function installedFromTarballs(project) {
	fs.mkdirSync(project, { recursive: true });
	fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "tarball-check", version: "1.0.0", private: true }));
	const npm = spawnSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", ...TARBALLS.map((f) => path.join(PACK_DIR, f))], {
		cwd: project,
		encoding: "utf8",
		timeout: 120_000,
	});
	if (npm.status !== 0) throw new Error(`npm install of the tarballs failed:\n${npm.stdout}\n${npm.stderr}`);
	const dir = path.join(project, "node_modules", "pi-session-native");
	for (const name of fs.readdirSync(path.join(REPO_ROOT, "extension"))) {
		if (fs.readFileSync(path.join(dir, "extension", name), "utf8") !== fs.readFileSync(path.join(REPO_ROOT, "extension", name), "utf8")) {
			throw new Error(`pack/ is older than extension/${name}: node scripts/pack-all.mjs --no-build`);
		}
	}
	if (fs.existsSync(path.join(project, "node_modules", "@earendil-works"))) throw new Error("npm installed the optional peer (pi) beside the package");
	return dir;
}

/**
 * A checkout after `npm install` and `npm run build` at `dir`: this repository's package files
 * (as they are in the working tree), the built addon, and a node_modules as npm leaves it, whose
 * pi packages (the devDependency and its own packages) are copies of their own; the rest are
 * links to this repository's node_modules, which npm would have filled with the same files (a
 * real `npm install` of every devDependency takes minutes and gigabytes).
 */
function checkoutWithDevDependencies(dir) {
	for (const name of ["package.json", ...PACKAGE_FILES, ...ADDON_FILES]) {
		const from = path.join(REPO_ROOT, name);
		if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, name), { recursive: true });
	}
	const modules = path.join(REPO_ROOT, "node_modules");
	for (const name of fs.readdirSync(modules)) {
		const to = path.join(dir, "node_modules", name);
		if (name === "@earendil-works") fs.cpSync(path.join(modules, name), to, { recursive: true });
		else {
			fs.mkdirSync(path.dirname(to), { recursive: true });
			fs.symlinkSync(path.join(modules, name), to);
		}
	}
	// What makes this layout what it is: the extension's import of pi finds the checkout's copy.
	const resolve = spawnSync(NODE22, ["--input-type=module", "-e", 'console.log(import.meta.resolve("@earendil-works/pi-coding-agent"))'], {
		cwd: path.join(dir, "extension"),
		encoding: "utf8",
	});
	const found = resolve.status === 0 ? fs.realpathSync(fileURLToPath(resolve.stdout.trim())) : "";
	if (!found.startsWith(fs.realpathSync(dir) + path.sep)) throw new Error(`the checkout's import of pi resolves to ${found || "nothing"}\n${resolve.stderr}`);
	return dir;
}
