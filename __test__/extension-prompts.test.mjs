// The prompt picker of the pi extension (extension/prompt-picker.mjs), against a stand-in for
// pi's ExtensionAPI and shortcut ctx (as extension-grep.test.mjs does for /grep): its query
// (pi's /resume rules for message text), its keys (alt+r, none of pi's defaults, or what
// keybindings.json gives "pi-session-native.prompts"), the shortcut registered, and the
// picker over listPrompts: newest first, batches shown as they come (the selection kept),
// typing filters (narrowing on gives what filtering afresh gives), Tab reads every project,
// Enter puts the prompt in pi's editor, Escape leaves it.
//
//   node __test__/run.mjs __test__/extension-prompts.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { getKeybindings } from "@earendil-works/pi-tui";
import { age, DEFAULT_PROMPTS_KEYS, PROMPTS_KEYBINDING, PromptPicker, promptPickerKeys, promptQuery } from "../extension/prompt-picker.mjs";
import { tempDir } from "./helpers/harness.mjs";
import { REPO_ROOT } from "./helpers/pi-tmux.mjs";

const require = createRequire(import.meta.url);
const { listPrompts } = require("../index.js");

// pi 1.6.0 itself (its keybindings, as extension.test.mjs loads it) needs Node 22.
const piLoads = typeof fs.globSync === "function" ? false : "pi 1.6.0 needs Node 22; run.mjs runs this file there too";

const root = tempDir("ext-prompts");
after(() => fs.rmSync(root, { recursive: true, force: true }));
const cwd = "/home/user/prompt-project";
const folder = path.join(root, "sessions", "--home-user-prompt-project--");
const otherFolder = path.join(root, "sessions", "--home-user-elsewhere--");
const ts = (k) => new Date(Date.UTC(2025, 0, 1, 0, k)).toISOString();

/** A session of user prompts (each answered) at minutes `from`, `from + 2` ...; its mtime after the last. */
function writeSession(dir, id, sessionCwd, prompts, from) {
	fs.mkdirSync(dir, { recursive: true });
	const lines = [{ type: "session", version: 3, id, timestamp: ts(from), cwd: sessionCwd }];
	let parent = null;
	prompts.forEach((text, k) => {
		for (const [role, content, minute] of [["user", text, from + 2 * k], ["assistant", [{ type: "text", text: `answer to ${text}` }], from + 2 * k + 1]]) {
			const entryId = `${id.slice(-2)}${String(lines.length).padStart(6, "0")}`;
			lines.push({ type: "message", id: entryId, parentId: parent, timestamp: ts(minute), message: { role, content, timestamp: 1 } });
			parent = entryId;
		}
	});
	const file = path.join(dir, `2025-01-01T00-00-0${id.slice(-1)}-000Z_${id}.jsonl`);
	fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	const mtime = new Date(Date.UTC(2025, 0, 1, 0, from + 2 * prompts.length)) / 1000;
	fs.utimesSync(file, mtime, mtime);
	return file;
}

writeSession(folder, "0199bbbb-0000-7000-8000-000000000001", cwd, ["deploy to staging", "why does the deploy fail?", "fix the parser"], 0);
writeSession(folder, "0199bbbb-0000-7000-8000-000000000002", cwd, ["Deploy   the  docs", "fix the parser", "rename the module"], 20);
writeSession(otherFolder, "0199bbbb-0000-7000-8000-000000000003", "/home/user/elsewhere", ["deploy elsewhere"], 40);

const prompt = (text) => ({ text });

test("promptQuery: words ignoring case, quoted phrases with whitespace as one space, re: regexes", () => {
	const matches = (query, text) => promptQuery(query).test(prompt(text));
	assert.equal(promptQuery("   ").all, true);
	assert.ok(matches("DEPLOY stag", "deploy to staging"));
	assert.ok(!matches("deploy docs", "deploy to staging"), "every word must be there");
	assert.ok(matches('"deploy the docs"', "Deploy   the\n docs"), "a phrase: runs of whitespace are one space");
	assert.ok(!matches('"deploy docs"', "Deploy the docs"), "a phrase is in order, whole");
	// An unclosed quote: words, the quote mark kept in the first.
	assert.ok(matches('"deploy the', '"deploy the docs'));
	assert.ok(!matches('"deploy the', "deploy the docs"));
	assert.ok(matches("re:^fix\\s+the", "Fix  the parser"));
	assert.ok(!matches("re:^the", "fix the parser"));
	assert.equal(promptQuery("re:(").error.includes("Unterminated group"), true);
	assert.equal(promptQuery("re:").error, "Empty regex");
	assert.ok(!matches("re:(", "anything"));
});

test("age: as pi's /resume says how long ago", () => {
	const now = Date.UTC(2025, 5, 1);
	const ago = (ms) => age(new Date(now - ms).toISOString(), now);
	assert.deepEqual([ago(10_000), ago(5 * 60_000), ago(3 * 3_600_000), ago(2 * 86_400_000), ago(15 * 86_400_000), ago(100 * 86_400_000), ago(800 * 86_400_000)], ["now", "5m", "3h", "2d", "2w", "3mo", "2y"]);
	assert.equal(age(null, now), "");
});

test("the picker's keys: alt+r, or keybindings.json's pi-session-native.prompts (one key, a list, [] for none)", () => {
	const dir = path.join(root, "keys");
	fs.mkdirSync(dir, { recursive: true });
	const file = path.join(dir, "keybindings.json");
	assert.deepEqual(promptPickerKeys(dir), ["alt+r"], "no file");
	const write = (value) => fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
	write({ "app.session.new": "ctrl+shift+n" });
	assert.deepEqual(promptPickerKeys(dir), ["alt+r"], "pi's own settings only");
	write({ [PROMPTS_KEYBINDING]: "ctrl+alt+p" });
	assert.deepEqual(promptPickerKeys(dir), ["ctrl+alt+p"]);
	write(`\uFEFF${JSON.stringify({ [PROMPTS_KEYBINDING]: ["alt+h", " f6 "] })}`);
	assert.deepEqual(promptPickerKeys(dir), ["alt+h", "f6"], "a list, after a byte order mark");
	write({ [PROMPTS_KEYBINDING]: [] });
	assert.deepEqual(promptPickerKeys(dir), [], "[] turns it off, as in pi");
	for (const bad of [{ [PROMPTS_KEYBINDING]: 3 }, { [PROMPTS_KEYBINDING]: ["alt+h", ""] }, "{ not json"]) {
		write(bad);
		assert.deepEqual(promptPickerKeys(dir), ["alt+r"], JSON.stringify(bad));
	}
});

test("alt+r is none of pi's default keys", { skip: piLoads }, async () => {
	const file = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "keybindings.js");
	const { KEYBINDINGS } = await import(pathToFileURL(file).href);
	const defaults = Object.values(KEYBINDINGS).flatMap((d) => (Array.isArray(d.defaultKeys) ? d.defaultKeys : d.defaultKeys ? [d.defaultKeys] : []));
	assert.ok(defaults.includes("alt+up") && defaults.includes("ctrl+r"), "pi's defaults were read");
	for (const key of DEFAULT_PROMPTS_KEYS) assert.ok(!defaults.includes(key), `${key} is a default key of pi`);
});

/** The extension's factory against a stand-in for pi's API: its shortcuts. */
async function shortcuts(agentDir) {
	const previous = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	try {
		const { default: piSessionNative } = await import("../extension/index.mjs");
		const registered = new Map();
		piSessionNative({ on() {}, registerCommand() {}, registerTool() {}, registerShortcut: (key, options) => registered.set(key, options) });
		return registered;
	} finally {
		if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previous;
	}
}

/** Waits until `ready()` (the picker reads on the addon's threads). */
async function until(ready, what) {
	for (let i = 0; i < 400; i++) {
		if (ready()) return;
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
	assert.fail(`timed out waiting for ${what}`);
}

const rowsOf = (picker) => picker.render(120).filter((l) => /^(› | {2})\S/.test(l) && !/^\s+\(\d+\/\d+\)/.test(l) && !/^\s+(No|Reading)/.test(l));

test("the shortcut: the picker over listPrompts, typing filters, Tab reads every project, Enter to the editor", async () => {
	const registered = await shortcuts(root);
	assert.deepEqual([...registered.keys()], ["alt+r"]);
	const { handler, description } = registered.get("alt+r");
	assert.match(description, /prompt/);

	const run = async (keys) => {
		const edited = [];
		let picker;
		const previous = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = root;
		try {
			await handler({
				mode: "tui",
				cwd,
				sessionManager: { getSessionDir: () => folder },
				ui: {
					notify: (message) => assert.fail(message),
					setEditorText: (text) => edited.push(text),
					custom: (factory) =>
						new Promise((resolve) => {
							picker = factory({ requestRender() {}, terminal: { rows: 40 } }, null, getKeybindings(), resolve);
							keys(picker).catch(resolve);
						}),
				},
			});
		} finally {
			if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previous;
		}
		return { edited, picker };
	};

	let screens = {};
	const chosen = await run(async (picker) => {
		await until(() => !picker.state("project").loading, "this project's prompts");
		screens.project = rowsOf(picker);
		picker.handleInput("\t"); // every project
		await until(() => !picker.state("all").loading, "every project's prompts");
		screens.all = rowsOf(picker);
		picker.handleInput("\t"); // back: this project's list, read once
		screens.back = rowsOf(picker);
		for (const ch of "the par") picker.handleInput(ch);
		screens.filtered = rowsOf(picker);
		picker.handleInput("\x1b[B"); // down: wraps to the only row
		picker.handleInput("\r");
	});
	const mine = (await listPrompts({ cwd, sessionDir: folder })).map((p) => p.text);
	// Newest first, "fix the parser" once (the newer one).
	assert.deepEqual(mine, ["rename the module", "fix the parser", "Deploy   the  docs", "why does the deploy fail?", "deploy to staging"]);
	assert.deepEqual(screens.project.map((r) => r.slice(2).split(/\s{2,}/)[0]), ["rename the module", "fix the parser", "Deploy the docs", "why does the deploy fail?", "deploy to staging"]);
	assert.match(screens.project[0], /^› rename the module\s+\S+$/);
	// "the par": both words, ignoring case.
	assert.deepEqual(screens.filtered.map((r) => r.slice(2).trim().split(/\s{2,}/)[0]), ["fix the parser"]);
	// Every project's: the other project's prompt (the newest), each row with its project.
	assert.match(screens.all[0], /^› deploy elsewhere\s+\/home\/user\/elsewhere \S+$/);
	assert.equal(screens.all.length, 6);
	assert.ok(screens.all.slice(1).every((r) => r.includes(cwd)), screens.all.join("\n"));
	assert.deepEqual(screens.back, screens.project);
	assert.deepEqual(chosen.edited, ["fix the parser"], "Enter put the selected prompt in the editor");

	// Escape: nothing put in the editor.
	const closed = await run(async (picker) => {
		await until(() => !picker.state("project").loading, "the prompts");
		picker.handleInput("\x1b");
	});
	assert.deepEqual(closed.edited, []);
});

test("PromptPicker: batches shown as they come with progress, the selection kept; narrowing on filters as afresh", async () => {
	const feeds = {};
	const picker = new PromptPicker({
		keybindings: getKeybindings(),
		now: () => Date.UTC(2025, 0, 2),
		load: (scope, handlers) =>
			new Promise((resolve) => {
				feeds[scope] = { ...handlers, resolve };
			}),
		onDone: (text) => (picker.chosen = text),
	});
	await until(() => feeds.project, "the first reading");
	assert.ok(picker.render(100).join("\n").includes("Reading sessions…"));
	feeds.project.onProgress(0, 3);
	assert.ok(picker.render(100)[0].includes("Loading 0/3"), picker.render(100)[0]);
	feeds.project.onPrompts(["alpha one", "beta two", "gamma three"].map((text) => ({ text, timestamp: ts(50), cwd })));
	feeds.project.onProgress(1, 3);
	picker.handleInput("\x1b[B");
	assert.equal(picker.selectedPrompt().text, "beta two");
	assert.ok(picker.render(100).some((l) => l.includes("(2/3) reading…")));
	feeds.project.onPrompts(["alpha four", "delta five"].map((text) => ({ text, timestamp: ts(40), cwd })));
	assert.equal(picker.selectedPrompt().text, "beta two", "a batch goes at the end: the selection stays");
	feeds.project.onProgress(3, 3);
	feeds.project.resolve();
	await until(() => !picker.state().loading, "the end");
	assert.ok(picker.render(100)[0].includes("◉ Current Folder"));

	// Typing on narrows the last list; deleting widens it again: always what a fresh filter gives.
	const all = picker.state().prompts;
	const afresh = (query) => all.filter((p) => promptQuery(query).test(p)).map((p) => p.text);
	for (const key of ["a", "l", "p", " ", "o", "\x7f", "\x7f", "\x7f", "\x7f", "\x7f", '"', "a", "l", '"']) {
		picker.handleInput(key);
		const query = picker.input.getValue();
		assert.deepEqual(picker.filtered.map((p) => p.text), afresh(query), `after typing, the query ${JSON.stringify(query)}`);
	}
	// A batch that arrives under a query is filtered as it comes.
	feeds.project.onPrompts([{ text: "alpine late", timestamp: ts(1), cwd }, { text: "zeta", timestamp: ts(1), cwd }]);
	assert.deepEqual(picker.filtered.map((p) => p.text), afresh('"al"'));
	picker.handleInput("\r");
	assert.equal(picker.chosen, "alpha one");
	// A failed reading says so.
	picker.handleInput("\t");
	await until(() => feeds.all, "every project's reading");
	feeds.all.resolve(Promise.reject(new Error("disk on fire\nstack")));
	await until(() => picker.state("all").error, "the failure");
	for (let i = 0; i < 4; i++) picker.handleInput("\x7f");
	assert.ok(picker.render(100).join("\n").includes("Could not read the sessions: disk on fire"));
});
